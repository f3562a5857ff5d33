"""Linear analyses and integer solvers of ``tvm.arith``: ``detect_linear_equation``,
``detect_clip_bound``, ``detect_common_subexpr``, ``deduce_bound`` and
``solve_linear_equations``. The analyses run in C++ (src/arith); the classes here hold their
results with TVM's attribute names.

>>> x, y = te.var("x"), te.var("y")
>>> sol = solve_linear_equations([x + y == 20, x - y == 10], [x, y])
>>> sol.src_to_dst[x], sol.src_to_dst[y]
(15, 5)
"""

from .. import _core
from ..error import TesseraTypeError, TesseraValueError
from . import int_set as _int_set

__all__ = [
    "IntervalSet", "IntConstraints", "IntConstraintsTransform", "deduce_bound",
    "detect_clip_bound", "detect_common_subexpr", "detect_linear_equation", "domain_touched",
    "solve_inequalities_as_condition", "solve_linear_equations", "solve_linear_inequalities",
]

# The symbolic infinities of an interval's ends (TVM prints them as pos_inf / neg_inf); the
# interval class is the one of int_set.py.
pos_inf = _int_set.pos_inf()
neg_inf = _int_set.neg_inf()
IntervalSet = _int_set.IntervalSet


def _expr(value, what):
    from ..tir import expr_ops

    if isinstance(value, _core.PrimExpr):
        return value
    if isinstance(value, (bool, int)):
        return expr_ops.const(value)
    raise TesseraTypeError(f"{what}: expected an integer expression, got {type(value).__name__}")


def _vars(values, what):
    values = list(values or [])
    for v in values:
        if not isinstance(v, _core.Var):
            raise TesseraTypeError(f"{what}: expected a list of Var, got {type(v).__name__}")
    return values


def _from_ends(lo, hi, nothing=False):
    """An IntervalSet from C++ ends (None: unbounded); ``nothing``: the empty set."""
    if nothing:
        return IntervalSet(pos_inf, neg_inf)
    return IntervalSet(neg_inf if lo is None else lo, pos_inf if hi is None else hi)


def _ends(s):
    """The ends of an IntervalSet for C++ (None where unbounded)."""
    lo = None if _is_inf(s.min_value) else s.min_value
    hi = None if _is_inf(s.max_value) else s.max_value
    return lo, hi


def _is_inf(value):
    return isinstance(value, _core.Var) and (value.same_as(pos_inf) or value.same_as(neg_inf))


def _interval_items(dom, what):
    items = []
    for var, s in (dom or {}).items():
        if not isinstance(var, _core.Var):
            raise TesseraTypeError(f"{what}: keys must be Var, got {type(var).__name__}")
        if isinstance(s, _core.Range):
            s = IntervalSet(s.min, s.min + s.extent - 1)
        if not isinstance(s, IntervalSet):
            raise TesseraTypeError(f"{what}: values must be IntervalSet, got {type(s).__name__}")
        if s.is_nothing():
            raise TesseraValueError(f"{what}: the interval of {var} is empty")
        lo, hi = _ends(s)
        items.append((var, lo, hi))
    return items


def deduce_bound(var, cond, hint_map, relax_map):
    """The IntervalSet of ``var`` for which the comparison ``cond`` holds, ``var`` occurring once
    in it; the variables of ``relax_map`` are relaxed over their sets (the bound holds for all of
    them) and ``hint_map`` gives the signs of factors. Empty when no bound can be deduced."""
    if not isinstance(var, _core.Var):
        raise TesseraTypeError(f"deduce_bound: expected a Var, got {type(var).__name__}")
    cond = _expr(cond, "deduce_bound")
    lo, hi, nothing = _core.arith_deduce_bound(
        var, cond, _interval_items(hint_map, "deduce_bound hint_map"),
        _interval_items(relax_map, "deduce_bound relax_map"))
    return _from_ends(lo, hi, nothing)


def detect_linear_equation(expr, var_list):
    """``[c0, ..., c(n-1), base]`` with ``expr == c0 * var_list[0] + ... + base``; ``[]`` when
    ``expr`` is not linear in the variables."""
    return list(_core.arith_detect_linear_equation(_expr(expr, "detect_linear_equation"),
                                                   _vars(var_list, "detect_linear_equation")))


def detect_clip_bound(expr, var_list):
    """``[min0, max0, min1, max1, ...]``: the bounds the conjunction of comparisons ``expr``
    puts on each variable (None where unbounded); ``[]`` when a conjunct is not a bound on one
    variable with coefficient 1 or -1."""
    return list(_core.arith_detect_clip_bound(_expr(expr, "detect_clip_bound"),
                                              _vars(var_list, "detect_clip_bound")))


def detect_common_subexpr(expr, threshold):
    """``{computation: count}`` of the sub-computations of ``expr`` occurring at least
    ``threshold`` times (structurally equal ones count together)."""
    if not isinstance(threshold, int) or threshold < 0:
        raise TesseraValueError(f"detect_common_subexpr: threshold must be a non-negative int, "
                                f"got {threshold!r}")
    return dict(_core.arith_detect_common_subexpr(_expr(expr, "detect_common_subexpr"), threshold))


def domain_touched(stmt, buffer, consider_loads, consider_stores):
    """The region (an Array of Range) of ``buffer`` that ``stmt`` loads and/or stores, each loop
    variable relaxed over its loop; ``[]`` when ``stmt`` does not access it."""
    if not (consider_loads or consider_stores):
        raise TesseraValueError("domain_touched: consider loads, stores or both")
    return _core.Array(_core.arith_domain_touched(stmt, buffer, bool(consider_loads),
                                                  bool(consider_stores)))


class IntConstraints:
    """A system of integer constraints: ``variables``, their ``ranges`` ({Var: Range}) and
    ``relations`` (bool expressions)."""

    def __init__(self, variables, ranges, relations):
        self.variables = _vars(variables, "IntConstraints")
        self.ranges = dict(ranges or {})
        self.relations = [_expr(r, "IntConstraints") for r in (relations or [])]

    def _structural_node(self):
        ranges = [_core.Array([v, r]) for v, r in self.ranges.items()]
        return _core.Array([_core.Array(list(self.variables)), _core.Array(ranges),
                            _core.Array(list(self.relations))])

    def __repr__(self):
        return (f"IntConstraints({self.variables}, {self.ranges}, {self.relations})")


class IntConstraintsTransform:
    """A change of variables from the system ``src`` to ``dst``: ``src_to_dst`` writes each src
    variable over the dst ones, ``dst_to_src`` the reverse."""

    def __init__(self, src, dst, src_to_dst, dst_to_src):
        self.src, self.dst = src, dst
        self.src_to_dst = dict(src_to_dst)
        self.dst_to_src = dict(dst_to_src)

    def _structural_node(self):
        pairs = lambda m: _core.Array([_core.Array([k, v]) for k, v in m.items()])  # noqa: E731
        return _core.Array([self.src._structural_node(), self.dst._structural_node(),
                            pairs(self.src_to_dst), pairs(self.dst_to_src)])

    def __repr__(self):
        return f"IntConstraintsTransform({self.src} -> {self.dst}, {self.src_to_dst})"


def _system(system_or_equations, variables, ranges, what):
    if isinstance(system_or_equations, IntConstraints):
        return system_or_equations
    return IntConstraints(variables, ranges, list(system_or_equations))


def _from_tuple(t):
    variables, ranges, relations = t
    return IntConstraints(variables, dict(ranges), relations)


def solve_linear_equations(equations, variables=None, ranges=None):
    """Solve the linear equations among ``equations`` for ``variables`` in integers.

    Returns an IntConstraintsTransform whose ``dst`` has the new free variables (with ranges
    inferred from ``ranges``) and the relations that remain: divisibility conditions, the old
    ranges over the new variables, and the relations that are not linear equations. An
    unsolvable system gives ``dst.relations == [False]`` and empty maps."""
    system = _system(equations, variables, ranges, "solve_linear_equations")
    src, dst, src_to_dst, dst_to_src = _core.arith_solve_linear_equations(
        system.variables, list(system.ranges.items()), system.relations)
    return IntConstraintsTransform(system, _from_tuple(dst), src_to_dst, dst_to_src)


def solve_linear_inequalities(equations, variables=None, ranges=None, deskew_range=False):
    """Solve the linear inequalities (and equations) among ``equations`` for ``variables`` by
    Fourier-Motzkin elimination, in order.

    Returns an IntConstraints whose ranges give each variable's range over the later variables
    and whose relations are the conditions those ranges leave; with ``deskew_range=True``, an
    IntConstraintsTransform to variables shifted to start at 0 (``x = x.shifted + lower``). No
    solution gives the relations ``[False]``."""
    system = _system(equations, variables, ranges, "solve_linear_inequalities")
    args = (system.variables, list(system.ranges.items()), system.relations)
    if deskew_range:
        _, dst, src_to_dst, dst_to_src = _core.arith_solve_inequalities_deskew_range(*args)
        return IntConstraintsTransform(system, _from_tuple(dst), src_to_dst, dst_to_src)
    return _from_tuple(_core.arith_solve_inequalities_to_range(*args))


def solve_inequalities_as_condition(variables, ranges, relations):
    """The bounds that solve_linear_inequalities finds, as conditions: for each variable
    ``coef * v == / >= / <= bound``, then the relations left."""
    system = IntConstraints(variables, ranges, relations)
    return list(_core.arith_inequalities_as_conditions(
        system.variables, list(system.ranges.items()), system.relations))
