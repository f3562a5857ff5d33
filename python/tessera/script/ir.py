"""The I dialect: ``@I.ir_module`` classes whose ``@T.prim_func`` methods form an IRModule."""

import sys

from .. import _core
from .tir.frames import to_attrs

_ATTRS_KEY = "__tessera_module_attrs__"


def ir_module(cls=None, *, check_well_formed=True):
    """Decorator: the IRModule of a class's ``@T.prim_func`` functions
    (``@I.ir_module(check_well_formed=False)`` skips the well-formedness check of each).

    >>> @I.ir_module
    ... class Calls:
    ...     @T.prim_func
    ...     def main(out: T.Buffer((4,), "int32")):
    ...         out[0] = cls.helper(1)
    ...     @T.prim_func(private=True)
    ...     def helper(x: T.int32) -> T.int32:
    ...         return x + 1

    Functions call each other as ``cls.name(...)``; ``I.module_attrs({...})`` in the class
    body sets module attributes.
    """
    if cls is None:
        return lambda c: ir_module(c, check_well_formed=check_well_formed)
    from .tir.entry import module_functions

    from ..ir.diagnostics import reporting

    with reporting():
        funcs = module_functions(cls, check_well_formed)
    attrs = cls.__dict__.get(_ATTRS_KEY, {})
    mod = _core.IRModule(funcs, attrs)
    mod.__name__ = cls.__name__  # as TVM: the decorated class's name
    return mod


def module_attrs(attrs):
    """``I.module_attrs({"key": value})`` in an ``@I.ir_module`` class body: module attributes."""
    frame = sys._getframe(1)
    frame.f_locals[_ATTRS_KEY] = to_attrs(attrs)


def module_global_infos(infos):
    """Accepted for compatibility with TVMScript; tessera modules keep no global infos."""
    return None


def Range(begin, end=None, *, span=None):  # noqa: N802 - TVMScript's name
    """``I.Range(begin, end)``: the half-open range [begin, end) (as ``T.Range``; a Range printed
    alone reads ``I.Range(0, 10)``)."""
    from .tir.ops import Range as _tir_range

    return _tir_range(begin, end, span=span)
