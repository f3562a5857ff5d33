"""What names stand for while a kernel is parsed, besides IR expressions and Python values."""

from .. import _core

UNBOUNDED = 2147483647  # extent of the flat buffer behind a pointer


class Pointer:
    """A pointer: the flat buffer it points into, its element type (``"int32"``, ``"int8x32"``
    or ``"void"``), its memory scope and an offset in elements (an int or an int32 expression).
    Pointer arithmetic only moves the offset; the buffer stays the one the pointer came from."""

    def __init__(self, buffer, element, scope, offset=0):
        self.buffer = buffer
        self.element = element
        self.scope = scope
        self.offset = offset

    def moved(self, offset):
        return Pointer(self.buffer, self.element, self.scope, offset)

    def __repr__(self):
        return f"Pointer({self.element}, {self.scope})"


class LocalVar:
    """A mutable variable (scalar, vector or mask): one element of private storage."""

    def __init__(self, buffer, dtype):
        self.buffer = buffer
        self.dtype = dtype


class PointerVar:
    """A pointer variable that is reassigned: a fixed buffer and a mutable element offset. Every
    value it takes must point into the same buffer."""

    def __init__(self, base, offset_var):
        self.base = base
        self.offset_var = offset_var


class PointerSlot:
    """A pointer variable that may be re-pointed into another buffer inside a loop or a branch
    (``p = a + 2`` ... ``if c: p = b``): private storage holding its address. Its element type
    and memory scope stay those of its first value; each use reads the address into a new
    pointer (``load``)."""

    def __init__(self, buffer, element, scope, storage, name, span=None):
        self.buffer = buffer  # the one-element "handle" storage
        self.span = span
        self.element = element
        self.scope = scope
        self.storage = storage  # the dtype of the buffer seen through the loaded pointer
        self.name = name


class BufferView:
    """A multi-dimensional row-major view of a pointer: ``S.match_buffer`` and
    ``S.alloc_buffer``. ``b[i, j]`` addresses element ``i * shape[1] + j`` of the pointer."""

    def __init__(self, pointer, shape):
        self.pointer = pointer
        self.shape = list(shape)

    @property
    def dtype(self):
        return self.pointer.element

    def __repr__(self):
        return f"BufferView({self.pointer.element}, {self.shape})"


class Event:
    """A DMA event from ``S.alloc_events``: an int32 variable of the kernel."""

    def __init__(self, var):
        self.var = var

    def __repr__(self):
        return f"Event({self.var.name})"


class BoundMethod:
    """``v.astype``, ``p.as_ptr``, ``buf.addr_of``: a method of a kernel value, called later
    as ``impl(parser, node, owner, *args, **kwargs)``."""

    def __init__(self, name, owner, impl):
        self.name = name
        self.owner = owner
        self.impl = impl


def is_expr(value):
    return isinstance(value, _core.PrimExpr)
