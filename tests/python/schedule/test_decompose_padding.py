"""decompose_padding: a padding block becomes a constant fill and an in-bound block."""

import numpy as np
import pytest

import tessera
from tessera.script import tir as T


@T.prim_func
def pad_1d(x: T.Buffer((128,), "int32"), y: T.Buffer((140,), "int32")):
    for i in range(140):
        with T.block("block"):
            vi = T.axis.remap("S", [i])
            y[vi] = T.if_then_else(vi >= 6 and vi < 134, x[vi - 6], 0)


@T.prim_func
def pad_rows(x: T.Buffer((1, 128, 128), "int32"), y: T.Buffer((1, 140, 128), "int32")):
    for b, i, j in T.grid(1, 140, 128):
        with T.block("block"):
            vb, vi, vj = T.axis.remap("SSS", [b, i, j])
            y[vb, vi, vj] = T.if_then_else(vi < 128, x[vb, vi, vj], 0)


def test_1d(golden):
    @T.prim_func
    def expected(x: T.Buffer((128,), "int32"), y: T.Buffer((140,), "int32")):
        for i in range(140):
            with T.block("block_pad_const"):
                vi = T.axis.spatial(140, i)
                T.reads()
                T.writes(y[vi])
                y[vi] = 0
        for i in range(128):
            with T.block("block"):
                vi = T.axis.spatial(128, i)
                T.reads(x[vi])
                T.writes(y[vi + 6])
                y[vi + 6] = x[vi]

    def apply(sch):
        block = sch.get_block("block")
        const = sch.decompose_padding(block, sch.get_loops(block)[0])
        assert sch.get(const).name_hint == "block_pad_const"
        # The handle of the block now names the in-bound block.
        assert sch.get(block).name_hint == "block"

    golden(pad_1d, expected, apply)


def test_inner_loop_keeps_a_predicate(golden):
    @T.prim_func
    def expected(x: T.Buffer((1, 128, 128), "int32"), y: T.Buffer((1, 140, 128), "int32")):
        for b, i in T.grid(1, 140):
            for j in range(128):
                with T.block("block_pad_const"):
                    vb = T.axis.spatial(1, 0)
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads()
                    T.writes(y[vb, vi, vj])
                    y[vb, vi, vj] = 0
            for j in range(128):
                with T.block("block"):
                    vb = T.axis.spatial(1, 0)
                    vi = T.axis.spatial(128, i)
                    vj = T.axis.spatial(128, j)
                    T.where(i < 128)
                    T.reads(x[vb, vi, vj])
                    T.writes(y[vb, vi, vj])
                    y[vb, vi, vj] = x[vb, vi, vj]

    def apply(sch):
        block = sch.get_block("block")
        sch.decompose_padding(block, sch.get_loops(block)[2])

    golden(pad_rows, expected, apply)


def test_results_match_numpy():
    sch = tessera.tir.Schedule(pad_1d)
    block = sch.get_block("block")
    sch.decompose_padding(block, sch.get_loops(block)[0])
    f = tessera.build(sch.mod, target="llvm")
    x = np.arange(128, dtype="int32")
    y = tessera.nd.array(np.full(140, -1, dtype="int32"))
    f(tessera.nd.array(x), y)
    np.testing.assert_array_equal(y.numpy(), np.pad(x, (6, 6)))


def test_not_a_padding_block_fails(schedule_error):
    @T.prim_func
    def copy(x: T.Buffer((16,), "int32"), y: T.Buffer((16,), "int32")):
        for i in range(16):
            with T.block("block"):
                vi = T.axis.remap("S", [i])
                y[vi] = x[vi]

    schedule_error(copy, lambda sch: sch.decompose_padding(
        sch.get_block("block"), sch.get_loops(sch.get_block("block"))[0]), "decompose_padding",
        "the stored value is not if_then_else(in-bound predicate, value, pad value)")


def test_loop_not_above_the_block_fails(schedule_error):
    @T.prim_func
    def two(x: T.Buffer((128,), "int32"), y: T.Buffer((140,), "int32"), z: T.Buffer((4,), "int32")):
        for i in range(140):
            with T.block("block"):
                vi = T.axis.remap("S", [i])
                y[vi] = T.if_then_else(vi >= 6 and vi < 134, x[vi - 6], 0)
        for k in range(4):
            with T.block("other"):
                vk = T.axis.remap("S", [k])
                z[vk] = 1

    schedule_error(two, lambda sch: sch.decompose_padding(
        sch.get_block("block"), sch.get_loops(sch.get_block("other"))[0]), "decompose_padding",
        "is not an ancestor of block")


def test_can_decompose_padding():
    @T.prim_func
    def trivial(x: T.Buffer((16,), "int32"), y: T.Buffer((16,), "int32")):
        for i in range(16):
            with T.block("block"):
                vi = T.axis.remap("S", [i])
                y[vi] = T.if_then_else(0 <= vi and vi < 16, x[vi], 0)

    sch = tessera.tir.Schedule(trivial)
    block = sch.get_block("block")
    assert not sch.can_decompose_padding(block, sch.get_loops(block)[0])
    sch = tessera.tir.Schedule(pad_1d)
    block = sch.get_block("block")
    trace = sch.trace.as_python()
    assert sch.can_decompose_padding(block, sch.get_loops(block)[0])
    assert sch.trace.as_python()[: len(trace)] == trace and len(sch.trace) == 2
