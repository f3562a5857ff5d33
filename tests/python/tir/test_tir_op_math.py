"""tessera.tir's expression functions built for the C target and checked against numpy."""

import numpy as np
import pytest

import tessera as ts
from tessera import te, tir
from tessera.error import TesseraTypeError
from tessera.script import tir as T

# name -> (numpy reference, input range)
UNARY = {
    "exp": (np.exp, (-3, 3)), "exp2": (np.exp2, (-3, 3)), "exp10": (lambda x: 10.0 ** x, (-2, 2)),
    "log": (np.log, (0.1, 5)), "log2": (np.log2, (0.1, 5)), "log10": (np.log10, (0.1, 5)),
    "log1p": (np.log1p, (0, 5)), "expm1": (np.expm1, (-2, 2)), "sqrt": (np.sqrt, (0, 9)),
    "rsqrt": (lambda x: 1 / np.sqrt(x), (0.1, 9)), "tanh": (np.tanh, (-3, 3)),
    "sigmoid": (lambda x: 1 / (1 + np.exp(-x)), (-5, 5)), "sin": (np.sin, (-3, 3)),
    "cos": (np.cos, (-3, 3)), "tan": (np.tan, (-1, 1)), "asin": (np.arcsin, (-0.9, 0.9)),
    "acos": (np.arccos, (-0.9, 0.9)), "atan": (np.arctan, (-3, 3)), "sinh": (np.sinh, (-2, 2)),
    "cosh": (np.cosh, (-2, 2)), "asinh": (np.arcsinh, (-3, 3)), "acosh": (np.arccosh, (1, 5)),
    "atanh": (np.arctanh, (-0.9, 0.9)), "floor": (np.floor, (-5, 5)), "ceil": (np.ceil, (-5, 5)),
    "trunc": (np.trunc, (-5, 5)), "round": (np.round, (-5, 5)), "nearbyint": (np.rint, (-5, 5)),
    "abs": (np.abs, (-5, 5)), "fabs": (np.abs, (-5, 5)),
}
BINARY = {"pow": (np.power, (0.5, 3)), "power": (np.power, (0.5, 3)), "atan2": (np.arctan2, (-3, 3)),
          "fmod": (np.fmod, (0.5, 5)), "hypot": (np.hypot, (-3, 3)), "copysign": (np.copysign, (-3, 3))}


def _run(fcompute, inputs, out_dtype, n=16):
    placeholders = [te.placeholder((n,), a.dtype, name=f"A{k}") for k, a in enumerate(inputs)]
    out = te.compute((n,), lambda i: fcompute(*[p[i] for p in placeholders]), name="B")
    lib = ts.build(te.create_prim_func(placeholders + [out]), target="c")
    res = ts.nd.empty((n,), out_dtype)
    lib(*[ts.nd.array(a) for a in inputs], res)
    return res.numpy()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_math(name, dtype):
    ref, (lo, hi) = UNARY[name]
    x = np.linspace(lo, hi, 16).astype(dtype)
    got = _run(getattr(tir, name), [x], dtype)
    np.testing.assert_allclose(got, ref(x).astype(dtype), rtol=1e-5 if dtype == "float32" else 1e-12,
                               atol=1e-6)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_math(name, dtype):
    ref, (lo, hi) = BINARY[name]
    x = np.linspace(lo, hi, 16).astype(dtype)
    y = np.linspace(hi, lo, 16).astype(dtype)
    got = _run(getattr(tir, name), [x, y], dtype)
    np.testing.assert_allclose(got, ref(x, y).astype(dtype), rtol=1e-5, atol=1e-6)


def test_float16_computes_in_float32():
    x = np.linspace(-2, 2, 16).astype("float16")
    np.testing.assert_allclose(_run(tir.exp, [x], "float16"), np.exp(x), rtol=2e-3)


def test_classification_and_select():
    x = np.array([1.0, np.nan, np.inf, -np.inf] * 4, dtype="float32")
    for name, ref in (("isnan", np.isnan), ("isinf", np.isinf), ("isfinite", np.isfinite)):
        got = _run(lambda a, f=getattr(tir, name): tir.if_then_else(f(a), 1, 0), [x], "int32")
        np.testing.assert_array_equal(got, ref(x).astype("int32"))


@pytest.mark.parametrize("dtype", ["int8", "int32", "int64"])
def test_integer_division_functions(dtype):
    a = np.arange(-8, 8).astype(dtype)
    b = np.array([3, -3, 5, 2] * 4, dtype=dtype)
    np.testing.assert_array_equal(_run(tir.floordiv, [a, b], dtype), a // b)
    np.testing.assert_array_equal(_run(tir.floormod, [a, b], dtype), a % b)
    np.testing.assert_array_equal(_run(tir.indexdiv, [a, b], dtype), a // b)
    np.testing.assert_array_equal(_run(tir.indexmod, [a, b], dtype), a % b)
    np.testing.assert_array_equal(_run(tir.truncdiv, [a, b], dtype), np.trunc(a / b).astype(dtype))
    np.testing.assert_array_equal(_run(tir.truncmod, [a, b], dtype), np.fmod(a, b))
    np.testing.assert_array_equal(_run(tir.div, [a, b], dtype), np.trunc(a / b).astype(dtype))
    np.testing.assert_array_equal(_run(tir.abs, [a], dtype), np.abs(a))


def test_bitwise_and_popcount():
    a = np.arange(16).astype("int32") * 37
    b = np.full(16, 0x5A, "int32")
    np.testing.assert_array_equal(_run(tir.bitwise_and, [a, b], "int32"), a & b)
    np.testing.assert_array_equal(_run(tir.bitwise_or, [a, b], "int32"), a | b)
    np.testing.assert_array_equal(_run(tir.bitwise_xor, [a, b], "int32"), a ^ b)
    np.testing.assert_array_equal(_run(tir.bitwise_not, [a], "int32"), ~a)
    s = np.full(16, 2, "int32")
    np.testing.assert_array_equal(_run(tir.shift_left, [a, s], "int32"), a << 2)
    np.testing.assert_array_equal(_run(tir.shift_right, [a, s], "int32"), a >> 2)
    np.testing.assert_array_equal(_run(tir.popcount, [a], "int32"),
                                  [bin(int(v)).count("1") for v in a])


def test_all_any_and_limits():
    a = np.arange(16).astype("int32")
    got = _run(lambda x: tir.if_then_else(tir.all(x > 2, x < 10), 1, 0), [a], "int32")
    np.testing.assert_array_equal(got, ((a > 2) & (a < 10)).astype("int32"))
    got = _run(lambda x: tir.if_then_else(tir.any(x < 2, x > 10), 1, 0), [a], "int32")
    np.testing.assert_array_equal(got, ((a < 2) | (a > 10)).astype("int32"))
    assert tir.max_value("int8").value == 127 and tir.min_value("uint16").value == 0
    assert tir.max_value("float32").value == pytest.approx(3.4028234663852886e38)


def test_same_functions_as_the_script():
    assert tir.exp is T.exp and tir.floordiv is T.floordiv and tir.if_then_else is T.if_then_else
    x = tir.Var("x", "float32")

    @T.prim_func
    def f(A: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("A"):
                vi = T.axis.remap("S", [i])
                A[vi] = T.exp(A[vi])

    assert "T.exp(" in f.script()
    assert str(tir.exp(x)) == "T.exp(x)"


def test_errors():
    with pytest.raises(TesseraTypeError, match="every argument must be a bool"):
        tir.all(tir.Var("i", "int32"))
    with pytest.raises(TesseraTypeError, match="needs at least one condition"):
        tir.any()
    with pytest.raises(TypeError):
        tir.max_value("int7")


def test_min_max_are_reducers_and_elementwise():
    from tessera import te

    x, y = tir.Var("x", "int32"), tir.Var("y", "int32")
    assert tir.max is te.max and tir.min is te.min and tir.sum is te.sum
    assert str(tir.max(x, y)) == "T.max(x, y)" and str(tir.min(x, y)) == "T.min(x, y)"
    a = np.array([3, -1, 7, 2] * 4, dtype="int32")
    b = np.array([1, 5, 7, -2] * 4, dtype="int32")
    np.testing.assert_array_equal(_run(tir.max, [a, b], "int32"), np.maximum(a, b))


def test_clz_counts_in_int32_for_every_width():
    for dtype in ("int8", "int32", "int64"):
        x = tir.Var("x", dtype)
        assert tir.clz(x).dtype == "int32"
        A = te.placeholder((6,), dtype, name="A")
        B = te.compute((6,), lambda i: tir.clz(A[i]), name="B")
        f = ts.build(te.create_prim_func([A, B]), target="c")
        bits = int(dtype[3:])
        a = np.array([1, 2, 3, 100, 7, 2 ** (bits - 2)], dtype=dtype)
        out = ts.nd.array(np.zeros(6, "int32"))
        f(ts.nd.array(a), out)
        ref = np.array([bits - int(v).bit_length() for v in a], dtype="int32")
        np.testing.assert_equal(out.numpy(), ref)
