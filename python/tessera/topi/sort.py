"""Sorting along an axis: ``sort``, ``argsort``, ``topk``.

Plain te computes: each element's rank (how many elements precede it in the sorted order,
ties kept in their original order, as a stable sort) and then, for each output position, the
element of that rank. The work is quadratic in the axis length: built with no schedule for the
host, the pass tir.SortRows (src/transform/sort_rows.cc) makes a sort over the last axis one call
a row of an O(n log n) row sort instead, with the same results (and NaN after every number, as
numpy sorts, where the blocks give NaN no rank of its own).
"""

from .. import _core, te
from ..error import TesseraTypeError, TesseraValueError
from ..tir import expr_ops
from . import _math
from .utils import const_shape, is_tensor, normalize_axis


def _ranks(data, axis, ascending, what):
    if not is_tensor(data):
        raise TesseraTypeError(f"topi.{what} expects a te tensor, got {data!r}")
    const_shape(data, f"topi.{what}")
    axis = normalize_axis(axis, len(data.shape), f"topi.{what}")
    n = data.shape[axis]

    def frank(*i):
        j = te.reduce_axis((0, n), name="j")
        other = list(i)
        other[axis] = j
        a, b = data[i], data[tuple(other)]
        before = expr_ops.compare("<" if ascending else ">", b, a)
        tie = expr_ops.logical_and(expr_ops.compare("==", b, a), j.var < i[axis])
        hit = expr_ops.logical_or(before, tie)
        one, zero = expr_ops.const(1, "int32"), expr_ops.const(0, "int32")
        return te.sum(_math.select(hit, one, zero), axis=j)

    return axis, n, te.compute(data.shape, frank, name=f"T_{what}_rank")


_max_from_inf = te.comm_reducer(
    expr_ops.maximum, lambda t: expr_ops.const(float("-inf"), t), name="max"
)


def _gather_ranked(data, axis, n, rank, length, value, dtype, name):
    """Output position ``k`` along ``axis``: ``value(i)`` of the element whose rank is ``k``."""
    shape = list(data.shape)
    shape[axis] = length

    def fcompute(*k):
        i = te.reduce_axis((0, n), name="i")
        idx = list(k)
        idx[axis] = i
        hit = expr_ops.compare("==", rank[tuple(idx)], expr_ops.cast(k[axis], "int32"))
        if not expr_ops.is_float(dtype):
            lowest = _math.min_value(dtype)
            return te.max(_math.select(hit, value(tuple(idx), i.var), lowest), axis=i)
        # floats start from -inf (te.max's identity, the lowest finite value, would replace a
        # -inf element)
        lowest = expr_ops.const(float("-inf"), dtype)
        return _max_from_inf(_math.select(hit, value(tuple(idx), i.var), lowest), axis=i)

    return te.compute(shape, fcompute, name=name)


def sort(data, axis=-1, is_ascend=1):
    """``data`` sorted along ``axis`` (ascending unless ``is_ascend`` is false)."""
    axis, n, rank = _ranks(data, axis, bool(is_ascend), "sort")
    return _gather_ranked(data, axis, n, rank, n, lambda idx, i: data[idx], data.dtype, "T_sort")


def _index_value(dtype):
    return lambda idx, i: expr_ops.cast(i, dtype)


def argsort(data, valid_count=None, axis=-1, is_ascend=1, dtype="float32"):
    """The indices that sort ``data`` along ``axis`` (stable), as ``dtype`` (float32 by default,
    as in TVM)."""
    if valid_count is not None:
        raise TesseraValueError("topi.argsort: valid_count is not supported")
    dtype = _core.canonical_dtype(str(dtype))
    axis, n, rank = _ranks(data, axis, bool(is_ascend), "argsort")
    return _gather_ranked(data, axis, n, rank, n, _index_value(dtype), dtype, "T_argsort")


def topk(data, k=1, axis=-1, ret_type="both", is_ascend=False, dtype="int64"):
    """The ``k`` largest (smallest with ``is_ascend``) elements along ``axis``, in order:
    ``[values, indices]``, or one of them after ``ret_type`` ("values", "indices"); ``k < 1``
    keeps every element."""
    if ret_type not in ("both", "values", "indices"):
        raise TesseraValueError(
            f"topi.topk: ret_type must be 'both', 'values' or 'indices', got '{ret_type}'"
        )
    if not isinstance(k, int) or isinstance(k, bool):
        raise TesseraTypeError(f"topi.topk: k must be an int, got {k!r}")
    dtype = _core.canonical_dtype(str(dtype))
    axis, n, rank = _ranks(data, axis, bool(is_ascend), "topk")
    length = n if k < 1 else min(k, n.value if hasattr(n, "value") else n)
    outs = []
    if ret_type in ("both", "values"):
        outs.append(_gather_ranked(data, axis, n, rank, length, lambda idx, i: data[idx],
                                   data.dtype, "T_topk_values"))  # fmt: skip
    if ret_type in ("both", "indices"):
        outs.append(_gather_ranked(data, axis, n, rank, length, _index_value(dtype), dtype,
                                   "T_topk_indices"))  # fmt: skip
    return outs if ret_type == "both" else outs[0]
