"""The injective rule's streaming stores (pragma_nontemporal): a block whose bytes read and
written reach 5/8 of the L3, or whose output exceeds half of it, streams its stores past the
caches; a smaller one keeps ordinary stores. The facts give a 1 MB L3, so that small odd shapes
decide it; every result is checked against numpy on outputs aligned to a line, 16 bytes into one
(numpy's large arrays) and 4 bytes into one."""

import numpy as np
import pytest
import tessera as ts
from tessera import te, topi

L3 = 1 << 20
FACTS = {"l3_bytes": L3, "cores": 2}
RNG = np.random.default_rng(11)


def _scheduled(inputs, out):
    func = te.create_prim_func(list(inputs) + [out])
    sch = ts.autoschedule(func, target="c", facts=FACTS)
    return sch, "pragma_nontemporal" in sch.mod.script()


def _out(shape, dtype, offset_bytes=16):
    n = int(np.prod(shape))
    itemsize = np.dtype(dtype).itemsize
    raw = np.empty(n * itemsize + 192, np.uint8)
    off = (-raw.ctypes.data) % 64 + offset_bytes
    return raw[off:off + n * itemsize].view(dtype).reshape(shape)


def _data(shape, dtype):
    if dtype == "bool":
        return RNG.integers(0, 2, shape).astype(bool)
    return RNG.integers(0, 4, shape).astype(dtype)


def _run(sch, arrays, want):
    lib = ts.build(sch.mod, target="c")
    for offset in (0, 16, 4):
        got = _out(want.shape, want.dtype, offset)
        lib(*arrays, got)
        np.testing.assert_array_equal(got, want, err_msg=f"output {offset} bytes into a line")


COMPARES = ["greater", "less", "equal", "not_equal", "greater_equal", "less_equal"]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int8", "float16"])
@pytest.mark.parametrize("name", COMPARES)
def test_compare_streams_when_its_inputs_fill_the_cache(name, dtype):
    # (301, 288): two inputs of 86688 elements and a bool output: above 5/8 of 1 MB in every
    # dtype of at least 4 bytes; int8 and float16 (260 KB, 433 KB) stay below it. (The rule
    # vectorizes, and streams, a whole number of vectors: rows of 288.)
    shape = (301, 288)
    a, b = te.placeholder(shape, dtype, name="a"), te.placeholder(shape, dtype, name="b")
    sch, streams = _scheduled([a, b], getattr(topi, name)(a, b))
    size = np.dtype(dtype).itemsize
    assert streams == (2 * size * 301 * 288 + 301 * 288 >= L3 * 5 // 8)
    x, y = _data(shape, dtype), _data(shape, dtype)
    _run(sch, [x, y], getattr(np, name)(x, y))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
def test_small_compare_keeps_ordinary_stores(dtype):
    shape = (67, 160)
    a, b = te.placeholder(shape, dtype, name="a"), te.placeholder(shape, dtype, name="b")
    sch, streams = _scheduled([a, b], topi.greater(a, b))
    assert not streams
    x, y = _data(shape, dtype), _data(shape, dtype)
    _run(sch, [x, y], x > y)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int16", "int8", "bool"])
@pytest.mark.parametrize("op", ["strided_slice rows", "expand_dims", "squeeze", "flatten"])
def test_copies_stream_above_five_eighths_of_the_cache(op, dtype):
    size = np.dtype(dtype).itemsize
    # rows of 288 (a whole number of vectors), an odd number of them: rows x 288 elements
    # copied touch more than 5/8 of the L3 in every dtype
    rows = (L3 * 5 // 16) // (288 * size) | 1
    rows += 2
    if op == "strided_slice rows":
        shape = (rows + 2, 288)
        make = lambda a: topi.strided_slice(a, [1, 0], [rows + 1, 288])  # noqa: E731
        ref = lambda x: x[1:-1].copy()  # noqa: E731
    elif op == "expand_dims":
        shape = (rows, 288)
        make = lambda a: topi.expand_dims(a, 1)  # noqa: E731
        ref = lambda x: x[:, None].copy()  # noqa: E731
    elif op == "squeeze":
        shape = (rows, 1, 288)
        make = lambda a: topi.squeeze(a, [1])  # noqa: E731
        ref = lambda x: x[:, 0].copy()  # noqa: E731
    else:
        shape = (rows, 1, 288)
        make = topi.nn.flatten
        ref = lambda x: x.reshape(rows, -1).copy()  # noqa: E731
    a = te.placeholder(shape, dtype, name="a")
    sch, streams = _scheduled([a], make(a))
    x = _data(shape, dtype)
    want = ref(x)
    assert streams == (2 * want.nbytes >= L3 * 5 // 8)
    _run(sch, [x], want)


def test_copy_below_five_eighths_keeps_ordinary_stores():
    # 40% of the L3 read and 40% written: above half, below 5/8 -> no; the output alone is
    # under half the L3
    n = L3 * 3 // 10 // 4
    a = te.placeholder((n // 128, 128), "float32", name="a")
    sch, streams = _scheduled([a], topi.identity(a))
    assert not streams
    x = RNG.random((n // 128, 128), dtype="float32")
    _run(sch, [x], x.copy())


def test_broadcast_row_counts_once():
    # A (rows, 256) + a row of 256: the row is read once per row of A, not per point; the bytes
    # touched are A's and the output's (just above 5/8 of the L3), whatever the row's reuse.
    rows = L3 * 5 // 8 // (2 * 256 * 4) + 2
    a = te.placeholder((rows, 256), "float32", name="a")
    r = te.placeholder((256,), "float32", name="r")
    sch, streams = _scheduled([a, r], topi.add(a, r))
    assert streams
    x, y = RNG.random((rows, 256), dtype="float32"), RNG.random(256, dtype="float32")
    _run(sch, [x, y], x + y)
    # a quarter as many rows: the same row, far below
    a = te.placeholder((rows // 4, 256), "float32", name="a")
    sch, streams = _scheduled([a, r], topi.add(a, r))
    assert not streams


@pytest.mark.parametrize("name", ["isnan", "isinf", "isfinite"])
def test_classification_at_five_eighths_streams(name):
    # float32 in, bools out: 5 bytes a point. (512, 256) touches exactly 5/8 of the L3 and
    # streams (bench_topi's 2048^2 isnan on a 32 MB L3 is this case); one row fewer does not.
    def data(shape):
        x = RNG.standard_normal(shape).astype("float32")
        x.flat[::7] = np.nan
        x.flat[3::11] = np.inf
        x.flat[5::13] = -np.inf
        return x

    for rows, want_streams in ((512, True), (511, False)):
        assert (rows * 256 * 5 >= L3 * 5 // 8) == want_streams
        a = te.placeholder((rows, 256), "float32", name="a")
        sch, streams = _scheduled([a], getattr(topi, name)(a))
        assert streams == want_streams
        x = data((rows, 256))
        _run(sch, [x], getattr(np, name)(x))
