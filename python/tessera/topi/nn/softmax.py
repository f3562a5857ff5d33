"""``softmax`` and ``log_softmax`` along an axis (the maximum subtracted first, for range)."""

from ... import te
from ...error import TesseraTypeError
from ...tir import expr_ops
from .. import _math
from ..utils import normalize_axis


def _parts(x, axis, what):
    if not expr_ops.is_float(x.dtype):
        raise TesseraTypeError(f"topi.nn.{what} needs a floating-point tensor, got {x.dtype}")
    ndim = len(x.shape)
    axis = normalize_axis(axis, ndim, f"topi.nn.{what}")
    reduced = [x.shape[d] for d in range(ndim) if d != axis]

    def at(i, k):
        return tuple(i[:axis]) + (k,) + tuple(i[axis:])

    def fmax(*i):
        k = te.reduce_axis((0, x.shape[axis]), name="k")
        return te.max(x[at(i, k)], axis=k)

    max_elem = te.compute(reduced, fmax, name="T_softmax_maxelem")

    def fexp_sum(*i):
        k = te.reduce_axis((0, x.shape[axis]), name="k")
        return te.sum(_math.exp(x[at(i, k)] - max_elem[i]), axis=k)

    expsum = te.compute(reduced, fexp_sum, name="T_softmax_expsum")

    def rest(i):
        return tuple(i[:axis]) + tuple(i[axis + 1 :])

    return axis, max_elem, expsum, rest


def softmax(x, axis=-1):
    """``exp(x) / sum(exp(x))`` along ``axis``.

    >>> P = topi.nn.softmax(logits, axis=1)
    """
    axis, max_elem, expsum, rest = _parts(x, axis, "softmax")

    def fcompute(*i):
        r = rest(i)
        return _math.exp(x[i] - max_elem[r]) / expsum[r]

    return te.compute(
        x.shape, fcompute, name="T_softmax_norm", tag="softmax_output", attrs={"axis": axis}
    )


def log_softmax(x, axis=-1):
    """``x - log(sum(exp(x)))`` along ``axis``."""
    axis, max_elem, expsum, rest = _parts(x, axis, "log_softmax")

    def fcompute(*i):
        r = rest(i)
        return x[i] - max_elem[r] - _math.log(expsum[r])

    return te.compute(x.shape, fcompute, name="T_log_softmax_norm", attrs={"axis": axis})
