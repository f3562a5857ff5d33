"""tir.CombineContextCall: each device context of a host function is made once per region."""

from tessera import tir
from tessera.ir import IRModule, assert_structural_equal
from tessera.script import tir as T

combine = tir.transform.CombineContextCall


def ctx(dev, k):
    return tir.Call("handle", "tir.tvm_thread_context",
                    [tir.call_extern("handle", "device_context", dev, k)])


def test_contexts_are_bound_once_per_function_and_per_parallel_loop():
    @T.prim_func
    def before(dev: T.int32, n: T.int32):
        T.func_attr({"target": T.target("c")})
        T.call_extern("int32", "use", ctx(dev, 0))
        for i in T.parallel(n):
            T.call_extern("int32", "use", ctx(dev, 1))
            T.call_extern("int32", "use", ctx(dev, 1))
            T.call_extern("int32", "use", ctx(i, 2))  # uses the loop's variable: stays
        T.call_extern("int32", "use", ctx(dev, 0))

    @T.prim_func
    def expected(dev: T.int32, n: T.int32):
        T.func_attr({"target": T.target("c")})
        c0: T.handle = T.call_extern("handle", "device_context", dev, 0)
        T.call_extern("int32", "use", c0)
        with T.LetStmt(T.call_extern("handle", "device_context", dev, 1)) as c1:
            for i in T.parallel(n):
                T.call_extern("int32", "use", c1)
                T.call_extern("int32", "use", c1)
                T.call_extern("int32", "use", T.tvm_thread_context(
                    T.call_extern("handle", "device_context", i, 2)))
        T.call_extern("int32", "use", c0)

    after = combine()(IRModule({"main": before}))["main"]
    assert_structural_equal(after.with_attr("global_symbol", "f"),
                            expected.with_attr("global_symbol", "f"))
    assert "ctx_cache_" in after.script()


def test_functions_that_are_not_host_code_are_left_alone():
    @T.prim_func
    def no_target(dev: T.int32):
        T.call_extern("int32", "use", ctx(dev, 0))

    @T.prim_func
    def device(dev: T.int32):
        T.func_attr({"target": T.target("cuda")})
        T.call_extern("int32", "use", ctx(dev, 0))

    for f in (no_target, device):
        mod = IRModule({"main": f})
        assert combine()(mod).same_as(mod)


def test_call_takes_an_op_name():
    import pytest

    from tessera.error import TesseraError

    call = tir.Call("float32", "tir.exp", [tir.FloatImm("float32", 1.0)])
    assert call.op_name == "tir.exp" and call.dtype == "float32"
    with pytest.raises(TesseraError, match="unknown intrinsic 'tir.no_such_op'"):
        tir.Call("handle", "tir.no_such_op", [])
