"""compute_at, reverse_compute_at: move a producer (consumer) under a loop of its consumer
(producer), over just the region used there."""

from tessera.script import tir as T


@T.prim_func
def elementwise(A: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
    B = T.alloc_buffer((128, 128))
    for i, j in T.grid(128, 128):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(128, 128):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)


@T.prim_func
def tiled_consumer(A: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
    B = T.alloc_buffer((128, 128))
    for i, j in T.grid(128, 128):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i_0, j_0, i_1, j_1 in T.grid(8, 8, 16, 16):
        with T.block("C"):
            vi = T.axis.spatial(128, i_0 * 16 + i_1)
            vj = T.axis.spatial(128, j_0 * 16 + j_1)
            C[vi, vj] = B[vi, vj] + T.float32(1)


def test_compute_at_row(golden):
    @T.prim_func
    def expected(A: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
        B = T.alloc_buffer((128, 128))
        for i in T.serial(128):
            for ax0 in T.serial(128):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, ax0])
                    B[vi, vj] = A[vi, vj] * T.float32(2)
            for j in T.serial(128):
                with T.block("C"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    C[vi, vj] = B[vi, vj] + T.float32(1)

    golden(elementwise, expected,
           lambda sch: sch.compute_at(sch.get_block("B"), sch.get_loops(sch.get_block("C"))[0]))


def test_compute_at_innermost_with_unit_loops(golden):
    @T.prim_func
    def expected(A: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
        B = T.alloc_buffer((128, 128))
        for i, j in T.grid(128, 128):
            for ax0, ax1 in T.grid(1, 1):
                with T.block("B"):
                    vi = T.axis.spatial(128, i + ax0)
                    vj = T.axis.spatial(128, j + ax1)
                    B[vi, vj] = A[vi, vj] * T.float32(2)
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vi, vj] + T.float32(1)

    golden(elementwise, expected,
           lambda sch: sch.compute_at(sch.get_block("B"), sch.get_loops(sch.get_block("C"))[1],
                                      preserve_unit_loops=True))


def test_compute_at_tile(golden):
    @T.prim_func
    def expected(A: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
        B = T.alloc_buffer((128, 128))
        for i_0, j_0 in T.grid(8, 8):
            for ax0, ax1 in T.grid(16, 16):
                with T.block("B"):
                    vi = T.axis.spatial(128, i_0 * 16 + ax0)
                    vj = T.axis.spatial(128, j_0 * 16 + ax1)
                    B[vi, vj] = A[vi, vj] * T.float32(2)
            for i_1, j_1 in T.grid(16, 16):
                with T.block("C"):
                    vi = T.axis.spatial(128, i_0 * 16 + i_1)
                    vj = T.axis.spatial(128, j_0 * 16 + j_1)
                    C[vi, vj] = B[vi, vj] + T.float32(1)

    golden(tiled_consumer, expected,
           lambda sch: sch.compute_at(sch.get_block("B"), sch.get_loops(sch.get_block("C"))[1]))


def test_reverse_compute_at_tile(golden):
    @T.prim_func
    def tiled_producer(A: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
        B = T.alloc_buffer((128, 128))
        for i_0, j_0, i_1, j_1 in T.grid(8, 8, 16, 16):
            with T.block("B"):
                vi = T.axis.spatial(128, i_0 * 16 + i_1)
                vj = T.axis.spatial(128, j_0 * 16 + j_1)
                B[vi, vj] = A[vi, vj] * T.float32(2)
        for i, j in T.grid(128, 128):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vi, vj] + T.float32(1)

    @T.prim_func
    def expected(A: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32")):
        B = T.alloc_buffer((128, 128))
        for i_0, j_0 in T.grid(8, 8):
            for i_1, j_1 in T.grid(16, 16):
                with T.block("B"):
                    vi = T.axis.spatial(128, i_0 * 16 + i_1)
                    vj = T.axis.spatial(128, j_0 * 16 + j_1)
                    B[vi, vj] = A[vi, vj] * T.float32(2)
            for ax0, ax1 in T.grid(16, 16):
                with T.block("C"):
                    vi = T.axis.spatial(128, i_0 * 16 + ax0)
                    vj = T.axis.spatial(128, j_0 * 16 + ax1)
                    C[vi, vj] = B[vi, vj] + T.float32(1)

    golden(tiled_producer, expected,
           lambda sch: sch.reverse_compute_at(sch.get_block("C"), sch.get_loops(sch.get_block("B"))[1]))


def test_reverse_compute_at_after_a_reduction(golden):
    @T.prim_func
    def mm_relu(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"),
                C: T.Buffer((64, 64), "float32")):
        Y = T.alloc_buffer((64, 64))
        for i, j, k in T.grid(64, 64, 64):
            with T.block("Y"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    Y[vi, vj] = T.float32(0)
                Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
        for i, j in T.grid(64, 64):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = T.max(Y[vi, vj], T.float32(0))

    @T.prim_func
    def expected(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"),
                 C: T.Buffer((64, 64), "float32")):
        Y = T.alloc_buffer((64, 64))
        for i, j_0 in T.grid(64, 16):
            for k, j_1 in T.grid(64, 4):
                with T.block("Y"):
                    vi = T.axis.spatial(64, i)
                    vj = T.axis.spatial(64, j_0 * 4 + j_1)
                    vk = T.axis.reduce(64, k)
                    with T.init():
                        Y[vi, vj] = T.float32(0)
                    Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]
            for ax0 in T.serial(4):
                with T.block("C"):
                    vi = T.axis.spatial(64, i)
                    vj = T.axis.spatial(64, j_0 * 4 + ax0)
                    C[vi, vj] = T.max(Y[vi, vj], T.float32(0))

    def apply(sch):
        y = sch.get_block("Y")
        _, j, k = sch.get_loops(y)
        j0, j1 = sch.split(j, factors=[None, 4])
        sch.reorder(j0, k, j1)
        sch.reverse_compute_at(sch.get_block("C"), j0)

    golden(mm_relu, expected, apply)


def test_compute_at_index_picks_the_position(golden):
    @T.prim_func
    def two_consumers(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32"),
                      D: T.Buffer((16, 16), "float32")):
        B = T.alloc_buffer((16, 16))
        for i, j in T.grid(16, 16):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj]
        for i in T.serial(16):
            for j in T.serial(16):
                with T.block("D0"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    D[vi, vj] = A[vi, vj]
            for j in T.serial(16):
                with T.block("C"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    C[vi, vj] = B[vi, vj]

    @T.prim_func
    def first(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32"),
              D: T.Buffer((16, 16), "float32")):
        B = T.alloc_buffer((16, 16))
        for i in T.serial(16):
            for ax0 in T.serial(16):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, ax0])
                    B[vi, vj] = A[vi, vj]
            for j in T.serial(16):
                with T.block("D0"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    D[vi, vj] = A[vi, vj]
            for j in T.serial(16):
                with T.block("C"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    C[vi, vj] = B[vi, vj]

    def at(index):
        return lambda sch: sch.compute_at(sch.get_block("B"), sch.get_loops(sch.get_block("C"))[0],
                                          index=index)

    golden(two_consumers, first, at(-2))
    golden(two_consumers, first, at(0))


# ---- checks ----


def test_compute_at_output_block(schedule_error):
    schedule_error(elementwise,
                   lambda sch: sch.compute_at(sch.get_block("C"), sch.get_loops(sch.get_block("B"))[0]),
                   "compute_at", "Cannot operate on an output block")


def test_compute_at_loop_of_another_scope(schedule_error):
    @T.prim_func
    def nested(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
        B = T.alloc_buffer((16,))
        for i in T.serial(16):
            with T.block("B"):
                vi = T.axis.spatial(16, i)
                B[vi] = A[vi]
        with T.block("outer"):
            for i in T.serial(16):
                with T.block("C"):
                    vi = T.axis.spatial(16, i)
                    C[vi] = B[vi]

    schedule_error(nested,
                   lambda sch: sch.compute_at(sch.get_block("B"), sch.get_loops(sch.get_block("C"))[0]),
                   "compute_at", "are not in the same block scope")


def test_compute_at_ancestor_loop(schedule_error):
    schedule_error(elementwise,
                   lambda sch: sch.compute_at(sch.get_block("B"), sch.get_loops(sch.get_block("B"))[0]),
                   "compute_at", "is an ancestor of block tir.Block#0")


@T.prim_func
def not_pipeline(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((16,))
    for i in T.serial(16):
        with T.block("B0"):
            vi = T.axis.spatial(16, i)
            B[vi] = A[vi]
    for i in T.serial(16):
        with T.block("B1"):
            vi = T.axis.spatial(16, i)
            B[vi] = A[vi] * T.float32(2)
    for i in T.serial(16):
        with T.block("C"):
            vi = T.axis.spatial(16, i)
            C[vi] = B[vi]


def test_compute_at_needs_a_stage_pipeline(schedule_error):
    # As TVM, the block's completeness is checked first: a second writer of B makes it fail.
    schedule_error(not_pipeline,
                   lambda sch: sch.compute_at(sch.get_block("B1"), sch.get_loops(sch.get_block("C"))[0]),
                   "compute_at", "is not a complete block because it is not the only writer")


def test_compute_at_without_checks():
    from tessera import tir

    sch = tir.Schedule(not_pipeline, enable_check=False)
    sch.compute_at(sch.get_block("B1"), sch.get_loops(sch.get_block("C"))[0])
    assert len(sch.get_loops(sch.get_block("B1"))) == 1


def test_compute_at_loop_without_consumers(schedule_error):
    # Dependencies follow program order, so the consumers under the loop always come after the
    # producers there; a loop holding no consumer has no insertion point.
    @T.prim_func
    def unrelated(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32"),
                  D: T.Buffer((16,), "float32")):
        B = T.alloc_buffer((16,))
        for i in T.serial(16):
            with T.block("B"):
                vi = T.axis.spatial(16, i)
                B[vi] = A[vi]
        for i in T.serial(16):
            with T.block("D"):
                vi = T.axis.spatial(16, i)
                D[vi] = A[vi]
        for i in T.serial(16):
            with T.block("C"):
                vi = T.axis.spatial(16, i)
                C[vi] = B[vi]

    schedule_error(unrelated,
                   lambda sch: sch.compute_at(sch.get_block("B"), sch.get_loops(sch.get_block("D"))[0]),
                   "compute_at", "requires all the consumers of the block tir.Block#0 to be under the loop "
                   "tir.For#1, but 1 of them are not: tir.Block#2")
    schedule_error(unrelated,
                   lambda sch: sch.reverse_compute_at(sch.get_block("D"), sch.get_loops(sch.get_block("B"))[0]),
                   "reverse_compute_at", "The block tir.Block#0 has no producer under the loop tir.For#1")


def test_compute_at_invalid_index(schedule_error):
    schedule_error(elementwise,
                   lambda sch: sch.compute_at(sch.get_block("B"), sch.get_loops(sch.get_block("C"))[0],
                                              index=2),
                   "compute_at", "The index 2 is not a valid insertion point", "valid ones are 0 to 0")


def test_compute_at_consumer_outside_the_loop(schedule_error):
    @T.prim_func
    def two_uses(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32"),
                 D: T.Buffer((16,), "float32")):
        B = T.alloc_buffer((16,))
        for i in T.serial(16):
            with T.block("B"):
                vi = T.axis.spatial(16, i)
                B[vi] = A[vi]
        for i in T.serial(16):
            with T.block("C"):
                vi = T.axis.spatial(16, i)
                C[vi] = B[vi]
        for i in T.serial(16):
            with T.block("D"):
                vi = T.axis.spatial(16, i)
                D[vi] = B[vi]

    schedule_error(two_uses,
                   lambda sch: sch.compute_at(sch.get_block("B"), sch.get_loops(sch.get_block("C"))[0]),
                   "compute_at", "requires all the consumers of the block tir.Block#0 to be under the loop "
                   "tir.For#1, but 1 of them are not: tir.Block#2")


def test_compute_at_block_neither_complete_nor_reduction(schedule_error):
    @T.prim_func
    def no_init(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16,), "float32")):
        B = T.alloc_buffer((16,))
        for i, k in T.grid(16, 16):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                B[vi] = B[vi] + A[vi, vk]
        for i in T.serial(16):
            with T.block("C"):
                vi = T.axis.spatial(16, i)
                C[vi] = B[vi]

    schedule_error(no_init,
                   lambda sch: sch.compute_at(sch.get_block("B"), sch.get_loops(sch.get_block("C"))[0]),
                   "compute_at", "Not a complete or reduction block: tir.Block#0 is not a complete block because "
                   "it has a non-spatial block iterator, and not a reduction block either because it has no "
                   "init statement")


def test_compute_at_under_a_split_that_does_not_divide(golden):
    @T.prim_func
    def ragged(A: T.Buffer((37,), "float32"), C: T.Buffer((37,), "float32")):
        B = T.alloc_buffer((37,))
        for j in T.serial(37):
            with T.block("B"):
                vj = T.axis.spatial(37, j)
                B[vj] = A[vj] * T.float32(3)
        for j in T.serial(37):
            with T.block("C"):
                vj = T.axis.spatial(37, j)
                C[vj] = B[vj] - T.float32(1)

    @T.prim_func
    def expected(A: T.Buffer((37,), "float32"), C: T.Buffer((37,), "float32")):
        B = T.alloc_buffer((37,))
        for j_0 in T.serial(5):
            for ax0 in T.serial(8):
                with T.block("B"):
                    vj = T.axis.spatial(37, j_0 * 8 + ax0)
                    T.where(j_0 * 8 + ax0 < 37)
                    B[vj] = A[vj] * T.float32(3)
            for j_1 in T.serial(8):
                with T.block("C"):
                    vj = T.axis.spatial(37, j_0 * 8 + j_1)
                    T.where(j_0 * 8 + j_1 < 37)
                    C[vj] = B[vj] - T.float32(1)

    def apply(sch):
        (j,) = sch.get_loops(sch.get_block("C"))
        j0, _ = sch.split(j, factors=[None, 8])
        sch.compute_at(sch.get_block("B"), j0)

    golden(ragged, expected, apply)


@T.prim_func
def rows_under_threads(A: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
    # The producer writes A_cache in `scope`; each thread of C reads one row of it.
    for bx in T.thread_binding(4, thread="blockIdx.x"):
        for tx in T.thread_binding(16, thread="threadIdx.x"):
            for j in T.serial(64):
                with T.block("C"):
                    vi = T.axis.spatial(64, bx * 16 + tx)
                    vj = T.axis.spatial(64, j)
                    C[vi, vj] = A[vi, vj] * T.float32(2)


def _cache_under_tx(scope):
    def apply(sch):
        c = sch.get_block("C")
        cache = sch.cache_read(c, 0, scope)
        sch.compute_at(cache, sch.get_loops(c)[1])
    return apply


def test_compute_at_shared_cache_covers_the_threads_of_the_block(golden):
    # A "shared" cache under threadIdx is filled for all 16 threads of the block (its threads
    # relaxed), not just for the row of one thread; blockIdx stays fixed.
    @T.prim_func
    def expected(A: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
        A_shared = T.alloc_buffer((64, 64), scope="shared")
        for bx in T.thread_binding(4, thread="blockIdx.x"):
            for tx in T.thread_binding(16, thread="threadIdx.x"):
                for ax0, ax1 in T.grid(16, 64):
                    with T.block("A_shared"):
                        v0 = T.axis.spatial(64, bx * 16 + ax0)
                        v1 = T.axis.spatial(64, ax1)
                        A_shared[v0, v1] = A[v0, v1]
                for j in T.serial(64):
                    with T.block("C"):
                        vi = T.axis.spatial(64, bx * 16 + tx)
                        vj = T.axis.spatial(64, j)
                        C[vi, vj] = A_shared[vi, vj] * T.float32(2)

    golden(rows_under_threads, expected, _cache_under_tx("shared"))


def test_compute_at_local_cache_covers_one_thread(golden):
    @T.prim_func
    def expected(A: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
        A_local = T.alloc_buffer((64, 64), scope="local")
        for bx in T.thread_binding(4, thread="blockIdx.x"):
            for tx in T.thread_binding(16, thread="threadIdx.x"):
                for ax0 in T.serial(64):
                    with T.block("A_local"):
                        v0 = T.axis.spatial(64, bx * 16 + tx)
                        v1 = T.axis.spatial(64, ax0)
                        A_local[v0, v1] = A[v0, v1]
                for j in T.serial(64):
                    with T.block("C"):
                        vi = T.axis.spatial(64, bx * 16 + tx)
                        vj = T.axis.spatial(64, j)
                        C[vi, vj] = A_local[vi, vj] * T.float32(2)

    golden(rows_under_threads, expected, _cache_under_tx("local"))


def test_compute_at_global_cache_covers_the_grid(golden):
    @T.prim_func
    def expected(A: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
        A_global = T.alloc_buffer((64, 64))
        for bx in T.thread_binding(4, thread="blockIdx.x"):
            for tx in T.thread_binding(16, thread="threadIdx.x"):
                for ax0, ax1 in T.grid(64, 64):
                    with T.block("A_global"):
                        v0, v1 = T.axis.remap("SS", [ax0, ax1])
                        A_global[v0, v1] = A[v0, v1]
                for j in T.serial(64):
                    with T.block("C"):
                        vi = T.axis.spatial(64, bx * 16 + tx)
                        vj = T.axis.spatial(64, j)
                        C[vi, vj] = A_global[vi, vj] * T.float32(2)

    golden(rows_under_threads, expected, _cache_under_tx("global"))


@T.prim_func
def add_symbolic(a: T.handle, c: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n,), "int32")
    C = T.match_buffer(c, (n,), "int32")
    for i in range(n):
        with T.block("C"):
            vi = T.axis.remap("S", [i])
            C[vi] = A[vi] + 1


def test_compute_at_symbolic_split_keeps_only_the_upper_bound(golden):
    # The cache block under a split of extent n: its index i0 * ((n + 3) // 4) + i1 is >= 0
    # wherever it runs (i1's loop runs only when (n + 3) // 4 >= 1), so only `< n` is left, as
    # TVM leaves it; min(max(n - 1, 0), n - 1) + 1 simplifies to n.
    @T.prim_func
    def expected(a: T.handle, c: T.handle):
        n = T.int32()
        A = T.match_buffer(a, (n,), "int32")
        C = T.match_buffer(c, (n,), "int32")
        A_local = T.alloc_buffer((n,), "int32", scope="local")
        for i_0, i_1 in T.grid(4, (n + 3) // 4):
            with T.block("A_local"):
                v0 = T.axis.spatial(n, i_0 * ((n + 3) // 4) + i_1)
                T.where(i_0 * ((n + 3) // 4) + i_1 < n)
                A_local[v0] = A[v0]
            with T.block("C"):
                vi = T.axis.spatial(n, i_0 * ((n + 3) // 4) + i_1)
                T.where(i_0 * ((n + 3) // 4) + i_1 < n)
                C[vi] = A_local[vi] + 1

    def apply(sch):
        block = sch.get_block("C")
        cache = sch.cache_read(block, 0, "local")
        _, inner = sch.split(sch.get_loops(block)[0], factors=[4, None])
        sch.compute_at(cache, inner)

    golden(add_symbolic, expected, apply)


def test_compute_at_under_a_symbolic_loop_needs_no_predicate(golden):
    # The loop k_0 runs over [0, n): the copy's bound k_0 * 16 + ax0 < n * 16 is proven from
    # the loop's range, so no predicate is left.
    @T.prim_func
    def before(x: T.handle, y: T.handle, n: T.int64):
        X = T.match_buffer(x, (T.int64(4), n * T.int64(16)))
        Y = T.match_buffer(y, (T.int64(4), n * T.int64(16)))
        B = T.alloc_buffer((T.int64(4), n * T.int64(16)))
        for i, k in T.grid(T.int64(4), n * T.int64(16)):
            with T.block("B"):
                vi, vk = T.axis.remap("SS", [i, k])
                B[vi, vk] = X[vi, vk] + T.float32(1)
        for i, k_0, k_1 in T.grid(T.int64(4), n, T.int64(16)):
            with T.block("Y"):
                vi = T.axis.spatial(T.int64(4), i)
                vk = T.axis.spatial(n * T.int64(16), k_0 * T.int64(16) + k_1)
                Y[vi, vk] = B[vi, vk] * T.float32(2)

    @T.prim_func
    def expected(x: T.handle, y: T.handle, n: T.int64):
        X = T.match_buffer(x, (T.int64(4), n * T.int64(16)))
        Y = T.match_buffer(y, (T.int64(4), n * T.int64(16)))
        B = T.alloc_buffer((T.int64(4), n * T.int64(16)))
        for i, k_0 in T.grid(T.int64(4), n):
            for ax0 in range(T.int64(16)):
                with T.block("B"):
                    vi = T.axis.spatial(T.int64(4), i)
                    vk = T.axis.spatial(n * T.int64(16), k_0 * T.int64(16) + ax0)
                    B[vi, vk] = X[vi, vk] + T.float32(1)
            for k_1 in range(T.int64(16)):
                with T.block("Y"):
                    vi = T.axis.spatial(T.int64(4), i)
                    vk = T.axis.spatial(n * T.int64(16), k_0 * T.int64(16) + k_1)
                    Y[vi, vk] = B[vi, vk] * T.float32(2)

    golden(before, expected,
           lambda sch: sch.compute_at(sch.get_block("B"), sch.get_loops(sch.get_block("Y"))[1]))
