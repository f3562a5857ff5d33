"""tir.IndexMap.from_func and T.index_map: index maps from Python functions."""

import numpy as np
import pytest

import tessera
from tessera import tir
from tessera.error import TesseraError
from tessera.script import tir as T


def test_from_func_names_and_maps_indices():
    m = tir.IndexMap.from_func(lambda i, j: (j, i // 4, i % 4))
    assert [v.name for v in m.initial_indices] == ["i", "j"]
    assert all(str(v.dtype) == "int64" for v in m.initial_indices)
    out = m.map_indices([tir.const(5, "int64"), tir.const(2, "int64")])
    assert [int(x.value) for x in out] == [2, 1, 1]


def test_varargs_need_ndim():
    m = tir.IndexMap.from_func(lambda *idx: list(reversed(idx)), ndim=3, index_dtype="int32")
    assert [v.name for v in m.initial_indices] == ["i0", "i1", "i2"]
    assert [x.name for x in m.final_indices] == ["i2", "i1", "i0"]
    with pytest.raises(TesseraError, match="needs ndim"):
        tir.IndexMap.from_func(lambda *idx: idx)
    with pytest.raises(TesseraError, match="must be a function"):
        tir.IndexMap.from_func(3)


def test_script_index_map_drives_transform_layout():
    @T.prim_func
    def f(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
        C = T.alloc_buffer((4, 8), "float32")
        for i, j in T.grid(4, 8):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = A[vi, vj] * 2.0
        for i, j in T.grid(4, 8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = C[vi, vj] + 1.0

    sch = tir.Schedule(f)
    sch.transform_layout("C", ("write", 0), T.index_map(lambda i, j: (j, i), index_dtype="int32"))
    assert "C = T.alloc_buffer((8, 4)" in sch.mod.script()
    lib = tessera.build(sch.mod, target="c")
    a = np.random.default_rng(0).standard_normal((4, 8)).astype("float32")
    b = tessera.nd.empty((4, 8), "float32")
    lib(tessera.nd.array(a), b)
    np.testing.assert_allclose(b.numpy(), a * 2 + 1, rtol=1e-6)


def test_range_from_min_extent():
    n = tir.Var("n", "int32")
    r = tir.Range.from_min_extent(2, n)
    assert int(r.min.value) == 2 and r.extent.same_as(n)
