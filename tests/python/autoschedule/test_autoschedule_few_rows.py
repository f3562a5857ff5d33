"""Products of few rows with a transposed Y (dense at batch 1..8: ``X @ W^T``): the tiling rule
leaves them to the row-reduction rule (a dot product per output along the contiguous reduction
of both operands) instead of packing all of W into panels on every call, which so few rows do
not pay back. Every result matches numpy (odd sizes, bias, every dtype dense takes); from 17 rows
on (9 with an epilogue), the tiling rule (with its packed panels) takes the block as before."""

import numpy as np
import pytest
import tessera as ts
from tessera import te, topi

RNG = np.random.default_rng(16)


def data(shape, dtype):
    if dtype.startswith(("int", "uint")):
        return RNG.integers(-20 if dtype.startswith("int") else 0, 21, shape).astype(dtype)
    return RNG.standard_normal(shape).astype(dtype)


def dense_func(m, k, n, dtype, bias=False, out_dtype=None, batch=None):
    xs = (m, k) if batch is None else (batch, m, k)
    ws = (n, k) if batch is None else (batch, n, k)
    x = te.placeholder(xs, dtype, name="x")
    w = te.placeholder(ws, dtype, name="w")
    args = [x, w]
    if batch is not None:
        y = topi.nn.batch_matmul(x, w, transpose_b=True, out_dtype=out_dtype)
    elif bias:
        b = te.placeholder((n,), out_dtype or dtype, name="b")
        args.append(b)
        y = topi.nn.dense(x, w, b, out_dtype=out_dtype)
    else:
        y = topi.nn.dense(x, w, out_dtype=out_dtype)
    return te.create_prim_func(args + [y]), [int(s) for s in y.shape], str(y.dtype)


def run(func, arrays, shape, dtype):
    lib = ts.build(func, target="c")
    out = np.empty(shape, dtype)
    lib(*arrays, out)
    return out


def check(got, want):
    if got.dtype.kind in "iu":
        np.testing.assert_array_equal(got, want.astype(got.dtype))
    else:
        tol = {"float16": 2e-2, "float32": 1e-4}.get(str(got.dtype), 1e-10)
        np.testing.assert_allclose(got, want.astype(got.dtype), rtol=tol, atol=tol * 10)


def packs(func):
    """Whether the automatic schedule packs an operand into panels (a transform_layout)."""
    trace = ts.autoschedule(func, target="c").trace.as_python()
    return any("transform_layout" in line for line in trace)


@pytest.mark.parametrize("m", [1, 3, 8])
@pytest.mark.parametrize("k,n", [(768, 1000), (37, 129), (1, 5), (200, 1)])
def test_dense_few_rows_float32(m, k, n):
    func, shape, dtype = dense_func(m, k, n, "float32")
    x, w = data((m, k), "float32"), data((n, k), "float32")
    got = run(func, [x, w], shape, dtype)
    check(got, x.astype("float64") @ w.astype("float64").T)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int8", "int16", "int32",
                                   "int64", "uint8"])
def test_dense_one_row_dtypes(dtype):
    m, k, n = 1, 203, 77
    func, shape, odt = dense_func(m, k, n, dtype)
    x, w = data((m, k), dtype), data((n, k), dtype)
    got = run(func, [x, w], shape, odt)
    if dtype == "float16":
        want = x.astype("float32") @ w.astype("float32").T
    elif dtype.startswith(("int", "uint")):
        # topi accumulates in the input's dtype (wrapping like C)
        want = (x.astype("int64") @ w.astype("int64").T).astype(dtype)
    else:
        want = x @ w.T
    check(got, want)


@pytest.mark.parametrize("dtype,out_dtype", [("int8", "int32"), ("float32", "float32"),
                                             ("float16", "float32")])
def test_dense_few_rows_bias_widening(dtype, out_dtype):
    m, k, n = 5, 131, 67
    func, shape, odt = dense_func(m, k, n, dtype, bias=True, out_dtype=out_dtype)
    x, w, b = data((m, k), dtype), data((n, k), dtype), data((n,), out_dtype)
    got = run(func, [x, w, b], shape, odt)
    want = x.astype("float64") @ w.astype("float64").T + b
    check(got, want)


def test_batch_matmul_few_rows_transposed():
    # 2 batches of 3 rows: 6 rows in all, the dot-product path
    func, shape, dtype = dense_func(3, 45, 33, "float32", batch=2)
    x, w = data((2, 3, 45), "float32"), data((2, 33, 45), "float32")
    got = run(func, [x, w], shape, dtype)
    check(got, np.matmul(x.astype("float64"), w.astype("float64").transpose(0, 2, 1)))
    assert not packs(func)


@pytest.mark.parametrize("m,packed", [(1, False), (8, False), (9, False), (16, False), (17, True),
                                      (64, True)])
def test_dense_packs_only_from_seventeen_rows(m, packed):
    # 2 to 16 rows: blocks of row dot products (session 20); 1 to 8 with an epilogue: the
    # row-reduction rule; from 17 rows on the tiling rule with its packed panels.
    func, _, _ = dense_func(m, 256, 128, "float32")
    assert packs(func) == packed
