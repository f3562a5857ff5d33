"""``layer_norm``: normalisation over some axes, then scale and shift."""

from ... import te
from ...error import TesseraTypeError, TesseraValueError
from ...tir import expr_ops
from .. import _math
from ..utils import equal_dims, normalize_axes


def layer_norm(data, gamma, beta, axis, epsilon=1e-5):
    """``(x - mean) / sqrt(var + epsilon) * gamma + beta`` with the mean and variance over
    ``axis``; ``gamma`` (and ``beta``, which may be None) have the shape of those axes.
    float16 data is normalised in float32 and returned as float16.

    >>> Y = topi.nn.layer_norm(X, gamma, beta, axis=[-1])
    """
    what = "topi.nn.layer_norm"
    if not expr_ops.is_float(data.dtype):
        raise TesseraTypeError(f"{what} needs a floating-point tensor, got {data.dtype}")
    ndim = len(data.shape)
    axes = normalize_axes(axis, ndim, what)
    for name, t in (("gamma", gamma), ("beta", beta)):
        if t is None:
            continue
        if len(t.shape) != len(axes) or not all(
            equal_dims(t.shape[j], data.shape[d]) for j, d in enumerate(axes)
        ):
            raise TesseraValueError(
                f"{what}: {name} needs the shape "
                f"{tuple(data.shape[d] for d in axes)}, got {tuple(t.shape)}"
            )
    acc = "float32" if data.dtype == "float16" else data.dtype
    kept = [data.shape[d] for d in range(ndim) if d not in axes]
    count = 1
    for d in axes:
        count = count * data.shape[d]

    def full_index(i, rv):
        it, r = iter(i), iter(rv)
        return tuple(next(r) if d in axes else next(it) for d in range(ndim))

    def value(idx):
        return expr_ops.cast(data[idx], acc)

    def fmean(*i):
        rv = [te.reduce_axis((0, data.shape[d]), name=f"k{d}") for d in axes]
        return te.sum(value(full_index(i, rv)), axis=rv)

    total = te.compute(kept, fmean, name="T_layer_norm_sum")

    def n():
        return expr_ops.cast(count, acc)

    def fvar(*i):
        rv = [te.reduce_axis((0, data.shape[d]), name=f"k{d}") for d in axes]
        diff = value(full_index(i, rv)) - total[i] / n()
        return te.sum(diff * diff, axis=rv)

    sqsum = te.compute(kept, fvar, name="T_layer_norm_sqsum")

    def fcompute(*i):
        r = tuple(i[d] for d in range(ndim) if d not in axes)
        g = tuple(i[d] for d in axes)
        mean = total[r] / n()
        y = (value(i) - mean) * _math.rsqrt(sqsum[r] / n() + expr_ops.const(epsilon, acc))
        if gamma is not None:
            y = y * expr_ops.cast(gamma[g], acc)
        if beta is not None:
            y = y + expr_ops.cast(beta[g], acc)
        return expr_ops.cast(y, data.dtype)

    return te.compute(data.shape, fcompute, name="T_layer_norm")
