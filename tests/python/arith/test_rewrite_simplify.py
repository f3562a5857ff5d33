"""Analyzer.rewrite_simplify: TVM's rule-based simplifier. Each case checks the rewritten form
by structural equality and then checks, by evaluating both at many points, that the rewrite
keeps the value."""

import itertools

import pytest

from tessera import arith, ir, tir

x, y, z = (tir.Var(n, "int32") for n in "xyz")
fld, flm, tdiv, tmod = tir.floordiv, tir.floormod, tir.truncdiv, tir.truncmod


def _value(expr, point):
    out = arith.Analyzer().simplify(tir.stmt_functor.substitute(expr, point))
    assert isinstance(out, tir.IntImm), f"{expr} at {point} gave {out}"
    return out.value


def _check_same_values(before, after, names=(x, y, z), span=range(-13, 14, 3)):
    for values in itertools.product(span, repeat=len(names)):
        point = dict(zip(names, values))
        assert _value(before, point) == _value(after, point), (before, after, point)


CASES = [
    # constants merged to one side; `<` by one more is `<=`
    (x + 7 < y + 8, x <= y),
    (x - 4 < y + 3, x < y + 7),
    (x + 9 < y + 2, x + 7 < y),
    (x + 6 < 20, x < 14),
    (30 < x - 2, tir.LT(32, x)),
    (4 < 10 - x, x < 6),
    # a term common to both sides cancels
    (z + x < y + z, x < y),
    (x - z < y - z, x < y),
    (y < y + z, tir.LT(0, z)),
    # products with a constant, solved for the variable
    (x * 5 < y * 5, x < y),
    (x * -5 < y * -5, y < x),
    (x * 3 <= 7, x <= 2),
    (x * 3 >= 7, tir.LE(3, x)),
    (x * -3 <= 7, tir.LE(-2, x)),
    (x * -3 >= 7, x <= -3),
    # division by a constant compared with a constant
    (fld(x, 5) < 2, x < 10),
    (fld(x, 5) >= -1, tir.LE(-5, x)),
    (tdiv(x, 5) <= 0, x <= 4),
    (tdiv(x, 5) >= 0, tir.LE(-4, x)),
    (fld(x, 6) * 6 < x, tir.LT(0, flm(x, 6))),
    (fld(x, 6) * 6 >= x, tir.EQ(flm(x, 6), 0)),
    (tdiv(x, 6) * 6 >= x, tir.LE(tmod(x, 6), 0)),
    # equalities
    (x - 7 == 0, x == 7),
    (x * y == 0, tir.Or(x == 0, y == 0)),
    (x * 4 + 2 == 0, tir.const(False)),
    (flm(x, 3) + 5 != 0, tir.const(True)),
    # min / max against a bound
    (tir.Min(x, 20) < 15, x < 15),
    (tir.Max(4, x) > 9, tir.LT(9, x)),
]


@pytest.mark.parametrize("before,expected", CASES, ids=[str(c[0]) for c in CASES])
def test_comparison_rules(before, expected):
    after = arith.Analyzer().rewrite_simplify(before)
    assert ir.structural_equal(after, expected), f"{before} gave {after}, not {expected}"
    _check_same_values(before, after)


LOGIC_CASES = [
    (tir.all(x < 4, x > 3), tir.const(False)),
    (tir.any(x < 4, x > 2), tir.const(True)),
    (tir.all(x > 5, tir.Not(x > 5)), tir.const(False)),
    (tir.all(fld(x, 6) == 2, flm(x, 6) == 5), x == 17),
    (tir.all(fld(x, 6) == 2, flm(x, 6) < 4), tir.all(tir.LE(12, x), x < 16)),
    (tir.all(fld(x, 6) == -1, tir.LT(2, flm(x, 6))), tir.all(tir.LT(-4, x), x < 0)),
    (tir.all(x < 13, flm(x, 4) < 1), tir.all(x < 13, flm(x, 4) < 1)),
    (tir.all(x < 16, flm(x, 4) < 2), tir.all(x < 14, flm(x, 4) < 2)),
    (tir.all(tir.LE(0, x - y * 3), x - y * 3 < 3), y == fld(x, 3)),
]


@pytest.mark.parametrize("before,expected", LOGIC_CASES, ids=[str(c[0]) for c in LOGIC_CASES])
def test_logic_rules(before, expected):
    after = arith.Analyzer().rewrite_simplify(before)
    assert ir.structural_equal(after, expected), f"{before} gave {after}, not {expected}"
    _check_same_values(before, after)


ARITH_CASES = [
    # a min/max plus or minus a value taken inside
    (tir.Min(x, y - z) + z, tir.Min(x + z, y)),
    (tir.Max(x - 3, y) + 3, tir.Max(x, y + 3)),
    (tir.Min(x + 4, y) + -4, tir.Min(x, y + -4)),
    (tir.Max(0, 6 - x * 2) + x * 2, tir.Max(x * 2, 6)),
    (tir.Max(y, z) + tir.Min(z, y), y + z),
    (z * 3 + tir.Max(x, y - z * 3), tir.Max(x + z * 3, y)),
    (tir.Max(y + x, z) - y, tir.Max(x, z - y)),
    (tir.Min(x, y) - y, tir.Min(x - y, 0)),
    (x - tir.Max(z, x + y), tir.Min(x - z, 0 - y)),
    (tir.Min(x + 3, y + 3) - tir.Min(x, y), tir.const(3)),
    # common factors
    (y * x + x * 7, (y + 7) * x),
    (z * x - x, (z + -1) * x),
    (y * x - z * x, (y - z) * x),
    # constants
    (x + 4 - 9, x + -5),
    (6 - y + x, x - y + 6),
    (x - (y + x), 0 - y),
    # division and remainder
    (tdiv(x, 6) * 6 + tmod(x, 6), x),
    (x - fld(x, 6) * 6, flm(x, 6)),
    (fld(y, 4) * 4 - y, 0 - flm(y, 4)),
    (y - tdiv(y + z, 4) * 4, tmod(y + z, 4) - z),
    (tdiv(y - z, 4) * 4 - y, 0 - tmod(y - z, 4) - z),
    (y * 2 - fld(y, 3) * 6, flm(y, 3) * 2),
    (fld(y + z, 3) * 9 - y * 3, (z - flm(y + z, 3)) * 3),
]


@pytest.mark.parametrize("before,expected", ARITH_CASES, ids=[str(c[0]) for c in ARITH_CASES])
def test_add_sub_rules(before, expected):
    after = arith.Analyzer().rewrite_simplify(before)
    assert ir.structural_equal(after, expected), f"{before} gave {after}, not {expected}"
    _check_same_values(before, after, span=range(-7, 8, 2))


MINMAX_CASES = [
    (tir.Min(tir.Max(y, z), tir.Min(z, y)), tir.Min(y, z)),
    (tir.Max(tir.Max(tir.Max(x, y), z), x), tir.Max(tir.Max(x, y), z)),
    (tir.Min(z, tir.Max(z, x)), z),
    (tir.Max(tir.Min(z, x), tir.Min(y, z)), tir.Min(tir.Max(x, y), z)),
    (tir.Min(tir.Max(x, z), tir.Max(y, z)), tir.Max(tir.Min(x, y), z)),
    (tir.Max(z + y, x + z), tir.Max(y, x) + z),
    (tir.Min(z - x, z - y), z - tir.Max(x, y)),
    (tir.Max(tir.Max(x, 3), 8), tir.Max(x, 8)),
    (tir.Min(x * 4, 12), tir.Min(x, 3) * 4),
    (tir.Max(x * -3, 6), tir.Min(x, -2) * -3),
    (tir.Min(5 - x, 2), 5 - tir.Max(x, 3)),
    (tir.Max(fld(x, 3), fld(y, 3)), fld(tir.Max(x, y), 3)),
    (tir.Min(tdiv(x, -4), tdiv(y, -4)), tdiv(tir.Max(x, y), -4)),
    (tir.Min(fld(x + 5, 6) * 6, x), x),
    (tir.Max(x, fld(x, 6) * 6), x),
    (tir.Min(x + 2, x + 5), x + 2),
]


@pytest.mark.parametrize("before,expected", MINMAX_CASES, ids=[str(c[0]) for c in MINMAX_CASES])
def test_min_max_rules(before, expected):
    after = arith.Analyzer().rewrite_simplify(before)
    assert ir.structural_equal(after, expected), f"{before} gave {after}, not {expected}"
    _check_same_values(before, after, span=range(-7, 8, 2))


def test_constraints_decide_comparisons():
    ana = arith.Analyzer()
    with ana.constraint_scope(tir.all(x <= 7, y <= 0)):
        assert ir.structural_equal(ana.rewrite_simplify(x + y <= 7), tir.const(True))
        assert ir.structural_equal(ana.rewrite_simplify(x < 8), tir.const(True))
    assert ir.structural_equal(ana.rewrite_simplify(x < 8), x < 8)


def test_other_expressions_are_simplified_as_before():
    ana = arith.Analyzer()
    expr = fld(x * 8 + 3, 4)
    assert ir.structural_equal(ana.rewrite_simplify(expr), ana.simplify(expr))


def test_casts_of_float_constants_fold_when_exact():
    ana = arith.Analyzer()
    half = tir.const(5.0, "float16")
    assert ir.structural_equal(ana.rewrite_simplify(tir.Cast("float32", half)),
                               tir.const(5.0, "float32"))
    assert ir.structural_equal(ana.rewrite_simplify(tir.Cast("bool", tir.const(0.0, "float32"))),
                               tir.const(False))
    assert ir.structural_equal(ana.rewrite_simplify(tir.Cast("bool", tir.const(2.5, "float32"))),
                               tir.const(True))
    # 0.1 is not a float16 value: the cast stays for the code generator to round
    inexact = tir.Cast("float16", tir.const(0.1, "float32"))
    assert isinstance(ana.rewrite_simplify(inexact), tir.Cast)


@pytest.mark.parametrize("value,dtype,zeros", [(0, "int32", 32), (5, "int32", 29),
                                               (1 << 40, "int64", 23), (-1, "int32", 0)])
def test_clz_of_a_constant(value, dtype, zeros):
    call = tir.call_intrin("int32", "tir.clz", tir.const(value, dtype))
    assert ir.structural_equal(arith.Analyzer().rewrite_simplify(call), tir.const(zeros))


SELECT_CASES = [
    (tir.Select(x < 3, y, 0) + tir.Select(x < 3, 4, z), tir.Select(x < 3, y + 4, z)),
    (tir.Select(x < 3, y, 2) - tir.Select(x < 3, 5, z), tir.Select(x < 3, y + -5, 2 - z)),
    (tir.Select(x < 3, y, z) - z, tir.Select(x < 3, y - z, 0)),
    (tir.Max(tir.Select(x < 3, y, 1), tir.Select(x < 3, 2, z)),
     tir.Select(x < 3, tir.Max(y, 2), tir.Max(1, z))),
    (tir.Select(x < 3, y * 2, y * 2), y * 2),
]


@pytest.mark.parametrize("before,expected", SELECT_CASES, ids=[str(c[0]) for c in SELECT_CASES])
def test_select_rules(before, expected):
    after = arith.Analyzer().rewrite_simplify(before)
    assert ir.structural_equal(after, expected), f"{before} gave {after}, not {expected}"
    _check_same_values(before, after, span=range(-7, 8, 2))


def test_broadcast_comparisons_compare_the_values():
    ana = arith.Analyzer()
    bx, by = tir.Broadcast(x, 4), tir.Broadcast(y, 4)
    assert ir.structural_equal(ana.rewrite_simplify(bx >= by), tir.Broadcast(tir.LE(y, x), 4))
    assert ir.structural_equal(ana.rewrite_simplify(tir.NE(bx, by)), tir.Broadcast(tir.NE(x, y), 4))
    flags = tir.Broadcast(tir.Var("b", "bool"), 4)
    got = ana.rewrite_simplify(tir.Or(bx < by, flags))
    assert ir.structural_equal(got, tir.Broadcast(tir.Or(x < y, flags.value), 4))


FLOORDIV_CASES = [
    (fld(y * z, z), y),
    (fld(fld(x, 3) + 2, 5), fld(x + 6, 15)),
    (fld(fld(x, 4) - 1, 2), fld(x + -4, 8)),
    (fld(x - flm(x, 7), 7), fld(x, 7)),
    (fld(tir.Min(x * 8, y), 4), tir.Min(x * 2, fld(y, 4))),
    (fld(tir.Max(y, x * 9), 3), tir.Max(fld(y, 3), x * 3)),
    (fld(y + z, z), fld(y, z) + 1),
    (fld(z + x + y, z), fld(x + y, z) + 1),
    (fld(x * z + y, z), x + fld(y, z)),
    (fld(y + z * x, z), fld(y, z) + x),
]


@pytest.mark.parametrize("before,expected", FLOORDIV_CASES, ids=[str(c[0]) for c in FLOORDIV_CASES])
def test_floordiv_rules(before, expected):
    after = arith.Analyzer().rewrite_simplify(before)
    assert ir.structural_equal(after, expected), f"{before} gave {after}, not {expected}"
    # z is a divisor in some cases: evaluate where it is not zero
    _check_same_values(before, after, span=[-7, -3, -1, 1, 2, 5, 7])


def test_ramp_floordiv_floormod_by_a_broadcast():
    ana = arith.Analyzer()
    ramp = tir.Ramp(x, 6, 4)
    three = tir.Broadcast(tir.const(3), 4)
    assert ir.structural_equal(ana.rewrite_simplify(fld(ramp, three)), tir.Ramp(fld(x, 3), 2, 4))
    assert ir.structural_equal(ana.rewrite_simplify(flm(ramp, three)),
                               tir.Broadcast(flm(x, 3), 4))
    # all four lanes of x * 16 + 2 .. + 5 lie in one block of 8
    inner = tir.Ramp(x * 16 + 2, 1, 4)
    eight = tir.Broadcast(tir.const(8), 4)
    assert ir.structural_equal(ana.rewrite_simplify(fld(inner, eight)), tir.Broadcast(x * 2, 4))
    assert ir.structural_equal(ana.rewrite_simplify(flm(inner, eight)), tir.Ramp(2, 1, 4))
    # lanes that cross a block boundary stay
    crossing = fld(tir.Ramp(x * 16 + 6, 1, 4), eight)
    assert isinstance(ana.rewrite_simplify(crossing), tir.FloorDiv)


def test_min_of_broadcasts_merges_them():
    v = tir.Var("v", "int32x4")
    got = arith.Analyzer().rewrite_simplify(
        tir.Min(tir.Min(v, tir.Broadcast(x, 4)), tir.Broadcast(y, 4)))
    assert ir.structural_equal(got, tir.Min(v, tir.Broadcast(tir.Min(x, y), 4)))


MOD_CASES = [
    (flm(y, 2) + flm(y + 1, 2), tir.const(1)),
    (fld(y + 1, 2) - fld(y, 2), flm(y, 2)),
    (fld(flm(y, 2) + 1, 2), flm(y, 2)),
    (fld(y + 1, 2) - flm(y, 2), fld(y, 2)),
    (fld(y, 2) + flm(y, 2), fld(y + 1, 2)),
    (flm(y - flm(y, 5), 5), tir.const(0)),
    (flm(y - flm(y, -5), 5), tir.const(0)),
    (flm(y + flm(y * 4, 5), 5), tir.const(0)),
    (flm(y - flm(y, z), z), tir.const(0)),
    (tir.Max(y, z) * tir.Min(z, y), z * y),
]


@pytest.mark.parametrize("before,expected", MOD_CASES, ids=[str(c[0]) for c in MOD_CASES])
def test_remainder_rules(before, expected):
    after = arith.Analyzer().rewrite_simplify(before)
    assert ir.structural_equal(after, expected), f"{before} gave {after}, not {expected}"
    _check_same_values(before, after, span=[-7, -3, -1, 1, 2, 5, 7])


def test_a_long_sum_is_rewritten_once_per_node():
    # each node's operands are rewritten once, so a long chain stays linear
    terms = [tir.Var(f"v{i}", "int32") for i in range(200)]
    expr = terms[0]
    for v in terms[1:]:
        expr = expr + v * 3 - 1
    after = arith.Analyzer().rewrite_simplify(expr)
    point = {v: i % 7 - 3 for i, v in enumerate(terms)}
    assert _value(after, point) == _value(expr, point)


# truncdiv/truncmod: most rules need operands known non-negative (here x, y, z >= 0 unless a
# case names its own constraint); the values are checked at points where the constraint holds
NON_NEG = tir.all(x >= 0, y >= 0, z >= 0)
TRUNC_CASES = [
    (tdiv(x, x), tir.const(1), None),
    (tdiv(tdiv(x, 3), 5), tdiv(x, 15), None),
    (tdiv(x * 3, 9), tdiv(x, 3), None),
    (tdiv(x * 12, 4), x * 3, None),
    (tdiv(x * 7, x), tir.const(7), None),
    (tdiv(tdiv(x, 4) + 2, 3), tdiv(x + 8, 12), NON_NEG),
    (tdiv(x * 9 + y, 3), x * 3 + tdiv(y, 3), NON_NEG),
    # (the sum comes from Simplify, which puts x * 10 first; TVM keeps y first)
    (tdiv(y + x * 10, 5), x * 2 + tdiv(y, 5), NON_NEG),
    (tdiv(tir.Max(x * 8, y), 4), tir.Max(x * 2, tdiv(y, 4)), NON_NEG),
    (tdiv(tir.Min(y, x * 8), 4), tir.Min(tdiv(y, 4), x * 2), NON_NEG),
    (tdiv(x * 9 + y + z, 3), x * 3 + tdiv(y + z, 3), NON_NEG),
    (tdiv(x * 8 + (y + 5) - y, 4), x * 2 + 1, NON_NEG),
    (tdiv(x + 12, 4), tdiv(x, 4) + 3, NON_NEG),
    (tdiv(y + z, z), tdiv(y, z) + 1, NON_NEG),
    (tdiv(z + (y + x), z), tdiv(y + x, z) + 1, NON_NEG),
    (tdiv(z * y, z), y, NON_NEG),
    (tdiv(y * z + x, z), y + tdiv(x, z), NON_NEG),
    (tdiv(x, 4) + 1, tdiv(x, 4) + 1, NON_NEG),
    (tmod(x * 12, 4), tir.const(0), None),
    (tmod(x * 12, -3), tir.const(0), None),
    (tmod(x * 6 + y, 3), tmod(y, 3), NON_NEG),
    (tmod(x + 15, 5), tmod(x, 5), NON_NEG),
    (tmod(y + x * 8, -4), tmod(y, 4), NON_NEG),
    (tmod(x * 6 + 4 + y * 3 + 1, 3), tir.const(2), NON_NEG),
    (tmod(y - x * 6, 3), tmod(y, 3), tir.all(x <= 0, y >= 0)),
    (tmod(x, -5), tmod(x, 5), None),
]


def _points(constraint):
    for values in itertools.product(range(-13, 14, 3), repeat=3):
        point = dict(zip((x, y, z), values))
        if constraint is None or _value(tir.Cast("int32", constraint), point):
            yield point


@pytest.mark.parametrize("before,expected,constraint", TRUNC_CASES,
                         ids=[str(c[0]) for c in TRUNC_CASES])
def test_truncdiv_truncmod_rules(before, expected, constraint):
    ana = arith.Analyzer()
    with ana.constraint_scope(tir.const(True) if constraint is None else constraint):
        after = ana.rewrite_simplify(before)
    assert ir.structural_equal(after, expected), f"{before} gave {after}, not {expected}"
    for point in _points(constraint):
        if any(_value(d, point) == 0 for d in _divisors(before)):
            continue
        assert _value(before, point) == _value(after, point), (before, after, point)


def _divisors(expr):
    out = []
    tir.stmt_functor.post_order_visit(
        expr, lambda n: out.append(n.b) if isinstance(n, (tir.Div, tir.Mod)) else None)
    return out


@pytest.mark.parametrize("before", [tdiv(x * 8 + y, 4), tdiv(x + y, x), tdiv(x * y, y),
                                    tmod(x * 6 + y, 3), tmod(x + 9, 3)])
def test_trunc_rules_need_non_negative_operands(before):
    # without the constraint the operands may be negative, where the rules would be wrong
    after = arith.Analyzer().rewrite_simplify(before)
    assert type(after) is type(before)



def _trunc_div(a, b):
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


_LANE_OPS = {
    tir.Div: _trunc_div,
    tir.Mod: lambda a, b: a - _trunc_div(a, b) * b,
    tir.FloorDiv: lambda a, b: a // b,
    tir.FloorMod: lambda a, b: a % b,
}


def _lanes(expr, point, lanes):
    """The lane values of an int vector expression at a point (x substituted)."""
    if isinstance(expr, tir.Broadcast):
        return [_value(expr.value, point)] * lanes
    if isinstance(expr, tir.Ramp):
        base, stride = _value(expr.base, point), _value(expr.stride, point)
        return [base + i * stride for i in range(lanes)]
    op = _LANE_OPS[type(expr)]
    return [op(a, b) for a, b in zip(_lanes(expr.a, point, lanes), _lanes(expr.b, point, lanes))]


def _bc(v, lanes=4):
    return tir.Broadcast(tir.const(v), lanes)


VECTOR_CASES = [
    # truncated division of a ramp whose lanes are all non-negative
    (tdiv(tir.Ramp(x, 6, 4), _bc(3)), tir.Ramp(tdiv(x, 3), 2, 4), x >= 0),
    (tmod(tir.Ramp(x, 6, 4), _bc(3)), tir.Broadcast(tmod(x, 3), 4), x >= 0),
    (tdiv(tir.Ramp(x * 16 + 2, 1, 4), _bc(16)), tir.Broadcast(x, 4), x >= 0),
    (tmod(tir.Ramp(x * 16 + 2, 1, 4), _bc(8)), tir.Ramp(2, 1, 4), x >= 0),
    (tmod(tir.Ramp(x * 16 + 3, 5, 4), _bc(8)), tmod(tir.Ramp(3, 5, 4), _bc(8)), x >= 0),
    # floor division: lanes known in one block, or only the base's remainder known
    (flm(tir.Ramp(x * 16 + 1, 3, 4), _bc(8)), flm(tir.Ramp(1, 3, 4), _bc(8)), None),
    (flm(tir.Ramp(x * 16 + 2, 1, 4), _bc(8)), tir.Ramp(2, 1, 4), None),
    (flm(tir.Ramp(x * 8, 1, 4), _bc(32)), tir.Ramp(flm(x * 8, 32), 1, 4), None),
    (fld(tir.Ramp(x * 8, 1, 4), _bc(32)), tir.Broadcast(fld(x, 4), 4), None),
    (fld(tir.Ramp(x * 16 + 3, 1, 4), _bc(16)), tir.Broadcast(x, 4), None),
]


@pytest.mark.parametrize("before,expected,constraint", VECTOR_CASES,
                         ids=[str(c[0]) for c in VECTOR_CASES])
def test_ramp_division_rules(before, expected, constraint):
    ana = arith.Analyzer()
    with ana.constraint_scope(tir.const(True) if constraint is None else constraint):
        after = ana.rewrite_simplify(before)
    assert ir.structural_equal(after, expected), f"{before} gave {after}, not {expected}"
    for v in range(-13, 14):
        point = {x: v}
        if constraint is not None and not _value(tir.Cast("int32", constraint), point):
            continue
        assert _lanes(before, point, 4) == _lanes(after, point, 4), (before, after, v)


@pytest.mark.parametrize("before", [tdiv(tir.Ramp(x, 6, 4), _bc(3)),
                                    tmod(tir.Ramp(x, 6, 4), _bc(3))])
def test_truncated_ramp_rules_need_non_negative_lanes(before):
    # x = -1 gives lanes -1, 5, 11, 17: their truncated quotients are not a ramp
    after = arith.Analyzer().rewrite_simplify(before)
    assert type(after) is type(before)


def test_float_vector_plus_and_times_broadcast_zero():
    ramp = tir.Cast("float32x4", tir.Ramp(x, 1, 4))
    zero = tir.Broadcast(tir.const(0.0, "float32"), 4)
    ana = arith.Analyzer()
    assert ir.structural_equal(ana.rewrite_simplify(ramp + zero), ramp)
    assert ir.structural_equal(ana.rewrite_simplify(zero * ramp), zero)
    # a non-zero broadcast stays
    one = tir.Broadcast(tir.const(1.0, "float32"), 4)
    assert isinstance(ana.rewrite_simplify(ramp + one), tir.Add)


@pytest.mark.parametrize("op", [tdiv, tmod, fld, flm])
def test_vector_division_by_broadcast_zero_raises(op):
    from tessera.error import TesseraError
    with pytest.raises(TesseraError, match="broadcast of the constant zero"):
        arith.Analyzer().rewrite_simplify(op(tir.Ramp(x, 1, 4), _bc(0)))


FLOORMOD_CASES = [
    (flm(x * 12, 4), tir.const(0), None),
    (flm(x * 4800, 3200), flm(x * 1600, 3200), None),
    (flm(x * 100 + y, 8), flm(x * 4 + y, 8), None),
    (flm(x * 24 + y, 6), flm(y, 6), None),
    (flm(x * 16 + y, 48), flm(x, 3) * 16 + y, tir.all(y >= 0, y < 16)),
    (flm(x * 16 - y, 48), flm(x * 16 - y, 48), tir.all(y >= 0, y < 16)),
    (flm(x * z * 3 + y, z * 3), flm(y, z * 3), z * 3 >= 0),
]


@pytest.mark.parametrize("before,expected,constraint", FLOORMOD_CASES,
                         ids=[str(c[0]) for c in FLOORMOD_CASES])
def test_floormod_rules(before, expected, constraint):
    ana = arith.Analyzer()
    with ana.constraint_scope(tir.const(True) if constraint is None else constraint):
        after = ana.rewrite_simplify(before)
    assert ir.structural_equal(after, expected), f"{before} gave {after}, not {expected}"
    for point in _points(constraint):
        if any(_value(d, point) == 0 for d in _floor_divisors(before)):
            continue
        assert _value(before, point) == _value(after, point), (before, after, point)


def _floor_divisors(expr):
    out = []
    tir.stmt_functor.post_order_visit(
        expr, lambda n: out.append(n.b) if isinstance(n, (tir.FloorDiv, tir.FloorMod)) else None)
    return out


FLOORDIV_BOUND_CASES = [
    # the rest of the sum is known to lie in [0, c1)
    (fld(x * 16 + y, 48), fld(x, 3), tir.all(y >= 0, y < 16)),
    (fld(x * 64 + y * 8 + z, 192), fld(x, 3), tir.all(y >= 0, y < 8, z >= 0, z < 8)),
    (fld(x * 16 + y, 16), x, tir.all(y >= 0, y < 16)),
    # no bound on y: stays
    (fld(x * 16 + y, 48), fld(x * 16 + y, 48), None),
    # a divisor that is a product
    (fld(x * z * 3 + y, z * 3), x + fld(y, z * 3), None),
]


@pytest.mark.parametrize("before,expected,constraint", FLOORDIV_BOUND_CASES,
                         ids=[str(c[0]) for c in FLOORDIV_BOUND_CASES])
def test_floordiv_rules_with_bounds(before, expected, constraint):
    test_floormod_rules(before, expected, constraint)
