"""CodeGenHost: vectors of integers of at most 16 bits (and signed 32-bit ones) divide through a
float division (float32, float64), exactly: C's truncated quotient and remainder and the floor
forms, checked against numpy on every pair of 8-bit values, on random and extreme 16- and
32-bit values, and on shapes with tails."""

import numpy as np
import pytest

import tessera as ts
from tessera import te, topi

# topi operator, numpy reference (C's truncating division for trunc_divide and mod)
OPS = {
    "floor_divide": (topi.floor_divide, np.floor_divide),
    "floor_mod": (topi.floor_mod, np.mod),
    "trunc_divide": (topi.trunc_divide, lambda a, b: _trunc_div(a, b)),
    "mod": (topi.mod, np.fmod),
}


def _trunc_div(a, b):
    x, y = a.astype(object), b.astype(object)  # Python's integers: no overflow of abs
    q = abs(x) // abs(y)
    return np.where((x < 0) ^ (y < 0), -q, q).astype(a.dtype)


def _build(op, shape, dtype):
    A = te.placeholder(shape, dtype, name="A")
    B = te.placeholder(shape, dtype, name="B")
    return ts.build(te.create_prim_func([A, B, OPS[op][0](A, B)]), target="c")


def _check(op, a, b):
    lib = _build(op, a.shape, str(a.dtype))
    out = np.empty_like(a)
    lib(a, b, out)
    with np.errstate(over="ignore"):
        want = OPS[op][1](a, b)
    np.testing.assert_array_equal(out, want)
    return lib.get_source()


def _all_pairs(dtype):
    info = np.iinfo(dtype)
    v = np.arange(info.min, info.max + 1, dtype=np.int64)
    a, b = np.meshgrid(v, v[v != 0], indexing="ij")
    return a.ravel().astype(dtype), b.ravel().astype(dtype)


@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("dtype", ["int8", "uint8"])
def test_every_pair_of_8_bit_values(op, dtype):
    a, b = _all_pairs(dtype)
    if dtype == "int8":  # -128 / -1 overflows: numpy and C wrap differently (numpy warns)
        keep = ~((a == -128) & (b == -1))
        a, b = a[keep], b[keep]
    n = a.size - a.size % 64  # a whole number of vectors; the rest goes to the tail test
    src = _check(op, a[:n], b[:n])
    assert "float32x" in src  # divided as floats


def _extremes(dtype, rng, n):
    info = np.iinfo(dtype)
    a = rng.integers(info.min, info.max, n, endpoint=True, dtype=np.int64)
    b = rng.integers(info.min, info.max, n, endpoint=True, dtype=np.int64)
    small = rng.integers(-7, 8, n)
    b = np.where(rng.random(n) < 0.5, small, b)
    edge = np.array([info.min, info.max, info.min + 1, info.max - 1, 1, 0], np.int64)
    a[: edge.size * 4] = np.repeat(edge, 4)
    b[: edge.size * 4] = np.tile([1, -1 if info.min < 0 else 2, info.max, 3], edge.size)
    b[b == 0] = 1
    if info.min < 0:
        b[(a == info.min) & (b == -1)] = 1
    return a.astype(dtype), b.astype(dtype)


@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("dtype", ["int16", "uint16", "int32"])
def test_random_and_extreme_values(op, dtype):
    a, b = _extremes(dtype, np.random.default_rng(5), 4096)
    src = _check(op, a, b)
    assert ("float64x" if dtype == "int32" else "float32x") in src


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "int32", "int64", "uint32"])
@pytest.mark.parametrize("shape", [(37, 53), (3, 67)])
def test_tails_and_the_types_left_to_the_lane_loop(dtype, shape):
    # int64 and uint32 quotients are not exact in float64 / do not fit int32: lane loops.
    rng = np.random.default_rng(6)
    a, b = _extremes(dtype, rng, shape[0] * shape[1])
    a, b = a.reshape(shape), b.reshape(shape)
    for op in OPS:
        src = _check(op, a, b)
        if dtype in ("int64", "uint32"):
            assert "float64x" not in src


@pytest.mark.parametrize("dtype", ["int16", "int32", "uint8"])
def test_a_constant_divisor_keeps_the_integer_forms(dtype):
    # The C compiler divides by a constant with multiplies and shifts: no float division.
    A = te.placeholder((37, 64), dtype, name="A")
    outs = [te.compute(A.shape, lambda i, j: te.floordiv(A[i, j], te.const(7, dtype)), name="Q"),
            te.compute(A.shape, lambda i, j: te.floormod(A[i, j], te.const(16, dtype)), name="R")]
    lib = ts.build(te.create_prim_func([A] + outs), target="c")
    a = _extremes(dtype, np.random.default_rng(7), 37 * 64)[0].reshape(37, 64)
    q, r = np.empty_like(a), np.empty_like(a)
    lib(a, q, r)
    np.testing.assert_array_equal(q, a // 7)
    np.testing.assert_array_equal(r, a % 16)
    assert "float" not in lib.get_source()
