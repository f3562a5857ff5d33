"""Operators on 8- and 16-bit integers (and float16 where they select) with no schedule: selects,
compares and conversions on narrow vector lanes, against numpy over each type's whole range, on
shapes whose element count is a whole number of vectors with rows that are not (96 x 100), and on
shapes that leave a tail (37 x 203)."""

import numpy as np
import pytest

from tessera import te, topi

from topi_testing import Kernels

K = Kernels()
NARROW = ("int8", "uint8", "int16", "uint16")
SHAPES = ((96, 100), (37, 203))
CASTS = ("float32", "float64", "int32", "int64", "int8")


def _name(*parts):
    return "_".join(str(p) for p in parts).replace(" ", "")


def _signed(dtype):
    return not dtype.startswith("uint")


for _dt in NARROW:
    for _shape in SHAPES:
        _A = te.placeholder(_shape, _dt, name="A")
        _B = te.placeholder(_shape, _dt, name="B")
        _C = te.placeholder(_shape, "bool", name="C")
        K.add(_name("abs", _dt, _shape), [_A], topi.abs(_A))
        K.add(_name("sign", _dt, _shape), [_A], topi.sign(_A))
        K.add(_name("maximum", _dt, _shape), [_A, _B], topi.maximum(_A, _B))
        K.add(_name("minimum", _dt, _shape), [_A, _B], topi.minimum(_A, _B))
        K.add(_name("relu", _dt, _shape), [_A], topi.nn.relu(_A))
        K.add(_name("clip", _dt, _shape), [_A], topi.clip(_A, 3 if not _signed(_dt) else -50, 100))
        K.add(_name("where", _dt, _shape), [_C, _A, _B], topi.where(_C, _A, _B))
        K.add(_name("greater", _dt, _shape), [_A, _B],
              topi.where(topi.greater(_A, _B), _A, _B))
        for _to in CASTS:
            if _to != _dt:
                K.add(_name("cast", _dt, _to, _shape), [_A], topi.cast(_A, _to))
        K.add(_name("eye", _dt, _shape), [], topi.eye(_shape[0], _shape[1], 2, dtype=_dt))
    for _from in ("float32", "float64"):
        _F = te.placeholder(SHAPES[0], _from, name="F")
        K.add(_name("cast", _from, _dt), [_F], topi.cast(_F, _dt))
_H = te.placeholder(SHAPES[0], "float16", name="H")
_G = te.placeholder(SHAPES[0], "float16", name="G")
_HC = te.placeholder(SHAPES[0], "bool", name="HC")
K.add("where_float16", [_HC, _H, _G], topi.where(_HC, _H, _G))
K.add("sign_float16", [_H], topi.sign(_H))


def _data(shape, dtype, seed):
    info = np.iinfo(dtype)
    rng = np.random.default_rng(seed)
    a = rng.integers(info.min, int(info.max) + 1, shape, dtype=dtype)
    a.flat[:3] = [info.min, info.max, 0]
    return a


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", NARROW)
def test_selects_and_compares(dtype, shape):
    a, b = _data(shape, dtype, 1), _data(shape, dtype, 2)
    b.flat[::7] = a.flat[::7]  # ties
    c = np.random.default_rng(3).random(shape) < 0.5
    np.testing.assert_array_equal(K.run(_name("abs", dtype, shape), a), np.abs(a))  # wraps
    np.testing.assert_array_equal(K.run(_name("sign", dtype, shape), a), np.sign(a))
    np.testing.assert_array_equal(K.run(_name("maximum", dtype, shape), a, b), np.maximum(a, b))
    np.testing.assert_array_equal(K.run(_name("minimum", dtype, shape), a, b), np.minimum(a, b))
    np.testing.assert_array_equal(K.run(_name("relu", dtype, shape), a),
                                  np.maximum(a, np.zeros((), dtype)))
    lo = 3 if not _signed(dtype) else -50
    np.testing.assert_array_equal(K.run(_name("clip", dtype, shape), a), np.clip(a, lo, 100))
    np.testing.assert_array_equal(K.run(_name("where", dtype, shape), c, a, b), np.where(c, a, b))
    np.testing.assert_array_equal(K.run(_name("greater", dtype, shape), a, b),
                                  np.where(a > b, a, b))


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", NARROW)
def test_casts_from_narrow_integers(dtype, shape):
    a = _data(shape, dtype, 4)
    for to in CASTS:
        if to != dtype:
            np.testing.assert_array_equal(K.run(_name("cast", dtype, to, shape), a), a.astype(to),
                                          err_msg=to)


@pytest.mark.parametrize("src", ["float32", "float64"])
@pytest.mark.parametrize("dtype", NARROW)
def test_casts_of_floats_to_narrow_integers(src, dtype):
    info = np.iinfo(dtype)
    rng = np.random.default_rng(5)
    # values in the destination's range (C leaves the others undefined), fractions truncated
    f = rng.uniform(info.min, info.max, SHAPES[0]).astype(src)
    f.flat[:4] = [info.min, info.max, 0.0, 0.9]
    np.testing.assert_array_equal(K.run(_name("cast", src, dtype), f), f.astype(dtype))


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", NARROW)
def test_eye(dtype, shape):
    np.testing.assert_array_equal(K.run(_name("eye", dtype, shape)),
                                  np.eye(shape[0], shape[1], 2, dtype=dtype))


def test_float16_selects_keep_every_bit():
    rng = np.random.default_rng(6)
    h = rng.standard_normal(SHAPES[0]).astype("float16")
    g = rng.standard_normal(SHAPES[0]).astype("float16")
    h.flat[:4] = [np.inf, -np.inf, -0.0, np.nan]
    g.flat[:4] = [np.nan, 0.0, -0.0, 1.0]
    c = rng.random(SHAPES[0]) < 0.5
    c.flat[:4] = [True, False, True, True]
    got = K.run("where_float16", c, h, g)
    np.testing.assert_array_equal(got.view("int16"), np.where(c, h, g).view("int16"))
    s = K.run("sign_float16", h[:, :].copy())
    np.testing.assert_array_equal(s[np.isfinite(h)], np.sign(h)[np.isfinite(h)])
