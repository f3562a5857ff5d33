"""CodeGenHost's interleaved stores: a loop of S vector stores of stride S at consecutive
offsets (a blocked weight layout's inner i x o block, read as S vectors of input channels along
which the output steps S) printed as one interleave of the S vectors in registers and S
contiguous stores. Results against numpy for block sizes, dtypes and odd outer sizes; the
helper present where the loop has that form."""

import numpy as np
import pytest

import tessera as ts
from tessera import te, topi


def ohwi_to_blocked(a, ib, ob):
    """OHWI -> OIHW{ib}i{ob}o in numpy: out[o, i, h, w, x, y] = a[o * ob + y, h, w, i * ib + x]."""
    o, h, w, i = a.shape
    return np.ascontiguousarray(
        a.reshape(o // ob, ob, h, w, i // ib, ib).transpose(0, 4, 2, 3, 5, 1))


def data(shape, dtype):
    rng = np.random.default_rng(0)
    if np.dtype(dtype).kind in "iu":
        return rng.integers(-100 if dtype != "uint8" else 0, 100, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def build(shape, dtype, dst):
    x = te.placeholder(shape, dtype, name="x")
    y = topi.layout_transform(x, "OHWI", dst)
    lib = ts.build(te.create_prim_func([x, y]), target="c")
    return lib, [int(getattr(s, "value", s)) for s in y.shape]


@pytest.mark.parametrize("dtype", ["float32", "int32", "float64", "int64", "int8", "int16",
                                   "uint8", "float16"])
@pytest.mark.parametrize("ib,ob", [(8, 4), (16, 2), (8, 8), (16, 16), (4, 2), (8, 3), (4, 8)])
@pytest.mark.parametrize("hw", [(3, 5), (1, 1)])
def test_ohwi_to_blocked_layouts_match_numpy(hw, ib, ob, dtype):
    shape = (ob * 5, hw[0], hw[1], ib * 3)
    lib, out_shape = build(shape, dtype, f"OIHW{ib}i{ob}o")
    a = data(shape, dtype)
    out = np.empty(out_shape, dtype)
    lib(a, out)
    np.testing.assert_array_equal(out, ohwi_to_blocked(a, ib, ob))


def test_akg_weight_layout_interleaves_its_blocks():
    # (128, 7, 7, 32) OHWI -> OIHW8i4o float32: each 8 x 4 block is 4 vectors of 8 input
    # channels, stored interleaved (one store of 32 contiguous elements) instead of lane by lane.
    lib, out_shape = build((128, 7, 7, 32), "float32", "OIHW8i4o")
    src = lib.get_source()
    assert "tessera_store_interleave4_float32x8" in src, src
    assert "tessera_store_stride_float32x8" not in src, src
    a = data((128, 7, 7, 32), "float32")
    out = np.empty(out_shape, "float32")
    lib(a, out)
    np.testing.assert_array_equal(out, ohwi_to_blocked(a, 8, 4))


def test_a_stride_that_is_no_power_of_two_keeps_its_lane_stores():
    lib, out_shape = build((12, 2, 3, 16), "float32", "OIHW8i3o")
    assert "tessera_store_interleave" not in lib.get_source()
    a = data((12, 2, 3, 16), "float32")
    out = np.empty(out_shape, "float32")
    lib(a, out)
    np.testing.assert_array_equal(out, ohwi_to_blocked(a, 8, 3))
