"""The imperative IR builder: TVM's ``tvm.script.ir_builder`` API over tessera's C++ IRBuilder.

Instead of parsing a decorated function, Python code runs the ``T.*`` statements itself inside
``with IRBuilder() as ib:``; each ``with T.block(...)``/``with T.serial(...) as i``/
``with T.prim_func():`` opens a frame of the C++ builder and closing it emits the statement.

>>> from tessera.script.ir_builder import IRBuilder, tir as T
>>> with IRBuilder() as ib:
...     with T.serial(8) as i:
...         T.evaluate(i)
>>> ib.get()   # the For loop

The outermost frame decides what ``ib.get()`` returns: a PrimFunc (``T.prim_func()``), an
IRModule (``I.ir_module()``), or the statement(s) written at the top (a SeqStmt for several).
"""

import importlib

from ... import _core
from ...error import TesseraValueError
from ...tir import expr_ops
from ..tir import _state

_builders = []


class _LoopVar:
    def __init__(self, var, start, extent):
        self.var, self.start, self.extent = var, start, extent


class IRBuilder:
    """Collects what the ``T.*``/``I.*`` calls made inside ``with IRBuilder() as ib:`` build."""

    def __init__(self):
        self._cpp = _core.IRBuilder()
        self._result = None
        self._done = False
        self._root_open = False
        self._frames = []  # frames entered through Python's `with`, innermost last
        self._loops = []  # per open loop spec: how many For frames it opened
        self._module = None  # {name: PrimFunc} while an I.ir_module() frame is open
        self._private = []
        self._reset_function()

    def _reset_function(self):
        self.params = {}
        self.matched = set()
        self.loops = {}
        self.block_iters = []

    # ---- scope ----
    def __enter__(self):
        _builders.append(self)
        _state._active.append(self)
        return self

    def __exit__(self, exc_type, exc, tb):
        _state._active.remove(self)
        _builders.remove(self)
        if exc_type is None:
            if self._frames:
                raise TesseraValueError(f"IRBuilder: {type(self._frames[-1]).__name__} is still open")
            if self._root_open:
                self._root_open = False
                self._result = self._cpp.end_root()
            self._done = True
        return False

    @staticmethod
    def current():
        """The innermost IRBuilder being used; ValueError outside any."""
        if not _builders:
            raise ValueError("no IRBuilder is active: use 'with IRBuilder() as ib:'")
        return _builders[-1]

    @staticmethod
    def is_in_scope():
        """Whether an IRBuilder is active."""
        return bool(_builders)

    def get(self):
        """What was built: the PrimFunc, IRModule or statement of the outermost frame."""
        if not self._done:
            raise ValueError("IRBuilder.get(): the builder is still open (call it after the 'with')")
        if self._result is None:
            raise ValueError("IRBuilder.get(): nothing was built")
        return self._result

    def name(self, s, v):
        """Names ``v`` (a Var, Buffer, IterVar or a list of them) ``s``; returns ``v``."""
        if isinstance(v, _core.IterVar):
            _core.set_name_hint(v.var, s)
        elif isinstance(v, (_core.Var, _core.Buffer)):
            _core.set_name_hint(v, s)
        elif isinstance(v, (list, tuple)):
            for k, item in enumerate(v):
                self.name(f"{s}_{k}", item)
        else:
            raise TypeError(f"IRBuilder.name names a Var or a Buffer, got {type(v).__name__}")
        return v

    def name_many(self, s, vs):
        """Names each of ``vs`` by the matching string of ``s``; returns ``vs``."""
        if len(s) != len(vs):
            raise ValueError(f"IRBuilder.name_many: {len(s)} names for {len(vs)} values")
        return [self.name(n, v) for n, v in zip(s, vs)]

    # ---- what the T.* builtins use (the same services a script parser offers) ----
    @property
    def builder(self):
        """The C++ builder; statements written outside any function go to a root frame."""
        if self._cpp.depth == 0:
            if self._done or self._result is not None:
                raise TesseraValueError("IRBuilder: the outermost frame is closed; nothing more can be added")
            if self._module is not None:
                raise TesseraValueError("statements inside I.ir_module() belong in a T.prim_func()")
            self._cpp.begin_root()
            self._root_open = True
        return self._cpp

    def span(self, node):
        return _core.Span()

    def current_span(self):
        return None

    def take_name(self, default):
        return default

    def mark_declared(self, value):
        pass

    def is_param(self, var):
        return id(var) in self.params

    def param_matched(self, var):
        return id(var) in self.matched

    def set_param_matched(self, var):
        self.matched.add(id(var))

    def loop_range(self, value):
        loop = self.loops.get(id(value))
        if loop is None or not loop.var.same_as(value):
            return None
        return loop.start, loop.extent

    def begin_block(self, name, no_realize, node):
        self.builder.begin_block(name, bool(no_realize), _core.Span())
        self.block_iters.append((name, set()))

    def end_block(self):
        self.block_iters.pop()
        self._cpp.end_block()

    def define_block_iter(self, name, dom, value, iter_type):
        if not self.block_iters or not self._cpp.in_block:
            raise TesseraValueError("block iterators (T.axis.*) must be defined directly inside a T.block")
        var = _core.Var(name, value.dtype)
        self._cpp.add_block_iter(_core.IterVar(dom, var, iter_type, ""), value)
        return var

    # ---- frames entered by Python's `with` ----
    def enter_frame(self, frame):
        value = frame.enter(self, None, None)
        self._frames.append(frame)
        return value

    def exit_frame(self, frame):
        if not self._frames or self._frames[-1] is not frame:
            raise TesseraValueError(f"IRBuilder: {type(frame).__name__} closed out of order")
        self._frames.pop()
        frame.exit(self)

    def enter_loop(self, spec):
        from ..tir.frames import to_attrs

        out = []
        for start, stop in spec.ranges:
            dtype = next((v.dtype for v in (start, stop) if isinstance(v, _core.PrimExpr)), "int32")
            start_e = expr_ops.convert(start, dtype)
            extent = expr_ops.convert(expr_ops.extent_between(start_e, stop), dtype)
            var = _core.Var("v", dtype)
            thread = None
            if spec.thread is not None:
                # TVM's builder leaves the binding's domain unset (the loop carries it).
                thread = _core.IterVar(None, _core.Var("iter", dtype), _core.IterVarType.ThreadIndex, spec.thread)
            step = None if spec.step is None else expr_ops.convert(spec.step, dtype)
            self.builder.begin_for(var, start_e, extent, spec.kind, thread, to_attrs(spec.annotations), _core.Span(),
                                   step)
            self.loops[id(var)] = _LoopVar(var, start_e, extent)
            out.append(var)
        self._frames.append(spec)
        return out[0] if len(out) == 1 else out

    def exit_loop(self, spec):
        if not self._frames or self._frames[-1] is not spec:
            raise TesseraValueError("IRBuilder: a loop closed out of order")
        self._frames.pop()
        for _ in spec.ranges:
            self._cpp.end_for()

    # ---- functions and modules ----
    def begin_function(self, private):
        if self._cpp.depth != 0:
            raise TesseraValueError("T.prim_func() must be the outermost frame or directly inside I.ir_module()")
        if self._done or self._result is not None:
            raise TesseraValueError("IRBuilder: the outermost frame is closed; nothing more can be added")
        self._reset_function()
        self._private.append(private)
        self._cpp.begin_function("", _core.Span())

    def end_function(self):
        func = self._cpp.end_function()
        private = self._private.pop()
        name = func.attrs.get("global_symbol")
        name = name.value if isinstance(name, _core.StringImm) else name
        if private or not name:
            # No T.func_name: as in TVM, the function carries no global symbol.
            attrs = {k: v for k, v in func.attrs.items() if k != "global_symbol"}
            func = _core.PrimFunc(func.params, func.body, func.ret_type, func.buffer_map, attrs, func.span)
        self._reset_function()
        if self._module is not None:
            if not name:
                raise TesseraValueError("a T.prim_func() inside I.ir_module() needs T.func_name(\"...\")")
            if name in self._module:
                raise TesseraValueError(f"I.ir_module() defines the function {name} twice")
            self._module[name] = func
        else:
            self._result = func
        return func

    def begin_module(self):
        if self._cpp.depth != 0 or self._module is not None:
            raise TesseraValueError("I.ir_module() must be the outermost frame")
        if self._done or self._result is not None:
            raise TesseraValueError("IRBuilder: the outermost frame is closed; nothing more can be added")
        self._module = {}

    def end_module(self):
        from ...ir import IRModule

        functions, self._module = self._module, None
        self._result = IRModule(functions)
        return self._result


def __getattr__(name):
    if name in ("tir", "ir"):
        return importlib.import_module("." + name, __name__)
    raise AttributeError(f"module 'tessera.script.ir_builder' has no attribute '{name}'")


__all__ = ["IRBuilder", "tir", "ir"]
