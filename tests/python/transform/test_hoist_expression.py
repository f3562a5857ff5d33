"""tir.HoistExpression: loop-invariant conditions and let bindings move out of loops, each kind
switched by the "tir.HoistExpression" config record."""

import numpy as np
import pytest

import tessera as ts
from tessera.script import tir as T
from tessera.tir.transform import HoistedConditionals as HC
from tessera.tir.transform import HoistedLetBindings as HL


def hoisted(golden, before, expected, conds=HC.All, lets=HL.All):
    config = {"tir.HoistExpression": {"hoisted_conditionals": conds.value,
                                      "hoisted_let_bindings": lets.value}}
    with ts.transform.PassContext(config=config):
        golden("HoistExpression", before, expected)


def test_flag_values():
    assert [f.value for f in (HC.IfElseStmt, HC.IfElseExpr, HC.BooleanExpression,
                              HC.UsingBlockVar)] == [1, 2, 4, 8]
    assert HC.All.value == 15 and HC.Never.value == 0
    assert [f.value for f in (HL.RequiredByConditional, HL.LetStmt, HL.LetExpr)] == [1, 2, 4]
    assert (HL.All & ~HL.LetExpr).value == 3


@T.prim_func
def if_stmt_on_outer_var(A: T.Buffer((6, 5), "float32")):
    for i in range(6):
        for j in range(5):
            if i % 2 == 1:
                A[i, j] = T.float32(1)
            else:
                A[i, j] = T.float32(2)


def test_if_stmt_condition_moves_to_the_loop_it_uses(golden):
    @T.prim_func
    def expected(A: T.Buffer((6, 5), "float32")):
        for i in range(6):
            if i % 2 == 1:
                for j in range(5):
                    A[i, j] = T.float32(1)
            else:
                for j in range(5):
                    A[i, j] = T.float32(2)

    hoisted(golden, if_stmt_on_outer_var, expected, conds=HC.IfElseStmt)
    # without the flag it stays
    hoisted(golden, if_stmt_on_outer_var, if_stmt_on_outer_var, conds=HC.IfElseExpr)


def test_if_then_else_expression_becomes_branches(golden):
    @T.prim_func
    def before(A: T.Buffer((3, 7), "int32"), m: T.int32):
        for i, j in T.grid(3, 7):
            A[i, j] = T.if_then_else(2 < m, i + j, i - j)

    @T.prim_func
    def expected(A: T.Buffer((3, 7), "int32"), m: T.int32):
        if 2 < m:
            for i, j in T.grid(3, 7):
                A[i, j] = i + j
        else:
            for i, j in T.grid(3, 7):
                A[i, j] = i - j

    hoisted(golden, before, expected, conds=HC.IfElseExpr)
    hoisted(golden, before, before, conds=HC.All & ~HC.IfElseExpr)


def test_and_operands_are_split_by_level(golden):
    @T.prim_func
    def before(A: T.Buffer((5, 3), "float32")):
        for i, j in T.grid(5, 3):
            if 1 < i and j < 2:
                A[i, j] = T.float32(0)

    @T.prim_func
    def split(A: T.Buffer((5, 3), "float32")):
        for i in range(5):
            if 1 < i:
                for j in range(3):
                    if j < 2:
                        A[i, j] = T.float32(0)

    hoisted(golden, before, split)
    # without BooleanExpression the whole condition needs j: it stays at the innermost loop
    hoisted(golden, before, before, conds=HC.All & ~HC.BooleanExpression)


def test_a_sequence_stops_the_hoisting(golden):
    @T.prim_func
    def before(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4,), "float32"), n: T.int32):
        for i in range(4):
            B[i] = T.float32(0)
            for j in range(4):
                if 0 < n:
                    A[i, j] = T.float32(1)

    @T.prim_func
    def expected(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4,), "float32"), n: T.int32):
        for i in range(4):
            B[i] = T.float32(0)
            if 0 < n:
                for j in range(4):
                    A[i, j] = T.float32(1)

    hoisted(golden, before, expected)


def test_memory_reads_do_not_move(golden):
    @T.prim_func
    def before(A: T.Buffer((4, 4), "float32"), B: T.Buffer((1,), "int32")):
        for i, j in T.grid(4, 4):
            if 0 < B[0]:
                A[i, j] = T.float32(1)

    hoisted(golden, before, before)


@T.prim_func
def thread_condition(A: T.Buffer((64, 8), "float32"), n: T.int32):
    tx = T.env_thread("threadIdx.x")
    T.launch_thread(tx, 64)
    for j in range(8):
        if tx < 16:
            A[tx, j] = T.float32(0)


def test_thread_variable_condition_needs_using_block_var(golden):
    @T.prim_func
    def expected(A: T.Buffer((64, 8), "float32"), n: T.int32):
        tx = T.env_thread("threadIdx.x")
        T.launch_thread(tx, 64)
        if tx < 16:
            for j in range(8):
                A[tx, j] = T.float32(0)

    hoisted(golden, thread_condition, expected)
    hoisted(golden, thread_condition, thread_condition, conds=HC.All & ~HC.UsingBlockVar)


def test_default_config_keeps_thread_conditions(golden):
    # TVM's defaults: every kind but UsingBlockVar, every let kind
    golden("HoistExpression", thread_condition, thread_condition)


def test_let_stmt_moves_with_the_condition_that_needs_it(golden):
    @T.prim_func
    def before(A: T.Buffer((4, 6), "float32")):
        for i in range(4):
            for j in range(6):
                c = i * 2 < 5
                if c:
                    A[i, j] = T.float32(3)

    @T.prim_func
    def expected(A: T.Buffer((4, 6), "float32")):
        for i in range(4):
            c = i * 2 < 5
            if c:
                for j in range(6):
                    A[i, j] = T.float32(3)

    hoisted(golden, before, expected)
    # RequiredByConditional alone still moves it: the condition needs it
    hoisted(golden, before, expected, lets=HL.RequiredByConditional)
    hoisted(golden, before, before, lets=HL.Never)


def test_let_expression_becomes_a_let_stmt_outside(golden):
    @T.prim_func
    def before(A: T.Buffer((4, 4), "float32")):
        for i, j in T.grid(4, 4):
            x = T.float32()
            A[i, j] = T.Let(x * T.float32(3) + T.Cast("float32", j),
                            where={x: T.Cast("float32", i * i)})

    # (an integer binding would be inlined by the Simplify that follows, as TVM's is)
    @T.prim_func
    def expected(A: T.Buffer((4, 4), "float32")):
        for i in range(4):
            x = T.Cast("float32", i * i)
            for j in range(4):
                A[i, j] = x * T.float32(3) + T.Cast("float32", j)

    hoisted(golden, before, expected)
    hoisted(golden, before, before, lets=HL.All & ~HL.LetExpr)


def test_config_fields_are_checked():
    @T.prim_func
    def f(A: T.Buffer((4,), "float32")):
        for i in range(4):
            A[i] = T.float32(0)

    mod = ts.ir.IRModule({"main": f.with_attr("global_symbol", "main")})
    for record, field in (({"hoisted_conditionals": "all"}, "hoisted_conditionals"),
                          ({"hoisted_everything": 1}, "hoisted_everything")):
        with pytest.raises(Exception, match=field):
            with ts.transform.PassContext(config={"tir.HoistExpression": record}):
                ts.tir.transform.HoistExpression()(mod)


def test_built_program_matches_before_and_after():
    @T.prim_func
    def before(A: T.Buffer((6, 5), "float32"), B: T.Buffer((6, 5), "float32"), n: T.int32):
        for i, j in T.grid(6, 5):
            y = T.Cast("float32", i * 3)
            z = T.float32()
            if i % 2 == 1 and n > 2:
                A[i, j] = T.Let(z + T.Cast("float32", j), where={z: y})
            else:
                A[i, j] = T.if_then_else(n > 4, B[i, j] * T.float32(2), B[i, j] - y)

    mod = ts.ir.IRModule({"main": before.with_attr("global_symbol", "main")})
    after = ts.tir.transform.HoistExpression()(mod)
    assert not ts.ir.structural_equal(after["main"], mod["main"])
    b = np.random.default_rng(0).standard_normal((6, 5)).astype("float32")
    for n in (0, 3, 5):
        outs = []
        for m in (mod, after):
            a = np.zeros((6, 5), "float32")
            ts.build(m, target="c")(a, b, n)
            outs.append(a)
        ii = np.arange(6)[:, None].astype("float32")
        jj = np.arange(5)[None, :].astype("float32")
        odd = (np.arange(6)[:, None] % 2 == 1) & (n > 2)
        want = np.where(odd, ii * 3 + jj, b * 2 if n > 4 else b - ii * 3)
        np.testing.assert_allclose(outs[0], want, rtol=1e-6)
        np.testing.assert_allclose(outs[1], want, rtol=1e-6)


def test_binding_outside_every_loop_stays_and_its_condition_moves(golden):
    @T.prim_func
    def before(A: T.Buffer((4, 4), "float32"), n: T.int32):
        m = n * n + 1
        for i, j in T.grid(4, 4):
            if 5 < m:
                A[i, j] = T.float32(1)

    @T.prim_func
    def expected(A: T.Buffer((4, 4), "float32"), n: T.int32):
        if 4 < n * n:
            for i, j in T.grid(4, 4):
                A[i, j] = T.float32(1)

    # (the integer binding is then inlined by Simplify; it was never dropped before its use)
    hoisted(golden, before, expected)


def test_condition_needing_an_impure_binding_stays(golden):
    @T.prim_func
    def before(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4,), "float32")):
        for i in range(4):
            for j in range(4):
                x = B[i]
                if T.float32(0) < x:
                    A[i, j] = x

    hoisted(golden, before, before)
