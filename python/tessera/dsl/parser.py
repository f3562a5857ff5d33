"""The DSL dialect: turns an ``@S.prim_func`` body into IR through the C++ IRBuilder.

Typing follows the DSL reference: literals default to int32/float32 and take the type of the
other operand, scalars broadcast into vectors, integer ``/`` and ``//`` truncate, ``%`` keeps the
dividend's sign, and a reassignment must keep the variable's type.
"""

import ast
import collections

from .. import _core
from ..script.parser.core import Parser, VarTable, function_env
from .function import MacroObject, PrimFuncObject
from .intrinsics import Intrinsic
from .types import DType, PtrType

UNBOUNDED = 2147483647  # extent of the flat buffer behind a pointer parameter

_BINOPS = {
    ast.Add: _core.Add, ast.Sub: _core.Sub, ast.Mult: _core.Mul,
    ast.Div: _core.Div, ast.FloorDiv: _core.Div, ast.Mod: _core.Mod,
}
_BITOPS = {
    ast.BitAnd: "tir.bitwise_and", ast.BitOr: "tir.bitwise_or", ast.BitXor: "tir.bitwise_xor",
    ast.LShift: "tir.shift_left", ast.RShift: "tir.shift_right",
}
_CMPOPS = {
    ast.Lt: _core.LT, ast.LtE: _core.LE, ast.Gt: _core.GT, ast.GtE: _core.GE,
    ast.Eq: _core.EQ, ast.NotEq: _core.NE,
}


class Pointer:
    """A pointer value at parse time: the flat buffer it points into and an element offset."""

    def __init__(self, buffer, element, scope, offset=0):
        self.buffer = buffer
        self.element = element
        self.scope = scope
        self.offset = offset

    def __repr__(self):
        return f"Pointer({self.element}, {self.scope})"


class LocalVar:
    """A mutable local variable: one element of private storage."""

    def __init__(self, buffer, dtype):
        self.buffer = buffer
        self.dtype = dtype


def _assigned_names(func_def):
    """How often each name is assigned in a function body (loops count twice)."""
    counts = collections.Counter()

    def targets(t, weight):
        if isinstance(t, ast.Name):
            counts[t.id] += weight
        elif isinstance(t, (ast.Tuple, ast.List)):
            for e in t.elts:
                targets(e, weight)

    def walk(stmts, weight):
        for s in stmts:
            if isinstance(s, ast.Assign):
                for t in s.targets:
                    targets(t, weight)
            elif isinstance(s, (ast.AugAssign, ast.AnnAssign)):
                targets(s.target, weight if isinstance(s, ast.AnnAssign) else 2)
            elif isinstance(s, (ast.For, ast.While)):
                walk(s.body, 2)
                walk(s.orelse, 2)
            elif isinstance(s, ast.If):
                walk(s.body, weight)
                walk(s.orelse, weight)
            elif isinstance(s, ast.With):
                walk(s.body, weight)

    walk(func_def.body, 1)
    return counts


class DSLParser(Parser):
    """Parses one PrimFuncObject into a PrimFunc."""

    def __init__(self, pfunc):
        super().__init__(pfunc.source, function_env(pfunc.func))
        self.pfunc = pfunc
        self.builder = _core.IRBuilder()
        self.callees = []
        self.ret_dtype = None
        self.mutable = _assigned_names(self.source.func_def)

    # ---- helpers used by intrinsics ----
    def span(self, node):
        return self.source.span(node)

    def describe(self, value):
        if isinstance(value, _core.PrimExpr):
            return f"a {value.dtype} expression"
        if isinstance(value, Pointer):
            return f"a pointer to {value.element}"
        return f"the Python value {value!r}"

    def static_int(self, node, value, what):
        if isinstance(value, bool) or not isinstance(value, int):
            if isinstance(value, _core.IntImm):
                return value.value
            raise self.error(node, f"{what} must be a compile-time integer, got {self.describe(value)}")
        return value

    def to_index(self, node, value):
        if isinstance(value, int) and not isinstance(value, bool):
            return _core.IntImm("int32", value, self.span(node))
        value = self.load(value)
        if not isinstance(value, _core.PrimExpr) or not value.dtype.startswith(("int", "uint")):
            raise self.error(node, f"an index must be an integer, got {self.describe(value)}")
        if value.dtype != "int32":
            value = _core.Cast("int32", value, self.span(node))
        return value

    def load(self, value):
        if isinstance(value, LocalVar):
            return _core.BufferLoad(value.buffer, [_core.IntImm("int32", 0)])
        return value

    def const(self, node, value, dtype):
        """A Python number as a constant of ``dtype`` (broadcast for vector types)."""
        t = _core.DataType(dtype)
        elem = str(t.with_lanes(1))
        span = self.span(node)
        if elem.startswith(("float", "bfloat")):
            c = _core.FloatImm(elem, float(value), span)
        elif isinstance(value, float):
            raise self.error(node, f"cannot use the float {value!r} where {elem} is expected")
        else:
            try:
                c = _core.IntImm(elem, int(value), span)
            except Exception:
                raise self.error(node, f'Can\'t broadcast "{value}" to "{dtype}": out of range') from None
        return _core.Broadcast(c, t.lanes, span) if t.lanes > 1 else c

    def to_expr(self, node, value, dtype=None):
        value = self.load(value)
        if isinstance(value, _core.PrimExpr):
            return value
        if isinstance(value, (bool, int, float)):
            if dtype is None:
                dtype = "bool" if isinstance(value, bool) else "int32" if isinstance(value, int) else "float32"
            return self.const(node, value, dtype)
        raise self.error(node, f"expected a number or an expression, got {self.describe(value)}")

    def coerce(self, node, x, y):
        """Two operands as IR of one type: literals take the other side's type, scalars broadcast."""
        x, y = self.load(x), self.load(y)
        xi, yi = isinstance(x, _core.PrimExpr), isinstance(y, _core.PrimExpr)
        if xi and not yi:
            y = self.to_expr(node, y, x.dtype)
        elif yi and not xi:
            x = self.to_expr(node, x, y.dtype)
        elif not xi and not yi:
            x = self.to_expr(node, x)
            y = self.to_expr(node, y, x.dtype if isinstance(y, int) and x.dtype.startswith("float") else None)
        tx, ty = _core.DataType(x.dtype), _core.DataType(y.dtype)
        if tx.lanes != ty.lanes and (tx.lanes == 1 or ty.lanes == 1):
            if tx.lanes == 1 and str(tx) == str(ty.with_lanes(1)):
                x = _core.Broadcast(x, ty.lanes, self.span(node))
            elif ty.lanes == 1 and str(ty) == str(tx.with_lanes(1)):
                y = _core.Broadcast(y, tx.lanes, self.span(node))
        if x.dtype != y.dtype:
            raise self.error(node, f'Argument type mismatch: "{x.dtype}" vs. "{y.dtype}"')
        return x, y

    # ---- the function ----
    def parse(self):
        fdef = self.source.func_def
        if not isinstance(fdef, ast.FunctionDef):
            raise self.error(fdef, "@S.prim_func decorates a function")
        span = self.span(fdef)
        params, ret = self.pfunc.signature()
        b = self.builder
        b.begin_function(self.pfunc.name, span)
        decls = []
        for (name, ann, _default), arg in zip(params, fdef.args.args):
            if ann is None:
                raise self.error(arg, f"parameter '{name}' needs a type annotation (S.ptr(...), S.i32, ...)")
            aspan = self.span(arg)
            if isinstance(ann, PtrType):
                var = _core.Var.pointer(name, ann.element, ann.scope, aspan)
                elem = "int8" if ann.element == "void" else ann.element
                buf = _core.Buffer(var, elem, [_core.IntImm("int32", UNBOUNDED)], name=name, span=aspan)
                decls.append(buf)
                self.vars.define(name, Pointer(buf, ann.element, ann.scope))
            elif isinstance(ann, DType):
                var = _core.Var(name, ann.name, aspan)
                self.vars.define(name, var)
            else:
                raise self.error(arg, f"annotation of '{name}' must be S.ptr(...) or a type such as S.i32, got {ann!r}")
            b.add_param(var)
        if ret is not None:
            if not isinstance(ret, DType):
                raise self.error(fdef, f"return annotation must be a type such as S.i32, got {ret!r}")
            self.ret_dtype = ret.name
            b.set_return_type(ret.name)
        if self.pfunc.is_inline is not None:
            b.set_function_attr("tessera.inline", _core.IntImm("int32", 1 if self.pfunc.is_inline else 0))
        for buf in decls:
            b.emit_decl_buffer(buf, span)
        self.visit_body(fdef.body)
        with self.at(fdef):
            func = b.end_function()
        return func, list(self.callees)

    # ---- statements ----
    def visit_Expr(self, node):
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return  # docstring
        value = self.expr(node.value)
        if isinstance(value, _core.PrimExpr):
            with self.at(node):
                self.builder.emit(_core.Evaluate(value, self.span(node)))

    def visit_Pass(self, node):
        pass

    def visit_Assign(self, node):
        if len(node.targets) != 1:
            raise self.error(node, "chained assignment (a = b = c) is not supported")
        self.assign(node.targets[0], self.expr(node.value), node)

    def visit_AnnAssign(self, node):
        if node.value is None:
            raise self.error(node, "a declaration needs a value")
        ann = self.eval_python(node.annotation)
        value = self.expr(node.value)
        if isinstance(ann, DType):
            value = self.to_expr(node.value, value, ann.name)
            if value.dtype != ann.name:
                raise self.error(node, f'Type mismatch assignment: "{ann.name}" vs. "{value.dtype}"')
        self.assign(node.target, value, node)

    def visit_AugAssign(self, node):
        current = self.expr(node.target)
        value = self.binop(node, node.op, current, self.expr(node.value))
        self.assign(node.target, value, node)

    def assign(self, target, value, node):
        if isinstance(target, ast.Name):
            return self.assign_name(target, value, node)
        if isinstance(target, ast.Subscript):
            return self.assign_subscript(target, value, node)
        raise self.error(target, "unsupported assignment target")

    def assign_name(self, target, value, node):
        name = target.id
        found, current = self.vars.lookup(name)
        if found and isinstance(current, LocalVar):
            value = self.to_expr(node, value)
            if value.dtype != current.dtype:
                raise self.error(node, f'Type mismatch assignment: "{current.dtype}" vs. "{value.dtype}"')
            with self.at(node):
                self.builder.emit(_core.BufferStore(current.buffer, value, [_core.IntImm("int32", 0)], None, self.span(node)))
            return
        if found and isinstance(current, _core.PrimExpr):
            raise self.error(target, f"'{name}' is already bound in this scope")
        if not isinstance(value, (_core.PrimExpr, bool, int, float, LocalVar)):
            self.vars.define(name, value)  # compile-time value (pointer, list, ...)
            return
        value = self.to_expr(node, value)
        span = self.span(target)
        if self.mutable[name] > 1:
            var = _core.Var.pointer(name, value.dtype, "private", span)
            buf = _core.Buffer(var, value.dtype, [_core.IntImm("int32", 1)], name=name, span=span)
            with self.at(node):
                self.builder.emit_allocate(var, value.dtype, [_core.IntImm("int32", 1)],
                                           {"tessera.local_var": _core.IntImm("int32", 1)}, span)
                self.builder.emit_decl_buffer(buf, span)
                self.builder.emit(_core.BufferStore(buf, value, [_core.IntImm("int32", 0)], None, span))
            self.vars.define(name, LocalVar(buf, value.dtype))
        else:
            var = _core.Var(name, value.dtype, span)
            with self.at(node):
                self.builder.emit_let(var, value, span)
            self.vars.define(name, var)

    def assign_subscript(self, target, value, node):
        base = self.expr(target.value)
        if not isinstance(base, Pointer):
            raise self.error(target.value, f"cannot assign to an element of {self.describe(base)}")
        if isinstance(target.slice, ast.Slice):
            raise self.error(target.slice, "slice stores are not supported by this version of tessera yet")
        index = self.expr(target.slice)
        elem = base.buffer.dtype
        value = self.to_expr(node.value if hasattr(node, "value") else node, value, elem)
        if value.dtype != elem:
            raise self.error(node, f'Argument type mismatch: cannot store "{value.dtype}" into a pointer to "{elem}"')
        idx = self.offset_index(target, base, index)
        with self.at(node):
            self.builder.emit(_core.BufferStore(base.buffer, value, [idx], None, self.span(node)))

    def offset_index(self, node, ptr, index):
        if isinstance(ptr.offset, int) and isinstance(index, int):
            return self.to_index(node, ptr.offset + index)
        if isinstance(ptr.offset, int) and ptr.offset == 0:
            return self.to_index(node, index)
        return _core.Add(self.to_index(node, ptr.offset), self.to_index(node, index), self.span(node))

    def visit_For(self, node):
        if node.orelse:
            raise self.error(node, "for ... else is not supported")
        it = node.iter
        if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range"
                and self.lookup_name(it.func, "range") is range):
            raise self.error(it, "loops must iterate over range(...)")
        if it.keywords or not 1 <= len(it.args) <= 3:
            raise self.error(it, "range() takes 1 to 3 positional arguments")
        if not isinstance(node.target, ast.Name):
            raise self.error(node.target, "the loop variable must be a single name")
        args = [self.expr(a) for a in it.args]
        start, stop, step = (0, args[0], 1) if len(args) == 1 else (args[0], args[1], args[2] if len(args) == 3 else 1)
        if step != 1:
            raise self.error(it, "range() with a step other than 1 is not supported yet")
        start = self.to_expr(it, start, "int32")
        stop = self.to_expr(it, stop, "int32")
        if start.dtype != "int32" or stop.dtype != "int32":
            raise self.error(it, f"range() bounds must be int32, got {start.dtype} and {stop.dtype}")
        extent = _core.simplify_expr(_core.Sub(stop, start))
        var = _core.Var(node.target.id, "int32", self.span(node.target))
        with self.at(node):
            self.builder.begin_for(var, start, extent, _core.ForKind.SERIAL, None, {}, self.span(node))
        with self.vars.scope():
            self.vars.define(node.target.id, var)
            self.visit_body(node.body)
        self.builder.end_for()

    def visit_While(self, node):
        if node.orelse:
            raise self.error(node, "while ... else is not supported")
        cond = self.condition(node.test)
        self.builder.begin_while(cond, self.span(node))
        with self.vars.scope():
            self.visit_body(node.body)
        self.builder.end_while()

    def visit_If(self, node):
        cond = self.expr(node.test)
        if not isinstance(cond, (_core.PrimExpr, LocalVar)):
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

    def condition(self, node, value=None):
        value = self.load(self.expr(node) if value is None else value)
        if isinstance(value, bool):
            value = self.to_expr(node, value)
        if not isinstance(value, _core.PrimExpr) or value.dtype != "bool":
            raise self.error(node, f"a condition must be a scalar bool, got {self.describe(value)}")
        return value

    def visit_Return(self, node):
        if self.ret_dtype is None:
            if node.value is not None:
                raise self.error(node, "returning a value needs a return annotation (-> S.i32)")
            raise self.error(node, "a bare return is not supported by this version of tessera yet")
        if node.value is None:
            raise self.error(node, f"this function must return a {self.ret_dtype}")
        value = self.to_expr(node.value, self.expr(node.value), self.ret_dtype)
        if value.dtype != self.ret_dtype:
            raise self.error(node, f'return type mismatch: "{self.ret_dtype}" vs. "{value.dtype}"')
        call = _core.Call(self.ret_dtype, _core.Op.get("tir.ret"), [value], self.span(node))
        self.builder.emit(_core.Evaluate(call, self.span(node)))

    # ---- expressions ----
    def expr(self, node):
        method = getattr(self, "expr_" + type(node).__name__, None)
        if method is None:
            raise self.error(node, f"unsupported expression: {type(node).__name__}")
        return method(node)

    def expr_Constant(self, node):
        return node.value

    def expr_Name(self, node):
        return self.lookup_name(node, node.id)

    def expr_Attribute(self, node):
        base = self.expr(node.value)
        if isinstance(base, (_core.PrimExpr, Pointer, LocalVar)):
            raise self.error(node, f"unsupported attribute '{node.attr}' of {self.describe(base)}")
        try:
            return getattr(base, node.attr)
        except AttributeError:
            raise self.error(node, f"{base!r} has no attribute '{node.attr}'") from None

    def expr_Tuple(self, node):
        return tuple(self.expr(e) for e in node.elts)

    def expr_List(self, node):
        return [self.expr(e) for e in node.elts]

    def expr_BinOp(self, node):
        return self.binop(node, node.op, self.expr(node.left), self.expr(node.right))

    def binop(self, node, op, left, right):
        left, right = self.load(left), self.load(right)
        if isinstance(left, Pointer) and isinstance(op, (ast.Add, ast.Sub)):
            return self.pointer_offset(node, left, right, negate=isinstance(op, ast.Sub))
        if not isinstance(left, _core.PrimExpr) and not isinstance(right, _core.PrimExpr):
            return self.python_binop(node, op, left, right)
        a, b = self.coerce(node, left, right)
        span = self.span(node)
        with self.at(node):
            if type(op) in _BINOPS:
                if isinstance(op, ast.FloorDiv) and a.dtype.startswith(("float", "bfloat")):
                    return _core.Call(a.dtype, _core.Op.get("tir.floor"), [_core.Div(a, b, span)], span)
                return _BINOPS[type(op)](a, b, span)
            if type(op) in _BITOPS:
                if not a.dtype.startswith(("int", "uint")):
                    raise self.error(node, f"bitwise operators need integers, got {a.dtype}")
                return _core.Call(a.dtype, _core.Op.get(_BITOPS[type(op)]), [a, b], span)
        raise self.error(node, f"unsupported operator {type(op).__name__}")

    def python_binop(self, node, op, left, right):
        ops = {ast.Add: lambda x, y: x + y, ast.Sub: lambda x, y: x - y, ast.Mult: lambda x, y: x * y,
               ast.Div: lambda x, y: x / y, ast.FloorDiv: lambda x, y: x // y, ast.Mod: lambda x, y: x % y,
               ast.Pow: lambda x, y: x ** y, ast.BitAnd: lambda x, y: x & y, ast.BitOr: lambda x, y: x | y,
               ast.BitXor: lambda x, y: x ^ y, ast.LShift: lambda x, y: x << y, ast.RShift: lambda x, y: x >> y}
        try:
            return ops[type(op)](left, right)
        except Exception as err:
            raise self.error(node, f"{type(err).__name__}: {err}") from None

    def pointer_offset(self, node, ptr, delta, negate):
        if isinstance(delta, int) and isinstance(ptr.offset, int):
            offset = ptr.offset - delta if negate else ptr.offset + delta
        else:
            d = self.to_index(node, delta)
            base = self.to_index(node, ptr.offset)
            offset = _core.Sub(base, d) if negate else _core.Add(base, d)
        return Pointer(ptr.buffer, ptr.element, ptr.scope, offset)

    def expr_UnaryOp(self, node):
        v = self.load(self.expr(node.operand))
        if not isinstance(v, _core.PrimExpr):
            ops = {ast.USub: lambda x: -x, ast.UAdd: lambda x: +x, ast.Not: lambda x: not x, ast.Invert: lambda x: ~x}
            return ops[type(node.op)](v)
        span = self.span(node)
        with self.at(node):
            if isinstance(node.op, ast.UAdd):
                return v
            if isinstance(node.op, ast.USub):
                return _core.Sub(self.const(node, 0, v.dtype), v, span)
            if isinstance(node.op, ast.Not):
                return _core.Not(self.condition(node.operand, v), span)
            if isinstance(node.op, ast.Invert):
                return _core.Call(v.dtype, _core.Op.get("tir.bitwise_not"), [v], span)
        raise self.error(node, "unsupported unary operator")

    def expr_Compare(self, node):
        result = None
        left = self.expr(node.left)
        for op, comp in zip(node.ops, node.comparators):
            right = self.expr(comp)
            if type(op) not in _CMPOPS:
                raise self.error(node, f"unsupported comparison {type(op).__name__}")
            if not isinstance(self.load(left), _core.PrimExpr) and not isinstance(self.load(right), _core.PrimExpr):
                cmp = self.python_compare(node, op, left, right)
            else:
                a, b = self.coerce(node, left, right)
                with self.at(node):
                    cmp = _CMPOPS[type(op)](a, b, self.span(node))
            result = cmp if result is None else self.logical(node, ast.And(), result, cmp)
            left = right
        return result

    def python_compare(self, node, op, left, right):
        ops = {ast.Lt: lambda x, y: x < y, ast.LtE: lambda x, y: x <= y, ast.Gt: lambda x, y: x > y,
               ast.GtE: lambda x, y: x >= y, ast.Eq: lambda x, y: x == y, ast.NotEq: lambda x, y: x != y}
        try:
            return ops[type(op)](left, right)
        except Exception as err:
            raise self.error(node, f"{type(err).__name__}: {err}") from None

    def logical(self, node, op, a, b):
        if not isinstance(a, _core.PrimExpr) and not isinstance(b, _core.PrimExpr):
            return (a and b) if isinstance(op, ast.And) else (a or b)
        a = self.condition(node, a)
        b = self.condition(node, b)
        return (_core.And if isinstance(op, ast.And) else _core.Or)(a, b, self.span(node))

    def expr_BoolOp(self, node):
        value = self.expr(node.values[0])
        for v in node.values[1:]:
            value = self.logical(node, node.op, self.load(value), self.load(self.expr(v)))
        return value

    def expr_IfExp(self, node):
        cond = self.load(self.expr(node.test))
        if not isinstance(cond, _core.PrimExpr):
            return self.expr(node.body if cond else node.orelse)
        cond = self.condition(node.test, cond)
        t, f = self.coerce(node, self.expr(node.body), self.expr(node.orelse))
        with self.at(node):
            return _core.Select(cond, t, f, self.span(node))

    def expr_Subscript(self, node):
        base = self.load(self.expr(node.value))
        if isinstance(base, Pointer):
            if isinstance(node.slice, ast.Slice):
                raise self.error(node.slice, "slice loads are not supported by this version of tessera yet")
            idx = self.offset_index(node, base, self.expr(node.slice))
            with self.at(node):
                return _core.BufferLoad(base.buffer, [idx], None, self.span(node))
        if isinstance(base, _core.PrimExpr):
            raise self.error(node, "lane access v[i] is not supported by this version of tessera yet")
        return self.eval_python(node)

    def expr_Call(self, node):
        func = self.expr(node.func)
        if any(isinstance(a, ast.Starred) for a in node.args):
            raise self.error(node, "*args in calls is not supported")
        if isinstance(func, Intrinsic):
            args = [self.expr(a) for a in node.args]
            kwargs = {k.arg: self.expr(k.value) for k in node.keywords}
            try:
                return func.impl(self, node, *args, **kwargs)
            except TypeError as err:
                if "impl" in str(err) or "argument" in str(err):
                    raise self.error(node, f"S.{func.name}: {err}".replace(f"{func.impl.__name__}()", "")) from None
                raise
        if isinstance(func, PrimFuncObject):
            return self.call_subroutine(node, func)
        if isinstance(func, MacroObject):
            return self.expand_macro(node, func)
        if isinstance(func, DType):
            args = [self.expr(a) for a in node.args]
            if len(args) != 1 or node.keywords:
                raise self.error(node, f"{func!r}() takes exactly one argument")
            return self.convert(node, args[0], func.name)
        if func in (max, min):
            raise self.error(node, f"the builtin {func.__name__}() cannot be used on kernel values; please use S.{func.__name__}")
        args = [self.load(self.expr(a)) for a in node.args]
        kwargs = {k.arg: self.load(self.expr(k.value)) for k in node.keywords}
        if any(isinstance(v, (_core.PrimExpr, Pointer)) for v in list(args) + list(kwargs.values())):
            raise self.error(node, f"{getattr(func, '__name__', func)!r} is not a kernel function: decorate it with @S.prim_func or @S.macro")
        if not callable(func):
            raise self.error(node.func, f"{func!r} is not callable")
        try:
            return func(*args, **kwargs)
        except Exception as err:
            raise self.error(node, f"{type(err).__name__}: {err}") from None

    def convert(self, node, value, dtype):
        value = self.load(value)
        if not isinstance(value, _core.PrimExpr):
            return self.const(node, value, dtype)
        if value.dtype == dtype:
            return value
        with self.at(node):
            return _core.Cast(dtype, value, self.span(node))

    def call_subroutine(self, node, callee):
        params, ret = callee.signature()
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
                if default is __import__("inspect").Parameter.empty:
                    raise self.error(node, f"{callee.name}() is missing the argument '{name}'")
                bound[name] = (node, default)
            arg_node, value = bound[name]
            value = self.load(value)
            if isinstance(ann, PtrType):
                if not isinstance(value, Pointer):
                    raise self.error(arg_node, f"argument '{name}' of {callee.name}() must be a pointer, got {self.describe(value)}")
                if value.element != ann.element and ann.element != "void":
                    raise self.error(arg_node, f"Argument type mismatch: '{name}' expects a pointer to {ann.element}, got one to {value.element}")
                args.append(self.pointer_expr(arg_node, value))
            else:
                e = self.to_expr(arg_node, value, ann.name)
                if e.dtype != ann.name:
                    raise self.error(arg_node, f'Argument type mismatch: \'{name}\' expects "{ann.name}", got "{e.dtype}"')
                args.append(e)
        if callee not in self.callees:
            self.callees.append(callee)
        ret_dtype = ret.name if isinstance(ret, DType) else "void"
        with self.at(node):
            return _core.Call(ret_dtype, _core.GlobalVar(callee.name), args, self.span(node))

    def pointer_expr(self, node, ptr):
        if isinstance(ptr.offset, int) and ptr.offset == 0:
            return ptr.buffer.data
        load = _core.BufferLoad(ptr.buffer, [self.to_index(node, ptr.offset)])
        return _core.Call("handle", _core.Op.get("tir.address_of"), [load], self.span(node))

    def expand_macro(self, node, macro):
        fdef = macro.source.func_def
        import inspect

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
                saved = self.mutable
                self.mutable = _assigned_names(fdef)
                try:
                    self.visit_body(fdef.body)
                finally:
                    self.mutable = saved
        return None
