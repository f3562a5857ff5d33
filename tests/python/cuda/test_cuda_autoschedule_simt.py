"""The register-tiled SIMT matmul of the automatic schedule for "cuda" (float32): 16 x 16 threads
per block, each accumulating an 8 x 8 tile of C in registers, the A and B tiles of each 16-deep
reduction step staged in shared memory with 16-byte copies, double-buffered (cp.async). Shapes
that are not multiples of 128 x 128 x 16 keep the one-element-per-thread rule."""

import os
import re
import shutil
import subprocess

import numpy as np
import pytest

import tessera as ts
from tessera import te

from cuda_support import EMULATED, GPU_OK, requires_nvrtc

SLOW = bool(os.environ.get("TESSERA_SLOW_CUDA_TESTS"))
# On the emulator the unrolled kernel takes ~30 s to compile and run: only with
# TESSERA_SLOW_CUDA_TESTS=1 (on a GPU it always runs).
requires_runtime = pytest.mark.skipif(
    (EMULATED and not SLOW) or not GPU_OK,
    reason="needs a CUDA GPU, or the emulator (TESSERA_CUDA_EMULATOR=1) with TESSERA_SLOW_CUDA_TESTS=1")


def matmul(m, n, k):
    a = te.placeholder((m, k), "float32", name="A")
    b = te.placeholder((k, n), "float32", name="B")
    r = te.reduce_axis((0, k), name="k")
    c = te.compute((m, n), lambda i, j: te.sum(a[i, r] * b[r, j], axis=r), name="C")
    return te.create_prim_func([a, b, c])


def trace_of(func, facts=None):
    return "\n".join(ts.autoschedule(func, target="cuda", facts=facts).trace.as_python())


def test_register_tiles_and_fallback():
    trace = trace_of(matmul(256, 128, 64))
    assert "factors=[None, 16, 8]" in trace and trace.count('storage_scope="shared"') == 2
    assert 'storage_scope="local"' in trace and "software_pipeline_async_stages" in trace
    assert "software_pipeline" not in trace_of(matmul(256, 128, 64), {"pipeline_stages": 1})
    # 64 x 64: one element per thread, as before.
    small = trace_of(matmul(64, 64, 64))
    assert "factors=[None, 16, 8]" not in small and 'storage_scope="local"' not in small


@requires_runtime
def test_register_tiled_matmul_matches_numpy():
    # 128 x 128 x 32: one block, two reduction steps (the pipeline's prologue and epilogue).
    rng = np.random.default_rng(3)
    a = rng.integers(-4, 4, (128, 32)).astype("float32")
    b = rng.integers(-4, 4, (32, 128)).astype("float32")
    lib = ts.build(matmul(128, 128, 32), target="cuda")
    dev = ts.cuda(0)
    c = ts.nd.empty((128, 128), "float32", dev)
    lib(ts.nd.array(a, device=dev), ts.nd.array(b, device=dev), c)
    np.testing.assert_array_equal(c.numpy(), a @ b)


PTXAS = shutil.which("ptxas")


@requires_nvrtc
@pytest.mark.skipif(not SLOW, reason="NVRTC + ptxas of the unrolled kernel: ~20 s; set TESSERA_SLOW_CUDA_TESTS=1")
@pytest.mark.skipif(PTXAS is None, reason="ptxas is not installed: registers and spills not checked")
def test_ptxas_no_spills(tmp_path):
    # sm_80 gives the same (128 registers, no spill) and is not run here to save CI time.
    lib = ts.build(matmul(1024, 1024, 1024), target="cuda -arch=sm_90")
    assert lib.get_source("cuda").count("__tessera_cp_async<16>(") >= 4
    path = tmp_path / "simt.ptx"
    path.write_text(lib.get_source("ptx"))
    out = subprocess.run([PTXAS, "-arch=sm_90", "-v", str(path), "-o", os.devnull],
                         capture_output=True, text=True, check=True).stderr
    assert "0 bytes spill stores, 0 bytes spill loads" in out, out
    assert int(re.search(r"Used (\d+) registers", out).group(1)) <= 128
    assert "32768 bytes smem" in out
