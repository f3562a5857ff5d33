"""narrow_predicate_expression (TVM's arith.NarrowPredicateExpression): a condition without
the free parameters that implies the original."""

import pytest

from tessera import arith, ir, tir
from tessera.error import TesseraTypeError

i = tir.Var("i", "int32")
n = tir.Var("n", "int32")
PARAMS = {n: ir.Range(0, 8)}
FALSE = tir.IntImm("bool", 0)


def narrow(cond):
    return arith.narrow_predicate_expression(cond, PARAMS)


@pytest.mark.parametrize(
    "before, expected",
    [
        (i > n, i > 7),  # i must exceed every n: the largest
        (i < n, i < 0),
        (tir.Not(i < n), tir.Not(i < 7)),  # a negation turns the direction round
        (i == n, tir.And(i <= 0, tir.const(7) <= i)),
        (i != n, tir.Or(i < 0, tir.const(7) < i)),
        (i - n < 10, tir.Sub(i, tir.const(0)) < 10),
        (i + n < 10, i + 7 < 10),
        (tir.floormod(i, 8) == n, FALSE),  # floormod is not monotonic
        (tir.floordiv(i, n) == 0, FALSE),  # n may be 0
    ],
)
def test_narrowing(before, expected):
    ir.assert_structural_equal(narrow(before), expected)


def test_buffer_loads_are_unknown():
    buf = tir.decl_buffer((16,), "int32", "buf")
    got = narrow(tir.Or(tir.Not(buf.vload(i) > 0), i <= n))
    ir.assert_structural_equal(got, tir.Or(FALSE, i <= 0))


def test_tvm_ffi_name():
    ir.assert_structural_equal(arith._ffi_api.NarrowPredicateExpression(i > n, PARAMS), i > 7)


def test_errors():
    with pytest.raises(TesseraTypeError, match="bool condition"):
        narrow(i + n)
    with pytest.raises(TesseraTypeError, match="Var -> Range"):
        arith.narrow_predicate_expression(i > n, {n: (0, 8)})
