"""The analyzer's simplifier entry points as TVM exposes them: rewrite_simplify and
canonical_simplify, the Extension flags, constraint scopes, and the names TVM's own arith tests
reach for (tir.op.call_intrin, tir.expr.EqualOp, ir.PrimExpr)."""

import pytest

from tessera import arith, ir, tir
from tessera.error import TesseraTypeError


def _vars(*names, dtype="int32"):
    return [tir.Var(n, dtype) for n in names]


def test_extension_values_are_tvms():
    assert arith.Extension.NoExtensions.value == 0
    assert arith.Extension.TransitivelyProveInequalities.value == 1
    assert arith.Extension.ConvertBooleanToAndOfOrs.value == 2
    assert arith.Extension.ApplyConstraintsToBooleanBranches.value == 4
    assert arith.Extension.ComparisonOfProductAndSum.value == 8


def test_enabled_extensions_round_trip():
    ana = arith.Analyzer()
    assert ana.enabled_extensions == arith.Extension.NoExtensions
    flags = (arith.Extension.TransitivelyProveInequalities
             | arith.Extension.ComparisonOfProductAndSum)
    ana.enabled_extensions = flags
    assert ana.enabled_extensions == flags
    ana.enabled_extensions = 2  # an int is taken as the flag bits
    assert ana.enabled_extensions == arith.Extension.ConvertBooleanToAndOfOrs
    with pytest.raises(ValueError):
        ana.enabled_extensions = 1 << 7


def test_transitive_extension_changes_the_proof():
    x, y, z = _vars("x", "y", "z")
    ana = arith.Analyzer()
    with ana.constraint_scope(tir.all(x < y, y < z)):
        assert not ana.can_prove(x < z)
        ana.enabled_extensions = arith.Extension.TransitivelyProveInequalities
        assert ana.can_prove(x < z)


def test_constraint_scope_is_left_on_exit_and_on_error():
    (x,) = _vars("x")
    ana = arith.Analyzer()
    with ana.constraint_scope(x < 4):
        assert ana.can_prove(x < 5)
    assert not ana.can_prove(x < 5)
    with pytest.raises(RuntimeError):
        with ana.constraint_scope(x < 4):
            raise RuntimeError("leave the scope")
    assert not ana.can_prove(x < 5)
    with pytest.raises(TesseraTypeError, match="constraint_scope"):
        with ana.constraint_scope("x < 4"):
            pass


def test_entry_points_take_expressions_only():
    ana = arith.Analyzer()
    for fn in (ana.rewrite_simplify, ana.canonical_simplify):
        with pytest.raises(TesseraTypeError, match="expected an expression"):
            fn("x + 1")
    assert ir.structural_equal(ana.rewrite_simplify(3), tir.const(3, "int32"))


def test_canonical_simplify_gives_the_sorted_sum():
    x, y = _vars("x", "y")
    ana = arith.Analyzer()
    got = ana.canonical_simplify(x + y + x + y * 3)
    assert ir.structural_equal(got, y * 4 + x * 2)


def test_tir_op_is_the_op_getter_and_the_op_module():
    assert tir.op("tir.clz").name == "tir.clz"
    call = tir.op.call_intrin("int32", "tir.clz", 1)
    assert ir.structural_equal(call, tir.call_intrin("int32", "tir.clz", 1))
    with pytest.raises(AttributeError):
        tir.op.no_such_function  # noqa: B018


def test_equal_op_names():
    (x,) = _vars("x")
    assert isinstance(x == 1, tir.EQ)  # tessera builds the node at once
    assert ir.structural_equal(tir.expr.EqualOp(x, 1).asobject(), tir.EQ(x, tir.const(1)))
    assert ir.structural_equal(tir.expr.NotEqualOp(x, 1).asobject(), tir.NE(x, tir.const(1)))
    assert isinstance(x, ir.PrimExpr) and isinstance(x + 1, ir.PrimExpr)


@pytest.mark.parametrize("dtype", ["int8", "uint16", "uint64"])
def test_a_value_compared_with_itself(dtype):
    n = tir.Var("n", dtype)
    ana = arith.Analyzer()
    assert ana.can_prove(n == n)
    assert ana.can_prove_equal(n * n, n * n)
    assert ir.structural_equal(ana.simplify(n < n), tir.const(False))
    assert ir.structural_equal(ana.simplify(tir.NE(n + n, n + n)), tir.const(False))
    assert ir.structural_equal(ana.simplify(n <= n), tir.const(True))
    other = tir.Var("m", dtype)
    assert not ana.can_prove(n == other)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_a_float_compared_with_itself_stays(dtype):
    # x != x is true for a NaN (topi's argmax finds NaNs with it), x == x false: the simplifier
    # must not fold either. The proof of n == n holds, as TVM's can_prove gives it.
    n = tir.Var("n", dtype)
    ana = arith.Analyzer()
    assert isinstance(ana.simplify(tir.NE(n, n)), tir.NE)
    assert isinstance(ana.simplify(n == n), tir.EQ)
    assert isinstance(ana.simplify(n <= n), tir.LE)
    assert ana.can_prove(n == n)


def test_calls_compared_with_themselves_stay():
    # a call may give a different value each time it runs
    call = tir.call_extern("float32", "rand")
    cond = arith.Analyzer().simplify(call == call)
    assert isinstance(cond, tir.EQ)


@pytest.mark.parametrize("dtype", ["int8", "uint32"])
def test_rewrite_cancels_a_value_minus_itself(dtype):
    n = tir.Var("n", dtype)
    assert ir.structural_equal(arith.Analyzer().rewrite_simplify(n - n), tir.const(0, dtype))
