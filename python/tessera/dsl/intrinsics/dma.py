"""The argument checks of the table's DMA and events (table.py): S.dma_copy, S.async_dma_copy,
S.alloc_events, S.wait_events, S.free_events, S.dma_memset, S.dma_transpose2d, S.dma_upsample,
S.flush_cache.

Destinations come first. Counts and strides are in elements of the pointers' scalar type.
"""

from ... import _core
from .. import typing as TY
from ..values import Event

_SRAM = ("lsram", "shared")


def _is_ddr(scope):
    return scope.startswith("global") or scope == "constant"


def _pointers(p, node, dst, src):
    dst = p.scalar_view(node, p.pointer_of(node, dst, "the arg \"dst\""))
    src = p.scalar_view(node, p.pointer_of(node, src, "the arg \"src\""))
    if dst.element == "void" and src.element != "void":
        dst = p.view(node, dst, src.element)
    if src.element == "void" and dst.element != "void":
        src = p.view(node, src, dst.element)
    if dst.element != src.element:
        raise p.error(node, f"a DMA copy needs pointers to one element type; dst points to "
                            f"{dst.element}, src to {src.element}")
    if dst.scope == "constant":
        raise p.error(node, 'DMA cannot write to scope "constant"')
    if dst.scope in _SRAM and src.scope in _SRAM:
        raise p.error(node, f"a DMA copy cannot move data from {src.scope} to {dst.scope} "
                            f"(both are on-chip memories)")
    return dst, src


def _count(p, node, value, what):
    if isinstance(value, int) and value < 0:
        raise p.error(node, f'the arg "{what}" must be >= 0, got {value}')
    return p.to_index(node, value)


def _copy_args(p, node, dst, src, width, src_stride, times, dst_stride):
    dst, src = _pointers(p, node, dst, src)
    w = _count(p, node, width, "width")
    args = [p.pointer_expr(node, dst), p.pointer_expr(node, src), w,
            w if src_stride is None else _count(p, node, src_stride, "src_stride"),
            _count(p, node, times, "times"),
            w if dst_stride is None else _count(p, node, dst_stride, "dst_stride")]
    return dst, src, args


def _dma_copy(p, node, name, op, row_op, dst, src, width, src_stride=None, times=1,
              dst_stride=None):
    """The dma_copy form: ``op``, or ``row_op`` (the entry's variant op, dsl.dma1d) for one plain
    row between DDR and SRAM."""
    dst, src, args = _copy_args(p, node, dst, src, width, src_stride, times, dst_stride)
    plain = src_stride is None and dst_stride is None and isinstance(times, int) and times == 1
    if plain and (dst.scope in _SRAM) != (src.scope in _SRAM):
        into_sram = dst.scope in _SRAM
        ddr, sram = (args[1], args[0]) if into_sram else (args[0], args[1])
        p.emit_call(node, row_op, [ddr, sram, args[2], _core.IntImm("int32", int(into_sram))])
        return
    p.emit_call(node, op, args)


def _async_dma_copy(p, node, name, op, dst, src, width, src_stride=None, times=1, dst_stride=None,
                    event=None):
    """The dma_copy form with an event: ``op`` of the copy's arguments and the event."""
    if not isinstance(event, Event):
        raise p.error(node, 'the arg "event" must be an event from S.alloc_events, '
                            f'got {p.describe(event)}')
    _, _, args = _copy_args(p, node, dst, src, width, src_stride, times, dst_stride)
    p.emit_call(node, op, args + [event.var])


# A TEC has 32 DMA events (tessera/dsl/dma.h keeps them as the bits of one word).
_MAX_EVENTS = 32


def _alloc_events(p, node, name, op, count):
    """The events form "alloc": ``count`` let-bound calls of ``op``."""
    count = p.static_int(node, count, "count")
    if count < 1:
        raise p.error(node, f'the arg "count" must be at least 1, got {count}')
    if count > _MAX_EVENTS:
        raise p.error(node, f'the arg "count" must be at most {_MAX_EVENTS} (the events of one TEC), '
                            f'got {count}')
    events = []
    for i in range(count):
        var = _core.Var(f"{p.name_hint or 'ev'}{i if count > 1 else ''}", "int32", p.span(node))
        with p.at(node):
            p.builder.emit_let(var, p.call_op(node, "int32", op, []), p.span(node))
        events.append(Event(var))
    return events[0] if count == 1 else tuple(events)


def _events(p, node, events, what):
    flat = []
    for e in events:
        if isinstance(e, (tuple, list)):
            flat.extend(e)
        else:
            flat.append(e)
    for e in flat:
        if not isinstance(e, Event):
            raise p.error(node, f"{what} expects events from S.alloc_events, got {p.describe(e)}")
    return flat


def _each_event(p, node, name, op, events):
    """The events form "wait", "free": ``op`` of each listed event."""
    for e in _events(p, node, events, f"S.{name}"):
        p.emit_call(node, op, [e.var])


def _dma_memset(p, node, name, op, ptr, value, num):
    """The dma_memset form."""
    ptr = p.scalar_view(node, p.pointer_of(node, ptr, "the arg \"ptr\""))
    if ptr.element == "void":
        raise p.error(node, f'S.{name} of a "void" pointer; use p.as_ptr(dtype) first')
    if ptr.scope == "constant":
        raise p.error(node, 'DMA cannot write to scope "constant"')
    value = TY.as_type(p, node, p.load(value), ptr.element)
    p.emit_call(node, op, [p.pointer_expr(node, ptr), value, _count(p, node, num, "num")])


def _dma_transpose2d(p, node, name, op, dst, src, row, col, dst_stride=None, src_stride=None):
    """The dma_transpose2d form."""
    dst, src = _pointers(p, node, dst, src)
    r, c = _count(p, node, row, "row"), _count(p, node, col, "col")
    args = [p.pointer_expr(node, dst), p.pointer_expr(node, src), r, c,
            r if dst_stride is None else _count(p, node, dst_stride, "dst_stride"),
            c if src_stride is None else _count(p, node, src_stride, "src_stride")]
    p.emit_call(node, op, args)


def _dma_upsample(p, node, name, op, dst, src, h_scale, w_scale, c, w, src_c_stride=None,
                  dst_c_stride=None, dst_w_stride=None):
    """The dma_upsample form."""
    dst, src = _pointers(p, node, dst, src)
    if not ((_is_ddr(src.scope) and dst.scope in _SRAM) or (src.scope in _SRAM and _is_ddr(dst.scope))):
        raise p.error(node, f"S.{name} only copies between DDR (global) and SRAM (lsram, shared), "
                            f'got "{src.scope}" to "{dst.scope}"')
    hs, ws = _count(p, node, h_scale, "h_scale"), _count(p, node, w_scale, "w_scale")
    cc, ww = _count(p, node, c, "c"), _count(p, node, w, "w")
    with p.at(node):
        default_w_stride = _core.simplify_expr(_core.Mul(ww, ws))
    args = [p.pointer_expr(node, dst), p.pointer_expr(node, src), hs, ws, cc, ww,
            cc if src_c_stride is None else _count(p, node, src_c_stride, "src_c_stride"),
            cc if dst_c_stride is None else _count(p, node, dst_c_stride, "dst_c_stride"),
            default_w_stride if dst_w_stride is None else _count(p, node, dst_w_stride, "dst_w_stride")]
    p.emit_call(node, op, args)


def _flush_cache(p, node, name, op, invalidate=True):
    """The flush_cache form."""
    p.emit_call(node, op, [_core.IntImm("int32", int(bool(invalidate)))])
