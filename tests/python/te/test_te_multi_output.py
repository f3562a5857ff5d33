"""te.compute with several outputs: a function returning a tuple gives one tensor per value."""

import numpy as np
import pytest

import tessera
from tessera import te
from tessera.error import TesseraError
from tessera.script import tir as T


def test_returns_one_tensor_per_value():
    A0 = te.placeholder((4, 5), name="A0")
    A1 = te.placeholder((4, 5), "int32", name="A1")
    B0, B1 = te.compute((4, 5), lambda i, j: (A0[i, j] + 2.0, A1[i, j] * 3), name="B")
    assert B0.op.name == B1.op.name == "B"
    assert (B0.value_index, B1.value_index) == (0, 1)
    assert (B0.dtype, B1.dtype) == ("float32", "int32")
    assert B0.op.num_outputs == 2
    assert [t.name for t in B0.op.input_tensors] == ["A0", "A1"]


def test_create_prim_func_makes_one_block_per_output_in_one_loop_nest():
    A0 = te.placeholder((8, 6), name="A0")
    A1 = te.placeholder((8, 6), name="A1")
    B0, B1 = te.compute((8, 6), lambda i, j: (A0[i, j] + 2.0, A1[i, j] * 3.0), name="B")
    func = te.create_prim_func([A0, A1, B0, B1])

    @T.prim_func
    def main(A0: T.Buffer((8, 6), "float32"), A1: T.Buffer((8, 6), "float32"),
             B_v0: T.Buffer((8, 6), "float32"), B_v1: T.Buffer((8, 6), "float32")):
        T.func_attr({"tir.noalias": True})
        for i, j in T.grid(8, 6):
            with T.block("B.v0"):
                vi, vj = T.axis.remap("SS", [i, j])
                B_v0[vi, vj] = A0[vi, vj] + T.float32(2)
            with T.block("B.v1"):
                vi, vj = T.axis.remap("SS", [i, j])
                B_v1[vi, vj] = A1[vi, vj] * T.float32(3)

    tessera.ir.assert_structural_equal(func, main)
    tessera.ir.assert_structural_equal(func, tessera.script.from_source(func.script()))

    a0 = np.random.default_rng(0).standard_normal((8, 6)).astype("float32")
    a1 = np.random.default_rng(1).standard_normal((8, 6)).astype("float32")
    b0, b1 = np.zeros_like(a0), np.zeros_like(a1)
    tessera.build(func, target="c")(a0, a1, b0, b1)
    np.testing.assert_allclose(b0, a0 + 2, rtol=1e-6)
    np.testing.assert_allclose(b1, a1 * 3, rtol=1e-6)


def test_a_consumer_of_one_output_allocates_both():
    A0 = te.placeholder((5,), name="A0")
    A1 = te.placeholder((5,), name="A1")
    B0, B1 = te.compute((5,), lambda i: (A0[i] * 2.0, A1[i] * 3.0), name="B")
    C = te.compute((5,), lambda i: B0[i] + B1[i], name="C")
    func = te.create_prim_func([A0, A1, C])
    assert [b.name for b in func.body.block.alloc_buffers] == ["B_v0", "B_v1"]
    a0 = np.arange(5, dtype="float32")
    a1 = np.ones(5, dtype="float32")
    c = np.zeros(5, dtype="float32")
    tessera.build(func, target="c")(a0, a1, c)
    np.testing.assert_allclose(c, a0 * 2 + a1 * 3)


def test_reductions_cannot_be_among_several_outputs():
    A = te.placeholder((4, 4), name="A")
    k = te.reduce_axis((0, 4), "k")
    with pytest.raises(TesseraError, match="several outputs takes expressions only"):
        te.compute((4,), lambda i: (te.sum(A[i, k], axis=k), A[i, 0] + 1.0), name="B")


def test_an_empty_tuple_is_refused():
    with pytest.raises(TesseraError, match="returned no value"):
        te.compute((4,), lambda i: (), name="B")


# ---- reductions of tuples (te.comm_reducer over (index, value)) -----------------------------


def _argmax():
    def combine(x, y):
        keep = x[1] >= y[1]
        return tessera.tir.Select(keep, x[0], y[0]), tessera.tir.Select(keep, x[1], y[1])

    return te.comm_reducer(combine, lambda t0, t1: (tessera.tir.const(-1, t0), te.min_value(t1)),
                           name="argmax")


def test_tuple_reduction_is_one_block_binding_every_value_before_storing():
    idx = te.placeholder((6, 5), "int32", name="idx")
    val = te.placeholder((6, 5), name="val")
    k = te.reduce_axis((0, 5), "k")
    mi, mv = te.compute((6,), lambda i: _argmax()((idx[i, k], val[i, k]), axis=k), name="am")
    assert (mi.dtype, mv.dtype, mi.op.num_outputs) == ("int32", "float32", 2)
    func = te.create_prim_func([idx, val, mi, mv])

    @T.prim_func
    def expected(idx: T.Buffer((6, 5), "int32"), val: T.Buffer((6, 5), "float32"),
                 am_v0: T.Buffer((6,), "int32"), am_v1: T.Buffer((6,), "float32")):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        for i, k in T.grid(6, 5):
            with T.block("am"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    am_v0[vi] = -1
                    am_v1[vi] = T.min_value("float32")
                v0: T.int32 = T.Select(am_v1[vi] >= val[vi, vk], am_v0[vi], idx[vi, vk])
                v1: T.float32 = T.Select(am_v1[vi] >= val[vi, vk], am_v1[vi], val[vi, vk])
                am_v0[vi] = v0
                am_v1[vi] = v1

    tessera.ir.assert_structural_equal(func, expected)
    lib = tessera.build(func, target="c")
    a_idx = np.arange(30, dtype="int32").reshape(6, 5) * 7
    a_val = np.random.default_rng(0).random((6, 5)).astype("float32")
    o_i, o_v = tessera.nd.empty((6,), "int32"), tessera.nd.empty((6,), "float32")
    lib(tessera.nd.array(a_idx), tessera.nd.array(a_val), o_i, o_v)
    np.testing.assert_array_equal(o_i.numpy(), a_idx[np.arange(6), a_val.argmax(1)])
    np.testing.assert_array_equal(o_v.numpy(), a_val.max(1))


def test_tuple_reduction_with_a_condition_and_its_errors():
    pair_sum = te.comm_reducer(lambda x, y: (x[0] + y[0], x[1] + y[1]),
                               lambda t0, t1: (tessera.tir.const(0, t0), tessera.tir.const(1, t1)))
    a = te.placeholder((4, 8), "int32", name="a")
    k = te.reduce_axis((0, 8), "k")
    s0, s1 = te.compute((4,), lambda i: pair_sum((a[i, k], a[i, k] * 2), axis=k,
                                                 where=te.floormod(k, 2) == 0), name="S")
    lib = tessera.build(te.create_prim_func([a, s0, s1]), target="c")
    x = np.arange(32, dtype="int32").reshape(4, 8)
    o0, o1 = tessera.nd.empty((4,), "int32"), tessera.nd.empty((4,), "int32")
    lib(tessera.nd.array(x), o0, o1)
    np.testing.assert_array_equal(o0.numpy(), x[:, ::2].sum(1))
    np.testing.assert_array_equal(o1.numpy(), 1 + 2 * x[:, ::2].sum(1))
    with pytest.raises(TesseraError, match="must return 2 values"):
        te.comm_reducer(lambda x, y: x[0] + y[0], lambda t0, t1: (0, 0))((a[0, k], a[0, k]), axis=k)
    with pytest.raises(TesseraError, match="not a tuple"):
        te.sum((a[0, k], a[0, k]), axis=k)


def test_a_reducer_identity_may_read_a_tensor_at_the_spatial_position():
    # TVM's "loop-aware" initial value: the reduction of row i starts from b[i].
    a = te.placeholder((5, 4), name="a")
    b = te.placeholder((5,), name="b")
    ax = te.reduce_axis((0, 4), "ax")
    s = te.compute((5,), lambda i: te.comm_reducer(lambda x, y: x + y, lambda t: b[i])(
        a[i, ax], axis=[ax]), name="s")
    func = te.create_prim_func([a, b, s])

    @T.prim_func
    def expected(a: T.Buffer((5, 4), "float32"), b: T.Buffer((5,), "float32"),
                 s: T.Buffer((5,), "float32")):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        for i, ax in T.grid(5, 4):
            with T.block("s"):
                vi, vax = T.axis.remap("SR", [i, ax])
                with T.init():
                    s[vi] = b[vi]
                s[vi] = s[vi] + a[vi, vax]

    tessera.ir.assert_structural_equal(func, expected)
    assert [t.name for t in s.op.input_tensors] == ["a", "b"]
    x = np.random.default_rng(1).random((5, 4)).astype("float32")
    y = np.arange(5, dtype="float32")
    out = tessera.nd.empty((5,), "float32")
    tessera.build(func, target="c")(tessera.nd.array(x), tessera.nd.array(y), out)
    np.testing.assert_allclose(out.numpy(), y + x.sum(1), rtol=1e-6)
