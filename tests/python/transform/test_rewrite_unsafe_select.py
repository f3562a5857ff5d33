"""tir.RewriteUnsafeSelect: a Select whose values load memory becomes T.if_then_else."""

import numpy as np

import tessera as ts
from tessera.ir import IRModule
from tessera.script import tir as T


def test_guarded_loads_become_if_then_else(golden):
    @T.prim_func
    def before(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        for i in range(8):
            B[i] = T.Select(i > 0, A[i - 1], T.float32(0))

    @T.prim_func
    def expected(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        for i in range(8):
            B[i] = T.if_then_else(i > 0, A[i - 1], T.float32(0))

    golden("RewriteUnsafeSelect", before, expected)
    mod = ts.tir.transform.RewriteUnsafeSelect()(IRModule({"main": before}))
    a = np.arange(1, 9, dtype="float32")
    b = np.zeros(8, "float32")
    ts.build(mod, target="c")(a, b)
    np.testing.assert_array_equal(b, np.concatenate([[0], a[:-1]]))


def test_selects_of_safe_values_stay(unchanged):
    @T.prim_func
    def func(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        for i in range(8):
            # A Select of Selects counts by their conditions; arithmetic on indices is safe.
            B[i] = T.Select(i > 3, T.Select(i > 5, T.float32(1), T.float32(2)),
                            T.Cast("float32", i * 2 + 1)) + A[i]

    unchanged("RewriteUnsafeSelect", func)
