"""tir.analysis.identify_memcpy: loop nests that copy one contiguous region into another."""

import pytest

from tessera import ir, tir
from tessera.error import TesseraTypeError
from tessera.script import tir as T

identify_memcpy = tir.analysis.identify_memcpy


def _regions(func):
    a, b = func.buffer_map.values()
    return a, b


def test_flat_copy_and_a_reshaping_copy_give_whole_regions():
    @T.prim_func
    def flat(A: T.Buffer(64, "float32"), B: T.Buffer(64, "float32")):
        for i in T.serial(64):
            B[i] = A[i]

    @T.prim_func
    def reshape(A: T.Buffer(64, "float32"), B: T.Buffer((8, 8), "float32")):
        for i in T.serial(64):
            B[i // 8, i % 8] = A[i]

    (src, dst), = identify_memcpy(flat.body)
    a, b = _regions(flat)
    ir.assert_structural_equal([src, dst], [a[0:64], b[0:64]])
    (src, dst), = identify_memcpy(reshape.body)
    a, b = _regions(reshape)
    ir.assert_structural_equal([src, dst], [a[0:64], b[0:8, 0:8]])


def test_nested_loops_give_one_result_per_loop_with_outer_variables_symbolic():
    @T.prim_func
    def rows(A: T.Buffer((8, 16), "float32"), B: T.Buffer(128, "float32")):
        for i, j in T.grid(8, 16):
            B[j + i * 16] = A[i, j]

    outer, inner = identify_memcpy(rows.body)
    a, b = _regions(rows)
    i = rows.body.loop_var
    ir.assert_structural_equal(list(outer), [a[0:8, 0:16], b[0:128]])
    ir.assert_structural_equal(list(inner), [a[i, 0:16], b[i * 16:i * 16 + 16]])


def test_a_loop_with_a_nonzero_start_copies_its_window():
    @T.prim_func
    def window(A: T.Buffer(64, "float32"), B: T.Buffer(64, "float32")):
        for i in T.serial(8, 24):  # i in [8, 24)
            B[i - 8] = A[i]

    (src, dst), = identify_memcpy(window.body)
    a, b = _regions(window)
    ir.assert_structural_equal([src, dst], [a[8:24], b[0:16]])


def _reason(func, which=0):
    result = identify_memcpy(func.body)[which]
    assert isinstance(result, str), result
    return result


def test_reasons_a_nest_is_not_a_copy():
    @T.prim_func
    def computed(A: T.Buffer(16, "float32"), B: T.Buffer(16, "float32")):
        for i in T.serial(16):
            B[i] = A[i] * T.float32(2)

    @T.prim_func
    def guarded(A: T.Buffer(16, "float32"), B: T.Buffer(16, "float32")):
        for i in T.serial(16):
            if i < 8:
                B[i] = A[i]

    @T.prim_func
    def strided(A: T.Buffer(32, "float32"), B: T.Buffer(16, "float32")):
        for i in T.serial(16):
            B[i] = A[i * 2]

    @T.prim_func
    def transpose(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32")):
        for i, j in T.grid(4, 4):
            B[j, i] = A[i, j]

    @T.prim_func
    def broadcast(A: T.Buffer(4, "float32"), B: T.Buffer((4, 4), "float32")):
        for i, j in T.grid(4, 4):
            B[i, j] = A[j]

    @T.prim_func
    def symbolic(n: T.int32, A: T.Buffer(64, "float32"), B: T.Buffer(64, "float32")):
        for i in T.serial(n):
            B[i] = A[i]

    assert "computed (A[i] * T.float32(2.0))" in _reason(computed)
    assert "body is a IfThenElse, not a single buffer store" in _reason(guarded)
    assert "source offsets run from 0 to 30" in _reason(strided)
    assert "not exactly the 16 elements" in _reason(strided)
    assert "split 0 of the source offset (i * 4 + j)" in _reason(transpose)
    # the inner loop of the transpose: B[j, i] steps by 4 per iteration of j
    assert "destination offsets run from i to 12 + i" in _reason(transpose, 1)
    assert "iterator i is not used" in _reason(broadcast)
    # each row alone is a copy of A into a row of B
    a, b = _regions(broadcast)
    i = broadcast.body.loop_var
    ir.assert_structural_equal(list(identify_memcpy(broadcast.body)[1]), [a[0:4], b[i, 0:4]])
    assert "non-constant range" in _reason(symbolic)


def test_a_non_statement_is_refused():
    with pytest.raises(TesseraTypeError, match="takes a statement"):
        identify_memcpy(tir.IntImm("int32", 3))


def test_tvm_ffi_entry_returns_lists_and_string_imms():
    @T.prim_func
    def pair(A: T.Buffer(8, "float32"), B: T.Buffer(8, "float32")):
        for i in T.serial(8):
            B[i] = A[i] + A[i]

    (reason,) = tir.analysis._ffi_api._identify_memcpy(pair.body)
    assert isinstance(reason, tir.StringImm)
    assert "not loaded unchanged" in reason.value
