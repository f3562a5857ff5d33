"""Vector loads whose index the host code generator recognizes as a contiguous run: a
lane-uniform offset plus a unit Ramp (take of rows), each of k consecutive elements k times
(repeat along the last axis), every second element (a slice with step 2); each against numpy,
with the C form it takes."""

import ctypes
import mmap

import numpy as np
import pytest

import tessera as ts
from tessera import te, topi

PAGE = mmap.PAGESIZE
DTYPES = ["float32", "float64", "int8", "int16", "int32", "uint8"]


def build(inputs, output):
    lib = ts.build(te.create_prim_func(list(inputs) + [output]), target="c")
    return lib, lib.get_source()


def data(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if dtype.startswith(("int", "uint")):
        return rng.integers(0, 100, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def run(lib, output, *arrays):
    out = np.zeros([int(s) for s in output.shape], str(output.dtype))
    lib(*arrays, out)
    return out


@pytest.mark.parametrize("dtype", DTYPES)
def test_take_rows_loads_each_row_as_vectors(dtype):
    a = te.placeholder((64, 256), dtype, name="a")
    i = te.placeholder((64,), "int32", name="i")
    out = topi.take(a, i, axis=0)
    lib, src = build([a, i], out)
    assert "tessera_gather_" not in src
    # (a row of 16 or more vectors: one call of the copy helper)
    assert f"tessera_load_{dtype}x" in src or f"tessera_copy_{dtype}x" in src
    an, idx = data((64, 256), dtype), np.random.default_rng(1).integers(0, 64, 64).astype("int32")
    np.testing.assert_array_equal(run(lib, out, an, idx), np.take(an, idx, axis=0))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("k", [2, 4])
def test_repeat_along_the_last_axis_loads_a_run_and_repeats_it(dtype, k):
    a = te.placeholder((32, 128), dtype, name="a")
    out = topi.repeat(a, k, 1)
    lib, src = build([a], out)
    assert f"tessera_load_repeat{k}_" in src
    assert "tessera_gather_" not in src
    an = data((32, 128), dtype)
    np.testing.assert_array_equal(run(lib, out, an), np.repeat(an, k, 1))


def test_repeat_by_three_keeps_the_gather():
    # 3 divides no vector's lanes: the lanes are gathered, as before
    a = te.placeholder((16, 96), "float32", name="a")
    out = topi.repeat(a, 3, 1)
    lib, src = build([a], out)
    assert "tessera_load_repeat" not in src
    an = data((16, 96), "float32")
    np.testing.assert_array_equal(run(lib, out, an), np.repeat(an, 3, 1))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(64, 512), (32, 1024)])
def test_slice_with_step_two_reads_two_vectors_per_vector(dtype, shape):
    a = te.placeholder(shape, dtype, name="a")
    out = topi.strided_slice(a, [0, 0], list(shape), [2, 2])
    lib, src = build([a], out)
    assert f"tessera_load_stride2_{dtype}x" in src
    an = data(shape, dtype)
    np.testing.assert_array_equal(run(lib, out, an), an[::2, ::2])


def test_step_two_reads_stop_at_the_last_element_read():
    # An array of 1023 float32 that ends where a page ends, the next page unreadable: the
    # slice's last vector needs the array's last element, and its two loads must not read past
    # it (two plain vector loads of 2 x 16 lanes would read one element more and fault).
    n = 1023
    a = te.placeholder((1, n), "float32", name="a")
    out = topi.strided_slice(a, [0, 0], [1, n], [1, 2])
    lib, src = build([a], out)
    assert "tessera_load_stride2_float32x" in src
    libc = ctypes.CDLL(None)
    buf = mmap.mmap(-1, 2 * PAGE)
    addr = ctypes.addressof(ctypes.c_char.from_buffer(buf))
    arr = np.frombuffer(buf, "float32", count=n, offset=PAGE - 4 * n).reshape(1, n)
    arr[:] = np.arange(n, dtype="float32")
    assert libc.mprotect(ctypes.c_void_p(addr + PAGE), ctypes.c_size_t(PAGE), 0) == 0
    try:
        np.testing.assert_array_equal(run(lib, out, arr), arr[:, ::2])
    finally:
        assert libc.mprotect(ctypes.c_void_p(addr + PAGE), ctypes.c_size_t(PAGE), 3) == 0


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64"])
def test_integer_abs_vectorizes_and_wraps_at_the_minimum(dtype):
    # tir.abs of an integer is lane-wise (tir.LowerIntrin makes it a select of the negation):
    # the vectorized loop stays vectorized instead of falling back to a scalar loop
    a = te.placeholder((16, 256), dtype, name="a")
    out = topi.abs(a)
    lib, src = build([a], out)
    assert f"tessera_select_{dtype}x" in src
    info = np.iinfo(dtype)
    an = np.random.default_rng(2).integers(info.min, info.max, (16, 256), endpoint=True).astype(dtype)
    an[0, :4] = [info.min, info.min + 1, -1, 0]  # abs of the minimum wraps to itself, as numpy
    np.testing.assert_array_equal(run(lib, out, an), np.abs(an))
