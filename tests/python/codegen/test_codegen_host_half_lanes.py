"""CodeGenHost: float16 lanes read or written one at a time (strided loads and stores, gathers,
scatters) move as int16 bits, where GCC 12 assembled _Float16 vectors through the stack. Every
result is compared bit for bit with numpy's (NaNs, infinities, -0 and subnormals included)."""

import numpy as np
import pytest

import tessera as ts
from tessera import te, topi


def _halves(rng, shape):
    """float16 values of every kind: random bits, so NaNs (with payloads), infinities, -0 and
    subnormals occur beside ordinary numbers."""
    return rng.integers(0, 1 << 16, shape, dtype=np.uint32).astype(np.uint16).view(np.float16)


def _run(ins, out, arrays):
    lib = ts.build(te.create_prim_func(list(ins) + [out]), target="c")
    res = np.zeros([int(s) for s in out.shape], out.dtype)
    lib(*arrays, res)
    return lib.get_source(), res


@pytest.mark.parametrize("shape", [(2, 16, 7, 9), (1, 32, 5, 3), (3, 64, 4, 4), (2, 19, 11, 13)])
def test_layout_nchw_to_nhwc_float16(shape):
    rng = np.random.default_rng(1)
    A = te.placeholder(shape, "float16", name="A")
    a = _halves(rng, shape)
    code, res = _run([A], topi.layout_transform(A, "NCHW", "NHWC"), [a])
    expect = np.ascontiguousarray(a.transpose(0, 2, 3, 1))
    np.testing.assert_array_equal(res.view(np.uint16), expect.view(np.uint16))
    if "tessera_load_stride_float16" in code:
        assert "const int16_t* q = (const int16_t*)p;" in code


@pytest.mark.parametrize("shape", [(2, 7, 9, 16), (1, 5, 3, 33), (2, 11, 13, 19)])
def test_layout_nhwc_to_nchw_float16(shape):
    rng = np.random.default_rng(2)
    A = te.placeholder(shape, "float16", name="A")
    a = _halves(rng, shape)
    _, res = _run([A], topi.layout_transform(A, "NHWC", "NCHW"), [a])
    expect = np.ascontiguousarray(a.transpose(0, 3, 1, 2))
    np.testing.assert_array_equal(res.view(np.uint16), expect.view(np.uint16))


@pytest.mark.parametrize("shape", [(64, 48), (37, 70), (128, 33)])
def test_transpose_float16(shape):
    rng = np.random.default_rng(3)
    A = te.placeholder(shape, "float16", name="A")
    a = _halves(rng, shape)
    _, res = _run([A], topi.transpose(A), [a])
    np.testing.assert_array_equal(res.view(np.uint16), np.ascontiguousarray(a.T).view(np.uint16))


@pytest.mark.parametrize("shape", [(64, 64), (33, 47), (5, 130)])
def test_take_flat_float16(shape):
    """A gather of float16 lanes by int32 indices (the int16-bits gather helper)."""
    rng = np.random.default_rng(4)
    A = te.placeholder(shape, "float16", name="A")
    Idx = te.placeholder(shape, "int32", name="I")
    a = _halves(rng, shape)
    idx = rng.integers(0, a.size, shape).astype(np.int32)
    code, res = _run([A, Idx], topi.take(A, Idx), [a, idx])
    np.testing.assert_array_equal(res.view(np.uint16), np.take(a, idx).view(np.uint16))
    if "tessera_gather_float16" in code:
        assert "const int16_t* q = (const int16_t*)p;" in code


@pytest.mark.parametrize("dtype", ["int16", "float32", "bool"])
def test_other_dtypes_keep_lane_loops(dtype):
    """Only float16 goes through int16 bits; the others' results stay numpy's."""
    rng = np.random.default_rng(5)
    shape = (2, 16, 7, 9)
    A = te.placeholder(shape, dtype, name="A")
    a = (rng.integers(0, 2, shape) if dtype == "bool" else rng.integers(-999, 999, shape)).astype(dtype)
    code, res = _run([A], topi.layout_transform(A, "NCHW", "NHWC"), [a])
    np.testing.assert_array_equal(res, np.ascontiguousarray(a.transpose(0, 2, 3, 1)))
    assert "(const int16_t*)p" not in code


@pytest.mark.parametrize("rows, cols", [(16, 16), (32, 9), (16, 35)])
def test_strided_store_float16(rows, cols):
    """A vectorized loop over the rows of a transposed result: each vector's lanes are stored
    `rows` elements apart (the int16-bits strided store helper)."""
    from tessera.tir import Schedule

    rng = np.random.default_rng(6)
    A = te.placeholder((cols, rows), "float16", name="A")
    B = te.compute((rows, cols), lambda i, j: A[j, i], name="B")
    sch = Schedule(te.create_prim_func([A, B]))
    i, j = sch.get_loops(sch.get_block("B"))
    sch.reorder(j, i)
    _, inner = sch.split(i, [None, 16])
    sch.vectorize(inner)
    lib = ts.build(sch.mod, target="c")
    code = lib.get_source()
    assert "tessera_store_stride_float16x16" in code
    assert "int16_t* q = (int16_t*)p;" in code
    a = _halves(rng, (cols, rows))
    res = np.zeros((rows, cols), np.float16)
    lib(a, res)
    np.testing.assert_array_equal(res.view(np.uint16), np.ascontiguousarray(a.T).view(np.uint16))
