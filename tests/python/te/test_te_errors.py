"""te misuse: each mistake raises a clear exception naming what is wrong."""

import pytest

from tessera import te, tir
from tessera.error import TesseraTypeError, TesseraValueError


def test_compute_with_a_lambda_of_the_wrong_arity():
    A = te.placeholder((4, 4), name="A")
    with pytest.raises(TesseraValueError, match=r"te.compute 'C': the function takes 1 index "
                       r"argument but the shape has 2 dimensions"):
        te.compute((4, 4), lambda i: A[i, i], name="C")
    with pytest.raises(TesseraValueError, match="takes 3 index arguments but the shape has 2"):
        te.compute((4, 4), lambda i, j, k: A[i, j], name="C")


def test_reduce_axis_used_outside_a_reducer():
    A = te.placeholder((4, 8), name="A")
    k = te.reduce_axis((0, 8), name="k")
    with pytest.raises(TesseraValueError,
                       match=r"te.compute 'B': reduce axis 'k' is used outside a reducer"):
        te.compute((4,), lambda i: A[i, k], name="B")
    # Nor next to a reduction over another axis.
    r = te.reduce_axis((0, 8), name="r")
    with pytest.raises(TesseraValueError, match=r"reduce axis 'k' is used but not reduced over"):
        te.compute((4,), lambda i: te.sum(A[i, r] * A[i, k], axis=r), name="B")


def test_placeholder_not_reachable_from_the_listed_tensors():
    A = te.placeholder((4,), name="A")
    B = te.placeholder((4,), name="B")
    C = te.compute((4,), lambda i: A[i] + B[i], name="C")
    with pytest.raises(TesseraValueError,
                       match=r"tensor 'B' \(a te.placeholder read by 'C'\) is not among the listed "
                             r"tensors"):
        te.create_prim_func([A, C])


def test_symbolic_size_without_a_parameter():
    n = te.var("n")
    A = te.placeholder((8,), name="A")
    B = te.compute((8,), lambda i: A[i] * n.astype("float32"), name="B")
    with pytest.raises(TesseraValueError, match=r"variable 'n' \(used by 'B'\) is not defined by "
                                                r"the shape of any listed tensor"):
        te.create_prim_func([A, B])
    te.create_prim_func([A, B, n])  # listed: a scalar parameter


def test_reduction_is_not_an_expression():
    A = te.placeholder((4, 8), name="A")
    k = te.reduce_axis((0, 8), name="k")
    with pytest.raises(TesseraTypeError, match="is a reduction: it can only be the whole value"):
        te.compute((4,), lambda i: te.sum(A[i, k], axis=k) * 2.0, name="B")
    with pytest.raises(TesseraTypeError, match="nested reductions are not supported"):
        te.sum(te.sum(A[0, k], axis=k), axis=k)


def test_axis_of_another_compute():
    A = te.placeholder((4,), name="A")
    captured = []
    te.compute((4,), lambda i: captured.append(i) or A[i], name="B")
    with pytest.raises(TesseraValueError, match=r"index variable 'i' belongs to another te.compute"):
        te.compute((4,), lambda j: A[captured[0]], name="C")


def test_bad_arguments():
    A = te.placeholder((4, 4), name="A")
    with pytest.raises(TesseraTypeError, match="tensor A has 2 dimensions but is indexed with 1"):
        te.compute((4,), lambda i: A[i], name="B")
    with pytest.raises(TesseraTypeError, match="not with slices"):
        A[0:2, 0]
    with pytest.raises(TesseraValueError, match="tensor 'A' is listed twice"):
        te.create_prim_func([A, A])
    with pytest.raises(TesseraTypeError, match="expects a list of te tensors"):
        te.create_prim_func([A, "B"])
    with pytest.raises(TesseraValueError, match="axis 'i' is not a reduce axis"):
        te.compute((4,), lambda i: te.sum(A[i, 0], axis=tir.IterVar(
            tir.Range(te.const(0), te.const(4)), i, tir.IterVarType.CommReduce)), name="B")
    with pytest.raises(TesseraTypeError, match="returned the tensor A"):
        te.compute((4,), lambda i: A, name="B")
    with pytest.raises(TesseraTypeError, match="dom must be"):
        te.reduce_axis(8, name="k")
    k = te.reduce_axis((0, 4), name="k")
    with pytest.raises(TesseraTypeError, match="the reducer combines float32 values but the value "
                                               "reduced is int32|init= has type"):
        te.sum(A[0, k], axis=k, init=te.const(0))
    with pytest.raises(TesseraValueError, match="give axis="):
        te.max(A[0, 0])
    with pytest.raises(TesseraValueError, match="index_dtype_override must be a signed integer"):
        te.create_prim_func([A], index_dtype_override="float32")
