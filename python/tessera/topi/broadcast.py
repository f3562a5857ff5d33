"""Broadcasting binary operators with numpy's rules: ``topi.add(A, B)``, ``topi.less(A, 0.5)``.

Each operand is a te tensor or a scalar (a Python number or an expression); two scalars give
an expression. Shapes broadcast as in numpy: trailing dimensions match or one of them is 1.
"""

from .. import _core
from ..error import TesseraTypeError, TesseraValueError
from ..te import compute
from ..tir import expr_ops
from . import _math, tag
from .utils import broadcast_index, broadcast_shape, const_or_none, equal_dims, is_tensor


def _scalar(x, what):
    if isinstance(x, (_core.PrimExpr, bool, int, float)) or (
        hasattr(x, "dtype") and hasattr(x, "item")
    ):
        return x
    raise TesseraTypeError(f"topi.{what}: operands must be te tensors or scalars, got {x!r}")


def _apply(name, fn, lhs, rhs):
    what = name
    if not is_tensor(lhs) and not is_tensor(rhs):
        return fn(*expr_ops.match_types(_scalar(lhs, what), _scalar(rhs, what)))
    if not is_tensor(rhs):
        _scalar(rhs, what)
        return compute(
            lhs.shape, lambda *i: fn(*_operands(lhs[i], rhs)), name=f"T_{name}", tag=tag.ELEMWISE
        )
    if not is_tensor(lhs):
        _scalar(lhs, what)
        return compute(
            rhs.shape, lambda *i: fn(*_operands(lhs, rhs[i])), name=f"T_{name}", tag=tag.ELEMWISE
        )
    shape = broadcast_shape([list(lhs.shape), list(rhs.shape)], f"topi.{name}")
    return compute(
        shape,
        lambda *i: fn(broadcast_index(lhs, i), broadcast_index(rhs, i)),
        name=f"T_{name}",
        tag=tag.BROADCAST,
    )


def _operands(a, b):
    return expr_ops.match_types(a, b)


def _binary(name, fn, doc):
    def op(lhs, rhs):
        return _apply(name, fn, lhs, rhs)

    op.__name__ = name
    op.__doc__ = doc
    return op


def _floor_divide(a, b):
    a, b = expr_ops.match_types(a, b)
    if expr_ops.is_float(a.dtype):
        return _math.floor(a / b)
    return expr_ops.floordiv(a, b)


def _floor_mod(a, b):
    a, b = expr_ops.match_types(a, b)
    if expr_ops.is_float(a.dtype):
        return a - _math.floor(a / b) * b
    return expr_ops.floormod(a, b)


def _trunc_divide(a, b):
    a, b = expr_ops.match_types(a, b)
    if expr_ops.is_float(a.dtype):
        return _math.trunc(a / b)
    return expr_ops.truncdiv(a, b)


def _trunc_mod(a, b):
    a, b = expr_ops.match_types(a, b)
    if expr_ops.is_float(a.dtype):
        return a - _math.trunc(a / b) * b
    return expr_ops.truncmod(a, b)


def _log_add_exp(a, b):
    a, b = expr_ops.match_types(a, b)
    m = expr_ops.maximum(a, b)
    return m + _math.log(_math.exp(a - m) + _math.exp(b - m))


def _bool_op(name, fn):
    def op(a, b):
        a, b = expr_ops.match_types(a, b)
        if a.dtype != "bool":
            raise TesseraTypeError(f"topi.{name} needs bool operands, got {a.dtype}")
        return fn(a, b)

    return op


def _compare(op):
    return lambda a, b: expr_ops.compare(op, a, b)


add = _binary("add", expr_ops.add, "``lhs + rhs`` with broadcasting.")
subtract = _binary("subtract", expr_ops.sub, "``lhs - rhs`` with broadcasting.")
multiply = _binary("multiply", expr_ops.mul, "``lhs * rhs`` with broadcasting.")
divide = _binary(
    "divide",
    expr_ops.div,
    "``lhs / rhs`` with broadcasting; integers divide truncating toward zero (C).",
)
floor_divide = _binary("floor_divide", _floor_divide, "``floor(lhs / rhs)`` with broadcasting.")
trunc_divide = _binary("trunc_divide", _trunc_divide, "``trunc(lhs / rhs)`` with broadcasting.")
mod = _binary(
    "mod",
    expr_ops.truncmod,
    "Remainder of the truncating division (the sign of ``lhs``), with broadcasting.",
)
floor_mod = _binary(
    "floor_mod",
    _floor_mod,
    "Remainder of the floor division (the sign of ``rhs``), with broadcasting.",
)
trunc_mod = _binary("trunc_mod", _trunc_mod, "Remainder of the truncating division.")
maximum = _binary("maximum", expr_ops.maximum, "Elementwise maximum with broadcasting.")
minimum = _binary("minimum", expr_ops.minimum, "Elementwise minimum with broadcasting.")
power = _binary("power", _math.power, "``lhs ** rhs`` with broadcasting.")
log_add_exp = _binary("log_add_exp", _log_add_exp, "``log(exp(lhs) + exp(rhs))``, stably.")
left_shift = _binary("left_shift", expr_ops.shift_left, "``lhs << rhs`` with broadcasting.")
right_shift = _binary("right_shift", expr_ops.shift_right, "``lhs >> rhs`` with broadcasting.")
greater = _binary("greater", _compare(">"), "``lhs > rhs`` (bool) with broadcasting.")
less = _binary("less", _compare("<"), "``lhs < rhs`` (bool) with broadcasting.")
equal = _binary("equal", _compare("=="), "``lhs == rhs`` (bool) with broadcasting.")
not_equal = _binary("not_equal", _compare("!="), "``lhs != rhs`` (bool) with broadcasting.")
greater_equal = _binary("greater_equal", _compare(">="), "``lhs >= rhs`` (bool) with broadcasting.")
less_equal = _binary("less_equal", _compare("<="), "``lhs <= rhs`` (bool) with broadcasting.")
logical_and = _binary(
    "logical_and", _bool_op("logical_and", expr_ops.logical_and), "``lhs and rhs`` on bool tensors."
)
logical_or = _binary(
    "logical_or", _bool_op("logical_or", expr_ops.logical_or), "``lhs or rhs`` on bool tensors."
)
logical_xor = _binary(
    "logical_xor",
    _bool_op("logical_xor", lambda a, b: _core.NE(a, b)),
    "``lhs != rhs`` on bool tensors.",
)
bitwise_and = _binary("bitwise_and", expr_ops.bitwise_and, "``lhs & rhs`` on integers (or bools).")
bitwise_or = _binary("bitwise_or", expr_ops.bitwise_or, "``lhs | rhs`` on integers (or bools).")
bitwise_xor = _binary("bitwise_xor", expr_ops.bitwise_xor, "``lhs ^ rhs`` on integers (or bools).")


def logical_not(data):
    """``not x`` on a bool tensor (or expression)."""
    if not is_tensor(data):
        return expr_ops.logical_not(data)
    if data.dtype != "bool":
        raise TesseraTypeError(f"topi.logical_not needs a bool tensor, got {data.dtype}")
    return compute(
        data.shape, lambda *i: expr_ops.logical_not(data[i]), name="T_logical_not", tag=tag.ELEMWISE
    )


def bitwise_not(data):
    """``~x`` on an integer (or bool) tensor (or expression)."""
    if not is_tensor(data):
        return expr_ops.bitwise_not(data)
    if not (expr_ops.is_int(data.dtype) or data.dtype == "bool"):
        raise TesseraTypeError(f"topi.bitwise_not needs an integer tensor, got {data.dtype}")
    return compute(
        data.shape, lambda *i: expr_ops.bitwise_not(data[i]), name="T_bitwise_not", tag=tag.ELEMWISE
    )


def broadcast_to(data, shape):
    """``data`` broadcast to ``shape`` (numpy's rules).

    >>> B = topi.broadcast_to(A, (4, 7, 3))
    """
    if not is_tensor(data):
        raise TesseraTypeError(f"topi.broadcast_to expects a te tensor, got {data!r}")
    shape = list(shape)
    if len(shape) < len(data.shape):
        raise TesseraTypeError(
            f"topi.broadcast_to: cannot broadcast a tensor of {len(data.shape)} dimensions to "
            f"the shape {tuple(shape)}"
        )
    out = broadcast_shape([list(data.shape), shape], "topi.broadcast_to")
    for o, s in zip(out, shape):
        if const_or_none(s) is not None and not equal_dims(o, s):
            raise TesseraValueError(
                f"topi.broadcast_to: cannot broadcast shape {tuple(data.shape)} to {tuple(shape)}"
            )
    return compute(
        shape, lambda *i: broadcast_index(data, i), name="T_broadcast_to", tag=tag.BROADCAST
    )


__all__ = [
    _n
    for _n, _v in list(globals().items())
    if not _n.startswith("_") and callable(_v) and getattr(_v, "__module__", None) == __name__
]
