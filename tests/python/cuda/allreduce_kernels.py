"""Cross-thread reductions: programs whose reduction loops are bound to threadIdx, scheduled as
Apache TVM users do (split the reduction loop, bind the inner part to threadIdx.x)."""

from tessera import tir
from tessera.script import tir as T


def row_reduce_func(rows, cols, kind="sum", dtype="float32", acc=None):
    """B[i] = reduce(A[i, :]) with `kind` in sum / max / min / prod, accumulated in `acc`."""
    acc = acc or dtype

    if kind == "sum":
        @T.prim_func
        def func(A: T.Buffer((rows, cols), dtype), B: T.Buffer((rows,), acc)):
            for i, k in T.grid(rows, cols):
                with T.block("B"):
                    vi, vk = T.axis.remap("SR", [i, k])
                    with T.init():
                        B[vi] = T.cast(0, acc)
                    B[vi] = B[vi] + T.cast(T.cast(A[vi, vk], dtype), acc)
    elif kind == "max":
        @T.prim_func
        def func(A: T.Buffer((rows, cols), dtype), B: T.Buffer((rows,), acc)):
            for i, k in T.grid(rows, cols):
                with T.block("B"):
                    vi, vk = T.axis.remap("SR", [i, k])
                    with T.init():
                        B[vi] = T.min_value(acc)
                    B[vi] = T.max(B[vi], T.cast(T.cast(A[vi, vk], dtype), acc))
    elif kind == "min":
        @T.prim_func
        def func(A: T.Buffer((rows, cols), dtype), B: T.Buffer((rows,), acc)):
            for i, k in T.grid(rows, cols):
                with T.block("B"):
                    vi, vk = T.axis.remap("SR", [i, k])
                    with T.init():
                        B[vi] = T.max_value(acc)
                    B[vi] = T.min(B[vi], T.cast(T.cast(A[vi, vk], dtype), acc))
    else:
        @T.prim_func
        def func(A: T.Buffer((rows, cols), dtype), B: T.Buffer((rows,), acc)):
            for i, k in T.grid(rows, cols):
                with T.block("B"):
                    vi, vk = T.axis.remap("SR", [i, k])
                    with T.init():
                        B[vi] = T.cast(1, acc)
                    B[vi] = B[vi] * T.cast(T.cast(A[vi, vk], dtype), acc)
    return func


def schedule_row_reduce(func, threads):
    """One block per row, `threads` threads of threadIdx.x splitting the reduction."""
    sch = tir.Schedule(func)
    i, k = sch.get_loops(sch.get_block("B"))
    _, ki = sch.split(k, [None, threads])
    sch.bind(i, "blockIdx.x")
    sch.bind(ki, "threadIdx.x")
    return sch.mod


def schedule_row_reduce_2d(func, rows_per_block, threads):
    """threadIdx.y picks the row within the block, threadIdx.x splits the reduction: one
    reduction group per threadIdx.y."""
    sch = tir.Schedule(func)
    i, k = sch.get_loops(sch.get_block("B"))
    bi, ti = sch.split(i, [None, rows_per_block])
    _, ki = sch.split(k, [None, threads])
    sch.bind(bi, "blockIdx.x")
    sch.bind(ti, "threadIdx.y")
    sch.bind(ki, "threadIdx.x")
    return sch.mod


def schedule_row_reduce_xy(func, ty, tx):
    """The reduction split over threadIdx.y and threadIdx.x together: one group of ty * tx."""
    sch = tir.Schedule(func)
    i, k = sch.get_loops(sch.get_block("B"))
    _, ki_y, ki_x = sch.split(k, [None, ty, tx])
    sch.bind(i, "blockIdx.x")
    sch.bind(ki_y, "threadIdx.y")
    sch.bind(ki_x, "threadIdx.x")
    return sch.mod


def schedule_row_reduce_over_y(func, rows_per_block, threads):
    """threadIdx.x picks the row, threadIdx.y splits the reduction: the groups are not
    consecutive threads (the shared-memory tree serves them)."""
    sch = tir.Schedule(func)
    i, k = sch.get_loops(sch.get_block("B"))
    bi, ti = sch.split(i, [None, rows_per_block])
    _, ki = sch.split(k, [None, threads])
    sch.reorder(bi, ki, ti)
    sch.bind(bi, "blockIdx.x")
    sch.bind(ki, "threadIdx.y")
    sch.bind(ti, "threadIdx.x")
    sch.reorder(bi, ti, ki)
    return sch.mod


@T.prim_func
def softmax(A: T.Buffer((64, 256), "float32"), B: T.Buffer((64, 256), "float32")):
    M = T.alloc_buffer((64,))
    S = T.alloc_buffer((64,))
    for i, k in T.grid(64, 256):
        with T.block("max"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                M[vi] = T.min_value("float32")
            M[vi] = T.max(M[vi], A[vi, vk])
    for i, k in T.grid(64, 256):
        with T.block("sum"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                S[vi] = T.float32(0)
            S[vi] = S[vi] + T.exp(A[vi, vk] - M[vi])
    for i, j in T.grid(64, 256):
        with T.block("norm"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = T.exp(A[vi, vj] - M[vi]) / S[vi]


def schedule_softmax(threads=128, scope="shared"):
    """One block per row: the max and the sum reduce across `threads` threads of threadIdx.x,
    their results live in `scope` memory ("shared" or "local"), and the normalisation uses the
    same threads."""
    sch = tir.Schedule(softmax)
    norm = sch.get_block("norm")
    i, j = sch.get_loops(norm)
    _, tj = sch.split(j, [None, threads])
    sch.bind(i, "blockIdx.x")
    sch.bind(tj, "threadIdx.x")
    for name in ("sum", "max"):
        block = sch.get_block(name)
        # The scope first: compute_at keeps one row per block only for memory private to it.
        sch.set_scope(block, 0, scope)
        sch.compute_at(block, i)
        _, k = sch.get_loops(block)
        _, tk = sch.split(k, [None, threads])
        sch.bind(tk, "threadIdx.x")
    return sch.mod


@T.prim_func
def guarded_row_sum(A: T.Buffer((10, 40), "float32"), B: T.Buffer((10,), "float32")):
    """Written with its bindings: 3 rows per block on threadIdx.y (the last block is partial),
    the 40 columns on threadIdx.x, no in-thread part."""
    for i_0 in T.thread_binding(4, thread="blockIdx.x"):
        for i_1 in T.thread_binding(3, thread="threadIdx.y"):
            for k in T.thread_binding(40, thread="threadIdx.x"):
                with T.block("B"):
                    vi = T.axis.spatial(10, i_0 * 3 + i_1)
                    vk = T.axis.reduce(40, k)
                    T.where(i_0 * 3 + i_1 < 10)
                    with T.init():
                        B[vi] = T.float32(0)
                    B[vi] = B[vi] + A[vi, vk]


@T.prim_func
def row_sum_dynamic(a: T.handle, b: T.handle):
    n = T.int32()
    m = T.int32()
    A = T.match_buffer(a, (n, m), "float32")
    B = T.match_buffer(b, (n,), "float32")
    for i, k in T.grid(n, m):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]


@T.prim_func
def subtract_row_max(A: T.Buffer((64, 256), "float32"), B: T.Buffer((64, 256), "float32")):
    """Written with its bindings: the row max lives in a "global" intermediate M that the kernel
    keeps per thread, so every thread must write it."""
    M = T.alloc_buffer((64,))
    for i in T.thread_binding(64, thread="blockIdx.x"):
        for k_0 in range(2):
            for k_1 in T.thread_binding(128, thread="threadIdx.x"):
                with T.block("max"):
                    vi = T.axis.spatial(64, i)
                    vk = T.axis.reduce(256, k_0 * 128 + k_1)
                    with T.init():
                        M[vi] = T.min_value("float32")
                    M[vi] = T.max(M[vi], A[vi, vk])
        for j_0 in range(2):
            for j_1 in T.thread_binding(128, thread="threadIdx.x"):
                with T.block("B"):
                    vi = T.axis.spatial(64, i)
                    vj = T.axis.spatial(256, j_0 * 128 + j_1)
                    B[vi, vj] = A[vi, vj] - M[vi]
