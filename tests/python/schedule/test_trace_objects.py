"""The trace in TVM's form: Instruction / InstructionKind, Trace(insts, decisions), printing,
JSON and replay."""

import json

import pytest

from tessera import tir
from tessera.ir import assert_structural_equal
from tessera.script import tir as T
from tessera.tir.schedule import BlockRV, Instruction, InstructionKind, LoopRV, Trace
from tessera.tir.schedule.testing import assert_structural_equal_ignore_global_symbol


@T.prim_func
def two_stages(A: T.Buffer((32, 32), "float32"), C: T.Buffer((32, 32), "float32")):
    B = T.alloc_buffer((32, 32), "float32")
    for i, j in T.grid(32, 32):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(32, 32):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)


@T.prim_func
def inlined(A: T.Buffer((32, 32), "float32"), C: T.Buffer((32, 32), "float32")):
    for i, j in T.grid(32, 32):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj] * T.float32(2) + T.float32(1)


def get_block(name, out):
    return Instruction(InstructionKind.get("GetBlock"), inputs=[], attrs=[name, "main"], outputs=[out])


def test_kinds():
    split = InstructionKind.get("Split")
    assert split.name == "Split" and not split.is_pure and InstructionKind.get("GetLoops").is_pure
    assert InstructionKind.get("Split") == split
    with pytest.raises(ValueError, match="unknown instruction kind 'Nope'"):
        InstructionKind.get("Nope")


def test_schedule_trace_as_instructions():
    sch = tir.Schedule(two_stages)
    b = sch.get_block("B")
    i, _ = sch.get_loops(b)
    sch.split(i, factors=[None, 8])
    sch.annotate(b, "k", 2)
    trace = sch.trace
    assert [inst.kind.name for inst in trace.insts] == ["GetBlock", "GetLoops", "Split", "Annotate"]
    get, loops, split, annotate = trace.insts
    assert (get.inputs, get.attrs) == ([], ["B", "main"]) and get.outputs[0].same_as(b)
    assert loops.inputs[0].same_as(b) and len(loops.outputs) == 2
    assert split.inputs[0].same_as(loops.outputs[0]) and split.inputs[1:] == [None, 8]
    assert split.attrs == [True, False]
    assert annotate.inputs[1] == 2 and annotate.attrs == ["k"]
    assert trace.decisions == {} and trace.get_decision(split) is None


def test_constructed_trace_prints_and_replays():
    b0, b1 = BlockRV(), BlockRV()
    trace = Trace([get_block("B", b0),
                   Instruction(InstructionKind.get("ComputeInline"), [b0], [], []),
                   get_block("C", b1)], {})
    assert str(trace).splitlines() == [
        "# from tvm import tir",
        "def apply_trace(sch: tir.Schedule) -> None:",
        '  b0 = sch.get_block(name="B", func_name="main")',
        "  sch.compute_inline(block=b0)",
        '  b1 = sch.get_block(name="C", func_name="main")',
    ]
    sch = tir.Schedule(two_stages, debug_mask="all")
    trace.apply_to_schedule(sch, remove_postproc=False)
    assert_structural_equal_ignore_global_symbol(sch.mod["main"], inlined)
    # The unused lookup goes away when simplified; nothing else does.
    assert len(trace.simplified(remove_postproc=True)) == 2
    assert trace.pop().kind.name == "GetBlock" and len(trace) == 2
    assert str(Trace([], {})).endswith("\n  pass")
    assert Trace([], {}).pop() is None


def test_single_list_output_prints_like_tvm():
    b0, l1 = BlockRV(), LoopRV()
    trace = Trace([get_block("B", b0), Instruction(InstructionKind.get("GetLoops"), [b0], [], [l1])], {})
    assert trace.as_python()[1] == "l1, = sch.get_loops(block=b0)"


def test_json_round_trip_in_tvms_form():
    sch = tir.Schedule(two_stages)
    b = sch.get_block("C")
    i, j = sch.get_loops(b)
    sch.reorder(j, i)
    sch.transform_layout("C", ("write", 0), lambda x, y: (y, x))
    data = sch.trace.as_json()
    assert data[0][0] == ["GetBlock", [], ["C", "main"], ["b0"]]
    assert data[0][2] == ["Reorder", ["l2", "l1"], [], []]
    assert data[0][-1][0] == "TransformLayout" and data[0][-1][2] == [0, 1, None, False]
    text = json.dumps(data)  # plain JSON
    fresh = tir.Schedule(two_stages)
    Trace.apply_json_to_schedule(text, fresh)
    assert_structural_equal(fresh.mod, sch.mod)
    assert fresh.trace.as_python() == sch.trace.as_python()


def test_with_decision_and_bad_traces():
    b0 = BlockRV()
    inst = get_block("B", b0)
    trace = Trace([inst], {})
    assert trace.with_decision(inst, None, remove_postproc=True).insts == [inst]
    with pytest.raises(ValueError, match="not in the trace"):
        trace.with_decision(get_block("C", BlockRV()), 1, remove_postproc=False)
    with pytest.raises(TypeError, match="not an Instruction"):
        Trace(["x"], {})
    with pytest.raises(ValueError, match="GetLoops takes 1 inputs, got 0"):
        Trace([Instruction(InstructionKind.get("GetLoops"), [], [], [])], {}).as_python()
    with pytest.raises(ValueError, match="a trace in JSON is"):
        Trace.apply_json_to_schedule([1, 2, 3], tir.Schedule(two_stages))


def test_instruction_prints_alone_with_placeholders():
    block, l0, l1 = BlockRV(), LoopRV(), LoopRV()
    inst = Instruction(InstructionKind.get("GetLoops"), [block], [], [l0, l1])
    assert str(inst) == "_, _ = sch.get_loops(block=_)"
    assert inst.kind.same_as(InstructionKind.get("GetLoops")) and inst.outputs[1].same_as(l1)
    annotate = Instruction(InstructionKind.get("Annotate"), [block, "b0"], ["l1"], [])
    assert str(annotate) == 'sch.annotate(block_or_loop=_, ann_key="l1", ann_val="b0")'


def test_json_float32_attributes_print_as_tvm_and_dump_as_numbers():
    """A FloatImm attribute stays a float32 constant in the JSON object (printed as TVM prints
    its FloatImm) and is a plain number in the JSON text."""
    from tessera import _core

    v = _core.Var("v", "int32")
    trace = Trace(insts=[Instruction(kind=InstructionKind.get("SampleCategorical"), inputs=[],
                                     attrs=[[_core.IntImm("int32", 3)], [_core.FloatImm("float32", 0.5)]],
                                     outputs=[v])], decisions={})
    data = trace.as_json()
    assert str(data) == "[[['SampleCategorical', [], [[3], [T.float32(0.5)]], ['v0']]], []]"
    assert json.dumps(data) == '[[["SampleCategorical", [], [[3], [0.5]], ["v0"]]], []]'
    assert data[0][0][2][1][0] == 0.5
