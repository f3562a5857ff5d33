"""tir.SkewSoftwarePipeline, tessera's software pipeline (the CUDA pipeline runs it; TVM's rules
are tir.InjectSoftwarePipeline's, test_inject_software_pipeline.py): a loop annotated with
software_pipeline_stage (and _order, _async_stages) runs its statements skewed by stage:
prologue, steady-state loop, epilogue; a buffer passed from one stage to a later one gets a
leading dimension of versions. Asynchronous stages commit their copies in groups that their
readers wait for, with barriers."""

import re

import pytest

from tessera.script import tir as T
from tessera import _core
from tessera.error import TesseraError
from tessera.ir import assert_structural_equal
from tessera.transform import Pass


def skew(func):
    """`func` as the "main" of a module after tir.SkewSoftwarePipeline."""
    mod = _core.IRModule.from_func(func.with_attr("global_symbol", _core.StringImm("main")), "main")
    return Pass("tir.SkewSoftwarePipeline")(mod)


def golden(before, expected):
    assert_structural_equal(skew(before).lookup("main"),
                            expected.with_attr("global_symbol", _core.StringImm("main")))


def copy_then_use(stage, order=None, async_stages=None, extent=4):
    """for k: S[tx] = A[k, tx]; C[k, tx] = 2 * S[15 - tx] (S shared: another thread's element)."""
    ann = {"software_pipeline_stage": stage}
    if order is not None:
        ann["software_pipeline_order"] = order
    if async_stages is not None:
        ann["software_pipeline_async_stages"] = async_stages

    @T.prim_func
    def func(A: T.Buffer((4, 16), "float32"), C: T.Buffer((4, 16), "float32")):
        for tx in T.thread_binding(16, thread="threadIdx.x"):
            for k in T.serial(extent, annotations=ann):
                with T.block(""):
                    T.reads(A[k, tx])
                    T.writes(C[k, tx])
                    S = T.alloc_buffer((16,), scope="shared")
                    with T.block("copy"):
                        T.reads(A[k, tx])
                        T.writes(S[tx])
                        S[tx] = A[k, tx]
                    with T.block("use"):
                        T.reads(S[15 - tx])
                        T.writes(C[k, tx])
                        C[k, tx] = S[15 - tx] * T.float32(2)

    return func


def test_two_stages():
    # The copy of iteration k runs with the use of k - 1: two versions of S, k % 2.
    @T.prim_func
    def expected(A: T.Buffer((4, 16), "float32"), C: T.Buffer((4, 16), "float32")):
        for tx in T.thread_binding(16, thread="threadIdx.x"):
            with T.block(""):
                T.reads(A[0:4, 0:16])
                T.writes(C[0:4, 0:16])
                S = T.alloc_buffer((2, 16), scope="shared")
                with T.block("copy"):
                    T.reads(A[0, tx])
                    T.writes(S[0, tx])
                    S[0, tx] = A[0, tx]
                for k in range(1, 4):
                    with T.block("copy"):
                        T.reads(A[k, tx])
                        T.writes(S[k % 2, tx])
                        S[k % 2, tx] = A[k, tx]
                    with T.block("use"):
                        T.reads(S[(k - 1) % 2, 15 - tx])
                        T.writes(C[k - 1, tx])
                        C[k - 1, tx] = S[(k - 1) % 2, 15 - tx] * T.float32(2.0)
                with T.block("use"):
                    T.reads(S[1, 15 - tx])
                    T.writes(C[3, tx])
                    C[3, tx] = S[1, 15 - tx] * T.float32(2.0)

    golden(copy_then_use([0, 1]), expected)


def test_three_stages_async():
    # The copy runs two iterations ahead, asynchronously, after the use in a step: three
    # versions; each step commits its copy as one group; the use waits until at most one group
    # (the copy of the previous step) is in flight, then meets the other threads at a barrier,
    # which also orders the previous step's use before this step's copy overwrites its version.
    @T.prim_func
    def expected(A: T.Buffer((4, 16), "float32"), C: T.Buffer((4, 16), "float32")):
        for tx in T.thread_binding(16, thread="threadIdx.x"):
            with T.block(""):
                T.reads(A[0:4, 0:16])
                T.writes(C[0:4, 0:16])
                S = T.alloc_buffer((3, 16), scope="shared")
                with T.attr(S.data, "tessera.manual_sync", 1):
                    T.evaluate(T.tvm_storage_sync("shared"))
                    with T.attr(0, "async_scope", 1):
                        with T.block("copy"):
                            T.reads(A[0, tx])
                            T.writes(S[0, tx])
                            S[0, tx] = A[0, tx]
                    T.evaluate(T.ptx_commit_group())
                    T.evaluate(T.tvm_storage_sync("shared"))
                    with T.attr(0, "async_scope", 1):
                        with T.block("copy"):
                            T.reads(A[1, tx])
                            T.writes(S[1, tx])
                            S[1, tx] = A[1, tx]
                    T.evaluate(T.ptx_commit_group())
                    for k in range(2, 4):
                        T.evaluate(T.ptx_wait_group(1))
                        T.evaluate(T.tvm_storage_sync("shared"))
                        with T.block("use"):
                            T.reads(S[(k - 2) % 3, 15 - tx])
                            T.writes(C[k - 2, tx])
                            C[k - 2, tx] = S[(k - 2) % 3, 15 - tx] * T.float32(2.0)
                        with T.attr(0, "async_scope", 1):
                            with T.block("copy"):
                                T.reads(A[k, tx])
                                T.writes(S[k % 3, tx])
                                S[k % 3, tx] = A[k, tx]
                        T.evaluate(T.ptx_commit_group())
                    T.evaluate(T.ptx_wait_group(1))
                    T.evaluate(T.tvm_storage_sync("shared"))
                    with T.block("use"):
                        T.reads(S[2, 15 - tx])
                        T.writes(C[2, tx])
                        C[2, tx] = S[2, 15 - tx] * T.float32(2.0)
                    T.evaluate(T.ptx_wait_group(0))
                    T.evaluate(T.tvm_storage_sync("shared"))
                    with T.block("use"):
                        T.reads(S[0, 15 - tx])
                        T.writes(C[3, tx])
                        C[3, tx] = S[0, 15 - tx] * T.float32(2.0)

    golden(copy_then_use([0, 2], [1, 0], [0]), expected)


def test_two_stages_async_copy_first():
    # Copy first in a step: a barrier before it (the version it overwrites was read in the
    # previous step), then the commit, then the wait for all but this step's group.
    text = skew(copy_then_use([0, 1], [0, 1], [0])).lookup("main").script()
    body = text[text.index("for k in range(1, 4):"):]
    steps = [line.strip() for line in body.splitlines()[1:] if "T.evaluate" in line][:4]
    assert steps == ['T.evaluate(T.tvm_storage_sync("shared"))', "T.evaluate(T.ptx_commit_group())",
                     "T.evaluate(T.ptx_wait_group(1))", 'T.evaluate(T.tvm_storage_sync("shared"))']
    assert text.count("T.ptx_wait_group(0)") == 1  # the epilogue waits for the last group


def test_async_stages_synchronous_off_cuda():
    # For a CPU target the asynchronous stages run synchronously: no scopes, groups or barriers.
    func = copy_then_use([0, 2], [1, 0], [0]).with_attr("target", _core.StringImm("c"))
    text = skew(func).lookup("main").script()
    assert "S = T.alloc_buffer((3, 16)" in text
    for absent in ("async_scope", "ptx_", "tvm_storage_sync", "manual_sync"):
        assert absent not in text


def test_unannotated_loop_unchanged():
    @T.prim_func
    def func(A: T.Buffer((4,), "float32")):
        for k in range(4):
            A[k] = T.float32(0)

    mod = _core.IRModule.from_func(func.with_attr("global_symbol", _core.StringImm("main")), "main")
    assert Pass("tir.SkewSoftwarePipeline")(mod).same_as(mod)


@pytest.mark.parametrize("stage, order, async_stages, extent, message", [
    ([0, 1, 1], None, None, 4, "its body has 2 statements but software_pipeline_stage has 3"),
    ([0, 1], [0, 0], None, 4, "must be a permutation of 0..1"),
    ([0, 1], [0, 1, 2], None, 4, "software_pipeline_order has 3 entries"),
    ([0, 2], None, None, 2, "its extent 2 must exceed the largest stage 2"),
    ([1, 0], None, None, 4, "statement 1 reads 'S' before statement 0 writes it"),
    ([0, 0], [1, 0], None, 4, "both access 'S' and software_pipeline_order swaps them"),
    ([0, 0], None, [0], 4, "writes 'S', which no later stage reads"),
    ([0, 1], None, [3], 4, "names stage 3, which no statement has"),
])
def test_refusals(stage, order, async_stages, extent, message):
    func = copy_then_use(stage, order, async_stages, extent)
    with pytest.raises(TesseraError, match="cannot pipeline the loop over k: .*" + re.escape(message)):
        skew(func)


def test_refuses_buffer_shared_across_stages_not_local():
    # A buffer that is not allocated in the loop body (a parameter) cannot be versioned.
    @T.prim_func
    def func(A: T.Buffer((4, 16), "float32"), S: T.Buffer((16,), "float32"), C: T.Buffer((4, 16), "float32")):
        for k in T.serial(4, annotations={"software_pipeline_stage": [0, 1]}):
            for i in range(16):
                S[i] = A[k, i]
            for i in range(16):
                C[k, i] = S[i]

    mod = _core.IRModule.from_func(func.with_attr("global_symbol", _core.StringImm("main")), "main")
    with pytest.raises(TesseraError, match="statements of different stages access 'S'"):
        Pass("tir.SkewSoftwarePipeline")(mod)
