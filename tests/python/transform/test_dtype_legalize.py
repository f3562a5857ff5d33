"""tir.BF16ComputeLegalize / BF16StorageLegalize / FP8ComputeLegalize / FP8StorageLegalize:
bfloat16 and float8 arithmetic done in a wider float, and their memory retyped as unsigned
integers, for targets without the type; results checked against ml_dtypes' conversions."""

import ml_dtypes
import numpy as np
import pytest

import tessera as ts
from tessera.ir import IRModule
from tessera.script import tir as T
from tessera.target import Target
from tessera.tir import transform as tt

OLD_GPU = "nvidia/geforce-rtx-2080-ti"  # sm_75: no native bfloat16 nor float8
BF16_GPU = "nvidia/nvidia-a100"  # sm_80: bfloat16, no float8


def bound(func, target):
    return tt.BindTarget(Target(target))(IRModule({"main": func.with_attr("global_symbol", "main")}))


def bf16_bits_to_f32(bits):
    """The float32 whose upper half is the 16 bits of a bfloat16."""
    return T.reinterpret("float32", T.shift_left(T.Cast("uint32", bits), T.uint32(16)))


def f32_to_bf16_bits(value):
    """The upper 16 bits of a float32, rounded half to even."""
    word = T.reinterpret("uint32", value)
    lowest_kept = T.bitwise_and(T.shift_right(word, T.uint32(16)), T.uint32(1))
    rounded = word + (lowest_kept + T.uint32(0x7FFF))
    return T.Cast("uint16", T.shift_right(rounded, T.uint32(16)))


def test_bf16_compute_widens_to_float32_and_storage_uses_uint16():
    @T.prim_func
    def before(Xp: T.handle("bfloat16"), Yp: T.handle("bfloat16")):
        X = T.decl_buffer((16,), "bfloat16", data=Xp)
        Y = T.decl_buffer((16,), "bfloat16", data=Yp)
        tmp = T.decl_buffer((16,), "bfloat16", scope="local")
        for i in range(16):
            tmp[i] = T.max(X[i], T.bfloat16(0))
            Y[i] = tmp[i] * T.bfloat16(2)

    @T.prim_func
    def computed(Xp: T.handle("bfloat16"), Yp: T.handle("bfloat16")):
        X = T.decl_buffer((16,), "bfloat16", data=Xp)
        Y = T.decl_buffer((16,), "bfloat16", data=Yp)
        tmp = T.decl_buffer((16,), "float32", scope="local")
        for i in range(16):
            tmp[i] = T.max(bf16_bits_to_f32(T.reinterpret("uint16", X[i])), T.float32(0))
            Y[i] = T.reinterpret("bfloat16", f32_to_bf16_bits(tmp[i] * T.float32(2)))

    @T.prim_func
    def stored(Xp: T.handle("uint16"), Yp: T.handle("uint16")):
        X = T.decl_buffer((16,), "uint16", data=Xp)
        Y = T.decl_buffer((16,), "uint16", data=Yp)
        tmp = T.decl_buffer((16,), "float32", scope="local")
        for i in range(16):
            tmp[i] = T.max(bf16_bits_to_f32(X[i]), T.float32(0))
            Y[i] = f32_to_bf16_bits(tmp[i] * T.float32(2))

    mod = tt.BF16ComputeLegalize()(bound(before, OLD_GPU))
    ts.ir.assert_structural_equal(mod, bound(computed, OLD_GPU))
    mod = tt.BF16StorageLegalize()(mod)
    ts.ir.assert_structural_equal(mod, bound(stored, OLD_GPU))


def test_attributes_move_to_the_retyped_pointers_and_buffers():
    # An attribute on a narrow allocation, its buffer or a narrow parameter names the retyped
    # pointer or buffer afterwards (the compute pass widens tmp, the storage pass retypes Xp).
    @T.prim_func
    def before(Xp: T.handle("bfloat16"), Yp: T.handle("bfloat16")):
        X = T.decl_buffer((16,), "bfloat16", data=Xp)
        Y = T.decl_buffer((16,), "bfloat16", data=Yp)
        tmp = T.allocate([16], "bfloat16", "local")
        T.attr(tmp, "storage_alignment", 64)
        tmp_buf = T.decl_buffer((16,), "bfloat16", data=tmp, scope="local")
        T.attr(Xp, "storage_alignment", 64)
        T.attr(tmp_buf, "storage_alignment", 64)
        for i in range(16):
            tmp_buf[i] = X[i] + X[i]
            Y[i] = tmp_buf[i]

    @T.prim_func
    def computed(Xp: T.handle("bfloat16"), Yp: T.handle("bfloat16")):
        X = T.decl_buffer((16,), "bfloat16", data=Xp)
        Y = T.decl_buffer((16,), "bfloat16", data=Yp)
        tmp = T.allocate([16], "float32", "local")
        T.attr(tmp, "storage_alignment", 64)
        tmp_buf = T.decl_buffer((16,), "float32", data=tmp, scope="local")
        T.attr(Xp, "storage_alignment", 64)
        T.attr(tmp_buf, "storage_alignment", 64)
        for i in range(16):
            tmp_buf[i] = (bf16_bits_to_f32(T.reinterpret("uint16", X[i]))
                          + bf16_bits_to_f32(T.reinterpret("uint16", X[i])))
            Y[i] = T.reinterpret("bfloat16", f32_to_bf16_bits(tmp_buf[i]))

    @T.prim_func
    def stored(Xp: T.handle("uint16"), Yp: T.handle("uint16")):
        X = T.decl_buffer((16,), "uint16", data=Xp)
        Y = T.decl_buffer((16,), "uint16", data=Yp)
        tmp = T.allocate([16], "float32", "local")
        T.attr(tmp, "storage_alignment", 64)
        tmp_buf = T.decl_buffer((16,), "float32", data=tmp, scope="local")
        T.attr(Xp, "storage_alignment", 64)
        T.attr(tmp_buf, "storage_alignment", 64)
        for i in range(16):
            tmp_buf[i] = bf16_bits_to_f32(X[i]) + bf16_bits_to_f32(X[i])
            Y[i] = f32_to_bf16_bits(tmp_buf[i])

    mod = tt.BF16ComputeLegalize()(bound(before, OLD_GPU))
    ts.ir.assert_structural_equal(mod, bound(computed, OLD_GPU))
    mod = tt.BF16StorageLegalize()(mod)
    ts.ir.assert_structural_equal(mod, bound(stored, OLD_GPU))


def test_bf16_left_alone_where_the_gpu_has_it():
    @T.prim_func
    def func(Xp: T.handle("bfloat16"), Yp: T.handle("bfloat16")):
        X = T.decl_buffer((16,), "bfloat16", data=Xp)
        Y = T.decl_buffer((16,), "bfloat16", data=Yp)
        for i in range(16):
            Y[i] = X[i] + X[i]

    mod = bound(func, BF16_GPU)
    for p in (tt.BF16ComputeLegalize(), tt.BF16StorageLegalize()):
        ts.ir.assert_structural_equal(p(mod), mod)
    # the float8 passes do not enable on sm_80
    assert not ts.ir.structural_equal(tt.BF16ComputeLegalize()(bound(func, OLD_GPU)),
                                      bound(func, OLD_GPU))


def test_fp8_e5m2_via_float16_shifts_only():
    # e5m2 and float16 share the exponent field: widening is a shift of the byte.
    @T.prim_func
    def before(Xp: T.handle("float8_e5m2"), Yp: T.handle("float16")):
        X = T.decl_buffer((8,), "float8_e5m2", data=Xp)
        Y = T.decl_buffer((8,), "float16", data=Yp)
        for i in range(8):
            Y[i] = T.Cast("float16", X[i]) + T.float16(1)

    @T.prim_func
    def expected(Xp: T.handle("uint8"), Yp: T.handle("float16")):
        X = T.decl_buffer((8,), "uint8", data=Xp)
        Y = T.decl_buffer((8,), "float16", data=Yp)
        for i in range(8):
            Y[i] = T.reinterpret("float16", T.shift_left(T.Cast("uint16", X[i]), T.uint16(8))) + T.float16(1)

    mod = tt.FP8ComputeLegalize("float16")(bound(before, OLD_GPU))
    mod = tt.FP8StorageLegalize()(mod)
    ts.ir.assert_structural_equal(mod, bound(expected, OLD_GPU))


def _round_trip(narrow, promote):
    """A function storing float32 inputs as `narrow` (through the compute type) and reading them
    back as float32, legalized for the C target."""

    @T.prim_func
    def func(Ap: T.handle("float32"), Bp: T.handle(narrow), Cp: T.handle("float32")):
        A = T.decl_buffer((8,), "float32", data=Ap)
        B = T.decl_buffer((8,), narrow, data=Bp)
        C = T.decl_buffer((8,), "float32", data=Cp)
        for i in range(8):
            B[i] = T.Cast(narrow, A[i])
        for i in range(8):
            C[i] = T.Cast("float32", B[i])

    mod = bound(func, "c")
    if narrow == "bfloat16":
        mod = tt.BF16StorageLegalize()(tt.BF16ComputeLegalize()(mod))
    else:
        mod = tt.FP8StorageLegalize()(tt.FP8ComputeLegalize(promote)(mod))
    return ts.build(mod, target="c")


@pytest.mark.parametrize("narrow,promote", [("bfloat16", "float32"),
                                            ("float8_e4m3fn", "float32"),
                                            ("float8_e4m3fn", "float16"),
                                            ("float8_e5m2", "float32"),
                                            ("float8_e5m2", "float16")])
def test_round_trip_matches_ml_dtypes(narrow, promote):
    lib = _round_trip(narrow, promote)
    # normal numbers of every format, including halfway cases that round to even
    a = np.array([1.0, 1.0625, 1.1875, -2.75, 3.3, 0.09375, -100.0, 0.5], "float32")
    np_narrow = np.dtype(getattr(ml_dtypes, narrow))
    bits = np.zeros(8, "uint16" if np_narrow.itemsize == 2 else "uint8")
    c = np.zeros(8, "float32")
    lib(a, bits, c)
    wide = a.astype(promote)
    expected = wide.astype(np_narrow)
    np.testing.assert_array_equal(bits, expected.view(bits.dtype))
    np.testing.assert_array_equal(c, expected.astype("float32"))


def test_handle_storage_scope_keyword():
    @T.prim_func
    def func(Xp: T.handle("float32", storage_scope="shared")):
        X = T.decl_buffer((4,), "float32", data=Xp)
        X[0] = T.float32(1)

    @T.prim_func
    def positional(Xp: T.handle("float32", "shared")):
        X = T.decl_buffer((4,), "float32", data=Xp)
        X[0] = T.float32(1)

    ts.ir.assert_structural_equal(func.with_attr("global_symbol", "f"),
                                  positional.with_attr("global_symbol", "f"))


def test_errors():
    @T.prim_func
    def func(X: T.Buffer((4,), "bfloat16")):
        X[0] = X[1] + X[2]

    with pytest.raises(ValueError, match="BindTarget"):
        tt.BF16ComputeLegalize()(IRModule({"main": func}))
    with pytest.raises(ValueError, match="MakePackedAPI"):
        tt.BF16StorageLegalize()(bound(func, OLD_GPU))
    with pytest.raises(ValueError, match="float16"):
        tt.FP8ComputeLegalize("int8")
