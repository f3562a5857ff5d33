"""Depthwise 2-D convolutions: each input channel convolved with its own filters."""

from ... import te
from ...error import TesseraValueError
from ...tir import expr_ops
from ..utils import const_shape
from .conv2d import _check_4d, _geometry, _out_dtype, _spatial_pad


def depthwise_conv2d_nchw(Input, Filter, stride, padding, dilation, out_dtype=None):
    """NCHW input, filter ``[in_channel, channel_multiplier, kh, kw]``; the result has
    ``in_channel * channel_multiplier`` channels (channel ``c`` reads input ``c // multiplier``)."""
    what = "topi.nn.depthwise_conv2d_nchw"
    n, ic, ih, iw = _check_4d(Input, what, "input")
    fc, m, kh, kw = _check_4d(Filter, what, "filter")
    if fc != ic:
        raise TesseraValueError(f"{what}: the filter has {fc} channels, the input {ic}")
    (sh, sw), (dh, dw), pads, (oh, ow) = _geometry(
        (ih, iw), (kh, kw), stride, padding, dilation, what
    )
    dtype = _out_dtype(Input, out_dtype)
    padded = _spatial_pad(Input, 2, pads, name="PaddedInput")

    def fcompute(b, c, y, x):
        ry = te.reduce_axis((0, kh), name="di")
        rx = te.reduce_axis((0, kw), name="dj")
        return te.sum(
            expr_ops.cast(padded[b, c // m, y * sh + ry * dh, x * sw + rx * dw], dtype)
            * expr_ops.cast(Filter[c // m, c % m, ry, rx], dtype),
            axis=[ry, rx],
        )

    return te.compute(
        (n, ic * m, oh, ow), fcompute, name="DepthwiseConv2d", tag="depthwise_conv2d_nchw"
    )


def depthwise_conv2d_nhwc(
    Input, Filter, stride, padding, dilation, kernel_layout="HWOI", out_dtype=None
):
    """NHWC input, filter ``[kh, kw, in_channel, channel_multiplier]`` (``kernel_layout``
    "HWOI")."""
    what = "topi.nn.depthwise_conv2d_nhwc"
    if kernel_layout != "HWOI":
        raise TesseraValueError(f"{what}: kernel_layout must be 'HWOI', got '{kernel_layout}'")
    n, ih, iw, ic = _check_4d(Input, what, "input")
    kh, kw, fc, m = _check_4d(Filter, what, "filter")
    if fc != ic:
        raise TesseraValueError(f"{what}: the filter has {fc} channels, the input {ic}")
    (sh, sw), (dh, dw), pads, (oh, ow) = _geometry(
        (ih, iw), (kh, kw), stride, padding, dilation, what
    )
    dtype = _out_dtype(Input, out_dtype)
    padded = _spatial_pad(Input, 1, pads, name="PaddedInput")

    def fcompute(b, y, x, c):
        ry = te.reduce_axis((0, kh), name="di")
        rx = te.reduce_axis((0, kw), name="dj")
        return te.sum(
            expr_ops.cast(padded[b, y * sh + ry * dh, x * sw + rx * dw, c // m], dtype)
            * expr_ops.cast(Filter[ry, rx, c // m, c % m], dtype),
            axis=[ry, rx],
        )

    return te.compute(
        (n, oh, ow, ic * m), fcompute, name="DepthwiseConv2d", tag="depthwise_conv2d_nhwc"
    )


def depthwise_conv2d_NCHWc(
    Input, Filter, stride, padding, dilation, layout, out_layout, out_dtype=None
):
    """Depthwise convolution in the blocked layout: input ``[n, ic_chunk, h, w, ic_block]``,
    filter ``[oc_chunk, 1, kh, kw, 1, oc_block]``, result ``[n, oc_chunk, oh, ow, oc_block]``
    with ``oc_chunk * oc_block`` a multiple ``m`` of the input channels: output channel ``c``
    reads input channel ``c // m``. ``layout``/``out_layout`` ("NCHW8c", ...) are
    descriptive."""
    what = "topi.nn.depthwise_conv2d_NCHWc"
    if len(Input.shape) != 5 or len(Filter.shape) != 6:
        raise TesseraValueError(
            f"{what}: needs a 5-D input and a 6-D filter, got shapes "
            f"{tuple(Input.shape)} and {tuple(Filter.shape)}"
        )
    n, ic_chunk, ih, iw, ic_bn = const_shape(Input, what)
    oc_chunk, one_a, kh, kw, one_b, oc_bn = const_shape(Filter, what)
    if one_a != 1 or one_b != 1:
        raise TesseraValueError(
            f"{what}: the filter must be [oc_chunk, 1, kh, kw, 1, oc_block], got "
            f"{tuple(Filter.shape)}"
        )
    in_channel, out_channel = ic_chunk * ic_bn, oc_chunk * oc_bn
    if out_channel % in_channel:
        raise TesseraValueError(
            f"{what}: {out_channel} output channels are not a multiple of the "
            f"{in_channel} input channels"
        )
    m = out_channel // in_channel
    (sh, sw), (dh, dw), pads, (oh, ow) = _geometry(
        (ih, iw), (kh, kw), stride, padding, dilation, what
    )
    dtype = _out_dtype(Input, out_dtype)
    padded = _spatial_pad(Input, 2, pads, name="PaddedInput")

    def fcompute(b, occ, y, x, ob):
        ry = te.reduce_axis((0, kh), name="kh")
        rx = te.reduce_axis((0, kw), name="kw")
        ic = (occ * oc_bn + ob) // m
        return te.sum(
            expr_ops.cast(
                padded[b, ic // ic_bn, y * sh + ry * dh, x * sw + rx * dw, ic % ic_bn], dtype
            )
            * expr_ops.cast(Filter[occ, 0, ry, rx, 0, ob], dtype),
            axis=[ry, rx],
        )

    return te.compute(
        (n, oc_chunk, oh, ow, oc_bn),
        fcompute,
        name="DepthwiseConv2d",
        tag="depthwise_conv2d_NCHWc",
    )
