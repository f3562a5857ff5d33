"""Memory intrinsics: buffers and allocations, and the argument checks of the table's vector
loads and stores (table.py): S.vload, S.vstore, S.vload_gather, S.vstore_scatter."""

import numpy as np

from ... import _core
from .. import types as T
from ..masks import to_mask
from ..values import BufferView, Pointer
from ._registry import intrinsic

_ALLOC_SCOPES = ("private", "lsram", "shared")


def _ramp(p, node, ptr, lanes, stride):
    if isinstance(stride, int) or isinstance(stride, _core.IntImm):
        stride = p.static_int(node, stride, "stride")
        if stride < 1:
            raise p.error(node, f'the arg "stride" must be >= 1, got {stride}')
    step = p.to_index(node, stride)
    with p.at(node):
        return _core.Ramp(p.offset_index(node, ptr, 0), step, lanes, p.span(node))


def _lanes(p, node, lanes):
    n = p.static_int(node, lanes, "lanes")
    if n < 2:
        raise p.error(node, f'the arg "lanes" must be at least 2, got {n}')
    return n


def _vload(p, node, name, ptr, mask=None, lanes=None, stride=1):
    """The load form: a BufferLoad of a ramp (inactive lanes zero)."""
    pointee = p.pointer_of(node, ptr, f"S.{name}").element
    ptr = p.scalar_view(node, p.pointer_of(node, ptr, f"S.{name}"))
    if ptr.element == "void":
        raise p.error(node, f'S.{name} through a "void" pointer; use p.as_ptr(dtype) first')
    # Without "lanes": the pointee's lanes (a virtual vector's too), native ones for scalars.
    n = (T.lanes_of(pointee) if T.lanes_of(pointee) > 1 else T.native_lanes(ptr.element)) \
        if lanes is None else _lanes(p, node, lanes)
    pred = to_mask(p, node, mask, n)
    with p.at(node):
        return _core.BufferLoad(ptr.buffer, [_ramp(p, node, ptr, n, stride)], pred, p.span(node))


def _vstore(p, node, name, value, ptr, mask=None, stride=1):
    """The store form: a BufferStore of the active lanes at a ramp."""
    ptr = p.scalar_view(node, p.pointer_of(node, ptr, f"S.{name}"))
    value = p.load(value)
    if not isinstance(value, _core.PrimExpr) or T.lanes_of(value.dtype) == 1:
        raise p.error(node, f"S.{name} expects a vector value, got {p.describe(value)}")
    if T.is_bool(value.dtype):
        raise p.error(node, f"S.{name} cannot store a mask")
    if ptr.element == "void":
        ptr = p.view(node, ptr, T.element_of(value.dtype))
    if ptr.scope == "constant":
        raise p.error(node, f"S.{name} cannot store through a pointer to constant memory")
    if T.element_of(value.dtype) != ptr.element:
        raise p.error(node, f'Argument type mismatch: cannot store "{value.dtype}" through a '
                            f'pointer to "{ptr.element}"')
    n = T.lanes_of(value.dtype)
    pred = to_mask(p, node, mask, n)
    with p.at(node):
        p.builder.emit(_core.BufferStore(ptr.buffer, value, [_ramp(p, node, ptr, n, stride)], pred,
                                         p.span(node)))


def _shape(p, node, shape, static):
    shape = list(shape) if isinstance(shape, (list, tuple)) else [shape]
    if not shape:
        raise p.error(node, "a shape needs at least one dimension")
    if static:
        return [p.static_int(node, s, "a dimension of the shape") for s in shape]
    return [p.load(s) for s in shape]


def _allocate(p, node, shape, dtype, scope, annotations=None):
    dtype = T.canonical(dtype)
    if dtype == "void" or not T.is_native(dtype) or T.is_bool(dtype):
        raise p.error(node, f'cannot allocate elements of "{dtype}": use a scalar or native vector type')
    dims = _shape(p, node, shape, static=True)
    count = int(np.prod(dims))
    if count <= 0:
        raise p.error(node, f"an allocation needs a positive size, got the shape {dims}")
    name = p.name_hint or "buf"
    span = p.span(node)
    var = _core.Var.pointer(name, dtype, scope, span)
    extent = [_core.IntImm("int32", count)]
    buf = _core.Buffer(var, dtype, extent, name=name, span=span)
    with p.at(node):
        p.builder.emit_allocate(var, dtype, extent, annotations or {}, span)
        p.builder.emit_decl_buffer(buf, span)
    if hasattr(p, "local_storage"):
        p.local_storage.append(var)  # a returned pointer must not point here (parser.visit_Return)
    return BufferView(Pointer(buf, dtype, scope), dims)


@intrinsic
def alloc_buffer(p, node, shape, dtype, scope="private"):
    """A buffer of ``shape`` in ``scope`` ("private", "lsram" or "shared"); ``buf[i, j]``
    indexes it and ``buf.addr_of(i)`` gives a pointer."""
    if scope not in _ALLOC_SCOPES:
        raise p.error(node, f'the arg "scope" must be one of {_ALLOC_SCOPES}, got "{scope}"')
    return _allocate(p, node, shape, dtype, scope)


@intrinsic
def alloc(p, node, shape, dtype, scope="private"):
    """A pointer to new storage of ``shape`` in ``scope``."""
    return alloc_buffer(p, node, shape, dtype, scope).pointer


@intrinsic
def alloc_const(p, node, shape, dtype, data):
    """A pointer to a ``__constant`` table holding ``data`` (computed at compile time)."""
    dtype = T.canonical(dtype)
    if T.lanes_of(dtype) != 1:
        raise p.error(node, f'constant tables hold scalars, got "{dtype}"')
    dims = _shape(p, node, shape, static=True)
    np_dtype = "float32" if dtype == "bfloat16" else dtype
    try:
        values = np.asarray(data).astype(np_dtype).reshape(-1)
    except Exception as err:
        raise p.error(node, f"S.alloc_const: the data cannot be read as {dtype}: {err}") from None
    if values.size != int(np.prod(dims)):
        raise p.error(node, f"S.alloc_const: the data has {values.size} elements but the shape {dims} "
                            f"has {int(np.prod(dims))}")
    if T.is_float(dtype):
        items = [_core.FloatImm(dtype, float(v)) for v in values]
    else:
        items = [_core.IntImm(dtype, int(v)) for v in values]
    view = _allocate(p, node, dims, dtype, "constant", {"tessera.const_data": _core.Array(items)})
    return view.pointer


@intrinsic
def match_buffer(p, node, pointer, shape):
    """A row-major view of ``shape`` over ``pointer``: ``b[i, j]``."""
    ptr = p.pointer_of(node, pointer, "S.match_buffer")
    if ptr.element == "void":
        raise p.error(node, 'S.match_buffer of a "void" pointer; use p.as_ptr(dtype) first')
    return BufferView(ptr, _shape(p, node, shape, static=False))


def _gather_args(p, node, name, ptr, indices, lanes=None):
    """The pointer and the 16-bit index vector (as uint16) of a gather or scatter; the data has
    the index vector's lane count (``lanes`` when a value fixes it)."""
    ptr = p.scalar_view(node, p.pointer_of(node, ptr, f"S.{name}"))
    if ptr.element == "void":
        raise p.error(node, f'S.{name} through a "void" pointer; use p.as_ptr(dtype) first')
    idx = p.load(indices)
    if not isinstance(idx, _core.PrimExpr) or not T.is_int(idx.dtype) or \
            T.lanes_of(idx.dtype) == 1 or T.bits_of(idx.dtype) != 16 or \
            (lanes is not None and T.lanes_of(idx.dtype) != lanes):
        want = f"int16x{lanes}" if lanes is not None else "int16xN"
        raise p.error(node, f'S.{name}: the indices must be a 16-bit index vector ("{want}" or '
                            f'its unsigned form, one index per lane), got {p.describe(idx)}')
    n = T.lanes_of(idx.dtype)
    itype = T.with_lanes("uint16", n)
    if idx.dtype != itype:
        idx = p.call_op(node, itype, "tir.reinterpret", [idx])
    return ptr, idx, n


def _vload_gather(p, node, name, op, ptr, indices, mask=None):
    """The gather form: ``op`` of the pointer, the uint16 indices and the mask."""
    from ._util import mask_expr

    ptr, idx, n = _gather_args(p, node, name, ptr, indices)
    return p.call_op(node, T.with_lanes(ptr.element, n), op,
                     [p.pointer_expr(node, ptr), idx, mask_expr(p, node, mask, n)])


def _vstore_scatter(p, node, name, op, value, ptr, indices, mask=None):
    """The scatter form: ``op`` of the value, the pointer, the uint16 indices and the mask."""
    from ._util import mask_expr

    ptr0 = p.scalar_view(node, p.pointer_of(node, ptr, f"S.{name}"))
    value = p.load(value)
    if not isinstance(value, _core.PrimExpr) or T.lanes_of(value.dtype) == 1 or \
            T.is_bool(value.dtype) or (ptr0.element != "void" and
                                       T.element_of(value.dtype) != ptr0.element):
        raise p.error(node, f'S.{name}: Argument type mismatch: expects a vector of '
                            f'"{ptr0.element}", got {p.describe(value)}')
    ptr, idx, n = _gather_args(p, node, name, ptr, indices,
                               lanes=T.lanes_of(value.dtype))
    if ptr.scope == "constant":
        raise p.error(node, f"S.{name} cannot store through a pointer to constant memory")
    p.emit_call(node, op, [value, p.pointer_expr(node, ptr), idx,
                                             mask_expr(p, node, mask, n)])
