"""CodeGenHost::PrintAlignedStoreLoop: a nest storing consecutive vectors of a caller's array,
each a cheap lane-wise value of loads that follow the store (copies, reshapes, row slices,
negation, bitwise not, casts), is one flat loop whose stores start at the first address aligned
to the vector, with one unaligned vector before it and one ending at the last element; under the
function's parallel loop each chunk of its iterations is such a flat range. Every kernel is
checked against numpy on outputs at every offset within a cache line (the peeled head and tail
then cover 0 .. L-1 elements), with shapes that leave partial chunks and tails."""

import numpy as np
import pytest

import tessera as ts
from tessera import te, topi

DTYPES = ["int8", "uint8", "int16", "float16", "int32", "float32", "int64", "float64"]


def _data(rng, shape, dtype):
    if dtype.startswith("float"):
        return rng.standard_normal(shape).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, shape, endpoint=True).astype(dtype)


def _at(shape, dtype, offset_bytes):
    """An array whose data starts `offset_bytes` past a 64-byte boundary."""
    size = int(np.prod(shape)) * np.dtype(dtype).itemsize
    raw = np.zeros(size + 128, np.uint8)
    start = (-raw.ctypes.data) % 64 + offset_bytes
    return raw[start:start + size].view(dtype).reshape(shape)


def _offsets(dtype):
    item = np.dtype(dtype).itemsize
    return sorted({0, item, 16, 48 - 48 % item, 64 - item})


def _check(lib, inputs, out_shape, out_dtype, want):
    for off in _offsets(out_dtype):
        out = _at(out_shape, out_dtype, off)
        out[...] = 0
        lib(*inputs, out)
        np.testing.assert_array_equal(out, want, err_msg=f"output {off} bytes into a line")


def _aligned(lib):
    return "tessera_vec_skip" in lib.get_source()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(3, 8192), (5, 4096), (37, 1000), (300, 64)])
def test_copies_match_numpy_at_every_output_offset(dtype, shape):
    # (3, 8192) and (5, 4096) take the flat loop; the others' schedules leave tails (checked
    # for their results only)
    rng = np.random.default_rng(len(dtype) + shape[0])
    A = te.placeholder(shape, dtype, name="A")
    x = _data(rng, shape, dtype)
    n = shape[0] * shape[1]
    for out, want in [(topi.identity(A), x), (topi.reshape(A, (n // 4, 4)), x.reshape(n // 4, 4)),
                      (topi.expand_dims(A, 1), x[:, None])]:
        lib = ts.build(te.create_prim_func([A, out]), target="c")
        if shape[1] >= 4096:
            assert _aligned(lib)
        _check(lib, [x], want.shape, dtype, want)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(97, 1024), (65, 2048), (129, 512), (101, 777)])
def test_row_slices_and_squeeze_match_numpy(dtype, shape):
    # 97 and 65 rows: the parallel loop's last chunk is shorter than the others (min(...))
    rng = np.random.default_rng(7)
    rows, cols = shape
    A = te.placeholder(shape, dtype, name="A")
    x = _data(rng, shape, dtype)
    lib = ts.build(te.create_prim_func([A, topi.strided_slice(A, [1, 0], [rows, cols])]),
                   target="c")
    if cols % 1024 == 0:
        assert _aligned(lib)
    _check(lib, [x], (rows - 1, cols), dtype, x[1:rows])
    B = te.placeholder((rows, 1, cols), dtype, name="B")
    y = _data(rng, (rows, 1, cols), dtype)
    lib = ts.build(te.create_prim_func([B, topi.squeeze(B, [1])]), target="c")
    if cols % 1024 == 0:
        src = lib.get_source()
        assert _aligned(lib) and "tessera_vec_chunk" in src
        if rows in (97, 65):
            assert "min(" in src
    _check(lib, [y], (rows, cols), dtype, y[:, 0])


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "int32", "int64"])
@pytest.mark.parametrize("shape", [(3, 8192), (65, 2049)])
def test_bitwise_not_and_negative_match_numpy(dtype, shape):
    rng = np.random.default_rng(3)
    A = te.placeholder(shape, dtype, name="A")
    x = _data(rng, shape, dtype)
    lib = ts.build(te.create_prim_func([A, topi.bitwise_not(A)]), target="c")
    assert _aligned(lib) == (shape[1] == 8192)
    _check(lib, [x], shape, dtype, np.invert(x))
    if dtype != "uint8":
        lib = ts.build(te.create_prim_func([A, topi.negative(A)]), target="c")
        _check(lib, [x], shape, dtype, np.negative(x))


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "int32", "int64", "float16", "float64"])
@pytest.mark.parametrize("shape", [(3, 8192), (33, 3000)])
def test_casts_to_float32_match_numpy(dtype, shape):
    rng = np.random.default_rng(5)
    A = te.placeholder(shape, dtype, name="A")
    x = _data(rng, shape, dtype)
    lib = ts.build(te.create_prim_func([A, topi.cast(A, "float32")]), target="c")
    if shape[1] == 8192:
        assert _aligned(lib)
    _check(lib, [x], shape, "float32", x.astype("float32"))


@pytest.mark.parametrize("dtype", ["int8", "int16", "float32"])
@pytest.mark.parametrize("shape", [(3, 8192), (129, 1031)])
def test_binary_elementwise_matches_numpy(dtype, shape):
    rng = np.random.default_rng(11)
    A = te.placeholder(shape, dtype, name="A")
    B = te.placeholder(shape, dtype, name="B")
    x, y = _data(rng, shape, dtype), _data(rng, shape, dtype)
    for op, ref in [(topi.multiply, np.multiply), (topi.add, np.add), (topi.maximum, np.maximum)]:
        lib = ts.build(te.create_prim_func([A, B, op(A, B)]), target="c")
        _check(lib, [x, y], shape, dtype, ref(x, y))


def test_a_copy_stores_aligned_vectors_between_two_unaligned_ones():
    A = te.placeholder((2048, 2048), "uint8", name="A")
    src = ts.build(te.create_prim_func([A, topi.identity(A)]), target="c").get_source()
    # one flat range per chunk of the parallel loop, the head skipped up to a 64-byte boundary
    # of the vector's size
    assert "tessera_vec_chunk < 64" in src
    assert "tessera_vec_skip" in src and "tessera_vec_k += " in src
    x = np.arange(2048 * 2048, dtype=np.int64).astype("uint8").reshape(2048, 2048)
    _check(ts.build(te.create_prim_func([A, topi.identity(A)]), target="c"), [x], x.shape,
           "uint8", x)


def test_a_serial_row_copies_each_row_as_a_flat_range():
    # broadcast_to reads the same row for every output row: only the row's loop is flat
    A = te.placeholder((2048,), "int8", name="A")
    lib = ts.build(te.create_prim_func([A, topi.broadcast_to(A, (70, 2048))]), target="c")
    src = lib.get_source()
    assert _aligned(lib) and "tessera_vec_chunk" not in src
    x = np.arange(2048).astype("int8")
    _check(lib, [x], (70, 2048), "int8", np.broadcast_to(x, (70, 2048)))


def test_expensive_and_short_loops_keep_their_stores():
    # a division per lane is not computed twice; fewer than 16 vectors keep plain stores
    A = te.placeholder((512, 512), "float32", name="A")
    src = ts.build(te.create_prim_func([A, topi.exp(A)]), target="c").get_source()
    assert "tessera_vec_skip" not in src
    B = te.placeholder((4, 32), "float32", name="B")
    src = ts.build(te.create_prim_func([B, topi.identity(B)]), target="c").get_source()
    assert "tessera_vec_skip" not in src


def test_fill_keeps_its_helper():
    lib = ts.build(te.create_prim_func([topi.full((16, 2048), "int16", 3)]), target="c")
    src = lib.get_source()
    assert "tessera_fill_" in src and "tessera_vec_skip" not in src
    _check(lib, [], (16, 2048), "int16", np.full((16, 2048), 3, "int16"))
