"""The DSL intrinsics: each parses its arguments and builds IR through the parser.

An intrinsic object is only meaningful inside a kernel; its ``impl(parser, node, *args,
**kwargs)`` receives evaluated arguments (IR expressions, pointers or Python values).
"""

from .. import _core

REGISTRY = {}


class Intrinsic:
    """A DSL builtin such as ``S.vload``."""

    def __init__(self, name, impl):
        self.name = name
        self.impl = impl
        self.__doc__ = impl.__doc__

    def __call__(self, *args, **kwargs):
        raise TypeError(f"S.{self.name}() can only be used inside a @S.prim_func")

    def __repr__(self):
        return f"<S.{self.name}>"


def intrinsic(fn):
    REGISTRY[fn.__name__] = Intrinsic(fn.__name__, fn)
    return fn


def native_lanes(dtype):
    """Lanes of the 256-bit native vector of a scalar dtype."""
    return 256 // _core.DataType(dtype).bits


def _no_mask(p, node, mask):
    if mask is not None:
        raise p.error(node, "mask= is not supported by this version of tessera yet; pass mask=None")


@intrinsic
def vload(p, node, ptr, mask=None, lanes=None, stride=1):
    """Load a vector from ``ptr``: native width unless ``lanes`` is given."""
    from .parser import Pointer

    if not isinstance(ptr, Pointer):
        raise p.error(node, f"S.vload expects a pointer, got {p.describe(ptr)}")
    _no_mask(p, node, mask)
    elem = ptr.element
    if _core.DataType(elem).lanes > 1:
        raise p.error(node, "S.vload needs a pointer to scalars; this pointer's elements are vectors")
    n = native_lanes(elem) if lanes is None else p.static_int(node, lanes, "lanes")
    if n != native_lanes(elem):
        raise p.error(node, f"lanes={n}: only native vectors ({native_lanes(elem)} lanes of {elem}) are supported yet")
    step = p.static_int(node, stride, "stride")
    index = _core.Ramp(p.to_index(node, ptr.offset), _core.IntImm("int32", step), n, p.span(node))
    return _core.BufferLoad(ptr.buffer, [index], None, p.span(node))


@intrinsic
def vstore(p, node, value, ptr, mask=None, stride=1):
    """Store the vector ``value`` at ``ptr``."""
    from .parser import Pointer

    if not isinstance(ptr, Pointer):
        raise p.error(node, f"S.vstore expects a pointer as its second argument, got {p.describe(ptr)}")
    _no_mask(p, node, mask)
    if not isinstance(value, _core.PrimExpr) or _core.DataType(value.dtype).lanes == 1:
        raise p.error(node, f"S.vstore expects a vector value, got {p.describe(value)}")
    vt = _core.DataType(value.dtype)
    if _core.canonical_dtype(ptr.element) != str(_core.DataType(value.dtype).with_lanes(1)):
        raise p.error(node, f"Argument type mismatch: cannot store {value.dtype} through a pointer to {ptr.element}")
    step = p.static_int(node, stride, "stride")
    index = _core.Ramp(p.to_index(node, ptr.offset), _core.IntImm("int32", step), vt.lanes, p.span(node))
    p.builder.emit(_core.BufferStore(ptr.buffer, value, [index], None, p.span(node)))


@intrinsic
def vadd(p, node, x, y, mask=None, saturate=False, out_sign=None, r=None):
    """Lane-wise ``x + y``; a scalar operand is broadcast."""
    _no_mask(p, node, mask)
    if saturate or out_sign is not None or r is not None:
        raise p.error(node, "saturate=, out_sign= and r= are not supported by this version of tessera yet")
    a, b = p.coerce(node, x, y)
    if _core.DataType(a.dtype).lanes == 1:
        raise p.error(node, f"S.vadd expects vector operands, got {a.dtype}")
    return _core.Add(a, b, p.span(node))
