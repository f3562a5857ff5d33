"""tir.HoistIfThenElse: loop-invariant conditions are tested once, outside the loop.

As TVM v0.23's, it is tir.HoistExpression restricted to if-statement conditions, followed by
Simplify (which writes `n > 4` as `4 < n`) and RemoveNoOp."""

import numpy as np
import pytest

import tessera as ts
from tessera.script import tir as T

from conftest import run_pass


def test_invariant_condition_rises_through_loops(golden):
    @T.prim_func
    def before(A: T.Buffer((64,), "float32"), n: T.int32):
        for i in range(8):
            for j in range(8):
                if 4 < n:
                    A[i * 8 + j] = T.float32(1)

    @T.prim_func
    def expected(A: T.Buffer((64,), "float32"), n: T.int32):
        if 4 < n:
            for i in range(8):
                for j in range(8):
                    A[i * 8 + j] = T.float32(1)

    golden("HoistIfThenElse", before, expected)


def test_condition_on_the_loop_variable_stays(golden):
    @T.prim_func
    def before(A: T.Buffer((64,), "float32")):
        for i in range(8):
            for j in range(8):
                if i < 4:
                    A[i * 8 + j] = T.float32(1)

    @T.prim_func
    def expected(A: T.Buffer((64,), "float32")):
        for i in range(8):
            if i < 4:
                for j in range(8):
                    A[i * 8 + j] = T.float32(1)

    golden("HoistIfThenElse", before, expected)


def test_else_branch_gets_its_own_loop(golden):
    @T.prim_func
    def before(A: T.Buffer((8,), "float32"), n: T.int32):
        for i in range(8):
            if 4 < n:
                A[i] = T.float32(1)
            else:
                A[i] = T.float32(2)

    @T.prim_func
    def expected(A: T.Buffer((8,), "float32"), n: T.int32):
        if 4 < n:
            for i in range(8):
                A[i] = T.float32(1)
        else:
            for i in range(8):
                A[i] = T.float32(2)

    golden("HoistIfThenElse", before, expected)


def test_memory_reads_stay(unchanged):
    @T.prim_func
    def func(A: T.Buffer((8,), "float32"), B: T.Buffer((1,), "int32"), n: T.int32):
        for i in range(8):
            if B[0] > 0:
                A[i] = T.float32(1)

    unchanged("HoistIfThenElse", func)


def test_parallel_loops_are_hoisted_through_as_tvm_does(golden):
    @T.prim_func
    def before(A: T.Buffer((8,), "float32"), n: T.int32):
        for i in T.parallel(8):
            if 0 < n:
                A[i] = T.float32(2)

    @T.prim_func
    def expected(A: T.Buffer((8,), "float32"), n: T.int32):
        if 0 < n:
            for i in T.parallel(8):
                A[i] = T.float32(2)

    golden("HoistIfThenElse", before, expected)


def test_condition_in_a_sequence_is_hoisted_only_inside_it(golden):
    @T.prim_func
    def before(A: T.Buffer((8, 4), "float32"), B: T.Buffer((8,), "float32"), n: T.int32):
        for i in range(8):
            B[i] = T.float32(0)
            for j in range(4):
                if 0 < n:
                    A[i, j] = T.float32(1)

    @T.prim_func
    def expected(A: T.Buffer((8, 4), "float32"), B: T.Buffer((8,), "float32"), n: T.int32):
        for i in range(8):
            B[i] = T.float32(0)
            if 0 < n:
                for j in range(4):
                    A[i, j] = T.float32(1)

    golden("HoistIfThenElse", before, expected)


@T.prim_func
def thread_cond(A: T.Buffer((32, 4), "float32")):
    tx = T.env_thread("threadIdx.x")
    T.launch_thread(tx, 32)
    for j in range(4):
        if tx < 8:
            A[tx, j] = T.float32(1)


def test_thread_variable_conditions_need_block_scope_option(unchanged):
    unchanged("HoistIfThenElse", thread_cond)


def test_basic_variant_and_the_expression_attribute(golden):
    @T.prim_func
    def hoisted(A: T.Buffer((32, 4), "float32")):
        tx = T.env_thread("threadIdx.x")
        T.launch_thread(tx, 32)
        if tx < 8:
            for j in range(4):
                A[tx, j] = T.float32(1)

    with ts.transform.PassContext(
            config={"tir.HoistIfThenElse": {"support_block_scope_hoisting": True}}):
        golden("HoistIfThenElse", thread_cond, hoisted)
        # "basic" ignores the option
        mod = ts.ir.IRModule({"main": thread_cond.with_attr("global_symbol", "main")})
        assert ts.tir.transform.HoistIfThenElse("basic")(mod).same_as(mod)

    @T.prim_func
    def expr(A: T.Buffer((4, 4), "float32"), n: T.int32):
        for i, j in T.grid(4, 4):
            A[i, j] = T.if_then_else(0 < n, T.float32(1), T.float32(2))

    @T.prim_func
    def expr_hoisted(A: T.Buffer((4, 4), "float32"), n: T.int32):
        if 0 < n:
            for i, j in T.grid(4, 4):
                A[i, j] = T.float32(1)
        else:
            for i, j in T.grid(4, 4):
                A[i, j] = T.float32(2)

    # only if-statements by default; a function marked tir.HoistIfThenElseExprWithBlock = 1
    # hoists the conditions of T.if_then_else instead
    mod = ts.ir.IRModule({"main": expr.with_attr("global_symbol", "main")})
    assert ts.tir.transform.HoistIfThenElse()(mod).same_as(mod)
    marked = ts.ir.IRModule({"main": expr.with_attr("global_symbol", "main")
                             .with_attr("tir.HoistIfThenElseExprWithBlock", 1)})
    after = ts.tir.transform.HoistIfThenElse()(marked)["main"]
    want = expr_hoisted.with_attr("global_symbol", "main").with_attr(
        "tir.HoistIfThenElseExprWithBlock", 1)
    ts.ir.assert_structural_equal(after, want)


def test_unknown_variant_is_refused():
    with pytest.raises(ts.error.TesseraValueError, match="variant"):
        ts.tir.transform.HoistIfThenElse("advanced")


def test_hoisted_else_builds_and_runs():
    @T.prim_func
    def func(A: T.Buffer((8,), "float32"), n: T.int32):
        for i in range(8):
            if 4 < n:
                A[i] = T.Cast("float32", i)
            else:
                A[i] = T.Cast("float32", i * 2)

    lib = ts.build(func, target="c")
    a = np.zeros(8, "float32")
    lib(a, 5)
    np.testing.assert_array_equal(a, np.arange(8, dtype="float32"))
    lib(a, 1)
    np.testing.assert_array_equal(a, 2 * np.arange(8, dtype="float32"))


def test_block_scope_option_takes_tvm_v023_spelling(golden):
    # TVM v0.23's field is "support_block_scope_hoisting"; the older "..._hosting" stays valid.
    @T.prim_func
    def before(A: T.Buffer((16,), "float32"), n: T.int32):
        for i in range(16):
            if 4 < n:
                A[i] = T.float32(1)

    @T.prim_func
    def expected(A: T.Buffer((16,), "float32"), n: T.int32):
        if 4 < n:
            for i in range(16):
                A[i] = T.float32(1)

    for field in ("support_block_scope_hoisting", "support_block_scope_hosting"):
        with ts.transform.PassContext(config={"tir.HoistIfThenElse": {field: True}}):
            golden("HoistIfThenElse", before, expected)


def test_a_thread_relaunched_with_another_extent_is_refused():
    @T.prim_func
    def func(A: T.Buffer((64,), "float32"), n: T.int32):
        tx = T.env_thread("threadIdx.x")
        with T.launch_thread(tx, 32):
            for i in range(n):
                with T.launch_thread(tx, 16):
                    if tx < 3:
                        A[tx] = T.float32(1)

    with pytest.raises(ValueError, match="launched with extent 16 inside its own launch with extent 32"):
        run_pass("HoistIfThenElse", func)


def test_a_thread_relaunched_with_its_extent_is_accepted(golden):
    # Without "support_block_scope_hoisting" the launch stops the condition; the repeated launch
    # itself is fine.
    @T.prim_func
    def func(A: T.Buffer((64,), "float32"), n: T.int32):
        tx = T.env_thread("threadIdx.x")
        with T.launch_thread(tx, 32):
            for i in range(8):
                with T.launch_thread(tx, 32):
                    if 4 < n:
                        A[tx] = T.float32(1)

    golden("HoistIfThenElse", func, func)
