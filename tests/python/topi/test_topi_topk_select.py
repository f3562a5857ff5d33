"""topi.topk of 64-bit rows (int64, uint64, float64) with k * 8 < n, built with no schedule for
the host: the row sort's one-pass selection (tessera_sort_row_*, include/tessera/target/
sort_rows.h) takes the keys of 256 elements at a time branch-free, then keeps the k best comparing
keys alone (an element comes after every kept one, so the index never decides). Checked exactly
against numpy's stable order: ties in index order (many equal keys), NaN last in both orders,
-0.0 equal to +0.0 (kept as it was), the infinities, every integer type's extremes, rows across
several blocks of 256 and their tails."""

import numpy as np
import pytest
from topi_testing import TARGET, Kernels

from tessera import te, topi

pytestmark = pytest.mark.skipif(TARGET != "c", reason="the row sort is the host's")


def _order(a, ascending):
    """numpy's stable order along the last axis (NaN last in both orders)."""
    if a.dtype.kind == "f":
        key = a if ascending else -a
    else:
        key = a if ascending else ~a
    return np.argsort(key, axis=-1, kind="stable")


def _rows(n, dtype, seed):
    rng = np.random.default_rng(seed)
    if dtype == "float64":
        special = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 5e-324, -1.7e308])
        rows = [rng.standard_normal(n), rng.integers(-3, 4, n).astype(float),
                special[rng.integers(0, len(special), n)], np.full(n, np.nan), np.full(n, -0.0),
                np.sort(rng.standard_normal(n)), -np.sort(rng.standard_normal(n))]
        return np.stack(rows)
    info = np.iinfo(dtype)
    edges = np.array([info.min, info.max, 0, 1, info.max - 1, info.min + 1], dtype=dtype)
    rows = [rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True),
            rng.integers(0, 3, n).astype(dtype), edges[rng.integers(0, len(edges), n)],
            np.full(n, info.max, dtype), np.full(n, info.min, dtype),
            np.sort(rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True))]
    return np.stack(rows).astype(dtype)


def _same(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape
    if got.dtype.kind == "f":
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", ("int64", "uint64", "float64"))
def test_topk_selection_as_numpy(dtype):
    cases = ((9, 1), (17, 2), (255, 31), (256, 8), (257, 3), (513, 8), (700, 5), (1030, 128))
    k = Kernels()
    for i, (n, kk) in enumerate(cases):
        assert kk * 8 < n  # the selection, not the merge sort
        A = te.placeholder((7 if dtype == "float64" else 6, n), dtype, name="A")
        k.add(f"desc{i}", [A], topi.topk(A, kk, axis=1, dtype="int32"))
        k.add(f"asc{i}", [A], topi.topk(A, kk, axis=-1, is_ascend=True))
    for i, (n, kk) in enumerate(cases):
        a = _rows(n, dtype, n)
        for name, ascending, index in (("desc", False, "int32"), ("asc", True, "int64")):
            order = _order(a, ascending)[:, :kk]
            values, indices = k.run(f"{name}{i}", a)
            _same(indices, order.astype(index))
            _same(values, np.take_along_axis(a, order, -1))
    src = k._lib["all"].get_source()
    assert src.count(f"static int32_t tessera_sort_row_desc_{dtype}_vi_int32(") == 1
    assert "uint64_t keys[256];" in src
