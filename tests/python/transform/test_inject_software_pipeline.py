"""tir.InjectSoftwarePipeline with TVM's rules: a loop annotated with software_pipeline_stage and
software_pipeline_order (and optionally software_pipeline_async_stages) becomes a prologue, a
steady-state loop and an epilogue, each in an opaque block with inferred regions; each statement
is an opaque block guarded by whether its iteration exists; a buffer passed to a later stage gets
a leading dimension of versions. (tessera's own pipeline runs tir.SkewSoftwarePipeline.)"""

import re

import numpy as np
import pytest

import tessera as ts
from tessera import _core
from tessera.error import TesseraError
from tessera.ir import assert_structural_equal
from tessera.script import tir as T
from tessera.tir import transform as tt


def inject(func, simplify=True):
    mod = _core.IRModule.from_func(func.with_attr("global_symbol", _core.StringImm("main")), "main")
    mod = tt.InjectSoftwarePipeline()(mod)
    return tt.Simplify()(mod) if simplify else mod


def check(func, expected, simplify=True):
    after = inject(func, simplify).lookup("main")
    assert_structural_equal(after, expected.with_attr("global_symbol", _core.StringImm("main")))


def scale_rows(stage, order, async_stages=None, extent=8, extra=None):
    """for i: S[0:4] = A[i, 0:4] (load); B[i, j] = S[3 - j] * 3 (store)."""
    ann = {"software_pipeline_stage": stage, "software_pipeline_order": order}
    if async_stages is not None:
        ann["software_pipeline_async_stages"] = async_stages
    ann.update(extra or {})

    @T.prim_func
    def func(A: T.Buffer((8, 4), "float32"), B: T.Buffer((8, 4), "float32")):
        for i in T.serial(extent, annotations=ann):
            with T.block("row"):
                S = T.alloc_buffer((4,), "float32", scope="shared")
                with T.block("load"):
                    for j in range(4):
                        S[j] = A[i, j]
                with T.block("store"):
                    for j in range(4):
                        B[i, j] = S[3 - j] * T.float32(3)

    return func


def test_two_stages():
    # The load of row i + 1 runs with the store of row i: two versions of S, chosen by i % 2.
    @T.prim_func
    def expected(A: T.Buffer((8, 4), "float32"), B: T.Buffer((8, 4), "float32")):
        with T.block("root"):
            T.reads()
            T.writes()
            with T.block(""):
                T.reads(A[0:8, 0:4])
                T.writes(B[0:8, 0:4])
                S = T.alloc_buffer((2, 4), scope="shared")
                with T.block("load"):
                    T.reads(A[0, 0:4])
                    T.writes(S[0, 0:4])
                    for j in range(4):
                        S[0, j] = A[0, j]
                with T.block(""):
                    T.reads(A[1:8, 0:4], S[0:2, 0:4])
                    T.writes(S[0:2, 0:4], B[0:7, 0:4])
                    for i in range(7):
                        with T.block("load"):
                            T.reads(A[i + 1, 0:4])
                            T.writes(S[(i + 1) % 2, 0:4])
                            for j in range(4):
                                S[(i + 1) % 2, j] = A[i + 1, j]
                        with T.block("store"):
                            T.reads(S[i % 2, 0:4])
                            T.writes(B[i, 0:4])
                            for j in range(4):
                                B[i, j] = S[i % 2, 3 - j] * T.float32(3.0)
                with T.block("store"):
                    T.reads(S[1, 0:4])
                    T.writes(B[7, 0:4])
                    for j in range(4):
                        B[7, j] = S[1, 3 - j] * T.float32(3.0)

    check(scale_rows([0, 1], [0, 1]), expected)


def test_asynchronous_stage():
    # Stage 0 runs in async_scope and commits a group per step; the store waits until at most
    # one group (the load just issued) is in flight, none in the epilogue. Without Simplify:
    # the versions and indices as the pass builds them.
    @T.prim_func
    def expected(A: T.Buffer((8, 4), "float32"), B: T.Buffer((8, 4), "float32")):
        with T.block("root"):
            T.reads()
            T.writes()
            with T.block(""):
                T.reads(A[0:8, 0:4])
                T.writes(B[0:8, 0:4])
                S = T.alloc_buffer((2, 4), scope="shared")
                with T.block(""):
                    T.reads(A[0, 0:4])
                    T.writes(S[T.FloorMod(0, 2), 0:4])
                    with T.attr(0, "async_commit_queue_scope", 0):
                        with T.attr(0, "async_scope", 1):
                            for j in range(4):
                                S[T.FloorMod(0, 2), j] = A[0, j]
                with T.block(""):
                    T.reads(A[1:8, 0:4], S[0:2, 0:4])
                    T.writes(S[0:2, 0:4], B[0:7, 0:4])
                    for i in range(7):
                        with T.block(""):
                            T.where(i + 1 < 8)
                            T.reads(A[i + 1, 0:4])
                            T.writes(S[(i + 1) % 2, 0:4])
                            with T.attr(0, "async_commit_queue_scope", 0):
                                with T.attr(0, "async_scope", 1):
                                    for j in range(4):
                                        S[(i + 1) % 2, j] = A[i + 1, j]
                        with T.block("store"):
                            T.where(i + 1 - 1 < 8)
                            T.reads(S[(i - 1 + 1) % 2, 0:4])
                            T.writes(B[i - 1 + 1, 0:4])
                            with T.attr(0, "async_wait_queue_scope", 0):
                                with T.attr(0, "async_wait_inflight_count", 1):
                                    for j in range(4):
                                        B[i - 1 + 1, j] = S[(i - 1 + 1) % 2, 3 - j] * T.float32(3.0)
                with T.block("store"):
                    T.reads(S[T.FloorMod(7, 2), 0:4])
                    T.writes(B[7, 0:4])
                    with T.attr(0, "async_wait_queue_scope", 0):
                        with T.attr(0, "async_wait_inflight_count", 0):
                            for j in range(4):
                                B[7, j] = S[T.FloorMod(7, 2), 3 - j] * T.float32(3.0)

    check(scale_rows([0, 1], [0, 1], [0]), expected, simplify=False)


def test_fewer_iterations_than_stages():
    # Two iterations, the store three stages behind: the prologue's loads are guarded, the
    # steady state is empty (a no-op block) and the epilogue starts after the prologue.
    @T.prim_func
    def expected(A: T.Buffer((8, 4), "float32"), B: T.Buffer((8, 4), "float32")):
        with T.block("root"):
            T.reads()
            T.writes()
            with T.block(""):
                T.reads(A[0:3, 0:4])
                T.writes(B[0:2, 0:4])
                S = T.alloc_buffer((4, 4), scope="shared")
                with T.block(""):
                    T.reads(A[0:3, 0:4])
                    T.writes(S[0:4, 0:4])
                    for i in T.unroll(3):
                        with T.block("load"):
                            T.where(i < 2)
                            T.reads(A[i, 0:4])
                            T.writes(S[0:4, 0:4])
                            for j in range(4):
                                S[i, j] = A[i, j]
                with T.block(""):
                    T.reads()
                    T.writes()
                    T.evaluate(0)
                with T.block(""):
                    T.reads(S[0:4, 0:4])
                    T.writes(B[0:2, 0:4])
                    for i in T.unroll(2):
                        with T.block("store"):
                            T.reads(S[0:4, 0:4])
                            T.writes(B[i, 0:4])
                            for j in range(4):
                                B[i, j] = S[i, 3 - j] * T.float32(3.0)

    check(scale_rows([0, 3], [0, 1], extent=2), expected)


def test_access_pointer_offsets_select_the_version():
    # An opaque use of S through tvm_access_ptr: its element offset moves by the version's size.
    @T.prim_func
    def func(A: T.Buffer((8, 4), "float32")):
        for i in T.serial(8, annotations={"software_pipeline_stage": [0, 1],
                                          "software_pipeline_order": [0, 1]}):
            with T.block("row"):
                S = T.alloc_buffer((4,), "float32", scope="shared")
                with T.block("load"):
                    for j in range(4):
                        S[j] = A[i, j]
                with T.block("use"):
                    T.reads(S[0:4])
                    T.writes()
                    T.evaluate(T.call_extern("int32", "use", T.tvm_access_ptr(
                        T.type_annotation("float32"), S.data, 0, 4, 1)))

    @T.prim_func
    def expected(A: T.Buffer((8, 4), "float32")):
        with T.block("root"):
            T.reads()
            T.writes()
            with T.block(""):
                T.reads(A[0:8, 0:4])
                T.writes()
                S = T.alloc_buffer((2, 4), scope="shared")
                with T.block("load"):
                    T.reads(A[0, 0:4])
                    T.writes(S[0, 0:4])
                    for j in range(4):
                        S[0, j] = A[0, j]
                with T.block(""):
                    T.reads(A[1:8, 0:4], S[0:2, 0:4])
                    T.writes(S[0:2, 0:4])
                    for i in range(7):
                        with T.block("load"):
                            T.reads(A[i + 1, 0:4])
                            T.writes(S[(i + 1) % 2, 0:4])
                            for j in range(4):
                                S[(i + 1) % 2, j] = A[i + 1, j]
                        with T.block("use"):
                            T.reads(S[i % 2, 0:4])
                            T.writes()
                            T.evaluate(T.call_extern("int32", "use", T.tvm_access_ptr(
                                T.type_annotation("float32"), S.data, i % 2 * 4, 4, 1)))
                with T.block("use"):
                    T.reads(S[1, 0:4])
                    T.writes()
                    T.evaluate(T.call_extern("int32", "use", T.tvm_access_ptr(
                        T.type_annotation("float32"), S.data, 4, 4, 1)))

    check(func, expected)


def allocation_shape(mod):
    shapes = []
    ts.tir.stmt_functor.post_order_visit(
        mod["main"].body,
        lambda n: shapes.extend([int(d) for d in b.shape] for b in n.alloc_buffers)
        if isinstance(n, ts.tir.Block) else None)
    return shapes


def test_versions():
    # use - def + 1 versions; a store in the same stage as the load needs one; so does a
    # two-stage pipeline whose later reader is ordered first (it reads before the write).
    assert allocation_shape(inject(scale_rows([0, 1], [0, 1]))) == [[2, 4]]
    assert allocation_shape(inject(scale_rows([0, 2], [0, 1]))) == [[3, 4]]
    assert allocation_shape(inject(scale_rows([0, 0], [0, 1]))) == [[4]]
    assert allocation_shape(inject(scale_rows([0, 1], [1, 0]))) == [[4]]


def test_disjoint_write_and_read_keep_one_version():
    # The writer of stage 0 and the reader of stage 1 touch different halves of S.
    @T.prim_func
    def func(A: T.Buffer((8, 4), "float32"), B: T.Buffer((8, 4), "float32")):
        for i in T.serial(8, annotations={"software_pipeline_stage": [0, 1],
                                          "software_pipeline_order": [0, 1]}):
            with T.block("row"):
                S = T.alloc_buffer((8,), "float32")
                with T.block("load"):
                    for j in range(4):
                        S[j] = A[i, j]
                with T.block("store"):
                    for j in range(4):
                        B[i, j] = S[j + 4]

    assert allocation_shape(inject(func)) == [[8]]


def test_double_buffer_scope_forces_two_versions():
    @T.prim_func
    def func(A: T.Buffer((8, 4), "float32"), B: T.Buffer((8, 4), "float32")):
        for i in T.serial(8, annotations={"software_pipeline_stage": [0, 0],
                                          "software_pipeline_order": [0, 1]}):
            with T.block("row"):
                S = T.alloc_buffer((4,), "float32")
                with T.block("load"):
                    T.reads(A[i, 0:4])
                    T.writes(S[0:4])
                    T.block_attr({"double_buffer_scope": 0})
                    for j in range(4):
                        S[j] = A[i, j]
                with T.block("store"):
                    for j in range(4):
                        B[i, j] = S[j]

    assert allocation_shape(inject(func)) == [[2, 4]]


def test_other_annotations_stay_on_the_loops():
    mod = inject(scale_rows([0, 2], [0, 1], extra={"pragma_unroll_explicit": 0}))
    loops = []
    ts.tir.stmt_functor.post_order_visit(
        mod["main"].body,
        lambda n: loops.append(n) if isinstance(n, ts.tir.For) and n.loop_var.name == "i" else None)
    assert [int(f.extent) for f in loops] == [2, 6, 2]
    for f in loops:
        assert dict(f.annotations) == {"pragma_unroll_explicit": 0}


@pytest.mark.parametrize("stage, order, async_stages, extent", [
    ([0, 1], [0, 1], None, 8), ([0, 2], [0, 1], None, 8), ([0, 3], [0, 1], None, 2),
    ([0, 0], [0, 1], None, 8), ([0, 1], [1, 0], None, 8), ([0, 2], [1, 0], None, 5),
    ([0, 1], [0, 1], None, 1), ([0, 2], [1, 0], [0], 8),
])
def test_pipelined_loop_computes_the_same(stage, order, async_stages, extent):
    # Built for the CPU (where the asynchronous scopes run synchronously).
    a = np.random.default_rng(1).standard_normal((8, 4)).astype("float32")
    b = np.zeros((8, 4), dtype="float32")
    ts.build(inject(scale_rows(stage, order, async_stages, extent)), target="c")(a, b)
    expected = np.zeros((8, 4), dtype="float32")
    expected[:extent] = a[:extent, ::-1] * 3
    np.testing.assert_allclose(b, expected)


def test_unannotated_function_is_unchanged():
    @T.prim_func
    def func(A: T.Buffer((4,), "float32")):
        for k in range(4):
            A[k] = T.float32(0)

    mod = _core.IRModule.from_func(func.with_attr("global_symbol", _core.StringImm("main")), "main")
    assert tt.InjectSoftwarePipeline()(mod).same_as(mod)


@pytest.mark.parametrize("ann, message", [
    ({"software_pipeline_stage": [0, 1]},
     "has software_pipeline_stage but no software_pipeline_order"),
    ({"software_pipeline_order": [0, 1]},
     "has software_pipeline_order but no software_pipeline_stage"),
    ({"software_pipeline_stage": [0, 1, 1], "software_pipeline_order": [0, 1, 2]},
     "has 2 statements but software_pipeline_stage has 3 entries"),
    ({"software_pipeline_stage": [0, 1], "software_pipeline_order": [0]},
     "has 2 statements but software_pipeline_order has 1 entries"),
    ({"software_pipeline_stage": [0, 1], "software_pipeline_order": [1, 1]},
     "two statements have the order 1"),
    ({"software_pipeline_stage": [0, 1], "software_pipeline_order": [0, 2]},
     "order 2 is not in 0..1"),
    ({"software_pipeline_stage": [1, 0], "software_pipeline_order": [0, 1]},
     "statement 1 reads 'S', which statement 0 writes in a later stage (1 > 0)"),
    ({"software_pipeline_stage": [0, 0], "software_pipeline_order": [1, 0]},
     "statement 1 reads 'S', which statement 0 writes in the same stage, "
     "but its order 0 puts it first"),
])
def test_refusals(ann, message):
    @T.prim_func
    def func(A: T.Buffer((8, 4), "float32"), B: T.Buffer((8, 4), "float32")):
        for i in T.serial(8, annotations=ann):
            with T.block("row"):
                S = T.alloc_buffer((4,), "float32")
                with T.block("load"):
                    for j in range(4):
                        S[j] = A[i, j]
                with T.block("store"):
                    for j in range(4):
                        B[i, j] = S[3 - j]

    with pytest.raises(ValueError, match="tir.InjectSoftwarePipeline: .*" + re.escape(message)) as err:
        inject(func)
    assert isinstance(err.value, TesseraError)
    assert "test_inject_software_pipeline.py" in str(err.value)  # the loop's source location


def test_body_must_be_a_sequence():
    @T.prim_func
    def func(A: T.Buffer((8,), "float32")):
        for i in T.serial(8, annotations={"software_pipeline_stage": [0],
                                          "software_pipeline_order": [0]}):
            A[i] = T.float32(1)

    with pytest.raises(ValueError,
                       match="must have a sequence of statements as its body, not a BufferStore"):
        inject(func)


def test_int64_loop():
    # The loop bounds, versions' indices and wait counts follow the loop variable's type.
    @T.prim_func
    def func(A: T.Buffer((8, 4), "float32"), B: T.Buffer((8, 4), "float32")):
        for i in T.serial(T.int64(8), annotations={"software_pipeline_stage": [0, 2],
                                                   "software_pipeline_order": [1, 0],
                                                   "software_pipeline_async_stages": [0]}):
            with T.block("row"):
                S = T.alloc_buffer((4,), "float32", scope="shared")
                with T.block("load"):
                    for j in range(4):
                        S[j] = A[i, j]
                with T.block("store"):
                    for j in range(4):
                        B[i, j] = S[3 - j] * T.float32(3)

    mod = inject(func)
    loops = []
    ts.tir.stmt_functor.post_order_visit(
        mod["main"].body, lambda n: loops.append(n) if isinstance(n, ts.tir.For) else None)
    assert [(str(f.min.dtype), str(f.extent.dtype)) for f in loops if f.loop_var.name == "i"] == \
        [("int64", "int64")] * 3
    a = np.random.default_rng(2).standard_normal((8, 4)).astype("float32")
    b = np.zeros((8, 4), dtype="float32")
    ts.build(mod, target="c")(a, b)
    np.testing.assert_allclose(b, a[:, ::-1] * 3)
