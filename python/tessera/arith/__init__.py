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

ConstIntBound = namedtuple("ConstIntBound", ["min_value", "max_value"])
ConstIntBound.POS_INF = (1 << 63) - 1
ConstIntBound.NEG_INF = -ConstIntBound.POS_INF
ModularSet = namedtuple("ModularSet", ["coeff", "base"])


class ProofStrength(enum.IntEnum):
    """Accepted for TVM's ``can_prove(cond, strength)``; tessera's analyzer has one strength."""

    DEFAULT = 0
    SYMBOLIC_BOUND = 1


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

    def bind(self, var, value):
        """``var`` takes the values of a Range, or equals an expression."""
        if not isinstance(var, _core.Var):
            raise TesseraTypeError(f"Analyzer.bind: expected a Var, got {type(var).__name__}")
        if isinstance(value, _core.Range):
            self._ana.bind_range(var, value)
        else:
            self._ana.bind_value(var, _expr(value, "bind"))

    update = bind

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

    @contextlib.contextmanager
    def constraint_scope(self, constraint):
        """Within the ``with`` block, the bool ``constraint`` is assumed to hold."""
        mark = self._ana.enter_constraint(_expr(constraint, "constraint_scope"))
        try:
            yield
        finally:
            self._ana.exit_constraint(mark)

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
