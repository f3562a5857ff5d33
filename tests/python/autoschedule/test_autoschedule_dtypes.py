"""The automatic schedule on other element types, symbolic shapes and modules of several
functions: ts.build with no schedule matches numpy."""

import numpy as np
import ops
import pytest
import tessera as ts
from tessera import te
from tessera.script import ir as I
from tessera.script import tir as T


@pytest.mark.parametrize("dtype", ["float64", "float16", "int32", "int8"])
def test_elementwise_and_matmul_in_other_types(dtype):
    rng = np.random.default_rng(1)
    shape = (40, 24)
    A = te.placeholder(shape, dtype, name="A")
    B = te.placeholder(shape, dtype, name="B")
    C = te.compute(shape, lambda i, j: A[i, j] * B[i, j] + A[i, j], name="C")
    lib = ts.build(te.create_prim_func([A, B, C]), target="c")
    a = (rng.random(shape) * 4).astype(dtype)
    b = (rng.random(shape) * 4).astype(dtype)
    c = np.zeros(shape, dtype)
    lib(a, b, c)
    np.testing.assert_allclose(c, a * b + a, rtol=1e-2 if dtype == "float16" else 1e-6)
    if dtype in ("float64", "int32"):
        a, b = (rng.random((16, 24)) * 4).astype(dtype), (rng.random((24, 32)) * 4).astype(dtype)
        c = np.zeros((16, 32), dtype)
        ts.build(ops.matmul(16, 32, 24, dtype=dtype), target="c")(a, b, c)
        np.testing.assert_allclose(c, a @ b, rtol=1e-6)


@T.prim_func
def scale_symbolic(a: T.handle, b: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n,), "float32")
    B = T.match_buffer(b, (n,), "float32")
    for i in range(n):
        with T.block("B"):
            vi = T.axis.spatial(n, i)
            B[vi] = A[vi] * T.float32(3)


def test_symbolic_shape():
    lib = ts.build(scale_symbolic, target="c")
    for n in (1, 37, 100000):
        a = np.arange(n, dtype="float32")
        b = np.zeros(n, "float32")
        lib(a, b)
        np.testing.assert_allclose(b, a * 3)


@I.ir_module
class TwoFunctions:
    @T.prim_func
    def double(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
        for i in range(64):
            with T.block("B"):
                vi = T.axis.spatial(64, i)
                B[vi] = A[vi] * T.float32(2)

    @T.prim_func
    def rowsum(A: T.Buffer((16, 64), "float32"), B: T.Buffer((16,), "float32")):
        for i, k in T.grid(16, 64):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vk]


def test_module_of_several_functions():
    sch = ts.autoschedule(TwoFunctions, target="c", facts={"vector_bits": 256})
    text = "\n".join(sch.trace.as_python())
    assert 'func_name="double"' in text and 'func_name="rowsum"' in text
    lib = ts.build(TwoFunctions, target="c")
    a = np.arange(64, dtype="float32")
    b = np.zeros(64, "float32")
    lib["double"](a, b)
    np.testing.assert_allclose(b, a * 2)
    m = np.arange(16 * 64, dtype="float32").reshape(16, 64)
    s = np.zeros(16, "float32")
    lib["rowsum"](m, s)
    np.testing.assert_allclose(s, m.sum(1))



@pytest.mark.parametrize("op", ["greater", "isnan"])
def test_bool_results_take_byte_lanes(op):
    # A bool is stored in a byte: on 512-bit vectors, 64 lanes (as int8), not 512 (1-bit lanes,
    # which the vectorizer left scalar).
    A = te.placeholder((4096,), "float32", name="A")
    if op == "greater":
        B, expect = te.compute((4096,), lambda i: A[i] > 0.5, name="B"), lambda a: a > 0.5
    else:
        B, expect = te.compute((4096,), lambda i: ts.tir.isnan(A[i]), name="B"), np.isnan
    f = te.create_prim_func([A, B])
    # (stream_vector_bits 0: full-width vectors for the 8-bit stream too)
    facts = {"vector_bits": 512, "stream_vector_bits": 0, "cores": 1}
    script = ts.autoschedule(f, target="c", facts=facts).mod.script()
    assert "T.vectorized(64)" in script and "T.vectorized(512)" not in script
    a = np.random.default_rng(3).random(4096).astype("float32")
    a[::7] = np.nan
    out = np.zeros(4096, bool)
    ts.build(f, target="c")(a, out)
    np.testing.assert_array_equal(out, expect(a))


def _any_all_input(rng, shape, dtype):
    if dtype == "bool":
        return rng.random(shape) < 0.02
    x = (rng.random(shape) < 0.02).astype(dtype) * rng.integers(1, 100, shape).astype(dtype)
    return x.astype(dtype)


@pytest.mark.parametrize("dtype", ["float32", "bool", "int8"])
@pytest.mark.parametrize("which", ["any", "all"])
def test_any_all_rows_and_totals_vectorize_their_logical_reduction(which, dtype):
    from tessera import topi

    # `B = B || A != 0` (and &&) is a reducer that rfactor takes: the rows and the total get
    # vector accumulators as a sum does; a bool kept in a byte combines its masks at 8 bits
    wide = {"vector_bits": 512, "vector_registers": 32, "cores": 2}
    rng = np.random.default_rng(5)
    shape = (67, 1024)
    A = te.placeholder(shape, dtype, name="A")
    red = getattr(topi, which)
    rows = te.create_prim_func([A, red(A, axis=1)])
    sch = ts.autoschedule(rows, target="c", facts=wide)
    script = sch.mod.script()
    assert "rfactor" in str(sch.trace)
    # float32 comparisons take float32's 16 lanes; bools and int8 a byte's 64
    assert f"T.vectorized({16 if dtype == 'float32' else 64})" in script
    total = te.create_prim_func([A, red(A)])
    tsch = ts.autoschedule(total, target="c", facts=wide)
    assert "rfactor" in str(tsch.trace) and "T.vectorized(64)" in tsch.mod.script()
    lib = ts.build(tsch.mod, target="c")
    if dtype != "float32":
        # the bytes' masks are not widened to 32-bit lanes and back
        assert ", tessera_int32x64)" not in lib.get_source()
    x = _any_all_input(rng, shape, dtype)
    if which == "all":
        x = ~x if dtype == "bool" else (x == 0).astype(dtype)
    for data in (x, np.zeros_like(x), np.ones_like(x)):
        data = data.copy()
        got = np.zeros(67, bool)
        ts.build(sch.mod, target="c")(data, got)
        np.testing.assert_array_equal(got, getattr(data, which)(1))
        one = np.zeros((), bool)
        lib(data, one)
        assert bool(one) == bool(getattr(data, which)())
    # one flipped element, the last of the last row
    flip = (np.zeros_like(x) if which == "any" else np.ones_like(x)).copy()
    flip[-1, -1] = not flip[-1, -1] if dtype == "bool" else (0 if which == "all" else 3)
    one = np.zeros((), bool)
    lib(flip, one)
    assert bool(one) == bool(getattr(flip, which)())
    # odd shapes (tails, no whole vectors), rows, columns and totals
    for odd in ((37, 29), (5, 1000), (1001, 3)):
        B = te.placeholder(odd, dtype, name="B")
        y = _any_all_input(rng, odd, dtype)
        for axis in (0, 1, None):
            f = te.create_prim_func([B, red(B, axis=axis)])
            want = np.asarray(getattr(y, which)(axis))
            got = np.zeros(want.shape, bool)
            ts.build(f, target="c")(y, got)
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(
    "dtype", ["float64", "int64", "float32", "int32", "int16", "uint8", "int8", "bool"])
@pytest.mark.parametrize("which", ["any", "all"])
def test_any_all_columns_take_the_lanes_of_the_values_they_load(which, dtype):
    from tessera import topi

    # A bool result over the rows (axis 0) streams the rows under vector columns; its lanes are
    # those of the widest value it loads (8 for 64-bit values on AVX-512, not a byte's 64,
    # which the C vectorizer split into eight 8-lane loops per unrolled row).
    wide = {"vector_bits": 512, "vector_registers": 32, "cores": 2}
    rng = np.random.default_rng(17)
    red = getattr(topi, which)
    bits = 8 if dtype == "bool" else np.dtype(dtype).itemsize * 8
    A = te.placeholder((203, 1024), dtype, name="A")
    sch = ts.autoschedule(te.create_prim_func([A, red(A, axis=0)]), target="c", facts=wide)
    assert f"T.vectorized({512 // bits})" in sch.mod.script()
    # multiples of the vector, a chunk's tail, no whole vector; rows odd and not
    for shape in ((203, 1024), (64, 2048), (37, 40), (9, 72), (1001, 3), (5, 1000)):
        B = te.placeholder(shape, dtype, name="B")
        lib = ts.build(te.create_prim_func([B, red(B, axis=0)]), target="c")
        x = _any_all_input(rng, shape, dtype)
        if which == "all":
            x = ~x if dtype == "bool" else (x == 0).astype(dtype)
        base = np.zeros(shape, dtype) if which == "any" else np.ones(shape, dtype)
        flipped = base.copy()
        # one flipped element in two columns of three, in a row that moves with the column
        # (every row position of the unrolled rows and the row tail, every lane)
        cols = np.arange(shape[1])
        cols = cols[cols % 3 != 0]
        flipped[(cols * 7) % shape[0], cols] = (not base.flat[0]) if dtype == "bool" else (
            0 if which == "all" else 3)
        for data in (x, base, flipped, flipped[:, ::-1].copy()):
            got = np.zeros(shape[1], bool)
            lib(np.ascontiguousarray(data), got)
            np.testing.assert_array_equal(got, getattr(data, which)(0), err_msg=f"{shape}")
