"""tir.Schedule utilities: construction, handles, copy, traces, error rendering, rollback, and
schedules of te- and DSL-built functions."""

import json

import numpy as np
import pytest

import tessera as ts
from tessera import te, tir
from tessera.ir import assert_structural_equal, structural_equal
from tessera.script import ir as I
from tessera.script import tir as T
from tessera.tir.schedule.testing import verify_trace_roundtrip


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


def test_schedule_of_a_prim_func_or_a_module():
    sch = tir.Schedule(elementwise)
    assert isinstance(sch.mod, ts.ir.IRModule)
    assert [gv.name_hint for gv, _ in sch.mod.functions] == ["main"]
    assert_structural_equal(sch.mod["main"], elementwise)
    assert sch.func_working_on.name_hint == "main"
    mod = ts.ir.IRModule.from_func(elementwise, "main")
    assert tir.Schedule(mod).mod.same_as(mod)
    with pytest.raises(TypeError):
        tir.Schedule(3)


def test_get_returns_the_nodes_behind_handles():
    sch = tir.Schedule(elementwise)
    b = sch.get_block("B")
    i, j = sch.get_loops(b)
    assert isinstance(sch.get(b), tir.Block) and sch.get(b).name_hint == "B"
    assert isinstance(sch.get(i), tir.For) and sch.get(i).loop_var.name == "i"
    # Handles survive primitives that keep their node.
    i0, i1 = sch.split(i, factors=[None, 32])
    assert sch.get(b).name_hint == "B"
    assert [sch.get(l).extent.value for l in sch.get_loops(b)] == [4, 32, 128]
    assert sch.get(j).loop_var.name == "j"


def test_handles_of_removed_nodes():
    sch = tir.Schedule(elementwise)
    b = sch.get_block("B")
    (i, _) = sch.get_loops(b)
    sch.compute_inline(b)
    with pytest.raises(ValueError, match="the block was removed from the IR"):
        sch.get(b)
    with pytest.raises(ValueError, match="the loop was removed from the IR"):
        sch.get(i)
    with pytest.raises(tir.ScheduleError, match="the block was removed from the IR"):
        sch.get_loops(b)


def test_copy_is_independent():
    sch = tir.Schedule(elementwise)
    b = sch.get_block("B")
    other = sch.copy()
    other.split(other.get_loops(b)[0], factors=[None, 8])
    assert len(other.get_loops(b)) == 3
    assert len(sch.get_loops(b)) == 2
    assert_structural_equal(sch.mod["main"], elementwise)
    assert len(other.trace) == len(sch.trace) + 2


def test_trace_as_python_and_json():
    sch = tir.Schedule(elementwise)
    b = sch.get_block("B")
    i, j = sch.get_loops(b)
    sch.parallel(i)
    sch.vectorize(j)
    sch.annotate(b, "note", "x")
    assert sch.trace.as_python() == [
        'b0 = sch.get_block(name="B", func_name="main")',
        "l1, l2 = sch.get_loops(block=b0)",
        "sch.parallel(loop=l1)",
        "sch.vectorize(loop=l2)",
        'sch.annotate(block_or_loop=b0, ann_key="note", ann_val="x")',
    ]
    data = sch.trace.as_json()
    # TVM's form: [[kind, inputs, attrs, outputs], ...] and the decisions.
    insts, decisions = data
    assert insts[0] == ["GetBlock", [], ["B", "main"], ["b0"]]
    assert insts[1] == ["GetLoops", ["b0"], [], ["l1", "l2"]]
    assert insts[2] == ["Parallel", ["l1"], [], []]
    assert insts[4] == ["Annotate", ["b0", "x"], ["note"], []]
    assert decisions == []
    fresh = tir.Schedule(elementwise)
    tir.Trace.apply_json_to_schedule(json.dumps(data), fresh)
    assert_structural_equal(fresh.mod, sch.mod)
    verify_trace_roundtrip(sch, elementwise)


def test_error_render_levels():
    def fail(level):
        sch = tir.Schedule(elementwise, error_render_level=level)
        with pytest.raises(tir.ScheduleError) as info:
            sch.split(sch.get_loops(sch.get_block("B"))[0], factors=[None, None])
        return str(info.value)

    detail = fail("detail")
    lines = detail.splitlines()
    assert lines[0] == "ScheduleError: the schedule primitive 'split' failed."
    assert lines[1] == "The IR, with the offending nodes marked:"
    # As TVM: the tag of a loop is a comment line above it, the underline below it.
    marked = lines.index("            # tir.For#0")
    assert lines[marked + 1] == "            for i in range(128):"
    assert lines[marked + 2] == "            ^^^^^^^^^^^^^^^^^^^^"
    assert lines[-1] == "Error message: At most one factor of the split of tir.For#0 can be None (or -1)"
    assert fail("fast") == "ScheduleError: At most one factor can be None (or -1)"
    assert fail("none") == "ScheduleError: (not rendered)"
    with pytest.raises(ValueError, match="error_render_level"):
        tir.Schedule(elementwise, error_render_level="loud")


def test_schedule_error_is_exported():
    from tessera.error import ScheduleError

    assert tir.ScheduleError is ScheduleError
    assert tir.schedule.ScheduleError is ScheduleError


def test_failed_primitive_leaves_the_schedule_unchanged():
    sch = tir.Schedule(elementwise, debug_mask="all")
    b = sch.get_block("B")
    i, j = sch.get_loops(b)
    sch.split(j, factors=[None, 16])
    c_i = sch.get_loops(sch.get_block("C"))[0]
    mod, trace = sch.mod, sch.trace.as_python()
    with pytest.raises(tir.ScheduleError):
        sch.compute_at(b, c_i, index=5)
    assert sch.mod.same_as(mod)
    assert sch.trace.as_python() == trace
    # The handles still work and the schedule goes on.
    sch.compute_at(b, c_i)
    verify_trace_roundtrip(sch, elementwise)


def test_printer_marks_for_diagnostics():
    loop = elementwise.body.block.body.seq[0]
    text = elementwise.script(path_to_underline=[loop], obj_to_annotate={loop: "tir.For#0"})
    # As TVM: the comment of a compound statement goes above it; all its lines are underlined.
    assert ("    # tir.For#0\n    for i in range(128):\n    ^^^^^^^^^^^^^^^^^^^^\n"
            "        for j in range(128):\n        ^^^^^^^^^^^^^^^^^^^^\n") in text
    assert "    for i, j in T.grid(128, 128):\n        with T.block(\"C\"):\n" in text


# ---- other front ends ----


def te_mm_relu():
    A = te.placeholder((64, 64), "float32", name="A")
    B = te.placeholder((64, 64), "float32", name="B")
    k = te.reduce_axis((0, 64), name="k")
    Y = te.compute((64, 64), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="Y")
    C = te.compute((64, 64), lambda i, j: te.max(Y[i, j], te.const(0, "float32")), name="C")
    return te.create_prim_func([A, B, C])


def test_schedule_of_a_te_function(golden):
    @T.prim_func
    def expected(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"),
                 C: T.Buffer((64, 64), "float32")):
        T.func_attr({"tir.noalias": True})
        Y = T.alloc_buffer((64, 64))
        for i, j_0 in T.grid(64, 8):
            for k, j_1 in T.grid(64, 8):
                with T.block("Y"):
                    v_i = T.axis.spatial(64, i)
                    v_j = T.axis.spatial(64, j_0 * 8 + j_1)
                    v_k = T.axis.reduce(64, k)
                    with T.init():
                        Y[v_i, v_j] = T.float32(0)
                    Y[v_i, v_j] = Y[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]
            for ax0 in T.serial(8):
                with T.block("C"):
                    v_i = T.axis.spatial(64, i)
                    v_j = T.axis.spatial(64, j_0 * 8 + ax0)
                    C[v_i, v_j] = T.max(Y[v_i, v_j], T.float32(0))

    def apply(sch):
        y = sch.get_block("Y")
        _, j, k = sch.get_loops(y)
        j0, j1 = sch.split(j, factors=[None, 8])
        sch.reorder(j0, k, j1)
        sch.reverse_compute_at(sch.get_block("C"), j0)

    sch = golden(te_mm_relu(), expected, apply)
    lib = ts.build(sch.mod, target="c")
    a, b = (np.random.rand(64, 64).astype("float32") for _ in range(2))
    c = ts.nd.array(np.zeros((64, 64), "float32"))
    lib(ts.nd.array(a), ts.nd.array(b), c)
    np.testing.assert_allclose(c.numpy(), np.maximum(a @ b, 0), rtol=1e-4)


def test_schedule_of_a_module_with_a_dsl_function():
    from tessera.dsl import script as S

    @S.prim_func
    def inc(a: S.ptr("int32", "global"), b: S.ptr("int32", "global"), n: S.i32):
        for i in range(n):
            b[i] = a[i] + 1

    dsl_func = inc.parse()[0]
    # A DSL function has loops but no blocks: it schedules as it is, and lookups say so.
    sch = tir.Schedule(dsl_func)
    assert sch.mod["main"].same_as(dsl_func)
    with pytest.raises(tir.ScheduleError, match='Cannot find a block with the name: B '):
        sch.get_block("B")
    # Beside a TVMScript function, the DSL function is kept as it is.
    mod = ts.ir.IRModule([(ts.ir.GlobalVar("inc"), dsl_func),
                          (ts.ir.GlobalVar("ew"), elementwise)])
    sch = tir.Schedule(mod)
    sch.work_on("ew")
    sch.compute_inline(sch.get_block("B"))
    assert sch.mod["inc"].same_as(dsl_func)
    assert len(sch.get_child_blocks(sch.get_block("root"))) == 1
    verify_trace_roundtrip(sch, mod)


def test_schedule_keeps_other_functions_of_a_module():
    @I.ir_module
    class Module:
        @T.prim_func
        def f(A: T.Buffer((8,), "float32")):
            for i in T.serial(8):
                with T.block("A"):
                    vi = T.axis.spatial(8, i)
                    A[vi] = T.float32(0)

        @T.prim_func
        def g(A: T.Buffer((8,), "float32")):
            for i in T.serial(8):
                with T.block("A"):
                    vi = T.axis.spatial(8, i)
                    A[vi] = T.float32(1)

    sch = tir.Schedule(Module)
    sch.unroll(sch.get_loops(sch.get_block("A", func_name="f"))[0])
    assert sch.mod["g"].same_as(Module["g"])
    assert not structural_equal(sch.mod["f"], Module["f"])


def test_get_sref_of_a_handle_of_another_schedule_is_an_index_error():
    from tessera.error import TesseraIndexError

    @T.prim_func
    def copy_rows(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32")):
        for i, j in T.grid(8, 8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj]

    sch = tir.Schedule(copy_rows)
    i, _ = sch.get_loops(sch.get_block("B"))
    other = sch.copy()
    i0, _ = sch.split(i, factors=[None, 4])
    assert other.get_sref(i).stmt.extent == 8 and sch.get_sref(i0).stmt.extent == 2
    with pytest.raises(IndexError):
        other.get_sref(i0)
    with pytest.raises(TesseraIndexError, match="belongs to another one"):
        other.get_sref(i0)
