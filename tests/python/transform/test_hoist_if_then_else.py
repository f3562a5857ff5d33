"""tir.HoistIfThenElse: loop-invariant conditions are tested once, outside the loop."""

import numpy as np

import tessera as ts
from tessera.script import tir as T


def test_invariant_condition_rises_through_loops(golden):
    @T.prim_func
    def before(A: T.Buffer((64,), "float32"), n: T.int32):
        for i in range(8):
            for j in range(8):
                if n > 4:
                    A[i * 8 + j] = T.float32(1)

    @T.prim_func
    def expected(A: T.Buffer((64,), "float32"), n: T.int32):
        if n > 4:
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
            if n > 4:
                A[i] = T.float32(1)
            else:
                A[i] = T.float32(2)

    @T.prim_func
    def expected(A: T.Buffer((8,), "float32"), n: T.int32):
        if n > 4:
            for i in range(8):
                A[i] = T.float32(1)
        else:
            for i in range(8):
                A[i] = T.float32(2)

    golden("HoistIfThenElse", before, expected)


def test_memory_reads_and_parallel_loops_stay(unchanged):
    @T.prim_func
    def func(A: T.Buffer((8,), "float32"), B: T.Buffer((1,), "int32"), n: T.int32):
        for i in range(8):
            if B[0] > 0:
                A[i] = T.float32(1)
        for i in T.parallel(8):
            if n > 0:
                A[i] = T.float32(2)

    unchanged("HoistIfThenElse", func)


def test_hoisted_else_builds_and_runs():
    @T.prim_func
    def func(A: T.Buffer((8,), "float32"), n: T.int32):
        for i in range(8):
            if n > 4:
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
            if n > 4:
                A[i] = T.float32(1)

    @T.prim_func
    def expected(A: T.Buffer((16,), "float32"), n: T.int32):
        if n > 4:
            for i in range(16):
                A[i] = T.float32(1)

    for field in ("support_block_scope_hoisting", "support_block_scope_hosting"):
        with ts.transform.PassContext(config={"tir.HoistIfThenElse": {field: True}}):
            golden("HoistIfThenElse", before, expected)
