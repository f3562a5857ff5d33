"""TVM's ``tvm.runtime.container`` names: ``String`` is a ``str`` and ``ShapeTuple`` a
``tuple`` of ints (as tvm_ffi's ``String`` and ``Shape`` are), so each works wherever a string
or a tuple does."""

import operator

__all__ = ["String", "ShapeTuple"]


class String(str):
    """An IR string: a ``str`` subclass (``String("cuda") == "cuda"``)."""


class ShapeTuple(tuple):
    """A shape: an immutable tuple of ints (``ShapeTuple([2, 3]) == (2, 3)``).

    Each item must be an integer (a Python int, a numpy integer, an IntImm); anything else is a
    TypeError that names the item."""

    def __new__(cls, shape=()):
        dims = []
        for i, dim in enumerate(shape):
            try:
                dims.append(operator.index(dim) if not hasattr(dim, "value") else int(dim.value))
            except TypeError:
                raise TypeError(f"ShapeTuple: dimension {i} must be an integer, got "
                                f"{type(dim).__name__} {dim!r}") from None
        return super().__new__(cls, dims)

    def __repr__(self):
        return f"ShapeTuple({list(self)})"

    def _structural_node(self):
        # Compared structurally as an IR array of int64 constants.
        from .. import _core
        from ..tir.expr_ops import const

        return _core.Array([const(d, "int64") for d in self])
