"""Types: scalar dtypes and their short names, native vectors and masks with their constructors,
flexible- and multiple-width vectors split or padded to native width."""

import numpy as np
import pytest

from tessera.dsl import BuildManager, hw_native_vdtype, script as S
from tessera.error import DiagnosticError

from _util import ALL_TYPES, INT_TYPES, build, lanes, np_dtype, rand

SHORT = {"i8": "int8", "u8": "uint8", "i16": "int16", "u16": "uint16", "i32": "int32",
         "u32": "uint32", "fp16": "float16", "fp32": "float32", "bf16": "bfloat16"}


def test_scalar_short_names_and_native_vector_types():
    for short, long in SHORT.items():
        assert getattr(S, short) is getattr(S, long)
        assert getattr(S, long).name == long
        vec = hw_native_vdtype(long)
        assert getattr(S, vec).lanes * getattr(S, long).bits == 256
        assert getattr(S, f"{short}x{getattr(S, vec).lanes}") is getattr(S, vec)
    assert S.bool.name == "bool"
    for n in (8, 16, 32):
        assert getattr(S, f"boolx{n}").lanes == n
    # Virtual widths are types too.
    assert S.i32x30.name == "int32x30" and S.fp16x48.lanes == 48 and S.boolx30.lanes == 30
    with pytest.raises(AttributeError):
        S.i64x4  # noqa: B018  (no 64-bit types)


@pytest.mark.parametrize("dtype", ALL_TYPES)
def test_scalar_constructors_and_parameters(dtype):
    T = getattr(S, dtype)
    big = 100 if dtype != "uint8" else 200

    @S.prim_func
    def k(out: S.ptr(dtype, "global"), x: T):
        out[0] = T(big)
        out[1] = x
        out[2] = T(x)
        y: T = T(7)
        out[3] = y

    out = np.zeros(4, np_dtype(dtype))
    build(k)(out, 5)
    np.testing.assert_array_equal(out.astype("float64"), [big, 5, 5, 7])


def test_float_constructors_from_strings():
    @S.prim_func
    def k(out: S.ptr("fp32", "global"), h: S.ptr("fp16", "global")):
        out[0] = S.fp32("inf")
        out[1] = S.fp32("-inf")
        out[2] = S.fp32("nan")
        h[0] = S.fp16(1.2)

    out, h = np.zeros(3, "float32"), np.zeros(1, "float16")
    build(k)(out, h)
    assert out[0] == np.inf and out[1] == -np.inf and np.isnan(out[2])
    assert h[0] == np.float16(1.2)


@pytest.mark.parametrize("dtype", ALL_TYPES)
def test_vector_constructors_broadcast_and_lane_lists(dtype):
    n = lanes(dtype)
    V = getattr(S, hw_native_vdtype(dtype))
    values = [(i * 3) % 50 for i in range(n)]

    @S.prim_func
    def k(out: S.ptr(dtype, "global"), x: getattr(S, dtype)):
        S.vstore(V(7), out)
        S.vstore(V(values), out + n)
        S.vstore(V(x), out + 2 * n)
        v = V(values)
        out[3 * n] = v[n - 1]
        v[1] = x                                  # lane set
        S.vstore(v, out + 3 * n + 1)

    out = np.zeros(4 * n + 1, np_dtype(dtype))
    build(k)(out, 9)
    lane_set = list(values)
    lane_set[1] = 9
    ref = np.concatenate([np.full(n, 7), values, np.full(n, 9), [values[-1]], lane_set]).astype(
        np_dtype(dtype))
    np.testing.assert_array_equal(out, ref)


def test_lane_list_needs_exact_lanes():
    @S.prim_func
    def k(out: S.ptr("int32", "global")):
        S.vstore(S.int32x8([1, 2, 3]), out)

    with pytest.raises(DiagnosticError, match=r"S.int32x8\(\) needs exactly 8 values, got 3"):
        build(k)


def test_mask_types_and_constructors():
    @S.prim_func
    def k(a: S.ptr("int32", "global"), out: S.ptr("int32", "global"), h: S.ptr("int16", "global"),
          hout: S.ptr("int16", "global"), c: S.ptr("int8", "global"), cout: S.ptr("int8", "global")):
        m8 = S.boolx8([True, False, True, False, True, False, True, True])
        S.vstore(S.vload(a, mask=m8), out)
        S.vstore(S.vload(h, mask=S.boolx16(True)), hout)
        S.vstore(S.vload(c), cout, mask=S.boolx32("16T16F"))

    a = np.arange(1, 9, dtype="int32")
    h = np.arange(1, 17, dtype="int16")
    c = np.arange(1, 33, dtype="int8")
    out, hout, cout = np.full(8, -1, "int32"), np.zeros(16, "int16"), np.full(32, -1, "int8")
    build(k)(a, out, h, hout, c, cout)
    np.testing.assert_array_equal(out, a * np.array([1, 0, 1, 0, 1, 0, 1, 1]))
    np.testing.assert_array_equal(hout, h)
    np.testing.assert_array_equal(cout, np.concatenate([c[:16], np.full(16, -1)]))


# Flexible widths (not a multiple of the native lanes) and multiple widths, per element type.
WIDTHS = {"int8": (40, 64), "uint8": (33, 96), "int16": (30, 48), "uint16": (7, 32),
          "int32": (30, 16), "uint32": (13, 24), "float16": (48, 21), "float32": (30, 16),
          "bfloat16": (19, 32)}


@pytest.mark.parametrize("dtype", ALL_TYPES)
def test_flexible_and_multiple_width_vectors(dtype):
    flex, multi = WIDTHS[dtype]
    F = getattr(S, f"{dtype}x{flex}")

    @S.prim_func
    def k(a: S.ptr(dtype, "global"), b: S.ptr(dtype, "global"), out: S.ptr(dtype, "global")):
        va = a[0:flex]
        vb = S.vload(b, lanes=flex)
        out[0:flex] = va - vb
        vm = S.vload(a + flex, lanes=multi)
        S.vstore(vm + F(1)[0], out + flex)
        c = F(3)
        if dtype == "bfloat16":  # no bfloat16 scalar arithmetic (as in Compass): in float32
            out[flex + multi] = S.fp32(c[flex - 1]) + S.fp32(va[flex - 1])
        else:
            out[flex + multi] = c[flex - 1] + va[flex - 1]

    total = flex + multi + 4
    if dtype in INT_TYPES:
        a = rand(total, dtype, seed=1, low=0, high=100)
        b = rand(total, dtype, seed=2, low=0, high=50)
    else:
        a = rand(total, dtype, seed=1, low=-8, high=8)
        b = rand(total, dtype, seed=2, low=-8, high=8)
    out = np.full(total, 42, np_dtype(dtype))
    ex = build(k)
    ex(a, b, out)
    ref = np.full(total, 42, np_dtype(dtype))
    ref[:flex] = a[:flex] - b[:flex]
    ref[flex:flex + multi] = a[flex:flex + multi] + np_dtype(dtype).type(1)
    ref[flex + multi] = np_dtype(dtype).type(3) + a[flex - 1]
    np.testing.assert_array_equal(out, ref)  # lanes past each vector are untouched
    assert f"{dtype}x{flex}" not in ex.c_code  # only native vectors reach the C code


def test_lowered_module_keeps_virtual_types_until_legalize():
    @S.prim_func
    def k(a: S.ptr("int32", "global"), out: S.ptr("int32", "global")):
        out[0:30] = a[0:30] + 1

    text = str(BuildManager().lower(k))
    assert "out_buf[0:30] = a_buf[0:30] + T.Broadcast(1, 30)" in text
    code = BuildManager().build(k).c_code
    assert "int32x30" not in code and code.count("__vstore(") == 4
    assert "__vmov_w(0x00111111)" in code  # the padding lanes of the last part are masked off


def test_virtual_width_variables_lanes_and_masks():
    @S.prim_func
    def k(a: S.ptr("int32", "global"), out: S.ptr("int32", "global"), n: S.i32, j: S.i32):
        for t in S.tec_range(1):
            acc = S.i32x30(0)                       # a mutable int32x30: four int32x8 parts
            for i in range(n):
                acc = acc + a[i * 30:i * 30 + 30]
            acc[j] = -5                             # a runtime lane of a virtual vector
            out[0:30] = acc
            m = acc > 10                            # a boolx30 mask
            m[3] = False
            out[30] = 1 if m[j + 1] else 0
            out[31] = 1 if S.vall(m) else 0
            out[32] = 1 if S.vany(m) else 0
            h = S.i16x20(7)
            out[33] = S.i32(h[19])
            mm = S.tail_mask(j, 30)
            mm[1] = False
            out[34:64] = S.vload(a, lanes=30, mask=mm)

    a = np.arange(1, 91, dtype="int32")
    out = np.zeros(64, "int32")
    build(k)(a, out, 3, 12)
    acc = a[0:30] + a[30:60] + a[60:90]
    acc[12] = -5
    np.testing.assert_array_equal(out[:30], acc)
    assert out[30:34].tolist() == [int(acc[13] > 10), 0, 1, 7]
    np.testing.assert_array_equal(out[34:], np.where((np.arange(30) < 12) & (np.arange(30) != 1), a[:30], 0))
