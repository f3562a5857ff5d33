"""Tensor-core GEMM schedules with the names of ``tvm.testing.tir``: ``mma_schedule`` (CUDA
``ldmatrix`` + ``mma.sync``, 32-lane warps) and ``mfma_schedule`` (AMD matrix cores, 64-lane
wavefronts) tensorize the block "C" of a matmul workload (C accumulates the products of A's
rows and B's columns; B is read as ``B[j, k]`` when ``b_transposed``) with the intrinsics they are given and return the schedule.

The plan, for a 16x16xk_inner tensor-core tile:

1. tile i, j and k by (16, 16, k_inner) and blockize the inner tile (the block the mma
   intrinsic replaces);
2. split the outer i, j, k by ``i_factors``, ``j_factors``, ``k_factors`` into
   blockIdx.x (i0*j0), blockIdx.y (i1*j1), threadIdx.y (j2*i2), k0, k1, i3, j3, k2, i4, j4;
3. stage A and B through ``shared_scope`` memory at k0 (copied by all threads of the block,
   vectorized) and through ``warp`` fragments at k1; accumulate C in a ``warp`` fragment
   written back under threadIdx.y;
4. lay the fragments out with ``index_map_A/B/C`` and tensorize the loads, the mma, the
   accumulator initialization (from ``decompose_reduction``) and the store.

>>> sch = mma_schedule(te.create_prim_func(matmul), 16, "float16", False, [1, 32, 2, 4, 1],
...                    [1, 16, 2, 4, 1], [128, 2, 1], index_map_A, index_map_B, index_map_C,
...                    LDMATRIX_f16_A_INTRIN, LDMATRIX_f16_B_INTRIN, MMA_f16f16f32_INTRIN,
...                    MMA_fill_16x16_f32_INTRIN, MMA_store_16x16_f32_global_INTRIN)
"""

from ..ir import IRModule
from ..tir import Schedule


def _tensor_core_schedule(workload, k_inner, in_dtype, b_transposed, i_factors, j_factors, k_factors,
                          index_maps, intrinsics, shared_scope, warp_size, pad_shared_rows):
    """The schedule of the module docstring. ``intrinsics``: (load A, load B, mma, fill, store);
    ``pad_shared_rows``: offset the rows of the shared copies (``storage_align``) to avoid bank
    conflicts of ldmatrix."""
    load_a, load_b, mma, fill, store = intrinsics
    map_a, map_b, map_c = index_maps
    sch = Schedule(IRModule({"main": workload}))

    # 1. The tensor-core tile, blockized: `outer` iterates over tiles, "C" stays the inner block.
    update = sch.get_block("C")
    i, j, k = sch.get_loops(update)
    i, i_tile = sch.split(i, factors=[None, 16])
    j, j_tile = sch.split(j, factors=[None, 16])
    k, k_tile = sch.split(k, factors=[None, k_inner])
    sch.reorder(i, j, k, i_tile, j_tile, k_tile)
    outer = sch.blockize(i_tile)

    # 2. The grid, the threads and the reduction stages.
    i0, i1, i2, i3, i4 = sch.split(i, factors=i_factors)
    j0, j1, j2, j3, j4 = sch.split(j, factors=j_factors)
    k0, k1, k2 = sch.split(k, k_factors)
    sch.reorder(i0, j0, i1, j1, j2, i2, k0, k1, i3, j3, k2, i4, j4)
    block_x = sch.fuse(i0, j0)
    block_y = sch.fuse(i1, j1)
    thread_y = sch.fuse(j2, i2)
    sch.bind(block_x, "blockIdx.x")
    sch.bind(block_y, "blockIdx.y")
    sch.bind(thread_y, "threadIdx.y")
    threads_y = i_factors[2] * j_factors[2]

    # 3. Shared-memory copies of A and B, then warp fragments; the C fragment.
    for operand in (0, 1):
        copy = sch.cache_read(outer, operand, shared_scope)
        sch.compute_at(copy, k0)
        lanes = 16 if in_dtype == "int8" else 8
        fused = sch.fuse(*sch.get_loops(copy)[-2:])
        _, ty, tx, vec = sch.split(fused, factors=[None, threads_y, warp_size, lanes])
        sch.bind(tx, "threadIdx.x")
        sch.bind(ty, "threadIdx.y")
        sch.vectorize(vec)
        if pad_shared_rows:
            sch.storage_align(copy, 0, axis=-2, factor=32, offset=8 if in_dtype == "float16" else 16)

    frag_a = sch.cache_read(outer, 0, "warp")
    frag_b = sch.cache_read(outer, 1, "warp")
    sch.compute_at(frag_a, k1)
    sch.compute_at(frag_b, k1)
    frag_c = sch.cache_write(outer, 0, "warp")
    sch.reverse_compute_at(frag_c, thread_y)
    ci, cj = sch.get_loops(frag_c)[-2:]
    ci_outer, ci = sch.split(ci, factors=[None, 16])
    cj_outer, cj = sch.split(cj, factors=[None, 16])
    sch.reorder(ci_outer, cj_outer, ci, cj)

    sch.decompose_reduction(outer, sch.get_loops(outer)[3])
    init = sch.get_block("C_init")

    def tile(block, rows, cols):
        """Split the last two loops of ``block`` into (rows, cols) tiles; the inner row loop."""
        r, c = sch.get_loops(block)[-2:]
        r_outer, r_inner = sch.split(r, factors=[None, rows])
        c_outer, c_inner = sch.split(c, factors=[None, cols])
        sch.reorder(r_outer, c_outer, r_inner, c_inner)
        return r_inner

    tile_a = tile(frag_a, 16, k_inner)
    tile_b = tile(frag_b, 16, k_inner) if b_transposed else tile(frag_b, k_inner, 16)

    # 4. Fragment layouts and tensorization.
    sch.transform_layout(frag_a, ("write", 0), map_a)
    sch.transform_layout(frag_b, ("write", 0), map_b)
    sch.transform_layout(frag_c, ("read", 0), map_c)
    sch.tensorize(tile_a, load_a)
    sch.tensorize(tile_b, load_b)
    sch.tensorize(sch.get_loops(update)[-3], mma)
    sch.tensorize(sch.get_loops(init)[-2], fill)
    sch.tensorize(sch.get_loops(frag_c)[-2], store)
    return sch


def mma_schedule(workload, k_inner, in_dtype, b_transposed, i_factors, j_factors, k_factors, index_map_A,
                 index_map_B, index_map_C, ldmatrix_a_intrin, ldmatrix_b_intrin, mma_intrin, mma_fill_intrin,
                 mma_store_intrin, shared_scope="shared"):
    """The GEMM ``workload`` tensorized with CUDA ldmatrix/mma intrinsics (see the module)."""
    return _tensor_core_schedule(
        workload, k_inner, in_dtype, b_transposed, i_factors, j_factors, k_factors,
        (index_map_A, index_map_B, index_map_C),
        (ldmatrix_a_intrin, ldmatrix_b_intrin, mma_intrin, mma_fill_intrin, mma_store_intrin),
        shared_scope, warp_size=32, pad_shared_rows=True)


def mfma_schedule(workload, k_inner, in_dtype, b_transposed, i_factors, j_factors, k_factors, index_map_A,
                  index_map_B, index_map_C, ldmatrix_a_intrin, ldmatrix_b_intrin, mfma_intrin, mfma_fill_intrin,
                  mfma_store_intrin, shared_scope="shared"):
    """The GEMM ``workload`` tensorized with AMD MFMA intrinsics (see the module)."""
    return _tensor_core_schedule(
        workload, k_inner, in_dtype, b_transposed, i_factors, j_factors, k_factors,
        (index_map_A, index_map_B, index_map_C),
        (ldmatrix_a_intrin, ldmatrix_b_intrin, mfma_intrin, mfma_fill_intrin, mfma_store_intrin),
        shared_scope, warp_size=64, pad_shared_rows=False)


__all__ = ["mfma_schedule", "mma_schedule"]
