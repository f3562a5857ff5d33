"""rolling_buffer: a buffer a tiled producer writes in overlapping windows becomes a circular
buffer of the window's size; the producer skips the overlap of the previous tile."""

import numpy as np

import tessera as ts
from tessera import tir
from tessera.script import tir as T


@T.prim_func
def blur(A: T.Buffer((2, 18), "int32"), C: T.Buffer((2, 16), "int32")):
    B = T.alloc_buffer((2, 17), "int32")
    for c, i in T.grid(2, 17):
        with T.block("B"):
            vc, vi = T.axis.remap("SS", [c, i])
            B[vc, vi] = A[vc, vi] + A[vc, vi + 1]
    for c, i in T.grid(2, 16):
        with T.block("C"):
            vc, vi = T.axis.remap("SS", [c, i])
            C[vc, vi] = B[vc, vi] + B[vc, vi + 1]


@T.prim_func
def blur_rolling(A: T.Buffer((2, 18), "int32"), C: T.Buffer((2, 16), "int32")):
    B = T.alloc_buffer((2, 5), "int32")
    for c, i_0 in T.grid(2, 4):
        for ax0 in range(5):
            with T.block("B"):
                vc = T.axis.spatial(2, c)
                vi = T.axis.opaque(17, i_0 * 4 + ax0)
                T.where(i_0 < 1 or 1 <= ax0)
                T.reads(A[vc, vi:vi + 2])
                T.writes(B[vc, vi % 5])
                B[vc, vi % 5] = A[vc, vi] + A[vc, vi + 1]
        for i_1 in range(4):
            with T.block("C"):
                vc = T.axis.spatial(2, c)
                vi = T.axis.opaque(16, i_0 * 4 + i_1)
                T.reads(B[vc, 0:5])
                T.writes(C[vc, vi])
                C[vc, vi] = B[vc, vi % 5] + B[vc, (vi + 1) % 5]


def tile(sch):
    _, i = sch.get_loops("C")
    io, _ = sch.split(i, [4, 4])
    sch.compute_at(sch.get_block("B"), io)


def test_rolling_buffer(golden):
    def apply(sch):
        tile(sch)
        sch.rolling_buffer("B", 0)

    sch = golden(blur, blur_rolling, apply)
    assert sch.trace.as_python()[-1] == "sch.rolling_buffer(block=b6, write_buffer_index=0)"
    lib = ts.build(sch.mod, target="c")
    a = np.random.default_rng(0).integers(-100, 100, (2, 18), dtype="int32")
    c = ts.nd.array(np.zeros((2, 16), "int32"))
    lib(ts.nd.array(a), c)
    b = a[:, :-1] + a[:, 1:]
    np.testing.assert_array_equal(c.numpy(), b[:, :-1] + b[:, 1:])


def test_rolling_buffer_needs_a_tiled_producer(schedule_error):
    # Untiled: the lowest common loop of the producer and its consumer is not a loop.
    schedule_error(blur, lambda sch: sch.rolling_buffer("B", 0), "rolling_buffer",
                   "rolling_buffer needs a loop above the block tir.Block#0 and all readers of B")


def test_rolling_buffer_output_block(schedule_error):
    schedule_error(blur, lambda sch: sch.rolling_buffer("C", 0), "rolling_buffer", "output")


def test_rolling_buffer_without_overlap(schedule_error):
    @T.prim_func
    def copy2(A: T.Buffer((16,), "int32"), C: T.Buffer((16,), "int32")):
        B = T.alloc_buffer((16,), "int32")
        for i in range(16):
            with T.block("B"):
                vi = T.axis.remap("S", [i])
                B[vi] = A[vi]
        for i in range(16):
            with T.block("C"):
                vi = T.axis.remap("S", [i])
                C[vi] = B[vi]

    def setup(sch):
        (i,) = sch.get_loops("C")
        io, _ = sch.split(i, [4, 4])
        sch.compute_at(sch.get_block("B"), io)

    schedule_error(copy2, lambda sch, _: sch.rolling_buffer("B", 0), "rolling_buffer",
                   "found no dimension of B[i_0 * 4:i_0 * 4 + 4] whose start moves with an outer loop", setup=setup)
