"""Numpy references of topi operators (``tvm.topi.testing``): what tests compare kernels with.

>>> out = topi.testing.conv2d_nchw_python(data, weight, stride=1, padding="SAME")
"""

import numpy as np

from ..nn.utils import get_pad_tuple, pair


def dilate_python(input_np, strides, dilation_value=0.0, out_dtype=None):
    """``input_np`` with ``strides[i] - 1`` entries of ``dilation_value`` put between neighbours
    along axis ``i`` (a stride of 1 leaves the axis as it is)."""
    input_np = np.asarray(input_np)
    strides = tuple(int(s) for s in strides)
    if len(strides) != input_np.ndim:
        raise ValueError(f"dilate_python: {len(strides)} strides for a {input_np.ndim}-d array")
    if min(strides, default=1) < 1:
        raise ValueError(f"dilate_python: strides must be positive, got {strides}")
    shape = tuple((n - 1) * s + 1 if n else 0 for n, s in zip(input_np.shape, strides))
    out = np.full(shape, dilation_value, dtype=out_dtype or input_np.dtype)
    out[tuple(slice(None, None, s) for s in strides)] = input_np
    return out


def _windows(padded, kh, kw, sh, sw, oh, ow):
    """The (N, C, OH, OW, KH, KW) view of the kernel windows of an NCHW array."""
    n, c, _, _ = padded.shape
    s = padded.strides
    return np.lib.stride_tricks.as_strided(
        padded, (n, c, oh, ow, kh, kw), (s[0], s[1], s[2] * sh, s[3] * sw, s[2], s[3]), writeable=False)


def _pad_hw(a, top, left, bottom, right):
    return np.pad(a, ((0, 0), (0, 0), (top, bottom), (left, right)))


def conv2d_nchw_python(a_np, w_np, stride, padding, groups=1):
    """Convolution of ``a_np`` (N, C, H, W) with ``w_np`` (K, C / groups, KH, KW): an
    (N, K, OH, OW) array. ``stride`` is an int or (h, w); ``padding`` an int, (h, w),
    (top, left, bottom, right), "SAME" or "VALID"."""
    a_np, w_np = np.asarray(a_np), np.asarray(w_np)
    n, c, h, w = a_np.shape
    k, cg, kh, kw = w_np.shape
    if c % groups or k % groups or c // groups != cg:
        raise ValueError(f"conv2d_nchw_python: {c} input channels, {k} filters of {cg} channels and "
                         f"{groups} groups do not fit")
    sh, sw = pair(stride, "stride")
    top, left, bottom, right = get_pad_tuple(padding, (kh, kw))
    padded = _pad_hw(a_np, top, left, bottom, right)
    oh = (h + top + bottom - kh) // sh + 1
    ow = (w + left + right - kw) // sw + 1
    out = np.empty((n, k, oh, ow), dtype=np.result_type(a_np.dtype, w_np.dtype))
    kg = k // groups
    for g in range(groups):
        win = _windows(padded[:, g * cg:(g + 1) * cg], kh, kw, sh, sw, oh, ow)
        out[:, g * kg:(g + 1) * kg] = np.einsum("ncyxij,kcij->nkyx", win, w_np[g * kg:(g + 1) * kg])
    return out


def depthwise_conv2d_python_nchw(input_np, filter_np, stride, padding):
    """Depthwise convolution of ``input_np`` (N, C, H, W) with ``filter_np`` (C, M, KH, KW): an
    (N, C * M, OH, OW) array whose channel ``c * M + m`` is channel ``c`` convolved with filter
    ``(c, m)``. ``padding`` is "VALID", "SAME" (the output has ceil(H / stride) rows) or as for
    :func:`conv2d_nchw_python`."""
    input_np, filter_np = np.asarray(input_np), np.asarray(filter_np)
    n, c, h, w = input_np.shape
    fc, m, kh, kw = filter_np.shape
    if fc != c:
        raise ValueError(f"depthwise_conv2d_python_nchw: {c} input channels but {fc} filter channels")
    sh, sw = pair(stride, "stride")
    if padding == "SAME":
        ph = max((-(-h // sh) - 1) * sh + kh - h, 0)
        pw = max((-(-w // sw) - 1) * sw + kw - w, 0)
        top, left, bottom, right = ph // 2, pw // 2, ph - ph // 2, pw - pw // 2
    else:
        top, left, bottom, right = get_pad_tuple(padding, (kh, kw))
    padded = _pad_hw(input_np, top, left, bottom, right)
    oh = (h + top + bottom - kh) // sh + 1
    ow = (w + left + right - kw) // sw + 1
    win = _windows(padded, kh, kw, sh, sw, oh, ow)
    out = np.einsum("ncyxij,cmij->ncmyx", win, filter_np)
    return out.reshape(n, c * m, oh, ow).astype(np.result_type(input_np.dtype, filter_np.dtype))


__all__ = ["conv2d_nchw_python", "depthwise_conv2d_python_nchw", "dilate_python"]
