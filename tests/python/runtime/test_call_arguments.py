"""Converting the arguments of a call to a built function: numpy arrays (read through the buffer
protocol where their dtype allows, through DLPack otherwise), ts.nd arrays, 0-d arrays and
Python or numpy scalars each give the kernel's result, or the error of the argument check, as
the conversion through DLPack alone did."""

import numpy as np
import pytest

import tessera as ts
from tessera import te
from tessera.error import ArgumentTypeError, ArgumentValueError, TesseraError
from tessera.script import tir as T

DTYPES = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
          "float16", "float32", "float64"]


def _add_kernel(dtype, shape=(16,)):
    a = te.placeholder(shape, dtype, name="A")
    b = te.placeholder(shape, dtype, name="B")
    c = te.compute(shape, lambda *i: a(*i) + b(*i), name="C")
    return ts.build(te.create_prim_func([a, b, c]), target="llvm")


@pytest.fixture(scope="module")
def add8():
    return _add_kernel("int8")


@T.prim_func
def scalars(A: T.Buffer((4,), "float32"), n: T.int32, x: T.float32, flag: T.bool):
    for i in T.serial(4):
        A[i] = T.if_then_else(flag, T.Cast("float32", n) + x, x)


@pytest.fixture(scope="module")
def scalar_lib():
    return ts.build(scalars, target="c")


@pytest.mark.parametrize("dtype", DTYPES)
def test_numpy_arrays_of_each_dtype(dtype):
    lib = _add_kernel(dtype)
    a = np.arange(16).astype(dtype)
    b = np.full(16, 2).astype(dtype)
    c = np.zeros(16, dtype)
    lib(a, b, c)
    np.testing.assert_array_equal(c, a + b)


def test_bool_arrays():
    @T.prim_func
    def g(A: T.Buffer((4,), "bool"), B: T.Buffer((4,), "bool")):
        for i in T.serial(4):
            B[i] = not A[i]

    a = np.array([True, False, False, True])
    b = np.zeros(4, "bool")
    ts.build(g)(a, b)
    np.testing.assert_array_equal(b, ~a)


def test_ndarrays_numpy_arrays_and_both_mixed(add8):
    a, b = np.arange(16, dtype="int8"), np.full(16, 3, "int8")
    out = ts.nd.empty((16,), "int8")
    add8(ts.nd.array(a), ts.nd.array(b), out)
    np.testing.assert_array_equal(out.numpy(), a + b)
    c = np.zeros(16, "int8")
    add8(ts.nd.array(a), b, c)
    np.testing.assert_array_equal(c, a + b)
    # A function of the module by name, and the time evaluator, convert alike.
    c[:] = 0
    add8[add8.entry_name](a, ts.nd.array(b), c)
    np.testing.assert_array_equal(c, a + b)
    timer = add8.time_evaluator(add8.entry_name, ts.cpu(0), number=2)
    assert timer(a, ts.nd.array(b), c).mean >= 0
    np.testing.assert_array_equal(c, a + b)


def test_views_at_an_offset_and_arrays_of_numpy_subclasses(add8, tmp_path):
    big = np.arange(40, dtype="int8")
    c = np.zeros(20, "int8")
    add8(big[3:19], big[20:36], c[4:])  # data pointers inside a larger array
    np.testing.assert_array_equal(c[4:], big[3:19] + big[20:36])
    out = np.memmap(tmp_path / "out", "int8", "w+", shape=(16,))
    add8(np.ma.masked_array(np.ones(16, "int8")), np.ones(16, "int8"), out)
    np.testing.assert_array_equal(out, np.full(16, 2))


def test_a_strided_view_is_refused_by_a_compact_kernel(add8):
    wide = np.zeros(32, "int8")
    with pytest.raises(ArgumentValueError, match=r"\.var_C\.strides: expected to be compact array$"):
        add8(np.ones(16, "int8"), np.ones(16, "int8"), wide[::2])
    with pytest.raises(ArgumentValueError, match=r"\.var_A\.strides: expected to be compact array$"):
        add8(np.ones(32, "int8")[::-2], np.ones(16, "int8"), np.zeros(16, "int8"))
    assert not wide.any()


def test_a_strided_kernel_takes_views_with_their_strides():
    @T.prim_func
    def g(a: T.handle, b: T.handle):
        s = T.int32()
        A = T.match_buffer(a, (4, 3), "float32", strides=[s, 1])
        B = T.match_buffer(b, (4, 3), "float32")
        for i, j in T.grid(4, 3):
            B[i, j] = A[i, j] * T.float32(2)

    lib = ts.build(g)
    full = np.arange(40, dtype="float32").reshape(4, 10)
    b = np.zeros((4, 3), "float32")
    lib(full[:, 2:5], b)
    np.testing.assert_array_equal(b, full[:, 2:5] * 2)


def test_zero_d_arrays():
    @T.prim_func
    def g(A: T.Buffer((), "float32"), B: T.Buffer((), "float32")):
        B[()] = A[()] + T.float32(1)

    lib = ts.build(g)
    b = np.zeros((), "float32")
    lib(np.array(2.5, "float32"), b)
    assert b == 3.5
    out = ts.nd.array(b)
    lib(np.array(4.0, "float32"), out)
    assert out.numpy() == 5.0
    with pytest.raises(ArgumentValueError, match=r"^g\.A\.ndim is expected to equal 0$"):
        lib(np.zeros(1, "float32"), b)


def test_python_and_numpy_scalars(scalar_lib):
    a = np.zeros(4, "float32")
    scalar_lib(a, 3, 0.5, True)
    np.testing.assert_array_equal(a, np.full(4, 3.5))
    scalar_lib(a, np.int32(2), np.float32(0.25), True)
    np.testing.assert_array_equal(a, np.full(4, 2.25))
    scalar_lib(a, True, 1, False)  # a bool for an int, an int for a float
    np.testing.assert_array_equal(a, np.full(4, 1.0))


def test_scalar_errors(scalar_lib):
    a = np.zeros(4, "float32")
    with pytest.raises(TypeError, match=r"^scalars\.n must be a number \(int32\), got ndarray$"):
        scalar_lib(a, np.array(3, "int32"), 0.5, True)  # a 0-d array is not a number here
    with pytest.raises(TypeError, match=r"^scalars\.x must be a number \(float32\), got str$"):
        scalar_lib(a, 3, "0.5", True)
    with pytest.raises(ArgumentTypeError, match=r"^scalars: Expect arg\[1\] to be int$"):
        scalar_lib(a, 3.5, 0.5, True)
    with pytest.raises(ValueError, match=r"^scalars\.n = 4294967296 is out of range for int32$"):
        scalar_lib(a, 2**32, 0.5, True)
    with pytest.raises(ValueError, match=r"^scalars\.n = 1267650600228229401496703205376 does not "
                                         r"fit a 64-bit integer$"):
        scalar_lib(a, 2**100, 0.5, True)
    with pytest.raises(ArgumentTypeError, match=r"^scalars: Expect arg\[0\] to be pointer$"):
        scalar_lib(1, 3, 0.5, True)
    np.testing.assert_array_equal(a, np.zeros(4))


def test_array_errors(add8):
    good = [np.ones(16, "int8"), np.ones(16, "int8"), np.zeros(16, "int8")]

    def call(index, value):
        args = list(good)
        args[index] = value
        add8(*args)

    with pytest.raises(ArgumentTypeError, match=r"\.var_B\.dtype is expected to be int8, got int16$"):
        call(1, np.ones(16, "int16"))
    with pytest.raises(ArgumentTypeError, match=r"\.var_A\.dtype is expected to be int8, got float32$"):
        call(0, ts.nd.array(np.ones(16, "float32")))
    with pytest.raises(ArgumentValueError, match=r"\.var_A\.ndim is expected to equal 1$"):
        call(0, np.ones((4, 4), "int8"))
    with pytest.raises(ArgumentValueError, match=r"has an unsatisfied constraint: 16 == var_A\.shape\[0\] \(got 8\)$"):
        call(0, np.ones(8, "int8"))
    with pytest.raises(ArgumentTypeError, match=r"\.var_A is a NULL DLTensor\* pointer$"):
        call(0, None)
    with pytest.raises(ArgumentTypeError, match=r": num_args should be 3$"):
        add8(*good[:2])
    with pytest.raises(ArgumentTypeError, match=r": num_args should be 3$"):
        add8(*good, good[0])
    with pytest.raises(TesseraError, match=r"\.var_A must be an array \(ts\.nd\.array, numpy or another "
                                          r"DLPack array\), got list$"):
        call(0, [1] * 16)
    assert not good[2].any()


def test_read_only_arrays(add8):
    ro = np.zeros(16, "int8")
    ro.flags.writeable = False
    with pytest.raises(TypeError, match=r"\.var_C is a read-only array; pass a writable one \(e\.g\. a copy\)$"):
        add8(np.ones(16, "int8"), np.ones(16, "int8"), ro)
    # Refused even when only read: the host entry points do not say which arrays they write.
    with pytest.raises(TypeError, match=r"\.var_A is a read-only array"):
        add8(ro, np.ones(16, "int8"), np.zeros(16, "int8"))


@pytest.mark.parametrize("dtype", [">f4", "longdouble"])
def test_arrays_numpy_cannot_pass_as_they_are(dtype):
    lib = _add_kernel("float32")
    with pytest.raises(TesseraError, match=r"\.var_A must be an array \(ts\.nd\.array, numpy or another "
                                          r"DLPack array\), got ndarray$"):
        lib(np.ones(16, dtype), np.ones(16, "float32"), np.zeros(16, "float32"))


def test_complex_arrays_reach_the_dtype_check():
    lib = _add_kernel("float32")
    with pytest.raises(ArgumentTypeError, match=r"\.var_A\.dtype is expected to be float32, got complex64$"):
        lib(np.ones(16, "complex64"), np.ones(16, "float32"), np.zeros(16, "float32"))


def test_misaligned_and_oddly_strided_arrays():
    lib = _add_kernel("int32", (4,))
    raw = np.zeros(40, "uint8")
    odd = raw[1:17].view("int32")  # data at an odd address: passed, the kernel reads it
    c = np.zeros(4, "int32")
    lib(odd, np.ones(4, "int32"), c)
    np.testing.assert_array_equal(c, np.ones(4))
    # A stride of 6 bytes is no whole number of int32 elements: neither path can pass it.
    skew = np.lib.stride_tricks.as_strided(raw.view("int32"), (4,), (6,))
    with pytest.raises(TesseraError, match=r"\.var_A must be an array"):
        lib(skew, np.ones(4, "int32"), c)


def test_arrays_of_many_dimensions():
    shape = (2,) * 9  # more than the dimensions the buffer path holds inline
    lib = _add_kernel("float32", shape)
    a = np.arange(512, dtype="float32").reshape(shape)
    c = np.zeros(shape, "float32")
    lib(a, a, c)
    np.testing.assert_array_equal(c, 2 * a)


def test_many_arguments():
    # More arguments than the call holds inline.
    n = 11
    ins = [te.placeholder((4,), "float32", name=f"A{k}") for k in range(n)]
    out = te.compute((4,), lambda i: sum((t[i] for t in ins[1:]), ins[0][i]), name="S")
    lib = ts.build(te.create_prim_func(ins + [out]))
    arrays = [np.full(4, k, "float32") for k in range(n)]
    res = np.zeros(4, "float32")
    lib(*arrays[:5], *(ts.nd.array(x) for x in arrays[5:]), res)
    np.testing.assert_array_equal(res, np.full(4, sum(range(n))))
    with pytest.raises(ArgumentTypeError, match=r"\.var_A9\.dtype is expected to be float32, got int8$"):
        lib(*arrays[:9], np.ones(4, "int8"), arrays[10], res)
