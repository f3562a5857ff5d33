"""The injective rule's tiles for permutations (transpose, layout_transform) on the CPU: results
equal numpy's for odd shapes and tails, the trace of the tiles, and blocks that are not
permutations (or targets other than the CPU) keep the fused schedule."""

import numpy as np
import pytest
import tessera as ts
from tessera import te, topi

RNG = np.random.default_rng(16)
# A Zen 4 / Skylake-like host: 32 KB 8-way L1, AVX-512, two cores.
HOST = {"vector_bits": 512, "cores": 2, "l1_bytes": 32768, "l1_ways": 8}
# 4-lane vectors and a 2 KB 2-way L1 (16 sets): both kinds of tile at small shapes.
SMALL = {"vector_bits": 128, "cores": 2, "l1_bytes": 2048, "l1_ways": 2}


def data(shape, dtype):
    if dtype == "bool":
        return RNG.integers(0, 2, shape).astype(bool)
    if dtype.startswith(("int", "uint")):
        return RNG.integers(0, 100, shape).astype(dtype)
    return RNG.standard_normal(shape).astype(dtype)


def transpose_func(shape, dtype, axes=None):
    a = te.placeholder(shape, dtype, name="A")
    return te.create_prim_func([a, topi.transpose(a, axes)])


def layout_func(shape, dtype, src, dst):
    a = te.placeholder(shape, dtype, name="A")
    return te.create_prim_func([a, topi.layout_transform(a, src, dst)])


def steps(sch):
    return [line.split("sch.")[1].split("(")[0] for line in sch.trace.as_python()]


def run(sch, a, expected):
    out = np.zeros(expected.shape, expected.dtype)
    ts.build(sch.mod, target="c")(a, out)
    np.testing.assert_array_equal(out, expected)


SHAPES = [
    ((1, 1), None),
    ((3, 5), None),
    ((17, 33), None),
    ((33, 17), None),
    ((1000, 7), None),
    ((7, 1000), None),
    ((64, 48), None),
    ((128, 192), None),
    ((20, 17, 40), (1, 2, 0)),
    ((40, 20, 17), (2, 0, 1)),
    ((3, 40, 36), (0, 2, 1)),
    ((64, 2, 96), (2, 1, 0)),
    ((2, 3, 5, 7), (0, 2, 3, 1)),
    ((2, 32, 5, 40), (3, 1, 0, 2)),
    ((4, 36, 6, 20), (1, 0, 3, 2)),
]


@pytest.mark.parametrize("facts", [HOST, SMALL], ids=["host", "small"])
@pytest.mark.parametrize("dtype", ["float32", "int8", "float64", "bool"])
@pytest.mark.parametrize("shape,axes", SHAPES, ids=[f"{s}-{a}" for s, a in SHAPES])
def test_transpose_matches_numpy(shape, axes, dtype, facts):
    sch = ts.autoschedule(transpose_func(shape, dtype, axes), target="c", facts=facts)
    a = data(shape, dtype)
    run(sch, a, np.ascontiguousarray(a.transpose(axes)))


@pytest.mark.parametrize("facts", [HOST, SMALL], ids=["host", "small"])
@pytest.mark.parametrize("src,dst,shape", [
    ("NCHW", "NHWC", (2, 24, 9, 20)),
    ("NHWC", "NCHW", (2, 9, 20, 24)),
    ("NCHW", "NHWC", (1, 64, 56, 56)),
])
def test_layout_transform_matches_numpy(src, dst, shape, facts):
    sch = ts.autoschedule(layout_func(shape, "float32", src, dst), target="c", facts=facts)
    a = data(shape, "float32")
    axes = [src.index(c) for c in dst]
    run(sch, a, np.ascontiguousarray(a.transpose(axes)))


def blocked(a, src, dst):
    """numpy's layout_transform between NCHW and NCHW<k>c / NHWC."""
    if src == "NCHW" and dst.endswith("c"):
        k = int(dst[4:-1])
        n, c, h, w = a.shape
        return np.ascontiguousarray(a.reshape(n, c // k, k, h, w).transpose(0, 1, 3, 4, 2))
    if src.endswith("c") and dst == "NCHW":
        n, cb, h, w, k = a.shape
        return np.ascontiguousarray(a.transpose(0, 1, 4, 2, 3).reshape(n, cb * k, h, w))
    raise ValueError(src + dst)


@pytest.mark.parametrize("facts", [HOST, SMALL], ids=["host", "small"])
@pytest.mark.parametrize("dtype", ["float32", "int8", "float64", "bool", "float16"])
@pytest.mark.parametrize("src,dst,shape", [
    ("NCHW", "NCHW8c", (1, 16, 9, 70)),
    ("NCHW", "NCHW8c", (2, 24, 5, 33)),
    ("NCHW", "NCHW4c", (3, 12, 7, 129)),
    ("NCHW", "NCHW16c", (1, 32, 4, 100)),
    ("NCHW", "NCHW2c", (1, 6, 3, 3)),
    ("NCHW8c", "NCHW", (1, 2, 9, 70, 8)),
    ("NCHW4c", "NCHW", (2, 3, 5, 33, 4)),
])
def test_blocked_layout_transform_matches_numpy(src, dst, shape, dtype, facts):
    # NCHW -> NCHW<k>c reads A[n, C * k + c, h, w]: a load affine in the iterators, tiled as a
    # permutation when its rows are wide enough; the way back reads at divided indices
    sch = ts.autoschedule(layout_func(shape, dtype, src, dst), target="c", facts=facts)
    a = data(shape, dtype)
    run(sch, a, blocked(a, src, dst))


def test_nchw_to_nchw8c_takes_vector_tiles_of_a_block_of_channels():
    # 64 x 112 x 112 float32 to NCHW8c: the output is contiguous along the 8 channels of a
    # block, the input along w, its channels 49 KB apart (spread over the L1's sets). The
    # native 16 lanes do not divide 8: each (C, h) writes a row of 112 blocks, a vector of 8
    # channels each, its 8 input rows in the L1 (the tile is the whole row: no split); the
    # loops outside fused and parallel. The fused 16-lane schedule gathered each vector with a
    # division per lane (0.1x numpy).
    sch = ts.autoschedule(layout_func((1, 64, 112, 112), "float32", "NCHW", "NCHW8c"),
                          target="c", facts=HOST)
    assert sch.trace.as_python()[3:] == [
        "sch.reorder(l2, l3, l4, l5, l6)",
        "sch.vectorize(loop=l6)",
        "l7 = sch.fuse(l2, l3, l4, preserve_unit_iters=True)",
        "sch.parallel(loop=l7)",
    ]


def test_nchw_to_nchw8c_of_float16_keeps_scalar_tiles():
    # narrower than native vectors of float16 lanes, GCC moves them lane by lane: scalar tiles
    sch = ts.autoschedule(layout_func((1, 64, 12, 112), "float16", "NCHW", "NCHW8c"),
                          target="c", facts=HOST)
    assert "reorder" in steps(sch) and "vectorize" not in steps(sch)
    sch = ts.autoschedule(layout_func((1, 64, 12, 112), "int16", "NCHW", "NCHW8c"),
                          target="c", facts=HOST)
    assert "vectorize" in steps(sch)


def test_nchw_to_nchw4c_keeps_scalar_tiles():
    # 4 channels a block: narrower than the narrowest vector of a tile (8 lanes)
    sch = ts.autoschedule(layout_func((1, 32, 20, 112), "float32", "NCHW", "NCHW4c"),
                          target="c", facts=HOST)
    assert "reorder" in steps(sch) and "vectorize" not in steps(sch)


def test_transpose_of_rows_a_page_apart_takes_scalar_tiles_of_l1_ways_rows():
    # 2048 float32 rows are 8 KB apart: 16 of them (a vector) in one set of the 8-way L1 would
    # evict each other, so the tile is 8 rows of the input by 128 columns (8 KB read and
    # written), scalar; the rows of tiles are the parallel loop
    sch = ts.autoschedule(transpose_func((2048, 2048), "float32"), target="c", facts=HOST)
    assert sch.trace.as_python() == [
        'b0 = sch.get_block(name="root", func_name="main")',
        "b1, = sch.get_child_blocks(block_or_loop=b0)",
        "l2, l3 = sch.get_loops(block=b1)",
        "l4, l5 = sch.split(loop=l2, factors=[None, 128], preserve_unit_iters=True, "
        "disable_predication=False)",
        "l6, l7 = sch.split(loop=l3, factors=[None, 8], preserve_unit_iters=True, "
        "disable_predication=False)",
        "sch.reorder(l4, l6, l5, l7)",
        "sch.parallel(loop=l4)",
    ]


def test_layout_transform_whose_rows_spread_over_the_sets_takes_vector_tiles():
    # NCHW -> NHWC of 56 x 56 float32: channels 12.25 KB apart spread over the L1's sets, so
    # w_i is a 16-lane vector of channels; the 56 columns of a row of the input fill the tile
    # (2 * 16 * 56 * 4 bytes, a quarter of the L1 at most); batch and rows are the parallel loop
    sch = ts.autoschedule(layout_func((1, 64, 56, 56), "float32", "NCHW", "NHWC"), target="c",
                          facts=HOST)
    assert sch.trace.as_python()[3:] == [
        "l6, l7 = sch.split(loop=l5, factors=[None, 16], preserve_unit_iters=True, "
        "disable_predication=False)",
        "sch.reorder(l2, l3, l6, l4, l7)",
        "sch.vectorize(loop=l7)",
        "l8 = sch.fuse(l2, l3, preserve_unit_iters=True)",
        "sch.parallel(loop=l8)",
    ]


def test_tiles_leave_a_tail_when_no_divisor_is_near():
    # rows of the input 192 B apart spread over the sets: scalar tiles of a line of the output
    # (16 float32) a row; its 33 rows make two tiles and a tail of one row
    sch = ts.autoschedule(transpose_func((33, 48), "float32"), target="c", facts=HOST)
    assert "reorder" in steps(sch) and "vectorize" not in steps(sch)
    assert any("factors=[None, 16]" in line for line in sch.trace.as_python())
    a = data((33, 48), "float32")
    run(sch, a, np.ascontiguousarray(a.T))


@pytest.mark.parametrize("make,fused", [
    # narrower than a cache line along the input's rows: the fused schedule's gathers are few
    (lambda: transpose_func((3, 5), "float32"), True),
    # (rows of 1000, which no 16-lane vector divides, read at other indices than the store's:
    # the injective rule vectorizes each row on its own instead of fusing)
    (lambda: transpose_func((1000, 7), "float32"), False),
    # elementwise, and a load contiguous along another loop that is no stride along the last
    # (a broadcast of a column of B): no permutation
    (lambda: _elementwise(), True),
    # (B[0, i] is one value a row: the row loop stays outside, the row in vectors)
    (lambda: _broadcast_column(), False),
], ids=["narrow", "narrow_rows", "elementwise", "broadcast"])
def test_other_blocks_are_not_tiled(make, fused):
    sch = ts.autoschedule(make(), target="c", facts=HOST)
    assert "reorder" not in steps(sch)
    assert ("fuse" in steps(sch)) == fused


def _elementwise():
    a = te.placeholder((64, 64), "float32", name="A")
    return te.create_prim_func([a, topi.exp(a)])


def _broadcast_column():
    a = te.placeholder((64, 64), "float32", name="A")
    b = te.placeholder((64, 64), "float32", name="B")
    c = te.compute((64, 64), lambda i, j: a[i, j] + b[0, i], name="C")
    return te.create_prim_func([a, b, c])


def test_broadcast_column_matches_numpy():
    func = _broadcast_column()
    a, b = data((64, 64), "float32"), data((64, 64), "float32")
    out = np.zeros((64, 64), "float32")
    ts.build(func, target="c")(a, b, out)
    np.testing.assert_array_equal(out, a + b[0][:, None])


def test_cuda_transpose_keeps_blocks_of_threads():
    sch = ts.autoschedule(transpose_func((2048, 2048), "float32"), target="cuda")
    assert steps(sch)[3:] == ["fuse", "split", "bind", "bind"]


@pytest.mark.parametrize("facts", [HOST, SMALL], ids=["host", "small"])
def test_transpose_with_a_cast_matches_numpy(facts):
    # int8 read, float32 written: the input's lines and the output's rows have their own widths
    a = te.placeholder((96, 200), "int8", name="A")
    c = te.compute((200, 96), lambda i, j: a[j, i].astype("float32") * 2.0, name="C")
    sch = ts.autoschedule(te.create_prim_func([a, c]), target="c", facts=facts)
    assert "reorder" in steps(sch)
    x = data((96, 200), "int8")
    run(sch, x, np.ascontiguousarray(x.T).astype("float32") * 2)
