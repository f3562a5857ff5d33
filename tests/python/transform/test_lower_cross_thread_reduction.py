"""tir.LowerCrossThreadReduction: reductions whose reduction loop is bound to threadIdx become an
in-thread partial reduction, a T.tvm_thread_allreduce and a guarded write-back."""

import pytest
from tessera.error import DiagnosticError, DiagnosticValueError

from tessera.script import tir as T


def test_in_thread_then_cross_thread_sum(golden):
    @T.prim_func
    def before(A: T.Buffer((16, 256), "float32"), B: T.Buffer((16,), "float32")):
        for i in T.thread_binding(16, thread="blockIdx.x"):
            for k_0 in range(2):
                for k_1 in T.thread_binding(128, thread="threadIdx.x"):
                    with T.block("B"):
                        vi = T.axis.spatial(16, i)
                        vk = T.axis.reduce(256, k_0 * 128 + k_1)
                        T.reads(B[vi], A[vi, vk])
                        T.writes(B[vi])
                        with T.init():
                            B[vi] = T.float32(0)
                        B[vi] = B[vi] + A[vi, vk]

    @T.prim_func
    def expected(A: T.Buffer((16, 256), "float32"), B: T.Buffer((16,), "float32")):
        cross_thread_B = T.alloc_buffer((1,), "float32", strides=(1,), scope="local")
        in_thread_B = T.alloc_buffer((1,), "float32", strides=(1,), scope="local")
        for i in T.thread_binding(16, thread="blockIdx.x"):
            for k_1 in T.thread_binding(128, thread="threadIdx.x"):
                with T.block("B_in_thread_init"):
                    T.reads()
                    T.writes(in_thread_B[0])
                    in_thread_B[0] = T.float32(0)
                for k_0 in range(2):
                    with T.block("B_in_thread"):
                        vi = T.axis.spatial(16, i)
                        vk = T.axis.reduce(256, k_0 * 128 + k_1)
                        T.reads(B[vi], A[vi, vk])
                        T.writes(in_thread_B[0])
                        in_thread_B[0] = in_thread_B[0] + A[vi, vk]
                with T.block("B_cross_thread"):
                    T.reads(in_thread_B[0])
                    T.writes(cross_thread_B[0])
                    with T.attr(T.comm_reducer(lambda x, y: x + y, [T.float32(0)]), "reduce_scope",
                                T.reinterpret(T.uint64(0), dtype="handle")):
                        T.evaluate(T.tvm_thread_allreduce(T.uint32(1), in_thread_B[0], T.bool(True),
                                                          cross_thread_B[0], k_1, dtype="handle"))
                with T.block("B_write_back"):
                    vi = T.axis.spatial(16, i)
                    T.where(k_1 == 0)
                    T.reads(cross_thread_B[0])
                    T.writes(B[vi])
                    B[vi] = cross_thread_B[0]

    golden("LowerCrossThreadReduction", before, expected)


def test_only_thread_bound_loop_max_with_non_identity_init(golden):
    # No serial reduction loop: the allreduce reads A directly. The init (-1e30) is not the
    # identity of max, so the write-back folds it in.
    @T.prim_func
    def before(A: T.Buffer((8, 64), "float32"), B: T.Buffer((8,), "float32")):
        for i in T.thread_binding(8, thread="blockIdx.x"):
            for k in T.thread_binding(64, thread="threadIdx.x"):
                with T.block("B"):
                    vi, vk = T.axis.remap("SR", [i, k])
                    T.reads(B[vi], A[vi, vk])
                    T.writes(B[vi])
                    with T.init():
                        B[vi] = T.float32(-1e30)
                    B[vi] = T.max(B[vi], A[vi, vk])

    # The allreduce names the thread loop variables inside the block (TVM's form).
    @T.prim_func(check_well_formed=False)
    def expected(A: T.Buffer((8, 64), "float32"), B: T.Buffer((8,), "float32")):
        cross_thread_B = T.alloc_buffer((1,), "float32", strides=(1,), scope="local")
        for i in T.thread_binding(8, thread="blockIdx.x"):
            for k in T.thread_binding(64, thread="threadIdx.x"):
                with T.block("B_cross_thread"):
                    vi, vk = T.axis.remap("SR", [i, k])
                    T.reads(B[vi], A[vi, vk])
                    T.writes(cross_thread_B[0])
                    with T.attr(T.comm_reducer(lambda x, y: T.max(x, y),
                                               [T.float32(-3.4028234663852886e38)]),
                                "reduce_scope", T.reinterpret(T.uint64(0), dtype="handle")):
                        T.evaluate(T.tvm_thread_allreduce(T.uint32(1), A[vi, vk], T.bool(True),
                                                          cross_thread_B[0], k, dtype="handle"))
                with T.block("B_write_back"):
                    vi = T.axis.spatial(8, i)
                    T.where(k == 0)
                    T.reads(cross_thread_B[0])
                    T.writes(B[vi])
                    B[vi] = T.max(T.float32(-1e30), cross_thread_B[0])

    golden("LowerCrossThreadReduction", before, expected)


def test_predicate_guards_values_and_spatial_part_guards_write(golden):
    # 3 rows per block on threadIdx.y (the last block is partial), 40 columns over 40 threads.
    # The predicate guards the in-thread step (a thread outside it keeps the identity) and, its
    # spatial part, the write-back.
    @T.prim_func
    def before(A: T.Buffer((10, 40), "float32"), B: T.Buffer((10,), "float32")):
        for i_0 in T.thread_binding(4, thread="blockIdx.x"):
            for i_1 in T.thread_binding(3, thread="threadIdx.y"):
                for k in T.thread_binding(40, thread="threadIdx.x"):
                    with T.block("B"):
                        vi = T.axis.spatial(10, i_0 * 3 + i_1)
                        vk = T.axis.reduce(40, k)
                        T.where(i_0 * 3 + i_1 < 10)
                        T.reads(B[vi], A[vi, vk])
                        T.writes(B[vi])
                        with T.init():
                            B[vi] = T.float32(0)
                        B[vi] = B[vi] + A[vi, vk]

    # The allreduce names the thread loop variables inside the block (TVM's form).
    @T.prim_func(check_well_formed=False)
    def expected(A: T.Buffer((10, 40), "float32"), B: T.Buffer((10,), "float32")):
        cross_thread_B = T.alloc_buffer((1,), "float32", strides=(1,), scope="local")
        in_thread_B = T.alloc_buffer((1,), "float32", strides=(1,), scope="local")
        for i_0 in T.thread_binding(4, thread="blockIdx.x"):
            for i_1 in T.thread_binding(3, thread="threadIdx.y"):
                for k in T.thread_binding(40, thread="threadIdx.x"):
                    with T.block("B_in_thread_init"):
                        T.reads()
                        T.writes(in_thread_B[0])
                        in_thread_B[0] = T.float32(0)
                    with T.block("B_in_thread"):
                        vi = T.axis.spatial(10, i_0 * 3 + i_1)
                        vk = T.axis.reduce(40, k)
                        T.where(i_0 * 3 + i_1 < 10)
                        T.reads(B[vi], A[vi, vk])
                        T.writes(in_thread_B[0])
                        in_thread_B[0] = in_thread_B[0] + A[vi, vk]
                    with T.block("B_cross_thread"):
                        T.reads(in_thread_B[0])
                        T.writes(cross_thread_B[0])
                        with T.attr(T.comm_reducer(lambda x, y: x + y, [T.float32(0)]),
                                    "reduce_scope", T.reinterpret(T.uint64(0), dtype="handle")):
                            T.evaluate(T.tvm_thread_allreduce(T.uint32(1), in_thread_B[0],
                                                              T.bool(True), cross_thread_B[0], k,
                                                              dtype="handle"))
                    with T.block("B_write_back"):
                        vi = T.axis.spatial(10, i_0 * 3 + i_1)
                        T.where(i_0 * 3 + i_1 < 10 and k == 0)
                        T.reads(cross_thread_B[0])
                        T.writes(B[vi])
                        B[vi] = cross_thread_B[0]

    golden("LowerCrossThreadReduction", before, expected)


def test_local_output_is_written_by_every_thread_and_no_init_accumulates(golden):
    @T.prim_func
    def before(A: T.Buffer((32,), "int32"), C: T.Buffer((32,), "int32")):
        B = T.alloc_buffer((1,), "int32", scope="local")
        for k in T.thread_binding(32, thread="threadIdx.x"):
            with T.block("B"):
                vk = T.axis.reduce(32, k)
                T.reads(B[0], A[vk])
                T.writes(B[0])
                B[0] = B[0] * A[vk]
        for j in T.thread_binding(32, thread="threadIdx.x"):
            with T.block("C"):
                vj = T.axis.spatial(32, j)
                C[vj] = B[0]

    # The allreduce names the thread loop variables inside the block (TVM's form).
    @T.prim_func(check_well_formed=False)
    def expected(A: T.Buffer((32,), "int32"), C: T.Buffer((32,), "int32")):
        B = T.alloc_buffer((1,), "int32", scope="local")
        cross_thread_B = T.alloc_buffer((1,), "int32", strides=(1,), scope="local")
        for k in T.thread_binding(32, thread="threadIdx.x"):
            with T.block("B_cross_thread"):
                vk = T.axis.reduce(32, k)
                T.reads(B[0], A[vk])
                T.writes(cross_thread_B[0])
                with T.attr(T.comm_reducer(lambda x, y: x * y, [1]), "reduce_scope",
                            T.reinterpret(T.uint64(0), dtype="handle")):
                    T.evaluate(T.tvm_thread_allreduce(T.uint32(1), A[vk], T.bool(True),
                                                      cross_thread_B[0], k, dtype="handle"))
            with T.block("B_write_back"):
                T.reads(cross_thread_B[0], B[0])
                T.writes(B[0])
                B[0] = B[0] * cross_thread_B[0]
        for j in T.thread_binding(32, thread="threadIdx.x"):
            with T.block("C"):
                vj = T.axis.spatial(32, j)
                C[vj] = B[0]

    golden("LowerCrossThreadReduction", before, expected)


def test_statements_before_the_block_under_its_thread_loop_stay_in_the_in_thread_part(golden):
    # rfactor's shape: the partial sums, then the reduction block, under the thread loop.
    @T.prim_func
    def before(A: T.Buffer((8, 16, 4), "float32"), B: T.Buffer((8,), "float32")):
        B_rf = T.alloc_buffer((16, 8), "float32", scope="local")
        for i in T.thread_binding(8, thread="blockIdx.x"):
            for ko in T.thread_binding(4, thread="threadIdx.x"):
                for ki, j in T.grid(4, 4):
                    with T.block("B_rf"):
                        vk = T.axis.spatial(16, ko * 4 + ki)
                        vi, vj = T.axis.remap("SR", [i, j])
                        T.reads(A[vi, vk, vj])
                        T.writes(B_rf[vk, vi])
                        with T.init():
                            B_rf[vk, vi] = T.float32(0)
                        B_rf[vk, vi] = B_rf[vk, vi] + A[vi, vk, vj]
                for ki in range(4):
                    with T.block("B"):
                        vk = T.axis.reduce(16, ko * 4 + ki)
                        vi = T.axis.spatial(8, i)
                        T.reads(B_rf[vk, vi])
                        T.writes(B[vi])
                        with T.init():
                            B[vi] = T.float32(0)
                        B[vi] = B[vi] + B_rf[vk, vi]

    @T.prim_func
    def expected(A: T.Buffer((8, 16, 4), "float32"), B: T.Buffer((8,), "float32")):
        B_rf = T.alloc_buffer((16, 8), "float32", scope="local")
        cross_thread_B = T.alloc_buffer((1,), "float32", strides=(1,), scope="local")
        in_thread_B = T.alloc_buffer((1,), "float32", strides=(1,), scope="local")
        for i in T.thread_binding(8, thread="blockIdx.x"):
            for ko in T.thread_binding(4, thread="threadIdx.x"):
                with T.block("B_in_thread_init"):
                    T.reads()
                    T.writes(in_thread_B[0])
                    in_thread_B[0] = T.float32(0)
                for ki, j in T.grid(4, 4):
                    with T.block("B_rf"):
                        vk = T.axis.spatial(16, ko * 4 + ki)
                        vi, vj = T.axis.remap("SR", [i, j])
                        T.reads(A[vi, vk, vj])
                        T.writes(B_rf[vk, vi])
                        with T.init():
                            B_rf[vk, vi] = T.float32(0)
                        B_rf[vk, vi] = B_rf[vk, vi] + A[vi, vk, vj]
                for ki in range(4):
                    with T.block("B_in_thread"):
                        vk = T.axis.reduce(16, ko * 4 + ki)
                        vi = T.axis.spatial(8, i)
                        T.reads(B_rf[vk, vi])
                        T.writes(in_thread_B[0])
                        in_thread_B[0] = in_thread_B[0] + B_rf[vk, vi]
                with T.block("B_cross_thread"):
                    T.reads(in_thread_B[0])
                    T.writes(cross_thread_B[0])
                    with T.attr(T.comm_reducer(lambda x, y: x + y, [T.float32(0)]), "reduce_scope",
                                T.reinterpret(T.uint64(0), dtype="handle")):
                        T.evaluate(T.tvm_thread_allreduce(T.uint32(1), in_thread_B[0], T.bool(True),
                                                          cross_thread_B[0], ko, dtype="handle"))
                with T.block("B_write_back"):
                    vi = T.axis.spatial(8, i)
                    T.where(ko == 0)
                    T.reads(cross_thread_B[0])
                    T.writes(B[vi])
                    B[vi] = cross_thread_B[0]

    golden("LowerCrossThreadReduction", before, expected)


def test_reduction_without_thread_bound_reduction_loop_is_unchanged(unchanged):
    @T.prim_func
    def func(A: T.Buffer((64, 32), "float32"), B: T.Buffer((64,), "float32")):
        for i in T.thread_binding(64, thread="threadIdx.x"):
            for k in range(32):
                with T.block("B"):
                    vi, vk = T.axis.remap("SR", [i, k])
                    with T.init():
                        B[vi] = T.float32(0)
                    B[vi] = B[vi] + A[vi, vk]

    unchanged("LowerCrossThreadReduction", func)


def test_block_without_init_that_is_not_a_reduction_is_unchanged(unchanged):
    # vj is a reduction iterator bound to threadIdx, but the update folds nothing (TVM leaves
    # such a block alone too).
    @T.prim_func
    def func(A: T.Buffer((8, 32), "float32"), B: T.Buffer((8, 32), "float32")):
        for i in T.thread_binding(8, thread="blockIdx.x"):
            for j in T.thread_binding(32, thread="threadIdx.x"):
                with T.block("B"):
                    vi, vj = T.axis.remap("SR", [i, j])
                    T.reads(A[vi, vj])
                    T.writes(B[vi, vj])
                    B[vi, vj] = A[vi, vj] + T.float32(1)

    unchanged("LowerCrossThreadReduction", func)




def test_unknown_reducer_is_rejected(apply):
    @T.prim_func
    def func(A: T.Buffer((8, 32), "float32"), B: T.Buffer((8,), "float32")):
        for i in T.thread_binding(8, thread="blockIdx.x"):
            for k in T.thread_binding(32, thread="threadIdx.x"):
                with T.block("B"):
                    vi, vk = T.axis.remap("SR", [i, k])
                    with T.init():
                        B[vi] = T.float32(0)
                    B[vi] = B[vi] - A[vi, vk]

    with pytest.raises(Exception, match=r"cannot lower the cross-thread reduction block 'B': the "
                                        r"update is not a known reducer") as info:
        apply("LowerCrossThreadReduction", func)
    # Located at the block, and a ValueError as TVM raises it for a reduction it cannot lower.
    assert isinstance(info.value, DiagnosticValueError)
    assert isinstance(info.value, ValueError) and isinstance(info.value, DiagnosticError)
    assert info.value.line > 0 and "^" in str(info.value)


def test_init_of_another_element_is_rejected(apply):
    @T.prim_func
    def func(A: T.Buffer((8, 32), "float32"), B: T.Buffer((8,), "float32")):
        for i in T.thread_binding(8, thread="blockIdx.x"):
            for k in T.thread_binding(32, thread="threadIdx.x"):
                with T.block("B"):
                    vi, vk = T.axis.remap("SR", [i, k])
                    with T.init():
                        B[0] = T.float32(0)
                    B[vi] = B[vi] + A[vi, vk]

    with pytest.raises(Exception, match="its init is not a single store to the element the "
                                        "update writes"):
        apply("LowerCrossThreadReduction", func)


def test_two_writes_that_are_not_a_tuple_reducer_are_rejected(apply):
    @T.prim_func
    def func(A: T.Buffer((8, 32), "float32"), B: T.Buffer((8,), "float32"),
             C: T.Buffer((8,), "float32")):
        for i in T.thread_binding(8, thread="blockIdx.x"):
            for k in T.thread_binding(32, thread="threadIdx.x"):
                with T.block("B"):
                    vi, vk = T.axis.remap("SR", [i, k])
                    T.reads(A[vi, vk], B[vi])
                    T.writes(B[vi], C[vi])
                    B[vi] = B[vi] + A[vi, vk]

    with pytest.raises(Exception, match=r"its update is not a known two-value reducer"):
        apply("LowerCrossThreadReduction", func)


def test_spatial_loop_inside_the_reduction_loops_is_rejected(apply):
    @T.prim_func
    def func(A: T.Buffer((8, 32), "float32"), B: T.Buffer((8,), "float32")):
        for k in T.thread_binding(32, thread="threadIdx.x"):
            for i in range(8):
                with T.block("B"):
                    vi, vk = T.axis.remap("SR", [i, k])
                    with T.init():
                        B[vi] = T.float32(0)
                    B[vi] = B[vi] + A[vi, vk]

    with pytest.raises(Exception, match="the loop 'i' is not a reduction loop but lies between "
                                        "the reduction loops"):
        apply("LowerCrossThreadReduction", func)


def test_block_not_last_under_its_reduction_loops_is_rejected(apply):
    # A block after the reduction block under the thread loop: the allreduce would run before it.
    @T.prim_func
    def func(A: T.Buffer((8, 32), "float32"), B: T.Buffer((8,), "float32"),
             C: T.Buffer((8, 32), "float32")):
        for i in T.thread_binding(8, thread="blockIdx.x"):
            for k in T.thread_binding(32, thread="threadIdx.x"):
                with T.block("B"):
                    vi, vk = T.axis.remap("SR", [i, k])
                    with T.init():
                        B[vi] = T.float32(0)
                    B[vi] = B[vi] + A[vi, vk]
                with T.block("C"):
                    vi, vk = T.axis.remap("SS", [i, k])
                    C[vi, vk] = A[vi, vk]

    with pytest.raises(Exception, match="the reduction block 'B' has a reduction loop bound to "
                                        "a GPU thread index, but its reduction loops do not form "
                                        "a perfect nest around it"):
        apply("LowerCrossThreadReduction", func)


def test_reduction_loop_bound_to_blockIdx_alone_is_rejected(apply):
    # Blocks cannot reduce across each other: refused rather than left to race on B.
    @T.prim_func
    def func(A: T.Buffer((8, 32), "float32"), B: T.Buffer((8,), "float32")):
        for i in range(8):
            for k in T.thread_binding(32, thread="blockIdx.x"):
                with T.block("B"):
                    vi, vk = T.axis.remap("SR", [i, k])
                    with T.init():
                        B[vi] = T.float32(0)
                    B[vi] = B[vi] + A[vi, vk]

    with pytest.raises(Exception, match=r"the reduction loop 'k' is bound to 'blockIdx.x'; only "
                                        r"threadIdx.\* can reduce across threads"):
        apply("LowerCrossThreadReduction", func)


def test_reader_outside_the_reduced_thread_loop_is_written_by_its_first_thread(golden):
    # "add" reads the reduced value and writes global memory outside the threadIdx.x loop: it
    # gets a threadIdx.x loop of its own, only thread 0 writing (TVM's thread broadcast).
    @T.prim_func
    def before(A: T.Buffer((16, 64), "float32"), B: T.Buffer((16,), "float32")):
        t = T.alloc_buffer((16,), "float32", scope="local")
        for i in T.thread_binding(16, thread="blockIdx.x"):
            for k in T.thread_binding(64, thread="threadIdx.x"):
                with T.block("sum"):
                    vi, vk = T.axis.remap("SR", [i, k])
                    T.reads(A[vi, vk])
                    T.writes(t[vi])
                    with T.init():
                        t[vi] = T.float32(0)
                    t[vi] = t[vi] + A[vi, vk]
            with T.block("add"):
                vi = T.axis.spatial(16, i)
                T.reads(t[vi])
                T.writes(B[vi])
                B[vi] = t[vi] + T.float32(1)

    @T.prim_func(check_well_formed=False)
    def expected(A: T.Buffer((16, 64), "float32"), B: T.Buffer((16,), "float32")):
        t = T.alloc_buffer((16,), "float32", scope="local")
        cross_thread_t = T.alloc_buffer((1,), "float32", strides=(1,), scope="local")
        for i in T.thread_binding(16, thread="blockIdx.x"):
            for k in T.thread_binding(64, thread="threadIdx.x"):
                with T.block("sum_cross_thread"):
                    vi, vk = T.axis.remap("SR", [i, k])
                    T.reads(A[vi, vk])
                    T.writes(cross_thread_t[0])
                    with T.attr(T.comm_reducer(lambda x, y: x + y, [T.float32(0)]), "reduce_scope",
                                T.reinterpret(T.uint64(0), dtype="handle")):
                        T.evaluate(T.tvm_thread_allreduce(T.uint32(1), A[vi, vk], T.bool(True),
                                                          cross_thread_t[0], k, dtype="handle"))
                with T.block("sum_write_back"):
                    vi = T.axis.spatial(16, i)
                    T.reads(cross_thread_t[0])
                    T.writes(t[vi])
                    t[vi] = cross_thread_t[0]
            for tx in T.thread_binding(64, thread="threadIdx.x"):
                with T.block("add"):
                    vi = T.axis.spatial(16, i)
                    T.where(tx == 0)
                    T.reads(t[vi])
                    T.writes(B[vi])
                    B[vi] = t[vi] + T.float32(1)

    golden("LowerCrossThreadReduction", before, expected)


def test_argmax_over_threads_reduces_both_buffers_together(golden):
    # Two outputs (index, value): one scratch buffer per output, in the order of the writes; the
    # in-thread block keeps the update as written; the reducer combines the pair.
    @T.prim_func
    def before(V: T.Buffer((8, 64), "float32"), I: T.Buffer((8,), "int32"),
               M: T.Buffer((8,), "float32")):
        for i in T.thread_binding(8, thread="blockIdx.x"):
            for k_0 in range(4):
                for k_1 in T.thread_binding(16, thread="threadIdx.x"):
                    with T.block("am"):
                        vi = T.axis.spatial(8, i)
                        vk = T.axis.reduce(64, k_0 * 16 + k_1)
                        T.reads(V[vi, vk])
                        T.writes(I[vi], M[vi])
                        with T.init():
                            M[vi] = T.float32(-3.4028234663852886e38)
                            I[vi] = -1
                        new_i: T.int32 = T.Select(M[vi] >= V[vi, vk], I[vi], vk)
                        new_m: T.float32 = T.Select(M[vi] >= V[vi, vk], M[vi], V[vi, vk])
                        M[vi] = new_m
                        I[vi] = new_i

    @T.prim_func
    def expected(V: T.Buffer((8, 64), "float32"), I: T.Buffer((8,), "int32"),
                 M: T.Buffer((8,), "float32")):
        cross_I = T.alloc_buffer((1,), "int32", strides=(1,), scope="local")
        cross_M = T.alloc_buffer((1,), "float32", strides=(1,), scope="local")
        in_I = T.alloc_buffer((1,), "int32", strides=(1,), scope="local")
        in_M = T.alloc_buffer((1,), "float32", strides=(1,), scope="local")
        for i in T.thread_binding(8, thread="blockIdx.x"):
            for k_1 in T.thread_binding(16, thread="threadIdx.x"):
                with T.block("am_in_thread_init"):
                    T.reads()
                    T.writes(in_I[0], in_M[0])
                    in_I[0] = -1
                    in_M[0] = T.float32(-3.4028234663852886e38)
                for k_0 in range(4):
                    with T.block("am_in_thread"):
                        vi = T.axis.spatial(8, i)
                        vk = T.axis.reduce(64, k_0 * 16 + k_1)
                        T.reads(V[vi, vk])
                        T.writes(in_I[0], in_M[0])
                        new_i: T.int32 = T.Select(in_M[0] >= V[vi, vk], in_I[0], vk)
                        new_m: T.float32 = T.Select(in_M[0] >= V[vi, vk], in_M[0], V[vi, vk])
                        in_M[0] = new_m
                        in_I[0] = new_i
                with T.block("am_cross_thread"):
                    T.reads(in_I[0], in_M[0])
                    T.writes(cross_I[0], cross_M[0])
                    T.attr(T.comm_reducer(lambda a0, a1, b0, b1: (T.Select(a1 >= b1, a0, b0),
                                                                  T.Select(a1 >= b1, a1, b1)),
                                          [-1, T.float32(-3.4028234663852886e38)]),
                           "reduce_scope", T.reinterpret(T.uint64(0), dtype="handle"))
                    T.evaluate(T.tvm_thread_allreduce(T.uint32(2), in_I[0], in_M[0], True,
                                                      cross_I[0], cross_M[0], k_1,
                                                      dtype="handle"))
                with T.block("am_write_back"):
                    vi = T.axis.spatial(8, i)
                    T.where(k_1 == 0)
                    T.reads(cross_I[0], cross_M[0])
                    T.writes(I[vi], M[vi])
                    I[vi] = cross_I[0]
                    M[vi] = cross_M[0]

    golden("LowerCrossThreadReduction", before, expected)


def test_pair_of_sums_without_in_thread_loops_reduces_the_values_directly(golden):
    @T.prim_func
    def before(A: T.Buffer((4, 32), "float32"), S: T.Buffer((4,), "float32"),
               Q: T.Buffer((4,), "float32")):
        for i in T.thread_binding(4, thread="blockIdx.x"):
            for k in T.thread_binding(32, thread="threadIdx.x"):
                with T.block("s"):
                    vi, vk = T.axis.remap("SR", [i, k])
                    T.reads(A[vi, vk])
                    T.writes(S[vi], Q[vi])
                    with T.init():
                        S[vi] = T.float32(0)
                        Q[vi] = T.float32(0)
                    s0: T.float32 = S[vi] + A[vi, vk]
                    s1: T.float32 = Q[vi] + A[vi, vk] * A[vi, vk]
                    S[vi] = s0
                    Q[vi] = s1

    @T.prim_func(check_well_formed=False)
    def expected(A: T.Buffer((4, 32), "float32"), S: T.Buffer((4,), "float32"),
                 Q: T.Buffer((4,), "float32")):
        cross_S = T.alloc_buffer((1,), "float32", strides=(1,), scope="local")
        cross_Q = T.alloc_buffer((1,), "float32", strides=(1,), scope="local")
        for i in T.thread_binding(4, thread="blockIdx.x"):
            for k in T.thread_binding(32, thread="threadIdx.x"):
                with T.block("s_cross_thread"):
                    vi, vk = T.axis.remap("SR", [i, k])
                    T.reads(A[vi, vk])
                    T.writes(cross_S[0], cross_Q[0])
                    T.attr(T.comm_reducer(lambda a0, a1, b0, b1: (a0 + b0, a1 + b1),
                                          [T.float32(0), T.float32(0)]),
                           "reduce_scope", T.reinterpret(T.uint64(0), dtype="handle"))
                    T.evaluate(T.tvm_thread_allreduce(T.uint32(2), A[vi, vk], A[vi, vk] * A[vi, vk],
                                                      True, cross_S[0], cross_Q[0], k,
                                                      dtype="handle"))
                with T.block("s_write_back"):
                    vi = T.axis.spatial(4, i)
                    T.where(k == 0)
                    T.reads(cross_S[0], cross_Q[0])
                    T.writes(S[vi], Q[vi])
                    S[vi] = cross_S[0]
                    Q[vi] = cross_Q[0]

    golden("LowerCrossThreadReduction", before, expected)


def test_tuple_reduction_with_an_init_other_than_the_identity_is_rejected(apply):
    @T.prim_func
    def func(A: T.Buffer((4, 32), "float32"), S: T.Buffer((4,), "float32"),
             Q: T.Buffer((4,), "float32")):
        for i in T.thread_binding(4, thread="blockIdx.x"):
            for k in T.thread_binding(32, thread="threadIdx.x"):
                with T.block("s"):
                    vi, vk = T.axis.remap("SR", [i, k])
                    T.reads(A[vi, vk])
                    T.writes(S[vi], Q[vi])
                    with T.init():
                        S[vi] = T.float32(1)
                        Q[vi] = T.float32(0)
                    s0: T.float32 = S[vi] + A[vi, vk]
                    s1: T.float32 = Q[vi] + A[vi, vk] * A[vi, vk]
                    S[vi] = s0
                    Q[vi] = s1

    with pytest.raises(Exception, match=r"its init must store the reducer's identity \(sum2\)"):
        apply("LowerCrossThreadReduction", func)
