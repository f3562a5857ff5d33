"""PySim: calling an @S.prim_func runs it in Python on 4 TEC threads (one thread with
TESSERA_PYSIM_SINGLE_THREAD=1), macros included; out-of-bounds accesses are reported with the
source line."""

import time

import numpy as np
import pytest

from tessera.dsl import script as S
from tessera.dsl.pysim import PySimError
from tessera.dsl.testing import assert_allclose, rand

from _util import build, line_of


@S.prim_func
def _per_tec(a: S.ptr("int32", "global"), out: S.ptr("int32", "global")):
    for t in S.tec_range(4):
        v = S.vload(a + t * 8)
        S.vstore(v * 2 + t, out + t * 8)


def test_tecs_partition_work():
    a = rand(32, "int32", -1000, 1000)
    out, ref = np.zeros(32, "int32"), np.zeros(32, "int32")
    _per_tec(a, out)
    build(_per_tec)(a, ref)
    expected = a * 2 + np.repeat(np.arange(4, dtype="int32"), 8)
    assert_allclose(out, expected)
    assert_allclose(ref, expected)


@S.prim_func
def _with_barrier(a: S.ptr("int32", "global"), out: S.ptr("int32", "global")):
    buf = S.alloc_buffer([4], "int32", scope="shared")
    tid = S.get_local_id()
    buf[tid] = a[tid] * 10
    S.barrier()
    out[tid] = buf[(tid + 1) % 4]


def test_barrier_and_shared_memory(monkeypatch):
    a = np.array([1, 2, 3, 4], "int32")
    out = np.zeros(4, "int32")
    _with_barrier(a, out)
    assert out.tolist() == [20, 30, 40, 10]
    monkeypatch.setenv("TESSERA_PYSIM_SINGLE_THREAD", "1")
    with pytest.raises(PySimError, match="barrier"):
        _with_barrier(a, out)



def test_tecs_arriving_together_share_one_shared_allocation(monkeypatch):
    # Widen the window between a TEC finding no shared buffer and creating one: all four TECs
    # must still end up with the same buffer (before, each TEC's own lock let several create it).
    from tessera.dsl.pysim import interpreter

    class SlowRegion(interpreter.Region):
        def __init__(self, data, name):
            if name == "<shared>":
                time.sleep(0.05)
            super().__init__(data, name)

    monkeypatch.setattr(interpreter, "Region", SlowRegion)
    a = np.array([1, 2, 3, 4], "int32")
    for _ in range(3):
        out = np.zeros(4, "int32")
        _with_barrier(a, out)
        assert out.tolist() == [20, 30, 40, 10]

@S.macro
def _store_twice(out, a, i):
    out[i] = a[i] + a[i]


@S.prim_func
def _uses_macro(a: S.ptr("fp32", "global"), out: S.ptr("fp32", "global"), n: S.i32):
    for i in range(n):
        _store_twice(out, a, i)


def test_macro_and_scalars():
    a = rand(5, "float32", -1, 1)
    out = np.zeros(5, "float32")
    _uses_macro(a, out, 5)
    assert_allclose(out, a + a)


@S.prim_func
def _oob(a: S.ptr("int32", "global"), n: S.i32):
    S.vstore(S.vload(a + n), a)


def test_out_of_bounds_reports_line():
    with pytest.raises(PySimError) as info:
        _oob(np.zeros(8, "int32"), 4)
    assert "out-of-bounds" in info.value.message
    assert info.value.line == line_of(_oob, "S.vload(a + n)")


def test_single_thread_matches(monkeypatch):
    monkeypatch.setenv("TESSERA_PYSIM_SINGLE_THREAD", "1")
    a = rand(32, "int32", -1000, 1000)
    out = np.zeros(32, "int32")
    _per_tec(a, out)
    assert_allclose(out, a * 2 + np.repeat(np.arange(4, dtype="int32"), 8))


@S.prim_func
def _too_much_lsram(a: S.ptr("int32", "global")):
    buf = S.alloc_buffer([16384], "int32", scope="lsram")
    buf[0] = a[0]
    a[1] = buf[0]


def test_first_call_checks_like_lower():
    from tessera.error import TesseraError

    with pytest.raises(TesseraError) as info:
        _too_much_lsram(np.zeros(2, "int32"))
    assert "lsram" in str(info.value) or "SRAM" in str(info.value)


@S.prim_func
def _undefined_lanes(a: S.ptr("int32", "global"), out: S.ptr("int32", "global")):
    x = S.vload(a)
    S.vstore(S.vadd(x, 1, mask="4T"), out)


def test_undefined_lanes_get_a_pattern():
    a = np.arange(8, dtype="int32")
    out = np.zeros(8, "int32")
    _undefined_lanes(a, out)
    assert out[:4].tolist() == [1, 2, 3, 4]
    assert out[4:].tolist() != [5, 6, 7, 8]  # the fixed pattern, not the sum
    again = np.zeros(8, "int32")
    _undefined_lanes(a, again)
    assert (again == out).all()


@S.prim_func
def _early_return(out: S.ptr("int32", "global")):
    tid = S.get_local_id()
    if tid == 3:
        return
    out[tid] = 1
    S.barrier()
    out[tid + 4] = out[(tid + 1) % 3]


def test_returned_tec_leaves_the_barrier():
    out = np.zeros(8, "int32")
    _early_return(out)
    assert out.tolist() == [1, 1, 1, 0, 1, 1, 1, 0]
