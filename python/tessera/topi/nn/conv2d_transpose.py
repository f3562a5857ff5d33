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


def _dilate(data, sh, sw):
    """``data`` with ``s - 1`` zeros between neighbouring rows and columns."""
    n, c, h, w = const_shape(data, "topi.nn.conv2d_transpose_nchw")
    if sh == 1 and sw == 1:
        return data

    def fcompute(b, ch, y, x):
        inside = expr_ops.logical_and(
            expr_ops.compare("==", y % sh, 0), expr_ops.compare("==", x % sw, 0)
        )
        zero = expr_ops.const(0, data.dtype)
        return _math.if_then_else(inside, data[b, ch, y // sh, x // sw], zero)

    return te.compute(
        (n, c, (h - 1) * sh + 1, (w - 1) * sw + 1), fcompute, name="data_dilate", tag="injective"
    )


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
    padded = pad(_dilate(data, sh, sw), before, after, name="data_pad")
    oh = (h - 1) * sh + 1 + before[2] + after[2] - kh + 1
    ow = (w - 1) * sw + 1 + before[3] + after[3] - kw + 1
    dtype = _out_dtype(data, out_dtype)
    icg = ic // groups

    def fcompute(b, c, y, x):
        dc = te.reduce_axis((0, icg), name="dc")
        dh = te.reduce_axis((0, kh), name="dh")
        dw = te.reduce_axis((0, kw), name="dw")
        ch = c // ocg * icg + dc.var if groups > 1 else dc.var
        v = padded[b, ch, y + dh, x + dw]
        k = kernel[ch, c % ocg if groups > 1 else c, kh - 1 - dh.var, kw - 1 - dw.var]
        return te.sum(expr_ops.cast(v, dtype) * expr_ops.cast(k, dtype), axis=[dc, dh, dw])

    return te.compute(
        (n, ocg * groups, oh, ow), fcompute, name="compute", tag="conv2d_transpose_nchw"
    )


def conv2d_transpose_nchw(Input, Filter, strides, padding, out_dtype, output_padding):
    """Transposed convolution: ``Input [n, in, h, w]``, ``Filter [in, out, kh, kw]``; the
    result is ``[n, out, (h - 1) * stride - pad_top - pad_bottom + kh + output_padding, ...]``.

    >>> Y = topi.nn.conv2d_transpose_nchw(X, W, (2, 2), (1, 1), "float32", (1, 1))
    """
    return group_conv2d_transpose_nchw(
        Input, Filter, strides, padding, out_dtype, output_padding, 1
    )
