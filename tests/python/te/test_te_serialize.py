"""tessera.ir.save_json / load_json of te tensors and operations: the loaded graph lowers to
the same function as the original."""

import json

import pytest

import tessera
from tessera import te, tir
from tessera.error import TesseraError


def roundtrip(node):
    text = tessera.ir.save_json(node)
    json.loads(text)  # a plain JSON document
    return tessera.ir.load_json(text)


def test_a_reduction_with_attrs_lowers_to_the_same_function():
    m, n = te.size_var("m"), te.var("n")
    A = te.placeholder((m, n), name="A")
    k = te.reduce_axis((0, n), "k")
    B = te.compute((m,), lambda i: te.sum(A[i, k] * 2.0, axis=k, where=k > 1), name="B",
                   tag="red", attrs={"hello": 1, "arr": [10, 12]})
    C = te.compute((m,), lambda i: tir.Select(B[i] > 0, tir.exp(B[i]), B[i].astype("float32")),
                   name="C")
    C2 = roundtrip(C)
    assert isinstance(C2, te.Tensor) and str(C2) == str(C)
    B2 = C2.op.input_tensors[0]
    assert (B2.op.tag, B2.op.attrs["hello"], list(B2.op.attrs["arr"])) == ("red", 1, [10, 12])
    A2 = B2.op.input_tensors[0]
    tessera.ir.assert_structural_equal(te.create_prim_func([A2, C2]), te.create_prim_func([A, C]))


def test_tuple_reductions_and_scans():
    pair = te.comm_reducer(lambda x, y: (x[0] + y[0], tir.max(x[1], y[1])),
                           lambda t0, t1: (tir.const(0, t0), te.min_value(t1)), name="pair")
    A = te.placeholder((4, 6), "int32", name="A")
    k = te.reduce_axis((0, 6), "k")
    s, mx = te.compute((4,), lambda i: pair((A[i, k], A[i, k] * 3), axis=k), name="P")
    s2 = roundtrip(s)
    assert s2.op.num_outputs == 2
    A2 = s2.op.input_tensors[0]
    tessera.ir.assert_structural_equal(te.create_prim_func([A2, s2.op.output(0), s2.op.output(1)]),
                                       te.create_prim_func([A, s, mx]))

    X = te.placeholder((5, 3), name="X")
    state = te.placeholder((5, 3), name="state")
    init = te.compute((1, 3), lambda _, i: X[0, i], name="init")
    update = te.compute((5, 3), lambda t, i: state[t - 1, i] + X[t, i], name="update")
    scan = te.scan(init, update, state, inputs=[X])
    op2 = roundtrip(scan.op)
    assert isinstance(op2, te.ScanOp)
    X2 = op2.inputs[0]
    tessera.ir.assert_structural_equal(te.create_prim_func([X2, op2.output(0)]),
                                       te.create_prim_func([X, scan]))


def test_what_cannot_be_stored_or_loaded():
    A = te.placeholder((4,), name="A")
    C = te.extern((4,), [A], lambda ins, outs: tir.call_packed("f", ins[0], outs[0]), name="C")
    with pytest.raises(TesseraError, match="te.extern"):
        tessera.ir.save_json(C)
    with pytest.raises(TesseraError, match="malformed te document"):
        tessera.ir.load_json(json.dumps({"format": "tessera-te", "ops": [{"type": "nope"}]}))
