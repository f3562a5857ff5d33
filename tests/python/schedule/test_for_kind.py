"""parallel, vectorize, unroll, bind: the kind of a loop."""

from tessera.script import tir as T


@T.prim_func
def elementwise(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32")):
    for i, j in T.grid(128, 128):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)


@T.prim_func
def rowsum(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128,), "float32")):
    for i, k in T.grid(128, 128):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]


def test_parallel(golden):
    @T.prim_func
    def expected(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32")):
        for i in T.parallel(128):
            for j in T.serial(128):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi, vj] = A[vi, vj] * T.float32(2)

    golden(elementwise, expected, lambda sch: sch.parallel(sch.get_loops(sch.get_block("B"))[0]))


def test_vectorize(golden):
    @T.prim_func
    def expected(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32")):
        for i in T.serial(128):
            for j in T.vectorized(128):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi, vj] = A[vi, vj] * T.float32(2)

    golden(elementwise, expected, lambda sch: sch.vectorize(sch.get_loops(sch.get_block("B"))[1]))


def test_unroll_reduction_loop(golden):
    @T.prim_func
    def expected(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128,), "float32")):
        for i in T.serial(128):
            for k in T.unroll(128):
                with T.block("B"):
                    vi, vk = T.axis.remap("SR", [i, k])
                    with T.init():
                        B[vi] = T.float32(0)
                    B[vi] = B[vi] + A[vi, vk]

    golden(rowsum, expected, lambda sch: sch.unroll(sch.get_loops(sch.get_block("B"))[1]))


def test_parallel_spatial_loop_of_a_reduction(golden):
    @T.prim_func
    def expected(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128,), "float32")):
        for i in T.parallel(128):
            for k in T.serial(128):
                with T.block("B"):
                    vi, vk = T.axis.remap("SR", [i, k])
                    with T.init():
                        B[vi] = T.float32(0)
                    B[vi] = B[vi] + A[vi, vk]

    golden(rowsum, expected, lambda sch: sch.parallel(sch.get_loops(sch.get_block("B"))[0]))


def test_bind(golden):
    @T.prim_func
    def expected(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32")):
        for i in T.thread_binding(128, thread="blockIdx.x"):
            for j in T.thread_binding(128, thread="threadIdx.x"):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi, vj] = A[vi, vj] * T.float32(2)

    def apply(sch):
        i, j = sch.get_loops(sch.get_block("B"))
        sch.bind(i, "blockIdx.x")
        sch.bind(j, "threadIdx.x")

    golden(elementwise, expected, apply)


def test_bind_reduction_loop_to_a_thread(golden):
    @T.prim_func
    def expected(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128,), "float32")):
        for i in T.serial(128):
            for k in T.thread_binding(128, thread="threadIdx.x"):
                with T.block("B"):
                    vi, vk = T.axis.remap("SR", [i, k])
                    with T.init():
                        B[vi] = T.float32(0)
                    B[vi] = B[vi] + A[vi, vk]

    golden(rowsum, expected, lambda sch: sch.bind(sch.get_loops(sch.get_block("B"))[1], "threadIdx.x"))


# ---- checks ----


def test_parallel_reduction_loop(schedule_error):
    message = schedule_error(rowsum, lambda sch: sch.parallel(sch.get_loops(sch.get_block("B"))[1]),
                             "parallel", "cannot be parallelized because it is bound to the iterator "
                             "'vk' of block tir.Block#1, which is not a spatial iterator")
    assert "# tir.For#0\n" in message and "for k in range(128):\n" in message
    assert '# tir.Block#1\n' in message and 'with T.block("B"):\n' in message


def test_vectorize_reduction_loop(schedule_error):
    schedule_error(rowsum, lambda sch: sch.vectorize(sch.get_loops(sch.get_block("B"))[1]),
                   "vectorize", "cannot be vectorized because it is bound to the iterator 'vk'")


def test_bind_reduction_loop_to_a_block_axis(schedule_error):
    schedule_error(rowsum, lambda sch: sch.bind(sch.get_loops(sch.get_block("B"))[1], "blockIdx.x"),
                   "bind", "which is not a spatial iterator")


def test_bind_invalid_thread_axis(schedule_error):
    schedule_error(elementwise, lambda sch: sch.bind(sch.get_loops(sch.get_block("B"))[0], "warp.x"),
                   "bind", "Invalid thread axis 'warp.x'")


@T.prim_func
def two_writers(A: T.Buffer((128,), "float32")):
    for i in T.serial(128):
        with T.block("A0"):
            vi = T.axis.spatial(128, i)
            A[vi] = T.float32(0)
    for i in T.serial(128):
        with T.block("A1"):
            vi = T.axis.spatial(128, i)
            A[vi] = A[vi] + T.float32(1)


def test_parallel_needs_a_local_complete_block(schedule_error):
    # As TVM: A1 reads what it writes (and has no init), so it is neither a local complete nor a
    # local reduction block.
    schedule_error(two_writers, lambda sch: sch.parallel(sch.get_loops(sch.get_block("A1"))[0]),
                   "parallel", "does not have compact dataflow", "it reads the buffer it writes")


def test_parallel_scatter_writers(golden):
    """Two blocks writing halves of one buffer: the scope is no stage pipeline, but each block
    is the only writer under its loop, so each loop may run in parallel (as TVM)."""
    @T.prim_func
    def halves(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        for i in T.serial(8):
            with T.block("lo"):
                vi = T.axis.spatial(8, i)
                B[vi] = A[vi]
        for i in T.serial(8):
            with T.block("hi"):
                vi = T.axis.spatial(8, i)
                B[vi + 8] = A[vi + 8] * T.float32(2)

    @T.prim_func
    def expected(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        for i in T.parallel(8):
            with T.block("lo"):
                vi = T.axis.spatial(8, i)
                B[vi] = A[vi]
        for i in T.parallel(8):
            with T.block("hi"):
                vi = T.axis.spatial(8, i)
                B[vi + 8] = A[vi + 8] * T.float32(2)

    def apply(sch):
        sch.parallel(sch.get_loops(sch.get_block("lo"))[0])
        sch.parallel(sch.get_loops(sch.get_block("hi"))[0])

    golden(halves, expected, apply)


def test_enable_check_false_skips_dataflow_checks():
    from tessera import tir

    sch = tir.Schedule(two_writers, enable_check=False)
    sch.parallel(sch.get_loops(sch.get_block("A1"))[0])
    assert str(sch.get(sch.get_loops(sch.get_block("A1"))[0]).kind) == "ForKind.PARALLEL"


def test_vectorize_needs_compact_dataflow(schedule_error):
    @T.prim_func
    def no_init(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16,), "float32")):
        for i, k in T.grid(16, 16):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                B[vi] = B[vi] + A[vi, vk]

    schedule_error(no_init, lambda sch: sch.vectorize(sch.get_loops(sch.get_block("B"))[0]),
                   "vectorize", "does not have compact dataflow",
                   "not a complete block (it has a non-spatial block iterator) nor a reduction "
                   "block (it has no init statement)")


def test_parallel_needs_affine_bindings(schedule_error):
    @T.prim_func
    def squared(A: T.Buffer((256,), "float32")):
        for i in T.serial(16):
            with T.block("A"):
                vi = T.axis.spatial(256, i * i)
                A[vi] = T.float32(0)

    schedule_error(squared, lambda sch: sch.parallel(sch.get_loops(sch.get_block("A"))[0]),
                   "parallel", "does not have affine bindings")
