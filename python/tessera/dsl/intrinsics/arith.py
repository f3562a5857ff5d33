"""Arithmetic and selection intrinsics with masks: S.vadd, S.vsub, S.vsel."""

import ast

from ... import _core
from .. import types as T
from .. import typing as TY
from ..masks import to_mask
from ..values import is_expr
from . import intrinsic


def _signed_operands(p, node, x, y, out_sign):
    """Operands of an intrinsic with ``out_sign``: with None both must have one signedness;
    with "s"/"u" mixed signs are allowed and both become that sign."""
    x, y = p.load(x), p.load(y)
    if out_sign not in (None, "s", "u"):
        raise p.error(node, f'the arg "out_sign" must be None, "s" or "u", got {out_sign!r}')
    if out_sign is not None:
        signed = out_sign == "s"
        conv = []
        for v in (x, y):
            if is_expr(v) and T.is_int(v.dtype) and T.is_signed(v.dtype) != signed:
                v = p.call_op(node, T.with_sign(v.dtype, signed), "tir.reinterpret", [v])
            conv.append(v)
        x, y = conv
    return TY.unify(p, node, x, y)


def _masked(p, node, value, mask, r):
    """``value`` with inactive lanes taken from ``r`` (undefined without one)."""
    lanes = T.lanes_of(value.dtype)
    pred = to_mask(p, node, mask, lanes)
    if r is None or pred is None:
        return value
    r = TY.as_type(p, node, p.load(r), value.dtype)
    with p.at(node):
        return _core.Select(pred, value, r, p.span(node))


def _arith(p, node, op, x, y, mask, saturate, out_sign, r):
    if saturate:
        raise p.error(node, "saturate=True is not supported by this version of tessera yet")
    a, b = _signed_operands(p, node, x, y, out_sign)
    if T.lanes_of(a.dtype) == 1:
        raise p.error(node, f"expects vector operands, got {a.dtype}")
    return _masked(p, node, p.binop(node, op, a, b), mask, r)


@intrinsic
def vadd(p, node, x, y, mask=None, saturate=False, out_sign=None, r=None):
    """Lane-wise ``x + y``; a scalar operand is broadcast; inactive lanes from ``r``."""
    return _arith(p, node, ast.Add(), x, y, mask, saturate, out_sign, r)


@intrinsic
def vsub(p, node, x, y, mask=None, saturate=False, out_sign=None, r=None):
    """Lane-wise ``x - y``; a scalar operand is broadcast; inactive lanes from ``r``."""
    return _arith(p, node, ast.Sub(), x, y, mask, saturate, out_sign, r)


@intrinsic
def vsel(p, node, x, y, mask=None):
    """Active lanes from ``x``, the others from ``y`` (vectors or masks)."""
    a, b = TY.unify(p, node, p.load(x), p.load(y))
    lanes = T.lanes_of(a.dtype)
    if lanes == 1:
        raise p.error(node, f"S.vsel expects vector operands, got {a.dtype}")
    pred = to_mask(p, node, mask, lanes)
    if pred is None:
        return a
    with p.at(node):
        return _core.Select(pred, a, b, p.span(node))
