"""merge: loop nests of equal extents become one nest running their bodies in order."""

from tessera.script import tir as T


@T.prim_func
def three_stages(A: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32"),
                 D: T.Buffer((64, 64), "float32")):
    B = T.alloc_buffer((128, 128), "float32")
    for i, j in T.grid(128, 128):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i_0, j_0, i_1, j_1 in T.grid(8, 8, 16, 16):
        with T.block("C"):
            vi = T.axis.spatial(128, i_0 * 16 + i_1)
            vj = T.axis.spatial(128, j_0 * 16 + j_1)
            C[vi, vj] = B[vi, vj] + T.float32(1)
    for i_0, j_0, i_1, j_1 in T.grid(8, 8, 8, 8):
        with T.block("D"):
            vi = T.axis.spatial(64, i_0 * 8 + i_1)
            vj = T.axis.spatial(64, j_0 * 8 + j_1)
            D[vi, vj] = B[vi, vj] + T.float32(2)


def test_merge_outer_loops(golden):
    @T.prim_func
    def expected(A: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32"),
                 D: T.Buffer((64, 64), "float32")):
        B = T.alloc_buffer((128, 128), "float32")
        for i, j in T.grid(128, 128):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * T.float32(2)
        for i_0_m in range(8):
            for j_0, i_1, j_1 in T.grid(8, 16, 16):
                with T.block("C"):
                    vi = T.axis.spatial(128, i_0_m * 16 + i_1)
                    vj = T.axis.spatial(128, j_0 * 16 + j_1)
                    C[vi, vj] = B[vi, vj] + T.float32(1)
            for j_0, i_1, j_1 in T.grid(8, 8, 8):
                with T.block("D"):
                    vi = T.axis.spatial(64, i_0_m * 8 + i_1)
                    vj = T.axis.spatial(64, j_0 * 8 + j_1)
                    D[vi, vj] = B[vi, vj] + T.float32(2)

    def apply(sch):
        merged = sch.merge(sch.get_loops(sch.get_block("C"))[0], sch.get_loops(sch.get_block("D"))[0])
        assert sch.get(merged).loop_var.name == "i_0_m"
        assert sch.trace.as_python()[-1] == "l10 = sch.merge(l1, l6)"

    golden(three_stages, expected, apply)


def test_merge_two_levels(golden):
    @T.prim_func
    def expected(A: T.Buffer((128, 128), "float32"), C: T.Buffer((128, 128), "float32"),
                 D: T.Buffer((64, 64), "float32")):
        B = T.alloc_buffer((128, 128), "float32")
        for i, j in T.grid(128, 128):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * T.float32(2)
        for i_0_m, j_0_m in T.grid(8, 8):
            for i_1, j_1 in T.grid(16, 16):
                with T.block("C"):
                    vi = T.axis.spatial(128, i_0_m * 16 + i_1)
                    vj = T.axis.spatial(128, j_0_m * 16 + j_1)
                    C[vi, vj] = B[vi, vj] + T.float32(1)
            for i_1, j_1 in T.grid(8, 8):
                with T.block("D"):
                    vi = T.axis.spatial(64, i_0_m * 8 + i_1)
                    vj = T.axis.spatial(64, j_0_m * 8 + j_1)
                    D[vi, vj] = B[vi, vj] + T.float32(2)

    golden(three_stages, expected, lambda sch: sch.merge(
        sch.get_loops(sch.get_block("C"))[1], sch.get_loops(sch.get_block("D"))[1]))


def test_different_extents_fail(schedule_error):
    schedule_error(three_stages, lambda sch: sch.merge(
        sch.get_loops(sch.get_block("B"))[1], sch.get_loops(sch.get_block("C"))[0]),
        "merge", "the loop nests must have the same depth")
    schedule_error(three_stages, lambda sch: sch.merge(
        sch.get_loops(sch.get_block("B"))[0], sch.get_loops(sch.get_block("C"))[0]),
        "merge", "merge: loops at depth 0 have different extents, 128 and 8")
    schedule_error(three_stages, lambda sch: sch.merge(
        sch.get_loops(sch.get_block("C"))[2], sch.get_loops(sch.get_block("D"))[2]),
        "merge", "have different extents, 16 and 8")


def test_not_only_child_fails(schedule_error):
    @T.prim_func
    def branchy(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"),
                C: T.Buffer((16, 16), "float32")):
        for i in range(16):
            for j in range(16):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi, vj] = A[vi, vj]
            for j in range(16):
                with T.block("B2"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi, vj] = B[vi, vj] + A[vi, vj]
        for i, j in T.grid(16, 16):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vi, vj]

    schedule_error(branchy, lambda sch: sch.merge(
        sch.get_loops(sch.get_block("B"))[1], sch.get_loops(sch.get_block("C"))[1]),
        "merge", "must be the loop tir.For#1 alone")
