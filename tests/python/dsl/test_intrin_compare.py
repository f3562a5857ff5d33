"""Compare, classify and reduce intrinsics on every dtype they accept, with masks (inactive
lanes False, or r=), compiled and under PySim, against numpy; vrpmax return_idx needs X3."""

import numpy as np
import pytest

from tessera.dsl import BuildManager, script as S

from _util import (ALL_TYPES, FLOAT_TYPES, INT_TYPES, check_active, expect_diag, lanes, mask_bits,
                   np_dtype, rand, run_both)

MASK = "3T1F2T"


def _data(dtype, n, seed):
    if dtype in INT_TYPES:
        return rand(n, dtype, seed=seed)
    return rand(n, dtype, seed=seed, low=-8.0, high=8.0)


@pytest.mark.parametrize("dtype", ALL_TYPES)
def test_compare_extremes_reduce(dtype):
    n = lanes(dtype)
    is_float = dtype in FLOAT_TYPES

    @S.prim_func
    def k(a: S.ptr(dtype, "global"), b: S.ptr(dtype, "global"), out: S.ptr(dtype, "global")):
        x = S.vload(a)
        y = S.vload(b)
        S.vstore(S.vsel(x, y, S.vceq(x, y)), out)
        S.vstore(S.vsel(x, y, S.vcneq(x, y, mask=MASK)), out + n)
        S.vstore(S.vsel(x, y, S.vcge(x, y)), out + 2 * n)
        S.vstore(S.vsel(x, y, S.vcgt(x, y, mask=MASK)), out + 3 * n)
        S.vstore(S.vsel(x, y, S.vcle(x, y)), out + 4 * n)
        S.vstore(S.vsel(x, y, S.vclt(x, 0)), out + 5 * n)
        S.vstore(S.max(x, y, mask=MASK, r=x), out + 6 * n)
        S.vstore(S.min(x, y), out + 7 * n)
        S.vstore(S.vrpmax(x, mask=MASK), out + 8 * n)
        S.vstore(S.vrpmin(x), out + 9 * n)
        S.vstore(S.vmaxh(x, y), out + 10 * n)
        S.vstore(S.vminh(x, y), out + 11 * n)
        if dtype == "bfloat16":  # no bfloat16 scalar arithmetic (as in Compass): in float32
            out[12 * n] = S.max(S.fp32(a[0]), S.fp32(b[0]))
            out[12 * n + 1] = S.min(S.fp32(a[0]), S.fp32(b[0]))
        else:
            out[12 * n] = S.max(a[0], b[0])
            out[12 * n + 1] = S.min(a[0], b[0])

    a, b = _data(dtype, n, 31), _data(dtype, n, 32)
    a[:2] = b[:2]
    out = np.zeros(12 * n + 2, np_dtype(dtype))
    (_, _, c), (_, _, s) = run_both(k, a, b, out)
    x, y = a.astype(np.float64), b.astype(np.float64)
    m = mask_bits(MASK, n)
    sel = lambda cond: np.where(cond, a, b)  # noqa: E731
    red_max = np.zeros(n, np.float64)
    red_max[0] = x[m].max()
    red_min = np.zeros(n, np.float64)
    red_min[0] = x.min()
    pair = lambda v, fn: fn(v[0::2], v[1::2])  # noqa: E731
    rows = [sel(x == y), sel(m & (x != y)), sel(x >= y), sel(m & (x > y)), sel(x <= y), sel(x < 0),
            np.where(m, np.maximum(x, y), x), np.minimum(x, y), red_max, red_min,
            np.concatenate([pair(x, np.maximum), pair(y, np.maximum)]),
            np.concatenate([pair(x, np.minimum), pair(y, np.minimum)]),
            [max(x[0], y[0]), min(x[0], y[0])]]
    expected = np.concatenate([np.asarray(r, np.float64) for r in rows]).astype(np_dtype(dtype))
    active = np.ones(12 * n + 2, bool)
    active[8 * n + 1:9 * n] = False  # lanes above 0 of a reduction are undefined
    active[9 * n + 1:10 * n] = False
    check_active([c, s], expected, active)


@pytest.mark.parametrize("dtype", FLOAT_TYPES)
def test_classify(dtype):
    n = lanes(dtype)

    @S.prim_func
    def k(a: S.ptr(dtype, "global"), out: S.ptr(dtype, "global")):
        x = S.vload(a)
        z = S.cast(0, dtype)
        S.vstore(S.vsel(x, z, S.isnan(x)), out)
        S.vstore(S.vsel(x, z, S.isinf(x, mask=MASK)), out + n)
        S.vstore(S.vsel(x, z, S.isfinite(x)), out + 2 * n)

    a = _data(dtype, n, 33)
    a[1], a[2], a[3] = np.nan, np.inf, -np.inf
    out = np.zeros(3 * n, np_dtype(dtype))
    (_, c), (_, s) = run_both(k, a, out)
    m = mask_bits(MASK, n)
    z = np.zeros(n, np_dtype(dtype))
    expected = np.concatenate([np.where(np.isnan(a), a, z), np.where(m & np.isinf(a), a, z),
                               np.where(np.isfinite(a), a, z)])
    check_active([c, s], expected)


@S.prim_func
def _argmax(a: S.ptr("int32", "global"), out: S.ptr("int32", "global")):
    S.vstore(S.vrpmax(S.vload(a), return_idx=True), out)


def test_return_idx_x3_only():
    a = np.array([3, 9, 1, 9, -4, 0, 2, 5], "int32")
    out = np.zeros(8, "int32")
    BuildManager(target="X3P_1304").build(_argmax)(a, out)
    assert out[:2].tolist() == [9, 1]
    ref = np.zeros(8, "int32")
    _argmax(a, ref)
    assert ref[:2].tolist() == [9, 1]
    expect_diag(_argmax, "S.vrpmax(", "needs an X3 target")


@pytest.mark.parametrize("dtype", ["float16", "float32", "bfloat16"])
@pytest.mark.parametrize("name", ["vrpmax", "vrpmin"])
def test_return_idx_on_floats_holds_the_index_bits(dtype, name):
    # As Compass: lane 1 of a float result is the float whose bits are the index.
    fn = getattr(S, name)

    @S.prim_func
    def k(a: S.ptr(dtype, "global"), out: S.ptr(dtype, "global")):
        S.vstore(fn(S.vload(a), "3F5T" if dtype == "float32" else "4F12T", return_idx=True), out)

    n = lanes(dtype)
    a = rand(n, dtype, seed=12, low=-50.0, high=50.0)
    a[2] = 99.0 if name == "vrpmax" else -99.0  # inactive: ignored
    best = 6 if dtype == "float32" else 9
    a[best] = 77.0 if name == "vrpmax" else -77.0
    out = np.zeros(n, a.dtype)
    BuildManager(target="X3P_1304").build(k)(a, out)
    ref = np.zeros(n, a.dtype)
    k(a, ref)
    bits = f"uint{a.dtype.itemsize * 8}"
    for got in (out, ref):
        assert float(got[0]) == float(a[best])
        assert int(got[1:2].view(bits)[0]) == best


def test_pairwise_bfloat16_multiple_width():
    """vmaxh/vminh on bfloat16x32 (two native parts per operand), compiled and PySim."""
    @S.prim_func
    def k(a: S.ptr("bfloat16", "global"), b: S.ptr("bfloat16", "global"),
          out: S.ptr("bfloat16", "global")):
        x = S.vload(a, lanes=32)
        y = S.vload(b, lanes=32)
        S.vstore(S.vmaxh(x, y), out)
        S.vstore(S.vminh(x, y), out + 32)

    a, b = _data("bfloat16", 32, 41), _data("bfloat16", 32, 42)
    out = np.zeros(64, np_dtype("bfloat16"))
    (_, _, c), (_, _, s) = run_both(k, a, b, out)
    x, y = a.astype(np.float64), b.astype(np.float64)

    pair = lambda v, fn: fn(v[0::2], v[1::2])  # noqa: E731
    pairwise = lambda fn: np.concatenate([pair(x, fn), pair(y, fn)])  # noqa: E731
    expected = np.concatenate([pairwise(np.maximum), pairwise(np.minimum)]).astype(np_dtype("bfloat16"))
    check_active([c, s], expected)


def test_misuse():
    @S.prim_func
    def bad_pairwise(a: S.ptr("bfloat16", "global")):
        S.vstore(S.vmaxh(S.vload(a, lanes=24), S.vload(a, lanes=24)), a)

    expect_diag(bad_pairwise, "S.vmaxh(", "multiple-width")

    @S.prim_func
    def bad_pair_types(a: S.ptr("bfloat16", "global"), b: S.ptr("float16", "global")):
        S.vstore(S.vminh(S.vload(a), S.vload(b)), a)

    expect_diag(bad_pair_types, "S.vminh(", "mismatch")

    @S.prim_func
    def bad_types(a: S.ptr("int16", "global"), b: S.ptr("int32", "global")):
        m = S.vceq(S.vload(a), S.vload(b))

    expect_diag(bad_types, "S.vceq(", "mismatch")

    @S.prim_func
    def bad_isnan(a: S.ptr("int32", "global")):
        m = S.isnan(S.vload(a))

    expect_diag(bad_isnan, "S.isnan(", "unsupported type")

    @S.prim_func
    def bad_width(a: S.ptr("int32", "global")):
        S.vstore(S.vrpmax(S.vload(a, lanes=12)), a)

    expect_diag(bad_width, "S.vrpmax(", "of the native width only")


def test_misuse_immediates():
    @S.prim_func
    def bad_imm(a: S.ptr("int8", "global")):
        S.vstore(S.max(S.vload(a), 1000), a)

    expect_diag(bad_imm, "S.max(", "the literal 1000 fits none of")

    @S.prim_func
    def bad_flag(a: S.ptr("int32", "global")):
        S.vstore(S.vrpmin(S.vload(a), return_idx=5), a)

    expect_diag(bad_flag, "S.vrpmin(", "return_idx")
