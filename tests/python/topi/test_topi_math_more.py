"""The operators no other file of this folder exercises: the remaining trigonometric and
hyperbolic functions, exp2, log_add_exp, elemwise_sum, truncating division and remainder, and
conv1d in NWC layout, each against numpy (built for "c", or for "cuda" on the emulator with
TESSERA_TOPI_TARGET=cuda)."""

import numpy as np
import pytest

from tessera import te, topi

from topi_testing import Kernels, random, tol

K = Kernels()
SHAPE = (9, 7)

# name -> (numpy function, input range inside the function's domain)
UNARY = {
    "tan": (np.tan, (-1.2, 1.2)),
    "asin": (np.arcsin, (-0.99, 0.99)),
    "acos": (np.arccos, (-0.99, 0.99)),
    "atanh": (np.arctanh, (-0.95, 0.95)),
    "asinh": (np.arcsinh, (-4, 4)),
    "acosh": (np.arccosh, (1.0, 5)),
    "sinh": (np.sinh, (-4, 4)),
    "cosh": (np.cosh, (-4, 4)),
    "exp2": (np.exp2, (-10, 10)),
}
UNARY_CASES = [(n, d) for n in UNARY for d in ("float32", "float64")]

for _n, _d in UNARY_CASES:
    _A = te.placeholder(SHAPE, _d, name="A")
    K.add(f"{_n}_{_d}", [_A], getattr(topi, _n)(_A))


@pytest.mark.parametrize("name,dtype", UNARY_CASES)
def test_unary(name, dtype):
    ref, (lo, hi) = UNARY[name]
    a = random(SHAPE, dtype, lo, hi, seed=3)
    out = K.run(f"{name}_{dtype}", a)
    assert out.dtype == np.dtype(dtype)
    np.testing.assert_allclose(out, ref(a.astype("float64")).astype(dtype), **tol(dtype))


for _d in ("float32", "float64"):
    _A = te.placeholder(SHAPE, _d, name="A")
    _B = te.placeholder(SHAPE, _d, name="B")
    K.add(f"log_add_exp_{_d}", [_A, _B], topi.log_add_exp(_A, _B))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_log_add_exp(dtype):
    a = random(SHAPE, dtype, -30, 30, seed=1)
    b = random(SHAPE, dtype, -30, 30, seed=2)
    b[0, :3] = a[0, :3]  # equal arguments: log(2) + a
    a[1, 0], b[1, 0] = 80.0, -80.0  # far apart: the larger argument
    out = K.run(f"log_add_exp_{dtype}", a, b)
    np.testing.assert_allclose(out, np.logaddexp(a, b), **tol(dtype))


_XS = [te.placeholder(SHAPE, "float32", name=f"X{i}") for i in range(3)]
K.add("elemwise_sum", _XS, topi.elemwise_sum(_XS))
_IS = [te.placeholder(SHAPE, "int16", name=f"I{i}") for i in range(4)]
K.add("elemwise_sum_int16", _IS, topi.elemwise_sum(_IS))


def test_elemwise_sum():
    xs = [random(SHAPE, "float32", seed=s) for s in range(3)]
    np.testing.assert_allclose(K.run("elemwise_sum", *xs), xs[0] + xs[1] + xs[2], rtol=1e-6, atol=1e-6)
    ints = [random(SHAPE, "int16", -50, 50, seed=s) for s in range(4)]
    out = K.run("elemwise_sum_int16", *ints)
    assert out.dtype == np.int16
    np.testing.assert_array_equal(out, sum(ints).astype("int16"))


TRUNC_DTYPES = ("int32", "int8", "int64")
for _d in TRUNC_DTYPES:
    _A = te.placeholder(SHAPE, _d, name="A")
    _B = te.placeholder(SHAPE, _d, name="B")
    K.add(f"trunc_divide_{_d}", [_A, _B], topi.trunc_divide(_A, _B))
    K.add(f"trunc_mod_{_d}", [_A, _B], topi.trunc_mod(_A, _B))


def _signed_operands(dtype):
    a = random(SHAPE, dtype, -25, 25, seed=4)
    b = random(SHAPE, dtype, -6, 6, seed=5)
    b[b == 0] = 3
    # every sign combination, with and without a remainder
    a[0, :4], b[0, :4] = [7, -7, 7, -7], [2, 2, -2, -2]
    a[1, :2], b[1, :2] = [6, -6], [3, 3]
    return a, b


@pytest.mark.parametrize("dtype", TRUNC_DTYPES)
def test_trunc_divide_rounds_toward_zero(dtype):
    a, b = _signed_operands(dtype)
    expected = (np.abs(a) // np.abs(b)) * np.sign(a) * np.sign(b)
    out = K.run(f"trunc_divide_{dtype}", a, b)
    assert out.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(out, expected.astype(dtype))
    assert list(out[0, :4]) == [3, -3, -3, 3]


@pytest.mark.parametrize("dtype", TRUNC_DTYPES)
def test_trunc_mod_takes_the_dividends_sign(dtype):
    a, b = _signed_operands(dtype)
    out = K.run(f"trunc_mod_{dtype}", a, b)
    assert out.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(out, np.fmod(a, b))
    assert list(out[0, :4]) == [1, -1, 1, -1]


def _conv1d_nwc_reference(x, w, stride, pad, dilation):
    """x: (batch, width, in channels), w: (kernel width, in channels, out channels)."""
    x = np.pad(x, ((0, 0), (pad, pad), (0, 0)))
    kw = w.shape[0]
    span = (kw - 1) * dilation + 1
    out_w = (x.shape[1] - span) // stride + 1
    out = np.zeros((x.shape[0], out_w, w.shape[2]), "float64")
    for k in range(kw):
        taps = x[:, k * dilation:k * dilation + (out_w - 1) * stride + 1:stride, :]
        out += np.einsum("bwc,co->bwo", taps, w[k])
    return out


CONV1D = [(1, 0, 1), (2, 1, 1), (1, 2, 2)]  # stride, padding, dilation
for _s, _p, _dl in CONV1D:
    _X = te.placeholder((2, 19, 5), "float32", name="X")
    _W = te.placeholder((3, 5, 4), "float32", name="W")
    K.add(f"conv1d_nwc_{_s}_{_p}_{_dl}", [_X, _W], topi.nn.conv1d_nwc(_X, _W, _s, _p, _dl))


@pytest.mark.parametrize("stride,pad,dilation", CONV1D)
def test_conv1d_nwc(stride, pad, dilation):
    x = random((2, 19, 5), "float32", seed=6)
    w = random((3, 5, 4), "float32", seed=7)
    out = K.run(f"conv1d_nwc_{stride}_{pad}_{dilation}", x, w)
    expected = _conv1d_nwc_reference(x.astype("float64"), w.astype("float64"), stride, pad, dilation)
    assert out.shape == expected.shape
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)
