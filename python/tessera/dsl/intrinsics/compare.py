"""The argument checks of the table's comparisons (S.vceq, S.vcneq, S.vcge, S.vcgt, S.vcle,
S.vclt), extremes (S.max, S.min), classes (S.isnan, S.isinf, S.isfinite) and extreme-lane
reductions (S.vrpmax, S.vrpmin): table.py defines them."""

from ... import _core
from .. import types as T
from .. import typing as TY
from ..masks import to_mask
from ..values import is_expr
from ._util import (call, check_dtype, check_native, check_not_bf16_scalar, false_mask, flag, imm,
                    mask_expr, select, vector)
from .arith import _masked


def _compare(p, node, name, op, x, y, mask, elements):
    """The compare form of the intrinsic table (table.py): S.vceq ... S.vclt."""
    a, b = TY.unify(p, node, p.load(x), p.load(y), arithmetic=False)
    lanes = T.lanes_of(a.dtype)
    if lanes == 1 or T.is_bool(a.dtype):
        raise p.error(node, f"S.{name} expects vector operands, got {a.dtype}")
    check_dtype(p, node, name, a.dtype, elements)
    result = p.compare(node, op, a, b)
    pred = to_mask(p, node, mask, lanes)
    return result if pred is None else select(p, node, pred, result, false_mask(p, node, lanes))


def _classify(p, node, name, op, x, mask, allowed):
    """The classify form of the intrinsic table (table.py): S.isnan, S.isinf, S.isfinite."""
    x = p.load(x)
    if not is_expr(x):
        x = p.to_expr(node, x)
    check_dtype(p, node, name, x.dtype, allowed)
    check_not_bf16_scalar(p, node, name, x.dtype)
    lanes = T.lanes_of(x.dtype)
    if lanes == 1:  # dsl.AlignVectorWidth computes it in lane 0 of a vector ("dsl.scalar")
        return call(p, node, "bool", op, [x])
    return call(p, node, f"boolx{lanes}", op, [x, mask_expr(p, node, mask, lanes)])


def _extreme(p, node, name, which, x, y, mask, r):
    """The minmax form of the intrinsic table (table.py): S.max, S.min (the TIR node
    ``which``)."""
    a, b = TY.unify(p, node, p.load(x), p.load(y))
    if T.is_bool(a.dtype):
        raise p.error(node, f'S.{name} does not work on masks ("{a.dtype}")')
    check_not_bf16_scalar(p, node, name, a.dtype)
    with p.at(node):
        result = getattr(_core, which)(a, b, p.span(node))
    if T.lanes_of(a.dtype) == 1:
        return result
    return _masked(p, node, result, mask, r)


def _extreme_lane(p, node, name, op, x, mask, return_idx, elements):
    """The reduce form of the intrinsic table with lane function "max"/"min" (S.vrpmax,
    S.vrpmin; table.py)."""
    x = vector(p, node, name, x)
    check_dtype(p, node, name, x.dtype, elements)
    check_native(p, node, name, x.dtype)
    # Whether the target has return_idx is checked by dsl.VerifyTargetFeatures (the parse is
    # shared by every target).
    return_idx = flag(p, node, name, return_idx, "return_idx")
    return call(p, node, x.dtype, op,
                [x, mask_expr(p, node, mask, T.lanes_of(x.dtype)), imm(bool(return_idx))])
