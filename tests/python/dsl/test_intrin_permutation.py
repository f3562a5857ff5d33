"""Permutation intrinsics on every dtype, compiled and under PySim, against numpy; misuse."""

import numpy as np
import pytest

from tessera.dsl import script as S
from tessera.dsl.pysim import PySimIndexError
from tessera.error import TesseraRuntimeError

from _util import (ALL_TYPES, INT_TYPES, build, check_active, expect_diag, lanes, line_of, mask_bits, np_dtype,
                   rand, run_both)

MASK = "2T2F1T"


def _data(dtype, n, seed):
    if dtype in INT_TYPES:
        return rand(n, dtype, seed=seed)
    return rand(n, dtype, seed=seed, low=-8.0, high=8.0)


@pytest.mark.parametrize("dtype", ALL_TYPES)
def test_permutations(dtype):
    n = lanes(dtype)
    bits = np_dtype(dtype).itemsize * 8
    itype = f"uint{bits}"

    @S.prim_func
    def k(a: S.ptr(dtype, "global"), b: S.ptr(dtype, "global"), idx: S.ptr(itype, "global"),
          out: S.ptr(dtype, "global"), shift: S.i32):
        x = S.vload(a)
        y = S.vload(b)
        S.vstore(S.vrevs(x), out)
        S.vstore(S.vzip(x, y, part="low"), out + n)
        S.vstore(S.vzip(x, y, part="odd"), out + 2 * n)
        S.vstore(S.vsldl(x, y, 3), out + 3 * n)
        S.vstore(S.vreplic(x, 2), out + 4 * n)
        S.vstore(S.vshfl(x, 3), out + 5 * n)
        S.vstore(S.vshfl(x, shift), out + 6 * n)
        S.vstore(S.vtbl((x, y), S.vload(idx)), out + 7 * n)
        S.vstore(S.vtbl((x, y, x, y), S.vload(idx)), out + 8 * n)
        S.vstore(S.vcompt(x, MASK), out + 9 * n)
        S.vstore(S.vcompc(x, y, MASK), out + 10 * n)
        S.vstore(S.vbcast(a[1]), out + 11 * n)
        w = S.vconcat((x, y))
        S.vstore(w, out + 12 * n)
        lo, hi = S.vsplit(S.vconcat((y, x, y, x), part="even"))
        S.vstore(lo, out + 14 * n)
        S.vstore(hi, out + 15 * n)
        S.vstore(S.vzip(x, y), out + 16 * n)

    a, b = _data(dtype, n, 41), _data(dtype, n, 42)
    idx = rand(n, itype, seed=43, low=0, high=5 * n)
    out = np.zeros(18 * n, np_dtype(dtype))
    (_, _, _, c, _), (_, _, _, s, _) = run_both(k, a, b, idx, out, 5)
    m = mask_bits(MASK, n)
    h = n // 2
    zip_ = lambda p, q: np.stack([p, q], 1).reshape(-1)  # noqa: E731
    table2 = np.concatenate([a, b])
    tbl2 = np.where(idx < 2 * n, table2[np.minimum(idx, 2 * n - 1)], 0)
    tbl4 = np.where(idx < 4 * n, np.concatenate([table2, table2])[np.minimum(idx, 4 * n - 1)], 0)
    packed = a[m]
    rows = [a[::-1], zip_(a[:h], b[:h]), zip_(a[1::2], b[1::2]), np.concatenate([a[3:], b[:3]]),
            np.full(n, a[2]), np.roll(a, -3), np.roll(a, -5), tbl2, tbl4,
            np.concatenate([packed, np.zeros(n - packed.size)]),
            np.concatenate([packed, b[:n - packed.size]]), np.full(n, a[1]), a, b,
            b[0::2].tolist() + a[0::2].tolist(), b[0::2].tolist() + a[0::2].tolist(), zip_(a, b)]
    expected = np.concatenate([np.asarray(r, np.float64) for r in rows]).astype(np_dtype(dtype))
    check_active([c, s], expected)


def test_mask_permutations():
    @S.prim_func
    def k(a: S.ptr("int32", "global"), out: S.ptr("int32", "global")):
        x = S.vload(a)
        m = S.vrevs(x > 0)
        S.vstore(S.vsel(x, 0, m), out)
        S.vstore(S.vsel(S.vload(a, lanes=16), 0, S.vconcat((x > 0, x < 0))), out + 8)

    a = rand(16, "int32", seed=44)
    out = np.zeros(24, "int32")
    (_, c), (_, s) = run_both(k, a, out)
    x = a[:8]
    both = np.concatenate([x > 0, x < 0])
    expected = np.concatenate([np.where((x > 0)[::-1], x, 0), np.where(both, a, 0)])
    check_active([c, s], expected.astype("int32"))


@pytest.mark.parametrize("dtype", ALL_TYPES)
def test_vsplit_mask(dtype):
    """A multiple-width mask (a comparison of 2n lanes) splits into native masks that control
    the native parts of the data; compiled and PySim against numpy."""
    n = lanes(dtype)

    @S.prim_func
    def k(a: S.ptr(dtype, "global"), b: S.ptr(dtype, "global"), out: S.ptr(dtype, "global")):
        x = S.vload(a, lanes=2 * n)
        y = S.vload(b, lanes=2 * n)
        lo, hi = S.vsplit(x > y)
        xl, xh = S.vsplit(x)
        yl, yh = S.vsplit(y)
        S.vstore(S.vsel(xl, yl, lo), out)
        S.vstore(S.vsel(xh, yh, hi), out + n)
        S.vstore(xl, out + 2 * n, mask=hi)
        ml, mh = S.vsplit(S.const_mask("3T5F" * (n // 4)))  # no data: parts of 32, 16 or 8
        S.vstore(S.vsel(xl, yl, ml), out + 3 * n)
        m4 = S.vload(a, lanes=4 * n) > S.vload(b, lanes=4 * n)  # a let: parts of n lanes
        q0, q1, q2, q3 = S.vsplit(m4)
        S.vstore(S.vsel(xl, yl, q3), out + 4 * n)

    a, b = _data(dtype, 4 * n, 51), _data(dtype, 4 * n, 52)
    out = np.zeros(5 * n, np_dtype(dtype))
    out[:] = a[0]
    (_, _, c), (_, _, s) = run_both(k, a, b, out)
    gt = a.astype(np.float64) > b.astype(np.float64)
    stored = np.where(gt[n:2 * n], a[:n], out[2 * n:3 * n])
    const = np.arange(n) % 8 < 3
    sel_const = np.where(const, a[:n], b[:n])
    expected = np.concatenate([np.where(gt[:n], a[:n], b[:n]), np.where(gt[n:2 * n], a[n:2 * n], b[n:2 * n]),
                               stored, sel_const, np.where(gt[3 * n:], a[:n], b[:n])])
    check_active([c, s], expected)


def test_misuse():
    @S.prim_func
    def bad_split_mask(a: S.ptr("int32", "global")):
        lo, hi = S.vsplit(S.vload(a) > 0)

    expect_diag(bad_split_mask, "S.vsplit(", "multiple-width mask")

    @S.prim_func
    def bad_tbl(a: S.ptr("int32", "global"), i: S.ptr("int16", "global")):
        S.vstore(S.vtbl((S.vload(a), S.vload(a)), S.vload(i)), a)

    expect_diag(bad_tbl, "S.vtbl(", "Argument type mismatch")

    @S.prim_func
    def bad_shift(a: S.ptr("int32", "global")):
        S.vstore(S.vsldl(S.vload(a), S.vload(a), 9), a)

    expect_diag(bad_shift, "S.vsldl(", "shift")

    @S.prim_func
    def bad_compt(a: S.ptr("int32", "global")):
        S.vstore(S.vcompt(S.vload(a, lanes=12), "3T"), a)

    expect_diag(bad_compt, "S.vcompt(", "of the native width only")

    @S.prim_func
    def bad_concat(a: S.ptr("int32", "global"), b: S.ptr("int16", "global")):
        w = S.vconcat((S.vload(a), S.vload(b)))

    expect_diag(bad_concat, "S.vconcat(", "Argument type mismatch")


def _zip_ref(x, y, part):
    half = len(x) // 2
    src = {"low": range(half), "high": range(half, len(x)), "even": range(0, len(x), 2),
           "odd": range(1, len(x), 2)}[part]
    return np.array([v for i in src for v in (x[i], y[i])], x.dtype)


@pytest.mark.parametrize("dtype", ["int8", "uint16", "float32"])
@pytest.mark.parametrize("part", ["low", "high", "even", "odd"])
def test_vzip_part_of_multiple_width_vectors(dtype, part):
    # 2 and 3 native vectors zip as one vector each: the part is a half of all the lanes.
    n = lanes(dtype)

    @S.prim_func
    def kernel(a: S.ptr(dtype, "global"), b: S.ptr(dtype, "global"), out: S.ptr(dtype, "global")):
        S.vstore(S.vzip(S.vload(a, lanes=2 * n), S.vload(b, lanes=2 * n), part), out)
        S.vstore(S.vzip(S.vload(a + 2 * n, lanes=3 * n), S.vload(b + 2 * n, lanes=3 * n), part), out + 2 * n)
        ma = S.vload(a, lanes=2 * n) > 0
        mb = S.vload(b, lanes=2 * n) > 0
        S.vstore(S.vsel(S.vload(a, lanes=2 * n), S.vload(b, lanes=2 * n), S.vzip(ma, mb, part)), out + 5 * n)

    a, b = _data(dtype, 5 * n, 1), _data(dtype, 5 * n, 2)
    compiled, pysim = run_both(kernel, a, b, np.zeros(7 * n, a.dtype))
    zipped_mask = _zip_ref(a[:2 * n] > 0, b[:2 * n] > 0, part)
    expected = np.concatenate([_zip_ref(a[:2 * n], b[:2 * n], part), _zip_ref(a[2 * n:], b[2 * n:], part),
                               np.where(zipped_mask, a[:2 * n], b[:2 * n])])
    check_active([compiled[2], pysim[2]], expected)


@pytest.mark.parametrize("dtype", ["int8", "int32", "float16"])
def test_vshfl_immediate_on_multiple_width_vectors(dtype):
    n = lanes(dtype)
    shift = n + 3

    @S.prim_func
    def kernel(a: S.ptr(dtype, "global"), out: S.ptr(dtype, "global")):
        S.vstore(S.vshfl(S.vload(a, lanes=3 * n), shift), out)

    a = _data(dtype, 3 * n, 3)
    compiled, pysim = run_both(kernel, a, np.zeros(3 * n, a.dtype))
    check_active([compiled[1], pysim[1]], np.roll(a, -shift))


def test_vshfl_runtime_shift_needs_native_vectors():
    @S.prim_func
    def kernel(a: S.ptr("int16", "global"), out: S.ptr("int16", "global"), s: S.i32):
        S.vstore(S.vshfl(S.vload(a, lanes=32), s), out)

    expect_diag(kernel, "S.vshfl(", "it works on vectors of the native width only")


# ---- S.vreplic with a lane chosen at run time --------------------------------------------------


@pytest.mark.parametrize("dtype", ALL_TYPES)
def test_vreplic_runtime_index_every_lane(dtype):
    # A native vector takes an index known only at run time; the C is Compass's
    # `__vreplic(x, index)`, and every lane, the first and the last included, is replicated.
    n = lanes(dtype)

    @S.prim_func
    def kernel(a: S.ptr(dtype, "global"), idx: S.i32, out: S.ptr(dtype, "global")):
        x = S.vload(a)
        S.vstore(S.vreplic(x, idx), out)
        S.vstore(S.vreplic(x, idx) + x, out + n)

    ex = build(kernel)
    assert "__vreplic(x, idx)" in ex.c_code, ex.c_code
    a = _data(dtype, n, 4)
    for index in (0, 1, n // 2, n - 1):
        compiled, pysim = np.zeros(2 * n, a.dtype), np.zeros(2 * n, a.dtype)
        ex(a, index, compiled)
        kernel(a, index, pysim)
        with np.errstate(over="ignore"):
            want = np.concatenate([np.full(n, a[index]), (np.full(n, a[index]) + a).astype(a.dtype)])
        check_active([compiled, pysim], want)


@pytest.mark.parametrize("index", [-1, 8, 100, -2**31])
def test_vreplic_runtime_index_outside_the_lanes_fails_the_call(index):
    # Compass's simulator refuses an index that is not a lane; tessera's compiled kernel fails
    # the call with the same words as PySim, and reads nothing outside the vector.
    @S.prim_func
    def kernel(a: S.ptr("int32", "global"), idx: S.i32, out: S.ptr("int32", "global")):
        S.vstore(S.vreplic(S.vload(a), idx), out)

    ex = build(kernel)
    a = np.arange(10, 18, dtype="int32")
    message = f"S.vreplic: the lane index {index} is not a lane of the 8-lane vector (expected 0 to 7)"
    with pytest.raises(TesseraRuntimeError) as info:
        ex(a, index, np.zeros(8, "int32"))
    assert message in str(info.value)
    with pytest.raises(PySimIndexError) as info:
        kernel(a, index, np.zeros(8, "int32"))
    err = info.value
    assert message in err.message and isinstance(err, AssertionError)
    assert err.line == line_of(kernel, "S.vreplic(") and "^" in str(err)
    out = np.zeros(8, "int32")
    ex(a, 7, out)  # the library is still usable
    np.testing.assert_array_equal(out, np.full(8, 17))


def test_vreplic_runtime_index_of_a_uint32_variable():
    # An unsigned index is read as a lane number; one of 2^31 or more is no lane.
    @S.prim_func
    def kernel(a: S.ptr("float16", "global"), idx: S.u32, out: S.ptr("float16", "global")):
        S.vstore(S.vreplic(S.vload(a), idx), out)

    a = _data("float16", 16, 5)
    compiled, pysim = run_both(kernel, a, 15, np.zeros(16, "float16"))
    check_active([compiled[2], pysim[2]], np.full(16, a[15]))
    with pytest.raises(TesseraRuntimeError, match="is not a lane of the 16-lane vector"):
        build(kernel)(a, 2**32 - 1, np.zeros(16, "float16"))
    with pytest.raises(PySimIndexError, match="is not a lane of the 16-lane vector"):
        kernel(a, 2**32 - 1, np.zeros(16, "float16"))


def test_vreplic_constant_index_outside_the_lanes_is_refused_at_build():
    @S.prim_func
    def kernel(a: S.ptr("int8", "global"), out: S.ptr("int8", "global")):
        S.vstore(S.vreplic(S.vload(a), 32), out)

    expect_diag(kernel, "S.vreplic(", 'the arg "index" must be in [0, 32), got 32')
