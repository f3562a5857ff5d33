"""``rms_norm``: scaling by the reciprocal root mean square over some axes."""

from ... import te
from ...error import TesseraTypeError, TesseraValueError
from ...tir import expr_ops
from .. import _math
from ..utils import equal_dims, normalize_axes


def rms_norm(data, weight, axis, epsilon=1e-5):
    """``x / sqrt(mean(x * x) + epsilon) * weight`` with the mean over ``axis``; ``weight``
    has the shape of those axes. Computes in float32 and returns ``data``'s type.

    >>> Y = topi.nn.rms_norm(X, w, axis=[-1])
    """
    what = "topi.nn.rms_norm"
    if not expr_ops.is_float(data.dtype):
        raise TesseraTypeError(f"{what} needs a floating-point tensor, got {data.dtype}")
    ndim = len(data.shape)
    axes = normalize_axes(axis, ndim, what)
    if weight is not None and (
        len(weight.shape) != len(axes)
        or not all(equal_dims(weight.shape[j], data.shape[d]) for j, d in enumerate(axes))
    ):
        raise TesseraValueError(
            f"{what}: the weight needs the shape {tuple(data.shape[d] for d in axes)}, got "
            f"{tuple(weight.shape)}"
        )
    kept = [data.shape[d] for d in range(ndim) if d not in axes]
    count = 1
    for d in axes:
        count = count * data.shape[d]

    def fsquare(*i):
        rv = [te.reduce_axis((0, data.shape[d]), name=f"k{d}") for d in axes]
        it, r = iter(i), iter(rv)
        v = expr_ops.cast(data[tuple(next(r) if d in axes else next(it) for d in range(ndim))],
                          "float32")  # fmt: skip
        return te.sum(v * v, axis=rv)

    square_sum = te.compute(kept, fsquare, name="T_multiply_red")

    def fscale(*i):
        mean = square_sum[i] / expr_ops.cast(count, "float32")
        return _math.rsqrt(mean + expr_ops.const(epsilon, "float32"))

    scale = te.compute(kept, fscale, name="rsqrt")

    def fcompute(*i):
        r = tuple(i[d] for d in range(ndim) if d not in axes)
        y = expr_ops.cast(data[i], "float32") * scale[r]
        if weight is not None:
            y = y * expr_ops.cast(weight[tuple(i[d] for d in axes)], "float32")
        return expr_ops.cast(y, data.dtype)

    return te.compute(data.shape, fcompute, name="T_rms_norm")
