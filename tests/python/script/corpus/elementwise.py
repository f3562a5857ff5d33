"""Element-wise kernels: one block per output element."""

from tessera.script import tir as T

N = 64  # a module constant: Python values are evaluated while parsing


@T.prim_func
def vector_add(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32"), C: T.Buffer((128,), "float32")):
    for i in range(128):
        with T.block("C"):
            vi = T.axis.spatial(128, i)
            C[vi] = A[vi] + B[vi]


@T.prim_func
def add_2d(A: T.Buffer((N, N), "float32"), B: T.Buffer((N, N), "float32"), C: T.Buffer((N, N), "float32")):
    for i, j in T.grid(N, N):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj] + B[vi, vj]


@T.prim_func
def relu(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32")):
    for i, j in T.grid(16, 16):
        with T.block("relu"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = T.max(A[vi, vj], T.float32(0))


@T.prim_func
def scale_and_shift(A: T.Buffer((32,), "float32"), B: T.Buffer((32,), "float32")):
    # Python numbers take the buffer element's type: 2.0 and 1 become float32 constants.
    for i in range(32):
        with T.block("B"):
            vi = T.axis.spatial(32, i)
            B[vi] = A[vi] * 2.0 + 1


@T.prim_func
def broadcast_row(A: T.Buffer((8, 16), "float32"), bias: T.Buffer((16,), "float32"), B: T.Buffer((8, 16), "float32")):
    for i, j in T.grid(8, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] + bias[vj]


@T.prim_func
def cast_to_half(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float16")):
    for i in range(64):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = T.Cast("float16", A[vi])


@T.prim_func
def clamp_with_select(A: T.Buffer((64,), "int32"), B: T.Buffer((64,), "int32")):
    for i in range(64):
        with T.block("B"):
            vi = T.axis.spatial(64, i)
            B[vi] = T.Select(A[vi] < 0, 0, T.min(A[vi], 255))


@T.prim_func
def guarded_read(A: T.Buffer((64,), "float32"), B: T.Buffer((66,), "float32")):
    # if_then_else evaluates only the chosen side, so the out-of-range reads never happen.
    for i in range(66):
        with T.block("B"):
            vi = T.axis.spatial(66, i)
            B[vi] = T.if_then_else(1 <= vi and vi < 65, A[vi - 1], T.float32(0))


@T.prim_func
def integer_division(A: T.Buffer((64,), "int32"), B: T.Buffer((64,), "int32"), C: T.Buffer((64,), "int32")):
    for i in range(64):
        with T.block("C"):
            vi = T.axis.spatial(64, i)
            C[vi] = A[vi] // 4 + A[vi] % 4 + T.truncdiv(A[vi], 3) + T.truncmod(A[vi], 3) + A[vi] / 2 + B[vi]


@T.prim_func
def transpose(A: T.Buffer((16, 32), "float32"), B: T.Buffer((32, 16), "float32")):
    for i, j in T.grid(32, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vj, vi]


@T.prim_func
def math_intrinsics(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            B[vi] = (T.exp(A[vi]) + T.log(T.abs(A[vi]) + 1.0) + T.sqrt(T.fabs(A[vi])) + T.rsqrt(A[vi] * A[vi] + 1.0)
                     + T.tanh(A[vi]) + T.sigmoid(A[vi]) + T.erf(A[vi]) + T.pow(A[vi], 2.0)
                     + T.floor(A[vi]) + T.ceil(A[vi]) + T.round(A[vi]))


@T.prim_func
def padded_with_where(A: T.Buffer((100,), "float32"), B: T.Buffer((100,), "float32")):
    # A loop split by 8 over 100 elements: the predicate masks the 4 extra iterations.
    for i0, i1 in T.grid(13, 8):
        with T.block("B"):
            vi = T.axis.spatial(100, i0 * 8 + i1)
            T.where(i0 * 8 + i1 < 100)
            B[vi] = A[vi] * T.float32(3)


@T.prim_func
def int64_indices(A: T.Buffer((T.int64(16), T.int64(16)), "float32"), B: T.Buffer((T.int64(16), T.int64(16)), "float32")):
    for i, j in T.grid(T.int64(16), T.int64(16)):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] + T.float32(1)


@T.prim_func
def bool_mask(A: T.Buffer((32,), "float32"), M: T.Buffer((32,), "bool"), B: T.Buffer((32,), "float32")):
    for i in range(32):
        with T.block("B"):
            vi = T.axis.spatial(32, i)
            B[vi] = T.Select(M[vi] and not A[vi] < T.float32(0), A[vi], T.float32(0))


@T.prim_func
def bitwise_ops(A: T.Buffer((32,), "uint8"), B: T.Buffer((32,), "uint8")):
    for i in range(32):
        with T.block("B"):
            vi = T.axis.spatial(32, i)
            B[vi] = (A[vi] & T.uint8(15)) | (A[vi] >> T.uint8(4)) ^ ~A[vi]
