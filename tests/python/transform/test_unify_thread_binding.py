"""tir.UnifyThreadBinding: in each kernel, a thread tag has one variable, and all the kernel's
threads are launched once, at its outermost binding, in the order the tags first appear
(TVM v0.23's rules)."""

import pytest

from tessera.script import tir as T

from conftest import run_pass


def test_sibling_bindings_of_one_tag_share_a_launch(golden):
    @T.prim_func
    def before(A: T.Buffer((8, 16), "float32"), B: T.Buffer((8, 16), "float32")):
        for bx in T.thread_binding(8, thread="blockIdx.x"):
            for t0 in T.thread_binding(16, thread="threadIdx.x"):
                A[bx, t0] = T.float32(0)
            for t1 in T.thread_binding(16, thread="threadIdx.x"):
                B[bx, t1] = A[bx, t1]

    @T.prim_func
    def expected(A: T.Buffer((8, 16), "float32"), B: T.Buffer((8, 16), "float32")):
        for bx in T.thread_binding(8, thread="blockIdx.x"):
            for tx in T.thread_binding(16, thread="threadIdx.x"):
                A[bx, tx] = T.float32(0)
                B[bx, tx] = A[bx, tx]

    golden("UnifyThreadBinding", before, expected)


def test_inner_threads_rise_to_the_kernel_launch(golden):
    @T.prim_func
    def before(A: T.Buffer((4, 2, 8), "float32")):
        for bx in T.thread_binding(4, thread="blockIdx.x"):
            for i in range(2):
                for tx in T.thread_binding(8, thread="threadIdx.x"):
                    A[bx, i, tx] = T.float32(1)

    @T.prim_func
    def expected(A: T.Buffer((4, 2, 8), "float32")):
        for bx in T.thread_binding(4, thread="blockIdx.x"):
            for tx in T.thread_binding(8, thread="threadIdx.x"):
                for i in range(2):
                    A[bx, i, tx] = T.float32(1)

    golden("UnifyThreadBinding", before, expected)


def test_a_narrower_loop_reads_the_thread_through_a_cast(golden):
    @T.prim_func
    def before(A: T.Buffer((64,), "float32")):
        for bx in T.thread_binding(2, thread="blockIdx.x"):
            for t0 in T.thread_binding(32, thread="threadIdx.x"):
                A[bx * 32 + t0] = T.float32(0)
            for t1 in T.thread_binding(T.int64(32), thread="threadIdx.x"):
                A[T.Cast("int64", bx) * T.int64(32) + t1] = T.float32(1)

    @T.prim_func
    def expected(A: T.Buffer((64,), "float32")):
        for bx in T.thread_binding(2, thread="blockIdx.x"):
            for tx in T.thread_binding(32, thread="threadIdx.x"):
                A[bx * 32 + tx] = T.float32(0)
                A[T.Cast("int64", bx) * T.int64(32) + T.Cast("int64", tx)] = T.float32(1)

    golden("UnifyThreadBinding", before, expected)


def test_launch_thread_becomes_thread_bound_loops(golden):
    @T.prim_func
    def before(A: T.Buffer((4, 8), "float32")):
        bx = T.env_thread("blockIdx.x")
        t0 = T.env_thread("threadIdx.x")
        t1 = T.env_thread("threadIdx.x")
        T.launch_thread(bx, 4)
        T.launch_thread(t0, 8)
        T.launch_thread(t1, 8)
        A[bx, t0] = A[bx, t1] + T.float32(1)

    @T.prim_func
    def expected(A: T.Buffer((4, 8), "float32")):
        for bx in T.thread_binding(4, thread="blockIdx.x"):
            for tx in T.thread_binding(8, thread="threadIdx.x"):
                A[bx, tx] = A[bx, tx] + T.float32(1)

    golden("UnifyThreadBinding", before, expected)


def test_each_kernel_has_its_own_threads(golden):
    @T.prim_func
    def before(A: T.Buffer((16, 16), "float32"), B: T.Buffer((8, 8), "float32")):
        for b0 in T.thread_binding(16, thread="blockIdx.x"):
            for t0 in T.thread_binding(16, thread="threadIdx.x"):
                A[b0, t0] = T.float32(0)
        for b1 in T.thread_binding(8, thread="blockIdx.x"):
            for t1 in T.thread_binding(8, thread="threadIdx.x"):
                B[b1, t1] = T.float32(0)

    @T.prim_func
    def expected(A: T.Buffer((16, 16), "float32"), B: T.Buffer((8, 8), "float32")):
        for b0 in T.thread_binding(16, thread="blockIdx.x"):
            for t0 in T.thread_binding(16, thread="threadIdx.x"):
                A[b0, t0] = T.float32(0)
        for b1 in T.thread_binding(8, thread="blockIdx.x"):
            for t1 in T.thread_binding(8, thread="threadIdx.x"):
                B[b1, t1] = T.float32(0)

    golden("UnifyThreadBinding", before, expected)


def test_a_kernel_may_start_at_a_thread_index(golden):
    @T.prim_func
    def before(A: T.Buffer((4, 8), "float32")):
        for ty in T.thread_binding(4, thread="threadIdx.y"):
            for t0 in T.thread_binding(8, thread="threadIdx.x"):
                A[ty, t0] = T.float32(0)
            for t1 in T.thread_binding(8, thread="threadIdx.x"):
                A[ty, t1] = A[ty, t1] + T.float32(1)

    @T.prim_func
    def expected(A: T.Buffer((4, 8), "float32")):
        for ty in T.thread_binding(4, thread="threadIdx.y"):
            for tx in T.thread_binding(8, thread="threadIdx.x"):
                A[ty, tx] = T.float32(0)
                A[ty, tx] = A[ty, tx] + T.float32(1)

    golden("UnifyThreadBinding", before, expected)


def test_virtual_threads_are_unified_too(golden):
    @T.prim_func
    def before(A: T.Buffer((4,), "float32")):
        for v0 in T.thread_binding(2, thread="vthread.x"):
            for v1 in T.thread_binding(2, thread="vthread.x"):
                A[v0 * 2 + v1] = T.float32(0)

    @T.prim_func
    def expected(A: T.Buffer((4,), "float32")):
        for vx in T.thread_binding(2, thread="vthread.x"):
            A[vx * 2 + vx] = T.float32(0)

    golden("UnifyThreadBinding", before, expected)


def test_annotations_of_an_inner_binding_go_to_a_unit_loop(golden):
    @T.prim_func
    def before(A: T.Buffer((8,), "float32")):
        for bx in T.thread_binding(4, thread="blockIdx.x", annotations={"note": 1}):
            for tx in T.thread_binding(2, thread="threadIdx.x", annotations={"mark": 1}):
                A[bx * 2 + tx] = T.float32(0)

    @T.prim_func
    def expected(A: T.Buffer((8,), "float32")):
        for bx in T.thread_binding(4, thread="blockIdx.x", annotations={"note": 1}):
            for tx in T.thread_binding(2, thread="threadIdx.x"):
                for var in T.serial(1, annotations={"mark": 1}):
                    A[bx * 2 + tx] = T.float32(0)

    golden("UnifyThreadBinding", before, expected)


def test_two_extents_for_one_tag_in_a_kernel_are_refused():
    @T.prim_func
    def before(A: T.Buffer((4, 16), "float32")):
        for bx in T.thread_binding(4, thread="blockIdx.x"):
            for t0 in T.thread_binding(16, thread="threadIdx.x"):
                A[bx, t0] = T.float32(0)
            for t1 in T.thread_binding(8, thread="threadIdx.x"):
                A[bx, t1] = T.float32(1)

    with pytest.raises(ValueError, match="threadIdx.x in one kernel must cover the same range"):
        run_pass("UnifyThreadBinding", before)
