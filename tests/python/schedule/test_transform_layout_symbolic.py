"""transform_layout with maps over symbolic shapes: products of an index by a shape variable
(flattening a buffer whose extent is a variable), the shape of the image, indices of unit
iterators dropped, and the refusals that remain."""

import numpy as np

import tessera as ts
from tessera import tir
from tessera.ir import assert_structural_equal
from tessera.script import tir as T

from conftest import as_main


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
