"""reindex_cache_read / reindex_cache_write: a cache indexed by a map of the block iterators."""

import pytest

from tessera.script import tir as T


@T.prim_func
def elementwise(A: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
    B = T.alloc_buffer((128, 128), "float32")
    for i, j in T.grid(128, 128):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(128, 128):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)


@T.prim_func
def multi_consumer(C: T.Buffer((128,), "float32")):
    A = T.alloc_buffer((128,), "float32")
    B = T.alloc_buffer((128,), "float32")
    for i in range(8):
        for j in range(16):
            with T.block("A"):
                vi = T.axis.spatial(128, i * 16 + j)
                A[vi] = T.float32(1)
        for j in range(16):
            with T.block("B"):
                vi = T.axis.spatial(128, i * 16 + j)
                B[vi] = A[vi] + T.float32(1)
    for i in range(128):
        with T.block("C"):
            vi = T.axis.spatial(128, i)
            C[vi] = A[vi]


def test_reindex_cache_read(golden):
    @T.prim_func
    def expected(A: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
        B = T.alloc_buffer((128, 128), "float32")
        B_shared = T.alloc_buffer((128, 64, 2), "float32", scope="shared")
        for i, j in T.grid(128, 128):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * T.float32(2)
        for i, j in T.grid(128, 128):
            with T.block("B_shared"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(B[vi, vj])
                T.writes(B_shared[vj, vi // 2, vi % 2])
                B_shared[vj, vi // 2, vi % 2] = B[vi, vj]
        for i, j in T.grid(128, 128):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(B_shared[vj, vi // 2, vi % 2])
                T.writes(C[vi, vj])
                C[vi, vj] = B_shared[vj, vi // 2, vi % 2] + T.float32(1)

    golden(elementwise, expected, lambda sch: sch.reindex_cache_read(
        sch.get_block("C"), 0, "shared", lambda i, j: (j, i // 2, i % 2)))


def test_reindex_cache_read_inside_the_shared_loop(golden):
    @T.prim_func
    def expected(C: T.Buffer((128,), "float32")):
        A = T.alloc_buffer((128,), "float32")
        B = T.alloc_buffer((128,), "float32")
        A_shared = T.alloc_buffer((4, 32), "float32", scope="shared")
        for i in range(8):
            for j in range(16):
                with T.block("A"):
                    vi = T.axis.spatial(128, i * 16 + j)
                    A[vi] = T.float32(1)
            for j in range(16):
                with T.block("A_shared"):
                    vi = T.axis.spatial(128, i * 16 + j)
                    T.reads(A[vi])
                    T.writes(A_shared[vi // 32, vi % 32])
                    A_shared[vi // 32, vi % 32] = A[vi]
            for j in range(16):
                with T.block("B"):
                    vi = T.axis.spatial(128, i * 16 + j)
                    T.reads(A_shared[vi // 32, vi % 32])
                    T.writes(B[vi])
                    B[vi] = A_shared[vi // 32, vi % 32] + T.float32(1)
        for i in range(128):
            with T.block("C"):
                vi = T.axis.spatial(128, i)
                C[vi] = A[vi]

    golden(multi_consumer, expected, lambda sch: sch.reindex_cache_read(
        sch.get_block("B"), 0, "shared", lambda i: (i // 32, i % 32)))


def test_reindex_cache_write(golden):
    @T.prim_func
    def expected(A: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
        B = T.alloc_buffer((128, 128), "float32")
        B_shared = T.alloc_buffer((128, 128), "float32", scope="shared")
        for i, j in T.grid(128, 128):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj])
                T.writes(B_shared[vj, vi])
                B_shared[vj, vi] = A[vi, vj] * T.float32(2)
        for i, j in T.grid(128, 128):
            with T.block("B_shared"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(B_shared[vj, vi])
                T.writes(B[vi, vj])
                B[vi, vj] = B_shared[vj, vi]
        for i, j in T.grid(128, 128):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vi, vj] + T.float32(1)

    def apply(sch):
        sch.reindex_cache_write(sch.get_block("B"), 0, "shared", lambda i, j: (j, i))
        assert sch.trace.as_python()[-1] == (
            'b1 = sch.reindex_cache_write(block=b0, write_buffer_index=0, storage_scope="shared", '
            "index_map=lambda i, j: (j, i))")

    golden(elementwise, expected, apply)


@pytest.mark.parametrize("kind", ["read", "write"])
def test_map_not_matching_the_access_fails(schedule_error, kind):
    def apply(sch):
        if kind == "read":
            sch.reindex_cache_read(sch.get_block("C"), 0, "shared", lambda i, j: (j * 2,))
        else:
            sch.reindex_cache_write(sch.get_block("B"), 0, "shared", lambda i, j: (i,))

    schedule_error(elementwise, apply, f"reindex_cache_{kind}",
                   "the index map changes which block iterators the indices use",
                   error_render_level="fast")
