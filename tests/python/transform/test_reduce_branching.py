"""tir.ReduceBranchingThroughOvercompute: an `if` goes when running one branch in the other's
place changes nothing observable."""

import numpy as np
import pytest

import tessera as ts
from tessera import _core
from tessera.script import tir as T
from tessera.tir import transform as tt

DATAFLOW = {"tir.ReduceBranchingThroughOvercompute": {"use_dataflow_analysis": True}}


def test_else_branch_runs_everywhere_when_then_is_it_plus_a_no_op(golden):
    @T.prim_func
    def before(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        for i in T.serial(8):
            if i >= 3:
                B[i] = A[i] * T.float32(2)
            else:
                B[i] = A[i] * T.float32(2)
                T.evaluate(0)

    @T.prim_func
    def expected(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        for i in T.serial(8):
            B[i] = A[i] * T.float32(2)
            T.evaluate(0)

    golden("ReduceBranchingThroughOvercompute", before, expected)


def test_different_branches_stay(unchanged):
    @T.prim_func
    def func(A: T.Buffer((8,), "int32")):
        for i in T.serial(8):
            if i < 5:
                A[i] = 1
            else:
                A[i] = 2

    unchanged("ReduceBranchingThroughOvercompute", func)


def test_overwritten_write_needs_the_dataflow_option(unchanged):
    @T.prim_func
    def func(A: T.Buffer((4, 4), "float32")):
        for i, j in T.grid(4, 4):
            if j < 3:
                A[i, j] = T.float32(1)
        for i in T.serial(4):
            A[i, 3] = T.float32(2)

    unchanged("ReduceBranchingThroughOvercompute", func)


def test_write_overwritten_later_in_two_dimensions(golden):
    @T.prim_func
    def before(A: T.Buffer((4, 4), "float32")):
        for i, j in T.grid(4, 4):
            if j < 3:
                A[i, j] = T.float32(1)
        for i in T.serial(4):
            A[i, 3] = T.float32(2)

    @T.prim_func
    def expected(A: T.Buffer((4, 4), "float32")):
        for i, j in T.grid(4, 4):
            A[i, j] = T.float32(1)
        for i in T.serial(4):
            A[i, 3] = T.float32(2)

    with ts.transform.PassContext(config=DATAFLOW):
        golden("ReduceBranchingThroughOvercompute", before, expected)


def test_write_read_before_it_is_overwritten_stays(unchanged):
    @T.prim_func
    def func(A: T.Buffer((8,), "int32"), B: T.Buffer((1,), "int32")):
        for i in T.serial(8):
            if i < 6:
                A[i] = 1
        B[0] = A[7]
        for i in T.serial(8):
            if i >= 6:
                A[i] = 2

    with ts.transform.PassContext(config=DATAFLOW):
        unchanged("ReduceBranchingThroughOvercompute", func)


def test_write_not_covered_by_the_later_one_stays(unchanged):
    @T.prim_func
    def func(A: T.Buffer((8,), "int32")):
        for i in T.serial(8):
            if i < 5:
                A[i] = 1
        for i in T.serial(8):
            if i >= 6:
                A[i] = 2

    with ts.transform.PassContext(config=DATAFLOW):
        unchanged("ReduceBranchingThroughOvercompute", func)


def test_stored_zeros_make_the_skipped_additions_no_ops(golden):
    @T.prim_func
    def before(A: T.Buffer((8,), "int32"), S: T.Buffer((1,), "int32")):
        for i in T.serial(8):
            A[i] = 0
        S[0] = 5
        for i in T.serial(8):
            if i < 6:
                S[0] = S[0] + A[i] * 3

    @T.prim_func
    def expected(A: T.Buffer((8,), "int32"), S: T.Buffer((1,), "int32")):
        for i in T.serial(8):
            A[i] = 0
        S[0] = 5
        for i in T.serial(8):
            S[0] = S[0] + A[i] * 3

    with ts.transform.PassContext(config=DATAFLOW):
        golden("ReduceBranchingThroughOvercompute", before, expected)


def test_unknown_values_keep_the_branch(unchanged):
    @T.prim_func
    def func(A: T.Buffer((8,), "int32"), S: T.Buffer((1,), "int32")):
        for i in T.serial(8):
            if i < 6:
                S[0] = S[0] + A[i]

    with ts.transform.PassContext(config=DATAFLOW):
        unchanged("ReduceBranchingThroughOvercompute", func)


def test_branch_that_reads_in_another_iteration_keeps_the_write(unchanged):
    # Writing A[i] for i >= 4 too would change what the else branch reads at i + 1.
    @T.prim_func
    def func(A: T.Buffer((8,), "int32"), B: T.Buffer((8,), "int32")):
        for i in T.serial(8):
            if i > 0:
                if i < 4:
                    A[i] = 1
            else:
                B[i] = A[5]
        for i in T.serial(8):
            A[i] = 3

    with ts.transform.PassContext(config=DATAFLOW):
        unchanged("ReduceBranchingThroughOvercompute", func)


def test_result_builds_and_matches_numpy():
    @T.prim_func
    def func(A: T.Buffer((4, 4), "float32")):
        for i, j in T.grid(4, 4):
            if j < 3:
                A[i, j] = T.float32(1)
        for i in T.serial(4):
            A[i, 3] = T.float32(2)

    mod = _core.IRModule.from_func(func.with_attr("global_symbol", _core.StringImm("main")), "main")
    with ts.transform.PassContext(config=DATAFLOW):
        after = tt.ReduceBranchingThroughOvercompute()(mod)
    assert "if" not in after.script()
    a = np.zeros((4, 4), dtype="float32")
    ts.build(after, target="c")(a)
    expect = np.ones((4, 4), dtype="float32")
    expect[:, 3] = 2
    np.testing.assert_array_equal(a, expect)


def test_unknown_option_field_is_refused():
    with pytest.raises(AttributeError, match="use_dataflow_analysis"):
        with ts.transform.PassContext(config={"tir.ReduceBranchingThroughOvercompute": {"dataflow": True}}):
            pass
