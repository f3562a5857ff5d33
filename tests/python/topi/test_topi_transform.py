"""Injective transforms against numpy: transpose, reshape, concatenate, split, take, ..."""

import re

import numpy as np
import pytest

from tessera import te, topi
from tessera.error import TesseraTypeError, TesseraValueError

from topi_testing import Kernels, random

K = Kernels()
CASES = {}


def case(name, shapes, dtypes, build, ref, data=None):
    """Register a kernel ``build(*placeholders)`` and its numpy reference ``ref(*arrays)``."""
    phs = [te.placeholder(s, d, name=f"x{j}") for j, (s, d) in enumerate(zip(shapes, dtypes))]
    K.add(name, phs, build(*phs))
    CASES[name] = (shapes, dtypes, ref, data)


for _d in ("float32", "float16", "int8", "bool"):
    case(
        f"transpose_{_d}",
        [(3, 5, 7)],
        [_d],
        lambda a: topi.transpose(a, (2, 0, 1)),
        lambda a: np.transpose(a, (2, 0, 1)),
    )
case("transpose_default", [(3, 5)], ["int32"], topi.transpose, np.transpose)
case(
    "transpose_neg",
    [(3, 5, 2)],
    ["float32"],
    lambda a: topi.transpose(a, (-1, 0, 1)),
    lambda a: np.transpose(a, (2, 0, 1)),
)
case(
    "reshape", [(6, 5)], ["float32"], lambda a: topi.reshape(a, (3, 10)), lambda a: a.reshape(3, 10)
)
case(
    "reshape_neg",
    [(6, 5)],
    ["int32"],
    lambda a: topi.reshape(a, (5, -1, 2)),
    lambda a: a.reshape(5, -1, 2),
)
case(
    "reshape_flat",
    [(2, 3, 7)],
    ["uint8"],
    lambda a: topi.reshape(a, (42,)),
    lambda a: a.reshape(42),
)
case("squeeze", [(1, 5, 1, 3)], ["float32"], topi.squeeze, np.squeeze)
case(
    "squeeze_axis",
    [(1, 5, 1, 3)],
    ["float32"],
    lambda a: topi.squeeze(a, axis=-2),
    lambda a: np.squeeze(a, axis=-2),
)
case(
    "expand_dims",
    [(5, 3)],
    ["float32"],
    lambda a: topi.expand_dims(a, 1, 2),
    lambda a: a[:, None, None, :],
)
case(
    "expand_dims_neg",
    [(5, 3)],
    ["int8"],
    lambda a: topi.expand_dims(a, -1),
    lambda a: np.expand_dims(a, -1),
)
case(
    "concatenate",
    [(2, 3), (5, 3), (1, 3)],
    ["float32"] * 3,
    lambda a, b, c: topi.concatenate([a, b, c], axis=0),
    lambda a, b, c: np.concatenate([a, b, c], 0),
)
case(
    "concatenate_neg",
    [(2, 3), (2, 4)],
    ["int32"] * 2,
    lambda a, b: topi.concatenate((a, b), axis=-1),
    lambda a, b: np.concatenate([a, b], -1),
)
case(
    "stack",
    [(3, 5), (3, 5), (3, 5)],
    ["float16"] * 3,
    lambda a, b, c: topi.stack([a, b, c], axis=1),
    lambda a, b, c: np.stack([a, b, c], 1),
)
case(
    "stack_last",
    [(4,), (4,)],
    ["int32"] * 2,
    lambda a, b: topi.stack([a, b], axis=-1),
    lambda a, b: np.stack([a, b], -1),
)
case(
    "split_sections",
    [(4, 9)],
    ["float32"],
    lambda a: topi.split(a, 3, axis=1),
    lambda a: np.split(a, 3, axis=1),
)
case(
    "split_indices",
    [(7, 2)],
    ["int32"],
    lambda a: topi.split(a, [2, 5], axis=0),
    lambda a: np.split(a, [2, 5], axis=0),
)
case(
    "tile",
    [(2, 3)],
    ["float32"],
    lambda a: topi.tile(a, (2, 1, 3)),
    lambda a: np.tile(a, (2, 1, 3)),
)
case("tile_short", [(2, 3)], ["int8"], lambda a: topi.tile(a, (2,)), lambda a: np.tile(a, (2,)))
case(
    "repeat",
    [(2, 3)],
    ["float32"],
    lambda a: topi.repeat(a, 3, axis=1),
    lambda a: np.repeat(a, 3, axis=1),
)
case(
    "repeat_neg",
    [(2, 3)],
    ["int32"],
    lambda a: topi.repeat(a, 2, axis=-2),
    lambda a: np.repeat(a, 2, axis=0),
)
case("flip", [(4, 5)], ["float32"], lambda a: topi.flip(a, axis=1), lambda a: np.flip(a, 1))
case("flip_neg", [(4, 5)], ["int32"], lambda a: topi.flip(a, axis=-2), lambda a: np.flip(a, 0))

IDX = np.array([[0, 4, 2], [3, 3, 1]], "int32")
OOB = np.array([[-1, 5, 2], [7, -6, 1]], "int32")
case(
    "take_axis",
    [(3, 5, 2), (2, 3)],
    ["float32", "int32"],
    lambda a, i: topi.take(a, i, axis=1),
    lambda a, i: np.take(a, i, axis=1),
    data={1: IDX},
)
case(
    "take_flat",
    [(3, 5), (2, 3)],
    ["int8", "int32"],
    lambda a, i: topi.take(a, i),
    lambda a, i: np.take(a, i),
    data={1: IDX},
)
case(
    "take_clip",
    [(5, 3), (2, 3)],
    ["float32", "int32"],
    lambda a, i: topi.take(a, i, axis=0, mode="clip"),
    lambda a, i: np.take(a, i, axis=0, mode="clip"),
    data={1: OOB},
)
case(
    "take_wrap",
    [(5, 3), (2, 3)],
    ["float32", "int32"],
    lambda a, i: topi.take(a, i, axis=0, mode="wrap"),
    lambda a, i: np.take(a, i, axis=0, mode="wrap"),
    data={1: OOB},
)
case(
    "take_nan",
    [(5,), (2, 3)],
    ["float32", "int32"],
    lambda a, i: topi.take(a, i, axis=0, mode="nan"),
    lambda a, i: np.where((i >= 0) & (i < 5), np.take(a, i, mode="clip"), np.nan),
    data={1: OOB},
)
case(
    "take_int64_idx",
    [(5, 3), (4,)],
    ["float32", "int64"],
    lambda a, i: topi.take(a, i, axis=0),
    lambda a, i: np.take(a, i, axis=0),
    data={1: np.array([4, 0, 2, 2], "int64")},
)
case(
    "take_batch",
    [(2, 5, 3), (2, 4)],
    ["float32", "int32"],
    lambda a, i: topi.take(a, i, axis=1, batch_dims=1),
    lambda a, i: np.stack([np.take(a[b], i[b], axis=0) for b in range(2)]),
    data={1: np.array([[0, 4, 1, 1], [2, 3, 0, 4]], "int32")},
)
case(
    "gather",
    [(3, 5), (3, 4)],
    ["float32", "int32"],
    lambda a, i: topi.gather(a, 1, i),
    lambda a, i: np.take_along_axis(a, i, axis=1),
    data={1: np.array([[0, 4, 1, 1], [2, 3, 0, 4], [1, 1, 1, 0]], "int32")},
)
case(
    "gather_nd",
    [(3, 4, 2), (2, 5)],
    ["float32", "int32"],
    topi.gather_nd,
    lambda a, i: a[tuple(i)],
    data={1: np.array([[0, 2, 1, 1, 0], [3, 0, 2, 1, 3]], "int32")},
)
case(
    "gather_nd_batch",
    [(2, 4, 3), (1, 2, 3)],
    ["float32", "int32"],
    lambda a, i: topi.gather_nd(a, i, 1),
    lambda a, i: np.stack([a[b][i[0, b]] for b in range(2)]),
    data={1: np.array([[[0, 3, 1], [2, 2, 0]]], "int32")},
)
case(
    "one_hot",
    [(2, 3)],
    ["int32"],
    lambda i: topi.one_hot(i, 1.0, 0.0, 5, -1, "float32"),
    lambda i: np.eye(5, dtype="float32")[i],
    data={0: IDX},
)
case(
    "one_hot_axis0",
    [(4,)],
    ["int32"],
    lambda i: topi.one_hot(i, 7, -1, 5, 0, "int8"),
    lambda i: np.where(np.arange(5)[:, None] == i[None, :], 7, -1).astype("int8"),
    data={0: np.array([1, 4, 0, 9], "int32")},
)
case(
    "one_hot_float_indices",
    [(5,)],
    ["float32"],
    lambda i: topi.one_hot(i, 1.0, 0.0, 4, -1, "float32"),
    lambda i: (i[:, None] == np.arange(4, dtype="float32")[None, :]).astype("float32"),
    data={0: np.array([0.0, 3.0, 1.5, -1.0, 2.0], "float32")},
)
case(
    "strided_slice",
    [(7, 6)],
    ["float32"],
    lambda a: topi.strided_slice(a, [1, 0], [6, 5], [2, 1]),
    lambda a: a[1:6:2, 0:5:1],
)
case(
    "strided_slice_neg",
    [(7, 6)],
    ["int32"],
    lambda a: topi.strided_slice(a, [-1, 5], [-8, 0], [-2, -3]),
    lambda a: a[-1:-8:-2, 5:0:-3],
)
case(
    "strided_slice_axes",
    [(3, 7, 6)],
    ["float16"],
    lambda a: topi.strided_slice(a, [2], [100], axes=[2]),
    lambda a: a[:, :, 2:100],
)
case(
    "strided_slice_size",
    [(7, 6)],
    ["float32"],
    lambda a: topi.strided_slice(a, [1, 2], [3, -1], slice_mode="size"),
    lambda a: a[1:4, 2:],
)
case("where", [(4, 1), (4, 5), (5,)], ["bool", "float32", "float32"], topi.where, np.where)
case(
    "where_scalars",
    [(3, 5)],
    ["bool"],
    lambda c: topi.where(c, 1.5, -2.0),
    lambda c: np.where(c, 1.5, -2.0).astype("float32"),
)
case(
    "where_int_cond",
    [(6,), (6,), (6,)],
    ["int32", "int8", "int8"],
    topi.where,
    lambda c, x, y: np.where(c != 0, x, y),
)
case(
    "full",
    [(2,)],
    ["float32"],
    lambda a: topi.full((3, 5), "int8", 7),
    lambda a: np.full((3, 5), 7, "int8"),
)
case(
    "full_like",
    [(3, 5)],
    ["float16"],
    lambda a: topi.full_like(a, 0.5),
    lambda a: np.full_like(a, 0.5),
)
case(
    "arange",
    [(2,)],
    ["float32"],
    lambda a: topi.arange(1, 4, 0.5),
    lambda a: np.arange(1, 4, 0.5, dtype="float32"),
)
case(
    "arange_int",
    [(2,)],
    ["float32"],
    lambda a: topi.arange(10, 1, -3, dtype="int32"),
    lambda a: np.arange(10, 1, -3, dtype="int32"),
)
case(
    "arange_stop",
    [(2,)],
    ["float32"],
    lambda a: topi.arange(7),
    lambda a: np.arange(7, dtype="float32"),
)
case(
    "eye",
    [(2,)],
    ["float32"],
    lambda a: topi.eye(3, 5, 1),
    lambda a: np.eye(3, 5, 1, dtype="float32"),
)
case(
    "matmul",
    [(5, 3), (4, 5)],
    ["float32"] * 2,
    lambda a, b: topi.matmul(a, b, True, True),
    lambda a, b: a.T @ b.T,
)
case(
    "layout_nchw_to_nchwc",
    [(2, 8, 3, 5)],
    ["float32"],
    lambda a: topi.layout_transform(a, "NCHW", "NCHW4c"),
    lambda a: a.reshape(2, 2, 4, 3, 5).transpose(0, 1, 3, 4, 2),
)
case(
    "layout_nchwc_to_nhwc",
    [(2, 2, 3, 5, 4)],
    ["int8"],
    lambda a: topi.layout_transform(a, "NCHW4c", "NHWC"),
    lambda a: a.transpose(0, 2, 3, 1, 4).reshape(2, 3, 5, 8),
)
case("shape", [(3, 5, 7)], ["float32"], topi.shape, lambda a: np.array(a.shape, "int32"))

case(
    "take_scalar",
    [(3, 5, 2)],
    ["float32"],
    lambda a: topi.take(a, 4, axis=1),
    lambda a: np.take(a, 4, axis=1),
)
case(
    "take_scalar_wrap",
    [(6,)],
    ["int8"],
    lambda a: topi.take(a, -2, mode="wrap"),
    lambda a: np.take(a, -2, mode="wrap"),
)
case("squeeze_none", [(1, 5, 1)], ["int32"], lambda a: topi.squeeze(a, axis=()), lambda a: a)
case(
    "expand_dims_end",
    [(5,)],
    ["float32"],
    lambda a: topi.expand_dims(a, 1, 2),
    lambda a: a.reshape(5, 1, 1),
)
case(
    "split_uneven_indices",
    [(5,)],
    ["float32"],
    lambda a: topi.split(a, [0, 2, 9]),
    lambda a: np.split(a, [0, 2, 9]),
)


@pytest.mark.parametrize("name", list(CASES))
def test_transform(name):
    shapes, dtypes, ref, data = CASES[name]
    data = data or {}
    arrays = [
        data[j] if j in data else random(s, d, seed=j)
        for j, (s, d) in enumerate(zip(shapes, dtypes))
    ]
    out = K.run(name, *arrays)
    expected = ref(*arrays)
    outs = out if isinstance(out, list) else [out]
    exps = expected if isinstance(expected, list) else [expected]
    assert len(outs) == len(exps)
    for o, e in zip(outs, exps):
        e = np.asarray(e)
        assert o.shape == e.shape
        assert o.dtype == e.dtype, (o.dtype, e.dtype)
        if name == "matmul":  # summation order differs from numpy's
            np.testing.assert_allclose(o, e, rtol=1e-5, atol=1e-6)
        else:
            np.testing.assert_array_equal(o, e)


def test_errors():
    A = te.placeholder((3, 4), "float32", name="A")
    B = te.placeholder((3, 5), "float32", name="B")
    I = te.placeholder((2,), "float32", name="I")  # noqa: E741
    with pytest.raises(TesseraValueError, match="not a permutation"):
        topi.transpose(A, (0, 0))
    with pytest.raises(TesseraValueError, match="cannot reshape"):
        topi.reshape(A, (5, 3))
    with pytest.raises(TesseraValueError, match="cannot reshape"):
        topi.reshape(A, (5, -1))
    with pytest.raises(TesseraValueError, match="differ in dimension 1"):
        topi.concatenate([A, B], axis=0)
    with pytest.raises(TesseraValueError, match="axis 2 is out of range"):
        topi.concatenate([A, B], axis=2)
    with pytest.raises(TesseraValueError, match="equal sections"):
        topi.split(A, 3, axis=1)
    with pytest.raises(TesseraValueError, match="not 1"):
        topi.squeeze(A, axis=0)
    with pytest.raises(TesseraTypeError, match="indices must be integers"):
        topi.take(A, I)
    with pytest.raises(TesseraValueError, match="unknown mode"):
        topi.take(A, te.placeholder((2,), "int32", name="J"), axis=0, mode="raise")
    with pytest.raises(TesseraValueError, match="stride cannot be 0"):
        topi.strided_slice(A, [0], [2], [0])
    with pytest.raises(TesseraValueError, match="cannot be broadcast"):
        topi.where(te.placeholder((3,), "bool", name="C"), A, B)
    with pytest.raises(TesseraValueError, match="different axes"):
        topi.layout_transform(A, "NC", "NH")
    with pytest.raises(TesseraTypeError, match="expects a te tensor"):
        topi.transpose([1, 2])


@pytest.mark.parametrize("dtype", ["float32", "float16", "int8", "uint8", "int64", "bool"])
@pytest.mark.parametrize("widths", [(256, 128), (128, 96, 32), (100, 28)])
def test_concatenate_rows_with_no_schedule_copies_vectors(dtype, widths):
    """The automatic schedule vectorizes the concatenated axis; where every piece's width is a
    multiple of the vector, all lanes of a vector come from one input and it is copied whole
    (one vector load chosen by the first lane's condition), else lane by lane."""
    import tessera as ts

    phs = [te.placeholder((33, w), dtype, name=f"x{j}") for j, w in enumerate(widths)]
    out = topi.concatenate(phs, axis=1)
    lib = ts.build(te.create_prim_func(phs + [out]), target="c")
    arrays = [random((33, w), dtype, seed=j) for j, w in enumerate(widths)]
    got = np.empty((33, sum(widths)), dtype)
    lib(*arrays, got)
    np.testing.assert_array_equal(got, np.concatenate(arrays, axis=1))
    code = lib.get_source()
    vector_copy = re.search(r"\? tessera_load_\w+\(", code) is not None
    # (bool data too: a bool read from a bool buffer is copied as its byte)
    assert vector_copy == (widths != (100, 28)), code
