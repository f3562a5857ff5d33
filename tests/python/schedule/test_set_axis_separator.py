"""set_axis_separator and IndexMap.AXIS_SEPARATOR in transform_layout: the buffer (and the
match buffers viewing it) gets axis separators; the program is otherwise unchanged."""

import pytest

from tessera import tir
from tessera.error import ScheduleError, TesseraValueError
from tessera.ir import assert_structural_equal
from tessera.script import tir as T
from tessera.script import from_source
from tessera.tir.schedule.testing import assert_structural_equal_ignore_global_symbol, verify_trace_roundtrip


@T.prim_func
def scale_then_shift(X: T.Buffer((16, 32), "float32"), Y: T.Buffer((16, 32), "float32")):
    tmp = T.alloc_buffer((16, 32), "float32")
    for a, b in T.grid(16, 32):
        with T.block("scale"):
            va, vb = T.axis.remap("SS", [a, b])
            tmp[va, vb] = X[va, vb] * T.float32(3)
    for a, b in T.grid(16, 32):
        with T.block("shift"):
            va, vb = T.axis.remap("SS", [a, b])
            Y[va, vb] = tmp[va, vb] - T.float32(1)


@T.prim_func
def tmp_separated(X: T.Buffer((16, 32), "float32"), Y: T.Buffer((16, 32), "float32")):
    tmp = T.alloc_buffer((16, 32), "float32", axis_separators=[1])
    for a, b in T.grid(16, 32):
        with T.block("scale"):
            va, vb = T.axis.remap("SS", [a, b])
            tmp[va, vb] = X[va, vb] * T.float32(3)
    for a, b in T.grid(16, 32):
        with T.block("shift"):
            va, vb = T.axis.remap("SS", [a, b])
            Y[va, vb] = tmp[va, vb] - T.float32(1)


@T.prim_func
def x_separated(X: T.Buffer((16, 32), "float32", axis_separators=[1]), Y: T.Buffer((16, 32), "float32")):
    tmp = T.alloc_buffer((16, 32), "float32")
    for a, b in T.grid(16, 32):
        with T.block("scale"):
            va, vb = T.axis.remap("SS", [a, b])
            tmp[va, vb] = X[va, vb] * T.float32(3)
    for a, b in T.grid(16, 32):
        with T.block("shift"):
            va, vb = T.axis.remap("SS", [a, b])
            Y[va, vb] = tmp[va, vb] - T.float32(1)


@T.prim_func
def with_views(X: T.Buffer((16, 32), "float32"), Y: T.Buffer((16, 32), "float32")):
    tmp = T.alloc_buffer((16, 32), "float32")
    for a, b in T.grid(16, 32):
        with T.block("scale"):
            va, vb = T.axis.remap("SS", [a, b])
            cell = T.match_buffer(tmp[va, vb], [], offset_factor=1)
            row = T.match_buffer(tmp[va, 0:32], [1, 32], offset_factor=1)
            cell[()] = X[va, vb] * T.float32(3) + row[0, 0]
    for a, b in T.grid(16, 32):
        with T.block("shift"):
            va, vb = T.axis.remap("SS", [a, b])
            Y[va, vb] = tmp[va, vb] - T.float32(1)


@T.prim_func
def with_views_separated(X: T.Buffer((16, 32), "float32"), Y: T.Buffer((16, 32), "float32")):
    tmp = T.alloc_buffer((16, 32), "float32", axis_separators=[1])
    for a, b in T.grid(16, 32):
        with T.block("scale"):
            va, vb = T.axis.remap("SS", [a, b])
            cell = T.match_buffer(tmp[va, vb], [], offset_factor=1, axis_separators=[0])
            row = T.match_buffer(tmp[va, 0:32], [1, 32], offset_factor=1, axis_separators=[1])
            cell[()] = X[va, vb] * T.float32(3) + row[0, 0]
    for a, b in T.grid(16, 32):
        with T.block("shift"):
            va, vb = T.axis.remap("SS", [a, b])
            Y[va, vb] = tmp[va, vb] - T.float32(1)


def _check(sch, expected, before):
    assert_structural_equal_ignore_global_symbol(sch.mod["main"], expected)
    verify_trace_roundtrip(sch, before)


@pytest.mark.parametrize("buffer", [("write", 0), "tmp"])
def test_allocated_buffer(buffer):
    sch = tir.Schedule(scale_then_shift)
    sch.set_axis_separator(sch.get_block("scale"), buffer, [1])
    _check(sch, tmp_separated, scale_then_shift)
    assert [int(s) for s in sch.get(sch.get_block("scale")).writes[0].buffer.axis_separators] == [1]


def test_parameter_buffer():
    sch = tir.Schedule(scale_then_shift)
    sch.set_axis_separator("scale", ("read", 0), [1])
    _check(sch, x_separated, scale_then_shift)
    x_buf = sch.mod["main"].buffer_map.values()[0]
    assert [int(s) for s in x_buf.axis_separators] == [1]


def test_match_buffers_follow():
    sch = tir.Schedule(with_views)
    sch.set_axis_separator("scale", ("write", 0), [1])
    _check(sch, with_views_separated, with_views)


def test_transform_layout_axis_separator():
    sch = tir.Schedule(scale_then_shift)
    sch.transform_layout("scale", "tmp", lambda a, b: [a, tir.IndexMap.AXIS_SEPARATOR, b])
    _check(sch, tmp_separated, scale_then_shift)
    assert [i.kind.name for i in sch.trace.insts][-2:] == ["TransformLayout", "SetAxisSeparator"]


def test_script_round_trip_keeps_separators():
    text = tmp_separated.script()
    assert "axis_separators=[1]" in text
    assert_structural_equal(from_source(text), tmp_separated)


def test_errors():
    sch = tir.Schedule(scale_then_shift)
    with pytest.raises(TesseraValueError, match="buffer_index 1 is out of range"):
        sch.set_axis_separator("scale", ("write", 1), [1])
    with pytest.raises(ScheduleError, match="out of range"):
        sch.set_axis_separator("scale", ("write", 0), [3])
    with pytest.raises(ScheduleError, match="ascending order"):
        sch.set_axis_separator("scale", ("write", 0), [2, 1])
    with pytest.raises(ValueError, match="axis_separators of buffer"):
        @T.prim_func
        def bad(X: T.Buffer((4,), "float32", axis_separators=[5])):
            T.evaluate(0)


def test_lowering_a_buffer_with_separators_fails_closed():
    # tir.FlattenBuffer keeps one dimension per physical axis (TVM's behaviour); the C target
    # has no memory of several axes and refuses the access, at its source line.
    import tessera as ts
    from tessera.error import BuildError

    sch = tir.Schedule(scale_then_shift)
    sch.set_axis_separator("scale", ("write", 0), [1])
    flat = tir.transform.FlattenBuffer()(tir.transform.LowerOpaqueBlock()(sch.mod))
    assert "T.Buffer((16, 32), data=tmp, axis_separators=[1])" in flat.script()
    with ts.transform.PassContext(config={"tir.auto_schedule": False}):
        with pytest.raises(BuildError, match="2-d buffer tmp") as err:
            ts.build(sch.mod, target="c")
    assert "test_set_axis_separator.py:20" in str(err.value)


def test_buffer_index_out_of_range_is_a_value_and_assertion_error():
    from tessera import tir as _tir
    from tessera.error import BufferArgumentError

    @T.prim_func
    def copy(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        for i in T.serial(4):
            with T.block("B"):
                vi = T.axis.remap("S", [i])
                B[vi] = A[vi]

    sch = _tir.Schedule(copy)
    for bad in (("write", 1), ("read", -1)):
        with pytest.raises(BufferArgumentError, match="buffer_index .* is out of range") as info:
            sch.set_axis_separator("B", bad, [1])
        assert isinstance(info.value, ValueError) and isinstance(info.value, AssertionError)
