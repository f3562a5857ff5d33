"""Transposed convolutions built with no schedule, against numpy's scatter of each input pixel
times the kernel: the stride-phase decomposition (phases numbered by kernel residue, the
kernel read in place where the stride divides it, copied with zero taps where it does not) on
odd shapes, strides 1-3, kernels 1-5, asymmetric padding, output padding, groups, and the
dtypes the operator takes (float32, float64, int8 data accumulated in int32)."""

import numpy as np
import pytest

import tessera as ts
from tessera import te, topi


def conv_transpose_ref(x, w, stride, pads, opad, groups=1, acc="float64"):
    n, ic, h, wd = x.shape
    _, ocg, kh, kw = w.shape
    icg = ic // groups
    full = np.zeros((n, ocg * groups, (h - 1) * stride[0] + kh + opad[0],
                     (wd - 1) * stride[1] + kw + opad[1]), acc)  # fmt: skip
    xa, wa = x.astype(acc), w.astype(acc)
    for c in range(ic):
        g = c // icg
        for i in range(h):
            for j in range(wd):
                ys, xs = i * stride[0], j * stride[1]
                full[:, g * ocg:(g + 1) * ocg, ys:ys + kh, xs:xs + kw] += (
                    xa[:, c, i, j][:, None, None, None] * wa[c])
    top, left, bottom, right = pads
    return full[:, :, top:full.shape[2] - bottom, left:full.shape[3] - right]


def run(x, w, stride, pads, opad, groups, out_dtype):
    X = te.placeholder(x.shape, str(x.dtype), name="X")
    W = te.placeholder(w.shape, str(w.dtype), name="W")
    Y = topi.nn.group_conv2d_transpose_nchw(X, W, stride, pads, out_dtype, opad, groups)
    lib = ts.build(te.create_prim_func([X, W, Y]), target="c")
    out = np.zeros([int(getattr(d, "value", d)) for d in Y.shape], out_dtype)
    lib(x, w, out)
    return out


def data(shape, dtype, rng):
    if dtype.startswith("int"):
        return rng.integers(-8, 8, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


GEOMETRY = [
    # (in channels, out channels per group, h, w, kernel, stride, pads, output padding, groups)
    (5, 3, 7, 9, (4, 4), (2, 2), (1, 1, 1, 1), (0, 0), 1),
    (4, 6, 5, 11, (4, 4), (2, 2), (1, 1, 1, 1), (1, 1), 1),  # output padding: odd output
    (3, 5, 6, 7, (3, 3), (2, 2), (1, 1, 1, 1), (1, 0), 1),  # zero taps (3 = 2 + 1)
    (6, 2, 5, 5, (5, 5), (3, 3), (2, 1, 0, 2), (2, 1), 3),  # stride 3, groups
    (4, 3, 4, 6, (6, 3), (3, 1), (0, 1, 2, 0), (2, 0), 2),
    (7, 3, 6, 5, (2, 2), (2, 2), (0, 0, 0, 0), (0, 0), 1),  # a 1x1-tap phase
    (3, 4, 9, 8, (1, 3), (1, 2), (0, 0, 0, 1), (0, 1), 1),
    (8, 4, 3, 4, (4, 2), (2, 2), (3, 1, 2, 0), (1, 0), 4),
    (2, 3, 5, 6, (3, 3), (1, 1), (1, 1, 1, 1), (0, 0), 1),  # stride 1
    (32, 17, 14, 14, (4, 4), (2, 2), (1, 1, 1, 1), (0, 0), 1),  # narrow rows, masked tile
]


@pytest.mark.parametrize("geom", GEOMETRY, ids=[str(i) for i in range(len(GEOMETRY))])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int8"])
def test_conv2d_transpose_matches_numpy(geom, dtype):
    ic, ocg, h, wd, (kh, kw), stride, pads, opad, groups = geom
    rng = np.random.default_rng(ic * 100 + h)
    x = data((1, ic, h, wd), dtype, rng)
    w = data((ic, ocg, kh, kw), dtype, rng)
    out_dtype = "int32" if dtype == "int8" else dtype
    got = run(x, w, stride, pads, opad, groups, out_dtype)
    want = conv_transpose_ref(x, w, stride, pads, opad, groups)
    if out_dtype == "int32":
        np.testing.assert_array_equal(got, want.astype("int64"))
    else:
        tol = 1e-4 if dtype == "float32" else 1e-10
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * 10)


def test_batch_of_two_with_every_phase_offset():
    # Padding 0..3 on a 4x4 kernel at stride 2 moves each phase's first input row (offset -1,
    # 0 or +1 input rows): every combination against numpy, batch 2.
    rng = np.random.default_rng(7)
    x = data((2, 3, 5, 6), "float32", rng)
    w = data((3, 4, 4, 4), "float32", rng)
    for top, left in [(0, 3), (1, 2), (2, 1), (3, 0)]:
        pads = (top, left, 3 - top, 3 - left)
        got = run(x, w, (2, 2), pads, (1, 1), 1, "float32")
        want = conv_transpose_ref(x, w, (2, 2), pads, (1, 1))
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
