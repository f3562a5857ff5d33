"""reverse_compute_inline through an affine iterator map: a consumer that loads its producer's
buffer at fused/split indices, an overcomputing producer (the consumer's domain becomes a
predicate), a reduction producer, and the errors."""

import numpy as np

import tessera as ts
from tessera import tir
from tessera.script import tir as T


@T.prim_func
def fused_load(A: T.Buffer((16, 16), "float32"), C: T.Buffer((4, 8, 8), "float32")):
    B = T.alloc_buffer((16, 16))
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] + T.float32(1)
    for i, j, k in T.grid(4, 8, 8):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSS", [i, j, k])
            C[vi, vj, vk] = B[(vi * 64 + vj * 8 + vk) // 16, (vi * 64 + vj * 8 + vk) % 16] * T.float32(3)


def test_reverse_inline_fused_load(golden):
    @T.prim_func
    def expected(A: T.Buffer((16, 16), "float32"), C: T.Buffer((4, 8, 8), "float32")):
        for i, j in T.grid(16, 16):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[(vj + vi * 16) // 64, (vj + vi * 16) // 8 % 8, (vj + vi * 16) % 8] = (
                    A[vi, vj] + T.float32(1)) * T.float32(3)

    golden(fused_load, expected, lambda sch: sch.reverse_compute_inline(sch.get_block("C")))


def test_reverse_inline_fused_load_computes_the_same():
    sch = tir.Schedule(fused_load)
    sch.reverse_compute_inline(sch.get_block("C"))
    a = np.random.uniform(-1, 1, size=(16, 16)).astype("float32")
    want = ((a + 1) * 3).reshape(4, 8, 8)
    for mod in (fused_load, sch.mod["main"]):
        c = ts.nd.array(np.zeros((4, 8, 8), "float32"))
        ts.build(mod, target="c")(ts.nd.array(a), c)
        np.testing.assert_allclose(c.numpy(), want, rtol=1e-6)


def test_reverse_inline_split_load_with_unit_iterator(golden):
    @T.prim_func
    def before(A: T.Buffer((32, 8), "float32"), D: T.Buffer((1, 4, 8, 8), "float32")):
        B = T.alloc_buffer((32, 8))
        for i, j in T.grid(32, 8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * T.float32(2)
        for i, j, k, l in T.grid(1, 4, 8, 8):
            with T.block("D"):
                vi, vj, vk, vl = T.axis.remap("SSSS", [i, j, k, l])
                D[vi, vj, vk, vl] = B[vj * 8 + vk, vl]

    @T.prim_func
    def expected(A: T.Buffer((32, 8), "float32"), D: T.Buffer((1, 4, 8, 8), "float32")):
        for i, j in T.grid(32, 8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                D[0, vi // 8, vi % 8, vj] = A[vi, vj] * T.float32(2)

    golden(before, expected, lambda sch: sch.reverse_compute_inline(sch.get_block("D")))


def test_reverse_inline_overcomputing_producer_gets_a_predicate(golden):
    @T.prim_func
    def before(A: T.Buffer((16, 16), "float32"), C: T.Buffer((15, 15), "float32")):
        B = T.alloc_buffer((16, 16))
        for i, j in T.grid(16, 16):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * T.float32(2)
        for i, j in T.grid(15, 15):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vi, vj] + T.float32(1)

    @T.prim_func
    def expected(A: T.Buffer((16, 16), "float32"), C: T.Buffer((15, 15), "float32")):
        for i, j in T.grid(16, 16):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.where(i < 15 and j < 15)
                C[vi, vj] = A[vi, vj] * T.float32(2) + T.float32(1)

    golden(before, expected, lambda sch: sch.reverse_compute_inline(sch.get_block("C")))


def test_reverse_inline_fused_overcomputing_producer_narrows_the_predicate(golden):
    # The producer walks a fused 16x16 loop, the consumer 13x15 of it: the predicate
    # `f // 16 < 13 and f % 16 < 15` becomes `f < 207 and f % 16 < 15` (row 12 ends at 15).
    @T.prim_func
    def before(A: T.Buffer((16, 16), "float32"), C: T.Buffer((13, 15), "float32")):
        B = T.alloc_buffer((16, 16))
        for f in T.serial(256):
            with T.block("B"):
                vi = T.axis.spatial(16, f // 16)
                vj = T.axis.spatial(16, f % 16)
                B[vi, vj] = A[vi, vj] * T.float32(2)
        for i, j in T.grid(13, 15):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vi, vj] - T.float32(1)

    @T.prim_func
    def expected(A: T.Buffer((16, 16), "float32"), C: T.Buffer((13, 15), "float32")):
        for f in T.serial(256):
            with T.block("B"):
                vi = T.axis.spatial(16, f // 16)
                vj = T.axis.spatial(16, f % 16)
                T.where(f < 207 and f % 16 < 15)
                C[vi, vj] = A[vi, vj] * T.float32(2) - T.float32(1)

    sch = golden(before, expected, lambda sch: sch.reverse_compute_inline(sch.get_block("C")))
    a = np.random.rand(16, 16).astype("float32")
    c = ts.nd.array(np.zeros((13, 15), "float32"))
    ts.build(sch.mod["main"], target="c")(ts.nd.array(a), c)
    np.testing.assert_allclose(c.numpy(), a[:13, :15] * 2 - 1, rtol=1e-6)


def test_reverse_inline_into_a_reduction_producer(golden):
    @T.prim_func
    def before(A: T.Buffer((8, 8), "float32"), C: T.Buffer((1, 8, 8), "float32")):
        B = T.alloc_buffer((8, 8))
        for i, j in T.grid(8, 8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                with T.init():
                    B[vi, vj] = T.float32(0)
                B[vi, vj] = B[vi, vj] + A[vi, vj]
        for i, j in T.grid(8, 8):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[0, vj, vi] = B[vi, vj]

    @T.prim_func
    def expected(A: T.Buffer((8, 8), "float32"), C: T.Buffer((1, 8, 8), "float32")):
        for i, j in T.grid(8, 8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                with T.init():
                    C[0, vj, vi] = T.float32(0)
                C[0, vj, vi] = C[0, vj, vi] + A[vi, vj]

    golden(before, expected, lambda sch: sch.reverse_compute_inline(sch.get_block("C")))


def test_reverse_inline_non_affine_load(schedule_error):
    @T.prim_func
    def before(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16,), "float32")):
        B = T.alloc_buffer((16, 16))
        for i, j in T.grid(16, 16):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * T.float32(2)
        for i in range(16):
            with T.block("C"):
                vi = T.axis.spatial(16, i)
                C[vi] = B[vi, vi * vi % 16]

    schedule_error(before, lambda sch: sch.reverse_compute_inline(sch.get_block("C")),
                   "reverse_compute_inline", "not affine")


def test_reverse_inline_producer_does_not_cover_the_consumer(schedule_error):
    @T.prim_func
    def before(A: T.Buffer((8, 8), "float32"), D: T.Buffer((16, 8), "float32")):
        B = T.alloc_buffer((8, 8))
        for i, j in T.grid(8, 8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * T.float32(2)
        for i, j in T.grid(16, 8):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                D[vi, vj] = B[vi - 8, vj]

    schedule_error(before, lambda sch: sch.reverse_compute_inline(sch.get_block("C")),
                   "reverse_compute_inline", "does not cover")
