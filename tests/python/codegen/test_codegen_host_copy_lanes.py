"""Copies and fills in the host C: a loop that only moves data takes the target's whole vector
width (tir.SplitVectorizedLoops cuts other loops at 16 lanes), a loop storing one broadcast
value into consecutive vectors is a call of the aligned fill helper, and a broadcast is a vector
initializer. Every kernel is checked against numpy."""

import numpy as np
import pytest

import tessera as ts
from tessera import te, topi
from tessera.script import tir as T
from tessera.tir import Schedule

VECTOR_BITS = ts.autoschedule.target_facts("c")["vector_bits"]


def _vectorized(outs, lanes):
    sch = Schedule(te.create_prim_func(outs))
    (i,) = sch.get_loops(sch.get_block(outs[-1].op.name))
    _, inner = sch.split(i, [None, lanes])
    sch.vectorize(inner)
    return ts.build(sch.mod, target="c")


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "float16", "float32"])
def test_copy_takes_the_whole_vector_width(dtype):
    n, lanes = 1024, 64
    A = te.placeholder((n,), dtype, name="A")
    B = te.compute((n,), lambda i: A[i], name="B")
    lib = _vectorized([A, B], lanes)
    bits = np.dtype(dtype).itemsize * 8
    chunk = min(lanes, VECTOR_BITS // bits)
    # (a copy of 16 or more vectors into the caller's array: the copy helper, of that width)
    src = lib.get_source()
    assert f"tessera_store_{dtype}x{chunk}(" in src or f"tessera_copy_{dtype}x{chunk}(" in src
    a = np.arange(n).astype(dtype)
    out = np.zeros(n, dtype)
    lib(a, out)
    np.testing.assert_array_equal(out, a)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16"])
def test_bitwise_copy_is_wide_and_arithmetic_keeps_256_bits(dtype):
    n = 1024
    A = te.placeholder((n,), dtype, name="A")
    lib = _vectorized([A, topi.bitwise_not(A)], 64)
    bits = np.dtype(dtype).itemsize * 8
    assert f"x{min(64, VECTOR_BITS // bits)}(" in lib.get_source()
    a = np.arange(n).astype(dtype)
    out = np.zeros(n, dtype)
    lib(a, out)
    np.testing.assert_array_equal(out, np.invert(a))
    # an addition of narrow integers is not a copy: 16 lanes, or 256 bits where that is more
    # (32 lanes of bytes)
    C = te.compute((n,), lambda i: A[i] + A[i], name="C")
    lib = _vectorized([A, C], 64)
    arith = min(max(16, 256 // bits), VECTOR_BITS // bits)
    assert f"tessera_store_{dtype}x{arith}(" in lib.get_source()
    lib(a, out)
    np.testing.assert_array_equal(out, a + a)


@pytest.mark.skipif(VECTOR_BITS < 256, reason="needs vectors of 32 bytes")
def test_flipped_rows_copy_row_by_row_in_whole_vectors():
    # no schedule: the automatic schedule copies each flipped row contiguously, without the
    # fused index's divisions, in vectors of the full width
    A = te.placeholder((64, 512), "int8", name="A")
    lib = ts.build(te.create_prim_func([A, topi.flip(A, 0)]), target="c")
    src = lib.get_source()
    assert "__floordiv" not in src and "__floormod" not in src
    assert "int8x16(" not in src
    a = np.arange(64 * 512).astype("int8").reshape(64, 512)
    out = np.zeros_like(a)
    lib(a, out)
    np.testing.assert_array_equal(out, np.flip(a, 0))


@pytest.mark.parametrize("dtype", ["int8", "int16", "float32"])
def test_fill_loop_is_the_aligned_helper(dtype):
    shape = (16, 2048)
    lib = ts.build(te.create_prim_func([topi.full(shape, dtype, 5)]), target="c")
    src = lib.get_source()
    assert "tessera_fill_" in src
    out = np.zeros(shape, dtype)
    lib(out)
    np.testing.assert_array_equal(out, np.full(shape, 5, dtype))


def test_short_fill_keeps_plain_stores():
    # fewer than 16 vectors: no helper
    lib = ts.build(te.create_prim_func([topi.full((4, 32), "float32", 2)]), target="c")
    assert "tessera_fill_" not in lib.get_source()
    out = np.zeros((4, 32), "float32")
    lib(out)
    np.testing.assert_array_equal(out, np.full((4, 32), 2, "float32"))


def test_broadcast_is_an_initializer():
    col = te.placeholder((8, 1), "int8", name="c")
    lib = ts.build(te.create_prim_func([col, topi.broadcast_to(col, (8, 4096))]), target="c")
    src = lib.get_source()
    assert "r[i] = a0" not in src and "){a0, a0," in src
    c = np.arange(8, dtype="int8").reshape(8, 1)
    out = np.zeros((8, 4096), "int8")
    lib(c, out)
    np.testing.assert_array_equal(out, np.broadcast_to(c, (8, 4096)))


@pytest.mark.parametrize("dtype", ["int8", "int16", "float16", "float32"])
@pytest.mark.parametrize("k", [2, 4])
def test_repeated_lanes_are_one_permutation(dtype, k):
    # repeat along the row: each vector is a run of the row loaded as one smaller vector and
    # its lanes repeated by __builtin_shufflevector, not a lane loop
    A = te.placeholder((6, 64), dtype, name="A")
    lib = ts.build(te.create_prim_func([A, topi.repeat(A, k, 1)]), target="c")
    src = lib.get_source()
    assert f"tessera_load_repeat{k}_" in src and "__builtin_shufflevector(h, h, 0," in src
    a = np.arange(6 * 64).astype(dtype).reshape(6, 64)
    out = np.zeros((6, 64 * k), dtype)
    lib(a, out)
    np.testing.assert_array_equal(out, np.repeat(a, k, 1))


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "float16", "float32", "int32",
                                   "float64", "int64"])
@pytest.mark.parametrize("shape,k", [((40, 2048), 0), ((40, 2048), 2047), ((40, 2048), -3),
                                     ((40, 2048), 2048), ((40, 2048), -40), ((2100, 1024), 7),
                                     ((33, 2061), 5), ((33, 2061), 2050)])
def test_eye_rows_are_fills_with_one_patched_element(dtype, shape, k):
    # a row of `select(j - i == k, 1, 0)`: a fill of 0 and one store of 1 (where the diagonal
    # crosses the row), not a compare per vector
    n, m = shape
    lib = ts.build(te.create_prim_func([topi.eye(n, m, k, dtype=dtype)]), target="c")
    src = lib.get_source()
    if m % 1024 == 0 and -n < k < m:  # (no diagonal: the select is folded to 0)
        assert "tessera_fill_" in src and "tessera_fill_k" in src, src
    out = np.full(shape, 9, dtype)
    lib(out)
    np.testing.assert_array_equal(out, np.eye(n, m, k, dtype=dtype))


def test_patched_fill_follows_the_condition_not_the_row():
    # `select(j == b + i, 7, -1)` on each row: the patched column comes from an argument, also
    # outside the row (no patch), negative, at its ends, or where the lanes' int32 wraps
    n, m = 6, 4096

    @T.prim_func
    def f(b: T.int32, D: T.Buffer((n, m), "int16")):
        T.func_attr({"tir.noalias": True})  # the fill is for the caller's restrict arrays
        for i, j in T.grid(n, m):
            with T.block("D"):
                vi, vj = T.axis.remap("SS", [i, j])
                D[vi, vj] = T.Select(vj == b + vi, T.int16(7), T.int16(-1))

    lib = ts.build(f, target="c")
    assert "tessera_fill_k" in lib.get_source(), lib.get_source()
    rows = np.arange(n, dtype="int64")[:, None]
    cols = np.arange(m, dtype="int64")[None, :]
    for b in [0, 5, m - 1, m - 3, m, -1, -3, -(2**31), 2**31 - 1, 2**31 - 3]:
        d = np.zeros((n, m), "int16")
        lib(b, d)
        want = np.where(cols == (b + rows + 2**31) % 2**32 - 2**31, 7, -1).astype("int16")
        np.testing.assert_array_equal(d, want, err_msg=str(b))


@pytest.mark.parametrize("depth", [1000, 2048])
@pytest.mark.parametrize("dtype", ["float32", "int8", "float16"])
def test_one_hot_rows_are_patched_fills(depth, dtype):
    # one_hot's `select(indices[i] == j, on, off)`: the patched column is loaded per row; indices
    # outside [0, depth) patch nothing
    idx = te.placeholder((64,), "int32", name="idx")
    lib = ts.build(te.create_prim_func([idx, topi.one_hot(idx, 3, 2, depth, -1, dtype)]),
                   target="c")
    if depth % 1024 == 0:  # (rows with a tail may be cut otherwise)
        assert "tessera_fill_k" in lib.get_source()
    ind = np.array([0, depth - 1, depth, -1, 5, -(2**31), 2**31 - 1, 999] * 8, "int32")
    out = np.zeros((64, depth), dtype)
    lib(ind, out)
    want = np.where(ind[:, None] == np.arange(depth)[None, :], 3, 2).astype(dtype)
    np.testing.assert_array_equal(out, want)
