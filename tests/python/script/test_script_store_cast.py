"""A value of another type stored into a buffer is cast to the buffer's type, as TVM's parser
does (int into float, float into int, bool into int), and runs as numpy would convert it."""

import numpy as np

import tessera
from tessera.script import tir as T


def test_int_into_a_float_buffer_is_cast():
    @T.prim_func
    def f(A: T.Buffer((8,), "float32"), n: T.int32):
        for i in range(8):
            A[i] = i * n

    @T.prim_func
    def f_expected(A: T.Buffer((8,), "float32"), n: T.int32):
        for i in range(8):
            A[i] = T.Cast("float32", i * n)

    tessera.ir.assert_structural_equal(f, f_expected.with_attr("global_symbol", "f"))
    tessera.ir.assert_structural_equal(f, tessera.script.from_source(f.script()))
    lib = tessera.build(f, target="c")
    a = tessera.nd.empty((8,), "float32")
    lib(a, 3)
    np.testing.assert_array_equal(a.numpy(), np.arange(8, dtype="float32") * 3)


def test_float_into_an_int_buffer_truncates():
    @T.prim_func
    def f(A: T.Buffer((6,), "float32"), B: T.Buffer((6,), "int32")):
        for i in range(6):
            B[i] = A[i] * 2.0

    @T.prim_func
    def f_expected(A: T.Buffer((6,), "float32"), B: T.Buffer((6,), "int32")):
        for i in range(6):
            B[i] = T.Cast("int32", A[i] * T.float32(2.0))

    tessera.ir.assert_structural_equal(f, f_expected.with_attr("global_symbol", "f"))
    lib = tessera.build(f, target="c")
    a = np.array([0.2, 1.3, -1.7, 2.5, 3.9, -0.4], "float32")
    b = tessera.nd.empty((6,), "int32")
    lib(tessera.nd.array(a), b)
    np.testing.assert_array_equal(b.numpy(), (a * 2).astype("int32"))


def test_a_comparison_into_an_int_buffer():
    @T.prim_func
    def f(A: T.Buffer((5,), "int32"), B: T.Buffer((5,), "int8")):
        for i in range(5):
            B[i] = A[i] > 2

    lib = tessera.build(f, target="c")
    b = tessera.nd.empty((5,), "int8")
    lib(tessera.nd.array(np.arange(5, dtype="int32")), b)
    np.testing.assert_array_equal(b.numpy(), (np.arange(5) > 2).astype("int8"))


def test_int_broadcast_into_a_float_buffer_converts_its_scalar():
    # As TVM's cast of a broadcast: the constant converts, no Cast node remains.
    @T.prim_func
    def f(A: T.Buffer((8,), "float32")):
        A[T.Ramp(0, 1, 4)] = T.Broadcast(1, 4)

    @T.prim_func
    def f_expected(A: T.Buffer((8,), "float32")):
        A[T.Ramp(0, 1, 4)] = T.Broadcast(T.float32(1), 4)

    tessera.ir.assert_structural_equal(f, f_expected.with_attr("global_symbol", "f"))
    lib = tessera.build(f, target="c")
    a = np.zeros(8, "float32")
    lib(a)
    np.testing.assert_array_equal(a, [1, 1, 1, 1, 0, 0, 0, 0])


def test_int_broadcast_meeting_a_float_vector_converts_its_scalar():
    @T.prim_func
    def f(A: T.Buffer((8,), "float32"), n: T.int32):
        A[T.Ramp(0, 1, 4)] = T.if_then_else(n > 0, A[T.Ramp(0, 1, 4)], T.Broadcast(0, 4))

    @T.prim_func
    def f_expected(A: T.Buffer((8,), "float32"), n: T.int32):
        A[T.Ramp(0, 1, 4)] = T.if_then_else(n > 0, A[T.Ramp(0, 1, 4)],
                                            T.Broadcast(T.float32(0), 4))

    tessera.ir.assert_structural_equal(f, f_expected.with_attr("global_symbol", "f"))


def test_ceildiv_of_constants_folds():
    @T.prim_func
    def f(A: T.Buffer((16,), "float32"), n: T.int32):
        for i in T.serial(T.ceildiv(14, 4)):
            A[i] = T.float32(0)
        for j in T.serial(T.ceildiv(n, 4)):
            A[j] = T.float32(1)

    @T.prim_func
    def f_expected(A: T.Buffer((16,), "float32"), n: T.int32):
        for i in T.serial(4):
            A[i] = T.float32(0)
        for j in T.serial((n + 4 - 1) // 4):
            A[j] = T.float32(1)

    tessera.ir.assert_structural_equal(f, f_expected.with_attr("global_symbol", "f"))
