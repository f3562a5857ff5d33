"""Reductions and scans against numpy: axes (None, int, tuple, negative), keepdims, dtypes."""

import re

import numpy as np
import pytest

from tessera import te, topi, transform
from tessera.topi import reduction
from tessera.error import TesseraTypeError, TesseraValueError

from topi_testing import Kernels, random, tol

K = Kernels()
SHAPE = (3, 5, 7)
AXES = [None, 1, -1, (0, 2), (-3, -2)]
NP = {
    "sum": np.sum,
    "max": np.max,
    "min": np.min,
    "prod": np.prod,
    "argmax": np.argmax,
    "argmin": np.argmin,
    "all": np.all,
    "any": np.any,
}
CASES = []
for _op, _dtypes in (
    ("sum", ("float32", "float16", "int32")),
    ("max", ("float32", "int8", "uint8")),
    ("min", ("float32", "int32")),
    ("prod", ("float32", "int32")),
    ("argmax", ("float32", "int32")),
    ("argmin", ("float32",)),
    ("all", ("bool",)),
    ("any", ("bool", "int32")),
):
    for _d in _dtypes:
        for _k, _axis in enumerate(AXES):
            # Every (axis, keepdims) pair for the float32 sum and argmax; alternating otherwise.
            full = (_op, _d) in (("sum", "float32"), ("argmax", "float32"))
            for _keep in (False, True) if full else (_k % 2 == 1,):
                if _op.startswith("arg") and isinstance(_axis, tuple):
                    continue  # numpy's argmax takes one axis
                CASES.append((_op, _d, _k, _keep))
                _A = te.placeholder(SHAPE, _d, name="A")
                K.add(f"{_op}_{_d}_{_k}_{_keep}", [_A], getattr(topi, _op)(_A, _axis, _keep))


@pytest.mark.parametrize("op,dtype,k,keepdims", CASES)
def test_reduce(op, dtype, k, keepdims):
    axis = AXES[k]
    if op == "prod":
        a = (
            random(SHAPE, dtype, 0.5, 1.5)
            if dtype.startswith("float")
            else random(SHAPE, dtype, -1, 1) % 3 - 1
        )
    elif dtype == "int32" and op == "any":
        a = (random(SHAPE, "int32") > 6).astype("int32")
    else:
        a = random(SHAPE, dtype)
    out = K.run(f"{op}_{dtype}_{k}_{keepdims}", a)
    if op.startswith("arg"):
        flat = a if axis is not None else a.reshape(-1)
        expected = NP[op](flat, axis=axis)
        if keepdims:
            expected = (
                np.expand_dims(expected, axis) if axis is not None else expected.reshape(1, 1, 1)
            )
        assert out.dtype == np.int32
    else:
        expected = NP[op](
            a.astype("float64") if dtype == "float16" else a, axis=axis, keepdims=keepdims
        )
    assert out.shape == np.shape(expected)
    if dtype.startswith("float") and not op.startswith("arg"):
        np.testing.assert_allclose(
            out.astype("float64"),
            expected,
            **(tol(dtype) if dtype != "float16" else dict(rtol=1e-2, atol=1e-2)),
        )
    else:
        np.testing.assert_array_equal(out, expected)


def test_argmax_ties_and_last_index():
    A = te.placeholder((2, 6), "int32", name="A")
    k = Kernels()
    k.add("first", [A], topi.argmax(A, axis=1))
    k.add("last", [A], topi.argmax(A, axis=1, select_last_index=True))
    k.add("minlast", [A], topi.argmin(A, axis=0, select_last_index=True))
    a = np.array([[1, 5, 5, 0, 5, 2], [3, 3, 3, 3, 3, 3]], "int32")
    np.testing.assert_array_equal(k.run("first", a), [1, 0])
    np.testing.assert_array_equal(k.run("last", a), [4, 5])
    np.testing.assert_array_equal(k.run("minlast", a), [0, 1, 1, 0, 1, 0])


@pytest.mark.parametrize("shape", [(4, 2048), (5, 37), (3, 64)])
def test_argmax_argmin_float_nan_ties_as_numpy(shape):
    # built with no schedule (the automatic one vectorizes both passes of the wider rows)
    A = te.placeholder(shape, "float32", name="A")
    k = Kernels()
    k.add("max", [A], topi.argmax(A, axis=1))
    k.add("min", [A], topi.argmin(A, axis=1))
    rng = np.random.default_rng(sum(shape))
    a = rng.standard_normal(shape).astype("float32")
    n = shape[1]
    a[0, [2, n - 3]] = np.nan  # the first NaN, after a larger and a smaller value
    a[0, 0], a[0, 1] = 50.0, -50.0
    a[1, [1, n // 2]] = 9.0  # ties: the first index
    a[1, [3, n - 1]] = -9.0
    a[2, :] = 0.0
    a[2, n - 1] = np.nan  # only the last element
    for name, ref in (("max", np.argmax), ("min", np.argmin)):
        got = k.run(name, a)
        np.testing.assert_array_equal(got, ref(a, axis=1))
        assert ((got >= 0) & (got < n)).all()
    b = np.full(shape, np.nan, "float32")  # every element NaN: the first
    np.testing.assert_array_equal(k.run("max", b), np.zeros(shape[0], "int32"))
    c = np.zeros(shape, "float32")
    c[:, n - 2] = np.inf  # an infinity is an ordinary extreme
    c[:, n - 1] = -np.inf
    np.testing.assert_array_equal(k.run("max", c), np.argmax(c, axis=1))
    np.testing.assert_array_equal(k.run("min", c), np.argmin(c, axis=1))



def _block_rows(n, dtype):
    """Rows for argmax's search by blocks (reduction._BLOCK[dtype] elements a block; the last
    block ends at the row's end, overlapping the one before it when the block does not divide
    n)."""
    block = reduction._BLOCK[dtype]
    last = (n - 1) // block * block  # where the last whole-block boundary is
    rng = np.random.default_rng(n)
    rows = []

    def row(*at, value=50.0, base=None):
        r = rng.standard_normal(n).astype(dtype) if base is None else base.copy()
        for i in at:
            r[i] = value
        rows.append(r)
        return r

    row(n - 1)  # in the tail: the last element
    row(last + 3 if last + 3 < n else n - 2)  # in the last block
    row(n - block)  # where the last block starts (inside the block before it when it overlaps)
    row(last - 1)  # the last element before the last block
    row(5, block + 5, n - 1)  # ties across blocks: the first (select_last_index: the last)
    row(block - 1, block)  # ties on both sides of a block boundary
    row(n - block, n - 1)  # ties inside the overlap and at the end
    row(0)
    row(block + 7, value=np.nan)  # a NaN in a later block than the maximum
    nan_then_inf = row(7, value=np.nan)
    row(block + 9, value=np.inf, base=nan_then_inf)  # +inf in a later block than a NaN
    row(n - 1, value=np.nan)  # only the last element
    rows.append(np.full(n, np.nan, dtype))
    rows.append(np.full(n, -np.inf, dtype))
    rows.append(np.full(n, np.inf, dtype))
    rows.append(np.zeros(n, dtype))  # every element ties
    return np.stack(rows)


def _block_sizes(dtype):
    """Row lengths around and above where the search by blocks starts: just below, at, just
    above, a multiple of the block, and one that the block does not divide."""
    start, block = reduction._blocks_from(dtype), reduction._BLOCK[dtype]
    return [start - 1, start, start + 1, start + 2 * block, start + 3 * block - 7]


@pytest.mark.parametrize("dtype,n", [(d, n) for d in ("float32", "float64")
                                     for n in _block_sizes(d)])
def test_argmax_argmin_of_long_rows_by_blocks_as_numpy(n, dtype):
    # rows at least reduction._blocks_from(dtype) long are searched by blocks (the extreme of
    # each block, then one block for the index); just below, by two passes over the row
    a = _block_rows(n, dtype)
    A = te.placeholder(a.shape, dtype, name="A")
    X = te.placeholder((3, 2) + a.shape[1:], dtype, name="X")
    k = Kernels()
    for op in ("max", "min"):
        f = getattr(topi, "arg" + op)
        k.add(op, [A], f(A, axis=1))
        k.add(op + "_last", [A], f(A, axis=-1, select_last_index=True))
        k.add(op + "_keep", [X], f(X, axis=2, keepdims=True))
    by_blocks = n >= reduction._blocks_from(dtype)
    assert ("A_blocks" in te.create_prim_func([A, topi.argmax(A, axis=1)]).script()) == by_blocks
    for op, rows in (("max", a), ("min", -a)):
        ref = getattr(np, "arg" + op)
        np.testing.assert_array_equal(k.run(op, rows), ref(rows, axis=1))
        plain = ~np.isnan(rows).any(axis=1)  # numpy has no last-index form
        last = n - 1 - ref(rows[:, ::-1], axis=1)
        np.testing.assert_array_equal(k.run(op + "_last", rows)[plain], last[plain])
        x = np.ascontiguousarray(rows[-6:][::-1]).reshape(3, 2, n)  # 3-D, rows in another order
        np.testing.assert_array_equal(k.run(op + "_keep", x), ref(x, axis=2, keepdims=True))


def _int_block_rows(n, dtype):
    """Integer rows for the search by blocks: the extreme at block edges, in the overlapping
    last block, ties across blocks, and rows of one value (the type's least and greatest)."""
    info, block = np.iinfo(dtype), reduction._BLOCK[dtype]
    last = (n - 1) // block * block
    rng = np.random.default_rng(n)
    rows = []

    def row(*at):
        r = rng.integers(info.min // 2, info.max // 2, n, dtype=dtype, endpoint=True)
        r[list(at)] = info.max
        rows.append(r)

    row(n - 1)
    row(last + 3 if last + 3 < n else n - 2)
    row(n - block)
    row(last - 1)
    row(5, block + 5, n - 1)
    row(block - 1, block)
    row(n - block, n - 1)
    row(0)
    rows += [np.full(n, info.min, dtype), np.full(n, info.max, dtype), np.zeros(n, dtype)]
    return np.stack(rows)


@pytest.mark.parametrize("dtype,n", [(d, n) for d in ("int16", "uint32", "int64")
                                     for n in _block_sizes(d)[::2]])
def test_integer_argmax_argmin_of_long_rows_by_blocks_as_numpy(n, dtype):
    # 16- to 64-bit integers are searched by blocks too (int8 keeps two passes)
    a = _int_block_rows(n, dtype)
    A = te.placeholder(a.shape, dtype, name="A")
    k = Kernels()
    for op in ("max", "min"):
        f = getattr(topi, "arg" + op)
        k.add(op, [A], f(A, axis=1))
        k.add(op + "_last", [A], f(A, axis=-1, select_last_index=True))
    by_blocks = n >= reduction._blocks_from(dtype)
    assert ("A_blocks" in te.create_prim_func([A, topi.argmax(A, axis=1)]).script()) == by_blocks
    for op, rows in (("max", a), ("min", np.invert(a))):  # ~x reverses the order of the type
        ref = getattr(np, "arg" + op)
        np.testing.assert_array_equal(k.run(op, rows), ref(rows, axis=1))
        np.testing.assert_array_equal(k.run(op + "_last", rows), n - 1 - ref(rows[:, ::-1], axis=1))


def test_int8_argmax_keeps_two_passes():
    A = te.placeholder((4, 4096), "int8", name="A")
    assert "A_blocks" not in te.create_prim_func([A, topi.argmax(A, axis=1)]).script()


@pytest.mark.parametrize("dtype,n", [(d, n) for d in ("float32", "float64")
                                     for n in (reduction._blocks_from(d),
                                               reduction._blocks_from(d) + 3)])
def test_argmax_by_blocks_of_a_nan_after_an_infinity_as_the_two_pass_form(dtype, n, monkeypatch):
    # The limitation in `_arg`'s docstring (the extreme's infinity before the first NaN gives
    # the infinity's index; numpy gives the NaN's) is the same by blocks as by two passes,
    # with the NaN in the infinity's block or in a later one. (Built without tir.ArgExtremeRows,
    # whose one-pass search of float64 rows gives numpy's index: test_topi_argmax_one_pass.py.)
    block = reduction._BLOCK[dtype]
    a = np.zeros((4, n), dtype)
    a[:, 2] = np.inf
    a[[0, 1, 2, 3], [5, block + 1, n - 1, n - block]] = np.nan
    A = te.placeholder(a.shape, dtype, name="A")
    forms = []
    for blocks_from in (reduction._BLOCKS_FROM, n + 1):
        monkeypatch.setattr(reduction, "_BLOCKS_FROM", blocks_from)
        k = Kernels()
        k.add("max", [A], topi.argmax(A, axis=1))
        k.add("min", [A], topi.argmin(A, axis=1))
        with transform.PassContext(disabled_pass=["tir.ArgExtremeRows"]):
            forms.append((k.run("max", a), k.run("min", -a)))
    for by_blocks, by_passes in zip(*forms):
        np.testing.assert_array_equal(by_blocks, by_passes)


def _rows_at_the_ends(shape, dtype):
    """Rows made only of a type's extreme values, each with the reductions ("max": argmax,
    "min": argmin) to check against numpy."""
    n = shape[-1]
    both = ("max", "min")
    if not dtype.startswith("float"):
        info = np.iinfo(dtype)
        return [(np.full(shape, info.min, dtype), both), (np.full(shape, info.max, dtype), both)]
    rows = [(np.full(shape, -np.inf, dtype), both), (np.full(shape, np.inf, dtype), both)]
    # A NaN among infinities: argmax after -inf, argmin after +inf, both where the NaN comes
    # first. (A NaN after the extreme's own infinity is the limitation in topi.argmax's
    # docstring.)
    mixed = np.full(shape, -np.inf, dtype)
    mixed[..., n // 2] = np.nan
    rows.append((mixed, ("max",)))
    mixed = np.full(shape, np.inf, dtype)
    mixed[..., 3] = np.nan
    rows.append((mixed, ("min",)))
    for inf in (-np.inf, np.inf):
        mixed = np.full(shape, inf, dtype)
        mixed[..., [0, n - 1]] = np.nan
        rows.append((mixed, both))
    # The lowest (highest) finite value beats the infinity below (above) it.
    edge = np.full(shape, -np.inf, dtype)
    edge[..., n - 2] = np.finfo(dtype).min
    rows.append((edge, both))
    edge = np.full(shape, np.inf, dtype)
    edge[..., 1] = np.finfo(dtype).max
    rows.append((edge, both))
    return rows


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "uint8", "int8"])
@pytest.mark.parametrize("shape", [(4, 2048), (5, 37), (3, 64)])
def test_argmax_argmin_rows_of_extreme_values_as_numpy(shape, dtype):
    # A row of only -inf gave 2147483647 (te.max starts from the lowest finite value, which no
    # element reaches); integer rows at their type's ends, for the same reason.
    A = te.placeholder(shape, dtype, name="A")
    k = Kernels()
    for op in ("max", "min"):
        k.add(op, [A], getattr(topi, "arg" + op)(A, axis=1))
        k.add(op + "_last", [A], getattr(topi, "arg" + op)(A, axis=1, select_last_index=True))
    n = shape[1]
    for a, ops in _rows_at_the_ends(shape, dtype):
        has_nan = a.dtype.kind == "f" and np.isnan(a).any()
        for op in ops:
            ref = getattr(np, "arg" + op)
            np.testing.assert_array_equal(k.run(op, a), ref(a, axis=1))
            if not has_nan:  # numpy has no last-index form; the reversed row's first index
                last = n - 1 - ref(a[:, ::-1], axis=1)
                np.testing.assert_array_equal(k.run(op + "_last", a), last)


@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_argmax_argmin_extreme_values_other_layouts(dtype):
    # 1-D (every axis), keepdims, every axis of a 2-D tensor, and axis=0 (a column per output)
    X = te.placeholder((300,), dtype, name="X")
    M = te.placeholder((37, 5), dtype, name="M")
    k = Kernels()
    for op in ("max", "min"):
        k.add("flat_" + op, [X], getattr(topi, "arg" + op)(X))
        k.add("keep_" + op, [M], getattr(topi, "arg" + op)(M, axis=1, keepdims=True))
        k.add("col_" + op, [M], getattr(topi, "arg" + op)(M, axis=0))
        k.add("all_" + op, [M], getattr(topi, "arg" + op)(M, keepdims=True))
    for x, ops in _rows_at_the_ends((300,), dtype):
        for op in ops:
            np.testing.assert_array_equal(k.run("flat_" + op, x), getattr(np, "arg" + op)(x))
    for m, ops in _rows_at_the_ends((37, 5), dtype):
        for op in ops:
            ref = getattr(np, "arg" + op)
            np.testing.assert_array_equal(k.run("keep_" + op, m), ref(m, axis=1, keepdims=True))
            np.testing.assert_array_equal(k.run("all_" + op, m), ref(m, keepdims=True))
    for rows, ops in _rows_at_the_ends((5, 37), dtype):
        cols = np.ascontiguousarray(rows.T)  # the same patterns down the columns
        for op in ops:
            ref = getattr(np, "arg" + op)
            np.testing.assert_array_equal(k.run("col_" + op, cols), ref(cols, axis=0))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_max_min_of_infinities_as_numpy(dtype):
    # te.max starts from the lowest finite value: a row of -inf gave -FLT_MAX (numpy: -inf)
    k = Kernels()
    shapes = [(4, 2048), (5, 37), (3, 64)]
    for j, shape in enumerate(shapes):
        A = te.placeholder(shape, dtype, name="A")
        k.add(f"max{j}", [A], topi.max(A, axis=1))
        k.add(f"min{j}", [A], topi.min(A, axis=1, keepdims=True))
        k.add(f"colmax{j}", [A], topi.max(A, axis=0))
        k.add(f"allmin{j}", [A], topi.min(A))
    for j, shape in enumerate(shapes):
        n = shape[1]
        low = np.full(shape, -np.inf, dtype)
        low[1, n // 2] = np.finfo(dtype).min  # the lowest finite value beats -inf
        high = np.full(shape, np.inf, dtype)
        high[0, 1] = np.finfo(dtype).max
        for a in (low, high):
            np.testing.assert_array_equal(k.run(f"max{j}", a), a.max(axis=1))
            np.testing.assert_array_equal(k.run(f"min{j}", a), a.min(axis=1, keepdims=True))
            np.testing.assert_array_equal(k.run(f"colmax{j}", a), a.max(axis=0))
            np.testing.assert_array_equal(k.run(f"allmin{j}", a), a.min())

SCANS = [
    ("cumsum", "float32", 1, False),
    ("cumsum", "int32", 0, True),
    ("cumsum", "float32", None, False),
    ("cumprod", "float32", -1, False),
    ("cumprod", "int32", 1, True),
    ("cumsum", "float16", -1, True),
]
for _j, (_op, _d, _axis, _excl) in enumerate(SCANS):
    _A = te.placeholder((4, 7), _d, name="A")
    K.add(f"scan{_j}", [_A], getattr(topi, _op)(_A, _axis, None, _excl))
_A8 = te.placeholder((9,), "int8", name="A")
K.add("cumsum_dtype", [_A8], topi.cumsum(_A8, dtype="int32"))


@pytest.mark.parametrize("j", range(len(SCANS)))
def test_scan(j):
    op, dtype, axis, exclusive = SCANS[j]
    a = (
        random((4, 7), dtype, 0.5, 1.5)
        if op == "cumprod" and dtype == "float32"
        else random((4, 7), dtype)
    )
    if op == "cumprod" and dtype == "int32":
        a = a % 3
    out = K.run(f"scan{j}", a)
    src = a.reshape(-1) if axis is None else a
    ax = 0 if axis is None else axis
    fn = np.cumsum if op == "cumsum" else np.cumprod
    expected = fn(src.astype("float64") if dtype == "float16" else src, axis=ax)
    if exclusive:
        identity = 0 if op == "cumsum" else 1
        expected = np.moveaxis(expected, ax, 0)
        expected = np.concatenate([np.full_like(expected[:1], identity), expected[:-1]])
        expected = np.moveaxis(expected, 0, ax)
    assert out.shape == expected.shape
    if dtype.startswith("float"):
        np.testing.assert_allclose(
            out, expected, **(tol(dtype) if dtype != "float16" else dict(rtol=1e-2, atol=1e-2))
        )
    else:
        np.testing.assert_array_equal(out, expected)


def test_cumsum_dtype():
    a = np.full((9,), 100, "int8")
    out = K.run("cumsum_dtype", a)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, np.cumsum(a, dtype="int32"))


def test_errors():
    A = te.placeholder((3, 4), "float32", name="A")
    with pytest.raises(TesseraValueError, match="axis 2 is out of range"):
        topi.sum(A, axis=2)
    with pytest.raises(TesseraValueError, match="axis -3 is out of range"):
        topi.argmax(A, axis=-3)
    with pytest.raises(TesseraValueError, match="repeated axis"):
        topi.max(A, axis=(1, -1))
    with pytest.raises(TesseraTypeError, match="axis must be an int"):
        topi.min(A, axis="x")
    with pytest.raises(TesseraValueError, match="out of range"):
        topi.cumsum(A, axis=5)


def test_scan_carries_its_running_value_in_a_local_buffer():
    # The running value lives in a one-element local buffer (a register); the output is only
    # written, never read back (a reload per element would add the store-to-load latency to the
    # chain of additions).
    import tessera as ts

    A = te.placeholder((4, 64), "float32", name="A")
    f = te.create_prim_func([A, topi.cumsum(A, axis=1)])
    text = ts.lower(f, target="c").script()
    assert 'T.allocate([1], "float32", "local")' in text
    # the element stores (`buf[index] = value`)
    stores = [line.strip().split(" = ", 1) for line in text.splitlines()
              if re.match(r"\s*\w+\[.*\] = ", line)]
    assert sum("T_cumsum" in lhs for lhs, _ in stores) == 2  # the first element, the others
    assert not any("T_cumsum" in rhs for _, rhs in stores)
    a = random((4, 64), "float32")
    out = np.zeros((4, 64), "float32")
    ts.build(f, target="c")(a, out)
    np.testing.assert_allclose(out, np.cumsum(a, axis=1), rtol=1e-5, atol=1e-5)


# Integer scans of contiguous lines take their steps 4 at a time (the remainder in a loop of its
# own); contiguous lines index in int64. Lengths around multiples of 4, wrapping values, both scans, exclusive too.
@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "int32", "int64", "float32"])
@pytest.mark.parametrize("length", [1, 2, 4, 5, 8, 11])
@pytest.mark.parametrize("exclusive", [False, True])
def test_scan_steps_by_four_match_numpy(dtype, length, exclusive):
    import tessera as ts

    rng = np.random.default_rng(length)
    for op, axis, shape in (("cumsum", 1, (3, length)), ("cumsum", 0, (length, 3)),
                            ("cumprod", -1, (2, length)), ("cumsum", None, (2, length))):
        A = te.placeholder(shape, dtype, name="A")
        out_t = getattr(topi, op)(A, axis, None, exclusive)
        lib = ts.build(te.create_prim_func([A, out_t]), target="c")
        if dtype.startswith("float"):
            a = rng.uniform(0.5, 1.5, shape).astype(dtype)
        else:
            info = np.iinfo(dtype)  # large values: the 8- and 16-bit sums wrap
            a = rng.integers(max(info.min, -(1 << 20)), min(info.max, 1 << 20), shape,
                             endpoint=True).astype(dtype)
        out = np.empty([int(s) for s in out_t.shape], dtype)
        lib(a, out)
        src, ax = (a.reshape(-1), 0) if axis is None else (a, axis)
        fn = np.cumsum if op == "cumsum" else np.cumprod
        with np.errstate(over="ignore"):
            expected = fn(src, axis=ax, dtype=dtype)
        if exclusive:
            identity = 0 if op == "cumsum" else 1
            expected = np.moveaxis(expected, ax, 0)
            expected = np.concatenate([np.full_like(expected[:1], identity), expected[:-1]])
            expected = np.moveaxis(expected, 0, ax)
        if dtype.startswith("float"):
            np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)
        else:
            np.testing.assert_array_equal(out, expected)


def _scan_loops(dtype, length):
    import tessera as ts

    A = te.placeholder((2, length), dtype, name="A")
    text = ts.lower(te.create_prim_func([A, topi.cumsum(A, axis=1)]), target="c").script()
    return text[text.index("for line"):].splitlines()


def test_integer_scan_unrolls_four_steps_with_int64_indices():
    # golden loop nest: the first element, one iteration of 4 unrolled steps, the remainder
    line = 'T.Cast("int64", line) * T.int64(6)'
    steps = []
    for j in range(1, 5):
        steps += [f"acc_1[0] = acc_1[0] + A_1[{line} + T.int64({j})]",
                  f"T_cumsum_1[{line} + T.int64({j})] = acc_1[0]"]
    expected = [
        "for line in T.parallel(2):",
        'acc = T.allocate([1], "int32", "local")',
        'acc_1 = T.Buffer((1,), "int32", data=acc)',
        f"acc_1[0] = A_1[{line}]",
        f"T_cumsum_1[{line}] = acc_1[0]",
        "for ko in range(1):",
        *steps,
        "for k in range(1):",
        f"acc_1[0] = acc_1[0] + A_1[{line} + T.int64(5)]",
        f"T_cumsum_1[{line} + T.int64(5)] = acc_1[0]",
    ]
    assert [s.strip() for s in _scan_loops("int32", 6)] == expected


def test_float_scan_keeps_one_step_per_iteration():
    # float scans are bound by the latency of their chain of additions: no unrolling
    loops = [s.strip() for s in _scan_loops("float32", 6) if s.strip().startswith("for ")]
    assert loops == ["for line in T.parallel(2):", "for k in range(5):"]


def test_strided_and_flattened_scans():
    import tessera as ts

    # a strided line (axis 0) keeps one step per iteration and int32 indices
    A = te.placeholder((8, 3), "int32", name="A")
    text = ts.lower(te.create_prim_func([A, topi.cumsum(A, axis=0)]), target="c").script()
    assert "T.unroll" not in text and "ko in" not in text and '"int64"' not in text
    # the flattened tensor is read in place (no reshape stage copied first)
    B = te.placeholder((3, 5), "int32", name="B")
    f = te.create_prim_func([B, topi.cumsum(B)])
    text = ts.lower(f, target="c").script()
    assert "reshape" not in text and "ko in range(3)" in text
    b = np.arange(-7, 8, dtype="int32").reshape(3, 5)
    out = np.empty(15, "int32")
    ts.build(f, target="c")(b, out)
    np.testing.assert_array_equal(out, np.cumsum(b))
