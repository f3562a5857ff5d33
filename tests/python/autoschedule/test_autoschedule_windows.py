"""Adaptive pooling's window nests (a reduce extent that depends on the output position) with
wide windows along the innermost, contiguous axis: the window loop is vectorized (split by the
lanes, the last vector predicated, rfactor) and every result matches numpy, windows that do and
do not tile, odd sizes, every dtype pooling takes, both layouts. Also the window sums of an
average computed at the average's row (fused row loops): their partial sums live per window."""

import numpy as np
import pytest
import tessera as ts
from tessera import te, topi

RNG = np.random.default_rng(5)


def data(shape, dtype):
    if dtype in ("int8", "uint8", "int16", "int32"):
        lo, hi = (0, 255) if dtype == "uint8" else (-100, 100)
        return RNG.integers(lo, hi + 1, shape).astype(dtype)
    return RNG.standard_normal(shape).astype(dtype)


def windows(n, m):
    return [(o * n // m, -(-(o + 1) * n // m)) for o in range(m)]


def adaptive_ref(x, axes, sizes, kind):
    """Adaptive pooling by per-window slices; the average in float64 (integers: truncated
    towards zero, as topi divides the int32 sum)."""
    out_shape = list(x.shape)
    for ax, m in zip(axes, sizes):
        out_shape[ax] = m
    out = np.empty(out_shape, x.dtype)
    for idx in np.ndindex(*sizes):
        src = [slice(None)] * x.ndim
        dst = [slice(None)] * x.ndim
        for ax, o, m in zip(axes, idx, sizes):
            lo, hi = windows(x.shape[ax], m)[o]
            src[ax] = slice(lo, hi)
            dst[ax] = o
        win = x[tuple(src)]
        if kind == "max":
            val = win.max(axis=tuple(axes))
        else:
            total = win.astype("float64").sum(axis=tuple(axes))
            count = np.prod([win.shape[ax] for ax in axes])
            val = np.trunc(total / count) if x.dtype.kind in "iu" else total / count
        out[tuple(dst)] = val.astype(x.dtype)
    return out


def run(x, y_fn, out_dtype=None):
    ph = te.placeholder(x.shape, str(x.dtype), name="x")
    y = y_fn(ph)
    func = te.create_prim_func([ph, y])
    lib = ts.build(func, target="c")
    out = np.empty([int(s) for s in y.shape], str(y.dtype))
    lib(x, out)
    return out, func


def check(got, want):
    if got.dtype.kind in "iu":
        np.testing.assert_array_equal(got, want)
    else:
        tol = {"float16": 2e-2, "float32": 1e-4}.get(str(got.dtype), 1e-10)
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


DTYPES = ["float32", "float64", "float16", "int8", "uint8", "int32"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("shape,size", [
    ((2, 3, 1000), 7),  # windows of 143 and 144, not tiling
    ((1, 5, 4096), 100),  # windows of 40 and 42
    ((3, 2, 515), 5),  # 103 and 104
    ((2, 3, 67), 3),  # 22 and 23: narrower than two vectors of most dtypes
    ((2, 2, 64), 64),  # one element per window (tiles)
])
def test_adaptive_pool1d_windows_match_numpy(shape, size, kind, dtype):
    x = data(shape, dtype)
    got, _ = run(x, lambda a: topi.nn.adaptive_pool1d(a, size, kind))
    check(got, adaptive_ref(x, [2], [size], kind))


@pytest.mark.parametrize("dtype", ["float32", "int8"])
@pytest.mark.parametrize("kind", ["max", "avg"])
def test_adaptive_pool1d_nwc_matches_numpy(kind, dtype):
    # The window runs along W, not the innermost (channel) axis: not a contiguous window.
    x = data((2, 301, 24), dtype)
    got, _ = run(x, lambda a: topi.nn.adaptive_pool1d(a, 6, kind, layout="NWC"))
    check(got, adaptive_ref(x, [1], [6], kind))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int16"])
@pytest.mark.parametrize("kind", ["max", "avg"])
def test_adaptive_pool2d_and_3d_windows_match_numpy(kind, dtype):
    x = data((1, 3, 13, 203), dtype)
    got, _ = run(x, lambda a: topi.nn.adaptive_pool(a, (3, 5), kind))
    check(got, adaptive_ref(x, [2, 3], [3, 5], kind))
    x = data((1, 2, 5, 7, 171), dtype)
    got, _ = run(x, lambda a: topi.nn.adaptive_pool3d(a, (2, 3, 4), kind))
    check(got, adaptive_ref(x, [2, 3, 4], [2, 3, 4], kind))


def test_wide_windows_are_vectorized_and_narrow_ones_are_not():
    x = te.placeholder((2, 3, 1000), "float32", name="x")
    func = te.create_prim_func([x, topi.nn.adaptive_pool1d(x, 7, "max")])
    lines = ts.autoschedule(func, target="c", facts={"vector_bits": 512}).trace.as_python()
    text = "\n".join(lines)
    assert any("rfactor" in line for line in lines), text
    assert any("vectorize" in line for line in lines), text
    # windows of 22 or 23 float32: under two 16-lane vectors, left scalar
    x = te.placeholder((2, 3, 67), "float32", name="x")
    func = te.create_prim_func([x, topi.nn.adaptive_pool1d(x, 3, "max")])
    lines = ts.autoschedule(func, target="c", facts={"vector_bits": 512}).trace.as_python()
    assert not any("rfactor" in line for line in lines), "\n".join(lines)


def test_window_sums_at_a_fused_row_keep_per_window_partial_sums():
    # adaptive_pool1d avg whose windows tile (64 of 64): the sums are computed at the
    # average's fused (n, c) row; their partial-sum buffers live inside the row loop, not as
    # whole-tensor workspaces.
    x = data((4, 8, 1024), "float32")
    got, func = run(x, lambda a: topi.nn.adaptive_pool1d(a, 16, "avg"))
    check(got, x.reshape(4, 8, 16, 64).mean(-1))
    src = ts.build(func, target="c").get_source()
    assert "adaptive_pool_sum_rf" in src
    assert "TESSERA_WORKSPACE adaptive_pool_sum_rf" not in src


@pytest.mark.parametrize("dtype", ["float32", "float16", "int8", "int32", "float64"])
@pytest.mark.parametrize("kind", ["sum", "max", "min"])
@pytest.mark.parametrize("width", [64, 96, 256])
def test_short_rows_fold_their_lanes_in_halves(width, kind, dtype):
    # Rows of a few vectors: the partial results' vector is folded in halves (more rfactor
    # steps) before its last lanes are combined; every result equals numpy's.
    rows = 37
    x = data((rows, width), dtype)
    got, func = run(x, lambda a: getattr(topi, kind)(a, axis=1))
    if kind == "sum":
        acc = "float64" if dtype.startswith("float") else "int64"
        want = x.astype(acc).sum(1)
        if dtype.startswith("int"):
            want = want.astype(dtype)
    else:
        want = getattr(x, kind)(1)
    if dtype == "float16" and kind == "sum":
        np.testing.assert_allclose(got.astype("float64"), want, rtol=2e-2, atol=0.5)
    else:
        check(got, np.asarray(want).astype(got.dtype))
    if dtype == "float32":
        lines = ts.autoschedule(func, target="c", facts={"vector_bits": 512}).trace.as_python()
        folds = sum("rfactor" in line for line in lines)
        if kind == "sum":
            # 16 lanes folded to 8, then 4 (16-byte vectors): two rfactors past the first
            assert folds >= 3, "\n".join(lines)
        else:
            # max and min: the code generator prints the last lanes as a tree
            assert folds <= 2, "\n".join(lines)
