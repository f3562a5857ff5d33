"""TVM's spellings of node constructors: Python numbers where expressions are expected, tuples
for ranges, strings for variables, ``None`` for defaults, ints for enum kinds.

The C++ constructors take IR nodes; each node class also has a last overload that sends the call
here (``_core._set_constructor_fallback``). A normaliser below converts the arguments and calls
the node's own constructor, so ``tir.BufferStore(buf, 0.1, [0, i])``,
``tir.IterVar((0, 8), "v", iter_type=1)``, ``tir.PrimFunc(params, body, ret_type=None,
buffer_map={a: A})`` build what they build in TVM.

>>> tir.Select(True, 0, 2)          # T.Select(T.bool(True), 0, 2)
"""

import inspect

from .. import _core
from . import expr_ops
from .expr_ops import convert

# TVM's integer codes of IterVar kinds and loop kinds.
_ITER_TYPES = ("DataPar", "ThreadIndex", "CommReduce", "Ordered", "Opaque")
_FOR_KINDS = ("SERIAL", "PARALLEL", "VECTORIZED", "UNROLLED", "THREAD_BINDING")


def _dtype_of(value, default="int32"):
    return getattr(value, "dtype", None) or default


def _range(dom):
    """A Range from a Range, a (begin, end) pair or an extent."""
    if dom is None or isinstance(dom, _core.Range):
        return dom
    if isinstance(dom, (tuple, list)):
        if len(dom) != 2:
            raise TypeError(f"a range is (begin, end), got {dom!r}")
        begin, end = dom
    else:
        begin, end = 0, dom
    if not isinstance(begin, _core.PrimExpr) and isinstance(end, _core.PrimExpr):
        begin = convert(begin, end.dtype)
    begin = convert(begin)
    extent = convert(expr_ops.extent_between(begin, end), begin.dtype)
    return _core.Range.from_min_extent(begin, extent)


def _attrs(mapping):
    from ..script.tir.frames import to_attrs

    return to_attrs(mapping)


def _enum(enum, names, value):
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < len(names):
        return getattr(enum, names[value])
    if isinstance(value, str) and value in names:
        return getattr(enum, value)
    return value


def _range_ctor(begin, end=None, span=None):
    if end is None:
        return _core.Range(convert(begin), None, span)
    if not isinstance(begin, _core.PrimExpr) and isinstance(end, _core.PrimExpr):
        begin = convert(begin, end.dtype)
    begin = convert(begin)
    return _core.Range(begin, convert(end, begin.dtype), span)


def _iter_var(dom, var, iter_type, thread_tag="", span=None):
    dom = _range(dom)
    if isinstance(var, str):
        var = _core.Var(var, dom.min.dtype if dom is not None else "int32")
    return _core.IterVar(dom, var, _enum(_core.IterVarType, _ITER_TYPES, iter_type), thread_tag, span)


def _prim_func(params, body, ret_type=None, buffer_map=None, attrs=None, span=None):
    ret = "void" if ret_type is None else getattr(ret_type, "dtype", ret_type)
    if isinstance(buffer_map, dict):
        buffer_map = list(buffer_map.items())
    buffer_map = list(buffer_map or [])
    # As TVM: a Buffer among the parameters is passed as a handle bound to that buffer.
    from .ir_builder import BufferVar

    handles = []
    for p in params:
        if isinstance(p, BufferVar):
            # As TVM: ir_builder's `ib.pointer(...)` is a pointer parameter (its data variable),
            # the body's accesses go through it; no buffer is bound to it.
            p = p.data
        if isinstance(p, _core.Buffer):
            handle = _core.Var(p.name, "handle")
            buffer_map.append((handle, p))
            p = handle
        handles.append(p)
    params = handles
    return _core.PrimFunc(list(params), body, str(ret), buffer_map or [], _attrs(attrs), span)


def _buffer_store(buffer, value, indices, predicate=None, span=None):
    if not isinstance(buffer, _core.Buffer):
        return None
    indices = [convert(i) for i in indices]
    return _core.BufferStore(buffer, convert(value, buffer.dtype), indices,
                             None if predicate is None else convert(predicate), span)


def _buffer_load(buffer, indices, predicate=None, span=None):
    if not isinstance(buffer, _core.Buffer):
        return None
    return _core.BufferLoad(buffer, [convert(i) for i in indices],
                            None if predicate is None else convert(predicate), span)


def _select(condition, true_value, false_value, span=None):
    return _core.Select(convert(condition), convert(true_value), convert(false_value), span)


def _ramp(base, stride, lanes, span=None):
    base = convert(base)
    return _core.Ramp(base, convert(stride, base.dtype), _lanes(lanes), span)


def _broadcast(value, lanes, span=None):
    return _core.Broadcast(convert(value), _lanes(lanes), span)


def _lanes(lanes):
    if isinstance(lanes, _core.IntImm):
        return lanes.value
    if isinstance(lanes, _core.PrimExpr):
        return lanes  # T.vscale() * k: a scalable vector (the C++ constructor checks the form)
    return int(lanes)


def _let(var, value, body, span=None):
    if not isinstance(var, _core.Var):
        return None
    return _core.Let(var, convert(value, var.dtype), convert(body), span)


def _cast(dtype, value, span=None):
    return _core.Cast(str(dtype), convert(value), span)


def _binary(cls):
    def build(a, b, span=None):
        a, b = expr_ops.match_types(a, b)
        return cls(a, b, span)

    return build


def _let_stmt(var, value, body, span=None):
    if not isinstance(var, _core.Var):
        return None
    return _core.LetStmt(var, convert(value, var.dtype), body, span)


def _attr_stmt(node, attr_key, value, body, span=None):
    if isinstance(value, str):
        value = _core.StringImm(value)
    return _core.AttrStmt(node, attr_key, convert(value), body, span)


def _assert_stmt(condition, message, body, span=None):
    if isinstance(message, str):
        message = _core.StringImm(message)
    return _core.AssertStmt(convert(condition), message, body, span)


def _for(loop_var, min, extent, kind, body, thread_binding=None, annotations=None, step=None,
         span=None):
    if not isinstance(loop_var, _core.Var):
        return None
    dtype = loop_var.dtype
    return _core.For(loop_var, convert(min, dtype), convert(extent, dtype),
                     _enum(_core.ForKind, _FOR_KINDS, kind), body, thread_binding,
                     _attrs(annotations), None if step is None else convert(step, dtype), span)


def _buffer_realize(buffer, bounds, condition, body, span=None):
    """``BufferRealize(A, [Range(0, 16)], True, body)``: bounds may be (begin, end) pairs."""
    return _core.BufferRealize(buffer, [_range(b) for b in bounds], convert(condition, "bool"),
                               body, span)


def _if_then_else(condition, then_case, else_case=None, span=None):
    return _core.IfThenElse(convert(condition), then_case, else_case, span)


def _allocate(buffer_var, dtype, extents, condition, body, annotations=None, span=None):
    condition = None if condition is None else convert(condition)
    return _core.Allocate(buffer_var, str(dtype), [convert(e) for e in extents], condition,
                          body, _attrs(annotations), span)


def const_data_bytes(data, dtype, extents):
    """The bytes an AllocateConst holds: ``data`` (a list, a numpy array or an NDArray) as
    ``dtype``, checked to hold as many elements as the (constant) extents say."""
    import numpy as np

    from ..error import TesseraTypeError, TesseraValueError
    from ..runtime.ndarray import NDArray, _np_dtype

    dtype = _core.canonical_dtype(str(dtype))
    if isinstance(data, NDArray):
        data = data.numpy()
    elif hasattr(data, "numpy") and not isinstance(data, np.ndarray):
        data = data.numpy()
    try:
        array = np.asarray(data, dtype=_np_dtype(dtype))
    except (TypeError, ValueError) as err:
        raise TesseraTypeError(f"allocate_const: cannot read the data as {dtype}: {err}") from None
    count = 1
    for e in extents:
        value = e.value if isinstance(e, _core.IntImm) else e
        if not isinstance(value, int) or isinstance(value, bool):
            raise TesseraValueError(f"allocate_const: extents must be constant integers, got {e!r}")
        count *= value
    if array.size != count:
        raise TesseraValueError(f"allocate_const: {array.size} values for extents "
                                f"{[getattr(e, 'value', e) for e in extents]} ({count} elements)")
    return np.ascontiguousarray(array).tobytes()


def _allocate_const(buffer_var, dtype, extents, data_or_idx, body, annotations=None, span=None):
    extents = [convert(e) for e in extents]
    data = const_data_bytes(data_or_idx, dtype, extents)
    return _core.AllocateConst(buffer_var, str(dtype), extents, data, body, _attrs(annotations), span)


def _allocate_const_data(self):
    """The constant data as an NDArray shaped by the extents (``.numpy()`` reads it)."""
    import numpy as np

    from ..runtime.ndarray import _np_dtype, array

    shape = [int(e.value) for e in self.extents]
    return array(np.frombuffer(self.data_bytes, dtype=_np_dtype(str(self.dtype))).reshape(shape))


_core.AllocateConst.data = property(_allocate_const_data)


def _match_buffer_region(buffer, source, span=None):
    """``MatchBufferRegion(buf, A[0:32, 0:32])``: the source may be a slice of a buffer."""
    return _core.MatchBufferRegion(buffer, expr_ops.to_region(source), span)


def _block(iter_vars, reads, writes, name_hint, body, init=None, alloc_buffers=None,
           match_buffers=None, annotations=None, span=None):
    """``Block(reads=[A[0:16, 0:16]], ...)``: regions may be buffer slices or whole buffers."""
    return _core.Block(list(iter_vars), [expr_ops.to_region(r) for r in reads],
                       [expr_ops.to_region(w) for w in writes], name_hint, body, init,
                       list(alloc_buffers or []), list(match_buffers or []),
                       _attrs(annotations) if annotations else None, span)


def _shuffle(vectors, indices, span=None):
    return _core.Shuffle([convert(v) for v in vectors], [convert(i) for i in indices], span)


def _call(dtype, op, args, span=None):
    # TVM's Call takes Python numbers and strings among the arguments (tir.Call("void",
    # "tir.prefetch", [addr, 0, 3, 1])) and a DataType or "" (void) as the dtype.
    args = [_core.StringImm(a) if isinstance(a, str) else convert(a) for a in args]
    return _core.Call(str(dtype) or "void", op, args, span)


def _var(name, dtype, span=None):
    return _core.Var(name, str(dtype), span)


_NORMALISERS = {
    "Range": _range_ctor, "IterVar": _iter_var, "PrimFunc": _prim_func,
    "BufferStore": _buffer_store, "BufferLoad": _buffer_load, "Select": _select, "Ramp": _ramp,
    "Broadcast": _broadcast, "Let": _let, "Cast": _cast, "LetStmt": _let_stmt,
    "AttrStmt": _attr_stmt, "AssertStmt": _assert_stmt, "For": _for, "IfThenElse": _if_then_else,
    "BufferRealize": _buffer_realize, "Allocate": _allocate, "AllocateConst": _allocate_const, "Var": _var,
    "MatchBufferRegion": _match_buffer_region, "Block": _block, "Shuffle": _shuffle, "Call": _call,
}
for _name in ("Add", "Sub", "Mul", "Div", "Mod", "FloorDiv", "FloorMod", "Min", "Max", "EQ", "NE",
              "LT", "LE", "GT", "GE", "And", "Or"):
    _NORMALISERS[_name] = _binary(getattr(_core, _name))

# Classes whose normaliser is running: a call that still does not match any C++ overload after
# normalisation falls through to nanobind's error listing the signatures (no recursion).
_active = set()
_SIGNATURES = {}


def _fallback(name, args, kwargs):
    """The node built from TVM's spelling of its arguments, or None (nanobind then reports the
    signatures) when the normaliser does not apply."""
    normalise = _NORMALISERS.get(name)
    if normalise is None or name in _active:
        return None
    signature = _SIGNATURES.get(name)
    if signature is None:
        signature = _SIGNATURES[name] = inspect.signature(normalise)
    try:
        signature.bind(*args, **kwargs)
    except TypeError:
        return None
    _active.add(name)
    try:
        return normalise(*args, **kwargs)
    finally:
        _active.discard(name)


_core._set_constructor_fallback(_fallback)

# TVM's IterVar kind constants (tir.IterVar.DataPar, ...).
for _kind in _ITER_TYPES:
    setattr(_core.IterVar, _kind, getattr(_core.IterVarType, _kind))
