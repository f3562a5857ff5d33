"""1x1 convolutions with no schedule: the output's two spatial axes, which the input and the output
both hold as one H * W axis, fused into one iterator before the tiles are chosen
(transform_block_layout), the register tile's cache indexed by it (reindex_cache_write); NCHW's
product then has H * W columns (W @ X[c, H * W]) and NHWC's H * W rows. A strided 1x1 input is
packed first (reindex_cache_read) into a copy whose two axes are one. Checked against numpy on
odd channel counts and sizes, float32 / float64 / int8 -> int32, the host's vectors and 128-bit
ones."""

import numpy as np
import pytest
import tessera as ts
from tessera import te, tir, topi

SMALL = {"vector_bits": 128, "vector_registers": 16, "cores": 2, "l2_bytes": 4096}


def ref_nchw(x, w, s, pad=0):
    x = x.astype(np.float64)
    if pad:
        x = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    xs = x[:, :, ::s, ::s]
    return np.einsum("nchw,fc->nfhw", xs, w[:, :, 0, 0].astype(np.float64))


def ref_nhwc(x, w, s):
    xs = x[:, ::s, ::s, :].astype(np.float64)
    return np.einsum("nhwc,cf->nhwf", xs, w[0, 0].astype(np.float64))


def nchw_func(n, c, f, hw, s, dtype="float32", out_dtype=None, pad=0, epilogue=False):
    X = te.placeholder((n, c, hw, hw), name="X", dtype=dtype)
    W = te.placeholder((f, c, 1, 1), name="W", dtype=dtype)
    Y = topi.nn.conv2d_nchw(X, W, s, pad, 1, out_dtype=out_dtype)
    args = [X, W]
    if epilogue:
        B = te.placeholder((f, 1, 1), name="B", dtype=Y.dtype)
        Y = topi.nn.relu(topi.add(Y, B))
        args.append(B)
    return te.create_prim_func(args + [Y]), [int(d) for d in Y.shape]


def nhwc_func(n, c, f, hw, s, dtype="float32", out_dtype=None):
    X = te.placeholder((n, hw, hw, c), name="X", dtype=dtype)
    W = te.placeholder((1, 1, c, f), name="W", dtype=dtype)
    Y = topi.nn.conv2d_nhwc(X, W, s, 0, 1, out_dtype=out_dtype)
    return te.create_prim_func([X, W, Y]), [int(d) for d in Y.shape]


def data(shape, dtype, rng):
    if dtype.startswith("int"):
        return rng.integers(-8, 8, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def run(lib, args, out_shape, out_dtype):
    y = np.full(out_shape, 7, out_dtype)
    lib(*args, y)
    return y


def expect(y, want, out_dtype):
    if out_dtype.startswith("int"):
        np.testing.assert_array_equal(y, want.astype(out_dtype))
    else:
        tol = 1e-4 if out_dtype == "float32" else 1e-10
        np.testing.assert_allclose(y, want, rtol=tol, atol=tol)


def trace_of(func, facts=None):
    return "\n".join(ts.autoschedule(func, target="c", facts=facts).trace.as_python())


# (batch, in channels, out channels, input size, stride): H * W columns of 196 (12 vectors of
# 16 and a tail of 4), 49 (one masked tile), 121, 25, 9, 169, 64 (whole vectors); odd channels.
NCHW = [(1, 33, 16, 14, 1), (1, 24, 40, 7, 1), (1, 5, 24, 11, 1), (1, 7, 9, 13, 1),
        (2, 17, 12, 5, 1), (1, 3, 48, 3, 1), (1, 16, 32, 8, 1), (1, 19, 64, 14, 1),
        (1, 9, 16, 15, 2), (1, 6, 10, 14, 2), (2, 13, 7, 9, 2), (1, 8, 48, 28, 2)]
IDS = ["x".join(map(str, s)) for s in NCHW]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", NCHW, ids=IDS)
def test_nchw_1x1_matches_numpy(shape, dtype):
    n, c, f, hw, s = shape
    func, out = nchw_func(n, c, f, hw, s, dtype)
    rng = np.random.default_rng(0)
    x, w = data((n, c, hw, hw), dtype, rng), data((f, c, 1, 1), dtype, rng)
    y = run(ts.build(func, target="c"), [x, w], out, dtype)
    expect(y, ref_nchw(x, w, s), dtype)


@pytest.mark.parametrize("shape", NCHW[::3], ids=IDS[::3])
def test_nchw_1x1_int8_to_int32(shape):
    n, c, f, hw, s = shape
    func, out = nchw_func(n, c, f, hw, s, "int8", "int32")
    rng = np.random.default_rng(1)
    x, w = data((n, c, hw, hw), "int8", rng), data((f, c, 1, 1), "int8", rng)
    y = run(ts.build(func, target="c"), [x, w], out, "int32")
    expect(y, ref_nchw(x, w, s), "int32")


@pytest.mark.parametrize("shape", NCHW, ids=IDS)
def test_nchw_1x1_small_vectors_match_numpy(shape):
    n, c, f, hw, s = shape
    func, out = nchw_func(n, c, f, hw, s)
    sch = ts.autoschedule(func, target="c", facts=SMALL)
    rng = np.random.default_rng(2)
    x, w = data((n, c, hw, hw), "float32", rng), data((f, c, 1, 1), "float32", rng)
    y = run(ts.build(sch.mod, target="c"), [x, w], out, "float32")
    expect(y, ref_nchw(x, w, s), "float32")


@pytest.mark.parametrize("shape", [(1, 33, 16, 14, 1), (1, 6, 10, 14, 2)], ids=["s1", "s2"])
def test_nchw_1x1_with_epilogue(shape):
    """Bias and relu after the product: the epilogue joins the tile of the fused columns."""
    n, c, f, hw, s = shape
    func, out = nchw_func(n, c, f, hw, s, epilogue=True)
    rng = np.random.default_rng(3)
    x, w = data((n, c, hw, hw), "float32", rng), data((f, c, 1, 1), "float32", rng)
    b = data((f, 1, 1), "float32", rng)
    y = run(ts.build(func, target="c"), [x, w, b], out, "float32")
    expect(y, np.maximum(ref_nchw(x, w, s) + b, 0), "float32")


def test_nchw_1x1_padded_matches_numpy():
    """A padded input: the product reads the padded copy (kept by the inline rule), whose rows
    are as wide as the output's, as one axis: fused too."""
    func, out = nchw_func(1, 5, 16, 9, 1, pad=1)
    assert "v_y * 11 + v_x" in trace_of(func)
    rng = np.random.default_rng(4)
    x, w = data((1, 5, 9, 9), "float32", rng), data((16, 5, 1, 1), "float32", rng)
    y = run(ts.build(func, target="c"), [x, w], out, "float32")
    expect(y, ref_nchw(x, w, 1, pad=1), "float32")


NHWC = [(1, 33, 16, 14, 1), (1, 24, 40, 7, 1), (2, 7, 9, 13, 1), (1, 64, 48, 5, 1),
        (1, 9, 16, 15, 2)]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", NHWC, ids=["x".join(map(str, s)) for s in NHWC])
def test_nhwc_1x1_matches_numpy(shape, dtype):
    n, c, f, hw, s = shape
    func, out = nhwc_func(n, c, f, hw, s, dtype)
    rng = np.random.default_rng(5)
    x, w = data((n, hw, hw, c), dtype, rng), data((1, 1, c, f), dtype, rng)
    y = run(ts.build(func, target="c"), [x, w], out, dtype)
    expect(y, ref_nhwc(x, w, s), dtype)


def test_nhwc_1x1_int8_to_int32():
    func, out = nhwc_func(1, 17, 32, 7, 1, "int8", "int32")
    rng = np.random.default_rng(6)
    x, w = data((1, 7, 7, 17), "int8", rng), data((1, 1, 17, 32), "int8", rng)
    y = run(ts.build(func, target="c"), [x, w], out, "int32")
    expect(y, ref_nhwc(x, w, 1), "int32")


def test_the_trace_fuses_the_spatial_axes():
    func, _ = nchw_func(1, 16, 32, 14, 1)
    trace = trace_of(func)
    assert "transform_block_layout" in trace and "v_y * 14 + v_x" in trace
    assert "reindex_cache_write" in trace
    func, _ = nhwc_func(1, 16, 32, 14, 1)
    trace = trace_of(func)
    assert "v_y * 14 + v_x" in trace and "reindex_cache_write" in trace


def test_stride_two_packs_the_input():
    func, _ = nchw_func(1, 16, 32, 14, 2)
    trace = trace_of(func)
    assert "reindex_cache_read" in trace
    assert "v_y * 7 + v_x" in trace


def test_3x3_and_matmul_are_not_fused():
    X = te.placeholder((1, 8, 16, 16), name="X")
    W = te.placeholder((16, 8, 3, 3), name="W")
    Y = topi.nn.conv2d_nchw(X, W, 1, 0, 1)
    assert "transform_block_layout" not in trace_of(te.create_prim_func([X, W, Y]))
    A = te.placeholder((64, 32), name="A")
    B = te.placeholder((32, 48), name="B")
    assert "transform_block_layout" not in trace_of(te.create_prim_func([A, B, topi.matmul(A, B)]))


def test_fused_columns_tail_is_masked_vectors():
    """196 columns on AVX-512 float32: 12 full vectors and a tail tile whose one vector with
    active lanes is masked (the tail's other vectors simplify away), no scalar column loop."""
    if ts.autoschedule.target_facts("c").get("isa") != "avx512":
        pytest.skip("masked vectors: AVX-512 hosts")
    func, _ = nchw_func(1, 32, 64, 14, 1)
    src = ts.build(func, target="c").get_source()
    # One masked load per partition of the rows (tir.LoopPartition gives the full row tiles and
    # the last, shorter row tile loops of their own), each for the one tail vector with active
    # lanes.
    loads = src.count("= tessera_first_lanes_load_float32x16(")
    assert 1 <= loads <= 2
    # Columns 192..195: the 13th vector, the only one with active lanes.
    assert src.count(" * 196) + 192), (int64_t)(4)") == loads


def test_fused_schedule_replays_from_its_trace():
    for func in (nchw_func(1, 6, 16, 14, 1)[0], nchw_func(1, 6, 16, 14, 2)[0],
                 nhwc_func(1, 6, 16, 7, 1)[0]):
        sch = ts.autoschedule(func, target="c")
        replay = tir.Schedule(func)
        exec("\n".join(sch.trace.as_python()), {"sch": replay})
        assert ts.ir.structural_equal(replay.mod, sch.mod)
