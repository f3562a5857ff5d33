"""tir.layout / tir.bijective_layout: layouts named by strings and the conversions between them."""

import itertools

import numpy as np
import pytest

from tessera import tir
from tessera.error import TesseraTypeError, TesseraValueError


def test_layout_axes_factors_and_positions():
    layout = tir.layout("NCHW8c4h")
    assert isinstance(layout, tir.Layout) and len(layout) == 6
    assert [layout[i] for i in range(6)] == ["N", "C", "H", "W", "c", "h"] and layout[-1] == "h"
    assert (layout.factor_of("C"), layout.factor_of("c"), layout.factor_of("h")) == (8, 8, 4)
    assert layout.factor_of("N") == -1 and layout.index_of("W") == 3 and layout.index_of("O") == -1
    assert "c" in layout and "O" not in layout
    assert [str(a.dom.extent) for a in layout.axes[:2]] == ["N_shape", "C_shape"]
    assert [int(a.dom.extent) for a in layout.axes[4:]] == [8, 4]
    wide = tir.layout("NC", dtype="int64")
    assert {str(a.var.dtype) for a in wide.axes} == {"int64"}
    assert tir.layout("__undef__") is None


@pytest.mark.parametrize("name, message", [
    ("NCHWc", "needs a size"),
    ("NCHW16", "a size at the end"),
    ("NCH16W", "a size before the primal axis W"),
    ("NCHW4d", "has no primal axis D"),
    ("NC_HW", "not an axis letter"),
])
def test_malformed_layouts(name, message):
    with pytest.raises(TesseraValueError, match=message):
        tir.layout(name)


def test_layout_dtype_must_be_an_integer_type():
    with pytest.raises(TesseraTypeError, match="integer type"):
        tir.layout("NCHW", dtype="float32")
    with pytest.raises(TypeError):
        tir.layout("NCHW", dtype=None)


def test_bijective_layout_against_numpy_blocking():
    convert = tir.bijective_layout("NCHW", "NCHW4c")
    assert isinstance(convert, tir.BijectiveLayout)
    shape = (2, 8, 3, 3)
    blocked = [int(e) for e in convert.forward_shape(shape)]
    assert blocked == [2, 2, 3, 3, 4]
    assert [int(e) for e in convert.backward_shape(blocked)] == list(shape)
    x = np.arange(np.prod(shape)).reshape(shape)
    ref = x.reshape(2, 2, 4, 3, 3).transpose(0, 1, 3, 4, 2)
    for index in itertools.product(*[range(n) for n in shape]):
        dst = [int(e) for e in convert.forward_index(list(index))]
        assert ref[tuple(dst)] == x[index]
        assert [int(e) for e in convert.backward_index(dst)] == list(index)
    # A channel count that is not a multiple of the block rounds up.
    assert [int(e) for e in convert.forward_shape((1, 6, 3, 3))] == [1, 2, 3, 3, 4]


def test_bijective_layout_not_convertible_is_none():
    assert tir.bijective_layout("NCHW", "NCDW") is None
    assert tir.bijective_layout("", "NCHW") is None
    assert tir.bijective_layout("NCHW", "__undef__") is None
    with pytest.raises(TesseraValueError, match="dimension 4 \\('c'\\) must be 4, got 8"):
        tir.bijective_layout("NCHW4c", "NCHW").forward_shape((1, 2, 3, 3, 8))
