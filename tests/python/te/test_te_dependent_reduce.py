"""te.create_prim_func of reductions whose reduce domains depend on other axes (a window per
output point): one nested block per level of dependence, as TVM builds them."""

import numpy as np
import pytest

import tessera as ts
from tessera import te, tir
from tessera.error import TesseraValueError
from tessera.script import tir as T


def _run(func, inputs, out_shape):
    lib = ts.build(func, target="c")
    out = ts.nd.empty(out_shape, "float32")
    lib(*[ts.nd.array(a) for a in inputs], out)
    return out.numpy()


def _prefix_sum():
    x = te.placeholder((6, 6), "float32", name="x")

    def fcompute(i):
        r = te.reduce_axis((0, i + 1), name="r")
        return te.sum(x[i, r], axis=r)

    return x, te.compute((6,), fcompute, name="y")


@T.prim_func
def prefix_sum_expected(x: T.Buffer((6, 6), "float32"), y: T.Buffer((6,), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    for i in range(6):
        with T.block("y_l1"):
            v_i = T.axis.spatial(6, i)
            T.reads(x[v_i, 0:v_i + 1])
            T.writes(y[v_i])
            for r in range(v_i + 1):
                with T.block("y"):
                    v_i_1 = T.axis.spatial((v_i, v_i + 1), v_i)
                    v_r = T.axis.reduce(v_i + 1, r)
                    T.reads(x[v_i_1, v_r])
                    T.writes(y[v_i_1])
                    with T.init():
                        y[v_i_1] = T.float32(0)
                    y[v_i_1] = y[v_i_1] + x[v_i_1, v_r]


def test_a_window_per_row_is_one_outer_block_per_row():
    x, y = _prefix_sum()
    func = te.create_prim_func([x, y])
    ts.ir.assert_structural_equal(func, prefix_sum_expected)
    assert tir.Schedule(func, debug_mask="all") is not None  # the schedule's checks accept it
    ts.ir.assert_structural_equal(func, ts.script.from_source(func.script()))
    a = np.random.default_rng(0).standard_normal((6, 6)).astype("float32")
    want = np.array([a[i, :i + 1].sum() for i in range(6)], "float32")
    np.testing.assert_allclose(_run(func, [a], (6,)), want, rtol=1e-5)


def test_two_levels_of_dependence_nest_two_reduction_blocks():
    x = te.placeholder((5, 5, 5), "float32", name="x")

    def fcompute(i):
        r1 = te.reduce_axis((0, i), name="r1")
        r2 = te.reduce_axis((0, r1), name="r2")
        return te.sum(x[i, r1, r2], axis=[r1, r2])

    y = te.compute((5,), fcompute, name="y")
    func = te.create_prim_func([x, y])
    text = func.script()
    # The outer block (spatial) sets the identity once; the middle one (over r1) and the leaf
    # (over r2) only update. (TVM's form, an init in each reduction block, would reset the sum
    # at every r1: the leaf's rebound r1 is always at the min of its one-point domain.)
    assert text.count('with T.block("y') == 3
    assert "with T.init():" not in text
    assert "y[v_i] = T.float32(0.0)" in text
    assert tir.Schedule(func, debug_mask="all") is not None
    assert "T.axis.reduce(v_i, r1)" in text and "T.axis.reduce((v_r1, v_r1 + 1), v_r1)" in text
    ts.ir.assert_structural_equal(func, ts.script.from_source(text))
    a = np.random.default_rng(1).standard_normal((5, 5, 5)).astype("float32")
    want = np.array([sum(a[i, p, q] for p in range(i) for q in range(p)) for i in range(5)],
                    "float32")
    np.testing.assert_allclose(_run(func, [a], (5,)), want, rtol=1e-5, atol=1e-6)


def test_a_max_over_a_shifted_window():
    x = te.placeholder((4, 9), "float32", name="x")

    def fcompute(i, j):
        r = te.reduce_axis((j, 2 * j + 1), name="r")  # [j, 2j]: min and extent both depend
        return te.max(x[i, r], axis=r)

    y = te.compute((4, 3), fcompute, name="y")
    func = te.create_prim_func([x, y])
    ts.ir.assert_structural_equal(func, ts.script.from_source(func.script()))
    a = np.random.default_rng(2).standard_normal((4, 9)).astype("float32")
    want = np.stack([a[:, j:2 * j + 1].max(axis=1) for j in range(3)], axis=1)
    np.testing.assert_allclose(_run(func, [a], (4, 3)), want)


def test_a_domain_reading_another_computes_axis_is_refused():
    x = te.placeholder((4, 4), "float32", name="x")
    outer = {}

    def first(i):
        outer["i"] = i
        return x[i, 0]

    te.compute((4,), first, name="first")

    def bad(j):
        r = te.reduce_axis((0, outer["i"]), name="r")
        return te.sum(x[j, r], axis=r)

    with pytest.raises(TesseraValueError, match="depends on axis 'i'"):
        te.compute((4,), bad, name="bad")


def test_windows_that_may_be_empty_still_set_every_output():
    x = te.placeholder((5, 5), "float32", name="x")

    def fcompute(i):
        r = te.reduce_axis((0, i), name="r")  # empty at i == 0
        return te.sum(x[i, r], axis=r)

    y = te.compute((5,), fcompute, name="y")
    func = te.create_prim_func([x, y])

    @T.prim_func
    def expected(x: T.Buffer((5, 5), "float32"), y: T.Buffer((5,), "float32")):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        for i in range(5):
            with T.block("y_l1"):
                v_i = T.axis.spatial(5, i)
                T.reads(x[v_i, 0:v_i])
                T.writes(y[v_i])
                y[v_i] = T.float32(0)
                for r in range(v_i):
                    with T.block("y"):
                        v_i_1 = T.axis.spatial((v_i, v_i + 1), v_i)
                        v_r = T.axis.reduce(v_i, r)
                        T.reads(y[v_i_1], x[v_i_1, v_r])
                        T.writes(y[v_i_1])
                        y[v_i_1] = y[v_i_1] + x[v_i_1, v_r]

    ts.ir.assert_structural_equal(func, expected)
    a = np.random.default_rng(3).standard_normal((5, 5)).astype("float32")
    out = ts.nd.array(np.full((5,), np.nan, "float32"))
    ts.build(func, target="c")(ts.nd.array(a), out)
    want = np.array([a[i, :i].sum() for i in range(5)], "float32")
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-6)


def test_a_fixed_reduce_axis_beside_a_window_moves_inside_the_outer_block():
    # The fixed axis r0 would sit in the outer block in TVM's form, whose leaf init runs again
    # for each of its points (summing only the last row): the identity is set once instead.
    x = te.placeholder((4, 3, 5), "float32", name="x")

    def fcompute(i):
        r0 = te.reduce_axis((0, 3), name="r0")
        r1 = te.reduce_axis((0, i + 2), name="r1")
        return te.sum(x[i, r0, r1], axis=[r0, r1])

    y = te.compute((4,), fcompute, name="y")
    func = te.create_prim_func([x, y])

    @T.prim_func
    def expected(x: T.Buffer((4, 3, 5), "float32"), y: T.Buffer((4,), "float32")):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        for i in range(4):
            with T.block("y_l1"):
                v_i = T.axis.spatial(4, i)
                T.reads(x[v_i, 0:3, 0:v_i + 2])
                T.writes(y[v_i])
                y[v_i] = T.float32(0)
                for r0, r1 in T.grid(3, v_i + 2):
                    with T.block("y"):
                        v_i_1 = T.axis.spatial((v_i, v_i + 1), v_i)
                        v_r0 = T.axis.reduce(3, r0)
                        v_r1 = T.axis.reduce(v_i + 2, r1)
                        T.reads(y[v_i_1], x[v_i_1, v_r0, v_r1])
                        T.writes(y[v_i_1])
                        y[v_i_1] = y[v_i_1] + x[v_i_1, v_r0, v_r1]

    ts.ir.assert_structural_equal(func, expected)
    a = np.random.default_rng(4).standard_normal((4, 3, 5)).astype("float32")
    want = np.array([a[i, :, :i + 2].sum() for i in range(4)], "float32")
    np.testing.assert_allclose(_run(func, [a], (4,)), want, rtol=1e-5, atol=1e-6)


def test_adaptive_pooling_windows_keep_tvms_form():
    # Windows [floor(o * 7 / 3), ceil((o + 1) * 7 / 3)): never empty, which the analyzer cannot
    # show from bounds but create_prim_func checks at each of the 3 outputs; TVM's form then.
    x = te.placeholder((2, 7), "float32", name="x")
    y = ts.topi.nn.adaptive_pool1d(x, [3], "avg", layout="NW")
    func = te.create_prim_func([x, y])

    @T.prim_func
    def expected(x: T.Buffer((2, 7), "float32"), adaptive_pool_avg: T.Buffer((2, 3), "float32")):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        adaptive_pool_sum = T.alloc_buffer((2, 3))
        for n, o in T.grid(2, 3):
            with T.block("adaptive_pool_sum_l1"):
                v_n, v_o = T.axis.remap("SS", [n, o])
                T.reads(x[v_n, v_o * 7 // 3:v_o * 7 // 3 + (T.Select((v_o * 7 + 1) % 3 == 0, (v_o * 7 + 1) // 3 + 2, (v_o * 7 + 1) // 3 + 3) - v_o * 7 // 3)])
                T.writes(adaptive_pool_sum[v_n, v_o])
                for rv0 in range(T.Select((v_o * 7 + 1) % 3 == 0, (v_o * 7 + 1) // 3 + 2, (v_o * 7 + 1) // 3 + 3) - v_o * 7 // 3):
                    with T.block("adaptive_pool_sum"):
                        v_n_1 = T.axis.spatial((v_n, v_n + 1), v_n)
                        v_o_1 = T.axis.spatial((v_o, v_o + 1), v_o)
                        v_rv0 = T.axis.reduce(T.Select((v_o * 7 + 1) % 3 == 0, (v_o * 7 + 1) // 3 + 2, (v_o * 7 + 1) // 3 + 3) - v_o * 7 // 3, rv0)
                        T.reads(x[v_n_1, v_o_1 * 7 // 3 + v_rv0])
                        T.writes(adaptive_pool_sum[v_n_1, v_o_1])
                        with T.init():
                            adaptive_pool_sum[v_n_1, v_o_1] = T.float32(0)
                        adaptive_pool_sum[v_n_1, v_o_1] = adaptive_pool_sum[v_n_1, v_o_1] + x[v_n_1, v_o_1 * 7 // 3 + v_rv0]
        for n, o in T.grid(2, 3):
            with T.block("adaptive_pool_avg"):
                v_n, v_o = T.axis.remap("SS", [n, o])
                T.reads(adaptive_pool_sum[v_n, v_o])
                T.writes(adaptive_pool_avg[v_n, v_o])
                T.block_attr({"schedule_rule": "meta_schedule.adaptive_pool_avg"})
                adaptive_pool_avg[v_n, v_o] = adaptive_pool_sum[v_n, v_o] / T.Cast("float32", T.Select((v_o * 7 + 1) % 3 == 0, (v_o * 7 + 1) // 3 + 2, (v_o * 7 + 1) // 3 + 3) - v_o * 7 // 3)

    ts.ir.assert_structural_equal(func, expected)
    a = np.random.default_rng(5).standard_normal((2, 7)).astype("float32")
    want = np.stack([a[:, 0:3].mean(1), a[:, 2:5].mean(1), a[:, 4:7].mean(1)], axis=1)
    np.testing.assert_allclose(_run(func, [a], (2, 3)), want, rtol=1e-5, atol=1e-6)
