"""detect_buffer_access_lca, calculate_allocated_bytes, verify_ssa and OOBChecker: golden values."""

import pytest

from tessera import tir
from tessera.error import ScheduleError, TesseraTypeError
from tessera.ir import IRModule
from tessera.script import tir as T
from tessera.tir import transform as tt


@T.prim_func
def _sum_rows(A: T.Buffer((8, 16), "float32"), S: T.Buffer((8,), "float32")):
    T_tmp = T.alloc_buffer((8, 16), "float32")
    for i in range(8):
        for j in range(16):
            with T.block("copy"):
                vi, vj = T.axis.remap("SS", [i, j])
                T_tmp[vi, vj] = A[vi, vj]
        for k in range(16):
            with T.block("sum"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    S[vi] = T.float32(0)
                S[vi] = S[vi] + T_tmp[vi, vk]


def test_lca_of_reads_writes_and_a_reduction_output():
    lca = tir.analysis.detect_buffer_access_lca(_sum_rows)
    A = _sum_rows.buffer_map[_sum_rows.params[0]]
    S = _sum_rows.buffer_map[_sum_rows.params[1]]
    (tmp,) = _sum_rows.body.block.alloc_buffers
    loop_i = _sum_rows.body.block.body
    copy_block = loop_i.body[0].body.block
    assert lca[A].same_as(copy_block)
    # T_tmp is written in loop j and read in loop k: their common loop is i
    assert lca[tmp].same_as(loop_i)
    # the reduction's output is lifted above its reduction loop k, into loop i
    assert lca[S].same_as(loop_i)


def test_lca_at_the_root_is_none():
    @T.prim_func
    def f(A: T.Buffer((4,), "int32")):
        A[0] = 1

    (A,) = f.buffer_map.values()
    assert tir.analysis.detect_buffer_access_lca(f) == {A: None}
    with pytest.raises(TesseraTypeError, match="takes a PrimFunc"):
        tir.analysis.detect_buffer_access_lca(IRModule.from_expr(f))


@T.prim_func
def _two_scopes(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    X = T.alloc_buffer((16,), "float32", scope="shared")
    Y = T.alloc_buffer((4, 4), "float16", scope="shared")
    Z = T.alloc_buffer((16,), "int8", scope="local")
    for i in range(16):
        with T.block("x"):
            vi = T.axis.remap("S", [i])
            X[vi] = A[vi]
    for i in range(16):
        with T.block("y"):
            vi = T.axis.remap("S", [i])
            Y[vi // 4, vi % 4] = T.float16(X[vi])
            Z[vi] = T.int8(1)
    for i in range(16):
        with T.block("b"):
            vi = T.axis.remap("S", [i])
            B[vi] = T.float32(Y[vi // 4, vi % 4]) + T.float32(Z[vi])


def test_allocated_bytes_per_scope():
    lowered = tt.LowerOpaqueBlock()(tt.ConvertBlocksToOpaque()(IRModule({"main": _two_scopes})))
    sizes = tir.analysis.calculate_allocated_bytes(lowered["main"])
    # X (16 x 4 bytes) and Y (16 x 2 bytes) are live together; Z is 16 bytes of local
    assert sizes == {"main": {"shared": 96, "local": 16}}
    assert tir.analysis.calculate_allocated_bytes(lowered) == sizes
    # before lowering, the buffers are block allocations, not Allocate statements
    assert tir.analysis.calculate_allocated_bytes(_two_scopes) == {"main": {}}
    with pytest.raises(TesseraTypeError, match="PrimFunc or an IRModule"):
        tir.analysis.calculate_allocated_bytes("main")


def test_verify_ssa():
    x, y = tir.Var("x", "int32"), tir.Var("y", "int32")
    body = tir.Evaluate(x + y)
    assert tir.analysis.verify_ssa(tir.PrimFunc([x, y], body))
    assert not tir.analysis.verify_ssa(tir.PrimFunc([x, y], tir.LetStmt(x, 1, body)))
    let1 = tir.Let(y, 1, y + 1)
    assert tir.analysis.verify_ssa(tir.PrimFunc([x], tir.Evaluate(let1 * let1)))
    let2 = tir.Let(y, 2, y + 1)
    assert not tir.analysis.verify_ssa(tir.PrimFunc([x], tir.Evaluate(let1 * let2)))
    loops = tir.For(y, 0, 4, tir.ForKind.SERIAL, tir.For(y, 0, 4, tir.ForKind.SERIAL, body))
    assert not tir.analysis.verify_ssa(tir.PrimFunc([x], loops))


def test_oob_checker_reports_the_buffer_and_passes_what_it_cannot_prove():
    @T.prim_func
    def loop_past(A: T.Buffer((2, 3), "float32"), B: T.Buffer((3, 2), "float32")):
        for i in range(3):
            B[i, 1] = A[i, 2]  # past-A

    @T.prim_func
    def symbolic(A: T.Buffer((2, 3), "float32"), n: T.int32):
        for i in range(2):
            A[i, n] = T.float32(0)
        if n < 3:
            A[1, n + 1] = T.float32(0)

    with pytest.raises(ScheduleError, match="dimension 0 of buffer A") as err:
        tir.analysis.OOBChecker()(IRModule.from_expr(loop_past))
    assert "past-A" in str(err.value)  # the source line of the access
    mod = IRModule({"main": symbolic})
    assert tir.analysis.OOBChecker()(mod)["main"].same_as(mod["main"])
