"""cache_index: the index expressions a block evaluates go into buffers computed before it."""

import numpy as np
import pytest

import tessera as ts
from tessera import tir
from tessera.script import tir as T


@T.prim_func
def gather(A: T.Buffer((1, 3, 40, 40), "float32"), B: T.Buffer((1, 3, 80, 80), "float32")):
    for n, c, i, j in T.grid(1, 3, 80, 80):
        with T.block("gather"):
            vn, vc, vi, vj = T.axis.remap("SSSS", [n, c, i, j])
            B[vn, vc, vi, vj] = A[vn, vc, vi // 4 + vj // 4, vj // 2]


@T.prim_func
def gather_cached(A: T.Buffer((1, 3, 40, 40), "float32"),
                  B: T.Buffer((1, 3, 80, 80), "float32")):
    index_var_0 = T.alloc_buffer((80, 80), "int32", strides=[1])
    index_var_1 = T.alloc_buffer((80,), "int32", strides=[1])
    for ax0, ax1 in T.grid(80, 80):
        with T.block("index_0"):
            v0, v1 = T.axis.remap("SS", [ax0, ax1])
            T.reads()
            T.writes(index_var_0[v0, v1])
            index_var_0[v0, v1] = v0 // 4 + v1 // 4
    for ax0 in range(80):
        with T.block("index_1"):
            v0 = T.axis.spatial(80, ax0)
            T.reads()
            T.writes(index_var_1[v0])
            index_var_1[v0] = v0 // 2
    for n, c, i, j in T.grid(1, 3, 80, 80):
        with T.block("gather"):
            vn, vc, vi, vj = T.axis.remap("SSSS", [n, c, i, j])
            T.reads(A[vn, vc, vi // 4 + vj // 4, vj // 2])
            T.writes(B[vn, vc, vi, vj])
            B[vn, vc, vi, vj] = A[vn, vc, index_var_0[vi, vj], index_var_1[vj]]


# `(i * 3) % 7` is evaluated twice per element, `j + 1` once: a threshold of 2 caches only the
# first; the largest expression holding it is evaluated once, so it is not cached.
@T.prim_func
def repeated(A: T.Buffer((16, 8), "float32"), B: T.Buffer((16, 16), "float32")):
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi * 3 % 7, vj // 2] + A[vi * 3 % 7 + 1, (vj + 1) // 3]


@T.prim_func
def repeated_cached(A: T.Buffer((16, 8), "float32"), B: T.Buffer((16, 16), "float32")):
    index_var_0 = T.alloc_buffer((16,), "int32", strides=[1])
    for ax0 in range(16):
        with T.block("index_0"):
            v0 = T.axis.spatial(16, ax0)
            T.reads()
            T.writes(index_var_0[v0])
            index_var_0[v0] = v0 * 3 % 7
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[index_var_0[vi], vj // 2] + A[index_var_0[vi] + 1, (vj + 1) // 3]


def test_cache_index_every_pure_index(golden):
    def apply(sch):
        blocks = sch.cache_index("gather", "global")
        assert [sch.get(b).name_hint for b in blocks] == ["index_0", "index_1"]

    sch = golden(gather, gather_cached, apply)
    assert sch.trace.as_python()[-1] == (
        'b1, b2 = sch.cache_index(block=b0, storage_scope="global", cse_thresh=0)')


def test_cache_index_threshold(golden):
    sch = tir.Schedule(repeated.with_attr("global_symbol", "main"), debug_mask="all")
    blocks = sch.cache_index(sch.get_block("B"), "global", cse_thresh=2)
    assert len(blocks) == 1
    # The index stage equals the expected one; the block keeps its declared regions (as TVM
    # leaves them), which the expected program, whose regions are inferred, does not.
    expected = repeated_cached.with_attr("global_symbol", "main")
    got = sch.mod["main"]
    assert ts.ir.structural_equal(got.body.block.body.seq[0], expected.body.block.body.seq[0],
                                  map_free_vars=True), got.script()
    assert "B[vi, vj] = A[index_var_0[vi], vj // 2] + A[index_var_0[vi] + 1, (vj + 1) // 3]" in (
        got.script())


def test_cache_index_nothing_to_cache():
    sch = tir.Schedule(gather.with_attr("global_symbol", "main"), debug_mask="all")
    before = sch.mod
    assert sch.cache_index("gather", "global", cse_thresh=5) == []
    assert ts.ir.structural_equal(sch.mod, before)


def test_cache_index_computes_the_same():
    sch = tir.Schedule(gather, debug_mask="all")
    sch.cache_index("gather", "global")
    a = np.random.uniform(-1, 1, size=(1, 3, 40, 40)).astype("float32")
    results = []
    for mod in (gather, sch.mod):
        lib = ts.build(mod, target="c")
        b = ts.nd.array(np.zeros((1, 3, 80, 80), "float32"))
        lib(ts.nd.array(a), b)
        results.append(b.numpy())
    i = np.arange(80)[:, None]
    j = np.arange(80)[None, :]
    np.testing.assert_array_equal(results[0], a[:, :, i // 4 + j // 4, j // 2])
    np.testing.assert_array_equal(results[1], results[0])


def test_cache_index_errors(schedule_error):
    schedule_error(gather, lambda sch: sch.cache_index("gather", "nowhere"), "cache_index",
                   "Invalid storage scope")
    sch = tir.Schedule(gather)
    with pytest.raises(ValueError, match="cse_thresh must be 0 or more"):
        sch.cache_index("gather", "global", -1)


def test_strides_fewer_than_dimensions_must_be_compact():
    @T.prim_func
    def bad(A: T.Buffer((4, 4), "float32")):
        X = T.alloc_buffer((4, 4), "float32", strides=[2])
        for i, j in T.grid(4, 4):
            with T.block("X"):
                vi, vj = T.axis.remap("SS", [i, j])
                X[vi, vj] = A[vi, vj]
        for i, j in T.grid(4, 4):
            with T.block("A"):
                vi, vj = T.axis.remap("SS", [i, j])
                A[vi, vj] = X[vi, vj] + T.float32(1)

    with pytest.raises(ValueError, match="compact strides of the innermost dimensions"):
        ts.lower(bad)
