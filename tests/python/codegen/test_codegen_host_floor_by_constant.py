"""An integer floordiv / floormod of vector lanes by a constant: by a power of two the host code
generator writes a shift / a mask of the lanes, by another constant a lane loop with the constant
in it (no lane loop of two vectors, whose divisor GCC read back from the stack and divided by
with an idiv per lane). Each against numpy's // and % (floor semantics) on negative and positive
values, in every integer dtype, with vectors and a tail."""

import re

import numpy as np
import pytest

import tessera as ts
from tessera import te, tir

INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
DIVISORS = [1, 2, 8, 64, 3, 7, 100]


def values(n, dtype):
    info = np.iinfo(dtype)
    rng = np.random.default_rng(17)
    x = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    # the extremes and the values around the divisors' multiples, both signs
    edges = [info.min, info.max, 0, 1, 2, 7, 8, 63, 64, 99, 100, 101]
    if info.min < 0:
        edges += [-1, -2, -7, -8, -9, -63, -64, -65, -99, -100, -101, info.min + 1]
    x[: len(edges)] = np.array(edges, dtype=dtype)
    return x


def vector_func(n, dtype, divisor, op, lanes):
    a = te.placeholder((n,), dtype, name="a")
    fn = tir.floordiv if op == "floordiv" else tir.floormod
    c = te.compute((n,), lambda i: fn(a[i], tir.const(divisor, dtype)), name="c")
    sch = tir.Schedule(te.create_prim_func([a, c]))
    (loop,) = sch.get_loops(sch.get_block("c"))
    _, inner = sch.split(loop, [None, lanes])
    sch.vectorize(inner)
    return sch.mod


@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("divisor", DIVISORS)
@pytest.mark.parametrize("op", ["floordiv", "floormod"])
def test_lanes_divided_by_a_constant_match_numpy(dtype, divisor, op):
    if divisor > np.iinfo(dtype).max:
        pytest.skip("the divisor does not fit the dtype")
    n = 16 * 9 + 5  # vectors and a tail
    lib = ts.build(vector_func(n, dtype, divisor, op, 16), target="c")
    x = values(n, dtype)
    out = np.zeros(n, dtype)
    lib(x, out)
    expect = x // dtype_scalar(divisor, dtype) if op == "floordiv" else x % dtype_scalar(divisor, dtype)
    np.testing.assert_array_equal(out, expect)
    src = lib.get_source()
    # no lane loop of two vectors (int64 lanes: vectors of 8, a native width)
    assert not re.search(rf"tessera_{op}_{dtype}x\d+\(", src)
    if divisor == 1:  # the simplifier folds it away
        return
    if divisor & (divisor - 1) == 0:
        shift = divisor.bit_length() - 1
        assert (f">> {shift})" if op == "floordiv" else f"{divisor - 1}LL)") in src
    else:
        assert re.search(rf"tessera_{op}_{dtype}x\d+_by_{divisor}\(", src)


def dtype_scalar(v, dtype):
    return np.array(v, dtype=dtype)


def test_a_divisor_that_is_not_constant_keeps_the_lane_loop():
    a = te.placeholder((64,), "int32", name="a")
    b = te.placeholder((64,), "int32", name="b")
    c = te.compute((64,), lambda i: tir.floormod(a[i], b[i]), name="c")
    sch = tir.Schedule(te.create_prim_func([a, b, c]))
    (loop,) = sch.get_loops(sch.get_block("c"))
    _, inner = sch.split(loop, [None, 16])
    sch.vectorize(inner)
    lib = ts.build(sch.mod, target="c")
    assert "tessera_floormod_int32x16(" in lib.get_source()
    x = values(64, "int32")
    y = np.random.default_rng(3).integers(1, 50, 64).astype("int32") * np.where(np.arange(64) % 2, 1, -1)
    out = np.zeros(64, "int32")
    lib(x, y.astype("int32"), out)
    np.testing.assert_array_equal(out, x % y)
