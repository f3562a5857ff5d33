"""Fills and copies with a tail, and copies whose stores are aligned, in the host C.

Rows of no whole number of vectors (eye of 1001, one_hot of depth 333) are vectorized with a
tail by the injective rule, and the fill helper then covers the row's n * L + r elements (its
last vector overlapping the one before it), with the patched element of either part; a loop
that copies consecutive vectors of an array into a caller's array is a call of
tessera_copy_*, whose stores are aligned where the output is misaligned to the input. Every
kernel is checked against numpy, on several offsets of the arrays in memory."""

import numpy as np
import pytest

import tessera as ts
from tessera import te, topi

DTYPES = ["float32", "int8", "int16", "int32", "float16", "float64", "uint8", "int64"]


def _at_offset(shape, dtype, offset):
    """A C-contiguous array of ``shape`` whose data starts ``offset`` bytes past a 64-byte
    boundary (a view into a larger buffer)."""
    itemsize = np.dtype(dtype).itemsize
    count = int(np.prod(shape))
    raw = np.zeros(count * itemsize + 128, np.uint8)
    start = (-raw.ctypes.data) % 64 + offset
    return raw[start : start + count * itemsize].view(dtype).reshape(shape)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n,m,k", [(1001, 1001, 0), (37, 1001, 5), (37, 1001, 990),
                                   (37, 1001, 1000), (70, 333, -3), (5, 130, 0),
                                   (1000, 1000, 0), (37, 1001, 1001), (20, 1001, -25)])
def test_eye_rows_with_a_tail_are_one_fill(dtype, n, m, k):
    lib = ts.build(te.create_prim_func([topi.eye(n, m, k, dtype=dtype)]), target="c")
    src = lib.get_source()
    # no division of the flat index per lane or element (eye 1001 took 25-45x numpy's time)
    assert "__floormod" not in src and "floormod_" not in src, src
    # (no diagonal: the select is folded to 0; a row under 16 vectors keeps its stores)
    if -n < k < m and m * np.dtype(dtype).itemsize >= 1100:
        assert "tessera_fill_" in src, src
    for offset in (0, 16, 36):
        out = _at_offset((n, m), dtype, offset)
        out[...] = 9
        lib(out)
        np.testing.assert_array_equal(out, np.eye(n, m, k, dtype=dtype), err_msg=str(offset))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("depth", [1001, 333, 130])
def test_one_hot_rows_with_a_tail_are_one_fill(dtype, depth):
    idx = te.placeholder((96,), "int32", name="idx")
    lib = ts.build(te.create_prim_func([idx, topi.one_hot(idx, 3, 2, depth, -1, dtype)]),
                   target="c")
    src = lib.get_source()
    if depth * np.dtype(dtype).itemsize >= 1100:  # (a row under 16 vectors keeps its stores)
        assert "tessera_fill_k" in src and "tessera_fill_t" in src, src
    # in the vectors, in the tail, at the row's ends, outside the row, int32 extremes
    ind = np.array([0, depth - 1, depth - 2, depth, -1, 5, -(2**31), 2**31 - 1,
                    depth - depth % 16, depth - depth % 16 - 1, depth // 2, 1] * 8, "int32")
    want = np.where(np.arange(depth)[None, :] == ind[:, None], 3, 2).astype(dtype)
    for offset in (0, 16, 8):
        out = _at_offset((96, depth), dtype, offset)
        lib(ind, out)
        np.testing.assert_array_equal(out, want, err_msg=str(offset))


@pytest.mark.parametrize("dtype", ["int8", "float32", "float16", "int64"])
def test_one_hot_float_values_take_the_dtype(dtype):
    # on/off values given as Python floats are cast to the output's dtype (as tir.const)
    idx = te.placeholder((8,), "int32", name="idx")
    out_t = topi.one_hot(idx, 1.0, 0.0, 40, -1, dtype)
    assert out_t.dtype == dtype
    lib = ts.build(te.create_prim_func([idx, out_t]), target="c")
    ind = np.array([0, 39, 40, -1, 7, 3, 3, 20], "int32")
    out = np.zeros((8, 40), dtype)
    lib(ind, out)
    np.testing.assert_array_equal(out, (np.arange(40)[None, :] == ind[:, None]).astype(dtype))


@pytest.mark.parametrize("dtype", ["float32", "int8", "int16", "int32", "float16", "float64",
                                   "uint8", "bool"])
@pytest.mark.parametrize("shape", [(8, 64, 28, 56), (3, 5, 7, 61), (2, 1, 1, 4099)])
def test_flatten_is_a_copy_with_aligned_stores(dtype, shape):
    A = te.placeholder(shape, dtype, name="A")
    lib = ts.build(te.create_prim_func([A, topi.nn.flatten(A)]), target="c")
    src = lib.get_source()
    rows, cols = shape[0], int(np.prod(shape[1:]))
    rng = np.random.default_rng(0)
    for a_off, out_off in [(0, 0), (16, 0), (0, 16), (48, 16), (16, 48), (32, 0), (4, 8),
                           (0, 1), (3, 0)]:
        a = _at_offset(shape, dtype, a_off)
        if dtype == "bool":
            a[...] = rng.integers(0, 2, shape).astype(bool)
        else:
            a[...] = rng.integers(-100, 100, shape).astype(dtype)
        out = _at_offset((rows, cols), dtype, out_off)
        out[...] = 0
        lib(a, out)
        np.testing.assert_array_equal(out, a.reshape(rows, -1), err_msg=f"{a_off} {out_off}")
    if dtype != "bool" and shape == (8, 64, 28, 56):
        # the copy helper, or the parallel nest's flat aligned loop (PrintAlignedStoreLoop)
        assert "tessera_copy_" in src or "tessera_vec_skip" in src, src


@pytest.mark.parametrize("dtype", ["float32", "int8", "int16", "float64"])
@pytest.mark.parametrize("cols", [2049, 1333, 64 * 17 + 1])
def test_copy_of_rows_with_a_tail(dtype, cols):
    # flip's rows `A[n - 1 - i, j]`: row copies (tir.InnerRowLanes) with a tail; the helper
    # copies the n * L + r elements, its last vector overlapping the one before
    A = te.placeholder((9, cols), dtype, name="A")
    lib = ts.build(te.create_prim_func([A, topi.flip(A, 0)]), target="c")
    src = lib.get_source()
    assert "tessera_copy_" in src or "tessera_vec_skip" in src, src
    for a_off, out_off in [(0, 0), (16, 0), (0, 48), (8, 24)]:
        a = _at_offset((9, cols), dtype, a_off)
        a[...] = np.arange(9 * cols).reshape(9, cols).astype(dtype)
        out = _at_offset((9, cols), dtype, out_off)
        out[...] = 0
        lib(a, out)
        np.testing.assert_array_equal(out, np.flip(a, 0), err_msg=f"{a_off} {out_off}")


@pytest.mark.parametrize("dtype", ["float32", "int8", "int16", "float64"])
@pytest.mark.parametrize("shape", [(1001, 1001), (2048, 2048), (3, 4099)])
def test_full_fills_every_element(dtype, shape):
    lib = ts.build(te.create_prim_func([topi.full(shape, dtype, 3)]), target="c")
    # (offset 1: an array not aligned to its element, as numpy allows)
    for offset in (0, 16, 40, 1):
        out = _at_offset(shape, dtype, offset)
        out[...] = 0
        lib(out)
        np.testing.assert_array_equal(out, np.full(shape, 3, dtype), err_msg=str(offset))
