"""Arithmetic intrinsics: the argument checks of the table's arithmetic
(S.vadd, S.vsub, S.vmul, S.vdiv, S.vmod), widening products (S.vmull, S.vmulh), dot products
(S.vdot, S.vqdot, S.vdpa, S.vqdpa), fused multiply-adds (S.fma, S.vfmae, S.vfmao), S.abs,
S.rint, S.clip, S.vsel, pairwise ops (S.vaddh, S.vsubh, S.vmaxh, S.vminh), sums (S.vrpadd) and
the matrix products S.vmml, S.vmma: table.py defines them."""

import ast

from ... import _core
from .. import types as T
from .. import typing as TY
from ..masks import to_mask
from ..values import is_expr
from ._util import (NUMBERS, call, check_dtype, check_multiple, check_native, check_not_bf16_scalar,
                    flag, imm, mask_expr, select, undefined_inactive, value, vector)


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
        # A literal of the other sign (252 with int8 and out_sign="s") keeps its bits.
        other = x if is_expr(x) else y
        if is_expr(other) and T.is_int(other.dtype) and T.lanes_of(other.dtype) > 1:
            def bits_of_literal(v):
                if is_expr(v) or isinstance(v, (bool, float)) or not isinstance(v, int):
                    return v
                if TY.fits(v, T.with_sign(other.dtype, not signed)) and not TY.fits(v, other.dtype):
                    return TY.wrapped_constant(p, node, v, other.dtype)
                return v
            x, y = bits_of_literal(x), bits_of_literal(y)
    return TY.unify(p, node, x, y)


def _mixed_sign(p, node, x, y):
    """(signed, unsigned) when ``x`` and ``y`` are integer vectors (or an integer vector and a
    literal of the other sign) of one width with different signs, else None."""
    x, y = p.load(x), p.load(y)

    def as_vec(v, like):
        if is_expr(v):
            return v
        if isinstance(v, int) and not isinstance(v, bool) and T.is_int(like.dtype):
            for t in (like.dtype, T.with_sign(like.dtype, not T.is_signed(like.dtype))):
                if TY.fits(v, t):
                    return TY.constant(p, node, v, t)
        return None

    if is_expr(x) and not is_expr(y):
        y = as_vec(y, x)
    elif is_expr(y) and not is_expr(x):
        x = as_vec(x, y)
    if x is None or y is None or not (is_expr(x) and is_expr(y)):
        return None
    tx, ty = x.dtype, y.dtype
    if T.lanes_of(tx) == 1 or T.lanes_of(tx) != T.lanes_of(ty) or not (T.is_int(tx) and T.is_int(ty)):
        return None
    if T.bits_of(tx) != T.bits_of(ty) or T.is_signed(tx) == T.is_signed(ty):
        return None
    return (x, y) if T.is_signed(tx) else (y, x)


def _saturating_mixed_add(p, node, s, u, out_signed):
    """The exact sum of a signed and an unsigned vector of one width, saturated to the signed or
    unsigned type of that width, without a wider type: by cases on the operands' signs."""
    st, ut = s.dtype, u.dtype
    su = p.call_op(node, ut, "tir.reinterpret", [s])
    neg = p.compare(node, ast.Lt(), s, 0)
    span = p.span(node)
    if not out_signed:
        # s < 0: max(u - |s|, 0); else u + s saturated.
        abs_s = p.call_op(node, ut, "tir.reinterpret", [p.binop(node, ast.Sub(), 0, s)])
        with p.at(node):
            return _core.Select(neg, call(p, node, ut, "dsl.vsubs", [u, abs_s]),
                                call(p, node, ut, "dsl.vadds", [su, u]), span)
    us = p.call_op(node, st, "tir.reinterpret", [u])
    big = p.compare(node, ast.Lt(), us, 0)  # u > SMAX: the sum is >= s + 2**(N-1)
    smax = TY.int_range(st)[1]
    wrapped = p.binop(node, ast.Add(), su, u)  # s < 0: the exact sum, in [0, 2**N - 2]
    with p.at(node):
        wrapped = _core.Min(wrapped, TY.constant(p, node, smax, ut), span)
    wrapped = p.call_op(node, st, "tir.reinterpret", [wrapped])
    with p.at(node):
        high = _core.Select(neg, wrapped, TY.constant(p, node, smax, st), span)
        return _core.Select(big, high, call(p, node, st, "dsl.vadds", [s, us]), span)


def _masked(p, node, value, mask, r):
    """``value`` with inactive lanes taken from ``r`` (undefined without one)."""
    lanes = T.lanes_of(value.dtype)
    pred = to_mask(p, node, mask, lanes)
    if pred is None:
        return value
    if r is None:
        return undefined_inactive(p, node, value, pred)
    r = TY.as_type(p, node, p.load(r), value.dtype)
    with p.at(node):
        return _core.Select(pred, value, r, p.span(node))


def _arith(p, node, name, op, sat_op, x, y, mask, saturate, out_sign, r, elements):
    """The arith form of the intrinsic table (table.py): S.vadd, S.vsub, S.vmul, S.vdiv, S.vmod;
    the TIR operator ``op``, or the op ``sat_op`` with ``saturate``."""
    mixed = (_mixed_sign(p, node, x, y) if isinstance(op, ast.Add) and saturate and out_sign
             else None)
    if mixed is not None:
        value = _saturating_mixed_add(p, node, *mixed, out_sign == "s")
        return _masked(p, node, value, mask, r)
    a, b = _signed_operands(p, node, x, y, out_sign)
    if T.lanes_of(a.dtype) == 1:
        raise p.error(node, f"S.{name} expects vector operands, got {a.dtype}")
    if saturate:
        check_dtype(p, node, name, a.dtype, elements)
        if not T.is_int(a.dtype):
            raise p.error(node, f'S.{name}: saturate=True needs integer operands, got "{a.dtype}"')
        value = call(p, node, a.dtype, sat_op, [a, b])
    else:
        # The operator first: its own refusals name the operation ("vector multiplication
        # (S.vmul) does not support 8-bit elements").
        value = p.binop(node, op, a, b)
        check_dtype(p, node, name, a.dtype, elements)
    return _masked(p, node, value, mask, r)


def _widening(p, node, name, op, high, x, y, mask, out_sign, r, elements):
    """The widen form of the intrinsic table (table.py): S.vmull, S.vmulh (``high``)."""
    a, b = _signed_operands(p, node, x, y, out_sign)
    check_dtype(p, node, name, a.dtype, elements)
    check_native(p, node, name, a.dtype)
    lanes = T.lanes_of(a.dtype)
    bits = T.bits_of(a.dtype)
    rtype = a.dtype if bits == 32 else T.with_lanes(
        T.with_sign(f"int{2 * bits}", T.is_signed(a.dtype)), lanes // 2)
    value = call(p, node, rtype, op, [a, b])
    pred = to_mask(p, node, mask, lanes)
    if r is None or pred is None:
        return value
    # The mask has the operands' lanes; result lane i comes from operand lane i (+ half).
    vals = [bool(pred.args[i].value) for i in range(lanes)] if pred.op_name == "dsl.const_mask" else None
    if vals is None:
        raise p.error(node, f"S.{name} with r= needs a constant mask")
    first = lanes // 2 if high else 0
    rl = T.lanes_of(rtype)
    if bits == 32:
        keep = [vals[first + i // 2] for i in range(rl)]
    else:
        keep = [vals[first + i] for i in range(rl)]
    from ..masks import const_mask_expr

    return select(p, node, const_mask_expr(p, node, keep), value,
                  TY.as_type(p, node, p.load(r), rtype))


def _pairwise(p, node, name, x, y, allowed=NUMBERS):
    a, b = TY.unify(p, node, p.load(x), p.load(y), arithmetic=False)
    if T.lanes_of(a.dtype) == 1:
        raise p.error(node, f"S.{name} expects vector operands, got {a.dtype}")
    check_dtype(p, node, name, a.dtype, allowed)
    check_multiple(p, node, name, a.dtype)
    # dsl.AlignVectorWidth splits a multiple width into native parts (the op's "dsl.form").
    return call(p, node, a.dtype, f"dsl.{name}", [a, b])


def _mixed_dot(p, node, name, op, s, u, mask, quad):
    """S.vdot/S.vqdot of a signed and an unsigned integer vector of one width: a signed result
    (8 -> int16, 16 -> int32, quad 8 -> int32), as Compass gives. One ``op`` call with the
    signed operand first: dsl.AlignVectorWidth lowers it to exact widened products and
    saturating pairwise sums (dsl.vaddh), native part by native part."""
    bits, lanes = T.bits_of(s.dtype), T.lanes_of(s.dtype)
    if bits not in (8, 16) or (quad and bits != 8):
        raise p.error(node, f'S.{name} takes 8-bit or 16-bit integer vectors only, got '
                            f'"{s.dtype}" and "{u.dtype}"')
    check_multiple(p, node, name, s.dtype)
    factor = 4 if quad else 2
    rtype = f"int{bits * factor}x{lanes // factor}"
    return call(p, node, rtype, op, [s, u, mask_expr(p, node, mask, lanes)])


def _dot(p, node, name, op, x, y, mask, quad, allowed):
    """The dot form of the intrinsic table (table.py): S.vdot, S.vqdot (``quad``)."""
    mixed = _mixed_sign(p, node, x, y)
    if mixed is not None and not T.is_float(mixed[0].dtype):
        return _mixed_dot(p, node, name, op, *mixed, mask, quad)
    xl, yl = p.load(x), p.load(y)
    if (is_expr(xl) and is_expr(yl) and T.lanes_of(xl.dtype) > 1 and T.lanes_of(yl.dtype) > 1
            and T.bits_of(xl.dtype) != T.bits_of(yl.dtype)):
        raise p.error(node, f'S.{name}: Argument type mismatch: "{xl.dtype}" vs. "{yl.dtype}"')
    a, b = TY.unify(p, node, xl, yl, arithmetic=False)
    if T.lanes_of(a.dtype) == 1:
        raise p.error(node, f"S.{name} expects vector operands, got {a.dtype}")
    if T.element_of(a.dtype) not in allowed:
        what = ("8-bit integer or 16-bit float vectors" if quad else "8-bit or 16-bit integer vectors")
        raise p.error(node, f'S.{name} takes {what} only; the arg "x" has the type "{a.dtype}"')
    check_multiple(p, node, name, a.dtype)
    lanes, bits = T.lanes_of(a.dtype), T.bits_of(a.dtype)
    factor = 4 if quad else 2
    m = mask_expr(p, node, mask, lanes)
    n = T.native_lanes(T.element_of(a.dtype))
    if T.is_float(a.dtype):
        rtype = "float32x8"  # sums in the even lanes
    else:
        rtype = T.with_lanes(T.with_sign(f"int{bits * factor}", T.is_signed(a.dtype)), n // factor)
    # dsl.AlignVectorWidth splits a multiple width into native parts (the op's "dsl.split").
    rtype = T.with_lanes(rtype, T.lanes_of(rtype) * (lanes // n))
    return call(p, node, rtype, op, [a, b, m])


def _accumulate(p, node, name, op, acc, x, y, mask, quad, dot):
    """The dot_acc form of the intrinsic table (table.py): S.vdpa (``op``), S.vqdpa (``quad``);
    ``dot`` the (name, op, element types) of S.vdot or S.vqdot."""
    acc_value, x_value = p.load(acc), p.load(x)
    if is_expr(acc_value) and is_expr(x_value) and T.lanes_of(x_value.dtype) > 1:
        # The accumulator is checked against x first: an integer one holds sums of 2 (4 for
        # vqdpa) of x's lanes at 2 (4) times their bits; a float one (vqdpa of 16-bit floats)
        # is float32 with half x's lanes.
        ta, tx = acc_value.dtype, x_value.dtype
        both_int = T.is_int(ta) and T.is_int(tx)
        factor = 4 if quad and both_int else 2
        kinds = both_int or (quad and T.is_float(ta) and T.is_float(tx))
        if not (kinds and T.bits_of(ta) == factor * T.bits_of(tx)
                and factor * T.lanes_of(ta) == T.lanes_of(tx)):
            raise p.error(node, f'S.{name}: Argument type mismatch: the accumulator "{ta}" does '
                                f'not hold the sums of "{tx}"')
    dot = _dot(p, node, *dot[:2], x, y, mask, quad, dot[2])
    acc = p.load(acc)
    if not is_expr(acc) or acc.dtype != dot.dtype:
        raise p.error(node, f'S.{name}: Argument type mismatch: the accumulator must be '
                            f'"{dot.dtype}", got {p.describe(acc)}')
    if T.is_int(dot.dtype) and not quad:
        # acc + the pair sums, exact, saturated once (Compass clamps the total only: a pair sum
        # past the range may be brought back by acc).
        mixed = _mixed_sign(p, node, x, y)
        a, b = mixed if mixed is not None else TY.unify(p, node, p.load(x), p.load(y), arithmetic=False)
        m = mask_expr(p, node, mask, T.lanes_of(a.dtype))
        return call(p, node, dot.dtype, op, [acc, a, b, m])
    if T.is_int(dot.dtype):
        # The 4-lane sums are exact (they fit the quadruple width): one saturation, of the total.
        return call(p, node, dot.dtype, "dsl.vadds", [acc, dot])
    if quad and getattr(p, "x2_feature", False) is None:
        # Float S.vqdpa is an X2 instruction (Compass refuses it on X3 targets): the use is
        # marked on the function for dsl.VerifyTargetFeatures.
        p.x2_feature = (f"S.{name} of float vectors", p.span(node))
    # acc and the 4 products of each group summed exactly, rounded to float32 once (Compass's
    # float S.vqdpa; acc + S.vqdot would round the products' sum first).
    a, b = TY.unify(p, node, p.load(x), p.load(y), arithmetic=False)
    return call(p, node, dot.dtype, op, [acc, a, b, mask_expr(p, node, mask, T.lanes_of(a.dtype))])


def _sum_lanes(p, node, name, op, x, mask, elements, multiple):
    """The reduce form of the intrinsic table with lane function "add" (S.vrpadd): a sum into
    lane 0; 16-bit floats sum into float32x8. ``multiple``: a multiple width sums into lane 0 of
    a result of its lanes (the active lanes of every native part, the parts' sums added in
    order), split by dsl.AlignVectorWidth (the op's "dsl.split")."""
    x = vector(p, node, name, x)
    check_dtype(p, node, name, x.dtype, elements)
    e = T.element_of(x.dtype)
    rtype = "float32x8" if e in ("float16", "bfloat16") else T.hw_native_vdtype(e)
    if not T.is_native(x.dtype):
        if not multiple:
            check_native(p, node, name, x.dtype)
        check_multiple(p, node, name, x.dtype)
        rtype = T.with_lanes(rtype, T.lanes_of(x.dtype))
    return call(p, node, rtype, op, [x, mask_expr(p, node, mask, T.lanes_of(x.dtype))])


def _matrix(p, node, name, op, ptr, x, y, elements):
    """The matrix form of the intrinsic table (table.py): S.vmml, S.vmma write (or add) the
    float32 4x4 product of two native 16-bit float vectors through ``ptr``."""
    x, y = vector(p, node, name, x), vector(p, node, name, y, "y")
    native = tuple(T.hw_native_vdtype(e) for e in elements)
    if x.dtype != y.dtype or x.dtype not in native:
        raise p.error(node, f'S.{name}: Argument type mismatch: expects two {" or ".join(native)} '
                            f'operands, got "{x.dtype}" and "{y.dtype}"')
    target = p.scalar_view(node, p.pointer_of(node, ptr, f"S.{name}"))
    if target.element != "float32":
        raise p.error(node, f'S.{name} writes float32 results, got a pointer to "{target.element}"')
    p.emit_call(node, op, [p.pointer_expr(node, target), x, y])


def _fma(p, node, name, op, acc, x, y, mask, elements):
    """The fma form of the intrinsic table (table.py): S.fma, ``op`` computing acc + x * y in
    double, rounded once (as Compass computes it)."""
    acc = value(p, node, name, acc, "acc")
    if T.element_of(acc.dtype) not in elements:
        raise p.error(node, f'S.{name} works on {", ".join(elements)}, got "{acc.dtype}"')
    result = call(p, node, acc.dtype, op, [acc, TY.as_type(p, node, p.load(x), acc.dtype, "x"),
                                           TY.as_type(p, node, p.load(y), acc.dtype, "y")])
    if T.lanes_of(acc.dtype) == 1:
        return result
    pred = to_mask(p, node, mask, T.lanes_of(acc.dtype))
    return result if pred is None else select(p, node, pred, result, acc)


def _fma_half(p, node, name, op, acc, x, y, mask, elements):
    """The fma_half form of the intrinsic table (table.py): S.vfmae, S.vfmao."""
    acc = vector(p, node, name, acc, "acc")
    x, y = vector(p, node, name, x), vector(p, node, name, y, "y")
    native = tuple(T.hw_native_vdtype(e) for e in elements)
    if acc.dtype != "float32x8" or x.dtype != y.dtype or x.dtype not in native:
        raise p.error(node, f'S.{name}: Argument type mismatch: expects a float32x8 accumulator '
                            f'and two float16x16 or bfloat16x16 operands, got "{acc.dtype}", '
                            f'"{x.dtype}", "{y.dtype}"')
    return call(p, node, "float32x8", op, [acc, x, y, mask_expr(p, node, mask, 8)])


def _abs(p, node, name, op, x, mask, saturate, elements):
    """The unary form of the intrinsic table (table.py) with lane function "abs": S.abs."""
    x = value(p, node, name, x)
    check_dtype(p, node, name, x.dtype, elements)
    check_not_bf16_scalar(p, node, name, x.dtype)
    saturate = flag(p, node, name, saturate, "saturate")
    if T.lanes_of(x.dtype) == 1:
        if T.is_int(x.dtype) and not T.is_signed(x.dtype):
            return x
        if T.is_float(x.dtype):  # in lane 0 of a vector: dsl.AlignVectorWidth ("dsl.scalar")
            return call(p, node, x.dtype, op, [x, imm(0)])
        neg = p.unary(node, ast.USub(), x)
        result = select(p, node, p.compare(node, ast.Lt(), x, 0), neg, x)
        if saturate:
            lo, hi = TY.int_range(x.dtype)
            result = select(p, node, p.compare(node, ast.Eq(), x, lo),
                            TY.constant(p, node, hi, x.dtype), result)
        return result
    return undefined_inactive(p, node, call(p, node, x.dtype, op, [x, imm(saturate)]), mask)


def _rint(p, node, name, op, x, mask, elements):
    """The unary form of the intrinsic table (table.py) with lane function "rint": S.rint."""
    x = value(p, node, name, x)
    check_dtype(p, node, name, x.dtype, elements)
    check_not_bf16_scalar(p, node, name, x.dtype)
    if T.lanes_of(x.dtype) == 1:  # in lane 0 of a vector: dsl.AlignVectorWidth ("dsl.scalar")
        return call(p, node, x.dtype, op, [x])
    return undefined_inactive(p, node, call(p, node, x.dtype, op, [x]), mask)


def _clip(p, node, name, x, min_val, max_val, mask, elements):
    """The clip form of the intrinsic table (table.py): S.clip, ``max(min(x, max_val), min_val)``
    (``min_val`` when it exceeds ``max_val``, as Compass); inactive lanes keep ``x``. Scalars too."""
    x = value(p, node, name, x)
    check_dtype(p, node, name, x.dtype, elements)
    check_not_bf16_scalar(p, node, name, x.dtype)
    lo = TY.as_type(p, node, p.load(min_val), x.dtype, "min_val")
    hi = TY.as_type(p, node, p.load(max_val), x.dtype, "max_val")
    with p.at(node):
        result = _core.Max(_core.Min(x, hi, p.span(node)), lo, p.span(node))
    if T.lanes_of(x.dtype) == 1:
        return result
    pred = to_mask(p, node, mask, T.lanes_of(x.dtype))
    return result if pred is None else select(p, node, pred, result, x)


def _select(p, node, name, x, y, mask, elements):
    """The select form of the intrinsic table (table.py): S.vsel."""
    a, b = TY.unify(p, node, p.load(x), p.load(y))
    lanes = T.lanes_of(a.dtype)
    if lanes == 1:
        raise p.error(node, f"S.{name} expects vector operands, got {a.dtype}")
    if not T.is_bool(a.dtype):
        check_dtype(p, node, name, a.dtype, elements)
    pred = to_mask(p, node, mask, lanes)
    if pred is None:
        return a
    with p.at(node):
        return _core.Select(pred, a, b, p.span(node))
