"""te.compute and expression building take fast paths for the common cases (plain functions,
an expression and a Python number, dtype names parsed once); each gives what the general path
(inspect.signature, the full operand matching) gives."""

import functools
import inspect

import pytest

from tessera import te
from tessera.error import TesseraTypeError, TesseraValueError
from tessera.te.tensor import _axis_names, _plain_function_positionals
from tessera.tir import expr_ops


def _by_inspect(fcompute, ndim):
    """The axis names as inspect.signature gives them (the general path)."""
    params = list(inspect.signature(fcompute).parameters.values())
    if any(p.kind == p.VAR_POSITIONAL for p in params):
        return [f"i{d}" for d in range(ndim)]
    return [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
            and p.default is p.empty]


def _posonly(a, b, /, c):
    return a


def _with_default(i, j, scale=2):
    return i


def _kwonly(i, j, *, k=1):
    return i


def _varargs(*idx):
    return idx[0]


def _first_then_varargs(i, *rest):
    return i


@pytest.mark.parametrize("fn, ndim", [
    (lambda i: i, 1),
    (lambda i, j: i, 2),
    (_posonly, 3),
    (_with_default, 2),
    (_kwonly, 2),
    (_varargs, 3),
    (_first_then_varargs, 2),
])
def test_axis_names_of_plain_functions_match_inspect(fn, ndim):
    assert _plain_function_positionals(fn) is not None
    assert _axis_names(fn, ndim, "C") == _by_inspect(fn, ndim)


def test_wrapped_and_other_callables_take_the_general_path():
    def inner(x, y):
        return x

    @functools.wraps(inner)
    def wrapper(*args):
        return inner(*args)

    # functools.wraps sets __wrapped__: inspect.signature reports inner's parameters.
    assert _plain_function_positionals(wrapper) is None
    assert _axis_names(wrapper, 2, "C") == ["x", "y"]

    def f(a):
        return a

    f.__signature__ = inspect.Signature([inspect.Parameter("row", inspect.Parameter.POSITIONAL_ONLY),
                                         inspect.Parameter("col", inspect.Parameter.POSITIONAL_ONLY)])
    assert _plain_function_positionals(f) is None
    assert _axis_names(f, 2, "C") == ["row", "col"]

    part = functools.partial(lambda s, i, j: i, 1)
    assert _plain_function_positionals(part) is None
    assert _axis_names(part, 2, "C") == ["i", "j"]

    class Callable:
        def __call__(self, p, q):
            return p

    assert _axis_names(Callable(), 2, "C") == ["p", "q"]


def test_compute_names_its_axes_after_the_parameters():
    A = te.placeholder((4, 8), name="A")
    B = te.compute((4, 8), lambda row, col: A[row, col] + 1.0, name="B")
    assert [iv.var.name for iv in B.op.axis] == ["row", "col"]
    D = te.compute((4, 8), lambda *ij: A[ij[0], ij[1]], name="D")
    assert [iv.var.name for iv in D.op.axis] == ["i0", "i1"]
    E = te.compute((4, 8), lambda i, j, scale=3.0: A[i, j] * scale, name="E")
    assert [iv.var.name for iv in E.op.axis] == ["i", "j"]
    with pytest.raises(TesseraValueError, match="takes 3 index arguments but the shape has 2"):
        te.compute((4, 8), lambda i, j, k: A[i, j], name="F")


def test_constants_of_each_dtype_and_their_range_checks():
    for dtype, value in [("int8", -128), ("uint8", 255), ("int64", -(2**63)), ("uint64", 2**63 - 1),
                         ("float16", 1.5), ("bool", True), ("int32x4", 7), ("float32x8", 0.25)]:
        c = expr_ops.const(value, dtype)
        assert c.dtype == dtype
    # The cached type facts are those of the dtype named, whatever its spelling.
    assert expr_ops.const(3, "i32").dtype == "int32"
    assert expr_ops.const(3, "int32").dtype == "int32"
    with pytest.raises(TesseraValueError, match=r"the integer 256 does not fit in uint8 \(from 0 to 255\)"):
        expr_ops.const(256, "uint8")
    # uint64 takes all of [0, 2**64) (kept as the 64-bit pattern), as TVM's does.
    assert expr_ops.const(2**63, "uint64").value == 2**63
    with pytest.raises(TesseraValueError, match="does not fit in uint64"):
        expr_ops.const(2**64, "uint64")
    with pytest.raises(TesseraTypeError, match="cannot use the float 1.5 as a constant of type int32"):
        expr_ops.const(1.5, "int32")
    with pytest.raises(Exception, match="int7"):
        expr_ops.const(1, "int7")
    # A failed parse is not remembered: the same bad name fails again the same way.
    with pytest.raises(Exception, match="int7"):
        expr_ops.const(1, "int7")


def test_expression_and_number_operands_match_as_before():
    A = te.placeholder((4,), name="A", dtype="float16")
    I = te.placeholder((4,), name="I", dtype="int8")
    x = A[1] * 2.0 + 1
    assert x.dtype == "float16" and x.b.dtype == "float16" and x.a.b.dtype == "float16"
    y = 3 - I[0]
    assert y.dtype == "int8" and y.a.dtype == "int8"
    # An integer expression meets a float number as that float (general path), not truncated.
    z = I[0] * 2.5
    assert z.dtype == "float32"
    with pytest.raises(TesseraValueError, match="does not fit in int8"):
        I[0] + 1000
