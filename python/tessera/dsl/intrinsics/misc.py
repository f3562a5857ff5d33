"""Miscellaneous intrinsics: S.printf and the profiling markers S.perf_tick_begin/end."""

from .. import types as T
from ..values import is_expr
from ... import _core
from . import intrinsic


@intrinsic
def printf(p, node, fmt, *args):
    """C printf; output of different TECs may interleave."""
    if not isinstance(fmt, str):
        raise p.error(node, f"S.printf expects a format string, got {p.describe(fmt)}")
    values = [_core.StringImm(fmt)]
    for a in args:
        a = p.load(a)
        if not is_expr(a):
            a = p.to_expr(node, a)
        if T.lanes_of(a.dtype) > 1:
            raise p.error(node, "S.printf of vectors is not supported by this version of tessera")
        if a.dtype in ("float16", "bfloat16"):
            a = _core.Cast("float32", a, p.span(node))
        values.append(a)
    p.emit_call(node, "dsl.printf", values)


def _tick(p, node, name, cid):
    p.emit_call(node, f"dsl.{name}", [p.to_index(node, cid)])


@intrinsic
def perf_tick_begin(p, node, cid):
    """Start of a profiled region (a no-op on tessera)."""
    _tick(p, node, "perf_tick_begin", cid)


@intrinsic
def perf_tick_end(p, node, cid):
    """End of a profiled region (a no-op on tessera)."""
    _tick(p, node, "perf_tick_end", cid)
