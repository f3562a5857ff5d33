"""Compass DSL 4.2 rules that its own unit tests check: operators on integer vectors of both
signs, S.tag "no_zip", S.clip's order, the C form of constants and of float arithmetic, and the
name in the AttributeError of an unknown S attribute. Kernels run compiled and in PySim, both
checked against numpy."""

import warnings

import numpy as np
import pytest

from tessera.dsl import BuildManager, script as S

from _util import expect_diag, run_both


@pytest.mark.parametrize("xt, yt, want", [("int8", "uint8", "uint8"), ("uint16", "int16", "uint16"),
                                          ("int8", "uint16", "uint16"), ("uint8", "int16", "int16")])
def test_operators_on_vectors_of_both_signs_follow_compass(xt, yt, want):
    # Equal widths give the unsigned type, else the wider one (wrapping, as C does).
    lanes = 32

    @S.prim_func
    def k(a: S.ptr(xt, "global"), b: S.ptr(yt, "global"), out: S.ptr(want, "global")):
        va = S.vload(a, lanes=lanes)
        vb = S.vload(b, lanes=lanes)
        S.vstore(va + vb, out)
        S.vstore(va - vb, out + lanes)

    rng = np.random.default_rng(3)
    a = rng.integers(np.iinfo(xt).min, np.iinfo(xt).max, lanes, endpoint=True).astype(xt)
    b = rng.integers(np.iinfo(yt).min, np.iinfo(yt).max, lanes, endpoint=True).astype(yt)
    a[:2], b[:2] = np.iinfo(xt).min, np.iinfo(yt).max
    bits = np.iinfo(want).bits
    wrap = lambda v: (v % (1 << bits)).astype(np.uint64).astype(f"uint{bits}").view(want)
    expect = np.concatenate([wrap(a.astype(np.int64) + b.astype(np.int64)),
                             wrap(a.astype(np.int64) - b.astype(np.int64))])
    for out in run_both(k, a, b, np.zeros(2 * lanes, want)):
        np.testing.assert_array_equal(out[2], expect)


def test_intrinsics_still_refuse_vectors_of_both_signs():
    @S.prim_func
    def k(a: S.ptr("int16", "global"), b: S.ptr("uint16", "global"), out: S.ptr("int16", "global")):
        S.vstore(S.vadd(S.vload(a), S.vload(b)), out)

    expect_diag(k, "S.vstore(S.vadd(S.vload(a), S.vload(b)), out)",
                'the operands differ in sign: "int16x16" vs. "uint16x16"')


@pytest.mark.parametrize("src", ["float16", "bfloat16"])
def test_tag_no_zip_gives_even_then_odd_lanes_when_compiled_before_x3(src):
    @S.prim_func
    def k(a: S.ptr(src, "global"), out: S.ptr("float32", "global")):
        va = S.vload(a, lanes=32)
        S.vstore(S.tag(S.cast(va, "float32"), "no_zip"), out)

    a = np.arange(32, dtype="float32")
    a_in = a.astype("float16") if src == "float16" else a.astype(__import__("ml_dtypes").bfloat16)
    in_order = a_in.astype("float32")
    no_zip = np.concatenate([in_order[0:16:2], in_order[1:16:2], in_order[16::2], in_order[17::2]])
    compiled, pysim = run_both(k, a_in, np.zeros(32, "float32"))
    np.testing.assert_array_equal(compiled[1], no_zip)
    np.testing.assert_array_equal(pysim[1], in_order)  # PySim keeps the order, as Compass's
    x3 = np.zeros(32, "float32")
    BuildManager(target="X3P_1304").build(k)(a_in, x3)
    np.testing.assert_array_equal(x3, in_order)


def test_tag_no_zip_sum_by_parts_is_the_sum_of_even_and_odd_lanes():
    @S.prim_func
    def k(a: S.ptr("float16", "global"), out: S.ptr("float32", "global")):
        S.vstore(S.vrpadd(S.tag(S.cast(S.vload(a), "float32"), "no_zip")), out, "1T")

    a = (np.random.default_rng(9).random(16) * 8 - 4).astype("float16")
    compiled, pysim = run_both(k, a, np.zeros(16, "float32"))
    w = a.astype("float32")
    np.testing.assert_allclose(compiled[1][0], np.sum(w[::2]) + np.sum(w[1::2]), rtol=1e-6)
    np.testing.assert_allclose(pysim[1][0], np.sum(w[:8]) + np.sum(w[8:]), rtol=1e-6)


def test_tag_errors_and_no_effect_warning():
    @S.prim_func
    def bad_attr(a: S.ptr("float16", "global"), out: S.ptr("float32", "global")):
        S.vstore(S.tag(S.cast(S.vload(a), "float32"), "zip"), out)

    expect_diag(bad_attr, 'S.vstore(S.tag(S.cast(S.vload(a), "float32"), "zip"), out)',
                'S.tag: the arg "attr" must be one of')

    @S.prim_func
    def not_cast(a: S.ptr("float32", "global"), out: S.ptr("float32", "global")):
        S.vstore(S.tag(S.vload(a) + 1.0, "no_zip"), out)

    expect_diag(not_cast, 'S.vstore(S.tag(S.vload(a) + 1.0, "no_zip"), out)',
                'applies to the result of S.cast')

    @S.prim_func
    def ints(a: S.ptr("int16", "global"), out: S.ptr("int32", "global")):
        S.vstore(S.tag(S.cast(S.vload(a), "int32"), "no_zip"), out)

    a = np.arange(16, dtype="int16")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        compiled, pysim = run_both(ints, a, np.zeros(16, "int32"))
    assert any("has no effect" in str(w.message) for w in caught)
    for out in (compiled[1], pysim[1]):
        np.testing.assert_array_equal(out, a.astype("int32"))


@pytest.mark.parametrize("dtype", ["int8", "uint16", "float16", "float32"])
def test_clip_is_max_of_min_as_compass(dtype):
    # min_val above max_val gives min_val (Compass's max(min(x, hi), lo)).
    @S.prim_func
    def k(a: S.ptr(dtype, "global"), out: S.ptr(dtype, "global")):
        out[0] = S.clip(a[0], min_val=1, max_val=50)
        out[1] = S.clip(a[1], min_val=1, max_val=50)
        out[2] = S.clip(a[2], min_val=9, max_val=3)

    a = np.array([0, 77, 5, 0], dtype)
    for out in run_both(k, a, np.zeros(4, dtype)):
        np.testing.assert_array_equal(out[1][:3], np.array([1, 50, 9], dtype))


def test_constants_and_float_arithmetic_in_c():
    # Every TEC runs the kernel: inputs and outputs apart.
    @S.prim_func
    def k(a: S.ptr("int8", "global"), h: S.ptr("float16", "global"), f: S.ptr("float32", "global"),
          oa: S.ptr("int8", "global"), oh: S.ptr("float16", "global"), of: S.ptr("float32", "global")):
        oa[0] = S.clip(a[0], min_val=-3, max_val=50)
        oh[0] = h[0] * 7
        of[0] = f[0] / 10

    code = BuildManager().generated_source(k)
    assert "max(min(a[0], (char)50), (char)-3)" in code, code
    assert "(half)(h[0] * (half)0x1.cp+2f/*7.000000e+00*/)" in code, code
    assert "(float)(f[0] / 0x1.4p+3f/*1.000000e+01*/)" in code, code
    args = (np.array([90], "int8"), np.array([0.1], "float16"), np.array([0.3], "float32"),
            np.zeros(1, "int8"), np.zeros(1, "float16"), np.zeros(1, "float32"))
    for out in run_both(k, *args):
        assert out[3][0] == 50
        assert out[4][0] == np.float16(0.1) * np.float16(7)
        assert out[5][0] == np.float32(0.3) / np.float32(10)


def test_unknown_attribute_names_the_module_as_imported():
    from tessera import compat

    with pytest.raises(AttributeError, match="module 'tessera.dsl.script' has no attribute 'fp8x32'"):
        S.fp8x32  # noqa: B018
    compat.install()
    try:
        import tvm.compass.dsl  # noqa: F401

        with pytest.raises(AttributeError,
                           match="module 'tvm.compass.dsl.script' has no attribute 'fp8x32'"):
            S.fp8x32  # noqa: B018
    finally:
        compat.uninstall()


def test_pointer_to_scalars_passes_for_a_pointer_to_vectors_of_them():
    # As Compass's sub-function calls: an int8 pointer (here at an unaligned offset) where the
    # parameter is a pointer to int8x32; a pointer to another element type passes too (Compass
    # checks the scope only), its bytes read as the parameter's type.
    @S.prim_func
    def vmax_of(p: S.ptr("int8x32", "global"), n: S.i32) -> S.i8x32:
        m = p[0]
        for i in range(1, n):
            m = S.max(m, p[i])
        return m

    @S.prim_func
    def k(a: S.ptr("int8", "global"), out: S.ptr("int8x32", "global")):
        out[0] = vmax_of(a + 3, 2)

    a = np.random.default_rng(1).integers(-128, 127, 80, endpoint=True).astype("int8")
    for out in run_both(k, a, np.zeros(32, "int8")):
        np.testing.assert_array_equal(out[1], np.maximum(a[3:35], a[35:67]))

    @S.prim_func
    def other(a: S.ptr("uint8", "global"), out: S.ptr("int8x32", "global")):
        out[0] = vmax_of(a, 2)

    for out in run_both(other, a.view("uint8"), np.zeros(32, "int8")):
        np.testing.assert_array_equal(out[1], np.maximum(a[0:32], a[32:64]))


def test_scalar_argument_converts_to_the_parameter_type():
    # As Compass's sub-function calls: an int32 value passed for an int16 parameter wraps to
    # int16, a float32 for an int32 truncates; vectors must still match.
    @S.prim_func
    def twice(x: S.i16, y: S.i32) -> S.i32:
        return S.i32(x) * 2 + y

    @S.prim_func
    def k(a: S.ptr("int32", "global"), f: S.ptr("float32", "global"), out: S.ptr("int32", "global")):
        out[0] = twice(a[0], f[0])

    a = np.array([70000], "int32")
    f = np.array([-2.75], "float32")
    for res in run_both(k, a, f, np.zeros(1, "int32")):
        assert res[2][0] == np.int32(np.int16(70000 - 65536)) * 2 - 2


@S.prim_func
def _scaled_sum(p: S.ptr("float32", "global"), n: S.i32) -> S.fp32:
    acc = S.fp32(0)
    for i in range(n):
        acc += p[i] * 0.5
    return acc


@S.prim_func
def _first_word(p: S.ptr("int32", "global")) -> S.i32:
    return p[0]


def test_pointer_of_another_type_is_reinterpreted_by_the_sub_function():
    # A u32 pointer where the sub-function takes a float32 one (the case of Compass's
    # test_sub_func_aiff_desc_dtype, without its AIFF): Compass accepts it and the callee reads
    # the words as float32. So does a byte pointer at an offset that is not a whole int32.
    @S.prim_func
    def k(words: S.ptr("u32", "global"), raw: S.ptr("u8", "global"), out: S.ptr("fp32", "global"),
          iout: S.ptr("i32", "global")):
        out[0] = _scaled_sum(words + 1, 3)
        iout[0] = _first_word(raw + 3)

    floats = np.array([9.0, 1.5, -4.0, 10.25, 7.0], "float32")
    raw = np.arange(1, 12, dtype="uint8")
    for res in run_both(k, floats.view("uint32"), raw, np.zeros(1, "float32"), np.zeros(1, "int32")):
        assert res[2][0] == np.float32((1.5 - 4.0 + 10.25) * 0.5)
        assert res[3][0] == raw[3:7].view("int32")[0]

    @S.prim_func
    def other_scope(words: S.ptr("u32", "global"), out: S.ptr("fp32", "global")):
        local = S.alloc_buffer((4,), "u32", scope="lsram")
        out[0] = _scaled_sum(local.addr_of(0), 1)

    expect_diag(other_scope, "_scaled_sum(local.addr_of(0), 1)",
                "expects a pointer to global memory, got one to lsram memory")
