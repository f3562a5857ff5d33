"""CodeGenHost: a vector conversion between float16 and float32 is printed as vcvtph2ps /
vcvtps2ph on sixteen lanes at a time with AVX-512F, else eight with F16C
(tessera_convert_<from>_<to>), the pieces split and joined by shuffles, where GCC 12 converts a
_Float16 vector one lane at a time. The results
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
    """Four lanes keep __builtin_convertvector; eight are one F16C instruction; sixteen (the
    widest float32 vector the lowering leaves on AVX-512) one AVX-512F instruction, or two F16C
    pieces joined by a shuffle."""
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
    assert code.count("__builtin_ia32_vcvtph2ps512_mask(") == lanes // 16
    assert code.count("__builtin_ia32_vcvtps2ph512_mask(") == lanes // 16
    # the F16C pieces split and joined; a single AVX-512F piece needs neither
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


def _pairs(rng):
    """float16 pairs with NaN on either side, signed zeros both ways, infinities and ties."""
    a = (rng.standard_normal(N) * 100).astype("float16")
    b = (rng.standard_normal(N) * 100).astype("float16")
    special = [(np.nan, 1.0), (1.0, np.nan), (np.nan, np.nan), (0.0, -0.0), (-0.0, 0.0),
               (np.inf, -np.inf), (-np.inf, np.inf), (65504.0, np.inf), (2.5, 2.5), (6e-8, -6e-8)]
    for k, (x, y) in enumerate(special):
        a[k], b[k] = x, y
    b[-64:] = a[-64:]  # ties
    return a, b


@pytest.mark.parametrize("op", ["max", "min"])
def test_float16_min_max_compare_as_float32_and_keep_the_bits(op):
    A = te.placeholder((N,), "float16", name="A")
    B = te.placeholder((N,), "float16", name="B")
    f = topi.maximum if op == "max" else topi.minimum
    lib = ts.build(te.create_prim_func([A, B, f(A, B)]), target="c")
    code = lib.get_source()
    helper = re.search(rf"static inline (tessera_float16x\d+) tessera_{op}_float16x\d+\(", code)
    assert helper, code
    assert "tessera_convert_float16x" in code and "_float32x" in code
    a, b = _pairs(np.random.default_rng(4))
    c = np.empty(N, "float16")
    lib(a, b, c)
    with np.errstate(invalid="ignore"):
        want = np.where(a > b, a, b) if op == "max" else np.where(a < b, a, b)  # C's a > b ? a : b
    np.testing.assert_array_equal(c.view("u2"), want.view("u2"))


def test_float16_comparisons_and_argmax_as_numpy():
    A = te.placeholder((N,), "float16", name="A")
    B = te.placeholder((N,), "float16", name="B")
    lib = ts.build(te.create_prim_func([A, B, topi.less(A, B), topi.greater_equal(A, B)]), target="c")
    assert "tessera_convert_float16x" in lib.get_source()
    a, b = _pairs(np.random.default_rng(5))
    lt, ge = np.empty(N, bool), np.empty(N, bool)
    lib(a, b, lt, ge)
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(lt, a < b)
        np.testing.assert_array_equal(ge, a >= b)
    X = te.placeholder((16, 1024), "float16", name="X")
    lib = ts.build(te.create_prim_func([X, topi.argmax(X, axis=1), topi.nn.relu(X)]), target="c")
    x = (np.random.default_rng(6).standard_normal((16, 1024)) * 10).astype("float16")
    x[3, 100] = x[3, 900] = 1000.0  # a tie: the first
    x[5, :] = -np.inf
    x[7, 17] = np.nan  # numpy: the NaN's index
    idx, relu = np.empty(16, "int32"), np.empty((16, 1024), "float16")
    lib(x, idx, relu)
    np.testing.assert_array_equal(idx, x.argmax(1))
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(relu.view("u2"), np.where(x > 0, x, np.float16(0)).view("u2"))
