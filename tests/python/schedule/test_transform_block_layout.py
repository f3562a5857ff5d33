"""transform_block_layout: a block's iteration space re-laid by a bijective affine map."""

import pytest

from tessera.script import tir as T


@T.prim_func
def elementwise(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32")):
    for i, j in T.grid(128, 128):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)


@T.prim_func
def reduction(A: T.Buffer((1, 4, 8, 3), "float32"), B: T.Buffer((1, 4, 8), "float32")):
    for n, h, w, k in T.grid(1, 4, 8, 3):
        with T.block("B"):
            vn, vh, vw, vk = T.axis.remap("SSSR", [n, h, w, k])
            with T.init():
                B[vn, vh, vw] = T.float32(0)
            B[vn, vh, vw] = B[vn, vh, vw] + A[vn, vh, vw, vk]


@T.prim_func
def unit_dim(A: T.Buffer((1, 128), "float32"), B: T.Buffer((1, 128), "float32")):
    for i, j in T.grid(1, 128):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)


def test_fuse_the_iterators(golden):
    @T.prim_func
    def expected(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32")):
        for i in range(16384):
            with T.block("B"):
                vi = T.axis.remap("S", [i])
                B[vi // 128, vi % 128] = A[vi // 128, vi % 128] * T.float32(2)

    def apply(sch):
        sch.transform_block_layout(sch.get_block("B"), lambda i, j: (i * 128 + j,))
        assert sch.trace.as_python()[-1] == (
            "sch.transform_block_layout(block=b0, index_map=lambda i, j: (i * 128 + j,))")

    golden(elementwise, expected, apply)


def test_reduction_keeps_iterator_kinds(golden):
    @T.prim_func
    def expected(A: T.Buffer((1, 4, 8, 3), "float32"), B: T.Buffer((1, 4, 8), "float32")):
        for ax0, ax1 in T.grid(32, 3):
            with T.block("B"):
                v0, v1 = T.axis.remap("SR", [ax0, ax1])
                with T.init():
                    B[0, v0 // 8, v0 % 8] = T.float32(0)
                B[0, v0 // 8, v0 % 8] = B[0, v0 // 8, v0 % 8] + A[0, v0 // 8, v0 % 8, v1]

    golden(reduction, expected, lambda sch: sch.transform_block_layout(
        sch.get_block("B"), lambda n, h, w, k: (n * 32 + h * 8 + w, k)))


def test_permutation_with_a_unit_dimension(golden):
    @T.prim_func
    def expected(A: T.Buffer((1, 128), "float32"), B: T.Buffer((1, 128), "float32")):
        for j, i in T.grid(128, 1):
            with T.block("B"):
                vj, vi = T.axis.remap("SS", [j, i])
                B[vi, vj] = A[vi, vj] * T.float32(2)

    golden(unit_dim, expected,
           lambda sch: sch.transform_block_layout(sch.get_block("B"), lambda i, j: (j, i)))


def test_non_bijective_map_fails(schedule_error):
    schedule_error(elementwise,
                   lambda sch: sch.transform_block_layout(sch.get_block("B"), lambda i, j: (i + j,)),
                   "transform_block_layout", "is not an affine bijection")


def test_mixed_iterator_kinds_fail(schedule_error):
    schedule_error(reduction, lambda sch: sch.transform_block_layout(
        sch.get_block("B"), lambda n, h, w, k: (n * 32 + h * 8 + w * 3 + k,)),
        "transform_block_layout", "mixes iterators of different kinds")


def test_non_trivial_binding_fails(schedule_error):
    def setup(sch):
        i, _ = sch.get_loops(sch.get_block("B"))
        sch.split(i, factors=[None, 16])

    schedule_error(elementwise,
                   lambda sch, _: sch.transform_block_layout(sch.get_block("B"), lambda i, j: (j, i)),
                   "transform_block_layout", "must be bound to a distinct loop variable", setup=setup)


@T.prim_func
def unit_reduction(A: T.Buffer((4, 8, 3), "float32"), B: T.Buffer((4, 8), "float32")):
    for h, w, k, u in T.grid(4, 8, 3, 1):
        with T.block("B"):
            vh, vw, vk, vu = T.axis.remap("SSRR", [h, w, k, u])
            with T.init():
                B[vh, vw] = T.float32(0)
            B[vh, vw] = B[vh, vw] + A[vh, vw + vu, vk]


def test_unit_reduction_iterator_keeps_its_kind():
    """A reduction iterator of extent 1 mapped on its own stays a reduction (it was made
    spatial: a 1x1 convolution's window iterators)."""
    from tessera import tir

    sch = tir.Schedule(unit_reduction)
    block = sch.get_block("B")
    sch.transform_block_layout(block, lambda h, w, k, u: (h * 8 + w, k, u))
    script = sch.mod.script()
    assert 'T.axis.remap("SRR"' in script
