"""Typing rules of the DSL's operators: literals, broadcast and implicit promotion.

- A literal takes the type of the other operand; into an integer vector it is broadcast to the
  signed or unsigned type of the element width that holds it, else it is an error:
  ``the literal 300 fits none of the types it could take here (int8x32, uint8x32)``.
- A scalar variable broadcast into a vector is converted to the element type when all its values
  fit it (``uint8`` into ``uint16x16``); otherwise it is an error.
- Vector operands of equal lanes and different widths promote the narrower to the wider type
  in arithmetic (``i8x8 + i32x8`` is ``i32x8``); scalars promote like C, integers to floats.
- Scalar operands follow :func:`result_type` (Compass's rule): a literal the other operand's type
  does not hold promotes to int32 first; a signed and an unsigned scalar give the wider type, or
  the unsigned one for equal widths. Integer vectors of different signedness are an error;
  intrinsics accept ``out_sign``.
"""

import numpy as np

from .. import _core
from . import types as T
from .values import is_expr

_RANGES = {
    "int8": (-(2**7), 2**7 - 1), "uint8": (0, 2**8 - 1), "int16": (-(2**15), 2**15 - 1),
    "uint16": (0, 2**16 - 1), "int32": (-(2**31), 2**31 - 1), "uint32": (0, 2**32 - 1),
    "bool": (0, 1),
}


def int_range(dtype):
    return _RANGES[T.element_of(dtype)]


def fits(value, dtype):
    lo, hi = int_range(dtype)
    return lo <= value <= hi


def sign_error(p, node, a, b):
    return p.error(node, f'the operands differ in sign: "{a}" vs. "{b}"; convert one with '
                         f'S.i/S.u, or use an intrinsic with out_sign="s" or "u"')


def mismatch(p, node, a, b):
    return p.error(node, f'Argument type mismatch: "{a}" vs. "{b}"')


def constant(p, node, value, dtype):
    """A Python number as a constant of exactly ``dtype`` (broadcast for vectors)."""
    elem = T.element_of(dtype)
    lanes = T.lanes_of(dtype)
    span = p.span(node)
    if elem.startswith(("float", "bfloat")):
        c = _core.FloatImm(elem, float(value), span)
    elif elem == "bool":
        c = _core.IntImm("bool", int(bool(value)), span)
    else:
        c = _core.IntImm(elem, int(value), span)
    return _core.Broadcast(c, lanes, span) if lanes > 1 else c


def wrapped_constant(p, node, value, dtype):
    """A literal as a constant of ``dtype``, integers wrapping modulo its range (as in C)."""
    if T.is_int(dtype) and not isinstance(value, float):
        lo, hi = int_range(dtype)
        value = (int(value) - lo) % (hi - lo + 1) + lo
    return constant(p, node, value, dtype)


def literal_for(p, node, value, dtype, promote=False):
    """A literal used with an operand of ``dtype``: its type follows the rules above. With
    ``promote`` (the operators), an integer literal that an integer vector's type does not hold,
    or a float literal with an integer or a 16-bit float operand, gives None: the operation
    promotes (:func:`result_type`: a float literal is float32)."""
    elem = T.element_of(dtype)
    lanes = T.lanes_of(dtype)
    if isinstance(value, (np.generic,)):
        value = value.item()
    candidates = [dtype] if elem in ("bool",) or T.is_float(elem) else [
        dtype, T.with_sign(dtype, not T.is_signed(dtype))]

    def refuse():
        names = ", ".join(candidates)
        return p.error(node, f"the literal {value} fits none of the types it could take here "
                               f"({names})")

    if elem == "bool":
        if isinstance(value, bool) or value in (0, 1):
            return constant(p, node, value, dtype)
        raise refuse()
    if T.is_float(elem):
        if isinstance(value, bool):
            raise refuse()
        if promote and isinstance(value, float) and elem != "float32":
            return None  # float16/bfloat16 with a float literal: a float32 operation (Compass)
        return constant(p, node, value, dtype)
    if isinstance(value, float):
        if lanes == 1 or promote:
            return None  # an integer meets a float literal: the operation is a float one
        raise refuse()
    if isinstance(value, bool):
        value = int(value)
    if lanes == 1 or promote:
        # A literal that the scalar's type does not hold promotes the operation (result_type).
        return constant(p, node, value, dtype) if fits(value, dtype) else None
    for cand in candidates:
        if fits(value, cand):
            return constant(p, node, value, cand)
    raise refuse()


def default_expr(p, node, value):
    """A literal without context: int32, float32 or bool."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool):
        return constant(p, node, value, "bool")
    if isinstance(value, int):
        if not fits(value, "int32"):
            if fits(value, "uint32"):
                return constant(p, node, value, "uint32")
            raise p.error(node, f"the literal {value} fits neither int32 nor uint32")
        return constant(p, node, value, "int32")
    if isinstance(value, float):
        return constant(p, node, value, "float32")
    raise p.error(node, f"expected a number or a kernel value, got {p.describe(value)}")


def convert(p, node, expr, dtype):
    """An implicit conversion of ``expr`` to ``dtype`` (a Cast with the DSL's semantics)."""
    if expr.dtype == dtype:
        return expr
    return _core.Cast(dtype, expr, p.span(node))


def result_type(lhs, rhs):
    """The scalar type of a binary operator's result (Compass's rule; see
    :func:`tessera.dsl.utils.get_binary_op_result_type`). ``lhs``/``rhs`` are dtype names or
    Python literals."""
    def classify(x):
        if isinstance(x, (bool, np.bool_)):
            return "bool"
        if isinstance(x, (float, np.floating)):
            return "float32"
        if isinstance(x, (int, np.integer)):
            return int(x)
        return T.element_of(x)

    a, b = classify(lhs), classify(rhs)
    if isinstance(a, int) and isinstance(b, int):
        return "int32"
    if isinstance(a, int):
        if T.is_int(b) and fits(a, b):
            return b
        a = "int32"
    if isinstance(b, int):
        if T.is_int(a) and fits(b, a):
            return a
        b = "int32"
    if a == b:
        return a

    def kind(t):
        return t.rstrip("0123456789")

    ka, kb = kind(a), kind(b)
    if ka == kb:
        return a if T.bits_of(a) > T.bits_of(b) else b
    for k in ("float", "bfloat"):
        if k in (ka, kb):
            return a if ka == k else b
    if "bool" in (ka, kb):
        return b if ka == "bool" else a
    if T.bits_of(a) != T.bits_of(b):
        return a if T.bits_of(a) > T.bits_of(b) else b
    return a if ka == "uint" else b


def wider(a, b):
    """The wider of two element types; for equal widths, None."""
    ba, bb = T.bits_of(a), T.bits_of(b)
    if ba == bb:
        return None
    return a if ba > bb else b


def unify(p, node, x, y, arithmetic=True, promote=False):
    """Two operands as expressions of one type. ``promote`` (the operators, as Compass's
    get_binary_op_result_type): an integer vector with a literal its type does not hold, or with
    a float literal, or a vector with a scalar expression whose values its element type does not
    all hold, converts both to :func:`result_type` at the vector's lanes (``u8x32 + 300`` is
    ``i32x32``, ``u8x32 + 5.3`` is ``fp32x32``); the intrinsics refuse these."""
    x, y = p.load(x), p.load(y)
    xe, ye = is_expr(x), is_expr(y)
    if xe and not ye:
        lit = literal_for(p, node, y, x.dtype, promote)
        if lit is None:  # an integer with a float literal or one out of its range
            t = T.with_lanes(result_type(x.dtype, y), T.lanes_of(x.dtype))
            return convert(p, node, x, t), wrapped_constant(p, node, y, t)
        y = lit
    elif ye and not xe:
        lit = literal_for(p, node, x, y.dtype, promote)
        if lit is None:
            t = T.with_lanes(result_type(x, y.dtype), T.lanes_of(y.dtype))
            return wrapped_constant(p, node, x, t), convert(p, node, y, t)
        x = lit
    elif not xe and not ye:
        x = default_expr(p, node, x)
        y = literal_for(p, node, y, x.dtype) or default_expr(p, node, y)
    tx, ty = x.dtype, y.dtype
    if tx == ty:
        return x, y
    lx, ly = T.lanes_of(tx), T.lanes_of(ty)
    ex, ey = T.element_of(tx), T.element_of(ty)
    if lx > 1 and ly > 1 and lx != ly:
        raise mismatch(p, node, tx, ty)
    if (ex == "bool") != (ey == "bool"):
        raise mismatch(p, node, tx, ty)
    if promote and (lx == 1) != (ly == 1):
        s, v = (x, ty) if lx == 1 else (y, tx)
        if not can_safe_cast(s.dtype, T.element_of(v)) and not T.is_bool(s.dtype) \
                and not T.is_bool(v):
            t = T.with_lanes(result_type(ex, ey), T.lanes_of(v))
            vec = convert(p, node, y if lx == 1 else x, t)
            sc = broadcast_scalar(p, node, convert(p, node, s, T.element_of(t)), t)
            return (sc, vec) if lx == 1 else (vec, sc)
    if lx == 1 and ly > 1:
        return broadcast_scalar(p, node, x, ty), y
    if ly == 1 and lx > 1:
        return x, broadcast_scalar(p, node, y, tx)
    # Same lanes, different element types.
    if T.is_int(ex) and T.is_int(ey):
        if T.is_signed(ex) != T.is_signed(ey):
            if lx > 1 and not promote:
                raise sign_error(p, node, tx, ty)
            # Scalars, and vectors under an operator (as Compass's operators): the wider type;
            # for equal widths, the unsigned one.
            t = T.with_lanes(result_type(ex, ey), lx)
            return convert(p, node, x, t), convert(p, node, y, t)
        if lx > 1 and not arithmetic:
            raise mismatch(p, node, tx, ty)
        w = wider(ex, ey)
        return convert(p, node, x, T.with_lanes(w, lx)), convert(p, node, y, T.with_lanes(w, lx))
    if lx == 1:
        # Scalars: integers convert to the float type; floats widen.
        if T.is_int(ex):
            return convert(p, node, x, ey), y
        if T.is_int(ey):
            return x, convert(p, node, y, ex)
        w = wider(ex, ey)
        if w is None:
            w = "float32"  # float16 with bfloat16
        return convert(p, node, x, w), convert(p, node, y, w)
    w = wider(ex, ey)
    if w is None or not arithmetic:
        raise mismatch(p, node, tx, ty)
    return convert(p, node, x, T.with_lanes(w, lx)), convert(p, node, y, T.with_lanes(w, lx))


def _range_of(dtype):
    elem = T.element_of(dtype)
    if T.is_float(elem):
        info = {"float16": 65504.0, "float32": 3.4028234663852886e38,
                "bfloat16": 3.3895313892515355e38}[elem]
        return -info, info
    return int_range(elem)


def can_safe_cast(from_dtype, to_dtype):
    """Whether every value of ``from_dtype`` is a value of ``to_dtype`` (floats never go to
    integers): the rule by which a scalar variable broadcasts into a vector of another type."""
    if T.is_bool(from_dtype) != T.is_bool(to_dtype):
        return False
    if T.is_float(from_dtype) and not T.is_float(to_dtype):
        return False
    (flo, fhi), (tlo, thi) = _range_of(from_dtype), _range_of(to_dtype)
    return tlo <= flo and fhi <= thi


def broadcast_scalar(p, node, s, vtype):
    """A scalar expression broadcast into a vector of ``vtype``. A scalar variable of another
    type is converted first when all of its values are values of the element type (a ``uint8``
    into ``uint16x16``, an ``int16`` into ``float32x8``)."""
    elem = T.element_of(vtype)
    st = s.dtype
    if st != elem:
        if can_safe_cast(st, elem):
            s = convert(p, node, s, elem)
            return _core.Broadcast(s, T.lanes_of(vtype), p.span(node))
        if T.is_int(st) and T.is_int(elem) and T.is_signed(st) != T.is_signed(elem) and \
                can_safe_cast(st, T.with_sign(elem, T.is_signed(st))):
            raise sign_error(p, node, vtype, st)
        names = vtype if not T.is_int(elem) else \
            f"{vtype}, {T.with_sign(vtype, not T.is_signed(elem))}"
        raise p.error(node, f"a scalar of type {st} cannot be broadcast into ({names}): not all "
                            f"its values fit the element type; convert it with S.cast")
    return _core.Broadcast(s, T.lanes_of(vtype), p.span(node))


def as_type(p, node, value, dtype, what="value"):
    """``value`` (a literal or an expression) as exactly ``dtype``: literals follow the broadcast
    rules; expressions must already have the type (scalars broadcast into vectors)."""
    if not is_expr(value):
        if T.lanes_of(dtype) > 1 and T.element_of(dtype) != "bool" and not T.is_float(dtype):
            lit = literal_for(p, node, value, dtype)
            if lit.dtype != dtype:
                raise sign_error(p, node, dtype, lit.dtype)
            return lit
        if T.is_int(dtype) and isinstance(value, float):
            raise p.error(node, f"cannot use the float {value!r} where {dtype} is expected")
        if T.is_int(dtype) and not isinstance(value, bool) and not fits(int(value), dtype):
            raise p.error(node, f"the literal {value} is out of range for {dtype}")
        return constant(p, node, value, dtype)
    if value.dtype == dtype:
        return value
    if T.lanes_of(value.dtype) == 1 and T.lanes_of(dtype) > 1:
        return broadcast_scalar(p, node, value, dtype)
    if T.is_int(value.dtype) and T.is_int(dtype) and T.bits_of(value.dtype) == T.bits_of(dtype) \
            and T.lanes_of(value.dtype) == T.lanes_of(dtype):
        raise sign_error(p, node, dtype, value.dtype)
    raise mismatch(p, node, dtype, value.dtype)
