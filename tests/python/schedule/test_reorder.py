"""reorder: permute the loops of one single-branch chain."""

from tessera.script import tir as T


@T.prim_func
def elementwise(A: T.Buffer((16, 32, 8), "float32"), B: T.Buffer((16, 32, 8), "float32")):
    for i, j, k in T.grid(16, 32, 8):
        with T.block("B"):
            vi, vj, vk = T.axis.remap("SSS", [i, j, k])
            B[vi, vj, vk] = A[vi, vj, vk] * T.float32(2)


@T.prim_func
def matmul(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"),
           C: T.Buffer((64, 64), "float32")):
    for i, j, k in T.grid(64, 64, 64):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


def test_reorder_reverses_loops(golden):
    @T.prim_func
    def expected(A: T.Buffer((16, 32, 8), "float32"), B: T.Buffer((16, 32, 8), "float32")):
        for k, j, i in T.grid(8, 32, 16):
            with T.block("B"):
                vi, vj, vk = T.axis.remap("SSS", [i, j, k])
                B[vi, vj, vk] = A[vi, vj, vk] * T.float32(2)

    def apply(sch):
        i, j, k = sch.get_loops(sch.get_block("B"))
        sch.reorder(k, j, i)

    golden(elementwise, expected, apply)


def test_reorder_keeps_unlisted_loops_in_place(golden):
    @T.prim_func
    def expected(A: T.Buffer((16, 32, 8), "float32"), B: T.Buffer((16, 32, 8), "float32")):
        for k, j, i in T.grid(8, 32, 16):
            with T.block("B"):
                vi, vj, vk = T.axis.remap("SSS", [i, j, k])
                B[vi, vj, vk] = A[vi, vj, vk] * T.float32(2)

    def apply(sch):
        i, _, k = sch.get_loops(sch.get_block("B"))
        sch.reorder(k, i)

    golden(elementwise, expected, apply)


def test_reorder_reduction_loop_outward(golden):
    @T.prim_func
    def expected(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"),
                 C: T.Buffer((64, 64), "float32")):
        for i, k, j in T.grid(64, 64, 64):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]

    def apply(sch):
        _, j, k = sch.get_loops(sch.get_block("C"))
        sch.reorder(k, j)

    golden(matmul, expected, apply)


def test_reorder_after_split(golden):
    @T.prim_func
    def expected(A: T.Buffer((16, 32, 8), "float32"), B: T.Buffer((16, 32, 8), "float32")):
        for i_0, j, i_1, k in T.grid(4, 32, 4, 8):
            with T.block("B"):
                vi = T.axis.spatial(16, i_0 * 4 + i_1)
                vj, vk = T.axis.remap("SS", [j, k])
                B[vi, vj, vk] = A[vi, vj, vk] * T.float32(2)

    def apply(sch):
        i, j, _ = sch.get_loops(sch.get_block("B"))
        i0, i1 = sch.split(i, factors=[4, 4])
        sch.reorder(i0, j, i1)

    golden(elementwise, expected, apply)


# ---- checks ----


def test_reorder_loop_listed_twice(schedule_error):
    def apply(sch):
        i, j, _ = sch.get_loops(sch.get_block("B"))
        sch.reorder(i, j, i)

    schedule_error(elementwise, apply, "reorder", "appears more than once")


@T.prim_func
def two_branches(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32")):
    for i in T.serial(16):
        for j in T.serial(16):
            with T.block("A"):
                vi, vj = T.axis.remap("SS", [i, j])
                A[vi, vj] = T.float32(0)
        for j in T.serial(16):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = T.float32(1)


def test_reorder_loops_not_in_one_chain(schedule_error):
    def apply(sch):
        _, ja = sch.get_loops(sch.get_block("A"))
        _, jb = sch.get_loops(sch.get_block("B"))
        sch.reorder(jb, ja)

    schedule_error(two_branches, apply, "reorder", "are not ancestor and descendant of each other")


def test_reorder_chain_must_be_single_branch(schedule_error):
    def apply(sch):
        i, j = sch.get_loops(sch.get_block("A"))
        sch.reorder(j, i)

    schedule_error(two_branches, apply, "reorder", "must form a single-branch chain")


def test_reorder_block_with_opaque_iterator(schedule_error):
    @T.prim_func
    def opaque(A: T.Buffer((16, 16), "float32")):
        for i, j in T.grid(16, 16):
            with T.block("A"):
                vi = T.axis.opaque(16, i)
                vj = T.axis.spatial(16, j)
                A[vi, vj] = T.float32(0)

    def apply(sch):
        i, j = sch.get_loops(sch.get_block("A"))
        sch.reorder(j, i)

    schedule_error(opaque, apply, "reorder", "neither spatial nor reduction")


def test_reorder_block_without_affine_bindings(schedule_error):
    @T.prim_func
    def squared(A: T.Buffer((256, 16), "float32")):
        for i, j in T.grid(16, 16):
            with T.block("A"):
                vi = T.axis.spatial(256, i * i)
                vj = T.axis.spatial(16, j)
                A[vi, vj] = T.float32(0)

    def apply(sch):
        i, j = sch.get_loops(sch.get_block("A"))
        sch.reorder(j, i)

    schedule_error(squared, apply, "reorder", "does not have affine bindings")


def test_reorder_block_with_a_scaled_binding(schedule_error):
    # As TVM: `l * 16` covers only every 16th index of vl's domain (not surjective), so the
    # binding is not affine; the message marks the block on a line of its own above it.
    @T.prim_func
    def strided(A: T.Buffer((4, 64), "float32")):
        for i, l in T.grid(4, 4):
            with T.block("A"):
                vi = T.axis.spatial(4, i)
                vl = T.axis.spatial(64, l * 16)
                A[vi, vl] = T.float32(0)

    def apply(sch):
        i, l = sch.get_loops(sch.get_block("A"))
        sch.reorder(l, i)

    message = schedule_error(strided, apply, "reorder", "does not have affine bindings")
    assert ('                    # tir.Block#0\n                    with T.block("A"):\n'
            '                    ^^^^^^^^^^^^^^^^^^\n') in message


def test_reorder_block_with_a_split_predicate(golden):
    # A split by a non-dividing factor bounds a binding; TVM reorders such loops.
    @T.prim_func
    def ragged(A: T.Buffer((10, 16), "float32")):
        for i, j in T.grid(10, 16):
            with T.block("A"):
                vi, vj = T.axis.remap("SS", [i, j])
                A[vi, vj] = T.float32(0)

    @T.prim_func
    def expected(A: T.Buffer((10, 16), "float32")):
        for j, i_1, i_0 in T.grid(16, 4, 3):
            with T.block("A"):
                vi = T.axis.spatial(10, i_0 * 4 + i_1)
                vj = T.axis.spatial(16, j)
                T.where(i_0 * 4 + i_1 < 10)
                A[vi, vj] = T.float32(0)

    def apply(sch):
        i, j = sch.get_loops(sch.get_block("A"))
        i0, i1 = sch.split(i, factors=[None, 4])
        sch.reorder(j, i1, i0)

    golden(ragged, expected, apply)


def test_reorder_block_with_a_predicate_of_a_three_way_split(golden):
    # A split into three by a non-dividing factor leaves the predicate as (i_0 * 2 + i_1) * 2
    # + i_2 < 10 beside the binding i_0 * 4 + i_1 * 2 + i_2: the same bound, up to arithmetic.
    @T.prim_func
    def ragged(A: T.Buffer((10, 16), "float32")):
        for i, j in T.grid(10, 16):
            with T.block("A"):
                vi, vj = T.axis.remap("SS", [i, j])
                A[vi, vj] = T.float32(0)

    @T.prim_func
    def expected(A: T.Buffer((10, 16), "float32")):
        for j, i_0, i_1, i_2 in T.grid(16, 3, 2, 2):
            with T.block("A"):
                vi = T.axis.spatial(10, i_0 * 4 + i_1 * 2 + i_2)
                vj = T.axis.spatial(16, j)
                T.where((i_0 * 2 + i_1) * 2 + i_2 < 10)
                A[vi, vj] = T.float32(0)

    def apply(sch):
        i, j = sch.get_loops(sch.get_block("A"))
        i0, i1, i2 = sch.split(i, factors=[None, 2, 2])
        sch.reorder(j, i0, i1, i2)

    golden(ragged, expected, apply)


def test_reorder_block_with_other_predicate(schedule_error):
    @T.prim_func
    def predicated(A: T.Buffer((16, 16), "float32")):
        for i, j in T.grid(16, 16):
            with T.block("A"):
                T.where(i * 16 + j < 100)
                vi, vj = T.axis.remap("SS", [i, j])
                A[vi, vj] = T.float32(0)

    def apply(sch):
        i, j = sch.get_loops(sch.get_block("A"))
        sch.reorder(j, i)

    schedule_error(predicated, apply, "reorder", "has a predicate (T.where)")


def test_reorder_extent_depending_on_a_listed_loop(schedule_error):
    @T.prim_func
    def triangle(A: T.Buffer((16, 16), "float32")):
        for i in T.serial(16):
            for j in T.serial(i + 1):
                with T.block("A"):
                    vi = T.axis.spatial(16, i)
                    vj = T.axis.spatial(16, j)
                    A[vi, vj] = T.float32(0)

    def apply(sch):
        i, j = sch.get_loops(sch.get_block("A"))
        sch.reorder(j, i)

    schedule_error(triangle, apply, "reorder", "depends on another loop of the chain")


def test_reorder_below_a_non_affine_outer_loop(golden, schedule_error):
    """As TVM: the bindings need to be affine only in the reordered loops and those below; an
    outer loop (here squared) is a constant of them."""
    @T.prim_func
    def squared(A: T.Buffer((14, 4), "float32"), B: T.Buffer((14, 4), "float32")):
        for v0, v1, v2 in T.grid(3, 4, 4):
            with T.block("B"):
                i = T.axis.spatial(14, v0 * v0 + v1)
                j = T.axis.spatial(4, v2)
                B[i, j] = A[i, j] + T.float32(1)

    @T.prim_func
    def expected(A: T.Buffer((14, 4), "float32"), B: T.Buffer((14, 4), "float32")):
        for v0, v2, v1 in T.grid(3, 4, 4):
            with T.block("B"):
                i = T.axis.spatial(14, v0 * v0 + v1)
                j = T.axis.spatial(4, v2)
                B[i, j] = A[i, j] + T.float32(1)

    schedule_error(squared, lambda sch: sch.reorder(*[sch.get_loops(sch.get_block("B"))[k] for k in (0, 2, 1)]),
                   "reorder", "does not have affine bindings")
    golden(squared, expected, lambda sch: sch.reorder(*sch.get_loops(sch.get_block("B"))[:0:-1]))
