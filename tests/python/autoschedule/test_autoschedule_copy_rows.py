"""The injective rule on copies whose load is re-indexed along the outer iterators (flip,
repeat, split, broadcast_to a row): each row is copied on its own, a vector loop along it, where
fused loops would divide the fused index for every vector; copies read at the store's own
indices and arithmetic blocks keep the fused loop. Results against numpy."""

import numpy as np
import pytest

import tessera as ts
from tessera import te, tir, topi

FACTS = {"vector_bits": 256, "stream_vector_bits": 256, "cores": 2}


def _loops(f, out):
    sch = ts.autoschedule(f, target="c", facts=FACTS)
    return [sch.get(l) for l in sch.get_loops(sch.get_block(out.op.name))]


def _rows(dtype, rows, cols, seed=0):
    rng = np.random.default_rng(seed)
    return rng.integers(-100, 100, (rows, cols)).astype(dtype)


CASES = {
    "flip": (lambda a: topi.flip(a, 0), lambda a: np.flip(a, 0), (40, 96)),
    "repeat": (lambda a: topi.repeat(a, 3, 0), lambda a: np.repeat(a, 3, 0), (13, 96)),
    "split": (lambda a: topi.split(a, 2, axis=1)[1], lambda a: np.split(a, 2, axis=1)[1],
              (21, 192)),
    "tile": (lambda a: topi.tile(a, (2, 2)), lambda a: np.tile(a, (2, 2)), (7, 64)),
}


@pytest.mark.parametrize("dtype", ["int8", "int16"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_reindexed_copy_runs_row_by_row(name, dtype):
    make, ref, shape = CASES[name]
    A = te.placeholder(shape, dtype, name="A")
    out = make(A)
    f = te.create_prim_func([A, out])
    loops = _loops(f, out)
    rows, cols = (int(s) for s in out.shape)
    lanes = 256 // np.dtype(dtype).itemsize // 8
    # the rows, then the row in vectors of the native width
    assert [l.extent.value for l in loops] == [rows, cols // lanes, lanes]
    assert loops[-1].kind == tir.ForKind.VECTORIZED
    a = _rows(dtype, *shape)
    y = np.zeros((rows, cols), dtype)
    ts.build(f, target="c")(a, y)
    np.testing.assert_array_equal(y, ref(a))


def test_broadcast_row_runs_row_by_row():
    A = te.placeholder((96,), "int8", name="A")
    out = topi.broadcast_to(A, (33, 96))
    f = te.create_prim_func([A, out])
    assert [l.extent.value for l in _loops(f, out)] == [33, 3, 32]
    a = np.arange(96).astype("int8")
    y = np.zeros((33, 96), "int8")
    ts.build(f, target="c")(a, y)
    np.testing.assert_array_equal(y, np.broadcast_to(a, (33, 96)))


def test_plain_copy_and_arithmetic_stay_fused():
    # the store's own indices (identity) or arithmetic on a flipped row: one fused loop
    A = te.placeholder((40, 96), "int8", name="A")
    a = _rows("int8", 40, 96)
    for out, want in ((topi.identity(A), a), (topi.add(topi.flip(A, 0), A), np.flip(a, 0) + a)):
        f = te.create_prim_func([A, out])
        loops = _loops(f, out)
        assert loops[0].extent.value != 40, [l.extent.value for l in loops]
        y = np.zeros((40, 96), "int8")
        ts.build(f, target="c")(a, y)
        np.testing.assert_array_equal(y, want)
