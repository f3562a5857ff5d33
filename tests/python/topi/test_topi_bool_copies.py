"""Operators that copy bools (flip, take, concatenate, where, repeat, tile, broadcast_to, split)
copy their bytes (tir.FlattenBuffer writes a bool read from a bool buffer as the byte it is);
a bool made from another type (cast, compare) is still converted to 0 or 1. Odd shapes take
the vector tails; every result is checked against numpy, byte for byte."""

import numpy as np
import pytest

import tessera as ts
from tessera import te, topi


def _run(make, arrays):
    ph = [te.placeholder(a.shape, str(a.dtype), name=f"in{i}") for i, a in enumerate(arrays)]
    outs = make(*ph)
    outs = outs if isinstance(outs, (list, tuple)) else [outs]
    lib = ts.build(te.create_prim_func(ph + list(outs)), target="c")
    results = [np.empty([int(getattr(s, "value", s)) for s in o.shape], str(o.dtype)) for o in outs]
    lib(*arrays, *results)
    return results, lib.get_source()


def _bools(rng, shape):
    return rng.random(shape) < 0.5


SHAPES = [(37, 53), (64, 128), (5, 3)]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("name,make,ref", [
    ("flip", lambda a: topi.flip(a, 0), lambda a: np.flip(a, 0)),
    ("flip columns", lambda a: topi.flip(a, 1), lambda a: np.flip(a, 1)),
    ("repeat", lambda a: topi.repeat(a, 2, 0), lambda a: np.repeat(a, 2, 0)),
    ("tile", lambda a: topi.tile(a, (2, 3)), lambda a: np.tile(a, (2, 3))),
    ("transpose", topi.transpose, lambda a: a.T),
    ("strided_slice", lambda a: topi.strided_slice(a, [1, 0], [a.shape[0], a.shape[1]], [2, 1]),
     lambda a: a[1::2]),
])
def test_unary_bool_copies_match_numpy(shape, name, make, ref):
    a = _bools(np.random.default_rng(0), shape)
    (out,), _ = _run(make, [a])
    np.testing.assert_array_equal(out, ref(a))
    assert set(np.unique(out.view(np.uint8))) <= {0, 1}


@pytest.mark.parametrize("shape", SHAPES)
def test_concatenate_take_and_where_of_bools_match_numpy(shape):
    rng = np.random.default_rng(1)
    a, b, c = _bools(rng, shape), _bools(rng, shape), _bools(rng, shape)
    (cat,), src = _run(lambda x, y: topi.concatenate([x, y], axis=1), [a, b])
    np.testing.assert_array_equal(cat, np.concatenate([a, b], axis=1))
    assert "!= (tessera_int8" not in src  # the bytes copied, not tested against zero
    idx = rng.integers(0, shape[0], shape[0]).astype("int32")
    (took,), _ = _run(lambda x, i: topi.take(x, i, axis=0), [a, idx])
    np.testing.assert_array_equal(took, np.take(a, idx, axis=0))
    (chosen,), _ = _run(topi.where, [c, a, b])
    np.testing.assert_array_equal(chosen, np.where(c, a, b))
    parts, _ = _run(lambda x: topi.split(x, [shape[1] // 2], axis=1), [a])
    for got, want in zip(parts, np.split(a, [shape[1] // 2], axis=1)):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "float32"])
def test_bools_made_from_other_types_are_zero_or_one(dtype):
    # Nonzero values other than 1 (5, -3, 0.5) become the byte 1.
    rng = np.random.default_rng(2)
    x = rng.integers(-3, 6, (37, 53)).astype(dtype)
    if dtype == "float32":
        x = x * np.float32(0.5)
    if dtype == "uint8":
        x = rng.integers(0, 6, (37, 53)).astype(dtype)
    (out,), _ = _run(lambda a: topi.cast(a, "bool"), [x])
    np.testing.assert_array_equal(out.view(np.uint8), (x != 0).astype(np.uint8))
    (out,), _ = _run(lambda a: topi.broadcast_to(topi.cast(a, "bool"), (2, 37, 53)), [x])
    np.testing.assert_array_equal(out.view(np.uint8), np.broadcast_to(x != 0, (2, 37, 53)).astype(np.uint8))
