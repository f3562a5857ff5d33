"""TVM's module layout of tir classes (tir.stmt, tir.expr) and @I.ir_module(check_well_formed=...)."""

import pytest

from tessera import tir
from tessera.error import TesseraError
from tessera.script import ir as I
from tessera.script import tir as T


def test_stmt_and_expr_modules_name_the_same_classes():
    assert tir.stmt.For is tir.For and tir.stmt.Block is tir.Block and tir.stmt.SeqStmt is tir.SeqStmt
    assert tir.expr.Var is tir.Var and tir.expr.IntImm is tir.IntImm
    assert tir.expr.const is tir.const  # the rest of tir, as before


def _ill_formed():
    class Module:
        @T.prim_func
        def main(A: T.Buffer((4,), "float32")):
            for i in range(4):
                with T.block("B"):
                    vi = T.axis.spatial(4, i)
                    A[i] = T.float32(0) + A[vi]  # a loop variable inside a block: not well formed
    return Module


def test_ir_module_can_skip_the_well_formed_check():
    with pytest.raises(TesseraError):
        I.ir_module(_ill_formed())
    mod = I.ir_module(check_well_formed=False)(_ill_formed())
    assert isinstance(mod["main"].body, tir.BlockRealize)


def test_verify_well_formed_as_tvm_names_it():
    from tessera.error import DiagnosticError
    from tessera.ir import IRModule
    from tessera.tir.analysis import verify_well_formed

    @T.prim_func
    def good(A: T.Buffer((4,), "float32")):
        A[0] = T.float32(1)

    mod = I.ir_module(check_well_formed=False)(_ill_formed())
    assert verify_well_formed(good) is True
    assert verify_well_formed(IRModule.from_expr(good)) is True
    assert verify_well_formed(mod, assert_mode=False) is False
    assert verify_well_formed(mod["main"], assert_mode=False) is False
    with pytest.raises(DiagnosticError, match="loop variable of an enclosing loop"):
        verify_well_formed(mod)
    with pytest.raises(TypeError, match="PrimFunc or an IRModule"):
        verify_well_formed(3)
