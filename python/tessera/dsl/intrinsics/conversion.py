"""The argument checks of the table's conversions (table.py): S.cast (parts, saturation,
narrowing from tuples), S.i, S.u, S.reinterpret, S.vxtl and S.vxth.

A cast converts values: integers wrap (or clamp with ``saturate=True``), floats round to
nearest, floats convert to int32 saturating (NaN is 0) and to narrower integers through int32.
"""

import numpy as np

from ... import _core
from .. import types as T
from .. import typing as TY
from ..values import UNBOUNDED, Pointer, is_expr

_HALVES = {"low": (0, 1), "high": (None, 1), "even": (0, 2), "odd": (1, 2)}
_QUARTERS = {"ll": 0, "lh": 1, "hl": 2, "hh": 3}


def _forbidden(src, dst):
    """Why there is no direct conversion from src to dst, or None."""
    s, d = T.element_of(src), T.element_of(dst)
    pairs = {("uint32", "float32"), ("float32", "uint32"), ("uint32", "float16"), ("uint32", "bfloat16"),
             ("bfloat16", "uint32")}
    if (s, d) in pairs:
        return True
    half = ("float16", "bfloat16")
    small = ("int8", "uint8", "int16", "uint16")
    return (s in half and d in small) or (s in small and d in half)


def _check_conversion(p, node, src, dst, saturate):
    if T.is_bool(src) or T.is_bool(dst):
        if T.element_of(src) != T.element_of(dst):
            raise p.error(node, f'cannot convert "{src}" to "{dst}": masks and data do not convert')
    if _forbidden(src, dst):
        raise p.error(node, f'No direct conversion from "{T.element_of(src)}" to "{T.element_of(dst)}"; '
                            f'cast twice (through int32 or float32)')
    if saturate is not None and not (T.is_int(src) and T.is_int(dst)):
        if T.is_float(src) and T.element_of(dst) == "int32" and saturate:
            return  # float to int32 saturates anyway
        raise p.error(node, 'the arg "saturate" is for integer to integer conversions; a float '
                            'converts to int32 saturating and to narrower integers through int32')


def _clamp(p, node, x, dst):
    """``x`` clamped to the range of ``dst`` (in x's own type), for saturating int casts."""
    src = x.dtype
    slo, shi = TY.int_range(src)
    dlo, dhi = TY.int_range(dst)
    span = p.span(node)
    if dlo > slo:
        x = _core.Max(x, TY.constant(p, node, dlo, src), span)
    if dhi < shi:
        x = _core.Min(x, TY.constant(p, node, dhi, src), span)
    return x


def cast_value(p, node, x, dtype, saturate=None):
    """``x`` (an expression) converted to ``dtype`` with the same lanes (part "all")."""
    src = x.dtype
    if T.lanes_of(dtype) == 1 and T.lanes_of(src) > 1:
        dtype = T.with_lanes(dtype, T.lanes_of(src))
    if T.lanes_of(src) == 1 and T.lanes_of(dtype) > 1:
        return _core.Broadcast(cast_value(p, node, x, T.element_of(dtype), saturate),
                               T.lanes_of(dtype), p.span(node))
    if T.lanes_of(src) != T.lanes_of(dtype):
        raise p.error(node, f'cannot convert "{src}" to "{dtype}": the lane counts differ')
    if src == dtype:
        return x
    _check_conversion(p, node, src, dtype, saturate)
    if saturate and T.is_int(src) and T.is_int(dtype):
        x = _clamp(p, node, x, T.element_of(dtype))
    with p.at(node):
        return _core.Cast(dtype, x, p.span(node))


def _concat(p, node, items):
    """Vectors of one type as one vector (lanes in order)."""
    items = [p.load(v) for v in items]
    first = items[0]
    if not is_expr(first) or T.lanes_of(first.dtype) == 1:
        raise p.error(node, f"S.cast of a tuple needs vectors, got {p.describe(first)}")
    for v in items[1:]:
        if not is_expr(v) or v.dtype != first.dtype:
            raise p.error(node, f'Argument type mismatch: "{first.dtype}" vs. '
                                f'"{v.dtype if is_expr(v) else p.describe(v)}"')
    total = sum(T.lanes_of(v.dtype) for v in items)
    idx = [_core.IntImm("int32", i) for i in range(total)]
    with p.at(node):
        return _core.Shuffle(items, idx, p.span(node))


def _part_cast(p, node, op, x, dst, part, saturate=None):
    """Widening cast of the selected lanes of a native vector (clamped to the range of ``dst``
    first with ``saturate=True``)."""
    src = x.dtype
    lanes = T.lanes_of(src)
    if not T.is_native(src):
        raise p.error(node, f'S.cast with part="{part}" on "{src}": it works on vectors of the '
                            f'native width only')
    if part in _HALVES:
        first, stride = _HALVES[part]
        first = lanes // 2 if first is None else first
        count = lanes // 2
    elif part in _QUARTERS:
        if T.bits_of(src) != 8 or T.bits_of(dst) != 32:
            raise p.error(node, f'part="{part}" selects a quarter: it converts 8-bit to 32-bit lanes')
        first, stride, count = _QUARTERS[part] * (lanes // 4), 1, lanes // 4
    else:
        raise p.error(node, f'the arg "part" must be one of "all", "low", "high", "even", "odd", '
                            f'"ll", "lh", "hl", "hh", got "{part}"')
    dst_elem = T.element_of(dst)
    _check_conversion(p, node, src, dst_elem, saturate)
    if saturate and T.is_int(src) and T.is_int(dst_elem):
        x = _clamp(p, node, x, dst_elem)  # int8 -> uint16: the negative lanes become 0
    # One conversion of the selected lanes (lane i from lane first + i * stride):
    # dsl.AlignVectorWidth splits it into native parts when it has more lanes than one.
    args = [x, _core.IntImm("int32", first), _core.IntImm("int32", stride)]
    return p.call_op(node, T.with_lanes(dst_elem, count), op, args)


def _cast(p, node, name, op, x, dtype, part="all", saturate=None):
    """Convert ``x`` to ``dtype``: scalars, scalar to vector (broadcast), vector to vector. A
    scalar ``dtype`` takes x's lanes. ``part`` selects the lanes of a widening cast;
    ``S.cast((lo, hi), "int8")`` narrows two vectors into one; a list of scalars is a vector of
    them (``S.cast([0, 1, 2], "float32")`` is a float32x3)."""
    dtype = dtype.name if isinstance(dtype, T.DType) else T.canonical(dtype)
    if saturate not in (None, True, False):
        raise p.error(node, f'the arg "saturate" must be None, True or False, got {saturate!r}')
    if isinstance(x, (tuple, list)):
        items = [p.load(v) for v in x]
        if len(items) > 1 and not any(is_expr(v) and T.lanes_of(v.dtype) > 1 for v in items):
            # Scalars: a vector of them, S.cast([0, 1, 2], "float32") is a float32x3.
            vec = T.with_lanes(T.element_of(dtype), len(items))
            return p.construct(node, T.DType(vec), [items], {})
        x = _concat(p, node, x)
    x = p.load(x)
    if not is_expr(x):
        if not isinstance(x, (bool, int, float, np.generic)):
            raise p.error(node, f"S.{name} of {p.describe(x)}")
        if T.is_int(dtype) and isinstance(x, float):
            x = int(x)
        if T.is_int(dtype) and not TY.fits(int(x), dtype):
            if not saturate:
                lo, hi = TY.int_range(dtype)
                x = (int(x) - lo) % (hi - lo + 1) + lo
            else:
                lo, hi = TY.int_range(dtype)
                x = min(max(int(x), lo), hi)
        return TY.constant(p, node, x, dtype)
    if part not in ("all", None):
        return _part_cast(p, node, op, x, dtype, part, saturate)
    lanes, to_lanes = T.lanes_of(x.dtype), T.lanes_of(dtype)
    if 1 < lanes < to_lanes and T.bits_of(dtype) < T.bits_of(x.dtype):
        # Narrowing into a native vector with more lanes (i32x8 -> i8x32, three i32x8 -> i8x32):
        # the converted lanes come first and repeat to fill the vector.
        if not T.is_native(dtype):
            raise p.error(node, f'cannot convert "{x.dtype}" to "{dtype}": narrowing into more '
                                f'lanes needs a hardware native result type')
        y = cast_value(p, node, x, T.with_lanes(dtype, lanes), saturate)
        with p.at(node):
            return _core.Shuffle([y], [_core.IntImm("int32", i % lanes) for i in range(to_lanes)],
                                 p.span(node))
    return cast_value(p, node, x, dtype, saturate)


def _same_bits(p, node, name, op, x, signed):
    """S.i (``signed``), S.u: the same bits read with that signedness (``op``:
    tir.reinterpret)."""
    x = p.load(x)
    if not is_expr(x) or not T.is_int(x.dtype):
        raise p.error(node, f"expects an integer value, got {p.describe(x)}")
    dtype = T.with_sign(x.dtype, signed)
    if dtype == x.dtype:
        return x
    return p.call_op(node, dtype, op, [x])


_POINTER_SCOPES = ("global", "private", "local", "lsram", "shared")


def _integer_as_pointer(p, node, name, x, spelled):
    """``S.reinterpret(addr, "[scope] type *")``: the pointer at the 32-bit address ``addr``
    (one that ``S.reinterpret(ptr, "uint32")`` gave; see tessera/dsl.h)."""
    words = spelled.replace("*", " ").split()
    if len(words) not in (1, 2):
        raise p.error(node, f'S.{name}: {spelled!r} is no pointer type; expected "type *" or '
                            f'"scope type *"')
    scope = words[0] if len(words) == 2 else "global"
    if scope not in _POINTER_SCOPES:
        raise p.error(node, f"S.{name}: unknown memory scope {scope!r} in {spelled!r} (expected one "
                            f"of {', '.join(_POINTER_SCOPES)})")
    scope = "private" if scope == "local" else scope
    element = T.canonical(words[-1])
    if isinstance(x, Pointer):
        raise p.error(node, f"S.{name}: a pointer becomes a pointer of another type with "
                            f"ptr.as_ptr({element!r}), not S.{name}")
    if not is_expr(x) or T.lanes_of(x.dtype) != 1 or not T.is_int(x.dtype) or T.bits_of(x.dtype) != 32:
        raise p.error(node, f"S.{name}: an address is a 32-bit integer, got {p.describe(x)}")
    span = p.span(node)
    storage = T.element_of(element) if T.is_virtual_vector(element) else element
    var = _core.Var.pointer(f"{p.name_hint or 'ptr'}_addr", storage, scope, span)
    with p.at(node):
        p.builder.emit_let(var, _core.Call("handle", _core.Op.get("tir.reinterpret"), [x], span), span)
    buf = _core.Buffer(var, element, [_core.IntImm("int32", UNBOUNDED)], name=f"{var.name}_buf", span=span)
    with p.at(node):
        p.builder.emit_decl_buffer(buf, span)
    return Pointer(buf, element, scope)


def _reinterpret(p, node, name, op, x, dtype):
    """Bit cast of a value, literal or pointer: the total bits must match. A pointer reinterpreted
    as a 32-bit integer is its address; an integer reinterpreted as ``"[scope] type *"`` is the
    pointer at that address; a pointer reinterpreted as another type is a view of its memory
    (as ``ptr.as_ptr``)."""
    x = p.load(x)
    if isinstance(dtype, str) and "*" in dtype:
        return _integer_as_pointer(p, node, name, x, dtype)
    dtype = dtype.name if isinstance(dtype, T.DType) else T.canonical(dtype)
    if isinstance(x, Pointer):
        if dtype in ("int32", "uint32"):
            with p.at(node):
                return _core.Call(dtype, _core.Op.get("tir.reinterpret"), [p.pointer_expr(node, x)],
                                  p.span(node))
        return p.view(node, x, dtype)
    if not is_expr(x):
        if isinstance(x, float):
            src = np.array([x], "float32")
        else:
            src = np.array([x], "int32" if TY.fits(int(x), "int32") else "uint32")
        np_type = "float32" if dtype == "bfloat16" else dtype
        if T.bits_of(dtype) * T.lanes_of(dtype) != 32:
            raise p.error(node, f'S.{name}: a literal has 32 bits, "{dtype}" has '
                                f'{T.bits_of(dtype) * T.lanes_of(dtype)}')
        return TY.constant(p, node, src.view(np_type)[0].item(), dtype)
    total = T.bits_of(x.dtype) * T.lanes_of(x.dtype)
    if T.lanes_of(dtype) == 1 and total != T.bits_of(dtype):
        dtype = T.with_lanes(dtype, total // T.bits_of(dtype))
    if T.bits_of(dtype) * T.lanes_of(dtype) != total:
        raise p.error(node, f'S.{name}: "{x.dtype}" has {total} bits but "{dtype}" has '
                            f'{T.bits_of(dtype) * T.lanes_of(dtype)}')
    if T.is_bool(x.dtype) or T.is_bool(dtype):
        raise p.error(node, f"S.{name} cannot convert masks")
    if x.dtype == dtype:
        return x
    if T.lanes_of(x.dtype) > 1 and not T.is_native(x.dtype):
        if total % 256 != 0:
            raise p.error(node, f'S.{name} of "{x.dtype}": a vector that is not native must '
                                f'have a multiple of 256 bits')
        # A multiple-width vector: dsl.AlignVectorWidth reinterprets each 256-bit part.
    return p.call_op(node, dtype, op, [x])


def _extend(p, node, name, op, x, part):
    """S.vxtl, S.vxth (``part``): a half of an 8- or 16-bit integer vector at double width."""
    x = p.load(x)
    if not is_expr(x) or T.lanes_of(x.dtype) == 1 or not T.is_int(x.dtype) or T.bits_of(x.dtype) > 16:
        raise p.error(node, f"expects an 8- or 16-bit integer vector, got {p.describe(x)}")
    if not T.is_native(x.dtype):
        raise p.error(node, f'"{x.dtype}": it works on vectors of the native width only')
    wide = ("int" if T.is_signed(x.dtype) else "uint") + str(2 * T.bits_of(x.dtype))
    return _part_cast(p, node, op, x, wide, part)
