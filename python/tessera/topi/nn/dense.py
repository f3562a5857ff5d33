"""``matmul`` and ``dense`` (``data @ weight.T``) with an optional bias."""

from ... import _core, te
from ...error import TesseraValueError
from ...tir import expr_ops
from ..utils import equal_dims


def matmul(
    tensor_a,
    tensor_b,
    bias=None,
    out_dtype=None,
    transpose_a=False,
    transpose_b=False,
    auto_scheduler_rewritten_layout="",
    meta_schedule_original_shape=None,
    _tag="matmul",
):
    """``op(A) @ op(B) (+ bias)`` of 2-D tensors, ``op`` transposing when asked.

    >>> C = topi.nn.matmul(A, B, transpose_b=True)
    """
    what = "topi.nn.matmul"
    if len(tensor_a.shape) != 2 or len(tensor_b.shape) != 2:
        raise TesseraValueError(
            f"{what} needs 2-D tensors, got shapes {tuple(tensor_a.shape)} and "
            f"{tuple(tensor_b.shape)}"
        )
    m, k = (tensor_a.shape[1], tensor_a.shape[0]) if transpose_a else tensor_a.shape
    k2, n = (tensor_b.shape[1], tensor_b.shape[0]) if transpose_b else tensor_b.shape
    if not equal_dims(k, k2):
        raise TesseraValueError(
            f"{what}: the reduction sizes differ ({k} vs. {k2}) for shapes "
            f"{tuple(tensor_a.shape)} and {tuple(tensor_b.shape)}"
        )
    dtype = tensor_a.dtype if out_dtype in (None, "") else _core.canonical_dtype(str(out_dtype))
    if bias is not None and (len(bias.shape) != 1 or not equal_dims(bias.shape[0], n)):
        raise TesseraValueError(f"{what}: the bias needs shape ({n},), got {tuple(bias.shape)}")

    def fcompute(i, j):
        r = te.reduce_axis((0, k), name="k")
        a = tensor_a[r, i] if transpose_a else tensor_a[i, r]
        b = tensor_b[j, r] if transpose_b else tensor_b[r, j]
        return te.sum(expr_ops.cast(a, dtype) * expr_ops.cast(b, dtype), axis=r)

    name = "T_matmul_" + ("T" if transpose_a else "N") + ("T" if transpose_b else "N")
    out = te.compute((m, n), fcompute, name=name, tag=_tag)
    if bias is None:
        return out
    return te.compute(
        (m, n),
        lambda i, j: out[i, j] + expr_ops.cast(bias[j], dtype),
        name="T_add",
        tag="broadcast",
    )


def dense(
    data,
    weight,
    bias=None,
    out_dtype=None,
    auto_scheduler_rewritten_layout="",
    meta_schedule_original_shape=None,
):
    """``data @ weight.T (+ bias)``: ``data [batch, in]``, ``weight [out, in]``."""
    return matmul(data, weight, bias, out_dtype, False, True, _tag="dense")
