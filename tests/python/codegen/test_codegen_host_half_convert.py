"""CodeGenHost: a vector conversion between float16 and float32 is printed as F16C's
vcvtph2ps / vcvtps2ph on eight lanes at a time (tessera_convert_<from>_<to>), the pieces split
and joined by shuffles, where GCC 12 converts a _Float16 vector one lane at a time. The results
are the C conversion's: exact widening, round-to-nearest-even narrowing, infinities on overflow,
subnormals and NaN kept. Checked against numpy's astype."""

import re

import numpy as np
import pytest

import tessera as ts
from tessera import te, topi
from tessera.script import tir as T

pytestmark = pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning")

N = 4096


def _special(dtype):
    """Values that test the rounding: halfway cases, overflow, subnormals, signed zeros, NaN."""
    v = [0.0, -0.0, 1.0, -1.0, 65504.0, 65520.0, 70000.0, -1e9, np.inf, -np.inf, np.nan,
         6e-8, 3e-8, 2.9e-8, 1e-5, -6.1e-5, 1.0 + 2.0**-11, 1.0 + 3 * 2.0**-11, 2049.0, 2051.0]
    return np.array(v, dtype)


def _data(dtype, rng):
    a = (rng.standard_normal(N) * 300).astype(dtype)
    s = _special(dtype)
    a[: len(s)] = s
    return a


def _cast(src, dst):
    A = te.placeholder((N,), src, name="A")
    B = te.compute((N,), lambda i: A[i].astype(dst), name="B")
    return te.create_prim_func([A, B])


def _assert_same(got, want):
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    np.testing.assert_array_equal(got[ok].view(f"u{got.itemsize}"), want[ok].view(f"u{want.itemsize}"))


@pytest.mark.parametrize("src,dst", [("float16", "float32"), ("float32", "float16")])
def test_half_conversion_is_vector_instructions_with_numpy_values(src, dst):
    lib = ts.build(_cast(src, dst), target="c")
    code = lib.get_source()
    names = re.findall(r"tessera_convert_(float\w+?)_(float\w+?)\(", code)
    assert names, code
    assert {(a[: len(src)], b[: len(dst)]) for a, b in names} == {(src, dst)}
    builtin = "__builtin_ia32_vcvtph2ps256" if src == "float16" else "__builtin_ia32_vcvtps2ph256"
    assert builtin in code
    assert "__builtin_convertvector(a0" in code  # the fallback without F16C
    a = _data(src, np.random.default_rng(1))
    b = np.empty(N, dst)
    lib(a, b)
    _assert_same(b, a.astype(dst))


@pytest.mark.parametrize("lanes", [4, 8, 16])
def test_half_conversion_by_eights_of_lanes(lanes):
    """Four lanes keep __builtin_convertvector; eight are one instruction; sixteen (the widest
    float32 vector the lowering leaves on AVX-512) two pieces joined by a shuffle."""
    @T.prim_func
    def f(A: T.Buffer((N,), "float16"), B: T.Buffer((N,), "float32"), C: T.Buffer((N,), "float16")):
        for i in T.serial(N // lanes):
            for j in T.vectorized(lanes):
                with T.block("B"):
                    v = T.axis.spatial(N, i * lanes + j)
                    B[v] = T.Cast("float32", A[v]) * T.float32(3)
        for i in T.serial(N // lanes):
            for j in T.vectorized(lanes):
                with T.block("C"):
                    v = T.axis.spatial(N, i * lanes + j)
                    C[v] = T.Cast("float16", B[v])

    lib = ts.build(f, target="c")
    code = lib.get_source()
    pieces = lanes // 8
    if pieces == 0:
        assert "tessera_convert_" not in code
    else:
        assert f"tessera_convert_float16x{lanes}_float32x{lanes}(" in code
        assert f"tessera_convert_float32x{lanes}_float16x{lanes}(" in code
    assert code.count("__builtin_ia32_vcvtph2ps256(") == pieces
    assert code.count("__builtin_ia32_vcvtps2ph256(") == pieces
    assert code.count("__builtin_shufflevector(") == (2 * (2 * pieces - 1) if pieces > 1 else 0)
    a = _data("float16", np.random.default_rng(lanes))
    b, c = np.empty(N, "float32"), np.empty(N, "float16")
    lib(a, b, c)
    want_b = a.astype("float32") * np.float32(3)
    _assert_same(b, want_b)
    _assert_same(c, want_b.astype("float16"))


def test_float16_exp_and_tanh_compute_in_float32_and_round_once():
    A = te.placeholder((64, 256), "float16", name="A")
    for op, ref in ((topi.exp, np.exp), (topi.tanh, np.tanh)):
        lib = ts.build(te.create_prim_func([A, op(A)]), target="c")
        assert "tessera_convert_float16x" in lib.get_source()
        a = (np.random.default_rng(2).standard_normal((64, 256)) * 4).astype("float16")
        b = np.empty((64, 256), "float16")
        lib(a, b)
        want = ref(a.astype("float32")).astype("float16")
        # one float32 ulp of the math function may move a rounding to float16 by one ulp
        np.testing.assert_array_max_ulp(b, want, maxulp=1)


def test_float16_to_float64_keeps_the_lane_conversion():
    lib = ts.build(_cast("float16", "float64"), target="c")
    assert "tessera_convert_" not in lib.get_source()
    a = _data("float16", np.random.default_rng(3))
    b = np.empty(N, "float64")
    lib(a, b)
    _assert_same(b, a.astype("float64"))
