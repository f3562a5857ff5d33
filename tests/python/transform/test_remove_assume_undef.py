"""tir.RemoveAssume and tir.RemoveStoreUndef: assumptions and stores of undefined values are
dropped, with what that leaves empty."""

import numpy as np
import pytest

import tessera as ts
from tessera.error import TesseraError
from tessera.script import tir as T


def test_assumptions_and_loops_of_only_assumptions_go(golden):
    @T.prim_func
    def before(A: T.Buffer((8,), "int32")):
        T.evaluate(T.assume(A[0] == 3))
        for i in range(8):
            T.evaluate(T.assume(A[i] >= 0))
        for i in range(8):
            A[i] = A[i] + 1

    @T.prim_func
    def expected(A: T.Buffer((8,), "int32")):
        for i in range(8):
            A[i] = A[i] + 1

    golden("RemoveAssume", before, expected)


def test_function_without_assumptions_is_returned_as_is(unchanged):
    @T.prim_func
    def func(A: T.Buffer((8,), "int32")):
        for i in range(8):
            A[i] = i

    unchanged("RemoveAssume", func)
    unchanged("RemoveStoreUndef", func)


def test_stores_of_undefined_values_go(golden):
    @T.prim_func
    def before(A: T.Buffer((4,), "int32"), n: T.int32):
        A[0] = T.undef(dtype="int32")
        A[1] = n + T.undef(dtype="int32")
        u = T.undef(dtype="int32")
        A[2] = u * 2
        A[3] = T.shift_left(n, 1, dtype="int32")

    @T.prim_func
    def expected(A: T.Buffer((4,), "int32"), n: T.int32):
        A[3] = T.shift_left(n, 1, dtype="int32")

    golden("RemoveStoreUndef", before, expected)


@pytest.mark.parametrize("where", ["store", "load"])
def test_undefined_index_is_an_error(where):
    if where == "store":
        @T.prim_func
        def func(A: T.Buffer((4,), "int32")):
            u = T.undef(dtype="int32")
            A[u] = 5
    else:
        @T.prim_func
        def func(A: T.Buffer((4,), "int32"), B: T.Buffer((4,), "int32")):
            B[0] = A[T.undef(dtype="int32")]

    with pytest.raises(TesseraError, match="index of buffer A depends on T.undef"):
        ts.tir.transform.RemoveStoreUndef()(func)


def test_assumption_free_function_builds_and_runs():
    @T.prim_func
    def func(A: T.Buffer((8,), "int32")):
        for i in range(8):
            T.evaluate(T.assume(A[i] >= 0))
        for i in range(8):
            A[i] = A[i] * 3

    mod = ts.tir.transform.RemoveAssume()(func)
    lib = ts.build(mod, target="c")
    a = np.arange(8, dtype="int32")
    lib(a)
    np.testing.assert_array_equal(a, np.arange(8, dtype="int32") * 3)
