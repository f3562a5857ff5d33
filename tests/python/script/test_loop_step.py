"""Loops with a step (TVM v0.23's For.step): parsed from ``T.serial(a, b, step=s)`` and
``range(a, b, s)``, printed as TVM prints them, compared structurally, lowered by
tir.CanonicalizeLoop into unit-step loops and refused by the passes and schedules that do not
know steps."""

import numpy as np
import pytest

import tessera as ts
from tessera import tir
from tessera.error import TesseraError
from tessera.ir import assert_structural_equal, structural_equal
from tessera.script import DiagnosticError
from tessera.script import tir as T


@T.prim_func
def stepped(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32"), tid: T.int32):
    for i in T.serial(tid, 64, step=3):
        B[i] = A[i] + T.float32(1)
    for i in range(1, 64, 5):
        B[i] = A[i] * T.float32(2)
    for i in T.parallel(0, 20, step=4):
        B[i] = A[i] - T.float32(1)
    for i in T.unroll(2, 9, step=2):
        B[i] = T.float32(7)


def test_steps_are_parsed():
    loops = stepped.body.seq
    assert [int(loop.step) for loop in loops] == [3, 5, 4, 2]
    assert [int(loop.extent) if isinstance(loop.extent, ts._core.IntImm) else None
            for loop in loops] == [None, 63, 20, 7]
    # A unit step is no step.
    @T.prim_func
    def unit(A: T.Buffer((8,), "float32")):
        for i in T.serial(0, 8, step=1):
            A[i] = T.float32(0)
    assert unit.body.step is None


def test_symbolic_step():
    @T.prim_func
    def f(A: T.Buffer((64,), "float32"), v: T.int32):
        for i in T.serial(0, 64, step=v):
            A[i] = T.float32(0)
    assert f.body.step.name == "v"
    assert "for i in T.serial(0, 64, step=v):" in f.script()


def test_printed_as_tvm_and_round_trips():
    text = stepped.script()
    # As TVM: a serial loop without annotations is a range, the step its third argument.
    assert "for i in range(tid, tid + (64 - tid), 3):" in text
    assert "for i in range(1, 64, 5):" in text
    assert "for i in T.parallel(0, 20, step=4):" in text
    assert "for i in T.unroll(2, 9, step=2):" in text
    assert_structural_equal(ts.script.from_source(text), stepped)


def test_structural_equality_sees_the_step():
    @T.prim_func
    def two(A: T.Buffer((8,), "float32")):
        for i in range(0, 8, 2):
            A[i] = T.float32(0)

    @T.prim_func
    def three(A: T.Buffer((8,), "float32")):
        for i in range(0, 8, 3):
            A[i] = T.float32(0)

    @T.prim_func
    def none(A: T.Buffer((8,), "float32")):
        for i in range(0, 8):
            A[i] = T.float32(0)

    assert not structural_equal(two, three)
    assert not structural_equal(two, none)
    assert ts.ir.structural_hash(two) != ts.ir.structural_hash(three)


def test_canonicalize_loop_removes_steps():
    @T.prim_func(private=True)
    def before(A: T.Buffer((64,), "float32")):
        for i in T.serial(2, 30, step=4):
            A[i] = T.float32(0)

    @T.prim_func(private=True)
    def expected(A: T.Buffer((64,), "float32")):
        for i in range(7):
            A[i * 4 + 2] = T.float32(0)

    mod = ts.ir.IRModule.from_func(before, "main")
    after = tir.transform.CanonicalizeLoop()(mod)["main"]
    assert_structural_equal(after, expected)


def test_built_stepped_loops_match_numpy():
    lib = ts.build(stepped, target="c")
    a = np.arange(64, dtype="float32")
    b = np.full(64, -5, dtype="float32")
    lib(a, b, 4)
    expect = np.full(64, -5, dtype="float32")
    expect[4:64:3] = a[4:64:3] + 1
    expect[1:64:5] = a[1:64:5] * 2
    expect[0:20:4] = a[0:20:4] - 1
    expect[2:9:2] = 7
    np.testing.assert_array_equal(b, expect)


def test_bad_steps_are_errors():
    with pytest.raises(DiagnosticError, match="step must be positive"):
        @T.prim_func
        def zero(A: T.Buffer((8,), "float32")):
            for i in T.serial(0, 8, step=0):
                A[i] = T.float32(0)
    with pytest.raises(DiagnosticError, match="literal integer step"):
        @T.prim_func
        def symbolic_range(A: T.Buffer((8,), "float32"), v: T.int32):
            for i in range(0, 8, v):
                A[i] = T.float32(0)
    with pytest.raises(DiagnosticError, match="positive step"):
        @T.prim_func
        def negative_range(A: T.Buffer((8,), "float32")):
            for i in range(8, 0, -1):
                A[i] = T.float32(0)


def test_passes_and_schedules_refuse_steps():
    @T.prim_func
    def f(A: T.Buffer((64,), "float32"), v: T.int32):
        for i in T.serial(0, 64, step=v):
            A[i] = T.float32(0)
    mod = ts.ir.IRModule.from_func(f, "main")
    with pytest.raises(TesseraError, match="tir.Simplify does not support loops with a step"):
        tir.transform.Simplify()(mod)
    with pytest.raises(TesseraError, match="may not be positive"):
        tir.transform.CanonicalizeLoop()(mod)
    with pytest.raises(TesseraError, match="tir.Schedule does not support loops with a step"):
        tir.Schedule(f)
