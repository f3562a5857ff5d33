"""The ``S`` namespace of the vector DSL: decorators, types and intrinsics.

>>> from tessera.dsl import script as S
>>> @S.prim_func
... def add_one(a: S.ptr("int32", "global"), b: S.ptr("int32", "global")):
...     S.vstore(S.vadd(S.vload(a), 1), b)

Besides the named types (``S.int8`` ... ``S.bfloat16x16``, ``S.boolx8``), any flexible- or
multiple-width vector type is an attribute: ``S.i32x30``, ``S.fp16x48``.
"""

import os as _os
import sys as _sys

from . import intrinsics as _intrinsics
from .function import MacroObject, PrimFuncObject
from .types import DType, PtrType, all_types, ptr, virtual_type

_PACKAGE = _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__)))

globals().update(all_types())


def prim_func(func=None, *, is_entry=False, is_inline=None):
    """Decorate a kernel or subroutine written in the DSL.

    ``@S.prim_func``, ``@S.prim_func(is_entry=True)``, ``@S.prim_func(is_inline=True)``.
    """

    def wrap(f):
        return PrimFuncObject(f, is_entry=is_entry, is_inline=is_inline)

    return wrap(func) if func is not None else wrap


def macro(func=None, *, hygienic=True):
    """Decorate a macro: its body is substituted at each call; no function is emitted.

    With ``hygienic=True`` (default) free names resolve where the macro is defined, with the
    values they have when the decorator runs.
    """

    def wrap(f):
        return MacroObject(f, hygienic=hygienic)

    return wrap(func) if func is not None else wrap


for _name, _fn in _intrinsics.REGISTRY.items():
    globals()[_name] = _fn
del _name, _fn


def _shown_name():
    """The name this module was imported by: ``tvm.compass.dsl.script`` when tessera.compat maps
    Compass's name onto it (the same module object), else its own."""
    package = __name__.rpartition(".")[0]
    if _sys.modules.get("tvm.compass.dsl") is _sys.modules.get(package) is not None:
        return "tvm.compass.dsl.script"
    return __name__


def __getattr__(name):
    t = virtual_type(name)
    if t is None:
        from ..error import did_you_mean

        message = (f"module '{_shown_name()}' has no attribute '{name}'"
                   + did_you_mean(name, list(globals()), "S."))
        caller = _sys._getframe(1).f_code.co_filename
        if caller.startswith(_PACKAGE) or caller.startswith("<"):
            raise AttributeError(message)
        # User code at module level (an annotation, a decorator): located at its line.
        from ..error import TesseraAttributeError
        from .types import _located_at_caller

        raise _located_at_caller(TesseraAttributeError, message, needle=f"S.{name}")
    return t
