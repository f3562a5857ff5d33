"""tir.AnnotateIrregularLoop: loops that break or continue are marked {"irregular_loop_mark": 1}."""

import pytest

import tessera as ts
from tessera.error import TesseraError
from tessera.ir import assert_structural_equal
from tessera.script import tir as T
from tessera.tir import transform as tt


def run(func):
    return tt.AnnotateIrregularLoop()(ts.ir.IRModule({"main": func}))["main"]


def same(after, expected):
    return expected.with_attr("global_symbol", after.attrs["global_symbol"])


def test_only_the_loop_a_jump_leaves_is_marked():
    @T.prim_func
    def before(A: T.Buffer((4, 6), "int32"), n: T.int32):
        for i in T.serial(4):
            for j in T.serial(6):
                if A[i, j] == n:
                    break
                A[i, j] = A[i, j] - 1
            for j2 in T.serial(6, annotations={"keep": 3}):
                if A[i, j2] < 0:
                    continue
                A[i, j2] = 0

    @T.prim_func
    def expected(A: T.Buffer((4, 6), "int32"), n: T.int32):
        for i in T.serial(4):
            for j in T.serial(6, annotations={"irregular_loop_mark": 1}):
                if A[i, j] == n:
                    break
                A[i, j] = A[i, j] - 1
            for j2 in T.serial(6, annotations={"keep": 3, "irregular_loop_mark": 1}):
                if A[i, j2] < 0:
                    continue
                A[i, j2] = 0

    after = run(before)
    assert_structural_equal(after, same(after, expected))
    # Negative: the outer loop carries no mark.
    assert not ts.ir.structural_equal(after, same(after, before))


def test_jump_of_a_while_loop_marks_nothing():
    @T.prim_func
    def before(A: T.Buffer((8,), "int32")):
        for i in T.serial(2):
            k = T.int32(0)
            while k < 4:
                if A[i * 4 + k] > 0:
                    break
                k = k + 1

    after = run(before)
    assert_structural_equal(after, same(after, before))


def test_parallel_loop_that_breaks_is_an_error():
    @T.prim_func
    def before(A: T.Buffer((8,), "int32")):
        for i in T.parallel(8):
            if A[i] > 0:
                break
            A[i] = 1

    with pytest.raises(TesseraError, match="loop i leaves iterations early .* must be serial"):
        run(before)


def test_unrolled_loop_annotation_that_breaks_is_an_error():
    @T.prim_func
    def before(A: T.Buffer((8,), "int32")):
        for i in T.serial(8, annotations={"pragma_auto_unroll_max_step": 4}):
            if A[i] > 0:
                continue
            A[i] = 1

    with pytest.raises(TesseraError, match="cannot carry the annotation \"pragma_auto_unroll_max_step\""):
        run(before)
