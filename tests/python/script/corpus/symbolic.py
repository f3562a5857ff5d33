"""Symbolic shapes: handles with T.match_buffer, size variables and scalar parameters."""

# Annotations may then name earlier parameters (n: T.int32, A: T.Buffer((n,), ...)).
from __future__ import annotations

from tessera.script import tir as T


@T.prim_func
def symbolic_add(a: T.handle, b: T.handle, c: T.handle):
    M = T.int32()
    N = T.int32()
    A = T.match_buffer(a, (M, N), "float32")
    B = T.match_buffer(b, (M, N), "float32")
    C = T.match_buffer(c, (M, N), "float32")
    for i, j in T.grid(M, N):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj] + B[vi, vj]


@T.prim_func
def scalar_size_param(a: T.handle, n: T.int32):
    A = T.match_buffer(a, (n,), "int32")
    for i in range(n):
        with T.block("A"):
            vi = T.axis.spatial(n, i)
            A[vi] = vi * 2


@T.prim_func
def size_param_then_buffer(n: T.int32, A: T.Buffer((n,), "float32")):
    # An annotation may use earlier parameters.
    for i in range(n):
        A[i] = T.float32(0)


@T.prim_func
def symbolic_matmul(a: T.handle, b: T.handle, c: T.handle):
    M, N, K = T.int32(), T.int32(), T.int32()
    A = T.match_buffer(a, (M, K))
    B = T.match_buffer(b, (K, N))
    C = T.match_buffer(c, (M, N))
    for i, j, k in T.grid(M, N, K):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


@T.prim_func
def int64_symbolic(a: T.handle):
    n = T.int64()
    A = T.match_buffer(a, (n, T.int64(4)), "float32")
    for i, j in T.grid(n, T.int64(4)):
        with T.block("A"):
            vi, vj = T.axis.remap("SS", [i, j])
            A[vi, vj] = T.float32(1)


@T.prim_func
def size_var_shape(a: T.handle):
    n = T.int32(is_size_var=True)
    A = T.match_buffer(a, (n,), "float32")
    for i in range(n):
        A[i] = T.float32(0)


@T.prim_func
def strided_buffer(a: T.handle, b: T.handle):
    A = T.match_buffer(a, (16, 16), "float32", strides=(32, 1), elem_offset=8, align=16, offset_factor=4)
    B = T.match_buffer(b, (16, 16), "float32")
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj]


@T.prim_func
def symbolic_tail(a: T.handle, n: T.int32):
    # Tiles of 4 over a symbolic length: the predicate guards the last, partial tile.
    A = T.match_buffer(a, (n,), "float32")
    for i0, i1 in T.grid(T.ceildiv(n, 4), 4):
        with T.block("A"):
            vi = T.axis.spatial(n, i0 * 4 + i1)
            T.where(i0 * 4 + i1 < n)
            A[vi] = A[vi] + T.float32(1)


@T.prim_func
def symbolic_offset_loop(a: T.handle, lo: T.int32, hi: T.int32):
    A = T.match_buffer(a, (1024,), "int32")
    for i in range(lo, hi):
        A[i] = i
