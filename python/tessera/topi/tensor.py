"""Tensor creation: ``topi.full``, ``topi.full_like``, ``topi.eye``, ``topi.elemwise_sum``."""

from .. import _core
from ..error import TesseraTypeError, TesseraValueError
from ..te import compute
from ..tir import expr_ops
from . import tag
from .utils import is_tensor


def _fill(value, dtype):
    if isinstance(value, _core.PrimExpr):
        return expr_ops.cast(value, dtype)
    if dtype == "bool":
        return expr_ops.const(bool(value), "bool")
    if expr_ops.is_int(dtype):
        if isinstance(value, float) and not value.is_integer():
            return _core.Cast(dtype, expr_ops.const(value, "float64"))
        return expr_ops.const(int(value), dtype)
    return expr_ops.const(float(value), dtype)


def full(shape, dtype, fill_value):
    """A tensor of ``shape`` whose every element is ``fill_value``.

    >>> Z = topi.full((3, 4), "float32", 0.0)
    """
    dtype = _core.canonical_dtype(str(dtype))
    return compute(shape, lambda *i: _fill(fill_value, dtype), name="T_full", tag=tag.ELEMWISE)


def full_like(x, fill_value):
    """A tensor of ``x``'s shape and dtype filled with ``fill_value``."""
    if not is_tensor(x):
        raise TesseraTypeError(f"topi.full_like expects a te tensor, got {x!r}")
    return compute(
        x.shape, lambda *i: _fill(fill_value, x.dtype), name="T_full_like", tag=tag.ELEMWISE
    )


def eye(n, m=None, k=0, dtype="float32"):
    """An ``n x m`` matrix whose entry ``[i, j]`` is 1 where ``j - i == k`` and 0 elsewhere
    (``k > 0``: above the main diagonal)."""
    m = n if m is None else m
    dtype = _core.canonical_dtype(str(dtype))
    one, zero = _fill(1, dtype), _fill(0, dtype)
    return compute(
        (n, m),
        lambda i, j: _core.Select(expr_ops.compare("==", j - i, k), one, zero),
        name="T_eye",
        tag=tag.ELEMWISE,
    )


def elemwise_sum(xs):
    """The elementwise sum of tensors of one shape."""
    xs = list(xs)
    if not xs:
        raise TesseraValueError("topi.elemwise_sum needs at least one tensor")

    def fcompute(*i):
        total = xs[0][i]
        for x in xs[1:]:
            total = total + x[i]
        return total

    return compute(xs[0].shape, fcompute, name="elemwise_sum", tag=tag.ELEMWISE)
