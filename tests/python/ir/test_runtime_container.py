"""tessera.runtime's containers (TVM's tvm.runtime.ShapeTuple and String)."""

import numpy as np
import pytest

import tessera as ts
from tessera.ir.access_path import AccessPath
from tessera.ir.base import get_first_structural_mismatch
from tessera.runtime import ShapeTuple, String


def test_shape_tuple_is_a_tuple_of_ints():
    shape = ShapeTuple([2, np.int64(3), ts.tir.IntImm("int32", 4)])
    assert isinstance(shape, tuple) and shape == (2, 3, 4)
    assert [type(d) for d in shape] == [int, int, int]
    assert len(ShapeTuple([])) == 0 and shape[-1] == 4
    assert repr(shape) == "ShapeTuple([2, 3, 4])"
    assert String("xyz") == "xyz" and isinstance(String("xyz"), str)


def test_shape_tuple_compares_structurally():
    ts.ir.assert_structural_equal(ShapeTuple([1, 2, 3]), ShapeTuple([1, 2, 3]))
    assert get_first_structural_mismatch(ShapeTuple([]), ShapeTuple([])) is None
    assert get_first_structural_mismatch(ShapeTuple([1, 2, 3]), ShapeTuple([1, 5, 3])) == (
        AccessPath.root().array_item(1),) * 2
    assert not ts.ir.structural_equal(ShapeTuple([1, 2]), ShapeTuple([1, 2, 3]))


def test_shape_tuple_refuses_non_integers():
    with pytest.raises(TypeError, match=r"dimension 1 must be an integer, got float 1.5"):
        ShapeTuple([2, 1.5])
