"""annotate, unannotate: annotations of loops and blocks."""

import pytest

from tessera import tir
from tessera.ir import assert_structural_equal
from tessera.script import tir as T
from tessera.tir.schedule.testing import verify_trace_roundtrip


@T.prim_func
def elementwise(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in T.serial(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            B[vi] = A[vi] + T.float32(1)


def test_annotate_loop_and_block(golden):
    @T.prim_func
    def expected(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        for i in T.serial(16, annotations={"pragma_auto_unroll_max_step": 16, "note": "x"}):
            with T.block("B"):
                vi = T.axis.spatial(16, i)
                T.block_attr({"software_pipeline_stage": [0, 1], "scale": 0.5, "flag": True})
                B[vi] = A[vi] + T.float32(1)

    def apply(sch):
        b = sch.get_block("B")
        (i,) = sch.get_loops(b)
        sch.annotate(i, "pragma_auto_unroll_max_step", 16)
        sch.annotate(i, "note", "x")
        sch.annotate(b, "software_pipeline_stage", [0, 1])
        sch.annotate(b, "scale", 0.5)
        sch.annotate(b, "flag", True)

    sch = golden(elementwise, expected, apply)
    assert sch.trace.as_python()[-3:] == [
        'sch.annotate(block_or_loop=b0, ann_key="software_pipeline_stage", ann_val=[0, 1])',
        'sch.annotate(block_or_loop=b0, ann_key="scale", ann_val=0.5)',
        'sch.annotate(block_or_loop=b0, ann_key="flag", ann_val=True)',
    ]


def test_unannotate(golden):
    @T.prim_func
    def annotated(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        for i in T.serial(16, annotations={"pragma": 1}):
            with T.block("B"):
                vi = T.axis.spatial(16, i)
                T.block_attr({"meta": "y", "keep": 2})
                B[vi] = A[vi] + T.float32(1)

    @T.prim_func
    def expected(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        for i in T.serial(16):
            with T.block("B"):
                vi = T.axis.spatial(16, i)
                T.block_attr({"keep": 2})
                B[vi] = A[vi] + T.float32(1)

    def apply(sch):
        b = sch.get_block("B")
        sch.unannotate(sch.get_loops(b)[0], "pragma")
        sch.unannotate(b, "meta")
        sch.unannotate(b, "absent")  # removing a missing key changes nothing

    golden(annotated, expected, apply)


def test_annotate_with_a_dict_value_round_trips():
    @T.prim_func
    def before(A: T.Buffer((8,), "float32")):
        for i in T.serial(8):
            with T.block("A"):
                vi = T.axis.remap("S", [i])
                A[vi] = T.float32(0)

    @T.prim_func
    def expected(A: T.Buffer((8,), "float32")):
        for i in T.serial(8, annotations={"cfg": {"arr": [0, 1], "key": 3}}):
            with T.block("A"):
                vi = T.axis.remap("S", [i])
                A[vi] = T.float32(0)

    sch = tir.Schedule(before.with_attr("global_symbol", "main"), debug_mask="all")
    sch.annotate(sch.get_loops(sch.get_block("A"))[0], "cfg", {"key": 3, "arr": [0, 1]})
    assert_structural_equal(sch.mod["main"], expected.with_attr("global_symbol", "main"))
    assert sch.trace.as_python()[-1].endswith(
        'ann_key="cfg", ann_val={"arr": [0, 1], "key": 3})')
    verify_trace_roundtrip(sch, before.with_attr("global_symbol", "main"))
    with pytest.raises(TypeError):
        sch.annotate(sch.get_block("A"), "bad", {1: 2})
