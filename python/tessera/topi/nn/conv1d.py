"""1-D convolutions: NCW input with OIW kernels, NWC input with WIO kernels, grouped."""

from ... import te
from ...error import TesseraValueError
from ...tir import expr_ops
from ..utils import const_shape
from .conv2d import _out_dtype
from .pad import pad


def _pad1d(padding, kernel, what):
    """``(left, right)`` from an int, one or two ints, "SAME" or "VALID"."""
    if isinstance(padding, (tuple, list)):
        if len(padding) == 1:
            return int(padding[0]), int(padding[0])
        if len(padding) == 2:
            return int(padding[0]), int(padding[1])
        raise TesseraValueError(f"{what}: padding must have 1 or 2 entries, got {tuple(padding)}")
    if isinstance(padding, int) and not isinstance(padding, bool):
        return padding, padding
    if padding == "VALID":
        return 0, 0
    if padding == "SAME":
        total = kernel - 1
        return (total + 1) // 2, total - (total + 1) // 2
    raise TesseraValueError(f"{what}: unknown padding {padding!r}")


def _single(value, what, name):
    if isinstance(value, (tuple, list)):
        if len(value) != 1:
            raise TesseraValueError(f"{what}: {name} must be an int or one int")
        value = value[0]
    value = int(value)
    if value < 1:
        raise TesseraValueError(f"{what}: {name} must be positive, got {value}")
    return value


def conv1d(
    data,
    kernel,
    strides=1,
    padding="VALID",
    dilation=1,
    groups=1,
    data_layout="NCW",
    kernel_layout="",
    out_dtype=None,
):
    """1-D convolution in "NCW" (kernel ``[out, in // groups, w]``) or "NWC" (kernel
    ``[w, in // groups, out]``).

    >>> Y = topi.nn.conv1d(X, W, strides=2, padding="SAME")
    """
    what = "topi.nn.conv1d"
    if data_layout not in ("NCW", "NWC"):
        raise TesseraValueError(f"{what}: data_layout must be NCW or NWC, got {data_layout}")
    if len(data.shape) != 3 or len(kernel.shape) != 3:
        raise TesseraValueError(f"{what}: needs a 3-D input and kernel")
    if data_layout == "NCW":
        n, ic, width = const_shape(data, what)
        oc, kic, kw = const_shape(kernel, what)
    else:
        n, width, ic = const_shape(data, what)
        kw, kic, oc = const_shape(kernel, what)
    groups = int(groups)
    if groups < 1 or ic % groups or oc % groups or kic != ic // groups:
        raise TesseraValueError(
            f"{what}: {ic} input channels, {oc} output channels and a kernel of {kic} input "
            f"channels do not match {groups} group{'s' if groups > 1 else ''}"
        )
    stride = _single(strides, what, "strides")
    dil = _single(dilation, what, "dilation")
    dk = (kw - 1) * dil + 1
    left, right = _pad1d(padding, dk, what)
    ow = (width + left + right - dk) // stride + 1
    if ow < 1:
        raise TesseraValueError(f"{what}: the kernel does not fit the padded input")
    dtype = _out_dtype(data, out_dtype)
    w_axis = 2 if data_layout == "NCW" else 1
    before, after = [0, 0, 0], [0, 0, 0]
    before[w_axis], after[w_axis] = left, right
    padded = pad(data, before, after, name="pad_temp") if left or right else data
    icg, ocg = ic // groups, oc // groups

    def channel(o, r):
        return r if groups == 1 else o // ocg * icg + r

    if data_layout == "NCW":

        def fncw(b, o, x):
            rc = te.reduce_axis((0, icg), name="rc")
            rw = te.reduce_axis((0, kw), name="rw")
            v = padded[b, channel(o, rc.var), x * stride + rw * dil]
            return te.sum(
                expr_ops.cast(v, dtype) * expr_ops.cast(kernel[o, rc, rw], dtype), axis=[rc, rw]
            )

        return te.compute((n, oc, ow), fncw, name="conv1d_ncw", tag="conv1d_ncw")

    def fnwc(b, x, o):
        rw = te.reduce_axis((0, kw), name="rw")
        rc = te.reduce_axis((0, icg), name="rc")
        v = padded[b, x * stride + rw * dil, channel(o, rc.var)]
        return te.sum(
            expr_ops.cast(v, dtype) * expr_ops.cast(kernel[rw, rc, o], dtype), axis=[rw, rc]
        )

    return te.compute((n, ow, oc), fnwc, name="conv1d_nwc", tag="conv1d_nwc")


def conv1d_ncw(data, kernel, strides=1, padding="VALID", dilation=1, out_dtype=None):
    """1-D convolution, NCW input, OIW kernel."""
    return conv1d(data, kernel, strides, padding, dilation, 1, "NCW", "OIW", out_dtype)


def conv1d_nwc(data, kernel, strides=1, padding="VALID", dilation=1, out_dtype=None):
    """1-D convolution, NWC input, WIO kernel."""
    return conv1d(data, kernel, strides, padding, dilation, 1, "NWC", "WIO", out_dtype)


def group_conv1d_ncw(
    data, kernel, strides=1, padding="VALID", dilation=1, groups=1, out_dtype=None
):
    """Grouped 1-D convolution, NCW input, kernel ``[out, in // groups, w]``."""
    return conv1d(data, kernel, strides, padding, dilation, groups, "NCW", "OIW", out_dtype)


def group_conv1d_nwc(
    data, kernel, strides=1, padding="VALID", dilation=1, groups=1, out_dtype=None
):
    """Grouped 1-D convolution, NWC input, kernel ``[w, in // groups, out]``."""
    return conv1d(data, kernel, strides, padding, dilation, groups, "NWC", "WIO", out_dtype)
