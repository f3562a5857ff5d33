"""meta_schedule.testing.te_workload: the convolution workloads compute what they claim (numpy
references on small shapes, built for the C target)."""

import numpy as np

import tessera
from tessera import te
from tessera.compat.meta_schedule.testing import te_workload


def _run(tensors, inputs):
    func = te.create_prim_func(list(tensors))
    out = tessera.nd.empty(tuple(int(d) for d in tensors[-1].shape), "float32")
    tessera.build(func, target="c")(*[tessera.nd.array(x) for x in inputs], out)
    return out.numpy()


def test_conv2d_transpose_scatters_each_input_through_the_kernel():
    n, h, w, ci, co, k, stride, pad = 1, 3, 4, 2, 3, 4, 2, 1
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, h, w, ci)).astype("float32")
    wt = rng.standard_normal((k, k, ci, co)).astype("float32")
    got = _run(te_workload.conv2d_transpose_nhwc(n, h, w, ci, co, k, stride, pad), [x, wt])
    # input pixel (ih, iw) adds x * w[kh, kw] at output (ih * stride - pad + kh, ...)
    full = np.zeros((n, (h - 1) * stride + k, (w - 1) * stride + k, co), "float32")
    for ih in range(h):
        for iw in range(w):
            full[:, ih * stride:ih * stride + k, iw * stride:iw * stride + k, :] += np.einsum(
                "nc,hwco->nhwo", x[:, ih, iw, :], wt)
    want = full[:, pad:pad + got.shape[1], pad:pad + got.shape[2], :]
    assert got.shape == (n, (h - 1) * stride - 2 * pad + k, (w - 1) * stride - 2 * pad + k, co)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_capsule_convolution_multiplies_capsule_matrices():
    n, h, w, ci, co, k, stride, pad, cap = 1, 5, 4, 2, 3, 3, 2, 1, 2
    rng = np.random.default_rng(1)
    x = rng.standard_normal((n, h, w, cap, cap, ci)).astype("float32")
    wt = rng.standard_normal((k, k, cap, cap, ci, co)).astype("float32")
    got = _run(te_workload.conv2d_capsule_nhwijc(n, h, w, ci, co, k, stride, pad, cap), [x, wt])
    xp = np.pad(x, [(0, 0), (pad, pad), (pad, pad), (0, 0), (0, 0), (0, 0)])
    oh, ow = (h + 2 * pad - k) // stride + 1, (w + 2 * pad - k) // stride + 1
    want = np.zeros((n, oh, ow, cap, cap, co), "float32")
    for y in range(oh):
        for z in range(ow):
            window = xp[:, y * stride:y * stride + k, z * stride:z * stride + k]
            want[:, y, z] = np.einsum("nhwikc,hwkjco->nijo", window, wt)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_conv1d_and_depthwise_conv2d_match_numpy():
    rng = np.random.default_rng(2)
    # conv1d: length 7, stride 2, padding 1, dilation 2, 2 groups
    x = rng.standard_normal((1, 7, 4)).astype("float32")
    wt = rng.standard_normal((3, 2, 6)).astype("float32")
    got = _run(te_workload.conv1d_nlc(1, 7, 4, 6, 3, 2, 1, 2, 2), [x, wt])
    xp = np.pad(x, [(0, 0), (1, 1), (0, 0)])
    out_len = (7 + 2 - 2 * 2 - 1) // 2 + 1
    want = np.zeros((1, out_len, 6), "float32")
    for pos in range(out_len):
        for co in range(6):
            g = co // 3
            taps = xp[0, [pos * 2 + r * 2 for r in range(3)], g * 2:g * 2 + 2]  # (3, 2)
            want[0, pos, co] = np.sum(taps * wt[:, :, co])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    # depthwise: each channel convolved with its own 3 x 3 filter, stride 2, padding 1
    x = rng.standard_normal((1, 5, 6, 3)).astype("float32")
    wt = rng.standard_normal((1, 3, 3, 3)).astype("float32")
    got = _run(te_workload.depthwise_conv2d_nhwc(1, 5, 6, 3, 3, 2, 1), [x, wt])
    xp = np.pad(x, [(0, 0), (1, 1), (1, 1), (0, 0)])
    want = np.zeros((1, 3, 3, 3), "float32")
    for y in range(3):
        for z in range(3):
            want[0, y, z] = np.einsum("hwc,hwc->c", xp[0, y * 2:y * 2 + 3, z * 2:z * 2 + 3], wt[0])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
