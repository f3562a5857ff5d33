"""CodeGenHost's vector math kernels (tessera/target/vector_math.h): float functions computed
lane-parallel in the generated C instead of by the C library lane by lane. Every kernel is
checked against numpy on odd shapes (vector tails), special values and hard cases, in every
dtype it handles, on the host and without FMA (the C library's path)."""

import platform
import re

import numpy as np
import pytest

import tessera as ts
from tessera import te, topi

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

_X86 = platform.machine() in ("x86_64", "AMD64")
_TARGETS = [
    pytest.param("llvm", id="host"),
    pytest.param("llvm -mcpu=x86-64-v2", id="no-fma",
                 marks=pytest.mark.skipif(not _X86, reason="needs an x86-64 host")),
]
_INT = {np.float32: np.int32, np.float64: np.int64}


def _bits(v):
    return v.view(_INT[v.dtype.type])


def _random_bits(rng, n, dtype):
    """Floats of uniformly random bits: every exponent, NaNs, infinities, subnormals."""
    if dtype == np.float32:
        return rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32).view(np.float32)
    return rng.integers(0, 1 << 63, n, dtype=np.uint64).view(np.float64) * rng.choice([1, -1], n)


def _specials(dtype):
    info = np.finfo(dtype)
    return np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 2.0, -2.0, 3.0, -4.0, 0.5,
                     7.0, -7.5, 1e30, info.max, -info.max, info.tiny, info.smallest_subnormal,
                     -info.smallest_subnormal, 3 * info.smallest_subnormal], dtype)


def _fmod_inputs(dtype, seed=0):
    """Pairs for fmod: the bench's data, random bits, wide exponent ranges, every pair of
    special values, and dividends next to multiples of the divisor (quotients that round to
    the next integer)."""
    rng = np.random.default_rng(seed)
    n = 20000
    a = [rng.standard_normal(n).astype(dtype),
         _random_bits(rng, n, dtype),
         (rng.standard_normal(n) * 2.0 ** rng.uniform(-40, 40, n)).astype(dtype)]
    b = [(rng.uniform(0.5, 4.0, n) * rng.choice([1, -1], n)).astype(dtype),
         _random_bits(rng, n, dtype),
         (rng.standard_normal(n) * 2.0 ** rng.uniform(-40, 40, n)).astype(dtype)]
    s = _specials(dtype)
    x, y = np.meshgrid(s, s)
    a.append(x.ravel())
    b.append(y.ravel())
    k = rng.integers(1, 1 << 22, n).astype(dtype)
    d = rng.uniform(0.5, 4.0, n).astype(dtype)
    near = np.nextafter((k * d).astype(dtype), rng.choice([-np.inf, np.inf], n).astype(dtype))
    a.append(near)
    b.append(d)
    a, b = np.concatenate(a), np.concatenate(b)
    pad = -a.size % 256  # whole vectors: rows of 256
    a = np.concatenate([a, np.ones(pad, dtype)])
    b = np.concatenate([b, np.ones(pad, dtype)])
    return a.reshape(-1, 256), b.reshape(-1, 256)


@pytest.mark.parametrize("target", _TARGETS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("op", ["mod"])
def test_fmod_matches_numpy_bit_for_bit(op, dtype, target):
    a, b = _fmod_inputs(dtype)
    A = te.placeholder(a.shape, np.dtype(dtype).name, name="A")
    B = te.placeholder(a.shape, np.dtype(dtype).name, name="B")
    lib = ts.build(te.create_prim_func([A, B, getattr(topi, op)(A, B)]), target=target)
    assert "tessera_fmod_float" in lib.get_source()
    out = np.empty_like(a)
    lib(a, b, out)
    want = np.fmod(a, b)
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(out), nan)
    # exact, with the sign of zero: fmod(-4, 2) is -0.0
    np.testing.assert_array_equal(_bits(out[~nan]), _bits(want[~nan]))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(3, 1000), (7, 48), (33, 40), (1, 1030), (3, 5, 24), (1, 1)])
def test_fmod_odd_shapes(shape, dtype):
    """Vectors with tails and partial tiles (and shapes left scalar), exactly np.fmod."""
    rng = np.random.default_rng(1)
    a = (rng.standard_normal(shape) * 100).astype(dtype)
    a.flat[::7] = -0.0
    b = (rng.uniform(0.5, 4.0, shape) * rng.choice([1, -1], shape)).astype(dtype)
    A = te.placeholder(shape, np.dtype(dtype).name, name="A")
    B = te.placeholder(shape, np.dtype(dtype).name, name="B")
    lib = ts.build(te.create_prim_func([A, B, topi.mod(A, B)]), target="llvm")
    out = np.empty_like(a)
    lib(a, b, out)
    np.testing.assert_array_equal(_bits(out), _bits(np.fmod(a, b)))


def _ulp_error(got, x, np_fn):
    """The largest error of `got` in ulps of the correctly rounded float32 result (computed in
    float64), over the inputs whose result is finite and nonzero; NaN, infinities and zeros
    (with their sign) must match it exactly."""
    exact64 = np_fn(x.astype(np.float64))
    exact = exact64.astype(np.float32)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(exact))
    ok = ~np.isnan(exact)
    special = ok & (np.isinf(exact) | (exact == 0))
    np.testing.assert_array_equal(_bits(got[special]), _bits(exact[special]))
    ok &= ~special
    np.testing.assert_array_equal(np.signbit(got[ok]), np.signbit(exact[ok]))
    ulp = np.spacing(np.abs(exact[ok])).astype(np.float64)
    return float(np.max(np.abs(got[ok].astype(np.float64) - exact64[ok]) / ulp))


# (topi operator, numpy function, C library name, max ulp measured over every float32 input)
_FLOAT32_KERNELS = [("atan", np.arctan, "atanf", 1.37), ("acos", np.arccos, "acosf", 1.28),
                    ("asin", np.arcsin, "asinf", 1.9), ("acosh", np.arccosh, "acoshf", 2.21)]


@pytest.mark.parametrize("target", _TARGETS)
@pytest.mark.parametrize("name,np_fn,fname,max_ulp", _FLOAT32_KERNELS)
def test_float32_kernels_accuracy(name, np_fn, fname, max_ulp, target):
    """A sample of every 1021st float32 bit pattern (all exponents, both signs, NaNs,
    subnormals), the special values and the operator's usual domain."""
    rng = np.random.default_rng(3)
    x = np.concatenate([np.arange(0, 1 << 32, 1021, dtype=np.uint64).astype(np.uint32).view(np.float32),
                        _specials(np.float32), np.float32([1.0000001, 0.9999999, 4096, 4097, 0.5000001]),
                        rng.uniform(-1.0, 1.0, 4096).astype(np.float32),
                        rng.uniform(1.0, 1.1, 4096).astype(np.float32)])
    x = np.concatenate([x, np.zeros(-x.size % 256, np.float32)]).reshape(-1, 256)
    A = te.placeholder(x.shape, "float32", name="A")
    lib = ts.build(te.create_prim_func([A, getattr(topi, name)(A)]), target=target)
    code = lib.get_source()
    assert f"tessera_{fname}(" in code
    out = np.empty_like(x)
    lib(x, out)
    if target != "llvm":
        max_ulp = 4.0  # x86 without AVX2: the C library's function (libmvec: within 4 ulp)
    assert _ulp_error(out.ravel(), x.ravel(), np_fn) <= max_ulp + 0.01
    # numpy's own float32 result (Intel SVML's on AVX-512 hosts, itself up to ~1.5 ulp off)
    want = np_fn(x)
    fin = np.isfinite(want)
    assert np.all(np.abs(out[fin] - want[fin]) <= (2 + max_ulp) * np.spacing(np.abs(want[fin])))


@pytest.mark.parametrize("name,np_fn", [("atan", np.arctan), ("acos", np.arccos),
                                        ("asin", np.arcsin), ("acosh", np.arccosh)])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("shape", [(3, 1000), (7, 33), (1, 1)])
def test_float32_kernels_odd_shapes(name, np_fn, dtype, shape):
    """Tails and partial vectors; float16 computes in float32 (cast, kernel, cast back)."""
    rng = np.random.default_rng(4)
    lo, hi = {"acosh": (1.0, 20.0), "acos": (-1.0, 1.0), "asin": (-1.0, 1.0)}.get(name, (-50.0, 50.0))
    x = rng.uniform(lo, hi, shape).astype(dtype)
    A = te.placeholder(shape, dtype, name="A")
    lib = ts.build(te.create_prim_func([A, getattr(topi, name)(A)]), target="llvm")
    out = np.empty_like(x)
    lib(x, out)
    want = np_fn(x.astype(np.float64)).astype(dtype)
    np.testing.assert_allclose(out.astype(np.float64), want.astype(np.float64),
                               rtol=1e-3 if dtype == "float16" else 3e-7, atol=0)


def _power_inputs(dtype, seed=5):
    """(x, y) pairs: the bench's data, x over every exponent (subnormal too), x near 1 with
    large |y|, results that overflow, underflow or are subnormal, and every pair of special
    values (zeros, infinities, NaN, negative bases with integer and other exponents)."""
    rng = np.random.default_rng(seed)
    n = 1 << 14
    if dtype == np.float32:
        every = rng.integers(1, 0x7F800000, n).astype(np.uint32).view(np.float32)
        subnormal = rng.integers(1, 0x00800000, n).astype(np.uint32).view(np.float32)
        big_t, near = 200.0, 1e5
    else:
        every = rng.integers(1, 0x7FF0000000000000, n, dtype=np.int64).view(np.float64)
        subnormal = rng.integers(1, 0x0010000000000000, n, dtype=np.int64).view(np.float64)
        big_t, near = 1100.0, 1e6
    wide = np.exp(rng.uniform(-80, 80, n))
    xs = [rng.uniform(0.1, 10.0, n), every, subnormal, 1 + rng.uniform(-1e-3, 1e-3, n),
          rng.uniform(0.5, 2.0, n), wide]
    ys = [rng.uniform(-3.0, 3.0, n), rng.uniform(-4.0, 4.0, n), rng.uniform(-1.1, 1.1, n),
          rng.uniform(-near, near, n), rng.uniform(-big_t, big_t, n),
          rng.uniform(-1, 1, n) * 80 / np.maximum(np.abs(np.log(wide)), 1e-3)]
    info = np.finfo(dtype)
    s = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, 3.0, -3.0,
                  info.smallest_subnormal, -info.smallest_subnormal, info.max, 1.5, -1.5, 1e10,
                  -1e10, 1e-10], dtype)
    gx, gy = np.meshgrid(s, s)
    xs.append(gx.ravel())
    ys.append(gy.ravel())
    x = np.concatenate([v.astype(dtype) for v in xs])
    y = np.concatenate([v.astype(dtype) for v in ys])
    pad = -x.size % 256
    x = np.concatenate([x, np.ones(pad, dtype)]).reshape(-1, 256)
    y = np.concatenate([y, np.ones(pad, dtype)]).reshape(-1, 256)
    return x, y


@pytest.mark.parametrize("target", _TARGETS + [
    # AVX-512F without DQ: the special operands by compares instead of vfpclassps
    pytest.param("llvm -mattr=-avx512dq", id="no-avx512dq",
                 marks=pytest.mark.skipif(not _X86, reason="needs an x86-64 host"))])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_power_accuracy(dtype, target):
    """float32 against the float64 power rounded (within 1.2 ulp of it); float64 against
    numpy's (within 1 ulp measured); NaN, infinities and zeros exactly as numpy's."""
    x, y = _power_inputs(dtype)
    name = np.dtype(dtype).name
    X = te.placeholder(x.shape, name, name="X")
    Y = te.placeholder(x.shape, name, name="Y")
    lib = ts.build(te.create_prim_func([X, Y, topi.power(X, Y)]), target=target)
    kernel = "tessera_powf_avx512" if dtype == np.float32 else "tessera_pow_avx512"
    assert kernel in lib.get_source()
    out = np.empty_like(x)
    lib(x, y, out)
    out, x, y = out.ravel(), x.ravel(), y.ravel()
    want = np.power(x, y)  # numpy's own loop
    np.testing.assert_array_equal(np.isnan(out), np.isnan(want))
    if dtype == np.float32:
        exact64 = np.power(x.astype(np.float64), y.astype(np.float64))
        exact = exact64.astype(np.float32)
    else:
        exact64 = exact = want
    special = ~np.isnan(want) & (np.isinf(exact) | (exact == 0))
    np.testing.assert_array_equal(_bits(out[special]), _bits(exact[special]))
    ok = ~np.isnan(want) & ~special
    ulp = np.spacing(np.abs(exact[ok])).astype(np.float64)
    err = np.abs(out[ok].astype(np.float64) - exact64[ok]) / ulp
    lib_path = target == "llvm -mcpu=x86-64-v2"
    assert err.max() <= (4.0 if lib_path else 1.2 if dtype == np.float32 else 1.0)
    if dtype == np.float32:
        assert np.max(np.abs(out[ok].astype(np.float64) - want[ok]) / ulp) <= 2.5


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64"])
@pytest.mark.parametrize("shape", [(3, 1000), (7, 33), (5, 48), (1, 1)])
def test_power_odd_shapes(dtype, shape):
    rng = np.random.default_rng(6)
    x = rng.uniform(0.1, 10.0, shape).astype(dtype)
    y = rng.uniform(-3.0, 3.0, shape).astype(dtype)
    x.flat[::5] = 1.0
    y.flat[::7] = 0.0
    X = te.placeholder(shape, dtype, name="X")
    Y = te.placeholder(shape, dtype, name="Y")
    lib = ts.build(te.create_prim_func([X, Y, topi.power(X, Y)]), target="llvm")
    out = np.empty_like(x)
    lib(x, y, out)
    want = np.power(x.astype(np.float64), y.astype(np.float64)).astype(dtype)
    np.testing.assert_allclose(out.astype(np.float64), want.astype(np.float64),
                               rtol={"float16": 1e-3, "float32": 2.5e-7}.get(dtype, 5e-16), atol=0)
    np.testing.assert_array_equal(out.flat[::35], np.ones_like(out.flat[::35]))


def _power_lib(dtype, shape):
    X = te.placeholder(shape, dtype, name="X")
    Y = te.placeholder(shape, dtype, name="Y")
    return ts.build(te.create_prim_func([X, Y, topi.power(X, Y)]), target="llvm")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_power_kernel_is_inlined_into_the_loop(dtype):
    """The AVX-512 pow kernels are inlined into their loop (a call per vector reloaded every
    constant and, with the C library's lane loop inline, kept the operands on the stack): the
    only call left is to the cold function of the lanes the C library computes."""
    lib = _power_lib(dtype, (64, 256))
    src = lib.get_source()
    kernel = "tessera_powf_avx512" if dtype == "float32" else "tessera_pow_avx512"
    assert "static __attribute__((noinline, cold)) " in src and f"{kernel}_lanes(" in src
    asm = lib.get_source("asm")
    if "vgetmantp" not in asm:
        pytest.skip("the host compiler took the C library's lane loop (no AVX-512F)")
    calls = [c for c in re.findall(r"call\s+([A-Za-z_.@0-9]+)", asm) if c.startswith(kernel)]
    assert calls and all(c.startswith(f"{kernel}_lanes") for c in calls), calls


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_power_special_lane_at_every_position(dtype):
    """One special operand (negative base, zero, NaN, infinity) at each lane of a vector, the
    other lanes ordinary: the C library's lanes are replaced and the others kept, tails too."""
    lanes = 16 if dtype == np.float32 else 8
    rng = np.random.default_rng(11)
    cols = 4 * lanes + 3
    rows = cols * 4
    x = rng.uniform(0.1, 10.0, (rows, cols)).astype(dtype)
    y = rng.uniform(-3.0, 3.0, (rows, cols)).astype(dtype)
    specials = [(-2.0, 3.0), (0.0, 2.5), (np.nan, 1.0), (np.inf, -0.5), (1.5, np.inf),
                (-0.0, -1.0), (-8.0, 1.0 / 3.0), (2.0, np.nan)]
    for r in range(rows):
        c = r % cols
        x[r, c], y[r, c] = specials[r % len(specials)]
    lib = _power_lib(np.dtype(dtype).name, (rows, cols))
    out = np.empty_like(x)
    lib(x, y, out)
    want = np.power(x, y)
    special = np.zeros(x.shape, bool)
    special[np.arange(rows), np.arange(rows) % cols] = True
    np.testing.assert_array_equal(out[special], want[special])
    exact = np.power(x.astype(np.float64), y.astype(np.float64)).astype(dtype)
    ulp = np.spacing(np.abs(exact[~special])).astype(np.float64)
    err = np.abs(out[~special].astype(np.float64) - exact[~special].astype(np.float64)) / ulp
    assert err.max() <= (1.2 if dtype == np.float32 else 1.0)
