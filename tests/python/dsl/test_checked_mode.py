"""Checked mode of DSL executors (BuildManager(check_bounds=True) or TESSERA_CHECK_BOUNDS=1):
each array argument is copied between guard pages for the call, so an access outside it is an
error naming the kernel, the argument and the offset instead of corrupting memory."""

import numpy as np
import pytest

from tessera.dsl import script as S
from tessera.dsl.build_manager import BuildManager
from tessera.error import TesseraError


@S.prim_func
def copy_at(x: S.ptr("fp32", "global"), out: S.ptr("fp32", "global"), i: S.i32, j: S.i32):
    for t in S.tec_range(1):
        out[j] = x[i] * 2.0


@S.prim_func
def copy_vector_at(x: S.ptr("fp32x8", "global"), out: S.ptr("fp32x8", "global"), k: S.i32):
    for t in S.tec_range(1):
        out[k] = x[k]


@S.prim_func
def write_per_tec(out: S.ptr("int32", "global"), n: S.i32):
    for t in S.tec_range(4):
        out[t * n] = t + 1


def checked(kernel):
    return BuildManager(check_bounds=True).build(kernel)


def test_in_bounds_calls_compute_as_unchecked():
    ex = checked(copy_at)
    x = np.arange(8, dtype="float32")
    out = np.zeros(8, "float32")
    ex(x, out, 3, 5)
    assert out[5] == 6.0 and np.count_nonzero(out) == 1
    # A read-only input is read from its copy and never written back.
    ro = np.frombuffer(np.arange(8, dtype="float32").tobytes(), "float32")
    ex(ro, out, 7, 0)
    assert out[0] == 14.0


def test_read_past_the_end_names_kernel_argument_and_offset():
    ex = checked(copy_at)
    x = np.arange(8, dtype="float32")
    out = np.zeros(8, "float32")
    with pytest.raises(TesseraError, match=r"copy_at read outside its argument 'x' \(32 bytes, 8 "
                                           r"elements\): at byte offset 40 \(element 10\), past its end"):
        ex(x, out, 10, 0)
    # The results of the failed call are discarded.
    assert not out.any()


def test_write_before_the_start():
    ex = checked(copy_at)
    x = np.arange(8, dtype="float32")
    out = np.zeros(8, "float32")
    with pytest.raises(TesseraError, match=r"wrote outside its argument 'out' .*element -3\), before its start"):
        ex(x, out, 0, -3)


def test_vector_pointer_one_past_the_end():
    # The case: 256-bit vectors, arrays of one vector, x[1] and out[1].
    ex = checked(copy_vector_at)
    x = np.ones(8, "float32")
    out = np.zeros(8, "float32")
    ex(x, out, 0)
    np.testing.assert_array_equal(out, x)
    with pytest.raises(TesseraError, match=r"copy_vector_at read outside its argument 'x' .*byte offset 32"):
        ex(x, np.zeros(8, "float32"), 1)


def test_fault_on_another_tec_thread():
    ex = checked(write_per_tec)
    out = np.zeros(16, "int32")
    ex(out, 4)
    np.testing.assert_array_equal(out[::4], [1, 2, 3, 4])
    with pytest.raises(TesseraError, match=r"write_per_tec wrote outside its argument 'out'"):
        ex(np.zeros(16, "int32"), 6)


def test_environment_variable_turns_it_on(monkeypatch):
    monkeypatch.setenv("TESSERA_CHECK_BOUNDS", "1")
    assert BuildManager().check_bounds
    monkeypatch.setenv("TESSERA_CHECK_BOUNDS", "0")
    assert not BuildManager().check_bounds
    assert BuildManager(check_bounds=True).check_bounds
