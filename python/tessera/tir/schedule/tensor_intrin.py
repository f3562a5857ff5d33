"""``tir.TensorIntrin``: tensor intrinsics for :meth:`Schedule.tensorize`, registered by name.

A tensor intrinsic is a pair of PrimFuncs over the same buffer parameters: the description
(``desc``), one block whose body is the computation the intrinsic performs, and the
implementation (``impl``), a block whose body performs it (vector code, an extern call, ...).
``sch.tensorize(loop, name)`` checks that the block under ``loop`` computes what the description
does and replaces its body by the implementation, binding the implementation's buffers to the
regions the block accesses (``T.match_buffer``).

>>> tir.TensorIntrin.register("my_dot4", dot4_desc, dot4_impl)
>>> inner = sch.get_loops("dot")[-1]        # the 4-long reduction loop of block "dot"
>>> sch.tensorize(inner, "my_dot4")

Intrinsics for tessera's targets are in :mod:`tessera.tir.tensor_intrin` (``x86``, ``cuda``).
"""

from ... import _core
from ...error import TesseraTypeError


def _prim_func(value, what):
    if isinstance(value, _core.PrimFunc):
        return value
    raise TesseraTypeError(f"the {what} of a tensor intrinsic must be a PrimFunc, got {type(value).__name__}")


class TensorIntrin:
    """A tensor intrinsic: a description and an implementation (PrimFuncs with as many buffer
    parameters, handles only)."""

    def __init__(self, desc, impl):
        desc = _prim_func(desc, "description")
        impl = _prim_func(impl, "implementation")
        _core.tensor_intrin_check(desc, impl)
        self._desc, self._impl = desc, impl

    @property
    def desc(self):
        """The description PrimFunc."""
        return self._desc

    @property
    def impl(self):
        """The implementation PrimFunc."""
        return self._impl

    @staticmethod
    def register(name, desc, impl, override=False):
        """Register ``TensorIntrin(desc, impl)`` as ``name`` (a ValueError if the name is taken
        and ``override`` is False)."""
        if not isinstance(name, str):
            raise TesseraTypeError(f"a tensor intrinsic's name must be a str, got {type(name).__name__}")
        _core.tensor_intrin_register(name, _prim_func(desc, "description"),
                                     _prim_func(impl, "implementation"), bool(override))

    @staticmethod
    def get(name, allow_missing=False):
        """The intrinsic registered as ``name``; None when missing and ``allow_missing``, else a
        ValueError."""
        found = _core.tensor_intrin_get(str(name), bool(allow_missing))
        if found is None:
            return None
        intrin = TensorIntrin.__new__(TensorIntrin)
        intrin._desc, intrin._impl = found
        return intrin

    @staticmethod
    def list():
        """The registered names, sorted."""
        return list(_core.tensor_intrin_list())

    def __repr__(self):
        return "TensorIntrin(desc=..., impl=...)"


__all__ = ["TensorIntrin"]
