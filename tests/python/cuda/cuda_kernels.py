"""The programs of the CUDA tests, scheduled for the GPU as in the TensorIR tutorial."""

from tessera import tir
from tessera.script import tir as T


@T.prim_func
def vector_add(A: T.Buffer((1024,), "float32"), B: T.Buffer((1024,), "float32"),
               C: T.Buffer((1024,), "float32")):
    for i in range(1024):
        with T.block("C"):
            vi = T.axis.spatial(1024, i)
            C[vi] = A[vi] + B[vi]


@T.prim_func
def vector_add_fp16(A: T.Buffer((1024,), "float16"), B: T.Buffer((1024,), "float16"),
                    C: T.Buffer((1024,), "float16")):
    for i in range(1024):
        with T.block("C"):
            vi = T.axis.spatial(1024, i)
            C[vi] = A[vi] + B[vi] * T.float16(2)


@T.prim_func
def math_fp32(A: T.Buffer((256,), "float32"), B: T.Buffer((256,), "float32")):
    for i in range(256):
        with T.block("B"):
            vi = T.axis.spatial(256, i)
            B[vi] = T.exp(A[vi]) + T.sqrt(A[vi]) + T.tanh(A[vi]) + T.rsqrt(A[vi]) + T.log(A[vi])


@T.prim_func
def math_fp16(A: T.Buffer((256,), "float16"), B: T.Buffer((256,), "float16")):
    for i in range(256):
        with T.block("B"):
            vi = T.axis.spatial(256, i)
            B[vi] = T.exp(A[vi]) + T.sqrt(A[vi]) + T.tanh(A[vi])


@T.prim_func
def row_sum(A: T.Buffer((256, 128), "float32"), B: T.Buffer((256,), "float32")):
    for i, k in T.grid(256, 128):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]


@T.prim_func
def softmax(A: T.Buffer((256, 128), "float32"), B: T.Buffer((256, 128), "float32")):
    M = T.alloc_buffer((256,))
    E = T.alloc_buffer((256, 128))
    S = T.alloc_buffer((256,))
    for i, k in T.grid(256, 128):
        with T.block("max"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                M[vi] = T.float32(-3.4e38)
            M[vi] = T.max(M[vi], A[vi, vk])
    for i, j in T.grid(256, 128):
        with T.block("exp"):
            vi, vj = T.axis.remap("SS", [i, j])
            E[vi, vj] = T.exp(A[vi, vj] - M[vi])
    for i, k in T.grid(256, 128):
        with T.block("sum"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                S[vi] = T.float32(0)
            S[vi] = S[vi] + E[vi, vk]
    for i, j in T.grid(256, 128):
        with T.block("norm"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = E[vi, vj] / S[vi]


def matmul_func(n, dtype="float32", acc="float32"):
    """C = A @ B for n x n matrices of `dtype`, accumulated in `acc`."""

    @T.prim_func
    def matmul(A: T.Buffer((n, n), dtype), B: T.Buffer((n, n), dtype), C: T.Buffer((n, n), acc)):
        for i, j, k in T.grid(n, n, n):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.cast(0, acc)
                C[vi, vj] = C[vi, vj] + T.cast(T.cast(A[vi, vk], dtype), acc) * T.cast(B[vk, vj], acc)

    return matmul


def bind_1d(func, block="C", threads=128):
    """The tutorial's GPU step: split the loop, bind blockIdx.x / threadIdx.x."""
    sch = tir.Schedule(func)
    (i,) = sch.get_loops(sch.get_block(block))[:1]
    bx, tx = sch.split(i, [None, threads])
    sch.bind(bx, "blockIdx.x")
    sch.bind(tx, "threadIdx.x")
    return sch.mod


def schedule_row_sum(threads=64):
    sch = tir.Schedule(row_sum)
    i, _ = sch.get_loops(sch.get_block("B"))
    bx, tx = sch.split(i, [None, threads])
    sch.bind(bx, "blockIdx.x")
    sch.bind(tx, "threadIdx.x")
    return sch.mod


def schedule_softmax(threads=64):
    """One thread per row; the row's intermediates live in registers ("local")."""
    sch = tir.Schedule(softmax)
    norm = sch.get_block("norm")
    i, _ = sch.get_loops(norm)
    bx, tx = sch.split(i, [None, threads])
    sch.bind(bx, "blockIdx.x")
    sch.bind(tx, "threadIdx.x")
    for name in ("sum", "exp", "max"):
        block = sch.get_block(name)
        sch.compute_at(block, tx)
        sch.set_scope(block, 0, "local")
    return sch.mod


def schedule_tiled_matmul(n, tile=16, dtype="float32", acc="float32"):
    """Shared-memory tiling: each block of tile x tile threads computes a tile of C, staging
    tiles of A and B in shared memory for each step of k."""
    sch = tir.Schedule(matmul_func(n, dtype, acc))
    c = sch.get_block("C")
    i, j, k = sch.get_loops(c)
    bi, ti = sch.split(i, [None, tile])
    bj, tj = sch.split(j, [None, tile])
    ko, ki = sch.split(k, [None, tile])
    sch.reorder(bi, bj, ko, ti, tj, ki)
    sch.bind(bi, "blockIdx.y")
    sch.bind(bj, "blockIdx.x")
    sch.bind(ti, "threadIdx.y")
    sch.bind(tj, "threadIdx.x")
    for index in (0, 1):  # A and B (a reduction block does not list C among its reads)
        cache = sch.cache_read(c, index, "shared")
        sch.compute_at(cache, ko)
        y, x = sch.get_loops(cache)[-2:]
        sch.bind(y, "threadIdx.y")
        sch.bind(x, "threadIdx.x")
    return sch.mod


@T.prim_func
def block_sum(A: T.Buffer((256,), "float32"), B: T.Buffer((2,), "float32")):
    # A tree reduction in shared memory, one block per 128 elements, written without blocks.
    for bx in T.thread_binding(2, thread="blockIdx.x"):
        ptr = T.allocate([128], "float32", "shared")
        S = T.decl_buffer((128,), "float32", data=ptr, scope="shared")
        for tx in T.thread_binding(128, thread="threadIdx.x"):
            S[tx] = A[bx * 128 + tx]
        for s in range(7):
            for tx in T.thread_binding(128, thread="threadIdx.x"):
                if tx < (64 >> s):
                    S[tx] = S[tx] + S[tx + (64 >> s)]
        for tx in T.thread_binding(1, thread="threadIdx.x"):
            B[bx] = S[0]


@T.prim_func
def scale_dynamic(a: T.handle, b: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n,), "float32")
    B = T.match_buffer(b, (n,), "float32")
    for i in range(n):
        with T.block("B"):
            vi = T.axis.spatial(n, i)
            B[vi] = A[vi] * T.float32(2)


@T.prim_func
def launch_threads(A: T.Buffer((256,), "float32"), B: T.Buffer((256,), "float32")):
    # TVM's low-level spelling: T.env_thread + T.launch_thread instead of bound loops.
    bx = T.env_thread("blockIdx.x")
    tx = T.env_thread("threadIdx.x")
    with T.launch_thread(bx, 4):
        with T.launch_thread(tx, 64):
            B[bx * 64 + tx] = A[bx * 64 + tx] + T.float32(1)
