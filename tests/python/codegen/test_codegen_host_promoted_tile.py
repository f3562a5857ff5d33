"""The host C generator holds a local register tile in C variables across a loop where the loop
accesses it only as whole vectors at constant offsets (a tiled product's accumulators over its
reduction loop): loaded before the loop, stored after it. Elsewhere the tile stays in memory."""

import numpy as np
import pytest
import tessera as ts
from tessera import te, tir, topi


def conv(c, f, hw, dtype):
    X = te.placeholder((1, c, hw, hw), name="X", dtype=dtype)
    W = te.placeholder((f, c, 3, 3), name="W", dtype=dtype)
    Y = topi.nn.conv2d_nchw(X, W, 1, 0, 1)
    return te.create_prim_func([X, W, Y]), [int(d) for d in Y.shape]


def conv_ref(x, w):
    _, c, h, wd = x.shape
    oh, ow = h - 2, wd - 2
    out = np.zeros((1, w.shape[0], oh, ow))
    for ky in range(3):
        for kx in range(3):
            out += np.einsum("nchw,fc->nfhw", x[:, :, ky:ky + oh, kx:kx + ow].astype(np.float64),
                             w[:, :, ky, kx].astype(np.float64))
    return out


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("c,f,hw", [(5, 12, 9), (13, 8, 16), (3, 7, 30), (6, 16, 58)])
def test_conv_tile_in_variables_matches_numpy(c, f, hw, dtype):
    func, out = conv(c, f, hw, dtype)
    lib = ts.build(func, target="c")
    src = lib.get_source()
    assert "tessera_acc0 = tessera_load_" in src
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, c, hw, hw)).astype(dtype)
    w = rng.standard_normal((f, c, 3, 3)).astype(dtype)
    y = np.full(out, 7, dtype)
    lib(x, w, y)
    np.testing.assert_allclose(y, conv_ref(x, w), rtol=1e-4, atol=1e-4)


def matmul_schedule(unroll_tile):
    A = te.placeholder((37, 24), name="A")
    B = te.placeholder((24, 32), name="B")
    k = te.reduce_axis((0, 24), name="k")
    C = te.compute((37, 32), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    sch = tir.Schedule(te.create_prim_func([A, B, C]))
    blk = sch.get_block("C")
    i, j, kk = sch.get_loops(blk)
    wb = sch.cache_write(blk, 0, "local")
    jo, ji = sch.split(j, [None, 16])
    jv, jl = sch.split(ji, [None, 8])
    sch.reorder(i, jo, kk, jv, jl)
    sch.reverse_compute_at(wb, jo)
    sch.vectorize(jl)
    if unroll_tile:
        sch.unroll(jv)
    sch.decompose_reduction(blk, kk)
    return sch.mod


@pytest.mark.parametrize("unroll_tile", [True, False])
def test_tile_held_only_at_constant_offsets(unroll_tile):
    """Two vectors of the tile unrolled: constant offsets, held in variables over the reduction;
    the vector loop kept: offsets vary with it, the tile stays in memory. Both match numpy."""
    mod = matmul_schedule(unroll_tile)
    lib = ts.build(mod, target="c")
    assert ("tessera_acc" in lib.get_source()) == unroll_tile
    rng = np.random.default_rng(0)
    a = rng.standard_normal((37, 24)).astype("float32")
    b = rng.standard_normal((24, 32)).astype("float32")
    c = np.zeros((37, 32), "float32")
    lib(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)
