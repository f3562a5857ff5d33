"""The imperative statement builder of TVM's older code and tests (``tir.ir_builder``).

>>> ib = tir.ir_builder.create()
>>> size = tir.Var("size", "int32")
>>> buf = ib.allocate("int32", size, name="buf", scope="global")
>>> with ib.for_range(0, size, name="pos") as pos:
...     with ib.if_scope(pos < 4):
...         buf[pos] = pos * 3
...     with ib.else_scope():
...         buf[pos] = buf[pos - 4]
>>> stmt = ib.get()

Statements are collected per scope; a binder (an allocation, an attribute, a let) wraps
everything emitted after it in the same scope, as in TVM.
"""

from .. import _core
from ..error import TesseraTypeError, TesseraValueError
from . import expr_ops

__all__ = ["IRBuilder", "BufferVar", "WithScope", "create"]


class WithScope:
    """A ``with`` scope: its value is what ``as`` binds; leaving it runs ``exit_cb``."""

    def __init__(self, enter_value, exit_cb):
        self._enter_value = enter_value
        self._exit_cb = exit_cb

    def __enter__(self):
        return self._enter_value

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self._exit_cb()
        return False


def _expr(value, dtype=None):
    if isinstance(value, BufferVar):
        return value.asobject().data
    if isinstance(value, _core.IterVar):
        return value.var
    return expr_ops.convert(value, dtype) if dtype is not None else expr_ops.convert(value)


class BufferVar:
    """A buffer being built: ``A[i]`` loads, ``A[i] = v`` emits a store into the builder."""

    def __init__(self, builder, buffer, content_type):
        self._builder = builder
        self._buffer = buffer
        self._content_type = content_type

    def asobject(self):
        """The underlying Buffer."""
        return self._buffer

    @property
    def dtype(self):
        return self._content_type

    @property
    def data(self):
        return self._buffer.data

    def _indices(self, index):
        if isinstance(index, (tuple, list)):
            index = list(index)
        else:
            index = [index]
        index = [i.var if isinstance(i, _core.IterVar) else i for i in index]
        shape = list(self._buffer.shape)
        if len(index) == 1 and len(shape) > 1:
            # A flat index into a multi-dimensional buffer: unravelled row-major.
            flat = _expr(index[0])
            out = []
            for extent in reversed(shape):
                out.append(expr_ops.floormod(flat, extent))
                flat = expr_ops.floordiv(flat, extent)
            index = list(reversed(out))
        return [_expr(i, "int32") if isinstance(i, int) else _expr(i) for i in index]

    def __getitem__(self, index):
        return _core.BufferLoad(self._buffer, self._indices(index), None)

    def __setitem__(self, index, value):
        indices = self._indices(index)
        element = self._content_type.split("x", 1)[0]
        if isinstance(value, (bool, int, float)):
            value = expr_ops.const(value, element)
        value = _expr(value)
        if str(value.dtype).split("x", 1)[0] != element:
            raise TesseraTypeError(f"cannot store a {value.dtype} value in a buffer pointer of "
                                   f"{self._content_type} elements")
        self._builder.emit(_core.BufferStore(self._buffer, value, indices))


_KINDS = {"serial": _core.ForKind.SERIAL, "parallel": _core.ForKind.PARALLEL,
          "vectorize": _core.ForKind.VECTORIZED, "unroll": _core.ForKind.UNROLLED}


class IRBuilder:
    """Builds a statement imperatively: emit statements, open scopes with ``with``, ``get()``."""

    def __init__(self):
        self._seq_stack = [[]]
        self.nidx = 0

    def _pop_seq(self):
        """The statements of the innermost scope as one Stmt; binders wrap what follows them."""
        seq = self._seq_stack.pop()
        if not seq or callable(seq[-1]):
            seq.append(_core.Evaluate(expr_ops.const(0, "int32")))
        body = [seq[-1]]
        for item in reversed(seq[:-1]):
            if callable(item):
                body = [item(_seq(body))]
            else:
                body.insert(0, item)
        return _seq(body)

    def emit(self, stmt):
        """Append a statement, a call (as an Evaluate) or a binder ``fn(body) -> Stmt``."""
        if isinstance(stmt, _core.PrimExpr):
            stmt = _core.Evaluate(stmt)
        if not isinstance(stmt, _core.Stmt) and not callable(stmt):
            raise TesseraTypeError(f"emit takes a Stmt, a call or a binder, got {stmt!r}")
        self._seq_stack[-1].append(stmt)

    def scope_attr(self, node, attr_key, value):
        """An AttrStmt over the rest of the scope (``thread_extent`` values are at least 1)."""
        if isinstance(node, str):
            node = _core.StringImm(node)
        elif isinstance(node, BufferVar):
            node = node.asobject()  # a pointer from ib.pointer / ib.allocate: its buffer
        value = _core.StringImm(value) if isinstance(value, str) else _expr(value)
        if attr_key == "thread_extent":
            value = expr_ops.maximum(expr_ops.const(1, value.dtype), value)
        self.emit(lambda body: _core.AttrStmt(node, attr_key, value, body))

    def for_range(self, begin, end, name="i", dtype=None, kind="serial", step=None):
        """A loop over [begin, end): ``with ib.for_range(0, rows, name="r") as r:``."""
        if name == "i":
            name = chr(ord("i") + self.nidx) if self.nidx < 3 else f"i_{self.nidx - 3}"
            self.nidx += 1
        if kind not in _KINDS:
            raise TesseraValueError(f"unknown loop kind '{kind}'; one of {', '.join(_KINDS)}")
        if step is not None and not (isinstance(step, int) and step == 1):
            raise TesseraValueError("ir_builder.for_range supports only step=1")
        if dtype is None:
            dtypes = [b.dtype if isinstance(b, _core.PrimExpr) else "int32" for b in (begin, end)]
            for d in dtypes:
                if not str(d).startswith("int"):
                    raise TesseraTypeError(f"the loop bounds must be integers, got {d}")
            dtype = "int64" if "int64" in dtypes else "int32"
        loop_var = _core.Var(name, dtype)
        begin_e, end_e = _expr(begin, dtype), _expr(end, dtype)
        extent = end_e if (isinstance(begin, int) and begin == 0) else expr_ops.sub(end_e, begin_e)
        self._seq_stack.append([])

        def leave():
            self.emit(_core.For(loop_var, begin_e, extent, _KINDS[kind], self._pop_seq()))

        return WithScope(loop_var, leave)

    def while_loop(self, condition):
        """``with ib.while_loop(cond):``."""
        self._seq_stack.append([])
        return WithScope(None, lambda: self.emit(_core.While(_expr(condition), self._pop_seq())))

    def if_scope(self, cond):
        """``with ib.if_scope(cond):``."""
        self._seq_stack.append([])
        return WithScope(None, lambda: self.emit(_core.IfThenElse(_expr(cond), self._pop_seq(), None)))

    def else_scope(self):
        """``with ib.else_scope():`` right after an if_scope."""
        seq = self._seq_stack[-1]
        prev = seq[-1] if seq else None
        if not isinstance(prev, _core.IfThenElse) or prev.else_case is not None:
            raise TesseraValueError("else_scope must come right after an if_scope")
        seq.pop()
        self._seq_stack.append([])

        def leave():
            self.emit(_core.IfThenElse(prev.condition, prev.then_case, self._pop_seq()))

        return WithScope(None, leave)

    def new_scope(self):
        """``with ib.new_scope():``: bounds the binders (allocations, attributes) inside it."""
        self._seq_stack.append([])
        return WithScope(None, lambda: self.emit(self._pop_seq()))

    def let(self, var_name, value):
        """A variable bound to ``value`` for the rest of the scope."""
        value = _expr(value)
        var = _core.Var(var_name, value.dtype)
        self.emit(lambda body: _core.LetStmt(var, value, body))
        return var

    def allocate(self, dtype, shape, name="buf", axis_separators=None, scope=""):
        """A buffer allocated for the rest of the scope."""
        if axis_separators:
            raise TesseraValueError("ir_builder.allocate: axis_separators are not supported")
        if not isinstance(shape, (list, tuple)):
            shape = [shape]
        shape = [_expr(s, "int32") if isinstance(s, int) else _expr(s) for s in shape]
        data = _core.Var.pointer(name, dtype, scope or "global")
        buffer = _core.Buffer(data, dtype, shape, [], None, name)
        self.emit(lambda body: _core.Allocate(data, dtype, shape, expr_ops.const(1, "bool"), body))
        return BufferVar(self, buffer, dtype)

    def pointer(self, content_type, name="ptr", scope=""):
        """A pointer variable to ``content_type`` memory, indexed as a flat buffer."""
        data = _core.Var.pointer(name, content_type, scope or "global")
        buffer = _core.Buffer(data, content_type, [expr_ops.const(1, "int32")], [], None, name)
        return BufferVar(self, buffer, content_type)

    def buffer_ptr(self, buf):
        """Index an existing Buffer through the builder (``B = ib.buffer_ptr(Bbuf); B[i] = x``)."""
        if not isinstance(buf, _core.Buffer):
            raise TesseraTypeError(f"buffer_ptr takes a Buffer, got {buf!r}")
        return BufferVar(self, buf, buf.dtype)

    def likely(self, expr):
        """``tir.likely(expr)``."""
        expr = _expr(expr)
        return _core.Call(expr.dtype, _core.Op.get("tir.likely"), [expr])

    def get(self):
        """The built statement."""
        stmt = self._pop_seq()
        if self._seq_stack:
            raise TesseraValueError("cannot call get() inside a construction scope")
        return stmt


def _seq(stmts):
    return stmts[0] if len(stmts) == 1 else _core.SeqStmt(stmts)


def create():
    """A new IRBuilder."""
    return IRBuilder()
