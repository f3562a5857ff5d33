"""Products whose columns no vector width divides (129 = 8 x 16 + 1, 1022 = a conv1d of width 3
over 1024): the tiling rule takes full column tiles and a partial last one from a single full
tile on (scored by the vectors the partitioned tail keeps), with the rows outside the columns
so that the column tail becomes a loop of its own (not a predicate in every tile). Every result
matches numpy (odd sizes, every dtype the operators take, host vectors and 4-lane vectors)."""

import numpy as np
import pytest
import tessera as ts
from tessera import te, topi

RNG = np.random.default_rng(129)
# 4-lane vectors whatever the host (partial tiles at small shapes).
SMALL = {"vector_bits": 128, "vector_registers": 16, "cores": 2, "l2_bytes": 4096}
DTYPES = ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8"]


def data(shape, dtype):
    if dtype.startswith(("int", "uint")):
        return RNG.integers(-9 if dtype.startswith("int") else 0, 10, shape).astype(dtype)
    return RNG.standard_normal(shape).astype(dtype)


def run(func, arrays, shape, dtype, facts=None):
    mod = func if facts is None else ts.autoschedule(func, target="c", facts=facts).mod
    lib = ts.build(mod, target="c")
    out = np.empty(shape, dtype)
    lib(*arrays, out)
    return out


def check(got, want):
    if got.dtype.kind in "iu":
        np.testing.assert_array_equal(got, want.astype(got.dtype))
    else:
        tol = {"float16": 3e-2, "float32": 1e-4}.get(str(got.dtype), 1e-10)
        np.testing.assert_allclose(got, want.astype(got.dtype), rtol=tol, atol=tol * 10)


def product_ref(a, b, dtype):
    if dtype == "float16":
        return a.astype("float32") @ b.astype("float32")
    if dtype.startswith(("int", "uint")):
        return (a.astype("int64") @ b.astype("int64")).astype(dtype)  # wraps like C
    return a.astype("float64") @ b.astype("float64")


def matmul_func(shape_a, shape_b, dtype):
    a = te.placeholder(shape_a, dtype, name="a")
    b = te.placeholder(shape_b, dtype, name="b")
    if len(shape_a) == 2:
        c = topi.nn.matmul(a, b)
    else:
        c = topi.nn.batch_matmul(a, b, transpose_b=False)
    return te.create_prim_func([a, b, c]), [int(s) for s in c.shape]


@pytest.mark.parametrize("m,k,n", [(127, 255, 129), (64, 31, 129), (12, 40, 17), (9, 3, 33),
                                   (33, 70, 145)])
@pytest.mark.parametrize("facts", [None, SMALL], ids=["host", "small"])
def test_matmul_partial_columns_float32(m, k, n, facts):
    func, shape = matmul_func((m, k), (k, n), "float32")
    a, b = data((m, k), "float32"), data((k, n), "float32")
    check(run(func, [a, b], shape, "float32", facts), product_ref(a, b, "float32"))


@pytest.mark.parametrize("dtype", DTYPES)
def test_matmul_partial_columns_dtypes(dtype):
    m, k, n = 24, 37, 131
    func, shape = matmul_func((m, k), (k, n), dtype)
    a, b = data((m, k), dtype), data((k, n), dtype)
    check(run(func, [a, b], shape, dtype), product_ref(a, b, dtype))


@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_batch_matmul_partial_columns(dtype):
    func, shape = matmul_func((3, 20, 29), (3, 29, 131), dtype)
    a, b = data((3, 20, 29), dtype), data((3, 29, 131), dtype)
    check(run(func, [a, b], shape, dtype), product_ref(a, b, dtype))


@pytest.mark.parametrize("length", [1024, 131, 40])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
def test_conv1d_ncw_partial_columns(length, dtype):
    x = te.placeholder((2, 8, length), dtype, name="x")
    w = te.placeholder((16, 8, 3), dtype, name="w")
    y = topi.nn.conv1d_ncw(x, w, 1, 0, 1)
    func = te.create_prim_func([x, w, y])
    xa, wa = data((2, 8, length), dtype), data((16, 8, 3), dtype)
    acc = "int64" if dtype == "int32" else "float64"
    cols = np.lib.stride_tricks.sliding_window_view(xa.astype(acc), 3, axis=2)  # n c ow k
    want = np.einsum("ncok,fck->nfo", cols, wa.astype(acc)).astype(dtype)
    check(run(func, [xa, wa], [int(s) for s in y.shape], dtype), want)


def test_one_column_tail_takes_wide_tile():
    """129 columns: a tile of several vectors and a one-column tail, rows outside the columns
    (the generated C has no predicate on the columns inside the full tiles' loop)."""
    func, _ = matmul_func((127, 255), (255, 129), "float32")
    trace = ts.autoschedule(func, target="c").trace.as_python()
    splits = [line for line in trace if "sch.split" in line]
    # the column tile (second split) spans more than one vector of the host
    lanes = int(splits[2].split("factors=[None, ")[1].split("]")[0])
    width = int(splits[1].split("factors=[None, ")[1].split("]")[0])
    assert width > lanes
    reorder = next(line for line in trace if "sch.reorder" in line)
    # rows (the first split's outer loop) outside the columns
    assert reorder.split("(")[1].startswith(splits[0].split(" = ")[0].split(",")[0])
