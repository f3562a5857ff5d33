"""Elementwise operators: ``topi.exp(x)``, ``topi.clip(x, 0, 6)``, ``topi.cast(x, "int8")``, ...

Each returns a new tensor of ``x``'s shape computed element by element with no schedule.
"""

from .. import _core
from ..error import TesseraTypeError
from ..te import compute
from ..tir import expr_ops
from . import _math, tag
from .utils import is_tensor


def _check_tensor(x, what):
    if not is_tensor(x):
        raise TesseraTypeError(f"topi.{what} expects a te tensor, got {x!r}")


def _elemwise(name, fn, to_float=False, doc=None):
    def op(x):
        _check_tensor(x, name)
        src = x
        if to_float and src.dtype.startswith(("int", "uint")):
            src = compute(
                x.shape, lambda *i: x[i].astype("float32"), name="T_cast", tag=tag.ELEMWISE
            )
        return compute(src.shape, lambda *i: fn(src[i]), name=f"T_{name}", tag=tag.ELEMWISE)

    op.__name__ = name
    op.__doc__ = doc or f"Elementwise {name} of a tensor."
    return op


def _float_math(name, to_float=False):
    f = getattr(_math, name)

    def fn(v):
        if not expr_ops.is_float(v.dtype):
            raise TesseraTypeError(f"topi.{name} needs a floating-point tensor, got {v.dtype}")
        return f(v)

    return _elemwise(name, fn, to_float)


def _identity(v):
    return v


identity = _elemwise("identity", _identity, doc="A copy of ``x``.")
negative = _elemwise("negative", lambda v: -v, doc="``-x``.")
exp = _float_math("exp")
exp2 = _float_math("exp2")
erf = _float_math("erf")
tanh = _float_math("tanh")
tan = _float_math("tan")
cos = _float_math("cos")
cosh = _float_math("cosh")
sin = _float_math("sin")
sinh = _float_math("sinh")
acos = _float_math("acos")
acosh = _float_math("acosh")
asin = _float_math("asin")
asinh = _float_math("asinh")
atan = _float_math("atan")
atanh = _float_math("atanh")
sigmoid = _float_math("sigmoid")
log = _float_math("log", to_float=True)
log2 = _float_math("log2", to_float=True)
log10 = _float_math("log10", to_float=True)
sqrt = _float_math("sqrt", to_float=True)
rsqrt = _float_math("rsqrt", to_float=True)


def _round_like(name):
    f = getattr(_math, name)
    # Rounding an integer leaves it unchanged.
    return _elemwise(
        name,
        lambda v: f(v) if expr_ops.is_float(v.dtype) else v,
        doc=f"Elementwise {name}; integers are unchanged.",
    )


floor = _round_like("floor")
ceil = _round_like("ceil")
trunc = _round_like("trunc")
round = _round_like("round")  # noqa: A001
abs = _elemwise("abs", _math.abs, doc="``|x|``.")  # noqa: A001
isnan = _elemwise("isnan", _math.isnan, doc="Whether each element is NaN (a bool tensor).")
isinf = _elemwise("isinf", _math.isinf, doc="Whether each element is infinite (a bool tensor).")
isfinite = _elemwise(
    "isfinite", _math.isfinite, doc="Whether each element is finite (a bool tensor)."
)


def _sign(v):
    zero, one = expr_ops.const(0, v.dtype), expr_ops.const(1, v.dtype)
    if v.dtype.startswith("uint") or v.dtype == "bool":
        return _math.select(v > zero, one, zero)
    return _math.select(v > zero, one, _math.select(v < zero, expr_ops.const(-1, v.dtype), zero))


sign = _elemwise("sign", _sign, doc="-1, 0 or 1 after the sign of each element.")


def left_shift(x, n):
    """``x << n`` elementwise (``n`` an int or expression)."""
    _check_tensor(x, "left_shift")
    return compute(x.shape, lambda *i: x[i] << n, name="T_left_shift", tag=tag.ELEMWISE)


def right_shift(x, n):
    """``x >> n`` elementwise (``n`` an int or expression)."""
    _check_tensor(x, "right_shift")
    return compute(x.shape, lambda *i: x[i] >> n, name="T_right_shift", tag=tag.ELEMWISE)


def clip(x, a_min, a_max):
    """Each element limited to ``[a_min, a_max]``.

    >>> y = topi.clip(x, 0.0, 6.0)
    """
    _check_tensor(x, "clip")

    def bound(v, dtype):
        if isinstance(v, _core.PrimExpr):
            return v if v.dtype == dtype else _core.Cast(dtype, v)
        if expr_ops.is_int(dtype) and isinstance(v, float):
            v = int(v) if v.is_integer() else v
            if isinstance(v, float):
                return _core.Cast(dtype, expr_ops.const(v, "float64"))
        return expr_ops.const(v, dtype)

    return compute(
        x.shape,
        lambda *i: expr_ops.maximum(
            expr_ops.minimum(x[i], bound(a_max, x.dtype)), bound(a_min, x.dtype)
        ),
        name="T_clip",
        tag=tag.ELEMWISE,
    )


def cast(x, dtype, span=None):
    """``x`` converted to ``dtype``: a tensor elementwise, or an expression.

    >>> y = topi.cast(x, "float16")
    """
    dtype = _core.canonical_dtype(str(dtype))
    if is_tensor(x):
        return compute(
            x.shape, lambda *i: _cast_value(x[i], dtype), name="T_cast", tag=tag.ELEMWISE
        )
    return expr_ops.cast(x, dtype, span)


def _cast_value(v, dtype):
    if v.dtype == dtype:
        return v
    if dtype == "bool":
        # As numpy: any nonzero value is True.
        return v != expr_ops.const(0, v.dtype)
    return _core.Cast(dtype, v)


def reinterpret(x, dtype):
    """The bits of each element read as ``dtype`` (of the same width)."""
    _check_tensor(x, "reinterpret")
    dtype = _core.canonical_dtype(str(dtype))
    if _core.DataType(dtype).bits != _core.DataType(x.dtype).bits:
        raise TesseraTypeError(f"topi.reinterpret: {x.dtype} and {dtype} have different widths")
    return compute(
        x.shape,
        lambda *i: _math.call("reinterpret", [x[i]], dtype),
        name="T_reinterpret",
        tag=tag.ELEMWISE,
    )


def _fast_exp_value(v):
    # exp(x) = 2^n * exp(r), n = round(x * log2(e)), |r| <= ln(2)/2: a degree-7 Taylor
    # polynomial of exp(r) (error below 1e-7 relative) scaled by building 2^n's exponent bits.
    t = v.dtype
    if t != "float32":
        return _math.exp(v)
    c = lambda k: expr_ops.const(k, t)  # noqa: E731
    x = expr_ops.maximum(expr_ops.minimum(v, c(88.3762626647950)), c(-88.3762626647949))
    n = _math.floor(x * c(1.44269504088896341) + c(0.5))
    r = x - n * c(0.693359375) - n * c(-2.12194440e-4)
    p = c(1.0 / 5040)
    for k in (720, 120, 24, 6, 2, 1, 1):
        p = p * r + c(1.0 / k)
    bits = (_core.Cast("int32", n) + expr_ops.const(127, "int32")) << expr_ops.const(23, "int32")
    return p * _math.call("reinterpret", [bits], "float32")


fast_exp = _elemwise(
    "fast_exp",
    _fast_exp_value,
    doc="``exp(x)`` by a polynomial and an exponent-bit construction (float32); "
    "other types use exp.",
)


# TVM approximates these by rational polynomials; here they are the exact library functions.
fast_tanh = _elemwise("fast_tanh", _math.tanh, doc="``tanh(x)`` (computed exactly).")
fast_erf = _elemwise("fast_erf", _math.erf, doc="``erf(x)`` (computed exactly).")


__all__ = [
    _n
    for _n, _v in list(globals().items())
    if not _n.startswith("_") and callable(_v) and getattr(_v, "__module__", None) == __name__
]


def ceil_log2(x):
    """``ceil(log2(x))`` of an expression; integers compute in float64 and keep their type."""
    x = expr_ops.convert(x)
    if expr_ops.is_float(x.dtype):
        return _math.ceil(_math.log2(x))
    return _core.Cast(x.dtype, _math.ceil(_math.log2(_core.Cast("float64", x))))


__all__.append("ceil_log2")
