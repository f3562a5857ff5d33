"""dsl.CombineInstructions: x & ~y, x | ~y, ~(x & y), ~(x | y) become one call (__vbclr,
__vbset, __vnand, __vnor) on integer vectors and masks, integer vector products by 2^k become
shifts and float divisions by 2^k become products by 2^-k; the C code shows the combined form
and the results (compiled and PySim) still match numpy bit for bit."""

import re

import numpy as np
import pytest

from tessera.dsl import script as S

from _util import INT_TYPES, build, check_active, lanes, mask_bits, np_dtype, rand, run_both

MASK = "3T2F3T"


def _calls(code, name):
    return code.count(name + "(")


@pytest.mark.parametrize("dtype", INT_TYPES)
def test_vector_logic_is_combined(dtype):
    n = lanes(dtype)

    @S.prim_func
    def k(a: S.ptr(dtype, "global"), b: S.ptr(dtype, "global"), out: S.ptr(dtype, "global")):
        x = S.vload(a)
        y = S.vload(b)
        S.vstore(S.vand(x, S.vinv(y)), out)
        S.vstore(S.vand(S.vinv(y), x), out + n)
        S.vstore(S.vor(x, S.vinv(y), mask=MASK), out + 2 * n)
        S.vstore(S.vinv(S.vand(x, y)), out + 3 * n)
        S.vstore(S.vinv(S.vor(x, y)), out + 4 * n)

    code = build(k).c_code
    assert _calls(code, "__vbclr") == 2 and _calls(code, "__vbset") == 1, code
    assert _calls(code, "__vnand") == 1 and _calls(code, "__vnor") == 1, code
    for gone in ("__vand(", "__vor(", "__vinv("):
        assert gone not in code, code

    x, y = rand(n, dtype), rand(n, dtype, seed=1)
    results = run_both(k, x, y, np.zeros(5 * n, np_dtype(dtype)))
    active = np.concatenate([np.ones(2 * n, bool), mask_bits(MASK, n), np.ones(2 * n, bool)])
    expected = np.concatenate([x & ~y, x & ~y, x | ~y, ~(x & y), ~(x | y)])
    check_active([r[2] for r in results], expected, active)


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32"])
def test_mask_logic_is_combined(dtype):
    n = lanes(dtype)

    @S.prim_func
    def k(a: S.ptr(dtype, "global"), b: S.ptr(dtype, "global"), out: S.ptr(dtype, "global")):
        x = S.vload(a)
        y = S.vload(b)
        pa = x > 0
        pb = y > 0
        S.vstore(S.vsel(x, y, S.vand(pa, S.vinv(pb))), out)
        S.vstore(S.vsel(x, y, S.vor(pa, S.vinv(pb))), out + n)
        S.vstore(S.vsel(x, y, S.vinv(S.vand(pa, pb))), out + 2 * n)
        S.vstore(S.vsel(x, y, S.vinv(S.vor(pa, pb))), out + 3 * n)

    code = build(k).c_code
    for name in ("__vbclr", "__vbset", "__vnand", "__vnor"):
        assert _calls(code, name) == 1, code
    assert "__vinv(" not in code, code

    x, y = rand(n, dtype, seed=2), rand(n, dtype, seed=3)
    pa, pb = x > 0, y > 0
    expected = np.concatenate([np.where(m, x, y) for m in
                               (pa & ~pb, pa | ~pb, ~(pa & pb), ~(pa | pb))])
    results = run_both(k, x, y, np.zeros(4 * n, np_dtype(dtype)))
    check_active([r[2] for r in results], expected)


@pytest.mark.parametrize("dtype", ["int16", "uint16", "int32", "uint32"])  # no 8-bit vmul
def test_multiplication_by_power_of_two_is_a_shift(dtype):
    n = lanes(dtype)

    @S.prim_func
    def k(a: S.ptr(dtype, "global"), out: S.ptr(dtype, "global")):
        x = S.vload(a)
        S.vstore(x * 4, out)
        S.vstore(S.vmul(x, 8, mask=MASK), out + n)
        S.vstore(S.vmul(2, x), out + 2 * n)
        S.vstore(x * 3, out + 3 * n)

    code = build(k).c_code
    assert _calls(code, "__vlsl") == 3, code
    # x * 3 stays a multiplication
    assert _calls(code, "__vmul") == 0 and len(re.findall(r"\(x \* \(\w+\)(\(\w+\))?3\)", code)) == 1, code
    # The masked product's mask is the shift's own mask argument (its other lanes undefined).
    assert "__vundef_inactive" not in code, code
    # A shift of every lane leaves its mask out, as Compass prints it (__vlsl(x, s)).
    # A splat among an intrinsic's operands keeps __vbcast (Compass broadcasts those through its
    # vbcast call); the one in the product above is shown as OpenCL C's cast.
    assert re.search(r"__vlsl\(x, \(\w+\)__vbcast\(\(?\w*\)?2\)\)", code), code
    assert re.search(r"__vlsl\(x, \(\w+\)__vbcast\(\(?\w*\)?3\), __vmov_[hw]\(0x[0-9A-F]{8}\)\)", code), code
    if dtype == "uint32":  # unsigned 32-bit constants as Compass prints them
        assert "__vbcast((uint)3)" in code and "(uint8)(uint)3)" in code, code

    x = rand(n, dtype, seed=4)  # with the minimum and maximum: the products wrap
    wide = x.astype(np.int64)
    expected = np.concatenate([wide * 4, wide * 8, wide * 2, wide * 3]).astype(np_dtype(dtype))
    active = np.concatenate([np.ones(n, bool), mask_bits(MASK, n), np.ones(2 * n, bool)])
    results = run_both(k, x, np.zeros(4 * n, np_dtype(dtype)))
    check_active([r[1] for r in results], expected, active)


def _same_bits(got, expected):
    got, expected = np.asarray(got), np.asarray(expected, got.dtype)
    view = {2: np.uint16, 4: np.uint32}[got.dtype.itemsize]
    np.testing.assert_array_equal(got.view(view), expected.view(view))


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_float_division_by_exact_reciprocal(dtype):
    n = lanes(dtype)

    @S.prim_func
    def k(a: S.ptr(dtype, "global"), out: S.ptr(dtype, "global")):
        x = S.vload(a)
        S.vstore(x / S.cast(4, dtype), out)
        S.vstore(x / S.cast(10, dtype), out + n)
        out[2 * n] = a[0] / S.cast(0.5, dtype)
        out[2 * n + 1] = a[1] / S.cast(-8, dtype)
        out[2 * n + 2] = a[2] / S.cast(3, dtype)

    code = build(k).c_code
    assert "__vdiv(" in code and _calls(code, "__vdiv") == 1, code  # x / 10 is kept
    assert code.count(" / ") == 1, code  # a[2] / 3 is kept

    x = rand(n, dtype, seed=5)
    tiny = np.finfo(np_dtype(dtype)).smallest_normal
    x[:3] = [tiny * 3, -tiny, 7.0]  # results become subnormal: both forms round the same way
    wide = x.astype(np.float64)
    expected = np.concatenate([wide / 4, wide / 10, [wide[0] / 0.5, wide[1] / -8, wide[2] / 3]])
    expected = expected.astype(np_dtype(dtype))
    for r in run_both(k, x, np.zeros(2 * n + 3, np_dtype(dtype))):
        _same_bits(r[1][:n], expected[:n])
        _same_bits(r[1][2 * n:2 * n + 2], expected[2 * n:2 * n + 2])
        check_active([r[1]], expected)


def test_division_at_the_ends_of_the_exponent_range():
    big, small = 2.0 ** 127, 2.0 ** -127  # small is subnormal in float32

    @S.prim_func
    def k(a: S.ptr("float32", "global"), out: S.ptr("float32", "global")):
        out[0] = a[0] / S.fp32(big)  # 1 / 2^127 is subnormal: kept a division
        out[1] = a[1] / S.fp32(small)  # 1 / 2^-127 = 2^127: a product

    code = build(k).c_code
    assert code.count(" / ") == 1 and code.count(" * ") == 1, code
    x = np.array([3.0, 1e-10], np.float32)
    expected = np.array([x[0] / np.float32(big), x[1] / np.float32(small)], np.float32)
    for r in run_both(k, x, np.zeros(2, np.float32)):
        _same_bits(r[1], expected)


def test_pass_by_name_on_a_lowered_module():
    from tessera.dsl import BuildManager
    from tessera.dsl import transform as dsl_transform

    @S.prim_func
    def k(a: S.ptr("int32x8", "global"), b: S.ptr("int32x8", "global")):
        b[0] = S.vand(a[0], S.vinv(a[1]))

    mod = BuildManager().lower(k)
    assert "dsl.vbclr" not in str(mod)
    combined = dsl_transform.CombineInstructions()(mod)
    text = str(combined)
    assert "dsl.vbclr" in text and "bitwise_not" not in text, text
    assert dsl_transform.CombineInstructions().name == "dsl.CombineInstructions"


def _shift_right(x, count, with_round):
    """numpy: x >> count lane by lane, rounded to nearest, ties to even, when with_round."""
    x, count = x.astype(np.int64), count.astype(np.int64)
    q = x >> count
    if with_round:
        rem = x - (q << count)
        half = np.where(count > 0, np.int64(1) << np.maximum(count - 1, 0), np.int64(1) << 62)
        q = q + ((rem > half) | ((rem == half) & (q & 1 == 1)))
    return q


def _narrowed(q, to, saturate):
    if saturate:
        info = np.iinfo(np_dtype(to))
        q = np.clip(q, info.min, info.max)
    return q.astype(np_dtype(to))  # wraps when not saturating


NARROWINGS = [("int16", "int8"), ("uint16", "uint8"), ("int16", "uint8"), ("uint16", "int8"),
              ("int32", "int8"), ("uint32", "uint8"), ("int32", "int16"), ("uint32", "uint16"),
              ("int32", "uint16"), ("uint32", "int16")]


@pytest.mark.parametrize("saturate", [True, False])
@pytest.mark.parametrize("with_round", [True, False])
@pytest.mark.parametrize("src, to", NARROWINGS)
def test_narrowing_cast_of_a_shift_is_one_vnsr(src, to, with_round, saturate):
    n_src, n_to = lanes(src), lanes(to)
    k_parts = n_to // n_src  # sources that fill one narrow vector
    bits = np_dtype(src).itemsize * 8

    vdtype = f"{to}x{n_to}"

    if k_parts == 2:
        @S.prim_func
        def k(a: S.ptr(src, "global"), s: S.ptr(src, "global"), out: S.ptr(vdtype, "global")):
            out[0] = S.cast((S.vsr(S.vload(a), S.vload(s), with_round=with_round),
                             S.vsr(S.vload(a + n_src), S.vload(s + n_src), with_round=with_round)),
                            to, saturate=saturate)
            # A single source narrowed into a native vector: its lanes first, repeated.
            out[1] = S.cast(S.vsr(S.vload(a), S.vload(s), with_round=with_round), vdtype,
                            saturate=saturate)
    else:
        @S.prim_func
        def k(a: S.ptr(src, "global"), s: S.ptr(src, "global"), out: S.ptr(vdtype, "global")):
            out[0] = S.cast((S.vsr(S.vload(a), S.vload(s), with_round=with_round),
                             S.vsr(S.vload(a + n_src), S.vload(s + n_src), with_round=with_round),
                             S.vsr(S.vload(a + 2 * n_src), S.vload(s + 2 * n_src), with_round=with_round),
                             S.vsr(S.vload(a + 3 * n_src), S.vload(s + 3 * n_src), with_round=with_round)),
                            to, saturate=saturate)
            out[1] = S.cast(S.vsr(S.vload(a), S.vload(s), with_round=with_round), vdtype,
                            saturate=saturate)

    code = build(k).c_code
    assert "__vnsr_into_" in code, code
    for gone in ("__vasrr(", "__vasr(", "__vcvt_into_", "__vmax(", "__vmin("):
        assert gone not in code, code
    assert code.count("__vnsr_into_") >= k_parts + 1, code

    x = rand(n_to, src, seed=7)
    counts = rand(n_to, src, seed=8, low=0, high=bits - 1)
    counts[:4] = [0, 1, bits - 1, 3]  # no shift, the smallest rounding, the widest shift
    x[3] = -13 if src.startswith("int") else 13  # 13 >> 3 rounds up, -13 >> 3 rounds down
    expected = _narrowed(_shift_right(x, counts, with_round), to, saturate)
    expected = np.concatenate([expected, np.resize(expected[:n_src], n_to)])
    results = run_both(k, x, counts, np.zeros(2 * n_to, np_dtype(to)))
    for r in results:
        np.testing.assert_array_equal(r[2], expected)


def test_narrowing_cast_without_the_full_clamp_is_not_combined():
    """A clamp that is not the target range (user bounds) keeps the shift and the conversion."""

    @S.prim_func
    def k(a: S.ptr("int16", "global"), out: S.ptr("int8", "global")):
        x = S.vload(a)
        y = S.vload(a + 16)
        shifted = (S.min(S.vsr(x, 2), 100), S.min(S.vsr(y, 2), 100))
        S.vstore(S.cast(shifted, "int8"), out)

    code = build(k).c_code
    assert "__vnsr_into_" not in code and "__vasr(" in code, code
    x = rand(32, "int16", seed=9)
    expected = np.minimum(x.astype(np.int64) >> 2, 100).astype(np.int8)
    for r in run_both(k, x, np.zeros(32, np.int8)):
        np.testing.assert_array_equal(r[1], expected)


WIDENING_PRODUCTS = [("int8", "int8", "int16"), ("uint8", "uint8", "uint16"), ("int8", "uint8", "int16"),
                     ("uint8", "int8", "uint16"), ("int8", "int8", "uint16"), ("int16", "int16", "int32"),
                     ("uint16", "int16", "uint32"), ("uint16", "uint16", "int32"), ("int8", "int8", "int32"),
                     ("uint8", "uint8", "uint32"), ("uint8", "int8", "uint32"), ("int8", "uint8", "int32")]


@pytest.mark.parametrize("ta, tb, to", WIDENING_PRODUCTS)
def test_product_of_widening_casts_is_one_widening_multiplication(ta, tb, to):
    n = lanes(ta)  # one narrow vector: 2 or 4 wide parts
    n_wide = lanes(to)

    @S.prim_func
    def k(a: S.ptr(ta, "global"), b: S.ptr(tb, "global"), out: S.ptr(to, "global")):
        x = S.vload(a)
        y = S.vload(b)
        S.vstore(S.cast(x, to) * S.cast(y, to), out)
        # Masked, inactive lanes from r; a scalar factor broadcast.
        S.vstore(S.vmul(S.cast(x, to), S.cast(y, to), S.cast(x, to) > 0, r=S.cast(y, to)), out + n)
        S.vstore(S.cast(x, to) * S.cast(b[5], to), out + 2 * n)

    code = build(k).c_code
    assert "__vmulh_to_" in code and "__vmull_to_" in code, code
    assert "__vmul(" not in code and " * " not in code, code

    x, y = rand(n, ta, seed=10), rand(n, tb, seed=11)
    wx, wy = x.astype(np.int64), y.astype(np.int64)
    dt = np_dtype(to)
    positive = x.astype(np_dtype(to)) > 0  # compared after the cast: a negative int8 is a big uint16
    expected = np.concatenate([wx * wy, np.where(positive, wx * wy, wy), wx * wy[5]])
    expected = (expected % 2 ** (dt.itemsize * 8)).astype(np.uint64).astype(dt)  # wraps
    assert n // n_wide in (2, 4)
    for r in run_both(k, x, y, np.zeros(3 * n, dt)):
        np.testing.assert_array_equal(r[2], expected)


@pytest.mark.parametrize("ta, tb, to", [("int8", "int16", "int32"), ("float16", "float16", "float32"),
                                         ("int16", "int16", "int16")])
def test_products_that_are_not_widening_stay_products(ta, tb, to):
    n = lanes(to)

    @S.prim_func
    def k(a: S.ptr(ta, "global"), b: S.ptr(tb, "global"), out: S.ptr(to, "global")):
        S.vstore(S.cast(S.vload(a, lanes=n), to) * S.cast(S.vload(b, lanes=n), to), out)

    code = build(k).c_code
    assert "__vmull_to_" not in code and "__vmulh_to_" not in code, code
    x, y = rand(n, ta, seed=12, low=-50, high=50), rand(n, tb, seed=13, low=-50, high=50)
    expected = (x.astype(np.float64) * y.astype(np.float64)).astype(np_dtype(to))
    for r in run_both(k, x, y, np.zeros(n, np_dtype(to))):
        check_active([r[2]], expected)


@pytest.mark.parametrize("target", ["X2_1204", "X3P_1304"])
@pytest.mark.parametrize("src, to", [("float16", "int32"), ("bfloat16", "int32"), ("float16", "uint32")])
def test_rounded_conversion_of_half_floats_is_the_target_instruction(src, to, target):
    n = lanes(src)

    @S.prim_func
    def k(a: S.ptr(src, "global"), out: S.ptr(to, "global")):
        S.vstore(S.cast(S.rint(S.vload(a)), to), out)

    code = build(k, target=target).c_code
    names = ("__vcvtul_tw", "__vcvtuh_tw") if target.startswith("X3") else ("__vcvtue_tw", "__vcvtuo_tw")
    assert all(name in code for name in names) and "__vrint(" not in code, code

    low = 0 if to == "uint32" else -60
    x = rand(n, src, seed=14, low=low, high=60)
    x[:6] = [2.5, 3.5, 0.5, 1.7, 61.5, 7.0] if to == "uint32" else [2.5, -2.5, -0.5, 1.7, -61.5, 7.0]
    expected = np.round(x.astype(np.float64)).astype(np.int64).astype(np_dtype(to))  # ties to even
    for r in run_both(k, x, np.zeros(n, np_dtype(to))):
        np.testing.assert_array_equal(r[1], expected)
