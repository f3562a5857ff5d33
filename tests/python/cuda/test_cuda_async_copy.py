"""tir.InjectPTXAsyncCopy turns the global -> shared copies of 4, 8 or 16 bytes under
async_scope into ptx_cp_async; tir.ThreadSync counts a barrier already there and leaves the
buffers of tessera.manual_sync to whoever placed it (tir.InjectSoftwarePipeline)."""

from tessera import _core
from tessera.ir import assert_structural_equal
from tessera.script import tir as T
from tessera.tir import transform as tt


def run(name, func):
    mod = _core.IRModule.from_func(func.with_attr("global_symbol", _core.StringImm("main")), "main")
    return getattr(tt, name)()(mod).lookup("main")


def test_vector_and_scalar_copies_become_cp_async():
    @T.prim_func
    def before(A: T.Buffer((64,), "float16"), B: T.Buffer((64,), "float32")):
        S = T.allocate([64], "float16", "shared")
        S_1 = T.decl_buffer((64,), "float16", data=S, scope="shared")
        R = T.allocate([64], "float32", "shared")
        R_1 = T.decl_buffer((64,), "float32", data=R, scope="shared")
        for tx in T.thread_binding(8, thread="threadIdx.x"):
            with T.attr(0, "async_scope", 1):
                S_1[T.Ramp(tx * 8, 1, 8)] = A[T.Ramp(tx * 8 + 8, 1, 8)]  # 16 bytes
                R_1[tx] = B[tx]  # 4 bytes
                S_1[tx] = A[tx]  # 2 bytes: stays a store
            S_1[T.Ramp(tx * 8, 1, 8)] = A[T.Ramp(tx * 8, 1, 8)]  # not asynchronous

    @T.prim_func
    def expected(A: T.Buffer((64,), "float16"), B: T.Buffer((64,), "float32")):
        S = T.allocate([64], "float16", "shared")
        S_1 = T.decl_buffer((64,), "float16", data=S, scope="shared")
        R = T.allocate([64], "float32", "shared")
        R_1 = T.decl_buffer((64,), "float32", data=R, scope="shared")
        for tx in T.thread_binding(8, thread="threadIdx.x"):
            T.evaluate(T.ptx_cp_async("float16", S, tx * 8, A.data, tx * 8 + 8, 16))
            T.evaluate(T.ptx_cp_async("float32", R, tx, B.data, tx, 4))
            S_1[tx] = A[tx]
            S_1[T.Ramp(tx * 8, 1, 8)] = A[T.Ramp(tx * 8, 1, 8)]

    assert_structural_equal(run("InjectPTXAsyncCopy", before),
                            expected.with_attr("global_symbol", _core.StringImm("main")))


def test_thread_sync_counts_existing_barriers_and_manual_buffers():
    @T.prim_func
    def func(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
        S = T.allocate([64], "float32", "shared")
        S_1 = T.decl_buffer((64,), "float32", data=S, scope="shared")
        M = T.allocate([64], "float32", "shared")
        M_1 = T.decl_buffer((64,), "float32", data=M, scope="shared")
        for tx in T.thread_binding(64, thread="threadIdx.x"):
            S_1[tx] = A[tx]
            T.evaluate(T.tvm_storage_sync("shared"))
            B[tx] = S_1[63 - tx]
            with T.attr(M, "tessera.manual_sync", 1):
                M_1[tx] = A[tx]
                B[tx] = M_1[63 - tx]
            S_1[tx] = A[tx]

    text = run("ThreadSync", func.with_attr("target", _core.StringImm("cuda"))).script()
    # The barrier there orders S's write before its read; S's write after the read needs one
    # more; M's accesses, synchronized by hand, need none.
    assert text.count("tvm_storage_sync") == 2
    lines = [ln.strip() for ln in text.splitlines()]
    assert lines.index("M_1[tx] = A[tx]") == lines.index("B[tx] = S_1[63 - tx]") + 2
