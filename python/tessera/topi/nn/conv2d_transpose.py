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
    # phase sums only the kernel taps that meet input pixels, ceil(k / s) of them per axis. The
    # phases are numbered by their kernel residue r (the taps k - 1 - r - s * t, t <
    # ceil(k / s)): phase r holds output rows y = s * q + p(r), p(r) = (before - r) mod s, which
    # read input row q + off(r) + t, off(r) = ceil((p(r) - before) / s). Numbered so, a phase's
    # kernel taps are an affine view of the kernel (no division): where s divides k the kernel
    # is read in place (the automatic schedule inlines the view), else copied with zeros for
    # the taps beyond it. The input is copied per phase (zeros outside it), so that each phase
    # is a plain convolution; the phases are interleaved last.
    hp, wp = _Phases(kh, sh, before[2], oh), _Phases(kw, sw, before[3], ow)

    def fdata(b, ry, rx, ch, u, v):
        row, col = u + hp.offset(ry), v + wp.offset(rx)
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

    def fkernel(ch, co, ry, rx, th, tw):
        row, col = hp.tap(ry, th), wp.tap(rx, tw)
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

    def fphase(b, c, ry, rx, qy, qx):
        dc = te.reduce_axis((0, icg), name="dc")
        th = te.reduce_axis((0, hp.taps), name="th")
        tw = te.reduce_axis((0, wp.taps), name="tw")
        ch, co = channels(c, dc)
        v = data_phases[b, ry, rx, ch, qy + th, qx + tw]
        k = kernel_phases[ch, co, ry, rx, th, tw]
        return te.sum(expr_ops.cast(v, dtype) * expr_ops.cast(k, dtype), axis=[dc, th, tw])

    phases = te.compute(
        (n, ocg * groups, sh, sw, hp.rows, wp.rows),
        fphase,
        name="conv2d_transpose_phases",
        tag="conv2d_transpose_nchw",
    )
    return te.compute(
        (n, ocg * groups, oh, ow),
        lambda b, c, y, x: phases[b, c, hp.residue(y), wp.residue(x), y // sh, x // sw],
        name="compute",
        tag="conv2d_transpose_nchw",
    )


class _Phases:
    """One axis of a strided transposed convolution split into its ``s`` phases, numbered by
    kernel residue ``r``: output ``s * q + p(r)`` (``q < rows``), ``p(r) = (before - r) mod s``,
    sums input ``q + offset(r) + t`` times kernel tap ``tap(r, t) = k - 1 - r - s * t`` for
    ``t < taps`` (a tap below 0 lies beyond the kernel: zero)."""

    def __init__(self, k, s, before, out):
        self.s, self.before, self.k = s, before, k
        self.taps = -(-k // s)
        self.rows = -(-out // s)

    def offset(self, r):
        # ceil((p(r) - before) / s) = -(before // s) + (1 if r > before % s else 0)
        return (r + self.s - 1 - self.before % self.s) // self.s - self.before // self.s

    def tap(self, r, t):
        return self.k - 1 - r - t * self.s

    def residue(self, y):
        # the phase of output index y: r = (before - y) mod s
        return (self.before + self.s - y % self.s) % self.s


def conv2d_transpose_nchw(Input, Filter, strides, padding, out_dtype, output_padding):
    """Transposed convolution: ``Input [n, in, h, w]``, ``Filter [in, out, kh, kw]``; the
    result is ``[n, out, (h - 1) * stride - pad_top - pad_bottom + kh + output_padding, ...]``.

    >>> Y = topi.nn.conv2d_transpose_nchw(X, W, (2, 2), (1, 1), "float32", (1, 1))
    """
    return group_conv2d_transpose_nchw(
        Input, Filter, strides, padding, out_dtype, output_padding, 1
    )
