"""tir.LowerIntrin: math intrinsics become C library calls of their precision."""

from tessera.script import tir as T


def test_float32_and_float64_math(golden):
    @T.prim_func
    def before(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float64")):
        for i in T.serial(4):
            A[i] = T.exp(A[i]) + T.sqrt(A[i])
            B[i] = T.log(B[i])

    @T.prim_func
    def expected(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float64")):
        for i in T.serial(4):
            A[i] = T.call_pure_extern("float32", "expf", A[i]) + T.call_pure_extern("float32", "sqrtf", A[i])
            B[i] = T.call_pure_extern("float64", "log", B[i])

    golden("LowerIntrin", before, expected)


def test_composite_intrinsics(golden):
    @T.prim_func
    def before(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "int32")):
        for i in T.serial(4):
            A[i] = T.sigmoid(A[i])
            B[i] = T.abs(B[i])

    @T.prim_func
    def expected(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "int32")):
        for i in T.serial(4):
            A[i] = T.float32(1) / (T.float32(1) + T.call_pure_extern("float32", "expf", T.float32(0) - A[i]))
            B[i] = T.Select(B[i] < 0, 0 - B[i], B[i])

    golden("LowerIntrin", before, expected)
