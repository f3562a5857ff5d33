"""Executor calls: wrong arguments are TypeError/ValueError naming the parameter."""

import numpy as np
import pytest

from tessera.dsl import script as S
from tessera.error import TesseraError

from _util import build


@S.prim_func
def add_one(a: S.ptr("int32", "global"), out: S.ptr("int32", "global")):
    out[0] = a[0] + 1


def test_none_for_an_accessed_pointer_is_a_type_error():
    ex = build(add_one)
    a = np.array([41], "int32")
    out = np.zeros(1, "int32")
    ex(a, out)
    assert out[0] == 42
    with pytest.raises(TypeError, match="argument 'a' of .*got None"):
        ex(None, out)
    with pytest.raises(TypeError, match="argument 'out'"):
        ex(a, None)


def test_integer_modulo_and_division_by_constant_zero_are_compile_errors():
    from _util import expect_diag

    @S.prim_func
    def mod_zero(a: S.ptr("int32", "global")):
        a[0] = a[0] % 0

    expect_diag(mod_zero, "a[0] % 0", "integer modulo by zero")

    @S.prim_func
    def div_zero(a: S.ptr("int32", "global")):
        x = a[0]
        a[0] = x // 0

    expect_diag(div_zero, "x // 0", "integer division by zero")


def test_read_only_arrays_pass_only_where_the_kernel_does_not_write():
    ex = build(add_one)
    a = np.array([41], "int32")
    a.flags.writeable = False
    out = np.zeros(1, "int32")
    ex(a, out)  # the entry point checks writes: a is only read
    assert out[0] == 42
    out.flags.writeable = False
    with pytest.raises(TypeError, match="argument 'out' of add_one\\(\\) is a read-only array, but "
                                        "the kernel writes through it"):
        ex(a, out)


@S.prim_func
def copy_bytes(src: S.ptr("void", "global"), dst: S.ptr("int8", "global")):
    p = src.as_ptr("int8")
    dst[0] = p[5]


def test_void_pointers_take_any_dtype_and_count_bytes(caplog):
    import logging

    ex = build(copy_bytes)
    dst = np.zeros(1, "int8")
    with caplog.at_level(logging.WARNING, logger="tessera.dsl"):
        ex(np.arange(2, dtype="int32"), dst)  # 8 bytes: byte 5 is the second int's second byte
        copy_bytes(np.arange(2, dtype="int32"), dst)
    assert caplog.records == []  # a void pointer has no dtype to differ from
    assert dst[0] == 0
    src = np.array([0, 0x1234], "int32")
    ex(src, dst)
    assert dst[0] == src.view("int8")[5]
    with pytest.raises(ValueError, match="argument 'src' of copy_bytes\\(\\) has 4 bytes but the "
                                         "kernel accesses 6 bytes"):
        ex(np.zeros(2, "int16"), dst)


@S.prim_func
def halves(a: S.ptr("bfloat16", "global"), x: S.bf16):
    a[0] = x


def test_bfloat16_arrays_and_scalars():
    import ml_dtypes

    ex = build(halves)
    a = np.zeros(2, ml_dtypes.bfloat16)
    ex(a, 3.14159)
    assert a[0] == ml_dtypes.bfloat16(3.14159)
    # A float16 array where the parameter points to bfloat16: warned about, and its bytes hold
    # the bfloat16 the kernel stores (see test_array_of_another_dtype_is_read_as_the_parameters).
    wrong = np.zeros(2, "float16")
    ex(wrong, 2.5)
    assert wrong.view(ml_dtypes.bfloat16)[0] == ml_dtypes.bfloat16(2.5)
    with pytest.raises(TypeError, match="argument 'x' of halves\\(\\) must be a number \\(bfloat16\\), got list"):
        ex(a, [1.0])



@S.prim_func
def divide_at_run_time(a: S.ptr("int32", "global"), n: S.i32, out: S.ptr("int32", "global")):
    out[0] = a[0] // n
    out[1] = a[0] % n
    out[2] = S.ceildiv(a[1], n)
    out[3] = a[2] / n


def test_runtime_zero_divisor_fails_the_call_instead_of_ending_the_process():
    # Found by trying: a scalar integer division by a zero read at run time stopped the whole
    # Python process (SIGFPE) in the compiled kernel. Now the compiled call raises a
    # TesseraRuntimeError and PySim a ZeroDivisionError; INT_MIN / -1 wraps in both.
    from tessera.dsl.pysim import PySimZeroDivisionError
    from tessera.error import TesseraRuntimeError

    ex = build(divide_at_run_time)
    int_min = np.iinfo(np.int32).min
    cases = [(np.array([-7, 7, 13], "int32"), 3, [0, 1, 2, 3], [-2, -1, 3, 4]),  # C truncation
             (np.array([int_min, 7, 13], "int32"), -1, [0, 1], [int_min, 0])]
    for a, n, lanes, want in cases:
        compiled, simulated = np.zeros(4, "int32"), np.zeros(4, "int32")
        ex(a, n, compiled)
        divide_at_run_time(a, n, simulated)
        np.testing.assert_array_equal(compiled[lanes], want)
        np.testing.assert_array_equal(simulated[lanes], want)
    a = np.array([-7, 7, 13], "int32")
    with pytest.raises(TesseraRuntimeError, match="integer division by zero"):
        ex(a, 0, np.zeros(4, "int32"))
    with pytest.raises(PySimZeroDivisionError, match="integer division by zero") as info:
        divide_at_run_time(a, 0, np.zeros(4, "int32"))
    assert isinstance(info.value, ZeroDivisionError)
    out = np.zeros(4, "int32")
    ex(a, 3, out)  # the library is still usable
    np.testing.assert_array_equal(out, [-2, -1, 3, 4])


@S.prim_func
def remainder_at_run_time(a: S.ptr("uint32", "global"), b: S.ptr("uint32", "global"),
                          out: S.ptr("uint32", "global")):
    out[0] = a[0] % b[0]
    out[1] = a[1] % b[1]


def test_runtime_remainder_by_zero_is_zero():
    # A remainder by zero is 0, as numpy's fmod (Compass's reference) and every vector lane give.
    a, b = np.array([7, 4000000000], "uint32"), np.array([0, 7], "uint32")
    compiled, simulated = np.ones(2, "uint32"), np.ones(2, "uint32")
    build(remainder_at_run_time)(a, b, compiled)
    remainder_at_run_time(a, b, simulated)
    np.testing.assert_array_equal(compiled, [0, 4000000000 % 7])
    np.testing.assert_array_equal(simulated, [0, 4000000000 % 7])


@S.prim_func
def scale_words(a: S.ptr("int32", "global"), out: S.ptr("int32", "global"), n: S.i32):
    for i in range(n):
        out[i] = a[i] * 2 + 1


@pytest.mark.parametrize("mode", ["compiled", "pysim"])
def test_array_of_another_dtype_is_read_as_the_parameters(mode, caplog):
    # As Compass: an array whose dtype is not the pointer parameter's is not refused; a warning
    # names the argument and the kernel reads and writes the array's bytes as the parameter's
    # type, without converting the values.
    import logging

    run = build(scale_words) if mode == "compiled" else scale_words
    a = np.array([1.5, -2.25, 1e-3, 7.0], "float32")
    out = np.zeros(4, "uint32")
    with caplog.at_level(logging.WARNING, logger="tessera.dsl"):
        run(a, out, 4)
    want = (a.view("int32").astype(np.int64) * 2 + 1).astype("int32")
    np.testing.assert_array_equal(out.view("int32"), want)
    warned = [r for r in caplog.records if r.name == "tessera.dsl" and r.levelno == logging.WARNING]
    assert [r.getMessage().split(" points to")[0] for r in warned] == ["argument 'a' of scale_words()",
                                                                     "argument 'out' of scale_words()"]
    assert "int32 elements but got an array of float32" in warned[0].getMessage()
    assert "without conversion" in warned[0].getMessage()

    # Elements of another size: the bytes are still what is read (two int16 per int32 here).
    caplog.clear()
    halves = np.array([1, 2, 3, 4], "int16")
    out2 = np.zeros(2, "int32")
    with caplog.at_level(logging.WARNING, logger="tessera.dsl"):
        run(halves, out2, 2)
    np.testing.assert_array_equal(out2, halves.view("int32") * 2 + 1)
    assert len(caplog.records) == 1 and "got an array of int16" in caplog.records[0].getMessage()

    # The same dtype warns about nothing.
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="tessera.dsl"):
        run(np.arange(4, dtype="int32"), out2, 2)
    assert caplog.records == []
    np.testing.assert_array_equal(out2, [1, 3])


def test_array_of_another_dtype_too_small_for_the_kernel_is_still_refused():
    # The reinterpreted array is checked like any other: 3 bytes hold no int32.
    ex = build(add_one)
    with pytest.raises(ValueError, match="argument 'a' of add_one\\(\\) has 0 elements but the "
                                         "kernel accesses 1"):
        ex(np.zeros(3, "int8"), np.zeros(1, "int32"))


@S.prim_func
def two_vectors(x: S.ptr("uint8x32", "global"), out: S.ptr("uint8x32", "global")):
    out[0] = x[0]
    out[1] = S.vror(x[0], 1, [False] * 32)  # every lane inactive, but the store writes them all


def test_a_pointer_to_vectors_is_checked_in_lanes():
    # The kernel writes two uint8x32 vectors, 64 elements: a 32-element array is refused
    # (before, the count was taken in vectors, 2 <= 32, and the write ran past the array).
    ex = build(two_vectors)
    with pytest.raises(ValueError, match="argument 'out' of two_vectors\\(\\) has 32 elements but "
                                         "the kernel accesses 64"):
        ex(np.arange(32, dtype="uint8"), np.zeros(32, "uint8"))
    with pytest.raises(ValueError, match="argument 'x' of two_vectors\\(\\) has 31 elements but "
                                         "the kernel accesses 32"):
        ex(np.arange(31, dtype="uint8"), np.zeros(64, "uint8"))
    x, out = np.arange(32, dtype="uint8"), np.zeros(64, "uint8")
    ex(x, out)
    np.testing.assert_array_equal(out[:32], x)


@S.prim_func
def fill_vectors(dst: S.ptr("int16x16", "global"), count: S.i32):
    dst[0] = S.int16x16(7)
    dst[2] = S.int16x16(count)


@S.prim_func
def fill_through_callee(a: S.ptr("int16", "global")):
    fill_vectors((a + 4).as_ptr("int16x16"), 3)


@S.prim_func
def fill_scalars(dst: S.ptr("int16", "global")):
    dst[4] = S.int16(1)


@S.prim_func
def fill_scalars_of_vectors(v: S.ptr("int16x16", "global")):
    fill_scalars(v.as_ptr("int16"))
    fill_scalars(v + 1)


def test_extents_through_a_callee_convert_between_scalars_and_vectors():
    # A callee that writes 3 int16x16 vectors from a + 4 reaches element 4 + 48 = 52.
    ex = build(fill_through_callee)
    with pytest.raises(ValueError, match="argument 'a' of fill_through_callee\\(\\) has 51 "
                                         "elements but the kernel accesses 52"):
        ex(np.zeros(51, "int16"))
    a = np.zeros(52, "int16")
    ex(a)
    np.testing.assert_array_equal(a, [0] * 4 + [7] * 16 + [0] * 16 + [3] * 16)
    # Scalars written through a pointer to vectors: v[4] and (v + 1)[4], element 20 of 21.
    ex = build(fill_scalars_of_vectors)
    with pytest.raises(ValueError, match="argument 'v' of fill_scalars_of_vectors\\(\\) has 20 "
                                         "elements but the kernel accesses 21"):
        ex(np.zeros(20, "int16"))
    v = np.zeros(21, "int16")
    ex(v)
    np.testing.assert_array_equal(np.nonzero(v)[0], [4, 20])


# Accesses indexed by loops: an index that is an affine form of loops with constant bounds
# reaches its maximum on some iteration, so that maximum is checked like a constant index.

@S.prim_func
def add_one_in_loop(a: S.ptr("int32", "global"), out: S.ptr("int32", "global")):
    for i in range(64):
        out[i] = a[i] + 1


def test_a_loop_index_is_checked_at_its_last_iteration():
    # Before, the non-constant index left the extent unknown: an 8-element `out` was taken and
    # the kernel wrote 56 int32 past its end.
    ex = build(add_one_in_loop)
    with pytest.raises(ValueError, match="argument 'out' of add_one_in_loop\\(\\) has 8 elements "
                                         "but the kernel accesses 64"):
        ex(np.zeros(64, "int32"), np.zeros(8, "int32"))
    with pytest.raises(ValueError, match="argument 'a' of add_one_in_loop\\(\\) has 63 elements "
                                         "but the kernel accesses 64"):
        ex(np.zeros(63, "int32"), np.zeros(64, "int32"))
    a = np.arange(64, dtype="int32") * 3 - 50
    out = np.zeros(64, "int32")
    ex(a, out)
    np.testing.assert_array_equal(out, a + 1)


@S.prim_func
def transpose_8x4(a: S.ptr("int16", "global"), out: S.ptr("int16", "global")):
    for i in range(4):
        for j in range(8):
            out[j * 4 + i] = a[i * 8 + j] * 2


def test_a_nested_loop_index_is_checked_at_its_maximum():
    ex = build(transpose_8x4)
    with pytest.raises(ValueError, match="argument 'out' of transpose_8x4\\(\\) has 31 elements "
                                         "but the kernel accesses 32"):
        ex(np.zeros(32, "int16"), np.zeros(31, "int16"))
    with pytest.raises(ValueError, match="argument 'a' of transpose_8x4\\(\\) has 16 elements "
                                         "but the kernel accesses 32"):
        ex(np.zeros(16, "int16"), np.zeros(32, "int16"))
    a = np.arange(32, dtype="int16") - 7
    out = np.zeros(32, "int16")
    ex(a, out)
    np.testing.assert_array_equal(out, (a.reshape(4, 8).T * 2).reshape(-1))


@S.prim_func
def add_vectors_in_loop(a: S.ptr("int32", "global"), out: S.ptr("int32", "global")):
    for i in range(3):
        out[i * 8 + 4:i * 8 + 12] = a[i * 8:i * 8 + 8] + 1


def test_a_vector_slice_in_a_loop_is_checked_at_its_last_lane():
    # The slices are ramps: the last one stores lanes 20 .. 27 of `out` and loads 16 .. 23 of `a`.
    ex = build(add_vectors_in_loop)
    with pytest.raises(ValueError, match="argument 'out' of add_vectors_in_loop\\(\\) has 27 "
                                         "elements but the kernel accesses 28"):
        ex(np.zeros(24, "int32"), np.zeros(27, "int32"))
    with pytest.raises(ValueError, match="argument 'a' of add_vectors_in_loop\\(\\) has 23 "
                                         "elements but the kernel accesses 24"):
        ex(np.zeros(23, "int32"), np.zeros(28, "int32"))
    a = np.arange(24, dtype="int32") * 5
    out = np.zeros(28, "int32")
    ex(a, out)
    np.testing.assert_array_equal(out, np.concatenate([[0] * 4, a + 1]))


@S.prim_func
def add_one_below(a: S.ptr("int32", "global"), out: S.ptr("int32", "global"), n: S.i32):
    for i in range(64):
        if i < n:
            out[i] = a[i] + 1


@S.prim_func
def add_one_until_negative(a: S.ptr("int32", "global"), out: S.ptr("int32", "global")):
    for i in range(64):
        if a[i] < 0:
            return
        out[i] = a[i] + 1


def test_a_loop_access_that_may_not_run_is_not_checked():
    # Under a condition, or after a possible early return, the last iteration's access may not
    # happen: an array as long as what the call really reaches is accepted.
    ex = build(add_one_below)
    a = np.arange(64, dtype="int32")
    out = np.zeros(8, "int32")
    ex(a, out, 8)
    np.testing.assert_array_equal(out, a[:8] + 1)
    # The kernel stops at the first negative element (a[8]): `out` needs 8 elements only.
    ex = build(add_one_until_negative)
    a = np.concatenate([np.arange(8), [-1], np.arange(55)]).astype("int32")
    out = np.zeros(8, "int32")
    ex(a, out)
    np.testing.assert_array_equal(out, a[:8] + 1)


# Constant indices count only where every call reaches them: under a condition, a scalar
# select, a mask that is not constant, in a loop that may run no iteration or after a possible
# early return, an access may not happen, so a shorter array is a valid argument. The checked
# mode (BuildManager(check_bounds=True)) still catches such an access when it does run.

@S.prim_func
def set_far_if_positive(n: S.i32, out: S.ptr("int32", "global")):
    if n > 0:
        out[100] = 1


def test_a_constant_index_under_a_condition_is_not_checked():
    # Before, `out` had to hold 101 elements even for n = 0, when nothing is written.
    ex = build(set_far_if_positive)
    out = np.arange(10, dtype="int32")
    ex(0, out)
    np.testing.assert_array_equal(out, np.arange(10))
    out = np.zeros(101, "int32")
    ex(1, out)
    np.testing.assert_array_equal(np.nonzero(out)[0], [100])
    # With n > 0 and the short array the write happens: the checked mode refuses it at run time.
    checked = build(set_far_if_positive, check_bounds=True)
    out = np.arange(10, dtype="int32")
    with pytest.raises(TesseraError, match=r"set_far_if_positive wrote outside its argument 'out' "
                                           r"\(40 bytes, 10 elements\): at byte offset 400 "
                                           r"\(element 100\), past its end"):
        checked(1, out)
    np.testing.assert_array_equal(out, np.arange(10))
    checked(0, out)
    np.testing.assert_array_equal(out, np.arange(10))


@S.prim_func
def one_branch_each(n: S.i32, a: S.ptr("int32", "global"), out: S.ptr("int32", "global")):
    if n > 0:
        out[20] = n
    else:
        a[30] = n - 1


def test_constant_indices_on_each_branch_of_an_if_else_are_not_checked():
    ex = build(one_branch_each)
    a, out = np.zeros(1, "int32"), np.zeros(21, "int32")
    ex(5, a, out)
    np.testing.assert_array_equal(out, [0] * 20 + [5])
    np.testing.assert_array_equal(a, [0])
    a, out = np.zeros(31, "int32"), np.zeros(1, "int32")
    ex(0, a, out)
    np.testing.assert_array_equal(a, [0] * 30 + [-1])
    np.testing.assert_array_equal(out, [0])


@S.prim_func
def far_or_seven(n: S.i32, a: S.ptr("int32", "global"), out: S.ptr("int32", "global")):
    out[0] = a[100] if n > 0 else 7


@S.prim_func
def flag_if_far_positive(n: S.i32, a: S.ptr("int32", "global"), out: S.ptr("int32", "global")):
    out[0] = 0
    if n > 0 and a[100] > 0:
        out[0] = 1


@S.prim_func
def pick_lanes(a: S.ptr("int32", "global"), out: S.ptr("int32", "global")):
    out[0:8] = a[0:8] if a[0:8] > 0 else a[8:16]


def test_a_constant_index_under_a_scalar_select_is_not_checked():
    ex = build(far_or_seven)
    a, out = np.array([3], "int32"), np.zeros(1, "int32")
    ex(0, a, out)
    np.testing.assert_array_equal(out, [7])
    a = np.arange(101, dtype="int32") * 2
    ex(1, a, out)
    np.testing.assert_array_equal(out, [200])
    # PySim evaluates a scalar select as C does: only the chosen operand.
    out = np.zeros(1, "int32")
    far_or_seven(0, np.array([3], "int32"), out)
    np.testing.assert_array_equal(out, [7])
    # The right operand of a scalar `and` runs only when the left one is true.
    ex = build(flag_if_far_positive)
    for run in (ex, flag_if_far_positive):
        out = np.full(1, 5, "int32")
        run(0, np.array([3], "int32"), out)
        np.testing.assert_array_equal(out, [0])
        a = np.zeros(101, "int32")
        a[100] = 4
        run(1, a, out)
        np.testing.assert_array_equal(out, [1])
    # A vector select evaluates both of its operands: both loads run and stay checked.
    ex = build(pick_lanes)
    with pytest.raises(ValueError, match="argument 'a' of pick_lanes\\(\\) has 15 elements but the "
                                         "kernel accesses 16"):
        ex(np.zeros(15, "int32"), np.zeros(8, "int32"))
    a, out = np.arange(16, dtype="int32") - 4, np.zeros(8, "int32")
    ex(a, out)
    np.testing.assert_array_equal(out, np.where(a[:8] > 0, a[:8], a[8:]))


@S.prim_func
def store_where_positive(a: S.ptr("int32", "global"), out: S.ptr("int32", "global")):
    S.vstore(a[0:8] * 2, out + 8, mask=a[0:8] > 0)


@S.prim_func
def store_first_half(a: S.ptr("int32", "global"), out: S.ptr("int32", "global")):
    S.vstore(a[0:8] * 2, out + 8, mask="4T4F")


def test_a_masked_store_at_a_constant_offset():
    # A mask known only at run time may enable no lane: `out` is not checked.
    ex = build(store_where_positive)
    a, out = -np.arange(1, 9, dtype="int32"), np.arange(8, dtype="int32")
    ex(a, out)
    np.testing.assert_array_equal(out, np.arange(8))
    a, out = np.array([1, -1] * 4, "int32"), np.zeros(16, "int32")
    ex(a, out)
    np.testing.assert_array_equal(out, [0] * 8 + [2, 0] * 4)
    # A constant mask enables known lanes: those are reached and checked (8 + 4 elements).
    ex = build(store_first_half)
    with pytest.raises(ValueError, match="argument 'out' of store_first_half\\(\\) has 11 elements "
                                         "but the kernel accesses 12"):
        ex(np.ones(8, "int32"), np.zeros(11, "int32"))
    a, out = np.arange(8, dtype="int32") + 1, np.zeros(12, "int32")
    ex(a, out)
    np.testing.assert_array_equal(out, [0] * 8 + [2, 4, 6, 8])


@S.prim_func
def first_then_maybe_far(n: S.i32, out: S.ptr("int32", "global")):
    out[0] = n
    if n > 0:
        return
    out[50] = 2


@S.prim_func
def fill_in_loop(n: S.i32, out: S.ptr("int32", "global")):
    for i in range(n):
        out[5] = i


def test_a_constant_index_after_an_early_return_is_not_checked():
    ex = build(first_then_maybe_far)
    # out[0] runs on every call, before the return: it stays checked.
    with pytest.raises(ValueError, match="argument 'out' of first_then_maybe_far\\(\\) has 0 "
                                         "elements but the kernel accesses 1"):
        ex(1, np.zeros(0, "int32"))
    out = np.zeros(1, "int32")
    ex(3, out)
    np.testing.assert_array_equal(out, [3])
    out = np.zeros(51, "int32")
    ex(0, out)
    np.testing.assert_array_equal(out, [0] * 50 + [2])
    # A loop of n iterations may run none.
    ex = build(fill_in_loop)
    out = np.zeros(1, "int32")
    ex(0, out)
    np.testing.assert_array_equal(out, [0])
    out = np.zeros(6, "int32")
    ex(4, out)
    np.testing.assert_array_equal(out, [0] * 5 + [3])


@S.prim_func
def set_at(p: S.ptr("int32", "global"), n: S.i32):
    if n > 0:
        p[0] = n


@S.prim_func
def through_view_and_callee(n: S.i32, out: S.ptr("int32", "global"), b: S.ptr("int32", "global")):
    v = out + 100
    if n > 0:
        v[0] = n
    w = (out + 8).as_ptr("int32x8")
    if n > 1:
        w[1] = S.int32x8(n)
    set_at(b + 40, n)


@S.prim_func
def unguarded_far(n: S.i32, a: S.ptr("int32", "global"), out: S.ptr("int32", "global")):
    out[100] = a[3] + 1
    v = out + 60
    v[2] = n
    w = (a + 8).as_ptr("int32x8")
    w[1] = S.int32x8(n)
    if n > 0:
        out[200] = n


def test_views_and_callees_at_constant_offsets_count_only_what_is_reached():
    # A view at a constant offset is no access, nor is an address handed to a callee that
    # writes through it only under a condition.
    ex = build(through_view_and_callee)
    out, b = np.zeros(4, "int32"), np.zeros(4, "int32")
    ex(0, out, b)
    assert not out.any() and not b.any()
    out, b = np.zeros(101, "int32"), np.zeros(41, "int32")
    ex(1, out, b)
    np.testing.assert_array_equal(np.nonzero(out)[0], [100])
    np.testing.assert_array_equal(b, [0] * 40 + [1])
    ex(9, out, b)
    expect = np.zeros(101, "int32")
    expect[16:24], expect[100] = 9, 9
    np.testing.assert_array_equal(out, expect)
    np.testing.assert_array_equal(b, [0] * 40 + [9])


def test_an_unguarded_constant_index_is_still_checked():
    ex = build(unguarded_far)
    with pytest.raises(ValueError, match="argument 'out' of unguarded_far\\(\\) has 100 elements "
                                         "but the kernel accesses 101"):
        ex(0, np.zeros(24, "int32"), np.zeros(100, "int32"))
    # Through the view of vectors: lanes 16 .. 23 of `a`.
    with pytest.raises(ValueError, match="argument 'a' of unguarded_far\\(\\) has 23 elements but "
                                         "the kernel accesses 24"):
        ex(0, np.zeros(23, "int32"), np.zeros(101, "int32"))
    # The guarded out[200] does not raise the extent: n = 0 with 101 elements runs.
    a, out = np.arange(24, dtype="int32") + 5, np.zeros(101, "int32")
    ex(0, a, out)
    expect = np.zeros(101, "int32")
    expect[100], expect[62] = 9, 0
    np.testing.assert_array_equal(out, expect)
    np.testing.assert_array_equal(a, np.concatenate([np.arange(16) + 5, [0] * 8]))
    out = np.zeros(201, "int32")
    ex(7, a, out)
    expect = np.zeros(201, "int32")
    expect[100], expect[62], expect[200] = 9, 7, 7
    np.testing.assert_array_equal(out, expect)
    np.testing.assert_array_equal(a, np.concatenate([np.arange(16) + 5, [7] * 8]))
