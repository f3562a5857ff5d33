"""IndexMap.is_equivalent_to / IndexMap.inverse, suggest_index_map (the layout under which an
access walks its buffer in loop order) and get_auto_tensorize_mapping_info (how a block's
iterators fuse onto a tensor intrinsic's)."""

import pytest

from tessera import te, tir
from tessera.error import TesseraValueError
from tessera.script import tir as T
from tessera.tir import floordiv, floormod
from tessera.tir.schedule.analysis import get_auto_tensorize_mapping_info, suggest_index_map

IndexMap = tir.IndexMap


def _loops(pairs):
    return [tir.For(v, 0, n, tir.ForKind.SERIAL, tir.Evaluate(0)) for v, n in pairs]


def test_equivalence_is_up_to_arithmetic_and_index_type():
    a = IndexMap.from_func(lambda i, j: (i * 4 + j, j), index_dtype="int32")
    b = IndexMap.from_func(lambda x, y: (y + x * 4, y))  # int64 indices
    assert a.is_equivalent_to(b) and b.is_equivalent_to(a)
    assert not a.is_equivalent_to(IndexMap.from_func(lambda i, j: (i * 4 + j, i)))
    assert not a.is_equivalent_to(IndexMap.from_func(lambda i, j: (i,)))
    assert not a.is_equivalent_to(IndexMap.from_func(lambda i: (i, i)))


def test_inverse_of_split_and_fuse():
    m = IndexMap.from_func(lambda i, j: (i // 4, j, i % 4))
    inv = m.inverse([16, 3])
    assert inv.is_equivalent_to(IndexMap.from_func(lambda a, b, c: (a * 4 + c, b)))
    fused = IndexMap.from_func(lambda i, j: (i % 2 * 8 + j // 4, j % 4, i // 2))
    back = fused.inverse([6, 32])
    assert back.is_equivalent_to(IndexMap.from_func(lambda a, b, c: (c * 2 + a // 8, a % 8 * 4 + b)))


def test_inverse_of_non_bijection_is_an_error():
    with pytest.raises(TesseraValueError, match="not a bijection"):
        IndexMap.from_func(lambda i, j: (i + j,)).inverse([4, 4])
    with pytest.raises(TesseraValueError, match="3 dimensions"):
        IndexMap.from_func(lambda i: (i,)).inverse([4, 4, 4])


def test_suggest_orders_pieces_by_loop():
    i, j = tir.Var("i", "int32"), tir.Var("j", "int32")
    # buffer[j % 8 * 4 + i]: i walks the inner 4 elements, j the outer 8.
    m = suggest_index_map(tir.decl_buffer((32,)), [floormod(j, 8) * 4 + i], _loops([(i, 4), (j, 16)]), True)
    assert m.is_equivalent_to(IndexMap.from_func(lambda x: (x % 4, x // 4)))
    assert m.inverse([32]).is_equivalent_to(IndexMap.from_func(lambda a, b: (b * 4 + a,)))


def test_suggest_merges_digits_across_dimensions():
    f, c = tir.Var("f", "int32"), tir.Var("c", "int32")
    # buffer[f // 4, f % 4 * 8 + c] over (4, 32): the flat index is f * 8 + c, one walk of f then c.
    m = suggest_index_map(tir.decl_buffer((4, 32)), [floordiv(f, 4), floormod(f, 4) * 8 + c],
                          _loops([(f, 16), (c, 8)]), True)
    assert m.is_equivalent_to(IndexMap.from_func(lambda a, b: (a * 4 + b // 8, b % 8)))


def test_suggest_non_affine_gives_none():
    i, j = tir.Var("i", "int32"), tir.Var("j", "int32")
    assert suggest_index_map(tir.decl_buffer((64,)), [i * j], _loops([(i, 8), (j, 8)]), True) is None


@T.prim_func
def mma_desc(a: T.handle, b: T.handle, c: T.handle):
    A = T.match_buffer(a, (4, 4), "float16")
    B = T.match_buffer(b, (4, 4), "float16")
    C = T.match_buffer(c, (4, 4), "float32")
    with T.block("root"):
        T.reads(C[0:4, 0:4], A[0:4, 0:4], B[0:4, 0:4])
        T.writes(C[0:4, 0:4])
        for i, j, k in T.grid(4, 4, 4):
            with T.block("update"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                C[vi, vj] = C[vi, vj] + T.Cast("float32", A[vi, vk]) * T.Cast("float32", B[vk, vj])


def _batch_matmul(dtype="float16"):
    x = te.placeholder((2, 8, 12), name="X", dtype=dtype)
    y = te.placeholder((2, 12, 16), name="Y", dtype=dtype)
    k = te.reduce_axis((0, 12), name="k")
    z = te.compute((2, 8, 16), lambda b, i, j: te.sum(x[b, i, k].astype("float32") * y[b, k, j].astype("float32"),
                                                      axis=[k]), name="Z")
    return te.create_prim_func([x, y, z])


def test_auto_tensorize_keeps_unmatched_iterators_first():
    sch = tir.Schedule(_batch_matmul())
    info = get_auto_tensorize_mapping_info(sch, sch.get_block("Z"), mma_desc)
    assert len(info.mappings) == 1
    assert info.mappings[0].is_equivalent_to(IndexMap.from_func(lambda b, i, j, k: (b, i, j, k)))
    assert len(info.lhs_iters) == 4 and len(info.rhs_iters) == 3
    assert {buf.name for buf in info.lhs_buffer_map} == {"X", "Y", "Z"}


def test_auto_tensorize_fuses_iterators_of_one_role():
    x = te.placeholder((2, 3, 5, 7), name="X", dtype="float16")
    w = te.placeholder((5, 7, 6), name="W", dtype="float16")
    r0 = te.reduce_axis((0, 5), name="r0")
    r1 = te.reduce_axis((0, 7), name="r1")
    out = te.compute((2, 3, 6), lambda n, h, c: te.sum(
        x[n, h, r0, r1].astype("float32") * w[r0, r1, c].astype("float32"), axis=[r0, r1]), name="O")
    sch = tir.Schedule(te.create_prim_func([x, w, out]))
    info = get_auto_tensorize_mapping_info(sch, sch.get_block("O"), mma_desc)
    assert info.mappings[0].is_equivalent_to(
        IndexMap.from_func(lambda n, h, c, r0, r1: (n * 3 + h, c, r0 * 7 + r1)))


def test_auto_tensorize_other_computation_gives_none():
    a = te.placeholder((8, 8), name="A", dtype="float16")
    b = te.placeholder((8, 8), name="B", dtype="float16")
    k = te.reduce_axis((0, 8), name="k")
    # A product of float16 values (no casts): a different expression from the description's.
    c = te.compute((8, 8), lambda i, j: te.sum(a[i, k] * b[k, j], axis=[k]), name="C")
    sch = tir.Schedule(te.create_prim_func([a, b, c]))
    assert get_auto_tensorize_mapping_info(sch, sch.get_block("C"), mma_desc) is None
