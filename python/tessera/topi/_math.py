"""Private math helpers of the operator library, built on the registered ``tir.*`` intrinsics.

They can be replaced by :mod:`tessera.tir`'s own math functions (``tir.exp``, ...) once those
exist; they are kept private here so that the two never disagree in public.
"""

from .. import _core
from ..error import TesseraTypeError
from ..tir import expr_ops

_FLOAT_ONLY = (
    "exp",
    "exp2",
    "exp10",
    "log",
    "log2",
    "log10",
    "log1p",
    "expm1",
    "sqrt",
    "rsqrt",
    "tanh",
    "sigmoid",
    "erf",
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "sinh",
    "cosh",
    "asinh",
    "acosh",
    "atanh",
    "floor",
    "ceil",
    "round",
    "trunc",
    "nearbyint",
)


def call(name, args, dtype=None):
    """``tir.<name>(*args)`` with the dtype of the first argument (or ``dtype``)."""
    args = [expr_ops.convert(a) for a in args]
    return _core.Call(dtype or args[0].dtype, _core.Op.get("tir." + name), args)


def _unary(name):
    def fn(x):
        x = expr_ops.convert(x)
        if not expr_ops.is_float(x.dtype):
            raise TesseraTypeError(f"{name} needs a floating-point value, got {x.dtype}")
        return call(name, [x])

    fn.__name__ = name
    fn.__doc__ = f"``tir.{name}`` of a floating-point expression."
    return fn


for _name in _FLOAT_ONLY:
    globals()[_name] = _unary(_name)


def abs(x):  # noqa: A001
    """|x| for integers and floats (unsigned values are returned unchanged)."""
    x = expr_ops.convert(x)
    if x.dtype.startswith("uint") or x.dtype == "bool":
        return x
    return call("abs", [x])


def _classify(name):
    def fn(x):
        x = expr_ops.convert(x)
        if not expr_ops.is_float(x.dtype):
            # Integers are never NaN or infinite.
            return expr_ops.const(name == "isfinite", "bool")
        return call(name, [x], "bool")

    fn.__name__ = name
    return fn


isnan, isinf, isfinite = _classify("isnan"), _classify("isinf"), _classify("isfinite")


def power(a, b):
    """``a ** b`` as ``tir.pow``. On integers the code generators print an exact power by
    repeated squaring (no floating-point ``pow``, which is not exact on CUDA): overflow wraps
    like numpy; a negative exponent gives the truncated ``1 / a ** -b``, where numpy raises."""
    a, b = expr_ops.match_types(a, b)
    return call("pow", [a, b])


def if_then_else(cond, t, f):
    """``cond ? t : f`` evaluating only the chosen side (safe around out-of-bounds loads)."""
    t, f = expr_ops.match_types(t, f)
    cond = expr_ops.convert(cond, "bool")
    return call("if_then_else", [cond, t, f], t.dtype)


def select(cond, t, f):
    """``Select(cond, t, f)`` (both sides are evaluated)."""
    t, f = expr_ops.match_types(t, f)
    return _core.Select(expr_ops.convert(cond, "bool"), t, f)


def min_value(dtype):
    """The lowest value of ``dtype`` (``-inf`` is not used: the finite minimum, as TVM)."""
    return _core.te.min_value(str(dtype))


def max_value(dtype):
    """The highest value of ``dtype``."""
    return _core.te.max_value(str(dtype))
