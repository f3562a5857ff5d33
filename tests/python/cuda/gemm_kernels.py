"""A register-tiled, shared-memory GEMM for CUDA, scheduled as in Apache TVM's GPU tutorials.

Each thread block computes a block_m x block_n tile of C with (block_m / tile_m) x
(block_n / tile_n) threads; each thread keeps a tile_m x tile_n tile of C in registers (a "local"
accumulator). k is walked in steps of k_tile: for each step all threads copy the A and B tiles
into shared memory together (vec elements per thread and copy, vectorized when possible),
synchronize, and multiply-accumulate out of shared memory.
"""

from tessera import tir
from tessera.script import tir as T


def gemm_func(n, m, k, dtype="float32", acc="float32"):
    """C[n, m] = A[n, k] @ B[k, m], inputs of `dtype` accumulated in `acc`."""

    @T.prim_func
    def gemm(A: T.Buffer((n, k), dtype), B: T.Buffer((k, m), dtype), C: T.Buffer((n, m), acc)):
        for i, j, kk in T.grid(n, m, k):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, kk])
                with T.init():
                    C[vi, vj] = T.cast(0, acc)
                # (the inner cast, a no-op, names dtype in the body so that the parser sees it)
                C[vi, vj] = C[vi, vj] + T.cast(T.cast(A[vi, vk], dtype), acc) * T.cast(
                    B[vk, vj], acc)

    return gemm


def schedule_gemm(n, m, k, dtype="float32", acc="float32", block_m=64, block_n=64, tile_m=4,
                  tile_n=4, k_tile=16, vec=4, shared_scope="shared"):
    """The scheduled IRModule of gemm_func(n, m, k, dtype, acc) for target="cuda". The A and B
    tiles live in `shared_scope`: "shared" (static) or "shared.dyn" (dynamic shared memory,
    sized at launch)."""
    if block_m % tile_m or block_n % tile_n:
        raise ValueError(f"the register tile {tile_m}x{tile_n} must divide the block tile "
                         f"{block_m}x{block_n}")
    if n % block_m or m % block_n or k % k_tile:
        # Splits that do not divide leave T.where predicates, which tir.Schedule.reorder rejects.
        raise ValueError(f"schedule_gemm needs n % {block_m}, m % {block_n} and k % {k_tile} to be "
                         f"0 (got n={n}, m={m}, k={k})")
    ty, tx = block_m // tile_m, block_n // tile_n
    for rows, cols in ((block_m, k_tile), (k_tile, block_n)):
        if (rows * cols) % (ty * tx * vec):
            raise ValueError(f"the {rows}x{cols} shared tile is not a whole number of "
                             f"{ty * tx} threads x {vec} elements (choose another vec or k_tile)")
    sch = tir.Schedule(gemm_func(n, m, k, dtype, acc))
    c = sch.get_block("C")
    i, j, kk = sch.get_loops(c)
    bi, ti, ii = sch.split(i, [None, ty, tile_m])
    bj, tj, jj = sch.split(j, [None, tx, tile_n])
    ko, ki = sch.split(kk, [None, k_tile])
    sch.reorder(bi, bj, ti, tj, ko, ki, ii, jj)
    sch.bind(bi, "blockIdx.y")
    sch.bind(bj, "blockIdx.x")
    sch.bind(ti, "threadIdx.y")
    sch.bind(tj, "threadIdx.x")
    # The accumulator tile in registers, written back to C after the k loop.
    c_local = sch.cache_write(c, 0, "local")
    sch.reverse_compute_at(c_local, tj)
    out_vec = 4 if tile_n % 4 == 0 else 2 if tile_n % 2 == 0 else 1
    if vec > 1 and out_vec > 1:  # C is written back out_vec elements at a time
        _, wj = sch.get_loops(c_local)[-2:]
        sch.vectorize(sch.split(wj, [None, out_vec])[1])
    # A and B tiles in shared memory, fetched by all threads of the block together.
    for name in ("A", "B"):
        reads = [r.buffer.name for r in sch.get(c).reads]
        cache = sch.cache_read(c, reads.index(name), shared_scope)
        sch.compute_at(cache, ko)
        fused = sch.fuse(*sch.get_loops(cache)[-2:])
        _, cy, cx, cv = sch.split(fused, [None, ty, tx, vec])
        sch.bind(cy, "threadIdx.y")
        sch.bind(cx, "threadIdx.x")
        if vec > 1:
            sch.vectorize(cv)
    init = sch.decompose_reduction(c, ko)
    # Every access to the accumulator has constant indices once the register loops are
    # unrolled, so that it stays in registers.
    for loop in [ki, ii, jj, *sch.get_loops(init)[-2:]]:
        sch.unroll(loop)
    write_back = sch.get_loops(c_local)[4:]  # under blockIdx.y/x, threadIdx.y/x
    for loop in write_back if out_vec == 1 or vec == 1 else write_back[:-1]:
        sch.unroll(loop)
    return sch.mod
