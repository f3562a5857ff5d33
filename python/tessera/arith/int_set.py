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

__all__ = ["IntSet", "IntervalSet", "pos_inf", "neg_inf", "union_lower_bound"]


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
