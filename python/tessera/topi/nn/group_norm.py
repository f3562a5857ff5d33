"""``group_norm`` and ``instance_norm``: normalisation over channel groups and some axes."""

from ... import te
from ...error import TesseraTypeError, TesseraValueError
from ...tir import expr_ops
from .. import _math
from ..utils import const_shape, normalize_axes, normalize_axis


def _grouped_norm(data, gamma, beta, num_groups, channel_axis, axes, epsilon, what):
    if not expr_ops.is_float(data.dtype):
        raise TesseraTypeError(f"{what} needs a floating-point tensor, got {data.dtype}")
    shape = const_shape(data, what)
    ndim = len(shape)
    c_ax = normalize_axis(channel_axis, ndim, what)
    axes = [d for d in normalize_axes(axes, ndim, what) if d != c_ax]
    channels = shape[c_ax]
    if num_groups < 1 or channels % num_groups:
        raise TesseraValueError(
            f"{what}: {channels} channels do not divide into {num_groups} groups"
        )
    for name, t in (("gamma", gamma), ("beta", beta)):
        if t is not None and tuple(const_shape(t, what)) != (channels,):
            raise TesseraValueError(
                f"{what}: {name} needs the shape ({channels},), got {tuple(t.shape)}"
            )
    per_group = channels // num_groups
    kept = [d for d in range(ndim) if d != c_ax and d not in axes]
    stats_shape = [shape[d] for d in kept] + [num_groups]
    acc = "float32" if data.dtype == "float16" else data.dtype
    count = per_group
    for d in axes:
        count *= shape[d]

    def element(stat_index, rc, rv):
        """The data element of group stat_index[-1] at group channel rc and reduce position rv."""
        it, r = iter(stat_index[:-1]), iter(rv)
        idx = []
        for d in range(ndim):
            if d == c_ax:
                idx.append(stat_index[-1] * per_group + rc)
            elif d in axes:
                idx.append(next(r))
            else:
                idx.append(next(it))
        return expr_ops.cast(data[tuple(idx)], acc)

    def axes_of():
        rc = te.reduce_axis((0, per_group), name="rc")
        rv = [te.reduce_axis((0, shape[d]), name=f"k{d}") for d in axes]
        return rc, rv

    def fsum(*s):
        rc, rv = axes_of()
        return te.sum(element(s, rc.var, [v.var for v in rv]), axis=[rc, *rv])

    total = te.compute(stats_shape, fsum, name="T_norm_sum")
    n = expr_ops.const(float(count), acc)

    def fsq(*s):
        rc, rv = axes_of()
        diff = element(s, rc.var, [v.var for v in rv]) - total[s] / n
        return te.sum(diff * diff, axis=[rc, *rv])

    sqsum = te.compute(stats_shape, fsq, name="T_norm_sqsum")

    def fcompute(*i):
        s = tuple(i[d] for d in kept) + (i[c_ax] // per_group,)
        y = (expr_ops.cast(data[i], acc) - total[s] / n) * _math.rsqrt(
            sqsum[s] / n + expr_ops.const(epsilon, acc)
        )
        if gamma is not None:
            y = y * expr_ops.cast(gamma[i[c_ax]], acc)
        if beta is not None:
            y = y + expr_ops.cast(beta[i[c_ax]], acc)
        return expr_ops.cast(y, data.dtype)

    return te.compute(data.shape, fcompute, name=f"T_{what.split('.')[-1]}")


def group_norm(data, gamma, beta, num_groups, channel_axis, axes, epsilon=1e-5):
    """Normalisation over each group of ``channels // num_groups`` channels together with
    ``axes``, then ``* gamma[c] + beta[c]``. float16 computes in float32.

    >>> Y = topi.nn.group_norm(X, g, b, num_groups=2, channel_axis=1, axes=[2, 3])
    """
    return _grouped_norm(
        data, gamma, beta, int(num_groups), channel_axis, axes, epsilon, "topi.nn.group_norm"
    )


def instance_norm(data, gamma, beta, channel_axis, axis, epsilon=1e-5):
    """Normalisation of each channel over ``axis`` (per batch element), then
    ``* gamma[c] + beta[c]``."""
    what = "topi.nn.instance_norm"
    channels = const_shape(data, what)[normalize_axis(channel_axis, len(data.shape), what)]
    return _grouped_norm(data, gamma, beta, channels, channel_axis, axis, epsilon, what)
