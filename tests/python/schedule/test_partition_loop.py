"""loop_partition: one loop becomes consecutive loops over parts of its range, each in a block
"<block>_<loop><i>_partition" under "<block>_<loop>_common"."""

import numpy as np
import pytest

import tessera as ts
from tessera import tir
from tessera.script import tir as T


@T.prim_func
def add_one(A: T.Buffer((64, 32), "float32"), B: T.Buffer((64, 32), "float32")):
    for i, j in T.grid(64, 32):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] + T.float32(1)


@T.prim_func
def add_one_partitioned(A: T.Buffer((64, 32), "float32"), B: T.Buffer((64, 32), "float32")):
    # A lone top-level block without iterators is the root itself (as TVM), so the schedule's
    # implicit root is written out.
    with T.block("root"):
        with T.block("B_i_common"):
            T.reads()
            T.writes()
            with T.block("B_i0_partition"):
                T.reads()
                T.writes()
                for i0, j in T.grid(16, 32):
                    with T.block("B_i0"):
                        vi = T.axis.spatial((0, 16), i0)
                        vj = T.axis.spatial(32, j)
                        T.reads(A[0:16, 0:32])
                        T.writes(B[0:16, 0:32])
                        B[vi, vj] = A[vi, vj] + T.float32(1)
            with T.block("B_i1_partition"):
                T.reads()
                T.writes()
                for i1 in range(16, 64):
                    with T.block("B_i1_j_common"):
                        T.reads()
                        T.writes()
                        with T.block("B_i1_j0_partition"):
                            T.reads()
                            T.writes()
                            for j0 in range(8):
                                with T.block("B_i1_j0"):
                                    vi = T.axis.spatial((16, 64), i1)
                                    vj = T.axis.spatial((0, 8), j0)
                                    T.reads(A[16:64, 0:8])
                                    T.writes(B[16:64, 0:8])
                                    B[vi, vj] = A[vi, vj] + T.float32(1)
                        with T.block("B_i1_j1_partition"):
                            T.reads()
                            T.writes()
                            for j1 in range(8, 32):
                                with T.block("B_i1_j1"):
                                    vi = T.axis.spatial((16, 64), i1)
                                    vj = T.axis.spatial((8, 32), j1)
                                    T.reads(A[16:64, 8:32])
                                    T.writes(B[16:64, 8:32])
                                    B[vi, vj] = A[vi, vj] + T.float32(1)


def test_partition_twice(golden):
    def apply(sch):
        i, _ = sch.get_loops("B")
        parts = sch.loop_partition(i, [16, None])
        assert len(parts) == 2
        assert sch.get(parts[1]).min.value == 16
        _, j = sch.get_loops("B_i1")
        sch.loop_partition(j, [8])  # no None: the rest of the range is a second part

    golden(add_one, add_one_partitioned, apply)


def test_partition_trace_text_and_result_runs():
    sch = tir.Schedule(add_one)
    i, _ = sch.get_loops("B")
    sch.loop_partition(i, [3, 5, None])
    assert sch.trace.as_python()[-1] == (
        "l3, l4, l5 = sch.loop_partition(loop=l1, factors=[3, 5, None], preserve_unit_iters=True)")
    lib = ts.build(sch.mod, target="c")
    a = np.random.default_rng(0).random((64, 32), dtype="float32")
    b = ts.nd.array(np.zeros((64, 32), "float32"))
    lib(ts.nd.array(a), b)
    np.testing.assert_allclose(b.numpy(), a + 1)


@pytest.mark.parametrize("factors, fragment", [
    ([None, None], "at most one factor may be None (or -1)"),
    ([0, None], "constant factors must be positive, but factor 0 is 0"),
    ([40, 30], "the factors add up to the extent of tir.For#0 or more"),
])
def test_partition_bad_factors(schedule_error, factors, fragment):
    schedule_error(add_one, lambda sch, i: sch.loop_partition(i, factors), "loop_partition", fragment,
                   setup=lambda sch: sch.get_loops("B")[0])


def test_partition_annotated_or_symbolic_loop(schedule_error):
    @T.prim_func
    def annotated(A: T.Buffer((8,), "float32")):
        for i in T.serial(8, annotations={"key": 1}):
            with T.block("A"):
                vi = T.axis.remap("S", [i])
                A[vi] = T.float32(0)

    @T.prim_func
    def symbolic(a: T.handle, n: T.int32):
        A = T.match_buffer(a, (n,), "float32")
        for i in range(n):
            with T.block("A"):
                vi = T.axis.remap("S", [i])
                A[vi] = T.float32(0)

    schedule_error(annotated, lambda sch, i: sch.loop_partition(i, [2]), "loop_partition",
                   "is annotated or bound to a thread", setup=lambda sch: sch.get_loops("A")[0])
    schedule_error(symbolic, lambda sch, i: sch.loop_partition(i, [2]), "loop_partition",
                   "the start or the extent of tir.For#0 is symbolic", setup=lambda sch: sch.get_loops("A")[0])
