"""pad_einsum: an Einsum block's iteration space padded to multiples of given factors."""

import numpy as np
import pytest

import tessera
from tessera.script import tir as T


@T.prim_func
def matmul(a: T.handle, b: T.handle, c: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (128, 128), "float32")
    B = T.match_buffer(b, (n, 128), "float32")
    C = T.match_buffer(c, (128, n), "float32")
    for i0, i1, i2 in T.grid(128, n, 128):
        with T.block("C"):
            i, j, k = T.axis.remap("SSR", [i0, i1, i2])
            with T.init():
                C[i, j] = T.float32(0)
            C[i, j] = C[i, j] + A[i, k] * B[j, k]


@T.prim_func
def static_matmul(A: T.Buffer((30, 16), "float32"), B: T.Buffer((20, 16), "float32"),
                  C: T.Buffer((30, 20), "float32")):
    for i0, i1, i2 in T.grid(30, 20, 16):
        with T.block("C"):
            i, j, k = T.axis.remap("SSR", [i0, i1, i2])
            with T.init():
                C[i, j] = T.float32(0)
            C[i, j] = C[i, j] + A[i, k] * B[j, k]


def test_pad_symbolic_extent(golden):
    @T.prim_func
    def expected(a: T.handle, b: T.handle, c: T.handle):
        n = T.int32()
        A = T.match_buffer(a, (128, 128), "float32")
        B = T.match_buffer(b, (n, 128), "float32")
        C = T.match_buffer(c, (128, n), "float32")
        B_pad = T.alloc_buffer(((n + 31) // 32 * 32, 128))
        C_pad = T.alloc_buffer((128, (n + 31) // 32 * 32))
        for i0, i1 in T.grid((n + 31) // 32 * 32, 128):
            with T.block("B_pad"):
                v0, v1 = T.axis.remap("SS", [i0, i1])
                B_pad[v0, v1] = T.if_then_else(v0 < n, B[v0, v1], T.float32(0))
        for i0, i1, i2 in T.grid(128, (n + 31) // 32 * 32, 128):
            with T.block("C"):
                i, j, k = T.axis.remap("SSR", [i0, i1, i2])
                with T.init():
                    C_pad[i, j] = T.float32(0)
                C_pad[i, j] = C_pad[i, j] + A[i, k] * B_pad[j, k]
        for i0, i1 in T.grid(128, n):
            with T.block("C_pad"):
                v0, v1 = T.axis.remap("SS", [i0, i1])
                C[v0, v1] = C_pad[v0, v1]

    def apply(sch):
        sch.pad_einsum(sch.get_block("C"), [32, 32, 32])
        assert sch.trace.as_python()[-1] == "sch.pad_einsum(block=b0, padding=[32, 32, 32])"

    golden(matmul, expected, apply)


def test_padded_result_matches_numpy():
    sch = tessera.tir.Schedule(static_matmul)
    sch.pad_einsum(sch.get_block("C"), [16, 16, 16])
    f = tessera.build(sch.mod, target="llvm")
    rng = np.random.default_rng(0)
    a = rng.standard_normal((30, 16)).astype("float32")
    b = rng.standard_normal((20, 16)).astype("float32")
    c = tessera.nd.array(np.zeros((30, 20), "float32"))
    f(tessera.nd.array(a), tessera.nd.array(b), c)
    np.testing.assert_allclose(c.numpy(), a @ b.T, rtol=1e-5, atol=1e-5)


def test_invalid_padding_fails(schedule_error):
    schedule_error(static_matmul, lambda sch: sch.pad_einsum(sch.get_block("C"), [16, 16]),
                   "pad_einsum", "the padding [16, 16] for tir.Block#0 must be 3 positive integers")
    schedule_error(static_matmul, lambda sch: sch.pad_einsum(sch.get_block("C"), [16, 0, 1]),
                   "pad_einsum", "positive integers")


def test_non_einsum_fails(schedule_error):
    @T.prim_func
    def shifted(A: T.Buffer((17,), "float32"), B: T.Buffer((16,), "float32")):
        for i in range(16):
            with T.block("B"):
                vi = T.axis.remap("S", [i])
                B[vi] = A[vi + 1]

    schedule_error(shifted, lambda sch: sch.pad_einsum(sch.get_block("B"), [32]), "pad_einsum",
                   "is not an einsum")
