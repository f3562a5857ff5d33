"""A vector load whose lanes all read one element (a per-channel or per-row value under a
vector of one channel): one scalar load broadcast, not a gather, with numpy's results."""

import numpy as np

import tessera as ts
from tessera import te
from tessera.tir import Schedule


def test_uniform_index_is_a_broadcast_load():
    rows, cols = 8, 32
    A = te.placeholder((rows * cols,), "float32", name="A")
    S = te.placeholder((rows,), "float32", name="S")
    B = te.compute((rows * cols,), lambda i: A[i] * S[i // cols], name="B")
    sch = Schedule(te.create_prim_func([A, S, B]))
    (i,) = sch.get_loops(sch.get_block("B"))
    _, inner = sch.split(i, [None, 8])
    sch.vectorize(inner)
    lib = ts.build(sch.mod, target="c")
    src = lib.get_source()
    assert "tessera_gather" not in src and "tessera_load_splat_float32x8((S + " in src
    rng = np.random.default_rng(6)
    a, s = rng.random(rows * cols, dtype="float32"), rng.random(rows, dtype="float32")
    out = np.zeros(rows * cols, "float32")
    lib(a, s, out)
    np.testing.assert_allclose(out, a * np.repeat(s, cols), rtol=1e-6)


def test_bool_uniform_index_still_reads_each_lane():
    # bool lanes keep the per-lane read (a bool vector is a mask, not a broadcast of a byte)
    A = te.placeholder((4,), "bool", name="A")
    B = te.compute((32,), lambda i: A[i // 8], name="B")
    sch = Schedule(te.create_prim_func([A, B]))
    (i,) = sch.get_loops(sch.get_block("B"))
    _, inner = sch.split(i, [None, 8])
    sch.vectorize(inner)
    lib = ts.build(sch.mod, target="c")
    a = np.array([True, False, True, True])
    out = np.zeros(32, bool)
    lib(a, out)
    np.testing.assert_array_equal(out, np.repeat(a, 8))
