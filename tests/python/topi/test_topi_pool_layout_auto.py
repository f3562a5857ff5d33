"""Pools, global pools and layout changes built with no schedule (the automatic schedule's
window and blocked-layout paths), against numpy: odd sizes, padding, ceil_mode, NCHW and
NCHWc layouts, float32 / float16 / int8, and every layout pair of AKG's CPU cases."""

import numpy as np
import pytest

import tessera as ts
from tessera import te, topi


def build(shape, dtype, make):
    x = te.placeholder(shape, dtype, name="x")
    y = make(x)
    func = te.create_prim_func([x, y])
    lib = ts.build(func, target="c")
    out = np.empty([int(getattr(s, "value", s)) for s in y.shape], dtype)
    return func, lib, out


def data(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == "int8":
        return rng.integers(-100, 101, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def ref_pool(a, k, s, pad, kind, ceil, axes=(2, 3)):
    """topi.nn.pool2d's semantics (dilation 1, count_include_pad) in numpy."""
    head, tail = pad[:2], pad[2:]
    outs, widths = [], []
    for i, ax in enumerate(axes):
        n = a.shape[ax]
        off = s - 1 if ceil else 0
        o = (n + head[i] + tail[i] + off - k) // s + 1
        if ceil and (o - 1) * s >= n + head[i]:
            o -= 1
        outs.append(o)
        widths.append((head[i], max(0, (o - 1) * s + k - n - head[i])))
    if a.dtype.kind == "f":
        low = np.finfo(a.dtype).min
    else:
        low = np.iinfo(a.dtype).min
    padw = [(0, 0)] * a.ndim
    for i, ax in enumerate(axes):
        padw[ax] = widths[i]
    wide = a.astype(np.float64) if kind == "avg" and a.dtype.kind == "f" else a
    if kind == "avg" and a.dtype.kind != "f":
        wide = a.astype(np.int64)
    p = np.pad(wide, padw, constant_values=low if kind == "max" else 0)
    acc = None
    for i in range(k):
        for j in range(k):
            sl = [slice(None)] * a.ndim
            sl[axes[0]] = slice(i, i + s * (outs[0] - 1) + 1, s)
            sl[axes[1]] = slice(j, j + s * (outs[1] - 1) + 1, s)
            v = p[tuple(sl)]
            acc = v.copy() if acc is None else (np.maximum(acc, v) if kind == "max" else acc + v)
    if kind == "max":
        return acc
    count = np.ones(outs, np.int64)
    for i, ax in enumerate(axes):
        start = np.arange(outs[i]) * s - head[i]
        end = np.minimum(start + k - 1, a.shape[ax] + tail[i] - 1)
        n = end - start + 1
        count = count * (n[:, None] if i == 0 else n[None, :])
    shape = [1] * a.ndim
    shape[axes[0]], shape[axes[1]] = outs
    count = count.reshape(shape)
    if a.dtype.kind == "f":
        return (acc / count).astype(a.dtype)
    return np.trunc(acc / count).astype(a.dtype)


def check(got, want, dtype):
    if dtype == "float16":
        np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=1e-2,
                                   atol=2e-2)
    elif dtype == "float32":
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    else:
        np.testing.assert_array_equal(got, want)


POOLS = [
    # shape, kernel, stride, padding, ceil_mode
    ((1, 5, 13, 11), 3, 3, (0, 0, 0, 0), False),
    ((2, 3, 12, 10), 2, 2, (0, 0, 0, 0), False),
    ((1, 4, 13, 11), 3, 2, (1, 1, 1, 1), False),
    ((1, 5, 13, 11), 3, 3, (0, 0, 0, 0), True),
    ((1, 3, 9, 17), 3, 1, (1, 0, 2, 1), True),
]


@pytest.mark.parametrize("dtype", ["float32", "float16", "int8"])
@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("case", POOLS, ids=lambda c: "x".join(map(str, c[0])) + f"k{c[1]}s{c[2]}")
def test_pool2d_nchw_matches_numpy(case, kind, dtype):
    shape, k, s, pad, ceil = case
    _, lib, out = build(shape, dtype,
                        lambda x: topi.nn.pool2d(x, (k, k), (s, s), (1, 1), pad, kind, ceil_mode=ceil))
    a = data(shape, dtype)
    lib(a, out)
    check(out, ref_pool(a, k, s, pad, kind, ceil), dtype)


@pytest.mark.parametrize("dtype", ["float32", "float16", "int8"])
@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("block", [8, 16, 4])
@pytest.mark.parametrize("case", POOLS, ids=lambda c: "x".join(map(str, c[0])) + f"k{c[1]}s{c[2]}")
def test_pool2d_nchwc_matches_numpy(case, block, kind, dtype):
    shape, k, s, pad, ceil = case
    shape = shape + (block,)
    _, lib, out = build(shape, dtype, lambda x: topi.nn.pool2d(
        x, (k, k), (s, s), (1, 1), pad, kind, ceil_mode=ceil, layout=f"NCHW{block}c"))
    a = data(shape, dtype)
    lib(a, out)
    check(out, ref_pool(a, k, s, pad, kind, ceil), dtype)


@pytest.mark.parametrize("dtype", ["float32", "float16", "int8"])
@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("shape,layout", [((2, 5, 7, 7), "NCHW"), ((3, 9, 5, 3), "NCHW"),
                                          ((2, 3, 7, 5, 8), "NCHW8c"), ((1, 2, 3, 7, 16), "NCHW16c")])
def test_global_pool_matches_numpy(shape, layout, kind, dtype):
    _, lib, out = build(shape, dtype, lambda x: topi.nn.global_pool(x, kind, layout=layout))
    a = data(shape, dtype)
    lib(a, out)
    if kind == "max":
        want = a.max(axis=(2, 3), keepdims=True)
    elif dtype == "int8":
        total = a.astype(np.int64).sum(axis=(2, 3), keepdims=True)
        want = np.trunc(total / (shape[2] * shape[3])).astype(dtype)
    else:
        want = a.astype(np.float64).mean(axis=(2, 3), keepdims=True).astype(dtype)
    check(out, want, dtype)


def test_nchwc_pool_vectorizes_its_channels_and_a_short_window_keeps_a_register():
    # NCHW8c's 8 channels of a block are contiguous in the input and the output: the window's
    # loops go outside them, which are one vector; an NCHW pool's window leaves its init
    # outside its loops (decompose_reduction) instead of a test of the first step.
    x = te.placeholder((1, 16, 31, 31, 8), "float32", name="x")
    y = topi.nn.pool2d(x, (3, 3), (3, 3), (1, 1), (0, 0, 0, 0), "max", layout="NCHW8c")
    trace = "\n".join(ts.autoschedule(te.create_prim_func([x, y]), target="c").trace.as_python())
    assert "vectorize" in trace and "decompose_reduction" in trace and "reorder" in trace, trace
    x = te.placeholder((1, 256, 31, 31), "float32", name="x")
    y = topi.nn.pool2d(x, (3, 3), (3, 3), (1, 1), (0, 0, 0, 0), "max")
    trace = "\n".join(ts.autoschedule(te.create_prim_func([x, y]), target="c").trace.as_python())
    assert "decompose_reduction" in trace, trace


def np_layout(a, src, dst):
    """numpy's layout change between the layouts of AKG's CPU cases."""
    if (src, dst) == ("NCHW8c", "NCHW"):
        n, c, h, w, b = a.shape
        return np.ascontiguousarray(a.transpose(0, 1, 4, 2, 3)).reshape(n, c * b, h, w)
    if (src, dst) == ("NCHW8c", "NCHW4c"):
        n, c, h, w, b = a.shape
        return np.ascontiguousarray(
            a.reshape(n, c, h, w, 2, 4).transpose(0, 1, 4, 2, 3, 5)).reshape(n, c * 2, h, w, 4)
    if (src, dst) == ("NCHW8c", "NHWC"):
        n, c, h, w, b = a.shape
        return np.ascontiguousarray(a.transpose(0, 2, 3, 1, 4)).reshape(n, h, w, c * b)
    if (src, dst) == ("OHWI", "OIHW"):
        return np.ascontiguousarray(a.transpose(0, 3, 1, 2))
    if (src, dst) == ("OHWI", "OIHW8i4o"):
        o, h, w, i = a.shape
        return np.ascontiguousarray(
            a.reshape(o // 4, 4, h, w, i // 8, 8).transpose(0, 4, 2, 3, 5, 1))
    if (src, dst) == ("OIHW8i8o", "OHWI"):
        o, i, h, w, bi, bo = a.shape
        return np.ascontiguousarray(a.transpose(0, 5, 2, 3, 1, 4)).reshape(o * bo, h, w, i * bi)
    if (src, dst) == ("NCHW", "NHWC"):
        return np.ascontiguousarray(a.transpose(0, 2, 3, 1))
    if (src, dst) == ("NCHW", "NCHW8c"):
        n, c, h, w = a.shape
        return np.ascontiguousarray(a.reshape(n, c // 8, 8, h, w).transpose(0, 1, 3, 4, 2))
    raise AssertionError((src, dst))


LAYOUTS = [
    ((2, 3, 5, 7, 8), "NCHW8c", "NCHW"),
    ((1, 4, 3, 33, 8), "NCHW8c", "NCHW"),
    ((2, 3, 5, 7, 8), "NCHW8c", "NCHW4c"),
    ((1, 2, 3, 29, 8), "NCHW8c", "NCHW4c"),
    ((3, 2, 5, 7, 8), "NCHW8c", "NHWC"),
    ((12, 8, 3, 5), "OHWI", "OIHW"),
    ((8, 3, 5, 16), "OHWI", "OIHW8i4o"),
    ((2, 3, 3, 5, 8, 8), "OIHW8i8o", "OHWI"),
    ((3, 5, 7, 9), "NCHW", "NHWC"),
    ((2, 16, 5, 7), "NCHW", "NCHW8c"),
]


@pytest.mark.parametrize("dtype", ["float32", "float16", "int8"])
@pytest.mark.parametrize("shape,src,dst", LAYOUTS, ids=lambda v: str(v))
def test_layout_transform_matches_numpy(shape, src, dst, dtype):
    _, lib, out = build(shape, dtype, lambda x: topi.layout_transform(x, src, dst))
    a = data(shape, dtype)
    lib(a, out)
    np.testing.assert_array_equal(out, np_layout(a, src, dst))


def test_a_blocked_layout_tiles_the_block_and_vectorizes_the_inputs_contiguous_loop():
    # NCHW8c to NCHW: the channel loop is split by the block (8); its sub-axis (the input's
    # contiguous one) goes innermost, in vectors, inside the output's row of w; the loops
    # outside the tile are fused and parallel.
    x = te.placeholder((4, 32, 56, 56, 8), "float32", name="x")
    y = topi.layout_transform(x, "NCHW8c", "NCHW")
    sch = ts.autoschedule(te.create_prim_func([x, y]), target="c")
    trace = "\n".join(sch.trace.as_python())
    assert "factors=[None, 8]" in trace and "reorder" in trace and "vectorize" in trace, trace
    # NCHW8c to NCHW4c: the input channel c * 4 + b divided by 8, split by 2; the 4 channels of
    # the output's block one vector
    x = te.placeholder((1, 4, 5, 7, 8), "float32", name="x")
    y = topi.layout_transform(x, "NCHW8c", "NCHW4c")
    trace = "\n".join(ts.autoschedule(te.create_prim_func([x, y]), target="c").trace.as_python())
    assert "factors=[None, 2]" in trace and "vectorize" in trace, trace
    # OHWI to OIHW8i4o (no division, a run of 8 input channels): the 8 channels innermost
    x = te.placeholder((128, 7, 7, 32), "float32", name="x")
    y = topi.layout_transform(x, "OHWI", "OIHW8i4o")
    trace = "\n".join(ts.autoschedule(te.create_prim_func([x, y]), target="c").trace.as_python())
    assert "reorder" in trace and "vectorize" in trace, trace


def test_a_reshape_keeps_the_copy_rules():
    # read and written in the same order: not a blocked layout change
    x = te.placeholder((64, 48), "float32", name="x")
    y = topi.reshape(x, (32, 96))
    trace = "\n".join(ts.autoschedule(te.create_prim_func([x, y]), target="c").trace.as_python())
    assert "reorder" not in trace, trace


# NCHW pools whose output columns take no vectors (a stride of 3 or more, or widths that the
# loads do not step 1 or 2 along): each column's window is unrolled whole (up to 16 points) and
# accumulated in a local of its own, the column loop outside it; enough rows that the column
# stays in the row (KeepWindowColumn). Odd sizes, padding, ceil_mode, every dtype the path takes.
SCALAR_WINDOWS = [
    # shape, kernel, stride, padding, ceil_mode
    ((1, 37, 31, 31), 3, 3, (0, 0, 0, 0), False),
    ((2, 13, 23, 29), 3, 3, (1, 0, 1, 2), False),
    ((1, 19, 25, 17), 3, 3, (0, 0, 0, 0), True),
    ((3, 7, 22, 26), 4, 4, (0, 1, 2, 0), False),
    ((1, 11, 19, 21), 2, 3, (0, 0, 0, 0), True),
    ((2, 9, 27, 35), 5, 3, (2, 2, 2, 2), False),
]


@pytest.mark.parametrize("dtype", ["float32", "float16", "int8"])
@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("case", SCALAR_WINDOWS,
                         ids=lambda c: "x".join(map(str, c[0])) + f"k{c[1]}s{c[2]}p{sum(c[3])}"
                         + ("ceil" if c[4] else ""))
def test_pool2d_scalar_column_windows_match_numpy(case, kind, dtype):
    shape, k, s, pad, ceil = case
    _, lib, out = build(shape, dtype,
                        lambda x: topi.nn.pool2d(x, (k, k), (s, s), (1, 1), pad, kind, ceil_mode=ceil))
    a = data(shape, dtype, seed=sum(shape))
    lib(a, out)
    check(out, ref_pool(a, k, s, pad, kind, ceil), dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int16", "uint8"])
@pytest.mark.parametrize("kind", ["max", "avg"])
def test_pool2d_scalar_column_windows_other_dtypes(kind, dtype):
    shape, k, s, pad = (2, 9, 20, 23), 3, 3, (1, 1, 0, 0)
    _, lib, out = build(shape, dtype,
                        lambda x: topi.nn.pool2d(x, (k, k), (s, s), (1, 1), pad, kind))
    rng = np.random.default_rng(7)
    if dtype.startswith(("int", "uint")):
        info = np.iinfo(dtype)
        a = rng.integers(max(info.min, -1000), min(info.max, 1000) + 1, shape).astype(dtype)
    else:
        a = rng.standard_normal(shape).astype(dtype)
    lib(a, out)
    want = ref_pool(a, k, s, pad, kind, False)
    if dtype.startswith(("int", "uint")):
        np.testing.assert_array_equal(out, want)
    else:
        np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)


def test_a_scalar_column_keeps_its_window_inside_unrolled_with_a_local_result():
    # AKG's 3 x 3 pools of stride 3: the output columns step 3 elements of the input, no
    # vectors; the column loop stays outside the window, the 9 points are unrolled, the result
    # is accumulated in a local (cache_write) and the parallel loop states its range although
    # its body allocates that local.
    for kind in ("max", "avg"):
        x = te.placeholder((1, 256, 31, 31), "float32", name="x")
        y = topi.nn.pool2d(x, (3, 3), (3, 3), (1, 1), (0, 0, 0, 0), kind)
        func = te.create_prim_func([x, y])
        trace = "\n".join(ts.autoschedule(func, target="c").trace.as_python())
        assert trace.count("sch.unroll(") == 2, trace
        assert "cache_write" in trace and "reverse_compute_at" in trace, trace
        assert "vectorize" not in trace and "reorder" not in trace, trace
        src = ts.build(func, target="c").get_source()
        assert "__builtin_unreachable" in src and "_local[1]" in src, src


def test_a_stride_two_column_still_takes_vectors():
    # a 2 x 2 pool of stride 2: the loads step 2 along the columns, which stay vectors inside
    # the window's loops (no local result)
    x = te.placeholder((1, 64, 32, 32), "float32", name="x")
    y = topi.nn.pool2d(x, (2, 2), (2, 2), (1, 1), (0, 0, 0, 0), "max")
    trace = "\n".join(ts.autoschedule(te.create_prim_func([x, y]), target="c").trace.as_python())
    assert "vectorize" in trace and "cache_write" not in trace, trace
