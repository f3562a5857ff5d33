"""transform_layout with maps over symbolic shapes: products of an index by a shape variable
(flattening a buffer whose extent is a variable), the shape of the image, indices of unit
iterators dropped, and the refusals that remain."""

import numpy as np

import tessera as ts
from tessera import tir
from tessera.ir import assert_structural_equal
from tessera import _core
from tessera.script import tir as T


def as_main(func):
    return func.with_attr("global_symbol", _core.StringImm("main"))


@T.prim_func
def rowsum(a: T.handle, c: T.handle):
    m = T.int32()
    A = T.match_buffer(a, (4, m), "float32")
    C = T.match_buffer(c, (1, 4, m), "float32")
    for u, i, j in T.grid(1, 4, m):
        with T.block("C"):
            vu, vi, vj = T.axis.remap("SSS", [u, i, j])
            C[vu, vi, vj] = A[vi, vj] * T.float32(2)


def flatten_with_m(func):
    m = func.buffer_map[func.params[0]].shape[1]
    return lambda u, i, j: u * 4 * m + i * m + j


def test_flatten_by_a_shape_variable():
    """(The map names the function's own shape variable, so the trace cannot replay it alone.)"""
    @T.prim_func
    def expected(a: T.handle, c: T.handle):
        m = T.int32()
        A = T.match_buffer(a, (4, m), "float32")
        C = T.match_buffer(c, (m * 4,), "float32")
        for u, i, j in T.grid(1, 4, m):
            with T.block("C"):
                vu, vi, vj = T.axis.remap("SSS", [u, i, j])
                C[vi * m + vj] = A[vi, vj] * T.float32(2)

    sch = tir.Schedule(as_main(rowsum), debug_mask="all")
    sch.transform_layout(sch.get_block("C"), ("write", 0), flatten_with_m(rowsum),
                         assume_injective_transform=True)
    assert_structural_equal(sch.mod["main"], as_main(expected))


def test_flatten_by_a_shape_variable_numbers():
    sch = tir.Schedule(rowsum)
    sch.transform_layout("C", "C", flatten_with_m(rowsum), assume_injective_transform=True)
    lib = ts.build(sch.mod, target="c")
    a = np.random.RandomState(0).rand(4, 5).astype("float32")
    c = ts.nd.array(np.zeros((20,), "float32"))
    lib(ts.nd.array(a), c)
    np.testing.assert_allclose(c.numpy(), (a * 2).reshape(-1), rtol=1e-6)


def test_unit_index_kept_when_alone(golden):
    """An index that is a unit iterator alone stays (only sums drop it)."""
    @T.prim_func
    def expected(a: T.handle, c: T.handle):
        m = T.int32()
        A = T.match_buffer(a, (4, m), "float32")
        C = T.match_buffer(c, (4, 1, m), "float32")
        for u, i, j in T.grid(1, 4, m):
            with T.block("C"):
                vu, vi, vj = T.axis.remap("SSS", [u, i, j])
                C[vi, vu, vj] = A[vi, vj] * T.float32(2)

    golden(rowsum, expected,
           lambda sch: sch.transform_layout("C", "C", lambda u, i, j: (i, u, j)))


def test_symbolic_product_without_injectivity_is_refused(schedule_error):
    schedule_error(rowsum,
                   lambda sch: sch.transform_layout("C", "C", flatten_with_m(rowsum)),
                   "transform_layout", "permutations of the indices only")


def test_product_of_two_indices_is_refused(schedule_error):
    schedule_error(rowsum,
                   lambda sch: sch.transform_layout("C", "C", lambda u, i, j: (u, i * j),
                                                    assume_injective_transform=True),
                   "transform_layout", "is not a quasi-affine expression")


@T.prim_func
def rowsum_reduce(a: T.handle, c: T.handle):
    m = T.int32()
    A = T.match_buffer(a, (4, m, 3), "float32")
    C = T.match_buffer(c, (m * 4,), "float32")
    for u, i, j, k in T.grid(1, 4, m, 3):
        with T.block("C"):
            vu, vi, vj, vk = T.axis.remap("SSSR", [u, i, j, k])
            with T.init():
                C[vi * m + vj] = T.float32(0)
            C[vi * m + vj] = C[vi * m + vj] + A[vi, vj, vk]


def fuse_with_m(func):
    m = func.buffer_map[func.params[0]].shape[1]
    return lambda u, i, j, k: (u * 4 * m + i * m + j, k)


def test_block_layout_fused_over_a_shape_variable():
    """The new iterator spans m * 4; i and j come back as v0 // m and v0 % m, u as 0."""
    @T.prim_func
    def expected(a: T.handle, c: T.handle):
        m = T.int32()
        A = T.match_buffer(a, (4, m, 3), "float32")
        C = T.match_buffer(c, (m * 4,), "float32")
        for ax0, ax1 in T.grid(m * 4, 3):
            with T.block("C"):
                v0, v1 = T.axis.remap("SR", [ax0, ax1])
                with T.init():
                    C[v0] = T.float32(0)
                C[v0] = C[v0] + A[v0 // m, v0 % m, v1]

    sch = tir.Schedule(as_main(rowsum_reduce), debug_mask="all")
    sch.transform_block_layout(sch.get_block("C"), fuse_with_m(rowsum_reduce))
    assert_structural_equal(sch.mod["main"], as_main(expected))
    lib = ts.build(sch.mod, target="c")
    a = np.random.RandomState(1).rand(4, 5, 3).astype("float32")
    c = ts.nd.array(np.zeros((20,), "float32"))
    lib(ts.nd.array(a), c)
    np.testing.assert_allclose(c.numpy(), a.sum(axis=2).reshape(-1), rtol=1e-5)


def test_block_layout_symbolic_strides_that_do_not_tile_are_refused(schedule_error):
    """Each factor must be the product of the extents fused before it."""
    m = rowsum_reduce.buffer_map[rowsum_reduce.params[0]].shape[1]
    schedule_error(rowsum_reduce,
                   lambda sch: sch.transform_block_layout("C", lambda u, i, j, k: (u + i * m + j * 2, k)),
                   "transform_block_layout", "is not an affine bijection")
    schedule_error(rowsum_reduce,
                   lambda sch: sch.transform_block_layout("C", lambda u, i, j, k: (u + i * m + j * m, k)),
                   "transform_block_layout", "is not an affine bijection")
