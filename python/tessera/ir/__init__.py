"""IR containers and comparisons: IRModule, GlobalVar, structural equality and hashing."""

from .. import _core
from ..error import TesseraValueError

IRModule = _core.IRModule
GlobalVar = _core.GlobalVar
Op = _core.Op
Span = _core.Span
DataType = _core.DataType


def structural_equal(a, b, map_free_vars=False):
    """Whether two IR objects are the same program up to the names of bound variables."""
    return _core.structural_equal(a, b, map_free_vars)


def structural_hash(node, map_free_vars=False):
    """A hash consistent with :func:`structural_equal`."""
    return _core.structural_hash(node, map_free_vars)


def assert_structural_equal(a, b, map_free_vars=False):
    """Raise ValueError naming the first difference when ``a`` and ``b`` differ.

    >>> assert_structural_equal(mod_after_pass, expected_mod)
    """
    why = _core.structural_equal_failure(a, b, map_free_vars)
    if why:
        raise TesseraValueError(
            "StructuralEqual check failed: " + why + "\n--- lhs ---\n" + str(a) + "\n--- rhs ---\n" + str(b)
        )
