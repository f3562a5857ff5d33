"""2-D convolutions: NCHW (OIHW kernels), NHWC (HWIO kernels), NCHWc, grouped.

``stride`` and ``dilation`` are an int or ``(h, w)``; ``padding`` an int, ``(h, w)``,
``(top, left, bottom, right)``, "SAME" or "VALID" (see :func:`get_pad_tuple`).
"""

from ... import _core, te
from ...error import TesseraValueError
from ...tir import expr_ops
from ..utils import const_shape
from .pad import pad
from .utils import get_pad_tuple, pair


def _out_dtype(data, out_dtype):
    return data.dtype if out_dtype in (None, "") else _core.canonical_dtype(str(out_dtype))


def _geometry(data_hw, kernel_hw, stride, padding, dilation, what):
    (ih, iw), (kh, kw) = data_hw, kernel_hw
    sh, sw = pair(stride, f"{what}: stride")
    dh, dw = pair(dilation, f"{what}: dilation")
    if min(sh, sw, dh, dw) < 1:
        raise TesseraValueError(f"{what}: strides and dilations must be positive")
    dkh, dkw = (kh - 1) * dh + 1, (kw - 1) * dw + 1
    top, left, bottom, right = get_pad_tuple(padding, (dkh, dkw))
    oh = (ih + top + bottom - dkh) // sh + 1
    ow = (iw + left + right - dkw) // sw + 1
    if oh < 1 or ow < 1:
        raise TesseraValueError(
            f"{what}: the {kh}x{kw} kernel (dilated {dkh}x{dkw}) does not fit "
            f"the padded {ih}x{iw} input"
        )
    return (sh, sw), (dh, dw), (top, left, bottom, right), (oh, ow)


def _spatial_pad(data, h_axis, pads, name="pad_temp"):
    top, left, bottom, right = pads
    if not any(pads):
        return data
    before = [0] * len(data.shape)
    after = [0] * len(data.shape)
    before[h_axis], before[h_axis + 1] = top, left
    after[h_axis], after[h_axis + 1] = bottom, right
    return pad(data, before, after, name=name)


def _check_4d(x, what, role):
    if len(x.shape) != 4:
        raise TesseraValueError(
            f"{what}: the {role} must have 4 dimensions, got shape {tuple(x.shape)}"
        )
    return const_shape(x, what)


def _conv(data, kernel, stride, padding, dilation, groups, out_dtype, layout, what, name, tag):
    dshape = _check_4d(data, what, "input")
    kshape = _check_4d(kernel, what, "filter")
    if layout == "NCHW":
        n, ic, ih, iw = dshape
        oc, kic, kh, kw = kshape
    else:
        n, ih, iw, ic = dshape
        kh, kw, kic, oc = kshape
    if groups < 1 or ic % groups or oc % groups:
        raise TesseraValueError(
            f"{what}: {ic} input and {oc} output channels do not divide into {groups} groups"
        )
    if kic != ic // groups:
        raise TesseraValueError(
            f"{what}: the filter has {kic} input channels; the input has {ic} "
            f"channels in {groups} group{'s' if groups > 1 else ''} "
            f"(expected {ic // groups})"
        )
    (sh, sw), (dh, dw), pads, (oh, ow) = _geometry(
        (ih, iw), (kh, kw), stride, padding, dilation, what
    )
    dtype = _out_dtype(data, out_dtype)
    padded = _spatial_pad(data, 2 if layout == "NCHW" else 1, pads)
    icg, ocg = ic // groups, oc // groups

    def channel(o, r):
        return r if groups == 1 else o // ocg * icg + r

    if layout == "NCHW":

        def fcompute(b, o, y, x):
            rc = te.reduce_axis((0, icg), name="rc")
            ry = te.reduce_axis((0, kh), name="ry")
            rx = te.reduce_axis((0, kw), name="rx")
            return te.sum(
                expr_ops.cast(
                    padded[b, channel(o, rc.var), y * sh + ry * dh, x * sw + rx * dw], dtype
                )
                * expr_ops.cast(kernel[o, rc, ry, rx], dtype),
                axis=[rc, ry, rx],
            )

        return te.compute((n, oc, oh, ow), fcompute, name=name, tag=tag)

    def fcompute_nhwc(b, y, x, o):
        ry = te.reduce_axis((0, kh), name="ry")
        rx = te.reduce_axis((0, kw), name="rx")
        rc = te.reduce_axis((0, icg), name="rc")
        return te.sum(
            expr_ops.cast(padded[b, y * sh + ry * dh, x * sw + rx * dw, channel(o, rc.var)], dtype)
            * expr_ops.cast(kernel[ry, rx, rc, o], dtype),
            axis=[ry, rx, rc],
        )

    return te.compute((n, oh, ow, oc), fcompute_nhwc, name=name, tag=tag)


def conv2d_nchw(Input, Filter, stride, padding, dilation, out_dtype=None):
    """Convolution of an NCHW input with an OIHW filter.

    >>> Y = topi.nn.conv2d_nchw(X, W, stride=1, padding=1, dilation=1)
    """
    return _conv(
        Input,
        Filter,
        stride,
        padding,
        dilation,
        1,
        out_dtype,
        "NCHW",
        "topi.nn.conv2d_nchw",
        "conv2d_nchw",
        "conv2d_nchw",
    )


def conv2d_nhwc(
    Input,
    Filter,
    stride,
    padding,
    dilation,
    out_dtype="float32",
    auto_scheduler_rewritten_layout="",
    meta_schedule_original_shape=None,
):
    """Convolution of an NHWC input with an HWIO filter (the result in ``out_dtype``)."""
    return _conv(
        Input,
        Filter,
        stride,
        padding,
        dilation,
        1,
        out_dtype,
        "NHWC",
        "topi.nn.conv2d_nhwc",
        "Conv2dOutput",
        "conv2d_nhwc",
    )


def group_conv2d_nchw(Input, Filter, stride, padding, dilation, groups, out_dtype=None):
    """Grouped convolution, NCHW input, filter ``[out_channel, in_channel // groups, kh, kw]``."""
    return _conv(
        Input,
        Filter,
        stride,
        padding,
        dilation,
        int(groups),
        out_dtype,
        "NCHW",
        "topi.nn.group_conv2d_nchw",
        "group_conv2d_nchw",
        "group_conv2d_nchw",
    )


def group_conv2d_nhwc(Input, Filter, stride, padding, dilation, groups, out_dtype=None):
    """Grouped convolution, NHWC input, filter ``[kh, kw, in_channel // groups, out_channel]``."""
    return _conv(
        Input,
        Filter,
        stride,
        padding,
        dilation,
        int(groups),
        out_dtype,
        "NHWC",
        "topi.nn.group_conv2d_nhwc",
        "group_conv2d_nhwc",
        "group_conv2d_nhwc",
    )


def conv2d(
    input,
    filter,
    strides,
    padding,
    dilation,
    data_layout="NCHW",
    kernel_layout="",  # noqa: A002
    out_dtype=None,
):
    """Convolution in ``data_layout`` "NCHW" (OIHW filter) or "NHWC" (HWIO filter); a filter
    with fewer input channels than the input makes a grouped convolution."""
    if data_layout == "NCHW":
        if kernel_layout not in ("", "OIHW"):
            raise TesseraValueError(
                f"topi.nn.conv2d: NCHW takes an OIHW filter, not {kernel_layout}"
            )
        ic, kic = const_shape(input, "topi.nn.conv2d")[1], const_shape(filter, "topi.nn.conv2d")[1]
        groups = ic // kic if kic else 1
        return _conv(
            input,
            filter,
            strides,
            padding,
            dilation,
            groups,
            out_dtype,
            "NCHW",
            "topi.nn.conv2d",
            "conv2d_nchw",
            "conv2d_nchw",
        )
    if data_layout == "NHWC":
        if kernel_layout not in ("", "HWIO"):
            raise TesseraValueError(
                f"topi.nn.conv2d: NHWC takes an HWIO filter, not {kernel_layout}"
            )
        ic, kic = const_shape(input, "topi.nn.conv2d")[3], const_shape(filter, "topi.nn.conv2d")[2]
        groups = ic // kic if kic else 1
        return _conv(
            input,
            filter,
            strides,
            padding,
            dilation,
            groups,
            out_dtype,
            "NHWC",
            "topi.nn.conv2d",
            "Conv2dOutput",
            "conv2d_nhwc",
        )
    raise TesseraValueError(
        f"topi.nn.conv2d: unsupported data layout '{data_layout}' (use NCHW or NHWC)"
    )


def conv2d_NCHWc(data, kernel, stride, padding, dilation, layout, out_layout, out_dtype="float32"):
    """Convolution in the blocked layout: ``data [n, ic_chunk, h, w, ic_block]``, ``kernel
    [oc_chunk, ic_chunk // groups, kh, kw, ic_block, oc_block]``, result ``[n, oc_chunk, oh, ow,
    oc_block]``. ``layout``/``out_layout`` ("NCHW8c", ...) are descriptive."""
    what = "topi.nn.conv2d_NCHWc"
    if len(data.shape) != 5 or len(kernel.shape) != 6:
        raise TesseraValueError(
            f"{what}: needs a 5-D input and a 6-D kernel, got shapes "
            f"{tuple(data.shape)} and {tuple(kernel.shape)}"
        )
    n, ic_chunk, ih, iw, ic_bn = const_shape(data, what)
    oc_chunk, kic_chunk, kh, kw, kic_bn, oc_bn = const_shape(kernel, what)
    if kic_bn != ic_bn:
        raise TesseraValueError(
            f"{what}: the kernel's input block {kic_bn} differs from the data's {ic_bn}"
        )
    in_channel = ic_chunk * ic_bn
    if kic_chunk == 0 or in_channel % (kic_chunk * ic_bn):
        raise TesseraValueError(f"{what}: {in_channel} input channels do not match the kernel")
    groups = in_channel // (kic_chunk * ic_bn)
    if oc_chunk % groups:
        raise TesseraValueError(
            f"{what}: {oc_chunk} output chunks do not divide into {groups} groups"
        )
    (sh, sw), (dh, dw), pads, (oh, ow) = _geometry(
        (ih, iw), (kh, kw), stride, padding, dilation, what
    )
    dtype = _out_dtype(data, out_dtype)
    padded = _spatial_pad(data, 2, pads, name="data_pad")
    icg = in_channel // groups

    def fcompute(b, occ, y, x, ob):
        ic = te.reduce_axis((0, icg), name="ic")
        ry = te.reduce_axis((0, kh), name="kh")
        rx = te.reduce_axis((0, kw), name="kw")
        chunk = ic.var // ic_bn
        if groups > 1:
            chunk = occ // (oc_chunk // groups) * (ic_chunk // groups) + chunk
        return te.sum(
            expr_ops.cast(
                padded[b, chunk, y * sh + ry * dh, x * sw + rx * dw, ic.var % ic_bn], dtype
            )
            * expr_ops.cast(kernel[occ, ic.var // ic_bn, ry, rx, ic.var % ic_bn, ob], dtype),
            axis=[ic, ry, rx],
        )

    return te.compute(
        (n, oc_chunk, oh, ow, oc_bn), fcompute, name="conv2d_NCHWc", tag="conv2d_NCHWc"
    )
