"""IndexMap over domains it does not tile exactly: map_shape, non_surjective_inverse (inverse and
padding predicate), map_tensor, and map_indices of numbers."""

import itertools

import numpy as np
import pytest

from tessera import arith, nd, tir
from tessera.error import TesseraValueError
from tessera.ir import assert_structural_equal
from tessera.tir import IndexMap


def _value(expr, env):
    """The integer (or bool) value of a simplified expression with the variables of ``env``."""
    return int(arith.Analyzer().simplify(tir.stmt_functor.substitute(expr, env)).value)


def test_map_indices_of_numbers_keep_the_given_type():
    split = IndexMap.from_func(lambda i: [i // 4, i % 4], index_dtype="int32")
    assert_structural_equal(split.map_indices([42]), [tir.const(10, "int32"), tir.const(2, "int32")])
    assert_structural_equal(split.map_indices([tir.const(42, "int64")]),
                            [tir.const(10, "int64"), tir.const(2, "int64")])
    with pytest.raises(TesseraValueError, match="takes 1 indices, got 2"):
        split.map_indices([1, 2])


def test_map_shape_rounds_up_to_whole_splits():
    split = IndexMap.from_func(lambda i: [i // 4, i % 4], index_dtype="int32")
    for n in (1, 4, 13, 14, 16):
        outer, inner = split.map_shape([n])
        assert (int(outer), int(inner)) == ((n + 3) // 4, 4)
    assert [str(e.dtype) for e in split.map_shape([tir.const(14, "int64")])] == ["int64", "int64"]
    transpose = IndexMap.from_func(lambda i, j: [j, i])
    assert [int(e) for e in transpose.map_shape([3, 5])] == [5, 3]
    with pytest.raises(TesseraValueError, match="takes 1 indices, the shape has 2"):
        split.map_shape([4, 4])


@pytest.mark.parametrize(
    "forward, shape",
    [
        (lambda i: [i // 4, i % 4], [16]),  # no padding
        (lambda i: [i // 4, i % 4], [14]),  # right
        (lambda i: [(i + 1) // 4, (i + 1) % 4], [15]),  # left
        (lambda i: [(i + 1) // 4, (i + 1) % 4], [13]),  # both
        (lambda i: [i // 4, i % 4], [3]),  # one outer step
        (lambda i: [(i // 4) % 8, i // 32, i % 4], [116]),  # three splits, transposed
        (lambda i, j: [(i + 1) // 4, (j + 5) // 8, (i + 1) % 4, (j + 5) % 8], [14, 31]),
    ],
)
def test_non_surjective_inverse_marks_exactly_the_padding(forward, shape):
    index_map = IndexMap.from_func(forward, index_dtype="int32")
    inverse, padding = index_map.non_surjective_inverse(shape)
    out_shape = [int(e) for e in index_map.map_shape(shape)]
    # Every input maps to a position that the inverse sends back.
    for index in itertools.product(*[range(n) for n in shape]):
        mapped = [int(e) for e in index_map.map_indices(list(index))]
        assert [int(e) for e in inverse.map_indices(mapped)] == list(index)
    # The predicate holds exactly where the inverse leaves the input domain.
    for position in itertools.product(*[range(n) for n in out_shape]):
        env = dict(zip(inverse.initial_indices, [tir.const(p, "int32") for p in position]))
        source = [_value(e, env) for e in inverse.final_indices]
        outside = any(not 0 <= s < n for s, n in zip(source, shape))
        assert bool(_value(padding, env)) == outside, (position, source)


def test_non_surjective_inverse_predicate_is_structured():
    # As TVM writes it: the last outer step and the inner positions past the end.
    index_map = IndexMap.from_func(lambda i: [i // 32, (i // 4) % 8, i % 4], index_dtype="int32")
    inverse, padding = index_map.non_surjective_inverse([116])
    i, j, k = inverse.initial_indices
    expected = arith.Analyzer().simplify(tir.And(i == 3, j * 4 + k >= 20))
    assert_structural_equal(arith.Analyzer().simplify(padding), expected)
    bijective, none = index_map.non_surjective_inverse([128])
    assert_structural_equal(none, tir.const(False, "bool"))
    assert bijective.is_equivalent_to(IndexMap.from_func(lambda a, b, c: [a * 32 + b * 4 + c]))


def test_symbolic_shape():
    split = IndexMap.from_func(lambda i: [i // 4, i % 4], index_dtype="int32")
    n = tir.Var("n", "int32")
    # The outer size is ceildiv(n, 4), written (n - n % -4) // 4 as TVM writes it.
    assert_structural_equal(split.map_shape([n]), [(n - n % (-4)) // 4, tir.const(4, "int32")])
    inverse, padding = split.non_surjective_inverse([n])
    assert inverse.is_equivalent_to(IndexMap.from_func(lambda a, b: [a * 4 + b]))
    # For each size, the predicate holds exactly on the positions past n.
    for size in (8, 13, 14, 15):
        outer = (size + 3) // 4
        for a in range(outer):
            for b in range(4):
                env = {n: tir.const(size, "int32"), inverse.initial_indices[0]: tir.const(a, "int32"),
                       inverse.initial_indices[1]: tir.const(b, "int32")}
                assert bool(_value(padding, env)) == (a * 4 + b >= size)
    with pytest.raises(TesseraValueError, match="only results that split an index"):
        IndexMap.from_func(lambda i: [i * 2], index_dtype="int32").map_shape([n])


def test_non_surjective_inverse_errors():
    index_map = IndexMap.from_func(lambda i: [i // 4, i % 4], index_dtype="int32")
    with pytest.raises(TesseraValueError, match="takes 1 indices, the shape has 2"):
        index_map.non_surjective_inverse([4, 4])
    # i * 2 leaves holes between the positions it reaches: not a padding; no inverse.
    with pytest.raises(TesseraValueError, match="has no inverse|pattern it can invert"):
        IndexMap.from_func(lambda i: [i * 2]).non_surjective_inverse([8])


def test_map_tensor_against_numpy():
    x = np.arange(14, dtype="int8")
    out = IndexMap.from_func(lambda i: [i // 4, i % 4]).map_tensor(nd.array(x)).numpy()
    ref = np.zeros((4, 4), "int8")
    ref.reshape(-1)[:14] = x
    np.testing.assert_equal(out, ref)

    y = np.random.default_rng(0).standard_normal((3, 5, 6)).astype("float32")
    transpose = IndexMap.from_func(lambda a, b, c: [c, a, b])
    np.testing.assert_equal(transpose.map_tensor(nd.array(y)).numpy(), np.transpose(y, (2, 0, 1)))
    blocked = IndexMap.from_func(lambda a, b, c: [c // 2, a, b, c % 2])
    back = blocked.inverse([3, 5, 6])
    np.testing.assert_equal(back.map_tensor(blocked.map_tensor(nd.array(y))).numpy(), y)
