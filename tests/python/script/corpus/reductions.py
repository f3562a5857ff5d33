"""Reductions: sums, maxima and normalisations over a row."""

from tessera.script import tir as T


@T.prim_func
def row_sum(A: T.Buffer((16, 64), "float32"), B: T.Buffer((16,), "float32")):
    for i, k in T.grid(16, 64):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]


@T.prim_func
def row_max(A: T.Buffer((16, 64), "float32"), B: T.Buffer((16,), "float32")):
    for i, k in T.grid(16, 64):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.min_value("float32")
            B[vi] = T.max(B[vi], A[vi, vk])


@T.prim_func
def full_sum(A: T.Buffer((8, 8), "int32"), B: T.Buffer((1,), "int32")):
    for i, j in T.grid(8, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("RR", [i, j])
            with T.init():
                B[0] = 0
            B[0] = B[0] + A[vi, vj]


@T.prim_func
def mean(A: T.Buffer((4, 32), "float32"), B: T.Buffer((4,), "float32")):
    S = T.alloc_buffer((4,))
    for i, k in T.grid(4, 32):
        with T.block("sum"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                S[vi] = T.float32(0)
            S[vi] = S[vi] + A[vi, vk]
    for i in range(4):
        with T.block("mean"):
            vi = T.axis.spatial(4, i)
            B[vi] = S[vi] / T.float32(32)


@T.prim_func
def softmax(A: T.Buffer((8, 128), "float32"), B: T.Buffer((8, 128), "float32")):
    M = T.alloc_buffer((8,))
    E = T.alloc_buffer((8, 128))
    S = T.alloc_buffer((8,))
    for i, k in T.grid(8, 128):
        with T.block("max"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                M[vi] = T.float32(-3.4e38)
            M[vi] = T.max(M[vi], A[vi, vk])
    for i, j in T.grid(8, 128):
        with T.block("exp"):
            vi, vj = T.axis.remap("SS", [i, j])
            E[vi, vj] = T.exp(A[vi, vj] - M[vi])
    for i, k in T.grid(8, 128):
        with T.block("sum"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                S[vi] = T.float32(0)
            S[vi] = S[vi] + E[vi, vk]
    for i, j in T.grid(8, 128):
        with T.block("norm"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = E[vi, vj] / S[vi]


@T.prim_func
def reduction_with_inner_loop(A: T.Buffer((16, 64), "float32"), B: T.Buffer((16,), "float32")):
    # One block per row; the loop inside the block reads a whole row: A[vi, 0:64].
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            B[vi] = T.float32(0)
            for k in range(64):
                B[vi] = B[vi] + A[vi, k]


@T.prim_func
def sum_of_squares_int(A: T.Buffer((64,), "int8"), B: T.Buffer((1,), "int32")):
    for k in range(64):
        with T.block("B"):
            vk = T.axis.reduce(64, k)
            with T.init():
                B[0] = 0
            B[0] = B[0] + T.Cast("int32", A[vk]) * T.Cast("int32", A[vk])
