"""estimate_region_{lower,upper,strict}_bound: the sets a region covers while its iterators
range over their domains under a predicate (TVM v0.23's tvm.arith behaviour)."""

import pytest

from tessera import arith, tir
from tessera.ir import Range
from tessera.error import TesseraTypeError

strict = arith.estimate_region_strict_bound
lower = arith.estimate_region_lower_bound
upper = arith.estimate_region_upper_bound


def region(*dims):
    return [Range.from_min_extent(lo, ext) for lo, ext in dims]


def check(sets, expected):
    """`expected`: (first, last) per dimension, both included."""
    ana = arith.Analyzer()
    assert sets is not None and len(sets) == len(expected)
    for s, (lo, hi) in zip(sets, expected):
        assert ana.can_prove_equal(s.min_value - lo, 0), (s, lo)
        assert ana.can_prove_equal(s.max_value - hi, 0), (s, hi)


def ivars(*names):
    return [tir.Var(n, "int32") for n in names]


def test_tiles_without_gaps():
    i, j = ivars("i", "j")
    dom = {i: Range(0, 3), j: Range(0, 4)}
    # i*16 + j*4 is one mark of extent 12 with stride 4: 4-wide accesses tile [0, 48)
    for fn in (strict, lower, upper):
        check(fn(region((i * 16 + j * 4, 4)), dom, True), [(0, 47)])
    check(strict(region((i, 1), (j * 2, 3)), dom, True), [(0, 2), (0, 8)])


def test_free_terms_and_single_points():
    i, n = ivars("i", "n")
    dom = {i: Range(0, 5)}
    check(strict(region((i + n, 2), (n * 3, 1)), dom, True), [(n, n + 5), (n * 3, n * 3)])
    (point,) = strict(region((tir.const(7), 1)), dom, True)
    assert point.min_value.same_as(point.max_value) and point.min_value.value == 7


def test_gaps_have_no_lower_bound_and_a_relaxed_upper_bound():
    (j,) = ivars("j")
    dom = {j: Range(0, 6)}
    # stride 3, width 2: values 2, 5, 8, ... are never touched
    assert strict(region((j * 3, 2)), dom, True) is None
    assert lower(region((j * 3, 2)), dom, True) is None
    check(upper(region((j * 3, 2)), dom, True), [(0, 16)])


def test_dependent_dimensions():
    (i,) = ivars("i")
    dom = {i: Range(0, 5)}
    # the same iterator in two dimensions is not a surjective map
    assert lower(region((i, 1), (i + 1, 2)), dom, True) is None
    # each dimension alone is
    check(upper(region((i, 1), (i + 1, 2)), dom, True), [(0, 4), (1, 6)])


def test_predicate_narrows_the_fused_iterator():
    xo, xi = ivars("xo", "xi")
    dom = {xo: Range(0, 4), xi: Range(0, 8)}
    x = xo * 8 + xi
    check(lower(region((x * 2, 2)), dom, x < 30), [(0, 59)])
    check(upper(region((x * 2, 2)), dom, x < 30), [(0, 59)])
    check(lower(region((x, 1)), dom, x >= 5), [(5, 31)])


def test_negative_scale():
    i, j = ivars("i", "j")
    dom = {i: Range(0, 5), j: Range(0, 3)}
    check(lower(region((10 - i * 2, 2), (4 - j, 1)), dom, True), [(2, 11), (2, 4)])
    # as TVM, only a positive stride is compared with the width: going down, the hull is given
    check(lower(region((10 - i * 2, 1)), dom, True), [(2, 10)])


def test_empty_access():
    (i,) = ivars("i")
    (s,) = strict(region((i, 0)), {i: Range(0, 4)}, True)
    assert s.is_nothing()


def test_symbolic_widths_and_domains():
    i, n = ivars("i", "n")
    assert strict(region((i, n)), {i: Range(0, 4)}, True) is None
    assert lower(region((i, 2)), {i: Range(0, n)}, True) is None
    # interval arithmetic still bounds them
    check(upper(region((i, 2)), {i: Range(0, n)}, True), [(0, n)])
    s = upper(region((i, n)), {i: Range(0, 4)}, True)[0]
    ana = arith.Analyzer()
    ana.bind(n, 6)
    assert ana.can_prove_equal(s.min_value, 0) and ana.can_prove_equal(s.max_value, 8)


def test_not_affine():
    i, j = ivars("i", "j")
    dom = {i: Range(0, 4), j: Range(0, 4)}
    assert strict(region((i * j, 1)), dom, True) is None
    # a product of two ranges is not bounded by interval arithmetic (as TVM)
    assert upper(region((i * j, 1)), dom, True)[0].is_everything()
    check(upper(region((i * 3 + j, 1)), {i: Range(0, 4), j: Range(0, 2)}, True), [(0, 10)])


def test_tvm_names():
    assert arith.int_set.estimate_region_upper_bound is upper
    assert "estimate_region_strict_bound" in arith.__all__


def test_errors():
    (i,) = ivars("i")
    dom = {i: Range(0, 4)}
    with pytest.raises(TesseraTypeError, match="list of Ranges"):
        strict([(i, 1)], dom, True)
    with pytest.raises(TesseraTypeError, match="keys must be Vars"):
        lower(region((i, 1)), {"i": Range(0, 4)}, True)
    with pytest.raises(TesseraTypeError, match="must be a Range"):
        upper(region((i, 1)), {i: (0, 4)}, True)
    with pytest.raises(TesseraTypeError, match="bool expression"):
        strict(region((i, 1)), dom, i + 1)
