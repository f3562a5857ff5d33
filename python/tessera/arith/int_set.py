"""Integer sets (TVM's ``tvm.arith.int_set``): intervals whose ends are expressions.

>>> x = tessera.tir.Var("x", "int32")
>>> ana = Analyzer()
>>> s = ana.int_set(x * 2 + 1, {x: IntervalSet(0, 10)})
>>> s.min_value, s.max_value            # (1, 21)

An end that is not bounded is ``pos_inf()`` / ``neg_inf()`` (the same object every time: compare
with ``same_as``). The evaluation is C++ (tessera's arith::EvalIntervalSet); these classes hold
the ends.
"""

from .. import _core
from ..error import TesseraTypeError

__all__ = ["IntSet", "IntervalSet", "pos_inf", "neg_inf", "union_lower_bound",
           "estimate_region_lower_bound", "estimate_region_strict_bound",
           "estimate_region_upper_bound"]


def pos_inf():
    """The end of an interval unbounded above."""
    return _core.int_set_pos_inf()


def neg_inf():
    """The end of an interval unbounded below."""
    return _core.int_set_neg_inf()


def _end(value, what):
    from ..tir import expr_ops

    if isinstance(value, _core.PrimExpr):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return expr_ops.const(value, "int32")
    raise TesseraTypeError(f"{what}: expected an expression or an int, got {type(value).__name__}")


class IntSet:
    """A set of integers. tessera's sets are intervals (IntervalSet)."""

    def is_nothing(self):
        """Whether the set is empty (pos_inf to neg_inf)."""
        return self.min_value.same_as(pos_inf()) and self.max_value.same_as(neg_inf())

    def is_everything(self):
        """Whether the set is every integer (neg_inf to pos_inf)."""
        return self.min_value.same_as(neg_inf()) and self.max_value.same_as(pos_inf())

    @staticmethod
    def vector(vec):
        """The interval of the lanes of a vector index (a Ramp; a scalable Ramp is unbounded
        above)."""
        ends = _core.Analyzer().vector_int_set(_end(vec, "IntSet.vector"))
        return IntervalSet(*ends)

    @staticmethod
    def single_point(point):
        """The set of one value."""
        end = _end(point, "IntSet.single_point")
        return IntervalSet(end, end)


class IntervalSet(IntSet):
    """The integers from ``min_value`` to ``max_value``, both included."""

    def __init__(self, min_value, max_value):
        self.min_value = _end(min_value, "IntervalSet")
        self.max_value = _end(max_value, "IntervalSet")

    def __repr__(self):
        return f"IntervalSet[{self.min_value}, {self.max_value}]"


def union_lower_bound(sets):
    """The hull of the intervals that touch or overlap the first (an interval leaving a gap is
    left out), as TVM's ``union_lower_bound``; an empty list gives the empty set."""
    sets = list(sets)
    for s in sets:
        if not isinstance(s, IntervalSet):
            raise TesseraTypeError(
                f"union_lower_bound: expected IntervalSets, got {type(s).__name__}")
    ends = _core.int_set_union_lower_bound([s.min_value for s in sets],
                                           [s.max_value for s in sets])
    return IntervalSet(*ends)


# Region bounds (TVM's EstimateRegion*Bound): the set each dimension of a region (a list of
# Ranges, e.g. a buffer access) covers while the vars of ``var_dom`` range over their Ranges and
# ``predicate`` holds. The analysis is C++ (src/arith/estimate_region.cc), through the
# iterator-map detection of tessera.arith.detect_iter_map.


def _region(region, what):
    out = []
    for rng in list(region):
        if not isinstance(rng, _core.Range):
            raise TesseraTypeError(f"{what}: the region must be a list of Ranges, got "
                                   f"{type(rng).__name__}")
        out.append((rng.min, rng.extent))
    return out


def _var_dom(var_dom, what):
    items = list(var_dom.items()) if hasattr(var_dom, "items") else list(var_dom)
    for var, rng in items:
        if not isinstance(var, _core.Var):
            raise TesseraTypeError(f"{what}: var_dom keys must be Vars, got {type(var).__name__}")
        if not isinstance(rng, _core.Range):
            raise TesseraTypeError(f"{what}: the domain of {var} must be a Range, got "
                                   f"{type(rng).__name__}")
    return items


def _const_iters(items):
    """[(var, min, extent)] when every domain is constant, else None."""
    out = []
    for var, rng in items:
        if not (isinstance(rng.min, _core.IntImm) and isinstance(rng.extent, _core.IntImm)):
            return None
        out.append((var, int(rng.min.value), int(rng.extent.value)))
    return out


def _predicate(predicate, what):
    if predicate is None or predicate is True:
        return None
    if isinstance(predicate, _core.IntImm) and predicate.dtype == "bool" and predicate.value == 1:
        return None
    if not isinstance(predicate, _core.PrimExpr) or predicate.dtype != "bool":
        raise TesseraTypeError(f"{what}: the predicate must be a bool expression, got "
                               f"{predicate!r}")
    return predicate


def estimate_region_strict_bound(region, var_dom, predicate=None):
    """The exact IntervalSet of every dimension of ``region``, or None when the starts are not
    a surjective iterator map of ``var_dom`` under ``predicate`` (or an access leaves gaps, or
    a width or a domain is not constant).

    >>> estimate_region_strict_bound([Range.from_min_extent(i * 4, 8)], {i: Range(0, 64)}, True)
    [IntervalSet[0, 259]]
    """
    what = "estimate_region_strict_bound"
    dims = _region(region, what)
    iters = _const_iters(_var_dom(var_dom, what))
    pred = _predicate(predicate, what)
    if iters is None:
        return None
    ends = _core.estimate_region_strict_bound(dims, iters, pred)
    return None if ends is None else [IntervalSet(lo, hi) for lo, hi in ends]


def estimate_region_lower_bound(region, var_dom, predicate=None):
    """A subset of what ``region`` covers, as TVM: the strict bound (None when there is none)."""
    what = "estimate_region_lower_bound"
    dims = _region(region, what)
    iters = _const_iters(_var_dom(var_dom, what))
    pred = _predicate(predicate, what)
    if iters is None:
        return None
    ends = _core.estimate_region_strict_bound(dims, iters, pred)
    return None if ends is None else [IntervalSet(lo, hi) for lo, hi in ends]


def estimate_region_upper_bound(region, var_dom, predicate=None):
    """A superset of what every dimension of ``region`` covers: the strict bound when there is
    one, else each dimension alone (as an iterator map, else by interval arithmetic, which may
    add values the region never touches). Never None."""
    what = "estimate_region_upper_bound"
    dims = _region(region, what)
    items = _var_dom(var_dom, what)
    pred = _predicate(predicate, what)
    ana = _core.Analyzer()
    dom = [(var, rng.min, ana.simplify(rng.min + rng.extent - 1)) for var, rng in items]
    ends = _core.estimate_region_upper_bound(dims, _const_iters(items), dom, pred)
    return [IntervalSet(lo, hi) for lo, hi in ends]
