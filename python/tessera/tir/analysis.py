"""TIR analyses by TVM's names (``tvm.tir.analysis``).

>>> expr_deep_equal(x + 1, x + 1)
True
"""

from .. import _core


def expr_deep_equal(lhs, rhs):
    """Whether two expressions are the same tree, variables compared by identity (no mapping of
    one expression's variables onto the other's)."""
    return bool(_core.structural_equal(lhs, rhs, False))


__all__ = ["expr_deep_equal"]
