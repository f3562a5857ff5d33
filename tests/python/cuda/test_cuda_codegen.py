"""CodeGenCUDA + NVRTC, compile only: the kernels of ts.build(..., target="cuda") compile to PTX
and their source has the expected shape. No GPU needed."""

import re

import pytest

import tessera as ts
from tessera import _core

import cuda_kernels as kernels
from cuda_support import GPU_OK, requires_nvrtc

pytestmark = requires_nvrtc


def cuda_source(lib):
    [dev] = lib.imported_modules
    return dev.get_source()


def test_vector_add_kernel_reads_block_and_thread_indices():
    lib = ts.build(kernels.bind_1d(kernels.vector_add), target="cuda")
    src = cuda_source(lib)
    assert 'extern "C" __global__ __launch_bounds__(128) void vector_add_kernel(' in src
    assert "(int32_t)blockIdx.x" in src and "(int32_t)threadIdx.x" in src
    assert "float* __restrict__ A" in src
    ptx = lib.imported_modules[0].get_source("ptx")
    assert ".visible .entry vector_add_kernel(" in ptx
    # The arch of GPU 0 where there is one (the emulator's too); else sm_80.
    arch = f"sm_{_core.cuda_compute_capability(0)}" if GPU_OK else "sm_80"
    assert f".target {arch}" in ptx
    # The host launches the kernel with 8 blocks of 128 threads.
    assert 'tessera_cuda_launch("vector_add_kernel", 8LL, 1LL, 1LL, 128LL, 1LL, 1LL, 0LL' in lib.get_source()
    assert lib.type_key == "cuda" and lib.entry_name == "vector_add"


def test_arch_from_the_target_string():
    lib = ts.build(kernels.bind_1d(kernels.vector_add), target="cuda -arch=sm_90")
    assert ".target sm_90" in lib.imported_modules[0].get_source("ptx")


def test_tiled_matmul_uses_shared_memory_with_barriers_around_the_compute():
    lib = ts.build(kernels.schedule_tiled_matmul(128), target="cuda")
    src = cuda_source(lib)
    assert re.search(r"__shared__ float A_shared\[256\];", src)
    assert re.search(r"__shared__ float B_shared\[256\];", src)
    assert "__launch_bounds__(256)" in src
    # In the k loop: a barrier before the tiles are overwritten (the previous step may still
    # read them), the two copies, a barrier, then the multiply-accumulate.
    body = src[src.index("for (int32_t k_0"):]
    lines = [ln.strip() for ln in body.splitlines()]
    syncs = [n for n, ln in enumerate(lines) if ln == "__syncthreads();"]
    assert len(syncs) == 2
    a_store = next(n for n, ln in enumerate(lines) if ln.startswith("A_shared["))
    b_store = next(n for n, ln in enumerate(lines) if ln.startswith("B_shared["))
    compute = next(n for n, ln in enumerate(lines) if "A_shared[" in ln and ln.startswith("C["))
    assert syncs[0] < a_store < b_store < syncs[1] < compute
    assert src.count("__syncthreads()") == 2
    assert ".shared" in lib.imported_modules[0].get_source("ptx")


def test_shared_memory_tree_reduction_has_barriers_between_steps():
    src = cuda_source(ts.build(kernels.block_sum, target="cuda"))
    assert "__shared__ float" in src
    steps = src[src.index("for (int32_t s"):]
    # A barrier at the top of each step, and one before thread 0 reads the result.
    assert steps.splitlines()[1].strip() == "__syncthreads();"
    assert src.count("__syncthreads();") == 3
    assert "if (threadIdx_x < 1) {" in src


def test_symbolic_sizes_give_a_computed_grid_and_a_guard():
    lib = ts.build(kernels.bind_1d(kernels.scale_dynamic, "B", 64), target="cuda")
    src = cuda_source(lib)
    assert "(int32_t n, float* __restrict__ B, float* __restrict__ A)" in src
    assert "if (((blockIdx_x * 64) + threadIdx_x) < n) {" in src
    # The grid is computed in int64 (the simplifier distributes the widening cast over the sum).
    assert 'tessera_cuda_launch("scale_dynamic_kernel", __floordiv((((int64_t)n) + 63LL), 64LL), 1LL' in lib.get_source()


def test_launch_thread_regions_become_a_kernel():
    lib = ts.build(kernels.launch_threads, target="cuda")
    src = cuda_source(lib)
    assert "__launch_bounds__(64) void launch_threads_kernel(" in src
    assert "int32_t bx = (int32_t)blockIdx.x;" in src and "int32_t tx = (int32_t)threadIdx.x;" in src
    assert 'tessera_cuda_launch("launch_threads_kernel", 4LL, 1LL, 1LL, 64LL' in lib.get_source()


def test_reduction_and_softmax_compile():
    lib = ts.build(kernels.schedule_row_sum(), target="cuda")
    assert "B[" in cuda_source(lib)
    lib = ts.build(kernels.schedule_softmax(), target="cuda")
    src = cuda_source(lib)
    assert "expf(" in src
    assert "fmaxf(" in src
    assert "__shared__" not in src  # the row's intermediates are registers
    assert "__syncthreads" not in src


def test_fp16_types_and_half_intrinsics():
    lib = ts.build(kernels.bind_1d(kernels.vector_add_fp16), target="cuda")
    src = cuda_source(lib)
    assert "#include <cuda_fp16.h>" in src
    assert "half* __restrict__ A" in src
    lib = ts.build(kernels.bind_1d(kernels.math_fp16, "B", 64), target="cuda")
    src = cuda_source(lib)
    assert "hexp(" in src and "hsqrt(" in src
    assert "tanhf(((float)" in src  # no half tanh: computed in float


def test_fp32_math_intrinsics_map_to_cuda():
    lib = ts.build(kernels.bind_1d(kernels.math_fp32, "B", 64), target="cuda")
    src = cuda_source(lib)
    for fn in ("expf(", "sqrtf(", "tanhf(", "rsqrtf(", "logf("):
        assert fn in src


def test_bfloat16_compiles():
    func = kernels.matmul_func(64, "bfloat16", "float32")
    sch = ts.tir.Schedule(func)
    i, j, _ = sch.get_loops(sch.get_block("C"))
    sch.bind(i, "blockIdx.x")
    sch.bind(j, "threadIdx.x")
    src = cuda_source(ts.build(sch.mod, target="cuda"))
    assert "#include <cuda_bf16.h>" in src and "nv_bfloat16* __restrict__ A" in src


def test_ptx_is_cached():
    mod = kernels.bind_1d(kernels.vector_add, threads=256)
    ts.build(mod, target="cuda")
    before = _core.nvrtc_invocation_count()
    ts.build(mod, target="cuda")
    assert _core.nvrtc_invocation_count() == before


def test_nvrtc_compile_only_api_reports_errors():
    ptx = _core.nvrtc_compile('extern "C" __global__ void k(float* a) { a[threadIdx.x] = 1.0f; }',
                              "sm_80", ts.driver._cache_dir())
    assert ".entry k(" in ptx
    with pytest.raises(Exception, match="NVRTC compilation failed"):
        _core.nvrtc_compile("__global__ void k() { undefined_thing(); }", "sm_80", ts.driver._cache_dir())


def test_lower_stops_after_split_with_a_host_function_and_a_kernel():
    mod = ts.lower(kernels.bind_1d(kernels.vector_add), target="cuda", stage="split")
    names = sorted(gv.name_hint for gv, _ in mod.functions)
    assert names == ["main", "vector_add_kernel"]
