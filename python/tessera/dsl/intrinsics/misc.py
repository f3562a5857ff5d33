"""Miscellaneous intrinsics: S.printf, S.meta_var, S.tag, the unsupported S.asm and S.aiff, and
the check of the table's profiling markers S.perf_tick_begin/end."""

import re

from .. import types as T
from ..values import is_expr
from ... import _core
from ._registry import intrinsic


_SPEC = re.compile(r"%([-+ #0]*\d*(?:\.\d+)?)(?:v(\d+))?(hh|hl|h|l)?([diouxXfFeEgGcsp%])")

_INTEGER_CONVS = "diouxXc"


def _bits_as_u32(p, node, a, lane):
    """What %x prints of ``a``, as an unsigned 32-bit value: a scalar integer converted to 32
    bits (sign-extended), a scalar float's float32 bits; a vector lane's own bits, zero-extended
    (an int8 lane of -128 prints 0x80, a float16 lane its 16 bits)."""
    span = p.span(node)
    dtype = a.dtype
    if T.is_bool(dtype):
        return _core.Cast("uint32", a, span)
    if not lane and (T.is_float(dtype) or dtype == "bfloat16"):
        a = _core.Cast("float32", a, span) if dtype != "float32" else a
        dtype = "float32"
    if lane or T.is_float(dtype):
        unsigned = f"uint{T.bits_of(dtype)}"
        if dtype != unsigned:
            a = _core.Call(unsigned, _core.Op.get("tir.reinterpret"), [a], span)
    return _core.Cast("uint32", a, span) if a.dtype != "uint32" else a


def _printf_value(p, node, conv, length, a, fmt, lane=False):
    """The argument ``a`` of conversion ``conv`` as the value the NPU's printf formats: integers
    as 32 bits (narrowed first by a length hh or h, as C does), floats as float32."""
    dtype = a.dtype
    span = p.span(node)
    is_float = T.is_float(dtype) or dtype == "bfloat16"
    if conv in _INTEGER_CONVS and not is_float and not lane and length in ("hh", "h"):
        narrow = ("uint" if conv in "uoxX" else "int") + ("8" if length == "hh" else "16")
        a = _core.Cast(narrow, a, span) if dtype != narrow else a
    if conv in "xX":
        return _bits_as_u32(p, node, a, lane)
    if conv in _INTEGER_CONVS:
        if is_float:
            raise p.error(node, f"S.printf: %{conv} in {fmt!r} prints an integer, got a {dtype} value")
        return _core.Cast("int32", a, span) if a.dtype != "int32" else a
    if is_float:
        return _core.Cast("float32", a, span) if dtype != "float32" else a
    raise p.error(node, f"S.printf: %{conv} in {fmt!r} prints a floating-point value, got a {dtype} value")


def _literal(p, node, fmt, text):
    """Text between conversions holds no other '%'."""
    if "%" in text:
        bad = re.match(r"%[^a-zA-Z%\s]*.?", text[text.index("%"):]).group(0)
        raise p.error(node, f"S.printf: unsupported conversion {bad!r} in {fmt!r} (supported: "
                            f"%d %i %u %o %x %X %c %f %e %g %s %p %% and the vector forms "
                            f"%vN[hh|h|hl]x/d/f)")


def _escape(text):
    return text.replace("%", "%%")


@intrinsic
def printf(p, node, fmt, *args):
    """The NPU's printf (see tessera/dsl.h and PySim's dsl.printf): %d/%i/%u/%c of 32-bit
    integers, %o and %x/%X with their "0"/"0x" prefix (%x of a float prints its float32 bits),
    %f with 6 decimals truncated, not rounded; %s of a literal string; %p of a pointer. Vector
    formats (``%v8hlx``, ``%v32hhx``, ``%v16hf`` ...) print the lanes separated by commas, each
    lane of %vx as the unsigned bits of its element. Output of different TECs may interleave
    line by line, never within one call."""
    if not isinstance(fmt, str):
        raise p.error(node, f"S.printf expects a format string, got {p.describe(fmt)}")
    out_fmt, values, pos, k = [], [], 0, 0
    for m in _SPEC.finditer(fmt):
        _literal(p, node, fmt, fmt[pos:m.start()])
        out_fmt.append(fmt[pos:m.start()])
        pos = m.end()
        flags, vlanes, length, conv = m.groups()
        if conv == "%":
            out_fmt.append("%%")
            continue
        if k >= len(args):
            raise p.error(node, f"S.printf: the format {fmt!r} needs more arguments")
        raw = args[k]
        k += 1
        if conv == "s":
            if not isinstance(raw, str):
                raise p.error(node, f"S.printf: %s in {fmt!r} prints a literal string, got {p.describe(raw)}")
            out_fmt.append(_escape(("%" + flags + "s") % raw))
            continue
        if conv == "p":
            ptr = p.pointer_of(node, raw, f"S.printf: %p in {fmt!r}")
            out_fmt.append(f"%{flags}p")
            values.append(p.pointer_expr(node, ptr))
            continue
        a = p.load(raw)
        a = a if is_expr(a) else p.to_expr(node, a)
        lanes = T.lanes_of(a.dtype)
        spec = f"%{flags}{conv}"  # lengths are implied: the values are normalised to 32 bits
        if vlanes is None:
            if lanes > 1:
                raise p.error(node, f"S.printf: a {a.dtype} argument needs a vector format "
                                    f"such as %v{lanes}...")
            out_fmt.append(spec)
            values.append(_printf_value(p, node, conv, length, a, fmt))
            continue
        if int(vlanes) != lanes:
            raise p.error(node, f"S.printf: %v{vlanes} given a {a.dtype} argument")
        out_fmt.append(",".join([spec] * lanes))
        for i in range(lanes):
            lane = p.call_op(node, T.element_of(a.dtype), "dsl.get_lane", [a, _core.IntImm("int32", i)])
            values.append(_printf_value(p, node, conv, length, lane, fmt, lane=True))
    _literal(p, node, fmt, fmt[pos:])
    out_fmt.append(fmt[pos:])
    if k != len(args):
        raise p.error(node, f"S.printf: {len(args) - k} arguments more than the format {fmt!r} uses")
    p.emit_call(node, "dsl.printf", [_core.StringImm("".join(out_fmt))] + values)


def _tick(p, node, name, op, cid):
    """The perf_tick form of the intrinsic table (table.py): S.perf_tick_begin, S.perf_tick_end,
    a call of ``op`` with the counter index."""
    p.emit_call(node, op, [p.to_index(node, cid)])


@intrinsic
def meta_var(p, node, value):
    """``x = S.meta_var(py_value)``: a compile-time Python value (a string, a tuple of them,
    a number) bound to a name as it is, not turned into a kernel variable."""
    return value


def _unsupported(p, node, what):
    raise p.error(node, f"{what} is not supported by tessera: it needs the fixed-function or "
                        f"assembly units of a Zhouyi NPU")


@intrinsic
def asm(p, node, *args, **kwargs):
    """Inline assembly (Compass): not supported by tessera."""
    _unsupported(p, node, "inline assembly (S.asm)")


@intrinsic
def aiff(p, node, *args, **kwargs):
    """The AIFF fixed-function unit (Compass): not supported by tessera."""
    _unsupported(p, node, "AIFF (S.aiff)")


@intrinsic
def async_aiff(p, node, *args, **kwargs):
    """The AIFF fixed-function unit (Compass): not supported by tessera."""
    _unsupported(p, node, "AIFF (S.async_aiff)")


# S.tag's attributes: the name -> what it applies to.
TAG_ATTRS = {"no_zip": "S.cast"}


@intrinsic
def tag(p, node, x, attr):
    """``S.tag(S.cast(x, "float32"), "no_zip")``: a hint for the code generator. "no_zip" on a
    widening conversion of a 16-bit float vector (float16 or bfloat16, part "all") to float32
    lets X1/X2 targets skip the interleave that puts the lanes back in order: each native part
    of x gives its even lanes, then its odd lanes. Use it only where the order of the lanes does
    not matter (a reduction). PySim and X3 targets keep the lanes in order; on any other
    conversion the tag has no effect (a warning says so)."""
    import warnings

    if not isinstance(attr, str) or attr not in TAG_ATTRS:
        raise p.error(node, f'S.tag: the arg "attr" must be one of {sorted(TAG_ATTRS)}, got {attr!r}')
    x = p.load(x)
    if not isinstance(x, _core.Cast) and not (is_expr(x) and isinstance(x, _core.Call)
                                             and x.op.name == "dsl.cast_no_zip"):
        raise p.error(node, f'S.tag(..., "{attr}") applies to the result of {TAG_ATTRS[attr]}, '
                            f"got {p.describe(x)}")
    if isinstance(x, _core.Call):
        return x
    src, dst = x.value.dtype, x.dtype
    if (T.lanes_of(src) % 16 != 0 or T.element_of(src) not in ("float16", "bfloat16")
            or T.element_of(dst) != "float32"):
        warnings.warn(str(p.error(node, f'S.tag(..., "no_zip") has no effect here: it applies to a '
                                        f"conversion of 16-bit float vectors of whole native parts "
                                        f'to float32, this one is "{src}" to "{dst}"')), stacklevel=2)
        return x
    return p.call_op(node, dst, "dsl.cast_no_zip", [x.value])
