"""CodeGenHost: the body of the outermost parallel loop starts by stating its variable's range
(`if (i < min || i >= end) __builtin_unreachable();`), which GCC loses when it moves the body into
an OpenMP function, so that an int32 index of the variable is stepped as a pointer instead of
recomputed and sign-extended for every vector. Bodies that allocate more than 64 bytes of local
arrays are left as they were; smaller ones (a pool's window sums, a local result) state it too.
Results are checked against numpy, with sizes that leave tails."""

import numpy as np
import pytest

import tessera as ts
from tessera import te, topi
from tessera.script import tir as T


def _data(rng, shape, dtype):
    if dtype.startswith("float"):
        return rng.standard_normal(shape).astype(dtype)
    info = np.iinfo(dtype)
    # the whole range: int8 / uint8 / int16 products wrap, as numpy's do
    return rng.integers(info.min, info.max, shape, endpoint=True).astype(dtype)


def _loop_lines(src):
    """The pragma, the loop header and the first line of the parallel loop's body."""
    lines = src.splitlines()
    at = next(i for i, line in enumerate(lines) if "#pragma omp parallel for" in line)
    return [line.strip() for line in lines[at:at + 3]]


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "int32", "int64", "float32", "float64"])
@pytest.mark.parametrize("shape", [(37, 123), (3, 1001), (64, 64)])
def test_elementwise_multiply_matches_numpy(dtype, shape):
    rng = np.random.default_rng(len(dtype) * 1000 + shape[1])
    a = te.placeholder(shape, dtype, name="a")
    b = te.placeholder(shape, dtype, name="b")
    lib = ts.build(te.create_prim_func([a, b, topi.multiply(a, b)]), target="c")
    x, y = _data(rng, shape, dtype), _data(rng, shape, dtype)
    out = np.empty(shape, dtype)
    lib(x, y, out)
    np.testing.assert_array_equal(out, np.multiply(x, y))


def test_the_parallel_loop_states_its_range():
    a = te.placeholder((2048, 2048), "int8", name="a")
    b = te.placeholder((2048, 2048), "int8", name="b")
    src = ts.build(te.create_prim_func([a, b, topi.multiply(a, b)]), target="c").get_source()
    # (an elementwise loop into a caller's array runs over its chunks of the parallel loop,
    # 64 of them, as flat ranges whose stores are aligned: test_codegen_host_aligned_stores.py)
    assert _loop_lines(src) == [
        "#pragma omp parallel for schedule(dynamic, 1)",
        "for (int32_t tessera_vec_chunk = 0; tessera_vec_chunk < 64; ++tessera_vec_chunk) {",
        "if (tessera_vec_chunk < 0 || tessera_vec_chunk >= 64) __builtin_unreachable();",
    ]
    assert src.count("__builtin_unreachable") == 1


def test_a_loop_from_a_nonzero_start_states_the_printed_range():
    @T.prim_func
    def f(A: T.Buffer((10, 33), "int16"), B: T.Buffer((10, 33), "int16")):
        for i in T.parallel(3, 10):
            for j in range(33):
                B[i, j] = A[i, j] * A[i, j]

    lib = ts.build(f, target="c")
    lines = _loop_lines(lib.get_source())
    # lowering starts the loop at 0; the range stated is the printed loop's
    assert lines[1] == "for (int32_t i = 0; i < 7; ++i) {", lines
    assert lines[2] == "if (i < 0 || i >= 7) __builtin_unreachable();", lines
    x = _data(np.random.default_rng(3), (10, 33), "int16")
    y = np.zeros((10, 33), "int16")
    lib(x, y)
    np.testing.assert_array_equal(y[3:], x[3:] * x[3:])
    np.testing.assert_array_equal(y[:3], 0)


def test_an_outlined_body_states_the_range_in_its_function():
    @T.prim_func
    def f(A: T.Buffer((29, 64), "float32"), B: T.Buffer((64,), "float32")):
        T.func_attr({"tir.noalias": True})
        for c in T.parallel(4):
            for j in T.vectorized(16):
                B[c * 16 + j] = T.float32(0)
            for k in range(29):
                for j in T.vectorized(16):
                    B[c * 16 + j] = B[c * 16 + j] + A[k, c * 16 + j]

    lib = ts.build(f, target="c")
    src = lib.get_source()
    head = src.index("static inline void tessera_parallel_body_0(int32_t c,")
    first = src[src.index("{\n", head) + 2:].splitlines()[0]
    assert first.strip() == "if (c < 0 || c >= 4) __builtin_unreachable();", first
    assert src.count("__builtin_unreachable") == 1
    a = np.random.default_rng(4).standard_normal((29, 64)).astype("float32")
    b = np.empty(64, "float32")
    lib(a, b)
    np.testing.assert_allclose(b, a.sum(0), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", ["int16", "int32", "float64"])
def test_a_body_with_local_arrays_is_left_as_it_was(dtype):
    # argmax rows by blocks: each row's block extremes live in local arrays (int16 rows measured
    # 11% slower with the range stated: GCC 12 then ran out of registers in the block loop)
    rng = np.random.default_rng(5)
    a = te.placeholder((5, 1037), dtype, name="a")
    # (without tir.ArgExtremeRows, which makes int32 and float64 rows one call a row)
    with ts.transform.PassContext(disabled_pass=["tir.ArgExtremeRows"]):
        lib = ts.build(te.create_prim_func([a, topi.argmax(a, axis=1)]), target="c")
    src = lib.get_source()
    assert "#pragma omp parallel for" in src
    assert "__builtin_unreachable" not in src
    x = _data(rng, (5, 1037), dtype)
    out = np.empty(5, "int32")
    lib(x, out)
    np.testing.assert_array_equal(out, x.argmax(1))


@pytest.mark.parametrize("dtype", ["float32", "float16", "int8"])
def test_a_body_with_a_few_bytes_of_local_arrays_states_the_range(dtype):
    # an NCHW 3 x 3 average pool of stride 3: each row's 9 window sums (and the local of one
    # sum) are a local array of a few bytes; without the range the input addresses were
    # recomputed from the divided loop variable at every window step
    a = te.placeholder((2, 131, 31, 29), dtype, name="a")
    y = topi.nn.pool2d(a, (3, 3), (3, 3), (1, 1), (0, 0, 0, 0), "avg")
    lib = ts.build(te.create_prim_func([a, y]), target="c")
    src = lib.get_source()
    assert "#pragma omp parallel for" in src and "__builtin_unreachable" in src, src
    assert "aligned(64)" in src, src  # the body does allocate
    rng = np.random.default_rng(8)
    x = (rng.integers(-100, 101, (2, 131, 31, 29)) if dtype == "int8"
         else rng.standard_normal((2, 131, 31, 29))).astype(dtype)
    out = np.empty((2, 131, 10, 9), dtype)
    lib(x, out)
    wide = x[:, :, :30, :27].astype(np.float64).reshape(2, 131, 10, 3, 9, 3).sum(axis=(3, 5)) / 9
    if dtype == "int8":
        np.testing.assert_array_equal(out, np.trunc(wide).astype(dtype))
    else:
        tol = 1e-2 if dtype == "float16" else 1e-5
        np.testing.assert_allclose(out.astype(np.float64), wide, rtol=tol, atol=tol)


def test_an_extent_known_only_at_run_time_states_nothing():
    @T.prim_func
    def f(a: T.handle, b: T.handle):
        n = T.int32()
        A = T.match_buffer(a, (n,), "int8")
        B = T.match_buffer(b, (n,), "int8")
        for i in T.parallel(n):
            B[i] = A[i] * A[i]

    lib = ts.build(f, target="c")
    assert "#pragma omp parallel for" in lib.get_source()
    assert "__builtin_unreachable" not in lib.get_source()
    x = _data(np.random.default_rng(6), (77,), "int8")
    y = np.empty(77, "int8")
    lib(x, y)
    np.testing.assert_array_equal(y, x * x)
