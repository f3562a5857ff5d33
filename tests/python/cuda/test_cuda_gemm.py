"""The register-tiled shared-memory GEMM of gemm_kernels.py: the CUDA source has a register
accumulator, shared tiles fetched with vector words and two barriers per k step (compile-only,
NVRTC); it matches numpy on a GPU (or the emulator)."""

import re

import numpy as np
import pytest

import tessera as ts

import gemm_kernels
from cuda_support import requires_gpu, requires_nvrtc


def kernel_source(lib):
    src = lib.imported_modules[0].get_source()
    return src[src.index('extern "C" __global__'):]


def k_loop_lines(src):
    """The lines of the k loop's body (up to its closing brace)."""
    lines, depth = [], 0
    for ln in src[src.index("for (int32_t kk_0"):].splitlines():
        depth += ln.count("{") - ln.count("}")
        lines.append(ln.strip())
        if depth == 0:
            return lines


@requires_nvrtc
def test_fp32_gemm_source():
    lib = ts.build(gemm_kernels.schedule_gemm(128, 128, 64), target="cuda")
    src = kernel_source(lib)
    # 16 x 16 threads, each with a 4 x 4 accumulator in registers.
    assert "__launch_bounds__(256)" in src
    assert re.search(r"^  (__align__\(16\) )?float C_local\[16\];$", src, re.M)
    assert "C_local[15] = 0.0f;" in src
    # 64 x 16 tiles of A and 16 x 64 of B in shared memory, one float4 per thread and tile.
    assert "__shared__ __align__(16) float A_shared[1024];" in src
    assert "__shared__ __align__(16) float B_shared[1024];" in src
    lines = k_loop_lines(src)
    syncs = [n for n, ln in enumerate(lines) if ln == "__syncthreads();"]
    a_copy = [n for n, ln in enumerate(lines) if ln.startswith("*(float4*)(A_shared + ")]
    b_copy = [n for n, ln in enumerate(lines) if ln.startswith("*(float4*)(B_shared + ")]
    compute = [n for n, ln in enumerate(lines) if ln.startswith("C_local[")]
    assert "= *(const float4*)(A + " in lines[a_copy[0]]
    assert "= *(const float4*)(B + " in lines[b_copy[0]]
    # Per k step: a barrier before the tiles are overwritten, the copies, a barrier, then the
    # 16 x 4 x 4 unrolled multiply-accumulates out of shared memory.
    assert len(syncs) == 2 and len(a_copy) == 1 and len(b_copy) == 1
    assert syncs[0] < a_copy[0] < b_copy[0] < syncs[1] < compute[0]
    assert len(compute) == 16 * 4 * 4
    assert src.count("__syncthreads()") == 2
    # The accumulator goes back to C as float4 words.
    assert src.count("*(float4*)(C + ") == 4
    ptx = lib.imported_modules[0].get_source("ptx")
    assert ".local" not in ptx  # the accumulator stays in registers


@requires_nvrtc
def test_fp16_gemm_source_accumulates_in_fp32():
    lib = ts.build(gemm_kernels.schedule_gemm(128, 128, 64, dtype="float16", k_tile=32, vec=8),
                   target="cuda")
    src = kernel_source(lib)
    assert "half* __restrict__ A" in src and "float* __restrict__ C" in src
    assert re.search(r"float C_local\[16\];", src)
    assert "__shared__ __align__(16) half A_shared[2048];" in src
    assert "__shared__ __align__(16) half B_shared[2048];" in src
    lines = k_loop_lines(src)
    assert sum(ln.startswith("*(uint4*)(A_shared + ") for ln in lines) == 1
    assert sum(ln.startswith("*(uint4*)(B_shared + ") for ln in lines) == 1
    assert sum(ln == "__syncthreads();" for ln in lines) == 2
    assert "((float)A_shared[" in src


@pytest.mark.parametrize("kwargs, message", [
    (dict(n=100, m=64, k=32), "needs n % 64, m % 64 and k % 16 to be 0 (got n=100"),
    (dict(n=64, m=64, k=32, tile_m=3), "the register tile 3x4 must divide the block tile 64x64"),
    (dict(n=64, m=64, k=32, k_tile=8, vec=8),
     "the 64x8 shared tile is not a whole number of 256 threads x 8 elements"),
])
def test_schedule_rejects_shapes_it_does_not_tile(kwargs, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        gemm_kernels.schedule_gemm(**kwargs)


@requires_gpu
@pytest.mark.parametrize("dtype, n, m, k, opts", [
    ("float32", 64, 64, 16, dict(vec=1)),
    ("float32", 128, 64, 48, dict(vec=4)),
    ("float32", 64, 192, 32, dict(vec=2)),
    ("float16", 64, 128, 64, dict(k_tile=32, vec=8)),
    ("float16", 128, 64, 32, dict(vec=4)),
])
def test_gemm_matches_numpy(dtype, n, m, k, opts):
    dev = ts.cuda(0)
    lib = ts.build(gemm_kernels.schedule_gemm(n, m, k, dtype=dtype, acc="float32", **opts),
                   target="cuda")
    a = np.random.uniform(-1, 1, (n, k)).astype(dtype)
    b = np.random.uniform(-1, 1, (k, m)).astype(dtype)
    c = ts.nd.empty((n, m), "float32", dev)
    lib(ts.nd.array(a, device=dev), ts.nd.array(b, device=dev), c)
    expect = a.astype("float32") @ b.astype("float32")
    np.testing.assert_allclose(c.numpy(), expect, rtol=1e-4, atol=1e-4)
