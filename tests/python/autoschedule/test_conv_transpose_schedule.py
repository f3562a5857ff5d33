"""The automatic schedule of a transposed convolution's stride phases (topi numbers them by
kernel residue, each phase a convolution of ceil(k / s) x ceil(k / s) taps):

- where the kernel outgrows the L2 cache, the phase loops go inside the register tile's loops,
  right outside the reduction (the phases of one tile read the same cache lines of the
  kernel), the parallel loop kept whole; a kernel that fits keeps them outside;
- a window of at most 8 taps is unrolled whole (both tap loops), a 3x3 window as before;
- the masked register tile's init stores whole vectors (its rows are padded), no scalar loop;
- the host C reads an element at a constant offset buried in a sum as `(p + x)[c]`.

Every built schedule is checked against numpy."""

import re

import numpy as np
import pytest
import tessera as ts
from tessera import te, tir, topi

HOST2 = {"cores": 2}
# an L2 cache smaller than the test kernels: the phases go inside the tile loops
HOST2_L2 = {"cores": 2, "l2_bytes": 4096}
SMALL = {"vector_bits": 128, "vector_registers": 16, "cores": 2, "l2_bytes": 4096}


def transpose_ref(x, w, s, p):
    n, ci, h, wd = x.shape
    _, co, kh, kw = w.shape
    full = np.zeros((n, co, (h - 1) * s + kh, (wd - 1) * s + kw))
    for i in range(h):
        for j in range(wd):
            full[:, :, i * s:i * s + kh, j * s:j * s + kw] += np.einsum(
                "nc,cfhw->nfhw", x[:, :, i, j].astype(np.float64), w.astype(np.float64))
    return full[:, :, p:full.shape[2] - p, p:full.shape[3] - p]


def transpose_func(ci, co, hw, k, s, p, dtype="float32"):
    X = te.placeholder((1, ci, hw, hw), dtype, name="X")
    W = te.placeholder((ci, co, k, k), dtype, name="W")
    Y = topi.nn.conv2d_transpose_nchw(X, W, (s, s), (p, p), dtype, (0, 0))
    return te.create_prim_func([X, W, Y]), [int(d) for d in Y.shape]


def loop_names(sch, block):
    return [sch.get(lv).loop_var.name for lv in sch.get_loops(sch.get_block(block))]


def loop_kinds(sch, block):
    return [str(sch.get(lv).kind).split(".")[-1].lower() for lv in sch.get_loops(sch.get_block(block))]


def run(mod, func_shape, ci, co, hw, k, s, p, dtype="float32", seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((1, ci, hw, hw)).astype(dtype)
    w = rng.standard_normal((ci, co, k, k)).astype(dtype)
    out = np.zeros(func_shape, dtype)
    ts.build(mod, target="c")(x, w, out)
    tol = 1e-4 if dtype == "float32" else 1e-10
    np.testing.assert_allclose(out, transpose_ref(x, w, s, p), rtol=tol, atol=tol * 10)


# (in channels, out channels, input size, kernel, stride, padding)
SHAPES = [(16, 12, 14, 4, 2, 1), (9, 20, 7, 4, 2, 1), (24, 8, 10, 3, 2, 1), (8, 10, 6, 6, 3, 2),
          (12, 16, 28, 4, 2, 1)]


@pytest.mark.parametrize("shape", SHAPES, ids=[str(s) for s in SHAPES])
@pytest.mark.parametrize("facts", [HOST2_L2, SMALL], ids=["host", "small"])
def test_phase_loops_inside_the_tile_loops(shape, facts):
    ci, co, hw, k, s, p = shape
    func, out_shape = transpose_func(ci, co, hw, k, s, p)
    sch = ts.autoschedule(func, target="c", facts=facts)
    names = loop_names(sch, "conv2d_transpose_phases_update")
    # the tile loops of the output channels (c_0) and rows (qy_0) outside, then the phases, then
    # the reduction over the input channels
    assert names.index("c_0") < names.index("ry") < names.index("rx") < names.index("dc"), names
    run(sch.mod, out_shape, ci, co, hw, k, s, p)


def test_phase_loops_outside_where_the_kernel_fits_l2():
    func, out_shape = transpose_func(16, 12, 14, 4, 2, 1)  # a 12 KB kernel, L2 of 1 MB
    sch = ts.autoschedule(func, target="c", facts={"cores": 2, "l2_bytes": 1 << 20})
    names = loop_names(sch, "conv2d_transpose_phases_update")
    assert names.index("rx") < names.index("c_0"), names
    run(sch.mod, out_shape, 16, 12, 14, 4, 2, 1)


def test_parallel_loop_of_enough_row_tiles_is_not_fused():
    func, out_shape = transpose_func(32, 16, 14, 4, 2, 1)
    sch = ts.autoschedule(func, target="c", facts=HOST2_L2)
    lines = sch.trace.as_python()
    # 7 row tiles on 2 cores: the parallel loop alone (no fused index in the phases' addresses)
    par = [line for line in lines if "sch.parallel(" in line][0].split("loop=")[1].rstrip(")")
    fused = [line.split(" = ")[0] for line in lines if "sch.fuse(" in line]
    assert par not in fused, (par, fused)
    assert loop_kinds(sch, "conv2d_transpose_phases_update")[0] == "parallel"
    run(sch.mod, out_shape, 32, 16, 14, 4, 2, 1)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_phases_match_numpy_in_every_float_dtype(dtype):
    func, out_shape = transpose_func(10, 6, 9, 4, 2, 1, dtype)
    run(func, out_shape, 10, 6, 9, 4, 2, 1, dtype)


def conv_func(c, f, hw, k):
    X = te.placeholder((1, c, hw, hw), "float32", name="X")
    W = te.placeholder((f, c, k, k), "float32", name="W")
    Y = topi.nn.conv2d_nchw(X, W, 1, 0, 1, out_dtype="float32")
    return te.create_prim_func([X, W, Y]), [int(d) for d in Y.shape]


def test_window_of_four_taps_unrolled_whole_and_3x3_as_before():
    func, shape = conv_func(16, 8, 15, 2)
    kinds = dict(zip(loop_names(ts.autoschedule(func, target="c"), "conv2d_nchw_update"),
                     loop_kinds(ts.autoschedule(func, target="c"), "conv2d_nchw_update")))
    assert kinds["ry"] == "unrolled" and kinds["rx"] == "unrolled", kinds
    func3, _ = conv_func(16, 8, 16, 3)
    sch3 = ts.autoschedule(func3, target="c")
    kinds3 = dict(zip(loop_names(sch3, "conv2d_nchw_update"), loop_kinds(sch3, "conv2d_nchw_update")))
    assert kinds3["ry"] == "serial" and kinds3["rx"] == "unrolled", kinds3
    rng = np.random.default_rng(1)
    x = rng.standard_normal((1, 16, 15, 15)).astype("float32")
    w = rng.standard_normal((8, 16, 2, 2)).astype("float32")
    out = np.zeros(shape, "float32")
    ts.build(func, target="c")(x, w, out)
    want = sum(np.einsum("chw,fc->fhw", x[0, :, i:i + 14, j:j + 14], w[:, :, i, j])
               for i in range(2) for j in range(2))
    np.testing.assert_allclose(out[0], want, rtol=1e-4, atol=1e-4)


def test_masked_tile_init_stores_whole_vectors():
    # 14 output columns: one tile of two 8-lane vectors, the second masked; its init is two
    # vector stores of zeros into the padded local rows, not a scalar loop of 6 lanes.
    func, out_shape = transpose_func(16, 8, 7, 4, 2, 1)
    lib = ts.build(func, target="c")
    src = lib.get_source()
    assert "_init_s" not in src
    run(func, out_shape, 16, 8, 7, 4, 2, 1)


def test_constant_offset_inside_a_sum_is_split_from_the_pointer():
    # The kernel read in place by the phases: index (dc * K + c * T - rx - 4 * ry) + 15 - 8 * th
    # with th unrolled; each tap's constant goes to the element offset of one pointer.
    func, out_shape = transpose_func(16, 8, 7, 4, 2, 1)
    src = ts.build(func, target="c").get_source()
    taps = re.findall(r"\(W \+ [^\[\]]*\)\[(\d+)\]", src)
    assert len(set(taps)) >= 4, taps
    assert not re.search(r"W\[[^\]]*\+ 15\)", src)
    run(func, out_shape, 16, 8, 7, 4, 2, 1)
