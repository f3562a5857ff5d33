"""TVM's module path ``tvm.arith.analyzer``: the Analyzer and the types of its answers (defined
in ``tessera.arith``)."""

from . import Analyzer, ConstIntBound, ModularSet, ProofStrength  # noqa: F401
from .int_set import IntervalSet, IntSet  # noqa: F401
