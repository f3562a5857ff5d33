"""The argument checks of the table's bitwise and shift intrinsics (table.py defines them): logic
(S.vand, S.vor, S.vxor, S.vinv), shifts (S.vsr, S.vsl, S.vror), narrowing shifts (S.vnsr,
S.vnsrsr) and bit counts (S.vcls, S.clz, S.vbrevs, S.vpcnt). S.vall and S.vany live with the
masks."""

import ast

from ... import _core
from .. import types as T
from .. import typing as TY
from ..masks import to_mask
from ..values import is_expr
from ._util import (call, check_dtype, check_multiple, false_mask, flag, imm, mask_expr,
                    select, undefined_inactive, vector)
from .arith import _masked

def _logic(p, node, name, op, x, y, mask, elements):
    """The logic form of the intrinsic table (table.py): S.vand, S.vor, S.vxor."""
    a, b = TY.unify(p, node, p.load(x), p.load(y), arithmetic=False)
    lanes = T.lanes_of(a.dtype)
    if lanes == 1:
        raise p.error(node, f"S.{name} expects vectors or masks, got {a.dtype}")
    if not T.is_bool(a.dtype):
        check_dtype(p, node, name, a.dtype, elements)
    result = p.binop(node, op, a, b)
    pred = to_mask(p, node, mask, lanes)
    if pred is not None and T.is_bool(a.dtype):
        return select(p, node, pred, result, false_mask(p, node, lanes))
    return undefined_inactive(p, node, result, pred)


def _invert(p, node, name, x, mask, elements):
    """The invert form of the intrinsic table (table.py): S.vinv."""
    x = p.load(x)
    if not is_expr(x) or T.lanes_of(x.dtype) == 1:
        raise p.error(node, f"S.{name} expects a vector or a mask, got {p.describe(x)}")
    if not T.is_bool(x.dtype):
        check_dtype(p, node, name, x.dtype, elements)
    result = p.unary(node, ast.Invert(), x)
    pred = to_mask(p, node, mask, T.lanes_of(x.dtype))
    if pred is not None and T.is_bool(x.dtype):
        return select(p, node, pred, result, false_mask(p, node, T.lanes_of(x.dtype)))
    return undefined_inactive(p, node, result, pred)


def _count(p, node, name, x, shift):
    """Shift counts as a vector of x's type (counts are read as unsigned)."""
    shift = p.load(shift)
    if is_expr(shift):
        if not T.is_int(shift.dtype):
            raise p.error(node, f'S.{name}: the shift must be an integer, got "{shift.dtype}"')
        if T.lanes_of(shift.dtype) == 1:
            if T.bits_of(shift.dtype) != T.bits_of(x.dtype):
                shift = _core.Cast(T.element_of(x.dtype), shift, p.span(node))
            elif shift.dtype != T.element_of(x.dtype):
                shift = p.call_op(node, T.element_of(x.dtype), "tir.reinterpret", [shift])
            return _core.Broadcast(shift, T.lanes_of(x.dtype), p.span(node))
        if T.lanes_of(shift.dtype) != T.lanes_of(x.dtype) or T.bits_of(shift.dtype) != T.bits_of(x.dtype):
            raise p.error(node, f'S.{name}: Argument type mismatch: "{x.dtype}" vs. "{shift.dtype}"')
        if shift.dtype != x.dtype:
            shift = p.call_op(node, x.dtype, "tir.reinterpret", [shift])
        return shift
    if isinstance(shift, bool) or not isinstance(shift, int):
        raise p.error(node, f"S.{name}: the shift must be an integer, got {p.describe(shift)}")
    lo, hi = TY.int_range(x.dtype)
    c = shift if lo <= shift <= hi else shift % (hi - lo + 1)
    if not lo <= c <= hi:
        c -= hi - lo + 1
    return TY.as_type(p, node, c, x.dtype)


def _shift(p, node, name, op, plain, on, what, x, shift, mask, r, elements):
    """The shift form of the intrinsic table (table.py): S.vsr, S.vsl, S.vror. The call is the
    entry's ``op``, or its ``plain`` op (a TIR shift) when the flag ``what`` is off."""
    x = vector(p, node, name, x)
    check_dtype(p, node, name, x.dtype, elements)
    count = _count(p, node, name, x, shift)
    if plain and not flag(p, node, name, on, what):
        op = plain
    return _masked(p, node, call(p, node, x.dtype, op, [x, count]), mask, r)


def _narrow(p, node, name, ops, x, shift, mask, saturate, out_sign, with_round, to_h, elements):
    """The narrow form of the intrinsic table (table.py): S.vnsr, S.vnsrsr; ``ops`` the entry's
    (op, to_h op)."""
    x = vector(p, node, name, x)
    check_dtype(p, node, name, x.dtype, elements)
    check_multiple(p, node, name, x.dtype)
    to_h = flag(p, node, name, to_h, "to_h")
    bits = T.bits_of(x.dtype)
    if to_h and bits != 32:
        raise p.error(node, f'S.{name}: to_h=True narrows 32-bit lanes, got "{x.dtype}"')
    if out_sign not in (None, "s", "u"):
        raise p.error(node, f'the arg "out_sign" must be None, "s" or "u", got {out_sign!r}')
    signed = T.is_signed(x.dtype) if out_sign is None else out_sign == "s"
    rbits = 16 if to_h else 8
    # A multiple width (k native parts) narrows part by part (the op's "dsl.split" is "parts"):
    # the result has k native parts too, each value at its source position.
    parts = T.lanes_of(x.dtype) // T.native_lanes(T.element_of(x.dtype))
    rtype = T.with_lanes(T.with_sign(f"int{rbits}", signed), 256 // rbits * parts)
    s = _count(p, node, name, x, shift)
    args = [x, s, mask_expr(p, node, mask, T.lanes_of(x.dtype)),
            imm(flag(p, node, name, saturate, "saturate")),
            imm(flag(p, node, name, with_round, "with_round")), imm(signed)]
    stype = T.with_sign(rtype, True)
    result = call(p, node, stype, ops[1] if to_h else ops[0], args)
    return result if stype == rtype else p.call_op(node, rtype, "tir.reinterpret", [result])


def _unary_count(p, node, name, op, x, mask, out_sign, allowed):
    """The bits form of the intrinsic table (table.py): S.vcls, S.clz, S.vbrevs, S.vpcnt."""
    x = vector(p, node, name, x)
    check_dtype(p, node, name, x.dtype, allowed)
    result = undefined_inactive(p, node, call(p, node, x.dtype, op, [x]), mask)
    if out_sign not in (None, "s", "u"):
        raise p.error(node, f'the arg "out_sign" must be None, "s" or "u", got {out_sign!r}')
    if out_sign is not None and T.is_signed(x.dtype) != (out_sign == "s"):
        result = p.call_op(node, T.with_sign(x.dtype, out_sign == "s"), "tir.reinterpret", [result])
    return result


def _unary_scalar(p, node, name, op, x, allowed):
    """A scalar ``x`` of the bits form (dsl.AlignVectorWidth computes it in lane 0 of a vector:
    the host C has no portable scalar clz); None for a vector."""
    x = p.load(x)
    if not (is_expr(x) and T.lanes_of(x.dtype) == 1):
        return None
    check_dtype(p, node, name, x.dtype, allowed)
    return call(p, node, x.dtype, op, [x])
