"""The automatic schedule: every rule on small odd shapes matches numpy, its trace prints and
replays, it runs as the pass tir.AutoSchedule of ts.build (and can be disabled), and functions
scheduled by hand are left alone."""

import os

import numpy as np
import ops
import pytest
import tessera as ts
from tessera import te, tir, topi
from tessera.script import tir as T
from tessera.transform import PassContext

RNG = np.random.default_rng(7)
# Facts that make the tiling rules fire at small shapes, whatever the host: 4-lane vectors.
SMALL = {"vector_bits": 128, "vector_registers": 16, "cores": 2, "l2_bytes": 4096}


def rand(*shape):
    return RNG.random(shape, dtype="float32")


def conv_ref(x, w):
    n, _, h, wd = x.shape
    f, _, kh, kw = w.shape
    y = np.zeros((n, f, h - kh + 1, wd - kw + 1), "float32")
    for ky in range(kh):
        for kx in range(kw):
            patch = x[:, :, ky:ky + h - kh + 1, kx:kx + wd - kw + 1]
            y += np.einsum("nchw,fc->nfhw", patch, w[:, :, ky, kx])
    return y


def softmax_ref(a):
    e = np.exp(a - a.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


def layer_norm_ref(a, g, b):
    m = a.mean(1, keepdims=True)
    return (a - m) / np.sqrt(a.var(1, keepdims=True) + 1e-5) * g + b


def cases():
    """(name, func, inputs, expected output)."""
    a, b = rand(37, 29), rand(29, 41)
    yield "matmul_odd", ops.matmul(37, 41, 29), [a, b], a @ b
    a, b = rand(24, 20), rand(20, 40)
    yield "matmul_tiled", ops.matmul(24, 40, 20), [a, b], a @ b
    a, b, bias = rand(24, 13), rand(13, 40), rand(40)
    yield "matmul_bias_relu", ops.matmul(24, 40, 13, epilogue=True), [a, b, bias], \
        np.maximum(a @ b + bias, 0)
    a, b = rand(2, 3, 12, 8), rand(2, 3, 8, 24)
    yield "batch_matmul", ops.batch_matmul(2, 3, 12, 8, 24), [a, b], a @ b
    x, w = rand(1, 5, 10, 18), rand(8, 5, 3, 3)
    yield "conv2d", ops.conv2d_nchw(1, 5, 10, 18, 8), [x, w], conv_ref(x, w)
    bias = rand(8)
    yield "conv2d_bias_relu", ops.conv2d_nchw(1, 5, 10, 18, 8, epilogue=True), [x, w, bias], \
        np.maximum(conv_ref(x, w) + bias[None, :, None, None], 0)
    x, w = rand(1, 2, 10, 12, 8), rand(2, 2, 3, 3, 8, 8)
    ref = np.zeros((1, 2, 8, 10, 8), "float32")
    for ky in range(3):
        for kx in range(3):
            ref += np.einsum("nihwc,oicd->nohwd", x[:, :, ky:ky + 8, kx:kx + 10, :], w[:, :, ky, kx])
    yield "conv2d_nchwc", ops.conv2d_nchwc(1, 2, 10, 12, 8, 2, 8), [x, w], ref
    a = rand(7, 33)
    yield "softmax_odd", ops.softmax(7, 33), [a], softmax_ref(a)
    a = rand(9, 64)
    yield "softmax", ops.softmax(9, 64), [a], softmax_ref(a)
    a, g, b = rand(5, 48), rand(48), rand(48)
    yield "layer_norm", ops.layer_norm(5, 48), [a, g, b], layer_norm_ref(a, g, b)
    a, b, c = rand(3, 5, 7), rand(3, 5, 7), rand(3, 5, 7)
    yield "elementwise_odd", ops.elementwise_chain((3, 5, 7)), [a, b, c], \
        np.maximum(a * b + c, 0) * 0.5
    n = 1 << 15
    a, b, c = rand(n), rand(n), rand(n)
    yield "elementwise_long", ops.elementwise_chain((n,)), [a, b, c], np.maximum(a * b + c, 0) * 0.5
    a = rand(13, 6)
    yield "column_sum", ops.column_sum(13, 6), [a], a.sum(0)
    a = rand(50, 64)
    yield "column_sum_wide", ops.column_sum(50, 64), [a], a.sum(0)
    a = rand(100)
    yield "total_sum", ops.total_sum(100), [a], a.sum(keepdims=True)
    a = rand(1 << 17)
    yield "total_sum_large", ops.total_sum(1 << 17), [a], a.sum(keepdims=True, dtype="float64")

    # Convolutions the conv rule reaches since session 16: 37 output columns (no vector width
    # divides them: full vectors and a partial tile), grouped output channels (row tiles inside
    # a group), a depthwise stencil (tiles of one channel), a transposed convolution's phases.
    x, w = rand(2, 5, 39), rand(6, 5, 3)
    yield "conv1d_partial_columns", topi_func(topi.nn.conv1d_ncw, x, w), [x, w], \
        conv_general(x[:, :, None], w[:, :, None], 1, 0, 1, 1)[:, :, 0]
    x, w = rand(1, 12, 9, 16), rand(12, 4, 3, 3)
    yield "group_conv2d", \
        topi_func(lambda a, b: topi.nn.group_conv2d_nchw(a, b, 1, 1, 1, 3), x, w), [x, w], \
        conv_general(x, w, 1, 1, 1, 3)
    x, w = rand(1, 6, 15, 37), rand(9, 2, 3, 3)
    yield "group_conv2d_strided_dilated", \
        topi_func(lambda a, b: topi.nn.group_conv2d_nchw(a, b, 2, 2, 2, 3), x, w), [x, w], \
        conv_general(x, w, 2, 2, 2, 3)
    x, w = rand(1, 5, 7, 16), rand(5, 2, 3, 3)
    yield "depthwise_conv2d", \
        topi_func(lambda a, b: topi.nn.depthwise_conv2d_nchw(a, b, 1, 1, 1), x, w), [x, w], \
        conv_general(np.repeat(x, 2, axis=1), w.reshape(10, 1, 3, 3), 1, 1, 1, 10)
    x, w = rand(1, 3, 12, 37), rand(3, 1, 3, 3)
    yield "depthwise_conv2d_strided_dilated", \
        topi_func(lambda a, b: topi.nn.depthwise_conv2d_nchw(a, b, 2, 2, 2), x, w), [x, w], \
        conv_general(x, w, 2, 2, 2, 3)
    x, w = rand(1, 4, 9, 16), rand(4, 6, 4, 4)
    yield "conv2d_transpose", \
        topi_func(lambda a, b: topi.nn.conv2d_transpose_nchw(a, b, 2, 1, "float32", 0), x, w), \
        [x, w], conv_transpose_general(x, w, 2, 1)


def topi_func(build, *inputs):
    phs = [te.placeholder(a.shape, "float32", name=f"x{k}") for k, a in enumerate(inputs)]
    return te.create_prim_func(phs + [build(*phs)])


def conv_general(x, w, stride, pad, dil, groups):
    """NCHW convolution by its definition (float64), OIHW filter of in // groups channels."""
    x = np.pad(x.astype("float64"), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    n, c, h, wd = x.shape
    f, cg, kh, kw = w.shape
    oh, ow = (h - dil * (kh - 1) - 1) // stride + 1, (wd - dil * (kw - 1) - 1) // stride + 1
    y = np.zeros((n, f, oh, ow))
    fg = f // groups
    for g in range(groups):
        for ky in range(kh):
            for kx in range(kw):
                patch = x[:, g * cg:(g + 1) * cg, ky * dil:ky * dil + stride * (oh - 1) + 1:stride,
                          kx * dil:kx * dil + stride * (ow - 1) + 1:stride]
                y[:, g * fg:(g + 1) * fg] += np.einsum("nchw,fc->nfhw", patch,
                                                       w[g * fg:(g + 1) * fg, :, ky, kx])
    return y.astype("float32")


def conv_transpose_general(x, w, stride, pad):
    """Each input pixel scatters the kernel times its value; the border `pad` is cropped."""
    n, c, h, wd = x.shape
    _, f, kh, kw = w.shape
    full = np.zeros((n, f, (h - 1) * stride + kh, (wd - 1) * stride + kw))
    for i in range(h):
        for j in range(wd):
            full[:, :, i * stride:i * stride + kh, j * stride:j * stride + kw] += np.einsum(
                "nc,cfhw->nfhw", x[:, :, i, j], w)
    return full[:, :, pad:full.shape[2] - pad, pad:full.shape[3] - pad].astype("float32")


CASES = list(cases())
IDS = [c[0] for c in CASES]


def run_host(lib, inputs, expected):
    out = np.zeros(expected.shape, "float32")
    lib(*inputs, out)
    np.testing.assert_allclose(out, expected, rtol=2e-4, atol=1e-5)


@pytest.mark.parametrize("name,func,inputs,expected", CASES, ids=IDS)
def test_build_without_schedule_matches_numpy(name, func, inputs, expected):
    run_host(ts.build(func, target="c"), inputs, expected)


@pytest.mark.parametrize("name,func,inputs,expected", CASES, ids=IDS)
def test_rules_with_small_vectors_match_numpy(name, func, inputs, expected):
    sch = ts.autoschedule(func, target="c", facts=SMALL)
    run_host(ts.build(sch.mod, target="c"), inputs, expected)


@pytest.mark.parametrize("name,func,inputs,expected", CASES, ids=IDS)
def test_trace_prints_and_replays(name, func, inputs, expected):
    sch = ts.autoschedule(func, target="c", facts=SMALL)
    text = "\n".join(sch.trace.as_python())
    replay = tir.Schedule(func)
    exec(text, {"sch": replay})
    assert ts.ir.structural_equal(replay.mod, sch.mod)
    again = tir.Schedule(func)
    tir.Trace.apply_json_to_schedule(sch.trace.as_json(), again)
    assert ts.ir.structural_equal(again.mod, sch.mod)


def kinds(sch):
    return [line.split("sch.")[1].split("(")[0] for line in sch.trace.as_python()]


def test_matmul_gets_register_tile_packing_and_parallel_outer_loop():
    sch = ts.autoschedule(ops.matmul(128, 128, 128), target="c", facts=SMALL)
    k = kinds(sch)
    for step in ("cache_read", "transform_layout", "cache_write", "split", "reorder",
                 "reverse_compute_at", "vectorize", "unroll", "parallel", "decompose_reduction"):
        assert step in k, step
    script = sch.mod.script()
    assert "T.parallel" in script and "T.vectorized" in script and 'scope="local"' in script


def loops_of(sch, block):
    """The kinds of the loops around `block`: serial, parallel, vectorized, unrolled, ..."""
    return [str(sch.get(loop).kind).split(".")[-1].lower()
            for loop in sch.get_loops(sch.get_block(block))]


def test_conv1d_with_columns_no_vector_divides_gets_a_register_tile():
    x, w = rand(2, 5, 39), rand(6, 5, 3)
    sch = ts.autoschedule(topi_func(topi.nn.conv1d_ncw, x, w), target="c", facts=SMALL)
    k = kinds(sch)
    assert "cache_write" in k and "vectorize" in k and "rfactor" not in k
    # 37 columns in tiles of whole vectors: the last tile partial, bounded by a predicate.
    assert "T.where" in sch.mod.script() and "T.vectorized" in sch.mod.script()


def test_grouped_conv_row_tiles_stay_inside_a_group():
    x, w = rand(1, 12, 9, 16), rand(12, 4, 3, 3)
    func = topi_func(lambda a, b: topi.nn.group_conv2d_nchw(a, b, 1, 1, 1, 3), x, w)
    sch = ts.autoschedule(func, target="c", facts=SMALL)
    assert "cache_write" in kinds(sch)
    # The output channels (4 per group) are split by a factor that divides the group.
    text = "\n".join(sch.trace.as_python())
    first_split = [line for line in sch.trace.as_python() if "sch.split(" in line][0]
    factor = int(first_split.split("factors=[None, ")[1].split("]")[0])
    assert 4 % factor == 0, text


def test_depthwise_conv_is_tiled_one_channel_at_a_time():
    x, w = rand(1, 5, 7, 16), rand(5, 1, 3, 3)
    func = topi_func(lambda a, b: topi.nn.depthwise_conv2d_nchw(a, b, 1, 1, 1), x, w)
    sch = ts.autoschedule(func, target="c", facts=SMALL)
    lines = sch.trace.as_python()
    assert "cache_write" in kinds(sch) and "vectorize" in kinds(sch)
    assert "factors=[None, 1]" in [line for line in lines if "sch.split(" in line][0]


def test_transposed_conv_phases_are_tiled_and_their_copies_stay_scalar():
    x, w = rand(1, 8, 12, 16), rand(8, 8, 4, 4)
    func = topi_func(lambda a, b: topi.nn.conv2d_transpose_nchw(a, b, 2, 1, "float32", 0), x, w)
    sch = ts.autoschedule(func, target="c", facts=SMALL)
    assert "cache_write" in kinds(sch)
    script = sch.mod.script()
    # The per-phase copy of the input is a block of its own (not inlined into the reduction),
    # as is the interleave of the phases; neither is vectorized. The stride divides the kernel:
    # each phase's taps are an affine view of the kernel, read in place (no copy).
    for block in ("data_phases", "compute"):
        assert "vectorized" not in loops_of(sch, block), block
    assert loops_of(sch, "conv2d_transpose_phases_local")[-1] == "vectorized"
    assert 'T.block("kernel_phases")' not in script


def test_transposed_conv_kernel_phases_copied_where_the_stride_leaves_zero_taps():
    # 3x3 taps at stride 2: each phase sums 2 x 2 taps, some beyond the kernel (zeros), so the
    # kernel is copied per phase (a plain copy: the taps are affine, no division), beside the
    # tiled phases.
    x, w = rand(1, 8, 9, 11), rand(8, 6, 3, 3)
    func = topi_func(lambda a, b: topi.nn.conv2d_transpose_nchw(a, b, 2, 1, "float32", 0), x, w)
    sch = ts.autoschedule(func, target="c", facts=SMALL)
    assert 'T.block("kernel_phases")' in sch.mod.script()
    assert loops_of(sch, "conv2d_transpose_phases_local")[-1] == "vectorized"
    run_host(ts.build(sch.mod, target="c"), [x, w], conv_transpose_general(x, w, 2, 1))


def test_epilogue_is_computed_at_the_tile():
    sch = ts.autoschedule(ops.matmul(24, 40, 13, epilogue=True), target="c", facts=SMALL)
    assert "compute_inline" in kinds(sch)
    # bias and relu were inlined into one block; the tile's copy-out became that block, which
    # now sits under the tile loops instead of a second pass over C.
    assert sum(1 for k in kinds(sch) if k == "reverse_compute_at") == 1
    assert 'T.block("relu")' in sch.mod.script()
    assert 'T.block("C_local")' not in sch.mod.script()


def test_elementwise_chain_is_one_loop_nest():
    sch = ts.autoschedule(ops.elementwise_chain((256, 128)), target="c", facts=SMALL)
    script = sch.mod.script()
    assert script.count("T.block(") == 2  # root and the last block, the rest inlined
    assert "T.parallel" in script and "T.vectorized(4)" in script


def test_softmax_rows_are_parallel_and_reductions_vectorized():
    sch = ts.autoschedule(ops.softmax(128, 256), target="c", facts=SMALL)
    k = kinds(sch)
    assert "compute_at" in k and "rfactor" in k and "parallel" in k
    assert "pragma_fast_math" in sch.mod.script()


def _group_norm(shape, groups):
    from tessera import te, topi

    X = te.placeholder(shape, "float32", name="X")
    g = te.placeholder(shape[1:2], "float32", name="g")
    b = te.placeholder(shape[1:2], "float32", name="b")
    Y = topi.nn.group_norm(X, g, b, groups, 1, [2, 3])
    return te.create_prim_func([X, g, b, Y])


def _group_norm_ref(x, g, b, groups, eps=1e-5):
    n, c, h, w = x.shape
    xg = x.reshape(n, groups, -1)
    y = (xg - xg.mean(-1, keepdims=True)) / np.sqrt(xg.var(-1, keepdims=True) + eps)
    return y.reshape(n, c, h, w) * g[:, None, None] + b[:, None, None]


@pytest.mark.parametrize("groups", [2, 8])
def test_row_chain_computes_each_statistic_once(groups):
    # The statistics of group_norm are per (batch, group): the rows of the chain are no more
    # than those, not the (batch, channel, row) of the output, which would compute each
    # statistic again for every channel and row of its group.
    shape = (2, 8, 6, 12)
    f = _group_norm(shape, groups)
    sch = ts.autoschedule(f, target="c", facts=SMALL)
    outer = sch.get(sch.get_loops(sch.get_block("T_norm_sum"))[0])
    # rows of (batch, group), or of the batch with the groups a loop inside (the CPU rule
    # leaves the row unfused to keep the statistics in registers)
    assert outer.extent.value in ({2, 2 * 8} if groups == 8 else {2})
    x, g, b = rand(*shape), rand(8), rand(8)
    y = np.zeros(shape, "float32")
    ts.build(f, target="c")(x, g, b, y)
    np.testing.assert_allclose(y, _group_norm_ref(x, g, b, groups), rtol=1e-4, atol=1e-5)


def test_row_chain_vectorizes_an_image_whose_rows_are_no_whole_vectors():
    # instance_norm over 6 x 6 images on 4-lane vectors: the image rows of 6 are fused into
    # 36 elements, 9 vectors, instead of staying scalar.
    from tessera import te, topi

    shape = (2, 4, 6, 6)
    X = te.placeholder(shape, "float32", name="X")
    g = te.placeholder((4,), "float32", name="g")
    b = te.placeholder((4,), "float32", name="b")
    Y = topi.nn.instance_norm(X, g, b, 1, [2, 3])
    f = te.create_prim_func([X, g, b, Y])
    sch = ts.autoschedule(f, target="c", facts=SMALL)
    inner = sch.get(sch.get_loops(sch.get_block(Y.op.name))[-1])
    assert inner.kind == tir.ForKind.VECTORIZED and inner.extent.value == 4
    x, gv, bv = rand(*shape), rand(4), rand(4)
    y = np.zeros(shape, "float32")
    ts.build(f, target="c")(x, gv, bv, y)
    np.testing.assert_allclose(y, _group_norm_ref(x, gv, bv, 4), rtol=1e-4, atol=1e-5)


def test_injective_row_keeps_its_vectors_in_one_row():
    # one_hot's rows of 20 on 8-lane vectors: fused, a vector would straddle two rows and read
    # I[f // 20] lane by lane; kept apart, each row is 5 vectors of 4 along one row.
    from tessera import te, topi

    idx = te.placeholder((64,), "int32", name="I")
    out = topi.one_hot(idx, 1.0, 0.0, 20, -1, "float32")
    f = te.create_prim_func([idx, out])
    sch = ts.autoschedule(f, target="c", facts={"vector_bits": 256, "cores": 2})
    loops = [sch.get(l) for l in sch.get_loops(sch.get_block(out.op.name))]
    assert [l.extent.value for l in loops] == [64, 5, 4]
    assert loops[-1].kind == tir.ForKind.VECTORIZED
    i = RNG.integers(0, 20, 64).astype("int32")
    y = np.zeros((64, 20), "float32")
    ts.build(f, target="c")(i, y)
    np.testing.assert_array_equal(y, np.eye(20, dtype="float32")[i])


def test_injective_row_of_a_gathered_row():
    # take's rows: A[I[i], j] with j along the vector, not A[I[f // 16], f % 16] per lane
    from tessera import te, topi

    A = te.placeholder((32, 16), "float32", name="A")
    idx = te.placeholder((24,), "int32", name="I")
    out = topi.take(A, idx, axis=0)
    f = te.create_prim_func([A, idx, out])
    sch = ts.autoschedule(f, target="c", facts={"vector_bits": 256, "cores": 2})
    loops = [sch.get(l) for l in sch.get_loops(sch.get_block(out.op.name))]
    assert [l.extent.value for l in loops] == [24, 2, 8]
    a, i = rand(32, 16), RNG.integers(0, 32, 24).astype("int32")
    y = np.zeros((24, 16), "float32")
    ts.build(f, target="c")(a, i, y)
    np.testing.assert_array_equal(y, a[i])


@pytest.mark.parametrize("dtype,lanes", [("int8", 32), ("float32", 8), ("float64", 4)])
def test_injective_row_of_a_value_computed_from_the_iterators(dtype, lanes):
    # eye's j - i == k: kept apart, each vector of a row compares j - i of one row; fused, each
    # vector recomputed i and j from the flat index (a division and a remainder)
    from tessera import te, topi

    out = topi.eye(24, 4 * lanes, 3, dtype=dtype)
    f = te.create_prim_func([out])
    sch = ts.autoschedule(f, target="c", facts={"vector_bits": 256, "cores": 2})
    loops = [sch.get(l) for l in sch.get_loops(sch.get_block(out.op.name))]
    assert [l.extent.value for l in loops] == [24, 4, lanes]
    assert loops[-1].kind == tir.ForKind.VECTORIZED
    y = np.empty((24, 4 * lanes), dtype)
    ts.build(f, target="c")(y)
    np.testing.assert_array_equal(y, np.eye(24, 4 * lanes, 3, dtype=dtype))


def test_injective_values_read_through_their_loads_stay_fused():
    # relu reads its iterators only through A[i, j]: the loops stay fused
    from tessera import te, topi

    A = te.placeholder((24, 64), "int8", name="A")
    out = topi.nn.relu(A)
    f = te.create_prim_func([A, out])
    sch = ts.autoschedule(f, target="c", facts={"vector_bits": 256, "cores": 2})
    loops = [sch.get(l) for l in sch.get_loops(sch.get_block(out.op.name))]
    assert [l.extent.value for l in loops] == [24 * 64 // 32, 32]
    a = RNG.integers(-100, 100, (24, 64)).astype("int8")
    y = np.empty((24, 64), "int8")
    ts.build(f, target="c")(a, y)
    np.testing.assert_array_equal(y, np.maximum(a, 0))


def test_column_sum_vectorizes_across_columns():
    # (an L1 of 1 KB: a row of partial sums, 1 KB, is over half of it, so the columns, not the
    # rows, are cut across the cores; see the test below)
    sch = ts.autoschedule(ops.column_sum(512, 256), target="c", facts=dict(SMALL, l1_bytes=1024))
    assert kinds(sch) == ["get_block", "get_child_blocks", "get_loops", "split", "split",
                          "reorder", "vectorize", "unroll", "parallel", "decompose_reduction"]
    # The rows stream under a chunk of columns: reduction loop outside the column chunk, four
    # rows at a time (unrolled) inside it, so each vector of partial sums is loaded and
    # stored once per four rows.
    script = sch.mod.script()
    assert "for k_0, j_1 in T.grid(128, 32):" in script
    assert "for k_1 in T.unroll(4):" in script


def test_column_sum_cuts_its_rows_across_the_cores():
    # A row of partial sums (1 KB) within half the L1: each core sums whole rows of its half
    # into a local row (rfactor), four rows at a time, and the two rows are summed at the end.
    f = ops.column_sum(512, 256)
    sch = ts.autoschedule(f, target="c", facts=SMALL)
    assert kinds(sch) == ["get_block", "get_child_blocks", "get_loops", "split", "rfactor",
                          "get_loops", "split", "split", "reorder", "vectorize", "unroll",
                          "parallel", "cache_write", "reverse_compute_at", "get_loops", "split",
                          "reorder", "vectorize", "decompose_reduction", "decompose_reduction"]
    script = sch.mod.script()
    assert "for k_0 in T.parallel(2):" in script
    assert "for k_1_1 in T.unroll(4):" in script
    a = RNG.standard_normal((512, 256)).astype("float32")
    y = np.empty(256, "float32")
    ts.build(sch.mod, target="c")(a, y)
    np.testing.assert_allclose(y, a.sum(0), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("which", ["argmax", "argmin"])
@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_arg_extreme_over_columns_takes_two_column_reductions(which, dtype):
    from tessera import te, topi

    # argmax over axis 0: the column maxima, then the search for each column's first index of
    # it. Both stream the rows under a chunk of vector columns (the column-sum rule), each its
    # own parallel loop; no row chain whose "row" would be a column (each step a row apart)
    rng = np.random.default_rng(11)  # its own: the module's RNG feeds the tests after it
    A = te.placeholder((203, 96), dtype, name="A")
    out = getattr(topi, which)(A, axis=0)
    sch = ts.autoschedule(te.create_prim_func([A, out]), target="c", facts=SMALL)
    assert kinds(sch) == ["get_block", "get_child_blocks", "get_loops", "split", "reorder",
                          "vectorize", "parallel", "get_loops", "split", "reorder", "vectorize",
                          "fuse", "parallel", "decompose_reduction", "decompose_reduction"]
    script = sch.mod.script()
    assert script.count("for k0, i1_1 in T.grid(203, 12):") == 1  # the extreme
    assert script.count("for k0, i0_1 in T.grid(203, 12):") == 1  # the index
    assert script.count("T.vectorized(4)") == 4 and "compute_at" not in kinds(sch)
    if dtype == "float32":
        x = rng.standard_normal((203, 96)).astype(dtype)
        x[:, 5] = 1.0  # one value down the column: index 0
        x[7, 9] = x[150, 9] = 50.0 if which == "argmax" else -50.0  # ties: the first
        x[20, 11] = x[40, 11] = np.nan  # the first NaN wins, as numpy
        x[90, 12] = np.nan  # a lone NaN
        x[202, 95] = 99.0 if which == "argmax" else -99.0  # the last row, the last column
    else:
        x = rng.integers(-50, 50, (203, 96)).astype(dtype)
        x[:, 5] = 7
    got = np.zeros(96, "int32")
    ts.build(sch.mod, target="c")(x, got)
    np.testing.assert_array_equal(got, getattr(x, which)(0))
    # odd columns (no whole vectors): still right, with whatever schedule it gets
    B = te.placeholder((37, 13), dtype, name="B")
    func = te.create_prim_func([B, getattr(topi, which)(B, axis=0)])
    y = x[:37, :13].copy()
    got = np.zeros(13, "int32")
    ts.build(func, target="c")(y, got)
    np.testing.assert_array_equal(got, getattr(y, which)(0))


def test_total_reduction_keeps_vector_accumulators_per_thread():
    sch = ts.autoschedule(ops.total_sum(1 << 17), target="c", facts=SMALL)
    assert kinds(sch) == ["get_block", "get_child_blocks", "get_loops", "split", "reorder", "fuse",
                          "rfactor", "get_loops", "split", "reorder", "parallel", "cache_write",
                          "reverse_compute_at", "unroll", "vectorize", "annotate",
                          "decompose_reduction"]
    script = sch.mod.script()
    # 512 KB, more than the L2 cache of the facts (4 KB): the loop of each thread's accumulators
    # prefetches 8 KB ahead, 128 iterations of four 16-byte vectors
    assert '"pragma_prefetch": 128' in script
    # two threads, each with four 4-lane accumulators: 32 partial sums, added at the end
    assert 'S_rf = T.alloc_buffer((32, 1))' in script
    assert "T.parallel(2)" in script and "T.unroll(4)" in script and "T.vectorized(4)" in script
    # each thread accumulates in a local array of its own (registers), copied out at its end
    lowered = ts.lower(sch.mod, target="c").script()
    local = lowered.index('S_rf_local = T.allocate([16], "float32", "local")')
    assert lowered.index("T.parallel(2)") < local
    a = rand(1 << 17)
    out = np.zeros(1, "float32")
    ts.build(sch.mod, target="c")(a, out)
    np.testing.assert_allclose(out, a.sum(keepdims=True, dtype="float64"), rtol=1e-5)
    # a whole-tensor minimum over two reduction axes (topi.min: a 0-d result), integers exact
    from tessera import te, topi

    A = te.placeholder((64, 256), "int32", name="A")
    f = te.create_prim_func([A, topi.min(A)])
    assert "rfactor" in kinds(ts.autoschedule(f, target="c", facts=SMALL))
    x = RNG.integers(-10**6, 10**6, (64, 256), dtype="int32")
    got = np.zeros((), "int32")
    ts.build(f, target="c")(x, got)
    assert got == x.min()
    lib = ts.build(sch.mod, target="c")
    assert "__builtin_prefetch" in lib.get_source()
    # a sum that fits the L2 cache prefetches nothing
    small = ts.autoschedule(ops.total_sum(512), target="c", facts=SMALL)
    assert "rfactor" in kinds(small) and "annotate" not in kinds(small)
    # too short to split into vector accumulators: left as it was
    assert "rfactor" not in kinds(ts.autoschedule(ops.total_sum(6), target="c", facts=SMALL))


def test_row_reduction_keeps_contiguous_vector_accumulators_per_row():
    from tessera import te, topi

    A = te.placeholder((64, 256), "float32", name="A")
    f = te.create_prim_func([A, topi.sum(A, axis=1)])
    script = ts.autoschedule(f, target="c", facts=SMALL).mod.script()
    # four 4-lane accumulators per row, rows first: [row, partial] is contiguous per row
    assert 'A_red_rf = T.alloc_buffer((64, 16))' in script
    assert "T.unroll(4)" in script and "T.vectorized(4)" in script
    a = rand(64, 256)
    out = np.zeros(64, "float32")
    ts.build(f, target="c")(a, out)
    np.testing.assert_allclose(out, a.sum(1), rtol=1e-5)


def test_row_reduction_combines_its_partial_results_in_the_row_loop():
    from tessera import te, topi

    A = te.placeholder((64, 256), "float32", name="A")
    sch = ts.autoschedule(te.create_prim_func([A, topi.max(A, axis=1)]), target="c", facts=SMALL)
    assert "reverse_compute_at" in kinds(sch)
    # one parallel row loop holding the partial results and the block combining them, so the
    # partial results of a row are a local array of that row (registers), not a row of a
    # buffer of every row written back at each step
    script = sch.mod.script()
    assert script.count("T.parallel(") == 1
    assert 'A_red_rf = T.alloc_buffer((64, 16))' in script
    lowered = ts.lower(sch.mod, target="c").script()
    assert "(64, 16)" not in lowered and 'A_red_rf = T.allocate([16], "float32", "global")' in lowered
    a = rand(64, 256)
    out = np.zeros(64, "float32")
    ts.build(sch.mod, target="c")(a, out)
    np.testing.assert_array_equal(out, a.max(1))
    # argmax: a max and a search for its first index, both in the same row loop
    sch = ts.autoschedule(te.create_prim_func([A, topi.argmax(A, axis=1)]), target="c",
                          facts=SMALL)
    assert sch.mod.script().count("T.parallel(") == 1
    # 64 KB of rows, more than the L2 cache of the facts (4 KB): both passes prefetch 8 KB
    # ahead in their streaming loops (128 iterations of four 16-byte vector accumulators)
    assert sch.mod.script().count('"pragma_prefetch": 128') == 2
    a[3, 17] = a[3, 200] = 2.0  # ties: the first index
    idx = np.zeros(64, "int32")
    lib = ts.build(sch.mod, target="c")
    assert "__builtin_prefetch" in lib.get_source()
    lib(a, idx)
    np.testing.assert_array_equal(idx, a.argmax(1))


def test_avx512_facts_prefetch_only_rows_read_twice():
    from tessera import te, topi

    wide = dict(SMALL, vector_bits=512, vector_registers=32)
    # one pass over the stream: the hardware prefetcher alone (measured faster on Zen 4)
    total = ts.autoschedule(ops.total_sum(1 << 17), target="c", facts=wide)
    assert "rfactor" in kinds(total) and "pragma_prefetch" not in total.mod.script()
    A = te.placeholder((64, 256), "float32", name="A")
    rows = ts.autoschedule(te.create_prim_func([A, topi.max(A, axis=1)]), target="c", facts=wide)
    assert "rfactor" in kinds(rows) and "pragma_prefetch" not in rows.mod.script()
    # argmax reads each row twice (its max, then the index): both passes still prefetch, 8 KB
    # ahead in steps of four 64-byte vectors
    arg = ts.autoschedule(te.create_prim_func([A, topi.argmax(A, axis=1)]), target="c",
                          facts=wide)
    assert arg.mod.script().count('"pragma_prefetch": 32') == 2
    a = rand(64, 256)
    a[5, 7] = a[5, 100] = 3.0
    a[9, 30] = np.nan
    idx = np.zeros(64, "int32")
    ts.build(arg.mod, target="c")(a, idx)
    np.testing.assert_array_equal(idx, a.argmax(1))
    out = np.zeros(64, "float32")
    b = rand(64, 256)
    ts.build(rows.mod, target="c")(b, out)
    np.testing.assert_array_equal(out, b.max(1))


def test_dense_packs_its_transposed_operand_into_panels():
    from tessera import te, topi

    A = te.placeholder((64, 48), "float32", name="A")
    B = te.placeholder((32, 48), "float32", name="B")
    f = te.create_prim_func([A, B, topi.nn.dense(A, B)])
    sch = ts.autoschedule(f, target="c", facts=SMALL)
    script = sch.mod.script()
    # B[j, k] becomes panels B_global[j // NR, k, j % NR]: the register tile's vectors of j are
    # contiguous loads, not gathers
    assert "B_global[v0 // 8, v1, v0 % 8] = B[v0, v1]" in script
    a, b = rand(64, 48), rand(32, 48)
    out = np.zeros((64, 32), "float32")
    ts.build(sch.mod, target="c")(a, b, out)
    np.testing.assert_allclose(out, a @ b.T, rtol=1e-5)


def test_target_facts_are_detected_and_overridable():
    facts = ts.autoschedule.target_facts("c")
    for key in ("vector_bits", "vector_registers", "cores", "l1_bytes", "l1_ways", "l2_bytes",
                "l3_bytes"):
        assert facts[key] > 0
    assert facts["vector_bits"] in (128, 256, 512)
    assert ts.autoschedule.target_facts("c", {"vector_bits": 256, "cores": 3})["cores"] == 3
    assert ts.autoschedule.target_facts("cuda")["warp_size"] == 32
    with pytest.raises(ValueError, match="unknown target fact 'lanes'"):
        ts.autoschedule.target_facts("c", {"lanes": 4})
    with pytest.raises(ValueError, match="must be positive"):
        ts.autoschedule.target_facts("c", {"cores": 0})
    with pytest.raises(ValueError, match="not 'dsl'"):
        ts.autoschedule(ops.total_sum(8), target="dsl")
    with pytest.raises(TypeError, match="must be an int"):
        ts.autoschedule(ops.total_sum(8), target="c", facts={"cores": "two"})


def test_vector_width_override_changes_the_schedule():
    f = ops.elementwise_chain((1024,))
    full = {"vector_bits": 512, "stream_vector_bits": 0, "cores": 1}
    wide = ts.autoschedule(f, target="c", facts=full).mod.script()
    narrow = ts.autoschedule(f, target="c", facts={"vector_bits": 128, "cores": 1}).mod.script()
    assert "T.vectorized(16)" in wide and "T.vectorized(4)" in narrow


def _elementwise(dtype, fn, n=4096):
    from tessera import te

    A = te.placeholder((n,), dtype, name="A")
    B = te.placeholder((n,), dtype, name="B")
    return te.create_prim_func([A, B, te.compute((n,), lambda i: fn(A[i], B[i]), name="C")])


@pytest.mark.parametrize("dtype", ["float32", "int32", "int8"])
def test_memory_bound_elementwise_takes_stream_vectors(dtype):
    # With AVX-512 facts capped for streaming (stream_vector_bits=256, the host default where
    # AVX-512 is detected), a multiply streams in 32-byte vectors; without the cap, 64-byte ones.
    f = _elementwise(dtype, lambda a, b: a * b)
    bits = np.dtype(dtype).itemsize * 8
    capped = ts.autoschedule(f, target="c", facts={"vector_bits": 512, "stream_vector_bits": 256,
                                                    "cores": 1})
    full = ts.autoschedule(f, target="c", facts={"vector_bits": 512, "stream_vector_bits": 0,
                                                  "cores": 1})
    def trace(lanes):
        return ['b0 = sch.get_block(name="root", func_name="main")',
                "b1, = sch.get_child_blocks(block_or_loop=b0)",
                "l2, = sch.get_loops(block=b1)",
                f"l3, l4 = sch.split(loop=l2, factors=[None, {lanes}], preserve_unit_iters=True, "
                "disable_predication=False)",
                "sch.vectorize(loop=l4)"]

    # (two int8 inputs into int8: 16-byte vectors, CombinesByteStreams)
    assert capped.trace.as_python() == trace(128 // bits if dtype == "int8" else 256 // bits)
    assert full.trace.as_python() == trace(512 // bits)
    lo, hi = (-100, 100) if dtype == "int8" else (-1000, 1000)
    a = RNG.integers(lo, hi, 4096).astype(dtype)
    b = RNG.integers(lo, hi, 4096).astype(dtype)
    for sch in (capped, full):
        out = np.zeros(4096, dtype)
        ts.build(sch.mod, target="c")(a, b, out)
        np.testing.assert_array_equal(out, a * b)


CAPPED = {"vector_bits": 512, "stream_vector_bits": 256, "cores": 1}


@pytest.mark.parametrize("dtype, lanes", [("float32", 16), ("int32", 16), ("int8", 32)])
def test_one_input_copies_keep_the_full_vector_unless_8_bit(dtype, lanes):
    # relu reads one input: full vectors for 32-bit elements; 8-bit ones take 256 bits (32
    # lanes) all the same.
    from tessera import te, topi

    A = te.placeholder((64, 128), dtype, name="A")
    sch = ts.autoschedule(te.create_prim_func([A, topi.nn.relu(A)]), target="c", facts=CAPPED)
    assert f"T.vectorized({lanes})" in sch.mod.script()
    a = RNG.integers(-100, 100, (64, 128)).astype(dtype)
    out = np.zeros((64, 128), dtype)
    ts.build(sch.mod, target="c")(a, out)
    np.testing.assert_array_equal(out, np.maximum(a, 0))


def test_strided_reads_keep_the_full_vector():
    # B read across its rows (a transpose) is no stream: 16 lanes, not 8.
    from tessera import te

    A = te.placeholder((64, 64), "float32", name="A")
    B = te.placeholder((64, 64), "float32", name="B")
    C = te.compute((64, 64), lambda i, j: A[i, j] + B[j, i], name="C")
    sch = ts.autoschedule(te.create_prim_func([A, B, C]), target="c", facts=CAPPED)
    assert "T.vectorized(16)" in sch.mod.script()
    a, b = rand(64, 64), rand(64, 64)
    out = np.zeros((64, 64), "float32")
    ts.build(sch.mod, target="c")(a, b, out)
    np.testing.assert_allclose(out, a + b.T, rtol=1e-6)


def test_elementwise_math_calls_keep_the_full_vector():
    # exp's vector routine ran 15-30% slower on half-width vectors: a block that calls a math
    # function takes vector_bits whatever stream_vector_bits says.
    f = _elementwise("float32", lambda a, b: ops._exp(a) + b)
    sch = ts.autoschedule(f, target="c", facts=CAPPED)
    assert "T.vectorized(16)" in sch.mod.script()
    a, b = rand(4096), rand(4096)
    out = np.zeros(4096, "float32")
    ts.build(sch.mod, target="c")(a, b, out)
    np.testing.assert_allclose(out, np.exp(a) + b, rtol=1e-5)


BITS_OPS = {"bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or,
            "bitwise_xor": np.bitwise_xor, "left_shift": np.left_shift,
            "right_shift": np.right_shift}


def _bits_operands(name, dtype, shape):
    bits = np.dtype(dtype).itemsize * 8
    info = np.iinfo(dtype)
    lo = 0 if name == "left_shift" else info.min
    a = RNG.integers(lo, info.max, shape, endpoint=True, dtype=dtype)
    if name.endswith("shift"):  # amounts inside the width (C leaves the others undefined)
        return a, RNG.integers(0, bits, shape, dtype=dtype)
    return a, RNG.integers(info.min, info.max, shape, endpoint=True, dtype=dtype)


@pytest.mark.parametrize("name", sorted(BITS_OPS))
@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "int32", "int64"])
def test_bitwise_operations_and_shifts_stream_like_arithmetic(name, dtype):
    # Integer bitwise operations and shifts are single vector instructions, no math calls: two
    # inputs into one output stream in vectors of stream_vector_bits (32 lanes of uint8, where
    # they took 64 as exp does: bitwise_or uint8 2048^2 0.154 -> 0.147 ms).
    from tessera import te, topi

    A = te.placeholder((64, 128), dtype, name="A")
    B = te.placeholder((64, 128), dtype, name="B")
    f = te.create_prim_func([A, B, getattr(topi, name)(A, B)])
    # (two 8-bit inputs into 8 bits: 16-byte vectors, CombinesByteStreams: bitwise_or uint8
    # 2048^2 in the schedule's nest 0.153 ms against 0.160 in 32 lanes, session 18 topi18a)
    bits = np.dtype(dtype).itemsize * 8
    lanes = 16 if bits == 8 else 256 // bits
    sch = ts.autoschedule(f, target="c", facts=CAPPED)
    assert f"T.vectorized({lanes})" in sch.mod.script()
    a, b = _bits_operands(name, dtype, (64, 128))
    out = np.zeros((64, 128), dtype)
    ts.build(sch.mod, target="c")(a, b, out)
    np.testing.assert_array_equal(out, BITS_OPS[name](a, b))


@pytest.mark.parametrize("name", sorted(BITS_OPS))
@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "int64"])
@pytest.mark.parametrize("shape", [(37, 129), (3, 1000), (8191,)])
def test_bitwise_operations_and_shifts_match_numpy_on_odd_shapes(name, dtype, shape):
    # The host's own facts, shapes no vector divides (tails) and a row count no chunk divides.
    from tessera import te, topi

    A = te.placeholder(shape, dtype, name="A")
    B = te.placeholder(shape, dtype, name="B")
    lib = ts.build(te.create_prim_func([A, B, getattr(topi, name)(A, B)]), target="c")
    a, b = _bits_operands(name, dtype, shape)
    out = np.zeros(shape, dtype)
    lib(a, b, out)
    np.testing.assert_array_equal(out, BITS_OPS[name](a, b))


def test_bitwise_value_read_by_two_blocks_is_inlined_into_both():
    # No math call: a bitwise value read by two consumer blocks is computed in each of them (an
    # exp would be computed once into a buffer of its own).
    from tessera import te

    A = te.placeholder((256,), "int32", name="A")
    B = te.placeholder((256,), "int32", name="B")
    X = te.compute((256,), lambda i: A[i] ^ B[i], name="X")
    C = te.compute((256,), lambda i: X[i] * 3, name="C")
    D = te.compute((256,), lambda i: X[255 - i] + 1, name="D")
    sch = ts.autoschedule(te.create_prim_func([A, B, C, D]), target="c", facts=CAPPED)
    assert 'T.block("X")' not in sch.mod.script()
    a = RNG.integers(-1000, 1000, 256).astype("int32")
    b = RNG.integers(-1000, 1000, 256).astype("int32")
    c, d = np.zeros(256, "int32"), np.zeros(256, "int32")
    ts.build(sch.mod, target="c")(a, b, c, d)
    np.testing.assert_array_equal(c, (a ^ b) * 3)
    np.testing.assert_array_equal(d, (a ^ b)[::-1] + 1)


def test_stream_vector_bits_is_a_host_fact_with_checked_overrides():
    facts = ts.autoschedule.target_facts("c")
    assert facts["stream_vector_bits"] == (256 if facts["vector_bits"] == 512 else 0)
    assert ts.autoschedule.target_facts("c", {"stream_vector_bits": 0})["stream_vector_bits"] == 0
    with pytest.raises(ValueError, match="'stream_vector_bits' must be a multiple of 32, got 100"):
        ts.autoschedule.target_facts("c", {"stream_vector_bits": 100})
    with pytest.raises(ValueError, match="must be 0 or more"):
        ts.autoschedule.target_facts("c", {"stream_vector_bits": -1})


# ---- the pass ----

def test_pass_runs_in_the_begin_stage_of_build():
    lw = ts.lower.StageLowerer(ops.elementwise_chain((4096,)), target="c", auto_schedule=True)
    lw.run_to("begin")
    assert ("begin", "tir.AutoSchedule") in [(t[0], t[1]) for t in lw.timings]
    assert "T.parallel" in lw.mod.script() or "T.vectorized" in lw.mod.script()
    # ts.lower leaves functions as they are unless asked.
    plain = ts.lower(ops.elementwise_chain((4096,)), target="c", stage="begin")
    assert "T.vectorized" not in plain.script()


def test_pass_can_be_disabled():
    f = ops.elementwise_chain((1 << 15,))
    assert "#pragma omp parallel" in ts.build(f, target="c").get_source() or \
        ts.autoschedule.target_facts("c")["cores"] == 1
    with PassContext(disabled_pass=["tir.AutoSchedule"]):
        src = ts.build(f, target="c").get_source()
    assert "#pragma omp" not in src and "float32x" not in src
    with PassContext(config={"tir.auto_schedule": False}):
        assert "float32x" not in ts.build(f, target="c").get_source()


def test_pass_is_dumped(tmp_path):
    with PassContext(config={"tessera.dump_ir": str(tmp_path)}):
        ts.build(ops.elementwise_chain((64,)), target="c")
    names = [n for _, _, files in os.walk(tmp_path) for n in files]
    assert any("tir.AutoSchedule" in n for n in names), names


def test_pass_takes_fact_overrides_from_the_config():
    f = ops.elementwise_chain((1024,))
    with PassContext(config={"tir.AutoSchedule": {"vector_bits": 128, "cores": 1}}):
        mod = ts.lower(f, target="c", stage="begin", auto_schedule=True)
    assert "T.vectorized(4)" in mod.script()


@T.prim_func
def split_by_hand(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    for i0, i1 in T.grid(8, 8):
        with T.block("B"):
            vi = T.axis.spatial(64, i0 * 8 + i1)
            B[vi] = A[vi] * T.float32(2)


@T.prim_func
def unscheduled(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    for i in range(64):
        with T.block("B"):
            vi = T.axis.spatial(64, i)
            B[vi] = A[vi] * T.float32(2)


def test_hand_scheduled_functions_are_left_alone():
    ok, why = ts.autoschedule.carries_no_schedule(split_by_hand)
    assert not ok and "are not one per iterator" in why
    assert ts.autoschedule.carries_no_schedule(unscheduled) == (True, "")
    before = ts.lower(split_by_hand, target="c", stage="begin")
    after = ts.lower(split_by_hand, target="c", stage="begin", auto_schedule=True)
    assert ts.ir.structural_equal(before, after)
    sch = tir.Schedule(unscheduled)
    sch.parallel(sch.get_loops(sch.get_block("B"))[0])
    ok, why = ts.autoschedule.carries_no_schedule(sch.mod["main"])
    assert not ok and "parallel" in why
    assert len(ts.autoschedule(sch.mod, target="c").trace) == 0


def test_function_attribute_opts_out():
    f = unscheduled.with_attr("tessera.auto_schedule", False)
    assert ts.autoschedule.carries_no_schedule(f)[0] is False
    assert len(ts.autoschedule(f, target="c", facts={"cores": 2}).trace) == 0


@pytest.mark.parametrize("epilogue", [False, True])
def test_matmul_partial_row_tile(epilogue):
    # 8-lane vectors and 16 registers (AVX2): the 6 x 16 tile of 12 accumulators, though 6 does
    # not divide 100 rows: 16 full tiles and one of 4 rows, the last in a loop of its own.
    facts = {"vector_bits": 256, "vector_registers": 16, "cores": 2}
    func = ops.matmul(100, 64, 16, epilogue=epilogue)
    sch = ts.autoschedule(func, target="c", facts=facts)
    splits = [line for line in sch.trace.as_python() if "sch.split" in line]
    assert "factors=[None, 6]" in splits[0]
    lowered = ts.lower(sch.mod, target="c", stage="loop").script()
    assert "if " not in lowered
    a, b, bias = rand(100, 16), rand(16, 64), rand(64)
    expected = np.maximum(a @ b + bias, 0) if epilogue else a @ b
    out = np.zeros((100, 64), "float32")
    ts.build(sch.mod, target="c")(*([a, b, bias] if epilogue else [a, b]), out)
    np.testing.assert_allclose(out, expected, rtol=1e-4)


@pytest.mark.parametrize("k,rows", [(8, 6), (32, 4)])
def test_batch_matmul_partial_row_tile_where_the_reduction_is_short(k, rows):
    # AVX2 facts: a batched product whose reduction (8) is no longer than a row of Y (16) gets
    # the 6 x 16 tile though 6 does not divide 50 rows (rows outside the columns; the tail in a
    # loop of its own, no tests left); with a longer reduction (32) the 4 x 16 tile that divides.
    facts = {"vector_bits": 256, "vector_registers": 16, "cores": 2}
    func = ops.batch_matmul(2, 1, 52 if rows == 4 else 50, k, 16)
    sch = ts.autoschedule(func, target="c", facts=facts)
    splits = [line for line in sch.trace.as_python() if "sch.split" in line]
    assert f"factors=[None, {rows}]" in splits[0]
    lowered = ts.lower(sch.mod, target="c", stage="loop").script()
    assert "if " not in lowered
    m = 52 if rows == 4 else 50
    a, b = rand(2, 1, m, k), rand(2, 1, k, 16)
    out = np.zeros((2, 1, m, 16), "float32")
    ts.build(sch.mod, target="c")(a, b, out)
    np.testing.assert_allclose(out, a @ b, rtol=1e-4)


@pytest.mark.parametrize("dense", [False, True])
def test_product_packs_each_column_panel_inside_its_parallel_column_loop(dense):
    from tessera import te, topi

    A = te.placeholder((192, 128), "float32", name="A")
    B = te.placeholder((96, 128) if dense else (128, 96), "float32", name="B")
    C = topi.nn.dense(A, B) if dense else topi.nn.matmul(A, B)
    f = te.create_prim_func([A, B, C])
    sch = ts.autoschedule(f, target="c", facts=SMALL)
    assert "compute_at" in kinds(sch)  # (the product is large enough for threads)
    script = sch.mod.script()
    # the panel of the column loop is packed inside it, before the row tiles use it
    par = script.index("T.parallel")
    assert par < script.index('T.block("B_global")') < script.index("for i_0")
    assert script.count("T.parallel") == 1
    lib = ts.build(sch.mod, target="c")
    assert lib.get_source().count("#pragma omp parallel") == 1
    a, b = rand(192, 128), rand(*[int(s) for s in B.shape])
    out = np.zeros((192, 96), "float32")
    lib(a, b, out)
    np.testing.assert_allclose(out, a @ b.T if dense else a @ b, rtol=1e-5)


def test_window_nests_are_parallel_over_their_outputs():
    # Adaptive pooling's reduce windows depend on the output point (a nest of blocks): the rule
    # fuses the outer spatial loops and runs them in parallel; the nest inside stays serial.
    x = ts.te.placeholder((1, 16, 40, 40), "float32", name="x")
    f = ts.te.create_prim_func([x, ts.topi.nn.adaptive_pool(x, (12, 30), "max")])
    assert ts.autoschedule.carries_no_schedule(f) == (True, "")
    with PassContext(config={"tir.AutoSchedule": {"cores": 4}}):
        mod = ts.lower(f, target="c", stage="begin", auto_schedule=True)
        lib = ts.build(f, target="c")
    assert "for i0_i1_i2_i3_fused in T.parallel(5760):" in mod.script()
    a = np.random.default_rng(0).standard_normal((1, 16, 40, 40)).astype("float32")
    out = ts.nd.empty((1, 16, 12, 30), "float32")
    lib(ts.nd.array(a), out)
    rows = [(i * 40 // 12, -(-(i + 1) * 40 // 12)) for i in range(12)]
    cols = [(j * 40 // 30, -(-(j + 1) * 40 // 30)) for j in range(30)]
    want = np.array([[a[0, :, r0:r1, c0:c1].max(axis=(1, 2)) for c0, c1 in cols] for r0, r1 in rows])
    np.testing.assert_array_equal(out.numpy()[0], want.transpose(2, 0, 1))


def test_columns_not_a_multiple_of_the_vector_take_half_width_tiles():
    # 16-lane facts (AVX-512) and 24 output columns: no tile of whole 16-lane vectors divides
    # them, 8-lane ones do; the conv2d is register-tiled with those (it was left as one
    # parallel loop nest) and still matches numpy when built for this host.
    wide = {"vector_bits": 512, "vector_registers": 32, "cores": 2}
    x, w = rand(1, 4, 12, 26), rand(16, 4, 3, 3)
    func = ops.conv2d_nchw(1, 4, 12, 26, 16)
    sch = ts.autoschedule(func, target="c", facts=wide)
    trace = sch.trace.as_python()
    k = kinds(sch)
    for step in ("cache_write", "split", "reorder", "vectorize", "unroll", "decompose_reduction"):
        assert step in k, (step, trace)
    splits = [line for line in trace if "sch.split(" in line]
    assert any("factors=[None, 8]" in line for line in splits), trace
    assert not any("factors=[None, 16]" in line for line in splits), trace
    run_host(ts.build(sch.mod, target="c"), [x, w], conv_ref(x, w))


@pytest.mark.parametrize("which", ["sum", "argmax"])
def test_row_partials_combine_as_a_tree(which):
    # A row of 512 in 4 vectors of partial results (16-lane facts): the 64 partials are first
    # combined vector by vector (a second rfactor, vectorized), then the 16 lanes; argmax's two
    # row reductions (the max, then its first index) each get the tree.
    from tessera import te, topi

    # (argmax: rows of 256, which it reads in two passes; longer ones it searches by blocks)
    wide = {"vector_bits": 512, "vector_registers": 32, "cores": 2}
    n = 512 if which == "sum" else 256
    a = te.placeholder((6, n), "float32", name="a")
    out = topi.sum(a, axis=1) if which == "sum" else topi.argmax(a, axis=1)
    func = te.create_prim_func([a, out])
    sch = ts.autoschedule(func, target="c", facts=wide)
    k = kinds(sch)
    assert k.count("rfactor") == (2 if which == "sum" else 4), sch.trace.as_python()
    # its own generator: data shared with the other tests changes when a test is added
    x = np.random.default_rng(11).standard_normal((6, n)).astype("float32")
    x[3, 100] = x[3, 200] = x[3].max() + 1  # ties: argmax keeps the first
    got = np.zeros(6, "float32" if which == "sum" else "int32")
    ts.build(sch.mod, target="c")(x, got)
    if which == "sum":
        # a reordered float32 sum of 512 terms: absolute error up to a few 1e-5 near zero
        np.testing.assert_allclose(got, x.sum(1), rtol=1e-5, atol=1e-4)
    else:
        np.testing.assert_array_equal(got, x.argmax(1))


def test_a_reduction_along_a_spatial_iterator_of_its_row_vectorizes_that_iterator():
    # Each lane's maximum over a block's vectors (the loads run along the lane, not the
    # reduction): the reduction loop goes outside the lanes, which are vectorized (vertical
    # vector maxima, no lanes combined). The sum of those maxima, over blocks x lanes, has an
    # inner loop of one vector: the two reduction loops are fused before they are cut into
    # vector accumulators. Nothing that reads the row's own buffer prefetches.
    from tessera import te

    wide = {"vector_bits": 512, "vector_registers": 32, "cores": 2, "l2_bytes": 4096}
    A = te.placeholder((6, 512), "float32", name="A")
    k = te.reduce_axis((0, 8), name="k")
    part = te.compute((6, 4, 16), lambda i, b, l: te.max(A[i, b * 128 + k * 16 + l], axis=k),
                      name="part")
    b = te.reduce_axis((0, 4), name="b")
    lane = te.reduce_axis((0, 16), name="lane")
    out = te.compute((6,), lambda i: te.sum(part[i, b, lane], axis=[b, lane]), name="out")
    sch = ts.autoschedule(te.create_prim_func([A, out]), target="c", facts=wide)
    k = kinds(sch)
    # (the sum's one vector of 16 partial results is then folded to 8 and 4 lanes: two more)
    assert "reorder" in k and "fuse" in k and k.count("rfactor") == 4, sch.trace.as_python()
    script = sch.mod.script()
    assert "pragma_prefetch" not in script
    # part's update: the reduction loop, then its 16 lanes as one vector
    update = script.index('T.block("part_update")')
    loops = script[:update].rsplit("for ", 2)[1:]
    assert loops[0].startswith("ax3, ax2_0 in T.grid(8, 1)"), loops
    assert "T.vectorized(16)" in loops[1], loops
    x = rand(6, 512)
    got = np.zeros(6, "float32")
    ts.build(sch.mod, target="c")(x, got)
    np.testing.assert_allclose(got, x.reshape(6, 4, 8, 16).max(axis=2).sum(axis=(1, 2)), rtol=1e-5)


@pytest.mark.parametrize("bits", [512, 256])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_argmax_of_long_rows_reads_the_row_once_then_one_block(dtype, bits):
    # (the block maxima are one vector of lanes on AVX-512 in both types, so their search has
    # an inner loop shorter than the accumulators, fused with the loop over the blocks)
    from tessera import te, topi

    wide = {"vector_bits": bits, "vector_registers": 32, "cores": 2, "l2_bytes": 4096}
    A = te.placeholder((8, 1024), dtype, name="A")
    sch = ts.autoschedule(te.create_prim_func([A, topi.argmax(A, axis=1)]), target="c",
                          facts=wide)
    script = sch.mod.script()
    assert script.count("T.parallel(") == 1
    # the block maxima (vertical vectors) prefetch only where a one-pass stream does (not on
    # AVX-512); the reductions over them read a buffer of the row, and the search of one block
    # reads a window whose address is a loaded value: neither prefetches
    assert script.count("pragma_prefetch") == (1 if bits < 512 else 0)
    if bits < 512:
        blocks = script[script.index('T.block("A_blocks'):]
        assert blocks.index("pragma_prefetch") < blocks.index('T.block("A_extreme')
    assert "reorder" in kinds(sch) and kinds(sch).count("fuse") == 2, sch.trace.as_python()
    x = rand(8, 1024).astype(dtype)
    x[2, 300] = x[2, 900] = 9.0  # ties in two blocks: the first
    x[5, 1023] = np.nan
    got = np.zeros(8, "int32")
    ts.build(sch.mod, target="c")(x, got)
    np.testing.assert_array_equal(got, x.argmax(1))


def test_a_pooling_window_keeps_its_reduction_loops():
    # A 2 x 2 window is too short to vectorize even fused: its two reduction loops stay as
    # they are (fusing them left a loop of 4 with its first steps peeled off)
    from tessera import te, topi

    wide = {"vector_bits": 512, "vector_registers": 32, "cores": 2}
    x = te.placeholder((1, 16, 112, 112), "float32", name="x")
    pool = topi.nn.pool2d(x, (2, 2), (2, 2), (1, 1), (0, 0, 0, 0), "max")
    sch = ts.autoschedule(te.create_prim_func([x, pool]), target="c", facts=wide)
    assert kinds(sch).count("fuse") == 1, sch.trace.as_python()  # the parallel outer loops
    a = rand(1, 16, 112, 112)
    got = np.zeros((1, 16, 56, 56), "float32")
    ts.build(sch.mod, target="c")(a, got)
    np.testing.assert_array_equal(got, a.reshape(1, 16, 56, 2, 56, 2).max(axis=(3, 5)))


def test_argmax_row_search_calls_run_in_parallel_without_vectors():
    # topi.argmax of int64 rows after tir.ArgExtremeRows (as ts.build runs it before the
    # automatic schedule): one call a row of the one-pass search, reading the row through its
    # address; the calls are spread over threads by the elements they read (not by their
    # number: 64 rows of 2048), and not vectorized (the calls would run lane by lane)
    from tessera import te, topi

    def rows(A):
        func = te.create_prim_func([A, topi.argmax(A, axis=1)])
        return ts.transform.Pass("tir.ArgExtremeRows")(func)

    facts = {"vector_bits": 512, "vector_registers": 32, "cores": 2}
    A = te.placeholder((64, 2048), "int64", name="A")
    sch = ts.autoschedule(rows(A), target="c", facts=facts)
    steps = [k for k in kinds(sch) if not k.startswith("get_")]
    assert steps == ["parallel"], sch.trace.as_python()
    a = RNG.integers(-100, 100, (64, 2048))
    a[7, [30, 900]] = 500  # ties: the first
    idx = np.zeros(64, "int32")
    ts.build(sch.mod, target="c")(a, idx)
    np.testing.assert_array_equal(idx, a.argmax(1))
    # 16 rows of 600 elements: too little work for threads
    B = te.placeholder((16, 600), "int64", name="B")
    assert "tessera_argmax_row_int64" in rows(B).script()
    small = ts.autoschedule(rows(B), target="c", facts=facts)
    assert [k for k in kinds(small) if not k.startswith("get_")] == [], small.trace.as_python()
