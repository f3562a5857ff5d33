"""Argument checks of packed entry points (tensorir.md §10): a bad call raises with the
specified message and runs nothing."""

import numpy as np
import pytest

import tessera as ts
from tessera.error import ArgumentTypeError, ArgumentValueError, TesseraError
from tessera.script import tir as T


@T.prim_func
def f(A: T.Buffer((10, 4), "float32"), B: T.Buffer((10,), "float32"), n: T.int32, s: T.float32):
    for i in T.serial(10):
        B[i] = A[i, 0] * s + T.Cast("float32", n)


@pytest.fixture(scope="module")
def lib():
    return ts.build(f, target="c")


def args():
    return [np.ones((10, 4), "float32"), np.zeros(10, "float32"), 1, 2.0]


def call_with(lib, index, value):
    a = args()
    a[index] = value
    return lib(*a)


def raises(kind, match):
    """pytest.raises for an argument error: a TypeError or a ValueError (``kind``) that is also
    a tessera error (and, as before, a RuntimeError)."""
    exc_type = ArgumentTypeError if kind is TypeError else ArgumentValueError
    return pytest.raises(exc_type, match=match)


@pytest.mark.parametrize("cls, bases", [(ArgumentTypeError, (TypeError, TesseraError, RuntimeError)),
                                        (ArgumentValueError, (ValueError, TesseraError, RuntimeError))])
def test_argument_error_classes(cls, bases):
    assert all(issubclass(cls, b) for b in bases)
    assert not issubclass(ArgumentTypeError, ValueError) and not issubclass(ArgumentValueError, TypeError)


def test_good_call_runs(lib):
    a = args()
    lib(*a)
    np.testing.assert_allclose(a[1], np.full(10, 3.0))


def test_argument_count(lib):
    with raises(TypeError, "^f: num_args should be 4$"):
        lib(*args()[:3])


def test_number_for_an_array(lib):
    with raises(TypeError, r"^f: Expect arg\[0\] to be pointer$"):
        call_with(lib, 0, 3)


def test_float_for_an_int(lib):
    with raises(TypeError, r"^f: Expect arg\[2\] to be int$"):
        call_with(lib, 2, 1.5)


def test_array_for_a_float(lib):
    with pytest.raises(TypeError, match=r"f\.s must be a number") as info:
        call_with(lib, 3, "x")
    assert isinstance(info.value, TesseraError)


def test_not_an_array(lib):
    with pytest.raises(TesseraError, match=r"f\.A must be an array .* got list") as info:
        call_with(lib, 0, [1.0, 2.0])
    assert isinstance(info.value, TypeError)


def test_null_array(lib):
    with raises(TypeError, r"^f\.A is a NULL DLTensor\* pointer$"):
        call_with(lib, 0, None)


def test_rank(lib):
    with raises(ValueError, r"^f\.A\.ndim is expected to equal 2$"):
        call_with(lib, 0, np.ones(40, "float32"))


def test_dtype(lib):
    with raises(TypeError, r"^f\.A\.dtype is expected to be float32, got float64$"):
        call_with(lib, 0, np.ones((10, 4), "float64"))


def test_shape(lib):
    with raises(ValueError, r"^Argument f\.A\.shape\[1\] has an unsatisfied constraint: 4 == A\.shape\[1\] \(got 5\)$"):
        call_with(lib, 0, np.ones((10, 5), "float32"))


def test_strides(lib):
    with raises(ValueError, r"^f\.A\.strides: expected to be compact array$"):
        call_with(lib, 0, np.ones((10, 8), "float32")[:, ::2])


def test_read_only_array(lib):
    a = np.ones((10, 4), "float32")
    a.flags.writeable = False
    with pytest.raises(TesseraError, match="read-only") as info:
        call_with(lib, 0, a)
    assert isinstance(info.value, TypeError)


def test_nothing_runs_on_a_bad_call(lib):
    a = args()
    a[0] = np.ones((10, 5), "float32")
    with pytest.raises(ValueError):
        lib(*a)
    np.testing.assert_array_equal(a[1], np.zeros(10))


def test_symbolic_dimension_is_bound_by_the_first_buffer():
    @T.prim_func
    def g(a: T.handle, b: T.handle):
        n = T.int32()
        A = T.match_buffer(a, (n,), "float32")
        B = T.match_buffer(b, (n,), "float32")
        for i in T.serial(n):
            B[i] = A[i]

    lib = ts.build(g)
    lib(np.ones(3, "float32"), np.zeros(3, "float32"))
    with raises(ValueError, r"^Argument g\.b\.shape\[0\] has an unsatisfied constraint: n == b\.shape\[0\] \(got 4\)$"):
        lib(np.ones(3, "float32"), np.zeros(4, "float32"))


def test_empty_arrays_may_have_null_data():
    @T.prim_func
    def g(a: T.handle):
        n = T.int32()
        A = T.match_buffer(a, (n,), "float32")
        for i in T.serial(n):
            A[i] = T.float32(1)

    ts.build(g)(np.zeros(0, "float32"))


def test_assert_raises_its_message():
    @T.prim_func
    def g(A: T.Buffer((4,), "int32"), n: T.int32):
        assert n < 4, "n must be below 4"
        A[n] = 1

    lib = ts.build(g)
    a = np.zeros(4, "int32")
    lib(a, 2)
    assert a[2] == 1
    with pytest.raises(RuntimeError, match="^n must be below 4$") as info:
        lib(a, 7)
    # The kernel's own assertion is not an argument error.
    assert isinstance(info.value, TesseraError)
    assert not isinstance(info.value, (TypeError, ValueError))
    with ts.transform.PassContext(config={"tir.disable_assert": True}):
        assert "n must be below 4" not in ts.build(g).get_source()


def test_timer_reports_argument_errors_alike(lib):
    timer = lib.time_evaluator("f", ts.cpu(0), number=1)
    a = args()
    a[0] = np.ones((10, 5), "float32")
    with raises(ValueError, r"^Argument f\.A\.shape\[1\] has an unsatisfied constraint"):
        timer(*a)


def test_int64_extents_are_checked_with_their_type():
    @T.prim_func
    def g(A: T.Buffer((T.int64(4), T.int64(2)), "float32")):
        A[0, 0] = T.float32(1)

    lib = ts.build(g)
    lib(np.zeros((4, 2), "float32"))
    with raises(ValueError, r"^Argument g\.A\.shape\[0\] has an unsatisfied constraint: "
                            r"T\.int64\(4\) == A\.shape\[0\] \(got 3\)$"):
        lib(np.zeros((3, 2), "float32"))


def test_bool_buffers_take_one_byte_arrays():
    @T.prim_func
    def g(A: T.Buffer((4,), "bool"), B: T.Buffer((4,), "int32")):
        for i in T.serial(4):
            B[i] = T.if_then_else(A[i], 1, 0)

    lib = ts.build(g)
    for a in (np.array([1, 0, 1, 1], "bool"), np.array([1, 0, 1, 1], "int8")):
        b = np.zeros(4, "int32")
        lib(a, b)
        np.testing.assert_array_equal(b, [1, 0, 1, 1])
    with raises(TypeError, r"^g\.A\.dtype is expected to be bool"):
        lib(np.ones(4, "int32"), np.zeros(4, "int32"))


def test_constant_empty_arrays_and_size_one_strides():
    @T.prim_func
    def g(A: T.Buffer((0, 3), "float32"), B: T.Buffer((1, 3), "float32")):
        for i in T.serial(3):
            B[0, i] = T.float32(2)

    lib = ts.build(g)
    b = np.zeros((2, 3), "float32")[::2]  # a size-1 dimension of stride 6: still compact
    lib(np.zeros((0, 3), "float32"), b)
    np.testing.assert_array_equal(b, np.full((1, 3), 2.0))
    with raises(ValueError, r"^g\.B\.strides: expected to be compact array$"):
        lib(np.zeros((0, 3), "float32"), np.zeros((1, 6), "float32")[:, ::2])
