"""tir.ConvertSSA: a variable defined twice (in one function or across a module's functions)
gets a definition of its own at each place, and uses follow the innermost one."""

import pytest

from tessera import tir
from tessera.ir import IRModule, assert_structural_equal
from tessera.script import ir as I
from tessera.script import tir as T
from tessera.tir.analysis import verify_well_formed

convert = tir.transform.ConvertSSA


def test_nested_redefinition_uses_the_innermost_and_then_the_outer_again():
    x = tir.Var("x", "int32")
    A = tir.decl_buffer((3,), "int32", name="A")
    inner = tir.LetStmt(x, 7, tir.BufferStore(A, x, [1]))
    outer = tir.LetStmt(x, 5, tir.SeqStmt([tir.BufferStore(A, x, [0]), inner,
                                           tir.BufferStore(A, x + 1, [2])]))
    before = IRModule({"main": tir.PrimFunc([A.data], outer).with_attr("global_symbol", "main")})
    assert not verify_well_formed(before, assert_mode=False)

    after = convert()(before)
    assert verify_well_formed(after)
    body = after["main"].body
    first, nested, last = body.body.seq
    assert not body.var.same_as(nested.var)
    assert first.value.same_as(body.var) and nested.body.value.same_as(nested.var)
    assert last.value.a.same_as(body.var)  # after the inner scope, x is the outer one again


def test_functions_sharing_definitions_are_separated():
    @T.prim_func
    def f(A: T.Buffer((4,), "float32"), n: T.int32):
        for i in range(4):
            A[i] = T.Cast("float32", i + n)

    mod = IRModule({"a": f.with_attr("global_symbol", "a"), "b": f.with_attr("global_symbol", "b")})
    after = convert()(mod)
    assert after["a"].same_as(mod["a"])  # the first definition stays
    assert not after["b"].params[1].same_as(mod["b"].params[1])
    assert_structural_equal(after["b"], mod["b"])


def test_thread_launches_of_one_function_share_their_variable():
    @I.ir_module
    class Mod:
        @T.prim_func
        def main(A: T.Buffer((64,), "float32")):
            tx = T.env_thread("threadIdx.x")
            with T.launch_thread(tx, 64):
                A[tx] = A[tx] + T.float32(1)
            with T.launch_thread(tx, 64):
                A[tx] = A[tx] * T.float32(2)

    assert convert()(Mod).same_as(Mod)


@pytest.mark.parametrize("twice", [False, True])
def test_ssa_module_is_returned_as_is(twice):
    @T.prim_func
    def f(A: T.Buffer((4,), "float32")):
        for i in range(4):
            A[i] = T.float32(0)

    mod = IRModule({"main": f.with_attr("global_symbol", "main")})
    once = convert()(mod)
    assert once.same_as(mod)
    if twice:
        assert convert()(once).same_as(once)
