"""Transposed 2-D convolution, NCHW: each input pixel scatters a weighted copy of the kernel
into the output (conv2d's input gradient)."""

from ... import te
from ...error import TesseraValueError
from ...tir import expr_ops
from .. import _math
from ..utils import const_shape
from .conv2d import _out_dtype
from .pad import pad
from .utils import get_pad_tuple, pair


def group_conv2d_transpose_nchw(data, kernel, stride, padding, out_dtype, output_padding, groups):
    """Grouped transposed convolution: ``data [n, in, h, w]``, ``kernel [in, out // groups,
    kh, kw]``; ``padding`` crops the result, ``output_padding`` extends its bottom/right."""
    what = "topi.nn.conv2d_transpose_nchw"
    n, ic, h, w = const_shape(data, what)
    kic, ocg, kh, kw = const_shape(kernel, what)
    groups = int(groups)
    if kic != ic or groups < 1 or ic % groups:
        raise TesseraValueError(
            f"{what}: the kernel has {kic} input channels, the data {ic} (in {groups} groups)"
        )
    sh, sw = pair(stride, f"{what}: strides")
    oph, opw = pair(output_padding, f"{what}: output_padding")
    if not (0 <= oph < sh and 0 <= opw < sw):
        raise TesseraValueError(f"{what}: output_padding must be smaller than the stride")
    top, left, bottom, right = get_pad_tuple(padding, (kh, kw))
    before = (0, 0, kh - 1 - top, kw - 1 - left)
    after = (0, 0, kh - 1 - bottom + oph, kw - 1 - right + opw)
    if min(before + after) < 0:
        raise TesseraValueError(f"{what}: padding {padding} is larger than the kernel allows")
    oh = (h - 1) * sh + 1 + before[2] + after[2] - kh + 1
    ow = (w - 1) * sw + 1 + before[3] + after[3] - kw + 1
    dtype = _out_dtype(data, out_dtype)
    icg = ic // groups

    def channels(c, dc):
        ch = c // ocg * icg + dc.var if groups > 1 else dc.var
        return ch, (c % ocg if groups > 1 else c)

    if sh == 1 and sw == 1:
        padded = pad(data, before, after, name="data_pad")

        def fcompute(b, c, y, x):
            dc = te.reduce_axis((0, icg), name="dc")
            dh = te.reduce_axis((0, kh), name="dh")
            dw = te.reduce_axis((0, kw), name="dw")
            ch, co = channels(c, dc)
            v = padded[b, ch, y + dh, x + dw]
            k = kernel[ch, co, kh - 1 - dh.var, kw - 1 - dw.var]
            return te.sum(expr_ops.cast(v, dtype) * expr_ops.cast(k, dtype), axis=[dc, dh, dw])

        return te.compute(
            (n, ocg * groups, oh, ow), fcompute, name="compute", tag="conv2d_transpose_nchw"
        )
    # Strided: the dilated input is zero except at every s-th row and column, so each output
    # phase (y % sh, x % sw) sums only the kernel taps that meet input pixels, ceil(k / s) of
    # them per axis: output row y = sh * q + p reads input row q + off(p) + t and kernel row
    # kh - 1 - ((before - p) mod sh + sh * t), t < ceil(kh / sh), off(p) = ceil((p - before) /
    # sh). The input and the kernel are first copied per phase (zeros outside the input and
    # for taps beyond the kernel), so that the phases are plain convolutions, interleaved last.
    hp, wp = _Phases(kh, sh, before[2], oh), _Phases(kw, sw, before[3], ow)

    def fdata(b, py, px, ch, u, v):
        row, col = u + hp.offset(py), v + wp.offset(px)
        inside = expr_ops.logical_and(
            expr_ops.logical_and(expr_ops.compare(">=", row, 0), expr_ops.compare("<", row, h)),
            expr_ops.logical_and(expr_ops.compare(">=", col, 0), expr_ops.compare("<", col, w)),
        )
        return _math.if_then_else(inside, data[b, ch, row, col], expr_ops.const(0, data.dtype))

    data_phases = te.compute(
        (n, sh, sw, ic, hp.rows + hp.taps - 1, wp.rows + wp.taps - 1),
        fdata,
        name="data_phases",
        tag="injective",
    )

    def fkernel(ch, co, py, px, th, tw):
        row, col = hp.tap(py, th), wp.tap(px, tw)
        value = kernel[ch, co, row, col]
        if hp.taps * sh == kh and wp.taps * sw == kw:
            return value
        inside = expr_ops.logical_and(
            expr_ops.compare(">=", row, 0), expr_ops.compare(">=", col, 0)
        )
        return _math.if_then_else(inside, value, expr_ops.const(0, kernel.dtype))

    kernel_phases = te.compute(
        (ic, ocg, sh, sw, hp.taps, wp.taps), fkernel, name="kernel_phases", tag="injective"
    )

    def fphase(b, c, py, px, qy, qx):
        dc = te.reduce_axis((0, icg), name="dc")
        th = te.reduce_axis((0, hp.taps), name="th")
        tw = te.reduce_axis((0, wp.taps), name="tw")
        ch, co = channels(c, dc)
        v = data_phases[b, py, px, ch, qy + th, qx + tw]
        k = kernel_phases[ch, co, py, px, th, tw]
        return te.sum(expr_ops.cast(v, dtype) * expr_ops.cast(k, dtype), axis=[dc, th, tw])

    phases = te.compute(
        (n, ocg * groups, sh, sw, hp.rows, wp.rows),
        fphase,
        name="conv2d_transpose_phases",
        tag="conv2d_transpose_nchw",
    )
    return te.compute(
        (n, ocg * groups, oh, ow),
        lambda b, c, y, x: phases[b, c, y % sh, x % sw, y // sh, x // sw],
        name="compute",
        tag="conv2d_transpose_nchw",
    )


class _Phases:
    """One axis of a strided transposed convolution split into its ``s`` phases: output
    ``s * q + p`` (``q < rows``) sums input ``q + offset(p) + t`` times kernel tap ``tap(p, t)``
    for ``t < taps`` (a tap below 0 lies beyond the kernel: zero)."""

    def __init__(self, k, s, before, out):
        self.s, self.before, self.k = s, before, k
        self.taps = -(-k // s)
        self.rows = -(-out // s)

    def offset(self, p):
        # ceil((p - before) / s), the numerator kept non-negative for the division
        shift = -(-self.before // self.s) * self.s
        return (p + self.s - 1 - self.before + shift) // self.s - shift // self.s

    def tap(self, p, t):
        # kernel index k - 1 - dh, dh = (before - p) mod s + s * t
        return self.k - 1 - (self.before + self.s - p) % self.s - t * self.s


def conv2d_transpose_nchw(Input, Filter, strides, padding, out_dtype, output_padding):
    """Transposed convolution: ``Input [n, in, h, w]``, ``Filter [in, out, kh, kw]``; the
    result is ``[n, out, (h - 1) * stride - pad_top - pad_bottom + kh + output_padding, ...]``.

    >>> Y = topi.nn.conv2d_transpose_nchw(X, W, (2, 2), (1, 1), "float32", (1, 1))
    """
    return group_conv2d_transpose_nchw(
        Input, Filter, strides, padding, out_dtype, output_padding, 1
    )
