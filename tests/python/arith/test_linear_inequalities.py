"""tessera.arith.solve_linear_inequalities (Fourier-Motzkin elimination), its deskewed form and
the conditions form (TVM's arith._ffi_api.SolveInequalitiesAsCondition)."""

import random

from tessera import arith, ir, te, tir
from tessera.testing import (assert_prim_expr_equal, check_bool_expr_is_true,
                             check_int_constraints_trans_consistency)


def _all(conds):
    out = tir.const(True)
    for c in conds:
        out = tir.And(out, c)
    return out


def test_ranges_of_a_triangle():
    # 0 <= y < 4, 1 <= y, 2x + y <= 12, x >= y: y in [1, 3], x in [y, (12 - y) // 2]
    x, y = te.var("x"), te.var("y")
    ranges = {x: ir.Range(-50, 50), y: ir.Range(0, 4)}
    problem = [y >= 1, x * 2 + y <= 12, x >= y]
    sol = arith.solve_linear_inequalities(problem, [x, y], ranges)
    assert (sol.ranges[y].min.value, sol.ranges[y].extent.value) == (1, 3)
    assert_prim_expr_equal(sol.ranges[x].min, y)
    # every point of the solved ranges satisfying the relations left solves the problem, and
    # the other way round
    conds = arith.solve.solve_inequalities_as_condition([x, y], ranges, problem)
    check_bool_expr_is_true(_all(conds) == _all(problem), ranges)


def test_deskew_shifts_to_zero():
    x, y = te.var("x"), te.var("y")
    ranges = {x: ir.Range(-50, 50), y: ir.Range(0, 4)}
    sol = arith.solve_linear_inequalities([y >= 1, x >= y + 3, x <= 7], [x, y], ranges,
                                          deskew_range=True)
    x_new, y_new = sol.dst.variables
    assert (sol.dst.ranges[y_new].min.value, sol.dst.ranges[y_new].extent.value) == (0, 3)
    assert sol.dst.ranges[x_new].min.value == 0
    assert_prim_expr_equal(sol.src_to_dst[y], y_new + 1)
    assert_prim_expr_equal(sol.dst_to_src[y_new], y - 1)
    check_int_constraints_trans_consistency(sol)


def test_single_values_and_no_solution():
    x, y = te.var("x"), te.var("y")
    sol = arith.solve_linear_inequalities([x + y >= 5, x - y >= 1, x <= 3], [x, y],
                                          deskew_range=True)
    assert sol.dst.variables == [] and sol.dst.relations == []
    assert (sol.src_to_dst[x].value, sol.src_to_dst[y].value) == (3, 2)
    ranges = {x: ir.Range(0, 10)}
    for deskew in (False, True):
        sol = arith.solve_linear_inequalities([x * 3 >= 20, x * 2 <= 13], [x], ranges,
                                              deskew_range=deskew)
        relations = sol.dst.relations if deskew else sol.relations
        ir.assert_structural_equal(relations, [tir.const(False)])


def test_bound_through_a_call_gives_no_range():
    x, n = te.var("x"), te.var("n")
    ranges = {x: ir.Range(0, tir.Cast("int32", tir.log(tir.Cast("float32", n))))}
    sol = arith.solve_linear_inequalities([x >= 2], [x], ranges)
    assert sol.ranges == {}
    assert len(sol.relations) >= 1


def test_random_systems_are_solved_consistently():
    rng = random.Random(11)
    for num_vars, num_rels in [(1, 2), (2, 2), (2, 3), (3, 3)]:
        xs = [te.var(f"x{i}") for i in range(num_vars)]
        rels = []
        for _ in range(num_rels):
            lhs = sum(v * rng.randint(-2, 2) for v in xs) + rng.randint(-3, 3)
            rhs = sum(v * rng.randint(-2, 2) for v in xs)
            rels.append(rng.choice([tir.EQ, tir.LE, tir.LT, tir.GE, tir.GT])(lhs, rhs))
        ranges = {v: ir.Range(-6, 7) for v in xs}
        conds = arith.solve.solve_inequalities_as_condition(xs, ranges, rels)
        check_bool_expr_is_true(_all(conds) == _all(rels), ranges)
        sol = arith.solve_linear_inequalities(rels, xs, ranges, deskew_range=True)
        check_int_constraints_trans_consistency(sol)
