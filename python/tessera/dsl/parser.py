"""The DSL dialect: turns an ``@S.prim_func`` body into IR through the C++ IRBuilder.

Statements live here; expressions, operators and pointers in :mod:`.expressions`, the typing
rules in :mod:`.typing`, masks in :mod:`.masks` and the intrinsics in :mod:`.intrinsics`.
Variables follow C: a name first bound in a block is not visible after it, and a reassignment
must keep the variable's type. A name assigned more than once becomes mutable storage
(``tessera.local_var``); a name assigned once is a ``let``.
"""

import ast
import collections
import inspect
import itertools
import numbers

from .. import _core
from ..error import DiagnosticAssertionError, TesseraError
from ..script.parser.core import VarTable, function_env
from . import types as T
from . import typing as TY
from .expressions import ExpressionParser
from .types import DType, PtrType
from .values import UNBOUNDED, BufferView, LocalVar, Pointer, PointerSlot, PointerVar, is_expr

# The TECs of a core on every DSL target (DSL reference §7.2; tessera/dsl/tec.h runs as many).
TECS_PER_CORE = 4


def _static(value):
    """The value of a compile-time integer (a Python int or an IntImm), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, _core.IntImm):
        return value.value
    return None


def _root(value, calls):
    """The name an assigned value derives from (``a`` for ``a + 2``, ``a.as_ptr("i8")`` or
    ``a``); each call of a function is a root of its own (it may return any pointer)."""
    while True:
        if isinstance(value, ast.Name):
            return value.id
        if isinstance(value, ast.BinOp):
            value = value.left
        elif isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
            value = value.func.value
        elif isinstance(value, ast.Call):
            return f"<call {next(calls)}>"
        else:
            return None


_RETURN_NEEDS_ANNOTATION = "returning a value needs a return annotation (-> S.i32)"


def _first_value_return(func_def):
    """The first ``return <value>`` of a function, outside the functions it defines, or None."""
    todo = list(func_def.body)
    while todo:
        node = todo.pop(0)
        if isinstance(node, ast.Return) and node.value is not None:
            return node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            todo[:0] = [c for c in ast.iter_child_nodes(node) if isinstance(c, ast.stmt)]
    return None


def _assigned_names(body):
    """How often each name is assigned in a function body (loops count twice), the names
    whose lanes or elements are assigned (``v[i] = x``) and the names that may be re-pointed
    into another buffer in a loop or a branch: assigned there and derived from two or more
    other names (``p = a + 1`` ... ``if c: p = b + 2``)."""
    counts = collections.Counter()
    subscripted = set()
    roots = collections.defaultdict(set)
    nested = set()
    calls = itertools.count()

    def note_roots(s, depth):
        if isinstance(s, (ast.Assign, ast.AnnAssign)) and s.value is not None:
            for t in (s.targets if isinstance(s, ast.Assign) else [s.target]):
                if isinstance(t, ast.Name):
                    root = _root(s.value, calls)
                    if root != t.id:
                        roots[t.id].add(root)
                    if depth:
                        nested.add(t.id)

    def targets(t, weight):
        if isinstance(t, ast.Name):
            counts[t.id] += weight
        elif isinstance(t, (ast.Tuple, ast.List)):
            for e in t.elts:
                targets(e, weight)
        elif isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name):
            subscripted.add(t.value.id)

    def walk(stmts, weight, depth):
        for s in stmts:
            note_roots(s, depth)
            if isinstance(s, ast.Assign):
                for t in s.targets:
                    targets(t, weight)
            elif isinstance(s, ast.AugAssign):
                targets(s.target, 2)
            elif isinstance(s, ast.AnnAssign):
                targets(s.target, weight)
            elif isinstance(s, (ast.For, ast.While)):
                walk(s.body, 2, depth + 1)
                walk(s.orelse, 2, depth + 1)
            elif isinstance(s, ast.If):
                walk(s.body, weight, depth + 1)
                walk(s.orelse, weight, depth + 1)
            elif isinstance(s, ast.With):
                walk(s.body, weight, depth)

    walk(body, 1, 0)
    repointed = {name for name in nested if len(roots[name]) > 1}
    # A variable whose address is taken (``x.addr``) lives in storage, like a reassigned one.
    for stmt in body:
        for n in ast.walk(stmt):
            if isinstance(n, ast.Attribute) and n.attr == "addr" and isinstance(n.value, ast.Name):
                counts[n.value.id] += 2
    return counts, subscripted, repointed


class DSLParser(ExpressionParser):
    """Parses one PrimFuncObject into a PrimFunc."""

    def __init__(self, pfunc):
        super().__init__(pfunc.source, function_env(pfunc.func))
        self.pfunc = pfunc
        self.builder = _core.IRBuilder()
        self.callees = []
        self.ret = None  # the return annotation: DType, PtrType or None
        self.mutable, self.subscripted, self.repointed = _assigned_names(self.source.func_def.body)
        self.name_hint = None  # the name being assigned, for allocations
        self.name_hint_value = None  # the whole value assigned to name_hint (an ast node)
        self._temps = itertools.count()
        self.mask_lets = {}  # id(var) -> (var, value) of let-bound masks (S.vsplit's part size)
        self.const_lets = {}  # id(var) -> (var, int) of names bound once to an integer constant
        self.meta_assign = False  # whether the assignment being parsed binds S.meta_var(...)
        self.local_storage = []  # data vars of the storage this function allocates (S.alloc, ...)
        # The first use of a form that is X2-only for some operand types (S.vqdpa of float
        # vectors): (name, span), the function attribute "dsl.x2_feature" that
        # dsl.VerifyTargetFeatures refuses on X3 targets.
        self.x2_feature = None

    # ---- the function --------------------------------------------------------------------------

    def parse(self):
        fdef = self.source.func_def
        if not isinstance(fdef, ast.FunctionDef):
            raise self.error(fdef, "@S.prim_func decorates a function")
        span = self.span(fdef)
        params, ret = self.pfunc.signature()
        b = self.builder
        b.begin_function(self.pfunc.name, span)
        bindings = []
        for (name, ann, _default), arg in zip(params, fdef.args.args):
            if ann is None:
                raise self.error(arg, f"parameter '{name}' needs a type annotation (S.ptr(...), S.i32, ...)")
            aspan = self.span(arg)
            if isinstance(ann, PtrType):
                # A pointer to a virtual vector type is a pointer to its scalars in C.
                var = _core.Var.pointer(name, "int8" if ann.element == "void" else
                                        T.element_of(ann.element) if T.is_virtual_vector(ann.element)
                                        else ann.element, ann.scope, aspan)
                storage = "int8" if ann.element == "void" else ann.element
                # The flat buffer behind a pointer is named <pointer>_buf, as Compass names it.
                buf = _core.Buffer(var, storage, [_core.IntImm("int32", UNBOUNDED)], name=f"{name}_buf", span=aspan)
                bindings.append((arg, name, Pointer(buf, ann.element, ann.scope), buf))
            elif isinstance(ann, DType):
                # A virtual-width vector (int32x16 where 8 lanes are native, int32x6) is passed
                # as its native parts (dsl.AlignVectorWidth splits the signature).
                var = _core.Var(name, ann.name, aspan)
                bindings.append((arg, name, var, None))
            else:
                raise self.error(arg, f"annotation of '{name}' must be S.ptr(...) or a type such as S.i32, got {ann!r}")
            b.add_param(var)
        if ret is not None:
            if isinstance(ret, PtrType):
                b.set_return_type("handle")
            elif isinstance(ret, DType):
                # A virtual-width vector is returned through a pointer to its native parts
                # (dsl.AlignVectorWidth).
                b.set_return_type(ret.name)
            else:
                raise self.error(fdef, f"return annotation must be a type such as S.i32, got {ret!r}")
            self.ret = ret
        if self.pfunc.is_inline is not None:
            b.set_function_attr("tessera.inline", _core.IntImm("int32", 1 if self.pfunc.is_inline else 0))
        # The buffers of pointer parameters are not declared in the body (as in Compass's IR): a
        # buffer over a parameter's data needs no declaration.
        for arg, name, value, _buf in bindings:
            # A parameter that the body reassigns is copied into mutable storage first.
            if self.mutable[name] > 0:
                self.bind_new(arg, name, value, arg, force_mutable=True)
            else:
                self.vars.define(name, value)
        self.visit_body(fdef.body)
        with self.at(fdef):
            func = b.end_function()
        if self.x2_feature is not None:
            func = func.with_attr("dsl.x2_feature", _core.StringImm(*self.x2_feature))
        return func, list(self.callees)

    # ---- statements ----------------------------------------------------------------------------

    def visit_Expr(self, node):
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return  # docstring
        value = self.load(self.expr(node.value))
        if is_expr(value):
            with self.at(node):
                self.builder.emit(_core.Evaluate(value, self.span(node)))

    def visit_Pass(self, node):
        pass

    def visit_Assign(self, node):
        if len(node.targets) != 1:
            raise self.error(node, "chained assignment (a = b = c) is not supported")
        target = node.targets[0]
        self.name_hint = target.id if isinstance(target, ast.Name) else None
        self.name_hint_value = node.value
        self.meta_assign = self.is_meta_var(node.value)
        try:
            value = self.expr(node.value)
        finally:
            self.name_hint = self.name_hint_value = None
        if isinstance(target, (ast.Tuple, ast.List)):
            return self.assign_tuple(target, value, node)
        self.assign(target, value, node)

    def visit_AnnAssign(self, node):
        if node.value is None:
            raise self.error(node, "a declaration needs a value")
        ann = self.eval_python(node.annotation)
        self.meta_assign = self.is_meta_var(node.value)
        value = self.expr(node.value)
        if isinstance(ann, DType):
            value = self.load(value)
            if is_expr(value) and value.dtype != ann.name:
                raise self.error(node, f'Type mismatch assignment: "{ann.name}" vs. "{value.dtype}"')
            value = TY.as_type(self, node.value, value, ann.name)
        self.assign(node.target, value, node)

    def visit_AugAssign(self, node):
        self.meta_assign = False
        current = self.expr(node.target)
        value = self.binop(node, node.op, current, self.expr(node.value))
        self.assign(node.target, value, node)

    def assign_tuple(self, target, value, node):
        """``a, b = b, a``: the right side is evaluated first."""
        names = [e.id for e in ast.walk(target) if isinstance(e, ast.Name)]
        dup = next((n for n in names if names.count(n) > 1), None)
        if dup is not None:
            raise self.error(target, f"the name '{dup}' is assigned twice in one assignment")
        value = self.load(value)
        if not isinstance(value, (tuple, list)) or len(value) != len(target.elts):
            count = len(value) if isinstance(value, (tuple, list)) else 1
            raise self.error(node, f"cannot unpack {count} value(s) into {len(target.elts)} names")
        # Freeze the values: later stores of this statement must not change earlier reads.
        frozen = [self.freeze(node, v) for v in value]
        for t, v in zip(target.elts, frozen):
            if isinstance(t, (ast.Tuple, ast.List)):
                self.assign_tuple(t, v, node)
            else:
                self.assign(t, v, node)

    def freeze(self, node, value):
        value = self.load(value)
        if is_expr(value) and not isinstance(value, (_core.IntImm, _core.FloatImm)):
            var = _core.Var(f"tmp{next(self._temps)}", value.dtype, self.span(node))
            with self.at(node):
                self.builder.emit_let(var, value, self.span(node))
            return var
        if isinstance(value, Pointer) and is_expr(value.offset):
            return value.moved(self.freeze(node, value.offset))
        return value

    def assign(self, target, value, node):
        if isinstance(target, ast.Name):
            return self.assign_name(target, value, node)
        if isinstance(target, ast.Subscript):
            return self.assign_subscript(target, value, node)
        raise self.error(target, "unsupported assignment target")

    def is_meta_var(self, value_node):
        """Whether an assigned value is ``S.meta_var(...)`` (a compile-time Python value)."""
        from .intrinsics import REGISTRY

        func = value_node.func if isinstance(value_node, ast.Call) else None
        # Only ``S.meta_var`` or ``meta_var`` is looked up (evaluating other callees here could
        # emit IR twice).
        if not ((isinstance(func, ast.Attribute) and func.attr == "meta_var")
                or (isinstance(func, ast.Name) and func.id == "meta_var")):
            return False
        try:
            func = self.expr(value_node.func)
        except TesseraError:
            return False
        return func is REGISTRY.get("meta_var")

    def assign_name(self, target, value, node):
        name = target.id
        found, current = self.vars.lookup(name)
        value = self.load(value)
        if type(value) is str and not getattr(self, "meta_assign", False):
            # As in Compass: a kernel has no string variables. A string is written where it is
            # used, or computed outside and bound with S.meta_var.
            raise self.error(node, f"'{name}' would be a string variable, which a kernel cannot "
                                   f"have; write the string where it is used, define it outside "
                                   f"the function or bind it with S.meta_var(...)")
        if found and isinstance(current, LocalVar):
            value = self.to_expr(node, value) if is_expr(value) or T.lanes_of(current.dtype) > 1 \
                else self.typed_literal(node, value, current.dtype)
            if value.dtype != current.dtype:
                raise self.error(node, f'Type mismatch assignment: "{current.dtype}" vs. "{value.dtype}"')
            with self.at(node):
                self.builder.emit(_core.BufferStore(current.buffer, value, [_core.IntImm("int32", 0)],
                                                    None, self.span(node)))
            return
        if found and isinstance(current, PointerSlot):
            if not isinstance(value, Pointer) or value.element != current.element \
                    or value.scope != current.scope:
                raise self.error(node, f"the pointer variable '{name}' must keep pointing to "
                                       f"{current.element} in {current.scope} memory, got "
                                       f"{self.describe(value)}")
            with self.at(node):
                self.builder.emit(_core.BufferStore(current.buffer, self.pointer_expr(node, value),
                                                    [_core.IntImm("int32", 0)], None, self.span(node)))
            return
        if found and isinstance(current, PointerVar):
            if isinstance(value, Pointer) and name in self.vars.frames[-1] and \
                    not (value.buffer.data.same_as(current.base.buffer.data)
                         and value.element == current.base.element):
                # Re-pointed into another buffer (or as another type) in the block that defines
                # the variable, with no loop or branch in between: from here on the name stands
                # for a new pointer variable, which is what the straight-line code means.
                self.bind_new(target, name, value, node, force_mutable=True)
                return
            if not isinstance(value, Pointer) or not value.buffer.data.same_as(current.base.buffer.data) \
                    or value.element != current.base.element:
                raise self.error(node, f"the pointer variable '{name}' must keep pointing into the same "
                                       f"buffer with the same type, got {self.describe(value)}")
            offset = self.to_index(node, value.offset)
            with self.at(node):
                self.builder.emit(_core.BufferStore(current.offset_var.buffer, offset,
                                                    [_core.IntImm("int32", 0)], None, self.span(node)))
            return
        if found and is_expr(current):
            raise self.error(target, f"'{name}' cannot be reassigned here (it is a loop variable or "
                                     f"bound once)")
        self.bind_new(target, name, value, node)

    def typed_literal(self, node, value, dtype):
        """A literal assigned to a scalar variable of ``dtype``."""
        if isinstance(value, float) and T.is_int(dtype):
            return TY.default_expr(self, node, value)  # float32: a type mismatch
        return TY.as_type(self, node, value, dtype)

    def bind_new(self, target, name, value, node, force_mutable=False):
        """Bind a name first assigned here: a let, mutable storage or a compile-time value."""
        mutable = force_mutable or self.mutable[name] > 1
        span = self.span(target)
        if isinstance(value, Pointer):
            if not mutable:
                self.vars.define(name, value)
                return
            if name in self.repointed:
                self.vars.define(name, self.new_pointer_slot(node, name, value))
                return
            offset = LocalVar(*self.new_local(node, f"{name}_offset", self.to_index(node, value.offset)))
            self.vars.define(name, PointerVar(value.moved(0), offset))
            return
        if not is_expr(value) and not isinstance(value, (bool, int, float)):
            self.vars.define(name, value)  # compile-time value (list, buffer view, event, ...)
            return
        value = self.to_expr(node, value)
        vector_lane_set = name in self.subscripted and T.lanes_of(value.dtype) > 1
        if mutable or vector_lane_set:
            self.vars.define(name, LocalVar(*self.new_local(node, name, value, span)))
        else:
            var = _core.Var(name, value.dtype, span)
            with self.at(node):
                self.builder.emit_let(var, value, span)
            self.vars.define(name, var)
            if T.is_bool(value.dtype) and T.lanes_of(value.dtype) > 1:
                self.mask_lets[id(var)] = (var, value)
            if isinstance(value, _core.IntImm) and not T.is_bool(value.dtype):
                self.const_lets[id(var)] = (var, value.value)

    def new_pointer_slot(self, node, name, value):
        """Private storage for the address of a pointer variable, initialised with ``value``."""
        span = self.span(node)
        var = _core.Var.pointer(name, "handle", "private", span)
        buf = _core.Buffer(var, "handle", [_core.IntImm("int32", 1)], name=name, span=span)
        with self.at(node):
            init = self.pointer_expr(node, value)
            self.builder.emit_allocate(var, "handle", [_core.IntImm("int32", 1)],
                                       {"tessera.local_var": _core.IntImm("int32", 1)}, span)
            self.builder.emit_decl_buffer(buf, span)
            self.builder.emit(_core.BufferStore(buf, init, [_core.IntImm("int32", 0)], None, span))
        element = value.element
        # The pointer's C type: bytes for "void", the scalars of a virtual vector type.
        storage = "int8" if element == "void" else \
            T.element_of(element) if T.is_virtual_vector(element) else element
        return PointerSlot(buf, element, value.scope, storage, name, span)

    def new_local(self, node, name, value, span=None):
        """Mutable storage for one value, initialised: (buffer, dtype)."""
        span = span or self.span(node)
        dtype = value.dtype
        var = _core.Var.pointer(name, dtype, "private", span)
        buf = _core.Buffer(var, dtype, [_core.IntImm("int32", 1)], name=name, span=span)
        with self.at(node):
            self.builder.emit_allocate(var, dtype, [_core.IntImm("int32", 1)],
                                       {"tessera.local_var": _core.IntImm("int32", 1)}, span)
            self.builder.emit_decl_buffer(buf, span)
            self.builder.emit(_core.BufferStore(buf, value, [_core.IntImm("int32", 0)], None, span))
        return buf, dtype

    def assign_subscript(self, target, value, node):
        raw = self.expr(target.value)
        base = self.load(raw)
        index = self.index_value(target.slice)
        value = self.load(value)
        value_node = node.value if hasattr(node, "value") and node.value is not None else node
        if isinstance(raw, LocalVar) and T.lanes_of(raw.dtype) > 1:
            return self.set_lane(target, raw, index, value, value_node)
        if is_expr(base):
            raise self.error(target.value, "only a vector variable can have its lanes assigned")
        if isinstance(base, BufferView):
            base, index = self.flatten(target, base, index)
        if not isinstance(base, Pointer):
            raise self.error(target.value, f"cannot assign to an element of {self.describe(base)}")
        if base.element == "void":
            raise self.error(target, 'cannot access a "void" pointer; use p.as_ptr(dtype) first')
        if base.scope == "constant":
            raise self.error(target, "cannot store through a pointer to constant memory")
        span = self.span(node)
        if isinstance(index, slice):
            base, index = self.vector_slice(target, base, index)
            idx, lanes = self.slice_ramp(target, base, index)
            dtype = T.with_lanes(base.element, lanes)
            value = self.stored_value(value_node, value, dtype)
            with self.at(node):
                self.builder.emit(_core.BufferStore(base.buffer, value, [idx], None, span))
            return
        if T.is_virtual_vector(base.element):
            value = self.stored_value(value_node, value, base.element)
            buf, ramp = self.virtual_access(target, base, index)
            with self.at(node):
                self.builder.emit(_core.BufferStore(buf, value, [ramp], None, span))
            return
        value = self.stored_value(value_node, value, base.buffer.dtype)
        idx = self.offset_index(target, base, index)
        with self.at(node):
            self.builder.emit(_core.BufferStore(base.buffer, value, [idx], None, span))

    def stored_value(self, node, value, dtype):
        if is_expr(value) and value.dtype != dtype:
            if T.lanes_of(value.dtype) == 1 and T.lanes_of(dtype) > 1:
                return TY.as_type(self, node, value, dtype)
            if T.is_int(value.dtype) and T.is_int(dtype) and T.lanes_of(value.dtype) > 1 and \
                    T.bits_of(value.dtype) == T.bits_of(dtype) and \
                    T.lanes_of(value.dtype) == T.lanes_of(dtype):
                # An integer vector of the other sign is stored with its bits (as Compass does).
                return self.call_op(node, dtype, "tir.reinterpret", [value])
            if T.lanes_of(value.dtype) == 1 and T.lanes_of(dtype) == 1 and not T.is_bool(dtype) \
                    and not T.is_bool(value.dtype):
                # A scalar of another number type is converted to the element type, as C (and
                # Compass's buffer store) converts it: b[0] = S.rint(1.5) into float16 elements.
                from .intrinsics.conversion import cast_value

                return cast_value(self, node, value, dtype)
            raise self.error(node, f'Argument type mismatch: cannot store "{value.dtype}" into '
                                   f'"{dtype}" elements')
        return TY.as_type(self, node, value, dtype)

    def set_lane(self, target, var, index, value, value_node):
        lanes = T.lanes_of(var.dtype)
        if isinstance(index, int) and not 0 <= index < lanes:
            raise self.error(target, f"lane {index} is out of range for {var.dtype} (lanes 0-{lanes - 1})")
        elem = T.element_of(var.dtype)
        value = TY.as_type(self, value_node, value, elem)
        new = self.call_op(target, var.dtype, "dsl.set_lane",
                           [self.load(var), self.to_index(target, index), value])
        with self.at(target):
            self.builder.emit(_core.BufferStore(var.buffer, new, [_core.IntImm("int32", 0)], None,
                                                self.span(target)))

    # ---- control flow -------------------------------------------------------------------------

    def visit_For(self, node):
        from .intrinsics import REGISTRY

        if node.orelse:
            raise self.error(node, "for ... else is not supported")
        if not isinstance(node.target, ast.Name):
            raise self.error(node.target, "the loop variable must be a single name")
        if self.vars.lookup(node.target.id)[0]:
            # As in Compass: a loop may not take over a name that is visible where it starts
            # (a parameter, or a variable of this block or an enclosing one).
            raise self.error(node.target, f"the loop variable '{node.target.id}' is already defined "
                                          f"before the loop; a loop variable needs a new name")
        it = node.iter
        func = self.expr(it.func) if isinstance(it, ast.Call) else None
        if func is REGISTRY.get("tec_range"):
            return self.tec_loop(node, it)
        kind = _core.ForKind.SERIAL
        if func is REGISTRY.get("vectorized"):
            if it.keywords or not 1 <= len(it.args) <= 2:
                raise self.error(it, "S.vectorized() takes 1 or 2 positional arguments")
            kind = _core.ForKind.VECTORIZED
        elif func is not range:
            raise self.error(it, "loops must iterate over range(...), S.vectorized(...) or "
                                 "S.tec_range(...)")
        if it.keywords or not 1 <= len(it.args) <= 3:
            raise self.error(it, "range() takes 1 to 3 positional arguments")
        args = [self.load(self.expr(a)) for a in it.args]
        start, stop, step = (0, args[0], 1) if len(args) == 1 else (args[0], args[1], args[2] if len(args) == 3 else 1)
        step = self.static_int(it, step, "the step of range()")
        if step == 0:
            raise self.error(it, "range() step must not be zero")
        start = self.to_index(it, start)
        stop = self.to_index(it, stop)
        span = self.span(node)
        name = node.target.id
        if step == 1:
            # A step of 1 written in range() stays on the loop, as Compass keeps it:
            # annotations={"step": 1}. Another step iterates a counter by 1 (below), whose loop
            # has no step to record.
            annotations = {"step": _core.IntImm("int32", 1)} if len(args) == 3 else {}
            extent = _core.simplify_expr(_core.Sub(stop, start))
            var = _core.Var(name, "int32", self.span(node.target))
            with self.at(node):
                self.builder.begin_for(var, start, extent, kind, None, annotations, span)
            loop_value = var
        else:
            # for i in range(a, b, s): iterate a counter j and bind i = a + j * s.
            size = _core.Sub(stop, start) if step > 0 else _core.Sub(start, stop)
            count = _core.simplify_expr(_core.Div(_core.Add(size, _core.IntImm("int32", abs(step) - 1)),
                                                  _core.IntImm("int32", abs(step))))
            counter = _core.Var(f"{name}_iter", "int32", self.span(node.target))
            with self.at(node):
                self.builder.begin_for(counter, _core.IntImm("int32", 0), count, _core.ForKind.SERIAL,
                                       None, {}, span)
            var = _core.Var(name, "int32", self.span(node.target))
            self.builder.emit_let(var, _core.simplify_expr(
                _core.Add(start, _core.Mul(counter, _core.IntImm("int32", step)))), span)
            loop_value = var
        with self.vars.scope():
            self.vars.define(name, loop_value)
            self.visit_body(node.body)
        self.builder.end_for()

    def tec_loop(self, node, it):
        """``for t in S.tec_range(start, stop)``: each TEC runs the body once as ``t`` equal to
        its index when the index lies in [start, stop)."""
        args = [self.load(self.expr(a)) for a in it.args]
        kwargs = {k.arg: self.load(self.expr(k.value)) for k in it.keywords}
        bound = inspect.signature(lambda start, stop=None: None).bind(*args, **kwargs)
        start, stop = bound.arguments.get("start"), bound.arguments.get("stop")
        if stop is None:
            start, stop = 0, start
        span = self.span(node)
        tid = _core.Var(node.target.id, "int32", self.span(node.target))
        # The TEC index lies in [0, TECS_PER_CORE): a bound that every TEC meets is not tested
        # (``S.tec_range(4)`` runs its body on every TEC, with no condition around it).
        tests = []
        if not (_static(start) is not None and _static(start) <= 0):
            tests.append((ast.LtE(), start, tid))
        if not (_static(stop) is not None and _static(stop) >= TECS_PER_CORE):
            tests.append((ast.Lt(), tid, stop))
        with self.at(node):
            self.builder.emit_let(tid, self.call_op(it, "int32", "dsl.get_local_id", []), span)
            conds = [self.compare(it, op, left, right) for op, left, right in tests]
        if conds:
            inside = conds[0] if len(conds) == 1 else self.logical(it, ast.And(), *conds)
            self.builder.begin_if(_core.simplify_expr(inside), span)
            self.builder.begin_then()
        with self.vars.scope():
            self.vars.define(node.target.id, tid)
            self.visit_body(node.body)
        if conds:
            self.builder.end_then()
            self.builder.end_if()

    def visit_While(self, node):
        if node.orelse:
            raise self.error(node, "while ... else is not supported")
        cond = self.condition(node.test)
        self.builder.begin_while(cond, self.span(node))
        with self.vars.scope():
            self.visit_body(node.body)
        self.builder.end_while()

    def visit_If(self, node):
        cond = self.load(self.expr(node.test))
        if not is_expr(cond):
            # A Python value: decide now and parse only the branch taken.
            with self.vars.scope():
                self.visit_body(node.body if cond else node.orelse)
            return
        cond = self.condition(node.test, cond)
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

    def visit_Return(self, node):
        span = self.span(node)
        if self.ret is None:
            if node.value is not None:
                raise self.error(node, _RETURN_NEEDS_ANNOTATION)
            # A bare return; in the entry it ends this TEC only.
            call = _core.Call("int32", _core.Op.get("tir.ret"), [_core.IntImm("int32", 0)], span)
            self.builder.emit(_core.Evaluate(call, span))
            return
        if node.value is None:
            raise self.error(node, f"this function must return a {self.ret}")
        value = self.load(self.expr(node.value))
        if isinstance(self.ret, PtrType):
            ptr = self.pointer_of(node.value, value, "the returned value")
            if ptr.element != self.ret.element and self.ret.element != "void":
                raise self.error(node, f'return type mismatch: "{self.ret.element}*" vs. "{ptr.element}*"')
            if ptr.scope != self.ret.scope:
                raise self.error(node.value, f'return type mismatch: the function returns a pointer '
                                             f'to {self.ret.scope} memory, this one points to '
                                             f'{ptr.scope} memory')
            if self.is_local_storage(ptr):
                # Storage that this function allocates ends with the call (a stack frame in
                # C): the caller would get a dangling pointer. Compass's analysis refuses it
                # (an AssertionError); a returned pointer must come from a parameter.
                raise self.error(node.value, f"{self.pfunc.name}() returns a pointer into storage "
                                             f"that it allocates itself, which does not outlive "
                                             f"the call; return a pointer derived from a parameter",
                                 cls=DiagnosticAssertionError)
            value = self.pointer_expr(node.value, ptr)
            dtype = "handle"
        else:
            dtype = self.ret.name
            if is_expr(value) and value.dtype != dtype and T.lanes_of(dtype) == 1 \
                    and T.lanes_of(value.dtype) == 1 and not T.is_bool(dtype) \
                    and not T.is_bool(value.dtype):
                # A scalar of another number type is converted to the return type, as C
                # converts a returned value (Compass does not check it).
                from .intrinsics.conversion import cast_value

                value = cast_value(self, node.value, value, dtype)
            if is_expr(value) and value.dtype != dtype:
                raise self.error(node, f'return type mismatch: "{dtype}" vs. "{value.dtype}"')
            value = TY.as_type(self, node.value, value, dtype)
        call = _core.Call(dtype, _core.Op.get("tir.ret"), [value], span)
        self.builder.emit(_core.Evaluate(call, span))

    def visit_With(self, node):
        raise self.error(node, "with blocks are not supported by this version of tessera yet")

    # ---- calls of other kernels and macros ---------------------------------------------------

    def call_subroutine(self, node, callee):
        params, ret = callee.signature()
        if ret is None:
            # Callees are parsed after their callers: report a returned value without a return
            # annotation at its cause, in the callee, before the caller uses the void result.
            returned = _first_value_return(callee.source.func_def)
            if returned is not None:
                with self.with_source(callee.source, self.env):
                    raise self.error(returned, _RETURN_NEEDS_ANNOTATION)
        names = [p[0] for p in params]
        bound = {}
        if len(node.args) > len(params):
            raise self.error(node, f"{callee.name}() takes {len(params)} arguments but {len(node.args)} were given")
        for (name, _ann, _default), arg in zip(params, node.args):
            bound[name] = (arg, self.expr(arg))
        for kw in node.keywords:
            if kw.arg not in names:
                raise self.error(kw, f"{callee.name}() has no parameter '{kw.arg}'")
            if kw.arg in bound:
                raise self.error(kw, f"{callee.name}() got multiple values for '{kw.arg}'")
            bound[kw.arg] = (kw.value, self.expr(kw.value))
        args = []
        for name, ann, default in params:
            if name not in bound:
                if default is inspect.Parameter.empty:
                    raise self.error(node, f"{callee.name}() is missing the argument '{name}'")
                bound[name] = (node, default)
            arg_node, value = bound[name]
            value = self.load(value)
            if isinstance(ann, PtrType):
                if value is None or (isinstance(value, int) and not isinstance(value, bool) and value == 0):
                    args.append(self.call_op(arg_node, "handle", "dsl.nullptr", []))
                    continue
                if isinstance(value, BufferView):
                    value = value.pointer
                if not isinstance(value, Pointer):
                    raise self.error(arg_node, f"argument '{name}' of {callee.name}() must be a pointer, got {self.describe(value)}")
                if value.scope != ann.scope:
                    # As in Compass: a pointer parameter takes pointers to its own memory scope
                    # only (S.ptr's default scope is "private").
                    raise self.error(arg_node, f"Argument type mismatch: '{name}' of {callee.name}() "
                                               f"expects a pointer to {ann.scope} memory, got one "
                                               f"to {value.scope} memory")
                if value.element != ann.element and ann.element != "void" and not (
                        # A pointer to a virtual vector is a pointer to its scalars (as Compass
                        # lowers it): it passes where a pointer to that scalar type is expected.
                        T.is_virtual_vector(value.element)
                        and T.element_of(value.element) == ann.element) and not (
                        # A pointer to scalars passes where a pointer to vectors of that scalar
                        # type is expected (as Compass's sub-function calls take it).
                        T.lanes_of(value.element) == 1 and T.lanes_of(ann.element) > 1
                        and T.element_of(ann.element) == value.element):
                    # A pointer to another type passes too: Compass's sub-function calls check
                    # the scope only, and the callee reads the same address as its parameter's
                    # type (no conversion), as with ``p.as_ptr(...)``.
                    value = self.view(arg_node, value, ann.element)
                args.append(self.pointer_expr(arg_node, value))
            elif isinstance(ann, DType):
                if not is_expr(value) and not isinstance(value, (bool, int, float, numbers.Number)):
                    raise self.error(arg_node, f'Argument type mismatch: \'{name}\' of {callee.name}() expects '
                                               f'a "{ann.name}" value, got {self.describe(value)}')
                if is_expr(value) and value.dtype != ann.name:
                    # A scalar of another number type converts to the parameter's type (as
                    # Compass's sub-function calls do); vectors and bools must match.
                    scalars = T.lanes_of(value.dtype) == 1 and T.lanes_of(ann.name) == 1
                    if not scalars or "bool" in (value.dtype, ann.name):
                        raise self.error(arg_node, f'Argument type mismatch: \'{name}\' expects "{ann.name}", got "{value.dtype}"')
                    with self.at(arg_node):
                        value = _core.Cast(ann.name, value, self.span(arg_node))
                args.append(TY.as_type(self, arg_node, value, ann.name))
            else:
                raise self.error(arg_node, f"parameter '{name}' of {callee.name}() has no type annotation")
        if callee not in self.callees:
            self.callees.append(callee)
        span = self.span(node)
        if isinstance(ret, PtrType):
            with self.at(node):
                call = _core.Call("handle", _core.GlobalVar(callee.name), args, span)
                var = _core.Var.pointer(f"{callee.name}_ret", "int8" if ret.element == "void" else
                                        T.element_of(ret.element) if T.is_virtual_vector(ret.element)
                                        else ret.element, ret.scope, span)
                self.builder.emit_let(var, call, span)
                storage = "int8" if ret.element == "void" else ret.element
                buf = _core.Buffer(var, storage, [_core.IntImm("int32", UNBOUNDED)], name=f"{var.name}_buf", span=span)
                self.builder.emit_decl_buffer(buf, span)
            return Pointer(buf, ret.element, ret.scope)
        ret_dtype = ret.name if isinstance(ret, DType) else "void"
        with self.at(node):
            return _core.Call(ret_dtype, _core.GlobalVar(callee.name), args, span)

    def expand_macro(self, node, macro):
        fdef = macro.source.func_def
        sig = inspect.signature(macro.func)
        args = [self.expr(a) for a in node.args]
        kwargs = {k.arg: self.expr(k.value) for k in node.keywords}
        try:
            binding = sig.bind(*args, **kwargs)
        except TypeError as err:
            raise self.error(node, f"{macro.name}(): {err}") from None
        binding.apply_defaults()
        if macro.hygienic:
            table = VarTable()
            env = macro.env
        else:
            table = self.vars
            env = dict(self.env)
        with self.with_source(macro.source, env, table):
            with table.scope():
                for name, value in binding.arguments.items():
                    table.define(name, value)
                saved = self.mutable, self.subscripted, self.repointed
                self.mutable, self.subscripted, self.repointed = _assigned_names(fdef.body)
                try:
                    self.visit_body(fdef.body)
                finally:
                    self.mutable, self.subscripted, self.repointed = saved
        return None
