"""fp32 and fp16 matmul on the GPU: tessera's register-tiled shared-memory GEMM (gemm_kernels.py:
128 x 128 tiles of C per block, 8 x 8 per thread, vectorized tile copies; fp16 inputs accumulate in
fp32) beside cuBLAS (through torch or cupy), measured in the same run. Prints that it skipped
when there is no GPU."""

import os
import sys

import numpy as np

import tessera as ts
from tessera import _core

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "python", "cuda"))
import gemm_kernels  # noqa: E402

SIZES = (1024, 2048, 4096)
# The schedule of each input type: the tiles of C per block and thread, the k step, the width
# of the vectorized copies into shared memory (float4; 8 halves = 16 bytes).
CONFIGS = {
    "float32": dict(block_m=128, block_n=128, tile_m=8, tile_n=8, k_tile=16, vec=4),
    "float16": dict(block_m=128, block_n=128, tile_m=8, tile_n=8, k_tile=32, vec=8),
}


def cublas_timer():
    """A function (n, dtype) -> seconds per matmul through cuBLAS, and the library's name."""
    try:
        import torch

        if torch.cuda.is_available():
            def run(n, dtype):
                a = torch.rand(n, n, device="cuda", dtype=getattr(torch, dtype))
                b = torch.rand(n, n, device="cuda", dtype=getattr(torch, dtype))
                for _ in range(3):
                    a @ b
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                for _ in range(10):
                    a @ b
                end.record()
                torch.cuda.synchronize()
                return start.elapsed_time(end) / 10 / 1e3

            return run, "torch (cuBLAS)"
    except ImportError:
        pass
    try:
        import cupy

        def run(n, dtype):
            a = cupy.random.rand(n, n).astype(dtype)
            b = cupy.random.rand(n, n).astype(dtype)
            for _ in range(3):
                a @ b
            start, end = cupy.cuda.Event(), cupy.cuda.Event()
            start.record()
            for _ in range(10):
                a @ b
            end.record()
            end.synchronize()
            return cupy.cuda.get_elapsed_time(start, end) / 10 / 1e3

        return run, "cupy (cuBLAS)"
    except ImportError:
        return None, None


def main():
    if _core.cuda_emulator_enabled():
        print("bench_cuda_matmul: skipped, TESSERA_CUDA_EMULATOR=1 runs kernels on the CPU emulator, "
              "whose timings say nothing about a GPU")
        return
    ok, why = _core.cuda_driver_status()
    if not ok:
        print(f"bench_cuda_matmul: skipped, no CUDA GPU/driver available ({why})")
        return
    nvrtc_ok, why = _core.nvrtc_status()
    if not nvrtc_ok:
        print(f"bench_cuda_matmul: skipped, NVRTC not available ({why})")
        return
    cublas, cublas_name = cublas_timer()
    dev = ts.cuda(0)
    print(f"{'n':>6} {'dtype':>8} {'tessera TFLOP/s':>16} {(cublas_name or 'cuBLAS') + ' TFLOP/s':>24}")
    labels, ours_all, theirs_all = [], [], []
    for dtype in ("float32", "float16"):
        for n in SIZES:
            mod = gemm_kernels.schedule_gemm(n, n, n, dtype=dtype, acc="float32", **CONFIGS[dtype])
            lib = ts.build(mod, target="cuda")
            a_np = np.random.rand(n, n).astype(dtype)
            b_np = np.random.rand(n, n).astype(dtype)
            a = ts.nd.array(a_np, device=dev)
            b = ts.nd.array(b_np, device=dev)
            c = ts.nd.empty((n, n), "float32", dev)
            if n == SIZES[0]:  # check the kernel before timing it
                lib(a, b, c)
                expect = a_np.astype("float32") @ b_np.astype("float32")
                np.testing.assert_allclose(c.numpy(), expect, rtol=1e-3)
            seconds = lib.time_evaluator(lib.entry_name, dev, number=5, repeat=3)(a, b, c).median
            flops = 2.0 * n**3
            ours = flops / seconds / 1e12
            theirs = f"{flops / cublas(n, dtype) / 1e12:24.2f}" if cublas else f"{'n/a (no torch/cupy)':>24}"
            print(f"{n:>6} {dtype:>8} {ours:16.2f} {theirs}")
            labels.append(f"{dtype} {n}")
            ours_all.append(ours)
            theirs_all.append(flops / cublas(n, dtype) / 1e12 if cublas else None)
    from bench_plot import save_bars

    save_bars("cuda_matmul", "CUDA matmul", labels,
              {"tessera": ours_all, cublas_name or "cuBLAS (not available)": theirs_all},
              "TFLOP/s, higher is better")


if __name__ == "__main__":
    main()
