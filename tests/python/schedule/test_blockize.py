"""blockize: the subtree of a loop becomes a new outer block."""

import pytest

from tessera.script import tir as T


@T.prim_func
def tiled(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32")):
    for i_0, j_0, i_1, j_1 in T.grid(8, 8, 16, 16):
        with T.block("B"):
            vi = T.axis.spatial(128, i_0 * 16 + i_1)
            vj = T.axis.spatial(128, j_0 * 16 + j_1)
            B[vi, vj] = A[vi, vj] * T.float32(2)


def test_blockize_tile(golden):
    @T.prim_func
    def expected(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32")):
        for i_0, j_0 in T.grid(8, 8):
            with T.block("B_o"):
                vi_o, vj_o = T.axis.remap("SS", [i_0, j_0])
                T.reads(A[vi_o * 16:vi_o * 16 + 16, vj_o * 16:vj_o * 16 + 16])
                T.writes(B[vi_o * 16:vi_o * 16 + 16, vj_o * 16:vj_o * 16 + 16])
                for i_1, j_1 in T.grid(16, 16):
                    with T.block("B"):
                        vi_i, vj_i = T.axis.remap("SS", [i_1, j_1])
                        B[vi_o * 16 + vi_i, vj_o * 16 + vj_i] = A[vi_o * 16 + vi_i, vj_o * 16 + vj_i] * T.float32(2)

    def apply(sch):
        outer = sch.blockize(sch.get_loops(sch.get_block("B"))[2])
        assert sch.get(outer).name_hint == "B_o"
        assert len(sch.get_loops(sch.get_block("B"))) == 2

    golden(tiled, expected, apply)


def test_blockize_reduction_moves_init_outward(golden):
    @T.prim_func
    def matmul(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"),
               C: T.Buffer((64, 64), "float32")):
        for i, j, k_0, k_1 in T.grid(64, 64, 16, 4):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                vk = T.axis.reduce(64, k_0 * 4 + k_1)
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]

    @T.prim_func
    def expected(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"),
                 C: T.Buffer((64, 64), "float32")):
        for i, j, k_0 in T.grid(64, 64, 16):
            with T.block("C_o"):
                vi, vj, vk_o = T.axis.remap("SSR", [i, j, k_0])
                T.reads(A[vi, vk_o * 4:vk_o * 4 + 4], B[vk_o * 4:vk_o * 4 + 4, vj])
                T.writes(C[vi, vj])
                with T.init():
                    # As TVM, the init moves outward as a block of its own.
                    with T.block("C_init"):
                        T.reads()
                        T.writes(C[vi, vj])
                        C[vi, vj] = T.float32(0)
                for k_1 in T.serial(4):
                    with T.block("C"):
                        vk_i = T.axis.reduce(4, k_1)
                        C[vi, vj] = C[vi, vj] + A[vi, vk_o * 4 + vk_i] * B[vk_o * 4 + vk_i, vj]

    golden(matmul, expected, lambda sch: sch.blockize(sch.get_loops(sch.get_block("C"))[3]))


def test_blockize_sibling_blocks(golden):
    @T.prim_func
    def two(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
        for i in T.serial(16):
            with T.block("B"):
                vi = T.axis.spatial(16, i)
                B[vi] = A[vi]
            with T.block("C"):
                vi = T.axis.spatial(16, i)
                C[vi] = A[vi] + T.float32(1)

    @T.prim_func
    def expected(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
        for i in T.serial(16):
            with T.block("B_o"):
                T.reads(A[i])
                T.writes(B[i], C[i])
                with T.block("B"):
                    vi = T.axis.spatial(16, i)
                    B[vi] = A[vi]
                with T.block("C"):
                    vi = T.axis.spatial(16, i)
                    C[vi] = A[vi] + T.float32(1)

    golden(two, expected, lambda sch: sch.blockize([sch.get_block("B"), sch.get_block("C")]))


# ---- checks ----


def test_blockize_binding_not_expressible(schedule_error):
    @T.prim_func
    def fused(A: T.Buffer((16, 16), "float32")):
        for f_0, f_1 in T.grid(32, 8):
            with T.block("A"):
                vi = T.axis.spatial(16, (f_0 * 8 + f_1) // 16)
                vj = T.axis.spatial(16, (f_0 * 8 + f_1) % 16)
                A[vi, vj] = T.float32(0)

    schedule_error(fused, lambda sch: sch.blockize(sch.get_loops(sch.get_block("A"))[1]), "blockize",
                   "cannot be split into a part over the loops outside tir.For#1")


def test_blockize_outer_part_not_a_multiple(schedule_error):
    @T.prim_func
    def odd(A: T.Buffer((24,), "float32")):
        for i_0, i_1 in T.grid(4, 4):
            with T.block("A"):
                vi = T.axis.spatial(24, i_0 * 6 + i_1)
                A[vi] = T.float32(0)

    schedule_error(odd, lambda sch: sch.blockize(sch.get_loops(sch.get_block("A"))[1]), "blockize",
                   "cannot be split into a part over the loops outside")


def test_blockize_loop_with_two_blocks(schedule_error):
    @T.prim_func
    def two(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        for i in T.serial(16):
            with T.block("A"):
                vi = T.axis.spatial(16, i)
                A[vi] = T.float32(0)
            with T.block("B"):
                vi = T.axis.spatial(16, i)
                B[vi] = T.float32(0)

    schedule_error(two, lambda sch: sch.blockize(sch.get_loops(sch.get_block("A"))[0]), "blockize",
                   "expects exactly one block under the loop")


def test_blockize_whole_nest_gives_unit_outer_iterators(golden):
    # As TVM: an iterator bound wholly inside the blockized loop keeps an outer iterator of
    # extent 1 bound to 0; one bound wholly outside has no inner iterator.
    @T.prim_func
    def copy(A: T.Buffer((16, 8), "float32"), B: T.Buffer((16, 8), "float32")):
        for i, j in T.grid(16, 8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj]

    @T.prim_func
    def whole(A: T.Buffer((16, 8), "float32"), B: T.Buffer((16, 8), "float32")):
        with T.block("B_o"):
            vi_o = T.axis.spatial(1, 0)
            vj_o = T.axis.spatial(1, 0)
            T.reads(A[0:16, 0:8])
            T.writes(B[0:16, 0:8])
            for i, j in T.grid(16, 8):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi, vj] = A[vi, vj]

    @T.prim_func
    def inner(A: T.Buffer((16, 8), "float32"), B: T.Buffer((16, 8), "float32")):
        for i in T.serial(16):
            with T.block("B_o"):
                vi = T.axis.spatial(16, i)
                vj_o = T.axis.spatial(1, 0)
                T.reads(A[vi, 0:8])
                T.writes(B[vi, 0:8])
                for j in T.serial(8):
                    with T.block("B"):
                        vj = T.axis.spatial(8, j)
                        B[vi, vj] = A[vi, vj]

    golden(copy, whole, lambda sch: sch.blockize(sch.get_loops(sch.get_block("B"))[0]))
    golden(copy, inner, lambda sch: sch.blockize(sch.get_loops(sch.get_block("B"))[1]))


def test_blockize_init_over_inner_spatial_loops(golden):
    # The moved init iterates over the inner spatial iterators it uses, under copies of their
    # loops (as TVM).
    @T.prim_func
    def rowsum(A: T.Buffer((8, 16), "float32"), B: T.Buffer((8,), "float32")):
        for k, i in T.grid(16, 8):
            with T.block("B"):
                vk, vi = T.axis.remap("RS", [k, i])
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vk]

    @T.prim_func
    def expected(A: T.Buffer((8, 16), "float32"), B: T.Buffer((8,), "float32")):
        with T.block("B_o"):
            vk_o = T.axis.reduce(1, 0)
            vi_o = T.axis.spatial(1, 0)
            T.reads(A[0:8, 0:16])
            T.writes(B[0:8])
            with T.init():
                for i in T.serial(8):
                    with T.block("B_init"):
                        vi_init = T.axis.spatial(8, i)
                        T.reads()
                        T.writes(B[vi_init])
                        B[vi_init] = T.float32(0)
            for k, i in T.grid(16, 8):
                with T.block("B"):
                    vk, vi = T.axis.remap("RS", [k, i])
                    T.reads(B[vi], A[vi, vk])
                    T.writes(B[vi])
                    B[vi] = B[vi] + A[vi, vk]

    golden(rowsum, expected, lambda sch: sch.blockize(sch.get_loops(sch.get_block("B"))[0]))


@T.prim_func
def unit_outer_loop(A: T.Buffer((16, 32), "float32"), B: T.Buffer((16, 32), "float32")):
    for i0, j0, i1, j1 in T.grid(1, 2, 16, 16):
        with T.block("B"):
            vi = T.axis.spatial(16, i0 * 16 + i1)
            vj = T.axis.spatial(32, j0 * 16 + j1)
            B[vi, vj] = A[vi, vj]


@pytest.mark.parametrize("preserve_unit_iters", [True, False])
def test_blockize_unit_outer_loop_simplified(golden, preserve_unit_iters):
    # As TVM's analyzer: an outer iterator of extent 1 is 0 in the inner block, and without
    # preserve_unit_iters a loop of extent 1 binds as its start.
    @T.prim_func
    def expected(A: T.Buffer((16, 32), "float32"), B: T.Buffer((16, 32), "float32")):
        for i0, j0 in T.grid(1, 2):
            with T.block("B_o"):
                vi_o = T.axis.spatial(1, i0 if preserve_unit_iters else 0)
                vj_o = T.axis.spatial(2, j0)
                T.reads(A[0:16, vj_o * 16:vj_o * 16 + 16])
                T.writes(B[0:16, vj_o * 16:vj_o * 16 + 16])
                for i1, j1 in T.grid(16, 16):
                    with T.block("B"):
                        vi_i, vj_i = T.axis.remap("SS", [i1, j1])
                        B[vi_i, vj_o * 16 + vj_i] = A[vi_i, vj_o * 16 + vj_i]

    golden(unit_outer_loop, expected, lambda sch: sch.blockize(
        sch.get_loops(sch.get_block("B"))[2], preserve_unit_iters=preserve_unit_iters))
