"""tir.FlattenBuffer: multi-dimensional accesses become 1-D (row-major or by strides)."""

from tessera.script import tir as T


def test_row_major_parameters_and_allocations(golden):
    @T.prim_func
    def before(A: T.Buffer((16, 8), "float32"), B: T.Buffer((16, 8), "float32")):
        Y = T.allocate([16, 8], "float32", "global")
        Y_1 = T.decl_buffer((16, 8), "float32", data=Y)
        for i, j in T.grid(16, 8):
            Y_1[i, j] = A[i, j] + T.float32(1)
        for i, j in T.grid(16, 8):
            B[i, j] = Y_1[i, j]

    @T.prim_func
    def expected(A: T.Buffer((16, 8), "float32"), B: T.Buffer((16, 8), "float32")):
        A_1 = T.Buffer((128,), "float32", data=A.data)
        B_1 = T.Buffer((128,), "float32", data=B.data)
        Y = T.allocate([128], "float32", "global")
        Y_1 = T.decl_buffer((128,), "float32", data=Y)
        for i, j in T.grid(16, 8):
            Y_1[i * 8 + j] = A_1[i * 8 + j] + T.float32(1)
        for i, j in T.grid(16, 8):
            B_1[i * 8 + j] = Y_1[i * 8 + j]

    golden("FlattenBuffer", before, expected)


def test_symbolic_shape_and_three_dimensions(golden):
    @T.prim_func
    def before(a: T.handle):
        n = T.int32()
        A = T.match_buffer(a, (n, 4, 2), "int32")
        for i, j, k in T.grid(n, 4, 2):
            A[i, j, k] = i + j + k

    @T.prim_func
    def expected(a: T.handle):
        n = T.int32()
        A = T.match_buffer(a, (n, 4, 2), "int32")
        A_1 = T.Buffer((n * 8,), "int32", data=A.data)
        for i, j, k in T.grid(n, 4, 2):
            A_1[i * 8 + j * 2 + k] = i + j + k

    golden("FlattenBuffer", before, expected)


def test_explicit_strides(golden):
    @T.prim_func
    def before(a: T.handle):
        s0 = T.int32()
        A = T.match_buffer(a, (4, 4), "float32", strides=(s0, 1))
        for i, j in T.grid(4, 4):
            A[i, j] = T.float32(0)

    @T.prim_func
    def expected(a: T.handle):
        s0 = T.int32()
        A = T.match_buffer(a, (4, 4), "float32", strides=(s0, 1))
        A_1 = T.Buffer((s0 * 4,), "float32", data=A.data)
        for i, j in T.grid(4, 4):
            A_1[i * s0 + j] = T.float32(0)

    golden("FlattenBuffer", before, expected)


def test_flat_function_is_unchanged(unchanged):
    @T.prim_func
    def func(A: T.Buffer((8,), "float32")):
        for i in T.serial(8):
            A[i] = T.float32(0)

    unchanged("FlattenBuffer", func)
