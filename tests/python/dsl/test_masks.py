"""Masks in every form: None, bool lists/tuples/arrays (padded with False), mask strings with the
spec's grammar, bool-vector expressions (comparisons, S.tail_mask, S.const_mask, mask
arithmetic), on every dtype and on virtual widths; the C form is the target's predicate."""

import numpy as np
import pytest

from tessera.dsl import script as S
from tessera.dsl.masks import MaskStringError, parse_mask_string

from _util import ALL_TYPES, build, expect_diag, lanes, np_dtype, rand


def lanes_of(text):
    return "".join("T" if v else "F" for v in parse_mask_string(text))


SPEC_TABLE = {
    "4FT": "FTFTFTFT",
    "4F1T": "FFFFT",
    "2FFFT3T": "FFFTFFFT" + "TTT",
    "F4T": "FTTTT",
    "1F4T": "FTTTT",
    "2FTT1FT": "FTTFTTFT",
    "4TF8F": "TFTFTFTF" + "F" * 8,
    "FF28T2F": "FF" + "T" * 28 + "FF",
    "TTFT_TFTT": "TTFTTFTT",
    "4T_FT3F_TT": "TTTT" + "FT" + "FFF" + "TT",
    "3T_F": "TTTF",
    "3T1F": "TTTF",
    "3T": "TTT",
}


@pytest.mark.parametrize("text", list(SPEC_TABLE))
def test_mask_string_grammar(text):
    assert lanes_of(text) == SPEC_TABLE[text]


@pytest.mark.parametrize("text,why", [
    ("T", "at least 2 characters"), ("_TT", "expected T or F, got '_'"),
    ("TT_", "'_' cannot end"), ("T__T", "expected T or F, got '_'"),
    ("3_T", "expected T or F, got '_'"), ("0TT", "a count must be at least 1"),
    ("TXT", "expected T or F, got 'X'"), ("33", "expected T or F, got the end"),
    ("tt", "expected T or F, got 't'")])
def test_malformed_mask_strings(text, why):
    with pytest.raises(MaskStringError, match=why):
        parse_mask_string(text)


def mask_kernel(dtype):
    n = lanes(dtype)
    half = n // 2

    @S.prim_func
    def k(a: S.ptr(dtype, "global"), b: S.ptr(dtype, "global"), out: S.ptr(dtype, "global"),
          t: S.i32):
        va = S.vload(a)
        vb = S.vload(b)
        S.vstore(S.vload(a, mask=None), out)
        S.vstore(S.vload(a, mask=[True, False, True]), out + n)            # padded with False
        S.vstore(S.vload(a, mask=(False, True)), out + 2 * n)
        S.vstore(S.vload(a, mask=np.array([True] * half)), out + 3 * n)
        S.vstore(S.vload(a, mask="2T2F"), out + 4 * n)
        S.vstore(va, out + 5 * n, mask="3T")                               # padded with F
        S.vstore(S.vload(a, mask=va > vb), out + 6 * n)
        S.vstore(S.vload(a, mask=S.tail_mask(t, n)), out + 7 * n)
        cm = S.const_mask(f"T{n - 1}F")                                   # a mask variable
        S.vstore(S.vsel(va, vb, S.const_mask([True, True] + [False] * (n - 2)) | (va < vb)),
                 out + 8 * n)
        S.vstore(S.vsel(va, vb, ~(va < vb) & S.tail_mask(t, n)), out + 9 * n)
        S.vstore(S.vsel(va, vb, (va == vb) ^ (va <= vb)), out + 10 * n)
        S.vstore(S.vadd(va, vb, mask=S.tail_mask(t, n), r=va), out + 11 * n)
        S.vstore(S.vsel(va, vb, cm), out + 12 * n)

    return k


@pytest.mark.parametrize("dtype", ALL_TYPES)
def test_every_mask_form_on_every_dtype(dtype):
    n = lanes(dtype)
    half = n // 2
    dt = np_dtype(dtype)
    a = rand(n, dtype, seed=31, low=0, high=60)
    b = rand(n, dtype, seed=32, low=0, high=60)
    b[5] = a[5]
    t = n - 3
    out = np.full(13 * n, 99, dt)
    build(mask_kernel(dtype))(a, b, out, t)
    idx = np.arange(n)

    def masked(m):
        return np.where(m, a, 0).astype(dt)

    want = [
        a,
        masked(np.isin(idx, [0, 2])),
        masked(idx == 1),
        masked(idx < half),
        masked(idx < 2),
        np.where(idx < 3, a, 99).astype(dt),
        masked(a > b),
        masked(idx < t),
        np.where((idx < 2) | (a < b), a, b).astype(dt),
        np.where(~(a < b) & (idx < t), a, b).astype(dt),
        np.where((a == b) ^ (a <= b), a, b).astype(dt),
        np.where(idx < t, (a.astype("float64") + b.astype("float64")).astype(dt), a).astype(dt),
        np.where(idx == 0, a, b).astype(dt),
    ]
    for k, w in enumerate(want):
        np.testing.assert_array_equal(out[k * n:(k + 1) * n].astype("float64"),
                                      np.asarray(w).astype("float64"), err_msg=f"slot {k}")


def test_masks_compile_to_predicates():
    @S.prim_func
    def k(a: S.ptr("int32", "global"), out: S.ptr("int32", "global"), h: S.ptr("int16", "global")):
        S.vstore(S.vload(a, mask="3T5F"), out)
        S.vstore(S.vload(h, mask="TF"), h + 16)

    code = build(k).c_code
    assert "__vload((__global int8*)a, __vmov_w(0x00000111))" in code
    assert "__vload((__global short16*)h, __vmov_h(0x00000001))" in code


def test_masks_on_virtual_widths():
    @S.prim_func
    def k(a: S.ptr("int32", "global"), h: S.ptr("int16", "global"), out: S.ptr("int32", "global"),
          t: S.i32):
        m = S.tail_mask(t, 30)
        out[0:30] = S.vload(a, lanes=30, mask=m)
        hm = S.vload(h, lanes=16) > 0              # a mask of 16-bit lanes ...
        S.vstore(S.vload(a + 30, lanes=16), out + 30, mask=hm)  # ... controls two int32x8 parts
        S.vstore(S.vload(a, lanes=12, mask="4T_4F_4T"), out + 46)

    a = np.arange(1, 61, dtype="int32")
    h = np.array([(-1) ** i * i for i in range(16)], "int16")
    out = np.zeros(58, "int32")
    build(k)(a, h, out, 25)
    np.testing.assert_array_equal(out[:30], np.where(np.arange(30) < 25, a[:30], 0))
    np.testing.assert_array_equal(out[30:46], np.where(h > 0, a[30:46], 0))
    np.testing.assert_array_equal(out[46:58], np.where(np.arange(12) // 4 != 1, a[:12], 0))


def test_mask_errors():
    @S.prim_func
    def bad_string(a: S.ptr("int32", "global")):
        S.vstore(S.vload(a, mask="3T_"), a + 8)

    expect_diag(bad_string, 'S.vload(a, mask="3T_")', 'Invalid mask string "3T_": \'_\' cannot end')

    @S.prim_func
    def too_long(a: S.ptr("int32", "global")):
        S.vstore(S.vload(a, mask="9T"), a + 8)

    expect_diag(too_long, 'S.vload(a, mask="9T")', "the mask has 9 lanes but the operation has 8")

    @S.prim_func
    def wrong_lanes(a: S.ptr("int32", "global"), h: S.ptr("int16", "global")):
        S.vstore(S.vload(a, mask=S.vload(h) > 0), a + 8)

    expect_diag(wrong_lanes, "S.vload(a, mask=S.vload(h) > 0)", "the mask has 16 lanes but the operation has 8")
