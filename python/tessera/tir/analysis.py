"""TIR analyses by TVM's names (``tvm.tir.analysis``).

>>> expr_deep_equal(x + 1, x + 1)
True
"""

from .. import _core


def expr_deep_equal(lhs, rhs):
    """Whether two expressions are the same tree, variables compared by identity (no mapping of
    one expression's variables onto the other's)."""
    return bool(_core.structural_equal(lhs, rhs, False))


def verify_well_formed(obj, assert_mode=True):
    """Whether a PrimFunc (or every PrimFunc of an IRModule) is well formed: the checks the
    TVMScript parser makes (variables defined before use and once, blocks using their own
    iterators, constant indices within constant shapes, ...). With ``assert_mode`` the first
    violation raises DiagnosticError (with its source location when known) instead of
    returning False.

    >>> verify_well_formed(mod)
    True
    """
    from ..error import TesseraTypeError
    from ..script.tir.entry import check_well_formed

    if isinstance(obj, _core.PrimFunc):
        funcs = [obj]
    elif isinstance(obj, _core.IRModule):
        funcs = [f for _, f in obj.functions.items() if isinstance(f, _core.PrimFunc)]
    else:
        raise TesseraTypeError(f"verify_well_formed takes a PrimFunc or an IRModule, got {type(obj).__name__}")
    for func in funcs:
        if assert_mode:
            check_well_formed(func)
        elif _core.verify_well_formed(func):
            return False
    return True


__all__ = ["expr_deep_equal", "verify_well_formed"]
