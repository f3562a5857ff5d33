"""tir.CommonSubexprElimTIR: repeated computations in one statement are bound once."""

import numpy as np

import tessera as ts
from tessera.script import tir as T


def test_repeated_subexpression_is_bound(golden):
    @T.prim_func
    def before(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"), x: T.float32):
        for i in range(8):
            B[i] = (A[i] * x + T.float32(1)) * (A[i] * x + T.float32(1))

    @T.prim_func
    def expected(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"), x: T.float32):
        for i in range(8):
            cse_v1 = T.float32(A[i] * x + T.float32(1))
            B[i] = cse_v1 * cse_v1

    golden("CommonSubexprElimTIR", before, expected)


def test_single_occurrences_and_trivial_terms_unchanged(unchanged):
    @T.prim_func
    def func(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"), x: T.float32):
        for i in range(8):
            B[i] = A[i] * x + x * x + T.float32(1)

    unchanged("CommonSubexprElimTIR", func)


def test_disabled_by_option(unchanged):
    @T.prim_func
    def func(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"), x: T.float32):
        for i in range(8):
            B[i] = (A[i] * x) * (A[i] * x)

    with ts.transform.PassContext(config={"tir.disable_cse_tir": True}):
        unchanged("CommonSubexprElimTIR", func)


def test_builds_and_runs():
    @T.prim_func
    def func(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
        for i in range(64):
            with T.block("B"):
                vi = T.axis.spatial(64, i)
                B[vi] = (A[vi] + T.float32(1)) * (A[vi] + T.float32(1)) - (A[vi] + T.float32(1))

    lib = ts.build(func, target="c")
    assert "cse_v1" in lib.get_source()
    a = np.arange(64, dtype="float32")
    b = np.empty_like(a)
    lib(a, b)
    np.testing.assert_allclose(b, (a + 1) * (a + 1) - (a + 1))


def test_subexpression_using_a_let_bound_variable_stays_inside_the_let(unchanged):
    # `x * x` repeats, but x is bound by the Let expression: computing it before the
    # statement would use x outside its binding.
    @T.prim_func
    def func(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
        for i in range(8):
            x = T.float32()
            B[i] = T.Let(x * x + x * x, where={x: A[i] + T.float32(1)})

    unchanged("CommonSubexprElimTIR", func)


def test_deep_chain_is_numbered_in_one_walk():
    # A chain of 3,000 additions with one product at both ends: the product is bound once.
    # (Numbering each node's subtree again made this quadratic: 12 s of lowering at 8,000.)
    from tessera import te

    n = 3000
    a = te.placeholder((n,), name="A")
    e = a[0] * a[1]
    for i in range(2, n):
        e = e + a[i]
    e = e + a[0] * a[1]
    b = te.compute((1,), lambda j: e, name="B")
    lib = ts.build(te.create_prim_func([a, b]), target="c")
    assert lib.get_source().count("cse_v1 = ") == 1
    x = np.random.default_rng(0).random(n).astype("float32")
    out = np.zeros(1, "float32")
    lib(x, out)
    expect = x[2:].astype("float64").sum() + 2 * float(x[0]) * float(x[1])
    np.testing.assert_allclose(out[0], expect, rtol=1e-4)
