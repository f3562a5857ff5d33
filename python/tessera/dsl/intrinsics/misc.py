"""Miscellaneous intrinsics: S.printf, S.meta_var, S.tag, the unsupported S.asm and S.aiff, and
the check of the table's profiling markers S.perf_tick_begin/end."""

import re

from .. import types as T
from ..values import is_expr
from ... import _core
from ._registry import intrinsic


_SPEC = re.compile(r"%([-+ #0]*\d*(?:\.\d+)?)(?:v(\d+))?(hh|hl|h|l)?([diouxXfFeEgGaAcs%])")


def _scalar_arg(p, node, a):
    if a.dtype in ("float16", "bfloat16"):
        return _core.Cast("float32", a, p.span(node))
    return a


@intrinsic
def printf(p, node, fmt, *args):
    """C printf; output of different TECs may interleave. Vector formats (``%v8hlx``,
    ``%v16hf`` ...) print the lanes separated by commas."""
    if not isinstance(fmt, str):
        raise p.error(node, f"S.printf expects a format string, got {p.describe(fmt)}")
    args = [p.load(a) if is_expr(p.load(a)) else p.to_expr(node, a) for a in args]
    out_fmt, values, pos, k = [], [], 0, 0
    for m in _SPEC.finditer(fmt):
        out_fmt.append(fmt[pos:m.start()])
        pos = m.end()
        flags, vlanes, length, conv = m.groups()
        if conv == "%":
            out_fmt.append("%%")
            continue
        if k >= len(args):
            raise p.error(node, f"S.printf: the format {fmt!r} needs more arguments")
        a = args[k]
        k += 1
        lanes = T.lanes_of(a.dtype)
        if conv in "fFeEgGaA" or length == "hl":
            length = ""  # floats print as double; hl is OpenCL's 32-bit vector element
        if vlanes is None:
            if lanes > 1:
                raise p.error(node, f"S.printf: a {a.dtype} argument needs a vector format "
                                    f"such as %v{lanes}...")
            out_fmt.append(f"%{flags}{length or ''}{conv}")
            values.append(_scalar_arg(p, node, a))
            continue
        if int(vlanes) != lanes:
            raise p.error(node, f"S.printf: %v{vlanes} given a {a.dtype} argument")
        out_fmt.append(",".join([f"%{flags}{length or ''}{conv}"] * lanes))
        for i in range(lanes):
            lane = p.call_op(node, T.element_of(a.dtype), "dsl.get_lane", [a, _core.IntImm("int32", i)])
            values.append(_scalar_arg(p, node, lane))
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
