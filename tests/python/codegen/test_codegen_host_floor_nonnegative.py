"""CodeGenHost: a scalar int32 / int64 floordiv or floormod by a positive constant whose dividend
the enclosing loops' ranges prove non-negative is printed as C's `/` or `%` (the same result
there), not as the runtime's floor helpers, whose sign tests GCC kept inside the loops where it
did not know the sign (a convolution's parallel loop fused from rows and columns of tiles,
whose body allocates the tile and so states no range). A dividend that may be negative keeps
the helpers. Results are checked against numpy's floor division and remainder."""

import numpy as np
import pytest

import tessera as ts
from tessera.script import tir as T


def _build(f):
    return ts.build(f, target="c")


@pytest.mark.parametrize("dtype", ["int32", "int64", "float32", "float64"])
def test_a_loop_variable_divided_by_a_constant_is_c_division(dtype):
    @T.prim_func
    def f(A: T.Buffer((5, 8), dtype), B: T.Buffer((35,), dtype)):
        T.func_attr({"tir.noalias": True})
        for i in T.parallel(35):
            for j in range(1):
                B[i] = A[i // 7, i % 7] + A[(i + j) // 7, 0]

    lib = _build(f)
    src = lib.get_source()
    assert "__floordiv" not in src and "__floormod" not in src, src
    assert "(i / 7)" in src and "(i % 7)" in src, src
    a = np.arange(40).reshape(5, 8).astype(dtype) * 3 - 40
    b = np.zeros(35, dtype)
    lib(a, b)
    i = np.arange(35)
    np.testing.assert_array_equal(b, a[i // 7, i % 7] + a[i // 7, 0])


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_a_dividend_that_may_be_negative_keeps_the_floor_helpers(dtype):
    @T.prim_func
    def f(A: T.Buffer((23,), dtype), B: T.Buffer((23,), dtype), s: T.int32):
        T.func_attr({"tir.noalias": True})
        for i in range(23):
            B[i] = T.floordiv(A[i], T.Cast(dtype, 3)) * T.Cast(dtype, 100) + T.floormod(
                T.Cast(dtype, i + s), T.Cast(dtype, 5))

    lib = _build(f)
    src = lib.get_source()
    assert "__floordiv" in src and "__floormod" in src, src
    a = (np.arange(23) * 7 - 80).astype(dtype)
    b = np.zeros(23, dtype)
    lib(a, b, -11)
    k = np.arange(23) - 11
    np.testing.assert_array_equal(b, a // 3 * 100 + k % 5)


def test_a_divisor_that_is_not_a_constant_keeps_the_helper():
    @T.prim_func
    def f(A: T.Buffer((12,), "int32"), B: T.Buffer((12,), "int32"), d: T.int32):
        T.func_attr({"tir.noalias": True})
        for i in range(12):
            B[i] = A[T.floordiv(i, d)]

    lib = _build(f)
    assert "__floordiv" in lib.get_source()
    a = np.arange(12, dtype="int32") * 5
    b = np.zeros(12, "int32")
    lib(a, b, 4)
    np.testing.assert_array_equal(b, a[np.arange(12) // 4])


def test_a_power_of_two_divisor_keeps_the_helpers():
    # GCC makes the helpers a shift and a mask whatever the sign; C's `/` and `%` of a value
    # whose sign GCC does not know would cost a sign correction more
    @T.prim_func
    def f(A: T.Buffer((5, 9), "int32"), B: T.Buffer((40,), "int32")):
        T.func_attr({"tir.noalias": True})
        for i in T.parallel(40):
            B[i] = A[i // 8, i % 8]

    lib = _build(f)
    src = lib.get_source()
    assert "__floordiv(i, 8)" in src and "__floormod(i, 8)" in src, src
    a = np.arange(45, dtype="int32").reshape(5, 9)
    b = np.zeros(40, "int32")
    lib(a, b)
    i = np.arange(40)
    np.testing.assert_array_equal(b, a[i // 8, i % 8])
