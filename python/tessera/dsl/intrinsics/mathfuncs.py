"""Math intrinsics: S.exp, S.log, S.tanh, S.sin, S.cos, S.rsqrt, S.sqrt, S.floor, S.ceil,
S.erf, S.exp2, S.pow on float vectors and scalars, and S.ceildiv on integer scalars."""

import ast

from ... import _core
from .. import types as T
from .. import typing as TY
from ..values import is_expr
from ._registry import intrinsic
from ._util import FLOATS, call, check_dtype, scalar_via_vector

_SCALAR_FLOATS = ("float16", "float32")


def _math_arg(p, node, name, x):
    x = p.load(x)
    if not is_expr(x):
        if isinstance(x, bool) or not isinstance(x, (int, float)):
            raise p.error(node, f"S.{name} expects a float, got {p.describe(x)}")
        x = TY.constant(p, node, float(x), "float32")
    if T.lanes_of(x.dtype) == 1:
        check_dtype(p, node, name, x.dtype, _SCALAR_FLOATS)
    else:
        check_dtype(p, node, name, x.dtype, FLOATS)
    return x


def _unary(p, node, name, x):
    x = _math_arg(p, node, name, x)
    if T.lanes_of(x.dtype) > 1:
        return call(p, node, x.dtype, f"dsl.v{name}", [x])
    if name == "floor":
        return p.call_op(node, x.dtype, "tir.floor", [x])
    return scalar_via_vector(p, node, f"dsl.v{name}", [x], x.dtype)


def _define(name, doc):
    def impl(p, node, x):
        if name == "floor":
            x = _math_arg(p, node, name, x)
            if T.lanes_of(x.dtype) > 1:
                return p.call_op(node, x.dtype, "tir.floor", [x])
        return _unary(p, node, name, x)

    impl.__name__ = name
    impl.__doc__ = doc
    intrinsic(impl, name=name)


for _name, _doc in [("exp", "e to the power x."), ("log", "Natural logarithm."),
                    ("tanh", "Hyperbolic tangent."), ("sin", "Sine."), ("cos", "Cosine."),
                    ("rsqrt", "1 / sqrt(x)."), ("sqrt", "Square root."),
                    ("floor", "Largest integer value not above x."),
                    ("ceil", "Smallest integer value not below x."), ("erf", "Error function."),
                    ("exp2", "2 to the power x.")]:
    _define(_name, f"Lane-wise {_doc} Float vectors and float16/float32 scalars.")


@intrinsic
def pow(p, node, x, exponent):  # noqa: A001  (S.pow)
    """``x ** exponent`` lane-wise; a scalar exponent is broadcast."""
    x = _math_arg(p, node, "pow", x)
    e = TY.as_type(p, node, p.load(exponent), x.dtype, "exponent") if is_expr(p.load(exponent)) \
        else TY.as_type(p, node, float(p.load(exponent)), x.dtype, "exponent") if T.lanes_of(x.dtype) == 1 \
        else _core.Broadcast(TY.constant(p, node, float(p.load(exponent)), T.element_of(x.dtype)),
                             T.lanes_of(x.dtype), p.span(node))
    if T.lanes_of(x.dtype) > 1:
        return call(p, node, x.dtype, "dsl.vpow", [x, e])
    return scalar_via_vector(p, node, "dsl.vpow", [x, e], x.dtype)


@intrinsic
def ceildiv(p, node, x, y):
    """``(x + y - 1) / y`` on integer scalars (truncating)."""
    x, y = p.load(x), p.load(y)
    if not is_expr(x) and not is_expr(y):
        if y == 0:
            raise p.error(node, "S.ceildiv: division by zero")
        q = abs(x + y - 1) // abs(y)
        return q if (x + y - 1 >= 0) == (y > 0) else -q
    a, b = TY.unify(p, node, x, y)
    if T.lanes_of(a.dtype) != 1 or not T.is_int(a.dtype):
        raise p.error(node, f'S.ceildiv expects integer scalars, got "{a.dtype}"')
    s = p.binop(node, ast.Sub(), p.binop(node, ast.Add(), a, b), 1)
    return p.binop(node, ast.Div(), s, b)
