""""shared.dyn" allocations live in the kernel's dynamic shared memory (`extern __shared__`),
packed at 16-byte aligned offsets; tir.LowerKernelLaunchCalls passes its size at launch,
symbolic when the sizes are. Compile-only tests need NVRTC; runtime tests a GPU (or emulator)."""

import numpy as np
import pytest

import tessera as ts
from tessera.script import tir as T

import gemm_kernels
from cuda_support import requires_gpu, requires_nvrtc


@T.prim_func
def reverse_dyn(a: T.handle, b: T.handle):
    # Three dynamic shared buffers, two of them sized by n: B[i] = A[n - 1 - i] + 2 A[i] + 1.
    n = T.int32()
    A = T.match_buffer(a, (n,), "float32")
    B = T.match_buffer(b, (n,), "float32")
    for bx in T.thread_binding(1, thread="blockIdx.x"):
        p = T.allocate([n], "float32", "shared.dyn")
        S = T.decl_buffer((n,), "float32", data=p, scope="shared.dyn")
        q = T.allocate([3], "int8", "shared.dyn")
        Q = T.decl_buffer((3,), "int8", data=q, scope="shared.dyn")
        r = T.allocate([n], "float32", "shared.dyn")
        R = T.decl_buffer((n,), "float32", data=r, scope="shared.dyn")
        for tx in T.thread_binding(n, thread="threadIdx.x"):
            S[tx] = A[tx]
            R[tx] = A[tx] * T.float32(2)
            if tx < 3:
                Q[tx] = T.int8(1)
        for tx in T.thread_binding(n, thread="threadIdx.x"):
            B[tx] = S[n - 1 - tx] + R[tx] + T.cast(Q[tx % 3], "float32")


def sources(lib):
    src = lib.imported_modules[0].get_source()
    launch = [ln.strip() for ln in lib.get_source().splitlines() if "tessera_cuda_launch(\"" in ln]
    return src[src.index('extern "C" __global__'):], launch


@requires_nvrtc
def test_symbolic_sizes_are_packed_and_passed_at_launch():
    lib = ts.build(reverse_dyn, target="cuda")
    src, [launch] = sources(lib)
    assert "TESSERA_DYNAMIC_SHARED(__tsr_dyn_shmem);" in src
    assert "float* p = (float*)__tsr_dyn_shmem;" in src
    # q starts at 4 n rounded up to 16 bytes, r 16 bytes after it.
    pad = "(__floordiv(((((int64_t)n) * 4LL) + 15LL), 16LL) * 16LL)"
    assert f"int8_t* q = (int8_t*)(__tsr_dyn_shmem + {pad});" in src
    assert f"float* r = (float*)(__tsr_dyn_shmem + ({pad} + 16LL));" in src
    assert "__shared__ float" not in src
    # One barrier between the writes and the reads of the other threads.
    assert src.count("__syncthreads();") == 1
    # The launch asks for the whole block: 2 x (4 n rounded up) + 16 bytes.
    assert launch.endswith(
        "((int64_t)n), 1LL, 1LL, ((__floordiv(((((int64_t)n) * 4LL) + 15LL), 16LL) * 32LL) + "
        "16LL), (void*[]){(void*)&n, (void*)&A, (void*)&B}, 3) != 0) return -1;")
    ptx = lib.imported_modules[0].get_source("ptx")
    assert ".extern .shared .align 128 .b8 __tsr_dyn_shmem[]" in ptx  # (128-byte aligned: wmma fragments need 32)


@requires_nvrtc
def test_gemm_tiles_in_dynamic_shared_memory():
    lib = ts.build(gemm_kernels.schedule_gemm(128, 128, 64, shared_scope="shared.dyn"),
                   target="cuda")
    src, [launch] = sources(lib)
    assert "float* A_shared_dyn = (float*)__tsr_dyn_shmem;" in src
    assert "float* B_shared_dyn = (float*)(__tsr_dyn_shmem + 4096LL);" in src
    assert "*(float4*)(A_shared_dyn + " in src  # vector words into dynamic shared memory too
    assert src.count("__syncthreads();") == 2
    assert ", 16LL, 16LL, 1LL, 8192LL, (void*[])" in launch


@requires_nvrtc
def test_static_shared_launch_asks_for_no_dynamic_memory():
    lib = ts.build(gemm_kernels.schedule_gemm(64, 64, 16), target="cuda")
    src, [launch] = sources(lib)
    assert "TESSERA_DYNAMIC_SHARED" not in src
    assert ", 16LL, 16LL, 1LL, 0LL, (void*[])" in launch


@requires_gpu
@pytest.mark.parametrize("n", [5, 64, 200])
def test_reverse_dyn_runs(n):
    lib = ts.build(reverse_dyn, target="cuda")
    a = np.random.rand(n).astype("float32")
    b = ts.nd.empty((n,), "float32", ts.cuda(0))
    lib(ts.nd.array(a, device=ts.cuda(0)), b)
    np.testing.assert_allclose(b.numpy(), a[::-1] + 2 * a + 1, rtol=1e-6)


@requires_gpu
def test_gemm_dynamic_shared_runs():
    dev = ts.cuda(0)
    n, m, k = 64, 128, 32
    lib = ts.build(gemm_kernels.schedule_gemm(n, m, k, shared_scope="shared.dyn"), target="cuda")
    a = np.random.rand(n, k).astype("float32")
    b = np.random.rand(k, m).astype("float32")
    c = ts.nd.empty((n, m), "float32", dev)
    lib(ts.nd.array(a, device=dev), ts.nd.array(b, device=dev), c)
    np.testing.assert_allclose(c.numpy(), a @ b, rtol=1e-4)
