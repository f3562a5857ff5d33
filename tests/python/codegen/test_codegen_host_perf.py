"""CodeGenHost features for speed: streaming stores, register tiles that survive unrolling."""

import os
import re
import sys

import numpy as np
import pytest

import tessera as ts
from tessera import te
from tessera.script import tir as T
from tessera.tir import Schedule

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "bench"))


def _fma(n):
    @T.prim_func
    def fma(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32"),
            C: T.Buffer((n,), "float32"), D: T.Buffer((n,), "float32")):
        for i in range(n):
            with T.block("D"):
                vi = T.axis.spatial(n, i)
                D[vi] = A[vi] * B[vi] + C[vi]

    return fma


def _aligned(n, offset_elems=0):
    raw = np.empty(n * 4 + 128, np.uint8)
    off = (-raw.ctypes.data) % 64 + offset_elems * 4
    return raw[off:off + n * 4].view(np.float32)


def test_nontemporal_stores_and_fence():
    n = 1024
    sch = Schedule(_fma(n))
    (i,) = sch.get_loops(sch.get_block("D"))
    io, iv = sch.split(i, [None, 16])
    sch.vectorize(iv)
    sch.annotate(io, "pragma_nontemporal", 1)
    lib = ts.build(sch.mod, target="c")
    src = lib.get_source()
    # Stores stream in the host's vector width (16 lanes with AVX-512, 8 with AVX2).
    lanes = min(16, ts._core.host_vector_bits() // 32)
    assert f"tessera_stream_float32x{lanes}(" in src
    assert "tessera_store_fence();" in src
    assert "pragma_nontemporal" not in src
    rng = np.random.default_rng(0)
    # Aligned output (streaming) and misaligned output (the ordinary-store fallback).
    for offset in (0, 1):
        a, b, c = (rng.random(n, dtype="float32") for _ in range(3))
        d = _aligned(n, offset)
        lib(a, b, c, d)
        np.testing.assert_allclose(d, a * b + c, rtol=1e-6)


def test_without_annotation_no_streaming():
    n = 64
    sch = Schedule(_fma(n))
    (i,) = sch.get_loops(sch.get_block("D"))
    _, iv = sch.split(i, [None, 16])
    sch.vectorize(iv)
    src = ts.build(sch.mod, target="c").get_source()
    assert "tessera_stream_" not in src and "tessera_store_fence" not in src


def test_register_tiled_gemm_is_correct():
    import cpu_kernels as K

    n = 64
    rng = np.random.default_rng(0)
    a, b = rng.random((n, n), dtype="float32"), rng.random((n, n), dtype="float32")
    for parallel in (False, True):
        c = np.zeros((n, n), "float32")
        lib = ts.build(K.schedule_matmul(n, parallel=parallel), target="c")
        lib(a, b, c)
        np.testing.assert_allclose(c, a @ b, rtol=1e-4)


def test_allocations_are_aligned():
    @T.prim_func
    def func(A: T.Buffer((4096,), "float32"), B: T.Buffer((4096,), "float32")):
        small = T.alloc_buffer((16,), "float32")
        big = T.alloc_buffer((4096,), "float32")
        for i in range(4096):
            with T.block("big"):
                vi = T.axis.spatial(4096, i)
                big[vi] = A[vi] * T.float32(2)
        for i in range(16):
            with T.block("small"):
                vi = T.axis.spatial(16, i)
                small[vi] = A[vi]
        for i in range(4096):
            with T.block("B"):
                vi = T.axis.spatial(4096, i)
                B[vi] = big[vi] + small[vi % 16]

    # The allocations as written: the automatic schedule would inline both buffers away.
    with ts.transform.PassContext(disabled_pass=["tir.AutoSchedule"]):
        lib = ts.build(func, target="c")
    src = lib.get_source()
    assert "__attribute__((aligned(64))) float small[16];" in src
    assert "__builtin_assume_aligned(tessera_alloc_workspace(" in src
    a = np.arange(4096, dtype="float32")
    b = np.empty_like(a)
    lib(a, b)
    np.testing.assert_array_equal(b, a * 2 + a[np.arange(4096) % 16])


def test_gemm_schedule_example_runs():
    import subprocess

    root = os.path.join(os.path.dirname(__file__), "..", "..", "..")
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(ts.__file__))))
    out = subprocess.run([sys.executable, os.path.join(root, "examples", "gemm_schedule.py"),
                          "--n", "64"], env=env, check=True, capture_output=True, text=True).stdout
    assert "decompose_reduction at k" in out and "pack B" in out


def test_fast_math_vector_exp():
    n = 4096

    @T.prim_func
    def func(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32")):
        for i in range(n):
            with T.block("B"):
                vi = T.axis.spatial(n, i)
                B[vi] = T.exp(A[vi])

    def build(fast):
        sch = Schedule(func)
        (i,) = sch.get_loops(sch.get_block("B"))
        io, ii = sch.split(i, [None, 16])
        sch.vectorize(ii)
        if fast:
            sch.annotate(io, "pragma_fast_math", 1)
        return ts.build(sch.mod, target="c")

    fast, exact = build(True), build(False)
    # Where the C library has vector math (glibc's libmvec), expf's own lane loop vectorizes
    # and the fast path keeps the exact function; elsewhere it is the polynomial.
    assert ("tessera_fast_expf(" in fast.get_source()) != ts._core.host_has_libmvec()
    assert "tessera_fast_expf" not in exact.get_source()
    a = np.linspace(-87, 88, n, dtype="float32")
    b = np.empty_like(a)
    fast(a, b)
    np.testing.assert_allclose(b, np.exp(a.astype("float64")), rtol=2e-6)
    exact(a, b)
    np.testing.assert_allclose(b, np.exp(a.astype("float64")), rtol=1e-6)


@pytest.mark.parametrize("name", ["exp", "log", "sin", "sigmoid"])
def test_vector_math_uses_the_vector_library_and_stays_accurate(name):
    n = 4096
    A = te.placeholder((n,), "float32", name="A")
    fn = {"exp": te.exp, "log": te.log, "tanh": te.tanh, "sin": te.sin, "sigmoid": te.sigmoid}[name]
    B = te.compute((n,), lambda i: fn(A[i]), name="B")
    lib = ts.build(te.create_prim_func([A, B]), target="c")
    if ts._core.host_has_libmvec():
        # the lane loops became calls of libmvec's vector variants (_ZGV<isa>N<lanes>v_<f>)
        assert "_ZGV" in lib.get_source("asm")
    rng = np.random.default_rng(0)
    a = (rng.random(n, dtype="float32") * 8 + 0.01) if name == "log" else \
        rng.uniform(-10, 10, n).astype("float32")
    b = np.empty_like(a)
    lib(a, b)
    x = a.astype("float64")
    ref = {"exp": np.exp, "log": np.log, "tanh": np.tanh, "sin": np.sin,
           "sigmoid": lambda v: 1 / (1 + np.exp(-v))}[name](x)
    np.testing.assert_allclose(b, ref, rtol=2e-6, atol=1e-7)


def _ulps(a, b):
    """Distance in float32 steps between float32 arrays of the same sign."""
    def order(v):
        i = v.view(np.int32).astype(np.int64)
        return np.where(i < 0, -(i & 0x7FFFFFFF), i)
    return np.abs(order(a) - order(b))


def test_vector_tanh_is_our_own_and_within_two_ulp():
    # float32 tanh in vector lanes is tessera_tanhf (faster than libmvec's on AVX-512), not
    # the C library's; within 2 ulp of the correctly rounded value, exact at the ends.
    # (tests/ holds no exhaustive check; run over all 2^32 floats it gave at most 2 ulp.)
    rng = np.random.default_rng(0)
    tiny = np.float32(1e-45) * np.arange(1, 65, dtype="float32")  # denormals
    values = np.concatenate([
        np.float32([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 9.0, 9.1, 9.2, 20.0, 1e30,
                    -1e30, np.finfo("float32").max, np.finfo("float32").tiny]),
        tiny, -tiny,
        np.geomspace(1e-38, 1e-3, 2000, dtype="float32"),
        np.linspace(-10, 10, 20001, dtype="float32"),  # every branch of 2^n (n up to 26)
        rng.uniform(-0.4, 0.4, 8000).astype("float32"),  # around n = 0, +-1
    ])
    n = (len(values) + 15) // 16 * 16
    x = np.resize(values, n).astype("float32")
    A = te.placeholder((n,), "float32", name="A")
    B = te.compute((n,), lambda i: te.tanh(A[i]), name="B")
    lib = ts.build(te.create_prim_func([A, B]), target="c")
    src = lib.get_source()
    assert "static inline float tessera_tanhf(float x)" in src
    assert "tanhf(a0[i])" not in src.replace("tessera_tanhf(a0[i])", "")
    y = np.empty_like(x)
    lib(x, y)
    nan = np.isnan(x)
    assert np.isnan(y[nan]).all()
    ref = np.tanh(x[~nan].astype("float64")).astype("float32")
    got = y[~nan]
    np.testing.assert_array_equal(np.signbit(got), np.signbit(ref))  # -0.0 stays -0.0
    assert _ulps(got, ref).max() <= 2
    big = np.abs(x) >= 9.1
    np.testing.assert_array_equal(y[big], np.sign(x[big]))  # saturates to +-1 exactly
    tiny = (np.abs(x) < 1e-8) & ~nan
    np.testing.assert_array_equal(y[tiny], x[tiny])  # denormals included: tanh(x) is x


@pytest.mark.parametrize("target", [
    "c",
    # no AVX-512F: the lane loop of the C library's pow (the host takes vector_math.h's kernel)
    pytest.param("c -mcpu=x86-64-v2", marks=pytest.mark.skipif(
        os.uname().machine != "x86_64", reason="needs an x86-64 host")),
])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_vector_pow_uses_the_vector_library_and_keeps_c_semantics(dtype, target):
    # pow's lane loop vectorizes into libmvec's two-argument variant where the library has one
    # (with AVX-512F the kernel of vector_math.h computes the lanes, the C library's pow only
    # the special operands); its special cases stay C's (and numpy's): negative bases with
    # integral exponents, zeros, infinities, NaN.
    n = 4096
    A = te.placeholder((n,), dtype, name="A")
    B = te.placeholder((n,), dtype, name="B")
    C = te.compute((n,), lambda i: te.power(A[i], B[i]), name="C")
    lib = ts.build(te.create_prim_func([A, B, C]), target=target)
    asm = lib.get_source("asm")
    if ts._core.host_has_libmvec() and "vgetmantp" not in asm:
        assert "vv_pow" in asm
    rng = np.random.default_rng(1)
    a = rng.uniform(0.01, 10, n).astype(dtype)
    b = rng.uniform(-4, 4, n).astype(dtype)
    special_a = np.array([-2.0, -2.0, 0.0, 0.0, -0.0, 1.0, np.inf, -np.inf, np.nan, 2.0, 0.5, -1.0],
                         dtype)
    special_b = np.array([3.0, 0.5, 0.0, -1.0, 3.0, np.nan, -1.0, 3.0, 0.0, np.inf, -np.inf, np.inf],
                         dtype)
    a[:12], b[:12] = special_a, special_b
    c = np.empty_like(a)
    with np.errstate(all="ignore"):
        lib(a, b, c)
        ref = np.power(a.astype("float64"), b.astype("float64"))
    np.testing.assert_allclose(c, ref, rtol=2e-6 if dtype == "float32" else 1e-14, atol=0)


def _offset_array(n, dtype, offset_bytes):
    """An array of n elements whose data starts `offset_bytes` past a 64-byte boundary."""
    itemsize = np.dtype(dtype).itemsize
    raw = np.empty(n * itemsize + 192, np.uint8)
    off = (-raw.ctypes.data) % 64 + offset_bytes
    return raw[off:off + n * itemsize].view(dtype)


def _streamed(func, lanes):
    sch = Schedule(func)
    (i,) = sch.get_loops(sch.get_block("D"))
    io, iv = sch.split(i, [None, lanes])
    sch.vectorize(iv)
    sch.annotate(io, "pragma_nontemporal", 1)
    return ts.build(sch.mod, target="c")


def _copy_plus_one(n, dtype):
    @T.prim_func
    def f(A: T.Buffer((n,), dtype), D: T.Buffer((n,), dtype)):
        for i in range(n):
            with T.block("D"):
                vi = T.axis.spatial(n, i)
                D[vi] = A[vi] + T.cast(1, dtype)

    return f


def _less(n, dtype):
    @T.prim_func
    def f(A: T.Buffer((n,), dtype), B: T.Buffer((n,), dtype), D: T.Buffer((n,), "bool")):
        for i in range(n):
            with T.block("D"):
                vi = T.axis.spatial(n, i)
                D[vi] = A[vi] < B[vi]

    return f


X86 = ts._core.host_vector_bits() >= 256  # an x86 host with AVX (the streaming instructions)


@pytest.mark.parametrize("dtype,lanes", [("float32", 16), ("float32", 8), ("float32", 4),
                                         ("float64", 8), ("int32", 2), ("int8", 64),
                                         ("int16", 16)])
def test_streaming_store_at_every_alignment(dtype, lanes):
    # A vector streams where it is aligned to its size and is stored as usual elsewhere: the
    # result is the same at every offset of the output.
    n = 64 * lanes
    lib = _streamed(_copy_plus_one(n, dtype), lanes)
    src = lib.get_source()
    # the vectors as stored (tir.SplitVectorizedLoops may cut a wide loop of narrow lanes)
    widths = {int(w) for w in re.findall(rf"tessera_stream_{dtype}x(\d+)\(", src)}
    assert len(widths) == 1, src
    bytes_ = np.dtype(dtype).itemsize * widths.pop()
    if X86:
        assert ("vmovntps" if bytes_ >= 16 else "movnti") in src
    # streamed where the vector is aligned to its size, stored as usual elsewhere
    assert f"& {bytes_ - 1}) == 0" in src
    rng = np.random.default_rng(3)
    a = (rng.integers(-50, 50, n)).astype(dtype)
    itemsize = np.dtype(dtype).itemsize
    for offset in range(0, 64 + itemsize, itemsize):
        d = _offset_array(n, dtype, offset)
        d[:] = 0
        lib(a, d)
        np.testing.assert_array_equal(d, a + np.asarray(1, dtype), err_msg=f"offset {offset}")


@pytest.mark.parametrize("dtype,lanes", [("float64", 8), ("float64", 4), ("float32", 16),
                                         ("int32", 8), ("float32", 32)])
def test_streaming_bool_compare_at_every_offset(dtype, lanes):
    # A compare's bool lanes (a byte each): 4 and 8 of them stream through movnti, 16 and 32
    # through vector registers, at every offset of the output.
    n = 32 * lanes + lanes
    lib = _streamed(_less(n, dtype), lanes)
    assert "tessera_stream_int8x" in lib.get_source()
    rng = np.random.default_rng(4)
    a, b = (rng.integers(0, 4, n).astype(dtype) for _ in range(2))
    for offset in range(0, 65):
        d = _offset_array(n, "bool", offset)
        d[:] = True
        lib(a, b, d)
        np.testing.assert_array_equal(d, a < b, err_msg=f"offset {offset}")


def _chunked_copy(n, parallel):
    """D = A + 1 in chunks of 64 vectors of 16, the chunk loop streaming."""
    sch = Schedule(_copy_plus_one(n, "float32"))
    (i,) = sch.get_loops(sch.get_block("D"))
    io, ii, iv = sch.split(i, [None, 64, 16])
    if parallel:
        sch.parallel(io)
    sch.vectorize(iv)
    sch.annotate(ii, "pragma_nontemporal", 1)
    return ts.build(sch.mod, target="c")


def _statement_lines(src, text):
    return [k for k, line in enumerate(src.splitlines()) if line.strip() == text]


@pytest.mark.parametrize("parallel", [True, False])
def test_store_fence_once_after_the_outermost_loop(parallel):
    # The fence drains the write-combining buffers: once per thread after the parallel loop
    # (its own region: omp for nowait, the fence, the barrier), once after a serial nest,
    # never per chunk.
    n = 16 * 64 * 37
    lib = _chunked_copy(n, parallel)
    src = lib.get_source()
    lines = src.splitlines()
    fences = _statement_lines(src, "tessera_store_fence();")
    assert len(fences) == 1, src
    outer = next(k for k, line in enumerate(lines) if "i_0 = 0; i_0 <" in line)
    indent = len(lines[outer]) - len(lines[outer].lstrip())
    # the fence follows the outermost loop's closing brace, at its indentation
    assert lines[fences[0] - 1].strip() == "}"
    assert len(lines[fences[0]]) - len(lines[fences[0]].lstrip()) == indent
    # two versions of the chunk loop: streaming where the output starts aligned to the
    # vectors, ordinary stores elsewhere (no per-vector branch on a misaligned output)
    assert re.search(r"if \(\(\(\(uintptr_t\)D\w* & 63\) == 0\)\) {", src) and "} else {" in src
    assert "tessera_stream_float32x16(" in src and "tessera_store_float32x16(" in src
    if parallel:
        assert "#pragma omp parallel\n" in src and "nowait" in src
        assert _statement_lines(src, "#pragma omp parallel for") == []
    else:
        assert "#pragma omp" not in src
    a = np.arange(n, dtype="float32")
    for offset in (0, 16, 4):
        d = _offset_array(n, "float32", offset)
        lib(a, d)
        np.testing.assert_array_equal(d, a + 1)


def test_store_fence_of_a_stream_beside_a_parallel_loop():
    # A serial loop holding a parallel loop and a streaming loop: the streaming loop fences
    # after itself (the serial loop cannot fence the parallel loop's threads).
    n = 16 * 64

    @T.prim_func
    def f(A: T.Buffer((4, n), "float32"), D: T.Buffer((4, n), "float32"),
          E: T.Buffer((4, n), "float32")):
        for r in range(4):
            for i in T.parallel(n):
                with T.block("D"):
                    vr, vi = T.axis.remap("SS", [r, i])
                    D[vr, vi] = A[vr, vi] + T.float32(1)
            for j in T.serial(n // 16, annotations={"pragma_nontemporal": 1}):
                for v in T.vectorized(16):
                    with T.block("E"):
                        vr = T.axis.spatial(4, r)
                        vj = T.axis.spatial(n, j * 16 + v)
                        E[vr, vj] = A[vr, vj] * T.float32(2)

    with ts.transform.PassContext(disabled_pass=["tir.AutoSchedule"]):
        lib = ts.build(f, target="c")
    src = lib.get_source()
    assert "tessera_stream_float32x16(" in src
    assert "#pragma omp parallel for" in src and "nowait" not in src
    fences = _statement_lines(src, "tessera_store_fence();")
    assert len(fences) == 1
    a = np.arange(4 * n, dtype="float32").reshape(4, n)
    d, e = np.zeros_like(a), _offset_array(4 * n, "float32", 16).reshape(4, n)
    lib(a, d, e)
    np.testing.assert_array_equal(d, a + 1)
    np.testing.assert_array_equal(e, a * 2)
