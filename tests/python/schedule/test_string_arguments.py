"""Primitives take block names and buffer names where they take handles, as TVM's do."""

import pytest

from tessera import tir
from tessera.error import TesseraError
from tessera.ir import assert_structural_equal
from tessera.script import tir as T
from tessera.tir.schedule.testing import assert_structural_equal_ignore_global_symbol, verify_trace_roundtrip


@T.prim_func
def two_stages(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16), "float32")
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)


@T.prim_func
def inlined(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj] * T.float32(2) + T.float32(1)


def test_compute_inline_by_name():
    sch = tir.Schedule(two_stages, debug_mask="all")
    sch.compute_inline("B")
    assert_structural_equal_ignore_global_symbol(sch.mod["main"], inlined)
    verify_trace_roundtrip(sch, two_stages)


def test_names_and_handles_give_the_same_result():
    by_name = tir.Schedule(two_stages)
    by_handle = tir.Schedule(two_stages)
    by_name.cache_read("C", "B", "shared")
    by_handle.cache_read(by_handle.get_block("C"), 0, "shared")
    assert_structural_equal(by_name.mod, by_handle.mod)
    by_name.cache_write("B", "B", "local")
    by_handle.cache_write(by_handle.get_block("B"), 0, "local")
    assert_structural_equal(by_name.mod, by_handle.mod)
    assert len(by_name.get_loops("C")) == 2
    assert [by_name.get(b).name_hint for b in by_name.get_consumers("B")] == ["B_local"]


def test_compute_at_and_annotate_by_name():
    sch = tir.Schedule(two_stages)
    i, _ = sch.get_loops("C")
    sch.compute_at("B", i)
    sch.annotate("C", "key", 1)
    assert sch.get(sch.get_block("C")).annotations["key"].value == 1
    sch.unannotate("C", "key")
    assert "key" not in sch.get(sch.get_block("C")).annotations
    verify_trace_roundtrip(sch, two_stages)


def test_buffer_by_name_or_object():
    sch = tir.Schedule(two_stages)
    block = sch.get_block("C")
    buffer = sch.get(block).reads[0].buffer
    assert sch._normalize_buffer_arg(block, "B") == ("read", 0, buffer)
    kind, index, _ = sch._normalize_buffer_arg(block, buffer)
    assert (kind, index) == ("read", 0)
    assert sch._normalize_buffer_arg(block, ("write", 0))[:2] == ("write", 0)
    sch.transform_layout("C", "C", lambda i, j: (j, i))


def test_wrong_names():
    sch = tir.Schedule(two_stages)
    with pytest.raises(tir.ScheduleError, match='Cannot find a block with the name: D '):
        sch.compute_inline("D")
    with pytest.raises(ValueError, match="Could not find read buffer 'X' in block 'C'") as info:
        sch.cache_read("C", "X", "shared")
    assert isinstance(info.value, TesseraError)
    with pytest.raises(ValueError, match="buffer_index 3 is out of range: block C has 1 read buffers"):
        sch.transform_layout("C", ("read", 3), lambda i, j: (j, i))
    with pytest.raises(TypeError, match="Invalid type for argument 'buffer'"):
        sch._normalize_buffer_arg(sch.get_block("C"), 1.5)


def test_get_block_error_texts():
    for level, text in (("detail", 'Cannot find a block with the name: wrong_name (in'),
                        ("fast", "Cannot find a block with the specified name")):
        sch = tir.Schedule(two_stages, error_render_level=level)
        with pytest.raises(tir.ScheduleError) as info:
            sch.get_block("wrong_name")
        assert text in str(info.value)


def test_later_primitives_take_block_names_too():
    sch = tir.Schedule(two_stages)
    by_handle = tir.Schedule(two_stages)
    sch.reindex("C", ("read", 0))
    by_handle.reindex(by_handle.get_block("C"), ("read", 0))
    assert_structural_equal(sch.mod, by_handle.mod)
    sch.unsafe_set_dtype("B", 0, "float16")
    by_handle.unsafe_set_dtype(by_handle.get_block("B"), 0, "float16")
    assert_structural_equal(sch.mod, by_handle.mod)
    verify_trace_roundtrip(sch, two_stages)
