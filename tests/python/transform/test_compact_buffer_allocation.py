"""tir.CompactBufferAllocation: block allocations shrink to the region their body touches."""

import numpy as np

import tessera as ts
from tessera.script import tir as T


def test_tile_buffer_shrinks_to_the_tile(golden):
    @T.prim_func
    def before(A: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
        for io in T.serial(4):
            with T.block("tile"):
                T.reads(A[io * 16:io * 16 + 16, 0:64])
                T.writes(C[io * 16:io * 16 + 16, 0:64])
                Y = T.alloc_buffer((64, 64))
                for ii, j in T.grid(16, 64):
                    with T.block("Y"):
                        T.reads(A[io * 16 + ii, j])
                        T.writes(Y[io * 16 + ii, j])
                        Y[io * 16 + ii, j] = A[io * 16 + ii, j] + T.float32(1)
                for ii, j in T.grid(16, 64):
                    with T.block("C"):
                        T.reads(Y[io * 16 + ii, j])
                        T.writes(C[io * 16 + ii, j])
                        C[io * 16 + ii, j] = Y[io * 16 + ii, j] * T.float32(2)

    @T.prim_func
    def expected(A: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
        for io in T.serial(4):
            with T.block("tile"):
                T.reads(A[io * 16:io * 16 + 16, 0:64])
                T.writes(C[io * 16:io * 16 + 16, 0:64])
                Y = T.alloc_buffer((16, 64))
                for ii, j in T.grid(16, 64):
                    with T.block("Y"):
                        T.reads(A[io * 16 + ii, j])
                        T.writes(Y[ii, j])
                        Y[ii, j] = A[io * 16 + ii, j] + T.float32(1)
                for ii, j in T.grid(16, 64):
                    with T.block("C"):
                        T.reads(Y[ii, j])
                        T.writes(C[io * 16 + ii, j])
                        C[io * 16 + ii, j] = Y[ii, j] * T.float32(2)

    golden("CompactBufferAllocation", before, expected)


def test_stencil_window_includes_every_offset(golden):
    @T.prim_func
    def before(A: T.Buffer((32,), "float32"), B: T.Buffer((30,), "float32")):
        for io in T.serial(3):
            with T.block("tile"):
                T.reads(A[io * 10:io * 10 + 12])
                T.writes(B[io * 10:io * 10 + 10])
                W = T.alloc_buffer((32,))
                for ii in T.serial(12):
                    W[io * 10 + ii] = A[io * 10 + ii]
                for ii in T.serial(10):
                    B[io * 10 + ii] = W[io * 10 + ii] + W[io * 10 + ii + 2]

    @T.prim_func
    def expected(A: T.Buffer((32,), "float32"), B: T.Buffer((30,), "float32")):
        for io in T.serial(3):
            with T.block("tile"):
                T.reads(A[io * 10:io * 10 + 12])
                T.writes(B[io * 10:io * 10 + 10])
                W = T.alloc_buffer((12,))
                for ii in T.serial(12):
                    W[ii] = A[io * 10 + ii]
                for ii in T.serial(10):
                    B[io * 10 + ii] = W[ii] + W[ii + 2]

    golden("CompactBufferAllocation", before, expected)


def test_whole_buffer_use_is_unchanged(unchanged):
    @T.prim_func
    def func(A: T.Buffer((16,), "float32")):
        with T.block("root"):
            T.reads(A[0:16])
            T.writes(A[0:16])
            Y = T.alloc_buffer((16,))
            for i in T.serial(16):
                Y[i] = A[i]
            for i in T.serial(16):
                A[i] = Y[15 - i]

    unchanged("CompactBufferAllocation", func)


def test_shared_buffer_under_thread_loops_covers_the_thread_block(golden):
    # S is "shared": one copy for the 16 threads of a block, which read each other's rows, so it
    # is sized over the threadIdx loop around its block; L is "local" (one per thread).
    @T.prim_func
    def before(A: T.Buffer((64, 32), "float32"), C: T.Buffer((64, 32), "float32")):
        for bx in T.thread_binding(4, thread="blockIdx.x"):
            for tx in T.thread_binding(16, thread="threadIdx.x"):
                for ko in T.serial(4):
                    with T.block("tile"):
                        T.reads(A[bx * 16 + tx, ko * 8:ko * 8 + 8])
                        T.writes(C[bx * 16 + tx, ko * 8:ko * 8 + 8])
                        S = T.alloc_buffer((64, 32), scope="shared")
                        L = T.alloc_buffer((64, 32), scope="local")
                        for c in T.serial(8):
                            S[bx * 16 + tx, ko * 8 + c] = A[bx * 16 + tx, ko * 8 + c]
                        for c in T.serial(8):
                            L[bx * 16 + tx, ko * 8 + c] = S[bx * 16 + (tx + 1) % 16, ko * 8 + c]
                        for c in T.serial(8):
                            C[bx * 16 + tx, ko * 8 + c] = L[bx * 16 + tx, ko * 8 + c]

    @T.prim_func
    def expected(A: T.Buffer((64, 32), "float32"), C: T.Buffer((64, 32), "float32")):
        for bx in T.thread_binding(4, thread="blockIdx.x"):
            for tx in T.thread_binding(16, thread="threadIdx.x"):
                for ko in T.serial(4):
                    with T.block("tile"):
                        T.reads(A[bx * 16 + tx, ko * 8:ko * 8 + 8])
                        T.writes(C[bx * 16 + tx, ko * 8:ko * 8 + 8])
                        S = T.alloc_buffer((16, 8), scope="shared")
                        L = T.alloc_buffer((1, 8), scope="local")
                        for c in T.serial(8):
                            S[tx, c] = A[bx * 16 + tx, ko * 8 + c]
                        for c in T.serial(8):
                            L[0, c] = S[(tx + 1) % 16, c]
                        for c in T.serial(8):
                            C[bx * 16 + tx, ko * 8 + c] = L[0, c]

    golden("CompactBufferAllocation", before, expected)


def test_local_buffer_allocated_outside_thread_loops_is_per_thread(golden):
    # L is allocated above the threadIdx loop (as for the fragments of a warp): each thread has
    # its own, so it is not sized over the threads.
    @T.prim_func
    def before(A: T.Buffer((64, 4), "float32"), C: T.Buffer((64, 4), "float32")):
        for bx in T.thread_binding(4, thread="blockIdx.x"):
            with T.block("kernel"):
                T.reads(A[bx * 16:bx * 16 + 16, 0:4])
                T.writes(C[bx * 16:bx * 16 + 16, 0:4])
                L = T.alloc_buffer((64, 4), scope="local")
                for tx in T.thread_binding(16, thread="threadIdx.x"):
                    for c in T.serial(4):
                        L[bx * 16 + tx, c] = A[bx * 16 + tx, c]
                    for c in T.serial(4):
                        C[bx * 16 + tx, c] = L[bx * 16 + tx, c]

    @T.prim_func
    def expected(A: T.Buffer((64, 4), "float32"), C: T.Buffer((64, 4), "float32")):
        for bx in T.thread_binding(4, thread="blockIdx.x"):
            with T.block("kernel"):
                T.reads(A[bx * 16:bx * 16 + 16, 0:4])
                T.writes(C[bx * 16:bx * 16 + 16, 0:4])
                L = T.alloc_buffer((1, 4), scope="local")
                for tx in T.thread_binding(16, thread="threadIdx.x"):
                    for c in T.serial(4):
                        L[0, c] = A[bx * 16 + tx, c]
                    for c in T.serial(4):
                        C[bx * 16 + tx, c] = L[0, c]

    golden("CompactBufferAllocation", before, expected)


def test_storage_align_pads_the_compacted_rows(golden):
    # storage_align(factor 32, offset 8) on the writer of S: rows of 32 halves get a stride of
    # 40 (against shared memory bank conflicts).
    @T.prim_func
    def before(A: T.Buffer((64, 64), "float16"), C: T.Buffer((64, 64), "float16")):
        for ko in T.serial(2):
            with T.block("tile"):
                T.reads(A[0:64, ko * 32:ko * 32 + 32])
                T.writes(C[0:64, ko * 32:ko * 32 + 32])
                S = T.alloc_buffer((64, 64), "float16", scope="shared")
                for i, k in T.grid(64, 32):
                    with T.block("S"):
                        T.reads(A[i, ko * 32 + k])
                        T.writes(S[i, ko * 32 + k])
                        T.block_attr({"buffer_dim_align": [[0, 0, 32, 8]]})
                        S[i, ko * 32 + k] = A[i, ko * 32 + k]
                for i, k in T.grid(64, 32):
                    C[i, ko * 32 + k] = S[i, ko * 32 + k]

    @T.prim_func
    def expected(A: T.Buffer((64, 64), "float16"), C: T.Buffer((64, 64), "float16")):
        for ko in T.serial(2):
            with T.block("tile"):
                T.reads(A[0:64, ko * 32:ko * 32 + 32])
                T.writes(C[0:64, ko * 32:ko * 32 + 32])
                S = T.alloc_buffer((64, 32), "float16", strides=(40, 1), scope="shared")
                for i, k in T.grid(64, 32):
                    with T.block("S"):
                        T.reads(A[i, ko * 32 + k])
                        T.writes(S[i, k])
                        T.block_attr({"buffer_dim_align": [[0, 0, 32, 8]]})
                        S[i, k] = A[i, ko * 32 + k]
                for i, k in T.grid(64, 32):
                    C[i, ko * 32 + k] = S[i, k]

    golden("CompactBufferAllocation", before, expected)


def test_strict_option_as_tvm_names_it():
    import tessera as ts
    from tessera.ir import assert_structural_equal
    from tessera.tir import transform as tt

    @T.prim_func
    def before(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
        for i in range(16):
            with T.block("outer"):
                vi = T.axis.spatial(16, i)
                B = T.alloc_buffer((16,), "float32")
                with T.block("b"):
                    B[vi] = A[vi] * T.float32(2)
                with T.block("c"):
                    C[vi] = B[vi]

    mod = ts.ir.IRModule.from_expr(before)
    assert_structural_equal(tt.CompactBufferAllocation(is_strict=True)(mod), tt.CompactBufferAllocation()(mod))
    assert "T.alloc_buffer((1,))" in tt.CompactBufferAllocation(is_strict=True)(mod).script()
    # Non-strict compaction shrinks the same way where the region fits the buffer.
    assert_structural_equal(tt.CompactBufferAllocation(is_strict=False)(mod),
                            tt.CompactBufferAllocation()(mod))


def test_non_strict_compaction_grows_to_a_padded_tile():
    import tessera as ts
    from tessera.ir import assert_structural_equal
    from tessera.tir import transform as tt

    # As TVM's padded-tile case: a tile of 8 elements in a buffer declared one element short.
    # Strict compaction never goes past the declared shape (the buffer stays whole); non-strict
    # gives it the region touched.
    @T.prim_func
    def before(A: T.Buffer((32,), "float32")):
        for t in range(4):
            with T.block(""):
                B = T.alloc_buffer((7,))
                for i in range(8):
                    B[i] = A[t * 8 + i]
                for i in range(8):
                    A[t * 8 + i] = B[i] * T.float32(2)

    @T.prim_func
    def grown(A: T.Buffer((32,), "float32")):
        for t in range(4):
            with T.block(""):
                B = T.alloc_buffer((8,))
                for i in range(8):
                    B[i] = A[t * 8 + i]
                for i in range(8):
                    A[t * 8 + i] = B[i] * T.float32(2)

    mod = ts.ir.IRModule({"main": before.with_attr("global_symbol", "main")})
    assert tt.CompactBufferAllocation()(mod).same_as(mod)
    assert_structural_equal(tt.CompactBufferAllocation(is_strict=False)(mod),
                            ts.ir.IRModule({"main": grown.with_attr("global_symbol", "main")}))


def test_allocation_outside_blocks_shrinks_with_its_declared_buffer(golden):
    @T.prim_func
    def before(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
        for i in range(16):
            B = T.decl_buffer((16, 16))
            for j in range(16):
                B[i, j] = A[i, j] + T.float32(1)
            for j in range(16):
                C[i, j] = B[i, j] * T.float32(2)

    @T.prim_func
    def expected(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
        for i in range(16):
            B = T.decl_buffer((1, 16))
            for j in range(16):
                B[0, j] = A[i, j] + T.float32(1)
            for j in range(16):
                C[i, j] = B[0, j] * T.float32(2)

    golden("CompactBufferAllocation", before, expected)


def test_aliased_allocation_is_unchanged(unchanged):
    # Two views of other types over one allocation: compacting one would cut the other's data.
    @T.prim_func
    def func():
        data = T.allocate([1024], "int8")
        A = T.decl_buffer([1024], "int8", data)
        B = T.decl_buffer([512], "float16", data)
        for i in range(10):
            A[i] = A[i] + T.int8(1)
        for i in range(10):
            B[i] = B[i] + T.float16(1)

    unchanged("CompactBufferAllocation", func)


def test_opaque_use_of_the_data_keeps_the_whole_buffer(unchanged):
    @T.prim_func
    def func(A: T.Buffer((16, 16), "float32")):
        for i in range(16):
            with T.block(""):
                B = T.alloc_buffer((16, 16))
                for j in range(16):
                    T.evaluate(T.call_extern("int32", "use", B.data))
                    B[i, j] = A[i, j]

    unchanged("CompactBufferAllocation", func)


def test_opaque_use_covers_the_region_its_block_declares(golden):
    @T.prim_func
    def before(A: T.Buffer((64,), "float32")):
        with T.block(""):
            B = T.alloc_buffer((64,))
            for i in range(8):
                with T.block(""):
                    T.reads(B[i * 2:i * 2 + 4])
                    T.writes(A[i])
                    T.evaluate(T.call_extern("int32", "use", B.data))
                    A[i] = B[i]

    @T.prim_func
    def expected(A: T.Buffer((64,), "float32")):
        with T.block(""):
            B = T.alloc_buffer((18,))
            for i in range(8):
                with T.block(""):
                    T.reads(B[i * 2:i * 2 + 4])
                    T.writes(A[i])
                    T.evaluate(T.call_extern("int32", "use", B.data))
                    A[i] = B[i]

    golden("CompactBufferAllocation", before, expected)


def test_let_bound_index_is_relaxed_through_its_value(golden):
    @T.prim_func
    def before(A: T.Buffer((64, 64), "float32")):
        with T.block(""):
            B = T.alloc_buffer((64, 64))
            for k in range(64):
                x: T.int32 = k // 8
                B[x, 0] = A[k, 0]

    @T.prim_func
    def expected(A: T.Buffer((64, 64), "float32")):
        with T.block(""):
            B = T.alloc_buffer((8, 1))
            for k in range(64):
                x: T.int32 = k // 8
                B[x, 0] = A[k, 0]

    golden("CompactBufferAllocation", before, expected)


def test_branch_conditions_narrow_the_loops(golden):
    # then-branch of `i < 8 and j < 8`; else-branch of `i < 8 or j < 8` (both i, j >= 8); the
    # else-branch of an `and` tells nothing about either loop.
    @T.prim_func
    def before(A: T.Buffer((16, 16), "float32")):
        with T.block(""):
            B1 = T.alloc_buffer((16, 16))
            B2 = T.alloc_buffer((16, 16))
            B3 = T.alloc_buffer((16, 16))
            for i, j in T.grid(16, 16):
                if i < 8 and j < 8:
                    B1[i, j] = A[i, j]
                else:
                    B2[i, j] = A[i, j]
                if i < 8 or j < 8:
                    A[i, j] = T.float32(0)
                else:
                    B3[i, j] = A[i, j]

    @T.prim_func
    def expected(A: T.Buffer((16, 16), "float32")):
        with T.block(""):
            B1 = T.alloc_buffer((8, 8))
            B2 = T.alloc_buffer((16, 16))
            B3 = T.alloc_buffer((8, 8))
            for i, j in T.grid(16, 16):
                if i < 8 and j < 8:
                    B1[i, j] = A[i, j]
                else:
                    B2[i, j] = A[i, j]
                if i < 8 or j < 8:
                    A[i, j] = T.float32(0)
                else:
                    B3[i - 8, j - 8] = A[i, j]

    golden("CompactBufferAllocation", before, expected)


def test_if_then_else_and_block_predicate_narrow_the_loops(golden):
    @T.prim_func
    def before(A: T.Buffer((20,), "float32")):
        with T.block(""):
            B = T.alloc_buffer((20,))
            C = T.alloc_buffer((20,))
            for i in range(16):
                B[i] = A[i]
            for i in range(20):
                A[i] = T.if_then_else(2 <= i and i < 18, B[i - 2], T.float32(0))
            for i in range(20):
                with T.block(""):
                    T.where(i < 5)
                    C[i] = A[i]

    @T.prim_func
    def expected(A: T.Buffer((20,), "float32")):
        with T.block(""):
            B = T.alloc_buffer((16,))
            C = T.alloc_buffer((5,))
            for i in range(16):
                B[i] = A[i]
            for i in range(20):
                A[i] = T.if_then_else(2 <= i and i < 18, B[i - 2], T.float32(0))
            for i in range(20):
                with T.block(""):
                    T.where(i < 5)
                    C[i] = A[i]

    golden("CompactBufferAllocation", before, expected)


def test_symbolic_buffer_shrinks_to_a_constant_tile(golden):
    @T.prim_func
    def before(a: T.handle, n: T.int32):
        A = T.match_buffer(a, (n * 8,), "float32")
        for i in range(n):
            with T.block(""):
                B = T.alloc_buffer((n * 8,))
                for j in range(8):
                    B[i * 8 + j] = A[i * 8 + j]
                for j in range(8):
                    A[i * 8 + j] = B[i * 8 + j] * T.float32(2)

    @T.prim_func
    def expected(a: T.handle, n: T.int32):
        A = T.match_buffer(a, (n * 8,), "float32")
        for i in range(n):
            with T.block(""):
                B = T.alloc_buffer((8,))
                for j in range(8):
                    B[j] = A[i * 8 + j]
                for j in range(8):
                    A[i * 8 + j] = B[j] * T.float32(2)

    golden("CompactBufferAllocation", before, expected)


def test_thread_loops_around_the_allocation_relax_by_storage_scope(golden):
    # shared: one copy per thread block (vthread and threadIdx relaxed, blockIdx not);
    # warp: one per warp (only threadIdx.x); local: one per thread (none).
    @T.prim_func
    def before(A: T.Buffer((16,), "float32")):
        for bx in T.thread_binding(2, thread="blockIdx.x"):
            for vx in T.thread_binding(2, thread="vthread.x"):
                for tx in T.thread_binding(4, thread="threadIdx.x"):
                    with T.block(""):
                        S = T.alloc_buffer((16,), scope="shared")
                        W = T.alloc_buffer((16,), scope="warp")
                        L = T.alloc_buffer((16,), scope="local")
                        S[bx * 8 + vx * 4 + tx] = A[bx * 8 + vx * 4 + tx]
                        W[bx * 8 + vx * 4 + tx] = S[bx * 8 + vx * 4 + tx]
                        L[bx * 8 + vx * 4 + tx] = W[bx * 8 + vx * 4 + tx]
                        A[bx * 8 + vx * 4 + tx] = L[bx * 8 + vx * 4 + tx]

    @T.prim_func
    def expected(A: T.Buffer((16,), "float32")):
        for bx in T.thread_binding(2, thread="blockIdx.x"):
            for vx in T.thread_binding(2, thread="vthread.x"):
                for tx in T.thread_binding(4, thread="threadIdx.x"):
                    with T.block(""):
                        S = T.alloc_buffer((8,), scope="shared")
                        W = T.alloc_buffer((4,), scope="warp")
                        L = T.alloc_buffer((1,), scope="local")
                        S[vx * 4 + tx] = A[bx * 8 + vx * 4 + tx]
                        W[tx] = S[vx * 4 + tx]
                        L[0] = W[tx]
                        A[bx * 8 + vx * 4 + tx] = L[0]

    golden("CompactBufferAllocation", before, expected)


def test_predicate_on_a_fused_index_bounds_the_region(golden):
    # `j * 6 + k < 20` bounds the fused index: 20 rows, not the 24 the loops reach.
    @T.prim_func
    def before(A: T.Buffer((20,), "float32"), C: T.Buffer((20,), "float32")):
        with T.block(""):
            B = T.alloc_buffer((32, 2))
            for j, k in T.grid(4, 6):
                with T.block(""):
                    T.where(j * 6 + k < 20)
                    B[j * 6 + k, 1] = A[j * 6 + k] * T.float32(2)
            for i in range(20):
                C[i] = B[i, 1] + T.float32(1)

    @T.prim_func
    def expected(A: T.Buffer((20,), "float32"), C: T.Buffer((20,), "float32")):
        with T.block(""):
            B = T.alloc_buffer((20, 1))
            for j, k in T.grid(4, 6):
                with T.block(""):
                    T.where(j * 6 + k < 20)
                    B[j * 6 + k, 0] = A[j * 6 + k] * T.float32(2)
            for i in range(20):
                C[i] = B[i, 0] + T.float32(1)

    golden("CompactBufferAllocation", before, expected)


def test_predicate_bounded_region_builds_and_matches_numpy():
    @T.prim_func
    def func(A: T.Buffer((20,), "float32"), C: T.Buffer((20,), "float32")):
        with T.block("root"):
            B = T.alloc_buffer((32,))
            for j, k in T.grid(4, 6):
                with T.block("fill"):
                    T.where(j * 6 + k < 20)
                    B[j * 6 + k] = A[j * 6 + k] * T.float32(2)
            for i in range(20):
                with T.block("use"):
                    C[i] = B[i] + T.float32(1)

    a = np.arange(20, dtype="float32")
    c = np.zeros(20, dtype="float32")
    ts.build(func, target="c")(a, c)
    np.testing.assert_allclose(c, a * 2 + 1)


def test_a_float_comparison_in_an_enclosing_if_is_no_bound_on_the_loops():
    # Found by tests/fuzz (a cache_write under `if float64(A[i]) < float64(A[i])`): the condition
    # compares floats, so it narrows nothing, and the function builds and computes as numpy does.
    @T.prim_func
    def func(A: T.Buffer((6,), "int8"), C: T.Buffer((6,), "int8")):
        C_global = T.alloc_buffer((6,), "int8")
        for i in range(6):
            with T.block("C"):
                vi = T.axis.spatial(6, i)
                if T.Cast("float64", A[vi]) < T.Cast("float64", A[vi]) + T.float64(0.5):
                    C_global[vi] = A[vi]
                else:
                    C_global[vi] = T.int8(0)
        for i in range(6):
            with T.block("C_global"):
                v0 = T.axis.spatial(6, i)
                C[v0] = C_global[v0]

    lib = ts.build(func, target="c")
    a = np.array([3, -2, 0, 7, -128, 127], "int8")
    c = np.zeros(6, "int8")
    lib(a, c)
    np.testing.assert_array_equal(c, a)
