"""fuse: a chain of nested loops becomes one loop over the product of their extents."""

from tessera.script import tir as T


@T.prim_func
def elementwise(A: T.Buffer((16, 32, 8), "float32"), B: T.Buffer((16, 32, 8), "float32")):
    for i, j, k in T.grid(16, 32, 8):
        with T.block("B"):
            vi, vj, vk = T.axis.remap("SSS", [i, j, k])
            B[vi, vj, vk] = A[vi, vj, vk] * T.float32(2)


def test_fuse_two_loops(golden):
    @T.prim_func
    def expected(A: T.Buffer((16, 32, 8), "float32"), B: T.Buffer((16, 32, 8), "float32")):
        for i_j_fused, k in T.grid(512, 8):
            with T.block("B"):
                vi = T.axis.spatial(16, i_j_fused // 32)
                vj = T.axis.spatial(32, i_j_fused % 32)
                vk = T.axis.spatial(8, k)
                B[vi, vj, vk] = A[vi, vj, vk] * T.float32(2)

    def apply(sch):
        i, j, _ = sch.get_loops(sch.get_block("B"))
        fused = sch.fuse(i, j)
        assert sch.get(fused).extent.value == 512

    golden(elementwise, expected, apply)


def test_fuse_three_loops(golden):
    # TVM's binding order: the middle loop is floordiv(floormod(fused, 32 * 8), 8).
    @T.prim_func
    def expected(A: T.Buffer((16, 32, 8), "float32"), B: T.Buffer((16, 32, 8), "float32")):
        for i_j_k_fused in T.serial(4096):
            with T.block("B"):
                vi = T.axis.spatial(16, i_j_k_fused // 256)
                vj = T.axis.spatial(32, i_j_k_fused % 256 // 8)
                vk = T.axis.spatial(8, i_j_k_fused % 8)
                B[vi, vj, vk] = A[vi, vj, vk] * T.float32(2)

    def apply(sch):
        sch.fuse(*sch.get_loops(sch.get_block("B")))

    golden(elementwise, expected, apply)


def test_fuse_then_split_back(golden):
    # The bindings simplify with the loop ranges: a split of a fusion by the same extents.
    @T.prim_func
    def expected(A: T.Buffer((16, 32, 8), "float32"), B: T.Buffer((16, 32, 8), "float32")):
        for i_j_fused_0, i_j_fused_1, k in T.grid(16, 32, 8):
            with T.block("B"):
                vi, vj, vk = T.axis.remap("SSS", [i_j_fused_0, i_j_fused_1, k])
                B[vi, vj, vk] = A[vi, vj, vk] * T.float32(2)

    def apply(sch):
        i, j, _ = sch.get_loops(sch.get_block("B"))
        sch.split(sch.fuse(i, j), factors=[16, 32])

    golden(elementwise, expected, apply)


def test_fuse_unit_loop_without_preserving_it(golden):
    @T.prim_func
    def before(A: T.Buffer((1, 32), "float32"), B: T.Buffer((1, 32), "float32")):
        for i, j in T.grid(1, 32):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj]

    @T.prim_func
    def expected(A: T.Buffer((1, 32), "float32"), B: T.Buffer((1, 32), "float32")):
        for i_j_fused in T.serial(32):
            with T.block("B"):
                vi = T.axis.spatial(1, 0)
                vj = T.axis.spatial(32, i_j_fused)
                B[vi, vj] = A[vi, vj]

    golden(before, expected,
           lambda sch: sch.fuse(*sch.get_loops(sch.get_block("B")), preserve_unit_iters=False))


def test_fuse_trace_passes_loops_positionally():
    from tessera import tir

    sch = tir.Schedule(elementwise)
    i, j, _ = sch.get_loops(sch.get_block("B"))
    sch.fuse(i, j)
    assert sch.trace.as_python()[-1] == "l4 = sch.fuse(l1, l2, preserve_unit_iters=True)"


# ---- checks ----


def test_fuse_loops_must_be_a_chain(schedule_error):
    def apply(sch):
        i, _, k = sch.get_loops(sch.get_block("B"))
        sch.fuse(i, k)

    schedule_error(elementwise, apply, "fuse",
                   "the body of tir.For#0 must be the loop tir.For#1 alone")


def test_fuse_loops_must_start_at_zero(schedule_error):
    @T.prim_func
    def shifted(A: T.Buffer((16, 34), "float32")):
        for i in T.serial(16):
            for j in range(2, 34):
                with T.block("A"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    A[vi, vj] = T.float32(0)

    schedule_error(shifted, lambda sch: sch.fuse(*sch.get_loops(sch.get_block("A"))), "fuse",
                   "the loop tir.For#0 must start at 0")


def test_fuse_annotated_or_bound_loops(schedule_error):
    @T.prim_func
    def annotated(A: T.Buffer((16, 32), "float32")):
        for i in T.serial(16, annotations={"pragma": 1}):
            for j in T.serial(32):
                with T.block("A"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    A[vi, vj] = T.float32(0)

    @T.prim_func
    def bound(A: T.Buffer((16, 32), "float32")):
        for i in T.thread_binding(16, thread="blockIdx.x"):
            for j in T.serial(32):
                with T.block("A"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    A[vi, vj] = T.float32(0)

    for func in (annotated, bound):
        schedule_error(func, lambda sch: sch.fuse(*sch.get_loops(sch.get_block("A"))), "fuse",
                       "without annotations or thread bindings can be fused")


def test_fuse_extent_depending_on_an_outer_loop(schedule_error):
    @T.prim_func
    def triangle(A: T.Buffer((16, 16), "float32")):
        for i in T.serial(16):
            for j in T.serial(i + 1):
                with T.block("A"):
                    vi = T.axis.spatial(16, i)
                    vj = T.axis.spatial(16, j)
                    A[vi, vj] = T.float32(0)

    schedule_error(triangle, lambda sch: sch.fuse(*sch.get_loops(sch.get_block("A"))), "fuse",
                   "depends on another of the loops being fused")
