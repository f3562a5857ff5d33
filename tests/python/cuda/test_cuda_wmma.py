"""Tensor-core (wmma) intrinsics: a 32x32x32 float16 matmul whose fill, fragment loads, mma and
store are tensorized with tessera.tir.tensor_intrin.cuda; the CUDA source has nvcuda::wmma
fragments and calls (compile-only, NVRTC), and matches numpy on a GPU (or the emulator)."""

import numpy as np

import tessera as ts
from tessera import tir
from tessera.script import tir as T
from tessera.tir.schedule.testing import verify_trace_roundtrip
from tessera.tir.tensor_intrin import cuda as wmma

from cuda_support import requires_cuda_build, requires_gpu


@T.prim_func
def mm(A: T.Buffer((32, 32), "float16"), B: T.Buffer((32, 32), "float16"), C: T.Buffer((32, 32), "float32")):
    A_s = T.alloc_buffer((32, 32), "float16", scope="shared")
    B_s = T.alloc_buffer((32, 32), "float16", scope="shared")
    A_f = T.alloc_buffer((32, 32), "float16", scope="wmma.matrix_a")
    B_f = T.alloc_buffer((32, 32), "float16", scope="wmma.matrix_b")
    C_f = T.alloc_buffer((32, 32), "float32", scope="wmma.accumulator")
    for by in T.thread_binding(2, thread="blockIdx.y"):
        for bx in T.thread_binding(2, thread="blockIdx.x"):
            for tx in T.thread_binding(32, thread="threadIdx.x"):
                for i, j in T.grid(16, 16):
                    with T.block("init"):
                        vi = T.axis.spatial(32, by * 16 + i)
                        vj = T.axis.spatial(32, bx * 16 + j)
                        C_f[vi, vj] = T.float32(0)
                for ko in range(2):
                    for e in range(8):
                        with T.block("A_s"):
                            vi = T.axis.spatial(32, by * 16 + (e * 32 + tx) // 16)
                            vk = T.axis.spatial(32, ko * 16 + (e * 32 + tx) % 16)
                            A_s[vi, vk] = A[vi, vk]
                    for e in range(8):
                        with T.block("B_s"):
                            vk = T.axis.spatial(32, ko * 16 + (e * 32 + tx) // 16)
                            vj = T.axis.spatial(32, bx * 16 + (e * 32 + tx) % 16)
                            B_s[vk, vj] = B[vk, vj]
                    for i, k in T.grid(16, 16):
                        with T.block("A_f"):
                            vi = T.axis.spatial(32, by * 16 + i)
                            vk = T.axis.spatial(32, ko * 16 + k)
                            A_f[vi, vk] = A_s[vi, vk]
                    for k, j in T.grid(16, 16):
                        with T.block("B_f"):
                            vk = T.axis.spatial(32, ko * 16 + k)
                            vj = T.axis.spatial(32, bx * 16 + j)
                            B_f[vk, vj] = B_s[vk, vj]
                    for i, j, k in T.grid(16, 16, 16):
                        with T.block("C"):
                            vi = T.axis.spatial(32, by * 16 + i)
                            vj = T.axis.spatial(32, bx * 16 + j)
                            vk = T.axis.reduce(32, ko * 16 + k)
                            C_f[vi, vj] = C_f[vi, vj] + T.Cast("float32", A_f[vi, vk]) * T.Cast("float32", B_f[vk, vj])
                for i, j in T.grid(16, 16):
                    with T.block("store"):
                        vi = T.axis.spatial(32, by * 16 + i)
                        vj = T.axis.spatial(32, bx * 16 + j)
                        C[vi, vj] = C_f[vi, vj]


def tensorized():
    sch = tir.Schedule(mm)
    for name, intrin in [("init", wmma.WMMA_FILL_16x16x16_F32_INTRIN),
                         ("A_f", wmma.WMMA_LOAD_16x16x16_F16_A_INTRIN),
                         ("B_f", wmma.WMMA_LOAD_16x16x16_F16_B_INTRIN),
                         ("C", wmma.WMMA_SYNC_16x16x16_f16f16f32_INTRIN),
                         ("store", wmma.WMMA_STORE_16x16x16_F32_GLOBAL_INTRIN)]:
        loops = sch.get_loops(name)
        sch.tensorize(loops[-3] if name == "C" else loops[-2], intrin)
    return sch


def test_wmma_tensorize():
    sch = tensorized()
    script = sch.mod.script()
    for call in ("T.tvm_fill_fragment", "T.tvm_load_matrix_sync", "T.tvm_mma_sync", "T.tvm_store_matrix_sync"):
        assert call in script
    mma = sch.get(sch.get_block("C_o"))
    assert [m.source.buffer.name for m in mma.match_buffers] == ["A_f", "B_f", "C_f"]
    assert [m.buffer.scope() for m in mma.match_buffers] == ["wmma.matrix_a", "wmma.matrix_b", "wmma.accumulator"]
    verify_trace_roundtrip(sch, mm)


@requires_cuda_build
def test_wmma_source():
    lib = ts.build(tensorized().mod, target="cuda")
    src = lib.imported_modules[0].get_source()
    assert "#include <mma.h>" in src
    # Each thread holds the fragments of its block's tile only (one each: registers).
    assert "nvcuda::wmma::fragment<nvcuda::wmma::matrix_a, 16, 16, 16, half, nvcuda::wmma::row_major> A_f[1];" in src
    assert "nvcuda::wmma::fragment<nvcuda::wmma::accumulator, 16, 16, 16, float> C_f[1];" in src
    assert "nvcuda::wmma::fill_fragment(C_f[0], 0.0f);" in src
    assert "nvcuda::wmma::mma_sync(C_f[0], A_f[0], B_f[0], C_f[0]);" in src
    # wmma loads need 256-bit aligned shared tiles.
    assert "__shared__ __align__(32) half A_s[256];" in src
    assert "nvcuda::wmma::store_matrix_sync((C + ((blockIdx_y * 512) + (blockIdx_x * 16)))" in src
    # The shared tiles are written by all threads before the warp loads its fragments.
    body = src[src.index("for (int32_t ko"):]
    assert body.index("__syncthreads();", body.index("B_s[")) < body.index("load_matrix_sync")


@requires_gpu
def test_wmma_matmul_runs():
    lib = ts.build(tensorized().mod, target="cuda")
    rng = np.random.default_rng(0)
    a = (rng.random((32, 32)) - 0.5).astype("float16")
    b = (rng.random((32, 32)) - 0.5).astype("float16")
    dev = ts.cuda(0)
    c = ts.nd.array(np.zeros((32, 32), "float32"), dev)
    lib(ts.nd.array(a, dev), ts.nd.array(b, dev), c)
    np.testing.assert_allclose(c.numpy(), a.astype("float32") @ b.astype("float32"), rtol=1e-3, atol=1e-3)
