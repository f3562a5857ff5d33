"""conv2d_NCHWc and depthwise_conv2d_NCHWc with no schedule (the automatic schedule) against
numpy on odd shapes: strides 1 and 2, 1x1 and 3x3 kernels, dilation, padding, channel blocks 1,
4 and 8, a channel multiplier, float32/float64 and int8 data with int32 results."""

import numpy as np
import pytest

from tessera import te, topi
from tessera.error import TesseraValueError

from topi_testing import Kernels

K = Kernels()
CASES = {}


def _pads(padding):
    if isinstance(padding, int):
        return (padding,) * 4
    return tuple(padding)


def _geometry(x_shape, kh, kw, stride, padding, dilation):
    _, _, ih, iw, _ = x_shape
    sh, sw = stride
    dh, dw = dilation
    top, left, bottom, right = _pads(padding)
    oh = (ih + top + bottom - (kh - 1) * dh - 1) // sh + 1
    ow = (iw + left + right - (kw - 1) * dw - 1) // sw + 1
    return oh, ow


def _pad_taps(x, kh, kw, stride, padding, dilation, acc):
    """Yield (ky, kx, view) for every tap: the padded input's strided view [n, cc, oh, ow, cb]."""
    top, left, bottom, right = _pads(padding)
    xp = np.pad(x.astype(acc), ((0, 0), (0, 0), (top, bottom), (left, right), (0, 0)))
    oh, ow = _geometry(x.shape, kh, kw, stride, padding, dilation)
    (sh, sw), (dh, dw) = stride, dilation
    for ky in range(kh):
        for kx in range(kw):
            y0, x0 = ky * dh, kx * dw
            yield ky, kx, xp[:, :, y0:y0 + (oh - 1) * sh + 1:sh, x0:x0 + (ow - 1) * sw + 1:sw, :]


def conv_nchwc_ref(x, w, stride, padding, dilation, out_dtype):
    acc = "float64" if np.dtype(out_dtype).kind == "f" else "int64"
    out = 0
    for ky, kx, v in _pad_taps(x, w.shape[2], w.shape[3], stride, padding, dilation, acc):
        out = out + np.einsum("ncyxi,ocib->noyxb", v, w[:, :, ky, kx].astype(acc))
    return np.asarray(out).astype(out_dtype)


def depthwise_nchwc_ref(x, w, stride, padding, dilation, out_dtype):
    acc = "float64" if np.dtype(out_dtype).kind == "f" else "int64"
    n, icc, ih, iw, icb = x.shape
    occ, _, kh, kw, _, ocb = w.shape
    m = occ * ocb // (icc * icb)
    c = np.arange(occ * ocb) // m  # the input channel of every output channel
    xx = x[:, c // icb, :, :, c % icb]  # [oc, n, h, w] (advanced indices first)
    xx = xx.transpose(1, 0, 2, 3).reshape(n, occ, ocb, ih, iw).transpose(0, 1, 3, 4, 2)
    out = 0
    for ky, kx, v in _pad_taps(xx, kh, kw, stride, padding, dilation, acc):
        out = out + v * w[:, 0, ky, kx, 0, :].astype(acc)[None, :, None, None, :]
    return np.asarray(out).astype(out_dtype)


# (name, data shape, kernel shape, stride, padding, dilation)
CONV = [
    ("k3_s2_b8", (1, 3, 9, 11, 8), (2, 3, 3, 3, 8, 8), (2, 2), 1, (1, 1)),
    ("k1_s1_ib1", (1, 5, 7, 9, 1), (3, 5, 1, 1, 1, 8), (1, 1), 0, (1, 1)),
    ("k1_s2_ob1", (2, 2, 7, 6, 8), (5, 2, 1, 1, 8, 1), (2, 2), 0, (1, 1)),
    ("k3_d2_ib4", (1, 3, 13, 10, 4), (2, 3, 3, 3, 4, 8), (1, 2), (1, 0, 2, 1), (2, 2)),
    ("k1_s2_b8_odd", (1, 4, 15, 13, 8), (3, 4, 1, 1, 8, 8), (2, 2), 0, (1, 1)),
    ("k3_s1_b8_wide", (1, 2, 6, 37, 8), (3, 2, 3, 3, 8, 8), (1, 1), 0, (1, 1)),
    ("k3_s1_b1", (1, 3, 8, 9, 1), (5, 3, 3, 3, 1, 1), (1, 1), 1, (1, 1)),
]
DEPTHWISE = [
    ("k3_s1_b8", (1, 3, 11, 9, 8), (3, 1, 3, 3, 1, 8), (1, 1), 1, (1, 1)),
    ("k3_s2_b8", (1, 3, 12, 13, 8), (3, 1, 3, 3, 1, 8), (2, 2), 0, (1, 1)),
    ("k3_s1_b1", (1, 5, 8, 7, 1), (5, 1, 3, 3, 1, 1), (1, 1), 0, (1, 1)),
    ("k3_mult2", (1, 2, 7, 7, 4), (2, 1, 3, 3, 1, 8), (1, 1), 1, (1, 1)),
    ("k3_ib8_ob4_d2", (2, 2, 9, 10, 8), (4, 1, 3, 3, 1, 4), (1, 2), (0, 1, 1, 0), (2, 2)),
    ("k1_s2_b8", (1, 2, 9, 9, 8), (2, 1, 1, 1, 1, 8), (2, 2), 0, (1, 1)),
    ("k3_s1_b8_wide", (1, 2, 5, 41, 8), (2, 1, 3, 3, 1, 8), (1, 1), 0, (1, 1)),
]
DTYPES = [("float32", "float32"), ("float64", "float64"), ("int8", "int32")]


def _add(kind, name, xs, ws, stride, padding, dilation, dtype, out_dtype):
    X = te.placeholder(xs, dtype, name="x")
    W = te.placeholder(ws, dtype, name="w")
    op = topi.nn.conv2d_NCHWc if kind == "conv" else topi.nn.depthwise_conv2d_NCHWc
    Y = op(X, W, stride, padding, dilation, f"NCHW{xs[4]}c", f"NCHW{ws[5]}c", out_dtype)
    key = f"{kind}_{name}_{dtype}"
    K.add(key, [X, W], Y)
    ref = conv_nchwc_ref if kind == "conv" else depthwise_nchwc_ref
    CASES[key] = (xs, ws, dtype, out_dtype, lambda x, w: ref(x, w, stride, padding, dilation,
                                                               out_dtype))


for _kind, _table in (("conv", CONV), ("depthwise", DEPTHWISE)):
    for _name, _xs, _ws, _s, _p, _d in _table:
        for _dt, _odt in DTYPES:
            _add(_kind, _name, _xs, _ws, _s, _p, _d, _dt, _odt)


def _data(shape, dtype, rng):
    if np.dtype(dtype).kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    return rng.integers(-100, 100, shape).astype(dtype)


@pytest.mark.parametrize("key", sorted(CASES))
def test_nchwc_conv_matches_numpy(key):
    xs, ws, dtype, out_dtype, ref = CASES[key]
    rng = np.random.default_rng(sum(key.encode()))
    x, w = _data(xs, dtype, rng), _data(ws, dtype, rng)
    got = K.run(key, x, w)
    want = ref(x, w)
    assert got.shape == want.shape and got.dtype == np.dtype(out_dtype)
    if np.dtype(out_dtype).kind == "f":
        tol = 1e-4 if dtype == "float32" else 1e-10
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    else:
        np.testing.assert_array_equal(got, want)


def test_depthwise_nchwc_rejects_bad_filters():
    x = te.placeholder((1, 2, 8, 8, 4), "float32", name="x")
    with pytest.raises(TesseraValueError, match=r"\[oc_chunk, 1, kh, kw, 1, oc_block\]"):
        topi.nn.depthwise_conv2d_NCHWc(x, te.placeholder((2, 2, 3, 3, 1, 4), "float32"), 1, 0, 1,
                                       "NCHW4c", "NCHW4c")
    with pytest.raises(TesseraValueError, match="not a multiple of the 8 input channels"):
        topi.nn.depthwise_conv2d_NCHWc(x, te.placeholder((3, 1, 3, 3, 1, 4), "float32"), 1, 0, 1,
                                       "NCHW4c", "NCHW4c")
    with pytest.raises(TesseraValueError, match="5-D input and a 6-D filter"):
        topi.nn.depthwise_conv2d_NCHWc(x, te.placeholder((3, 1, 3, 3), "float32"), 1, 0, 1,
                                       "NCHW4c", "NCHW4c")
