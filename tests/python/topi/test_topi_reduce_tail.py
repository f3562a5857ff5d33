"""Reductions whose rows are no whole number of vectors, built with no schedule: the automatic
schedule's vector accumulator over the full vectors and the last, partial vector under a mask of
its first lanes (a global pool's 7 x 7 image: three vectors of 16 float32 and one element),
against numpy in every dtype the path takes; odd channel counts and row lengths."""

import numpy as np
import pytest

import tessera as ts
from tessera import te, topi

INTS = ("int8", "int16", "int32", "int64", "uint8")


def data(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if dtype in INTS:
        lo, hi = (0, 40) if dtype == "uint8" else (-40, 41)
        return rng.integers(lo, hi, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def build(shape, dtype, make):
    x = te.placeholder(shape, dtype, name="x")
    y = make(x)
    func = te.create_prim_func([x, y])
    lib = ts.build(func, target="c")
    out = np.empty([int(getattr(s, "value", s)) for s in y.shape], dtype)
    return func, lib, out


def check(got, want, dtype):
    if dtype == "float16":
        np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=1e-2,
                                   atol=2e-2)
    elif dtype == "float32":
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    elif dtype == "float64":
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    else:
        np.testing.assert_array_equal(got, want)


GLOBAL = [(4, 37, 7, 7), (2, 13, 9, 9), (3, 5, 6, 11), (1, 7, 13, 13), (2, 3, 5, 7)]


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64", "int8", "int32", "int16",
                                   "uint8"])
@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("shape", GLOBAL, ids=lambda s: "x".join(map(str, s)))
def test_global_pool_nchw_rows_with_a_partial_vector(shape, kind, dtype):
    _, lib, out = build(shape, dtype, lambda x: topi.nn.global_pool(x, kind, layout="NCHW"))
    a = data(shape, dtype)
    lib(a, out)
    if kind == "max":
        want = a.max(axis=(2, 3), keepdims=True)
    elif dtype in INTS:
        total = a.astype(np.int64).sum(axis=(2, 3), keepdims=True)
        want = np.trunc(total / (shape[2] * shape[3])).astype(dtype)
    else:
        want = a.astype(np.float64).mean(axis=(2, 3), keepdims=True).astype(dtype)
    check(out, want, dtype)


ROWS = [(37, 49), (5, 1001), (3, 67), (9, 130), (2, 33)]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int8", "float16"])
@pytest.mark.parametrize("kind", ["sum", "max", "min"])
@pytest.mark.parametrize("shape", ROWS, ids=lambda s: "x".join(map(str, s)))
def test_row_reductions_of_odd_lengths(shape, kind, dtype):
    op = {"sum": topi.sum, "max": topi.max, "min": topi.min}[kind]
    _, lib, out = build(shape, dtype, lambda x: op(x, axis=1))
    a = data(shape, dtype)
    if dtype == "float16" and kind == "sum":
        a = (a * 0.1).astype(dtype)
    lib(a, out)
    if kind == "sum":
        want = a.sum(axis=1, dtype=dtype) if dtype in INTS else a.astype(np.float64).sum(axis=1)
        want = want.astype(dtype)
    else:
        want = getattr(a, kind)(axis=1)
    if dtype == "float32" and kind == "sum":
        np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-4)
    else:
        check(out, want, dtype)


def test_a_global_pool_row_of_three_vectors_and_one_element_masks_its_last_vector():
    # (4, 1024, 7, 7) float32 with 16-lane vectors: a vector accumulator over 48 elements and
    # the 49th under a mask of one lane, the vector of partial results read and written whole.
    x = te.placeholder((4, 64, 7, 7), "float32", name="x")
    y = topi.nn.global_pool(x, "max", layout="NCHW")
    func = te.create_prim_func([x, y])
    trace = "\n".join(ts.autoschedule(func, target="c", facts={"vector_bits": 512}).trace
                      .as_python())
    assert "tessera.mask_tail" in trace and "rfactor" in trace, trace
    lib = ts.build(ts.autoschedule(func, target="c", facts={"vector_bits": 512}).mod, target="c")
    src = lib.get_source()
    assert "tessera_first_lanes_whole_store" in src, src
    a = data((4, 64, 7, 7), "float32")
    out = np.empty((4, 64, 1, 1), "float32")
    lib(a, out)
    check(out, a.max(axis=(2, 3), keepdims=True), "float32")


@pytest.mark.parametrize("bits", [128, 256])
def test_narrower_hosts_take_the_same_path(bits):
    x = te.placeholder((3, 11, 7, 7), "float32", name="x")
    y = topi.nn.global_pool(x, "avg", layout="NCHW")
    sch = ts.autoschedule(te.create_prim_func([x, y]), target="c", facts={"vector_bits": bits})
    lib = ts.build(sch.mod, target="c")
    a = data((3, 11, 7, 7), "float32")
    out = np.empty((3, 11, 1, 1), "float32")
    lib(a, out)
    check(out, a.astype(np.float64).mean(axis=(2, 3), keepdims=True).astype("float32"), "float32")


def ref_avg_pool(a, k, s):
    """avg pool2d of NCHW, no padding, floor mode, the sum in float64 / int64."""
    n, c, h, w = a.shape
    oh, ow = (h - k) // s + 1, (w - k) // s + 1
    wide = a.astype(np.float64 if a.dtype.kind == "f" else np.int64)
    acc = np.zeros((n, c, oh, ow), wide.dtype)
    for i in range(k):
        for j in range(k):
            acc += wide[:, :, i:i + s * (oh - 1) + 1:s, j:j + s * (ow - 1) + 1:s]
    if a.dtype.kind == "f":
        return (acc / (k * k)).astype(a.dtype)
    return np.trunc(acc / (k * k)).astype(a.dtype)


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64", "int8", "int32", "int16",
                                   "uint8"])
@pytest.mark.parametrize("shape,k,s", [((1, 256, 31, 31), 3, 3), ((2, 7, 13, 11), 3, 3),
                                       ((1, 5, 17, 19), 4, 4), ((3, 3, 11, 23), 3, 4)],
                         ids=lambda v: "x".join(map(str, v)) if isinstance(v, tuple) else str(v))
def test_avg_pool_with_a_scalar_column_divides_each_window_in_place(shape, k, s, dtype):
    x = te.placeholder(shape, dtype, name="x")
    y = topi.nn.pool2d(x, (k, k), (s, s), (1, 1), (0, 0, 0, 0), "avg")
    func = te.create_prim_func([x, y])
    lib = ts.build(func, target="c")
    a = data(shape, dtype)
    out = np.empty([int(getattr(d, "value", d)) for d in y.shape], dtype)
    lib(a, out)
    check(out, ref_avg_pool(a, k, s), dtype)


def test_avg_pool_window_goes_into_the_division_loop():
    # A 3 x 3 window of stride 3 over NCHW: its column takes no vectors, so the window is
    # computed in the division's loop (a second compute_at), no row of sums in a buffer.
    x = te.placeholder((1, 256, 31, 31), "float32", name="x")
    y = topi.nn.pool2d(x, (3, 3), (3, 3), (1, 1), (0, 0, 0, 0), "avg")
    trace = "\n".join(ts.autoschedule(te.create_prim_func([x, y]), target="c").trace.as_python())
    assert trace.count("compute_at(") - trace.count("reverse_compute_at(") == 2, trace
    assert "get_consumers" in trace, trace
    # a stride-2 window keeps its vector column (the division a loop of its own)
    x = te.placeholder((1, 256, 32, 32), "float32", name="x")
    y = topi.nn.pool2d(x, (2, 2), (2, 2), (1, 1), (0, 0, 0, 0), "avg")
    trace = "\n".join(ts.autoschedule(te.create_prim_func([x, y]), target="c").trace.as_python())
    assert "get_consumers" not in trace and "vectorize" in trace, trace


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int8", "float16", "uint8"])
@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("case", [((1, 3, 31, 31, 8), 3, 3, (0, 0, 0, 0), True),
                                  ((2, 2, 13, 11, 16), 3, 2, (1, 1, 1, 1), False),
                                  ((1, 5, 9, 10, 4), 2, 2, (0, 1, 1, 0), True)],
                         ids=lambda c: "x".join(map(str, c[0])) + f"k{c[1]}s{c[2]}")
def test_nchwc_pool_with_padding_inlined_matches_numpy(case, kind, dtype):
    shape, k, s, pad, ceil = case
    block = shape[-1]
    x = te.placeholder(shape, dtype, name="x")
    y = topi.nn.pool2d(x, (k, k), (s, s), (1, 1), pad, kind, ceil_mode=ceil,
                       layout=f"NCHW{block}c")
    lib = ts.build(te.create_prim_func([x, y]), target="c")
    a = data(shape, dtype)
    out = np.empty([int(getattr(d, "value", d)) for d in y.shape], dtype)
    lib(a, out)
    # numpy: NCHWc as NCHW with the block folded into the channels
    n, cc, h, w, b = shape
    nchw = a.transpose(0, 1, 4, 2, 3).reshape(n, cc * b, h, w)
    head, tail = pad[:2], pad[2:]
    outs, widths = [], []
    for i, size in enumerate((h, w)):
        o = (size + head[i] + tail[i] + (s - 1 if ceil else 0) - k) // s + 1
        if ceil and (o - 1) * s >= size + head[i]:
            o -= 1
        outs.append(o)
        widths.append((head[i], max(0, (o - 1) * s + k - size - head[i])))
    wide = nchw.astype(np.float64 if nchw.dtype.kind == "f" else np.int64)
    low = np.finfo(np.float64).min if kind == "max" and nchw.dtype.kind == "f" else (
        np.iinfo(np.int64).min if kind == "max" else 0)
    p = np.pad(wide, [(0, 0), (0, 0), widths[0], widths[1]], constant_values=low)
    acc = None
    for i in range(k):
        for j in range(k):
            v = p[:, :, i:i + s * (outs[0] - 1) + 1:s, j:j + s * (outs[1] - 1) + 1:s]
            acc = v.copy() if acc is None else (np.maximum(acc, v) if kind == "max" else acc + v)
    if kind == "avg":  # count_include_pad=True: the window's points inside the padded input
        count = np.ones(outs, np.int64)
        for i, size in enumerate((h, w)):
            start = np.arange(outs[i]) * s - head[i]
            end = np.minimum(start + k - 1, size + tail[i] - 1)
            cnt = end - start + 1
            count = count * (cnt[:, None] if i == 0 else cnt[None, :])
        acc = acc / count if nchw.dtype.kind == "f" else np.trunc(acc / count)
    want = acc.astype(dtype).reshape(n, cc, b, outs[0], outs[1]).transpose(0, 1, 3, 4, 2)
    check(out, want, dtype)


def test_nchwc_pool_padding_is_inlined_nchw_padding_is_not():
    # NCHW8c: the padding's test does not depend on the channel of a block, one select of a
    # whole vector per window point; NCHW's test depends on the column (the vector's lanes).
    x = te.placeholder((1, 16, 31, 31, 8), "float32", name="x")
    y = topi.nn.pool2d(x, (3, 3), (3, 3), (1, 1), (0, 0, 0, 0), "max", ceil_mode=True,
                       layout="NCHW8c")
    sch = ts.autoschedule(te.create_prim_func([x, y]), target="c")
    assert "compute_inline" in "\n".join(sch.trace.as_python())
    x = te.placeholder((1, 16, 32, 32), "float32", name="x")
    y = topi.nn.pool2d(x, (3, 3), (2, 2), (1, 1), (1, 1, 1, 1), "max")
    sch = ts.autoschedule(te.create_prim_func([x, y]), target="c")
    assert "compute_inline" not in "\n".join(sch.trace.as_python())
