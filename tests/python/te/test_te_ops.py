"""te's TVM names: Tensor.__call__, TensorSlice, math functions, thread_axis, tag_scope."""

import numpy as np
import pytest

import tessera as ts
from tessera import te, tir
from tessera.error import TesseraTypeError, TesseraValueError
from tessera.ir import assert_structural_equal
from tessera.script import tir as T


def _build_run(tensors, inputs, out_shape, out_dtype="float32"):
    lib = ts.build(te.create_prim_func(tensors), target="c")
    out = ts.nd.empty(out_shape, out_dtype)
    lib(*[ts.nd.array(a) for a in inputs], out)
    return out.numpy()


def test_tensor_call_with_star_indices():
    A = te.placeholder((8,), "float32", name="A")
    B = te.compute((8,), lambda *i: A(*i) + 1.0, name="B")

    @T.prim_func
    def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        T.func_attr({"tir.noalias": True})
        for i0 in range(8):
            with T.block("B"):
                v_i0 = T.axis.spatial(8, i0)
                T.reads(A[v_i0])
                T.writes(B[v_i0])
                B[v_i0] = A[v_i0] + T.float32(1.0)

    assert_structural_equal(te.create_prim_func([A, B]), main)
    a = np.arange(8, dtype="float32")
    np.testing.assert_allclose(_build_run([A, B], [a], (8,)), a + 1)


def test_tensor_slice():
    A = te.placeholder((4, 5), "float32", name="A")
    s = A[2]
    assert isinstance(s, te.TensorSlice) and s.dtype == "float32"
    B = te.compute((4, 5), lambda i, j: A[i][j] * 2.0, name="B")
    a = np.random.default_rng(0).random((4, 5)).astype("float32")
    np.testing.assert_allclose(_build_run([A, B], [a], (4, 5)), a * 2)
    with pytest.raises(TesseraTypeError, match="has 2 dimensions but is indexed with 3"):
        A[1, 2, 3]
    with pytest.raises(TesseraTypeError, match="needs one index each, got 1"):
        A(1)


def test_math_functions_are_exported():
    for name in ("exp", "erf", "tanh", "sigmoid", "log", "tan", "cos", "sin", "sqrt", "rsqrt", "floor",
                 "ceil", "sinh", "cosh", "log2", "log10", "asin", "asinh", "acos", "acosh", "atan",
                 "atanh", "trunc", "abs", "round", "nearbyint", "power", "popcount", "fmod",
                 "if_then_else", "isnan", "isfinite", "isinf", "div", "indexdiv", "indexmod",
                 "truncdiv", "truncmod", "floordiv", "floormod", "any", "all", "min_value",
                 "max_value"):
        assert getattr(te, name) is getattr(tir, name), name


def test_elementwise_math_against_numpy():
    A = te.placeholder((3, 7), "float32", name="A")
    B = te.placeholder((3, 7), "float32", name="B")
    C = te.compute((3, 7), lambda i, j: te.if_then_else(A[i, j] > 0.5, te.exp(A[i, j]),
                                                        te.sqrt(B[i, j])) + te.power(A[i, j], 2.0),
                   name="C")
    D = te.compute((3, 7), lambda i, j: te.logaddexp(C[i, j], B[i, j]), name="D")
    rng = np.random.default_rng(1)
    a, b = rng.random((3, 7)).astype("float32"), rng.random((3, 7)).astype("float32")
    lib = ts.build(te.create_prim_func([A, B, D]), target="c")
    d = ts.nd.empty((3, 7), "float32")
    lib(ts.nd.array(a), ts.nd.array(b), d)
    c = np.where(a > 0.5, np.exp(a), np.sqrt(b)) + a ** 2
    np.testing.assert_allclose(d.numpy(), np.logaddexp(c, b), rtol=1e-5)


def test_integer_ops_and_limits():
    A = te.placeholder((10,), "int32", name="A")
    B = te.compute((10,), lambda i: te.floordiv(A[i], 3) + te.floormod(A[i], 4)
                   + te.truncmod(A[i], 3) + te.max_value("int8").astype("int32"), name="B")
    a = np.arange(-5, 5, dtype="int32")
    got = _build_run([A, B], [a], (10,), "int32")
    np.testing.assert_array_equal(got, a // 3 + a % 4 + np.fmod(a, 3) + 127)


def test_add_subtract_multiply():
    x, y = te.var("x"), te.var("y")
    assert str(te.add(x, y)) == "x + y" and str(te.subtract(x, y)) == "x - y"
    assert str(te.multiply(x, y)) == "x * y"


def test_thread_axis():
    tx = te.thread_axis("threadIdx.x")
    assert tx.thread_tag == "threadIdx.x" and tx.iter_type == tir.IterVarType.ThreadIndex
    bx = te.thread_axis((0, 32), "blockIdx.x", name="bx")
    assert bx.var.name == "bx" and bx.dom.extent.value == 32
    with pytest.raises(TesseraTypeError, match="give the thread tag"):
        te.thread_axis()


def test_tag_scope():
    A = te.placeholder((4,), name="A")
    with te.tag_scope("elemwise"):
        B = te.compute((4,), lambda i: A[i] + 1.0, name="B")
    assert B.op.tag == "elemwise"

    @te.tag_scope("broadcast")
    def make():
        return te.compute((4,), lambda i: A[i] * 2.0, name="C")

    assert make().op.tag == "broadcast"
    assert te.compute((4,), lambda i: A[i], name="D").op.tag == ""
    with pytest.raises(TesseraValueError, match="do not nest"):
        with te.tag_scope("a"):
            with te.tag_scope("b"):
                pass
