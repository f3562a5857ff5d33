"""Cross-thread reductions on CUDA: reduction loops bound to threadIdx lower to warp shuffles
(tir.LowerCrossThreadReduction + tir.LowerBlockAllreduce, tessera's variant of
tir.LowerThreadAllreduce). The compile-only tests check the
kernels' shape with NVRTC; the runtime tests (GPU or emulator) compare with numpy."""

import re

import numpy as np
import pytest

import tessera as ts

import allreduce_kernels as K
from cuda_support import requires_gpu, requires_nvrtc

pytestmark = requires_nvrtc


def kernel_source(mod):
    lib = ts.build(mod, target="cuda")
    [dev] = lib.imported_modules
    src = dev.get_source()
    return src[src.index('extern "C"'):]


def shuffles(src):
    """(delta, width) of each __shfl_down_sync, in order."""
    return [(int(d), int(w)) for d, w in re.findall(r"__shfl_down_sync\([^,]+, [^,]+, (\d+), (\d+)\)", src)]


# ---- compile only ----

def test_row_sum_over_128_threads_uses_two_warp_stages():
    src = kernel_source(K.schedule_row_reduce(K.row_reduce_func(256, 512), 128))
    assert "__launch_bounds__(128)" in src
    # The in-thread part: four columns per thread.
    assert "for (int32_t k_0 = 0; k_0 < 4; ++k_0) {" in src
    # Each warp reduces its 32 lanes, lane 0 writes its warp's slot, then the 4 slots.
    assert shuffles(src) == [(16, 32), (8, 32), (4, 32), (2, 32), (1, 32), (2, 32), (1, 32)]
    assert "__shared__ float red_buf_shared[4];" in src
    assert "if ((threadIdx_x & 31) == 0) {" in src
    assert src.count("__syncthreads();") == 2
    # Every thread gets the result; thread 0 writes it.
    assert "__shfl_sync(4294967295u, red_buf[0], 0, 32)" in src
    assert re.search(r"if \(threadIdx_x == 0\) \{\n\s+B\[blockIdx_x\] = cross_thread_B\[0\];", src)


def test_row_max_over_96_threads_pads_the_warp_slots_with_the_identity():
    src = kernel_source(K.schedule_row_reduce(K.row_reduce_func(64, 288, "max"), 96))
    assert "__shared__ float red_buf_shared[3];" in src
    assert "(((threadIdx_x & 31) < 3) ? red_buf_shared[(threadIdx_x & 31)] : -3.40282347e+38f)" in src
    assert shuffles(src) == [(16, 32), (8, 32), (4, 32), (2, 32), (1, 32), (2, 32), (1, 32)]
    assert "fmaxf(red_buf[0], __shfl_down_sync(" in src
    assert src.count("__syncthreads();") == 2


def test_group_of_100_threads_pads_the_partial_warp_with_the_identity():
    src = kernel_source(K.schedule_row_reduce(K.row_reduce_func(64, 300), 100))
    # The fourth warp has 4 lanes: its mask names them, and shuffles from missing lanes count
    # as 0. Each shuffle runs in every lane before its value is selected.
    mask = "((threadIdx_x >> 5) < 3) ? 4294967295u : 15u"
    assert f"red_buf_other[0] = __shfl_down_sync({mask}, red_buf[0], 16, 32);" in src
    assert ("red_buf[0] = (red_buf[0] + ((((threadIdx_x & 31) + 16) < (((threadIdx_x >> 5) < 3) ? "
            "32 : 4)) ? red_buf_other[0] : 0.0f));") in src
    assert shuffles(src) == [(16, 32), (8, 32), (4, 32), (2, 32), (1, 32)]
    # Every thread folds the 4 warp slots between two barriers.
    assert "__shared__ float red_buf_shared[4];" in src
    assert "red_buf[0] = (red_buf[0] + red_buf_shared[3]);" in src
    assert src.count("__syncthreads();") == 2


def test_group_of_24_threads_is_one_partial_warp():
    src = kernel_source(K.schedule_row_reduce(K.row_reduce_func(64, 72, "max"), 24))
    assert shuffles(src) == [(16, 32), (8, 32), (4, 32), (2, 32), (1, 32)]
    assert "__shfl_down_sync(16777215u, red_buf[0], 16, 32)" in src
    assert "__shfl_sync(16777215u, red_buf[0], 0, 32)" in src
    assert "__syncthreads" not in src and "__shared__" not in src


def test_groups_of_40_threads_use_a_guarded_shared_memory_tree():
    src = kernel_source(K.guarded_row_sum)
    assert "__shfl_down_sync" not in src
    assert "__shared__ float red_buf_shared[120];" in src
    # 40 -> 32: threads below 8 add the slot 32 above; then 16, 8, ..., 1.
    assert "if (threadIdx_x < 8) {" in src and "red_buf_shared[((threadIdx_y * 40) + threadIdx_x)]" in src
    for step in (16, 4, 2, 1):
        assert f"if (threadIdx_x < {step}) {{" in src
    # One barrier after the stores, one per step, one after the result is read.
    assert src.count("__syncthreads();") == 8


def test_threadIdx_y_groups_reduce_within_their_warp():
    src = kernel_source(K.schedule_row_reduce_2d(K.row_reduce_func(64, 256), 4, 32))
    assert "__launch_bounds__(128)" in src
    assert shuffles(src) == [(16, 32), (8, 32), (4, 32), (2, 32), (1, 32)]
    assert "__syncthreads" not in src and "__shared__" not in src
    assert "if (threadIdx_x == 0) {" in src and "B[((blockIdx_x * 4) + threadIdx_y)]" in src


def test_small_groups_use_a_partial_mask_and_their_width():
    # 3 rows of 8 threads: 24 threads, so the mask names 24 lanes; the last block is partial.
    src = kernel_source(K.schedule_row_reduce_2d(K.row_reduce_func(64, 256), 3, 8))
    assert shuffles(src) == [(4, 8), (2, 8), (1, 8)]
    assert "__shfl_down_sync(16777215u," in src and "__shfl_sync(16777215u, red_buf[0], 0, 8)" in src
    assert "if ((((blockIdx_x * 3) + threadIdx_y) < 64) && (threadIdx_x == 0)) {" in src
    # 5 rows of 8: 40 threads, the second warp has 8 lanes.
    src = kernel_source(K.schedule_row_reduce_2d(K.row_reduce_func(64, 256), 5, 8))
    assert ("__shfl_down_sync(((((threadIdx_y * 8) + threadIdx_x) >> 5) < 1) ? 4294967295u : 255u, "
            "red_buf[0], 4, 8)") in src


def test_reduction_over_threadIdx_y_goes_through_shared_memory():
    src = kernel_source(K.schedule_row_reduce_over_y(K.row_reduce_func(64, 256), 8, 16))
    assert "__shfl_down_sync" not in src
    assert "__shared__ float red_buf_shared[128];" in src
    assert "red_buf_shared[((threadIdx_x * 16) + threadIdx_y)] = red_buf[0];" in src
    assert src.count("__syncthreads();") == 6


def test_fp16_input_accumulated_in_fp32_shuffles_floats():
    src = kernel_source(K.schedule_row_reduce(K.row_reduce_func(64, 256, "sum", "float16", "float32"), 128))
    assert "half* __restrict__ A" in src and "float* __restrict__ B" in src
    assert "float red_buf[1];" in src and "__shared__ float red_buf_shared[4];" in src
    assert "((float)A[" in src


def test_fp16_max_shuffles_halves():
    src = kernel_source(K.schedule_row_reduce(K.row_reduce_func(64, 256, "max", "float16"), 64))
    assert "half red_buf[1];" in src and "__shared__ half red_buf_shared[2];" in src
    assert "__hmax(red_buf[0], __shfl_down_sync(4294967295u, red_buf[0], 16, 32))" in src


def test_int32_sum_over_256_threads():
    src = kernel_source(K.schedule_row_reduce(K.row_reduce_func(64, 256, "sum", "int32"), 256))
    assert "int32_t red_buf[1];" in src and "__shared__ int32_t red_buf_shared[8];" in src
    assert shuffles(src)[-3:] == [(4, 32), (2, 32), (1, 32)]


def test_1024_threads_min():
    src = kernel_source(K.schedule_row_reduce(K.row_reduce_func(8, 1024, "min"), 1024))
    assert "__launch_bounds__(1024)" in src and "__shared__ float red_buf_shared[32];" in src
    assert len(shuffles(src)) == 10 and "fminf(" in src


def test_predicate_selects_the_identity_for_threads_outside_the_rows():
    src = kernel_source(K.guarded_row_sum)
    # The in-thread value starts at the identity and takes A only under the predicate.
    assert "in_thread_B[0] = 0.0f;\n  if (((blockIdx_x * 3) + threadIdx_y) < 10) {\n    in_thread_B[0] = (in_thread_B[0] + A[" in src
    assert "if ((((blockIdx_x * 3) + threadIdx_y) < 10) && (threadIdx_x == 0)) {" in src


def test_softmax_reduces_max_then_sum_across_threads():
    src = kernel_source(K.schedule_softmax(128))
    assert "__shared__ float M[1];" in src and "__shared__ float S[1];" in src
    assert len(shuffles(src)) == 14
    # Two barriers per reduction, and one after each write of M and S before their readers.
    assert src.count("__syncthreads();") == 6
    m_write = src.index("M[0] = cross_thread_M[0];")
    assert src.index("__syncthreads();", m_write) < src.index("- M[0]", m_write)


def test_softmax_with_local_results_written_by_every_thread():
    src = kernel_source(K.schedule_softmax(128, scope="local"))
    assert "float M[1];" in src and "__shared__ float M" not in src
    assert re.search(r"\n\s+M\[0\] = cross_thread_M\[0\];", src)
    assert "if (threadIdx_x == 0)" not in src
    assert src.count("__syncthreads();") == 4


def test_global_intermediate_written_by_every_thread():
    # M is a "global" intermediate that the kernel keeps per thread: every thread writes the
    # (same) result.
    src = kernel_source(K.subtract_row_max)
    assert "  float M[1];" in src
    assert re.search(r"\n  M\[0\] = cross_thread_M\[0\];", src)
    assert "if (threadIdx_x == 0)" not in src


def test_reduction_over_threadIdx_y_and_x_is_one_group():
    src = kernel_source(K.schedule_row_reduce_xy(K.row_reduce_func(16, 1024), 4, 32))
    assert "__launch_bounds__(128)" in src
    # The group index r = threadIdx_y * 32 + threadIdx_x: 4 warps, 4 slots.
    assert "__shared__ float red_buf_shared[4];" in src
    assert "if ((((threadIdx_y * 32) + threadIdx_x) & 31) == 0) {" in src
    assert "if ((threadIdx_y == 0) && (threadIdx_x == 0)) {" in src


def test_symbolic_sizes_guard_the_in_thread_part():
    src = kernel_source(K.schedule_row_reduce(K.row_sum_dynamic, 64))
    assert "for (int32_t k_0 = 0; k_0 < __floordiv((m + 63), 64); ++k_0) {" in src
    assert "if (((k_0 * 64) + threadIdx_x) < m) {" in src
    assert "__shared__ float red_buf_shared[2];" in src and len(shuffles(src)) == 6


# ---- errors ----

def test_reduction_narrower_than_the_launch_is_rejected():
    # The reduction uses 64 threads of threadIdx.x, the elementwise block 128.
    sch = ts.tir.Schedule(K.softmax)
    norm = sch.get_block("norm")
    i, j = sch.get_loops(norm)
    _, tj = sch.split(j, [None, 128])
    sch.bind(i, "blockIdx.x")
    sch.bind(tj, "threadIdx.x")
    for name, threads in (("sum", 64), ("max", 128)):
        block = sch.get_block(name)
        sch.set_scope(block, 0, "shared")
        sch.compute_at(block, i)
        _, k = sch.get_loops(block)
        _, tk = sch.split(k, [None, threads])
        sch.bind(tk, "threadIdx.x")
    with pytest.raises(Exception, match=r"runs in a threadIdx.x loop of extent 64 but the kernel "
                                        r"launches 128 threads in that dimension"):
        ts.build(sch.mod, target="cuda")


def test_reduction_bound_to_blockIdx_and_threadIdx_is_rejected():
    from tessera.script import tir as T

    # Written by hand: the schedule's bind already refuses a reduction loop on blockIdx.
    @T.prim_func
    def func(A: T.Buffer((8, 1024), "float32"), B: T.Buffer((8,), "float32")):
        for i in T.thread_binding(8, thread="threadIdx.y"):
            for k_0 in T.thread_binding(8, thread="blockIdx.x"):
                for k_1 in T.thread_binding(128, thread="threadIdx.x"):
                    with T.block("B"):
                        vi = T.axis.spatial(8, i)
                        vk = T.axis.reduce(1024, k_0 * 128 + k_1)
                        with T.init():
                            B[vi] = T.float32(0)
                        B[vi] = B[vi] + A[vi, vk]

    with pytest.raises(Exception, match=r"the reduction loop 'k_0' is bound to 'blockIdx.x'; only "
                                        r"threadIdx.\* can reduce across threads"):
        ts.build(func, target="cuda")


def test_unknown_reducer_bound_to_threads_is_rejected():
    from tessera.script import tir as T

    @T.prim_func
    def sub(A: T.Buffer((8, 64), "float32"), B: T.Buffer((8,), "float32")):
        for i, k in T.grid(8, 64):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] - A[vi, vk]

    with pytest.raises(Exception, match="the update is not a known reducer"):
        ts.build(K.schedule_row_reduce(sub, 64), target="cuda")


# ---- runtime ----

def _run(mod, x, out_shape, out_dtype):
    lib = ts.build(mod, target="cuda")
    out = ts.nd.empty(out_shape, out_dtype, ts.cuda(0))
    lib(ts.nd.array(x, device=ts.cuda(0)), out)
    return out.numpy()


REDUCE = {"sum": np.sum, "max": np.max, "min": np.min, "prod": np.prod}


@requires_gpu
@pytest.mark.parametrize("kind,cols,threads", [
    ("sum", 512, 128), ("max", 288, 96), ("sum", 300, 100), ("max", 72, 24), ("min", 1024, 1024),
    ("max", 64, 16), ("sum", 256, 32), ("prod", 64, 64)])
def test_row_reduce_runs(kind, cols, threads):
    rows = 16
    x = np.random.uniform(-1, 1, (rows, cols)).astype("float32")
    if kind == "prod":
        x = np.random.uniform(0.9, 1.1, (rows, cols)).astype("float32")
    got = _run(K.schedule_row_reduce(K.row_reduce_func(rows, cols, kind), threads), x, (rows,), "float32")
    np.testing.assert_allclose(got, REDUCE[kind](x, axis=1), rtol=1e-4, atol=1e-5)


@requires_gpu
@pytest.mark.parametrize("rows_per_block,threads", [(4, 32), (3, 8), (5, 8), (2, 64)])
def test_threadIdx_y_groups_run(rows_per_block, threads):
    x = np.random.uniform(-1, 1, (64, 256)).astype("float32")
    mod = K.schedule_row_reduce_2d(K.row_reduce_func(64, 256), rows_per_block, threads)
    np.testing.assert_allclose(_run(mod, x, (64,), "float32"), x.sum(axis=1), rtol=1e-4, atol=1e-5)


@requires_gpu
@pytest.mark.parametrize("rows,cols,rows_per_block,threads", [
    (10, 200, 3, 64),   # partial last block (spatial guard), partial last column step
    (10, 32, 3, 32),    # no in-thread part: the allreduce reads A under the block predicate
    (7, 100, 2, 100)])  # 2 groups of 100 threads: the shared-memory tree per group
def test_guarded_reductions_run(rows, cols, rows_per_block, threads):
    x = np.random.uniform(-1, 1, (rows, cols)).astype("float32")
    mod = K.schedule_row_reduce_2d(K.row_reduce_func(rows, cols, "max"), rows_per_block, threads)
    np.testing.assert_allclose(_run(mod, x, (rows,), "float32"), x.max(axis=1), rtol=1e-6)


@requires_gpu
def test_predicated_reduction_without_in_thread_part_runs():
    x = np.random.uniform(-1, 1, (10, 40)).astype("float32")
    np.testing.assert_allclose(_run(K.guarded_row_sum, x, (10,), "float32"), x.sum(axis=1),
                               rtol=1e-5, atol=1e-6)


@requires_gpu
def test_reduction_over_threadIdx_y_runs():
    x = np.random.uniform(-1, 1, (64, 256)).astype("float32")
    mod = K.schedule_row_reduce_over_y(K.row_reduce_func(64, 256, "max"), 8, 16)
    np.testing.assert_allclose(_run(mod, x, (64,), "float32"), x.max(axis=1), rtol=1e-6)


@requires_gpu
def test_fp16_and_int32_reductions_run():
    x = np.random.uniform(-1, 1, (64, 256)).astype("float16")
    mod = K.schedule_row_reduce(K.row_reduce_func(64, 256, "sum", "float16", "float32"), 128)
    np.testing.assert_allclose(_run(mod, x, (64,), "float32"), x.astype("float32").sum(axis=1),
                               rtol=1e-4, atol=1e-4)
    mod = K.schedule_row_reduce(K.row_reduce_func(64, 256, "max", "float16"), 64)
    np.testing.assert_array_equal(_run(mod, x, (64,), "float16"), x.max(axis=1))
    xi = np.random.randint(-1000, 1000, (64, 256)).astype("int32")
    mod = K.schedule_row_reduce(K.row_reduce_func(64, 256, "sum", "int32"), 256)
    np.testing.assert_array_equal(_run(mod, xi, (64,), "int32"), xi.sum(axis=1))


@requires_gpu
@pytest.mark.parametrize("n,m", [(5, 200), (3, 64), (4, 7)])
def test_symbolic_sizes_run(n, m):
    lib = ts.build(K.schedule_row_reduce(K.row_sum_dynamic, 64), target="cuda")
    x = np.random.uniform(-1, 1, (n, m)).astype("float32")
    out = ts.nd.empty((n,), "float32", ts.cuda(0))
    lib(ts.nd.array(x, device=ts.cuda(0)), out)
    np.testing.assert_allclose(out.numpy(), x.sum(axis=1), rtol=1e-5, atol=1e-6)


@requires_gpu
def test_global_intermediate_runs():
    x = np.random.uniform(-1, 1, (64, 256)).astype("float32")
    got = _run(K.subtract_row_max, x, (64, 256), "float32")
    np.testing.assert_allclose(got, x - x.max(axis=1, keepdims=True), rtol=1e-6)


@requires_gpu
def test_reduction_over_threadIdx_y_and_x_runs():
    x = np.random.uniform(-1, 1, (16, 1024)).astype("float32")
    mod = K.schedule_row_reduce_xy(K.row_reduce_func(16, 1024), 4, 32)
    np.testing.assert_allclose(_run(mod, x, (16,), "float32"), x.sum(axis=1), rtol=1e-4, atol=1e-5)


@requires_gpu
@pytest.mark.parametrize("scope", ["shared", "local"])
def test_softmax_runs(scope):
    x = np.random.uniform(-4, 4, (64, 256)).astype("float32")
    got = _run(K.schedule_softmax(128, scope), x, (64, 256), "float32")
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(got, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)


# ---- tir.LowerBlockAllreduce (the pipeline's variant) on its own ----

def _apply(name, func):
    from tessera import _core
    from tessera.transform import Pass

    mod = _core.IRModule.from_func(func.with_attr("global_symbol", _core.StringImm("main")), "main")
    return Pass("tir." + name)(mod).lookup("main")


def test_lower_block_allreduce_golden_for_one_warp_segment():
    from tessera.ir import assert_structural_equal
    from tessera.script import tir as T

    @T.prim_func
    def before(A: T.Buffer((64,), "float32")):
        for bx in T.thread_binding(8, thread="blockIdx.x"):
            for tx in T.thread_binding(8, thread="threadIdx.x"):
                red = T.allocate([1], "float32", "local")
                red_1 = T.decl_buffer((1,), "float32", data=red)
                T.evaluate(T.tvm_thread_allreduce(T.uint32(1), A[bx * 8 + tx], T.bool(True), red,
                                                  "max", T.float32(-3.4028234663852886e38), tx))

    @T.prim_func
    def expected(A: T.Buffer((64,), "float32")):
        for bx in T.thread_binding(8, thread="blockIdx.x"):
            for tx in T.thread_binding(8, thread="threadIdx.x"):
                red = T.allocate([1], "float32", "local")
                red_1 = T.decl_buffer((1,), "float32", data=red)
                # 8 threads in all: the mask names lanes 0-7; segments of 8 lanes.
                v = T.allocate([1], "float32", "local")
                v_1 = T.decl_buffer((1,), "float32", data=v)
                v_1[0] = A[bx * 8 + tx]
                v_1[0] = T.max(v_1[0], T.tvm_warp_shuffle_down(T.uint32(255), v_1[0], 4, 8, 32))
                v_1[0] = T.max(v_1[0], T.tvm_warp_shuffle_down(T.uint32(255), v_1[0], 2, 8, 32))
                v_1[0] = T.max(v_1[0], T.tvm_warp_shuffle_down(T.uint32(255), v_1[0], 1, 8, 32))
                v_1[0] = T.tvm_warp_shuffle(T.uint32(255), v_1[0], 0, 8, 32)
                red_1[0] = v_1[0]

    assert_structural_equal(_apply("LowerBlockAllreduce", before),
                            expected.with_attr("global_symbol", ts._core.StringImm("main")))


def test_lower_block_allreduce_under_a_thread_dependent_condition_is_rejected():
    from tessera.script import tir as T

    @T.prim_func
    def func(A: T.Buffer((64,), "float32")):
        for bx in T.thread_binding(8, thread="blockIdx.x"):
            for tx in T.thread_binding(8, thread="threadIdx.x"):
                red = T.allocate([1], "float32", "local")
                red_1 = T.decl_buffer((1,), "float32", data=red)
                if tx < 4:
                    T.evaluate(T.tvm_thread_allreduce(T.uint32(1), A[bx * 8 + tx], T.bool(True),
                                                      red, "sum", T.float32(0), tx))

    with pytest.raises(Exception, match="tvm_thread_allreduce under a condition: every thread of "
                                        "the block must take part"):
        _apply("LowerBlockAllreduce", func)


def test_lower_block_allreduce_rejects_an_unknown_reducer_and_a_non_thread_variable():
    from tessera.script import tir as T

    @T.prim_func
    def xor(A: T.Buffer((64,), "int32")):
        for tx in T.thread_binding(64, thread="threadIdx.x"):
            red = T.allocate([1], "int32", "local")
            red_1 = T.decl_buffer((1,), "int32", data=red)
            T.evaluate(T.tvm_thread_allreduce(T.uint32(1), A[tx], T.bool(True), red, "xor", 0, tx))

    with pytest.raises(Exception, match=r"unknown reducer of tvm_thread_allreduce \(sum, prod, min "
                                        r"or max expected\)"):
        _apply("LowerBlockAllreduce", xor)

    @T.prim_func
    def serial(A: T.Buffer((64,), "int32")):
        for tx in T.thread_binding(64, thread="threadIdx.x"):
            for k in range(4):
                red = T.allocate([1], "int32", "local")
                red_1 = T.decl_buffer((1,), "int32", data=red)
                T.evaluate(T.tvm_thread_allreduce(T.uint32(1), A[tx], T.bool(True), red, "sum", 0, k))

    with pytest.raises(Exception, match="reduces over a variable that is not an enclosing "
                                        "threadIdx loop"):
        _apply("LowerBlockAllreduce", serial)


def test_lower_block_allreduce_reads_the_reducer_of_tvms_form():
    # TVM's form (attr reduce_scope + the result element) lowers as the named form does.
    from tessera.ir import assert_structural_equal
    from tessera.script import tir as T

    @T.prim_func
    def tvm_form(A: T.Buffer((64,), "float32")):
        for bx in T.thread_binding(8, thread="blockIdx.x"):
            for tx in T.thread_binding(8, thread="threadIdx.x"):
                red = T.allocate([1], "float32", "local")
                red_1 = T.decl_buffer((1,), "float32", data=red)
                with T.attr(T.comm_reducer(lambda x, y: T.max(x, y),
                                           [T.float32(-3.4028234663852886e38)]),
                            "reduce_scope", T.reinterpret(T.uint64(0), dtype="handle")):
                    T.evaluate(T.tvm_thread_allreduce(T.uint32(1), A[bx * 8 + tx], T.bool(True),
                                                      red_1[0], tx, dtype="handle"))

    @T.prim_func
    def named_form(A: T.Buffer((64,), "float32")):
        for bx in T.thread_binding(8, thread="blockIdx.x"):
            for tx in T.thread_binding(8, thread="threadIdx.x"):
                red = T.allocate([1], "float32", "local")
                red_1 = T.decl_buffer((1,), "float32", data=red)
                T.evaluate(T.tvm_thread_allreduce(T.uint32(1), A[bx * 8 + tx], T.bool(True), red,
                                                  "max", T.float32(-3.4028234663852886e38), tx))

    assert_structural_equal(_apply("LowerBlockAllreduce", tvm_form),
                            _apply("LowerBlockAllreduce", named_form))


def test_lower_block_allreduce_rejects_an_unknown_comm_reducer():
    from tessera.script import tir as T

    @T.prim_func
    def sub(A: T.Buffer((64,), "float32")):
        for tx in T.thread_binding(64, thread="threadIdx.x"):
            red = T.allocate([1], "float32", "local")
            red_1 = T.decl_buffer((1,), "float32", data=red)
            with T.attr(T.comm_reducer(lambda x, y: x - y, [T.float32(0)]), "reduce_scope",
                        T.reinterpret(T.uint64(0), dtype="handle")):
                T.evaluate(T.tvm_thread_allreduce(T.uint32(1), A[tx], T.bool(True), red_1[0], tx,
                                                  dtype="handle"))

    with pytest.raises(Exception, match=r"unknown reducer of tvm_thread_allreduce \(x \+ y, x \* y, "
                                        r"min or max expected\)"):
        _apply("LowerBlockAllreduce", sub)


@requires_gpu
def test_kernel_written_in_tvms_lowered_form_runs():
    # A row sum written as tir.LowerCrossThreadReduction leaves it (TVM's form), built whole.
    from tessera.script import tir as T

    @T.prim_func(check_well_formed=False)
    def row_sum(A: T.Buffer((16, 64), "float32"), B: T.Buffer((16,), "float32")):
        cross = T.alloc_buffer((1,), "float32", strides=(1,), scope="local")
        for i in T.thread_binding(16, thread="blockIdx.x"):
            for k in T.thread_binding(64, thread="threadIdx.x"):
                with T.block("B_cross_thread"):
                    vi, vk = T.axis.remap("SR", [i, k])
                    T.reads(A[vi, vk])
                    T.writes(cross[0])
                    with T.attr(T.comm_reducer(lambda x, y: x + y, [T.float32(0)]),
                                "reduce_scope", T.reinterpret(T.uint64(0), dtype="handle")):
                        T.evaluate(T.tvm_thread_allreduce(T.uint32(1), A[vi, vk], T.bool(True),
                                                          cross[0], k, dtype="handle"))
                with T.block("B_write_back"):
                    vi = T.axis.spatial(16, i)
                    T.where(k == 0)
                    T.reads(cross[0])
                    T.writes(B[vi])
                    B[vi] = cross[0]

    x = np.random.uniform(-1, 1, (16, 64)).astype("float32")
    np.testing.assert_allclose(_run(row_sum, x, (16,), "float32"), x.sum(axis=1), rtol=1e-5,
                               atol=1e-6)


@requires_gpu
def test_partial_sums_before_the_reduction_under_the_thread_loop_run():
    # rfactor's shape: each thread's partial sums (B_rf), then the reduction over the threads.
    from tessera.script import tir as T

    @T.prim_func
    def rf_sum(A: T.Buffer((8, 16, 4), "float32"), B: T.Buffer((8,), "float32")):
        B_rf = T.alloc_buffer((16, 8), "float32", scope="local")
        for i in T.thread_binding(8, thread="blockIdx.x"):
            for ko in T.thread_binding(4, thread="threadIdx.x"):
                for ki, j in T.grid(4, 4):
                    with T.block("B_rf"):
                        vk = T.axis.spatial(16, ko * 4 + ki)
                        vi, vj = T.axis.remap("SR", [i, j])
                        with T.init():
                            B_rf[vk, vi] = T.float32(0)
                        B_rf[vk, vi] = B_rf[vk, vi] + A[vi, vk, vj]
                for ki in range(4):
                    with T.block("B"):
                        vk = T.axis.reduce(16, ko * 4 + ki)
                        vi = T.axis.spatial(8, i)
                        with T.init():
                            B[vi] = T.float32(0)
                        B[vi] = B[vi] + B_rf[vk, vi]

    x = np.random.uniform(-1, 1, (8, 16, 4)).astype("float32")
    np.testing.assert_allclose(_run(rf_sum, x, (8,), "float32"), x.sum(axis=(1, 2)), rtol=1e-5,
                               atol=1e-5)


@requires_gpu
def test_reader_outside_the_reduced_thread_loop_runs():
    # The reader of the (local) reduced value outside the threadIdx.x loop: one thread writes.
    from tessera.script import tir as T

    @T.prim_func
    def sum_plus_one(A: T.Buffer((16, 64), "float32"), B: T.Buffer((16,), "float32")):
        t = T.alloc_buffer((16,), "float32", scope="local")
        for i in T.thread_binding(16, thread="blockIdx.x"):
            for k in T.thread_binding(64, thread="threadIdx.x"):
                with T.block("sum"):
                    vi, vk = T.axis.remap("SR", [i, k])
                    with T.init():
                        t[vi] = T.float32(0)
                    t[vi] = t[vi] + A[vi, vk]
            with T.block("add"):
                vi = T.axis.spatial(16, i)
                B[vi] = t[vi] + T.float32(1)

    x = np.random.uniform(-1, 1, (16, 64)).astype("float32")
    np.testing.assert_allclose(_run(sum_plus_one, x, (16,), "float32"), x.sum(axis=1) + 1,
                               rtol=1e-5, atol=1e-5)
    src = kernel_source(sum_plus_one)
    assert "if (threadIdx_x == 0) {" in src


# ---- TVM's tir.LowerThreadAllreduce in place of the pipeline's variant ----

def _run_with_tvm_allreduce(mod, x, out_shape):
    from tessera.tir import transform as tt

    with ts.transform.PassContext(config={"tir.add_lower_pass": [(3, tt.LowerThreadAllreduce())]},
                                  disabled_pass=["tir.LowerBlockAllreduce"]):
        lib = ts.build(mod, target="cuda")
    out = ts.nd.empty(out_shape, "float32", ts.cuda(0))
    lib(ts.nd.array(x, device=ts.cuda(0)), out)
    return out.numpy()


@requires_gpu
@pytest.mark.parametrize("kind,cols,threads", [
    ("sum", 512, 128),   # 4 warps: two warp rounds through shared memory
    ("max", 72, 24),     # one partial warp: the first shuffle's fold is guarded
    ("min", 1024, 1024),  # 32 warps
    ("max", 64, 16),     # a sub-warp group
    ("sum", 300, 100)])  # 100 threads: the shared-memory tree with warp steps
def test_tvm_lower_thread_allreduce_output_runs(kind, cols, threads):
    x = np.random.uniform(-1, 1, (16, cols)).astype("float32")
    got = _run_with_tvm_allreduce(K.schedule_row_reduce(K.row_reduce_func(16, cols, kind), threads),
                                  x, (16,))
    np.testing.assert_allclose(got, REDUCE[kind](x, axis=1), rtol=1e-4, atol=1e-5)


@requires_gpu
@pytest.mark.parametrize("rows_per_block,threads", [(4, 32), (3, 8), (2, 64)])
def test_tvm_lower_thread_allreduce_groups_run(rows_per_block, threads):
    x = np.random.uniform(-1, 1, (64, 256)).astype("float32")
    mod = K.schedule_row_reduce_2d(K.row_reduce_func(64, 256), rows_per_block, threads)
    np.testing.assert_allclose(_run_with_tvm_allreduce(mod, x, (64,)), x.sum(axis=1), rtol=1e-4,
                               atol=1e-5)


@requires_gpu
def test_argmax_across_threads_runs():
    # A two-value reduction: tir.LowerCrossThreadReduction makes one tvm_thread_allreduce of the
    # pair, which the pipeline lowers with TVM's tir.LowerThreadAllreduce.
    from tessera.script import tir as T

    @T.prim_func
    def argmax(V: T.Buffer((8, 64), "float32"), I: T.Buffer((8,), "int32")):
        M = T.alloc_buffer((8,), "float32")
        for i in T.thread_binding(8, thread="blockIdx.x"):
            for k_0 in range(2):
                for k_1 in T.thread_binding(32, thread="threadIdx.x"):
                    with T.block("am"):
                        vi = T.axis.spatial(8, i)
                        vk = T.axis.reduce(64, k_0 * 32 + k_1)
                        T.reads(V[vi, vk])
                        T.writes(I[vi], M[vi])
                        with T.init():
                            I[vi] = -1
                            M[vi] = T.float32(-3.4028234663852886e38)
                        new_i: T.int32 = T.Select(M[vi] >= V[vi, vk], I[vi], vk)
                        new_m: T.float32 = T.Select(M[vi] >= V[vi, vk], M[vi], V[vi, vk])
                        I[vi] = new_i
                        M[vi] = new_m

    x = np.random.uniform(-1, 1, (8, 64)).astype("float32")
    lib = ts.build(argmax, target="cuda")
    out = ts.nd.empty((8,), "int32", ts.cuda(0))
    lib(ts.nd.array(x, device=ts.cuda(0)), out)
    np.testing.assert_array_equal(out.numpy(), x.argmax(axis=1))
