"""Copies of consecutive vectors into a caller's array in the host C: a nest of serial loops
that stores a contiguous load (a row of take / repeat / broadcast_to, a part of stack) is one
loop whose stores are aligned (first and last vector unaligned, those between stored at
aligned addresses). Every kernel is checked against numpy, with outputs (and inputs) at every
offset into a cache line that numpy's arrays and views may have."""

import numpy as np
import pytest

import tessera as ts
from tessera import te, topi

VECTOR_BITS = ts.autoschedule.target_facts("c")["vector_bits"]
DTYPES = ["int8", "uint8", "int16", "float16", "int32", "float32", "int64", "float64", "bool"]


def _at_offset(shape, dtype, offset):
    """An array of `shape` whose data starts `offset` bytes past a 64-byte boundary."""
    n = int(np.prod(shape)) * np.dtype(dtype).itemsize
    buf = np.zeros(n + 128, np.uint8)
    start = (-buf.ctypes.data) % 64 + offset
    out = buf[start:start + n].view(dtype).reshape(shape)
    assert out.ctypes.data % 64 == offset
    return out


def _data(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    if np.dtype(dtype).kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)


def _offsets(dtype):
    size = np.dtype(dtype).itemsize
    return sorted({0, size, 16, 48, 64 - size})


def _check(lib, args, shape, dtype, want):
    for offset in _offsets(dtype):
        out = _at_offset(shape, dtype, offset)
        if dtype == "bool":
            out[...] = True
        else:
            out.fill(7)
        lib(*args, out)
        np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("dtype", DTYPES)
def test_take_rows_copy_each_row_with_aligned_stores(dtype):
    shape = (37, 2048)
    A = te.placeholder(shape, dtype, name="A")
    I = te.placeholder((53,), "int32", name="I")
    lib = ts.build(te.create_prim_func([A, I, topi.take(A, I, axis=0)]), target="c")
    assert "tessera_vec_skip" in lib.get_source()
    a = _data(shape, dtype)
    idx = np.random.default_rng(1).integers(0, shape[0], 53).astype("int32")
    _check(lib, [a, idx], (53, shape[1]), dtype, np.take(a, idx, axis=0))


@pytest.mark.parametrize("dtype", DTYPES)
def test_repeat_rows_and_broadcast_rows_are_aligned_copies(dtype):
    A = te.placeholder((9, 1024), dtype, name="A")
    lib = ts.build(te.create_prim_func([A, topi.repeat(A, 3, 0)]), target="c")
    # (bool rows are not copied row by row by the injective rule: checked, not asserted)
    assert "tessera_vec_skip" in lib.get_source() or dtype == "bool"
    a = _data((9, 1024), dtype, 2)
    _check(lib, [a], (27, 1024), dtype, np.repeat(a, 3, 0))
    R = te.placeholder((1024,), dtype, name="R")
    lib = ts.build(te.create_prim_func([R, topi.broadcast_to(R, (21, 1024))]), target="c")
    assert "tessera_vec_skip" in lib.get_source() or dtype == "bool"
    r = _data((1024,), dtype, 3)
    _check(lib, [r], (21, 1024), dtype, np.broadcast_to(r, (21, 1024)))


@pytest.mark.parametrize("dtype", DTYPES)
def test_stack_parts_are_aligned_copies(dtype):
    shape = (64, 1024)
    A = te.placeholder(shape, dtype, name="A")
    B = te.placeholder(shape, dtype, name="B")
    lib = ts.build(te.create_prim_func([A, B, topi.stack([A, B], 0)]), target="c")
    assert "tessera_vec_skip" in lib.get_source()
    a, b = _data(shape, dtype, 4), _data(shape, dtype, 5)
    _check(lib, [a, b], (2,) + shape, dtype, np.stack([a, b]))


@pytest.mark.parametrize("dtype", ["int8", "float16", "float32", "float64"])
@pytest.mark.parametrize("in_offset", [0, 8, 16, 40])
def test_copy_reads_inputs_at_any_offset(dtype, in_offset):
    # the stores are aligned, the loads wherever the input lies
    shape = (11, 1024)
    A = te.placeholder(shape, dtype, name="A")
    I = te.placeholder((13,), "int32", name="I")
    lib = ts.build(te.create_prim_func([A, I, topi.take(A, I, axis=0)]), target="c")
    a = _at_offset(shape, dtype, in_offset)
    a[...] = _data(shape, dtype, 6)
    idx = np.random.default_rng(7).integers(0, shape[0], 13).astype("int32")
    _check(lib, [a, idx], (13, shape[1]), dtype, np.take(a, idx, axis=0))


@pytest.mark.parametrize("dtype", ["int8", "int16", "float32", "float64"])
@pytest.mark.parametrize("width", [1000, 1030, 33, 4096 + 7])
def test_rows_not_whole_vectors_copy_exactly(dtype, width):
    # rows whose length is no multiple of a vector (their tails, or a fused copy): whatever
    # the loops become, the copy equals numpy's at every output offset
    A = te.placeholder((7, width), dtype, name="A")
    I = te.placeholder((9,), "int32", name="I")
    lib = ts.build(te.create_prim_func([A, I, topi.take(A, I, axis=0)]), target="c")
    a = _data((7, width), dtype, 8)
    idx = np.array([6, 0, 3, 3, 1, 5, 2, 4, 6], "int32")
    _check(lib, [a, idx], (9, width), dtype, np.take(a, idx, axis=0))
    lib = ts.build(te.create_prim_func([A, topi.repeat(A, 2, 0)]), target="c")
    _check(lib, [a], (14, width), dtype, np.repeat(a, 2, 0))


def test_short_rows_keep_plain_stores():
    # fewer than 16 vectors a row (and rows that do not follow one another): plain stores
    A = te.placeholder((64, 64), "float32", name="A")
    I = te.placeholder((64,), "int32", name="I")
    lib = ts.build(te.create_prim_func([A, I, topi.take(A, I, axis=0)]), target="c")
    if VECTOR_BITS >= 256:
        assert "tessera_vec_skip" not in lib.get_source()
    a = _data((64, 64), "float32", 9)
    idx = np.arange(64)[::-1].astype("int32")
    _check(lib, [a, idx], (64, 64), "float32", np.take(a, idx, axis=0))


def test_division_keeps_its_loop():
    # a stored value with a division (not cheap enough to compute a vector twice) keeps its
    # loop; a negation is a lane-wise value like a copy and takes the aligned stores
    A = te.placeholder((16, 2048), "float32", name="A")
    B = te.compute((16, 2048), lambda i, j: A[i, j] / 3.0, name="B")
    lib = ts.build(te.create_prim_func([A, B]), target="c")
    assert "tessera_vec_skip" not in lib.get_source()
    a = _data((16, 2048), "float32", 10)
    _check(lib, [a], (16, 2048), "float32", a / np.float32(3.0))
    C = te.compute((16, 2048), lambda i, j: -A[i, j], name="C")
    lib = ts.build(te.create_prim_func([A, C]), target="c")
    assert VECTOR_BITS < 256 or "tessera_vec_skip" in lib.get_source()
    _check(lib, [a], (16, 2048), "float32", -a)
