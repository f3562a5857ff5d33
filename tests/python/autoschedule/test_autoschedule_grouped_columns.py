"""Grouped convolutions with the channels innermost (NHWC, NWC): the input is read at channel
``o // (out / groups) * (in / groups) + rc``, so along the output channel (the columns of the
matmul-like block) it is the same across a group. The tiling rule takes such blocks with
column tiles inside a group; every result matches numpy (odd sizes, strides, dilations, padding,
group sizes that are and are not a multiple of the vector, every dtype the convolution takes)."""

import numpy as np
import pytest
import tessera as ts
from tessera import te, topi

RNG = np.random.default_rng(11)
# 4-lane vectors whatever the host (the tiling rule fires at small shapes).
SMALL = {"vector_bits": 128, "vector_registers": 16, "cores": 2, "l2_bytes": 4096}


def data(shape, dtype):
    if dtype.startswith("int"):
        return RNG.integers(-20, 21, shape).astype(dtype)
    return RNG.standard_normal(shape).astype(dtype)


def conv_nwc_ref(x, w, stride, pad, dil, groups, acc):
    """1-D NWC convolution by its definition, WIO filter of in // groups channels."""
    x = np.pad(x.astype(acc), ((0, 0), (pad, pad), (0, 0)))
    n, length, c = x.shape
    k, cg, f = w.shape
    ow = (length - dil * (k - 1) - 1) // stride + 1
    fg = f // groups
    y = np.zeros((n, ow, f), acc)
    for g in range(groups):
        for t in range(k):
            start = t * dil
            patch = x[:, start:start + stride * (ow - 1) + 1:stride, g * cg:(g + 1) * cg]
            y[:, :, g * fg:(g + 1) * fg] += patch @ w[t, :, g * fg:(g + 1) * fg].astype(acc)
    return y


def conv_nhwc_ref(x, w, stride, pad, dil, groups, acc):
    """2-D NHWC convolution by its definition, HWIO filter of in // groups channels."""
    x = np.pad(x.astype(acc), ((0, 0), (pad, pad), (pad, pad), (0, 0)))
    n, h, wd, c = x.shape
    kh, kw, cg, f = w.shape
    oh = (h - dil * (kh - 1) - 1) // stride + 1
    ow = (wd - dil * (kw - 1) - 1) // stride + 1
    fg = f // groups
    y = np.zeros((n, oh, ow, f), acc)
    for g in range(groups):
        for ky in range(kh):
            for kx in range(kw):
                patch = x[:, ky * dil:ky * dil + stride * (oh - 1) + 1:stride,
                          kx * dil:kx * dil + stride * (ow - 1) + 1:stride, g * cg:(g + 1) * cg]
                y[..., g * fg:(g + 1) * fg] += patch @ w[ky, kx, :, g * fg:(g + 1) * fg].astype(acc)
    return y


def build_and_run(func, arrays, out_shape, out_dtype, facts=None):
    if facts is None:
        lib = ts.build(func, target="c")
    else:
        lib = ts.build(ts.autoschedule(func, target="c", facts=facts).mod, target="c")
    out = np.empty(out_shape, out_dtype)
    lib(*arrays, out)
    return out


def check(got, want, dtype):
    if dtype.startswith("int"):
        np.testing.assert_array_equal(got, want.astype(got.dtype))
    else:
        tol = 1e-4 if dtype == "float32" else 1e-10
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def conv1d_func(x_shape, w_shape, dtype, stride, pad, dil, groups, out_dtype=None):
    x = te.placeholder(x_shape, dtype, name="x")
    w = te.placeholder(w_shape, dtype, name="w")
    y = topi.nn.group_conv1d_nwc(x, w, stride, pad, dil, groups, out_dtype=out_dtype)
    return te.create_prim_func([x, w, y]), [int(s) for s in y.shape]


def conv2d_func(x_shape, w_shape, dtype, stride, pad, dil, groups, out_dtype=None):
    x = te.placeholder(x_shape, dtype, name="x")
    w = te.placeholder(w_shape, dtype, name="w")
    y = topi.nn.group_conv2d_nhwc(x, w, stride, pad, dil, groups, out_dtype=out_dtype)
    return te.create_prim_func([x, w, y]), [int(s) for s in y.shape]


# (batch, width, in channels, out channels, groups, kernel, stride, pad, dilation)
CONV1D = [
    (2, 37, 12, 48, 4, 3, 1, 0, 1),  # 12 output channels per group
    (1, 29, 6, 24, 3, 5, 2, 2, 1),  # strided, padded, 8 per group
    (3, 23, 8, 64, 2, 3, 1, 1, 2),  # dilated, 32 per group
    (1, 31, 9, 15, 3, 2, 1, 0, 1),  # 5 per group: no vector divides it
    (2, 19, 16, 96, 2, 3, 3, 1, 1),  # 48 per group
]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
@pytest.mark.parametrize("case", CONV1D, ids=lambda c: "x".join(map(str, c)))
def test_group_conv1d_nwc_matches_numpy(case, dtype):
    n, width, c, f, g, k, s, p, d = case
    func, out_shape = conv1d_func((n, width, c), (k, c // g, f), dtype, s, p, d, g)
    x, w = data((n, width, c), dtype), data((k, c // g, f), dtype)
    want = conv_nwc_ref(x, w, s, p, d, g, "int64" if dtype == "int32" else "float64")
    check(build_and_run(func, [x, w], out_shape, dtype), want, dtype)
    check(build_and_run(func, [x, w], out_shape, dtype, SMALL), want, dtype)


# (batch, height, width, in channels, out channels, groups, kernel, stride, pad, dilation)
CONV2D = [
    (1, 11, 13, 12, 48, 4, 3, 1, 0, 1),
    (2, 9, 15, 6, 16, 2, 3, 2, 1, 1),  # strided, padded, 8 per group
    (1, 13, 10, 8, 64, 2, 3, 1, 2, 2),  # dilated, 32 per group
    (1, 7, 9, 6, 9, 3, 2, 1, 0, 1),  # 3 per group
]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
@pytest.mark.parametrize("case", CONV2D, ids=lambda c: "x".join(map(str, c)))
def test_group_conv2d_nhwc_matches_numpy(case, dtype):
    n, h, wd, c, f, g, k, s, p, d = case
    func, out_shape = conv2d_func((n, h, wd, c), (k, k, c // g, f), dtype, s, p, d, g)
    x, w = data((n, h, wd, c), dtype), data((k, k, c // g, f), dtype)
    want = conv_nhwc_ref(x, w, s, p, d, g, "int64" if dtype == "int32" else "float64")
    check(build_and_run(func, [x, w], out_shape, dtype), want, dtype)
    check(build_and_run(func, [x, w], out_shape, dtype, SMALL), want, dtype)


def test_int8_group_conv2d_nhwc_accumulates_in_int32():
    func, out_shape = conv2d_func((1, 9, 11, 8), (3, 3, 2, 32), "int8", 1, 1, 1, 4, "int32")
    x, w = data((1, 9, 11, 8), "int8"), data((3, 3, 2, 32), "int8")
    want = conv_nhwc_ref(x, w, 1, 1, 1, 4, "int64")
    check(build_and_run(func, [x, w], out_shape, "int32"), want, "int32")


def column_split(sch):
    """The factor of the split of the output channels (the trace's second split: rows, then
    columns)."""
    splits = [line for line in sch.trace.as_python() if "sch.split(" in line]
    return int(splits[1].split("factors=[None, ")[1].split("]")[0])


@pytest.mark.parametrize("per_group", [8, 16, 12])
def test_grouped_columns_are_tiled_inside_a_group(per_group):
    func, _ = conv2d_func((1, 10, 10, 8), (3, 3, 2, 4 * per_group), "float32", 1, 0, 1, 4)
    sch = ts.autoschedule(func, target="c", facts=SMALL)
    lines = sch.trace.as_python()
    text = "\n".join(lines)
    # The tiling rule took the block (a register tile written back from a local cache, its
    # columns vectorized) and the column tile divides the group.
    assert any("cache_write" in line for line in lines), text
    assert any("vectorize" in line for line in lines), text
    assert per_group % column_split(sch) == 0, text
    # The input is broadcast across a tile's columns: no gather in the generated C.
    src = ts.build(sch.mod, target="c").get_source()
    assert "tessera_broadcast" in src


def test_grouped_columns_at_the_host_vector_width():
    # 16 output channels per group: a whole AVX-512 vector of float32 (or two AVX2 ones).
    func, _ = conv1d_func((2, 40, 8), (3, 2, 64), "float32", 1, 0, 1, 4)
    sch = ts.autoschedule(func, target="c")
    text = "\n".join(sch.trace.as_python())
    assert "cache_write" in text and "rfactor" not in text, text
    assert 16 % column_split(sch) == 0, text
