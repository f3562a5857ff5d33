"""The argument checks of the intrinsic table's math functions (S.exp, S.log, ..., S.floor,
S.pow) and S.ceildiv on integer scalars (their entries: table.py)."""

import ast

from ... import _core
from .. import types as T
from .. import typing as TY
from ..values import is_expr
from ._util import FLOATS, call, check_dtype

_SCALAR_FLOATS = ("float16", "float32")


def _math_arg(p, node, name, x, elements=FLOATS, scalar_elements=_SCALAR_FLOATS):
    x = p.load(x)
    if not is_expr(x):
        if isinstance(x, bool) or not isinstance(x, (int, float)):
            raise p.error(node, f"S.{name} expects a float, got {p.describe(x)}")
        x = TY.constant(p, node, float(x), "float32")
    if T.lanes_of(x.dtype) == 1:
        check_dtype(p, node, name, x.dtype, scalar_elements)
    else:
        check_dtype(p, node, name, x.dtype, elements)
    return x


def _pow(p, node, name, op, x, exponent, elements, scalar_elements):
    """The power form of the intrinsic table (table.py): S.pow, ``x ** exponent``; a number
    exponent is broadcast."""
    x = _math_arg(p, node, name, x, elements, scalar_elements)
    e = TY.as_type(p, node, p.load(exponent), x.dtype, "exponent") if is_expr(p.load(exponent)) \
        else TY.as_type(p, node, float(p.load(exponent)), x.dtype, "exponent") if T.lanes_of(x.dtype) == 1 \
        else _core.Broadcast(TY.constant(p, node, float(p.load(exponent)), T.element_of(x.dtype)),
                             T.lanes_of(x.dtype), p.span(node))
    # A scalar too: dsl.AlignVectorWidth computes it in lane 0 of a vector ("dsl.scalar").
    return call(p, node, x.dtype, op, [x, e])


def _ceildiv(p, node, name, x, y, scalar_elements):
    """The ceildiv form of the intrinsic table (table.py): ``(x + y - 1) / y`` on integer scalars
    (truncating); two numbers are folded."""
    x, y = p.load(x), p.load(y)
    if not is_expr(x) and not is_expr(y):
        if y == 0:
            raise p.error(node, f"S.{name}: division by zero")
        q = abs(x + y - 1) // abs(y)
        return q if (x + y - 1 >= 0) == (y > 0) else -q
    a, b = TY.unify(p, node, x, y)
    if T.lanes_of(a.dtype) != 1 or T.element_of(a.dtype) not in scalar_elements:
        raise p.error(node, f'S.{name} expects integer scalars, got "{a.dtype}"')
    s = p.binop(node, ast.Sub(), p.binop(node, ast.Add(), a, b), 1)
    return p.binop(node, ast.Div(), s, b)
