"""Pooling: ``pool2d`` (max/avg, ceil_mode, count_include_pad), ``global_pool``,
``adaptive_pool``, in any layout with unsplit H and W ("NCHW", "NHWC", "NCHW16c", ...)."""

from ... import _core, te
from ...error import TesseraValueError
from ...tir import expr_ops
from .. import _math, tag
from ..utils import const_shape
from .pad import pad


def _hw_axes(layout, ndim, what):
    letters, i = [], 0
    while i < len(layout):
        if layout[i].isdigit():
            i += 1
            continue
        letters.append(layout[i])
        i += 1
    if "h" in letters or "w" in letters:
        raise TesseraValueError(
            f"{what}: layout '{layout}' splits H or W, which pooling does not allow"
        )
    if "H" not in letters or "W" not in letters:
        raise TesseraValueError(f"{what}: layout '{layout}' has no H and W axes")
    if len(letters) != ndim:
        raise TesseraValueError(
            f"{what}: layout '{layout}' has {len(letters)} axes but the input has {ndim} dimensions"
        )
    return letters.index("H"), letters.index("W")


def _pool_type(pool_type, what):
    if pool_type not in ("max", "avg"):
        raise TesseraValueError(f"{what}: pool_type must be 'max' or 'avg', got '{pool_type}'")
    return pool_type


def _ints(value, n, what, name):
    if isinstance(value, int):
        return [value] * n
    value = [int(v) for v in value]
    if len(value) != n:
        raise TesseraValueError(f"{what}: {name} needs {n} entries, got {len(value)}")
    return value


def _sum_dtype(dtype):
    """Narrow integers sum in int32 so that a window's sum does not overflow."""
    if expr_ops.is_int(dtype) and _core.DataType(dtype).bits < 32:
        return "int32"
    return dtype


def _average(total, count, dtype):
    """``total / count`` (truncating on integers) in ``dtype``."""
    count = expr_ops.cast(count, total.dtype)
    if expr_ops.is_float(total.dtype):
        return expr_ops.cast(total / count, dtype)
    return expr_ops.cast(expr_ops.truncdiv(total, count), dtype)


def pool2d(
    data,
    kernel,
    stride,
    dilation,
    padding,
    pool_type,
    ceil_mode=False,
    layout="NCHW",
    count_include_pad=True,
):
    """Max or average pooling over H and W.

    ``padding`` is ``[top, left, bottom, right]``. With ``ceil_mode`` a last window that starts
    inside the (head-padded) input counts. An average divides by the window's elements inside
    the padded input (``count_include_pad``) or inside the input only.

    >>> Y = topi.nn.pool2d(X, (3, 3), (2, 2), (1, 1), (1, 1, 1, 1), "avg", ceil_mode=True)
    """
    what = "topi.nn.pool2d"
    _pool_type(pool_type, what)
    shape = const_shape(data, what)
    axes = _hw_axes(layout, len(shape), what)
    kernel = _ints(kernel, 2, what, "kernel")
    stride = _ints(stride, 2, what, "stride")
    dilation = _ints(dilation, 2, what, "dilation")
    padding = _ints(padding, 4, what, "padding")
    if min(kernel + stride + dilation) < 1 or min(padding) < 0:
        raise TesseraValueError(
            f"{what}: kernel, stride and dilation must be positive and padding non-negative"
        )
    head, tail = padding[:2], list(padding[2:])
    offset = [s - 1 if ceil_mode else 0 for s in stride]
    out_shape = list(shape)
    for i, ax in enumerate(axes):
        dk = (kernel[i] - 1) * dilation[i] + 1
        raw = (shape[ax] + head[i] + tail[i] + offset[i] - dk) // stride[i] + 1
        if ceil_mode and (raw - 1) * stride[i] >= shape[ax] + head[i]:
            raw -= 1
        if raw < 1:
            raise TesseraValueError(
                f"{what}: the {kernel[0]}x{kernel[1]} window does not fit the "
                f"padded {shape[axes[0]]}x{shape[axes[1]]} input"
            )
        out_shape[ax] = raw
    before, after = [0] * len(shape), [0] * len(shape)
    for i, ax in enumerate(axes):
        before[ax], after[ax] = head[i], tail[i] + offset[i]
    padded_needed = any(before) or any(after)
    pad_value = _math.min_value(data.dtype) if pool_type == "max" else 0
    temp = pad(data, before, after, pad_value, name="pad_temp") if padded_needed else data

    def window(out, rv):
        idx = list(out)
        for i, ax in enumerate(axes):
            idx[ax] = out[ax] * stride[i] + rv[i] * dilation[i]
        return temp[tuple(idx)]

    if pool_type == "max":

        def fmax(*out):
            rv = [te.reduce_axis((0, kernel[i]), name=f"rv{i}") for i in range(2)]
            return te.max(window(out, rv), axis=rv)

        return te.compute(
            out_shape,
            fmax,
            name="pool_max",
            tag="pool_max",
            attrs={"schedule_rule": "meta_schedule.pool_max"},
        )

    def fsum(*out):
        rv = [te.reduce_axis((0, kernel[i]), name=f"rv{i}") for i in range(2)]
        return te.sum(expr_ops.cast(window(out, rv), _sum_dtype(data.dtype)), axis=rv)

    pool_sum = te.compute(out_shape, fsum, name="pool_sum", tag="pool_sum")

    def favg(*out):
        count = None
        for i, ax in enumerate(axes):
            start = out[ax] * stride[i] - head[i]
            end = start + (kernel[i] - 1) * dilation[i]
            if count_include_pad:
                end = expr_ops.minimum(end, shape[ax] + tail[i] - 1)
                n = (end - start) // dilation[i] + 1
            else:
                jumps = expr_ops.maximum((dilation[i] - 1 - start) // dilation[i], 0)
                end = expr_ops.minimum(end, shape[ax] - 1)
                n = (end - (start + dilation[i] * jumps)) // dilation[i] + 1
            count = n if count is None else count * n
        count = expr_ops.maximum(count, 1)
        return _average(pool_sum[out], count, data.dtype)

    return te.compute(
        out_shape,
        favg,
        name="pool_avg",
        tag=tag.ELEMWISE,
        attrs={"schedule_rule": "meta_schedule.pool_avg"},
    )


def global_pool(data, pool_type, layout="NCHW"):
    """Max or average over the whole of H and W (kept as dimensions of size 1)."""
    what = "topi.nn.global_pool"
    _pool_type(pool_type, what)
    shape = const_shape(data, what)
    axes = _hw_axes(layout, len(shape), what)
    out_shape = list(shape)
    for ax in axes:
        out_shape[ax] = 1

    def window(out, rv):
        idx = list(out)
        for i, ax in enumerate(axes):
            idx[ax] = rv[i]
        return data[tuple(idx)]

    def fcompute(*out):
        rv = [te.reduce_axis((0, shape[ax]), name=f"rv{i}") for i, ax in enumerate(axes)]
        if pool_type == "max":
            return te.max(window(out, rv), axis=rv)
        return te.sum(expr_ops.cast(window(out, rv), _sum_dtype(data.dtype)), axis=rv)

    red = te.compute(
        out_shape,
        fcompute,
        name="adaptive_pool_" + ("max" if pool_type == "max" else "sum"),
        tag="adaptive_pool_" + pool_type,
        attrs={"schedule_rule": "meta_schedule.adaptive_pool_max"} if pool_type == "max" else None,
    )
    if pool_type == "max":
        return red
    n = shape[axes[0]] * shape[axes[1]]

    def favg(*out):
        return _average(red[out], n, data.dtype)

    return te.compute(
        out_shape,
        favg,
        name="adaptive_pool_avg",
        tag=tag.ELEMWISE,
        attrs={"schedule_rule": "meta_schedule.adaptive_pool_avg"},
    )


def _layout_axes(layout, ndim, letters, what):
    """The positions of ``letters`` (e.g. "DHW") in ``layout``; none may be split."""
    names = [c for c in layout if not c.isdigit()]
    for c in letters:
        if c.lower() in names:
            raise TesseraValueError(f"{what}: layout '{layout}' splits {c}, which pooling does not allow")
        if c not in names:
            raise TesseraValueError(f"{what}: layout '{layout}' has no {c} axis")
    if len(names) != ndim:
        raise TesseraValueError(
            f"{what}: layout '{layout}' has {len(names)} axes but the input has {ndim} dimensions"
        )
    return [names.index(c) for c in letters]


def _adaptive_pool(data, output_size, pool_type, layout, letters, what):
    """Adaptive pooling over the axes ``letters`` of ``layout``, as TVM's topi builds it: one
    reduce axis per pooled dimension whose extent depends on the output position. Output ``o``
    of an axis of ``n`` inputs pooled to ``m`` covers ``[floor(o * n / m), ceil((o + 1) * n / m))``,
    never empty."""
    _pool_type(pool_type, what)
    shape = const_shape(data, what)
    axes = _layout_axes(layout, len(shape), letters, what)
    k = len(axes)
    if isinstance(output_size, (list, tuple)):
        output_size = list(output_size)
    else:
        output_size = [output_size]
    if len(output_size) == 1 and k > 1:
        output_size = output_size * k
    if len(output_size) != k:
        raise TesseraValueError(
            f"{what}: output_size needs {k} entries (one per {'/'.join(letters)} axis), "
            f"got {len(output_size)}"
        )
    out_size = [shape[ax] if s is None else int(s) for s, ax in zip(output_size, axes)]
    if min(out_size) < 1:
        raise TesseraValueError(f"{what}: output sizes must be positive, got {tuple(out_size)}")
    out_shape = list(shape)
    for i, ax in enumerate(axes):
        out_shape[ax] = out_size[i]

    def window(i, o):
        """The first input index of output ``o`` along pooled axis ``i`` and the window's size
        (TVM's formulas: the end is ``(o + 1) * n / m`` rounded up)."""
        n, m = shape[axes[i]], out_size[i]
        if n % m == 0:  # windows of n / m each (what TVM's simplifier makes of the formulas)
            return o * (n // m), n // m
        start = expr_ops.floordiv(o * n, m)
        last = expr_ops.floordiv((o + 1) * n, m)
        end = _core.Select(expr_ops.floormod((o + 1) * n, m) == 0, last, last + 1)
        return start, end - start

    def reduce_axes(out):
        return [te.reduce_axis((0, window(i, out[ax])[1]), name=f"rv{i}") for i, ax in enumerate(axes)]

    def fcompute(*out):
        rv = reduce_axes(out)
        idx = list(out)
        for i, ax in enumerate(axes):
            idx[ax] = window(i, out[ax])[0] + rv[i]
        if pool_type == "max":
            return te.max(data[tuple(idx)], axis=rv)
        # Narrow integers sum in int32 (TVM sums in the input type, which overflows).
        return te.sum(expr_ops.cast(data[tuple(idx)], _sum_dtype(data.dtype)), axis=rv)

    red = te.compute(
        out_shape,
        fcompute,
        name="adaptive_pool_" + ("max" if pool_type == "max" else "sum"),
        tag="adaptive_pool_" + ("max" if pool_type == "max" else "sum"),
        attrs={"schedule_rule": "meta_schedule.adaptive_pool_max"} if pool_type == "max" else None,
    )
    if pool_type == "max":
        return red

    def favg(*out):
        # As TVM: the product of the window sizes, each cast to the sum's type; a size that is
        # the same for every window (m divides n) is a constant, 1 is left out.
        count, same = None, 1
        for i, ax in enumerate(axes):
            n, m = shape[ax], out_size[i]
            if n % m == 0:
                same *= n // m
                continue
            size = expr_ops.cast(window(i, out[ax])[1], red.dtype)
            count = size if count is None else count * size
        if count is None or same != 1:
            factor = expr_ops.const(same, red.dtype)
            count = factor if count is None else count * factor
        total = red[out]
        if expr_ops.is_float(red.dtype):
            return expr_ops.cast(total / count, data.dtype)
        return expr_ops.cast(expr_ops.truncdiv(total, count), data.dtype)

    return te.compute(
        out_shape,
        favg,
        name="adaptive_pool_avg",
        tag=tag.ELEMWISE,
        attrs={"schedule_rule": "meta_schedule.adaptive_pool_avg"},
    )


def adaptive_pool(data, output_size, pool_type, layout="NCHW"):
    """Max or average pooling of the H and W axes of ``layout`` to ``output_size = (oh, ow)``
    (an entry None keeps that axis's size): output ``o`` of an axis of ``n`` inputs covers the
    inputs ``floor(o * n / oh)`` to ``ceil((o + 1) * n / oh)`` (exclusive)."""
    return _adaptive_pool(data, output_size, pool_type, layout, "HW", "topi.nn.adaptive_pool")


def adaptive_pool1d(data, output_size, pool_type, layout="NCW"):
    """:func:`adaptive_pool` over the W axis of ``layout``."""
    return _adaptive_pool(data, output_size, pool_type, layout, "W", "topi.nn.adaptive_pool1d")


def adaptive_pool3d(data, output_size, pool_type, layout="NCDHW"):
    """:func:`adaptive_pool` over the D, H and W axes of ``layout``."""
    return _adaptive_pool(data, output_size, pool_type, layout, "DHW", "topi.nn.adaptive_pool3d")
