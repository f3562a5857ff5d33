"""isnan, isinf and isfinite in a vectorized loop: vector comparisons (x != x, |x| == inf,
|x| < inf) instead of C's scalar classification macros, with numpy's results on every kind of
value."""

import numpy as np
import pytest

import tessera as ts
from tessera import te, tir
from tessera.tir import Schedule


def _values(dtype):
    info = np.finfo(dtype)
    special = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, info.max, -info.max, info.tiny,
               info.tiny / 4, 1.0, -2.5]
    rng = np.random.default_rng(5)
    return np.concatenate([np.array(special, dtype), rng.standard_normal(64 - len(special))
                           .astype(dtype)])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", ["isnan", "isinf", "isfinite"])
def test_vectorized_classification(name, dtype):
    n = 64
    A = te.placeholder((n,), dtype, name="A")
    B = te.compute((n,), lambda i: getattr(tir, name)(A[i]), name="B")
    sch = Schedule(te.create_prim_func([A, B]))
    (i,) = sch.get_loops(sch.get_block("B"))
    _, inner = sch.split(i, [None, 8])
    sch.vectorize(inner)
    lib = ts.build(sch.mod, target="c")
    src = lib.get_source()
    # No scalar macro call is left: the loop is vector code.
    assert f"{name}(" not in src
    a = _values(dtype)
    out = np.zeros(n, bool)
    lib(a, out)
    np.testing.assert_array_equal(out, getattr(np, name)(a))


def test_unvectorized_classification_matches_numpy():
    A = te.placeholder((8,), "float32", name="A")
    B = te.compute((8,), lambda i: tir.isnan(A[i]), name="B")
    lib = ts.build(te.create_prim_func([A, B]), target="c")  # no vectorized loop
    a = np.array([np.nan, 1, 2, np.inf, -np.nan, 0, -1, 3], "float32")
    out = np.zeros(8, bool)
    lib(a, out)
    np.testing.assert_array_equal(out, np.isnan(a))
