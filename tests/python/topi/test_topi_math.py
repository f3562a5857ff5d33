"""Elementwise operators against numpy, float32/float16 and integer dtypes."""

import math

import numpy as np
import pytest

from tessera import te, topi
from tessera.error import TesseraTypeError

from topi_testing import Kernels, random, tol

K = Kernels()
SHAPE = (13, 5)

FLOAT_UNARY = {
    "exp": (np.exp, (-3, 3)),
    "log": (np.log, (0.1, 4)),
    "log2": (np.log2, (0.1, 4)),
    "log10": (np.log10, (0.1, 4)),
    "sqrt": (np.sqrt, (0.0, 4)),
    "rsqrt": (lambda x: 1 / np.sqrt(x), (0.1, 4)),
    "sigmoid": (lambda x: 1 / (1 + np.exp(-x)), (-5, 5)),
    "tanh": (np.tanh, (-3, 3)),
    "erf": (np.vectorize(math.erf), (-2, 2)),
    "sin": (np.sin, (-3, 3)),
    "cos": (np.cos, (-3, 3)),
    "atan": (np.arctan, (-3, 3)),
    "floor": (np.floor, (-3, 3)),
    "ceil": (np.ceil, (-3, 3)),
    "round": (np.round, (-3, 3)),
    "trunc": (np.trunc, (-3, 3)),
    "abs": (np.abs, (-3, 3)),
    "negative": (np.negative, (-3, 3)),
    "sign": (np.sign, (-3, 3)),
    "identity": (lambda x: x, (-3, 3)),
    "fast_exp": (np.exp, (-80, 80)),
    "fast_tanh": (np.tanh, (-3, 3)),
    "fast_erf": (np.vectorize(math.erf), (-2, 2)),
}
INT_UNARY = {
    "abs": np.abs,
    "negative": np.negative,
    "sign": np.sign,
    "identity": lambda x: x,
    "floor": lambda x: x,
    "round": lambda x: x,
}
FLOAT_CASES = [
    (n, d)
    for n in FLOAT_UNARY
    for d in ("float32", "float16")
    if not (n == "fast_exp" and d == "float16")
]
INT_CASES = [(n, d) for n in INT_UNARY for d in ("int32", "int8")] + [
    ("abs", "uint8"),
    ("identity", "uint8"),
]

for _n, _d in FLOAT_CASES + INT_CASES:
    _A = te.placeholder(SHAPE, _d, name="A")
    K.add(f"{_n}_{_d}", [_A], getattr(topi, _n)(_A))


@pytest.mark.parametrize("name,dtype", FLOAT_CASES)
def test_float_unary(name, dtype):
    ref, (lo, hi) = FLOAT_UNARY[name]
    a = random(SHAPE, dtype, lo, hi)
    if name == "round":
        a[0, :3] = np.array([0.5, 1.5, -2.5], dtype)  # halfway cases round to even, as numpy
    out = K.run(f"{name}_{dtype}", a)
    assert out.dtype == np.dtype(dtype)
    expected = ref(a.astype("float64")).astype(dtype)
    t = tol(dtype) if name != "fast_exp" else dict(rtol=1e-5, atol=0)
    np.testing.assert_allclose(out.astype("float64"), expected.astype("float64"), **t)


@pytest.mark.parametrize("name,dtype", INT_CASES)
def test_int_unary(name, dtype):
    a = random(SHAPE, dtype)
    out = K.run(f"{name}_{dtype}", a)
    assert out.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(out, INT_UNARY[name](a).astype(dtype))


# log/sqrt of integers compute in float32, as in TVM.
_I = te.placeholder((7,), "int32", name="I")
K.add("sqrt_int", [_I], topi.sqrt(_I))
K.add("log_int", [_I], topi.log(_I))


def test_int_input_becomes_float32():
    a = np.arange(1, 8, dtype="int32")
    np.testing.assert_allclose(K.run("sqrt_int", a), np.sqrt(a).astype("float32"), rtol=1e-6)
    np.testing.assert_allclose(K.run("log_int", a), np.log(a).astype("float32"), rtol=1e-6)


_F = te.placeholder((7,), "float32", name="F")
K.add("isnan", [_F], topi.isnan(_F))
K.add("isinf", [_F], topi.isinf(_F))
K.add("isfinite", [_F], topi.isfinite(_F))


@pytest.mark.parametrize("name", ["isnan", "isinf", "isfinite"])
def test_classification(name):
    a = np.array([0.0, np.nan, np.inf, -np.inf, 1.5, -0.0, np.nan], "float32")
    out = K.run(name, a)
    assert out.dtype == np.bool_
    np.testing.assert_array_equal(out, getattr(np, name)(a))


CLIPS = [
    ("float32", -0.5, 1.25),
    ("float16", -1.0, 0.5),
    ("int32", -3, 4),
    ("int8", 0, 5),
    ("uint8", 2, 6),
]
for _d, _lo, _hi in CLIPS:
    _A = te.placeholder((7,), _d, name="A")
    K.add(f"clip_{_d}", [_A], topi.clip(_A, _lo, _hi))


@pytest.mark.parametrize("dtype,lo,hi", CLIPS)
def test_clip(dtype, lo, hi):
    a = random((7,), dtype)
    np.testing.assert_array_equal(K.run(f"clip_{dtype}", a), np.clip(a, lo, hi).astype(dtype))


CASTS = [
    ("float32", "int32"),
    ("float32", "float16"),
    ("float16", "float32"),
    ("int32", "int8"),
    ("int8", "float32"),
    ("uint8", "int32"),
    ("float32", "bool"),
    ("bool", "int32"),
    ("int32", "uint8"),
]
for _s, _t in CASTS:
    _A = te.placeholder((13,), _s, name="A")
    K.add(f"cast_{_s}_{_t}", [_A], topi.cast(_A, _t))


@pytest.mark.parametrize("src,dst", CASTS)
def test_cast(src, dst):
    a = random((13,), src, -100, 100)
    if src == "float32":
        a[:3] = [0.0, -0.0, 2.75]
    out = K.run(f"cast_{src}_{dst}", a)
    assert out.dtype == np.dtype(dst)
    np.testing.assert_array_equal(out, a.astype(dst))


_S = te.placeholder((7,), "int32", name="S")
K.add("left_shift", [_S], topi.left_shift(_S, 3))
K.add("right_shift", [_S], topi.right_shift(_S, 1))
K.add("reinterpret", [_F], topi.reinterpret(_F, "int32"))


def test_shifts_and_reinterpret():
    a = np.arange(-3, 4, dtype="int32")
    np.testing.assert_array_equal(K.run("left_shift", a), a << 3)
    np.testing.assert_array_equal(K.run("right_shift", a), a >> 1)
    f = random((7,), "float32")
    np.testing.assert_array_equal(K.run("reinterpret", f), f.view("int32"))


def test_expression_cast_and_errors():
    assert topi.cast(te.const(1.5), "int32").dtype == "int32"
    A = te.placeholder((4,), "int32", name="A")
    with pytest.raises(TesseraTypeError, match="floating-point"):
        topi.exp(A)
    with pytest.raises(TesseraTypeError, match="te tensor"):
        topi.exp([1.0])
    with pytest.raises(TesseraTypeError, match="widths"):
        topi.reinterpret(A, "float16")
