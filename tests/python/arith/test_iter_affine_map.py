"""tessera.arith's iterator-map API (TVM's detect_iter_map and friends): golden structures,
the surjective/bijective checks, inversion and the error paths."""

import pytest

from tessera import arith, ir, tir
from tessera.error import TesseraTypeError, TesseraValueError


def dom(*pairs):
    return {var: ir.Range(0, extent) for var, extent in pairs}


def inner_split(index):
    """The split under the mark that wraps a single-split index (TVM fuses every index)."""
    (split,) = index.args[0].source.source.args
    return split


@pytest.fixture
def xyz():
    return tir.Var("x", "int32"), tir.Var("y", "int32"), tir.Var("z", "int32")


def test_fuse_is_one_mark_over_the_fused_sum(xyz):
    x, y, _ = xyz
    res = arith.detect_iter_map([x * 4 + y + 2], dom((x, 8), (y, 4)))
    assert res.errors == []
    fused = arith.IterMark(
        arith.IterSumExpr(
            [arith.IterSplitExpr(arith.IterMark(x, 8), 1, 8, 4),
             arith.IterSplitExpr(arith.IterMark(y, 4), 1, 4, 1)], 0), 32)
    expected = arith.IterSumExpr([arith.IterSplitExpr(fused, 1, 32, 1)], 2)
    ir.assert_structural_equal(res.indices[0], expected)
    assert not ir.structural_equal(res.indices[0], arith.IterSumExpr(expected.args, 3))
    ir.assert_structural_equal(arith.normalize_iter_map_to_expr(res.indices[0]), x * 4 + y + 2)


def test_split_fields_and_expressions(xyz):
    x, _, _ = xyz
    res = arith.detect_iter_map([x // 6, x % 6 // 2, x % 2], dom((x, 24)),
                                check_level="bijective")
    outer, middle, inner = (inner_split(s) for s in res.indices)
    assert [int(s.lower_factor) for s in (outer, middle, inner)] == [6, 2, 1]
    assert [int(s.extent) for s in (outer, middle, inner)] == [4, 3, 2]
    ir.assert_structural_equal(outer.source, arith.IterMark(x, 24))
    ir.assert_structural_equal(arith.normalize_iter_map_to_expr(outer), tir.floordiv(x, 6))
    ir.assert_structural_equal(arith.normalize_iter_map_to_expr(middle),
                               tir.floordiv(tir.floormod(x, 6), 2))


def test_overlapping_splits_fail_with_a_reason(xyz):
    x, y, _ = xyz
    res = arith.detect_iter_map([x, x + 1], dom((x, 8), (y, 6)))
    assert res.indices == []
    assert res.errors == ["the iterator x: its splits overlap"]


def test_surjective_allows_what_bijective_refuses(xyz):
    x, y, _ = xyz
    assert len(arith.detect_iter_map([x // 4], dom((x, 8), (y, 6))).indices) == 1
    res = arith.detect_iter_map([x // 4, x % 4], dom((x, 8), (y, 6)), check_level="bijective")
    assert res.indices == [] and "y" in res.errors[0]
    # padding x to 9 reaches every value of x // 3, but x % 16 never reaches 3..15
    assert int(arith.detect_iter_map([x // 3], dom((x, 8))).indices[0].args[0].extent) == 3
    assert arith.detect_iter_map([x % 16], dom((x, 3))).indices == []
    assert len(arith.detect_iter_map([x, x], dom((x, 8)), check_level="no_check").indices) == 2


def test_trivial_iterators(xyz):
    x, y, z = xyz
    res = arith.detect_iter_map([x, z], dom((x, 3), (z, 1)), simplify_trivial_iterators=True)
    assert len(res.indices[1].args) == 0
    res = arith.detect_iter_map([x, z], dom((x, 3), (z, 1)), simplify_trivial_iterators=False)
    assert int(res.indices[1].args[0].extent) == 1


def test_free_terms_go_to_the_base(xyz):
    x, y, z = xyz
    res = arith.detect_iter_map([z * 19 + y * 3 + x], dom((x, 3), (y, 3)))
    ir.assert_structural_equal(res.indices[0].base, z * 19)
    assert int(res.indices[0].args[0].extent) == 9
    # ... but not when z is an iterator: 19 is not 3 * 3
    assert arith.detect_iter_map([z * 19 + y * 3 + x], dom((x, 3), (y, 3), (z, 3))).indices == []


def test_inverse_of_a_split(xyz):
    x, _, _ = xyz
    a, b = tir.Var("a", "int32"), tir.Var("b", "int32")
    res = arith.detect_iter_map([x // 4, x % 4], dom((x, 16)))
    inverse = arith.inverse_affine_iter_map(res.indices, [a, b])
    assert list(inverse) == [x]
    assert arith.Analyzer().can_prove_equal(inverse[x], a * 4 + b)
    with pytest.raises(TesseraValueError, match="2 indices but 1 outputs"):
        arith.inverse_affine_iter_map(res.indices, [a])


def test_iter_map_simplify(xyz):
    x, y, _ = xyz
    out = arith.iter_map_simplify([x // 4 * 4 + x % 4], dom((x, 32)))
    ir.assert_structural_equal(out[0], x)
    product = x * y
    assert arith.iter_map_simplify([product], dom((x, 4), (y, 4)))[0].same_as(product)


def test_normalize_to_iter_sum_orders_by_scale(xyz):
    x, y, z = xyz
    res = arith.normalize_to_iter_sum(z + y * 6 + x * 4 + 7, dom((x, 4), (y, 4), (z, 4)))
    assert [int(s.scale) for s in res.args] == [6, 4, 1]
    assert int(res.base) == 7


def test_hand_built_mark_over_an_expression(xyz):
    x, y, _ = xyz
    split = arith.IterSplitExpr(arith.IterMark(x * y + 1, 1024), 1, 1024, 1)
    ir.assert_structural_equal(arith.normalize_iter_map_to_expr(split), x * y + 1)


def test_error_paths(xyz):
    x, _, _ = xyz
    n = tir.SizeVar("n", "int32")
    with pytest.raises(TesseraValueError, match="unknown iter-map check level"):
        arith.detect_iter_map([x], dom((x, 4)), check_level="onto")
    res = arith.detect_iter_map([x], {x: ir.Range(0, n)})
    assert res.indices == [] and "symbolic" in res.errors[0]
    res = arith.detect_iter_map([x], dom((x, 4)), predicate=x < n)
    assert res.indices == [] and "not a constant" in res.errors[0]
    res = arith.detect_iter_map([x], dom((x, 4)), predicate=x == 3)
    assert res.indices == [] and "not a comparison" in res.errors[0]
    with pytest.raises(TesseraTypeError, match="expected an IterMark"):
        arith.IterSplitExpr(x, 1, 4, 1)
    with pytest.raises(TesseraTypeError, match="domain of x must be a Range, got int"):
        arith.detect_iter_map([x], {x: 4})
    assert arith.IterMapLevel.from_str("no_check") == arith.IterMapLevel.NoCheck


def test_left_padding_is_one_padded_mark(xyz):
    _, y, _ = xyz
    res = arith.detect_iter_map([(y + 80) // 32], dom((y, 176)))
    padded = arith.IterMark(
        arith.IterSumExpr([arith.IterSplitExpr(arith.IterMark(y, 176), 1, 176, 1)], 16), 192)
    wrapper = arith.IterMark(arith.IterSumExpr([arith.IterSplitExpr(padded, 32, 6, 1)], 0), 6)
    ir.assert_structural_equal(
        res.indices[0], arith.IterSumExpr([arith.IterSplitExpr(wrapper, 1, 6, 1)], 2))
    # bijective maps take no padding
    assert arith.detect_iter_map([(y + 80) // 32], dom((y, 176)), check_level="bijective"
                                 ).indices == []


def test_padding_shared_by_every_division_of_a_mark(xyz):
    x, _, _ = xyz
    res = arith.detect_iter_map([x // 3 % 5, x % 3], dom((x, 26)))
    outer, inner = (inner_split(s) for s in res.indices)
    ir.assert_structural_equal(outer.source, inner.source)  # one mark, padded to 30
    assert int(outer.source.extent) == 30
    assert (int(outer.lower_factor), int(outer.extent)) == (3, 5)


def test_surjective_fuse_may_overlap(xyz):
    x, y, _ = xyz
    res = arith.detect_iter_map([x * 7 + y], dom((x, 3), (y, 8)))
    assert int(res.indices[0].args[0].extent) == 22          # 2 * 7 + 8 values
    assert arith.detect_iter_map([x * 7 + y], dom((x, 3), (y, 8)),
                                 check_level="bijective").indices == []
    assert arith.detect_iter_map([x * 5 + y * 2], dom((x, 4), (y, 3))).indices == []
    assert arith.detect_iter_map([x * 7 - y], dom((x, 3), (y, 8))).indices == []


def test_fuse_order_of_unit_iterators(xyz):
    x, y, z = xyz
    out = arith.iter_map_simplify([x + y + z // 4 * 4 + z % 4], dom((x, 1), (y, 1), (z, 32)),
                                  simplify_trivial_iterators=False)
    ir.assert_structural_equal(out[0], z + x + y)
    out = arith.iter_map_simplify([x // 128 + y + z], dom((x, 128), (y, 128), (z, 1)),
                                  simplify_trivial_iterators=False)
    ir.assert_structural_equal(out[0], y + z)


def test_subspace_divide(xyz):
    x, y, z = xyz
    c = tir.SizeVar("c", "int32")
    res = arith.subspace_divide([z * 12 + y * 3 + x + c], dom((x, 3), (y, 4), (z, 5)), [x])
    (outer, inner), (outer_pred, inner_pred) = res
    ir.assert_structural_equal(arith.normalize_iter_map_to_expr(outer.source), z * 4 + y)
    ir.assert_structural_equal(arith.normalize_iter_map_to_expr(inner.source), x + c)
    assert (int(outer.extent), int(inner.extent)) == (20, 3)
    assert outer_pred.extent.value == 1 and inner_pred.extent.value == 1
    # a split of x: x // 2 is outer, x % 2 fuses with the inner y
    res = arith.subspace_divide([x // 2, x % 2 * 4 + y], dom((x, 8), (y, 4)), [y])
    assert len(res) == 3
    ir.assert_structural_equal(arith.normalize_iter_map_to_expr(res[0][0].source), x // 2)
    ir.assert_structural_equal(arith.normalize_iter_map_to_expr(res[1][1].source), y)
    # an inner iterator above an outer one cannot be divided
    assert arith.subspace_divide([y * 3 + x], dom((x, 3), (y, 4)), [y]) == []


def test_predicate_bounds(xyz):
    x, y, _ = xyz
    # a bound on one iterator narrows it; a bound on a fused sum narrows its mark
    res = arith.detect_iter_map([x], dom((x, 48)), predicate=x < 10)
    assert int(res.indices[0].args[0].extent) == 10
    res = arith.detect_iter_map([x * 10 + y], dom((x, 13), (y, 10)),
                                predicate=tir.all(x * 10 + y > 5, x * 10 + y < 128))
    (split,) = res.indices[0].args
    assert (int(split.extent), int(res.indices[0].base)) == (122, 6)
    # the predicate's sums must nest or be disjoint
    i, j, k = (tir.Var(n, "int32") for n in "ijk")
    res = arith.detect_iter_map([i * 8 + j * 2 + k], dom((i, 11), (j, 5), (k, 2)),
                                predicate=tir.all(2 <= j * 2 + k, 0 <= i * 4 + j))
    assert res.indices == [] and res.errors


def test_negative_scale_of_one_iterator():
    i, j = tir.Var("i", "int32"), tir.Var("j", "int32")
    res = arith.detect_iter_map([7 - i * 3], dom((i, 5)))
    assert not res.errors
    (split,) = res.indices[0].args
    assert split.scale.value == -3 and split.source.extent.value == 5
    assert res.indices[0].base.value == 7
    ana = arith.Analyzer()
    assert ana.can_prove_equal(arith.normalize_iter_map_to_expr(res.indices[0]), 7 - i * 3)
    # as TVM, iterators of negative scales are not fused with others
    res = arith.detect_iter_map([-i - j * 5], dom((i, 5), (j, 2)))
    assert not res.indices and "cannot be fused" in res.errors[0]


def test_division_with_terms_free_of_the_iterators():
    x, y = tir.Var("x", "int32"), tir.Var("y", "int32")
    ana = arith.Analyzer()
    fld, flm = tir.floordiv, tir.floormod
    # x*12 pads y on the left by 0 or 4 (its residue modulo 8); both pad [0, 20) up to 24
    res = arith.detect_iter_map([fld(x * 12 + y, 8)], dom((y, 20)))
    assert not res.errors
    ((split,), base) = res.indices[0].args, res.indices[0].base
    assert (split.extent.value, split.scale.value) == (3, 1)
    (inner,) = split.source.source.args  # the top-level mark over the split of the padded mark
    assert (inner.lower_factor.value, inner.extent.value) == (8, 3)
    assert inner.source.extent.value == 24
    assert ana.can_prove_equal(base, fld(x * 12 - flm(x * 12, 8), 8))
    expr = arith.normalize_iter_map_to_expr(res.indices[0])
    for xv in range(4):
        for yv in (0, 3, 4, 11, 19):
            value = tir.stmt_functor.substitute(expr, {x: tir.const(xv), y: tir.const(yv)})
            assert ana.simplify(value).value == (xv * 12 + yv) // 8
    res = arith.detect_iter_map([flm(x * 12 + y, 8)], dom((y, 20)))
    (split,) = res.indices[0].args
    assert (split.extent.value, split.lower_factor.value) == (8, 1)
    assert res.indices[0].base.value == 0
    # both together cover the padded mark, its pad included: not surjective (as with a
    # constant pad)
    res = arith.detect_iter_map([fld(x * 12 + y, 8), flm(x * 12 + y, 8)], dom((y, 20)))
    assert not res.indices and "padded iterator" in res.errors[0]


def test_division_with_free_terms_not_supported():
    x, y = tir.Var("x", "int32"), tir.Var("y", "int32")
    fld = tir.floordiv
    # a pad of 0 gives 24, a pad of 4 gives 32: tessera needs a constant padded extent
    res = arith.detect_iter_map([fld(x * 12 + y, 8)], dom((y, 21)))
    assert not res.indices and "not constant" in res.errors[0]
    res = arith.detect_iter_map([fld(x * 12 + y, 8), fld(y, 2)], dom((y, 20)))
    assert not res.indices and "both with and without" in res.errors[0]
    res = arith.detect_iter_map([fld(x * 12 + fld(y, 2), 8)], dom((y, 20)))
    assert not res.indices and "part of an iterator" in res.errors[0]
