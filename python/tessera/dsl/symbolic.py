"""Compile-time Python helpers on kernel values.

A kernel may call an undecorated Python function with kernel values: the function runs while
the kernel is parsed, on :class:`Symbolic` stand-ins whose operators build IR through the
parser, and only its result enters the kernel. ``if`` on a symbolic value is not a runtime
branch, so it is refused; decorate the helper with ``@S.prim_func`` for that.

>>> def clamp_add(x, y):
...     return S.max(x + y, 0)        # runs at compile time
"""

import ast
import contextlib
import threading

from .. import _core
from .values import BufferView, Pointer

_state = threading.local()


def active():
    """(parser, node) of the helper call being run, or None."""
    return getattr(_state, "frame", None)


@contextlib.contextmanager
def running(parser, node):
    saved = active()
    _state.frame = (parser, node)
    try:
        yield
    finally:
        _state.frame = saved


class Symbolic:
    """A kernel value inside a compile-time helper."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def _bin(self, op, other, reverse=False):
        p, node = active()
        a, b = (unwrap(other), self.value) if reverse else (self.value, unwrap(other))
        return wrap(p.binop(node, op, a, b))

    def _cmp(self, op, other):
        p, node = active()
        return wrap(p.compare(node, op, self.value, unwrap(other)))

    def __add__(self, o): return self._bin(ast.Add(), o)
    def __radd__(self, o): return self._bin(ast.Add(), o, True)
    def __sub__(self, o): return self._bin(ast.Sub(), o)
    def __rsub__(self, o): return self._bin(ast.Sub(), o, True)
    def __mul__(self, o): return self._bin(ast.Mult(), o)
    def __rmul__(self, o): return self._bin(ast.Mult(), o, True)
    def __truediv__(self, o): return self._bin(ast.Div(), o)
    def __rtruediv__(self, o): return self._bin(ast.Div(), o, True)
    def __floordiv__(self, o): return self._bin(ast.FloorDiv(), o)
    def __rfloordiv__(self, o): return self._bin(ast.FloorDiv(), o, True)
    def __mod__(self, o): return self._bin(ast.Mod(), o)
    def __rmod__(self, o): return self._bin(ast.Mod(), o, True)
    def __lshift__(self, o): return self._bin(ast.LShift(), o)
    def __rshift__(self, o): return self._bin(ast.RShift(), o)
    def __and__(self, o): return self._bin(ast.BitAnd(), o)
    def __rand__(self, o): return self._bin(ast.BitAnd(), o, True)
    def __or__(self, o): return self._bin(ast.BitOr(), o)
    def __ror__(self, o): return self._bin(ast.BitOr(), o, True)
    def __xor__(self, o): return self._bin(ast.BitXor(), o)
    def __rxor__(self, o): return self._bin(ast.BitXor(), o, True)
    def __lt__(self, o): return self._cmp(ast.Lt(), o)
    def __le__(self, o): return self._cmp(ast.LtE(), o)
    def __gt__(self, o): return self._cmp(ast.Gt(), o)
    def __ge__(self, o): return self._cmp(ast.GtE(), o)
    def __eq__(self, o): return self._cmp(ast.Eq(), o)
    def __ne__(self, o): return self._cmp(ast.NotEq(), o)

    def __neg__(self):
        p, node = active()
        return wrap(p.unary(node, ast.USub(), self.value))

    def __invert__(self):
        p, node = active()
        return wrap(p.unary(node, ast.Invert(), self.value))

    def __getitem__(self, index):
        p, node = active()
        return wrap(p.subscript(node, self.value, unwrap(index)))

    def __bool__(self):
        p, node = active()
        raise p.error(node, "a kernel value has no truth value at compile time: a plain Python "
                            "helper cannot branch on it; decorate the helper with @S.prim_func")

    __hash__ = None

    def __repr__(self):
        return f"Symbolic({self.value!r})"


def wrap(value):
    if isinstance(value, (_core.PrimExpr, Pointer, BufferView)):
        return Symbolic(value)
    if isinstance(value, tuple):
        return tuple(wrap(v) for v in value)
    if isinstance(value, list):
        return [wrap(v) for v in value]
    return value


def unwrap(value):
    if isinstance(value, Symbolic):
        return value.value
    if isinstance(value, tuple):
        return tuple(unwrap(v) for v in value)
    if isinstance(value, list):
        return [unwrap(v) for v in value]
    return value


def call(callee, args, kwargs):
    """An intrinsic or type constructor called from a helper."""
    from .intrinsics import Intrinsic

    p, node = active()
    args = [unwrap(a) for a in args]
    kwargs = {k: unwrap(v) for k, v in kwargs.items()}
    if isinstance(callee, Intrinsic):
        return wrap(callee.impl(p, node, *args, **kwargs))
    return wrap(p.construct(node, callee, args, kwargs))
