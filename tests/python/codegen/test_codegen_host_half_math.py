"""CodeGenHost: float16 exp and tanh (float32 math whose result is rounded to float16 right
away) use kernels sized for float16's precision: AVX-512 on sixteen lanes, AVX2 on eight, the
lane loops of expf / tessera_tanhf elsewhere. Every float16 input is checked against numpy's
float16 result and against the correctly rounded one, with the special values exact."""

import platform

import numpy as np
import pytest

import tessera as ts
from tessera import te, topi
from tessera.script import tir as T

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

try:
    from numpy._core._multiarray_umath import __cpu_features__ as _CPU
except ImportError:  # numpy < 2
    from numpy.core._multiarray_umath import __cpu_features__ as _CPU

_X86 = platform.machine() in ("x86_64", "AMD64")
# (target, the kernel its C compiler takes, whether this host runs it)
_TARGETS = [
    pytest.param("llvm", id="host"),
    pytest.param("llvm -mcpu=haswell", id="avx2",
                 marks=pytest.mark.skipif(not (_X86 and all(_CPU.get(f) for f in ("AVX2", "F16C", "FMA3"))),
                                          reason="needs an x86 host with AVX2, F16C and FMA")),
    pytest.param("llvm -mcpu=x86-64-v2", id="lane-loops",
                 marks=pytest.mark.skipif(not _X86, reason="needs an x86-64 host")),
]
_FNAME = {"exp": "expf", "tanh": "tanhf"}


def _order(v):
    """float16 values as integers in their order (-0 and +0 alike): adjacent floats differ by 1."""
    i = v.view(np.uint16).astype(np.int32)
    return np.where(i & 0x8000, 0x8000 - i, i)


def _check(got, x, name):
    """`got` is numpy's float16 result within one ulp and the correctly rounded one within one
    ulp; NaN, infinities, zeros (with their sign), and so overflow and underflow, exactly."""
    fn = getattr(np, name)
    want = fn(x)  # numpy's float16 loop
    exact = fn(x.astype(np.float64)).astype(np.float16)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    got, want, exact = got[ok], want[ok], exact[ok]
    for special in (np.isposinf, np.isneginf, lambda v: v == 0):
        np.testing.assert_array_equal(special(got), special(want))
    zeros = want == 0
    np.testing.assert_array_equal(np.signbit(got[zeros]), np.signbit(want[zeros]))
    assert np.abs(_order(got) - _order(want)).max() <= 1
    off = np.abs(_order(got) - _order(exact))
    assert off.max() <= 1
    return np.count_nonzero(off)


@pytest.mark.parametrize("target", _TARGETS)
@pytest.mark.parametrize("name", ["exp", "tanh"])
def test_float16_exp_tanh_every_input(name, target):
    x = np.arange(1 << 16, dtype=np.uint16).view(np.float16).reshape(256, 256)
    A = te.placeholder((256, 256), "float16", name="A")
    lib = ts.build(te.create_prim_func([A, getattr(topi, name)(A)]), target=target)
    code = lib.get_source()
    fname = _FNAME[name]
    assert f"tessera_{fname}_to_half_float32x" in code
    assert f"tessera_{fname}_to_half_avx512(" in code and f"tessera_{fname}_to_half_avx2(" in code
    out = np.empty_like(x)
    lib(x, out)
    misrounded = _check(out.ravel(), x.ravel(), name)
    # as accurate as a float32 routine rounded once: misrounded only next to halfway cases
    assert misrounded <= x.size // 10000


def _vectorized(name, lanes, n=4096):
    """B = float16(fn(float32(A))) by `lanes` at a time, through a buffer of the function's own:
    the lowering keeps up to 16 float32 lanes for a store to an argument, 32 for its own."""
    fn = {"exp": T.exp, "tanh": T.tanh}[name]

    @T.prim_func
    def f(A: T.Buffer((n,), "float16"), B: T.Buffer((n,), "float16")):
        C = T.alloc_buffer((n,), "float16")
        for i in T.serial(n // lanes):
            for j in T.vectorized(lanes):
                with T.block("C"):
                    v = T.axis.spatial(n, i * lanes + j)
                    C[v] = T.Cast("float16", fn(T.Cast("float32", A[v])))
        for i in T.serial(n):
            with T.block("B"):
                v = T.axis.spatial(n, i)
                B[v] = C[v]

    return f


@pytest.mark.parametrize("lanes", [8, 16, 32])
@pytest.mark.parametrize("name", ["exp", "tanh"])
def test_float16_exp_tanh_any_width(name, lanes):
    """Eight lanes take the AVX2 kernel on every x86 with AVX2; 16 and 32 lanes, sixteen at a
    time on AVX-512, the pieces joined by shuffles."""
    lib = ts.build(_vectorized(name, lanes), target="c")
    code = lib.get_source()
    fname = _FNAME[name]
    head = f"tessera_{fname}_to_half_float32x{lanes}(tessera_float32x{lanes} x)"
    assert head in code
    wrapper = code[code.index(head):]
    wrapper = wrapper[: wrapper.index("\n}\n")]
    assert wrapper.count(f"tessera_{fname}_to_half_avx512(") == lanes // 16
    assert wrapper.count(f"tessera_{fname}_to_half_avx2(") == lanes // 8
    rng = np.random.default_rng(lanes)
    a = (rng.standard_normal(4096) * 6).astype("float16")
    a[:12] = [0.0, -0.0, np.inf, -np.inf, np.nan, 11.09, 11.1, -17.33, -17.34, 6e-8, -6e-8, 65504.0]
    b = np.empty_like(a)
    lib(a, b)
    _check(b, a, name)


def test_float32_results_keep_the_float32_routines():
    """Only a result rounded to float16 takes the short kernels: float32 exp and tanh, and a
    float16 input whose exp stays float32, keep the float32 routines."""
    A = te.placeholder((64, 256), "float32", name="A")
    for op in (topi.exp, topi.tanh):
        code = ts.build(te.create_prim_func([A, op(A)]), target="c").get_source()
        assert "_to_half_" not in code

    @T.prim_func
    def wide(A: T.Buffer((4096,), "float16"), B: T.Buffer((4096,), "float32")):
        for i in T.serial(256):
            for j in T.vectorized(16):
                with T.block("B"):
                    v = T.axis.spatial(4096, i * 16 + j)
                    B[v] = T.exp(T.Cast("float32", A[v]))

    lib = ts.build(wide, target="c")
    assert "_to_half_" not in lib.get_source()
    a = (np.random.default_rng(0).standard_normal(4096) * 4).astype("float16")
    b = np.empty(4096, "float32")
    lib(a, b)
    # libm's expf and numpy's float32 exp, each within an ulp or so
    np.testing.assert_array_max_ulp(b, np.exp(a.astype("float32")), maxulp=4)
