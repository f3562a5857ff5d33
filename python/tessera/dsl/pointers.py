"""Pointers of the DSL: arithmetic in elements, comparisons, views (``as_ptr``), slices and the
row-major indexing of buffer views. A pointer is a parse-time value (:class:`.values.Pointer`);
only the accesses and the addresses handed to calls reach the IR."""

import ast

import numpy as np

from .. import _core
from ..script.parser.core import Parser
from . import types as T
from .values import UNBOUNDED, BufferView, Pointer

_CMP = {ast.Lt: _core.LT, ast.LtE: _core.LE, ast.Gt: _core.GT, ast.GtE: _core.GE,
        ast.Eq: _core.EQ, ast.NotEq: _core.NE}
_OP_NAMES = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//",
             ast.Mod: "%"}


class PointerParser(Parser):
    """Pointer half of the expression parser; it relies on ``to_index``, ``binop``, ``compare``,
    ``load`` and ``static_int`` of :class:`tessera.dsl.expressions.ExpressionParser`."""

    def pointer_of(self, node, value, what="the argument"):
        """A pointer from a pointer, a pointer variable or a buffer view (its first element)."""
        value = self.load(value)
        if isinstance(value, BufferView):
            return value.pointer
        if not isinstance(value, Pointer):
            raise self.error(node, f"{what} expects a pointer, got {self.describe(value)}")
        return value

    def is_local_storage(self, ptr):
        """Whether ``ptr`` points into storage allocated by the function being parsed."""
        data = ptr.buffer.data
        return any(data.same_as(v) for v in getattr(self, "local_storage", ()))

    def pointer_expr(self, node, ptr):
        """The handle expression of a pointer (typed as its element in C)."""
        if T.is_virtual_vector(ptr.element):
            ptr = self.scalar_view(node, ptr)
        data = ptr.buffer.data
        if isinstance(ptr.offset, int) and ptr.offset == 0 and ptr.buffer.dtype == data.pointer_element:
            return data
        load = _core.BufferLoad(ptr.buffer, [self.to_index(node, ptr.offset)])
        return _core.Call("handle", _core.Op.get("tir.address_of"), [load], self.span(node))

    def view(self, node, ptr, element):
        """The same address seen as a pointer to ``element`` (``p.as_ptr``)."""
        element = T.canonical(element)
        if element == ptr.element:
            return ptr
        new_bytes = 1 if element == "void" else T.bits_of(element) * T.lanes_of(element) // 8
        old_bytes = 1 if ptr.element == "void" else T.bits_of(ptr.element) * T.lanes_of(ptr.element) // 8
        storage = "int8" if element == "void" else element
        if isinstance(ptr.offset, int) and (ptr.offset * old_bytes) % new_bytes == 0:
            offset = ptr.offset * old_bytes // new_bytes
        elif not isinstance(ptr.offset, int) and old_bytes % new_bytes == 0:
            offset = _core.Mul(self.to_index(node, ptr.offset),
                               _core.IntImm("int32", old_bytes // new_bytes), self.span(node))
        else:
            return self.materialize(node, ptr, element)
        buf = _core.Buffer(ptr.buffer.data, storage, [_core.IntImm("int32", UNBOUNDED)],
                           name=ptr.buffer.name, span=self.span(node))
        return Pointer(buf, element, ptr.scope, offset)

    def as_ptr(self, node, ptr, element):
        """``p.as_ptr(element)``. Assigned as a whole to a name bound once (``vp =
        a.as_ptr("i32x8")``), the view is a pointer variable of that name, so the C names it as
        the kernel does (``vp[0]``, not ``((__global int8*)a)[0]``); elsewhere it is a view of
        the same buffer."""
        name = getattr(self, "name_hint", None)
        if name and node is getattr(self, "name_hint_value", None) and self.mutable[name] <= 1 \
                and not self.vars.lookup(name)[0]:
            element = T.canonical(element)
            if element != ptr.element:
                return self.materialize(node, ptr, element, name)
        return self.view(node, ptr, element)

    def scalar_view(self, node, ptr):
        """A pointer to vectors seen as a pointer to their scalars."""
        if ptr.element == "void" or T.lanes_of(ptr.element) == 1:
            return ptr
        return self.view(node, ptr, T.element_of(ptr.element))

    def materialize(self, node, ptr, element=None, name="ptr"):
        """A pointer variable holding ``ptr``'s address, seen as ``element``."""
        element = element or ptr.element
        if T.is_virtual_vector(element):
            # The variable points to the scalars (no C type holds a virtual vector), seen as
            # pointing to the virtual vectors.
            scalar = self.materialize(node, ptr, T.element_of(element), name)
            return self.view(node, scalar, element)
        storage = "int8" if element == "void" else element
        span = self.span(node)
        var = _core.Var.pointer(name, element if element != "void" else "int8", ptr.scope, span)
        with self.at(node):
            self.builder.emit_let(var, self.pointer_expr(node, ptr), span)
            buf = _core.Buffer(var, storage, [_core.IntImm("int32", UNBOUNDED)], name=f"{name}_buf", span=span)
            self.builder.emit_decl_buffer(buf, span)
        if self.is_local_storage(ptr):
            self.local_storage.append(var)
        return Pointer(buf, element, ptr.scope, 0)

    def virtual_access(self, node, ptr, index):
        """``ptr[index]`` of a pointer to a virtual vector type (``S.ptr("fp32x32")``): the
        buffer of its scalars and the Ramp of the ``lanes`` scalars of that vector."""
        lanes = T.lanes_of(ptr.element)
        moved = ptr if isinstance(index, int) and index == 0 else \
            self.pointer_arith(node, ast.Add(), ptr, index)
        scalars = self.scalar_view(node, moved)
        with self.at(node):
            ramp = _core.Ramp(self.offset_index(node, scalars, 0), _core.IntImm("int32", 1), lanes,
                              self.span(node))
        return scalars.buffer, ramp

    def offset_index(self, node, ptr, index):
        """The flat element index of ``ptr[index]``."""
        if isinstance(ptr.offset, int) and isinstance(index, int):
            return self.to_index(node, ptr.offset + index)
        if isinstance(ptr.offset, int) and ptr.offset == 0:
            return self.to_index(node, index)
        if isinstance(index, int) and index == 0:
            return self.to_index(node, ptr.offset)
        return _core.Add(self.to_index(node, ptr.offset), self.to_index(node, index), self.span(node))

    def pointer_arith(self, node, op, left, right):
        if isinstance(left, Pointer) and isinstance(right, Pointer):
            if not isinstance(op, ast.Sub) or not left.buffer.data.same_as(right.buffer.data):
                raise self.error(node, "only the difference of two pointers into one buffer is defined")
            return self.binop(node, ast.Sub(), left.offset, right.offset)
        ptr, delta = (left, right) if isinstance(left, Pointer) else (right, left)
        if not isinstance(op, (ast.Add, ast.Sub)) or (isinstance(op, ast.Sub) and ptr is right):
            raise self.error(node, f"unsupported pointer operation {_OP_NAMES.get(type(op), '?')}")
        if ptr.element == "void":
            raise self.error(node, 'pointer arithmetic on a "void" pointer; use p.as_ptr(dtype) first')
        delta = self.load(delta)
        if isinstance(delta, (int, np.integer)) and isinstance(ptr.offset, int):
            return ptr.moved(ptr.offset + (-int(delta) if isinstance(op, ast.Sub) else int(delta)))
        d = self.to_index(node, delta)
        base = self.to_index(node, ptr.offset)
        make = _core.Sub if isinstance(op, ast.Sub) else _core.Add
        return ptr.moved(make(base, d, self.span(node)))

    def pointer_compare(self, node, op, left, right):
        if left.buffer.data.same_as(right.buffer.data):
            return self.compare(node, op, self.to_index(node, left.offset), self.to_index(node, right.offset))
        a, b = self.pointer_expr(node, left), self.pointer_expr(node, right)
        with self.at(node):
            return _CMP[type(op)](a, b, self.span(node))

    def flatten(self, node, view, index):
        """``b[i, j]`` of a row-major view: the pointer and the flat index (or slice)."""
        index = index if isinstance(index, tuple) else (index,)
        shape = view.shape
        if len(index) != len(shape):
            raise self.error(node, f"the buffer has {len(shape)} dimensions but is indexed with {len(index)}")
        flat = 0
        for k, i in enumerate(index):
            stride = 1
            for s in shape[k + 1:]:
                stride = self.binop(node, ast.Mult(), stride, s)
            if isinstance(i, slice):
                if k != len(shape) - 1:
                    raise self.error(node, "only the last dimension of a buffer may be sliced")
                moved = self.pointer_arith(node, ast.Add(), view.pointer, flat)
                return moved, i
            flat = self.binop(node, ast.Add(), flat, self.binop(node, ast.Mult(), i, stride))
        return view.pointer, flat

    def vector_slice(self, node, ptr, sl):
        """``p[a:b]`` of a pointer to N-lane vectors is the vectors a to b - 1 one after the
        other: the scalars a*N to b*N of the same address (Compass's slices of pointers to
        vectors). Returns the pointer and slice to use; other pointers are returned as given."""
        if not isinstance(sl, slice) or ptr.element == "void" or T.lanes_of(ptr.element) == 1:
            return ptr, sl
        if sl.step is not None and self.static_int(node, sl.step, "a slice step") != 1:
            raise self.error(node, f"a slice of a pointer to {ptr.element} takes whole vectors: "
                                   f"no step")
        if sl.stop is None:
            raise self.error(node, "a slice needs a stop: p[a:b]")
        if T.is_bool(ptr.element):
            raise self.error(node, f"slices need a pointer to scalars or data vectors, got a pointer "
                                   f"to {ptr.element}")
        n = T.lanes_of(ptr.element)
        start = 0 if sl.start is None else sl.start
        scale = lambda v: v * n if isinstance(v, int) else self.binop(node, ast.Mult(), v, n)  # noqa: E731
        return self.scalar_view(node, ptr), slice(scale(start), scale(sl.stop), None)

    def slice_ramp(self, node, ptr, sl):
        """The Ramp of ``ptr[a:b:s]`` and its lane count, which must be known at compile time."""
        if ptr.element == "void" or T.lanes_of(ptr.element) > 1:
            raise self.error(node, f"slices need a pointer to scalars, got a pointer to {ptr.element}")
        start = 0 if sl.start is None else sl.start
        step = 1 if sl.step is None else self.static_int(node, sl.step, "a slice step")
        if sl.stop is None:
            raise self.error(node, "a slice needs a stop: p[a:b]")
        if step <= 0:
            raise self.error(node, "a slice step must be positive")
        if isinstance(start, int) and isinstance(sl.stop, int):
            lanes = len(range(start, sl.stop, step))
        else:
            diff = _constant_difference(self.to_index(node, sl.stop), self.to_index(node, start))
            if diff is None:
                raise self.error(node, "the length of a slice must be known at compile time (p[i:i + 8])")
            lanes = len(range(0, diff, step))
        if lanes < 2:
            raise self.error(node, f"a slice of {lanes} element(s) is not a vector; use p[i]")
        base = self.offset_index(node, ptr, start)
        with self.at(node):
            return _core.Ramp(base, _core.IntImm("int32", step), lanes, self.span(node)), lanes


def _linear(e):
    """An integer expression as ({variable or opaque term: coefficient}, constant), or None."""
    if isinstance(e, _core.IntImm):
        return {}, e.value
    if isinstance(e, (_core.Add, _core.Sub)):
        a, b = _linear(e.a), _linear(e.b)
        if a is None or b is None:
            return None
        sign = 1 if isinstance(e, _core.Add) else -1
        terms = dict(a[0])
        for k, v in b[0].items():
            terms[k] = terms.get(k, 0) + sign * v
        return terms, a[1] + sign * b[1]
    if isinstance(e, _core.Mul):
        a, b = _linear(e.a), _linear(e.b)
        if a is None or b is None:
            return None
        if not a[0]:
            a, b = b, a
        if b[0]:
            return {_core.structural_hash(e): 1}, 0
        return {k: v * b[1] for k, v in a[0].items()}, a[1] * b[1]
    if isinstance(e, _core.Cast) and e.dtype == e.value.dtype:
        return _linear(e.value)
    return {_core.structural_hash(e, True): 1}, 0


def _constant_difference(a, b):
    """a - b when it is a compile-time constant (``(i + 16) - i``), else None."""
    la, lb = _linear(a), _linear(b)
    if la is None or lb is None:
        return None
    keys = set(la[0]) | set(lb[0])
    if any(la[0].get(k, 0) != lb[0].get(k, 0) for k in keys):
        return None
    return la[1] - lb[1]
