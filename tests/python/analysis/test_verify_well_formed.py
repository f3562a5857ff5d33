"""tir.analysis.verify_well_formed on programs the parser accepts with check_well_formed=False."""

import pytest

from tessera import tir
from tessera.error import DiagnosticValueError
from tessera.script import ir as I
from tessera.script import tir as T


def test_nested_redefinition_names_both_locations():
    @T.prim_func(check_well_formed=False)
    def func():
        x = T.int32()
        with T.LetStmt(1, var=x):  # first-def
            with T.LetStmt(2, var=x):  # re-def
                T.evaluate(x)

    assert tir.analysis.verify_well_formed(func, assert_mode=False) is False
    with pytest.raises(ValueError) as err:
        tir.analysis.verify_well_formed(func)
    assert isinstance(err.value, DiagnosticValueError)
    text = str(err.value)
    assert "variable x is bound again inside its own scope" in text
    first = func.body.span.line
    assert f":{first}:" in text.split("bound first at")[1].split(", bound again")[0]
    assert f":{first + 1}:" in text.split("bound again inside at")[1]


def test_sequential_redefinition_and_out_of_scope_use():
    @T.prim_func(check_well_formed=False)
    def twice():
        x = T.int32()
        with T.LetStmt(1, var=x):
            T.evaluate(x)
        with T.LetStmt(2, var=x):
            T.evaluate(x)

    with pytest.raises(ValueError, match="variable x is bound in two places.*bound again after at"):
        tir.analysis.verify_well_formed(twice)

    @T.prim_func(check_well_formed=False)
    def leaked():
        x = T.int32()
        with T.LetStmt(1, var=x):
            T.evaluate(x)
        T.evaluate(x + 1)  # use-after

    with pytest.raises(ValueError, match=r"variable x is used at .*:\d+:\d+ after the statement that bound it has ended") as err:
        tir.analysis.verify_well_formed(leaked)
    assert "use-after" in str(err.value)  # the rendered source line of the use


def test_a_variable_shared_by_two_functions_is_ill_formed():
    n = tir.Var("n", "int32")

    @I.ir_module(check_well_formed=False)
    class Mod:
        @T.prim_func
        def f1(A: T.Buffer((4,), "int32")):
            with T.LetStmt(3, var=n):
                A[0] = n

        @T.prim_func
        def f2(A: T.Buffer((4,), "int32")):
            with T.LetStmt(3, var=n):
                A[1] = n

    assert tir.analysis.verify_well_formed(Mod["f1"]) is True
    assert tir.analysis.verify_well_formed(Mod["f2"]) is True
    with pytest.raises(ValueError, match="variable n is bound by both function f1 and function f2"):
        tir.analysis.verify_well_formed(Mod)
