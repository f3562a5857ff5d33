"""Constant folding in the expression operators, with TVM's rules: `IntImm + IntImm` is an IntImm
(AKG's code calls int() on such sums), identities drop the operation, and the node constructors
and TVMScript's comparisons never fold."""

import pytest

import tessera as ts
from tessera import _core, te, tir
from tessera.error import TesseraError
from tessera.script import tir as T


def _c(v, dtype="int32"):
    return tir.const(v, dtype)


def _is_const(e, value, dtype):
    return isinstance(e, (_core.IntImm, _core.FloatImm)) and e.value == value and str(e.dtype) == dtype


def test_integer_constants_fold_in_every_operator():
    a, b = _c(7), _c(-2)
    assert _is_const(a + b, 5, "int32")
    assert _is_const(a - b, 9, "int32")
    assert _is_const(a * b, -14, "int32")
    assert _is_const(a // b, -4, "int32")      # floor division
    assert _is_const(a % b, -1, "int32")       # floor modulo: the divisor's sign
    assert _is_const(tir.truncdiv(a, b), -3, "int32")
    assert _is_const(tir.truncmod(a, b), 1, "int32")
    assert _is_const(tir.min(a, b), -2, "int32")
    assert _is_const(tir.max(a, b), 7, "int32")
    assert _is_const(a + 1, 8, "int32")         # a Python number takes the expression's type
    assert _is_const(10 - a, 3, "int32")
    # Comparisons of constants are bools.
    assert _is_const(a < b, 0, "bool") and _is_const(a >= b, 1, "bool")
    assert _is_const(a == 7, 1, "bool") and _is_const(a != 7, 0, "bool")
    assert bool(a > b) is True


def test_folded_values_keep_the_type_and_wrap_as_tvm():
    assert _is_const(_c(127, "int8") + _c(1, "int8"), -128, "int8")
    assert _is_const(_c(255, "uint8") + _c(1, "uint8"), 0, "uint8")
    assert _is_const(_c(2**31 - 1) + 1, -(2**31), "int32")
    assert _is_const(_c(3, "int64") * _c(5, "int64"), 15, "int64")
    # An int32 meets an int64: the sum is int64 (the wider type), then folds.
    assert _is_const(_c(3) + _c(4, "int64"), 7, "int64")


def test_float_constants_fold_in_float32_and_float64_only():
    s = _c(0.1, "float32") + _c(0.2, "float32")
    assert isinstance(s, _core.FloatImm) and str(s.dtype) == "float32"
    assert s.value == pytest.approx(0.30000001192092896, abs=0)  # rounded to float32
    assert _is_const(_c(1.5, "float64") * _c(2.0, "float64"), 3.0, "float64")
    h = _c(1.5, "float16") + _c(2.0, "float16")
    assert isinstance(h, _core.Add)  # TVM does not fold float16 arithmetic
    assert _is_const(_c(1.5, "float32") < _c(2.0, "float32"), 1, "bool")


def test_identities_drop_the_operation():
    x = te.var("x")
    f = te.var("f", "float32")
    assert (x + 0).same_as(x) and (0 + x).same_as(x) and (x - 0).same_as(x)
    assert (x * 1).same_as(x) and (1 * x).same_as(x)
    assert _is_const(x * 0, 0, "int32") and _is_const(0 * x, 0, "int32")
    assert (x // 1).same_as(x) and _is_const(0 // x, 0, "int32")
    assert _is_const(x % 1, 0, "int32")
    assert tir.min(x, x).same_as(x) and tir.max(x, x).same_as(x)
    assert (f * 1.0).same_as(f) and (f + 0.0).same_as(f)
    # No folding where TVM does not fold.
    assert isinstance(0 - x, _core.Sub)
    assert isinstance(x + 1, _core.Add) and isinstance(x < 3, _core.LT)
    assert isinstance(tir.min(x, te.var("y")), _core.Min)
    # int8 modulo is not an index type: TVM leaves it.
    assert isinstance(tir.truncmod(_c(7, "int8"), _c(2, "int8")), _core.Mod)


def test_logical_operators_fold_constant_operands():
    p = te.var("p", "bool")
    t, f = _c(True, "bool"), _c(False, "bool")
    assert tir.all(t, p).same_as(p) and _is_const(tir.all(f, p), 0, "bool")
    assert tir.any(f, p).same_as(p) and _is_const(tir.any(t, p), 1, "bool")
    assert _is_const(tir.Not.fold(t) if hasattr(tir, "Not") else _core.Not.fold(t), 0, "bool")


def test_node_constructors_never_fold():
    assert isinstance(_core.Add(_c(1), _c(2)), _core.Add)
    assert isinstance(tir.Add(_c(1), _c(2)), _core.Add)
    assert isinstance(tir.LT(_c(1), _c(2)), _core.LT)


def test_a_constant_zero_divisor_is_an_error():
    x = te.var("x")
    for op in (lambda: x // 0, lambda: x % 0, lambda: tir.truncdiv(_c(4), _c(0)),
               lambda: te.var("f", "float32") / 0.0):
        with pytest.raises(TesseraError, match="division by the constant zero"):
            op()


def test_te_shapes_fold_so_int_works_as_in_akg():
    a = te.placeholder((6, 4), name="A")
    n = a.shape[0] - 1
    assert isinstance(n, _core.IntImm) and int(n) == 5
    assert int(a.shape[0] * a.shape[1] // 8) == 3


def _script_pair():
    @T.prim_func
    def main(a: T.Buffer((8,), "int32")):
        for i in range(8):
            with T.block("b"):
                vi = T.axis.spatial(8, i)
                a[vi] = T.if_then_else(T.int32(1) < T.int32(2), vi * 1 + T.int32(2) * 3, 0)

    written = main

    @T.prim_func
    def main(a: T.Buffer((8,), "int32")):
        for i in range(8):
            with T.block("b"):
                vi = T.axis.spatial(8, i)
                a[vi] = T.if_then_else(T.LT(1, 2), vi + 6, 0)

    return written, main


def test_tvmscript_folds_arithmetic_but_not_comparisons():
    written, expected = _script_pair()
    ts.ir.assert_structural_equal(written, expected)
    assert "T.if_then_else(T.LT(1, 2), vi + 6, 0)" in written.script()


def test_if_then_else_of_a_constant_condition_is_the_chosen_value():
    x = te.var("x")
    assert tir.if_then_else(_c(3) < 4, x, 0).same_as(x)
    assert _is_const(tir.if_then_else(_c(False, "bool"), x, 0), 0, "int32")
    assert isinstance(tir.if_then_else(x < 4, x, 0), _core.Call)
