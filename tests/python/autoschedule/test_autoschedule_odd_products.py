"""Products of odd and prime sizes with no schedule (session 20, s20d): register tiles partial in
rows and in columns at once (127 prime rows and 129 columns: tir.LoopPartition splits the
parallel row loop and the column loop inside on their own terms of the tiles' tests), and
full-width vectors with one masked tile where only narrow vectors divide the columns (100 =
25 x 4). Every result matches numpy: prime and odd sizes, float32 / float64 / int32 / int8,
host vectors and 4-lane vectors."""

import numpy as np
import pytest
import tessera as ts
from tessera import te, topi

RNG = np.random.default_rng(20)
SMALL = {"vector_bits": 128, "vector_registers": 16, "cores": 2, "l2_bytes": 4096}
DTYPES = ["float32", "float64", "int32", "int8"]
SHAPES = [(127, 255, 129), (100, 100, 100), (131, 67, 97), (37, 11, 53), (17, 5, 131),
          (61, 29, 7)]


def data(shape, dtype):
    if dtype.startswith("int"):
        return RNG.integers(-9, 10, shape).astype(dtype)
    return RNG.standard_normal(shape).astype(dtype)


def reference(a, b, dtype):
    if dtype.startswith("int"):
        return (a.astype("int64") @ b.astype("int64")).astype(dtype)  # wraps like C
    return (a.astype("float64") @ b.astype("float64")).astype(dtype)


def check(got, want):
    if got.dtype.kind == "i":
        np.testing.assert_array_equal(got, want)
    else:
        tol = 1e-4 if got.dtype == np.float32 else 1e-10
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * 10)


def matmul_func(m, k, n, dtype):
    a = te.placeholder((m, k), dtype, name="a")
    b = te.placeholder((k, n), dtype, name="b")
    return te.create_prim_func([a, b, topi.nn.matmul(a, b)])


def run(func, arrays, shape, dtype, facts=None):
    mod = func if facts is None else ts.autoschedule(func, target="c", facts=facts).mod
    lib = ts.build(mod, target="c")
    out = np.empty(shape, dtype)
    lib(*arrays, out)
    return out, lib


def split_factors(trace):
    return [int(line.split("factors=[None, ")[1].split("]")[0])
            for line in trace if "sch.split" in line and "factors=[None, " in line]


@pytest.mark.parametrize("m,k,n", SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_odd_matmul_matches_numpy(m, k, n, dtype):
    a, b = data((m, k), dtype), data((k, n), dtype)
    got, _ = run(matmul_func(m, k, n, dtype), [a, b], (m, n), dtype)
    check(got, reference(a, b, dtype))


@pytest.mark.parametrize("m,k,n", SHAPES)
@pytest.mark.parametrize("dtype", ["float32", "int8"])
def test_odd_matmul_small_vectors_match_numpy(m, k, n, dtype):
    a, b = data((m, k), dtype), data((k, n), dtype)
    got, _ = run(matmul_func(m, k, n, dtype), [a, b], (m, n), dtype, SMALL)
    check(got, reference(a, b, dtype))


@pytest.mark.parametrize("facts", [None, SMALL], ids=["host", "small"])
def test_prime_rows_with_partial_columns_take_several_rows_per_tile(facts):
    """127 rows (prime) and 129 columns: the register tile takes several rows (a partial last
    row tile) beside its partial column tile, instead of one row per tile."""
    func = matmul_func(127, 255, 129, "float32")
    trace = ts.autoschedule(func, target="c", facts=facts).trace.as_python()
    rows = split_factors(trace)[0]
    assert rows > 1 and 127 % rows != 0


def test_partial_rows_and_columns_leave_no_test_in_the_full_tiles():
    """The generated C of 127 x 255 x 129: the parallel loop of full row tiles runs without a
    test of its rows (the last row tile is a part of its own, with its own register tile)."""
    func = matmul_func(127, 255, 129, "float32")
    text = ts.lower(func, target="c", stage="loop", auto_schedule=True).script()
    lines = text.splitlines()
    at = next(k for k, line in enumerate(lines) if "T.parallel(" in line)
    row_var = lines[at].split("for ")[1].split(" in ")[0]
    indent = len(lines[at]) - len(lines[at].lstrip())
    body = []
    for line in lines[at + 1:]:
        if len(line) - len(line.lstrip()) <= indent:
            break
        body.append(line)
    tests = [line for line in body if line.strip().startswith("if ")]
    assert not any(row_var in line for line in tests)


def host_vector_bits():
    return ts.autoschedule.target_facts("c")["vector_bits"]


@pytest.mark.skipif(host_vector_bits() != 512, reason="AVX-512 host only")
def test_hundred_columns_take_full_width_vectors_float32():
    """100 columns (25 x 4, no multiple of 8 or 16): one tile of 16-lane vectors over all the
    columns, the last vector masked, instead of 4-lane vectors."""
    trace = ts.autoschedule(matmul_func(100, 100, 100, "float32"), target="c").trace.as_python()
    factors = split_factors(trace)
    assert factors[2] == 16 and factors[1] >= 100
    assert any("tessera.mask_tail" in line for line in trace)


@pytest.mark.parametrize("dtype", ["float64", "int32"])
def test_hundred_columns_keep_narrow_vectors_without_masks(dtype):
    """float64 and int32 have no masked tile: 100 columns keep the vectors that divide them
    (a full-width tile after full ones would leave a scalar column tail)."""
    trace = ts.autoschedule(matmul_func(100, 100, 100, dtype), target="c").trace.as_python()
    factors = split_factors(trace)
    assert 100 % factors[1] == 0


def test_hundred_columns_int8_take_vectors_of_at_least_128_bits():
    """int8 columns of 100: 4-lane (32-bit) vectors are replaced by full-width ones with a
    partial column tile."""
    trace = ts.autoschedule(matmul_func(100, 100, 100, "int8"), target="c").trace.as_python()
    lanes = split_factors(trace)[2]
    assert lanes * 8 >= 128


def dense_func(m, k, n, dtype):
    x = te.placeholder((m, k), dtype, name="x")
    w = te.placeholder((n, k), dtype, name="w")
    return te.create_prim_func([x, w, topi.nn.dense(x, w)])


@pytest.mark.parametrize("m,k,n", [(16, 768, 3072), (2, 768, 1000), (3, 256, 97), (5, 64, 33),
                                   (7, 131, 40), (16, 128, 8), (11, 192, 6), (13, 512, 1)])
@pytest.mark.parametrize("dtype", DTYPES)
def test_dense_few_rows_match_numpy(m, k, n, dtype):
    x, w = data((m, k), dtype), data((n, k), dtype)
    got, _ = run(dense_func(m, k, n, dtype), [x, w], (m, n), dtype)
    check(got, reference(x, w.T, dtype))


@pytest.mark.parametrize("m,k,n", [(16, 768, 96), (3, 64, 97), (12, 40, 30)])
def test_dense_few_rows_small_vectors_match_numpy(m, k, n):
    x, w = data((m, k), "float32"), data((n, k), "float32")
    got, _ = run(dense_func(m, k, n, "float32"), [x, w], (m, n), "float32", SMALL)
    check(got, reference(x, w.T, "float32"))


@pytest.mark.parametrize("m", [2, 9, 16])
def test_dense_few_rows_take_blocks_of_dot_products_without_packing(m):
    """2 to 16 rows: blocks of row dot products (rfactor along the reduction), no panels of W
    (a transposing copy of all of W per call)."""
    trace = ts.autoschedule(dense_func(m, 768, 3072, "float32"), target="c").trace.as_python()
    assert any("sch.rfactor" in line for line in trace)
    assert not any("transform_layout" in line for line in trace)
    # the rows in blocks of 2 (1 for an odd number) and the outputs in blocks of 8
    assert split_factors(trace)[:2] == [2 if m % 2 == 0 else 1, 8]
