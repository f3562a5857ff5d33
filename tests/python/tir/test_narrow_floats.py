"""float8 / float6 / float4 dtypes: names, T.<dtype>(...) constants, and float8 casts and arithmetic in C checked
against ml_dtypes."""

import ml_dtypes
import numpy as np
import pytest

import tessera as ts
from tessera.error import TesseraError
from tessera.ir import DataType
from tessera.script import tir as T

FLOAT8 = ["float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz",
          "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu"]
NARROW = FLOAT8 + ["float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn"]


@pytest.mark.parametrize("name", NARROW)
def test_dtype_names(name):
    t = DataType(name)
    assert t == name and str(t) == name
    assert t.bits == int(name[5])
    assert t.is_floating and not t.is_float and not t.is_integer
    assert t.is_float8 == name.startswith("float8")
    vec = t.with_lanes(4)
    assert vec == name + "x4" and vec.lanes == 4 and vec.element_of == name
    assert int(t.type_code) == 7 + NARROW.index(name)  # DLPack's codes


def test_unknown_narrow_names_are_refused():
    for bad in ["float8", "float8_e4m3fnx", "float8_e9m9", "float4_e2m1"]:
        with pytest.raises(TypeError):
            DataType(bad)


@pytest.mark.parametrize("name", NARROW)
def test_constructor_prints_and_round_trips(name):
    @T.prim_func
    def func():
        T.evaluate(getattr(T, name)(0.0))

    text = func.script()
    assert f"T.evaluate(T.{name}(0.0))" in text
    ts.ir.assert_structural_equal(func, ts.script.from_source(text))


def _round_trip_func(dtype, n):
    @T.prim_func
    def convert(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), dtype), C: T.Buffer((n,), "float32")):
        for i in range(n):
            B[i] = T.Cast(dtype, A[i])
        for i in range(n):
            C[i] = T.Cast("float32", B[i])

    return convert


def _test_values(dtype):
    t = getattr(ml_dtypes, dtype)
    every = np.arange(256, dtype=np.uint8).view(t).astype(np.float32)
    finite = np.sort(every[np.isfinite(every)])
    halfway = ((finite[1:].astype(np.float64) + finite[:-1]) / 2).astype(np.float32)
    rng = np.random.default_rng(7)
    scaled = rng.standard_normal(512).astype(np.float32) * np.float32(4.0) ** rng.integers(-6, 8, 512)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e30, -1e30, 1e-30], np.float32)
    return np.concatenate([every, halfway, scaled, special]).astype(np.float32)


@pytest.mark.parametrize("dtype", FLOAT8)
def test_casts_in_c_match_ml_dtypes(dtype):
    a = _test_values(dtype)
    lib = ts.build(_round_trip_func(dtype, a.size), target="c")
    b = ts.nd.array(np.zeros(a.size, getattr(ml_dtypes, dtype)))
    c = np.zeros_like(a)
    with np.errstate(invalid="ignore", over="ignore"):
        expect = a.astype(getattr(ml_dtypes, dtype))
    lib(a, b, c)
    got = b.numpy()
    same = (got.view(np.uint8) == expect.view(np.uint8)) | (np.isnan(got.astype(np.float32)) &
                                                            np.isnan(expect.astype(np.float32)))
    assert same.all(), (a[~same][:4], got.view(np.uint8)[~same][:4], expect.view(np.uint8)[~same][:4])
    np.testing.assert_array_equal(c, expect.astype(np.float32))


def test_constants_and_casts_to_other_types():
    @T.prim_func
    def scale(A: T.Buffer((4,), "float8_e4m3fn"), B: T.Buffer((4,), "int32"),
              C: T.Buffer((4,), "float8_e5m2")):
        for i in range(4):
            B[i] = T.Cast("int32", A[i])
            C[i] = T.Cast("float8_e5m2", A[i])
        A[0] = T.float8_e4m3fn(1.5)

    t = ml_dtypes.float8_e4m3fn
    a = ts.nd.array(np.array([3.5, -2.0, 448.0, 0.25], t))
    b = np.zeros(4, "int32")
    c = ts.nd.array(np.zeros(4, ml_dtypes.float8_e5m2))
    ts.build(scale, target="c")(a, b, c)
    np.testing.assert_array_equal(b, [3, -2, 448, 0])
    np.testing.assert_array_equal(c.numpy().astype("float32"),
                                  np.array([3.5, -2.0, 448.0, 0.25], t).astype(ml_dtypes.float8_e5m2).astype("float32"))
    assert float(a.numpy()[0]) == 1.5


def _arith_func(dtype, n):
    @T.prim_func
    def arith(A: T.Buffer((n,), dtype), B: T.Buffer((n,), dtype), S: T.Buffer((n,), dtype),
              D: T.Buffer((n,), dtype), P: T.Buffer((n,), dtype), Q: T.Buffer((n,), dtype),
              M: T.Buffer((n,), dtype), L: T.Buffer((n,), "int32")):
        for i in range(n):
            S[i] = A[i] + B[i]
            D[i] = A[i] - B[i]
            P[i] = A[i] * B[i]
            Q[i] = A[i] / B[i]
            M[i] = T.max(A[i], B[i]) - T.min(A[i], B[i])
            L[i] = T.Cast("int32", A[i] < B[i])

    return arith


@pytest.mark.parametrize("dtype", ["float8_e3m4", "float8_e4m3", "float8_e4m3fn", "float8_e5m2"])
def test_arithmetic_on_float8_is_computed_in_float32(dtype):
    # Each operation reads float32 values, computes in float32 and rounds the result to float8
    # (as TVM legalizes float8 arithmetic); the reference does the same with ml_dtypes.
    t = getattr(ml_dtypes, dtype)
    rng = np.random.default_rng(3)
    n = 257
    a = (rng.standard_normal(n) * 3).astype(t)
    b = (rng.standard_normal(n) * 3).astype(t)
    b[b.astype(np.float32) == 0] = t(1.0)
    a[:3], b[:3] = a[3:6], a[3:6]  # equal operands: a < b false, a - b zero
    outs = [ts.nd.array(np.zeros(n, t)) for _ in range(5)]
    less = np.zeros(n, "int32")
    ts.build(_arith_func(dtype, n), target="c")(ts.nd.array(a), ts.nd.array(b), *outs, less)
    fa, fb = a.astype(np.float32), b.astype(np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        expected = [fa + fb, fa - fb, fa * fb, fa / fb, np.maximum(fa, fb) - np.minimum(fa, fb)]
        # max - min: each side is rounded to float8 first (they are float8 expressions).
        expected[4] = (np.maximum(fa, fb).astype(t).astype(np.float32) -
                       np.minimum(fa, fb).astype(t).astype(np.float32))
        expected = [e.astype(np.float32).astype(t) for e in expected]
    for got, want in zip(outs, expected):
        got = got.numpy()
        same = (got.view(np.uint8) == want.view(np.uint8)) | (
            np.isnan(got.astype(np.float32)) & np.isnan(want.astype(np.float32)))
        assert same.all(), (got[~same][:4], want[~same][:4])
    np.testing.assert_array_equal(less, (fa < fb).astype("int32"))


@pytest.mark.parametrize("dtype", ["float6_e2m3fn", "float4_e2m1fn"])
def test_float6_and_float4_do_not_reach_c(dtype):
    @T.prim_func
    def store(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), dtype)):
        for i in range(4):
            B[i] = T.Cast(dtype, A[i])

    with pytest.raises(TesseraError, match=dtype):
        ts.build(store, target="c")
