"""Expressions of the DSL: operators, subscripts, attributes, calls and pointers.

Operators follow the language reference: integer ``/`` and ``//`` truncate like C, ``%`` keeps
the dividend's sign, ``>>`` is arithmetic for signed types, comparisons of vectors give masks,
``& | ^ ~`` work on integers and masks, and ``and``/``or``/``not`` on scalar bools.
"""

import ast

import numpy as np

from .. import _core
from . import types as T
from . import typing as TY
from .function import MacroObject, PrimFuncObject
from .intrinsics import Intrinsic
from .masks import mask_lanes
from .pointers import PointerParser
from .types import DType, PtrType
from .values import UNBOUNDED, BoundMethod, BufferView, LocalVar, Pointer, PointerSlot, PointerVar, is_expr

_ARITH = {ast.Add: _core.Add, ast.Sub: _core.Sub, ast.Mult: _core.Mul}
_BITS = {ast.BitAnd: "tir.bitwise_and", ast.BitOr: "tir.bitwise_or", ast.BitXor: "tir.bitwise_xor",
         ast.LShift: "tir.shift_left", ast.RShift: "tir.shift_right"}
_CMP = {ast.Lt: _core.LT, ast.LtE: _core.LE, ast.Gt: _core.GT, ast.GtE: _core.GE,
        ast.Eq: _core.EQ, ast.NotEq: _core.NE}
_PY_BINOPS = {
    ast.Add: lambda x, y: x + y, ast.Sub: lambda x, y: x - y, ast.Mult: lambda x, y: x * y,
    ast.Div: lambda x, y: x / y, ast.FloorDiv: lambda x, y: x // y, ast.Mod: lambda x, y: x % y,
    ast.Pow: lambda x, y: x ** y, ast.BitAnd: lambda x, y: x & y, ast.BitOr: lambda x, y: x | y,
    ast.BitXor: lambda x, y: x ^ y, ast.LShift: lambda x, y: x << y, ast.RShift: lambda x, y: x >> y,
    ast.MatMult: lambda x, y: x @ y,
}
_PY_CMP = {ast.Lt: lambda x, y: x < y, ast.LtE: lambda x, y: x <= y, ast.Gt: lambda x, y: x > y,
           ast.GtE: lambda x, y: x >= y, ast.Eq: lambda x, y: x == y, ast.NotEq: lambda x, y: x != y,
           ast.Is: lambda x, y: x is y, ast.IsNot: lambda x, y: x is not y,
           ast.In: lambda x, y: x in y, ast.NotIn: lambda x, y: x not in y}
_OP_NAMES = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//",
             ast.Mod: "%", ast.Pow: "**", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^",
             ast.LShift: "<<", ast.RShift: ">>", ast.MatMult: "@"}
_CMP_NAMES = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}


def _is_mask(value):
    return is_expr(value) and T.is_bool(value.dtype) and T.lanes_of(value.dtype) > 1


def _is_const_zero(e):
    """Whether ``e`` is the constant 0 (or a vector of it)."""
    if getattr(e, "_kind", None) == "Broadcast":
        e = e.value
    return isinstance(e, _core.IntImm) and e.value == 0


class ExpressionParser(PointerParser):
    """Expression half of the DSL parser; :class:`tessera.dsl.parser.DSLParser` adds
    statements. Every helper takes the AST node that errors point at."""

    # ---- small helpers used by intrinsics ----------------------------------------------------

    def span(self, node):
        return self.source.span(node)

    def describe(self, value):
        if isinstance(value, LocalVar):
            return f"a {value.dtype} variable"
        if is_expr(value):
            return f"a {value.dtype} expression"
        if isinstance(value, (Pointer, PointerVar, PointerSlot)):
            elem = value.base.element if isinstance(value, PointerVar) else value.element
            return f"a pointer to {elem}"
        if isinstance(value, BufferView):
            return f"a {value.dtype} buffer"
        return f"the Python value {value!r}"

    def static_int(self, node, value, what):
        """A compile-time integer argument."""
        value = self.load(value)
        if isinstance(value, _core.IntImm):
            return value.value
        if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
            return int(value)
        # A name bound once to an integer constant (``step = 2``) is that constant.
        bound = getattr(self, "const_lets", {}).get(id(value))
        if bound is not None and bound[0] is value:
            return bound[1]
        raise self.error(node, f"{what} must be a compile-time integer, got {self.describe(value)}")

    def to_index(self, node, value):
        """An int32 index expression."""
        value = self.load(value)
        if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
            return _core.IntImm("int32", int(value), self.span(node))
        if not is_expr(value) or not T.is_int(value.dtype) or T.lanes_of(value.dtype) != 1:
            raise self.error(node, f"an index must be an integer, got {self.describe(value)}")
        if value.dtype != "int32":
            value = _core.Cast("int32", value, self.span(node))
        return value

    def load(self, value):
        """The current value of a mutable variable; other values as they are."""
        if isinstance(value, LocalVar):
            return _core.BufferLoad(value.buffer, [_core.IntImm("int32", 0)])
        if isinstance(value, PointerVar):
            return value.base.moved(self.load(value.offset_var))
        if isinstance(value, PointerSlot):
            # The address it holds now, in a pointer of its own.
            var = _core.Var.pointer(value.name, value.storage, value.scope, value.span)
            self.builder.emit_let(var, _core.BufferLoad(value.buffer, [_core.IntImm("int32", 0)]),
                                  value.span)
            dtype = "int8" if value.element == "void" else value.element
            buf = _core.Buffer(var, dtype, [_core.IntImm("int32", UNBOUNDED)], name=f"{value.name}_buf",
                               span=value.span)
            self.builder.emit_decl_buffer(buf, value.span)
            return Pointer(buf, value.element, value.scope, 0)
        return value

    def to_expr(self, node, value, dtype=None):
        """``value`` as an expression: literals become constants of ``dtype`` (default int32,
        float32 or bool)."""
        value = self.load(value)
        if is_expr(value):
            return value
        if isinstance(value, (bool, int, float, np.generic)):
            return TY.default_expr(self, node, value) if dtype is None else TY.as_type(
                self, node, value, dtype)
        raise self.error(node, f"expected a number or a kernel value, got {self.describe(value)}")

    def condition(self, node, value=None):
        value = self.load(self.expr(node) if value is None else value)
        if isinstance(value, (bool, np.bool_)):
            value = TY.constant(self, node, bool(value), "bool")
        if is_expr(value) and T.lanes_of(value.dtype) == 1 and value.dtype != "bool" and \
                (T.is_int(value.dtype) or T.is_float(value.dtype)):
            # A scalar number is true when it is not zero, as in C (``if tail:``).
            with self.at(node):
                value = _core.NE(value, TY.constant(self, node, 0, value.dtype), self.span(node))
        if not is_expr(value) or value.dtype != "bool":
            raise self.error(node, f"a condition must be a scalar bool, got {self.describe(value)}")
        return value

    def call_op(self, node, dtype, name, args):
        with self.at(node):
            return _core.Call(dtype, _core.Op.get(name), list(args), self.span(node))

    def emit_call(self, node, name, args=()):
        """Emit a void dsl op call as a statement."""
        with self.at(node):
            self.builder.emit(_core.Evaluate(self.call_op(node, "void", name, args), self.span(node)))

    # ---- dispatch ----------------------------------------------------------------------------

    def expr(self, node):
        method = getattr(self, "expr_" + type(node).__name__, None)
        if method is None:
            raise self.error(node, f"unsupported expression: {type(node).__name__}")
        try:
            return method(node)
        except RecursionError:
            raise self.nested_too_deeply(node) from None

    def expr_Constant(self, node):
        return node.value

    def expr_Name(self, node):
        return self.lookup_name(node, node.id)

    def expr_Tuple(self, node):
        return tuple(self.expr(e) for e in node.elts)

    def expr_List(self, node):
        return [self.expr(e) for e in node.elts]

    def expr_Dict(self, node):
        return self.eval_python(node)

    def expr_JoinedStr(self, node):
        return self.eval_python(node)

    # ---- operators ---------------------------------------------------------------------------

    def expr_BinOp(self, node):
        # A left-associated chain (a + b + c + ...) is walked along its left operands without
        # recursion, so a sum of thousands of terms parses; operands still go left to right.
        return self.fold_left_chain(node, lambda n, left, right: self.binop(n, n.op, left, right))

    def binop(self, node, op, left, right):
        left, right = self.load(left), self.load(right)
        if isinstance(left, Pointer) or isinstance(right, Pointer):
            return self.pointer_arith(node, op, left, right)
        if not is_expr(left) and not is_expr(right):
            try:
                return _PY_BINOPS[type(op)](left, right)
            except Exception as err:
                raise self.error(node, f"{type(err).__name__}: {err}") from None
        kind = type(op)
        sym = _OP_NAMES.get(kind, "?")
        if kind in (ast.LShift, ast.RShift):
            return self.shift(node, kind, left, right)
        if kind in (ast.BitAnd, ast.BitOr, ast.BitXor) and (_is_mask(left) or _is_mask(right) or
                                                           self._is_bool(left) or self._is_bool(right)):
            return self.logic(node, kind, left, right)
        a, b = TY.unify(self, node, left, right, promote=True)
        t = a.dtype
        self.check_not_bf16_scalar(node, sym, t)
        span = self.span(node)
        if kind is ast.Pow:
            if not T.is_float(t):
                raise self.error(node, f'Operator "pow" only supports float, but got: "{t}"')
            from .intrinsics import REGISTRY

            return REGISTRY["pow"].impl(self, node, a, b)
        if T.is_bool(t):
            raise self.error(node, f'operator {sym} is not defined on "{t}"')
        with self.at(node):
            if kind in _ARITH:
                if kind is ast.Mult and T.lanes_of(t) > 1 and T.bits_of(t) == 8:
                    raise self.error(node, f'vector multiplication (S.vmul) does not support 8-bit '
                                           f'elements ("{t}")')
                return _ARITH[kind](a, b, span)
            if kind in (ast.Div, ast.FloorDiv, ast.Mod) and not T.is_float(t) and _is_const_zero(b):
                raise self.error(node, f"integer {'modulo' if kind is ast.Mod else 'division'} by zero")
            if kind in (ast.Div, ast.FloorDiv):
                q = _core.Div(a, b, span)
                if kind is ast.FloorDiv and T.is_float(t):
                    return _core.Call(t, _core.Op.get("tir.floor"), [q], span)
                return q
            if kind is ast.Mod:
                return _core.Mod(a, b, span)
            if kind in _BITS:
                if not T.is_int(t):
                    raise self.error(node, f'operator {sym} needs integers, got "{t}"')
                return _core.Call(t, _core.Op.get(_BITS[kind]), [a, b], span)
        raise self.error(node, f'operator {sym} is not supported on kernel values; '
                               f'use S.pow for powers of floats' if kind is ast.Pow else
                               f'operator {sym} is not supported on kernel values')

    def check_not_bf16_scalar(self, node, sym, dtype):
        """Operators do not compute on bfloat16 scalars (as in Compass: the NPU has no bfloat16
        scalar instructions, only bfloat16 vector ones)."""
        if dtype == "bfloat16":
            raise self.error(node, f'operator {sym} on "bfloat16" scalars: there is no bfloat16 '
                                   f'scalar arithmetic; convert the operands to float32 first '
                                   f'(S.fp32(x)), or compute on bfloat16 vectors')

    def _is_bool(self, value):
        return isinstance(value, (bool, np.bool_)) or (is_expr(value) and value.dtype == "bool")

    def logic(self, node, kind, left, right):
        """& | ^ on masks and scalar bools."""
        a, b = TY.unify(self, node, left, right)
        if not T.is_bool(a.dtype):
            raise TY.mismatch(self, node, a.dtype, b.dtype)
        span = self.span(node)
        with self.at(node):
            if kind is ast.BitAnd:
                return _core.And(a, b, span)
            if kind is ast.BitOr:
                return _core.Or(a, b, span)
            if T.lanes_of(a.dtype) == 1:
                return _core.NE(a, b, span)
            return _core.Call(a.dtype, _core.Op.get("tir.bitwise_xor"), [a, b], span)

    def shift(self, node, kind, x, count):
        """Shifts: the count is read as unsigned and may have either sign of x's width."""
        x, count = self.to_expr(node, x), self.load(count)
        if T.lanes_of(x.dtype) == 1 and is_expr(count) and T.lanes_of(count.dtype) > 1 and \
                T.is_int(x.dtype):
            # A scalar shifted by a vector of counts: the scalar is broadcast to the counts' lanes.
            x = _core.Broadcast(x, T.lanes_of(count.dtype), self.span(node))
        t = x.dtype
        if not T.is_int(t):
            raise self.error(node, f'shifts need integers, got "{t}"')
        if is_expr(count):
            ct = count.dtype
            if not T.is_int(ct):
                raise self.error(node, f'a shift count must be an integer, got "{ct}"')
            if T.lanes_of(ct) != 1 and T.lanes_of(ct) != T.lanes_of(t):
                raise TY.mismatch(self, node, t, ct)
            if T.bits_of(ct) != T.bits_of(t):
                if T.lanes_of(ct) == 1:
                    count = _core.Cast(T.element_of(t), count, self.span(node))
                else:
                    raise TY.mismatch(self, node, t, ct)
            elif T.element_of(ct) != T.element_of(t):
                count = _core.Call(T.with_lanes(t, T.lanes_of(ct)), _core.Op.get("tir.reinterpret"),
                                   [count], self.span(node))
            if T.lanes_of(count.dtype) == 1 and T.lanes_of(t) > 1:
                count = _core.Broadcast(count, T.lanes_of(t), self.span(node))
            if T.lanes_of(t) == 1:
                # A scalar shifts on the 32-bit scalar unit, which reads the count modulo 32:
                # int16 x << -29 is x << 3 (as Compass); counts from the width up to 31 give 0
                # (or the sign for >>) in the type's own width.
                count = _core.Call(count.dtype, _core.Op.get("tir.bitwise_and"),
                                   [count, TY.constant(self, node, 31, count.dtype)], self.span(node))
        else:
            c = int(count)
            if T.lanes_of(t) == 1 and not 0 <= c < T.bits_of(t):
                raise self.error(node, f"a scalar shift count must be in [0, {T.bits_of(t)}), got {c}")
            lo, hi = TY.int_range(t)
            count = TY.constant(self, node, c if lo <= c <= hi else c % (hi - lo + 1), t)
        with self.at(node):
            return _core.Call(t, _core.Op.get(_BITS[kind]), [x, count], self.span(node))

    def expr_UnaryOp(self, node):
        return self.unary(node, node.op, self.expr(node.operand))

    def unary(self, node, op, value):
        v = self.load(value)
        if not is_expr(v):
            ops = {ast.USub: lambda x: -x, ast.UAdd: lambda x: +x, ast.Not: lambda x: not x,
                   ast.Invert: lambda x: ~x}
            return ops[type(op)](v)
        t = v.dtype
        span = self.span(node)
        with self.at(node):
            if isinstance(op, ast.UAdd):
                return v
            if isinstance(op, ast.USub):
                if T.is_bool(t):
                    raise self.error(node, f'unary - is not defined on "{t}"')
                self.check_not_bf16_scalar(node, "-", t)
                return _core.Sub(TY.constant(self, node, 0, t), v, span)
            if isinstance(op, ast.Not):
                if t != "bool":
                    raise self.error(node, f'"not" works on scalar bools, got "{t}"; use ~ on masks')
                return _core.Not(v, span)
            if T.is_bool(t):
                return _core.Not(v, span)
            if not T.is_int(t):
                raise self.error(node, f'operator ~ needs integers or masks, got "{t}"')
            return _core.Call(t, _core.Op.get("tir.bitwise_not"), [v], span)

    def expr_Compare(self, node):
        result = None
        left = self.expr(node.left)
        for op, comp in zip(node.ops, node.comparators):
            right = self.expr(comp)
            cmp = self.compare(node, op, left, right)
            if result is None:
                result = cmp
            else:
                result = self.logical(node, ast.And(), result, cmp)
            left = right
        return result

    def compare(self, node, op, left, right):
        left, right = self.load(left), self.load(right)
        if type(op) not in _CMP or (not is_expr(left) and not is_expr(right) and
                                    not isinstance(left, Pointer) and not isinstance(right, Pointer)):
            try:
                return _PY_CMP[type(op)](left, right)
            except Exception as err:
                raise self.error(node, f"{type(err).__name__}: {err}") from None
        if isinstance(left, Pointer) and isinstance(right, Pointer):
            return self.pointer_compare(node, op, left, right)
        if isinstance(left, Pointer) or isinstance(right, Pointer):
            raise self.error(node, "a pointer compares only with another pointer; use p.is_nullptr()")
        a, b = TY.unify(self, node, left, right, arithmetic=False)
        self.check_not_bf16_scalar(node, _CMP_NAMES[type(op)], a.dtype)
        span = self.span(node)
        with self.at(node):
            if _is_mask(a):
                if not isinstance(op, (ast.Eq, ast.NotEq)):
                    raise self.error(node, f'masks compare only with == and !=, got "{a.dtype}"')
                diff = _core.Call(a.dtype, _core.Op.get("tir.bitwise_xor"), [a, b], span)
                return diff if isinstance(op, ast.NotEq) else _core.Not(diff, span)
            return _CMP[type(op)](a, b, span)

    def logical(self, node, op, a, b):
        a, b = self.load(a), self.load(b)
        if not is_expr(a) and not is_expr(b):
            return (a and b) if isinstance(op, ast.And) else (a or b)
        for v in (a, b):
            if is_expr(v) and v.dtype != "bool":
                raise self.error(node, f'"and"/"or" work on scalar bools and single mask lanes, got '
                                       f'"{v.dtype}"; use & and | on masks')
        a = self.condition(node, a)
        b = self.condition(node, b)
        return (_core.And if isinstance(op, ast.And) else _core.Or)(a, b, self.span(node))

    def expr_BoolOp(self, node):
        value = self.load(self.expr(node.values[0]))
        for v in node.values[1:]:
            if not is_expr(value):
                # Python semantics for compile-time values: short-circuit.
                if isinstance(node.op, ast.And) and not value:
                    return value
                if isinstance(node.op, ast.Or) and value:
                    return value
                value = self.load(self.expr(v))
                continue
            value = self.logical(node, node.op, value, self.load(self.expr(v)))
        return value

    def expr_IfExp(self, node):
        cond = self.load(self.expr(node.test))
        if not is_expr(cond):
            return self.expr(node.body if cond else node.orelse)
        if _is_mask(cond):
            t, f = TY.unify(self, node, self.expr(node.body), self.expr(node.orelse))
            if T.lanes_of(t.dtype) != T.lanes_of(cond.dtype):
                raise self.error(node, f'the mask {cond.dtype} and the values {t.dtype} differ in lanes')
        else:
            cond = self.condition(node.test, cond)
            t, f = TY.unify(self, node, self.expr(node.body), self.expr(node.orelse))
        with self.at(node):
            return _core.Select(cond, t, f, self.span(node))

    # ---- subscripts --------------------------------------------------------------------------

    def expr_Subscript(self, node):
        base = self.load(self.expr(node.value))
        if isinstance(base, (Pointer, BufferView)) or is_expr(base):
            return self.subscript(node, base, self.index_value(node.slice))
        return self.eval_python(node)

    def index_value(self, node):
        """A subscript: a value, a slice (start, stop, step) or a tuple of them."""
        if isinstance(node, ast.Slice):
            return slice(*(None if n is None else self.load(self.expr(n))
                           for n in (node.lower, node.upper, node.step)))
        if isinstance(node, ast.Tuple):
            return tuple(self.index_value(e) for e in node.elts)
        return self.load(self.expr(node))

    def subscript(self, node, base, index):
        base = self.load(base)
        if isinstance(base, BufferView):
            base, index = self.flatten(node, base, index)
        if isinstance(base, Pointer):
            if isinstance(index, slice):
                base, index = self.vector_slice(node, base, index)
                idx, lanes = self.slice_ramp(node, base, index)
                with self.at(node):
                    return _core.BufferLoad(base.buffer, [idx], None, self.span(node))
            if base.element == "void":
                raise self.error(node, 'cannot access a "void" pointer; use p.as_ptr(dtype) first')
            if T.is_virtual_vector(base.element):
                buf, ramp = self.virtual_access(node, base, index)
                with self.at(node):
                    return _core.BufferLoad(buf, [ramp], None, self.span(node))
            idx = self.offset_index(node, base, index)
            with self.at(node):
                return _core.BufferLoad(base.buffer, [idx], None, self.span(node))
        if is_expr(base) and T.lanes_of(base.dtype) > 1:
            return self.get_lane(node, base, index)
        raise self.error(node, f"cannot subscript {self.describe(base)}")

    def get_lane(self, node, vec, index):
        lanes = T.lanes_of(vec.dtype)
        if isinstance(index, (int, np.integer)):
            if not 0 <= index < lanes:
                raise self.error(node, f"lane {index} is out of range for {vec.dtype} (lanes 0-{lanes - 1})")
        idx = self.to_index(node, index)
        return self.call_op(node, T.element_of(vec.dtype), "dsl.get_lane", [vec, idx])

    # ---- attributes --------------------------------------------------------------------------

    def expr_Attribute(self, node):
        raw = self.expr(node.value)
        base = self.load(raw)
        attr = node.attr
        if isinstance(raw, LocalVar) and attr == "addr":
            # The address of a variable: a private pointer to its storage.
            return Pointer(raw.buffer, raw.dtype, "private")
        if is_expr(base):
            if attr == "astype":
                return BoundMethod(attr, base, _astype)
            if attr == "dtype":
                return DType(base.dtype)
            if attr == "lanes":
                return T.lanes_of(base.dtype)
        elif isinstance(base, Pointer):
            if attr == "as_ptr":
                return BoundMethod(attr, base, lambda p, n, ptr, dtype: p.as_ptr(n, ptr, dtype))
            if attr == "is_nullptr":
                # A property, as in Compass (``if p.is_nullptr:``); ``p.is_nullptr()`` is read
                # the same way (expr_Call).
                with self.at(node):
                    return self.call_op(node, "bool", "dsl.is_nullptr", [self.pointer_expr(node, base)])
            if attr == "dtype":
                return DType(base.element) if base.element != "void" else "void"
            if attr == "scope":
                return base.scope
        elif isinstance(base, BufferView):
            if attr == "addr_of":
                return BoundMethod(attr, base, _addr_of)
            if attr == "shape":
                return tuple(base.shape)
            if attr == "dtype":
                return DType(base.dtype)
        else:
            try:
                return getattr(base, attr)
            except AttributeError:
                from ..error import describe_missing_attribute

                alias = node.value.id if isinstance(node.value, ast.Name) else None
                raise self.error(node, describe_missing_attribute(base, attr, alias)) from None
        raise self.error(node, f"unsupported attribute '{attr}' of {self.describe(base)}")

    # ---- calls -------------------------------------------------------------------------------

    def expr_Call(self, node):
        if isinstance(node.func, ast.Attribute) and node.func.attr == "is_nullptr" \
                and not node.args and not node.keywords:
            value = self.expr(node.func)
            if is_expr(value):  # p.is_nullptr(): the property, called
                return value
        func = self.expr(node.func)
        if any(isinstance(a, ast.Starred) for a in node.args):
            args = []
            for a in node.args:
                if isinstance(a, ast.Starred):
                    args.extend(self.load(self.expr(a.value)))
                else:
                    args.append(self.load(self.expr(a)))
        else:
            args = None
        if isinstance(func, PrimFuncObject):
            return self.call_subroutine(node, func)
        if isinstance(func, MacroObject):
            return self.expand_macro(node, func)
        if args is None:
            args = [self.load(self.expr(a)) for a in node.args]
        kwargs = {k.arg: self.load(self.expr(k.value)) for k in node.keywords}
        if isinstance(func, Intrinsic):
            return self.call_intrinsic(node, func, args, kwargs)
        if isinstance(func, DType):
            return self.construct(node, func, args, kwargs)
        if isinstance(func, BoundMethod):
            try:
                return func.impl(self, node, func.owner, *args, **kwargs)
            except TypeError as err:
                raise self.error(node, f".{func.name}(): {err}") from None
        if func in (max, min):
            raise self.error(node, f"the builtin {func.__name__}() cannot be used on kernel values; "
                                   f"please use S.{func.__name__}")
        if func is print:
            raise self.error(node, "print() would run while the kernel is parsed, not when it runs; "
                                   "use S.printf to print from the kernel")
        if isinstance(node.func, ast.Name):
            self.refuse_dsl_annotations(node, func)
        if not callable(func):
            raise self.error(node.func, f"{func!r} is not callable")
        return self.call_python(node, func, args, kwargs)

    def call_intrinsic(self, node, func, args, kwargs):
        import inspect

        try:
            inspect.signature(func.impl).bind(self, node, *args, **kwargs)
        except TypeError as err:
            raise self.error(node, f"S.{func.name}(): {err}") from None
        return func.impl(self, node, *args, **kwargs)

    def refuse_dsl_annotations(self, node, func):
        """A plain Python helper called by name is run at parse time and its annotations are never
        applied, so one that names a DSL type (``b: S.i32``, ``-> S.ptr(...)``) is refused, as
        Compass refuses it: it is most likely a sub-function that lacks ``@S.prim_func``."""
        import inspect

        if not inspect.isfunction(func) or func.__module__.split(".")[0] in ("tessera", "tvm"):
            return
        for name, ann in func.__annotations__.items():
            if isinstance(ann, (DType, PtrType)):
                what = "its return type" if name == "return" else f"its parameter '{name}'"
                raise self.error(node, f"{func.__name__}() is a plain Python function, yet {what} is "
                                       f"annotated with the DSL type {ann!r}, which would have no "
                                       f"effect; decorate it with @S.prim_func to make it a DSL "
                                       f"function, or drop the annotation")

    def call_python(self, node, func, args, kwargs):
        """A plain Python function: run now; kernel values inside it are symbolic."""
        from . import symbolic

        kernel_values = (_core.PrimExpr, Pointer, BufferView)
        symbolic_call = any(isinstance(v, kernel_values) for v in list(args) + list(kwargs.values()))
        try:
            if not symbolic_call:
                return func(*args, **kwargs)
            with symbolic.running(self, node):
                result = func(*symbolic.wrap(list(args)), **{k: symbolic.wrap(v) for k, v in kwargs.items()})
            return symbolic.unwrap(result)
        except Exception as err:
            from ..error import TesseraError

            if isinstance(err, TesseraError):
                raise
            raise self.error(node, f"{type(err).__name__}: {err}") from None

    def construct(self, node, dtype, args, kwargs):
        """``S.int8(100)``, ``S.int32x8(1)``, ``S.int32x8([...])``, ``S.boolx8("4T")``."""
        from .intrinsics.conversion import cast_value

        if kwargs or len(args) != 1:
            raise self.error(node, f"{dtype!r}() takes exactly one argument")
        value = self.load(args[0])
        name = dtype.name
        lanes = dtype.lanes
        elem = T.element_of(name)
        if lanes == 1:
            if isinstance(value, str):
                if not T.is_float(name):
                    raise self.error(node, f"{dtype!r}() of the string {value!r}")
                try:
                    value = float(value)
                except ValueError:
                    raise self.error(node, f'{dtype!r}() accepts the strings "inf", "-inf" and "nan", '
                                           f'got {value!r}') from None
            if is_expr(value) and T.lanes_of(value.dtype) > 1:
                # S.int32(v) of a vector is S.cast(v, "int32"): each lane converted.
                return cast_value(self, node, value, name)
            if not is_expr(value):
                if T.is_int(name) and not isinstance(value, float) and not TY.fits(int(value), name):
                    raise self.error(node, f"value {value} is out of range for {name}")
                if T.is_int(name) and isinstance(value, float):
                    value = int(value)  # truncation, as a C cast
                return TY.constant(self, node, value, name)
            return cast_value(self, node, value, name)
        if elem == "bool" and (isinstance(value, str) or mask_lanes(self, node, value, lanes) is not None):
            values = mask_lanes(self, node, value, lanes)
            if not isinstance(value, str) and len(value) != lanes:
                raise self.error(node, f"{dtype!r}() needs exactly {lanes} values, got {len(value)}")
            from .masks import const_mask_expr

            return const_mask_expr(self, node, values)
        if isinstance(value, (list, tuple, np.ndarray)):
            items = list(value)
            if len(items) != lanes:
                raise self.error(node, f"{dtype!r}() needs exactly {lanes} values, got {len(items)}")
            exprs = []
            for item in items:
                item = self.load(item)
                if is_expr(item):
                    exprs.append(cast_value(self, node, item, elem))
                else:
                    exprs.append(self.construct(node, DType(elem), [item], {}))
            return self.call_op(node, name, "dsl.vmake", exprs)
        if is_expr(value) and T.lanes_of(value.dtype) > 1:
            if T.lanes_of(value.dtype) != lanes:
                raise TY.mismatch(self, node, name, value.dtype)
            return cast_value(self, node, value, name)
        if is_expr(value):
            scalar = cast_value(self, node, value, elem)
            return _core.Broadcast(scalar, lanes, self.span(node))
        if isinstance(value, (bool, int, float, np.generic)):
            return TY.as_type(self, node, value, name)
        raise self.error(node, f"{dtype!r}() of {self.describe(value)}")


def _astype(p, node, value, dtype):
    from .intrinsics.conversion import cast_value

    return cast_value(p, node, value, T.canonical(dtype) if isinstance(dtype, str) else dtype.name)


def _addr_of(p, node, view, *indices):
    """``buf.addr_of(i, j)``, ``buf.addr_of((i, j))``, ``buf.addr_of([i, j])``; missing trailing
    indices are 0: ``buf.addr_of(i)`` of a 2-D buffer is the address of row i."""
    if len(indices) == 1 and isinstance(indices[0], (list, tuple)):
        indices = indices[0]
    index = tuple(indices)
    if len(index) < len(view.shape):
        index = index + (0,) * (len(view.shape) - len(index))
    base, flat = p.flatten(node, view, index)
    return p.pointer_arith(node, ast.Add(), base, flat)
