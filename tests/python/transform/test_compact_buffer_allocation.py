"""tir.CompactBufferAllocation: block allocations shrink to the region their body touches."""

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
    import pytest

    import tessera as ts
    from tessera.error import TesseraValueError
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
    with pytest.raises(TesseraValueError, match="is_strict=False"):
        tt.CompactBufferAllocation(is_strict=False)
