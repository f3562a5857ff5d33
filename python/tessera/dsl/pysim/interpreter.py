"""The PySim interpreter: walks a DSL function's IR for one TEC.

Values: numpy scalars for scalars, 1-D numpy arrays for vectors (bool arrays for masks),
:class:`Pointer` for pointers. Memory: :class:`Region` byte arrays over the caller's arrays and
the kernel's allocations; every load and store checks its byte range.
"""

import threading

import numpy as np

from ... import _core
from . import ops
from .memory import Pointer, PySimError, PySimIndexError, PySimZeroDivisionError, Region, np_dtype, split_type  # noqa: F401 (re-exported)


class _Return(Exception):
    def __init__(self, value):
        self.value = value


class _Slots:
    """The storage of ``handle`` elements: the pointers stored there (None until stored)."""

    def __init__(self, count):
        self.items = [None] * count


class _Frame:
    """Variables of one function call (bindings shadow by identity of the Var node)."""

    def __init__(self):
        self.vars = {}
        self.buffers = {}


# Held while a TEC looks up or creates a launch's shared allocation, so that the TECs (threads)
# of one launch never create two buffers for one `S.alloc(..., scope="shared")`.
_SHARED_ALLOC_LOCK = threading.Lock()


class Interpreter:
    def __init__(self, funcs, entry, tec, barrier, shared):
        self.funcs = {}
        for gv, f in funcs.items():
            self.funcs[gv.name_hint if hasattr(gv, "name_hint") else str(gv)] = f
        self.entry = entry
        self.tec = tec
        self.barrier = barrier
        self.shared = shared  # shared allocations: one per launch
        self.keep = []  # IR wrappers kept alive so that their identities stay stable

    # ---- entry ----------------------------------------------------------------------------

    def run_entry(self, args):
        with np.errstate(all="ignore"):
            try:
                self.call(self.funcs[self.entry], list(args))
            except _Return:
                pass

    def call(self, func, args):
        frame = _Frame()
        params = list(func.params)
        self.keep.append(params)
        for v, a in zip(params, args):
            frame.vars[v] = a
        self.keep.append(func.buffer_map)
        saved, self.frame = getattr(self, "frame", None), frame
        try:
            self.stmt(func.body)
        except _Return as ret:
            return ret.value
        finally:
            self.frame = saved
        return None

    # ---- errors ---------------------------------------------------------------------------

    def error(self, node, message, cls=None):
        span = node.span
        try:
            text = _core.render_diagnostic(span, message)
        except Exception:  # noqa: BLE001  (no source attached)
            text = message
        return (cls or PySimError)(text, message, span.file, span.line, span.column)

    # ---- memory ---------------------------------------------------------------------------

    def pointer_of_var(self, var):
        ptr = self.frame.vars.get(var)
        if ptr is None:
            for k, v in self.frame.vars.items():
                if k.same_as(var):
                    self.frame.vars[var] = v
                    return v
            raise KeyError(var.name)
        return ptr

    def access(self, node, buffer, index, lanes_dtype, value=None, predicate=None):
        """Load (value None) or store ``buffer[index]``; ``index`` is an int or an int array."""
        ptr = self.pointer_of_var(buffer.data)
        return self.access_ptr(node, ptr, str(buffer.dtype), index, value, predicate, buffer.data.name)

    def access_ptr(self, node, ptr, dtype, index, value=None, predicate=None, name="pointer"):
        """Elements ``index`` (counted in ``dtype``) at ``ptr``: loaded, or ``value`` stored."""
        edt = np_dtype(dtype)
        elem, blanes = split_type(dtype)
        size = edt.itemsize * blanes
        if not isinstance(ptr, Pointer) or ptr.region is None:
            raise self.error(node, f"access through the null pointer {name}")
        if predicate is None and isinstance(index, (int, np.integer)):
            # One element in bounds (the common scalar access): no index arrays. An access out
            # of bounds takes the general path, which reports it.
            data = ptr.region.data
            o = ptr.offset + int(index) * size
            if 0 <= o and o + size <= data.size:
                if value is None:
                    return data[o:o + size].view(edt).copy()
                value = np.asarray(value).astype(edt, copy=False).reshape(-1)
                if value.size == 1 and blanes > 1:
                    value = np.full(blanes, value[0], dtype=edt)
                data[o:o + size] = value.view(np.uint8)
                return None
        idx = np.atleast_1d(np.asarray(index, dtype=np.int64))
        active = np.ones(idx.shape, bool) if predicate is None else np.atleast_1d(np.asarray(predicate, bool))
        offs = ptr.offset + idx * size
        data = ptr.region.data
        bad = active & ((offs < 0) | (offs + size > data.size))
        if bad.any():
            i = int(np.argmax(bad))
            what = "store to" if value is not None else "load from"
            raise self.error(node, f"out-of-bounds {what} {name}: element {int(offs[i] // size)} "
                                   f"of {data.size // size}, {ptr.region.name} has {data.size} bytes",
                             PySimIndexError)
        if value is None:
            out = np.zeros(idx.shape[0] * blanes, dtype=edt)
            if active.all() and idx.shape[0] > 1 and (np.diff(offs) == size).all():
                o = int(offs[0])
                return data[o:o + size * idx.shape[0]].view(edt).copy()
            # The bytes of every active element at once (rows of `size` bytes from each offset).
            on = np.nonzero(active)[0]
            rows = data[offs[on, None] + np.arange(size)].reshape(-1).view(edt)
            out.reshape(-1, blanes)[on] = rows.reshape(-1, blanes)
            return out
        value = np.asarray(value).astype(edt, copy=False).reshape(-1)
        if value.size == 1 and idx.shape[0] * blanes > 1:
            value = np.full(idx.shape[0] * blanes, value[0], dtype=edt)
        if active.all() and idx.shape[0] > 1 and (np.diff(offs) == size).all():
            o = int(offs[0])
            data[o:o + size * idx.shape[0]] = value.view(np.uint8)
            return None
        on = np.nonzero(active)[0]
        if np.unique(offs[on]).size == on.size:  # no element written twice: all at once
            data[(offs[on, None] + np.arange(size)).reshape(-1)] = (
                value.reshape(-1, blanes)[on].reshape(-1).view(np.uint8))
            return None
        for k in on:  # in order, so that the last store to an element wins
            o = int(offs[k])
            data[o:o + size] = value[k * blanes:(k + 1) * blanes].view(np.uint8)
        return None

    # ---- statements -----------------------------------------------------------------------

    def stmt(self, s):
        method = getattr(self, "stmt_" + type(s).__name__, None)
        if method is None:
            raise self.error(s, f"PySim does not support the statement {type(s).__name__}")
        method(s)

    def stmt_SeqStmt(self, s):
        for x in s.seq:
            self.stmt(x)

    def stmt_Evaluate(self, s):
        self.expr(s.value)

    def stmt_LetStmt(self, s):
        self.keep.append(s.var)
        self.frame.vars[s.var] = self.expr(s.value)
        self.stmt(s.body)

    def stmt_AttrStmt(self, s):
        self.stmt(s.body)

    def stmt_AssertStmt(self, s):
        if not self.expr(s.condition):
            raise self.error(s, str(s.message.value if hasattr(s.message, "value") else s.message))
        self.stmt(s.body)

    def stmt_DeclBuffer(self, s):
        self.keep.append(s.buffer)
        self.stmt(s.body)

    def stmt_Allocate(self, s):
        var = s.buffer_var
        self.keep.append(var)
        if str(s.dtype) == "handle":
            # Storage of pointer variables (re-pointed in a loop or a branch): the pointers.
            count = 1
            for e in s.extents:
                count *= int(self.expr(e))
            self.frame.vars[var] = _Slots(count)
            self.stmt(s.body)
            return
        dt = np_dtype(s.dtype)
        elem, lanes = split_type(s.dtype)
        count = 1
        for e in s.extents:
            count *= int(self.expr(e))
        nbytes = count * dt.itemsize * lanes
        ann = dict(s.annotations.items()) if hasattr(s.annotations, "items") else {}
        scope = var.scope
        if "tessera.const_data" in ann:
            items = ann["tessera.const_data"].items
            values = np.array([i.value for i in items], dtype=np.float64 if "float" in elem else np.int64)
            region = Region(values.astype(dt).view(np.uint8).copy(), var.name)
        elif scope == "shared":
            key = (var.name, s.span.line, s.span.column)
            with _SHARED_ALLOC_LOCK:  # one lock for all TECs: the first to arrive allocates
                region = self.shared.get(key)
                if region is None:
                    region = Region(np.zeros(nbytes, np.uint8), "<shared>")
                    self.shared[key] = region
        else:
            region = Region(np.zeros(nbytes, np.uint8), var.name)
        self.frame.vars[var] = Pointer(region, 0)
        self.stmt(s.body)

    def stmt_BufferStore(self, s):
        self.keep.append(s.buffer)
        value = self.expr(s.value)
        index = self._flat_index(s.buffer, s.indices)
        if str(s.buffer.dtype) == "handle":
            self.pointer_of_var(s.buffer.data).items[int(index)] = value
            return
        pred = None if s.predicate is None else self.expr(s.predicate)
        self.access(s, s.buffer, index, None, value=value, predicate=pred)

    def stmt_For(self, s):
        self.keep.append(s.loop_var)
        lo, n = int(self.expr(s.min)), int(self.expr(s.extent))
        dt = np_dtype(s.loop_var.dtype).type
        for i in range(lo, lo + n):
            self.frame.vars[s.loop_var] = dt(i)
            self.stmt(s.body)

    def stmt_While(self, s):
        while bool(self.expr(s.condition)):
            self.stmt(s.body)

    def stmt_IfThenElse(self, s):
        if bool(self.expr(s.condition)):
            self.stmt(s.then_case)
        elif s.else_case is not None:
            self.stmt(s.else_case)

    # ---- expressions ----------------------------------------------------------------------

    def expr(self, e):
        method = getattr(self, "expr_" + type(e).__name__, None)
        if method is None:
            if type(e).__name__ in ops.BINARY:
                return self._binary_chain(e)
            raise self.error(e, f"PySim does not support the expression {type(e).__name__}")
        return method(e)

    def _binary_chain(self, e):
        """A binary node and the binary nodes down its left operands, evaluated without
        recursion along that chain (a sum of thousands of terms), left operand first."""
        spine = []
        while type(e).__name__ in ops.BINARY and not hasattr(self, "expr_" + type(e).__name__):
            spine.append(e)
            e = e.a
        value = self.expr(e)
        for node in reversed(spine):
            value = ops.binary(type(node).__name__, value, self.expr(node.b), node.dtype,
                               lambda m, cls=None, node=node: self.error(node, m, cls))
        return value

    def expr_IntImm(self, e):
        return np_dtype(e.dtype).type(e.value) if e.dtype != "bool" else np.bool_(e.value)

    def expr_FloatImm(self, e):
        return np_dtype(e.dtype).type(e.value)

    def expr_StringImm(self, e):
        return e.value

    def expr_Var(self, e):
        try:
            return self.pointer_of_var(e)
        except KeyError:
            raise self.error(e, f"PySim: unbound variable {e.name}") from None

    expr_SizeVar = expr_Var

    def expr_Cast(self, e):
        return ops.cast(self.expr(e.value), e.value.dtype, e.dtype)

    def expr_Not(self, e):
        return np.logical_not(self.expr(e.a))

    # A scalar &&, || and select evaluate as the compiled C does: the right operand of && / ||
    # only on the left one's value, one operand of `c ? x : y` (an access in the other one does
    # not happen). Vector ones evaluate both, lane by lane.
    def expr_And(self, e):
        a = self.expr(e.a)
        if np.ndim(a) == 0 and not a:
            return np.logical_and(a, False)
        return np.logical_and(a, self.expr(e.b))

    def expr_Or(self, e):
        a = self.expr(e.a)
        if np.ndim(a) == 0 and a:
            return np.logical_or(a, True)
        return np.logical_or(a, self.expr(e.b))

    def expr_Select(self, e):
        c = self.expr(e.condition)
        if np.ndim(c) == 0:
            v = self.expr(e.true_value if c else e.false_value)
            return v if np.ndim(v) == 0 else np.asarray(v).astype(np_dtype(e.dtype))
        a, b = self.expr(e.true_value), self.expr(e.false_value)
        return np.where(c, a, b).astype(np_dtype(e.dtype))

    def expr_Ramp(self, e):
        base, stride = self.expr(e.base), self.expr(e.stride)
        return (np.int64(base) + np.arange(int(e.lanes), dtype=np.int64) * np.int64(stride)).astype(
            np_dtype(e.dtype))

    def expr_Broadcast(self, e):
        v = self.expr(e.value)
        return np.full(int(e.lanes), v, dtype=np_dtype(e.dtype))

    def expr_Shuffle(self, e):
        vecs = [np.atleast_1d(self.expr(v)) for v in e.vectors]
        allv = np.concatenate(vecs)
        idx = [int(self.expr(i)) for i in e.indices]
        out = allv[idx]
        return out[0] if len(idx) == 1 else out.astype(np_dtype(e.dtype))

    def expr_Let(self, e):
        self.keep.append(e.var)
        self.frame.vars[e.var] = self.expr(e.value)
        return self.expr(e.body)

    def _flat_index(self, buffer, indices):
        indices = [self.expr(i) for i in indices]
        if len(indices) == 1:
            return indices[0]
        shape = [int(self.expr(s)) for s in buffer.shape]
        flat = np.int64(0)
        for i, n in zip(indices, shape):
            flat = flat * n + np.asarray(i, np.int64)
        return flat

    def expr_BufferLoad(self, e):
        self.keep.append(e.buffer)
        index = self._flat_index(e.buffer, e.indices)
        if str(e.buffer.dtype) == "handle":
            return self.pointer_of_var(e.buffer.data).items[int(index)]
        pred = None if e.predicate is None else self.expr(e.predicate)
        out = self.access(e, e.buffer, index, e.dtype, predicate=pred)
        _, lanes = split_type(e.dtype)
        return out[0] if lanes == 1 and out.size == 1 else out

    def expr_Call(self, e):
        op = e.op
        if type(op).__name__ == "GlobalVar":
            callee = self.funcs[op.name_hint]
            args = [self.expr(a) for a in e.args]
            result = self.call(callee, args)
            return result
        name = e.op_name
        if name == "tir.ret":
            raise _Return(self.expr(e.args[0]))
        if name == "tir.address_of":
            load = e.args[0]
            ptr = self.pointer_of_var(load.buffer.data)
            edt = np_dtype(load.buffer.dtype)
            _, lanes = split_type(load.buffer.dtype)
            index = int(self._flat_index(load.buffer, load.indices))
            return ptr.moved(index * edt.itemsize * lanes)
        if name == "tir.if_then_else":
            return self.expr(e.args[1]) if self.expr(e.args[0]) else self.expr(e.args[2])
        handler = ops.CALLS.get(name)
        if handler is None:
            raise self.error(e, f"PySim does not implement {name}")
        args = [self.expr(a) for a in e.args]
        return handler(self, e, args)
