"""topi.nn operators against numpy references: convolutions, pooling, softmax, norms, dense."""

import numpy as np
import pytest

from tessera import te, topi
from tessera.error import TesseraTypeError, TesseraValueError

from topi_testing import Kernels, random, tol

K = Kernels()
CASES = {}


def case(name, shapes, dtypes, build, ref, rtol=None):
    phs = [te.placeholder(s, d, name=f"x{j}") for j, (s, d) in enumerate(zip(shapes, dtypes))]
    K.add(name, phs, build(*phs))
    CASES[name] = (shapes, dtypes, ref, rtol)


# ---- numpy references ----


def pad_tuple(padding, kh, kw):
    if isinstance(padding, str):
        ph, pw = (kh - 1, kw - 1) if padding == "SAME" else (0, 0)
        return (ph + 1) // 2, (pw + 1) // 2, ph - (ph + 1) // 2, pw - (pw + 1) // 2
    if isinstance(padding, int):
        return padding, padding, padding, padding
    if len(padding) == 2:
        return padding[0], padding[1], padding[0], padding[1]
    return tuple(padding)


def conv_nchw(x, w, stride, padding, dilation, groups=1, out_dtype=None):
    out_dtype = out_dtype or x.dtype
    acc = "float64" if x.dtype.kind == "f" else "int64"
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    sh, sw = (stride, stride) if isinstance(stride, int) else stride
    dh, dw = (dilation, dilation) if isinstance(dilation, int) else dilation
    top, left, bottom, right = pad_tuple(padding, (kh - 1) * dh + 1, (kw - 1) * dw + 1)
    xp = np.pad(x.astype(acc), ((0, 0), (0, 0), (top, bottom), (left, right)))
    oh = (h + top + bottom - (kh - 1) * dh - 1) // sh + 1
    ow = (wd + left + right - (kw - 1) * dw - 1) // sw + 1
    out = np.zeros((n, o, oh, ow), acc)
    og = o // groups
    for oc in range(o):
        g = oc // og
        for i in range(kh):
            for j in range(kw):
                patch = xp[
                    :,
                    g * cg : (g + 1) * cg,
                    i * dh : i * dh + sh * (oh - 1) + 1 : sh,
                    j * dw : j * dw + sw * (ow - 1) + 1 : sw,
                ]
                out[:, oc] += np.einsum("nchw,c->nhw", patch, w[oc, :, i, j].astype(acc))
    return out.astype(out_dtype)


def pool_ref(
    x, kernel, stride, dilation, padding, pool_type, ceil_mode, count_include_pad, hw=(2, 3)
):
    x = np.moveaxis(x.astype("float64"), hw, (-2, -1))
    h, w = x.shape[-2:]
    t, left, b, r = padding
    outs = []
    for ax, (size, head, tail, k, s, d) in enumerate(
        (
            (h, t, b, kernel[0], stride[0], dilation[0]),
            (w, left, r, kernel[1], stride[1], dilation[1]),
        )
    ):
        dk = (k - 1) * d + 1
        if ceil_mode:
            o = -(-(size + head + tail - dk) // s) + 1
            if (o - 1) * s >= size + head:
                o -= 1
        else:
            o = (size + head + tail - dk) // s + 1
        outs.append(o)
    out = np.zeros(x.shape[:-2] + tuple(outs))
    for oy in range(outs[0]):
        for ox in range(outs[1]):
            ys = [oy * stride[0] - t + i * dilation[0] for i in range(kernel[0])]
            xs = [ox * stride[1] - left + j * dilation[1] for j in range(kernel[1])]
            vals, padded_count = [], 0
            for y in ys:
                for xx in xs:
                    inside_pad = -t <= y < h + b and -left <= xx < w + r
                    padded_count += inside_pad
                    if 0 <= y < h and 0 <= xx < w:
                        vals.append(x[..., y, xx])
            if pool_type == "max":
                out[..., oy, ox] = np.max(vals, axis=0)
            else:
                div = padded_count if count_include_pad else max(len(vals), 1)
                out[..., oy, ox] = np.sum(vals, axis=0) / div
    return np.moveaxis(out, (-2, -1), hw)


def softmax_ref(x, axis):
    x = x.astype("float64")
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


# ---- convolutions ----

CONVS = [  # input, filter, stride, padding, dilation, groups
    ((2, 3, 7, 9), (4, 3, 3, 3), 1, 1, 1, 1),
    ((1, 3, 9, 7), (5, 3, 3, 2), (2, 1), (1, 0, 2, 1), 1, 1),
    ((1, 2, 11, 10), (3, 2, 3, 3), 2, "SAME", (2, 1), 1),
    ((1, 4, 6, 5), (2, 4, 2, 2), 1, "VALID", 1, 1),
    ((1, 6, 7, 7), (4, 3, 3, 3), 1, (1, 1), 1, 2),
]
for _j, (_xs, _ws, _s, _p, _d, _g) in enumerate(CONVS):

    def _nchw(x, w, s=_s, p=_p, d=_d, g=_g):
        return topi.nn.conv2d(x, w, s, p, d) if g > 1 else topi.nn.conv2d_nchw(x, w, s, p, d)

    def _nchw_ref(x, w, s=_s, p=_p, d=_d, g=_g):
        return conv_nchw(x, w, s, p, d, g)

    case(f"conv2d_nchw_{_j}", [_xs, _ws], ["float32"] * 2, _nchw, _nchw_ref)
    _xn = (_xs[0], _xs[2], _xs[3], _xs[1])
    _wn = (_ws[2], _ws[3], _ws[1], _ws[0])

    def _nhwc(x, w, s=_s, p=_p, d=_d, g=_g):
        if g > 1:
            return topi.nn.group_conv2d_nhwc(x, w, s, p, d, g)
        return topi.nn.conv2d_nhwc(x, w, s, p, d)

    def _nhwc_ref(x, w, s=_s, p=_p, d=_d, g=_g):
        return conv_nchw(x.transpose(0, 3, 1, 2), w.transpose(3, 2, 0, 1), s, p, d, g).transpose(
            0, 2, 3, 1
        )

    case(f"conv2d_nhwc_{_j}", [_xn, _wn], ["float32"] * 2, _nhwc, _nhwc_ref)

case(
    "conv2d_fp16",
    [(1, 3, 6, 5), (2, 3, 3, 3)],
    ["float16"] * 2,
    lambda x, w: topi.nn.conv2d_nchw(x, w, 1, 1, 1),
    lambda x, w: conv_nchw(x, w, 1, 1, 1),
    rtol=2e-2,
)
case(
    "conv2d_int8",
    [(1, 3, 6, 5), (2, 3, 3, 3)],
    ["int8"] * 2,
    lambda x, w: topi.nn.conv2d_nchw(x, w, 1, 1, 1, out_dtype="int32"),
    lambda x, w: conv_nchw(x, w, 1, 1, 1, out_dtype="int32"),
)
case(
    "group_conv2d_nchw",
    [(1, 6, 5, 5), (6, 2, 3, 3)],
    ["float32"] * 2,
    lambda x, w: topi.nn.group_conv2d_nchw(x, w, 1, 1, 1, 3),
    lambda x, w: conv_nchw(x, w, 1, 1, 1, 3),
)

# Shapes at which the automatic schedule tiles the block on the host (session 16): grouped rows
# (row tiles inside a group), tiles of one channel for a depthwise convolution.
case(
    "group_conv2d_nchw_tiled",
    [(1, 8, 9, 16), (8, 2, 3, 3)],
    ["float32"] * 2,
    lambda x, w: topi.nn.group_conv2d_nchw(x, w, 1, 1, 1, 4),
    lambda x, w: conv_nchw(x, w, 1, 1, 1, 4),
)
case(
    "group_conv2d_nchw_strided_dilated",
    [(1, 6, 13, 35), (9, 2, 3, 3)],
    ["float32"] * 2,
    lambda x, w: topi.nn.group_conv2d_nchw(x, w, 2, 2, 2, 3),
    lambda x, w: conv_nchw(x, w, 2, 2, 2, 3),
)


def _to_nchwc(x, bn):
    n, c, h, w = x.shape
    return x.reshape(n, c // bn, bn, h, w).transpose(0, 1, 3, 4, 2)


def _kernel_nchwc(w, ibn, obn):
    o, i, kh, kw = w.shape
    return w.reshape(o // obn, obn, i // ibn, ibn, kh, kw).transpose(0, 2, 4, 5, 3, 1)


for _j, (_g, _ic, _oc, _ibn, _obn) in enumerate(((1, 8, 6, 4, 3), (2, 8, 4, 2, 2))):

    def _nchwc(x, w, g=_g):
        return topi.nn.conv2d_NCHWc(x, w, (1, 2), (1, 1, 0, 2), 1, "NCHW4c", "NCHW3c")

    def _nchwc_ref(x, w, g=_g, ibn=_ibn, obn=_obn):
        n, cc, h, wd, b = x.shape
        xx = x.transpose(0, 1, 4, 2, 3).reshape(n, cc * b, h, wd)
        oc, icc, kh, kw, ib, ob = w.shape
        ww = w.transpose(0, 5, 1, 4, 2, 3).reshape(oc * ob, icc * ib, kh, kw)
        return _to_nchwc(conv_nchw(xx, ww, (1, 2), (1, 1, 0, 2), 1, g), obn)

    case(
        f"conv2d_NCHWc_{_j}",
        [(1, _ic // _ibn, 6, 7, _ibn), (_oc // _obn, _ic // _g // _ibn, 3, 3, _ibn, _obn)],
        ["float32"] * 2,
        _nchwc,
        _nchwc_ref,
    )


def _dw_ref(x, w, s, p, d):
    c, m, kh, kw = w.shape
    full = np.zeros((c * m, 1, kh, kw), w.dtype)
    full[:, 0] = w.reshape(c * m, kh, kw)
    return conv_nchw(np.repeat(x, m, axis=1), full, s, p, d, groups=c * m)


case(
    "depthwise_nchw",
    [(2, 3, 7, 6), (3, 2, 3, 3)],
    ["float32"] * 2,
    lambda x, w: topi.nn.depthwise_conv2d_nchw(x, w, 1, 1, 1),
    lambda x, w: _dw_ref(x, w, 1, 1, 1),
)
case(
    "depthwise_nchw_strided",
    [(1, 4, 9, 8), (4, 1, 3, 2)],
    ["float32"] * 2,
    lambda x, w: topi.nn.depthwise_conv2d_nchw(x, w, 2, "SAME", (1, 2)),
    lambda x, w: _dw_ref(x, w, 2, "SAME", (1, 2)),
)
case(
    "depthwise_nchw_tiled",
    [(1, 5, 7, 16), (5, 2, 3, 3)],
    ["float32"] * 2,
    lambda x, w: topi.nn.depthwise_conv2d_nchw(x, w, 1, 1, 1),
    lambda x, w: _dw_ref(x, w, 1, 1, 1),
)
case(
    "depthwise_nchw_strided_dilated",
    [(1, 3, 11, 37), (3, 1, 3, 3)],
    ["float32"] * 2,
    lambda x, w: topi.nn.depthwise_conv2d_nchw(x, w, 2, 2, 2),
    lambda x, w: _dw_ref(x, w, 2, 2, 2),
)
case(
    "depthwise_nhwc",
    [(1, 7, 6, 3), (3, 3, 3, 2)],
    ["float32"] * 2,
    lambda x, w: topi.nn.depthwise_conv2d_nhwc(x, w, (2, 1), (1, 1), 1),
    lambda x, w: _dw_ref(
        x.transpose(0, 3, 1, 2), w.transpose(2, 3, 0, 1), (2, 1), (1, 1), 1
    ).transpose(0, 2, 3, 1),
)

# ---- pooling ----

POOLS = [  # kernel, stride, dilation, padding, type, ceil_mode, count_include_pad
    ((3, 3), (2, 2), (1, 1), (1, 1, 1, 1), "max", False, True),
    ((3, 3), (2, 2), (1, 1), (1, 1, 1, 1), "avg", True, True),
    ((3, 2), (2, 2), (1, 1), (1, 0, 1, 1), "avg", True, False),
    ((2, 2), (3, 2), (2, 1), (0, 1, 0, 0), "max", True, True),
    ((2, 3), (1, 2), (1, 1), (0, 0, 0, 0), "avg", False, False),
]
for _j, (_k, _s, _d, _p, _t, _c, _ci) in enumerate(POOLS):
    for _layout, _shape, _hw in (
        ("NCHW", (2, 3, 7, 8), (2, 3)),
        ("NHWC", (2, 7, 8, 3), (1, 2)),
        ("NCHW4c", (1, 2, 7, 8, 4), (2, 3)),
    ):

        def _pool(x, k=_k, s=_s, d=_d, p=_p, t=_t, c=_c, ci=_ci, layout=_layout):
            return topi.nn.pool2d(x, k, s, d, p, t, c, layout, ci)

        def _pool_ref(x, k=_k, s=_s, d=_d, p=_p, t=_t, c=_c, ci=_ci, hw=_hw):
            return pool_ref(x, k, s, d, p, t, c, ci, hw).astype(x.dtype)

        case(f"pool{_j}_{_layout}", [_shape], ["float32"], _pool, _pool_ref)
case(
    "pool_fp16",
    [(1, 2, 5, 6)],
    ["float16"],
    lambda x: topi.nn.pool2d(x, 2, 2, 1, (1, 1, 1, 1), "avg", True),
    lambda x: pool_ref(x, (2, 2), (2, 2), (1, 1), (1, 1, 1, 1), "avg", True, True).astype(
        "float16"
    ),
    rtol=2e-3,
)
case(
    "pool_int8_max",
    [(1, 2, 5, 6)],
    ["int8"],
    lambda x: topi.nn.pool2d(x, 3, 2, 1, (1, 1, 1, 1), "max"),
    lambda x: pool_ref(x, (3, 3), (2, 2), (1, 1), (1, 1, 1, 1), "max", False, True).astype("int8"),
)
case(
    "pool_int8_avg",
    [(1, 2, 5, 6)],
    ["int8"],
    lambda x: topi.nn.pool2d(x, 3, 2, 1, (1, 1, 1, 1), "avg", False, "NCHW", False),
    lambda x: np.trunc(
        pool_ref(x, (3, 3), (2, 2), (1, 1), (1, 1, 1, 1), "avg", False, False)
    ).astype("int8"),
)
case(
    "global_avg_int8",
    [(1, 2, 32, 32)],
    ["int8"],
    lambda x: topi.nn.global_pool(x, "avg"),
    lambda x: np.trunc(x.astype("int64").sum(axis=(2, 3), keepdims=True) / 1024).astype("int8"),
)
case(
    "adaptive_avg_uint8",
    [(1, 2, 7, 5)],
    ["uint8"],
    lambda x: topi.nn.adaptive_pool(x, (2, 3), "avg"),
    lambda x: adaptive_ref(x.astype("int64"), (2, 3), "sum_trunc").astype("uint8"),
)
for _t in ("max", "avg"):
    case(
        f"global_{_t}",
        [(2, 3, 5, 7)],
        ["float32"],
        lambda x, t=_t: topi.nn.global_pool(x, t),
        lambda x, t=_t: getattr(np, "max" if t == "max" else "mean")(x, axis=(2, 3), keepdims=True),
    )
    case(
        f"global_{_t}_nchwc",
        [(1, 2, 5, 7, 4)],
        ["float32"],
        lambda x, t=_t: topi.nn.global_pool(x, t, "NCHW4c"),
        lambda x, t=_t: getattr(np, "max" if t == "max" else "mean")(x, axis=(2, 3), keepdims=True),
    )
    case(
        f"global_{_t}_nhwc",
        [(1, 5, 7, 3)],
        ["float32"],
        lambda x, t=_t: topi.nn.global_pool(x, t, "NHWC"),
        lambda x, t=_t: getattr(np, "max" if t == "max" else "mean")(x, axis=(1, 2), keepdims=True),
    )


def adaptive_ref(x, out, t):
    n, c, h, w = x.shape
    res = np.zeros((n, c) + tuple(out), x.dtype)
    for i in range(out[0]):
        for j in range(out[1]):
            ys, ye = i * h // out[0], -(-(i + 1) * h // out[0])
            xs, xe = j * w // out[1], -(-(j + 1) * w // out[1])
            win = x[:, :, ys:ye, xs:xe]
            if t == "max":
                res[:, :, i, j] = win.max(axis=(2, 3))
            elif t == "sum_trunc":  # integer average, truncated
                res[:, :, i, j] = win.sum(axis=(2, 3)) // (win.shape[2] * win.shape[3])
            else:
                res[:, :, i, j] = win.mean(axis=(2, 3))
    return res


for _t in ("max", "avg"):
    case(
        f"adaptive_{_t}",
        [(1, 3, 7, 10)],
        ["float32"],
        lambda x, t=_t: topi.nn.adaptive_pool(x, (3, 4), t),
        lambda x, t=_t: adaptive_ref(x, (3, 4), t),
    )
    case(
        f"adaptive_even_{_t}",
        [(1, 2, 6, 8)],
        ["float32"],
        lambda x, t=_t: topi.nn.adaptive_pool(x, (3, 2), t),
        lambda x, t=_t: adaptive_ref(x, (3, 2), t),
    )



def adaptive_ref_nd(x, out, t, axes):
    """Adaptive pooling of ``axes`` of ``x`` to sizes ``out`` (windows floor(o*n/m) to
    ceil((o+1)*n/m)), in float64 (avg) or the input type (max)."""
    shape = list(x.shape)
    for a, o in zip(axes, out):
        shape[a] = o
    res = np.zeros(shape, "float64" if t == "avg" else x.dtype)
    for pos in np.ndindex(*out):
        sl = [slice(None)] * x.ndim
        at = [slice(None)] * x.ndim
        for a, o, m in zip(axes, pos, out):
            n = x.shape[a]
            sl[a] = slice(o * n // m, -(-(o + 1) * n // m))
            at[a] = o
        win = x[tuple(sl)].astype("float64" if t == "avg" else x.dtype)
        red = win.mean(axis=tuple(axes)) if t == "avg" else win.max(axis=tuple(axes))
        res[tuple(at)] = red
    return res.astype(x.dtype)


for _t in ("max", "avg"):
    case(
        f"adaptive1d_{_t}",
        [(2, 3, 11)],
        ["float32"],
        lambda x, t=_t: topi.nn.adaptive_pool1d(x, [4], t),
        lambda x, t=_t: adaptive_ref_nd(x, (4,), t, (2,)),
    )
    case(
        f"adaptive3d_{_t}",
        [(1, 2, 5, 7, 3)],
        ["float32"],
        lambda x, t=_t: topi.nn.adaptive_pool3d(x, [2, 3, 2], t),
        lambda x, t=_t: adaptive_ref_nd(x, (2, 3, 2), t, (2, 3, 4)),
    )
    case(
        f"adaptive_mixed_{_t}",  # H's windows all of 2 rows, W's of 2 or 3 columns
        [(1, 2, 6, 5)],
        ["float32"],
        lambda x, t=_t: topi.nn.adaptive_pool(x, (3, 2), t),
        lambda x, t=_t: adaptive_ref_nd(x, (3, 2), t, (2, 3)),
    )
    case(
        f"adaptive_nhwc_upsample_{_t}",  # more outputs than inputs along H: windows overlap
        [(1, 3, 5, 2)],
        ["float32"],
        lambda x, t=_t: topi.nn.adaptive_pool(x, (5, 2), t, "NHWC"),
        lambda x, t=_t: adaptive_ref_nd(x, (5, 2), t, (1, 2)),
    )

# ---- softmax, norms, activations, dense ----

for _d in ("float32", "float16"):
    for _axis in (-1, 0, 1):
        case(
            f"softmax_{_d}_{_axis}",
            [(5, 7, 3)],
            [_d],
            lambda x, a=_axis: topi.nn.softmax(x, a),
            lambda x, a=_axis: softmax_ref(x, a).astype(x.dtype),
            rtol=2e-3 if _d == "float16" else None,
        )
        case(
            f"log_softmax_{_d}_{_axis}",
            [(5, 7, 3)],
            [_d],
            lambda x, a=_axis: topi.nn.log_softmax(x, a),
            lambda x, a=_axis: np.log(softmax_ref(x, a)).astype(x.dtype),
            rtol=5e-3 if _d == "float16" else None,
        )


def layer_norm_ref(x, g, b, axes, eps=1e-5):
    xf = x.astype("float64")
    mean = xf.mean(axis=axes, keepdims=True)
    var = xf.var(axis=axes, keepdims=True)
    shape = [x.shape[d] if d in axes else 1 for d in range(x.ndim)]
    y = (xf - mean) / np.sqrt(var + eps) * g.reshape(shape)
    if b is not None:
        y = y + b.reshape(shape)
    return y.astype(x.dtype)


for _d in ("float32", "float16"):
    case(
        f"layer_norm_{_d}",
        [(4, 3, 13), (13,), (13,)],
        [_d] * 3,
        lambda x, g, b: topi.nn.layer_norm(x, g, b, [-1]),
        lambda x, g, b: layer_norm_ref(x, g, b, (2,)),
        rtol=1e-2 if _d == "float16" else 1e-4,
    )
case(
    "layer_norm_2axes",
    [(4, 3, 5), (3, 5)],
    ["float32"] * 2,
    lambda x, g: topi.nn.layer_norm(x, g, None, (1, 2), 1e-3),
    lambda x, g: layer_norm_ref(x, g, None, (1, 2), 1e-3),
    rtol=1e-4,
)


def bn_ref(x, g, b, m, v, axis=1, eps=1e-5):
    shape = [1] * x.ndim
    shape[axis] = -1
    r = lambda a: a.reshape(shape)  # noqa: E731
    return ((x - r(m)) / np.sqrt(r(v) + eps) * r(g) + r(b)).astype(x.dtype)


case(
    "batch_norm",
    [(2, 3, 4, 5), (3,), (3,), (3,), (3,)],
    ["float32"] * 5,
    lambda x, g, b, m, v: topi.nn.batch_norm(x, g, b, m, v)[0],
    lambda x, g, b, m, v: bn_ref(x, g, b, m, np.abs(v)),
    rtol=1e-4,
)
case(
    "batch_norm_train",
    [(2, 5, 3), (3,), (3,), (3,), (3,)],
    ["float32"] * 5,
    lambda x, g, b, m, v: topi.nn.batch_norm(x, g, b, m, v, axis=-1, training=True, momentum=0.2),
    lambda x, g, b, m, v: [
        bn_ref(x, g, b, x.mean(axis=(0, 1)), x.var(axis=(0, 1)), axis=2),
        (0.8 * m + 0.2 * x.mean(axis=(0, 1))).astype("float32"),
        (0.8 * np.abs(v) + 0.2 * x.var(axis=(0, 1))).astype("float32"),
    ],
    rtol=1e-4,
)

case("relu", [(7, 3)], ["float32"], topi.nn.relu, lambda x: np.maximum(x, 0))
case("relu_int8", [(7,)], ["int8"], topi.nn.relu, lambda x: np.maximum(x, 0).astype("int8"))
case(
    "leaky_relu",
    [(7, 3)],
    ["float16"],
    lambda x: topi.nn.leaky_relu(x, 0.1),
    lambda x: np.where(x > 0, x, x * np.float16(0.1)),
    rtol=1e-3,
)
_x = te.placeholder((2, 3, 5), "float32", name="x0")
_sl = te.placeholder((3,), "float32", name="x1")
K.add("prelu", [_x, _sl], topi.nn.prelu(_x, _sl, 1))
CASES["prelu"] = (
    [(2, 3, 5), (3,)],
    ["float32"] * 2,
    lambda x, s: np.where(x > 0, x, x * s[None, :, None]),
    None,
)

case(
    "pad",
    [(3, 5)],
    ["float32"],
    lambda x: topi.nn.pad(x, [1, 0], [2, 3], 1.5),
    lambda x: np.pad(x, ((1, 2), (0, 3)), constant_values=1.5),
)
case(
    "pad_int8",
    [(2, 3, 4)],
    ["int8"],
    lambda x: topi.nn.pad(x, [0, 2, 1]),
    lambda x: np.pad(x, ((0, 0), (2, 2), (1, 1))),
)

for _ta in (False, True):
    for _tb in (False, True):
        _sa = (5, 7) if not _ta else (7, 5)
        _sb = (7, 3) if not _tb else (3, 7)
        case(
            f"matmul_{_ta}_{_tb}",
            [_sa, _sb],
            ["float32"] * 2,
            lambda a, b, ta=_ta, tb=_tb: topi.nn.matmul(a, b, transpose_a=ta, transpose_b=tb),
            lambda a, b, ta=_ta, tb=_tb: (a.T if ta else a) @ (b.T if tb else b),
            rtol=1e-5,
        )
        _ba = (2, 5, 7) if not _ta else (2, 7, 5)
        _bb = (2, 7, 3) if not _tb else (2, 3, 7)
        case(
            f"batch_matmul_{_ta}_{_tb}",
            [_ba, _bb],
            ["float32"] * 2,
            lambda a, b, ta=_ta, tb=_tb: topi.nn.batch_matmul(a, b, transpose_a=ta, transpose_b=tb),
            lambda a, b, ta=_ta, tb=_tb: (
                (a.transpose(0, 2, 1) if ta else a) @ (b.transpose(0, 2, 1) if tb else b)
            ),
            rtol=1e-5,
        )
case(
    "batch_matmul_bcast",
    [(1, 5, 7), (3, 4, 7)],
    ["float32"] * 2,
    topi.nn.batch_matmul,
    lambda a, b: a @ b.transpose(0, 2, 1),
    rtol=1e-5,
)
case(
    "dense",
    [(5, 7), (3, 7), (3,)],
    ["float32"] * 3,
    topi.nn.dense,
    lambda x, w, b: x @ w.T + b,
    rtol=1e-5,
)
case(
    "dense_fp16",
    [(5, 7), (3, 7)],
    ["float16"] * 2,
    topi.nn.dense,
    lambda x, w: (x.astype("float32") @ w.T.astype("float32")).astype("float16"),
    rtol=1e-2,
)
case(
    "dense_int8",
    [(5, 7), (3, 7)],
    ["int8"] * 2,
    lambda x, w: topi.nn.dense(x, w, out_dtype="int32"),
    lambda x, w: x.astype("int32") @ w.T.astype("int32"),
)


# ---- 1-D convolutions, flatten, rms_norm ----


def conv1d_ref(x, w, stride, padding, dilation, groups=1):
    """NCW / OIW through the 2-D reference with a height of 1."""
    left, right = padding
    return conv_nchw(x[:, :, None, :], w[:, :, None, :], (1, stride), (0, left, 0, right),
                     (1, dilation), groups)[:, :, 0, :]  # fmt: skip


case(
    "conv1d_ncw",
    [(2, 3, 13), (4, 3, 3)],
    ["float32"] * 2,
    lambda x, w: topi.nn.conv1d_ncw(x, w, 2, "SAME", 2),
    lambda x, w: conv1d_ref(x, w, 2, (2, 2), 2),
)
case(
    "conv1d_ncw_wide",  # 131 outputs: full vectors and a partial last column tile
    [(2, 3, 133), (4, 3, 3)],
    ["float32"] * 2,
    lambda x, w: topi.nn.conv1d_ncw(x, w),
    lambda x, w: conv1d_ref(x, w, 1, (0, 0), 1),
)
case(
    "conv1d_nwc_group",
    [(1, 11, 4), (3, 2, 6)],
    ["float32"] * 2,
    lambda x, w: topi.nn.group_conv1d_nwc(x, w, 1, (1, 2), 1, 2),
    lambda x, w: conv1d_ref(x.transpose(0, 2, 1), w.transpose(2, 1, 0), 1, (1, 2), 1, 2).transpose(
        0, 2, 1
    ),
)
case(
    "conv1d_int8",
    [(1, 2, 9), (3, 2, 2)],
    ["int8"] * 2,
    lambda x, w: topi.nn.conv1d(x, w, out_dtype="int32"),
    lambda x, w: conv1d_ref(x.astype("int32"), w.astype("int32"), 1, (0, 0), 1),
)
case("flatten", [(2, 3, 5, 7)], ["int8"], topi.nn.flatten, lambda x: x.reshape(2, -1))


def rms_ref(x, w, axes, eps=1e-5):
    xf = x.astype("float64")
    shape = [x.shape[d] if d in axes else 1 for d in range(x.ndim)]
    y = xf / np.sqrt((xf * xf).mean(axis=axes, keepdims=True) + eps) * w.reshape(shape)
    return y.astype(x.dtype)


for _d in ("float32", "float16"):
    case(
        f"rms_norm_{_d}",
        [(3, 5, 7), (7,)],
        [_d] * 2,
        lambda x, w: topi.nn.rms_norm(x, w, [-1]),
        lambda x, w: rms_ref(x, w, (2,)),
        rtol=1e-2 if _d == "float16" else 1e-5,
    )
case(
    "rms_norm_2axes",
    [(3, 5, 7), (3, 5)],
    ["float32"] * 2,
    lambda x, w: topi.nn.rms_norm(x, w, (0, 1), 1e-3),
    lambda x, w: rms_ref(x, w, (0, 1), 1e-3),
    rtol=1e-5,
)
case(
    "batch_matmul_int8",
    [(2, 5, 7), (2, 3, 7)],
    ["int8"] * 2,
    lambda a, b: topi.nn.batch_matmul(a, b, out_dtype="int32"),
    lambda a, b: a.astype("int32") @ b.astype("int32").transpose(0, 2, 1),
)
case(
    "batch_matmul_fp16",
    [(3, 4, 6), (3, 6, 5)],
    ["float16"] * 2,
    lambda a, b: topi.nn.batch_matmul(a, b, transpose_b=False),
    lambda a, b: (a.astype("float32") @ b.astype("float32")).astype("float16"),
    rtol=1e-2,
)


def conv_transpose_ref(x, w, stride, pads, opad, groups=1):
    n, ic, h, wd = x.shape
    _, ocg, kh, kw = w.shape
    icg = ic // groups
    full = np.zeros((n, ocg * groups, (h - 1) * stride[0] + kh + opad[0],
                     (wd - 1) * stride[1] + kw + opad[1]))  # fmt: skip
    for c in range(ic):
        g = c // icg
        for i in range(h):
            for j in range(wd):
                ys, xs = i * stride[0], j * stride[1]
                contribution = x[:, c, i, j][:, None, None, None] * w[c]
                full[:, g * ocg : (g + 1) * ocg, ys : ys + kh, xs : xs + kw] += contribution
    top, left, bottom, right = pads
    return full[:, :, top : full.shape[2] - bottom, left : full.shape[3] - right].astype(x.dtype)


case(
    "conv2d_transpose",
    [(1, 3, 5, 4), (3, 2, 3, 3)],
    ["float32"] * 2,
    lambda x, w: topi.nn.conv2d_transpose_nchw(x, w, (2, 2), (1, 1), "float32", (1, 0)),
    lambda x, w: conv_transpose_ref(x, w, (2, 2), (1, 1, 1, 1), (1, 0)),
)
case(
    "conv2d_transpose_s3x2",  # strides that do not divide the kernel, output padding
    [(2, 3, 4, 5), (3, 2, 5, 3)],
    ["float32"] * 2,
    lambda x, w: topi.nn.conv2d_transpose_nchw(x, w, (3, 2), (2, 0, 1, 1), "float32", (2, 1)),
    lambda x, w: conv_transpose_ref(x, w, (3, 2), (2, 0, 1, 1), (2, 1)),
)
case(
    "conv2d_transpose_4x4_s2",
    [(1, 4, 7, 9), (4, 5, 4, 4)],
    ["float32"] * 2,
    lambda x, w: topi.nn.conv2d_transpose_nchw(x, w, (2, 2), (1, 1), "float32", (0, 0)),
    lambda x, w: conv_transpose_ref(x, w, (2, 2), (1, 1, 1, 1), (0, 0)),
)
case(
    "conv2d_transpose_stride_h_only",
    [(1, 2, 5, 4), (2, 3, 3, 2)],
    ["float32"] * 2,
    lambda x, w: topi.nn.conv2d_transpose_nchw(x, w, (2, 1), (0, 1, 1, 0), "float32", (1, 0)),
    lambda x, w: conv_transpose_ref(x, w, (2, 1), (0, 1, 1, 0), (1, 0)),
)
case(
    "conv2d_transpose_s1",
    [(2, 2, 4, 5), (2, 3, 2, 3)],
    ["float32"] * 2,
    lambda x, w: topi.nn.conv2d_transpose_nchw(x, w, (1, 1), 0, None, (0, 0)),
    lambda x, w: conv_transpose_ref(x, w, (1, 1), (0, 0, 0, 0), (0, 0)),
)
case(
    "group_conv2d_transpose",
    [(1, 4, 3, 3), (4, 1, 3, 3)],
    ["float32"] * 2,
    lambda x, w: topi.nn.group_conv2d_transpose_nchw(x, w, 2, (0, 1, 1, 0), None, (1, 1), 2),
    lambda x, w: conv_transpose_ref(x, w, (2, 2), (0, 1, 1, 0), (1, 1), 2),
)


def group_norm_ref(x, g, b, groups, c_ax, axes, eps=1e-5):
    xf = np.moveaxis(x.astype("float64"), c_ax, 1)
    moved = [1 if a == c_ax else (a if a > c_ax else a + 1) for a in axes]
    shape = xf.shape
    grouped = xf.reshape(shape[0], groups, shape[1] // groups, *shape[2:])
    red = tuple([2] + [a + 1 for a in moved if a != 1])
    mean = grouped.mean(axis=red, keepdims=True)
    var = grouped.var(axis=red, keepdims=True)
    y = ((grouped - mean) / np.sqrt(var + eps)).reshape(shape)
    cshape = [1, -1] + [1] * (len(shape) - 2)
    y = y * g.reshape(cshape) + b.reshape(cshape)
    return np.moveaxis(y, 1, c_ax).astype(x.dtype)


case(
    "group_norm",
    [(2, 6, 3, 5), (6,), (6,)],
    ["float32"] * 3,
    lambda x, g, b: topi.nn.group_norm(x, g, b, 3, 1, [2, 3]),
    lambda x, g, b: group_norm_ref(x, g, b, 3, 1, [2, 3]),
    rtol=1e-4,
)
case(
    "group_norm_nhwc_fp16",
    [(2, 3, 5, 4), (4,), (4,)],
    ["float16"] * 3,
    lambda x, g, b: topi.nn.group_norm(x, g, b, 2, -1, [1, 2]),
    lambda x, g, b: group_norm_ref(x, g, b, 2, 3, [1, 2]),
    rtol=1e-2,
)
case(
    "instance_norm",
    [(2, 3, 7), (3,), (3,)],
    ["float32"] * 3,
    lambda x, g, b: topi.nn.instance_norm(x, g, b, 1, [2]),
    lambda x, g, b: group_norm_ref(x, g, b, 3, 1, [2]),
    rtol=1e-4,
)


@pytest.mark.parametrize("name", list(CASES))
def test_nn(name):
    shapes, dtypes, ref, rtol = CASES[name]
    arrays = [random(s, d, seed=j) for j, (s, d) in enumerate(zip(shapes, dtypes))]
    if name.startswith("batch_norm"):
        arrays[4] = np.abs(arrays[4])
    out = K.run(name, *arrays)
    expected = ref(*arrays)
    outs = out if isinstance(out, list) else [out]
    exps = expected if isinstance(expected, list) else [expected]
    for o, e in zip(outs, exps):
        e = np.asarray(e)
        assert o.shape == e.shape, (o.shape, e.shape)
        assert o.dtype == e.dtype, (o.dtype, e.dtype)
        if o.dtype.kind == "f":
            t = tol(str(o.dtype)) if rtol is None else dict(rtol=rtol, atol=rtol)
            np.testing.assert_allclose(o.astype("float64"), e.astype("float64"), **t)
        else:
            np.testing.assert_array_equal(o, e)


def test_errors():
    x = te.placeholder((1, 3, 5, 5), "float32", name="x")
    w = te.placeholder((2, 4, 3, 3), "float32", name="w")
    with pytest.raises(TesseraValueError, match="input channels"):
        topi.nn.conv2d_nchw(x, w, 1, 1, 1)
    with pytest.raises(TesseraValueError, match="does not fit"):
        topi.nn.conv2d_nchw(x, te.placeholder((2, 3, 7, 7), "float32", name="k"), 1, 0, 1)
    with pytest.raises(TesseraValueError, match="unknown padding"):
        topi.nn.conv2d_nchw(x, te.placeholder((2, 3, 3, 3), "float32", name="k"), 1, "FULL", 1)
    with pytest.raises(TesseraValueError, match="groups"):
        topi.nn.group_conv2d_nchw(x, w, 1, 1, 1, 2)
    with pytest.raises(TesseraValueError, match="pool_type"):
        topi.nn.pool2d(x, 2, 2, 1, 0, "sum")
    with pytest.raises(TesseraValueError, match="splits H or W"):
        topi.nn.pool2d(x, 2, 2, 1, 0, "max", layout="NCHW4h")
    with pytest.raises(TesseraValueError, match="axis 3 is out of range"):
        topi.nn.softmax(te.placeholder((2, 3), "float32", name="s"), axis=3)
    with pytest.raises(TesseraTypeError, match="floating-point"):
        topi.nn.softmax(te.placeholder((2, 3), "int32", name="s"))
    with pytest.raises(TesseraValueError, match="reduction sizes differ"):
        topi.nn.dense(
            te.placeholder((2, 3), "float32", name="a"), te.placeholder((4, 5), "float32", name="b")
        )
    with pytest.raises(TesseraValueError, match="batch sizes"):
        topi.nn.batch_matmul(
            te.placeholder((2, 3, 4), "float32", name="a"),
            te.placeholder((3, 5, 4), "float32", name="b"),
        )
    with pytest.raises(TesseraValueError, match="gamma needs the shape"):
        topi.nn.layer_norm(x, te.placeholder((4,), "float32", name="g"), None, -1)
    with pytest.raises(TesseraValueError, match="one padding per dimension"):
        topi.nn.pad(x, [1, 1])
    with pytest.raises(TesseraValueError, match="do not match 2 groups"):
        topi.nn.group_conv1d_ncw(
            te.placeholder((1, 3, 8), "float32", name="a"),
            te.placeholder((2, 1, 3), "float32", name="b"),
            groups=2,
        )
    with pytest.raises(TesseraValueError, match="weight needs the shape"):
        topi.nn.rms_norm(x, te.placeholder((3,), "float32", name="w"), -1)
    with pytest.raises(TesseraValueError, match="do not divide into 4 groups"):
        topi.nn.group_norm(x, None, None, 4, 1, [2, 3])
    with pytest.raises(TesseraValueError, match="output_size needs 3 entries"):
        topi.nn.adaptive_pool3d(te.placeholder((1, 2, 4, 4, 4), "float32", name="a"), [2, 2], "avg")
    with pytest.raises(TesseraValueError, match="layout 'NCHW' has no D axis"):
        topi.nn.adaptive_pool3d(x, [2, 2, 2], "max", layout="NCHW")
    with pytest.raises(TesseraValueError, match="splits W"):
        topi.nn.adaptive_pool1d(te.placeholder((1, 2, 4, 4), "float32", name="a"), [2], "max",
                                layout="NCW4w")
    with pytest.raises(TesseraValueError, match="output sizes must be positive"):
        topi.nn.adaptive_pool(x, (0, 2), "avg")
    with pytest.raises(TesseraValueError, match="slope needs shape"):
        topi.nn.prelu(x, te.placeholder((5,), "float32", name="s"))
