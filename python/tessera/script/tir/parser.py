"""The TVMScript TIR dialect: walks a ``@T.prim_func`` body and builds IR with the C++ IRBuilder.

Statements are handled here; ``T.*`` calls are ordinary Python functions (``ops``, ``frames``)
that act on the parser found through ``_state``. Everything that is not a script variable or a
``T.*`` call is evaluated as Python, so closures, module constants and helper functions work.
"""

import ast
import builtins
import re

from ... import _core
from ...error import TesseraValueError
from ...tir import expr_ops
from ...tir.expr_ops import BufferSlice, convert
from ..parser.core import Parser
from . import _state
from .frames import Frame, LoopSpec, to_attrs
from .expr_parser import ExprParsing, MacroReturn, is_ir
from .ops import DType, MetaVar


class LoopVar:
    """Bookkeeping of an open loop: its variable and range (for ``T.axis.remap``)."""

    def __init__(self, var, start, extent):
        self.var = var
        self.start = start
        self.extent = extent


class TIRParser(ExprParsing, Parser):
    """Parses one function of the T dialect into a PrimFunc."""

    def __init__(self, source, env, name, callees=None):
        super().__init__(source, env)
        self.name = name
        self.builder = _core.IRBuilder()
        self.callees = callees or {}
        self.ret_dtype = None
        self.params = {}  # id(var) -> var
        self.matched = set()
        self.loops = {}  # id(var) -> LoopVar
        self.block_iters = []  # names of the iterators of each open block
        self.block_names = {}
        self.macro_depth = 0
        self._names = None
        self._name_index = 0
        self._declared = set()
        self._node = None

    # ---- services for the builtins ----
    def span(self, node):
        """The Span of an AST node."""
        return self.source.span(node)

    def current_span(self):
        """The span of the statement being parsed."""
        return self.span(self._node) if self._node is not None else None

    def take_name(self, default):
        """The next name of the assignment target being bound, else ``default``."""
        if self._names is None or self._name_index >= len(self._names):
            return default
        name = self._names[self._name_index]
        self._name_index += 1
        return name

    def mark_declared(self, value):
        """Records that ``value`` was created by a declaration (``M = T.int32()``)."""
        self._declared.add(id(value))

    def is_param(self, var):
        """Whether ``var`` is a parameter of the function being parsed."""
        return id(var) in self.params

    def param_matched(self, var):
        """Whether a buffer is already bound to the parameter ``var``."""
        return id(var) in self.matched

    def set_param_matched(self, var):
        """Marks ``var`` as bound to a buffer."""
        self.matched.add(id(var))

    def loop_range(self, value):
        """(start, extent) of the open loop whose variable is ``value``, else None."""
        loop = self.loops.get(id(value))
        if loop is None or not loop.var.same_as(value):
            return None
        return loop.start, loop.extent

    def begin_block(self, name, no_realize, node):
        """Opens a block, suffixing the name when a macro repeats it."""
        if name in self.block_names and self.macro_depth > 0:
            k = self.block_names[name]
            while f"{name}_{k}" in self.block_names:
                k += 1
            self.block_names[name] = k + 1
            name = f"{name}_{k}"
        self.block_names.setdefault(name, 1)
        self.builder.begin_block(name, bool(no_realize), self.span(node))
        self.block_iters.append((name, set()))

    def end_block(self):
        """Closes the innermost block."""
        self.block_iters.pop()
        self.builder.end_block()

    def define_block_iter(self, name, dom, value, iter_type):
        """Defines a block iterator named ``name`` bound to ``value``; returns its variable."""
        if not self.block_iters or not self.builder.in_block:
            raise TesseraValueError("block iterators (T.axis.*) must be defined directly inside a T.block")
        block_name, names = self.block_iters[-1]
        if name in names:
            raise TesseraValueError(f"iterator '{name}' is defined twice in block \"{block_name}\"")
        names.add(name)
        var = _core.Var(name, value.dtype, self.current_span())
        self.builder.add_block_iter(_core.IterVar(dom, var, iter_type, "", self.current_span()), value)
        self.mark_declared(var)
        return var

    # ---- the function ----
    def parse_function(self, private=False):
        """Parses the function; returns the PrimFunc."""
        fdef = self.source.func_def
        if not isinstance(fdef, ast.FunctionDef):
            raise self.error(fdef, "@T.prim_func decorates a function")
        with _state.active(self):
            return self._parse_function(fdef, private)

    def _parse_function(self, fdef, private):
        b = self.builder
        self.private = private
        span = self.span(fdef)
        b.begin_function(self.name, span)
        args = fdef.args
        if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs:
            raise self.error(fdef, "a prim_func takes plain positional parameters only")
        for arg in args.args:
            self._param(arg)
        is_none = isinstance(fdef.returns, ast.Constant) and fdef.returns.value is None
        if fdef.returns is not None and not is_none:  # `-> None` is no return value
            ret = self._annotation(fdef.returns, None)
            if not isinstance(ret, DType):
                raise self.error(fdef.returns, f"the return annotation must be a type such as T.int32, got {ret!r}")
            if ret.name != "void":
                self.ret_dtype = ret.name
                b.set_return_type(ret.name)
        self.visit_body(fdef.body)
        with self.at(fdef):
            func = b.end_function()
        if private:
            attrs = {k: v for k, v in func.attrs.items() if k != "global_symbol"}
            func = _core.PrimFunc(func.params, func.body, func.ret_type, func.buffer_map, attrs, func.span)
        return func

    def _annotation(self, node, name):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            node = ast.parse(node.value, mode="eval").body
        saved = (self._names, self._name_index)
        self._names, self._name_index = ([name] if name else None), 0
        try:
            return self.expr(node)
        finally:
            self._names, self._name_index = saved

    def _param(self, arg):
        name = arg.arg
        if arg.annotation is None:
            raise self.error(arg, f"parameter '{name}' needs a type annotation (T.Buffer(...), T.handle, T.int32, ...)")
        ann = self._annotation(arg.annotation, name)
        span = self.span(arg)
        b = self.builder
        if isinstance(ann, _core.Buffer):
            var = _core.Var(name, "handle", span)
            b.add_param(var)
            b.bind_param_buffer(var, ann)
            self.matched.add(id(var))
            self.vars.define(name, ann)
        elif isinstance(ann, _core.Var):  # T.handle("float32", "global"): a typed pointer
            var = ann
            b.add_param(var)
            self.vars.define(name, var)
        elif isinstance(ann, DType):
            if ann.name == "void":
                raise self.error(arg, f"parameter '{name}' cannot be void")
            var = _core.Var(name, ann.name, span)
            b.add_param(var)
            self.vars.define(name, var)
        else:
            raise self.error(arg.annotation, f"unsupported annotation of parameter '{name}': {ann!r}")
        self.params[id(var)] = var

    # ---- statements ----
    def visit(self, node):
        saved = self._node
        if isinstance(node, ast.stmt):
            self._node = node
        try:
            return super().visit(node)
        finally:
            self._node = saved

    def visit_Expr(self, node):

        """An expression statement: a call evaluated for its effect (docstrings are skipped)."""
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return  # a docstring
        value = self.expr(node.value)
        if isinstance(value, (_core.PrimExpr, BufferSlice)):
            with self.at(node):
                self.builder.emit(_core.Evaluate(convert(value), self.span(node)))
        elif isinstance(value, Frame):
            if type(value).assign is Frame.assign:
                raise self.error(node, "this T.* statement is used with 'with' (or assigned to a name)")
            # As in TVM, a scoped statement written alone (`T.launch_thread(tx, 128)`,
            # `T.attr(0, "device_id", 0)`) binds over the rest of the enclosing body.
            with self.at(node):
                value.assign(self, node, None)

    def visit_Pass(self, node):

        """``pass``: nothing."""
        pass

    def visit_FunctionDef(self, node):

        """Nested functions are not part of the language."""
        raise self.error(node, "functions cannot be defined inside a prim_func; define them outside (or use @T.macro)")

    def visit_Assign(self, node):

        """``x = value``, ``A[i] = value`` or a tuple unpacking."""
        if len(node.targets) != 1:
            raise self.error(node, "chained assignment (a = b = c) is not supported")
        target = node.targets[0]
        value = self.rhs(node.value, target)
        self.assign(target, value, node)

    def rhs(self, value_node, target):
        """Evaluates an assignment's value with the target names available to declarations."""
        names = self._target_names(target)
        saved = (self._names, self._name_index, self._declared)
        self._names, self._name_index, self._declared = names, 0, set()
        try:
            value = self.expr(value_node)
            declared = self._declared
        finally:
            self._names, self._name_index, self._declared = saved
        self._fresh = declared
        return value

    @staticmethod
    def _target_names(target):
        if isinstance(target, ast.Name):
            return [target.id]
        if isinstance(target, (ast.Tuple, ast.List)):
            return [e.id if isinstance(e, ast.Name) else "v" for e in target.elts]
        return None

    def assign(self, target, value, node):
        if isinstance(target, ast.Subscript):
            return self.store(target, value, node)
        if isinstance(target, ast.Name):
            return self.bind(target, value, node)
        if isinstance(target, (ast.Tuple, ast.List)):
            if isinstance(value, MetaVar) and isinstance(value.value, (tuple, list)):
                # `a, b = T.meta_var((x, y))`: each name is bound to its element as a meta variable.
                value = [MetaVar(v) for v in value.value]
            if not isinstance(value, (tuple, list)):
                if len(target.elts) == 1:
                    value = [value]
                else:
                    try:
                        value = list(value)
                    except TypeError:
                        raise self.error(node, f"cannot unpack {value!r} into {len(target.elts)} names") from None
            if len(value) != len(target.elts):
                raise self.error(node, f"cannot unpack {len(value)} values into {len(target.elts)} names")
            for t, v in zip(target.elts, value):
                self.assign(t, v, node)
            return
        raise self.error(target, "unsupported assignment target")

    def bind(self, target, value, node):

        """Binds a name: a declaration as itself, an expression through a LetStmt, a Python value as is."""
        name = target.id
        fresh = isinstance(value, _core.PrimExpr) and id(value) in getattr(self, "_fresh", ())
        if not (fresh and self.builder.in_block):
            # As TVM: a block's own declaration (`i = T.axis.spatial(16, i)`) may shadow a loop
            # variable of the same name inside the block.
            self._check_rebind(target)
        previous = self.vars.frames[-1].get(name)
        if isinstance(previous, _core.Buffer) and isinstance(value, _core.Buffer) and previous is not value:
            # As TVM: a buffer name is defined once per scope (a second T.alloc_buffer/decl_buffer
            # of the same name would hide the first one's accesses).
            raise self.error(target, f"buffer '{name}' is already defined in this scope")
        if isinstance(value, MetaVar):
            self.vars.define(name, value.value)
            return
        if isinstance(value, Frame):
            with self.at(node):
                self.vars.define(name, value.assign(self, node, name))
            return
        if isinstance(value, _core.PrimExpr) and id(value) in getattr(self, "_fresh", ()):
            self.vars.define(name, value)
            return
        if isinstance(value, _core.Var) and not self._var_defined(value):
            # As TVM: a variable made outside the program (`off = te.var("off")`) that no name
            # holds yet is bound to the name as itself, not through a LetStmt.
            self.vars.define(name, value)
            return
        if type(value) in (bool, int, float):
            # As TVM: a Python number bound to a name is a LetStmt variable (T.meta_var keeps
            # it a Python value).
            with self.at(node):
                value = convert(value)
        if isinstance(value, (_core.PrimExpr, BufferSlice)):
            value = convert(value)
            span = self.span(target)
            if value.dtype == "handle" and isinstance(value, _core.Var) and value.pointer_element is not None:
                var = _core.Var.pointer(name, value.pointer_element, value.scope, span)
            else:
                var = _core.Var(name, value.dtype, span)
            with self.at(node):
                self.builder.emit_let(var, value, span)
            self.vars.define(name, var)
            return
        self.vars.define(name, value)

    def _var_defined(self, var):
        return any(isinstance(v, _core.Var) and v.same_as(var)
                   for frame in self.vars.frames for v in frame.values())

    def _check_rebind(self, target):
        found, current = self.vars.lookup(target.id)
        if not found or not isinstance(current, _core.Var):
            return
        if id(current) in self.loops:
            raise self.error(target, f"'{target.id}' is a loop variable and cannot be redefined inside its loop")
        if self.block_iters and any(target.id in names for _, names in self.block_iters):
            raise self.error(target, f"'{target.id}' is a block iterator and cannot be redefined in its block")

    def visit_AnnAssign(self, node):

        """``x: T.int32 = value``: a LetStmt of the annotated type."""
        if node.value is None:
            raise self.error(node, "a declaration needs a value: x: T.int32 = ...")
        if not isinstance(node.target, ast.Name):
            raise self.error(node.target, "an annotated assignment binds a single name")
        ann = self._annotation(node.annotation, None)
        value = self.rhs(node.value, node.target)
        name = node.target.id
        span = self.span(node.target)
        self._check_rebind(node.target)
        if isinstance(ann, _core.Var) and ann.pointer_element is not None:
            var = _core.Var.pointer(name, ann.pointer_element, ann.scope, span)
            value = convert(value)
        elif isinstance(ann, DType):
            if isinstance(value, str) and ann.name == "handle":
                value = _core.StringImm(value)  # `s: T.handle = "text"`: a string constant
            value = convert(value, ann.name, self.span(node.value))
            if value.dtype != ann.name:
                raise self.error(node, f'type mismatch: "{name}: {ann.name}" bound to a {value.dtype} value')
            var = _core.Var(name, ann.name, span)
        else:
            raise self.error(node.annotation, f"unsupported annotation {ann!r}")
        with self.at(node):
            self.builder.emit_let(var, value, span)
        self.vars.define(name, var)

    def visit_AugAssign(self, node):

        """``A[i] += value``: a load, the operator and a store."""
        if not isinstance(node.target, ast.Subscript):
            raise self.error(node.target, "only buffer elements can be updated in place (A[i] += x)")
        current = self.expr(node.target)
        value = self.binop(node, node.op, current, self.expr(node.value))
        self.store(node.target, value, node)

    def store(self, target, value, node):

        """``A[i, j] = value`` as a BufferStore (a slice index stores a vector)."""
        buf = self.expr(target.value)
        if not isinstance(buf, _core.Buffer):
            raise self.error(target.value, f"cannot assign to an element of {self.describe(buf)}")
        key = self.subscript_key(target.slice)
        with self.at(target):
            access = expr_ops.buffer_access(buf, key, self.span(target))
            indices = access.indices_as_exprs() if isinstance(access, BufferSlice) else list(access.indices)
        lanes = 1
        for index in indices:
            lanes *= expr_ops.lanes_of(index.dtype)
        dtype = buf.dtype if lanes == 1 else str(_core.DataType(buf.dtype).with_lanes(lanes))
        vspan = self.span(node.value) if hasattr(node, "value") and node.value is not None else self.span(node)
        with self.at(node):
            value = convert(value, buf.dtype, vspan)
            if lanes != 1 and expr_ops.lanes_of(value.dtype) == 1:  # lanes < 0: vscale * -lanes
                value = _core.Broadcast(value, lanes, vspan)
            if value.dtype != dtype:
                # As TVM's parser: a value of another type with the same lanes is cast to the
                # buffer's type (int -> float, float -> int, ...); other lanes are an error.
                if expr_ops.lanes_of(value.dtype) != expr_ops.lanes_of(dtype):
                    raise self.error(node, f'cannot store a {value.dtype} value into buffer '
                                           f'{buf.name} of {dtype}: the lanes differ')
                value = expr_ops.cast(value, dtype, vspan)
            self.builder.emit(_core.BufferStore(buf, value, indices, None, self.span(node)))

    def visit_For(self, node):

        """``for i in range(...)``/``T.serial``/``T.grid``/...: loops; a Python iterable unrolls."""
        if node.orelse:
            raise self.error(node, "for ... else is not supported")
        spec = self.loop_spec(node.iter)
        if not isinstance(spec, LoopSpec):
            return self.unrolled_for(node, spec)
        groups = self._loop_targets(node.target, len(spec.ranges))
        targets = [t for _, names in groups for t in names]
        opened = []
        with self.vars.scope():
            for target, (start, stop) in zip(targets, spec.ranges):
                with self.at(node.iter):
                    dtype = next((v.dtype for v in (start, stop) if isinstance(v, _core.PrimExpr)), "int32")
                    start_e = convert(start, dtype)
                    extent = convert(expr_ops.extent_between(start_e, stop), dtype)
                    var = _core.Var(target.id, dtype, self.span(target))
                    thread = None
                    if spec.thread is not None:
                        thread = _core.IterVar(_core.Range.from_min_extent(start_e, extent), _core.Var(spec.thread, dtype),
                                               _core.IterVarType.ThreadIndex, spec.thread)
                    step = None if spec.step is None else convert(spec.step, dtype)
                    self.builder.begin_for(var, start_e, extent, spec.kind, thread,
                                           to_attrs(spec.annotations), self.span(node), step)
                self.loops[id(var)] = LoopVar(var, start_e, extent)
                opened.append(var)
            at = 0
            for name, names in groups:
                if name is None:
                    self.vars.define(names[0].id, opened[at])
                else:  # `for ijk in T.grid(...)` / `for *ij, k in ...`: a tuple of loop variables
                    self.vars.define(name, tuple(opened[at:at + len(names)]))
                at += len(names)
            self.visit_body(node.body)
        for var in reversed(opened):
            del self.loops[id(var)]
            self.builder.end_for()

    def _loop_targets(self, target, count):
        """The loop variables of ``for <target> in <count loops>``: a list of (tuple name or None,
        name nodes), one name node per loop. ``for i, j in`` names each loop; a single name over
        several loops (``for ij in T.grid(4, 8)``) and a starred name (``for *ij, k in``) bind a
        tuple of the loop variables, numbered ``ij_0``, ``ij_1``, ..."""
        elts = target.elts if isinstance(target, (ast.Tuple, ast.List)) else None
        if elts is None:
            if not isinstance(target, ast.Name):
                raise self.error(target, "loop variables must be names")
            if count == 1:
                return [(None, [target])]
            return [(target.id, self._numbered(target, count))]
        starred = [e for e in elts if isinstance(e, ast.Starred)]  # Python allows one at most
        rest = count - (len(elts) - len(starred))
        if rest < 0 or (not starred and rest != 0):
            raise self.error(target, f"{count} loops but {len(elts) - len(starred)} loop variables")
        groups = []
        for e in elts:
            if isinstance(e, ast.Starred):
                if not isinstance(e.value, ast.Name):
                    raise self.error(e, "loop variables must be names")
                groups.append((e.value.id, self._numbered(e.value, rest)))
            elif isinstance(e, ast.Name):
                groups.append((None, [e]))
            else:
                raise self.error(e, "loop variables must be names")
        return groups

    @staticmethod
    def _numbered(name_node, count):
        nodes = []
        for k in range(count):
            n = ast.Name(id=f"{name_node.id}_{k}", ctx=ast.Store())
            ast.copy_location(n, name_node)
            nodes.append(n)
        return nodes

    def loop_spec(self, it):

        """What a ``for`` iterates over: a LoopSpec, or a Python iterable."""
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range":
            if self.lookup_name(it.func, "range") is builtins.range:
                # As TVM: `range` is T.serial, which also takes the loop's annotations.
                extra = [kw for kw in it.keywords if kw.arg != "annotations"]
                if extra:
                    raise self.error(extra[0].value, f"range() takes no keyword {extra[0].arg!r} "
                                     "(only annotations=)")
                if not 1 <= len(it.args) <= 3:
                    raise self.error(it, "range() takes 1 to 3 positional arguments")
                annotations = None
                for kw in it.keywords:
                    annotations = self.expr(kw.value)
                    if annotations is not None and not isinstance(annotations, dict):
                        raise self.error(kw.value, "range(): annotations must be a dict of str to values, "
                                         f"got {type(annotations).__name__}")
                args = [self.expr(a) for a in it.args]
                step = None
                if len(args) == 3:
                    # As TVM: range's step is a positive literal integer.
                    step = args[2]
                    if isinstance(step, _core.IntImm):
                        step = step.value
                    if not isinstance(step, int) or isinstance(step, bool):
                        raise self.error(it.args[2], f"range() needs a literal integer step, got {step}")
                    if step <= 0:
                        raise self.error(it.args[2], f"range() needs a positive step, got {step}")
                start, stop = (0, args[0]) if len(args) == 1 else (args[0], args[1])
                return LoopSpec(_core.ForKind.SERIAL, [(start, stop)], annotations=annotations, step=step)
        return self.expr(it)

    def unrolled_for(self, node, values):
        """``for x in <Python iterable>``: the body is parsed once per element."""
        try:
            items = list(values)
        except TypeError:
            raise self.error(node.iter, f"cannot loop over {values!r}") from None
        for item in items:
            with self.vars.scope():
                self.assign(node.target, item, node)
                self.visit_body(node.body)

    def visit_While(self, node):

        """``while cond:`` on a bool expression."""
        if node.orelse:
            raise self.error(node, "while ... else is not supported")
        cond = self.condition(node.test, integer_ok=True)
        self.builder.begin_while(cond, self.span(node))
        with self.vars.scope():
            self.visit_body(node.body)
        self.builder.end_while()

    def visit_Break(self, node):

        """``break`` as the ``tir.break`` intrinsic."""
        self.builder.emit(_core.Evaluate(_core.Call("int32", _core.Op.get("tir.break"), [], self.span(node)), self.span(node)))

    def visit_Continue(self, node):

        """``continue`` as the ``tir.continue`` intrinsic."""
        self.builder.emit(_core.Evaluate(_core.Call("int32", _core.Op.get("tir.continue"), [], self.span(node)), self.span(node)))

    def visit_If(self, node):

        """``if``: decided while parsing on a Python value, an IfThenElse on an expression."""
        cond = self.expr(node.test)
        if not is_ir(cond):
            with self.vars.scope():
                self.visit_body(node.body if cond else node.orelse)
            return
        cond = self.condition(node.test, cond, integer_ok=True)
        b = self.builder
        b.begin_if(cond, self.span(node))
        b.begin_then()
        with self.vars.scope():
            self.visit_body(node.body)
        b.end_then()
        if node.orelse:
            b.begin_else()
            with self.vars.scope():
                self.visit_body(node.orelse)
            b.end_else()
        b.end_if()

    def condition(self, node, value=None, integer_ok=False):

        """A bool expression for ``if``/``while``/``assert``, or a diagnostic. ``integer_ok``
        (``if``/``while``): a scalar integer is accepted too (true when nonzero), as TVM's
        IfThenElse and While take it; an assert needs a bool, as TVM's AssertStmt does."""
        value = self.expr(node) if value is None else value
        if isinstance(value, bool):
            value = expr_ops.const(value)
        if not is_ir(value):
            raise self.error(node, f"a condition must be a bool expression, got {self.describe(value)}")
        value = convert(value)
        if integer_ok and re.fullmatch(r"u?int\d+", str(value.dtype)):
            return value
        if value.dtype != "bool":
            what = "a bool or integer" if integer_ok else "a bool"
            raise self.error(node, f"a condition must be {what} expression, got a {value.dtype} expression")
        return value

    def visit_With(self, node):

        """``with <frame>:``: enter each T.* frame, parse the body, exit in reverse."""
        self._with_items(node, list(node.items))

    def _with_items(self, node, items):
        if not items:
            with self.vars.scope():
                self.visit_body(node.body)
            return
        item = items[0]
        frame = self.expr(item.context_expr)
        if not isinstance(frame, Frame):
            raise self.error(item.context_expr, f"'with' needs a T.* scope (T.block, T.init, ...), got {self.describe(frame)}")
        var = item.optional_vars
        if var is not None and not isinstance(var, ast.Name):
            raise self.error(var, "'as' binds a single name")
        with self.at(item.context_expr):
            value = frame.enter(self, item.context_expr, var.id if var is not None else None)
        with self.vars.scope():
            if var is not None:
                self.vars.define(var.id, value)
            self._with_items(node, items[1:])
        with self.at(node):
            frame.exit(self)

    def visit_Assert(self, node):

        """``assert cond, msg``: an AssertStmt over the rest of the body."""
        cond = self.condition(node.test)
        msg = self.expr(node.msg) if node.msg is not None else "assertion failed"
        msg = _core.StringImm(msg) if isinstance(msg, str) else convert(msg)
        span = self.span(node)
        self.builder.emit_binder(lambda body: _core.AssertStmt(cond, msg, body, span))

    def visit_Return(self, node):

        """``return x``: the ``tir.ret`` of the function's value (a macro's result in a macro)."""
        value = None if node.value is None else self.expr(node.value)
        if self.macro_depth > 0:
            raise MacroReturn(value)
        if self.ret_dtype is None:
            plain = node.value is None or (isinstance(node.value, ast.Constant) and node.value.value is None)
            if plain:
                return
            if not is_ir(value) and not isinstance(value, (bool, int, float)):
                # `return T.evaluate(0)` too: without a return annotation only an expression returns.
                raise self.error(node, "returning a value needs a return annotation (-> T.int32) "
                                       f"and an expression, got {self.describe(value)}")
            # As TVM: without a return annotation, `return x` is `T.evaluate(T.ret(x))` of x's type.
            with self.at(node):
                value = convert(value)
            call = _core.Call(value.dtype, _core.Op.get("tir.ret"), [value], self.span(node))
            self.builder.emit(_core.Evaluate(call, self.span(node)))
            return
        if value is None:
            raise self.error(node, f"this function must return a {self.ret_dtype}")
        with self.at(node):
            value = convert(value, self.ret_dtype)
        if value.dtype != self.ret_dtype:
            raise self.error(node, f'return type mismatch: "{self.ret_dtype}" vs. "{value.dtype}"')
        call = _core.Call(self.ret_dtype, _core.Op.get("tir.ret"), [value], self.span(node))
        self.builder.emit(_core.Evaluate(call, self.span(node)))


class ModuleNamespace:
    """The ``cls`` seen by the functions of an ``@I.ir_module`` class."""

    def __init__(self, callees):
        self._callees = callees

    def __getattr__(self, name):
        try:
            return self._callees[name]
        except KeyError:
            raise AttributeError(f"the module has no function '{name}'") from None
