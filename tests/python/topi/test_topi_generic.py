"""Tensor arithmetic bound by topi (``A + B``), symbolic shapes, and the PrimFunc an operator
makes."""

import numpy as np
import pytest

import tessera as ts
from tessera import te, topi


def test_tensor_operators_and_symbolic_shape():
    n = te.var("n")
    A = te.placeholder((n, 3), "float32", name="A")
    B = te.placeholder((3,), "float32", name="B")
    C = topi.exp(A) + B * 2.0
    D = topi.sum(1.0 - C / 4.0, axis=1)
    E = (-A).astype("float16")
    lib = ts.build(te.create_prim_func([A, B, D, E]), target="c")
    for rows in (1, 7):
        a = np.random.default_rng(rows).random((rows, 3), dtype="float32")
        b = np.arange(3, dtype="float32")
        d, e = np.zeros(rows, "float32"), np.zeros((rows, 3), "float16")
        lib(a, b, d, e)
        np.testing.assert_allclose(d, (1.0 - (np.exp(a) + b * 2) / 4).sum(1), rtol=1e-5)
        np.testing.assert_allclose(e, (-a).astype("float16"))


def test_operators_keep_python_semantics_for_other_types():
    A = te.placeholder((3,), "float32", name="A")
    with pytest.raises(TypeError):
        A + "x"  # noqa: B018
    assert isinstance(A + A, te.Tensor)


def test_operator_is_an_unscheduled_compute():
    A = te.placeholder((4, 6), "float32", name="A")
    B = topi.nn.relu(A)
    assert B.op.tag == "elemwise"
    text = te.create_prim_func([A, B]).script()
    assert 'T.block("T_relu")' in text
    assert "T.max(A[v_i0, v_i1], T.float32(0.0))" in text


def test_ceil_log2_and_utils():
    from tessera.topi.utils import equal_const_int, get_const_tuple

    x = te.var("x")
    lib = ts.build(
        te.create_prim_func(
            [
                A := te.placeholder((6,), "int32", name="A"),
                te.compute((6,), lambda i: topi.math.ceil_log2(A[i]), name="B"),
            ]
        ),
        target="c",
    )
    a = np.array([1, 2, 3, 8, 9, 1000], "int32")
    b = np.zeros(6, "int32")
    lib(a, b)
    np.testing.assert_array_equal(b, np.ceil(np.log2(a)).astype("int32"))
    assert topi.math.ceil_log2(te.const(5.0)).dtype == "float32"
    assert get_const_tuple((te.const(3), 4, x))[:2] == (3, 4)
    assert equal_const_int(te.const(2) + 1, 3) and not equal_const_int(x, 3)


def test_readme_example_and_lazy_import():
    X = te.placeholder((1, 3, 9, 7), "float32", name="X")
    W = te.placeholder((4, 3, 3, 3), "float32", name="W")
    Y = topi.nn.relu(topi.nn.conv2d_nchw(X, W, stride=1, padding="SAME", dilation=1))
    lib = ts.build(te.create_prim_func([X, W, Y]), target="c")
    x = np.ones((1, 3, 9, 7), "float32")
    w = np.full((4, 3, 3, 3), -1.0, "float32")
    w[:2] = 1.0
    y = np.zeros((1, 4, 9, 7), "float32")
    lib(x, w, y)
    assert y[0, 0, 4, 3] == 27.0 and y[0, 0, 0, 0] == 12.0  # a full window and a corner
    assert (y[0, 2:] == 0).all()  # relu of negative sums
    assert ts.topi.nn.softmax is topi.nn.softmax
