"""Argument checks and IR helpers shared by the intrinsic families."""

from ... import _core
from .. import types as T
from .. import typing as TY
from ..masks import const_mask_expr, to_mask
from ..values import is_expr


def vector(p, node, name, x, what="x"):
    """``x`` as a vector expression (not a mask)."""
    x = p.load(x)
    if not is_expr(x) or T.lanes_of(x.dtype) == 1 or T.is_bool(x.dtype):
        raise p.error(node, f'S.{name}: the arg "{what}" must be a vector, got {p.describe(x)}')
    return x


def value(p, node, name, x, what="x"):
    """``x`` as an expression (a vector or a scalar); literals default to int32/float32."""
    x = p.load(x)
    if not is_expr(x):
        x = p.to_expr(node, x)
    if T.is_bool(x.dtype):
        raise p.error(node, f'S.{name}: the arg "{what}" must be a number, got "{x.dtype}"')
    return x


def check_dtype(p, node, name, dtype, allowed, what="x"):
    """``dtype``'s element must be one of ``allowed`` (names of scalar types)."""
    if T.element_of(dtype) not in allowed:
        raise p.error(node, f'S.{name}: the arg "{what}" has unsupported type "{dtype}"; '
                            f'expected elements of {", ".join(allowed)}')


def check_not_bf16_scalar(p, node, name, dtype):
    """No intrinsic computes on a bfloat16 scalar (as in Compass: the NPU has bfloat16 vector
    instructions only); conversions and loads and stores take one."""
    if dtype == "bfloat16":
        raise p.error(node, f'S.{name} of a "bfloat16" scalar: there is no bfloat16 scalar '
                            f'arithmetic; convert it to float32 first (S.fp32(x)), or compute on '
                            f'bfloat16 vectors')


def check_native(p, node, name, dtype):
    if not T.is_native(dtype):
        raise p.error(node, f'S.{name} on "{dtype}": it works on vectors of the native width only')


def check_multiple(p, node, name, dtype):
    if T.is_bool(dtype):  # masks come in 8, 16 and 32 lanes
        if T.lanes_of(dtype) % 8 != 0:
            raise p.error(node, f'S.{name} on "{dtype}": this API expects a native or '
                                f'multiple-width mask type')
        return
    if T.lanes_of(dtype) % T.native_lanes(T.element_of(dtype)) != 0:
        raise p.error(node, f'S.{name} on "{dtype}": this API expects a native or multiple-width '
                            f'vector type')


def same_type(p, node, name, x, y):
    """Operands of one type; a scalar operand is broadcast."""
    return TY.unify(p, node, x, y, arithmetic=False)


def mask_expr(p, node, mask, lanes):
    """The mask as an expression; all-true for None."""
    pred = to_mask(p, node, mask, lanes)
    return pred if pred is not None else const_mask_expr(p, node, [True] * lanes)


def false_mask(p, node, lanes):
    return const_mask_expr(p, node, [False] * lanes)


def select(p, node, pred, a, b):
    with p.at(node):
        return _core.Select(pred, a, b, p.span(node))


def imm(value, dtype="int32"):
    return _core.IntImm(dtype, int(value))


def call(p, node, dtype, op, args):
    return p.call_op(node, dtype, op, args)


def flag(p, node, name, value, what):
    if value not in (True, False, None, 0, 1):
        raise p.error(node, f'S.{name}: the arg "{what}" must be a compile-time bool, got {value!r}')
    return bool(value)


INTS = ("int8", "uint8", "int16", "uint16", "int32", "uint32")
FLOATS = ("float16", "float32", "bfloat16")
NUMBERS = INTS + FLOATS


def undefined_inactive(p, node, value, mask):
    """``value`` whose inactive lanes (under ``mask``) are undefined: PySim fills them with a
    fixed pattern so that a program reading them sees wrong results."""
    pred = to_mask(p, node, mask, T.lanes_of(value.dtype))
    if pred is None:
        if mask is None:
            return value
        # A mask written out with every lane on stays in the IR as written (printed as
        # T.const_pred("32T"), as Compass shows it); dsl.CombineInstructions drops it.
        pred = const_mask_expr(p, node, [True] * T.lanes_of(value.dtype))
    return call(p, node, value.dtype, "dsl.undef_inactive", [value, pred])
