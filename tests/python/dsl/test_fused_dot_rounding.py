"""Float S.vqdpa, S.vqdot and S.fma round once, and float S.vrpadd sums in the order of the
NPU's adder tree, as Compass computes them: each float32 result of S.vqdpa is the accumulator
(0 for S.vqdot) plus the active float16/bfloat16 products of its 4 lanes, added in float64 lane
by lane, rounded to float32 once; S.fma is acc + x * y rounded once (a fused multiply-add);
S.vrpadd adds a native part pairwise, as numpy's sum does. Rounding after each step in float32,
rounding the dot product before adding the accumulator, or summing lane by lane differs by an
ULP or more on the inputs below. Compiled and PySim, every width the intrinsics accept, against
numpy."""

from fractions import Fraction

import numpy as np
import pytest

from tessera.dsl import script as S

from _util import mask_bits, np_dtype, run_both

WIDTHS = [16, 32, 48, 64]


def _mask(lanes):
    """Per 8 lanes: a group all active, then one whose 3rd lane is off."""
    return f"{lanes // 8}TTTTTTFT"


def _fused(acc, x, y, mask):
    """Compass's float vqdpa: float64 sum lane by lane from acc, one rounding; odd lanes acc."""
    total = acc.astype(np.float64)
    prod = x.astype(np.float64) * y.astype(np.float64)
    for i in range(x.size):
        if mask[i]:
            total[(i // 4) * 2] += prod[i]
    return total.astype(np.float32)


def _stepwise(acc, x, y, mask):
    """The same sums rounded to float32 after each product is added (the old compiled form)."""
    total = acc.astype(np.float32).copy()
    prod = x.astype(np.float32) * y.astype(np.float32)  # exact: 16-bit float operands
    for i in range(x.size):
        if mask[i]:
            total[(i // 4) * 2] = np.float32(total[(i // 4) * 2] + prod[i])
    return total


def _dot_then_add(acc, x, y, mask):
    """acc + the 4-lane dot product already rounded to float32 (the old S.vqdpa: acc + vqdot)."""
    dot = _fused(np.zeros_like(acc), x, y, mask)
    out = acc.copy()
    out[0::2] = acc[0::2] + dot[0::2]
    return out


def _inputs(dtype, lanes, seed):
    """Groups of 4 lanes whose fused sum differs from both other orders of rounding, then random
    ones. The first 8 of each 16 lanes (two result lanes):
    - acc -2**25 + 1.5 + 2**25: 1.5 rounded once; step by step 2 (-2**25 + 1.5 rounds to
      -2**25 + 2); the dot product 2**25 + 1.5 rounds to 2**25, so acc + dot is 0;
    - acc 1 + 2**25 + 1.5 (+ 2**25 in an inactive lane): 2**25 + 4 rounded once; adding 1 and
      1.5 to 2**25 in float32 (in either order) leaves 2**25."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-8.0, 8.0, lanes)
    y = rng.uniform(-8.0, 8.0, lanes)
    acc = rng.uniform(-4.0, 4.0, lanes // 2)
    for g in range(0, lanes // 16):  # the designed groups in the first half of each 16 lanes
        b = 16 * g
        x[b:b + 8] = [1.5, 4096, 0, 0, 4096, 1.5, 4096, 0]
        y[b:b + 8] = [1, 8192, 0, 0, 8192, 1, 8192, 0]
        acc[8 * g:8 * g + 4] = [-2.0**25, -7.0, 1.0, 5.0]
    t = np_dtype(dtype)
    return x.astype(t), y.astype(t), acc.astype(np.float32)


def _designed_lanes(lanes, masked):
    """The result lanes of the designed groups (the second one only under the mask)."""
    even = np.zeros(lanes // 2, bool)
    even[0::8] = True
    even[2::8] = masked
    return even


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("lanes", WIDTHS)
def test_float_vqdpa_rounds_once(dtype, lanes):
    @S.prim_func
    def k(a: S.ptr(dtype, "global"), b: S.ptr(dtype, "global"), acc: S.ptr("fp32", "global"),
          out: S.ptr("fp32", "global")):
        x = S.vload(a, lanes=lanes)
        y = S.vload(b, lanes=lanes)
        S.vstore(S.vqdpa(S.vload(acc, lanes=lanes // 2), x, y, _mask(lanes)), out)
        S.vstore(S.vqdpa(S.vload(acc, lanes=lanes // 2), x, y), out + lanes // 2)

    x, y, acc = _inputs(dtype, lanes, seed=lanes)
    mask = mask_bits(_mask(lanes), lanes)
    full = np.ones(lanes, bool)
    want = np.concatenate([_fused(acc, x, y, mask), _fused(acc, x, y, full)])
    # The inputs tell the orders of rounding apart: the test fails on either of the others.
    designed = np.concatenate([_designed_lanes(lanes, True), _designed_lanes(lanes, False)])
    for other in (_stepwise, _dot_then_add):
        old = np.concatenate([other(acc, x, y, mask), other(acc, x, y, full)])
        assert np.all(old[designed] != want[designed])
    for args in run_both(k, x, y, acc, np.zeros(lanes, np.float32)):
        np.testing.assert_array_equal(args[3], want)  # odd lanes: acc, as Compass keeps it


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("lanes", WIDTHS)
def test_float_vqdot_rounds_once(dtype, lanes):
    # 2**25 + 1.5 + 1.5 (acc 0): 2**25 + 4 rounded once, 2**25 step by step. The compiled
    # bfloat16 form models the NPU's adder, which Compass's tests record apart from its PySim
    # (test_compass_corners.py): there PySim only is checked.
    @S.prim_func
    def k(a: S.ptr(dtype, "global"), b: S.ptr(dtype, "global"), out: S.ptr("fp32", "global")):
        S.vstore(S.vqdot(S.vload(a, lanes=lanes), S.vload(b, lanes=lanes), _mask(lanes)), out)

    x, y, _ = _inputs(dtype, lanes, seed=lanes + 1)
    t = np_dtype(dtype)
    for g in range(lanes // 16):
        x[16 * g:16 * g + 4] = np.array([4096, 1.5, 1.5, 0], np.float32).astype(t)
        y[16 * g:16 * g + 4] = np.array([8192, 1, 1, 0], np.float32).astype(t)
    mask = mask_bits(_mask(lanes), lanes)
    zero = np.zeros(lanes // 2, np.float32)
    want = _fused(zero, x, y, mask)
    even = np.arange(lanes // 2) % 2 == 0
    designed = np.zeros(lanes // 2, bool)
    designed[0::8] = True
    assert np.all(_stepwise(zero, x, y, mask)[designed] != want[designed])
    compiled, pysim = run_both(k, x, y, np.full(lanes // 2, 7.0, np.float32))
    np.testing.assert_array_equal(pysim[2][even], want[even])
    if dtype == "float16":
        np.testing.assert_array_equal(compiled[2][even], want[even])


def _fma_inputs(lanes, seed):
    """Random float32 lanes; every 4th computes -1 + (1 + 2**-12)**2 = 2**-11 + 2**-24, which a
    float32 product rounds to 2**-11 before the add."""
    rng = np.random.default_rng(seed)
    acc, x, y = (rng.uniform(-4.0, 4.0, lanes).astype(np.float32) for _ in range(3))
    acc[0::4], x[0::4], y[0::4] = -1.0, 1 + 2.0**-12, 1 + 2.0**-12
    return acc, x, y


def _round_to_float32(value):
    """The float32 nearest to a Fraction, ties to even."""
    guess = np.float32(float(value))
    candidates = [np.nextafter(guess, np.float32(-np.inf)), guess,
                  np.nextafter(guess, np.float32(np.inf))]
    return min(candidates, key=lambda c: (abs(Fraction(float(c)) - value),
                                          int(np.float32(c).view(np.uint32)) & 1))


def _fma_reference(acc, x, y):
    """acc + x * y computed exactly, rounded to float32 once."""
    return np.array([_round_to_float32(Fraction(float(a)) + Fraction(float(b)) * Fraction(float(c)))
                     for a, b, c in zip(acc, x, y)], np.float32)


@pytest.mark.parametrize("lanes", [4, 8, 12, 16, 24, 32])  # flexible, native, multiple
def test_fma_rounds_once(lanes):
    @S.prim_func
    def k(a: S.ptr("fp32", "global"), b: S.ptr("fp32", "global"), c: S.ptr("fp32", "global"),
          out: S.ptr("fp32", "global")):
        acc = S.vload(c, lanes=lanes)
        x = S.vload(a, lanes=lanes)
        y = S.vload(b, lanes=lanes)
        S.vstore(S.fma(acc, x, y), out)
        S.vstore(S.fma(acc, x, y, mask=f"{lanes // 2}T"), out + lanes)
        out[2 * lanes] = S.fma(c[0], a[0], b[0])
        out[2 * lanes + 1] = S.fma(c[1], a[1], 2.0)

    acc, x, y = _fma_inputs(lanes, seed=lanes)
    want = _fma_reference(acc, x, y)
    # Rounding the product first gives another result in every 4th lane.
    stepwise = (acc + x * y).astype(np.float32)
    assert np.all(stepwise[0::4] != want[0::4])
    keep = np.where(np.arange(lanes) < lanes // 2, want, acc)
    scalars = [want[0], _fma_reference(acc[1:2], x[1:2], np.float32([2.0]))[0]]
    expect = np.concatenate([want, keep, scalars])
    for args in run_both(k, x, y, acc, np.zeros(2 * lanes + 2, np.float32)):
        np.testing.assert_array_equal(args[3], expect)


def test_fma_sum_halfway_in_double_rounds_by_its_error():
    # (1 + 2**-23) + (1 + 2**-20) * 2**-24 * (1 - 2**-20) = 1 + 3 * 2**-24 - 2**-64: in double the
    # 2**-64 is lost and the sum lies halfway between the float32 1 + 2**-23 and 1 + 2**-22 (the
    # even one, which a double sum rounded to float32 gives, as Compass's PySim); rounded once
    # it is 1 + 2**-23. Lane 1: the same with the signs flipped; lane 2: no error, a tie to even.
    acc = np.float32([1 + 2.0**-23, -(1 + 2.0**-23), 1 + 2.0**-23] + [0] * 5)
    x = np.float32([1 + 2.0**-20, 1 + 2.0**-20, 1] + [0] * 5)
    y = np.float32([2.0**-24 * (1 - 2.0**-20), -(2.0**-24 * (1 - 2.0**-20)), 2.0**-24] + [0] * 5)

    @S.prim_func
    def k(a: S.ptr("fp32x8", "global"), b: S.ptr("fp32x8", "global"), c: S.ptr("fp32x8", "global"),
          out: S.ptr("fp32x8", "global")):
        out[0] = S.fma(c[0], a[0], b[0])

    want = _fma_reference(acc, x, y)
    np.testing.assert_array_equal(want[:3], np.float32([1 + 2.0**-23, -(1 + 2.0**-23), 1 + 2.0**-22]))
    double_then_float = (acc.astype(np.float64) + x.astype(np.float64) * y).astype(np.float32)
    assert double_then_float[0] == np.float32(1 + 2.0**-22)
    for args in run_both(k, x, y, acc, np.zeros(8, np.float32)):
        np.testing.assert_array_equal(args[3], want)


def _tree_inputs(dtype, lanes, seed):
    """Random lanes; in each native part of 16-bit floats lanes 0 and 8 cancel (32768, -32768) and 1 and 9 are
    2**-10: the NPU's tree (lanes i and i + 8 first for 16-bit floats) keeps both small ones,
    adding lane by lane in float32 loses the first. float32 parts (8 lanes): 2**24, 1, 1, -2**24
    sum to 1 in the tree, to 0 lane by lane."""
    rng = np.random.default_rng(seed)
    n = 8 if dtype == "float32" else 16
    # The other lanes: exact in every order (even integers; sixteenths for 16-bit floats).
    step = 2.0 if n == 8 else 1 / 16
    x = rng.integers(-64, 64, lanes) * step
    for j in range(0, lanes, n):
        if n == 8:
            x[j:j + 4] = [2.0**24, 1, 1, -2.0**24]
        else:
            x[j], x[j + 8], x[j + 1], x[j + 9] = 32768, -32768, 2.0**-10, 2.0**-10
    return x.astype(np_dtype(dtype)), n


def _compass_sum(x, mask, n):
    """Compass's S.vrpadd: each native part summed as numpy sums float32 (pairwise), added up."""
    total = np.float32(0)
    for j in range(0, x.size, n):
        part = np.where(mask[j:j + n], x[j:j + n], np.zeros(1, x.dtype))
        total = np.float32(total + np.sum(part, dtype=np.float32))
    return total


def _lane_by_lane(x, mask, n):
    """Each native part summed lane by lane in float32, the part sums added up."""
    total = np.float32(0)
    for j in range(0, x.size, n):
        part = np.float32(0)
        for v in x[j:j + n][mask[j:j + n]].astype(np.float32):
            part = np.float32(part + v)
        total = np.float32(total + part)
    return total


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("parts", [1, 2, 3])
def test_float_vrpadd_sums_in_the_adder_tree_order(dtype, parts):
    x, n = _tree_inputs(dtype, parts * (8 if dtype == "float32" else 16), seed=parts)
    lanes = x.size

    @S.prim_func
    def k(a: S.ptr(dtype, "global"), out: S.ptr("fp32", "global")):
        v = S.vload(a, lanes=lanes)
        out[0] = S.vrpadd(v)[0]
        out[1] = S.vrpadd(v, f"{lanes - 2}T2F")[0]  # a multiple width splits its mask too

    full = np.ones(lanes, bool)
    mask = mask_bits(f"{lanes - 2}T2F", lanes)
    want = [_compass_sum(x, full, n), _compass_sum(x, mask, n)]
    assert all(w != _lane_by_lane(x, m, n) for w, m in zip(want, [full, mask]))
    for args in run_both(k, x, np.zeros(2, np.float32)):
        np.testing.assert_array_equal(args[1], np.float32(want))
