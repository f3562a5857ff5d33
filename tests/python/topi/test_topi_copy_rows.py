"""Data movement built with no schedule (the automatic schedule), against numpy, exactly: the
copies that move whole rows in full-width vectors (flip, repeat, split, broadcast_to, take rows,
tile, reshape, flatten), the fills (full, full_like, broadcast_to a column) and bitwise_not, in
every width the copy path handles and in shapes whose rows are no whole number of vectors."""

import numpy as np
import pytest

import tessera as ts
from tessera import te, topi

DTYPES = ["int8", "uint8", "int16", "float16", "int64", "bool"]
# rows of whole vectors, rows with a tail, short rows with a tail
SHAPES = [(8, 256), (37, 200), (6, 130)]


def _data(rng, shape, dtype):
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if np.dtype(dtype).kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, shape, endpoint=True).astype(dtype)


def _run(ins, outs, arrays):
    lib = ts.build(te.create_prim_func(list(ins) + list(outs)), target="c")
    results = [np.empty([int(s) for s in o.shape], str(o.dtype)) for o in outs]
    lib(*arrays, *results)
    return results


def _check(make, ref, shapes, dtype, seed=0, in_dtypes=None):
    rng = np.random.default_rng(seed)
    dts = in_dtypes or [dtype] * len(shapes)
    ins = [te.placeholder(s, d, name=f"x{k}") for k, (s, d) in enumerate(zip(shapes, dts))]
    arrays = [_data(rng, s, d) if d == dtype else rng.integers(0, shapes[0][0], s).astype(d)
              for s, d in zip(shapes, dts)]
    outs = make(*ins)
    outs = outs if isinstance(outs, (list, tuple)) else [outs]
    want = ref(*arrays)
    want = want if isinstance(want, (list, tuple)) else [want]
    for got, w in zip(_run(ins, outs, arrays), want):
        np.testing.assert_array_equal(got, np.asarray(w))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_flip_rows_and_columns(dtype, shape):
    _check(lambda a: topi.flip(a, 0), lambda a: np.flip(a, 0), [shape], dtype)
    _check(lambda a: topi.flip(a, 1), lambda a: np.flip(a, 1), [shape], dtype, seed=1)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_repeat_rows_and_columns(dtype, shape):
    for k in (2, 3):
        _check(lambda a: topi.repeat(a, k, 0), lambda a: np.repeat(a, k, 0), [shape], dtype)
    # columns: each vector a permutation of a run of the row (k dividing the lanes) or lanes
    for k in (2, 4, 3):
        _check(lambda a: topi.repeat(a, k, 1), lambda a: np.repeat(a, k, 1), [shape], dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(8, 256), (5, 130)])
def test_split_columns(dtype, shape):
    _check(lambda a: topi.split(a, 2, axis=1), lambda a: np.split(a, 2, axis=1), [shape], dtype)
    # uneven parts, one starting at an odd column
    cut = [shape[1] // 3, shape[1] // 3 + 1]
    _check(lambda a: topi.split(a, cut, axis=1), lambda a: np.split(a, cut, axis=1), [shape],
           dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_broadcast_to_row_and_column(dtype, shape):
    _check(lambda a: topi.broadcast_to(a, shape), lambda a: np.broadcast_to(a, shape),
           [shape[1:]], dtype)
    _check(lambda a: topi.broadcast_to(a, shape), lambda a: np.broadcast_to(a, shape),
           [(shape[0], 1)], dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_take_rows(dtype, shape):
    n = shape[0] * 2 + 1
    _check(lambda a, i: topi.take(a, i, axis=0), lambda a, i: np.take(a, i, axis=0),
           [shape, (n,)], dtype, in_dtypes=[dtype, "int32"])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_tile(dtype, shape):
    for reps in ((2, 2), (1, 3)):
        _check(lambda a: topi.tile(a, reps), lambda a: np.tile(a, reps), [shape], dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_reshape_and_flatten(dtype):
    _check(lambda a: topi.reshape(a, (74, 100)), lambda a: a.reshape(74, 100), [(37, 200)], dtype)
    _check(lambda a: topi.reshape(a, (16, 128)), lambda a: a.reshape(16, 128), [(8, 256)], dtype)
    _check(topi.nn.flatten, lambda a: a.reshape(3, -1), [(3, 5, 7, 9)], dtype)
    _check(topi.nn.flatten, lambda a: a.reshape(2, -1), [(2, 4, 16, 32)], dtype)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "int32", "int64"])
@pytest.mark.parametrize("shape", SHAPES)
def test_bitwise_not(dtype, shape):
    _check(topi.bitwise_not, np.invert, [shape], dtype)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "float16", "float32", "float64"])
@pytest.mark.parametrize("shape", SHAPES + [(3, 5)])
def test_full_and_full_like(dtype, shape):
    _check(lambda: topi.full(shape, dtype, 3), lambda: np.full(shape, 3, dtype), [], dtype)
    _check(lambda a: topi.full_like(a, 7), lambda a: np.full_like(a, 7), [shape], dtype)


@pytest.mark.parametrize("dtype", ["int8", "int16", "float32"])
@pytest.mark.parametrize("offset", [0, 1, 16, 40])
def test_fill_into_unaligned_output(dtype, offset):
    # the fill helper stores aligned vectors between an unaligned first and last one: an output
    # at any offset from a vector boundary is written whole and nothing outside it
    shape = (5, 1024)
    size = np.dtype(dtype).itemsize
    out_t = topi.full(shape, dtype, 3)
    col = te.placeholder((shape[0], 1), dtype, name="c")
    bc_t = topi.broadcast_to(col, shape)
    lib_full = ts.build(te.create_prim_func([out_t]), target="c")
    lib_bc = ts.build(te.create_prim_func([col, bc_t]), target="c")
    c = np.arange(1, shape[0] + 1, dtype=dtype).reshape(shape[0], 1)
    for lib, args, want in ((lib_full, [], np.full(shape, 3, dtype)),
                            (lib_bc, [c], np.broadcast_to(c, shape))):
        n = shape[0] * shape[1]
        raw = np.zeros((n + 256) * size, np.uint8)
        start = (-raw.ctypes.data) % 64 + offset * size  # offset elements past a 64-byte line
        out = raw[start:start + n * size].view(dtype).reshape(shape)
        lib(*args, out)
        np.testing.assert_array_equal(out, want)
        assert not raw[:start].any() and not raw[start + n * size:].any()
