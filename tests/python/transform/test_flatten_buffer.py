"""tir.FlattenBuffer: multi-dimensional accesses become 1-D (row-major or by strides).

As in TVM v0.23 the DeclBuffer statements go (the flat buffers are only named by their
accesses, so the expected functions declare them with ``T.Buffer(..., data=)``)."""

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
        Y_1 = T.Buffer((128,), "float32", data=Y)
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


def test_allocation_takes_the_strided_shape_of_its_declared_buffer(golden):
    @T.prim_func
    def before(A: T.Buffer((4, 16), "float32")):
        B = T.allocate([4, 16], "float32", "global")
        B_1 = T.decl_buffer((4, 16), "float32", data=B, strides=(17, 1))
        for i, j in T.grid(4, 16):
            B_1[i, j] = A[i, j]
        for i, j in T.grid(4, 16):
            A[i, j] = B_1[i, j] * T.float32(2)

    @T.prim_func
    def expected(A: T.Buffer((4, 16), "float32")):
        A_1 = T.Buffer((64,), "float32", data=A.data)
        B = T.allocate([68], "float32", "global")
        B_1 = T.Buffer((68,), "float32", data=B)
        for i, j in T.grid(4, 16):
            B_1[i * 17 + j] = A_1[i * 16 + j]
        for i, j in T.grid(4, 16):
            A_1[i * 16 + j] = B_1[i * 17 + j] * T.float32(2)

    golden("FlattenBuffer", before, expected)


def test_allocation_without_a_matching_declaration_takes_the_product(golden):
    # The declared view (8 x 4) differs from the allocation's extents (4 x 8): no strides of
    # the view apply, the allocation is the product of its own extents.
    @T.prim_func
    def before():
        B = T.allocate([4, 8], "float32", "global")
        B_1 = T.decl_buffer((8, 4), "float32", data=B)
        for i, j in T.grid(8, 4):
            B_1[i, j] = T.float32(0)

    @T.prim_func
    def expected():
        B = T.allocate([32], "float32", "global")
        B_1 = T.Buffer((32,), "float32", data=B)
        for i, j in T.grid(8, 4):
            B_1[i * 4 + j] = T.float32(0)

    golden("FlattenBuffer", before, expected)


def test_block_allocations_and_regions_are_flattened(golden):
    @T.prim_func
    def before():
        A = T.alloc_buffer((8, 16))
        for i, j in T.grid(4, 16):
            with T.block("b"):
                T.reads(A[i * 2 : i * 2 + 2, j])
                T.writes(A[i, 0:16])
                A[i, j] = A[i * 2, j] + A[i * 2 + 1, j]

    @T.prim_func
    def expected():
        A = T.alloc_buffer((128,))
        for i, j in T.grid(4, 16):
            with T.block("b"):
                T.reads(A[i * 32 + j : i * 32 + j + 17])
                T.writes(A[i * 16 : i * 16 + 16])
                A[i * 16 + j] = A[i * 32 + j] + A[i * 32 + j + 16]

    golden("FlattenBuffer", before, expected)


def test_axis_separators_keep_one_dimension_per_physical_axis(golden):
    @T.prim_func
    def before():
        A = T.decl_buffer((2, 3, 4, 5), axis_separators=[2])
        for i0, i1, i2, i3 in T.grid(2, 3, 4, 5):
            A[i0, i1, i2, i3] = T.float32(0)

    @T.prim_func
    def expected():
        A = T.allocate([6, 20], "float32", "global")
        A_1 = T.Buffer((6, 20), data=A, axis_separators=[1])
        for i0, i1, i2, i3 in T.grid(2, 3, 4, 5):
            A_1[i0 * 3 + i1, i2 * 5 + i3] = T.float32(0)

    golden("FlattenBuffer", before, expected)


def test_buffer_already_one_per_physical_axis_is_unchanged(unchanged):
    @T.prim_func
    def func():
        A = T.alloc_buffer((4, 8), axis_separators=[1])
        for i, j in T.grid(4, 8):
            with T.block("b"):
                A[i, j] = T.float32(0)

    unchanged("FlattenBuffer", func)


def test_bool_buffers_are_stored_as_int8(golden):
    # (An allocated bool buffer becomes an int8 allocation over the same variable; the numpy
    # test below builds one.)
    @T.prim_func
    def before(A: T.Buffer((2, 5), "bool"), B: T.Buffer((10,), "bool")):
        for i in range(10):
            B[i] = A[i // 5, i % 5]

    @T.prim_func
    def expected(A: T.Buffer((2, 5), "bool"), B: T.Buffer((10,), "bool")):
        A_1 = T.Buffer((10,), "int8", data=A.data)
        B_1 = T.Buffer((10,), "int8", data=B.data)
        for i in range(10):
            B_1[i] = A_1[i]  # a copy of bools copies their bytes (see below)

    golden("FlattenBuffer", before, expected)


def test_a_choice_of_bools_is_a_choice_of_their_bytes_and_other_bools_convert(golden):
    # A bool read from a bool buffer and written to one is its byte (0 or 1) as it is, also
    # through if_then_else and Select (a concatenation), and so is a bool constant (its byte);
    # a bool computed otherwise (from int8, a comparison) is converted, so a nonzero byte
    # becomes 1.
    @T.prim_func
    def before(A: T.Buffer((2, 5), "bool"), C: T.Buffer((10,), "int8"), B: T.Buffer((4, 10), "bool")):
        for i in range(10):
            B[0, i] = T.if_then_else(i < 5, A[0, i % 5], A[1, i % 5])
            B[1, i] = T.Select(i < 3, A[0, i % 5], A[1, i % 5])
            B[2, i] = T.Cast("bool", C[i])
            B[3, i] = T.if_then_else(i < 5, A[0, i % 5], T.bool(True))

    @T.prim_func
    def expected(A: T.Buffer((2, 5), "bool"), C: T.Buffer((10,), "int8"), B: T.Buffer((4, 10), "bool")):
        A_1 = T.Buffer((10,), "int8", data=A.data)
        B_1 = T.Buffer((40,), "int8", data=B.data)
        for i in range(10):
            B_1[i] = T.if_then_else(i < 5, A_1[i % 5], A_1[i % 5 + 5])
            B_1[i + 10] = T.Select(i < 3, A_1[i % 5], A_1[i % 5 + 5])
            B_1[i + 20] = T.Cast("int8", T.Cast("bool", C[i]))
            B_1[i + 30] = T.if_then_else(i < 5, A_1[i % 5], T.int8(1))

    golden("FlattenBuffer", before, expected)


def test_logic_of_bools_is_bitwise_logic_of_their_bytes(golden):
    # and, or, not, bools equal or not and the bitwise and/or/xor of bools read from bool
    # buffers are computed on their bytes (0 or 1): &, |, ^ 1, ^, ^ ^ 1, which stay 0 or 1; a
    # bool from anything else inside (a comparison of int8) keeps the conversion of the whole.
    @T.prim_func
    def before(A: T.Buffer((10,), "bool"), C: T.Buffer((10,), "int8"), B: T.Buffer((8, 10), "bool")):
        for i in range(10):
            B[0, i] = A[i] and A[9 - i]
            B[1, i] = A[i] or A[9 - i]
            B[2, i] = not A[i]
            B[3, i] = A[i] != A[9 - i]
            B[4, i] = A[i] == A[9 - i]
            B[5, i] = T.bitwise_xor(A[i], T.bitwise_and(A[9 - i], T.bool(True)))
            B[6, i] = T.bitwise_or(A[i], A[9 - i])
            B[7, i] = A[i] and C[i] > T.int8(0)

    @T.prim_func
    def expected(A: T.Buffer((10,), "bool"), C: T.Buffer((10,), "int8"), B: T.Buffer((8, 10), "bool")):
        A_1 = T.Buffer((10,), "int8", data=A.data)
        B_1 = T.Buffer((80,), "int8", data=B.data)
        for i in range(10):
            B_1[i] = T.bitwise_and(A_1[i], A_1[9 - i])
            B_1[i + 10] = T.bitwise_or(A_1[i], A_1[9 - i])
            B_1[i + 20] = T.bitwise_xor(A_1[i], T.int8(1))
            B_1[i + 30] = T.bitwise_xor(A_1[i], A_1[9 - i])
            B_1[i + 40] = T.bitwise_xor(T.bitwise_xor(A_1[i], A_1[9 - i]), T.int8(1))
            B_1[i + 50] = T.bitwise_xor(A_1[i], T.bitwise_and(A_1[9 - i], T.int8(1)))
            B_1[i + 60] = T.bitwise_or(A_1[i], A_1[9 - i])
            B_1[i + 70] = T.Cast("int8", T.Cast("bool", A_1[i]) and C[i] > T.int8(0))

    golden("FlattenBuffer", before, expected)


def test_bool_intermediate_builds_and_matches_numpy():
    import numpy as np

    import tessera as ts

    @T.prim_func
    def func(A: T.Buffer((10,), "float32"), B: T.Buffer((10,), "bool"), C: T.Buffer((10,), "float32")):
        M = T.alloc_buffer((10,), "bool")
        for i in range(10):
            with T.block("m"):
                vi = T.axis.remap("S", [i])
                M[vi] = A[vi] > T.float32(0.5)
        for i in range(10):
            with T.block("b"):
                vi = T.axis.remap("S", [i])
                B[vi] = M[vi]
                C[vi] = T.Select(M[vi], A[vi], T.float32(0))

    lib = ts.build(func, target="c")
    a = np.random.default_rng(0).random(10, dtype="float32")
    b, c = np.zeros(10, "bool"), np.zeros(10, "float32")
    lib(a, b, c)
    np.testing.assert_array_equal(b, a > 0.5)
    np.testing.assert_array_equal(c, np.where(a > 0.5, a, np.float32(0)))
