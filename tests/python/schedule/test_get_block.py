"""Lookup primitives: get_block, get_loops, get_child_blocks, get_producers, get_consumers,
get_output_blocks. They leave the program as it is and are recorded in the trace."""

import pytest

from tessera import tir
from tessera.script import tir as T
from tessera.tir.schedule.testing import verify_trace_roundtrip


@T.prim_func
def three_stages(A: T.Buffer((16, 16), "float32"), D: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16))
    C = T.alloc_buffer((16, 16))
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i in T.serial(16):
        for j in T.serial(16):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vi, vj] + T.float32(1)
        for j in T.serial(16):
            with T.block("D"):
                vi, vj = T.axis.remap("SS", [i, j])
                D[vi, vj] = C[vi, vj] + B[vi, vj]


def names(sch, blocks):
    return [sch.get(b).name_hint for b in blocks]


def test_lookups_leave_the_program_unchanged(golden):
    def apply(sch):
        b = sch.get_block("B")
        assert isinstance(b, tir.BlockRV)
        loops = sch.get_loops(sch.get_block("D"))
        assert all(isinstance(l, tir.LoopRV) for l in loops)
        assert [sch.get(l).loop_var.name for l in loops] == ["i", "j"]
        assert names(sch, sch.get_child_blocks(sch.get_block("root"))) == ["B", "C", "D"]
        assert names(sch, sch.get_child_blocks(loops[0])) == ["C", "D"]
        assert names(sch, sch.get_producers(sch.get_block("D"))) == ["B", "C"]
        assert names(sch, sch.get_consumers(b)) == ["C", "D"]
        assert names(sch, sch.get_producers(b)) == []
        assert names(sch, sch.get_output_blocks(sch.get_block("root"))) == ["D"]

    sch = golden(three_stages, three_stages, apply)
    assert sch.trace.kinds == ["get_block", "get_block", "get_loops", "get_block", "get_child_blocks",
                               "get_child_blocks", "get_block", "get_producers", "get_consumers",
                               "get_producers", "get_block", "get_output_blocks"]


def test_get_block_in_a_named_function():
    from tessera.script import ir as I

    @I.ir_module
    class Module:
        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            for i in T.serial(4):
                with T.block("X"):
                    vi = T.axis.spatial(4, i)
                    A[vi] = T.float32(0)

        @T.prim_func
        def g(A: T.Buffer((4,), "float32")):
            for i in T.serial(4):
                with T.block("X"):
                    vi = T.axis.spatial(4, i)
                    A[vi] = T.float32(1)

    sch = tir.Schedule(Module)
    assert sch.func_working_on is None
    with pytest.raises(ValueError, match="does not know which function to be working on: the module has several"):
        sch.get_block("X")
    x = sch.get_block("X", func_name="g")
    sch.split(sch.get_loops(x)[0], [2, 2])
    assert len(sch.get_loops(sch.get_block("X", "g"))) == 2
    assert len(sch.get_loops(sch.get_block("X", "f"))) == 1
    sch.work_on("f")
    assert sch.func_working_on.name_hint == "f"
    assert len(sch.get_loops(sch.get_block("X"))) == 1
    verify_trace_roundtrip(sch, Module)


# ---- checks ----


def test_get_block_without_such_block(schedule_error):
    schedule_error(three_stages, lambda sch: sch.get_block("E"), "get_block",
                   'Cannot find a block with the name: E (in the function "main")')


def test_get_block_with_several_blocks_of_the_name(schedule_error):
    @T.prim_func
    def twice(A: T.Buffer((4,), "float32")):
        for i in T.serial(4):
            with T.block("X"):
                vi = T.axis.spatial(4, i)
                A[vi] = T.float32(0)
        for i in T.serial(4):
            with T.block("X"):
                vi = T.axis.spatial(4, i)
                A[vi] = A[vi] + T.float32(1)

    message = schedule_error(twice, lambda sch: sch.get_block("X"), "get_block",
                             'Expected exactly one block named "X", but found 2: tir.Block#0, tir.Block#1')
    underlines = [line for line in message.splitlines() if line.strip() and set(line.strip()) == {"^"}]
    assert len(underlines) == 2


def test_removed_handle_is_an_index_error():
    sch = tir.Schedule(three_stages)
    block = sch.get_block("B")
    sch.remove_rv(block)
    with pytest.raises(IndexError, match="does not belong to this schedule"):
        sch.get(block)
    with pytest.raises(ValueError):
        sch.get(block)


@T.prim_func
def wrapped_twice(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32")):
    C = T.alloc_buffer((8, 8))
    with T.block("outer"):
        for i, j in T.grid(8, 8):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = A[vi, vj]
        with T.block("inner"):
            for i, j in T.grid(8, 8):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi, vj] = C[vi, vj] + T.float32(1)


def test_output_blocks_include_nested_blocks_in_preorder():
    sch = tir.Schedule(wrapped_twice)
    # C writes a buffer of the root scope: an output of "outer", not of "root".
    assert names(sch, sch.get_output_blocks("root")) == ["outer", "inner", "B"]
    assert names(sch, sch.get_output_blocks("outer")) == ["C", "inner", "B"]
    assert names(sch, sch.get_output_blocks("inner")) == ["B"]
    verify_trace_roundtrip(sch, wrapped_twice)
