"""tessera.tir.PyStmtExprVisitor / PyStmtExprMutator: Python cases over the C++ walk."""

import numpy as np
import pytest

import tessera as ts
from tessera import tir
from tessera.error import TesseraError
from tessera.ir import assert_structural_equal
from tessera.script import tir as T


@tir.functor.visitor
class LoadCounter(tir.PyStmtExprVisitor):
    def __init__(self):
        super().__init__()
        self.loads = []
        self.loops = 0

    def visit_buffer_load_(self, op):
        self.loads.append(op.buffer.name)
        super().visit_buffer_load_(op)

    def visit_for_(self, op):
        self.loops += 1
        super().visit_for_(op)


@tir.functor.mutator
class MulToAdd(tir.PyStmtExprMutator):
    def visit_mul_(self, op):
        return tir.Add(self.visit_expr(op.a), self.visit_expr(op.b))


@T.prim_func
def scale(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        for j in range(1):
            B[i] = A[i] * A[i] + A[7 - i] * T.float32(3)


def test_visitor_sees_every_load_and_loop_through_the_default_cases():
    counter = LoadCounter()
    counter.visit_stmt(scale.body)
    assert counter.loads == ["A", "A", "A"]
    assert counter.loops == 2


def test_visitor_case_without_super_does_not_descend():
    @tir.functor.visitor
    class OuterLoopsOnly(tir.PyStmtExprVisitor):
        def __init__(self):
            super().__init__()
            self.loops = 0

        def visit_for_(self, op):
            self.loops += 1

    v = OuterLoopsOnly()
    v.visit_stmt(scale.body)
    assert v.loops == 1


def test_mutator_rewrites_and_the_result_runs():
    body = MulToAdd().visit_stmt(scale.body)

    @T.prim_func
    def expected(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        for i in range(8):
            for j in range(1):
                B[i] = A[i] + A[i] + (A[7 - i] + T.float32(3))

    func = scale.with_body(body)
    assert_structural_equal(func, expected.with_attr("global_symbol", "scale"))
    assert not ts.ir.structural_equal(func, scale)

    a = np.arange(8, dtype="float32")
    b = np.empty_like(a)
    ts.build(func, target="c")(a, b)
    np.testing.assert_allclose(b, a + a + (a[::-1] + 3))


def test_unchanged_tree_is_returned_as_is():
    untouched = tir.Evaluate(tir.Var("x", "int32") + 1)
    assert MulToAdd().visit_stmt(untouched).same_as(untouched)
    store = scale.body.body.body
    assert not MulToAdd().visit_stmt(store).same_as(store)


def test_mutator_case_returning_a_wrong_kind_is_an_error():
    @tir.functor.mutator
    class Broken(tir.PyStmtExprMutator):
        def visit_var_(self, op):
            return 3

    x = tir.Var("x", "int32")
    with pytest.raises(TypeError, match="must return an expression, got int"):
        Broken().visit_expr(x + 1)
    with pytest.raises(TesseraError, match="visit_expr takes an expression"):
        Broken().visit_expr("x")


def test_decorator_takes_a_functor_class():
    with pytest.raises(TesseraError, match="decorates a subclass of PyStmtExprVisitor"):
        tir.functor.visitor(int)
