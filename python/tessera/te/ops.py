"""te's expression functions (TVM's ``te.exp``, ``te.floordiv``, ...), thread axes and tag scopes.

The math and integer-division functions are those of :mod:`tessera.tir.ops`, re-exported.
"""

import functools

from .. import _core
from ..error import TesseraTypeError, TesseraValueError
from ..tir import expr_ops
__all__ = ["abs", "acos", "acosh", "all", "any", "asin", "asinh", "atan", "atanh", "ceil", "cos",
           "cosh", "div", "erf", "exp", "fmod", "floor", "floordiv", "floormod", "if_then_else",
           "indexdiv", "indexmod", "isfinite", "isinf", "isnan", "log", "log2", "log10", "log1p",
           "max_value", "min_value", "nearbyint", "popcount", "power", "round", "rsqrt", "sigmoid",
           "sin", "sinh", "sqrt", "tan", "tanh", "trunc", "truncdiv", "truncmod", "add", "subtract",
           "multiply", "logaddexp", "thread_axis", "tag_scope"]

from ..tir.ops import (abs, acos, acosh, all, any, asin, asinh, atan, atanh, ceil, cos, cosh, div,  # noqa: F401,A004
                      erf, exp, fmod, floor, floordiv, floormod, if_then_else, indexdiv, indexmod,
                      isfinite, isinf, isnan, log, log2, log10, log1p, max_value, min_value, nearbyint,
                      popcount, power, round, rsqrt, sigmoid, sin, sinh, sqrt, tan, tanh, trunc, truncdiv,
                      truncmod)


def add(lhs, rhs, span=None):
    """``lhs + rhs``."""
    return expr_ops.add(lhs, rhs, span)


def subtract(lhs, rhs, span=None):
    """``lhs - rhs``."""
    return expr_ops.sub(lhs, rhs, span)


def multiply(lhs, rhs, span=None):
    """``lhs * rhs``."""
    return expr_ops.mul(lhs, rhs, span)


def logaddexp(a, b, span=None):
    """``log(exp(a) + exp(b))`` computed without overflow: ``max(a, b) + log1p(exp(-|a - b|))``."""
    a, b = expr_ops.match_types(a, b, span)
    m = expr_ops.maximum(a, b, span)
    return expr_ops.add(m, log1p(exp(expr_ops.negate(abs(expr_ops.sub(a, b, span)), span))), span)


def thread_axis(dom=None, tag="", name="", span=None):
    """An IterVar bound to a GPU thread index: ``te.thread_axis("threadIdx.x")`` or
    ``te.thread_axis((0, 32), "threadIdx.x")``."""
    if isinstance(dom, str):
        dom, tag = None, dom
    if not tag:
        raise TesseraTypeError("te.thread_axis: give the thread tag, e.g. \"threadIdx.x\"")
    if dom is not None and not isinstance(dom, _core.Range):
        if not isinstance(dom, (tuple, list)) or len(dom) != 2:
            raise TesseraTypeError(f"te.thread_axis: dom must be a (begin, end) pair or a Range, got {dom!r}")
        begin, end = (expr_ops._index(d) for d in dom)
        dom = _core.Range.from_min_extent(begin, expr_ops.convert(expr_ops.extent_between(begin, end), begin.dtype))
    var = _core.Var(name or tag, "int32")
    return _core.IterVar(dom, var, _core.IterVarType.ThreadIndex, tag, span)


class TagScope:
    """``with te.tag_scope("ewise"):`` (or as a decorator): computes made inside get the tag."""

    _current = None

    def __init__(self, tag):
        self.tag = tag
        self._outer = None

    def __enter__(self):
        if TagScope._current is not None:
            raise TesseraValueError(f"te.tag_scope '{self.tag}' inside tag_scope "
                                   f"'{TagScope._current.tag}': tag scopes do not nest")
        self._outer, TagScope._current = TagScope._current, self
        return self

    def __exit__(self, *exc):
        TagScope._current = self._outer

    def __call__(self, fdecorate):
        @functools.wraps(fdecorate)
        def tagged(*args, **kwargs):
            with self:
                return fdecorate(*args, **kwargs)

        return tagged


def tag_scope(tag):
    """A scope (``with``) or decorator giving every compute made inside the tag ``tag``."""
    return TagScope(tag)


def current_tag():
    return TagScope._current.tag if TagScope._current is not None else ""


