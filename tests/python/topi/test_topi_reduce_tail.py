"""Reductions whose rows are no whole number of vectors, built with no schedule: the automatic
schedule's vector accumulator over the full vectors and the last, partial vector under a mask of
its first lanes (a global pool's 7 x 7 image: three vectors of 16 float32 and one element),
against numpy in every dtype the path takes; odd channel counts and row lengths."""

import numpy as np
import pytest

import tessera as ts
from tessera import te, topi

INTS = ("int8", "int16", "int32", "int64", "uint8")


def data(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if dtype in INTS:
        lo, hi = (0, 40) if dtype == "uint8" else (-40, 41)
        return rng.integers(lo, hi, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def build(shape, dtype, make):
    x = te.placeholder(shape, dtype, name="x")
    y = make(x)
    func = te.create_prim_func([x, y])
    lib = ts.build(func, target="c")
    out = np.empty([int(getattr(s, "value", s)) for s in y.shape], dtype)
    return func, lib, out


def check(got, want, dtype):
    if dtype == "float16":
        np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=1e-2,
                                   atol=2e-2)
    elif dtype == "float32":
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    elif dtype == "float64":
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    else:
        np.testing.assert_array_equal(got, want)


GLOBAL = [(4, 37, 7, 7), (2, 13, 9, 9), (3, 5, 6, 11), (1, 7, 13, 13), (2, 3, 5, 7)]


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64", "int8", "int32", "int16",
                                   "uint8"])
@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("shape", GLOBAL, ids=lambda s: "x".join(map(str, s)))
def test_global_pool_nchw_rows_with_a_partial_vector(shape, kind, dtype):
    _, lib, out = build(shape, dtype, lambda x: topi.nn.global_pool(x, kind, layout="NCHW"))
    a = data(shape, dtype)
    lib(a, out)
    if kind == "max":
        want = a.max(axis=(2, 3), keepdims=True)
    elif dtype in INTS:
        total = a.astype(np.int64).sum(axis=(2, 3), keepdims=True)
        want = np.trunc(total / (shape[2] * shape[3])).astype(dtype)
    else:
        want = a.astype(np.float64).mean(axis=(2, 3), keepdims=True).astype(dtype)
    check(out, want, dtype)


ROWS = [(37, 49), (5, 1001), (3, 67), (9, 130), (2, 33)]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int8", "float16"])
@pytest.mark.parametrize("kind", ["sum", "max", "min"])
@pytest.mark.parametrize("shape", ROWS, ids=lambda s: "x".join(map(str, s)))
def test_row_reductions_of_odd_lengths(shape, kind, dtype):
    op = {"sum": topi.sum, "max": topi.max, "min": topi.min}[kind]
    _, lib, out = build(shape, dtype, lambda x: op(x, axis=1))
    a = data(shape, dtype)
    if dtype == "float16" and kind == "sum":
        a = (a * 0.1).astype(dtype)
    lib(a, out)
    if kind == "sum":
        want = a.sum(axis=1, dtype=dtype) if dtype in INTS else a.astype(np.float64).sum(axis=1)
        want = want.astype(dtype)
    else:
        want = getattr(a, kind)(axis=1)
    if dtype == "float32" and kind == "sum":
        np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-4)
    else:
        check(out, want, dtype)


def test_a_global_pool_row_of_three_vectors_and_one_element_masks_its_last_vector():
    # (4, 1024, 7, 7) float32 with 16-lane vectors: a vector accumulator over 48 elements and
    # the 49th under a mask of one lane, the vector of partial results read and written whole.
    x = te.placeholder((4, 64, 7, 7), "float32", name="x")
    y = topi.nn.global_pool(x, "max", layout="NCHW")
    func = te.create_prim_func([x, y])
    trace = "\n".join(ts.autoschedule(func, target="c", facts={"vector_bits": 512}).trace
                      .as_python())
    assert "tessera.mask_tail" in trace and "rfactor" in trace, trace
    lib = ts.build(ts.autoschedule(func, target="c", facts={"vector_bits": 512}).mod, target="c")
    src = lib.get_source()
    assert "tessera_first_lanes_whole_store" in src, src
    a = data((4, 64, 7, 7), "float32")
    out = np.empty((4, 64, 1, 1), "float32")
    lib(a, out)
    check(out, a.max(axis=(2, 3), keepdims=True), "float32")


@pytest.mark.parametrize("bits", [128, 256])
def test_narrower_hosts_take_the_same_path(bits):
    x = te.placeholder((3, 11, 7, 7), "float32", name="x")
    y = topi.nn.global_pool(x, "avg", layout="NCHW")
    sch = ts.autoschedule(te.create_prim_func([x, y]), target="c", facts={"vector_bits": bits})
    lib = ts.build(sch.mod, target="c")
    a = data((3, 11, 7, 7), "float32")
    out = np.empty((3, 11, 1, 1), "float32")
    lib(a, out)
    check(out, a.astype(np.float64).mean(axis=(2, 3), keepdims=True).astype("float32"), "float32")
