"""A buffer index that is not an integer (a comm_reducer combiner that indexes with its float
accumulator): kept in the IR as TVM keeps it, refused by ts.build with its source location."""

import numpy as np
import pytest

import tessera as ts
from tessera import te
from tessera.error import TesseraError
from tessera.script import tir as T


def _workload():
    # The accumulator x holds a position along the row (as a float); the combiner reads the row
    # at that position, so the index of data[i, x] is a float32.
    data = te.placeholder((5, 5), "float32", "a")
    ax = te.reduce_axis((0, 5), "ax")
    out = te.compute(
        (5,),
        lambda i: te.comm_reducer(
            lambda x, y: te.if_then_else(data[i, x] < y, x, ax),
            lambda _: te.const(0, "float32"))(data[i, ax], axis=[ax]),
        name="sum_red")
    return data, out


@T.prim_func
def expected(a: T.Buffer((5, 5), "float32"), sum_red: T.Buffer((5,), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    for i, ax in T.grid(5, 5):
        with T.block("sum_red"):
            v_i, v_ax = T.axis.remap("SR", [i, ax])
            T.reads(a[v_i, 0:5])
            T.writes(sum_red[v_i])
            with T.init():
                sum_red[v_i] = T.float32(0)
            sum_red[v_i] = T.if_then_else(a[v_i, sum_red[v_i]] < a[v_i, v_ax], sum_red[v_i],
                                          T.Cast("float32", v_ax))


def test_create_prim_func_keeps_a_float_index_as_tvm_does():
    data, out = _workload()
    func = te.create_prim_func([data, out])
    ts.ir.assert_structural_equal(func, expected)
    assert "a[v_i, sum_red[v_i]] < a[v_i, v_ax]" in func.script()
    # The printed script parses back to the same function.
    ts.ir.assert_structural_equal(func, ts.script.from_source(func.script()))


def test_build_refuses_a_float_index_at_the_te_line():
    data, out = _workload()
    func = te.create_prim_func([data, out])
    with pytest.raises(TesseraError) as info:
        ts.build(func, target="c")
    text = str(info.value)
    assert "a load of buffer a has index 1 of type float32" in text
    assert "a buffer index must be an integer" in text
    # The location is the subscript written in _workload's combiner.
    assert "test_te_float_index.py:" in text
    assert "data[i, x]" in text and "^" in text


def test_build_refuses_a_float_index_written_in_tvmscript():
    with pytest.raises(TesseraError) as info:
        ts.build(expected, target="c")
    text = str(info.value)
    assert "has index 1 of type float32" in text
    assert "a[v_i, sum_red[v_i]]" in text


def test_lowering_refuses_a_float_store_index_too():
    @T.prim_func
    def store(a: T.Buffer((4,), "float32"), b: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("s"):
                vi = T.axis.spatial(4, i)
                T.reads(a[vi])
                T.writes(b[0:4])
                b[a[vi]] = T.float32(1)

    with pytest.raises(TesseraError, match="a store of buffer b has index 0 of type float32"):
        ts.lower(store, target="c", stage="begin")


def test_integer_indices_still_build_and_a_bool_index_is_refused_at_once():
    x = te.placeholder((4,), "float32", "x")
    y = te.compute((4,), lambda i: x[3 - i] * 2.0, name="y")
    lib = ts.build(te.create_prim_func([x, y]), target="c")
    a = np.arange(4, dtype="float32")
    out = ts.nd.empty((4,), "float32")
    lib(ts.nd.array(a), out)
    np.testing.assert_allclose(out.numpy(), a[::-1] * 2.0)
    with pytest.raises(TesseraError, match="needs scalar integer indices"):
        x[te.const(True, "bool")]
