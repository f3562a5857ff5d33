"""Analyzer.canonical_simplify: TVM's canonical form of index arithmetic (truncating and floor
division and modulo by constants, symbolic divisors, scaled comparisons, casts of sums, the
constraints of select). Each case checks the form by structural equality and then evaluates
the input and the result at many points, so that every rule is also checked to keep the value."""

import itertools

import pytest

from tessera import arith, ir, tir

x, y, z = (tir.Var(n, "int32") for n in "xyz")
fld, flm, tdiv, tmod = tir.floordiv, tir.floormod, tir.truncdiv, tir.truncmod
INT32_MIN = -(2**31)
# Odd steps from -13: no zero, so that symbolic divisors are never zero.
SPAN = range(-13, 14, 3)


def _value(expr, point):
    out = arith.Analyzer().simplify(tir.stmt_functor.substitute(expr, point))
    assert isinstance(out, tir.IntImm), f"{expr} at {point} gave {out}"
    return out.value


def _check_points(before, after, points):
    for point in points:
        assert _value(before, point) == _value(after, point), (before, after, point)


def _grid(names, span=SPAN):
    return [dict(zip(names, values)) for values in itertools.product(span, repeat=len(names))]


UNBOUNDED = [
    # truncating division and modulo by a constant that divides every term: exact
    (tdiv(x * 6 + y * 9, 3), y * 3 + x * 2),  # larger coefficient first
    (tmod(x * 6 + y * 9 + 12, 3), 0),
    # a split undone, also through a nested modulo
    (tdiv(x, 5) * 5 + tmod(x, 5), x),
    (tdiv(x, 10) * 10 + tmod(tdiv(x, 5), 2) * 5 + tmod(x, 5), x),
    (fld(x, 10) * 10 + flm(fld(x, 5), 2) * 5 + flm(x, 5), x),
    # a remainder smaller than the divisor divides to zero whatever its sign
    (tdiv(tmod(x, 3), 4), 0),
    # a common factor
    (tmod(x * 6, 24), tmod(x, 4) * 6),
    (tdiv(tdiv(tmod(x, 12), 3) * 3, 6), tdiv(tmod(x, 12), 6)),
    # nested divisions and remainders
    (tdiv(tdiv(x, 3), 4), tdiv(x, 12)),
    (tmod(tmod(x, 12), 4), tmod(x, 4)),
    (tmod(tdiv(x, 4), 3), tdiv(tmod(x, 12), 4)),
    # a negated value: TVM's form moves the sign to the divisor
    (tmod(x * -1, 4), tmod(x, -4) * -1),
    (flm(x * -1, 6), flm(x, -6) * -1),
    # nothing to do for a sum that may be negative
    (tdiv(x * 3 + 1, 6), tdiv(x * 3 + 1, 6)),
    # symbolic divisors: common factors cancel
    (flm(x * y * 12, y * 4), 0),
    (tmod(x * x * 8, x * 6), tmod(x * 4, 3) * (x * 2)),
    (fld(x * y * 6, y * 4), fld(x * 3, 2)),
    (tdiv(x * y * 6, x * 2), y * 3),
    (fld(x * 9, x * y * 3), fld(3, y)),
    # a constant less one term on one side of a comparison
    (x < 9 - y, x + y < 9),
    (20 - y <= x * 2, tir.LE(20, x * 2 + y)),
    # select: each value knows the condition (or its negation); equal values
    (tir.Select(x < 0, y, y), y),
]


@pytest.mark.parametrize("before,after", UNBOUNDED, ids=[str(i) for i in range(len(UNBOUNDED))])
def test_canonical_form(before, after):
    got = arith.Analyzer().canonical_simplify(before)
    if isinstance(after, int):
        after = tir.const(after, "int32")
    ir.assert_structural_equal(got, after)
    _check_points(before, got, _grid((x, y)))


def _bounded(var_bounds, before, after, points):
    ana = arith.Analyzer()
    for var, (lo, hi) in var_bounds.items():
        ana.update(var, arith.ConstIntBound(lo, hi))
    got = ana.canonical_simplify(before)
    if isinstance(after, int):
        after = tir.const(after, "int32")
    ir.assert_structural_equal(got, after)
    _check_points(before, got, points)
    return ana


def test_non_negative_truncating_division_keeps_its_kind():
    pts = _grid((x,), range(0, 11))
    _bounded({x: (0, 10)}, tdiv(x * 8 + 3, 4), x * 2, pts)
    _bounded({x: (0, 10)}, tdiv(x * 5 + 7, 4), tdiv(x * 5 + 7, 4), pts)
    _bounded({x: (0, 10)}, tmod(x + 10, 4), tmod(x + 2, 4), pts)
    _bounded({x: (0, 10)}, tmod(x * 4 + 2, 8), tmod(x * 2 + 1, 4) * 2, pts)
    # the offset that the divisor does not divide stays inside the floor division
    _bounded({x: (-10, 10)}, fld(x * 5 + 7, 4), fld(x * 5 + 7, 4), _grid((x,), range(-10, 11)))
    _bounded({x: (-10, 10)}, fld(x * 8 + 7, 4), x * 2 + 1, _grid((x,), range(-10, 11)))


def test_simplify_keeps_its_own_forms():
    # Analyzer.simplify (the passes' simplifier) still reads a non-negative truncating
    # division as a floor division and splits the offset.
    ana = arith.Analyzer()
    ana.update(x, arith.ConstIntBound(0, 10))
    ir.assert_structural_equal(ana.simplify(tdiv(x * 5 + 7, 4)), fld(x * 5 + 3, 4) + 1)


def test_scaled_comparisons():
    pts = _grid((x, y), range(-8, 9))
    in_y = [p for p in pts if 0 <= p[y] < 6]
    ana = arith.Analyzer()
    ana.bind(y, ir.Range(0, 6))
    for before, after in [
        (x * 6 + y < 18, x < 3),
        (x * -6 + y < 12, tir.LT(-2, x)),
        (x * 6 + y < z, x * 6 + y < z),
    ]:
        got = ana.canonical_simplify(before)
        ir.assert_structural_equal(got, after)
        if before.b is not z:
            _check_points(before, got, in_y)
    # a remainder whose modulus the common factor divides: only its high part matters
    ana = arith.Analyzer()
    ana.bind(x, ir.Range(0, 4))
    before = x * 32 + flm(y, 64) < 96
    got = ana.canonical_simplify(before)
    ir.assert_structural_equal(got, fld(flm(y, 64), 32) + x < 3)
    _check_points(before, got, [{x: a, y: b} for a in range(4) for b in range(-70, 140, 7)])


def test_comparisons_at_the_type_minimum():
    lowest = tir.const(INT32_MIN, "int32")
    ana = arith.Analyzer()
    got = ana.canonical_simplify(lowest - x == 0)
    ir.assert_structural_equal(got, x == INT32_MIN)
    _check_points(lowest - x == 0, got, [{x: v} for v in (INT32_MIN, INT32_MIN + 1, -7, 0)])
    # INT32_MIN + x is 0 only at x = 2**31, which is not an int32
    ir.assert_structural_equal(ana.canonical_simplify(lowest + x == 0), tir.const(False))
    ir.assert_structural_equal(ana.canonical_simplify(x + lowest != 0), tir.const(True))
    # not decided: INT32_MIN - x < 0 holds for every x but INT32_MIN
    got = ana.canonical_simplify(lowest - x < 0)
    assert not isinstance(got, tir.IntImm), got
    _check_points(lowest - x < 0, got, [{x: v} for v in (INT32_MIN, INT32_MIN + 1, -7, 0)])


def test_casts_of_sums():
    i, j = tir.Var("i", "int64"), tir.Var("j", "int64")
    ana = arith.Analyzer()
    before = tir.Cast("int64", x + y + 2) - tir.Cast("int64", x)
    got = ana.canonical_simplify(before)
    ir.assert_structural_equal(got, tir.Cast("int64", y) + tir.const(2, "int64"))
    _check_points(before, got, _grid((x, y)))
    # narrowing: only when the bounds keep every partial sum in int32
    ana.update(i, arith.ConstIntBound(0, 20))
    ana.update(j, arith.ConstIntBound(0, 20))
    before = tir.Cast("int32", i * 2 + j) - tir.Cast("int32", j)
    got = ana.canonical_simplify(before)
    ir.assert_structural_equal(got, tir.Cast("int32", i) * 2)
    _check_points(before, got, _grid((i, j), range(0, 21, 4)))
    ana.update(i, arith.ConstIntBound(0, 2**40), True)
    before = tir.Cast("int32", i + j)
    ir.assert_structural_equal(ana.canonical_simplify(before), before)
    # through a modulo by a constant
    ana.update(i, arith.ConstIntBound(0, 50), True)
    before = tir.Cast("int32", flm(i, tir.const(7, "int64")) * tir.const(3, "int64") + tir.const(1, "int64"))
    got = ana.canonical_simplify(before - tir.Cast("int32", flm(i, tir.const(7, "int64")) * tir.const(3, "int64")))
    ir.assert_structural_equal(got, tir.const(1, "int32"))


def test_select_values_know_the_condition():
    before = tir.Select(x >= 0, tmod(x + 7, 3), tmod(x + 7, 3))
    got = arith.Analyzer().canonical_simplify(tir.Select(x >= 0, tmod(x + 7, 3), y))
    ir.assert_structural_equal(got, tir.Select(tir.LE(0, x), tmod(x + 1, 3), y))
    _check_points(tir.Select(x >= 0, tmod(x + 7, 3), y), got, _grid((x, y)))
    got = arith.Analyzer().canonical_simplify(before)
    _check_points(before, got, _grid((x,)))


def test_lets_shifts_and_nested_if_then_else():
    ana = arith.Analyzer()
    # a let of a constant or a variable is inlined
    let = tir.Let(x, 3, x * 2 + y)
    got = ana.simplify(let + let)
    ir.assert_structural_equal(got, y * 2 + 12)
    _check_points(let + let, got, _grid((y,)))
    ir.assert_structural_equal(ana.simplify(tir.Let(x, z, x - z)), tir.const(0, "int32"))
    # a let of anything else stays
    kept = tir.Let(x, y + 1, x * x)
    assert isinstance(ana.simplify(kept), tir.Let)
    # shifts and bitwise operations of constants fold; a shift out of range is left alone
    call = tir.op.call_intrin
    for before, after in [
        (call("int32", "tir.shift_left", 3, 4), 48),
        (call("int32", "tir.shift_right", -20, 2), -5),
        (call("int32", "tir.bitwise_and", 12, 10), 8),
        (call("int32", "tir.bitwise_xor", 12, 10), 6),
    ]:
        ir.assert_structural_equal(ana.simplify(before), tir.const(after, "int32"))
    wide = call("int32", "tir.shift_left", 1, 40)
    ir.assert_structural_equal(ana.simplify(wide), wide)
    # if_then_else(c1, if_then_else(c2, a, b), b) is if_then_else(c1 && c2, a, b)
    nested = tir.if_then_else(x < 9, tir.if_then_else(y > 2, x, y), y)
    got = ana.rewrite_simplify(nested)
    ir.assert_structural_equal(got, tir.if_then_else(tir.And(x < 9, tir.LT(2, y)), x, y))
    _check_points(nested, got, _grid((x, y)))


def test_rewrite_rounded_up_value_and_negated_difference():
    ana = arith.Analyzer()
    # (x - y) * c is (y - x) * -c for a negative constant
    before = (x - y) * -3
    got = ana.rewrite_simplify(before)
    ir.assert_structural_equal(got, (y - x) * 3)
    _check_points(before, got, _grid((x, y)))
    # min(x rounded up to a multiple of 8, max(x, 8)) is max(x, 8), but only for x >= 1
    before = tir.Min(fld(x + 7, 8) * 8, tir.Max(x, 8))
    assert not isinstance(ana.rewrite_simplify(before), tir.Max)
    ana.update(x, arith.ConstIntBound(1, 100))
    got = ana.rewrite_simplify(before)
    ir.assert_structural_equal(got, tir.Max(x, 8))
    _check_points(before, got, _grid((x,), range(1, 101)))
    # at x = 0 the rounded-up value (0) is the smaller: the bound is needed
    assert _value(before, {x: 0}) == 0


def test_can_prove_equal_gives_a_constant_the_other_type():
    n = tir.Var("n", "int64")
    ana = arith.Analyzer()
    # common factors of a symbolic product and its divisor: the remainder is 0
    assert ana.can_prove_equal(flm((n + 1) * 64, (n + 1) * 32), 0)
    assert ana.can_prove_equal(flm((n + 1) * 64, 32 * (n + 1)), 0)
    assert not ana.can_prove_equal(flm((n + 1) * 64, (n + 1) * 48), 0)
    assert not ana.can_prove_equal(n, 0)
    # a constant that the other type cannot hold is never equal
    b = tir.Var("b", "int8")
    assert not ana.can_prove_equal(b * 0 + 1, 300)


@pytest.mark.parametrize("before, expected", [
    # floordiv(x, c1) < c2 -> x < c1 * c2; c1 < floordiv(x, c2) -> (c1 + 1) * c2 - 1 < x
    (fld(x, 128) < 127, x < 16256),
    (fld(x, 8) < -2, x < -16),
    (tir.LT(tir.const(3, "int32"), fld(x, 4)), tir.LT(tir.const(15, "int32"), x)),
    # x < c1 && floormod(x, c2) < c3: the last period below c1 stops at residue c3
    (tir.all(x < 16256, flm(x, 128) < 127), tir.all(x < 16255, flm(x, 128) < 127)),
    (tir.all(x < 100, flm(x, 16) < 2), tir.all(x < 98, flm(x, 16) < 2)),
    (tir.all(fld(x, 128) < 127, flm(x, 128) < 127), tir.all(x < 16255, flm(x, 128) < 127)),
    # a residue of c1 not above c3 leaves the bound
    (tir.all(x < 100, flm(x, 16) < 5), tir.all(x < 100, flm(x, 16) < 5)),
])
def test_floordiv_comparisons_and_last_period(before, expected):
    out = arith.Analyzer().simplify(before)
    ir.assert_structural_equal(out, expected)
    for v in list(range(-40, 40)) + list(range(16200, 16300)) + [95, 96, 97, 98, 99, 100]:
        assert _value(before, {x: tir.const(v, "int32")}) == _value(out, {x: tir.const(v, "int32")})
