"""tir.SplitHostDevice and tir.LowerDeviceKernelLaunch with TVM's rules: a `T.attr(<target>,
"target", 0)` region becomes a private kernel "<symbol>_kernel" for that target, and a call of a
kernel on another device becomes a packed call carrying the launch extents."""

import numpy as np
import pytest

import tessera
from tessera.error import TesseraError
from tessera.ir import assert_structural_equal
from tessera.script import ir as I
from tessera.script import tir as T
from tessera.tir import transform as tt


def split(mod):
    return tt.SplitHostDevice()(mod)


def test_gpu_region_becomes_a_void_kernel_with_sorted_params():
    @I.ir_module
    class Before:
        @T.prim_func
        def fn(A: T.Buffer((8,), "float32"), k: T.int32, b: T.int32):
            T.func_attr({"target": T.target("cuda", host="c")})
            with T.attr(T.target("cuda"), "target", 0):
                tx = T.launch_thread("threadIdx.x", 8)
                A[tx] = T.Cast("float32", k + b)

    @I.ir_module
    class Expected:
        @T.prim_func
        def fn(A: T.Buffer((8,), "float32"), k: T.int32, b: T.int32):
            T.func_attr({"target": T.target("cuda", host="c")})
            Expected.fn_kernel(A.data, b, k)

        @T.prim_func(private=True)
        def fn_kernel(A_data: T.handle("float32"), b: T.int32, k: T.int32):
            # Handles first, then scalars by name; the buffer is declared again in the kernel.
            T.func_attr({"target": T.target("cuda"), "tir.noalias": True,
                         "tir.is_global_func": True})
            A = T.decl_buffer((8,), "float32", data=A_data)
            tx = T.launch_thread("threadIdx.x", 8)
            A[tx] = T.Cast("float32", k + b)

    assert_structural_equal(split(Before), Expected)


def test_cpu_region_returns_a_status_that_the_host_checks():
    @I.ir_module
    class Before:
        @T.prim_func
        def fn(n: T.int32):
            T.func_attr({"target": T.target("cuda", host="c")})
            with T.attr(T.target("c"), "target", 0):
                T.evaluate(n)

    after = split(Before)
    kernel = after["fn_kernel"]
    assert str(kernel.ret_type) == "int32"
    assert kernel.body[1].value.op.name == "tir.ret"
    host = after["fn"].body
    # let status = fn_kernel(n); assert status == 0
    assert host.value.op.name_hint == "fn_kernel"
    assert host.body.condition.a.same_as(host.var)


def test_kernel_names_avoid_taken_names_and_follow_global_symbol():
    @I.ir_module
    class Before:
        @T.prim_func
        def main(n: T.int32):
            T.func_attr({"target": T.target("cuda", host="c"), "global_symbol": "entry"})
            with T.attr(T.target("cuda"), "target", 0):
                T.evaluate(n)
            with T.attr(T.target("cuda"), "target", 0):
                T.evaluate(n + 1)

        @T.prim_func
        def entry_kernel():
            T.func_attr({"target": T.target("c")})
            T.evaluate(0)

    after = split(Before)
    names = sorted(gv.name_hint for gv, _ in after.functions)
    assert names == ["entry_kernel", "entry_kernel_1", "entry_kernel_2", "main"]
    calls = [s.value.op.name_hint for s in after["main"].body]
    assert calls == ["entry_kernel_1", "entry_kernel_2"]


def test_host_and_kernel_share_no_variable():
    @I.ir_module
    class Before:
        @T.prim_func
        def main(n: T.int32):
            T.func_attr({"target": T.target("cuda", host="c")})
            m: T.int32 = n * 2
            with T.attr(T.target("cuda"), "target", 0):
                bx = T.launch_thread("blockIdx.x", m)
                T.evaluate(bx + n)

    after = split(Before)
    kernel = after["main_kernel"]
    assert [p.name for p in kernel.params] == ["m", "n"]
    assert not kernel.params[0].same_as(after["main"].body.var)
    # The launch's extent is the kernel's own parameter.
    assert kernel.body.node.dom.extent.same_as(kernel.params[0])


def test_function_without_device_region_is_unchanged():
    @I.ir_module
    class Before:
        @T.prim_func
        def main(n: T.int32):
            T.func_attr({"target": T.target("cuda", host="c")})
            T.evaluate(n)

    assert split(Before).same_as(Before)


def launch(mod):
    return tt.LowerDeviceKernelLaunch()(mod)


def test_kernel_launch_passes_thread_extents_and_dynamic_shared_size():
    @I.ir_module
    class Before:
        @T.prim_func
        def main(A: T.Buffer((64,), "float32"), n: T.int32):
            T.func_attr({"target": T.target("c")})
            Before.k(A.data, n)

        @T.prim_func(private=True)
        def k(A_data: T.handle("float32"), n: T.int32):
            T.func_attr({"target": T.target("cuda")})
            A = T.decl_buffer((64,), "float32", data=A_data)
            bx = T.launch_thread("blockIdx.x", n)
            tx = T.launch_thread("threadIdx.x", 32)
            S = T.allocate([n], "float32", "shared.dyn")
            A[tx] = T.float32(0)
            T.ret(0)

    @I.ir_module
    class Expected:
        @T.prim_func
        def main(A: T.Buffer((64,), "float32"), n: T.int32):
            T.func_attr({"target": T.target("c")})
            T.call_packed("k", A.data, n, n, 32, n * 4)

        @T.prim_func
        def k(A_data: T.handle("float32"), n: T.int32):
            T.func_attr({"target": T.target("cuda"), "calling_conv": 2,
                         "tir.kernel_launch_params": ["blockIdx.x", "threadIdx.x",
                                                      "tir.use_dyn_shared_memory"],
                         "global_symbol": "k", "tir.is_global_func": True})
            A = T.decl_buffer((64,), "float32", data=A_data)
            bx = T.launch_thread("blockIdx.x", n)
            tx = T.launch_thread("threadIdx.x", 32)
            S = T.allocate([n], "float32", "shared.dyn")
            A[tx] = T.float32(0)
            T.evaluate(0)

    assert_structural_equal(launch(Before), Expected)


def test_same_target_call_is_kept_and_same_device_call_is_external():
    @I.ir_module
    class Before:
        @T.prim_func
        def main(A: T.Buffer((4,), "float32")):
            T.func_attr({"target": T.target("llvm")})
            Before.same(A.data)
            Before.other(A.data)

        @T.prim_func(private=True)
        def same(A_data: T.handle("float32")):
            T.func_attr({"target": T.target("llvm")})
            T.evaluate(0)

        @T.prim_func(private=True)
        def other(A_data: T.handle("float32")):
            T.func_attr({"target": T.target("c")})
            T.evaluate(0)

    after = launch(Before)
    first, second = after["main"].body
    assert first.value.op.name_hint == "same"
    assert second.value.op.name == "tir.call_extern"
    assert second.value.args[0].value == "other"
    assert dict(after["other"].attrs)["global_symbol"].value == "other"
    assert "global_symbol" not in dict(after["same"].attrs)


def test_launched_kernel_returning_failure_is_an_error():
    @I.ir_module
    class Before:
        @T.prim_func
        def main():
            T.func_attr({"target": T.target("c")})
            Before.k()

        @T.prim_func(private=True)
        def k() -> T.int32:
            T.func_attr({"target": T.target("cuda")})
            T.ret(1)

    with pytest.raises(TesseraError, match="may only return 0"):
        launch(Before)


def test_split_then_launch_on_cpu_builds_and_runs():
    """The CPU split's output (a private kernel returning a status) builds with tessera's C
    pipeline and computes what the unsplit function computes."""

    @I.ir_module
    class Before:
        @T.prim_func
        def main(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
            T.func_attr({"target": T.target("c", host="c"), "global_symbol": "main"})
            with T.attr(T.target("c"), "target", 0):
                for i in range(16):
                    B[i] = A[i] * T.float32(3) + T.float32(1)

    after = tessera.transform.Sequential([tt.SplitHostDevice(), tt.LowerDeviceKernelLaunch()])(Before)
    kernel = after["main_kernel"]
    assert "calling_conv" not in dict(kernel.attrs)  # same target: an internal call
    for gv, f in after.functions:
        after = after.with_function(gv, f.with_attr("target", tessera._core.StringImm("c")))
    lib = tessera.build(after, target="c")
    a = np.arange(16, dtype="float32")
    b = np.zeros(16, dtype="float32")
    lib["main"](a, b)
    np.testing.assert_allclose(b, a * 3 + 1)
