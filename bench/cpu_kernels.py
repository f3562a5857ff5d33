"""The CPU kernels of the benchmark suite: TensorIR functions and their tir.Schedule schedules.

Every ``*_func`` returns an unscheduled PrimFunc; every ``schedule_*`` returns the scheduled
IRModule ready for ``ts.build``. ``parallel=False`` leaves every loop serial (one thread).
"""

from tessera.script import tir as T
from tessera.tir import Schedule

# Register tile of the GEMM micro-kernel: MR rows of C by NR columns, NR = 2 vectors of 16 fp32
# (AVX-512); 8 x 2 accumulators leave room for the B vectors and the broadcast A value.
MR, NR, VEC = 8, 32, 16


def matmul_func(n, m=None, k=None):
    m = m or n
    k = k or n

    @T.prim_func
    def matmul(A: T.Buffer((n, k), "float32"), B: T.Buffer((k, m), "float32"),
               C: T.Buffer((n, m), "float32")):
        for i, j, r in T.grid(n, m, k):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, r])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]

    return matmul


def _register_tile(sch, block, i, j, k, parallel_loop=None):
    """The shared GEMM micro-kernel: C tile in registers (cache_write "local"), the MR x NR tile
    unrolled, the inner NR split into native vectors, the reduction decomposed."""
    cc = sch.cache_write(block, 0, "local")
    io, ii = sch.split(i, [None, MR])
    jo, ji = sch.split(j, [None, NR])
    ji0, ji1 = sch.split(ji, [None, VEC])
    sch.reorder(jo, io, k, ii, ji0, ji1)
    sch.reverse_compute_at(cc, io)
    sch.vectorize(ji1)
    sch.unroll(ji0)
    sch.unroll(ii)
    sch.vectorize(sch.get_loops(cc)[-1])
    return cc, jo, io


def schedule_matmul(n, parallel=True, pack=True):
    sch = Schedule(matmul_func(n))
    block = sch.get_block("C")
    if pack:
        # B packed into NR-wide column panels, each contiguous along k: B_p[j // NR, k, j % NR].
        packed = sch.cache_read(block, 1, "global")
        sch.transform_layout(packed, ("write", 0), lambda k, j: (j // NR, k, j % NR))
    i, j, k = sch.get_loops(block)
    _, jo, io = _register_tile(sch, block, i, j, k)
    if parallel:
        sch.parallel(jo)
    if pack:
        pk, pj = sch.get_loops(packed)
        pjo, pji = sch.split(pj, [None, NR])
        sch.reorder(pjo, pk, pji)
        if parallel:
            sch.parallel(pjo)
        sch.vectorize(pji)
    sch.decompose_reduction(block, sch.get_loops(block)[2])
    return sch.mod


def batch_matmul_func(b, h, n, k, m):
    @T.prim_func
    def batch_matmul(A: T.Buffer((b, h, n, k), "float32"), B: T.Buffer((b, h, k, m), "float32"),
                     C: T.Buffer((b, h, n, m), "float32")):
        for p, q, i, j, r in T.grid(b, h, n, m, k):
            with T.block("C"):
                vp, vq, vi, vj, vk = T.axis.remap("SSSSR", [p, q, i, j, r])
                with T.init():
                    C[vp, vq, vi, vj] = T.float32(0)
                C[vp, vq, vi, vj] = C[vp, vq, vi, vj] + A[vp, vq, vi, vk] * B[vp, vq, vk, vj]

    return batch_matmul


def schedule_batch_matmul(shape_a, shape_b, parallel=True):
    b, h, n, k = shape_a
    m = shape_b[-1]
    sch = Schedule(batch_matmul_func(b, h, n, k, m))
    block = sch.get_block("C")
    p, q, i, j, r = sch.get_loops(block)
    _register_tile(sch, block, i, j, r)
    # The batch loop alone is parallel: with p and q fused, the allocation planner cannot tell
    # the register tiles of different fused iterations apart (p_q // 12, p_q % 12) and keeps
    # C_local whole at the root.
    if parallel:
        sch.parallel(p)
    sch.decompose_reduction(block, sch.get_loops(block)[4])
    return sch.mod


def fma_func(n):
    @T.prim_func
    def fma(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32"),
            C: T.Buffer((n,), "float32"), D: T.Buffer((n,), "float32")):
        for i in range(n):
            with T.block("D"):
                vi = T.axis.spatial(n, i)
                D[vi] = A[vi] * B[vi] + C[vi]

    return fma


def schedule_fma(n, parallel=True, chunk=4096, nontemporal=True):
    """Chunks of ``chunk`` elements across threads, native vectors inside; the result streams
    to memory past the caches (``pragma_nontemporal``) since nothing reads it back soon."""
    sch = Schedule(fma_func(n))
    block = sch.get_block("D")
    (i,) = sch.get_loops(block)
    io, ii, iv = sch.split(i, [None, chunk // VEC, VEC])
    if parallel:
        sch.parallel(io)
    sch.vectorize(iv)
    if nontemporal:
        sch.annotate(ii, "pragma_nontemporal", 1)
    return sch.mod


def softmax_func(rows, cols):
    """Row softmax with the exponentials computed once: E = exp(A - max), S = E * (1 / sum E)."""

    @T.prim_func
    def softmax(A: T.Buffer((rows, cols), "float32"), S: T.Buffer((rows, cols), "float32")):
        row_max = T.alloc_buffer((rows,), "float32")
        row_sum = T.alloc_buffer((rows,), "float32")
        E = T.alloc_buffer((rows, cols), "float32")
        for i, j in T.grid(rows, cols):
            with T.block("max"):
                vi, vj = T.axis.remap("SR", [i, j])
                with T.init():
                    row_max[vi] = T.min_value("float32")
                row_max[vi] = T.max(row_max[vi], A[vi, vj])
        for i, j in T.grid(rows, cols):
            with T.block("exp"):
                vi, vj = T.axis.remap("SS", [i, j])
                E[vi, vj] = T.exp(A[vi, vj] - row_max[vi])
        for i, j in T.grid(rows, cols):
            with T.block("sum"):
                vi, vj = T.axis.remap("SR", [i, j])
                with T.init():
                    row_sum[vi] = T.float32(0)
                row_sum[vi] = row_sum[vi] + E[vi, vj]
        for i, j in T.grid(rows, cols):
            with T.block("out"):
                vi, vj = T.axis.remap("SS", [i, j])
                S[vi, vj] = E[vi, vj] * (T.float32(1) / row_sum[vi])

    return softmax


def schedule_softmax(rows, cols, parallel=True, fast_exp=True):
    """One row per iteration of the outer loop (parallel); the row's exponentials in a
    row-sized buffer; the elementwise passes vectorized (the reductions stay serial)."""
    sch = Schedule(softmax_func(rows, cols))
    out = sch.get_block("out")
    i, j = sch.get_loops(out)
    if parallel:
        sch.parallel(i)
    for name in ("sum", "exp", "max"):
        sch.compute_at(sch.get_block(name), i)
    jo, ji = sch.split(j, [None, VEC])
    sch.vectorize(ji)
    ej = sch.get_loops(sch.get_block("exp"))[-1]
    ejo, eji = sch.split(ej, [None, VEC])
    sch.vectorize(eji)
    if fast_exp:
        # Vector exp by polynomial (CodeGenHost, "pragma_fast_math") instead of expf per lane.
        sch.annotate(i, "pragma_fast_math", 1)
    return sch.mod


def conv2d_nchwc_func(n, ic_o, h, w, ic_i, oc_o, oc_i):
    """3x3 convolution, stride 1, no padding: data NCHW[ic_i]c, kernel OIHW[ic_i]i[oc_i]o."""
    @T.prim_func
    def conv2d(X: T.Buffer((n, ic_o, h, w, ic_i), "float32"),
               W: T.Buffer((oc_o, ic_o, 3, 3, ic_i, oc_i), "float32"),
               Y: T.Buffer((n, oc_o, h - 2, w - 2, oc_i), "float32")):
        for b, oco, y, x, oci, ico, ky, kx, ici in T.grid(n, oc_o, h - 2, w - 2, oc_i, ic_o, 3, 3,
                                                                ic_i):
            with T.block("Y"):
                vb, vo, vy, vx, vc, vi, vky, vkx, vii = T.axis.remap(
                    "SSSSSRRRR", [b, oco, y, x, oci, ico, ky, kx, ici])
                with T.init():
                    Y[vb, vo, vy, vx, vc] = T.float32(0)
                Y[vb, vo, vy, vx, vc] = Y[vb, vo, vy, vx, vc] + (
                    X[vb, vi, vy + vky, vx + vkx, vii] * W[vo, vi, vky, vkx, vii, vc])

    return conv2d


def schedule_conv2d_nchwc(shape, parallel=True, xt=8):
    """Register tile: ``xt`` output pixels of a row by the oc_i vector lanes."""
    sch = Schedule(conv2d_nchwc_func(*shape))
    block = sch.get_block("Y")
    cc = sch.cache_write(block, 0, "local")
    b, oco, y, x, oci, ico, ky, kx, ici = sch.get_loops(block)
    xo, xi = sch.split(x, [None, xt])
    # y outermost: the parallel loop encloses b and oco, whose values the C compiler then knows
    # inside the OpenMP region (the register tile's offsets stay constants).
    sch.reorder(y, b, oco, xo, ico, ky, kx, ici, xi, oci)
    sch.reverse_compute_at(cc, xo)
    sch.vectorize(oci)
    sch.unroll(xi)
    sch.vectorize(sch.get_loops(cc)[-1])
    # The output rows are parallel; fusing b, oco and y instead would keep Y_local whole at the
    # root (the allocation planner does not see through the fused loop's div/mod).
    if parallel:
        sch.parallel(y)
    sch.decompose_reduction(block, ico)
    return sch.mod
