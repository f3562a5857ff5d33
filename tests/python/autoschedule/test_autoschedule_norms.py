"""The automatic schedule of the normalizations and padding of topi.nn (batch_norm inference,
group_norm, instance_norm, pad): results against numpy on odd shapes, with the host's facts and
with small vectors, and the schedule forms that make them fast pinned by their traces."""

import re

import numpy as np
import pytest
import tessera as ts
from tessera import te, topi

RNG = np.random.default_rng(16)
# 4-lane vectors and two cores, whatever the host.
SMALL = {"vector_bits": 128, "vector_registers": 16, "cores": 2, "l2_bytes": 4096}
FACTS = [None, SMALL]
FACT_IDS = ["host", "small"]


def rand(*shape):
    return RNG.random(shape, dtype="float32")


def build_run(func, inputs, out_shape, facts):
    mod = func if facts is None else ts.autoschedule(func, target="c", facts=facts).mod
    out = np.zeros(out_shape, "float32")
    ts.build(mod, target="c")(*inputs, out)
    return out


def trace(func, facts=SMALL):
    return ts.autoschedule(func, target="c", facts=facts).trace.as_python()


def batch_norm_func(shape):
    x = te.placeholder(shape, name="X")
    params = [te.placeholder((shape[1],), name=n) for n in ("g", "b", "m", "v")]
    return te.create_prim_func([x, *params, topi.nn.batch_norm(x, *params)[0]])


def batch_norm_ref(x, g, b, m, v):
    c = (1, -1) + (1,) * (x.ndim - 2)
    return (x - m.reshape(c)) / np.sqrt(v.reshape(c) + 1e-5) * g.reshape(c) + b.reshape(c)


# (2, 6, 5, 8): 40 elements per channel (10 small vectors); (1, 3, 7, 9): 63, not whole vectors;
# (3, 5, 2): 2 per channel, too short for a loop of its own
@pytest.mark.parametrize("facts", FACTS, ids=FACT_IDS)
@pytest.mark.parametrize("shape", [(2, 6, 5, 8), (1, 3, 7, 9), (3, 5, 2), (2, 16, 32, 32)])
def test_batch_norm_inference_matches_numpy(shape, facts):
    x = rand(*shape)
    g, b, m, v = (rand(shape[1]) for _ in range(4))
    got = build_run(batch_norm_func(shape), [x, g, b, m, v], shape, facts)
    np.testing.assert_allclose(got, batch_norm_ref(x, g, b, m, v), rtol=1e-5, atol=1e-5)


def test_batch_norm_keeps_channels_outside_its_vector_loop():
    # per-channel parameters read once per channel (a scalar broadcast), not gathered per vector
    assert trace(batch_norm_func((2, 6, 5, 8)))[2:] == [
        "l2, l3, l4, l5 = sch.get_loops(block=b1)",
        "l6 = sch.fuse(l2, l3, preserve_unit_iters=True)",
        "l7 = sch.fuse(l4, l5, preserve_unit_iters=True)",
        "l8, l9 = sch.split(loop=l7, factors=[None, 4], preserve_unit_iters=True, "
        "disable_predication=False)",
        "sch.vectorize(loop=l9)",
    ]


def test_short_or_ragged_channels_fuse_every_loop():
    for shape in [(1, 3, 7, 9), (3, 5, 2)]:
        steps = trace(batch_norm_func(shape))
        assert sum("sch.fuse(" in s for s in steps) == 1, steps


def test_a_row_broadcast_still_fuses_every_loop():
    # b[j] uses the innermost iterator: nothing to hoist, one fused loop as before
    a = te.placeholder((6, 40), name="A")
    b = te.placeholder((40,), name="B")
    c = te.compute((6, 40), lambda i, j: a[i, j] + b[j], name="C")
    steps = trace(te.create_prim_func([a, b, c]))
    assert sum("sch.fuse(" in s for s in steps) == 1 and "l4 = sch.fuse(l2, l3" in steps[3], steps


def grouped_func(shape, groups, channel_axis=1):
    x = te.placeholder(shape, name="X")
    c = shape[channel_axis]
    g, b = te.placeholder((c,), name="g"), te.placeholder((c,), name="b")
    axes = [d for d in range(1, len(shape)) if d != channel_axis]
    if groups is None:
        y = topi.nn.instance_norm(x, g, b, channel_axis, axes)
    else:
        y = topi.nn.group_norm(x, g, b, groups, channel_axis, axes)
    return te.create_prim_func([x, g, b, y])


def grouped_ref(x, g, b, groups, channel_axis=1):
    xc = np.moveaxis(x, channel_axis, 1).astype("float64")
    n, c = xc.shape[:2]
    xg = xc.reshape(n, groups, -1)
    y = (xg - xg.mean(-1, keepdims=True)) / np.sqrt(xg.var(-1, keepdims=True) + 1e-5)
    bc = (1, c) + (1,) * (xc.ndim - 2)
    y = y.reshape(xc.shape) * g.reshape(bc) + b.reshape(bc)
    return np.moveaxis(y, 1, channel_axis)


# groups of several channels and of one (instance_norm, groups None); (h, w) of whole vectors,
# of a ragged count, of one element; a 1-d spatial axis; channels last
GROUPED = [
    ((2, 8, 4, 6), 2, 1),
    ((2, 6, 5, 7), 3, 1),
    ((3, 4, 1, 1), 2, 1),
    ((2, 6, 5, 7), None, 1),
    ((2, 8, 16, 16), None, 1),
    ((3, 4, 9), None, 1),
    ((2, 5, 6, 8), 2, 3),
]


@pytest.mark.parametrize("facts", FACTS, ids=FACT_IDS)
@pytest.mark.parametrize("shape,groups,axis", GROUPED)
def test_group_and_instance_norm_match_numpy(shape, groups, axis, facts):
    x = rand(*shape) * 4 - 1
    g, b = rand(shape[axis]), rand(shape[axis])
    got = build_run(grouped_func(shape, groups, axis), [x, g, b], shape, facts)
    want = grouped_ref(x, g, b, groups or shape[axis], axis)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_group_norm_row_is_one_group_of_one_batch_element():
    # the row: c // 4 inside n (not fused with it, so that the statistics and the partial
    # results shrink to the row), the statistics computed once in it; (h, w) fused and vectorized
    steps = trace(grouped_func((2, 8, 4, 6), 2))
    assert steps[4:14] == [
        "l8, l9, l10, l11 = sch.get_loops(block=b3)",
        "l12, l13 = sch.split(loop=l9, factors=[None, 4], preserve_unit_iters=True, "
        "disable_predication=False)",
        "sch.compute_at(block=b6, loop=l12, preserve_unit_loops=True, index=-1)",
        "sch.compute_at(block=b5, loop=l12, preserve_unit_loops=True, index=-1)",
        'sch.annotate(block_or_loop=l12, ann_key="pragma_fast_math", ann_val=1)',
        "l14, l15, l16, l17, l18 = sch.get_loops(block=b3)",
        "l19 = sch.fuse(l17, l18, preserve_unit_iters=True)",
        "l20, l21, l22, l23 = sch.get_loops(block=b3)",
        "l24, l25 = sch.split(loop=l23, factors=[None, 4], preserve_unit_iters=True, "
        "disable_predication=False)",
        "sch.vectorize(loop=l25)",
    ], steps
    # each reduction over (channels of the group, h, w) fused into one vectorized row
    assert "l33 = sch.fuse(l30, l31, l32, preserve_unit_iters=True)" in steps, steps


def test_group_norm_statistics_are_allocated_in_the_row():
    # one row's statistics and partial results (4 accumulators x 4 lanes), not one per row
    sch = ts.autoschedule(grouped_func((2, 8, 16, 16), 2), target="c", facts=SMALL)
    src = ts.build(sch.mod, target="c").get_source()
    sizes = [int(n) for n in re.findall(r"float \w+\[(\d+)\];", src)]
    assert sizes and max(sizes) <= 16, sizes


def test_instance_norm_row_is_one_channel_of_one_batch_element():
    steps = trace(grouped_func((2, 8, 4, 6), None))
    assert steps[4:6] == [
        "l8, l9, l10, l11 = sch.get_loops(block=b3)",
        "sch.compute_at(block=b6, loop=l9, preserve_unit_loops=True, index=-1)",
    ], steps
    assert "l16 = sch.fuse(l14, l15, preserve_unit_iters=True)" in steps, steps


def test_group_norm_rows_run_in_parallel_over_the_batch():
    steps = trace(grouped_func((4, 8, 32, 32), 2))
    assert "sch.parallel(loop=l8)" in steps, steps


def pad_func(shape, before, after, value=0.0, dtype="float32"):
    x = te.placeholder(shape, name="X", dtype=dtype)
    return te.create_prim_func([x, topi.nn.pad(x, before, after, value)])


# the interior's rows of whole vectors or not; padding before only, after only, on every axis
# (none left outside to run in parallel), on a middle axis only
PADS = [
    ((2, 3, 8, 16), [0, 0, 1, 1], [0, 0, 1, 1]),
    ((1, 3, 7, 9), [0, 0, 2, 1], [0, 0, 0, 3]),
    ((5, 6), [1, 2], [3, 0]),
    ((2, 4, 5), [0, 2, 0], [0, 1, 0]),
    ((3, 1, 1), [0, 1, 1], [0, 1, 1]),
]


@pytest.mark.parametrize("facts", FACTS, ids=FACT_IDS)
@pytest.mark.parametrize("shape,before,after", PADS)
def test_pad_matches_numpy(shape, before, after, facts):
    x = rand(*shape)
    want = np.pad(x, list(zip(before, after)), constant_values=1.5)
    got = build_run(pad_func(shape, before, after, 1.5), [x], want.shape, facts)
    np.testing.assert_array_equal(got, want)


def test_pad_of_integers_matches_numpy():
    x = RNG.integers(-100, 100, (2, 3, 4, 32)).astype("int32")
    want = np.pad(x, ((0, 0), (0, 0), (1, 2), (3, 1)))
    out = np.zeros(want.shape, "int32")
    ts.build(pad_func(x.shape, [0, 0, 1, 3], [0, 0, 2, 1], 0, "int32"), target="c")(x, out)
    np.testing.assert_array_equal(out, want)


def test_pad_interior_is_a_vector_copy_between_partitioned_borders():
    steps = trace(pad_func((2, 3, 8, 16), [0, 0, 1, 1], [0, 0, 1, 1]))
    # the loops below a partition's block are its own: (h, w) for the first, w for the second
    assert steps[2:] == [
        "l2, l3, l4, l5 = sch.get_loops(block=b1)",
        "l6 = sch.fuse(l2, l3, preserve_unit_iters=True)",
        "l7, l8, l9 = sch.get_loops(block=b1)",
        "l10, l11, l12 = sch.loop_partition(loop=l8, factors=[1, 8], preserve_unit_iters=True)",
        "b13, = sch.get_child_blocks(block_or_loop=l11)",
        "l14, l15 = sch.get_loops(block=b13)",
        "l16, l17, l18 = sch.loop_partition(loop=l15, factors=[1, 16], preserve_unit_iters=True)",
        "b19, = sch.get_child_blocks(block_or_loop=l17)",
        "l20, = sch.get_loops(block=b19)",
        "sch.vectorize(loop=l20)",
    ], steps
    # no condition left in the interior; the borders store the constant
    src = ts.build(pad_func((2, 3, 8, 16), [0, 0, 1, 1], [0, 0, 1, 1]), target="c").get_source()
    assert "?" not in src[src.find("i0_i1_fused"):] and "tessera_load_float32x" in src


@pytest.mark.parametrize(
    "func",
    [
        pad_func((2, 3, 8, 16), [0, 0, 1, 1], [0, 0, 1, 1]),
        grouped_func((2, 8, 4, 6), 2),
        batch_norm_func((2, 6, 5, 8)),
    ],
    ids=["pad", "group_norm", "batch_norm"],
)
def test_traces_replay(func):
    sch = ts.autoschedule(func, target="c", facts=SMALL)
    again = ts.tir.Schedule(func)
    exec("\n".join(sch.trace.as_python()), {"sch": again})
    assert ts.ir.structural_equal(again.mod, sch.mod)


@pytest.mark.parametrize("dtype", ["float16", "int8"])
def test_pad_interior_takes_narrower_vectors_where_native_ones_do_not_divide_it(dtype):
    # 48-element rows: 512-bit vectors hold 32 float16 / 64 int8, neither divides 48; 16 does
    func = pad_func((2, 3, 4, 48), [0, 0, 1, 1], [0, 0, 1, 1], 0, dtype)
    sch = ts.autoschedule(func, target="c", facts={"vector_bits": 512, "cores": 2})
    assert sch.trace.as_python()[-1] == "sch.vectorize(loop=l20)", sch.trace.as_python()
    x = (RNG.random((2, 3, 4, 48)) * 100).astype(dtype)
    want = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    out = np.zeros(want.shape, dtype)
    lib = ts.build(sch.mod, target="c")
    lib(x, out)
    np.testing.assert_array_equal(out, want)
    assert f"tessera_load_{'float16' if dtype == 'float16' else 'int8'}x16" in lib.get_source()


def test_float64_group_reductions_fuse_rows_that_are_not_whole_accumulator_sets():
    # rows of 40 float64: 8 lanes x 4 accumulators = 32 does not divide 40; the group's
    # 2 x 4 x 40 = 320 does: each reduction fuses its three loops (rc, h, w) into one
    x = te.placeholder((2, 4, 4, 40), name="X", dtype="float64")
    g, b = (te.placeholder((4,), name=n, dtype="float64") for n in "gb")
    func = te.create_prim_func([x, g, b, topi.nn.group_norm(x, g, b, 2, 1, [2, 3])])
    sch = ts.autoschedule(func, target="c", facts={"vector_bits": 512, "cores": 2})
    fuses = [s for s in sch.trace.as_python() if "sch.fuse(" in s]
    assert sum(s.count(", l") == 2 for s in fuses) == 2, fuses  # fuse(la, lb, lc, ...)
    xs = RNG.random((2, 4, 4, 40)) * 3 - 1
    gs, bs = RNG.random(4), RNG.random(4)
    out = np.zeros(xs.shape)
    ts.build(sch.mod, target="c")(xs, gs, bs, out)
    np.testing.assert_allclose(out, grouped_ref(xs, gs, bs, 2), rtol=1e-10, atol=1e-10)
