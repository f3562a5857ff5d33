"""Conversions: S.cast between every pair of types (scalars and vectors, saturating, parts,
narrowing from tuples), S.i, S.u, S.reinterpret, .astype, implicit promotion, S.vxtl/S.vxth."""

import ml_dtypes
import numpy as np
import pytest

from tessera.dsl import script as S
from tessera.error import DiagnosticError

from _util import ALL_TYPES, INT_TYPES, build, expect_diag, lanes, np_dtype, rand

FORBIDDEN = {("uint32", "float32"), ("float32", "uint32"), ("uint32", "float16"),
             ("uint32", "bfloat16"), ("bfloat16", "uint32")}
SMALL = ("int8", "uint8", "int16", "uint16")


def allowed(src, dst):
    if (src, dst) in FORBIDDEN:
        return False
    halves = ("float16", "bfloat16")
    return not ((src in halves and dst in SMALL) or (src in SMALL and dst in halves))


def reference(values, src, dst, saturate=False):
    """The DSL's conversion of ``values`` (numpy of ``src``) to ``dst``."""
    if src in INT_TYPES and dst in INT_TYPES:
        v = values.astype("int64")
        if saturate:
            info = np.iinfo(dst)
            v = np.clip(v, info.min, info.max)
        return v.astype(dst)
    if src not in INT_TYPES and dst in INT_TYPES:
        f = values.astype("float64")
        f = np.where(np.isnan(f), 0, f)
        i32 = np.clip(np.trunc(f), -(2**31), 2**31 - 1).astype("int64")
        return i32.astype(dst)
    with np.errstate(over="ignore"):
        return values.astype(np_dtype(dst))


def source_values(src, n):
    if src in INT_TYPES:
        return rand(n, src, seed=3)
    v = rand(n, src, seed=3, low=-300, high=300)
    v[3] = np.nan if src != "bfloat16" else v[3]
    return v


CONV_N = 32


def conversion_kernel(src, vector):
    dsts = [d for d in ALL_TYPES if allowed(src, d)]
    n = lanes(src)

    @S.macro
    def one(a, out, dst, slot):
        o = (out.as_ptr("int8") + slot * CONV_N * 4).as_ptr(dst)
        if vector:
            for i in range(0, CONV_N, n):
                v = S.vload(a + i)
                S.vstore(S.cast(v, dst), o + i)
        else:
            for i in range(CONV_N):
                o[i] = S.cast(a[i], dst)

    @S.prim_func
    def k(a: S.ptr(src, "global"), out: S.ptr("void", "global")):
        # One block of CONV_N results per destination type (a compile-time loop in Python).
        if len(dsts) > 0:
            one(a, out, dsts[0], 0)
        if len(dsts) > 1:
            one(a, out, dsts[1], 1)
        if len(dsts) > 2:
            one(a, out, dsts[2], 2)
        if len(dsts) > 3:
            one(a, out, dsts[3], 3)
        if len(dsts) > 4:
            one(a, out, dsts[4], 4)
        if len(dsts) > 5:
            one(a, out, dsts[5], 5)
        if len(dsts) > 6:
            one(a, out, dsts[6], 6)
        if len(dsts) > 7:
            one(a, out, dsts[7], 7)
        if len(dsts) > 8:
            one(a, out, dsts[8], 8)

    return k, dsts


@pytest.mark.parametrize("vector", [False, True], ids=["scalar", "vector"])
@pytest.mark.parametrize("src", ALL_TYPES)
def test_cast_between_every_pair_of_types(src, vector):
    k, dsts = conversion_kernel(src, vector)
    a = source_values(src, CONV_N)
    out = np.zeros(CONV_N * 4 * len(dsts), "uint8")
    build(k)(a, out)
    for slot, dst in enumerate(dsts):
        raw = out[slot * CONV_N * 4:]
        got = raw.view(np_dtype(dst))[:CONV_N]
        want = reference(a, src, dst)
        if dst in INT_TYPES:
            np.testing.assert_array_equal(got, want, err_msg=f"{src} -> {dst}")
        else:
            np.testing.assert_array_equal(got.astype("float64"), want.astype("float64"),
                                          err_msg=f"{src} -> {dst}")


def test_saturating_integer_casts():
    @S.prim_func
    def k(a: S.ptr("int32", "global"), u: S.ptr("uint32", "global"), out8: S.ptr("int8", "global"),
          out16: S.ptr("uint16", "global"), outu: S.ptr("int32", "global"), s: S.ptr("uint8", "global")):
        for i in range(16):
            out8[i] = S.cast(a[i], "int8", saturate=True)
            out16[i] = S.cast(a[i], "uint16", saturate=True)
            outu[i] = S.cast(u[i], "int32", saturate=True)
        v = S.vload(a)
        S.vstore(S.cast(v, "uint8", saturate=True), s)
        S.vstore(S.cast(S.vload(a + 8), "uint8", saturate=False), s + 8)

    a = rand(16, "int32", seed=5)
    u = rand(16, "uint32", seed=6)
    out8, out16 = np.zeros(16, "int8"), np.zeros(16, "uint16")
    outu, s = np.zeros(16, "int32"), np.zeros(16, "uint8")
    build(k)(a, u, out8, out16, outu, s)
    np.testing.assert_array_equal(out8, reference(a, "int32", "int8", saturate=True))
    np.testing.assert_array_equal(out16, reference(a, "int32", "uint16", saturate=True))
    np.testing.assert_array_equal(outu, reference(u, "uint32", "int32", saturate=True))
    np.testing.assert_array_equal(s[:8], reference(a[:8], "int32", "uint8", saturate=True))
    np.testing.assert_array_equal(s[8:], reference(a[8:], "int32", "uint8"))


PARTS = {"low": lambda v: v[: len(v) // 2], "high": lambda v: v[len(v) // 2:],
         "even": lambda v: v[0::2], "odd": lambda v: v[1::2]}


@pytest.mark.parametrize("src,dst", [("int8", "int16"), ("uint8", "uint16"), ("int16", "int32"),
                                     ("uint16", "float32"), ("float16", "float32"),
                                     ("bfloat16", "float32"), ("int8", "int32")])
def test_part_casts(src, dst):
    @S.prim_func
    def k(a: S.ptr(src, "global"), out: S.ptr(dst, "global")):
        v = S.vload(a)
        half = lanes(src) // 2
        S.vstore(S.cast(v, dst, "low"), out)
        S.vstore(S.cast(v, dst, "high"), out + half)
        S.vstore(S.cast(v, dst, part="even"), out + 2 * half)
        S.vstore(S.cast(v, dst, part="odd"), out + 3 * half)

    a = source_values(src, lanes(src))
    if src not in INT_TYPES:
        a[3] = 1.5
    out = np.zeros(2 * lanes(src), np_dtype(dst))
    build(k)(a, out)
    want = np.concatenate([reference(PARTS[p](a), src, dst) for p in ("low", "high", "even", "odd")])
    np.testing.assert_array_equal(out, want)


def test_quarter_casts_and_extends():
    @S.prim_func
    def k(a: S.ptr("int8", "global"), out: S.ptr("int32", "global"), h: S.ptr("uint16", "global"),
          hout: S.ptr("uint32", "global")):
        v = S.vload(a)
        S.vstore(S.cast(v, "int32", "ll"), out)
        S.vstore(S.cast(v, "int32", "lh"), out + 8)   # lanes 8-15
        S.vstore(S.cast(v, "int32", "hl"), out + 16)
        S.vstore(S.cast(v, "int32", "hh"), out + 24)
        x = S.vload(h)
        S.vstore(S.vxtl(x), hout)
        S.vstore(S.vxth(x), hout + 8)

    a = rand(32, "int8", seed=7)
    h = rand(16, "uint16", seed=8)
    out, hout = np.zeros(32, "int32"), np.zeros(16, "uint32")
    build(k)(a, out, h, hout)
    np.testing.assert_array_equal(out, a.astype("int32"))
    np.testing.assert_array_equal(hout, h.astype("uint32"))


def test_narrowing_from_tuples_and_multiple_widths():
    @S.prim_func
    def k(a: S.ptr("int16", "global"), out: S.ptr("int8", "global"), b: S.ptr("int32", "global"),
          out2: S.ptr("uint8", "global"), out3: S.ptr("int8", "global")):
        lo = S.vload(a)
        hi = S.vload(a + 16)
        S.vstore(S.cast((lo, hi), "int8"), out)
        w = S.vload(b, lanes=32)
        S.vstore(S.cast(w, "uint8", saturate=True), out2)
        S.vstore(S.cast(a[0:32], "int8"), out3)

    a = rand(32, "int16", seed=9)
    b = rand(32, "int32", seed=10)
    out, out2, out3 = np.zeros(32, "int8"), np.zeros(32, "uint8"), np.zeros(32, "int8")
    build(k)(a, out, b, out2, out3)
    np.testing.assert_array_equal(out, a.astype("int8"))
    np.testing.assert_array_equal(out2, reference(b, "int32", "uint8", saturate=True))
    np.testing.assert_array_equal(out3, a.astype("int8"))


def test_i_u_reinterpret_and_astype():
    @S.prim_func
    def k(a: S.ptr("int32", "global"), u: S.ptr("uint32", "global"), f: S.ptr("float32", "global"),
          c: S.ptr("int8", "global"), h: S.ptr("float16", "global")):
        v = S.vload(a)
        S.vstore(S.u(v), u)
        S.vstore(S.reinterpret(v, "float32"), f)
        S.vstore(S.reinterpret(v, "int8"), c)             # a scalar type takes the matching lanes
        u[8] = S.u(a[0])
        a[8] = S.i(u[1])
        f[8] = S.reinterpret(a[2], "float32")
        a[9] = S.reinterpret(1.0, "int32")
        S.vstore(v.astype("float16"), h)
        S.vstore(S.reinterpret(S.vload(a), "fp16x16"), h + 8)
        p = a.as_ptr("int8")
        c[32] = p[4]

    a = np.array([-1, 2, 0x3F800000, -7, 100, 2**31 - 1, -(2**31), 5, 0, 0], "int32")
    u, f = np.zeros(9, "uint32"), np.zeros(9, "float32")
    c, h = np.zeros(33, "int8"), np.zeros(24, "float16")
    orig = a.copy()
    build(k)(a, u, f, c, h)
    np.testing.assert_array_equal(u[:8], orig[:8].view("uint32"))
    np.testing.assert_array_equal(f[:8].view("int32"), orig[:8])
    np.testing.assert_array_equal(c[:32], orig[:8].view("int8"))
    assert u[8] == np.uint32(0xFFFFFFFF) and a[8] == 2 and f[8] == 1.0
    assert a[9] == 0x3F800000
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(h[:8], orig[:8].astype("float16"))
    assert c[32] == orig[:8].view("int8")[4]


def test_implicit_promotion():
    @S.prim_func
    def k(a: S.ptr("int8", "global"), b: S.ptr("int32", "global"), out: S.ptr("int32", "global"),
          h: S.ptr("float16", "global"), f: S.ptr("float32", "global"), fo: S.ptr("float32", "global")):
        x = S.vload(a, lanes=8)          # int8x8 (a flexible width)
        y = S.vload(b)                   # int32x8
        S.vstore(x + y, out)             # int8x8 + int32x8 -> int32x8
        out[8] = a[0] + b[0]             # int8 + int32 -> int32
        hv = S.vload(h, lanes=8)
        S.vstore(hv * S.vload(f), fo)    # float16x8 * float32x8 -> float32x8
        fo[8] = b[1] + 0.5               # int32 + float literal -> float32
        fo[9] = h[0] + f[0]              # float16 + float32 -> float32

    a = rand(8, "int8", seed=11)
    b = rand(8, "int32", seed=12, low=-1000, high=1000)
    h = rand(8, "float16", seed=13, low=-4, high=4)
    f = rand(8, "float32", seed=14, low=-4, high=4)
    out, fo = np.zeros(9, "int32"), np.zeros(10, "float32")
    build(k)(a, b, out, h, f, fo)
    np.testing.assert_array_equal(out[:8], a.astype("int32") + b)
    assert out[8] == int(a[0]) + int(b[0])
    np.testing.assert_array_equal(fo[:8], h.astype("float32") * f)
    assert fo[8] == np.float32(b[1]) + np.float32(0.5)
    assert fo[9] == np.float32(h[0]) + f[0]


def test_conversion_errors():
    @S.prim_func
    def no_direct(a: S.ptr("uint32", "global"), f: S.ptr("float32", "global")):
        f[0] = S.cast(a[0], "float32")

    expect_diag(no_direct, 'S.cast(a[0], "float32")', 'No direct conversion from "uint32" to "float32"')

    @S.prim_func
    def part_of_virtual(a: S.ptr("int8", "global"), out: S.ptr("int16", "global")):
        S.vstore(S.cast(S.vload(a, lanes=20), "int16", "low"), out)

    expect_diag(part_of_virtual, 'S.cast(S.vload(a, lanes=20), "int16", "low")',
                "it works on vectors of the native width only")

    @S.prim_func
    def float_saturate(f: S.ptr("float32", "global"), out: S.ptr("int8", "global")):
        out[0] = S.cast(f[0], "int8", saturate=True)

    expect_diag(float_saturate, 'S.cast(f[0], "int8", saturate=True)', 'the arg "saturate" is for integer')

    @S.prim_func
    def bad_bits(a: S.ptr("int32", "global"), out: S.ptr("int16", "global")):
        S.vstore(S.reinterpret(S.vload(a, lanes=4), "int16x16"), out)

    expect_diag(bad_bits, 'S.reinterpret(S.vload(a, lanes=4), "int16x16")', 'has 128 bits but "int16x16" has 256')


def test_bfloat16_data_round_trips():
    @S.prim_func
    def k(a: S.ptr("bf16", "global"), out: S.ptr("bf16", "global")):
        S.vstore(S.vload(a) * S.bf16(2.0), out)
        # Scalars compute in float32 (there is no bfloat16 scalar arithmetic, as in Compass).
        out[16] = S.fp32(a[0]) + S.fp32(a[1])

    a = np.array(np.linspace(-3, 3, 17), dtype=ml_dtypes.bfloat16)
    out = np.zeros(17, ml_dtypes.bfloat16)
    build(k)(a, out)
    np.testing.assert_array_equal(out[:16], (a[:16].astype("float32") * 2).astype(ml_dtypes.bfloat16))
    assert out[16] == (a[0].astype("float32") + a[1].astype("float32")).astype(ml_dtypes.bfloat16)


def test_virtual_vector_cannot_be_a_parameter():
    with pytest.raises(DiagnosticError, match="it works on vectors of the native width only"):
        @S.prim_func
        def k(v: S.i32x30, out: S.ptr("int32", "global")):
            out[0] = v[0]

        build(k)
