"""tir.DefaultGPUSchedule: innermost blocks of GPU functions get fused, split, bound loops."""

import pytest

import tessera as ts
from tessera.error import TesseraError
from tessera.ir import assert_structural_equal
from tessera.script import ir as I
from tessera.script import tir as T
from tessera.tir.transform import DefaultGPUSchedule


@I.ir_module
class Elementwise:
    @T.prim_func
    def gpu(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
        T.func_attr({"target": T.target("cuda")})
        for i in range(64):
            with T.block("B"):
                vi = T.axis.spatial(64, i)
                B[vi] = A[vi] * T.float32(2)

    @T.prim_func
    def cpu(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
        T.func_attr({"target": T.target("llvm")})
        for i in range(64):
            with T.block("B"):
                vi = T.axis.spatial(64, i)
                B[vi] = A[vi] * T.float32(2)


def test_gpu_function_is_bound_and_cpu_function_only_marked():
    after = DefaultGPUSchedule()(Elementwise)

    @I.ir_module
    class Expected:
        @T.prim_func
        def gpu(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
            T.func_attr({"target": T.target("cuda"), "tir.is_scheduled": True})
            for i_0 in T.thread_binding(1, thread="blockIdx.x"):
                for i_1 in T.thread_binding(64, thread="threadIdx.x"):
                    with T.block("B"):
                        vi = T.axis.spatial(64, i_0 * 64 + i_1)
                        B[vi] = A[vi] * T.float32(2)

        @T.prim_func
        def cpu(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
            T.func_attr({"target": T.target("llvm"), "tir.is_scheduled": True})
            for i in range(64):
                with T.block("B"):
                    vi = T.axis.spatial(64, i)
                    B[vi] = A[vi] * T.float32(2)

    assert_structural_equal(after, Expected)
    assert not ts.ir.structural_equal(after, Elementwise)
    # Scheduled functions are left alone the second time.
    assert_structural_equal(DefaultGPUSchedule()(after), after)


def test_current_target_applies_to_functions_without_one():
    @I.ir_module
    class Before:
        @T.prim_func
        def main(A: T.Buffer((4, 600), "float32")):
            for i, j in T.grid(4, 600):
                with T.block("A"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    A[vi, vj] = T.float32(0)

    with ts.target.Target("cuda"):
        after = DefaultGPUSchedule()(Before)
    loops = []
    ts.tir.stmt_functor.post_order_visit(
        after["main"].body, lambda n: loops.append(n) if isinstance(n, ts.tir.For) else None)
    # 2400 iterations: ceil(2400 / 1024) = 3 blocks of 1024 threads.
    assert [(int(f.extent), f.thread_binding.thread_tag) for f in reversed(loops)] == [
        (3, "blockIdx.x"), (1024, "threadIdx.x")]


def test_function_without_any_target_is_an_error():
    @I.ir_module
    class Before:
        @T.prim_func
        def main(A: T.Buffer((4,), "float32")):
            for i in range(4):
                with T.block("A"):
                    vi = T.axis.spatial(4, i)
                    A[vi] = T.float32(0)

    with pytest.raises(TesseraError, match="has no \"target\" attribute and no target is current"):
        DefaultGPUSchedule()(Before)
