"""tir.NarrowDataType(bits): index arithmetic whose bounds provably fit `bits` is narrowed."""

import numpy as np
import pytest

import tessera as ts
from tessera import _core
from tessera.error import TesseraError
from tessera.ir import assert_structural_equal
from tessera.script import tir as T
from tessera.tir import transform as tt


def _module(func):
    return _core.IRModule.from_func(func.with_attr("global_symbol", _core.StringImm("main")), "main")


def narrow(func, bits=32):
    return tt.NarrowDataType(bits)(_module(func)).lookup("main")


def check(before, expected, bits=32):
    assert_structural_equal(narrow(before, bits),
                            expected.with_attr("global_symbol", _core.StringImm("main")))


def test_loops_and_blocks_that_fit_become_int32():
    @T.prim_func
    def before(A: T.Buffer((96,), "float32"), B: T.Buffer((96,), "float32")):
        for io in T.serial(T.int64(12)):
            for ii in T.serial(T.int64(1), T.int64(9)):
                with T.block("b"):
                    v = T.axis.spatial(T.int64(97), io * T.int64(8) + ii)
                    B[v - T.int64(1)] = A[v - T.int64(1)] * T.float32(2)

    @T.prim_func
    def expected(A: T.Buffer((96,), "float32"), B: T.Buffer((96,), "float32")):
        for io in T.serial(12):
            for ii in T.serial(1, 9):
                with T.block("b"):
                    v = T.axis.spatial(97, io * 8 + ii)
                    B[v - 1] = A[v - 1] * T.float32(2)

    check(before, expected)


def test_loops_whose_index_overflows_stay_int64():
    # i * 65536 + j reaches 2**32 - 1: both loops keep int64, the constants too.
    @T.prim_func
    def before(A: T.Buffer((T.int64(1) << T.int64(32),), "float32")):
        for i, j in T.grid(T.int64(65536), T.int64(65536)):
            A[i * T.int64(65536) + j] = T.float32(1)

    check(before, before)

    # k takes part in an index that overflows: it keeps int64 everywhere; m narrows.
    @T.prim_func
    def mixed(A: T.Buffer((64,), "float32"), B: T.Buffer((T.int64(1) << T.int64(40),), "float32"),
              C: T.Buffer((4,), "float32")):
        for k in T.serial(T.int64(64)):
            for m in T.serial(T.int64(4)):
                A[k] = B[k * T.int64(1 << 33)] + C[m]

    @T.prim_func
    def mixed_expected(A: T.Buffer((64,), "float32"),
                       B: T.Buffer((T.int64(1) << T.int64(40),), "float32"),
                       C: T.Buffer((4,), "float32")):
        for k in T.serial(T.int64(64)):
            for m in T.serial(4):
                A[k] = B[k * T.int64(1 << 33)] + C[m]

    check(mixed, mixed_expected)


def test_target_bits_16():
    @T.prim_func
    def before(A: T.Buffer((4096,), "float32")):
        for i, j in T.grid(64, 64):
            A[i * 64 + j] = T.float32(0)

    @T.prim_func
    def expected(A: T.Buffer((4096,), "float32")):
        for i, j in T.grid(T.int16(64), T.int16(64)):
            A[i * T.int16(64) + j] = T.float32(0)

    check(before, expected, bits=16)

    @T.prim_func
    def too_wide(A: T.Buffer((1 << 20,), "float32")):
        for i, j in T.grid(1024, 1024):
            A[i * 1024 + j] = T.float32(0)

    check(too_wide, too_wide, bits=16)


def test_symbolic_extent_with_a_known_bound():
    @T.prim_func
    def before(A: T.Buffer((128,), "float32"), n: T.int64):
        for i in T.serial(T.min(n, T.int64(128))):
            A[i] = T.float32(1)

    @T.prim_func
    def expected(A: T.Buffer((128,), "float32"), n: T.int64):
        for i in T.serial(T.Cast("int32", T.min(n, T.int64(128)))):
            A[i] = T.float32(1)

    check(before, expected)

    # Without a bound, an int64 extent keeps its loop int64.
    @T.prim_func
    def unbounded(a: T.handle, n: T.int64):
        A = T.match_buffer(a, (n,), "float32")
        for i in T.serial(n):
            A[i] = T.float32(1)

    check(unbounded, unbounded)


def test_casts_in_indices_drop_and_stored_values_keep_their_type():
    @T.prim_func
    def before(A: T.Buffer((16,), "int64"), B: T.Buffer((32,), "int64")):
        for i in T.serial(T.int64(16)):
            for j in range(16):
                B[T.Cast("int64", j) * T.int64(2)] = A[i] + T.int64(7)
            A[i] = i

    @T.prim_func
    def expected(A: T.Buffer((16,), "int64"), B: T.Buffer((32,), "int64")):
        for i in T.serial(16):
            for j in range(16):
                B[j * 2] = A[i] + T.int64(7)
            A[i] = T.Cast("int64", i)

    check(before, expected)


def test_conditions_and_thread_extents():
    # A comparison outside an index changes only where its operands' types came out different.
    @T.prim_func
    def before(A: T.Buffer((100,), "float32")):
        tx = T.env_thread("threadIdx.x")
        T.launch_thread(tx, T.int64(128))
        if T.Cast("int64", tx) < T.int64(100):
            for i in T.serial(T.int64(4)):
                if i < T.int64(2):
                    A[tx] = T.if_then_else(i * T.int64(3) >= T.int64(3), T.float32(1), T.float32(0))

    @T.prim_func
    def expected(A: T.Buffer((100,), "float32")):
        tx = T.env_thread("threadIdx.x")
        T.launch_thread(tx, 128)
        if T.Cast("int64", tx) < T.int64(100):
            for i in T.serial(4):
                if i < 2:
                    A[tx] = T.if_then_else(i * 3 >= 3, T.float32(1), T.float32(0))

    check(before, expected)


def test_nothing_to_narrow_returns_the_module_itself():
    @T.prim_func
    def func(A: T.Buffer((8,), "float32")):
        for i in range(8):
            A[i] = T.float32(0)

    mod = _module(func)
    assert tt.NarrowDataType(32)(mod).same_as(mod)


def test_narrowed_program_computes_the_same():
    @T.prim_func
    def wide(A: T.Buffer((T.int64(6), T.int64(10)), "float32"),
             B: T.Buffer((T.int64(10), T.int64(6)), "float32")):
        for i, j in T.grid(T.int64(6), T.int64(10)):
            with T.block("t"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vj, vi] = A[vi, vj] * T.Cast("float32", vi * T.int64(10) + vj)

    mod = _module(wide)
    narrowed = tt.NarrowDataType(32)(mod)
    lines = narrowed.script().splitlines()
    start = next(n for n, line in enumerate(lines) if "def main" in line) + 1
    body = "\n".join(lines[start:])  # the parameters keep their int64 shapes
    assert "T.grid(6, 10)" in body and "int64" not in body
    a = np.random.default_rng(0).standard_normal((6, 10)).astype("float32")
    expected = (a * np.arange(60, dtype="float32").reshape(6, 10)).T
    for m in (mod, narrowed):
        b = np.zeros((10, 6), "float32")
        ts.build(m, target="c")(a, b)
        np.testing.assert_allclose(b, expected, rtol=1e-6)


def test_bad_target_bits_are_refused():
    with pytest.raises(TesseraError, match="takes a number of bits"):
        tt.NarrowDataType("32")
    with pytest.raises(TesseraError, match="between 2 and 64"):
        tt.NarrowDataType(0)


def test_thread_bindings_and_lets():
    # x is a let variable of unknown bound: x + v overflows for all the analyzer knows, so v keeps
    # int64 there and everywhere; bx and tx, used only where the bound fits, narrow.
    @T.prim_func
    def before(A: T.Buffer((T.int64(256),), "float32"), B: T.Buffer((T.int64(256),), "float32")):
        for bx in T.thread_binding(T.int64(2), thread="blockIdx.x"):
            for tx in T.thread_binding(T.int64(128), thread="threadIdx.x"):
                with T.block("b"):
                    v = T.axis.spatial(T.int64(256), bx * T.int64(128) + tx)
                    w = T.axis.spatial(T.int64(256), bx * T.int64(128) + tx)
                    x = T.int64()
                    with T.LetStmt(w * T.int64(2), var=x):
                        A[w] = T.Cast("float32", w)
                        B[v] = T.Cast("float32", x + v)

    @T.prim_func
    def expected(A: T.Buffer((T.int64(256),), "float32"), B: T.Buffer((T.int64(256),), "float32")):
        for bx in T.thread_binding(2, thread="blockIdx.x"):
            for tx in T.thread_binding(128, thread="threadIdx.x"):
                with T.block("b"):
                    v = T.axis.spatial(T.int64(256), T.Cast("int64", bx * 128 + tx))
                    w = T.axis.spatial(256, bx * 128 + tx)
                    x = T.int64()
                    with T.LetStmt(T.Cast("int64", w * 2), var=x):
                        A[w] = T.Cast("float32", w)
                        B[v] = T.Cast("float32", x + v)

    check(before, expected)
