"""tessera.arith's linear analyses and integer solvers: detect_linear_equation,
detect_clip_bound, detect_common_subexpr, deduce_bound, DomainTouched, solve_linear_equations."""

import itertools
import random

import pytest

from tessera import arith, ir, te, tir
from tessera.error import TesseraTypeError, TesseraValueError
from tessera.script import tir as T
from tessera.testing import assert_prim_expr_equal, check_int_constraints_trans_consistency


def test_detect_linear_equation():
    a, b, c = te.var("a"), te.var("b"), te.var("c")
    coeffs = arith.detect_linear_equation(a * 3 + (a - b) * 2 + c * a + 5, [a, b])
    assert len(coeffs) == 3
    assert_prim_expr_equal(coeffs[0], c + 5)
    assert coeffs[1].value == -2
    assert coeffs[2].value == 5
    # a product of two of the variables, or a coefficient using a later one, is not linear
    assert arith.detect_linear_equation(a * b, [a, b]) == []
    assert arith.detect_linear_equation(a * b + a, [a, b]) == []
    assert arith.detect_linear_equation(tir.floordiv(a, 2), [a]) == []
    # no variables: the expression is the base
    [base] = arith.detect_linear_equation(b - 1, [])
    assert_prim_expr_equal(base, b - 1)


def test_detect_clip_bound():
    a, b = te.var("a"), te.var("b")
    # a bound on a may use other variables when only a is asked for
    lo_a, hi_a = arith.detect_clip_bound(tir.all(a >= b + 1, a * -1 > -20, a < 15), [a])
    assert_prim_expr_equal(lo_a, b + 1)
    assert_prim_expr_equal(hi_a, 14)
    lo_a, hi_a, lo_b, hi_b = arith.detect_clip_bound(
        tir.all(tir.Not(b < 2), b <= 7, tir.Max(a, 3) < 15, a == 4), [a, b])
    assert (lo_a.value, hi_a.value, lo_b.value, hi_b.value) == (4, 4, 2, 7)
    # a coefficient other than +-1, or a conjunct that is no comparison: nothing
    assert arith.detect_clip_bound(tir.all(a * 2 < 10, b > 0), [a, b]) == []
    assert arith.detect_clip_bound(tir.Or(a < 10, b > 0), [a, b]) == []


def test_detect_common_subexpr():
    x, y, z = te.var("x"), te.var("y"), te.var("z")
    s = (x + y) * z
    e = s + (x + y) * z * 2 + tir.floordiv(s, 3)
    found = arith.detect_common_subexpr(e, 2)
    counts = {str(k): v for k, v in found.items()}
    assert counts == {str(s): 3}
    found = arith.detect_common_subexpr(e, 4)
    assert found == {}
    with pytest.raises(TesseraValueError, match="threshold"):
        arith.detect_common_subexpr(e, -1)


def _brute_bound(cond, var, fixed, lo=-200, hi=200):
    """The values of var in [lo, hi] for which cond holds at every point of `fixed`."""
    good = []
    for value in range(lo, hi + 1):
        ok = True
        for point in itertools.product(*[range(s, e + 1) for s, e in fixed.values()]):
            vmap = dict(zip(fixed, point))
            vmap[var] = value
            result = arith.Analyzer().simplify(tir.stmt_functor.substitute(cond, vmap))
            if not result.value:
                ok = False
                break
        if ok:
            good.append(value)
    return good


@pytest.mark.parametrize("make_cond", [
    lambda a, b: a * 3 + b < 17,
    lambda a, b: 17 <= b - a * 4,
    lambda a, b: tir.floordiv(a, 5) + b * 2 > 3,
    lambda a, b: tir.floordiv(a, -3) - b <= 4,
])
def test_deduce_bound_matches_enumeration(make_cond):
    a, b = te.var("a"), te.var("b")
    cond = make_cond(a, b)
    res = arith.deduce_bound(a, cond, {b: arith.IntervalSet(1, 3)}, {b: arith.IntervalSet(1, 3)})
    good = _brute_bound(cond, a, {b: (1, 3)})
    lo = None if str(res.min_value) == "neg_inf" else res.min_value.value
    hi = None if str(res.max_value) == "pos_inf" else res.max_value.value
    assert (lo is None) != (hi is None)
    assert good == [v for v in range(-200, 201)
                    if (lo is None or v >= lo) and (hi is None or v <= hi)]


def test_deduce_bound_equal_and_nothing():
    a, b = te.var("a"), te.var("b")
    # 3 * a == b + 9 needs b + 9 to be a multiple of 3, which is not known
    assert arith.deduce_bound(a, 3 * a - b == 9, {}, {}).is_nothing()
    res = arith.deduce_bound(a, 3 * a - 6 == 9, {}, {})
    assert res.min_value.value == res.max_value.value == 5
    for cond in [a * a < 3, tir.floormod(a, 4) < 3, a != 2, a + b]:
        res = arith.deduce_bound(a, cond, {}, {})
        assert res.is_nothing()
        assert str(res.min_value) == "pos_inf" and str(res.max_value) == "neg_inf"
    with pytest.raises(TesseraTypeError, match="Var"):
        arith.deduce_bound(a + 1, a < 3, {}, {})
    with pytest.raises(TesseraTypeError, match="IntervalSet"):
        arith.deduce_bound(a, a + b < 3, {b: 4}, {})


@T.prim_func
def _stencil(a: T.handle, b: T.handle, n: T.int32):
    A = T.match_buffer(a, (64, n))
    B = T.match_buffer(b, (64, n))
    for i, j in T.grid(62, n - 2):
        B[i + 1, j + 1] = A[i, j] + A[i + 2, j + 2]


@T.prim_func
def _vector_store(a: T.handle, b: T.handle):
    A = T.match_buffer(a, (64,))
    B = T.match_buffer(b, (64,))
    for k in T.serial(8):
        B[k * 8 : k * 8 + 4] = A[0:4]


def test_domain_touched():
    A, B = [_stencil.buffer_map[p] for p in _stencil.params[:2]]
    n = _stencil.params[2]
    body = _stencil.body
    reads = arith.domain_touched(body, A, True, False)
    assert (reads[0].min.value, reads[0].extent.value) == (0, 64)
    assert reads[1].min.value == 0
    assert_prim_expr_equal(reads[1].extent, n)
    writes = arith.domain_touched(body, B, False, True)
    assert (writes[0].min.value, writes[0].extent.value) == (1, 62)
    assert writes[1].min.value == 1
    assert_prim_expr_equal(writes[1].extent, n - 2)
    both = arith.domain_touched(body, B, True, True)
    assert (both[0].min.value, both[0].extent.value) == (1, 62)
    assert len(arith.domain_touched(body, A, False, True)) == 0
    with pytest.raises(TesseraValueError, match="loads, stores"):
        arith.domain_touched(body, A, False, False)


def test_domain_touched_vector():
    # A vector index covers its lanes; its base is not relaxed (as TVM's DomainTouched).
    A, B = [_vector_store.buffer_map[p] for p in _vector_store.params]
    [store] = arith.domain_touched(_vector_store.body, B, False, True)
    loop_var = _vector_store.body.loop_var
    assert_prim_expr_equal(store.min, loop_var * 8)
    assert store.extent.value == 4
    [load] = arith.domain_touched(_vector_store.body, A, True, False)
    assert (load.min.value, load.extent.value) == (0, 4)


def test_solve_linear_equations_unique_and_free():
    x, y, z = te.var("x"), te.var("y"), te.var("z")
    sol = arith.solve_linear_equations([x * 2 + y == 7, x - y == -1], [x, y])
    assert sol.dst.variables == []
    assert sol.src_to_dst[x].value == 2 and sol.src_to_dst[y].value == 3
    # one equation in three unknowns: two free variables
    ranges = {v: ir.Range(0, 6) for v in (x, y, z)}
    sol = arith.solve_linear_equations([x + y * 2 - z * 3 == 1], [x, y, z], ranges)
    assert len(sol.dst.variables) == 2
    assert set(sol.dst_to_src) == set(sol.dst.variables)
    check_int_constraints_trans_consistency(sol)
    # no integer solution: 2x == 2y + 1
    sol = arith.solve_linear_equations([x * 2 == y * 2 + 1], [x, y])
    ir.assert_structural_equal(sol.dst.relations, [tir.const(False)])
    assert sol.src_to_dst == {} and sol.dst_to_src == {}


def test_solve_linear_equations_consistent_random():
    rng = random.Random(7)
    for num_vars, num_eqs in [(2, 1), (2, 2), (3, 2), (3, 3), (4, 2)]:
        xs = [te.var(f"x{i}") for i in range(num_vars)]
        rels = []
        for _ in range(num_eqs):
            lhs = sum(v * rng.randint(-3, 3) for v in xs) + rng.randint(-3, 3)
            rhs = sum(v * rng.randint(-3, 3) for v in xs)
            rels.append(tir.EQ(lhs, rhs) if rng.random() < 0.8 else tir.LE(lhs, rhs))
        ranges = {v: ir.Range(-4, 5) for v in xs}
        check_int_constraints_trans_consistency(arith.solve_linear_equations(rels, xs, ranges))
        params = {xs[-1]: ranges[xs[-1]]}
        sol = arith.solve_linear_equations(rels, xs[:-1], ranges)
        check_int_constraints_trans_consistency(sol, params)


def test_consistency_check_catches_a_wrong_transform():
    x, y = te.var("x"), te.var("y")
    sol = arith.solve_linear_equations([x + y == 4], [x, y], {x: ir.Range(0, 5), y: ir.Range(0, 5)})
    assert len(sol.dst.variables) == 1
    sol.src_to_dst[y] = sol.src_to_dst[y] + 1  # wrong on purpose
    with pytest.raises(AssertionError, match="is false at"):
        check_int_constraints_trans_consistency(sol)
