"""sort, argsort and topk against numpy's stable sort."""

import numpy as np
import pytest

from tessera import te, topi
from tessera.error import TesseraValueError

from topi_testing import Kernels

K = Kernels()
_F = te.placeholder((4, 7), "float32", name="F")
_I = te.placeholder((3, 6), "int32", name="I")
K.add("sort_asc", [_F], topi.sort(_F, axis=1))
K.add("sort_desc_axis0", [_I], topi.sort(_I, axis=0, is_ascend=0))
K.add("argsort", [_I], topi.argsort(_I, axis=-1))
K.add("argsort_desc_int", [_F], topi.argsort(_F, axis=0, is_ascend=False, dtype="int32"))
K.add("topk_both", [_F], topi.topk(_F, k=3, axis=1))
K.add("topk_indices_asc", [_I], topi.topk(_I, k=2, axis=-1, ret_type="indices", is_ascend=True))
K.add("topk_all_values", [_I], topi.topk(_I, k=0, axis=0, ret_type="values"))


def _stable_desc(a, axis):
    # Stable descending order: ties keep their original order.
    return np.argsort(-a.astype("float64"), axis=axis, kind="stable")


def test_sort_and_argsort():
    f = np.random.default_rng(0).uniform(-2, 2, (4, 7)).astype("float32")
    i = np.random.default_rng(1).integers(-3, 4, (3, 6)).astype("int32")  # many ties
    np.testing.assert_array_equal(K.run("sort_asc", f), np.sort(f, axis=1))
    np.testing.assert_array_equal(K.run("sort_desc_axis0", i), -np.sort(-i, axis=0))
    out = K.run("argsort", i)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, np.argsort(i, axis=-1, kind="stable"))
    np.testing.assert_array_equal(K.run("argsort_desc_int", f), _stable_desc(f, 0))


def test_topk():
    f = np.random.default_rng(2).uniform(-2, 2, (4, 7)).astype("float32")
    i = np.random.default_rng(3).integers(-3, 4, (3, 6)).astype("int32")
    values, indices = K.run("topk_both", f)
    order = _stable_desc(f, 1)[:, :3]
    assert indices.dtype == np.int64
    np.testing.assert_array_equal(indices, order)
    np.testing.assert_array_equal(values, np.take_along_axis(f, order, 1))
    np.testing.assert_array_equal(
        K.run("topk_indices_asc", i), np.argsort(i, axis=-1, kind="stable")[:, :2]
    )
    np.testing.assert_array_equal(K.run("topk_all_values", i), -np.sort(-i, axis=0))


def test_errors():
    with pytest.raises(TesseraValueError, match="ret_type"):
        topi.topk(_F, ret_type="all")
    with pytest.raises(TesseraValueError, match="axis 2 is out of range"):
        topi.sort(_F, axis=2)
    with pytest.raises(TesseraValueError, match="valid_count"):
        topi.argsort(_F, valid_count=_I)


_N = te.placeholder((3, 9), "float32", name="N")
K.add("sort_inf", [_N], topi.sort(_N, axis=1))
K.add("topk_inf_asc", [_N], topi.topk(_N, k=4, axis=1, is_ascend=True))


def test_infinities_are_values():
    # -inf sorts first as itself (the gather starts from -inf, not the lowest finite value)
    a = np.array([[3, -np.inf, 1, np.inf, -np.inf, 0, -1, 2, 5],
                  [-np.inf] * 9,
                  [np.inf, -3.4e38, -np.inf, 7, 7, -0.0, 0.0, 1, -np.inf]], "float32")
    np.testing.assert_array_equal(K.run("sort_inf", a), np.sort(a, axis=1))
    values, indices = K.run("topk_inf_asc", a)
    order = np.argsort(a, axis=1, kind="stable")[:, :4]
    np.testing.assert_array_equal(indices, order)
    np.testing.assert_array_equal(values, np.take_along_axis(a, order, 1))
