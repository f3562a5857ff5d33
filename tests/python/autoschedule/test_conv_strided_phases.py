"""Strided convolutions with no schedule: the input, read every s-th element along the output's
vector axis, goes through a copy in s phases of its innermost axis ([..., w] -> [..., w % s,
w // s], zero padded where s does not divide w), so that the tile's vectors are contiguous loads
instead of gathers. float64 narrow-row tiles load and store their masked vectors with one
instruction."""

import re

import numpy as np
import pytest
import tessera as ts
from tessera import te, tir, topi

SMALL = {"vector_bits": 128, "vector_registers": 16, "cores": 2, "l2_bytes": 4096}


def conv_ref(x, w, s, pad=0, groups=1):
    x = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    n, c, h, wd = x.shape
    f, cg, kh, kw = w.shape
    oh, ow = (h - kh) // s + 1, (wd - kw) // s + 1
    out = np.zeros((n, f, oh, ow), np.float64)
    fg = f // groups
    for g in range(groups):
        for ky in range(kh):
            for kx in range(kw):
                patch = x[:, g * cg:(g + 1) * cg, ky:ky + s * (oh - 1) + 1:s, kx:kx + s * (ow - 1) + 1:s]
                out[:, g * fg:(g + 1) * fg] += np.einsum(
                    "nchw,fc->nfhw", patch, w[g * fg:(g + 1) * fg, :, ky, kx].astype(np.float64))
    return out


def conv_func(c, f, h, wd, k, s, dtype="float32", pad=0, out_dtype=None, groups=1):
    X = te.placeholder((1, c, h, wd), name="X", dtype=dtype)
    W = te.placeholder((f, c // groups, k, k), name="W", dtype=dtype)
    if groups == 1:
        Y = topi.nn.conv2d_nchw(X, W, s, pad, 1, out_dtype=out_dtype)
    else:
        Y = topi.nn.group_conv2d_nchw(X, W, s, pad, 1, groups, out_dtype=out_dtype)
    return te.create_prim_func([X, W, Y]), [int(d) for d in Y.shape]


def inputs(c, f, h, wd, k, dtype, groups=1, seed=0):
    rng = np.random.default_rng(seed)
    if dtype.startswith("int"):
        return (rng.integers(-8, 8, (1, c, h, wd)).astype(dtype),
                rng.integers(-8, 8, (f, c // groups, k, k)).astype(dtype))
    return (rng.standard_normal((1, c, h, wd)).astype(dtype),
            rng.standard_normal((f, c // groups, k, k)).astype(dtype))


def check(lib, x, w, s, shape, out_dtype, pad=0, groups=1):
    y = np.full(shape, 7, out_dtype)
    lib(x, w, y)
    want = conv_ref(x, w, s, pad, groups)
    if out_dtype.startswith("int"):
        np.testing.assert_array_equal(y, want.astype(out_dtype))
    else:
        np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-4)


# (in channels, out channels, input height, input width, kernel, stride, padding): odd input
# widths (the last phase one element short), odd channel counts, output rows of 7, 14, 3, 1,
# 56 and 33 columns, strides 2 and 3, 1x1 and 3x3, with and without padding.
SHAPES = [(7, 10, 15, 15, 3, 2, 0), (5, 16, 16, 16, 3, 2, 0), (3, 8, 29, 29, 3, 2, 0),
          (9, 12, 28, 27, 3, 2, 1), (6, 5, 9, 8, 3, 3, 0), (4, 16, 113, 113, 3, 2, 0),
          (11, 6, 7, 5, 3, 2, 0), (8, 16, 14, 67, 3, 2, 1), (9, 16, 15, 15, 1, 2, 0)]
IDS = ["x".join(map(str, s)) for s in SHAPES]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", SHAPES, ids=IDS)
def test_strided_conv_matches_numpy(shape, dtype):
    c, f, h, wd, k, s, pad = shape
    func, out = conv_func(c, f, h, wd, k, s, dtype, pad)
    x, w = inputs(c, f, h, wd, k, dtype)
    check(ts.build(func, target="c"), x, w, s, out, dtype, pad)


@pytest.mark.parametrize("shape", SHAPES[:5], ids=IDS[:5])
def test_strided_conv_int8_to_int32(shape):
    c, f, h, wd, k, s, pad = shape
    func, out = conv_func(c, f, h, wd, k, s, "int8", pad, "int32")
    x, w = inputs(c, f, h, wd, k, "int8")
    check(ts.build(func, target="c"), x, w, s, out, "int32", pad)


@pytest.mark.parametrize("shape", SHAPES, ids=IDS)
def test_strided_conv_small_vectors_match_numpy(shape):
    c, f, h, wd, k, s, pad = shape
    func, out = conv_func(c, f, h, wd, k, s, "float32", pad)
    sch = ts.autoschedule(func, target="c", facts=SMALL)
    x, w = inputs(c, f, h, wd, k, "float32")
    check(ts.build(sch.mod, target="c"), x, w, s, out, "float32", pad)


def test_strided_group_conv_matches_numpy():
    func, out = conv_func(8, 12, 17, 17, 3, 2, "float32", 1, groups=4)
    x, w = inputs(8, 12, 17, 17, 3, "float32", groups=4)
    check(ts.build(func, target="c"), x, w, 2, out, "float32", 1, groups=4)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("width,stride", [(1023, 2), (64, 2), (100, 3)])
def test_strided_conv1d_matches_numpy(width, stride, dtype):
    X = te.placeholder((2, 6, width), name="X", dtype=dtype)
    W = te.placeholder((10, 6, 3), name="W", dtype=dtype)
    Y = topi.nn.conv1d(X, W, stride)
    lib = ts.build(te.create_prim_func([X, W, Y]), target="c")
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 6, width)).astype(dtype)
    w = rng.standard_normal((10, 6, 3)).astype(dtype)
    ow = (width - 3) // stride + 1
    y = np.zeros((2, 10, ow), dtype)
    lib(x, w, y)
    want = sum(np.einsum("ncw,fc->nfw", x[:, :, r:r + stride * (ow - 1) + 1:stride].astype(np.float64),
                         w[:, :, r].astype(np.float64)) for r in range(3))
    np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-4)


def trace_of(func, **kw):
    return "\n".join(ts.autoschedule(func, target="c", **kw).trace.as_python())


@pytest.mark.parametrize("wd,stride", [(16, 2), (15, 2), (17, 3)])
def test_stride_reads_the_input_in_phases(wd, stride):
    """The trace copies the input into phases (zero padded where the stride does not divide the
    width); the C reads it with contiguous (first-lanes) loads, no strided gathers."""
    func, out = conv_func(8, 16, wd, wd, 3, stride)
    trace = trace_of(func)
    assert "cache_read" in trace
    assert f"d3 % {stride}, d3 // {stride}" in trace
    assert ("pad_value=0.0" in trace) == (wd % stride != 0)
    src = ts.build(func, target="c").get_source()
    assert "strided_load" not in src and "load_stride" not in src
    assert "X_global" in src
    x, w = inputs(8, 16, wd, wd, 3, "float32")
    check(ts.build(func, target="c"), x, w, stride, out, "float32")


def test_padding_is_computed_in_the_phase_copy():
    """With padding, the padding block is inlined into the copy in phases (one copy)."""
    func, out = conv_func(8, 16, 28, 28, 3, 2, pad=1)
    sch = ts.autoschedule(func, target="c")
    script = sch.mod.script()
    assert "pad_temp = T.alloc_buffer" not in script and "pad_temp_global" in script
    x, w = inputs(8, 16, 28, 28, 3, "float32")
    check(ts.build(sch.mod, target="c"), x, w, 2, out, "float32", 1)


def test_stride_one_reads_the_input_itself():
    func, _ = conv_func(8, 16, 16, 16, 3, 1)
    trace = trace_of(func)
    assert "cache_read" not in trace and "transform_layout" not in trace


@pytest.mark.parametrize("wd", [15, 16])
def test_phase_trace_replays(wd):
    """The printed trace (its pad_value a plain number) replays without `T` in scope."""
    func, out = conv_func(6, 16, wd, wd, 3, 2)
    sch = ts.autoschedule(func, target="c")
    replay = tir.Schedule(func)
    exec("\n".join(sch.trace.as_python()), {"sch": replay})
    assert ts.ir.structural_equal(replay.mod, sch.mod)
    again = tir.Schedule(func)
    tir.Trace.apply_json_to_schedule(sch.trace.as_json(), again)
    assert ts.ir.structural_equal(again.mod, sch.mod)
    x, w = inputs(6, 16, wd, wd, 3, "float32")
    check(ts.build(replay.mod, target="c"), x, w, 2, out, "float32")


@pytest.mark.parametrize("pad, text", [(0.5, "0.5"), (0.0, "0.0"), (2.0, "2.0"),
                                       (float("-inf"), "float('-inf')")])
def test_float_pad_value_prints_as_a_number(pad, text):
    """A whole float pad value keeps its ".0" (read back as an int, transform_layout would
    refuse it for a float buffer); an infinite one reads back through float()."""
    A = te.placeholder((2, 7), name="A")
    B = te.compute((2, 7), lambda i, j: A[i, j] + 1.0, name="B")
    func = te.create_prim_func([A, B])
    sch = tir.Schedule(func)
    sch.transform_layout(sch.get_block("B"), ("write", 0), lambda i, j: (i, j // 4, j % 4),
                         pad_value=pad)
    line = [t for t in sch.trace.as_python() if "transform_layout" in t][0]
    assert f"pad_value={text}," in line
    replay = tir.Schedule(func)
    exec("\n".join(sch.trace.as_python()), {"sch": replay})
    assert ts.ir.structural_equal(replay.mod, sch.mod)


@pytest.mark.parametrize("hw", [9, 16])
def test_float64_masked_tile_loads_with_one_instruction(hw):
    """float64 rows of 7 / 14 columns: the masked tile's first-lanes loads and stores are one
    AVX-512 masked instruction (a lane loop in C without AVX-512), matching numpy."""
    func, out = conv_func(9, 12, hw, hw, 3, 1, "float64")
    src = ts.build(func, target="c").get_source()
    assert "tessera_first_lanes_load_float64" in src
    for helper in ("load", "store"):
        m = re.search(r"tessera_first_lanes_%s_float64x(\d+)\(" % helper, src)
        if m:
            lanes = int(m.group(1))
            assert ("_mm%d_mask%s_%s_pd" % (64 * lanes, "z" if helper == "load" else "",
                                            "loadu" if helper == "load" else "storeu")) in src
    x, w = inputs(9, 12, hw, hw, 3, "float64")
    check(ts.build(func, target="c"), x, w, 1, out, "float64")
