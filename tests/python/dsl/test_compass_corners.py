"""Corners of Compass DSL 4.2 semantics that its own tests check: S.vdpa saturating once, ...
Each kernel runs compiled and in PySim, both checked against numpy."""

import numpy as np
import pytest

from tessera.dsl import script as S

from _util import expect_diag, mask_bits, run_both


def _vdpa_reference(acc, a, b, mask):
    prod = np.where(mask, a.astype(np.int64) * b.astype(np.int64), 0)
    total = acc.astype(np.int64) + prod.reshape(-1, 2).sum(axis=1)
    info = np.iinfo(acc.dtype)
    return np.clip(total, info.min, info.max).astype(acc.dtype)


@pytest.mark.parametrize("xt, yt, at", [("uint8", "int8", "int16"), ("int8", "int8", "int16"),
                                        ("int16", "uint16", "int32"), ("uint16", "uint16", "uint32")])
def test_vdpa_saturates_the_total_once(xt, yt, at):
    # A pair sum past acc's range is brought back by acc: 255*-128*2 + 100 saturates to -32768
    # once (saturating the pair sum first, then the total, gives -32668).
    lanes = 64 if xt.endswith("8") else 32  # two native parts on a 256-bit host: split by parts

    @S.prim_func
    def k(a: S.ptr(xt, "global"), b: S.ptr(yt, "global"), acc: S.ptr(at, "global"),
          out: S.ptr(at, "global")):
        va = S.vload(a, lanes=lanes)
        vb = S.vload(b, lanes=lanes)
        S.vstore(S.vdpa(S.vload(acc, lanes=lanes // 2), va, vb, "14T1F"), out)

    xi, yi, ai = np.iinfo(xt), np.iinfo(yt), np.iinfo(at)
    rng = np.random.default_rng(5)
    a = rng.integers(xi.min, xi.max, lanes, endpoint=True).astype(xt)
    b = rng.integers(yi.min, yi.max, lanes, endpoint=True).astype(yt)
    a[:8] = xi.max if xi.min == 0 else xi.min
    b[:8] = yi.min if yi.min < 0 else yi.max
    acc = rng.integers(max(ai.min, -30000), min(ai.max, 30000), lanes // 2, endpoint=True).astype(at)
    acc[:4] = [100, 0, ai.min, ai.max]
    if ai.min == 0:
        acc[0] = ai.max
    mask = mask_bits("14T1F", lanes)
    want = _vdpa_reference(acc, a, b, mask)
    for args in run_both(k, a, b, acc, np.zeros(lanes // 2, at)):
        np.testing.assert_array_equal(args[3], want)


def test_vdpa_accumulator_of_another_width_is_a_type_mismatch():
    @S.prim_func
    def k(a: S.ptr("int32x8", "global"), c: S.ptr("int8x32", "global")):
        c[0] = S.vdpa(c[0], a[0], a[0])

    expect_diag(k, "S.vdpa(", 'Argument type mismatch: the accumulator "int8x32"')


def test_vqdpa_float_accumulator_of_float32_operands_is_a_type_mismatch():
    @S.prim_func
    def k(a: S.ptr("float32x8", "global"), c: S.ptr("float16x16", "global")):
        c[0] = S.vqdpa(c[0], a[0], a[0])

    expect_diag(k, "S.vqdpa(", 'Argument type mismatch: the accumulator "float16x16"')
