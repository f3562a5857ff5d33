"""The injective rule's partition of a choice among loads by an outer iterator (topi.stack, a
concatenation along an outer axis) on the CPU: the loop of the iterator is cut where the select's
tests change, each part is a vector copy of one input with no select left; results equal numpy's
for odd shapes, tails, every dtype, and blocks whose select tests something else keep their
schedule."""

import numpy as np
import pytest
import tessera as ts
from tessera import te, topi, tir

RNG = np.random.default_rng(17)
HOST = {"vector_bits": 512, "cores": 2, "l1_bytes": 32768, "l1_ways": 8}
ONE = {"vector_bits": 256, "cores": 1}
DTYPES = ["float32", "int8", "int16", "int64", "float64", "uint8", "bool", "float16"]


def data(shape, dtype):
    if dtype == "bool":
        return RNG.integers(0, 2, shape).astype(bool)
    if dtype.startswith(("int", "uint")):
        return RNG.integers(0, 100, shape).astype(dtype)
    return RNG.standard_normal(shape).astype(dtype)


def steps(sch):
    return [line.split("sch.")[1].split("(")[0] for line in sch.trace.as_python() if "sch." in line]


def check(func, arrays, expected, facts):
    sch = ts.autoschedule(func, target="c", facts=facts)
    out = np.zeros(expected.shape, expected.dtype)
    lib = ts.build(sch.mod, target="c")
    lib(*arrays, out)
    np.testing.assert_array_equal(out, expected)
    return sch, lib.get_source()


def stack_func(shape, dtype, count, axis):
    ins = [te.placeholder(shape, dtype, name=f"A{k}") for k in range(count)]
    return te.create_prim_func(ins + [topi.stack(ins, axis)])


@pytest.mark.parametrize("facts", [HOST, ONE], ids=["host", "one_core"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,count,axis", [
    ((3, 5), 2, 0),
    ((17, 33), 3, 0),
    ((1, 7), 2, 0),
    ((130, 129), 2, 0),     # parallel, a vector tail
    ((64, 256), 4, 0),      # parallel chunks of vectors
    ((5, 6, 7), 3, 1),      # a middle axis: the loops outside it fused
    ((40, 30, 24), 2, 1),
    ((9, 11), 2, 2),        # the innermost axis: not partitioned
])
def test_stack_matches_numpy(shape, count, axis, dtype, facts):
    arrays = [data(shape, dtype) for _ in range(count)]
    sch, src = check(stack_func(shape, dtype, count, axis), arrays, np.stack(arrays, axis), facts)
    partitioned = axis < len(shape)
    assert ("loop_partition" in steps(sch)) == partitioned
    if partitioned:
        assert "tessera_select_" not in src and "?" not in src.split("__tessera_packed_main")[1]


def test_stack_parts_are_vector_copies():
    # float32 2 x 64 x 256 on two cores: the first part fuses its unit loop with the rest, the
    # second keeps its loop (it starts at 1) outside; both in chunks of 16-lane vectors
    func = stack_func((64, 256), "float32", 2, 0)
    sch = ts.autoschedule(func, target="c", facts=HOST)
    assert sch.trace.as_python()[3:] == [
        "l5, l6 = sch.loop_partition(loop=l2, factors=[1], preserve_unit_iters=True)",
        "b7, = sch.get_child_blocks(block_or_loop=l5)",
        "l8, l9, l10 = sch.get_loops(block=b7)",
        "l11 = sch.fuse(l8, l9, l10, preserve_unit_iters=True)",
        "l12, l13, l14 = sch.split(loop=l11, factors=[None, 256, 16], preserve_unit_iters=True, "
        "disable_predication=False)",
        "sch.parallel(loop=l12)",
        "sch.vectorize(loop=l14)",
        "b15, = sch.get_child_blocks(block_or_loop=l6)",
        "l16, l17, l18 = sch.get_loops(block=b15)",
        "l19 = sch.fuse(l17, l18, preserve_unit_iters=True)",
        "l20, l21, l22 = sch.split(loop=l19, factors=[None, 256, 16], preserve_unit_iters=True, "
        "disable_predication=False)",
        "sch.parallel(loop=l20)",
        "sch.vectorize(loop=l22)",
    ]


@pytest.mark.parametrize("dtype", ["float32", "int8", "int64"])
@pytest.mark.parametrize("shapes", [[(3, 5), (4, 5)], [(17, 33), (1, 33), (30, 33)],
                                    [(64, 128), (100, 128)]])
def test_concatenate_along_the_outer_axis_matches_numpy(shapes, dtype):
    ins = [te.placeholder(s, dtype, name=f"A{k}") for k, s in enumerate(shapes)]
    func = te.create_prim_func(ins + [topi.concatenate(ins, axis=0)])
    arrays = [data(s, dtype) for s in shapes]
    check(func, arrays, np.concatenate(arrays, 0), HOST)


@pytest.mark.parametrize("cond,expect", [
    # v <= 2, 3 > v, v > 4, 1 < v, v != 3, v >= 5 or v < 1: cut where the tests change
    (lambda i: i <= 2, lambda i: i <= 2),
    (lambda i: tir.const(3, "int32") > i, lambda i: i < 3),
    (lambda i: i > 4, lambda i: i > 4),
    (lambda i: tir.const(1, "int32") < i, lambda i: i > 1),
    (lambda i: i != 3, lambda i: i != 3),
    (lambda i: tir.Or(i >= 5, i < 1), lambda i: (i >= 5) | (i < 1)),
    (lambda i: tir.And(i >= 2, i <= 4), lambda i: (i >= 2) & (i <= 4)),
    (lambda i: tir.Not(i == 0), lambda i: i != 0),
])
def test_selects_on_comparisons_of_the_outer_iterator_match_numpy(cond, expect):
    a = te.placeholder((7, 40), "float32", name="A")
    b = te.placeholder((7, 40), "float32", name="B")
    c = te.compute((7, 40), lambda i, j: tir.Select(cond(i), a[i, j], b[i, j] * 2.0), name="C")
    x, y = data((7, 40), "float32"), data((7, 40), "float32")
    rows = expect(np.arange(7))[:, None]
    sch, src = check(te.create_prim_func([a, b, c]), [x, y], np.where(rows, x, y * 2), HOST)
    assert "loop_partition" in steps(sch)
    assert "tessera_select_" not in src


def test_selects_that_test_other_things_are_not_partitioned():
    # two iterators compared (eye), and a value read from memory (where)
    a = te.placeholder((32, 64), "float32", name="A")
    c = te.compute((32, 64), lambda i, j: tir.Select(i == j, a[i, j], tir.const(0.0, "float32")),
                   name="C")
    x = data((32, 64), "float32")
    sch, _ = check(te.create_prim_func([a, c]), [x], np.where(np.eye(32, 64, dtype=bool), x, 0), HOST)
    assert "loop_partition" not in steps(sch)
    m = te.placeholder((32, 64), "bool", name="M")
    d = te.compute((32, 64), lambda i, j: tir.Select(m[i, j], a[i, j], a[i, j] * 2.0), name="D")
    mm = data((32, 64), "bool")
    sch, _ = check(te.create_prim_func([m, a, d]), [mm, x], np.where(mm, x, x * 2), HOST)
    assert "loop_partition" not in steps(sch)
