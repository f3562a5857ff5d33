"""The channel-wise product rule (multi_level_tiling.cc, TileChannelwiseProduct): reductions
C[..., j] += X * Y whose two factors both read C's innermost iterator j (depthwise
convolutions in NCHWc and NHWC) get a register tile of output columns x channel vectors. Results
equal numpy's for odd shapes, strides, dilations, paddings and channel counts, in every dtype
the operators take; the trace has the tile; blocks the rule does not take keep their schedule."""

import numpy as np
import pytest
import tessera as ts
from tessera import te, topi

# A Zen 4 / Skylake-like host (AVX-512, 32 vector registers, two cores) and a 4-lane one.
HOST = {"vector_bits": 512, "cores": 2, "vector_registers": 32}
NARROW = {"vector_bits": 128, "cores": 1, "vector_registers": 16}
RNG = np.random.default_rng(19)


def data(shape, dtype):
    if np.dtype(dtype).kind == "f":
        return RNG.standard_normal(shape).astype(dtype)
    return RNG.integers(-50, 50, shape).astype(dtype)


def steps(sch):
    return [line.split("sch.")[1].split("(")[0] for line in sch.trace.as_python()]


def taps(x, kh, kw, stride, pads, dilation, h_axis):
    """(ky, kx, view of the padded x that the tap reads), H at h_axis and W after it."""
    top, left, bottom, right = pads
    widths = [(0, 0)] * x.ndim
    widths[h_axis], widths[h_axis + 1] = (top, bottom), (left, right)
    xp = np.pad(x, widths)
    (sh, sw), (dh, dw) = stride, dilation
    oh = (xp.shape[h_axis] - (kh - 1) * dh - 1) // sh + 1
    ow = (xp.shape[h_axis + 1] - (kw - 1) * dw - 1) // sw + 1
    for ky in range(kh):
        for kx in range(kw):
            idx = [slice(None)] * x.ndim
            idx[h_axis] = slice(ky * dh, ky * dh + (oh - 1) * sh + 1, sh)
            idx[h_axis + 1] = slice(kx * dw, kx * dw + (ow - 1) * sw + 1, sw)
            yield ky, kx, xp[tuple(idx)]


def acc_dtype(dtype):
    return "float64" if np.dtype(dtype).kind == "f" else "int64"


def nchwc_ref(x, w, stride, pads, dilation):
    n, icc, ih, iw, icb = x.shape
    occ, _, kh, kw, _, ocb = w.shape
    m = occ * ocb // (icc * icb)
    c = np.arange(occ * ocb) // m
    xx = x[:, c // icb, :, :, c % icb].transpose(1, 0, 2, 3)  # [n, oc, h, w]
    xx = xx.reshape(n, occ, ocb, ih, iw).transpose(0, 1, 3, 4, 2).astype(acc_dtype(x.dtype))
    out = 0
    for ky, kx, v in taps(xx, kh, kw, stride, pads, dilation, 2):
        out = out + v * w[:, 0, ky, kx, 0, :].astype(xx.dtype)[None, :, None, None, :]
    return out.astype(x.dtype)


def nhwc_ref(x, w, stride, pads, dilation):
    kh, kw, c, m = w.shape
    xx = np.repeat(x.astype(acc_dtype(x.dtype)), m, axis=3)  # channel c * m + k reads c
    ww = w.reshape(kh, kw, c * m).astype(xx.dtype)
    out = 0
    for ky, kx, v in taps(xx, kh, kw, stride, pads, dilation, 1):
        out = out + v * ww[ky, kx]
    return out.astype(x.dtype)


def nchwc_func(xs, ws, stride, pads, dilation, dtype):
    X = te.placeholder(xs, dtype, name="X")
    W = te.placeholder(ws, dtype, name="W")
    Y = topi.nn.depthwise_conv2d_NCHWc(X, W, stride, pads, dilation, f"NCHW{xs[4]}c",
                                       f"NCHW{ws[5]}c", dtype)
    return te.create_prim_func([X, W, Y])


def nhwc_func(xs, ws, stride, pads, dilation, dtype):
    X = te.placeholder(xs, dtype, name="X")
    W = te.placeholder(ws, dtype, name="W")
    Y = topi.nn.depthwise_conv2d_nhwc(X, W, stride, pads, dilation, out_dtype=dtype)
    return te.create_prim_func([X, W, Y])


def check(func, ref, xs, ws, stride, pads, dilation, dtype, facts):
    x, w = data(xs, dtype), data(ws, dtype)
    f = func(xs, ws, stride, pads, dilation, dtype)
    sch = ts.autoschedule(f, target="c", facts=facts)
    want = ref(x, w, stride, pads, dilation)
    out = np.zeros(want.shape, dtype)
    ts.build(sch.mod, target="c")(x, w, out)
    if np.dtype(dtype).kind == "f":
        tol = 1e-4 if dtype == "float32" else 1e-10
        np.testing.assert_allclose(out, want, rtol=tol, atol=tol)
    else:
        np.testing.assert_array_equal(out, want)
    return sch


NCHWC = [  # data, filter, stride, (top, left, bottom, right), dilation
    ((1, 3, 11, 13, 8), (3, 1, 3, 3, 1, 8), (1, 1), (0, 0, 0, 0), (1, 1)),
    ((1, 2, 12, 17, 8), (2, 1, 3, 3, 1, 8), (2, 2), (1, 1, 1, 1), (1, 1)),
    ((2, 2, 9, 10, 8), (4, 1, 3, 3, 1, 4), (1, 2), (0, 1, 1, 0), (2, 2)),
    ((1, 2, 7, 7, 4), (2, 1, 3, 3, 1, 8), (1, 1), (1, 1, 1, 1), (1, 1)),  # multiplier 2
    ((1, 2, 9, 9, 16), (2, 1, 1, 1, 1, 16), (2, 2), (0, 0, 0, 0), (1, 1)),
    ((1, 1, 5, 37, 8), (1, 1, 3, 5, 1, 8), (1, 1), (0, 2, 0, 2), (1, 1)),  # 37: prime width
]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int16"])
@pytest.mark.parametrize("case", range(len(NCHWC)))
def test_depthwise_nchwc_tiled_and_equal_to_numpy(case, dtype):
    xs, ws = NCHWC[case][:2]
    sch = check(nchwc_func, nchwc_ref, *NCHWC[case], dtype, HOST)
    s = steps(sch)
    # The tile where the input's channel block is the output's (channels read contiguously);
    # a channel multiplier or different blocks read the input's channels as c // m or across
    # blocks, which the rule leaves to the lone-reduction schedule.
    tiled = xs[4] == ws[5] and xs[1] * xs[4] == ws[0] * ws[5]
    assert ("cache_write" in s and "vectorize" in s and "decompose_reduction" in s) == tiled, s


NHWC = [  # data, filter [kh, kw, c, multiplier], stride, pads, dilation
    ((1, 9, 11, 16), (3, 3, 16, 1), (1, 1), (1, 1, 1, 1), (1, 1)),
    ((2, 10, 13, 24), (3, 3, 24, 1), (2, 2), (0, 0, 0, 0), (1, 1)),
    ((1, 8, 9, 6), (3, 3, 6, 2), (1, 1), (1, 0, 1, 2), (2, 1)),  # 12 output channels
]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
@pytest.mark.parametrize("case", range(len(NHWC)))
def test_depthwise_nhwc_tiled_and_equal_to_numpy(case, dtype):
    sch = check(nhwc_func, nhwc_ref, *NHWC[case], dtype, HOST)
    s = steps(sch)
    # Multiplier 1: the tile (a local accumulator written back at the tile). A multiplier reads
    # the input's channel as c // m; other reduction rules may still vectorize that block.
    assert ("cache_write" in s and "vectorize" in s and "decompose_reduction" in s) == (
        NHWC[case][1][3] == 1), s


@pytest.mark.parametrize("dtype", ["float32", "int8"])
def test_narrow_vectors_and_channel_counts_no_vector_divides(dtype):
    # 4-lane vectors; and 7 channels, which no vector of 4 or more lanes divides: the block
    # keeps the lone-reduction schedule, still equal to numpy.
    check(nchwc_func, nchwc_ref, (1, 2, 9, 11, 8), (2, 1, 3, 3, 1, 8), (1, 1), (1, 1, 1, 1),
          (1, 1), dtype, NARROW)
    sch = check(nhwc_func, nhwc_ref, (1, 6, 7, 7), (3, 3, 7, 1), (1, 1), (0, 0, 0, 0), (1, 1),
                dtype, HOST)
    assert "cache_write" not in steps(sch)


def test_rows_sum_of_squares_keeps_the_row_schedule():
    # (A[i, k] - m[i]) * (A[i, k] - m[i]) summed along rows: both factors read the output's
    # iterator i, but not contiguously (i is the row): no channel-wise tile.
    A = te.placeholder((37, 50), "float32", name="A")
    M = te.placeholder((37,), "float32", name="M")
    k = te.reduce_axis((0, 50), name="k")
    S = te.compute((37,), lambda i: te.sum((A[i, k] - M[i]) * (A[i, k] - M[i]), axis=k), name="S")
    sch = ts.autoschedule(te.create_prim_func([A, M, S]), target="c", facts=HOST)
    assert "cache_write" not in steps(sch)
    a, m = data((37, 50), "float32"), data((37,), "float32")
    out = np.zeros(37, "float32")
    ts.build(sch.mod, target="c")(a, m, out)
    np.testing.assert_allclose(out, ((a - m[:, None]) ** 2).sum(1), rtol=1e-4)


def test_column_sum_of_products_keeps_the_reduction_schedule():
    # sum over rows of A[i, j] * B[i, j]: both factors read j contiguously, but no spatial
    # iterator is read by one factor only (no reuse to tile for): the reduction rules keep it.
    A = te.placeholder((40, 72), "float32", name="A")
    B = te.placeholder((40, 72), "float32", name="B")
    sch = ts.autoschedule(te.create_prim_func([A, B, topi.sum(A * B, axis=0)]), target="c",
                          facts=HOST)
    assert "cache_write" not in steps(sch)
    a, b = data((40, 72), "float32"), data((40, 72), "float32")
    out = np.zeros(72, "float32")
    ts.build(sch.mod, target="c")(a, b, out)
    np.testing.assert_allclose(out, (a * b).sum(0), rtol=1e-4, atol=1e-5)


def test_matmul_like_blocks_keep_the_matmul_tiles():
    # depthwise NCHW: the filter is broadcast along the output column (the matmul rule's case)
    X = te.placeholder((1, 8, 10, 34), "float32", name="X")
    W = te.placeholder((8, 1, 3, 3), "float32", name="W")
    f = te.create_prim_func([X, W, topi.nn.depthwise_conv2d_nchw(X, W, 1, 0, 1)])
    s = steps(ts.autoschedule(f, target="c", facts=HOST))
    assert "cache_write" in s and "vectorize" in s
