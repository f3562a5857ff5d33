"""topi.image.resize2d against numpy: nearest-neighbour and bilinear, both layouts."""

import numpy as np
import pytest

import tessera
from tessera import te, topi
from tessera.error import TesseraError

from topi_testing import TARGET


def run(out, tensor, array):
    lib = tessera.build(te.create_prim_func([tensor, out]), target=TARGET)
    dev = tessera.device(TARGET, 0)
    args = [tessera.nd.array(array, device=dev)]
    res = tessera.nd.empty(tuple(int(s) for s in out.shape), out.dtype, dev)
    lib(*args, res)
    return res.numpy()


def src_index(dst, in_size, out_size, mode):
    scale = in_size / out_size
    if mode == "asymmetric":
        return dst * scale
    if mode == "align_corners":
        return dst * (in_size - 1) / (out_size - 1)
    return (dst + 0.5) * scale - 0.5  # half_pixel


@pytest.mark.parametrize("mode,rounding", [("asymmetric", "floor"), ("align_corners", "round"),
                                           ("half_pixel", "round_prefer_ceil")])
def test_nearest_neighbor(mode, rounding):
    a = np.random.default_rng(0).random((1, 2, 5, 6)).astype("float32")
    A = te.placeholder(a.shape, name="A")
    B = topi.image.resize2d(A, (0.0,) * 4, (7, 4), method="nearest_neighbor",
                            coordinate_transformation_mode=mode, rounding_method=rounding)
    ys = src_index(np.arange(7), 5, 7, mode).astype("float32")
    xs = src_index(np.arange(4), 6, 4, mode).astype("float32")
    pick = {"floor": lambda v: np.floor(v + 1e-5), "round": np.round,
            "round_prefer_ceil": lambda v: np.floor(v + 0.5)}[rounding]
    yi = np.clip(pick(ys).astype(int), 0, 4)
    xi = np.clip(pick(xs).astype(int), 0, 5)
    np.testing.assert_array_equal(run(B, A, a), a[:, :, yi][:, :, :, xi])


def test_linear_nhwc_and_errors():
    a = np.random.default_rng(1).random((1, 4, 5, 3)).astype("float32")
    A = te.placeholder(a.shape, name="A")
    B = topi.image.resize2d(A, (0.0,) * 4, (6, 8), layout="NHWC", method="linear",
                            coordinate_transformation_mode="align_corners")
    ys, xs = src_index(np.arange(6), 4, 6, "align_corners"), src_index(np.arange(8), 5, 8, "align_corners")
    y0, x0 = np.floor(ys).astype(int), np.floor(xs).astype(int)
    ty, tx = (ys - y0)[:, None, None], (xs - x0)[None, :, None]

    def px(y, x):
        return a[0][np.clip(y, 0, 3)][:, np.clip(x, 0, 4)]

    top = px(y0, x0) * (1 - tx) + px(y0, x0 + 1) * tx
    bottom = px(y0 + 1, x0) * (1 - tx) + px(y0 + 1, x0 + 1) * tx
    np.testing.assert_allclose(run(B, A, a)[0], top * (1 - ty) + bottom * ty, rtol=1e-5)
    with pytest.raises(TesseraError, match="method 'cubic' is not supported"):
        topi.image.resize2d(A, (0.0,) * 4, (6, 8), layout="NHWC", method="cubic")
    with pytest.raises(TesseraError, match="coordinate_transformation_mode 'x'"):
        topi.image.resize2d(A, (0.0,) * 4, (6, 8), coordinate_transformation_mode="x")


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "float32"])
@pytest.mark.parametrize("shape,size", [((1, 3, 56, 56), (112, 112)), ((2, 2, 7, 24), (13, 48)),
                                        ((1, 2, 5, 40), (9, 80))])
def test_nearest_2x_rows_of_bytes(shape, size, dtype):
    # Output rows of 48, 80 and 112 bytes (multiples of 16, not of 32): resized along the row
    # in 16-byte vectors, each equal to numpy's two gathers.
    rng = np.random.default_rng(3)
    a = rng.integers(-100, 101, shape).astype(dtype) if dtype != "uint8" else \
        rng.integers(0, 256, shape).astype(dtype)
    x = te.placeholder(shape, dtype, name="x")
    y = topi.image.resize2d(x, None, size, method="nearest_neighbor",
                            coordinate_transformation_mode="asymmetric")
    got = run(y, x, a)
    h, w = shape[2:]
    want = a[:, :, np.arange(size[0]) * h // size[0]][..., np.arange(size[1]) * w // size[1]]
    np.testing.assert_array_equal(got, want)
    if dtype in ("int8", "uint8") and TARGET == "c":
        func = te.create_prim_func([x, y])
        lines = tessera.autoschedule(func, target="c", facts={"vector_bits": 512}).trace.as_python()
        # the row stays a loop of its own, vectorized by 16 (its outer loops fused)
        assert any("factors=[None, 16]" in line for line in lines), "\n".join(lines)
