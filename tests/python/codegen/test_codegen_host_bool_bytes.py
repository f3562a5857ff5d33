"""Bools (one byte each, 0 or 1, as numpy stores them) moved and combined as bytes in the host C:
copies of re-indexed rows (flip, repeat, split, broadcast_to, take) of bools get the int8
schedule (row by row, the target's whole vector width) and the same C as int8's, and logic on
bools (and, or, not, xor, equal, bitwise and/or/xor) is bitwise logic on their bytes, without a
test of each byte against zero. Every kernel is built with no schedule and checked against numpy
on odd shapes and tails."""

import re

import numpy as np
import pytest

import tessera as ts
from tessera import te, topi

VECTOR_BITS = ts.autoschedule.target_facts("c")["vector_bits"]


def _build(placeholders, outs):
    outs = outs if isinstance(outs, (list, tuple)) else [outs]
    return ts.build(te.create_prim_func(list(placeholders) + list(outs)), target="c"), outs


def _run(lib, outs, *arrays):
    results = [np.empty([int(s) for s in o.shape], str(o.dtype)) for o in outs]
    lib(*arrays, *results)
    return results


def _data(rng, shape, dtype):
    if dtype == "bool":
        return rng.random(shape) < 0.5
    return rng.integers(-100, 100, shape).astype(dtype)


COPIES = {
    "flip rows": (lambda s: [s], lambda a: topi.flip(a, 0), lambda a: [np.flip(a, 0)]),
    "repeat 2 rows": (lambda s: [s], lambda a: topi.repeat(a, 2, 0),
                      lambda a: [np.repeat(a, 2, 0)]),
    "split 2 columns": (lambda s: [s], lambda a: topi.split(a, 2, axis=1),
                        lambda a: np.split(a, 2, axis=1)),
    "broadcast_to": (lambda s: [s[1:]], None, None),
    "take rows": (lambda s: [s], None, None),
}


def _copy_case(name, shape, dtype):
    (in_shape,) = COPIES[name][0](shape)
    A = te.placeholder(in_shape, dtype, name="A")
    if name == "broadcast_to":
        return [A], topi.broadcast_to(A, shape), lambda a: [np.broadcast_to(a, shape)], None
    if name == "take rows":
        idx = np.array([shape[0] - 1 - (3 * i) % shape[0] for i in range(shape[0])], "int32")
        indices = te.placeholder((shape[0],), "int32", name="I")
        return [A, indices], topi.take(A, indices, axis=0), lambda a: [np.take(a, idx, 0)], idx
    return [A], COPIES[name][1](A), COPIES[name][2], None


@pytest.mark.parametrize("name", list(COPIES))
@pytest.mark.parametrize("shape", [(6, 128), (5, 64 * 3), (7, 98), (3, 50), (9, 2)])
def test_bool_copies_match_numpy(name, shape):
    ph, outs, np_fn, idx = _copy_case(name, shape, "bool")
    lib, outs = _build(ph, outs)
    a = _data(np.random.default_rng(1), [int(s) for s in ph[0].shape], "bool")
    got = _run(lib, outs, a, *([idx] if idx is not None else []))
    for g, w in zip(got, np_fn(a)):
        np.testing.assert_array_equal(g, w)
        assert g.view(np.uint8).max(initial=0) <= 1


def _kernel_lines(src):
    """The loop statements of the generated C, without what differs between a bool and an int8
    kernel of one shape (the argument checks, the casts of bool pointers and their parentheses)."""
    body = src[src.index("__tessera_packed_main"):]
    lines = [ln.strip() for ln in body.splitlines()
             if ln.strip().startswith(("for (", "tessera_store", "#pragma", "int32_t cse"))]
    return [re.sub(r"[()]", "", ln.replace("(int8_t*)", "")) for ln in lines]


@pytest.mark.parametrize("name", ["flip rows", "repeat 2 rows", "split 2 columns",
                                  "broadcast_to", "take rows"])
def test_bool_copies_are_int8_copies(name):
    # the schedule and the C of a bool copy are those of the int8 copy: rows copied one by one
    # in vectors of the whole width (no division of a fused index per vector)
    shape = (8, 4 * VECTOR_BITS // 8)
    srcs = {}
    for dtype in ("bool", "int8"):
        ph, outs, _, _ = _copy_case(name, shape, dtype)
        lib, _ = _build(ph, outs)
        srcs[dtype] = lib.get_source()
    assert _kernel_lines(srcs["bool"]) == _kernel_lines(srcs["int8"])
    assert f"tessera_store_int8x{VECTOR_BITS // 8}(" in srcs["bool"]
    if name != "take rows":
        assert "__floordiv(i0_i1_fused" not in srcs["bool"]
        assert "__floormod(i0_i1_fused" not in srcs["bool"]


def _logic_cases():
    return {
        "logical_and": (2, topi.logical_and, np.logical_and),
        "logical_or": (2, topi.logical_or, np.logical_or),
        "logical_xor": (2, topi.logical_xor, np.logical_xor),
        "logical_not": (1, topi.logical_not, np.logical_not),
        "equal": (2, topi.equal, np.equal),
        "not_equal": (2, topi.not_equal, np.not_equal),
        "bitwise_and": (2, topi.bitwise_and, np.bitwise_and),
        "bitwise_or": (2, topi.bitwise_or, np.bitwise_or),
        "bitwise_xor": (2, topi.bitwise_xor, np.bitwise_xor),
        "and of not and or": (2, lambda a, b: topi.logical_and(topi.logical_not(a),
                                                               topi.logical_or(b, a)),
                              lambda a, b: np.logical_and(np.logical_not(a), np.logical_or(b, a))),
    }


@pytest.mark.parametrize("name", list(_logic_cases()))
@pytest.mark.parametrize("shape", [(2048,), (37, 53), (3, 5, 64), (4, 130), (1,), (1000,)])
def test_logic_of_bools_matches_numpy(name, shape):
    nargs, op, np_fn = _logic_cases()[name]
    ph = [te.placeholder(shape, "bool", name=f"A{k}") for k in range(nargs)]
    lib, outs = _build(ph, op(*ph))
    rng = np.random.default_rng(7)
    arrays = [rng.random(shape) < 0.5 for _ in range(nargs)]
    (got,) = _run(lib, outs, *arrays)
    np.testing.assert_array_equal(got, np_fn(*arrays))
    assert got.view(np.uint8).max() <= 1
    if shape == (2048,):
        src = lib.get_source()
        # bytes combined bitwise in byte vectors; no test of a byte against zero and no 32-bit
        # mask lanes
        assert re.search(r"tessera_store_int8x\d+\(", src), src
        assert "!= (tessera_int8x" not in src and "== (tessera_int8x" not in src
        code = "\n".join(ln for ln in src.splitlines() if not ln.startswith("typedef"))
        assert "int32x" not in code


@pytest.mark.parametrize("shape", [(37, 53), (16, 256)])
def test_logic_of_bools_broadcast_and_mixed_with_a_compare(shape):
    # a row of bools broadcast over a matrix, and a bool from a comparison of int32 inside the
    # logic (kept as a compare; the byte logic only takes bools read from bool buffers)
    A = te.placeholder(shape, "bool", name="A")
    R = te.placeholder(shape[1:], "bool", name="R")
    X = te.placeholder(shape, "int32", name="X")
    outs = [topi.logical_or(A, R), topi.logical_and(A, topi.greater(X, 0)),
            topi.logical_xor(R, A)]
    lib, outs = _build([A, R, X], outs)
    rng = np.random.default_rng(11)
    a, r = rng.random(shape) < 0.5, rng.random(shape[1:]) < 0.5
    x = rng.integers(-3, 3, shape).astype("int32")
    got = _run(lib, outs, a, r, x)
    for g, w in zip(got, [a | r, a & (x > 0), r ^ a]):
        np.testing.assert_array_equal(g, w)
        assert g.view(np.uint8).max() <= 1


@pytest.mark.parametrize("dtype,op,np_fn", [("bool", topi.logical_and, np.logical_and),
                                            ("bool", topi.logical_xor, np.logical_xor),
                                            ("int8", topi.add, np.add),
                                            ("uint8", topi.maximum, np.maximum),
                                            ("int8", topi.less, np.less)])
def test_streams_combining_bytes_take_16_byte_vectors(dtype, op, np_fn):
    # two byte inputs into bytes: 16-byte vectors (the automatic schedule's CombinesByteStreams);
    # one byte input (logical_not, a copy) keeps the wider vectors
    shape = (64, 1024)
    A = te.placeholder(shape, dtype, name="A")
    B = te.placeholder(shape, dtype, name="B")
    lib, outs = _build([A, B], op(A, B))
    rng = np.random.default_rng(5)
    a, b = _data(rng, shape, dtype), _data(rng, shape, dtype)
    (got,) = _run(lib, outs, a, b)
    np.testing.assert_array_equal(got, np_fn(a, b))
    src = lib.get_source()
    assert re.search(r"tessera_store_int8x16\(", src) or re.search(r"tessera_store_uint8x16\(", src)
    assert not re.search(r"tessera_store_u?int8x(32|64)\(", src)
    lib, outs = _build([A], topi.logical_not(A) if dtype == "bool" else topi.negative(A))
    if VECTOR_BITS >= 256:
        assert re.search(r"tessera_store_u?int8x(32|64)\(", lib.get_source())


def test_a_row_broadcast_is_no_stream_of_its_own():
    # add broadcast row reads one stream and one row (in the L1): the wider vectors of a
    # stream of one input, not CombinesByteStreams' 16 bytes
    A = te.placeholder((64, 1024), "int8", name="A")
    R = te.placeholder((1024,), "int8", name="R")
    lib, outs = _build([A, R], topi.add(A, R))
    rng = np.random.default_rng(9)
    a, r = _data(rng, (64, 1024), "int8"), _data(rng, (1024,), "int8")
    (got,) = _run(lib, outs, a, r)
    np.testing.assert_array_equal(got, a + r)
    if VECTOR_BITS >= 256:
        assert re.search(r"tessera_store_int8x(32|64)\(", lib.get_source())


def test_three_byte_streams_keep_the_stream_width():
    # CombinesByteStreams takes two streams; a sum of three int8 inputs keeps 256-bit vectors
    shape = (64, 1024)
    P = [te.placeholder(shape, "int8", name=f"A{k}") for k in range(3)]
    S = te.compute(shape, lambda i, j: P[0][i, j] + P[1][i, j] + P[2][i, j], name="S")
    lib, outs = _build(P, S)
    rng = np.random.default_rng(13)
    arrays = [_data(rng, shape, "int8") for _ in range(3)]
    (got,) = _run(lib, outs, *arrays)
    np.testing.assert_array_equal(got, arrays[0] + arrays[1] + arrays[2])
    if VECTOR_BITS >= 256:
        assert re.search(r"tessera_store_int8x(32|64)\(", lib.get_source())
