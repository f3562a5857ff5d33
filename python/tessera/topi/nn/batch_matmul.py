"""``batch_matmul``: matrix products over a batch (a batch of 1 broadcasts)."""

from ... import _core, te
from ...error import TesseraValueError
from ...tir import expr_ops
from ..utils import const_or_none, equal_dims


def batch_matmul(
    tensor_a,
    tensor_b,
    oshape=None,
    out_dtype=None,
    transpose_a=False,
    transpose_b=True,
    auto_scheduler_rewritten_layout="",
    meta_schedule_original_shape=None,
):
    """``op(A[b]) @ op(B[b])`` for 3-D tensors; ``transpose_b`` defaults to True (the "NT"
    form TVM uses), so ``A [batch, M, K]`` meets ``B [batch, N, K]``.

    >>> C = topi.nn.batch_matmul(A, B, transpose_b=False)
    """
    what = "topi.nn.batch_matmul"
    if len(tensor_a.shape) != 3 or len(tensor_b.shape) != 3:
        raise TesseraValueError(
            f"{what} needs 3-D tensors, got shapes {tuple(tensor_a.shape)} and "
            f"{tuple(tensor_b.shape)}"
        )
    ba, bb = tensor_a.shape[0], tensor_b.shape[0]
    if transpose_a:
        k, m = tensor_a.shape[1], tensor_a.shape[2]
    else:
        m, k = tensor_a.shape[1], tensor_a.shape[2]
    if transpose_b:
        n, k2 = tensor_b.shape[1], tensor_b.shape[2]
    else:
        k2, n = tensor_b.shape[1], tensor_b.shape[2]
    if not equal_dims(k, k2):
        raise TesseraValueError(
            f"{what}: the reduction sizes differ ({k} vs. {k2}) for shapes "
            f"{tuple(tensor_a.shape)} and {tuple(tensor_b.shape)}"
        )
    if equal_dims(ba, bb) or const_or_none(bb) == 1:
        batch = ba
    elif const_or_none(ba) == 1:
        batch = bb
    else:
        raise TesseraValueError(f"{what}: batch sizes {ba} and {bb} differ (and neither is 1)")
    dtype = tensor_a.dtype if out_dtype in (None, "") else _core.canonical_dtype(str(out_dtype))
    a_one, b_one = const_or_none(ba) == 1, const_or_none(bb) == 1
    shape = (batch, m, n) if oshape is None else tuple(oshape)

    def fcompute(b, i, j):
        r = te.reduce_axis((0, k), name="k")
        xa = 0 if a_one else b
        xb = 0 if b_one else b
        a = tensor_a[xa, r, i] if transpose_a else tensor_a[xa, i, r]
        v = tensor_b[xb, j, r] if transpose_b else tensor_b[xb, r, j]
        return te.sum(expr_ops.cast(a, dtype) * expr_ops.cast(v, dtype), axis=r)

    return te.compute(
        shape,
        fcompute,
        name="T_batch_matmul_" + ("T" if transpose_a else "N") + ("T" if transpose_b else "N"),
        tag="batch_matmul",
    )
