"""CodeGenHost: a loop folding the contiguous lanes of a reduction into one value by max or min
(the last step of an rfactor combine) is printed as a tree, tessera_reduce_<op>_<type>_<n>, in
place of a chain of n dependent steps. Max and min of NaN-free values do not depend on the order.
Results are checked against numpy."""

import re

import numpy as np
import pytest

import tessera as ts
from tessera import te, topi
from tessera.script import tir as T

R = 6


def _peeled(dtype, op, lanes):
    """B[r] = A[r, lanes-1]; B[r] = op(B[r], A[r, 0]); for k: B[r] = op(B[r], A[r, k + 1]):
    the form the lowering leaves of an rfactor's final combine (its first step peeled)."""
    fold = T.max if op == "max" else T.min

    @T.prim_func
    def f(A: T.Buffer((R, lanes), dtype), B: T.Buffer((R,), dtype)):
        for r in range(R):
            B[r] = A[r, lanes - 1]
            B[r] = fold(B[r], A[r, 0])
            for k in range(lanes - 1):
                B[r] = fold(B[r], A[r, k + 1])

    return f


def _whole(dtype, lanes):
    @T.prim_func
    def f(A: T.Buffer((R, lanes), dtype), B: T.Buffer((R,), dtype)):
        for r in range(R):
            B[r] = A[r, 0]
            for k in range(lanes):
                B[r] = T.max(B[r], A[r, k])

    return f


def _data(dtype, lanes, rng):
    if dtype.startswith("float"):
        a = rng.standard_normal((R, lanes)).astype(dtype)
        a[1, lanes // 2] = np.inf
        a[2, 0] = -np.inf
        a[3, :] = 1.5  # all equal
        a[4, ::3] = -7.0  # ties at the minimum
        return a
    return rng.integers(-1000, 1000, (R, lanes)).astype(dtype)


def _run(func, dtype, op, lanes):
    lib = ts.build(func, target="c")
    a = _data(dtype, lanes, np.random.default_rng(lanes))
    b = np.empty(R, dtype)
    lib(a, b)
    np.testing.assert_array_equal(b, a.max(1) if op == "max" else a.min(1))
    return lib.get_source()


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
@pytest.mark.parametrize("op", ["max", "min"])
@pytest.mark.parametrize("lanes", [4, 16])
def test_a_peeled_fold_of_whole_lanes_is_a_tree(dtype, op, lanes):
    src = _run(_peeled(dtype, op, lanes), dtype, op, lanes)
    name = f"tessera_reduce_{op}_{dtype}_{lanes}"
    ctype = {"float32": "float", "float64": "double", "int32": "int32_t", "int64": "int64_t"}[dtype]
    # One call for the peeled step and the loop together, reading the row from its first lane.
    assert f"B_1[r] = {op}(B_1[r], {name}((A_1 + (r * {lanes}))));\n" in src
    cmp = ">" if op == "max" else "<"
    half = lanes // 2
    assert (f"static inline {ctype} {name}(const {ctype}* p) {{\n  {ctype} a[{half}];\n"
            f"  for (int i = 0; i < {half}; ++i) a[i] = p[i];\n"
            f"  for (int i = 0; i < {half}; ++i) a[i] = (a[i] {cmp} p[i + {half}] ? a[i] : "
            f"p[i + {half}]);\n") in src
    assert (f"  for (int i = 0; i < 1; ++i) a[i] = (a[i] {cmp} a[i + 1] ? a[i] : a[i + 1]);\n"
            "  return a[0];\n}\n") in src
    assert "for (int32_t k = 0" not in src


@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_a_whole_fold_loop_is_a_tree(dtype):
    src = _run(_whole(dtype, 8), dtype, "max", 8)
    assert f"B_1[r] = max(B_1[r], tessera_reduce_max_{dtype}_8((A_1 + (r * 8))));\n" in src


@pytest.mark.parametrize("lanes", [3, 6, 15])
def test_other_lane_counts_keep_the_loop(lanes):
    src = _run(_whole("float32", lanes), "float32", "max", lanes)
    assert "tessera_reduce_" not in src
    assert f"for (int32_t k = 0; k < {lanes}; ++k)" in src


def test_a_fold_into_the_buffer_it_reads_keeps_the_loop():
    @T.prim_func
    def f(A: T.Buffer((R, 17), "float32")):
        for r in range(R):
            for k in range(16):
                A[r, 0] = T.max(A[r, 0], A[r, k + 1])

    lib = ts.build(f, target="c")
    a = np.random.default_rng(0).standard_normal((R, 17)).astype("float32")
    expect = a.copy()
    expect[:, 0] = a.max(1)
    lib(a)
    np.testing.assert_array_equal(a, expect)
    assert "tessera_reduce_" not in lib.get_source()


def test_a_fold_whose_target_moves_with_the_loop_keeps_the_loop():
    @T.prim_func
    def f(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        for k in range(16):
            B[k] = T.max(B[k], A[k])

    lib = ts.build(f, target="c")
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(16).astype("float32"), rng.standard_normal(16).astype("float32")
    expect = np.maximum(a, b)
    lib(a, b)
    np.testing.assert_array_equal(b, expect)
    assert "tessera_reduce_" not in lib.get_source()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_argmax_rows_fold_their_lanes_as_trees(dtype):
    n = 2048
    A = te.placeholder((5, n), dtype, name="A")
    # topi's block search (without tir.ArgExtremeRows float64 rows keep it on the host)
    with ts.transform.PassContext(disabled_pass=["tir.ArgExtremeRows"]):
        lib = ts.build(te.create_prim_func([A, topi.argmax(A, axis=1)]), target="c")
    rng = np.random.default_rng(3)
    a = rng.standard_normal((5, n)).astype(dtype)
    a[2, :] = a[2, 7]  # all equal: the first index
    a[3, n - 1] = 10.0
    a[4, ::3] = 9.0  # ties: the first
    out = np.empty(5, "int32")
    lib(a, out)
    np.testing.assert_array_equal(out, a.argmax(1))
    src = lib.get_source()
    lanes = 16 if dtype == "float32" else 8
    # The row's maximum, the block holding it and the index in the block: three trees.
    assert re.search(rf"= max\(\w+\[0\], tessera_reduce_max_{dtype}_{lanes}\(\w+\)\);", src)
    assert len(re.findall(r"= min\([^;]*tessera_reduce_min_int32_(?:8|16)\(", src)) == 2
