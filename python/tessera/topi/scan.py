"""Cumulative sums and products: ``topi.cumsum(x, axis=1, exclusive=True)``.

Each output element is a reduction over the prefix of its axis (no schedule: quadratic work,
as a plain te compute has no loop-carried state).
"""

from .. import _core, te
from ..error import TesseraTypeError
from ..tir import expr_ops
from . import tag
from .reduction import _prod
from .transform import reshape
from .utils import is_tensor, normalize_axis, prod


def _scan(data, axis, dtype, exclusive, reducer, identity, what):
    if not is_tensor(data):
        raise TesseraTypeError(f"topi.{what} expects a te tensor, got {data!r}")
    if axis is None:
        data = reshape(data, (prod(data.shape),))
        axis = 0
    ndim = len(data.shape)
    axis = normalize_axis(axis, ndim, f"topi.{what}")
    dtype = data.dtype if dtype is None else _core.canonical_dtype(str(dtype))
    n = data.shape[axis]

    def fcompute(*i):
        k = te.reduce_axis((0, n), name="k")
        idx = list(i)
        idx[axis] = k
        v = expr_ops.cast(data[tuple(idx)], dtype)
        cond = k.var < i[axis] if exclusive else k.var <= i[axis]
        return reducer(v, axis=k, where=cond)

    out = te.compute(data.shape, fcompute, name=f"T_{what}", tag=tag.INJECTIVE)
    return out


def cumsum(data, axis=None, dtype=None, exclusive=None):
    """The cumulative sum along ``axis`` (of the flattened tensor when None), as numpy.

    With ``exclusive`` the j-th element sums the first j - 1 elements (the first is 0).
    """
    return _scan(data, axis, dtype, exclusive, te.sum, 0, "cumsum")


def cumprod(data, axis=None, dtype=None, exclusive=None):
    """The cumulative product along ``axis`` (of the flattened tensor when None), as numpy.

    With ``exclusive`` the j-th element multiplies the first j - 1 elements (the first is 1).
    """
    return _scan(data, axis, dtype, exclusive, _prod, 1, "cumprod")
