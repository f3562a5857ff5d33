"""Multiple-width intrinsics split by dsl.AlignVectorWidth, not by the Python front end: the
parser emits one call of the whole width (pairwise ops by their table form, S.vdot/S.vqdot by
their "dsl.split" attribute, part casts, bit casts and dot products of mixed signs) and the pass
gives the native parts; compiled and PySim results against numpy."""

import numpy as np

from tessera.dsl import BuildManager
from tessera.dsl import script as S

from _util import rand, run_both


def test_float_pairwise_and_quad_dot_of_two_parts():
    @S.prim_func
    def k(a: S.ptr("float16", "global"), b: S.ptr("float16", "global"),
          o: S.ptr("float16", "global"), q: S.ptr("fp32", "global")):
        x = S.vload(a, lanes=32)
        y = S.vload(b, lanes=32)
        S.vstore(S.vminh(x, y), o)
        S.vstore(S.vqdot(x, y, mask="30T"), q)

    # The parsed kernel has one call per intrinsic; the generated C two (one per native part).
    parsed = BuildManager().lower(k).script()
    assert parsed.count('"dsl.vminh"') == 1 and parsed.count('"dsl.vqdot"') == 1, parsed
    code = BuildManager().build(k).c_code
    assert code.count("__vminh(") == 2 and code.count("__vqdot(") == 2, code

    a = rand(32, "float16", seed=3, low=-4.0, high=4.0)
    b = rand(32, "float16", seed=4, low=-4.0, high=4.0)
    o, q = np.zeros(32, "float16"), np.zeros(16, "float32")
    (_, _, oc, qc), (_, _, os_, qs) = run_both(k, a, b, o, q)
    x, y = a.astype(np.float64), b.astype(np.float64)
    minh = np.concatenate([np.minimum(x[0::2], x[1::2]), np.minimum(y[0::2], y[1::2])])
    sums = np.where(np.arange(32) < 30, x * y, 0).reshape(8, 4).sum(1)
    for got_o, got_q in ((oc, qc), (os_, qs)):
        np.testing.assert_array_equal(got_o, minh.astype("float16"))
        np.testing.assert_allclose(got_q[0::2], sums, rtol=1e-5, atol=1e-5)  # the even lanes


def test_vrpadd_of_multiple_width_is_one_call_summed_by_parts():
    @S.prim_func
    def k(a: S.ptr("float16", "global"), out: S.ptr("fp32", "global")):
        S.vstore(S.vrpadd(S.vload(a, lanes=48)), out)

    # One float32x48 call in the parsed kernel; the pass gives three native reductions, added,
    # into the first float32x8 part (the other five parts are zero).
    parsed = BuildManager().lower(k).script()
    assert parsed.count('"dsl.vrpadd"') == 1 and "float32x48" in parsed, parsed
    code = BuildManager().generated_source(k)
    assert code.count("__vrpadd(") == 3 and "__vset_lane" not in code, code
    assert "((__vrpadd(" in code and code.count("__vstore((float8)__vbcast(0x0p+0f/*0.000000e+00*/)") == 5, code

    a = rand(48, "float16", seed=5, low=-4.0, high=4.0)
    out = np.full(48, 7, "float32")
    k(a, out)  # PySim sums the parts in the same order
    parts = [np.float32(0)] * 3
    for j in range(3):
        for v in a[16 * j:16 * (j + 1)].astype(np.float32):
            parts[j] = np.float32(parts[j] + v)
    assert out[0] == np.float32(np.float32(parts[0] + parts[1]) + parts[2])
    assert not out[1:].any()


def test_scalar_intrinsics_are_computed_in_lane_0_by_the_pass():
    @S.prim_func
    def k(a: S.ptr("float16", "global"), f: S.ptr("fp32", "global"), o: S.ptr("int32", "global")):
        if S.isnan(a[0]):
            o[0] = 1
        o[1] = S.clz(o[2])
        a[3] = S.tanh(a[4])
        f[0] = S.pow(f[1], f[2]) + S.abs(f[3]) + S.rint(f[4])

    # The parser emits each intrinsic on the scalar; dsl.AlignVectorWidth computes it in lane 0
    # of a native vector (the op's "dsl.scalar" attribute), as the host C has no scalar forms.
    parsed = BuildManager().lower(k).script()
    assert "get_lane" not in parsed and "Broadcast" not in parsed, parsed
    assert 'T.call_intrin("bool", "dsl.visnan", a_buf[0])' in parsed, parsed
    assert 'T.call_intrin("float32", "dsl.vpow", f_buf[1], f_buf[2])' in parsed, parsed
    code = BuildManager().generated_source(k)
    for piece in ("__visnan((half16)__vbcast(a[0]), ALL_TRUE_h)", "__vget_lane(__vclz((int8)__vbcast(o[2])), 0)",
                  "__vget_lane(__vtanh((half16)__vbcast(a[4])), 0)",
                  "__vget_lane(__vpow((float8)__vbcast(f[1]), (float8)__vbcast(f[2])), 0)",
                  "__vget_lane(__vabs((float8)__vbcast(f[3]), 0), 0)",
                  "__vget_lane(__vrint((float8)__vbcast(f[4])), 0)"):
        assert piece in code, (piece, code)

    a = np.array([np.nan, 0, 0, 0, 0.5], "float16")
    f = np.array([0, 2.0, 10.0, -1.5, 2.5], "float32")
    o = np.array([0, 0, 0x00F0], "int32")
    (ca, cf, co), (sa, sf, so) = run_both(k, a, f, o)
    for got_a, got_f, got_o in ((ca, cf, co), (sa, sf, so)):
        assert got_o.tolist() == [1, 24, 0x00F0]
        assert got_a[3] == np.float16(np.tanh(np.float32(0.5)))
        assert got_f[0] == np.float32(1024 + 1.5 + 2.0)


def test_part_casts_and_bit_casts_wider_than_native_are_one_call():
    @S.prim_func
    def k(a: S.ptr("int8", "global"), out: S.ptr("int32", "global"), u: S.ptr("uint32", "global"),
          r: S.ptr("int32", "global")):
        v = S.vload(a, lanes=32)
        S.vstore(S.cast(v, "int32", part="high"), out)         # 16 lanes: two native parts
        S.vstore(S.cast(v, "int32", part="odd"), out + 16)
        S.vstore(S.cast(v, "uint32", part="low", saturate=True), u)
        w = S.reinterpret(S.vload(a, lanes=64), "int32x16")     # two 256-bit parts
        S.vstore(w + 1, r)
        S.vstore(S.reinterpret(S.reinterpret(w, "int16") + S.int16(2), "int32x16"), r + 16)

    parsed = BuildManager().lower(k).script()
    assert parsed.count('"dsl.vcvt"') == 3 and parsed.count('T.reinterpret(') == 3, parsed
    code = BuildManager().build(k).c_code
    assert code.count("__vcvt_") == 6 and code.count("__vreinterpret(") == 6, code

    a = rand(64, "int8", seed=12)
    a[:3] = -128
    out, u, r = np.zeros(32, "int32"), np.zeros(16, "uint32"), np.zeros(32, "int32")
    x = a[:32].astype(np.int64)
    w = a.view("int32")
    want_r = np.concatenate([w + 1, (a.view("int16") + np.int16(2)).view("int32")])
    for _, got_out, got_u, got_r in run_both(k, a, out, u, r):
        np.testing.assert_array_equal(got_out, np.concatenate([x[16:], x[1::2]]))
        np.testing.assert_array_equal(got_u, np.maximum(x[:16], 0))
        np.testing.assert_array_equal(got_r, want_r)


def test_dot_of_mixed_signs_of_multiple_width_is_one_call():
    @S.prim_func
    def k(a: S.ptr("int8", "global"), b: S.ptr("uint8", "global"), w: S.ptr("int16", "global"),
          q: S.ptr("int32", "global")):
        x = S.vload(a, lanes=64)
        y = S.vload(b, lanes=64)
        S.vstore(S.vdot(y, x, mask=x > S.int8(0)), w)        # unsigned first
        S.vstore(S.vqdot(x, y), q)

    parsed = BuildManager().lower(k).script()
    assert parsed.count('"dsl.vdot"') == 1 and parsed.count('"dsl.vqdot"') == 1, parsed
    code = BuildManager().build(k).c_code
    assert "__vdot" not in code and "__vqdot" not in code and code.count("__vaddh(") == 2 + 6, code

    a, b = rand(64, "int8", seed=13), rand(64, "uint8", seed=14)
    a[:4], b[:4] = -128, 255
    w, q = np.zeros(32, "int16"), np.zeros(16, "int32")
    x, y = a.astype(np.int64), b.astype(np.int64)
    dot = np.clip(np.where(x > 0, x * y, 0).reshape(-1, 2).sum(1), -2**15, 2**15 - 1)
    qdot = (x * y).reshape(-1, 4).sum(1)
    for _, _, got_w, got_q in run_both(k, a, b, w, q):
        np.testing.assert_array_equal(got_w, dot)
        np.testing.assert_array_equal(got_q, qdot)
