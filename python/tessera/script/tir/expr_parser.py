"""Expressions of the T dialect: operators, subscripts, calls of T.* builtins and macros.

A mixin of :class:`TIRParser`. Python values stay Python; an operand that is IR makes the
operation IR (``expr_ops``), so ``i * 4 + 1`` is an expression when ``i`` is a loop variable.
"""

import ast
import inspect

from ... import _core
from ...error import TesseraError
from ...tir import expr_ops
from ...tir.expr_ops import convert
from ..parser.core import VarTable
from .ops import DType

_BINOPS = {
    ast.Add: expr_ops.add, ast.Sub: expr_ops.sub, ast.Mult: expr_ops.mul, ast.Div: expr_ops.div,
    ast.FloorDiv: expr_ops.floordiv, ast.Mod: expr_ops.floormod, ast.Pow: expr_ops.power,
    ast.BitAnd: expr_ops.bitwise_and, ast.BitOr: expr_ops.bitwise_or, ast.BitXor: expr_ops.bitwise_xor,
    ast.LShift: expr_ops.shift_left, ast.RShift: expr_ops.shift_right,
}
_PY_BINOPS = {
    ast.Add: lambda x, y: x + y, ast.Sub: lambda x, y: x - y, ast.Mult: lambda x, y: x * y,
    ast.Div: lambda x, y: x / y, ast.FloorDiv: lambda x, y: x // y, ast.Mod: lambda x, y: x % y,
    ast.Pow: lambda x, y: x ** y, ast.BitAnd: lambda x, y: x & y, ast.BitOr: lambda x, y: x | y,
    ast.BitXor: lambda x, y: x ^ y, ast.LShift: lambda x, y: x << y, ast.RShift: lambda x, y: x >> y,
    ast.MatMult: lambda x, y: x @ y,
}
_CMPOPS = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}
_PY_CMPOPS = {
    ast.Lt: lambda x, y: x < y, ast.LtE: lambda x, y: x <= y, ast.Gt: lambda x, y: x > y,
    ast.GtE: lambda x, y: x >= y, ast.Eq: lambda x, y: x == y, ast.NotEq: lambda x, y: x != y,
    ast.Is: lambda x, y: x is y, ast.IsNot: lambda x, y: x is not y, ast.In: lambda x, y: x in y,
    ast.NotIn: lambda x, y: x not in y,
}


def is_ir(value):
    """Whether a parse-time value is IR (an expression, a thread IterVar or a buffer slice)."""
    return isinstance(value, (_core.PrimExpr, _core.IterVar, expr_ops.BufferSlice))


class MacroReturn(Exception):
    """``return value`` inside a macro: the value of the macro call."""

    def __init__(self, value):
        super().__init__()
        self.value = value


class Callee:
    """``cls.f`` inside an ``@I.ir_module``: calling it builds a Call of the function ``f``."""

    def __init__(self, name, ret_dtype):
        self.name = name
        self.ret_dtype = ret_dtype

    def call(self, parser, node, args, kwargs):

        """The Call node of the module function with the given arguments."""
        if kwargs:
            raise parser.error(node, f"{self.name}() takes positional arguments only")
        exprs = []
        for a in args:
            if isinstance(a, _core.Buffer):
                exprs.append(a.data)
            else:
                with parser.at(node):
                    exprs.append(convert(a))
        with parser.at(node):
            return _core.Call(self.ret_dtype, _core.GlobalVar(self.name), exprs, parser.span(node))


class ExprParsing:
    """Expression handlers of the TIR parser (``expr_<AstNode>`` methods)."""

    def describe(self, value):
        """A short description of a value for messages."""
        if isinstance(value, _core.PrimExpr):
            return f"a {value.dtype} expression"
        if isinstance(value, _core.Buffer):
            return f"the buffer {value.name}"
        return f"the Python value {value!r}"

    def expr(self, node):
        """Evaluates an expression node to IR or a Python value."""
        method = getattr(self, "expr_" + type(node).__name__, None)
        if method is None:
            return self.eval_python(node)
        try:
            return method(node)
        except RecursionError:
            raise self.nested_too_deeply(node) from None

    def expr_Constant(self, node):

        """A literal: the Python value."""
        return node.value

    def expr_Name(self, node):

        """A script variable, else a Python value of the environment."""
        return self.lookup_name(node, node.id)

    def expr_Attribute(self, node):

        """``base.attr`` on IR objects and Python values alike."""
        base = self.expr(node.value)
        try:
            return getattr(base, node.attr)
        except AttributeError:
            from ...error import did_you_mean

            prefix = f"{node.value.id}." if isinstance(node.value, ast.Name) else ""
            hint = did_you_mean(node.attr, dir(base), prefix)
            raise self.error(node, f"{self.describe(base)} has no attribute '{node.attr}'{hint}") from None

    def expr_Tuple(self, node):

        """A tuple of evaluated elements (``*args`` spliced)."""
        return tuple(self._elements(node.elts))

    def expr_List(self, node):

        """A list of evaluated elements (``*args`` spliced)."""
        return list(self._elements(node.elts))

    def _elements(self, elts):
        out = []
        for e in elts:
            if isinstance(e, ast.Starred):
                out.extend(self.expr(e.value))
            else:
                out.append(self.expr(e))
        return out

    def expr_Dict(self, node):

        """A dict of evaluated keys and values."""
        if any(k is None for k in node.keys):
            return self.eval_python(node)
        return {self.expr(k): self.expr(v) for k, v in zip(node.keys, node.values)}

    def expr_BinOp(self, node):

        """An arithmetic or bitwise operator. A left-associated chain (``a + b + c + ...``) is
        walked along its left operands without recursion, so a sum of thousands of terms
        parses; the operands are still evaluated left to right."""
        return self.fold_left_chain(node, lambda n, left, right: self.binop(n, n.op, left, right))

    def binop(self, node, op, left, right):

        """``left op right``: Python on Python values, IR when an operand is an expression."""
        if not is_ir(left) and not is_ir(right):
            try:
                return _PY_BINOPS[type(op)](left, right)
            except Exception as err:
                raise self.error(node, f"{type(err).__name__}: {err}") from None
        fn = _BINOPS.get(type(op))
        if fn is None:
            raise self.error(node, f"unsupported operator {type(op).__name__} on expressions")
        with self.at(node):
            try:
                return fn(left, right, self.span(node))
            except TesseraError:
                raise
            except (TypeError, ValueError) as err:
                raise self.error(node, str(err)) from None

    def expr_UnaryOp(self, node):

        """``-x``, ``+x``, ``not x``, ``~x``."""
        v = self.expr(node.operand)
        if not is_ir(v):
            ops = {ast.USub: lambda x: -x, ast.UAdd: lambda x: +x, ast.Not: lambda x: not x, ast.Invert: lambda x: ~x}
            return ops[type(node.op)](v)
        span = self.span(node)
        with self.at(node):
            if isinstance(node.op, ast.UAdd):
                return convert(v)
            if isinstance(node.op, ast.USub):
                return expr_ops.negate(v, span)
            if isinstance(node.op, ast.Not):
                return expr_ops.logical_not(v, span, fold=False)
            return expr_ops.bitwise_not(v, span)

    def expr_Compare(self, node):

        """Comparisons; a chain ``a < b < c`` is a conjunction."""
        result = None
        left = self.expr(node.left)
        for op, comp in zip(node.ops, node.comparators):
            right = self.expr(comp)
            if not is_ir(left) and not is_ir(right):
                try:
                    cmp = _PY_CMPOPS[type(op)](left, right)
                except Exception as err:
                    raise self.error(node, f"{type(err).__name__}: {err}") from None
            elif type(op) in _CMPOPS:
                with self.at(node):
                    # As TVM's parser: comparisons and and/or/not build nodes (no folding).
                    cmp = expr_ops.compare(_CMPOPS[type(op)], left, right, self.span(node), fold=False)
            else:
                raise self.error(node, f"unsupported comparison {type(op).__name__} on expressions")
            if result is None:
                result = cmp
            else:
                result = self.logical(node, ast.And(), result, cmp)
            left = right
        return result

    def logical(self, node, op, a, b):

        """``a and b`` / ``a or b`` on expressions (Python semantics on Python values)."""
        if not is_ir(a) and not is_ir(b):
            return (a and b) if isinstance(op, ast.And) else (a or b)
        with self.at(node):
            fn = expr_ops.logical_and if isinstance(op, ast.And) else expr_ops.logical_or
            return fn(a, b, self.span(node), fold=False)

    def expr_BoolOp(self, node):

        """``and``/``or`` chains."""
        value = self.expr(node.values[0])
        for v in node.values[1:]:
            if not is_ir(value):
                # Python short-circuit on Python values: `flag and x` is x when flag holds.
                if isinstance(node.op, ast.And) and not value:
                    return value
                if isinstance(node.op, ast.Or) and value:
                    return value
                value = self.expr(v)
                continue
            value = self.logical(node, node.op, value, self.expr(v))
        return value

    def expr_IfExp(self, node):

        """``a if c else b``: chosen while parsing, or ``T.if_then_else`` on an expression (as TVM
        parses it: only the chosen side is evaluated)."""
        cond = self.expr(node.test)
        if not is_ir(cond):
            return self.expr(node.body if cond else node.orelse)
        cond = self.condition(node.test, cond)
        with self.at(node):
            span = self.span(node)
            t, f = expr_ops.match_types(self.expr(node.body), self.expr(node.orelse), span)
            return _core.Call(t.dtype, _core.Op.get("tir.if_then_else"), [cond, t, f], span)

    def subscript_key(self, node):

        """The evaluated index of a subscript, slices as Python slices."""
        def one(n):
            if isinstance(n, ast.Slice):
                return slice(None if n.lower is None else self.expr(n.lower),
                             None if n.upper is None else self.expr(n.upper),
                             None if n.step is None else self.expr(n.step))
            return self.expr(n)

        if isinstance(node, ast.Tuple):
            key = []
            for e in node.elts:
                if isinstance(e, ast.Starred):  # A[(*ij, k)]: the indices of a tuple, spliced
                    key.extend(self.expr(e.value))
                else:
                    key.append(one(e))
            return tuple(key)
        return one(node)

    def expr_Subscript(self, node):

        """``A[i, j]`` on a buffer (a load or a slice), ``x[k]`` on Python values."""
        base = self.expr(node.value)
        key = self.subscript_key(node.slice)
        if isinstance(base, _core.Buffer):
            with self.at(node):
                return expr_ops.buffer_access(base, key, self.span(node))
        if isinstance(base, _core.PrimExpr):
            raise self.error(node, "lane access v[i] of a vector expression is not supported")
        try:
            return base[key]
        except Exception as err:
            raise self.error(node, f"{type(err).__name__}: {err}") from None

    def expr_Call(self, node):

        """A call: T.* builtins, macros, module functions (``cls.f``) or Python callables."""
        # Only the outermost call of an assignment's value takes the target names.
        names, self._names = self._names, None
        try:
            func = self.expr(node.func)
            args = self._elements(node.args)
            kwargs = {}
            for k in node.keywords:
                if k.arg is None:
                    kwargs.update(self.expr(k.value))
                else:
                    kwargs[k.arg] = self.expr(k.value)
        finally:
            self._names = names
        from .entry import MacroObject

        if isinstance(func, MacroObject):
            return self.expand_macro(node, func, args, kwargs)
        if isinstance(func, Callee):
            return func.call(self, node, args, kwargs)
        if getattr(func, "_tessera_builtin", False):
            return self.call_builtin(node, func, args, kwargs)
        if isinstance(func, (_core.PrimFunc,)):
            raise self.error(node, "a prim_func is called from another one inside an @I.ir_module as cls.name(...)")
        if not callable(func):
            raise self.error(node.func, f"{self.describe(func)} is not callable")
        with self.at(node):
            try:
                return func(*args, **kwargs)
            except (TesseraError, MacroReturn):
                raise
            except Exception as err:
                raise self.error(node, f"{type(err).__name__}: {err}") from None

    def call_builtin(self, node, func, args, kwargs):
        """Calls a T.* builtin, reporting a wrong call at the call's position."""
        name = self._builtin_name(node.func)
        target = func.__call__ if isinstance(func, DType) else func
        if "dtype" in kwargs and not _takes_keyword(target, "dtype"):
            # TVM's T.* op wrappers accept and drop dtype= (`T.if_then_else(c, a, b, dtype=...)`):
            # the result type follows from the operands.
            kwargs = {k: v for k, v in kwargs.items() if k != "dtype"}
        try:
            inspect.signature(target).bind(*args, **kwargs)
        except TypeError as err:
            raise self.error(node, f"wrong arguments to {name}: {err}") from None
        except ValueError:
            pass
        with self.at(node):
            try:
                return func(*args, **kwargs)
            except TesseraError:
                raise
            except (TypeError, ValueError, AttributeError) as err:
                raise self.error(node, f"{name}: {err}") from None

    @staticmethod
    def _builtin_name(func_node):
        parts = []
        n = func_node
        while isinstance(n, ast.Attribute):
            parts.append(n.attr)
            n = n.value
        if isinstance(n, ast.Name):
            parts.append(n.id)
        return ".".join(reversed(parts)) or "builtin"

    def expand_macro(self, node, macro, args, kwargs):
        """Parses a macro's body in place of its call; returns what the macro returns."""
        sig = inspect.signature(macro.func)
        if macro.bound_self is not None:
            args = [*macro.bound_self, *args]
        try:
            binding = sig.bind(*args, **kwargs)
        except TypeError as err:
            raise self.error(node, f"{macro.name}(): {err}") from None
        binding.apply_defaults()
        if macro.hygienic:
            table, env = VarTable(), macro.env_now()
        else:
            table, env = self.vars, dict(self.env)
            env.update(macro.env_now())
        self.macro_depth += 1
        try:
            with self.with_source(macro.source, env, table):
                with table.scope():
                    for name, value in binding.arguments.items():
                        table.define(name, value)
                    try:
                        self.visit_body(macro.source.func_def.body)
                    except MacroReturn as ret:
                        return ret.value
        finally:
            self.macro_depth -= 1
        return None


def _takes_keyword(func, name):
    """Whether ``func`` accepts the keyword argument ``name``."""
    try:
        params = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):
        return True
    return any(p.name == name and p.kind != p.POSITIONAL_ONLY or p.kind == p.VAR_KEYWORD
               for p in params)
