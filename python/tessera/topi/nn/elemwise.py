"""Activations: ``topi.nn.relu``, ``leaky_relu``, ``prelu``."""

from ...error import TesseraValueError
from ...te import compute
from ...tir import expr_ops
from .. import _math, tag
from ..utils import const_or_none, equal_dims, normalize_axis


def relu(x):
    """``max(x, 0)``."""
    return compute(
        x.shape,
        lambda *i: expr_ops.maximum(x[i], expr_ops.const(0, x.dtype)),
        name="T_relu",
        tag=tag.ELEMWISE,
    )


def leaky_relu(x, alpha):
    """``x`` where positive, ``alpha * x`` elsewhere."""

    def fcompute(*i):
        v = x[i]
        return _math.select(v > expr_ops.const(0, v.dtype), v, v * expr_ops.const(alpha, v.dtype))

    return compute(x.shape, fcompute, name="T_leaky_relu", tag=tag.ELEMWISE)


def prelu(x, slope, axis=1):
    """``x`` where positive, ``slope[c] * x`` elsewhere, ``c`` the index along ``axis``."""
    axis = normalize_axis(axis, len(x.shape), "topi.nn.prelu")
    if len(slope.shape) != 1 or not equal_dims(slope.shape[0], x.shape[axis]):
        raise TesseraValueError(
            f"topi.nn.prelu: the slope needs shape ({x.shape[axis]},), got "
            f"{tuple(const_or_none(s) or s for s in slope.shape)}"
        )

    def fcompute(*i):
        v = x[i]
        return _math.select(v > expr_ops.const(0, v.dtype), v, v * slope[i[axis]])

    return compute(x.shape, fcompute, name="T_prelu", tag=tag.BROADCAST)
