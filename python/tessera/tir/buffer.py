"""``tir.decl_buffer`` and the packed-call helpers of ``tvm.tir`` (``tir.call_packed``, ...)."""

import numbers

from .. import _core
from ..error import TesseraTypeError, TesseraValueError
from . import expr_ops

Buffer = _core.Buffer  # TVM's tvm.tir.buffer.Buffer


def decl_buffer(shape, dtype="float32", name="buffer", data=None, strides=None, elem_offset=None,
                scope="", data_alignment=-1, offset_factor=0, buffer_type="", axis_separators=None,
                span=None):
    """A Buffer (TVM's ``tir.decl_buffer``): ``shape`` over ``data`` (a fresh pointer when None).

    ``axis_separators`` split the dimensions into physical axes (``get_flattened_buffer``);
    ``elem_offset`` may be an expression or a variable to bind at a call; with ``offset_factor``
    set and no ``elem_offset``, a fresh variable ``<name>_elem_offset`` is made, as in TVM.

    >>> A = tir.decl_buffer((n, 4), "float32", name="A")
    """
    if buffer_type not in ("", "default"):
        raise TesseraValueError(f"tir.decl_buffer: buffer_type {buffer_type!r} is not supported")
    if isinstance(shape, (numbers.Integral, _core.PrimExpr)):
        shape = (shape,)
    shape = [expr_ops.const(int(s), "int32") if isinstance(s, numbers.Integral) else expr_ops.convert(s)
             for s in shape]
    dtype = _core.canonical_dtype(str(dtype))
    index_dtype = shape[0].dtype if shape else "int32"
    if elem_offset is None and offset_factor:
        elem_offset = _core.Var(f"{name}_elem_offset", index_dtype)
    if isinstance(elem_offset, numbers.Integral):
        elem_offset = expr_ops.const(int(elem_offset), index_dtype)
    if data is None:
        data = _core.Var.pointer(name, dtype, scope or "global")
    elif not isinstance(data, _core.Var):
        raise TesseraTypeError(f"tir.decl_buffer: data must be a pointer variable, got {data!r}")
    strides = [expr_ops.convert(s) for s in (strides or [])]
    separators = [int(s) for s in (axis_separators or [])]
    return _core.Buffer(data, dtype, shape, strides, elem_offset, name,
                        64 if data_alignment in (-1, 0) else int(data_alignment),
                        int(offset_factor) or 1, span, separators)


def _pack_buffer(buf, span=None):
    """A Buffer as a DLTensor argument: ``tvm_stack_make_array(data, shape, strides, ndim,
    dtype, elem_offset)``, where the dtype is a zero of the element type (as TVM packs it)."""
    handle = "handle"
    shape = _core.Call(handle, _core.Op.get("tir.tvm_stack_make_shape"), list(buf.shape), span)
    strides = (_core.Call(handle, _core.Op.get("tir.tvm_stack_make_shape"), list(buf.strides), span)
               if len(buf.strides) else expr_ops.const(0, "int32"))
    zero = expr_ops.const(0, buf.dtype)
    offset = buf.elem_offset if buf.elem_offset is not None else expr_ops.const(0, "int32")
    args = [buf.data, shape, strides, expr_ops.const(len(buf.shape), "int32"), zero, offset]
    return _core.Call(handle, _core.Op.get("tir.tvm_stack_make_array"), args, span)


def _packed_args(args, span):
    out = []
    for a in args:
        if isinstance(a, _core.Buffer):
            out.append(_pack_buffer(a, span))
        elif isinstance(a, str):
            out.append(_core.StringImm(a))
        else:
            out.append(expr_ops.convert(a))
    return out


def _call_packed(op, what, args, span):
    if not args or not isinstance(args[0], (str, _core.StringImm)):
        raise TesseraTypeError(f"tir.{what}: the first argument is the function's name, a string")
    return _core.Call("int32", _core.Op.get(op), _packed_args(args, span), span)


def call_packed(*args, span=None):
    """A call of the packed function named ``args[0]`` (registered with
    ``tessera.register_func``); Buffer arguments pass as DLTensors. Its value is the return
    code; use it as a statement (``tir.Evaluate``) or as a te.extern body."""
    return _call_packed("tir.tvm_call_packed", "call_packed", args, span)


def call_cpacked(*args, span=None):
    """``call_packed`` of a function linked into the module (TVM's C packed convention)."""
    return _call_packed("tir.tvm_call_cpacked", "call_cpacked", args, span)


def call_packed_lowered(*args, span=None):
    """The lowered form of ``call_packed`` (arguments already on the stack)."""
    return _call_packed("tir.tvm_call_packed_lowered", "call_packed_lowered", args, span)


def call_cpacked_lowered(*args, span=None):
    """The lowered form of ``call_cpacked``."""
    return _call_packed("tir.tvm_call_cpacked_lowered", "call_cpacked_lowered", args, span)


def _default_trace_action(*args):
    print(list(args))


def trace(args, trace_action="tvm.default_trace_action", span=None):
    """TVM's ``tir.trace``: an expression that calls the global function ``trace_action`` with
    ``args`` while the kernel runs, and is worth the last of ``args`` (the traced value), or
    what the function returns when it returns a number. The default action,
    ``"tvm.default_trace_action"``, prints the list of values.

    >>> te.compute(x.shape, lambda i: tir.trace([i, x[i]]))
    """
    if not isinstance(args, list):
        raise TesseraTypeError(f"tir.trace takes its arguments as a list, got {type(args).__name__}")
    if not args:
        raise TesseraValueError("tir.trace needs at least one argument (the traced value)")
    if not isinstance(trace_action, (str, _core.StringImm)):
        raise TesseraTypeError("tir.trace: trace_action is the name of a global function, got "
                               f"{type(trace_action).__name__}")
    if str(trace_action) == "tvm.default_trace_action":
        from ..runtime.registry import get_global_func, register_func

        if get_global_func("tvm.default_trace_action", allow_missing=True) is None:
            register_func("tvm.default_trace_action", _default_trace_action, override=True)
    call_args = [_core.StringImm(str(trace_action))] + _packed_args(args, span)
    return _core.Call(call_args[-1].dtype, _core.Op.get("tir.tvm_call_trace_packed"), call_args, span)


__all__ = ["decl_buffer", "call_packed", "call_cpacked", "call_packed_lowered",
           "call_cpacked_lowered", "trace"]


class BufferMap(list):
    """``func.buffer_map``: the (parameter, buffer) pairs in parameter order, also indexable by
    parameter as TVM's Map is (``func.buffer_map[func.params[0]]``, ``p in func.buffer_map``,
    ``.items()``, ``.keys()``, ``.values()``, ``.get(p)``)."""

    def _find(self, var):
        for v, b in list.__iter__(self):
            if v.same_as(var):
                return b
        return None

    def __getitem__(self, key):
        if isinstance(key, _core.Var):
            found = self._find(key)
            if found is None:
                raise KeyError(f"{key.name} is not a buffer parameter")
            return found
        return list.__getitem__(self, key)

    def __contains__(self, key):
        if isinstance(key, _core.Var):
            return self._find(key) is not None
        return list.__contains__(self, key)

    def get(self, key, default=None):
        found = self._find(key) if isinstance(key, _core.Var) else None
        return default if found is None else found

    def items(self):
        return [(v, b) for v, b in list.__iter__(self)]

    def keys(self):
        return [v for v, _ in list.__iter__(self)]

    def values(self):
        return [b for _, b in list.__iter__(self)]


def _install_buffer_map():
    raw = _core.PrimFunc.buffer_map
    if getattr(getattr(raw, "fget", None), "_tessera_buffer_map", False):
        return

    def buffer_map(self):
        return BufferMap(raw.__get__(self))

    prop = property(buffer_map, doc=BufferMap.__doc__)
    prop.fget._tessera_buffer_map = True
    _core.PrimFunc.buffer_map = prop


_install_buffer_map()


_ACCESS_MASKS = {"r": 1, "w": 2}


def _fold(a, b, sign):
    """``a + sign * b``, folded when both are constants (as TVM's arithmetic folds)."""
    if isinstance(b, _core.IntImm) and b.value == 0:
        return a
    if isinstance(a, _core.IntImm) and isinstance(b, _core.IntImm):
        return expr_ops.const(a.value + sign * b.value, a.dtype)
    return a + b if sign > 0 else a - b


def _access_ptr(self, access_mask, ptr_type="handle", content_lanes=1, offset=0, extent=None):
    """``B.access_ptr("r", extent=n)``: the ``tir.tvm_access_ptr`` call TVM's Buffer.access_ptr
    builds (the address of element ``elem_offset + offset`` with ``extent`` elements, read ("r"),
    written ("w") or both; ``access_mask`` may also be the integer mask)."""
    if isinstance(access_mask, str):
        mask = 0
        for ch in access_mask:
            if ch not in _ACCESS_MASKS:
                raise TesseraValueError(f"Buffer.access_ptr: access mask {access_mask!r} is not made of 'r' and 'w'")
            mask |= _ACCESS_MASKS[ch]
    elif isinstance(access_mask, numbers.Integral):
        mask = int(access_mask)
    else:
        raise TesseraTypeError(f"Buffer.access_ptr: the access mask must be a string or an int, got {access_mask!r}")
    if ptr_type != "handle":
        raise TesseraValueError(f"Buffer.access_ptr: ptr_type {ptr_type!r} is not supported (only 'handle')")
    if content_lanes != 1:
        raise TesseraValueError("Buffer.access_ptr: content_lanes other than 1 are not supported")
    index_dtype = self.shape[0].dtype if self.shape else "int32"
    base = self.elem_offset if self.elem_offset is not None else expr_ops.const(0, index_dtype)
    offset = expr_ops.convert(offset) if not isinstance(offset, numbers.Integral) else expr_ops.const(int(offset), index_dtype)
    start = _fold(base, offset, 1)
    if extent is None and len(self.strides):
        # A strided buffer spans stride * extent of its outermost dimension, as TVM's.
        extent = _fold(self.strides[0] * self.shape[0], offset, -1)
    elif extent is None:
        size = None
        for dim in self.shape:
            if size is None:
                size = dim
            elif isinstance(size, _core.IntImm) and isinstance(dim, _core.IntImm):
                size = expr_ops.const(size.value * dim.value, index_dtype)
            else:
                size = size * dim
        size = expr_ops.const(1, index_dtype) if size is None else size
        extent = _fold(size, offset, -1)
    elif isinstance(extent, numbers.Integral):
        extent = expr_ops.const(int(extent), index_dtype)
    annotation = _core.Call(self.dtype, _core.Op.get("tir.type_annotation"), [], None)
    return _core.Call("handle", _core.Op.get("tir.tvm_access_ptr"),
                      [annotation, self.data, start, extent, expr_ops.const(mask, "int32")], None)


_core.Buffer.access_ptr = _access_ptr
# TVM's access mask bits: Buffer.READ | Buffer.WRITE is "rw".
_core.Buffer.READ, _core.Buffer.WRITE = _ACCESS_MASKS["r"], _ACCESS_MASKS["w"]


def _offset_of(self, indices):
    """The offsets of the element at ``indices`` (numbers or expressions), one per physical
    axis, including ``elem_offset``, simplified (computed in C++).

    >>> tir.decl_buffer((m, n), elem_offset=100).offset_of([2, 3])   # [n * 2 + 103]
    """
    dtype = self.shape[0].dtype if len(self.shape) else "int32"
    converted = [expr_ops.const(int(i), dtype) if isinstance(i, numbers.Integral) else expr_ops.convert(i)
                 for i in indices]
    return self._offset_of(converted)


if not hasattr(_core.Buffer, "_offset_of"):
    _core.Buffer._offset_of = _core.Buffer.offset_of
_core.Buffer.offset_of = _offset_of
