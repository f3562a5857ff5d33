"""CodeGenHost on narrow lanes: selects take masks of the selected width, conversions that change
an integer's width go through a helper holding its operand in a register (8- and 16-bit integers
and floats through int32), and a comparison of a unit Ramp with a uniform value compares lane
positions. Every result is checked against numpy, on sizes with tails."""

import re

import numpy as np
import pytest

import tessera as ts
from tessera import te, topi
from tessera.script import tir as T
from tessera.tir import Schedule

N = 64 + 7  # a tail of 7 lanes after the vectors


def _vectorized(func, block, lanes):
    sch = Schedule(func)
    (i,) = sch.get_loops(sch.get_block(block))
    _, iv = sch.split(i, [None, lanes])
    sch.vectorize(iv)
    return ts.build(sch.mod, target="c")


def _ints(dtype, rng, n=N):
    info = np.iinfo(dtype)
    return rng.integers(info.min, int(info.max) + 1, n, dtype=dtype)


def _select_of_compare(dtype, n):
    @T.prim_func
    def f(A: T.Buffer((n,), dtype), B: T.Buffer((n,), dtype), X: T.Buffer((n,), dtype),
          Y: T.Buffer((n,), dtype), D: T.Buffer((n,), dtype)):
        for i in range(n):
            with T.block("D"):
                vi = T.axis.spatial(n, i)
                D[vi] = T.Select(A[vi] < B[vi], X[vi], Y[vi])

    return f


@pytest.mark.parametrize("dtype,lanes", [("int8", 16), ("uint8", 32), ("int16", 16),
                                         ("uint16", 8), ("int16", 8)])
def test_a_narrow_select_takes_a_mask_of_its_own_width(dtype, lanes):
    n = 4 * lanes
    lib = _vectorized(_select_of_compare(dtype, n), "D", lanes)
    rng = np.random.default_rng(0)
    a, b, x, y = (_ints(dtype, rng, n) for _ in range(4))
    b[::5] = a[::5]  # ties
    d = np.empty(n, dtype)
    lib(a, b, x, y, d)
    np.testing.assert_array_equal(d, np.where(a < b, x, y))
    src = lib.get_source()
    vt = f"tessera_{dtype}x{lanes}"
    mask = f"tessera_int{np.dtype(dtype).itemsize * 8}x{lanes}"
    assert f"{vt} tessera_select_{dtype}x{lanes}({mask} a0, {vt} a1, {vt} a2)" in src
    assert "__builtin_convertvector" not in src
    assert "int32x" not in src


def test_a_float16_select_picks_the_bits_under_an_int16_mask():
    n = 64

    @T.prim_func
    def f(A: T.Buffer((n,), "int16"), X: T.Buffer((n,), "float16"), Y: T.Buffer((n,), "float16"),
          D: T.Buffer((n,), "float16")):
        for i in range(n):
            with T.block("D"):
                vi = T.axis.spatial(n, i)
                D[vi] = T.Select(A[vi] > T.int16(0), X[vi], Y[vi])

    lib = _vectorized(f, "D", 16)
    rng = np.random.default_rng(1)
    a = _ints("int16", rng, n)
    x = rng.standard_normal(n).astype("float16")
    y = rng.standard_normal(n).astype("float16")
    x[3], y[5] = np.inf, np.nan
    a[3], a[5] = 1, -1
    d = np.empty(n, "float16")
    lib(a, x, y, d)
    np.testing.assert_array_equal(d.view("int16"), np.where(a > 0, x, y).view("int16"))
    src = lib.get_source()
    assert ("tessera_select_float16x16(tessera_int16x16 a0, tessera_float16x16 a1, "
            "tessera_float16x16 a2) {\n  return (tessera_float16x16)") in src


CONVERSIONS = [
    ("int8", "float32", 16), ("uint8", "float32", 16), ("int16", "float32", 16),
    ("uint16", "float32", 8), ("int8", "float64", 8), ("uint8", "float64", 8),
    ("float32", "int8", 16), ("float32", "uint8", 16), ("float32", "int16", 16),
    ("float64", "int8", 8), ("float64", "uint16", 8),
    ("int8", "int32", 16), ("uint8", "int32", 16), ("int32", "int8", 16), ("int32", "uint8", 16),
    ("int8", "int64", 8), ("int64", "int8", 8), ("uint16", "int64", 8), ("int64", "int16", 8),
    ("int8", "int16", 16), ("int16", "uint8", 16),
]


def _cast(src, dst, n):
    @T.prim_func
    def f(A: T.Buffer((n,), src), B: T.Buffer((n,), dst)):
        for i in range(n):
            with T.block("B"):
                vi = T.axis.spatial(n, i)
                B[vi] = T.Cast(dst, A[vi])

    return f


@pytest.mark.parametrize("src,dst,lanes", CONVERSIONS)
def test_conversions_that_change_an_integer_width(src, dst, lanes):
    n = 4 * lanes
    lib = _vectorized(_cast(src, dst, n), "B", lanes)
    rng = np.random.default_rng(2)
    if src.startswith("float"):
        # values of the destination's range (C leaves the others undefined), with fractions
        info = np.iinfo(dst)
        a = rng.uniform(info.min, info.max, n).astype(src)
        a[:4] = [info.min, info.max, -0.75 if info.min < 0 else 0.75, 0.0]
    else:
        a = _ints(src, rng, n)
    b = np.empty(n, dst)
    lib(a, b)
    np.testing.assert_array_equal(b, a.astype(dst))
    code = lib.get_source()
    ft, tt = f"{src}x{lanes}", f"{dst}x{lanes}"
    helper = re.search(r"static inline tessera_%s tessera_convert_%s_%s\(tessera_%s a0\) \{\n"
                       r"(.*?)\n\}" % (tt, ft, tt, ft), code, re.S)
    assert helper, code
    bits = np.dtype(src).itemsize * 8 * lanes
    assert f"TESSERA_KEEP_IN_REGISTER{max(bits, 128)}(a0);" in helper.group(1)
    through32 = src.startswith("float") or dst.startswith("float")
    nested = f"__builtin_convertvector(__builtin_convertvector(a0, tessera_int32x{lanes}), "
    assert (nested in helper.group(1)) == through32


def test_a_conversion_of_the_same_width_is_printed_as_it_is():
    lib = _vectorized(_cast("int32", "float32", 64), "B", 16)
    a = np.arange(-32, 32, dtype="int32") * 1000003
    b = np.empty(64, "float32")
    lib(a, b)
    np.testing.assert_array_equal(b, a.astype("float32"))
    code = lib.get_source()
    assert "tessera_convert_" not in code
    assert "__builtin_convertvector(tessera_load_int32x16(" in code


OPS = {"==": np.equal, "!=": np.not_equal, "<": np.less, "<=": np.less_equal,
       ">": np.greater, ">=": np.greater_equal}


def _positions(op, dtype, rows, cols, k, swapped):
    def fcompute(r, c):
        d = c - r
        kk = ts.tir.const(k, "int32")
        lhs, rhs = (kk, d) if swapped else (d, kk)
        cond = {"==": lhs == rhs, "!=": lhs != rhs, "<": lhs < rhs, "<=": lhs <= rhs,
                ">": lhs > rhs, ">=": lhs >= rhs}[op]
        return ts.tir.Select(cond, ts.tir.const(1, dtype), ts.tir.const(0, dtype))

    return te.compute((rows, cols), fcompute, name="D")


def _expected(op, rows, cols, k, swapped, dtype):
    r, c = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
    d = c - r
    lhs, rhs = (k, d) if swapped else (d, k)
    return OPS[op](lhs, rhs).astype(dtype)


@pytest.mark.parametrize("op", list(OPS))
@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "float16", "float32", "int64"])
def test_a_ramp_compared_with_a_uniform_value_compares_lane_positions(op, dtype):
    rows, cols = 37, 96 + 13
    sources = []
    for k, swapped in [(0, False), (3, True), (-5, False), (40, True), (1000, False),
                       (-1000, True)]:
        D = _positions(op, dtype, rows, cols, k, swapped)
        func = te.create_prim_func([D])
        sch = Schedule(func)
        _, c = sch.get_loops(sch.get_block("D"))
        _, cv = sch.split(c, [None, 16])
        sch.vectorize(cv)
        lib = ts.build(sch.mod, target="c")
        out = np.empty((rows, cols), dtype)
        lib(out)
        np.testing.assert_array_equal(out, _expected(op, rows, cols, k, swapped, dtype),
                                      err_msg=f"k={k} swapped={swapped}")
        sources.append(lib.get_source())
    # (the simplifier decides some of the compares with k far outside on its own)
    bits = np.dtype(dtype).itemsize * 8
    assert re.search(r"tessera_ramp_(eq|ne|lt|le|gt|ge)_int32_int%dx(8|16)\(" % bits, sources[0])


def test_ramp_lanes_that_wrap_are_compared_one_by_one():
    # b + i wraps past INT32_MAX for the last lanes: the helper compares those as the IR does
    n = 64
    big = 2**31 - 40

    @T.prim_func
    def f(B: T.Buffer((2,), "int32"), D: T.Buffer((n,), "int8")):
        for i in range(n):
            with T.block("D"):
                vi = T.axis.spatial(n, i)
                D[vi] = T.Select(vi + B[0] < B[1], T.int8(1), T.int8(0))

    lib = _vectorized(f, "D", 32)
    src = lib.get_source()
    assert re.search(r"tessera_ramp_lt_int32_int8x16\(\(\w+ \+ B_1\[0\]\), B_1\[1\]\)", src), src
    for b0, b1 in [(big, -(2**31) + 5), (big, 2**31 - 1), (big, big + 10), (0, 17), (-100, -90)]:
        b = np.array([b0, b1], "int32")
        d = np.empty(n, "int8")
        lib(b, d)
        lanes = (np.arange(n, dtype="int64") + b0 + 2**31) % 2**32 - 2**31  # int32 wrapping
        np.testing.assert_array_equal(d, (lanes < b1).astype("int8"), err_msg=f"{b0} {b1}")


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "uint16", "float16", "float32",
                                   "int32", "float64", "int64"])
@pytest.mark.parametrize("shape,k", [((37, 53), 0), ((64, 96), 5), ((45, 33), -7), ((8, 200), 150)])
def test_topi_eye_matches_numpy(dtype, shape, k):
    n, m = shape
    lib = ts.build(te.create_prim_func([topi.eye(n, m, k, dtype=dtype)]), target="c")
    out = np.empty(shape, dtype)
    lib(out)
    np.testing.assert_array_equal(out, np.eye(n, m, k, dtype=dtype))


@pytest.mark.parametrize("dtype", ["int8", "int16", "float16", "float64"])
def test_a_uniform_condition_is_broadcast_at_the_selected_width(dtype):
    # stack's `i0 == 0`: one scalar condition for the whole vector, broadcast as a mask of the
    # selected lanes' width (not 32-bit lanes converted)
    rows, cols = 6, 48

    @T.prim_func
    def f(A: T.Buffer((cols,), dtype), B: T.Buffer((cols,), dtype), D: T.Buffer((rows, cols), dtype)):
        for i, j in T.grid(rows, cols):
            with T.block("D"):
                vi, vj = T.axis.remap("SS", [i, j])
                D[vi, vj] = T.Select(vi % 3 == 1, A[vj], B[vj])

    sch = Schedule(f)
    _, j = sch.get_loops(sch.get_block("D"))
    _, jv = sch.split(j, [None, 16])
    sch.vectorize(jv)
    lib = ts.build(sch.mod, target="c")
    rng = np.random.default_rng(3)
    a = rng.standard_normal(cols).astype(dtype) if dtype.startswith("float") else _ints(dtype, rng, cols)
    b = rng.standard_normal(cols).astype(dtype) if dtype.startswith("float") else _ints(dtype, rng, cols)
    d = np.empty((rows, cols), dtype)
    lib(a, b, d)
    np.testing.assert_array_equal(d, np.where((np.arange(rows) % 3 == 1)[:, None], a, b))
    src = lib.get_source()
    bits = np.dtype(dtype).itemsize * 8
    assert re.search(r"tessera_select_%sx(8|16)\(tessera_broadcast_int%dx(8|16)\(-\(int%d_t\)\("
                     % (dtype, bits, bits), src), src
    assert "broadcast_mask" not in src
