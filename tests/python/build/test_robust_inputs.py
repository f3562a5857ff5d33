"""Wrong programs end in located errors, never in injected code or a crash."""

import numpy as np
import pytest

import tessera as ts
from tessera.script import tir as T


def test_call_extern_name_must_be_a_c_identifier():
    with pytest.raises(Exception, match="must be a C identifier") as info:
        @T.prim_func
        def func(A: T.Buffer((4,), "float32")):
            for i in range(4):
                A[i] = T.call_extern("float32", "abs(0); return 0; } int injected(void) {", A[i])
    assert "injected" in str(info.value)


def test_call_extern_with_identifier_builds():
    @T.prim_func
    def func(A: T.Buffer((4,), "float32")):
        for i in range(4):
            A[i] = T.call_extern("float32", "fabsf", A[i])
    lib = ts.build(func, target="c")
    a = np.array([-1, 2, -3, 4], "float32")
    lib(a)
    np.testing.assert_allclose(a, [1, 2, 3, 4])


def test_infinity_literal_builds():
    @T.prim_func
    def func(A: T.Buffer((2,), "float32")):
        A[0] = T.float32("inf")
        A[1] = T.float32("-inf")
    lib = ts.build(func, target="c")
    a = np.zeros(2, "float32")
    lib(a)
    assert np.isposinf(a[0]) and np.isneginf(a[1])


def test_int32_scalar_out_of_range_is_a_value_error():
    @T.prim_func
    def func(A: T.Buffer((1,), "int32"), n: T.int32):
        A[0] = n
    lib = ts.build(func, target="c")
    a = np.zeros(1, "int32")
    lib(a, 2**31 - 1)
    assert a[0] == 2**31 - 1
    with pytest.raises(ValueError, match="n.*out of range for int32"):
        lib(a, 2**40)
    with pytest.raises(ValueError, match="out of range"):
        lib(a, -(2**31) - 1)
