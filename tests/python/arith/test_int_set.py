"""Analyzer.int_set, IntervalSet / IntSet and union_lower_bound (TVM v0.23's tvm.arith.int_set
behaviour)."""

import pytest

from tessera import arith, ir, tir
from tessera.arith import IntervalSet, IntSet
from tessera.error import TesseraTypeError, TesseraValueError


def ends(s):
    return (s.min_value, s.max_value)


def check(ana, s, lo, hi):
    assert ana.can_prove_equal(s.min_value, tir.const(lo) if isinstance(lo, int) else lo), s
    assert ana.can_prove_equal(s.max_value, tir.const(hi) if isinstance(hi, int) else hi), s


def test_points_and_intervals():
    s = IntervalSet(2, 3)
    assert (s.min_value.value, s.max_value.value) == (2, 3)
    p = IntSet.single_point(5)
    assert p.min_value.same_as(p.max_value)
    assert arith.int_set.pos_inf().same_as(arith.int_set.pos_inf())
    assert IntervalSet(arith.int_set.neg_inf(), arith.int_set.pos_inf()).is_everything()


def test_vector_sets():
    s = IntSet.vector(tir.Ramp(tir.const(10), tir.const(3), 4))
    assert (s.min_value.value, s.max_value.value) == (10, 19)
    s = IntSet.vector(tir.Ramp(tir.const(5), tir.const(2), tir.vscale() * 4))
    assert s.min_value.value == 5
    assert s.max_value.same_as(arith.int_set.pos_inf())


def test_arithmetic_on_intervals():
    ana = arith.Analyzer()
    x, y = tir.Var("x", "int32"), tir.Var("y", "int32")
    check(ana, ana.int_set(x + y, {x: IntervalSet(0, 10)}), y, y + 10)
    check(ana, ana.int_set(x - y, {x: IntervalSet(0, 10), y: IntervalSet(1, 11)}), -11, 9)
    check(ana, ana.int_set(x * -2, {x: IntervalSet(1, 10)}), -20, -2)
    check(ana, ana.int_set(tir.floordiv(x, 2), {x: IntervalSet(-1, 10)}), -1, 5)
    check(ana, ana.int_set(tir.max(x, x + 1), {x: IntervalSet(0, 10)}), 1, 11)
    check(ana, ana.int_set(tir.Select(x > 0, x - 1, x + 1), {x: IntervalSet(0, 10)}), -1, 11)
    # A Range is a domain too.
    check(ana, ana.int_set(x * 3, {x: ir.Range(0, 4)}), 0, 9)


def test_symbolic_factor_and_divisor_use_the_analyzer():
    ana = arith.Analyzer()
    x, y = tir.Var("x", "int32"), tir.Var("y", "int32")
    ana.update(y, arith.ConstIntBound(1, 100))
    check(ana, ana.int_set(x * y, {x: IntervalSet(0, 10)}), 0, y * 10)
    check(ana, ana.int_set(tir.truncmod(x, y), {x: IntervalSet(0, 10)}), 0, y - 1)


def test_remainders():
    ana = arith.Analyzer()
    x, y = tir.Var("x", "int32"), tir.Var("y", "int32")
    fm = tir.floormod
    check(ana, ana.int_set(fm(x, 10), {x: IntervalSet(13, 15)}), 3, 5)  # one quotient
    check(ana, ana.int_set(fm(x, 10), {x: IntervalSet(3, 15)}), 0, 9)
    check(ana, ana.int_set(fm(x * 2048 + y * 16, 7168),
                           {x: IntervalSet(0, 128), y: IntervalSet(0, 3584)}), 0, 7152)


def test_division_by_zero_is_an_error():
    ana = arith.Analyzer()
    x = tir.Var("x", "int32")
    with pytest.raises(TesseraValueError, match="by zero"):
        ana.int_set(tir.Div(x, tir.const(0)), {x: IntervalSet(0, 4)})


def test_bad_domains_are_refused():
    ana = arith.Analyzer()
    x = tir.Var("x", "int32")
    with pytest.raises(TesseraTypeError, match="IntervalSet or a Range"):
        ana.int_set(x, {x: (0, 4)})
    with pytest.raises(TesseraTypeError, match="expected an expression or an int"):
        IntervalSet("a", 3)


def test_union_lower_bound():
    neg, pos = arith.int_set.neg_inf(), arith.int_set.pos_inf()
    low, high = IntervalSet(neg, 0), IntervalSet(1, pos)
    r = arith.int_set.union_lower_bound([low, high])
    assert r.min_value.same_as(neg) and r.max_value.same_as(pos)
    # An interval with a gap to the first is left out.
    r = arith.int_set.union_lower_bound([IntervalSet(0, 3), IntervalSet(10, 12)])
    assert (r.min_value.value, r.max_value.value) == (0, 3)
    assert arith.int_set.union_lower_bound([]).is_nothing()
