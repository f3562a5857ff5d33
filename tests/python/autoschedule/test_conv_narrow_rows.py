"""conv2d NCHW with no schedule where the output rows are narrower than the vectors (a network's
later stages: 28x28, 14x14, 7x7): one register tile whose last vector is masked
("tessera.mask_tail"), the local tile's rows padded to whole vectors (storage_align)."""

import numpy as np
import pytest
import tessera as ts
from tessera import te, topi

SMALL = {"vector_bits": 128, "vector_registers": 16, "cores": 2, "l2_bytes": 4096}


def conv_ref(x, w, s):
    n, c, h, wd = x.shape
    f, _, kh, kw = w.shape
    oh, ow = (h - kh) // s + 1, (wd - kw) // s + 1
    out = np.zeros((n, f, oh, ow), np.float64)
    for ky in range(kh):
        for kx in range(kw):
            patch = x[:, :, ky:ky + s * (oh - 1) + 1:s, kx:kx + s * (ow - 1) + 1:s].astype(np.float64)
            out += np.einsum("nchw,fc->nfhw", patch, w[:, :, ky, kx].astype(np.float64))
    return out


def conv_func(c, f, hw, k, s, dtype="float32", out_dtype=None):
    X = te.placeholder((1, c, hw, hw), name="X", dtype=dtype)
    W = te.placeholder((f, c, k, k), name="W", dtype=dtype)
    Y = topi.nn.conv2d_nchw(X, W, s, 0, 1, out_dtype=out_dtype)
    return te.create_prim_func([X, W, Y]), [int(d) for d in Y.shape]


# (in channels, out channels, input size, kernel, stride): output rows of 7, 14, 28, 3, 11, 6,
# 8 columns, odd channel counts.
SHAPES = [(3, 5, 9, 3, 1), (17, 12, 16, 3, 1), (6, 16, 30, 3, 1), (13, 8, 5, 3, 1),
          (5, 24, 11, 1, 1), (7, 10, 13, 3, 2), (9, 16, 15, 1, 2), (4, 6, 23, 3, 1)]


def check(lib, c, f, hw, k, s, shape, dtype, out_dtype=None, seed=0):
    rng = np.random.default_rng(seed)
    if dtype.startswith("int"):
        x = rng.integers(-8, 8, (1, c, hw, hw)).astype(dtype)
        w = rng.integers(-8, 8, (f, c, k, k)).astype(dtype)
    else:
        x = rng.standard_normal((1, c, hw, hw)).astype(dtype)
        w = rng.standard_normal((f, c, k, k)).astype(dtype)
    y = np.full(shape, 7, out_dtype or dtype)
    lib(x, w, y)
    want = conv_ref(x, w, s)
    if (out_dtype or dtype).startswith("int"):
        np.testing.assert_array_equal(y, want.astype(out_dtype or dtype))
    else:
        np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", SHAPES, ids=["x".join(map(str, s)) for s in SHAPES])
def test_narrow_rows_match_numpy(shape, dtype):
    c, f, hw, k, s = shape
    func, out = conv_func(c, f, hw, k, s, dtype)
    check(ts.build(func, target="c"), c, f, hw, k, s, out, dtype)


@pytest.mark.parametrize("shape", SHAPES[:4], ids=["x".join(map(str, s)) for s in SHAPES[:4]])
def test_narrow_rows_int8_to_int32(shape):
    c, f, hw, k, s = shape
    func, out = conv_func(c, f, hw, k, s, "int8", "int32")
    check(ts.build(func, target="c"), c, f, hw, k, s, out, "int8", "int32")


@pytest.mark.parametrize("shape", SHAPES, ids=["x".join(map(str, s)) for s in SHAPES])
def test_narrow_rows_small_vectors_match_numpy(shape):
    c, f, hw, k, s = shape
    func, out = conv_func(c, f, hw, k, s)
    sch = ts.autoschedule(func, target="c", facts=SMALL)
    check(ts.build(sch.mod, target="c"), c, f, hw, k, s, out, "float32")


def trace_of(func):
    return "\n".join(ts.autoschedule(func, target="c").trace.as_python())


@pytest.mark.parametrize("hw", [9, 16])
def test_rows_under_a_vector_take_one_masked_tile(hw):
    """7 and 14 output columns: one tile of the columns (no vector width divides them), its last
    vector masked, the local tile padded to whole vectors; the C has first-lanes loads."""
    func, out = conv_func(8, 16, hw, 3, 1)
    trace = trace_of(func)
    assert '"tessera.mask_tail"' in trace
    assert "storage_align" in trace
    src = ts.build(func, target="c").get_source()
    assert "tessera_first_lanes_load_" in src
    check(ts.build(func, target="c"), 8, 16, hw, 3, 1, out, "float32")


def test_rows_of_whole_vectors_are_unchanged():
    """56 output columns (8-lane vectors divide them): full tiles, no mask, no padding."""
    func, _ = conv_func(8, 16, 58, 3, 1)
    trace = trace_of(func)
    assert "tessera.mask_tail" not in trace
    assert "storage_align" not in trace


def test_masked_tile_replays_from_its_trace():
    from tessera import tir

    func, out = conv_func(6, 16, 30, 3, 1)
    sch = ts.autoschedule(func, target="c")
    replay = tir.Schedule(func)
    exec("\n".join(sch.trace.as_python()), {"sch": replay})
    assert ts.ir.structural_equal(replay.mod, sch.mod)
    check(ts.build(replay.mod, target="c"), 6, 16, 30, 3, 1, out, "float32")
