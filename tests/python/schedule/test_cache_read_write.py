"""cache_read, cache_write: reads (writes) of a buffer go through a copy in another scope."""

import numpy as np

import tessera as ts
from tessera import tir
from tessera.script import tir as T


@T.prim_func
def elementwise(A: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
    B = T.alloc_buffer((128, 128))
    for i, j in T.grid(128, 128):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(128, 128):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)


@T.prim_func
def matmul(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"),
           C: T.Buffer((64, 64), "float32")):
    for i, j, k in T.grid(64, 64, 64):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


def test_cache_read_of_an_input(golden):
    @T.prim_func
    def expected(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"),
                 C: T.Buffer((64, 64), "float32")):
        A_shared = T.alloc_buffer((64, 64), scope="shared")
        for ax0, ax1 in T.grid(64, 64):
            with T.block("A_shared"):
                v0, v1 = T.axis.remap("SS", [ax0, ax1])
                A_shared[v0, v1] = A[v0, v1]
        for i, j, k in T.grid(64, 64, 64):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A_shared[vi, vk] * B[vk, vj]

    def apply(sch):
        # A reduction block does not list C among its reads: A is read 0.
        cache = sch.cache_read(sch.get_block("C"), 0, "shared")
        assert sch.get(cache).name_hint == "A_shared"

    golden(matmul, expected, apply)
    # The buffer may be named instead of indexed.
    golden(matmul, expected, lambda sch: sch.cache_read(sch.get_block("C"), "A", "shared"))


def test_cache_read_of_an_intermediate(golden):
    @T.prim_func
    def expected(A: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
        B = T.alloc_buffer((128, 128))
        B_local = T.alloc_buffer((128, 128), scope="local")
        for i, j in T.grid(128, 128):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * T.float32(2)
        for ax0, ax1 in T.grid(128, 128):
            with T.block("B_local"):
                v0, v1 = T.axis.remap("SS", [ax0, ax1])
                B_local[v0, v1] = B[v0, v1]
        for i, j in T.grid(128, 128):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B_local[vi, vj] + T.float32(1)

    golden(elementwise, expected, lambda sch: sch.cache_read(sch.get_block("C"), 0, "local"))


def test_cache_write(golden):
    @T.prim_func
    def expected(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"),
                 C: T.Buffer((64, 64), "float32")):
        C_local = T.alloc_buffer((64, 64), scope="local")
        for i, j, k in T.grid(64, 64, 64):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C_local[vi, vj] = T.float32(0)
                C_local[vi, vj] = C_local[vi, vj] + A[vi, vk] * B[vk, vj]
        for ax0, ax1 in T.grid(64, 64):
            with T.block("C_local"):
                v0, v1 = T.axis.remap("SS", [ax0, ax1])
                C[v0, v1] = C_local[v0, v1]

    golden(matmul, expected, lambda sch: sch.cache_write(sch.get_block("C"), 0, "local"))


def test_cache_write_with_consumers_reading_the_cache(golden):
    @T.prim_func
    def expected(A: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
        B = T.alloc_buffer((128, 128))
        B_shared = T.alloc_buffer((128, 128), scope="shared")
        for i, j in T.grid(128, 128):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B_shared[vi, vj] = A[vi, vj] * T.float32(2)
        for i, j in T.grid(128, 128):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B_shared[vi, vj] + T.float32(1)
        # As TVM: no reader needs B itself, so the copy back goes at the end of the scope.
        for ax0, ax1 in T.grid(128, 128):
            with T.block("B_shared"):
                v0, v1 = T.axis.remap("SS", [ax0, ax1])
                B[v0, v1] = B_shared[v0, v1]

    golden(elementwise, expected,
           lambda sch: sch.cache_write(sch.get_block("B"), 0, "shared", consumer_blocks=[sch.get_block("C")]))


def test_cache_read_then_compute_at(golden):
    @T.prim_func
    def expected(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"),
                 C: T.Buffer((64, 64), "float32")):
        A_shared = T.alloc_buffer((64, 64), scope="shared")
        for i in T.serial(64):
            for ax0 in T.serial(64):
                with T.block("A_shared"):
                    v0, v1 = T.axis.remap("SS", [i, ax0])
                    A_shared[v0, v1] = A[v0, v1]
            for j, k in T.grid(64, 64):
                with T.block("C"):
                    vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                    with T.init():
                        C[vi, vj] = T.float32(0)
                    C[vi, vj] = C[vi, vj] + A_shared[vi, vk] * B[vk, vj]

    def apply(sch):
        c = sch.get_block("C")
        cache = sch.cache_read(c, 0, "shared")
        sch.compute_at(cache, sch.get_loops(c)[0])

    golden(matmul, expected, apply)


# ---- checks ----


def test_cache_read_index_out_of_range(schedule_error):
    schedule_error(matmul, lambda sch: sch.cache_read(sch.get_block("C"), 2, "shared"), "cache_read",
                   "The read buffer index 2 is out of range: the block tir.Block#0 has 2 read buffers")


def test_cache_write_index_out_of_range(schedule_error):
    schedule_error(matmul, lambda sch: sch.cache_write(sch.get_block("C"), 1, "local"), "cache_write",
                   "The write buffer index 1 is out of range")


def test_cache_read_into_a_tagged_global_scope_builds():
    # As TVM: a rank with a tag ("global.vtcm") is a valid scope; on the CPU it is plain memory.
    sch = tir.Schedule(elementwise)
    block = sch.cache_read(sch.get_block("B"), 0, "global.vtcm")
    assert sch.get(block).writes[0].buffer.scope() == "global.vtcm"
    lib = ts.build(sch.mod, target="c")
    a = np.random.default_rng(0).random((128, 128), dtype="float32")
    c = np.zeros((128, 128), "float32")
    lib(a, c)
    np.testing.assert_allclose(c, a * 2 + 1, rtol=1e-6)


def test_cache_invalid_scope(schedule_error):
    schedule_error(matmul, lambda sch: sch.cache_read(sch.get_block("C"), 1, "texture"), "cache_read",
                   "Invalid storage scope 'texture'")
    schedule_error(matmul, lambda sch: sch.cache_write(sch.get_block("C"), 0, "l2"), "cache_write",
                   "Invalid storage scope 'l2'")
    schedule_error(matmul, lambda sch: sch.cache_read(sch.get_block("C"), 0, "global."), "cache_read",
                   "Invalid storage scope 'global.'")


@T.prim_func
def two_writers(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((16,))
    for i in T.serial(16):
        with T.block("B0"):
            vi = T.axis.spatial(16, i)
            B[vi] = A[vi]
    for i in T.serial(16):
        with T.block("B1"):
            vi = T.axis.spatial(16, i)
            B[vi] = B[vi] * T.float32(2)
    for i in T.serial(16):
        with T.block("C"):
            vi = T.axis.spatial(16, i)
            C[vi] = B[vi]


def test_cache_read_buffer_with_several_writers(schedule_error):
    schedule_error(two_writers, lambda sch: sch.cache_read(sch.get_block("C"), 0, "local"), "cache_read",
                   "is written by more than one block of the scope")


def test_cache_write_buffer_with_several_writers(schedule_error):
    schedule_error(two_writers, lambda sch: sch.cache_write(sch.get_block("B0"), 0, "local"),
                   "cache_write", "is written by more than one block of the scope")


def test_cache_read_inside_the_loop_of_writer_and_consumer(golden):
    @T.prim_func
    def fused(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
        B = T.alloc_buffer((16,))
        for i in T.serial(16):
            with T.block("B"):
                vi = T.axis.spatial(16, i)
                B[vi] = A[vi]
            with T.block("C"):
                vi = T.axis.spatial(16, i)
                C[vi] = B[vi]

    @T.prim_func
    def expected(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
        B = T.alloc_buffer((16,))
        B_local = T.alloc_buffer((16,), scope="local")
        for i in T.serial(16):
            with T.block("B"):
                vi = T.axis.spatial(16, i)
                B[vi] = A[vi]
            for ax0 in T.serial(1):
                with T.block("B_local"):
                    v0 = T.axis.spatial(16, i + ax0)
                    B_local[v0] = B[v0]
            with T.block("C"):
                vi = T.axis.spatial(16, i)
                C[vi] = B_local[vi]

    golden(fused, expected, lambda sch: sch.cache_read(sch.get_block("C"), 0, "local"))


@T.prim_func
def split_uses(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32"),
               D: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((16,))
    for i in T.serial(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            B[vi] = A[vi]
        with T.block("C"):
            vi = T.axis.spatial(16, i)
            C[vi] = B[vi]
    for i in T.serial(16):
        with T.block("D"):
            vi = T.axis.spatial(16, i)
            D[vi] = B[vi]


def test_cache_read_consumer_sharing_the_writer_loop(golden):
    # As TVM: the copy goes into the loop the writer shares with its first consumer, a copy of
    # the whole buffer filled an element per iteration, which the later consumer reads too.
    @T.prim_func
    def expected(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32"),
                 D: T.Buffer((16,), "float32")):
        B = T.alloc_buffer((16,))
        B_local = T.alloc_buffer((16,), scope="local")
        for i in T.serial(16):
            with T.block("B"):
                vi = T.axis.spatial(16, i)
                B[vi] = A[vi]
            for ax0 in T.serial(1):
                with T.block("B_local"):
                    v0 = T.axis.spatial(16, i + ax0)
                    B_local[v0] = B[v0]
            with T.block("C"):
                vi = T.axis.spatial(16, i)
                C[vi] = B_local[vi]
        for i in T.serial(16):
            with T.block("D"):
                vi = T.axis.spatial(16, i)
                D[vi] = B_local[vi]

    golden(split_uses, expected, lambda sch: sch.cache_read(sch.get_block("D"), 0, "local"))


def test_cache_write_writer_sharing_a_loop_with_a_reader(golden):
    @T.prim_func
    def expected(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32"),
                 D: T.Buffer((16,), "float32")):
        B = T.alloc_buffer((16,))
        B_local = T.alloc_buffer((16,), scope="local")
        for i in T.serial(16):
            with T.block("B"):
                vi = T.axis.spatial(16, i)
                B_local[vi] = A[vi]
            for ax0 in T.serial(1):
                with T.block("B_local"):
                    v0 = T.axis.spatial(16, i + ax0)
                    B[v0] = B_local[v0]
            with T.block("C"):
                vi = T.axis.spatial(16, i)
                C[vi] = B[vi]
        for i in T.serial(16):
            with T.block("D"):
                vi = T.axis.spatial(16, i)
                D[vi] = B[vi]

    golden(split_uses, expected, lambda sch: sch.cache_write(sch.get_block("B"), 0, "local"))


@T.prim_func
def in_place(A: T.Buffer((16,), "float32")):
    for i in T.serial(16):
        with T.block("A"):
            vi = T.axis.spatial(16, i)
            A[vi] = A[vi] * T.float32(2)


def test_cache_read_of_a_buffer_the_block_also_writes(golden):
    # As TVM: the block writing the buffer keeps reading it; the copy of what it wrote goes at
    # the end of the scope, for the readers there are none of.
    @T.prim_func
    def expected(A: T.Buffer((16,), "float32")):
        A_local = T.alloc_buffer((16,), scope="local")
        for i in T.serial(16):
            with T.block("A"):
                vi = T.axis.spatial(16, i)
                A[vi] = A[vi] * T.float32(2)
        for ax0 in T.serial(16):
            with T.block("A_local"):
                v0 = T.axis.spatial(16, ax0)
                A_local[v0] = A[v0]

    golden(in_place, expected, lambda sch: sch.cache_read(sch.get_block("A"), 0, "local"))


@T.prim_func
def in_a_sub_scope(A: T.Buffer((64,), "float32"), C: T.Buffer((64,), "float32")):
    B = T.alloc_buffer((64,))
    for io in range(4):
        with T.block("tile"):
            vo = T.axis.spatial(4, io)
            for ii in range(16):
                with T.block("B"):
                    vi = T.axis.spatial(64, vo * 16 + ii)
                    B[vi] = A[vi] * T.float32(2)
            for ii in range(16):
                with T.block("C"):
                    vi = T.axis.spatial(64, vo * 16 + ii)
                    C[vi] = B[vi] + T.float32(1)


def test_cache_read_in_a_sub_scope_is_compact(golden):
    # Every reader is inside the scope block: the cache holds the scope's tile only, allocated
    # there, indexed from the tile's start.
    @T.prim_func
    def expected(A: T.Buffer((64,), "float32"), C: T.Buffer((64,), "float32")):
        B = T.alloc_buffer((64,))
        for io in range(4):
            with T.block("tile"):
                vo = T.axis.spatial(4, io)
                B_shared = T.alloc_buffer((16,), scope="shared")
                for ii in range(16):
                    with T.block("B"):
                        vi = T.axis.spatial(64, vo * 16 + ii)
                        B[vi] = A[vi] * T.float32(2)
                for ax0 in range(16):
                    with T.block("B_shared"):
                        v0 = T.axis.spatial(16, ax0)
                        B_shared[v0] = B[vo * 16 + v0]
                for ii in range(16):
                    with T.block("C"):
                        vi = T.axis.spatial(64, vo * 16 + ii)
                        C[vi] = B_shared[vi - vo * 16] + T.float32(1)

    golden(in_a_sub_scope, expected, lambda sch: sch.cache_read("C", 0, "shared"))


def test_cache_write_in_a_sub_scope_is_compact(golden):
    @T.prim_func
    def expected(A: T.Buffer((64,), "float32"), C: T.Buffer((64,), "float32")):
        B = T.alloc_buffer((64,))
        for io in range(4):
            with T.block("tile"):
                vo = T.axis.spatial(4, io)
                B_local = T.alloc_buffer((16,), scope="local")
                for ii in range(16):
                    with T.block("B"):
                        vi = T.axis.spatial(64, vo * 16 + ii)
                        B_local[vi - vo * 16] = A[vi] * T.float32(2)
                for ax0 in range(16):
                    with T.block("B_local"):
                        v0 = T.axis.spatial(16, ax0)
                        B[vo * 16 + v0] = B_local[v0]
                for ii in range(16):
                    with T.block("C"):
                        vi = T.axis.spatial(64, vo * 16 + ii)
                        C[vi] = B[vi] + T.float32(1)

    golden(in_a_sub_scope, expected, lambda sch: sch.cache_write("B", 0, "local"))


def test_cache_in_a_sub_scope_computes_the_same():
    a = np.random.uniform(-1, 1, size=64).astype("float32")
    for apply in (lambda sch: sch.cache_read("C", 0, "shared"),
                  lambda sch: sch.cache_write("B", 0, "local")):
        sch = tir.Schedule(in_a_sub_scope)
        apply(sch)
        lib = ts.build(sch.mod, target="c")
        c = ts.nd.array(np.zeros(64, "float32"))
        lib(ts.nd.array(a), c)
        np.testing.assert_allclose(c.numpy(), a * 2 + 1, rtol=1e-6)


@T.prim_func
def ragged(A: T.Buffer((10,), "float32"), C: T.Buffer((10,), "float32")):
    B = T.alloc_buffer((10,))
    for i_0, i_1 in T.grid(4, 3):
        with T.block("B"):
            vi = T.axis.spatial(10, i_0 * 3 + i_1)
            T.where(i_0 * 3 + i_1 < 10)
            B[vi] = A[vi] * T.float32(3)
        with T.block("C"):
            vi = T.axis.spatial(10, i_0 * 3 + i_1)
            T.where(i_0 * 3 + i_1 < 10)
            C[vi] = B[vi] - T.float32(1)


def test_cache_read_under_a_predicate_keeps_the_copy_inside_the_buffer(golden):
    @T.prim_func
    def expected(A: T.Buffer((10,), "float32"), C: T.Buffer((10,), "float32")):
        B = T.alloc_buffer((10,))
        B_local = T.alloc_buffer((10,), scope="local")
        for i_0, i_1 in T.grid(4, 3):
            with T.block("B"):
                vi = T.axis.spatial(10, i_0 * 3 + i_1)
                T.where(i_0 * 3 + i_1 < 10)
                B[vi] = A[vi] * T.float32(3)
            for ax0 in T.serial(1):
                with T.block("B_local"):
                    v0 = T.axis.spatial(10, i_0 * 3 + i_1 + ax0)
                    T.where(i_0 * 3 + i_1 + ax0 < 10)
                    B_local[v0] = B[v0]
            with T.block("C"):
                vi = T.axis.spatial(10, i_0 * 3 + i_1)
                T.where(i_0 * 3 + i_1 < 10)
                C[vi] = B_local[vi] - T.float32(1)

    golden(ragged, expected, lambda sch: sch.cache_read(sch.get_block("C"), 0, "local"))


def test_cache_write_of_a_predicated_block_copies_the_buffer_only(golden):
    @T.prim_func
    def expected(A: T.Buffer((10,), "float32"), C: T.Buffer((10,), "float32")):
        B = T.alloc_buffer((10,))
        C_global = T.alloc_buffer((10,))
        for i_0, i_1 in T.grid(4, 3):
            with T.block("B"):
                vi = T.axis.spatial(10, i_0 * 3 + i_1)
                T.where(i_0 * 3 + i_1 < 10)
                B[vi] = A[vi] * T.float32(3)
            with T.block("C"):
                vi = T.axis.spatial(10, i_0 * 3 + i_1)
                T.where(i_0 * 3 + i_1 < 10)
                C_global[vi] = B[vi] - T.float32(1)
        for ax0 in T.serial(10):
            with T.block("C_global"):
                v0 = T.axis.spatial(10, ax0)
                C[v0] = C_global[v0]

    golden(ragged, expected, lambda sch: sch.cache_write(sch.get_block("C"), 0, "global"))
