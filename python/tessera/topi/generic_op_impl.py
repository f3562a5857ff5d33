"""Arithmetic on tensors, as TVM binds it when topi is imported: ``A + B`` is
``topi.add(A, B)`` (with broadcasting), ``A * 2.0`` an elementwise product, ``-A``,
``A.astype("float16")``."""

from .. import _core
from . import broadcast as _broadcast
from . import math as _math

_Tensor = _core.te.Tensor


def _operand(x):
    return isinstance(x, (_Tensor, _core.PrimExpr, bool, int, float)) or (
        hasattr(x, "dtype") and hasattr(x, "item") and not isinstance(x, _Tensor)
    )


def _make(op, reflected):
    def method(self, other):
        if not _operand(other):
            return NotImplemented
        return op(other, self) if reflected else op(self, other)

    method.__name__ = op.__name__
    method.__doc__ = f"``topi.{op.__name__}`` of the two operands."
    return method


def _bind_generic_ops():
    for name, op in (
        ("add", _broadcast.add),
        ("sub", _broadcast.subtract),
        ("mul", _broadcast.multiply),
        ("truediv", _broadcast.divide),
    ):
        setattr(_Tensor, f"__{name}__", _make(op, False))
        setattr(_Tensor, f"__r{name}__", _make(op, True))
    _Tensor.__neg__ = lambda self: _math.negative(self)
    _Tensor.astype = lambda self, dtype: _math.cast(self, dtype)


_bind_generic_ops()
