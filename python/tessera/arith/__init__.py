"""The arithmetic analyzer (TVM's ``tvm.arith.Analyzer``): simplification of integer index
expressions and proofs about them, with variables bound to ranges or values.

>>> ana = Analyzer()
>>> i = tessera.tir.Var("i", "int32")
>>> ana.bind(i, tessera.ir.Range(0, 16))
>>> ana.can_prove(i < 16)
True

A condition that holds ``T.vscale()`` is proven, as in TVM, only while a target with scalable
vectors is current (``with Target("llvm -mtriple=aarch64-linux-gnu -mattr=+sve"):``), by checking
it for each value vscale can take there.
"""

import contextlib
import enum
from collections import namedtuple

from .. import _core
from ..error import TesseraTypeError

__all__ = ["Analyzer", "ConstIntBound", "Extension", "ModularSet", "ProofStrength"]

# Interval sets and the narrowing of predicates (TVM's int_set, NarrowPredicateExpression).
from .int_set import IntervalSet, IntSet  # noqa: E402
from . import int_set  # noqa: E402
from .int_set import (  # noqa: E402
    estimate_region_lower_bound, estimate_region_strict_bound, estimate_region_upper_bound)

__all__ += ["IntSet", "IntervalSet", "int_set", "narrow_predicate_expression",
            "estimate_region_lower_bound", "estimate_region_strict_bound",
            "estimate_region_upper_bound"]

ConstIntBound = namedtuple("ConstIntBound", ["min_value", "max_value"])
ConstIntBound.POS_INF = (1 << 63) - 1
ConstIntBound.NEG_INF = -ConstIntBound.POS_INF
ModularSet = namedtuple("ModularSet", ["coeff", "base"])


class ProofStrength(enum.IntEnum):
    """Accepted for TVM's ``can_prove(cond, strength)``; tessera's analyzer has one strength."""

    DEFAULT = 0
    SYMBOLIC_BOUND = 1


class _ConstraintScope:
    """The ``with`` block of Analyzer.constraint_scope."""

    def __init__(self, ana, cond):
        self._ana, self._cond, self._marks = ana, cond, []

    def __enter__(self):
        self._marks.append(self._ana.enter_constraint(self._cond))
        return self

    def __exit__(self, *exc):
        self._ana.exit_constraint(self._marks.pop())
        return False


class Extension(enum.Flag):
    """The optional rules of the rewrite simplifier (TVM's ``tvm.arith.Extension``), set with
    ``Analyzer.enabled_extensions``; the values are those of TVM."""

    NoExtensions = 0
    TransitivelyProveInequalities = 1 << 0
    ConvertBooleanToAndOfOrs = 1 << 1
    ApplyConstraintsToBooleanBranches = 1 << 2
    ComparisonOfProductAndSum = 1 << 3


def _expr(value, what):
    from ..tir import expr_ops

    if isinstance(value, _core.PrimExpr):
        return value
    if isinstance(value, (bool, int, float)):
        return expr_ops.const(value)
    raise TesseraTypeError(f"Analyzer.{what}: expected an expression, got {type(value).__name__}")


class Analyzer:
    """Facts about integer expressions under bound variables (tessera's C++ arith::Analyzer)."""

    def __init__(self):
        self._ana = _core.Analyzer()

    def bind(self, var, value, allow_override=False):
        """``var`` takes the values of a Range, or equals an expression (a ConstIntBound: as
        ``update``)."""
        if not isinstance(var, _core.Var):
            raise TesseraTypeError(f"Analyzer.bind: expected a Var, got {type(var).__name__}")
        if isinstance(value, _core.Range):
            self._ana.bind_range(var, value)
        elif isinstance(value, ConstIntBound):
            self.update(var, value, allow_override)
        else:
            self._ana.bind_value(var, _expr(value, "bind"))

    # --- Analyzer API and bound analyses (TVM's update / const_int_bound_is_bound /
    # constraint_scope) ---

    def update(self, var, info, override=False):
        """Record the constant bound ``info`` (a ConstIntBound) of ``var``. A var that already
        has a different bound is an error unless ``override``; a Range or an expression is
        bound as ``bind`` does."""
        if not isinstance(var, _core.Var):
            raise TesseraTypeError(f"Analyzer.update: expected a Var, got {type(var).__name__}")
        if isinstance(info, ConstIntBound):
            self._ana.update_bound(var, int(info.min_value), int(info.max_value), bool(override))
        elif isinstance(info, (_core.Range, _core.PrimExpr, int)) and not isinstance(info, bool):
            self.bind(var, info)
        else:
            raise TesseraTypeError(
                f"Analyzer.update: expected a ConstIntBound, got {type(info).__name__}")

    def const_int_bound_is_bound(self, var):
        """Whether a constant bound is recorded for ``var``."""
        if not isinstance(var, _core.Var):
            raise TesseraTypeError(
                f"Analyzer.const_int_bound_is_bound: expected a Var, got {type(var).__name__}")
        return self._ana.is_bound(var)

    def int_set(self, expr, dom_map):
        """The IntervalSet of ``expr`` while each var of ``dom_map`` ranges over its set (an
        IntervalSet or a Range); other vars are single points."""
        from .int_set import IntervalSet as _IntervalSet

        vars_, mins, maxs = [], [], []
        for var, dom in dict(dom_map).items():
            if not isinstance(var, _core.Var):
                raise TesseraTypeError(
                    f"Analyzer.int_set: expected Var keys, got {type(var).__name__}")
            if isinstance(dom, _core.Range):
                lo = dom.min
                hi = self._ana.simplify(dom.min + dom.extent - 1)
            elif isinstance(dom, _IntervalSet):
                lo, hi = dom.min_value, dom.max_value
            else:
                raise TesseraTypeError(
                    f"Analyzer.int_set: the domain of {var} must be an IntervalSet or a Range, "
                    f"got {type(dom).__name__}")
            vars_.append(var)
            mins.append(lo)
            maxs.append(hi)
        ends = self._ana.int_set(_expr(expr, "int_set"), vars_, mins, maxs)
        return _IntervalSet(*ends)

    def constraint_scope(self, constraint):
        """A context in which ``constraint`` (a bool expression) is assumed to hold.

        >>> with ana.constraint_scope(x % 4 == 1):
        ...     ana.modular_set(x)   # ModularSet(coeff=4, base=1)
        """
        cond = _expr(constraint, "constraint_scope")
        if not cond.dtype.startswith("bool"):
            raise TesseraTypeError(
                f"Analyzer.constraint_scope: expected a bool condition, got a {cond.dtype} "
                "expression")
        return _ConstraintScope(self._ana, cond)

    # ---- the simplifiers (arith13b) ----
    def simplify(self, expr, steps=2):
        """``expr`` simplified: the rewrite rules, then the canonical form (``steps`` is
        accepted for TVM)."""
        return self._ana.simplify(_expr(expr, "simplify"))

    def rewrite_simplify(self, expr):
        """``expr`` rewritten by local rules, keeping its shape (TVM's rewrite_simplify)."""
        return self._ana.rewrite_simplify(_expr(expr, "rewrite_simplify"))

    def canonical_simplify(self, expr):
        """``expr`` with index arithmetic as a sorted sum of terms (TVM's canonical_simplify)."""
        return self._ana.canonical_simplify(_expr(expr, "canonical_simplify"))

    @property
    def enabled_extensions(self):
        """The optional rewrite rules that are on (an ``Extension``)."""
        return Extension(self._ana.enabled_extensions)

    @enabled_extensions.setter
    def enabled_extensions(self, flags):
        self._ana.enabled_extensions = Extension(flags).value

    def can_prove(self, cond, strength=ProofStrength.DEFAULT):
        """Whether ``cond`` holds for every value of the bound variables."""
        return self._ana.can_prove(_expr(cond, "can_prove"))

    def can_prove_equal(self, lhs, rhs):
        """Whether ``lhs == rhs`` always."""
        return self._ana.can_prove_equal(_expr(lhs, "can_prove_equal"), _expr(rhs, "can_prove_equal"))

    def const_int_bound(self, expr):
        """The constant bounds of ``expr`` (±ConstIntBound.POS_INF where unbounded)."""
        return ConstIntBound(*self._ana.const_int_bound(_expr(expr, "const_int_bound")))

    def modular_set(self, expr):
        """``(coeff, base)``: every value of ``expr`` is ``coeff * k + base``."""
        return ModularSet(*self._ana.modular_set(_expr(expr, "modular_set")))


def narrow_predicate_expression(expr, free_parameters):
    """A bool condition without the vars of ``free_parameters`` (a dict var -> Range) that
    implies ``expr`` (TVM's NarrowPredicateExpression): each var becomes the end of its range
    that is hardest on the condition (``i > n``, n in [0, 8): ``i > 7``); a comparison over a
    floormod, a buffer load or a division by a parameter becomes false."""
    vars_, ranges = [], []
    for var, rng in dict(free_parameters).items():
        if not isinstance(var, _core.Var) or not isinstance(rng, _core.Range):
            raise TesseraTypeError(
                "narrow_predicate_expression: expected a dict of Var -> Range, got "
                f"{type(var).__name__} -> {type(rng).__name__}")
        vars_.append(var)
        ranges.append(rng)
    return _core.narrow_predicate_expression(_expr(expr, "narrow_predicate_expression"), vars_,
                                             ranges)


from . import _ffi_api  # noqa: E402,F401  (tvm.arith._ffi_api.NarrowPredicateExpression)


# Affine iterator maps (TVM's detect_iter_map and friends).
from .iter_affine_map import (  # noqa: E402
    IterMapExpr,
    IterMapLevel,
    IterMapResult,
    IterMark,
    IterSplitExpr,
    IterSumExpr,
    detect_iter_map,
    inverse_affine_iter_map,
    iter_map_simplify,
    normalize_iter_map_to_expr,
    normalize_to_iter_sum,
    subspace_divide,
)
from . import iter_affine_map as _iter_affine_map  # noqa: E402

__all__ += _iter_affine_map.__all__

# Linear analyses and integer solvers (C++ in src/arith; results held in solve.py).
from .solve import (  # noqa: E402
    IntConstraints,
    IntConstraintsTransform,
    deduce_bound,
    detect_clip_bound,
    detect_common_subexpr,
    detect_linear_equation,
    domain_touched,
    solve_linear_equations,
    solve_linear_inequalities,
)

__all__ += [
    "IntConstraints", "IntConstraintsTransform", "IntervalSet", "deduce_bound",
    "detect_clip_bound", "detect_common_subexpr", "detect_linear_equation", "domain_touched",
    "solve_linear_equations", "solve_linear_inequalities",
]
