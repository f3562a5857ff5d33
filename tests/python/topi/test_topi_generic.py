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
