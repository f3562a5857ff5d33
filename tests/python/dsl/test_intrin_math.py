"""Math intrinsics on float16/float32/bfloat16 vectors and float16/float32 scalars, compiled
and under PySim, against numpy; S.ceildiv; misuse."""

import math

import numpy as np
import pytest

from tessera.dsl import script as S

from _util import FLOAT_TYPES, expect_diag, lanes, np_dtype, rand, run_both
from tessera.dsl.testing import rand as trand

FUNCS = ["exp", "log", "tanh", "sin", "cos", "rsqrt", "sqrt", "floor", "ceil", "erf", "exp2"]
_erf = np.vectorize(math.erf)
REF = {"exp": np.exp, "log": np.log, "tanh": np.tanh, "sin": np.sin, "cos": np.cos,
       "rsqrt": lambda x: 1 / np.sqrt(x), "sqrt": np.sqrt, "floor": np.floor, "ceil": np.ceil,
       "erf": _erf, "exp2": np.exp2}


def _tolerance(dtype):
    return {"float32": 2e-6, "float16": 2e-3, "bfloat16": 1.6e-2}[dtype]


@pytest.mark.parametrize("dtype", FLOAT_TYPES)
def test_vector_math(dtype):
    n = lanes(dtype)
    k_funcs = [getattr(S, f) for f in FUNCS]

    @S.prim_func
    def k(a: S.ptr(dtype, "global"), out: S.ptr(dtype, "global")):
        x = S.vload(a)
        S.vstore(S.exp(x), out)
        S.vstore(S.log(x), out + n)
        S.vstore(S.tanh(x), out + 2 * n)
        S.vstore(S.sin(x), out + 3 * n)
        S.vstore(S.cos(x), out + 4 * n)
        S.vstore(S.rsqrt(x), out + 5 * n)
        S.vstore(S.sqrt(x), out + 6 * n)
        S.vstore(S.floor(x), out + 7 * n)
        S.vstore(S.ceil(x), out + 8 * n)
        S.vstore(S.erf(x), out + 9 * n)
        S.vstore(S.exp2(x), out + 10 * n)
        S.vstore(S.pow(x, 1.5), out + 11 * n)

    a = trand(n, dtype, low=0.25, high=4.0, enable_corner_values=False)
    out = np.zeros(12 * n, np_dtype(dtype))
    (_, c), (_, s) = run_both(k, a, out)
    x = a.astype(np.float64)
    for got in (c, s):
        g = got.astype(np.float64).reshape(12, n)
        for i, f in enumerate(FUNCS + ["pow"]):
            want = REF[f](x) if f != "pow" else x ** 1.5
            np.testing.assert_allclose(g[i], want, rtol=_tolerance(dtype), atol=1e-6, err_msg=f)
    assert k_funcs


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_scalar_math(dtype):
    @S.prim_func
    def k(a: S.ptr(dtype, "global"), out: S.ptr(dtype, "global"), q: S.ptr("int32", "global"),
          n: S.i32):
        x = a[0]
        out[0] = S.exp(x)
        out[1] = S.sqrt(x)
        out[2] = S.rsqrt(x)
        out[3] = S.floor(x)
        out[4] = S.pow(x, x)
        out[5] = S.tanh(x)
        q[0] = S.ceildiv(n, 4)
        q[1] = S.ceildiv(10, 4)

    a = np.array([1.75], dtype)
    out = np.zeros(6, dtype)
    q = np.zeros(2, "int32")
    (_, c, qc, _), (_, s, qs, _) = run_both(k, a, out, q, 13)
    x = 1.75
    want = [math.exp(x), math.sqrt(x), 1 / math.sqrt(x), 1.0, x ** x, math.tanh(x)]
    for got in (c, s):
        np.testing.assert_allclose(got.astype(np.float64), want, rtol=_tolerance(dtype))
    for got in (qc, qs):
        assert got.tolist() == [4, 3]


def test_misuse():
    @S.prim_func
    def bad_int(a: S.ptr("int32", "global")):
        S.vstore(S.exp(S.vload(a)), a)

    expect_diag(bad_int, "S.exp(", "unsupported type")

    @S.prim_func
    def bad_ceildiv(a: S.ptr("fp32", "global")):
        a[0] = S.ceildiv(a[0], a[1])

    expect_diag(bad_ceildiv, "S.ceildiv(", "integer scalars")

    @S.prim_func
    def zero_div(a: S.ptr("int32", "global")):
        a[0] = S.ceildiv(7, 0)

    expect_diag(zero_div, "S.ceildiv(", "division by zero")


@pytest.mark.parametrize("name", ["isnan", "isinf", "isfinite"])
@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_classification_of_wide_vectors_under_a_mask(dtype, name):
    """A mask computed from a vector of several native parts (19 lanes, 3 native halves) keeps
    every part: each lane's class, under a mask from another vector."""
    n = lanes(dtype)
    wide, odd = 2 * n + 3, n // 2 + 1
    classify = {"isnan": S.isnan, "isinf": S.isinf, "isfinite": S.isfinite}[name]

    @S.prim_func
    def k(a: S.ptr(dtype, "global"), b: S.ptr(dtype, "global"), out: S.ptr(dtype, "global")):
        m = classify(S.vload(a, lanes=wide), S.vload(b, lanes=wide) > 0)
        S.vstore(S.vload(b, lanes=wide), out, m)
        m2 = classify(S.vload(a + wide, lanes=odd), S.vload(b + wide, lanes=odd) > 0)
        S.vstore(S.vload(b + wide, lanes=odd), out + wide, m2)

    total = wide + odd
    a = rand(total, dtype, seed=20)
    a[::3] = np.nan
    a[1::5] = np.inf
    a[2::7] = -np.inf
    b = rand(total, dtype, seed=21)
    with np.errstate(invalid="ignore"):
        chosen = (b > 0) & getattr(np, name)(a)
    expected = np.where(chosen, b, 0).astype(np_dtype(dtype))
    for r in run_both(k, a, b, np.zeros(total, np_dtype(dtype))):
        np.testing.assert_array_equal(r[2], expected)
