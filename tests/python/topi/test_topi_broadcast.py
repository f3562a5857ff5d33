"""Broadcasting binary operators against numpy: shapes, scalars, dtypes, errors."""

import numpy as np
import pytest

from tessera import te, topi
from tessera.error import TesseraTypeError, TesseraValueError

from topi_testing import Kernels, random, tol

K = Kernels()

ARITH = {
    "add": np.add,
    "subtract": np.subtract,
    "multiply": np.multiply,
    "maximum": np.maximum,
    "minimum": np.minimum,
    "floor_divide": np.floor_divide,
    "floor_mod": np.mod,
}
FLOAT_ONLY = {"divide": np.divide, "power": np.power}
INT_ONLY = {
    "divide": lambda a, b: np.trunc(a / b).astype(a.dtype),  # C division on integers
    "mod": np.fmod,
    "power": np.power,
}
COMPARE = {
    "equal": np.equal,
    "not_equal": np.not_equal,
    "less": np.less,
    "greater": np.greater,
    "less_equal": np.less_equal,
    "greater_equal": np.greater_equal,
}
BITWISE = {
    "bitwise_and": np.bitwise_and,
    "bitwise_or": np.bitwise_or,
    "bitwise_xor": np.bitwise_xor,
    "left_shift": np.left_shift,
    "right_shift": np.right_shift,
}
LOGICAL = {
    "logical_and": np.logical_and,
    "logical_or": np.logical_or,
    "logical_xor": np.logical_xor,
}
SHAPES = [
    ((13, 5), (13, 5)),
    ((13, 1), (1, 5)),
    ((4, 1, 3), (7, 1)),
    ((7,), (2, 3, 7)),
    ((1,), (5, 3)),
]

CASES = []
for _name in ARITH:
    CASES += [(_name, d) for d in ("float32", "float16", "int32", "int8")]
for _name in FLOAT_ONLY:
    CASES += [(_name, d) for d in ("float32", "float16")]
for _name in INT_ONLY:
    CASES += [(_name, d) for d in ("int32",)]
for _name in COMPARE:
    CASES += [(_name, d) for d in ("float32", "int32", "uint8")]
for _name in BITWISE:
    CASES += [(_name, d) for d in ("int32", "uint8")]
CASES += [(_name, "bool") for _name in LOGICAL]
REFS = {**ARITH, **COMPARE, **BITWISE, **LOGICAL}


def _ref(name, dtype):
    if name in FLOAT_ONLY and dtype.startswith("float"):
        return FLOAT_ONLY[name]
    if name in INT_ONLY and not dtype.startswith("float"):
        return INT_ONLY[name]
    return REFS[name]


def shapes_of(name, dtype):
    """Every broadcast pattern for the float32 add and int32 subtract; two for the others
    (the broadcasting is shared code; the operators differ in the element expression)."""
    if (name, dtype) in (("add", "float32"), ("subtract", "int32")):
        return list(enumerate(SHAPES))
    return [(1, SHAPES[1]), (2, SHAPES[2])]


for _name, _d in CASES:
    for _k, (_sa, _sb) in shapes_of(_name, _d):
        _A = te.placeholder(_sa, _d, name="A")
        _B = te.placeholder(_sb, _d, name="B")
        K.add(f"{_name}_{_d}_{_k}", [_A, _B], getattr(topi, _name)(_A, _B))


def _operands(name, dtype, sa, sb):
    a, b = random(sa, dtype, seed=1), random(sb, dtype, seed=2)
    if name in ("floor_divide", "floor_mod", "divide", "mod"):
        b = np.where(b == 0, np.ones_like(b), b)  # no division by zero
        if dtype.startswith("float"):
            b = np.where(np.abs(b) < 0.25, np.full_like(b, 0.5), b)
    if name == "power":
        if dtype.startswith("float"):
            a = np.abs(a) + np.asarray(0.5, dtype)
        else:
            a, b = np.clip(a, -3, 3), np.abs(b) % 4
    if name in ("left_shift", "right_shift"):
        b = np.abs(b) % 5
        a = np.abs(a)
    return a, b


@pytest.mark.parametrize("name,dtype", CASES)
def test_binary(name, dtype):
    for k, (sa, sb) in shapes_of(name, dtype):
        a, b = _operands(name, dtype, sa, sb)
        out = K.run(f"{name}_{dtype}_{k}", a, b)
        with np.errstate(all="ignore"):
            expected = _ref(name, dtype)(a, b)
        assert out.shape == expected.shape
        if name in COMPARE or name in LOGICAL:
            assert out.dtype == np.bool_
        else:
            assert out.dtype == np.dtype(dtype)
        if dtype.startswith("float"):
            t = tol(dtype) if name != "floor_divide" or dtype != "float16" else dict(rtol=0, atol=1)
            np.testing.assert_allclose(out.astype("float64"), expected.astype("float64"), **t)
        else:
            np.testing.assert_array_equal(out, expected.astype(out.dtype))


# Scalars on either side; two scalars give an expression.
_A = te.placeholder((7,), "float32", name="A")
_I = te.placeholder((7,), "int32", name="I")
K.add("scalar_right", [_A], topi.subtract(_A, 2.5))
K.add("scalar_left", [_A], topi.subtract(2.5, _A))
K.add("scalar_int", [_I], topi.multiply(_I, 3))
K.add("scalar_expr", [_A], topi.maximum(_A, te.const(0.25, "float32")))
K.add("scalar_cmp", [_I], topi.greater_equal(_I, 2))
K.add("int_float_scalar", [_I], topi.add(_I, 0.5))


def test_scalars():
    a = random((7,), "float32")
    i = random((7,), "int32")
    np.testing.assert_allclose(K.run("scalar_right", a), a - 2.5, rtol=1e-6)
    np.testing.assert_allclose(K.run("scalar_left", a), 2.5 - a, rtol=1e-6)
    np.testing.assert_array_equal(K.run("scalar_int", i), i * 3)
    np.testing.assert_allclose(K.run("scalar_expr", a), np.maximum(a, 0.25))
    np.testing.assert_array_equal(K.run("scalar_cmp", i), i >= 2)
    out = K.run("int_float_scalar", i)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, i + 0.5)
    expr = topi.add(te.const(1, "int32"), 2)
    assert expr.dtype == "int32"


_P = te.placeholder((7,), "bool", name="P")
_N = te.placeholder((7,), "int8", name="N")
K.add("logical_not", [_P], topi.logical_not(_P))
K.add("bitwise_not", [_N], topi.bitwise_not(_N))
_X = te.placeholder((3, 1), "float32", name="X")
K.add("broadcast_to", [_X], topi.broadcast_to(_X, (2, 3, 5)))


def test_not_and_broadcast_to():
    p = random((7,), "bool")
    np.testing.assert_array_equal(K.run("logical_not", p), ~p)
    n = random((7,), "int8")
    np.testing.assert_array_equal(K.run("bitwise_not", n), ~n)
    x = random((3, 1), "float32")
    np.testing.assert_array_equal(K.run("broadcast_to", x), np.broadcast_to(x, (2, 3, 5)))


def test_errors():
    A = te.placeholder((3, 4), "float32", name="A")
    B = te.placeholder((5,), "float32", name="B")
    with pytest.raises(TesseraValueError, match=r"shapes \(3, 4\) and \(5,\) cannot be broadcast"):
        topi.add(A, B)
    with pytest.raises(ValueError):  # TesseraValueError is a ValueError
        topi.less(A, B)
    with pytest.raises(TesseraTypeError, match="bool"):
        topi.logical_and(A, A)
    with pytest.raises(TesseraTypeError, match="bitwise"):
        topi.bitwise_and(A, A)
    with pytest.raises(TesseraTypeError, match="te tensors or scalars"):
        topi.add(A, "x")
    with pytest.raises(TesseraValueError, match="broadcast"):
        topi.broadcast_to(A, (3, 5))
