"""Compass DSL API surface: dsl.utils type helpers, dsl.analysis, hw_native_vdtype, and the
broadcast of scalar variables of another type into vectors (compiled and PySim against numpy)."""

import numpy as np
import pytest

from tessera.dsl import BuildManager, hw_native_vdtype, script as S
from tessera.dsl.analysis import has_perf_record_tick
from tessera.dsl.utils import (double_elem_width, get_binary_op_result_type, half_elem_width,
                               is_hw_native_dtype, is_hw_native_vdtype)

from _util import build, expect_diag, rand


@pytest.mark.parametrize("lhs,rhs,expected", [
    ("int8", "int8", "int8"), ("int8", "int16", "int16"), ("uint8", "uint32", "uint32"),
    ("float16", "float32", "float32"), ("int32", "float16", "float16"),
    ("bfloat16", "int8", "bfloat16"), ("float16", "bfloat16", "float16"),
    ("int8", "uint16", "uint16"), ("uint8", "int16", "int16"), ("int16", "uint16", "uint16"),
    ("int32x8", "uint32", "uint32"), ("i8x32", "i8", "int8"),
    (3, "int8", "int8"), ("uint8", 300, "int32"), ("uint8", -1, "int32"), (1, 2, "int32"),
    (1.5, "int8", "float32"), ("float16", 2.0, "float32"), (True, "uint8", "uint8"),
])
def test_get_binary_op_result_type(lhs, rhs, expected):
    assert get_binary_op_result_type(lhs, rhs) == expected


def test_width_helpers():
    assert double_elem_width("uint8x8") == "uint16x8"
    assert double_elem_width("int8x32") == "int16x16"
    assert double_elem_width("int16x16") == "int32x8"
    assert double_elem_width("float16x16") == "float32x8"
    assert double_elem_width("int32x8") == "int32x8"
    assert half_elem_width("int32x8") == "int16x16"
    assert half_elem_width("uint16x8", double_lanes=False) == "uint8x8"
    with pytest.raises(ValueError, match="no narrower"):
        half_elem_width("int8x32")
    assert hw_native_vdtype("fp16") == "float16x16" and hw_native_vdtype("u8") == "uint8x32"
    with pytest.raises(ValueError, match="no native vector of bool"):
        hw_native_vdtype("bool")
    assert is_hw_native_vdtype("int32x8") and not is_hw_native_vdtype("int32x16")
    assert is_hw_native_dtype("bf16") and not is_hw_native_dtype("int64")


@S.prim_func
def _ticked(a: S.ptr("fp16", "global"), b: S.ptr("fp16", "global")):
    S.perf_tick_begin(7)
    b[0] = a[0] + 1
    S.perf_tick_end(7)


@S.prim_func
def _plain(a: S.ptr("fp16", "global"), b: S.ptr("fp16", "global")):
    b[0] = a[0]


def test_has_perf_record_tick():
    assert has_perf_record_tick(BuildManager().lower(_ticked))
    assert not has_perf_record_tick(BuildManager().lower(_plain))


@S.prim_func
def _widen_scalar(a: S.ptr("u16x16", "global"), s: S.ptr("u8", "global"),
                  t: S.ptr("i16", "global"), f: S.ptr("fp32x8", "global"),
                  out: S.ptr("u16x16", "global"), out_f: S.ptr("fp32x8", "global")):
    n = s[0]                      # uint8: every value is a uint16
    out[0] = a[0] + n
    out[1] = n * a[1]
    m = t[0]                      # int16: every value is a float32
    out_f[0] = f[0] + m


def test_scalar_variable_of_a_narrower_type_broadcasts():
    a = rand(32, "uint16")
    s = np.array([200], "uint8")
    t = np.array([-1234], "int16")
    expected = np.empty(32, "uint16")
    expected[:16] = a[:16] + np.uint16(200)
    expected[16:] = np.uint16(200) * a[16:]
    f = rand(8, "float32")
    expected_f = f - np.float32(1234)
    for run in (build(_widen_scalar), _widen_scalar):
        out, out_f = np.zeros(32, "uint16"), np.zeros(8, "float32")
        run(a, s, t, f, out, out_f)
        np.testing.assert_array_equal(out, expected)
        np.testing.assert_array_equal(out_f, expected_f)


def test_scalar_variable_that_does_not_fit_promotes_the_operator():
    # An operator promotes as Compass's get_binary_op_result_type: uint8x32 + uint16 is
    # uint16x32 and int32x8 + float16 is float16x8; neither is stored through the operand's
    # pointer without a cast.
    @S.prim_func
    def narrower(a: S.ptr("u8", "global"), n: S.u16):
        S.vstore(S.vload(a) + n, a)

    expect_diag(narrower, "S.vstore(S.vload(a) + n, a)",
                'Argument type mismatch: cannot store "uint16x32" through a pointer to "uint8"')

    @S.prim_func
    def to_int(a: S.ptr("i32", "global"), x: S.fp16):
        S.vstore(S.vload(a) + x, a)

    expect_diag(to_int, "S.vstore(S.vload(a) + x, a)",
                'Argument type mismatch: cannot store "float16x8" through a pointer to "int32"')


def _ceildiv_ref(x, y, dtype):
    """Both operands converted to the result type first, then (x + y - 1) / y truncated, with
    the wrap-around of that type."""
    t = np.dtype(dtype)
    x, y = np.array(x).astype(t), np.array(y).astype(t)
    with np.errstate(over="ignore"):
        s = (x + y - np.array(1, t)).astype(t)
    return np.trunc(s.astype(np.float64) / y.astype(np.float64)).astype(np.int64).astype(t)


@pytest.mark.parametrize("xt,yt", [("int8", "uint16"), ("uint8", "int8"), ("int32", "uint32"),
                                   ("uint16", "int32"), ("int16", "int16")])
def test_mixed_sign_scalars_and_ceildiv_follow_result_type(xt, yt):
    rt = str(get_binary_op_result_type(xt, yt))

    @S.prim_func
    def f(a: S.ptr(xt, "global"), b: S.ptr(yt, "global"), out: S.ptr(rt, "global")):
        for i in range(8):
            out[i] = S.ceildiv(a[i], b[i])
        out[8] = a[0] + b[0]
        out[9] = a[1] * b[1]
        out[10] = S.cast(S.ceildiv(a[2], 8), rt)
        out[11] = S.cast(S.ceildiv(32767, b[3]), rt)

    a = rand(8, xt, low=1, high=100)
    b = rand(8, yt, low=1, high=100)
    a[0], b[0] = np.array(-5 if xt.startswith("int") else 5).astype(xt), 3
    expected = np.array([_ceildiv_ref(x, y, rt) for x, y in zip(a, b)] + [0] * 4, rt)
    expected[8] = (np.int64(a[0]) + np.int64(b[0])).astype(rt)
    expected[9] = (np.int64(a[1]) * np.int64(b[1])).astype(rt)
    expected[10] = np.array(_ceildiv_ref(a[2], 8, str(get_binary_op_result_type(xt, 8)))).astype(rt)
    expected[11] = np.array(_ceildiv_ref(32767, b[3], str(get_binary_op_result_type(32767, yt)))).astype(rt)
    for run in (build(f), f):
        out = np.zeros(12, rt)
        run(a, b, out)
        np.testing.assert_array_equal(out, expected)


def test_literal_out_of_a_scalars_range_promotes():
    @S.prim_func
    def f(a: S.ptr("u8", "global"), out: S.ptr("i32", "global"), flag: S.ptr("i32", "global")):
        out[0] = a[0] + 1000            # uint8 + 1000 is int32
        out[1] = a[1] - 300
        flag[0] = 1 if a[0] > -1 else 0  # compared as int32: always true

    a = np.array([250, 3], "uint8")
    for run in (build(f), f):
        out, flag = np.zeros(2, "int32"), np.zeros(1, "int32")
        run(a, out, flag)
        assert out.tolist() == [1250, -297] and flag[0] == 1


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_power_operator_on_floats(dtype):
    vt = str(hw_native_vdtype(dtype))

    @S.prim_func
    def f(a: S.ptr(vt, "global"), b: S.ptr(vt, "global"), s: S.ptr(dtype, "global"),
          out: S.ptr(vt, "global"), out_s: S.ptr(dtype, "global")):
        out[0] = a[0] ** b[0]
        out_s[0] = s[0] ** s[1]

    n = 256 // np.dtype(dtype).itemsize // 8
    a = rand(n, dtype, low=0.5, high=3.0)
    b = rand(n, dtype, low=-2.0, high=2.0)
    s = np.array([1.5, 2.5], dtype)
    want = (a.astype(np.float64) ** b.astype(np.float64)).astype(dtype)
    for run in (build(f), f):
        out, out_s = np.zeros(n, dtype), np.zeros(1, dtype)
        run(a, b, s, out, out_s)
        np.testing.assert_allclose(out.astype(np.float64), want.astype(np.float64), rtol=2e-3)
        assert abs(float(out_s[0]) - 1.5 ** 2.5) < 1e-2


def test_power_operator_on_integers_is_refused():
    @S.prim_func
    def f(a: S.ptr("i32", "global")):
        a[0] = a[0] ** a[1]

    expect_diag(f, "a[0] = a[0] ** a[1]", 'Operator "pow" only supports float, but got: "int32"')


def _vps(bits):
    return ("4TF", "4T4F") if bits == 32 else ("8TF", "8T8F")


@S.prim_func
def _vec_loop(a: S.ptr("fp16", "global"), b: S.ptr("fp16", "global"), c: S.ptr("fp16", "global"),
              n: S.i32):
    tid = S.get_local_id()
    for j in S.vectorized(16):
        c[tid * 16 + j] = a[tid * 16 + j] + b[tid * 16 + j]
    for j in S.vectorized(64, 64 + n % 8):
        c[j] = a[j] * 2


def test_vectorized_loops():
    a, b = rand(72, "float16", low=-4, high=4), rand(72, "float16", low=-4, high=4)
    want = np.zeros(72, "float16")
    want[:64] = a[:64] + b[:64]
    want[64:69] = a[64:69] * np.float16(2)
    ex = build(_vec_loop)
    assert "for (" in ex.c_code
    for run in (ex, _vec_loop):
        c = np.zeros(72, "float16")
        run(a, b, c, 5)
        np.testing.assert_array_equal(c, want)
    # The loop of a constant extent is vector code once lowered (as Compass lowers it); the
    # other one stays a loop.
    lowered = BuildManager().lower(_vec_loop).script()
    assert "c_buf[tid * 16:tid * 16 + 16] = a_buf[tid * 16:tid * 16 + 16] + b_buf[tid * 16:tid * 16 + 16]" \
        in lowered, lowered
    assert "for j in range(64, 64 + T.truncmod(n, 8)):" in lowered, lowered


def test_meta_var_binds_python_values():
    @S.prim_func
    def f(x: S.ptr("i32x8", "global"), out: S.ptr("i32", "global")):
        vp_t, vp_st = S.meta_var(_vps(32))
        S.vstore(S.vcompt(x[0], vp_t), out, mask=vp_st)

    x = np.arange(1, 9, dtype="int32")
    for run in (build(f), f):
        out = np.zeros(8, "int32")
        run(x, out)
        assert out.tolist() == [1, 3, 5, 7, 0, 0, 0, 0]


@S.prim_func
def _bump(x: S.ptr("int32")):
    x[0] += 2


@S.prim_func
def _bump_vec(x: S.ptr("i32x8")):
    x[0] = S.vadd(x[0], 2)


@S.prim_func
def _addr_user(inp: S.ptr("i32x8", "global"), out: S.ptr("i32x8", "global"),
               out_s: S.ptr("int32", "global")):
    a = S.i32(3)
    _bump(a.addr)
    p = a.addr
    p[0] += 1
    _bump(p)
    out_s[0] = a
    v = inp[0]
    _bump_vec(v.addr)
    out[0] = v


def test_address_of_a_variable():
    inp = np.arange(8, dtype="int32") - 4
    ex = build(_addr_user)
    assert "(&a)" in ex.c_code
    for run in (ex, _addr_user):
        out, out_s = np.zeros(8, "int32"), np.zeros(1, "int32")
        run(inp, out, out_s)
        assert out_s[0] == 8
        np.testing.assert_array_equal(out, inp + 2)


def test_compass_info():
    from tessera.dsl import CompassInfo

    info = CompassInfo.get("X2_1204")
    assert (info.version, info.core_count, info.tec_count, info.vector_width) == ("X2", 1, 4, 256)
    assert info.lsram_size() == 32 * 1024 and info.gsram_size() == 256 * 1024
    assert CompassInfo.get("compass -mcpu=X3P_1304MP2").core_count == 2
    with pytest.raises(ValueError, match="unknown Zhouyi NPU configuration"):
        CompassInfo.get("Z9_0000")
    from tessera.dsl import BuildManager

    assert BuildManager(target="X3P_1304").cps_info.version == "X3P"
    assert BuildManager().cps_info.tec_count == 4


def test_aiff_and_asm_are_refused_at_the_call():
    from tessera.dsl import Aiff

    with pytest.raises(ValueError, match="not supported by tessera"):
        Aiff()

    @S.prim_func
    def f(a: S.ptr("i32", "global")):
        S.asm("nop")

    expect_diag(f, 'S.asm("nop")', "inline assembly (S.asm) is not supported by tessera")

    @S.prim_func
    def g(a: S.ptr("i32", "global")):
        S.aiff(a, a, a)

    expect_diag(g, "S.aiff(a, a, a)", "AIFF (S.aiff) is not supported by tessera")


@pytest.mark.parametrize("src,dst", [("uint8", "int8"), ("float32", "int8"), ("int16", "uint32"),
                                     ("uint32", "float16")])
def test_reinterpret_of_multiple_width_vectors(src, dst):
    n_src = 2 * 256 // (np.dtype(src).itemsize * 8)
    n_dst = 2 * 256 // (np.dtype(dst).itemsize * 8)

    @S.prim_func
    def f(a: S.ptr(src, "global"), out: S.ptr(dst, "global")):
        va = S.vload(a, lanes=n_src)
        S.vstore(S.reinterpret(va, f"{dst}x{n_dst}"), out)

    a = rand(n_src, src)
    for run in (build(f), f):
        out = np.zeros(n_dst, dst)
        run(a, out)
        np.testing.assert_array_equal(out.view(np.uint8), a.view(np.uint8))


def test_reinterpret_of_a_flexible_width_vector_is_refused():
    @S.prim_func
    def f(a: S.ptr("int8", "global"), out: S.ptr("uint8", "global")):
        S.vstore(S.reinterpret(S.vload(a, lanes=10), "uint8x10"), out)

    expect_diag(f, 'S.reinterpret(S.vload(a, lanes=10), "uint8x10")', "multiple of 256 bits")


@pytest.mark.parametrize("name,dtype", [("vaddh", "int16"), ("vsubh", "uint8"), ("vmaxh", "int32"),
                                        ("vminh", "int8")])
def test_pairwise_ops_on_odd_numbers_of_native_parts(name, dtype):
    lanes = 3 * 256 // (np.dtype(dtype).itemsize * 8)  # three native vectors
    op = getattr(S, name)

    @S.prim_func
    def f(a: S.ptr(dtype, "global"), b: S.ptr(dtype, "global"), out: S.ptr(dtype, "global")):
        S.vstore(op(S.vload(a, lanes=lanes), S.vload(b, lanes=lanes)), out)

    a, b = rand(lanes, dtype, seed=1), rand(lanes, dtype, seed=2)
    fn = {"vaddh": np.add, "vsubh": np.subtract, "vmaxh": np.maximum, "vminh": np.minimum}[name]
    lo, hi = np.iinfo(dtype).min, np.iinfo(dtype).max
    pairs = lambda v: np.clip(fn(v[0::2].astype(np.int64), v[1::2].astype(np.int64)), lo, hi)
    want = np.concatenate([pairs(a), pairs(b)]).astype(dtype)
    for run in (build(f), f):
        out = np.zeros(lanes, dtype)
        run(a, b, out)
        np.testing.assert_array_equal(out, want)


def test_diagnostics_are_runtime_errors_reported_on_stderr(capfd):
    @S.prim_func
    def f(a: S.ptr("i8x32", "global"), b: S.ptr("u8x32", "global"), c: S.ptr("i8x32", "global")):
        c[0] = S.vmaxh(a[0], b[0])

    with pytest.raises(RuntimeError, match="the operands differ in sign"):
        BuildManager().build(f)
    assert "the operands differ in sign" in capfd.readouterr().err


@pytest.mark.parametrize("src,dst,count", [("int32", "int8", 3), ("uint16", "uint8", 1),
                                           ("int32", "int16", 1), ("float32", "float16", 1),
                                           ("int32", "uint8", 2)])
def test_narrowing_cast_into_more_lanes(src, dst, count):
    n_src, n_dst = 256 // (np.dtype(src).itemsize * 8), 256 // (np.dtype(dst).itemsize * 8)
    vsrc, vdst = f"{src}x{n_src}", f"{dst}x{n_dst}"

    @S.prim_func
    def f(a: S.ptr(vsrc, "global"), out: S.ptr(vdst, "global")):
        if count == 1:
            out[0] = S.cast(a[0], vdst)
        elif count == 2:
            out[0] = S.cast((a[0], a[1]), vdst, saturate=True)
        else:
            out[0] = S.cast((a[0], a[1], a[2]), vdst)

    a = rand(count * n_src, src, low=-1000 if src.startswith(("int", "float")) else 0, high=1000)
    conv = np.clip(a, 0, 255) if count == 2 else a
    want = np.resize(conv.astype(dst), n_dst)  # the converted lanes, repeated
    for run in (build(f), f):
        out = np.zeros(n_dst, dst)
        run(a, out)
        np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("dtype", ["uint8", "int16", "int32"])
def test_scalar_shifted_by_a_vector_of_counts(dtype):
    n = 256 // (np.dtype(dtype).itemsize * 8)
    vt = f"{dtype}x{n}"

    @S.prim_func
    def f(a: S.ptr(dtype, "global"), b: S.ptr(vt, "global"), out: S.ptr(vt, "global")):
        out[0] = a[0] << b[0]
        out[1] = a[0] >> b[0]

    bits = np.dtype(dtype).itemsize * 8
    a = np.array([-77 if dtype.startswith("int") else 201]).astype(dtype)
    b = (np.arange(n) % bits).astype(dtype)
    want = np.concatenate([a << b, a >> b]).astype(dtype)
    for run in (build(f), f):
        out = np.zeros(2 * n, dtype)
        run(a, b, out)
        np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32"])
@pytest.mark.parametrize("out_sign", ["u", "s"])
@pytest.mark.parametrize("saturate", [True, False])
def test_vadd_of_mixed_signs_with_out_sign(dtype, out_sign, saturate):
    n = 256 // (np.dtype(dtype).itemsize * 8)
    vt, ut = f"{dtype}x{n}", f"u{dtype}x{n}"
    out_t = ut if out_sign == "u" else vt
    out_e = f"u{dtype}" if out_sign == "u" else dtype

    @S.prim_func
    def f(a: S.ptr(vt, "global"), b: S.ptr(ut, "global"), c: S.ptr(out_t, "global")):
        c[0] = S.vadd(a[0], b[0], out_sign=out_sign, saturate=saturate)
        c[1] = S.vadd(b[0], a[0], out_sign=out_sign, saturate=saturate)

    a, b = rand(n, dtype, seed=3), rand(n, "u" + dtype, seed=4)
    a[:4] = np.array([-1, np.iinfo(dtype).min, 5, np.iinfo(dtype).max]).astype(dtype)
    b[:4] = np.array([0, np.iinfo("u" + dtype).max, 7, np.iinfo("u" + dtype).max]).astype("u" + dtype)
    exact = a.astype(np.int64) + b.astype(np.int64)
    if saturate:
        one = np.clip(exact, np.iinfo(out_e).min, np.iinfo(out_e).max).astype(out_e)
    else:
        one = exact.astype(out_e)
    want = np.concatenate([one, one])
    for run in (build(f), f):
        out = np.zeros(2 * n, out_e)
        run(a, b, out)
        np.testing.assert_array_equal(out, want)


def test_vadd_of_a_literal_of_the_other_sign():
    @S.prim_func
    def f(a: S.ptr("i8x32", "global"), c: S.ptr("i8x32", "global"), d: S.ptr("u8x32", "global")):
        c[0] = S.vadd(a[0], 252, out_sign="s")
        d[0] = S.vadd(252, a[0], out_sign="u", saturate=True)

    a = rand(32, "int8", seed=5)
    for run in (build(f), f):
        c, d = np.zeros(32, "int8"), np.zeros(32, "uint8")
        run(a, c, d)
        np.testing.assert_array_equal(c, (a.astype(np.int64) + 252).astype("int8"))
        np.testing.assert_array_equal(d, np.clip(a.astype(np.int64) + 252, 0, 255).astype("uint8"))


def test_storing_an_integer_vector_of_the_other_sign_keeps_its_bits():
    @S.prim_func
    def f(a: S.ptr("int32x8", "global"), b: S.ptr("int32x8", "global"), c: S.ptr("u8x32", "global")):
        var = S.u32x8(a[0])
        b[0] = var
        c[0] = S.vadd(S.i8x32(-3), S.i8x32(1))

    a = np.array([-1, 2, -3, 4, 5, -6, 7, -2**31], "int32")
    for run in (build(f), f):
        b, c = np.zeros(8, "int32"), np.zeros(32, "uint8")
        run(a, b, c)
        np.testing.assert_array_equal(b, a)
        assert (c == 254).all()

    @S.prim_func
    def g(a: S.ptr("int16x16", "global"), b: S.ptr("int8x32", "global")):
        b[0] = a[0]

    expect_diag(g, "b[0] = a[0]", 'cannot store "int16x16" into "int8x32" elements')


@pytest.mark.parametrize("dtype,k", [("int8", 2), ("uint16", 3), ("int32", 4), ("float32", 2),
                                     ("float16", 3)])
def test_vrpadd_of_multiple_width_vectors(dtype, k):
    n = 256 // (np.dtype(dtype).itemsize * 8)
    out_dtype = "float32" if dtype == "float16" else dtype

    @S.prim_func
    def f(a: S.ptr(dtype, "global"), out: S.ptr(out_dtype, "global")):
        S.vstore(S.vrpadd(S.vload(a, lanes=k * n)), out)

    a = rand(k * n, dtype, low=0, high=100)
    for run in (build(f), f):
        out = np.full(k * n, 7, out_dtype)
        run(a, out)
        if dtype.startswith("float"):
            want = a.astype(np.float64).sum()
            assert abs(float(out[0]) - want) <= 1e-3 * max(1.0, want)
        else:  # integer sums wrap
            assert out[0] == np.array(a.astype(np.int64).sum()).astype(dtype)
        assert (out[1:] == 0).all()


@pytest.mark.parametrize("dtype,k", [("int8", 1), ("int16", 2), ("int32", 1), ("int32", 2)])
def test_vrpadd_result_has_the_operand_type(dtype, k):
    # A signed sum stays signed (Compass's S.vrpadd returns x's type): kept in a variable and
    # added to a vector of that type, compiled as in PySim; negative lanes wrap as the type does.
    n = 256 // (np.dtype(dtype).itemsize * 8) * k

    @S.prim_func
    def f(a: S.ptr(dtype, "global"), b: S.ptr(dtype, "global"), out: S.ptr(dtype, "global")):
        va = S.vload(a, lanes=n)
        total = S.vrpadd(va)
        S.vstore(S.vadd(total, S.vload(b, lanes=n)), out)

    a = rand(n, dtype, seed=1)
    b = rand(n, dtype, seed=2, low=-50, high=50)
    want0 = np.array(a.astype(np.int64).sum() + int(b[0])).astype(dtype)
    for run in (build(f), f):
        out = np.zeros(n, dtype)
        run(a, b, out)
        assert out[0] == want0
        np.testing.assert_array_equal(out[1:], b[1:])


@pytest.mark.parametrize("dtype,expected", [
    ("int8", (-128, 127)), ("uint8x32", (0, 255)), ("i16", (-32768, 32767)),
    ("uint32", (0, 2**32 - 1)), ("int32x8", (-2**31, 2**31 - 1)), ("bool", (0, 1)),
    ("float16", (-65504.0, 65504.0)), ("fp32", (-float(np.finfo("float32").max), float(np.finfo("float32").max))),
])
def test_get_range(dtype, expected):
    from tessera.dsl import get_range

    assert get_range(dtype) == expected
    lo, hi = get_range("bfloat16")
    assert lo == -hi and 3.38e38 < hi < 3.39e38
    with pytest.raises(TypeError, match="unknown DSL data type"):
        get_range("handle")


def test_get_rpc_session_refuses():
    from tessera.dsl import get_rpc_session
    from tessera.error import TesseraValueError

    with pytest.raises(TesseraValueError, match="not supported by tessera.*host CPU"):
        get_rpc_session()


def test_bfloat16_name_known_to_numpy():
    import tessera.dsl  # noqa: F401  (registers the name, as Compass's import does)

    x = np.array([1.5, -2.0], "float32").astype("bfloat16")
    assert x.dtype == np.dtype("bfloat16") and x.astype("float32").tolist() == [1.5, -2.0]
