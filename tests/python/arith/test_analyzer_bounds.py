"""Analyzer.update / const_int_bound_is_bound / constraint_scope and the bound and modular-set
rules they expose (TVM v0.23's tvm.arith.Analyzer behaviour)."""

import pytest

from tessera import arith, ir, tir
from tessera.error import TesseraTypeError, TesseraValueError

POS_INF = arith.ConstIntBound.POS_INF
NEG_INF = arith.ConstIntBound.NEG_INF


def bounds(ana, expr):
    b = ana.const_int_bound(expr)
    return (b.min_value, b.max_value)


def test_update_records_a_bound():
    ana = arith.Analyzer()
    x = tir.Var("x", "int64")
    assert not ana.const_int_bound_is_bound(x)
    ana.update(x, arith.ConstIntBound(0, POS_INF))
    assert ana.const_int_bound_is_bound(x)
    assert bounds(ana, 1 - x) == (NEG_INF, 1)


def test_update_with_a_different_bound_needs_override():
    ana = arith.Analyzer()
    y = tir.Var("y", "int32")
    ana.update(y, arith.ConstIntBound(1, 100))
    ana.update(y, arith.ConstIntBound(1, 100))  # the same bound: accepted
    with pytest.raises(TesseraValueError, match="override=True"):
        ana.update(y, arith.ConstIntBound(2, 3))
    ana.update(y, arith.ConstIntBound(2, 3), override=True)
    assert bounds(ana, y * 2) == (4, 6)


def test_update_refuses_what_is_not_a_bound():
    ana = arith.Analyzer()
    with pytest.raises(TesseraTypeError, match="expected a ConstIntBound"):
        ana.update(tir.Var("y", "int32"), "0..4")
    with pytest.raises(TesseraTypeError, match="expected a Var"):
        ana.update(3, arith.ConstIntBound(0, 1))


def test_bind_takes_a_range_an_expression_or_a_bound():
    ana = arith.Analyzer()
    i, j, k = (tir.Var(n, "int32") for n in "ijk")
    ana.bind(i, ir.Range(0, 16))
    ana.bind(j, i * 4 + 1)
    ana.bind(k, arith.ConstIntBound(-2, 2))
    assert bounds(ana, i) == (0, 15)
    assert bounds(ana, j) == (1, 61)
    assert tuple(ana.modular_set(j)) == (4, 1)
    assert bounds(ana, k) == (-2, 2)


def test_division_by_a_divisor_across_zero():
    ana = arith.Analyzer()
    x, y = tir.Var("x", "int32"), tir.Var("y", "int32")
    ana.update(x, arith.ConstIntBound(-9, 4))
    ana.update(y, arith.ConstIntBound(-4, 12))
    # x / y for y in [-4, -1] is in [-4, 9]; for y in [1, 12] in [-9, 4].
    assert bounds(ana, tir.truncdiv(x, y)) == (-9, 9)
    assert bounds(ana, tir.floordiv(x, y)) == (-9, 9)


def test_remainders():
    ana = arith.Analyzer()
    a, b = tir.Var("a", "int32"), tir.Var("b", "int32")
    ana.update(a, arith.ConstIntBound(0, 6))
    ana.update(b, arith.ConstIntBound(-5, 7))
    assert bounds(ana, tir.floormod(a, b)) == (-4, 6)
    ana.update(b, arith.ConstIntBound(0, POS_INF), override=True)  # b == 0 is assumed away
    assert bounds(ana, tir.floordiv(a, b)) == (0, 6)
    assert bounds(ana, tir.floormod(a, b)) == (0, 6)
    tx, bx = tir.Var("tx", "int32"), tir.Var("bx", "int32")
    ana.update(tx, arith.ConstIntBound(0, 128))
    ana.update(bx, arith.ConstIntBound(0, 3584))
    assert bounds(ana, tir.floormod(bx * 2048 + tx * 16, 7168)) == (0, 7152)


def test_shift_and_bitwise_and_and_casts():
    ana = arith.Analyzer()
    x, y = tir.Var("x", "int32"), tir.Var("y", "int32")
    ana.update(x, arith.ConstIntBound(-9, 11))
    ana.update(y, arith.ConstIntBound(2, 10))
    assert bounds(ana, x >> y) == (-3, 2)
    assert bounds(ana, x & y) == (0, 10)
    z = tir.Var("z", "int8")
    assert bounds(ana, tir.truncmod(z, 3).astype("uint32")) == (0, 2)
    assert bounds(ana, tir.truncmod(z, 3).astype("float32").astype("int32")) == (-2, 2)
    assert bounds(ana, tir.SizeVar("n", "int32")) == (0, POS_INF)


def test_constraint_scope_bounds_an_expression():
    ana = arith.Analyzer()
    a = tir.Var("a", "int32")
    ana.update(a, arith.ConstIntBound(0, 128))
    r = tir.floormod(a, 58)
    with ana.constraint_scope(tir.all(1 <= r, r < 57)):
        assert bounds(ana, r - 1) == (0, 55)
    assert bounds(ana, r - 1) == (-1, 56)


def test_constraint_scope_intersects_residues():
    ana = arith.Analyzer()
    a = tir.Var("a", "int32")
    with ana.constraint_scope(tir.truncmod(a, 3) == 2):
        with ana.constraint_scope(tir.truncmod(a, 5) == 3):
            with ana.constraint_scope(tir.floormod(a, 7) == 2):
                assert tuple(ana.modular_set(a)) == (105, 23)
            assert tuple(ana.modular_set(a)) == (15, 8)
    assert tuple(ana.modular_set(a)) == (1, 0)


def test_constraint_scope_needs_a_condition():
    ana = arith.Analyzer()
    with pytest.raises(TesseraTypeError, match="bool condition"):
        ana.constraint_scope(tir.Var("a", "int32") + 1)


def test_modular_sets_as_tvm_computes_them():
    ana = arith.Analyzer()
    x, y = tir.Var("x", "int32"), tir.Var("y", "int32")
    z = tir.Var("z", "int8")
    assert tuple(ana.modular_set((z * 3 + 1).astype("float32").astype("int32"))) == (3, 1)
    assert tuple(ana.modular_set((x * 4 + 2) >> 1)) == (2, 1)
    assert tuple(ana.modular_set((x * 16 + y * 4) & 31)) == (4, 0)
    assert tuple(ana.modular_set((x * 16 + y * 4) & 17)) == (1, 0)
    # A remainder: the residues modulo gcd(coeff, divisor).
    assert tuple(ana.modular_set(tir.floormod(x * 4 + 3, 2))) == (2, 1)
    assert tuple(ana.modular_set(tir.truncmod(x * 4, 4))) == (4, 0)
    # A truncating remainder or quotient of a value of unknown sign: nothing known.
    assert tuple(ana.modular_set(tir.truncmod(x * 4 + 1, 4))) == (1, 0)
    assert tuple(ana.modular_set(tir.truncdiv(x * 4 + 2, 2))) == (1, 0)
    ana.update(x, arith.ConstIntBound(0, 100))
    assert tuple(ana.modular_set(tir.truncdiv(x * 4 + 2, 2))) == (2, 1)


def test_infinite_ends_stay_infinite_finite_ends_keep_to_the_type():
    ana = arith.Analyzer()
    x, y = tir.Var("x", "int32"), tir.Var("y", "int32")
    ana.update(x, arith.ConstIntBound(NEG_INF, 4))
    ana.update(y, arith.ConstIntBound(-8, 2))
    assert bounds(ana, x * y) == (NEG_INF, POS_INF)
    assert bounds(ana, tir.min(x, y)) == (NEG_INF, 2)
    # Unbounded int32 vars: their type range, and sums kept inside it.
    u, v = tir.Var("u", "int32"), tir.Var("v", "int32")
    assert bounds(ana, u + v) == (-(2**31), 2**31 - 1)


def test_bind_to_an_expression_substitutes_it():
    ana = arith.Analyzer()
    x, y = tir.Var("x", "int32"), tir.Var("y", "int32")
    ana.bind(x, y + 1)
    assert ana.simplify(x - y).value == 1
    assert ana.can_prove(x > y)
    assert ana.can_prove_equal(x * 2, y * 2 + 2)
    # A range binding keeps the var.
    i = tir.Var("i", "int32")
    ana.bind(i, ir.Range(0, 4))
    ir.assert_structural_equal(ana.simplify(i + 0), i)


@pytest.mark.parametrize("dtype", ["int8", "uint16", "uint64", "float16", "float32"])
def test_a_value_equals_itself_in_every_type(dtype):
    ana = arith.Analyzer()
    n = tir.Var("n", dtype)
    assert ana.can_prove(n == n)
    assert ana.can_prove(n <= n)
    assert ana.can_prove_equal(n, n)
    assert not ana.can_prove(n < n)


@pytest.mark.parametrize(
    "prior, expr, narrowed",
    [
        (lambda i: i <= 0, lambda i: 0 <= i, lambda i: i == 0),
        (lambda i: i <= 0, lambda i: i != 0, lambda i: i < 0),
        (lambda i: i != 0, lambda i: i <= 0, lambda i: i < 0),
    ],
)
def test_a_constraint_on_a_var_still_narrows_a_comparison(prior, expr, narrowed):
    # The bound a constraint puts on a var must not make the constraint prove itself before
    # it is recorded as a comparison: `0 <= i` under `i <= 0` is `i == 0`.
    ana = arith.Analyzer()
    i = tir.Var("i", "int32")
    with ana.constraint_scope(prior(i)):
        ir.assert_structural_equal(ana.simplify(expr(i)), narrowed(i))


def test_symbolic_range_binding_is_a_known_comparison():
    # A variable bound to [0, n) is below n: k < n and, once a scaled comparison has reduced
    # `k * 16 + a < n * 16` (a in [0, 16)) to `k - n < 0`, that too.
    ana = arith.Analyzer()
    n, k, a = tir.Var("n", "int64"), tir.Var("k", "int64"), tir.Var("a", "int64")
    ana.bind(k, ir.Range.from_min_extent(tir.const(0, "int64"), n))
    ana.bind(a, ir.Range.from_min_extent(tir.const(0, "int64"), tir.const(16, "int64")))
    assert ana.can_prove(k < n)
    assert ana.can_prove(k - n < 0)
    assert ana.can_prove(k * 16 + a < n * 16)
    assert not ana.can_prove(k * 16 + a < n * 8)
    assert not ana.can_prove(k < n - 1)
    # Symbolic min and extent: m <= j < m + n, j - m in [0, n).
    m, j = tir.Var("m", "int32"), tir.Var("j", "int32")
    ana.bind(j, ir.Range.from_min_extent(m, tir.Var("w", "int32")))
    assert ana.can_prove(m <= j)
    assert not ana.can_prove(m < j)


def test_rebinding_forgets_the_comparison():
    ana = arith.Analyzer()
    n, k = tir.Var("n", "int32"), tir.Var("k", "int32")
    ana.bind(k, ir.Range.from_min_extent(0, n))
    assert ana.can_prove(k < n)
    ana.bind(k, ir.Range.from_min_extent(0, n + 4), allow_override=True)
    assert not ana.can_prove(k < n)
    assert ana.can_prove(k < n + 4)
