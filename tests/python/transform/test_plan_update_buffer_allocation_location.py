"""tir.PlanAndUpdateBufferAllocationLocation: allocations move to the lowest common ancestor of
their accesses, never into a loop whose iterations share values through the buffer."""

from tessera.script import tir as T


def test_tile_temporary_moves_into_the_tile_loop(golden):
    @T.prim_func
    def before(A: T.Buffer((64, 8), "float32"), C: T.Buffer((64, 8), "float32")):
        Y = T.alloc_buffer((64, 8))
        for io in T.serial(4):
            for ii, j in T.grid(16, 8):
                with T.block("Y"):
                    vi = T.axis.spatial(64, io * 16 + ii)
                    vj = T.axis.spatial(8, j)
                    Y[vi, vj] = A[vi, vj] + T.float32(1)
            for ii, j in T.grid(16, 8):
                with T.block("C"):
                    vi = T.axis.spatial(64, io * 16 + ii)
                    vj = T.axis.spatial(8, j)
                    C[vi, vj] = Y[vi, vj] * T.float32(2)

    @T.prim_func
    def expected(A: T.Buffer((64, 8), "float32"), C: T.Buffer((64, 8), "float32")):
        for io in T.serial(4):
            with T.block(""):
                T.reads(A[io * 16:io * 16 + 16, 0:8])
                T.writes(C[io * 16:io * 16 + 16, 0:8])
                Y = T.alloc_buffer((64, 8))
                for ii, j in T.grid(16, 8):
                    with T.block("Y"):
                        vi = T.axis.spatial(64, io * 16 + ii)
                        vj = T.axis.spatial(8, j)
                        Y[vi, vj] = A[vi, vj] + T.float32(1)
                for ii, j in T.grid(16, 8):
                    with T.block("C"):
                        vi = T.axis.spatial(64, io * 16 + ii)
                        vj = T.axis.spatial(8, j)
                        C[vi, vj] = Y[vi, vj] * T.float32(2)

    golden("PlanAndUpdateBufferAllocationLocation", before, expected)


def test_accumulator_stays_outside_its_reduction_loop():
    @T.prim_func
    def func(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8,), "float32")):
        acc = T.alloc_buffer((8,))
        for i in T.serial(8):
            for k in T.serial(8):
                with T.block("acc"):
                    vi, vk = T.axis.remap("SR", [i, k])
                    with T.init():
                        acc[vi] = T.float32(0)
                    acc[vi] = acc[vi] + A[vi, vk]
            for j in T.serial(1):
                with T.block("B"):
                    vi = T.axis.spatial(8, i)
                    B[vi] = acc[vi]

    # `i` keeps the iterations apart, so acc could move into it; it is the k loop that must not
    # own it. Here the common ancestor is `i` itself.
    from conftest import run_pass
    after = run_pass("PlanAndUpdateBufferAllocationLocation", func)
    text = after.script()
    assert text.index("for i in") < text.index("T.alloc_buffer") < text.index("for k in")


def test_shared_across_loop_nests_stays_at_the_root(unchanged):
    @T.prim_func
    def func(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        Y = T.alloc_buffer((16,))
        for i in T.serial(16):
            with T.block("Y"):
                vi = T.axis.remap("S", [i])
                Y[vi] = A[vi]
        for i in T.serial(16):
            with T.block("B"):
                vi = T.axis.remap("S", [i])
                B[vi] = Y[15 - vi]

    unchanged("PlanAndUpdateBufferAllocationLocation", func)


def test_shared_buffer_moves_through_thread_loops_into_the_k_loop(golden):
    # The threads of a block share S (they read each other's rows), yet a "shared" buffer is one
    # per block wherever it is declared: it moves past threadIdx into the k step whose columns
    # no other step touches.
    @T.prim_func
    def before(A: T.Buffer((64, 32), "float32"), C: T.Buffer((64, 32), "float32")):
        S = T.alloc_buffer((64, 32), scope="shared")
        for bx in T.thread_binding(4, thread="blockIdx.x"):
            for tx in T.thread_binding(16, thread="threadIdx.x"):
                for ko in T.serial(4):
                    for c in T.serial(8):
                        with T.block("S"):
                            vi = T.axis.spatial(64, bx * 16 + tx)
                            vk = T.axis.spatial(32, ko * 8 + c)
                            S[vi, vk] = A[vi, vk]
                    for c in T.serial(8):
                        with T.block("C"):
                            vi = T.axis.spatial(64, bx * 16 + tx)
                            vk = T.axis.spatial(32, ko * 8 + c)
                            vn = T.axis.spatial(64, bx * 16 + (tx + 1) % 16)
                            C[vi, vk] = S[vn, vk]

    @T.prim_func
    def expected(A: T.Buffer((64, 32), "float32"), C: T.Buffer((64, 32), "float32")):
        for bx in T.thread_binding(4, thread="blockIdx.x"):
            for tx in T.thread_binding(16, thread="threadIdx.x"):
                for ko in T.serial(4):
                    with T.block(""):
                        T.reads(A[bx * 16 + tx, ko * 8:ko * 8 + 8])
                        T.writes(C[bx * 16 + tx, ko * 8:ko * 8 + 8])
                        S = T.alloc_buffer((64, 32), scope="shared")
                        for c in T.serial(8):
                            with T.block("S"):
                                vi = T.axis.spatial(64, bx * 16 + tx)
                                vk = T.axis.spatial(32, ko * 8 + c)
                                S[vi, vk] = A[vi, vk]
                        for c in T.serial(8):
                            with T.block("C"):
                                vi = T.axis.spatial(64, bx * 16 + tx)
                                vk = T.axis.spatial(32, ko * 8 + c)
                                vn = T.axis.spatial(64, bx * 16 + (tx + 1) % 16)
                                C[vi, vk] = S[vn, vk]

    golden("PlanAndUpdateBufferAllocationLocation", before, expected)


def test_unit_loop_between_does_not_keep_the_tile_out(golden):
    # The write-back iterates its own unit loop `ax` where the update uses `b`: a loop of one
    # iteration has nothing to keep apart, so the tile still moves into `io`.
    @T.prim_func
    def before(A: T.Buffer((1, 64), "float32"), C: T.Buffer((1, 64), "float32")):
        Y = T.alloc_buffer((1, 64))
        for b in T.serial(1):
            for io in T.serial(4):
                for ii in T.serial(16):
                    with T.block("Y"):
                        vb = T.axis.spatial(1, b)
                        vi = T.axis.spatial(64, io * 16 + ii)
                        Y[vb, vi] = A[vb, vi] + T.float32(1)
                for ax, ii in T.grid(1, 16):
                    with T.block("C"):
                        vb = T.axis.spatial(1, ax)
                        vi = T.axis.spatial(64, io * 16 + ii)
                        C[vb, vi] = Y[vb, vi]

    @T.prim_func
    def expected(A: T.Buffer((1, 64), "float32"), C: T.Buffer((1, 64), "float32")):
        for b in T.serial(1):
            for io in T.serial(4):
                with T.block(""):
                    T.reads(A[b, io * 16:io * 16 + 16])
                    T.writes(C[0, io * 16:io * 16 + 16])
                    Y = T.alloc_buffer((1, 64))
                    for ii in T.serial(16):
                        with T.block("Y"):
                            vb = T.axis.spatial(1, b)
                            vi = T.axis.spatial(64, io * 16 + ii)
                            Y[vb, vi] = A[vb, vi] + T.float32(1)
                    for ax, ii in T.grid(1, 16):
                        with T.block("C"):
                            vb = T.axis.spatial(1, ax)
                            vi = T.axis.spatial(64, io * 16 + ii)
                            C[vb, vi] = Y[vb, vi]

    golden("PlanAndUpdateBufferAllocationLocation", before, expected)


def _plan_down(func):
    from tessera import _core
    from tessera.transform import apply_pass

    mod = _core.IRModule.from_func(func.with_attr("global_symbol", _core.StringImm("main")), "main")
    return apply_pass("tir.PlanBufferAllocationDown", mod).lookup("main").script()


def test_plan_down_enters_a_fused_loop_that_indexes_two_dimensions():
    # tir.PlanBufferAllocationDown: the fused loop f indexes the temporary's first two
    # dimensions as f // 4 and f % 4; neither keeps the iterations apart alone, the row-major
    # offset (f * 8 + j) does, so the temporary lives in the loop body.
    @T.prim_func
    def func(A: T.Buffer((3, 4, 8), "float32"), C: T.Buffer((3, 4, 8), "float32")):
        Y = T.alloc_buffer((3, 4, 8))
        for f in T.serial(12):
            for j in T.serial(8):
                with T.block("Y"):
                    v0 = T.axis.spatial(3, f // 4)
                    v1 = T.axis.spatial(4, f % 4)
                    vj = T.axis.spatial(8, j)
                    Y[v0, v1, vj] = A[v0, v1, vj] + T.float32(1)
            for j in T.serial(8):
                with T.block("C"):
                    v0 = T.axis.spatial(3, f // 4)
                    v1 = T.axis.spatial(4, f % 4)
                    vj = T.axis.spatial(8, j)
                    C[v0, v1, vj] = Y[v0, v1, vj] * T.float32(2)

    text = _plan_down(func)
    assert text.index("for f in") < text.index("T.alloc_buffer"), text


def test_plan_down_keeps_a_buffer_whose_offsets_overlap_across_the_fused_loop():
    # Each iteration of f writes Y[f // 4, 0:8] and reads Y[f // 4, 0:8]: iterations of one row
    # share it, in the offset too (f // 4 * 8 + j), so it stays outside the loop.
    @T.prim_func
    def func(A: T.Buffer((3, 8), "float32"), C: T.Buffer((12, 8), "float32")):
        Y = T.alloc_buffer((3, 8))
        for f in T.serial(12):
            for j in T.serial(8):
                with T.block("Y"):
                    v0 = T.axis.spatial(3, f // 4)
                    vj = T.axis.spatial(8, j)
                    Y[v0, vj] = A[v0, vj] + T.float32(1)
            for j in T.serial(8):
                with T.block("C"):
                    vf = T.axis.spatial(12, f)
                    vj = T.axis.spatial(8, j)
                    C[vf, vj] = Y[vf // 4, vj] * T.float32(2)

    text = _plan_down(func)
    assert text.index("T.alloc_buffer") < text.index("for f in"), text
