"""create_prim_func details TVM code relies on: layout_free_placeholders, zero-dimensional
computes, tir.ProducerLoad; and the TVM helpers around it (ir.make_node)."""

import numpy as np
import pytest

import tessera as ts
from tessera import te, tir
from tessera.error import TesseraValueError
from tessera.ir import assert_structural_equal
from tessera.script import tir as T


def test_layout_free_placeholders_become_function_attr_and_buffers():
    A = te.placeholder((16, 16), name="A")
    B = te.placeholder((16, 16), name="B")
    k = te.reduce_axis((0, 16), "k")
    C = te.compute((16, 16), lambda i, j: te.sum(A[i, k] * B[j, k], axis=k), name="C",
                   attrs={"layout_free_placeholders": [B], "workload": "dropped"})
    D = te.compute((16, 16), lambda i, j: C[i, j] * 2.0, name="D",
                   attrs={"layout_free_placeholders": [C]})
    func = te.create_prim_func([A, B, D])

    @T.prim_func
    def expected(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"),
                 D: T.Buffer((16, 16), "float32")):
        T.func_attr({"global_symbol": "main", "tir.noalias": True, "layout_free_buffers": [1]})
        C = T.alloc_buffer((16, 16))
        for i, j, k in T.grid(16, 16, 16):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]
        for i, j in T.grid(16, 16):
            with T.block("D"):
                T.block_attr({"layout_free_placeholders": [C]})
                vi, vj = T.axis.remap("SS", [i, j])
                D[vi, vj] = C[vi, vj] * T.float32(2)

    assert_structural_equal(func, expected)
    assert_structural_equal(func, ts.script.from_source(func.script()))


def test_zero_dimensional_compute_has_a_dummy_iterator_and_runs():
    a = te.placeholder((), name="a", dtype="int32")
    b = te.placeholder((), name="b", dtype="int32")
    c = te.compute((), lambda: a() * b() + 1, name="c")
    func = te.create_prim_func([a, b, c])

    @T.prim_func
    def expected(a: T.Buffer((), "int32"), b: T.Buffer((), "int32"), c: T.Buffer((), "int32")):
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        with T.block("c"):
            vi = T.axis.spatial(1, 0)
            c[()] = a[()] * b[()] + 1

    assert_structural_equal(func, expected)
    out = np.zeros((), "int32")
    ts.build(func)(np.array(6, "int32"), np.array(7, "int32"), out)
    assert int(out) == 43


def test_producer_load_reads_a_tensor():
    A = te.placeholder((5,), name="A")
    B = te.compute((), lambda: te.const(3.0, "float32"), name="B")
    C = te.compute((5,), lambda x: A[x] + tir.ProducerLoad(B, []), name="C")
    func = te.create_prim_func([A, C])
    a = np.arange(5, dtype="float32")
    c = np.zeros(5, "float32")
    ts.build(func)(a, c)
    np.testing.assert_allclose(c, a + 3)
    with pytest.raises(TypeError, match="te tensor"):
        tir.ProducerLoad(tir.Var("x", "int32"), [])


def test_make_node():
    attrs = ts.ir.make_node("ir.DictAttrs", key="value", n=3)
    f = tir.PrimFunc([], tir.Evaluate(0), None, None, attrs)
    assert f.attrs["key"].value == "value" and int(f.attrs["n"]) == 3
    v = ts.ir.make_node("tir.Var", name="x", dtype="int64")
    assert v.dtype == "int64"
    with pytest.raises(TesseraValueError, match="no node type"):
        ts.ir.make_node("relax.Foo")


def test_nested_tag_scope_is_a_value_error():
    with pytest.raises(ValueError, match="do not nest"):
        with te.tag_scope("a"):
            with te.tag_scope("b"):
                pass
