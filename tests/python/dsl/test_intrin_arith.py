"""Arithmetic intrinsics on every dtype they accept, with masks, r=, saturate and out_sign,
compiled and under PySim, against numpy on the active lanes; misuse diagnostics."""

import ml_dtypes
import numpy as np
import pytest

from tessera.dsl import script as S

from _util import (ALL_TYPES, FLOAT_TYPES, INT_TYPES, check_active, expect_diag, lanes, mask_bits,
                   np_dtype, rand, run_both)

MASK = "3T2F3T"


def _data(dtype, n, seed):
    if dtype in INT_TYPES:
        return rand(n, dtype, seed=seed)
    return rand(n, dtype, seed=seed, low=-8.0, high=8.0)


def _ref_float(fn, a, b, dtype):
    return fn(a.astype(np.float32), b.astype(np.float32)).astype(np_dtype(dtype))


@pytest.mark.parametrize("dtype", ALL_TYPES)
def test_add_sub_mul(dtype):
    n = lanes(dtype)
    is_int = dtype in INT_TYPES
    can_mul = T_bits(dtype) != 8

    @S.prim_func
    def k(a: S.ptr(dtype, "global"), b: S.ptr(dtype, "global"), out: S.ptr(dtype, "global")):
        x = S.vload(a)
        y = S.vload(b)
        S.vstore(S.vadd(x, y), out)
        S.vstore(S.vsub(x, y), out + n)
        S.vstore(S.vadd(x, y, mask=MASK, r=x), out + 2 * n)
        S.vstore(S.vsub(x, 1, mask=MASK, r=0), out + 3 * n)
        if is_int:
            S.vstore(S.vadd(x, y, saturate=True), out + 4 * n)
            S.vstore(S.vsub(x, y, saturate=True), out + 5 * n)
        if can_mul:
            S.vstore(S.vmul(x, y, mask=MASK, r=y), out + 6 * n)

    a, b = _data(dtype, n, 1), _data(dtype, n, 2)
    out = np.zeros(7 * n, np_dtype(dtype))
    (_, _, c), (_, _, s) = run_both(k, a, b, out)
    m = mask_bits(MASK, n)
    if is_int:
        x, y = a.astype(np.int64), b.astype(np.int64)
        info = np.iinfo(dtype)
        wrap = lambda v: v.astype(np.int64).astype(dtype)  # noqa: E731
        rows = [wrap(x + y), wrap(x - y), np.where(m, wrap(x + y), a), np.where(m, wrap(x - 1), 0),
                np.clip(x + y, info.min, info.max), np.clip(x - y, info.min, info.max),
                np.where(m, wrap(x * y), b) if can_mul else np.zeros(n)]
    else:
        f = lambda fn, p, q: _ref_float(fn, p, q, dtype)  # noqa: E731
        one = np.ones(n, np_dtype(dtype))
        rows = [f(np.add, a, b), f(np.subtract, a, b), np.where(m, f(np.add, a, b), a),
                np.where(m, f(np.subtract, a, one), 0), np.zeros(n), np.zeros(n),
                np.where(m, f(np.multiply, a, b), b)]
    expected = np.concatenate([np.asarray(r).astype(np_dtype(dtype)) for r in rows])
    active = np.ones(7 * n, bool)
    if not is_int:
        active[4 * n:6 * n] = False
    if not can_mul:
        active[6 * n:] = False
    check_active([c, s], expected, active)


def T_bits(dtype):
    return np_dtype(dtype).itemsize * 8


@pytest.mark.parametrize("dtype", INT_TYPES + ["float32"])
def test_div_mod(dtype):
    n = lanes(dtype)
    is_int = dtype in INT_TYPES

    @S.prim_func
    def k(a: S.ptr(dtype, "global"), b: S.ptr(dtype, "global"), out: S.ptr(dtype, "global")):
        x = S.vload(a)
        y = S.vload(b)
        S.vstore(S.vdiv(x, y, mask=MASK), out)
        if is_int:
            S.vstore(S.vmod(x, y), out + n)

    a, b = _data(dtype, n, 3), _data(dtype, n, 4)
    b[1] = 0
    if is_int and np.iinfo(dtype).min < 0:
        a[2], b[2] = np.iinfo(dtype).min, -1
    if not is_int:
        b[1] = 1.0
    out = np.zeros(2 * n, np_dtype(dtype))
    (_, _, c), (_, _, s) = run_both(k, a, b, out)
    m = mask_bits(MASK, n)
    if is_int:
        x, y = a.astype(np.int64), b.astype(np.int64)
        safe = np.where(y == 0, 1, y)
        q = np.abs(x) // np.abs(safe) * np.where((x < 0) != (safe < 0), -1, 1)
        info = np.iinfo(dtype)
        div = np.where(y == 0, 0, np.minimum(q, info.max))
        mod = np.where((y == 0) | ((y == -1) & (info.min < 0)), 0, x - q * safe)
        expected = np.concatenate([div, mod]).astype(dtype)
        active = np.concatenate([m, np.ones(n, bool)])
    else:
        with np.errstate(divide="ignore", invalid="ignore"):  # IEEE results for b == 0 are wanted
            expected = np.concatenate([a / b, np.zeros(n, "float32")]).astype("float32")
        active = np.concatenate([m, np.zeros(n, bool)])
    check_active([c, s], expected, active)


@pytest.mark.parametrize("dtype", ALL_TYPES)
def test_abs_clip_rint(dtype):
    n = lanes(dtype)
    is_int = dtype in INT_TYPES
    is_float = not is_int

    @S.prim_func
    def k(a: S.ptr(dtype, "global"), out: S.ptr(dtype, "global")):
        x = S.vload(a)
        S.vstore(S.abs(x, mask=MASK), out)
        S.vstore(S.abs(x, saturate=True), out + n)
        S.vstore(S.clip(x, 0, 5, mask=MASK), out + 2 * n)
        if is_float:
            S.vstore(S.rint(x), out + 3 * n)

    a = _data(dtype, n, 5)
    if is_float:
        a[3] = 2.5
        a[4] = -1.5
    out = np.zeros(4 * n, np_dtype(dtype))
    (_, c), (_, s) = run_both(k, a, out)
    m = mask_bits(MASK, n)
    if is_int:
        x = a.astype(np.int64)
        info = np.iinfo(dtype)
        rows = [np.abs(x).astype(dtype), np.minimum(np.abs(x), info.max),
                np.where(m, np.clip(x, 0, 5), x), np.zeros(n)]
    else:
        x = a.astype(np.float32)
        rows = [np.abs(x), np.abs(x), np.where(m, np.clip(x, 0, 5), x), np.rint(x)]
    expected = np.concatenate([np.asarray(r).astype(np_dtype(dtype)) for r in rows])
    active = np.concatenate([m, np.ones(3 * n, bool)])
    if is_int:
        active[3 * n:] = False
    check_active([c, s], expected, active)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "uint16", "int32", "uint32"])
def test_widening_and_pairwise(dtype):
    n = lanes(dtype)
    bits = T_bits(dtype)
    wide = dtype.replace(str(bits), str(2 * bits)) if bits < 32 else dtype
    dot = bits < 32
    qdot = bits == 8
    quad = "uint32" if dtype.startswith("u") else "int32"

    @S.prim_func
    def k(a: S.ptr(dtype, "global"), b: S.ptr(dtype, "global"), w: S.ptr(wide, "global"),
          o: S.ptr(dtype, "global"), q: S.ptr(quad, "global")):
        x = S.vload(a)
        y = S.vload(b)
        S.vstore(S.vmull(x, y), w)
        S.vstore(S.vmulh(x, y), w.as_ptr(wide) + 256 // (2 * bits) if bits < 32 else w + n)
        S.vstore(S.vaddh(x, y), o)
        S.vstore(S.vsubh(x, y), o + n)
        if dot:
            S.vstore(S.vdot(x, y, mask=MASK), w + 2 * (256 // (2 * bits)))
            S.vstore(S.vdpa(S.vload(w), x, y), w + 3 * (256 // (2 * bits)))
        if qdot:
            S.vstore(S.vqdot(x, y), q)
            S.vstore(S.vqdpa(S.vload(q), x, y, mask=MASK), q + 8)

    a, b = rand(n, dtype, seed=6), rand(n, dtype, seed=7)
    wl = 256 // T_bits(wide)
    w = np.zeros(4 * wl, np_dtype(wide))
    o = np.zeros(2 * n, np_dtype(dtype))
    q = np.zeros(16, np_dtype(quad))
    (_, _, wc, oc, qc), (_, _, ws, os_, qs) = run_both(k, a, b, w, o, q)
    x, y = a.astype(np.int64), b.astype(np.int64)
    info = np.iinfo(dtype)
    m = mask_bits(MASK, n)
    if bits < 32:
        winfo = np.iinfo(wide)
        mull = (x[: n // 2] * y[: n // 2]).astype(wide)
        mulh = (x[n // 2:] * y[n // 2:]).astype(wide)
        dotv = np.clip((np.where(m, x * y, 0)).reshape(-1, 2).sum(1), winfo.min, winfo.max).astype(wide)
        # The accumulation saturates too (Compass clamps the total).
        dpa = np.clip(mull.astype(np.int64) + np.clip((x * y).reshape(-1, 2).sum(1), winfo.min, winfo.max),
                      winfo.min, winfo.max).astype(wide)
        check_active([wc, ws], np.concatenate([mull, mulh, dotv, dpa]))
    else:
        def words(p):
            u = [int(v) & 0xFFFFFFFFFFFFFFFF for v in p]
            return np.array([w for v in u for w in (v & 0xFFFFFFFF, v >> 32)], np.uint64).astype(np.uint32).view(dtype)
        check_active([wc[:2 * n], ws[:2 * n]], np.concatenate([words(x[:4] * y[:4]), words(x[4:] * y[4:])]))
    pair = lambda v, fn: np.clip(fn(v[0::2], v[1::2]), info.min, info.max)  # noqa: E731
    check_active([oc, os_], np.concatenate([pair(x, np.add), pair(y, np.add), pair(x, np.subtract),
                                            pair(y, np.subtract)]).astype(dtype))
    if qdot:
        qd = (x * y).reshape(-1, 4).sum(1)
        qm = np.where(m, x * y, 0).reshape(-1, 4).sum(1)
        check_active([qc, qs], np.concatenate([qd, qd + qm]).astype(quad))


@pytest.mark.parametrize("dtype", FLOAT_TYPES)
def test_float_accumulate(dtype):
    n = lanes(dtype)
    half = dtype != "float32"

    @S.prim_func
    def k(a: S.ptr(dtype, "global"), b: S.ptr(dtype, "global"), acc: S.ptr("fp32", "global"),
          out: S.ptr("fp32", "global")):
        x = S.vload(a)
        y = S.vload(b)
        c = S.vload(acc)
        S.vstore(S.vrpadd(x, mask=MASK), out)
        if half:
            S.vstore(S.vfmae(c, x, y), out + 8)
            S.vstore(S.vfmao(c, x, y, mask="4T"), out + 16)
            S.vmml(out + 24, x, y)
            for t in S.tec_range(1):  # one TEC: the update is a read-modify-write
                S.vmma(acc + 8, x, y)
        else:
            S.vstore(S.fma(c, x, y, mask="4T"), out + 8)
            out[16] = S.fma(a[0], b[0], 2.0)

    a, b = _data(dtype, n, 8), _data(dtype, n, 9)
    acc = rand(24, "float32", seed=10, low=-4.0, high=4.0)
    out = np.zeros(40, "float32")
    (_, _, accc, oc), (_, _, accs, os_) = run_both(k, a, b, acc, out)
    x, y = a.astype(np.float32), b.astype(np.float32)
    m = mask_bits(MASK, n)
    red = np.float32(0)
    for v in x[m]:
        red = np.float32(red + v)
    for got in (oc, os_):
        np.testing.assert_allclose(got[0], red, rtol=1e-5, atol=1e-5)
    c = acc[:8]
    m4 = mask_bits("4T", 8)
    if half:
        fe = c + x[0::2] * y[0::2]
        fo = np.where(m4, c + x[1::2] * y[1::2], c)
        mm = x.reshape(4, 4) @ y.reshape(4, 4).T
        check_active([oc[8:40], os_[8:40]], np.concatenate([fe, fo, mm.reshape(-1)]).astype("float32"))
        for got in (accc, accs):
            np.testing.assert_allclose(got[8:24], acc[8:24] + mm.reshape(-1), rtol=1e-5, atol=1e-4)
    else:
        check_active([oc[8:17], os_[8:17]],
                     np.concatenate([np.where(m4, c + x * y, c), [a[0] + b[0] * 2]]).astype("float32"))


def test_misuse():
    @S.prim_func
    def bad_mul(a: S.ptr("int8", "global")):
        S.vstore(S.vmul(S.vload(a), S.vload(a)), a)

    expect_diag(bad_mul, "S.vmul(", "8-bit")

    @S.prim_func
    def bad_sat(a: S.ptr("fp32", "global")):
        S.vstore(S.vadd(S.vload(a), 1.0, saturate=True), a)

    expect_diag(bad_sat, "saturate=True", "saturate=True needs integer")

    @S.prim_func
    def bad_pair(a: S.ptr("int16", "global"), b: S.ptr("int32", "global")):
        S.vstore(S.vaddh(S.vload(a), S.vload(a)), a)
        S.vstore(S.vdpa(S.vload(a, lanes=8), S.vload(a), S.vload(a)), a)

    expect_diag(bad_pair, "S.vdpa(", "Argument type mismatch")

    @S.prim_func
    def bad_lanes(a: S.ptr("int16", "global")):
        S.vstore(S.vmull(S.vload(a, lanes=20), S.vload(a, lanes=20)), a)

    expect_diag(bad_lanes, "S.vmull(", "of the native width only")

    @S.prim_func
    def bad_sign(a: S.ptr("int16", "global"), b: S.ptr("uint16", "global")):
        S.vstore(S.vadd(S.vload(a), S.vload(b)), a)

    expect_diag(bad_sign, "S.vadd(", "sign")

    @S.prim_func
    def bad_mask(a: S.ptr("int32", "global")):
        S.vstore(S.vadd(S.vload(a), 1, mask="16T"), a)

    expect_diag(bad_mask, "S.vadd(", "mask")


def test_out_sign_mixed():
    @S.prim_func
    def k(a: S.ptr("int16", "global"), b: S.ptr("uint16", "global"), out: S.ptr("uint16", "global")):
        S.vstore(S.vadd(S.vload(a), S.vload(b), out_sign="u"), out)

    a, b = rand(16, "int16", seed=11), rand(16, "uint16", seed=12)
    out = np.zeros(16, "uint16")
    (_, _, c), (_, _, s) = run_both(k, a, b, out)
    check_active([c, s], (a.astype(np.int64) + b).astype("uint16"))


def test_flexible_width_lane_wise():
    @S.prim_func
    def k(a: S.ptr("int16", "global"), f: S.ptr("fp32", "global"), out: S.ptr("int16", "global"),
          fout: S.ptr("fp32", "global")):
        x = S.vload(a, lanes=20)
        y = S.vload(f, lanes=12)
        S.vstore(S.vadd(x, x, saturate=True), out)
        S.vstore(S.vsr(x, 2, with_round=True), out + 20)
        S.vstore(S.max(x, 0, mask=S.tail_mask(7, 20), r=x), out + 40)
        S.vstore(S.exp(y), fout)
        S.vstore(S.abs(y), fout + 12)

    a = rand(20, "int16", seed=13)
    f = rand(12, "float32", seed=14, low=-3.0, high=3.0)
    out, fout = np.zeros(60, "int16"), np.zeros(24, "float32")
    (_, _, c, fc), (_, _, s, fs) = run_both(k, a, f, out, fout)
    x = a.astype(np.int64)
    t = np.arange(20) < 7
    rnd = (x >> 2) + (((x & 3) > 2) | (((x & 3) == 2) & (((x >> 2) & 1) == 1)))
    expected = np.concatenate([np.clip(2 * x, -32768, 32767), rnd, np.where(t, np.maximum(x, 0), x)])
    check_active([c, s], expected.astype("int16"))
    check_active([fc, fs], np.concatenate([np.exp(f.astype(np.float64)), np.abs(f)]).astype("float32"))


def test_multiple_width_pairwise_and_dot():
    @S.prim_func
    def k(a: S.ptr("int16", "global"), b: S.ptr("int16", "global"), o: S.ptr("int16", "global"),
          w: S.ptr("int32", "global")):
        x = S.vload(a, lanes=32)
        y = S.vload(b, lanes=32)
        S.vstore(S.vaddh(x, y), o)
        S.vstore(S.vmaxh(x, y), o + 32)
        S.vstore(S.vdot(x, y, mask="30T"), w)

    a, b = rand(32, "int16", seed=15), rand(32, "int16", seed=16)
    o, w = np.zeros(64, "int16"), np.zeros(16, "int32")
    (_, _, oc, wc), (_, _, os_, ws) = run_both(k, a, b, o, w)
    x, y = a.astype(np.int64), b.astype(np.int64)
    pair = lambda v, fn: fn(v[0::2], v[1::2])  # noqa: E731
    addh = np.clip(np.concatenate([pair(x, np.add), pair(y, np.add)]), -32768, 32767)
    maxh = np.concatenate([pair(x, np.maximum), pair(y, np.maximum)])
    check_active([oc, os_], np.concatenate([addh, maxh]).astype("int16"))
    m = np.arange(32) < 30
    dot = np.clip(np.where(m, x * y, 0).reshape(-1, 2).sum(1), -2**31, 2**31 - 1)
    check_active([wc, ws], dot.astype("int32"))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_float_qdot(dtype):
    @S.prim_func
    def k(a: S.ptr(dtype, "global"), b: S.ptr(dtype, "global"), acc: S.ptr("fp32", "global"),
          out: S.ptr("fp32", "global")):
        x = S.vload(a)
        y = S.vload(b)
        S.vstore(S.vqdot(x, y, mask="14T"), out)
        S.vstore(S.vqdpa(S.vload(acc), x, y), out + 8)

    a, b = rand(16, dtype, seed=17, low=-4.0, high=4.0), rand(16, dtype, seed=18, low=-4.0, high=4.0)
    acc = rand(8, "float32", seed=19, low=-1.0, high=1.0)
    out = np.zeros(16, "float32")
    (_, _, _, c), (_, _, _, s) = run_both(k, a, b, acc, out)
    prod = a.astype(np.float64) * b.astype(np.float64)
    m = np.arange(16) < 14
    q = np.zeros(8)
    q[0::2] = np.where(m, prod, 0).reshape(4, 4).sum(1)
    full = np.zeros(8)
    full[0::2] = prod.reshape(4, 4).sum(1)
    even = np.zeros(16, bool)
    even[0:8:2] = True
    even[8:16] = True
    for got in (c, s):
        np.testing.assert_allclose(got[even], np.concatenate([q, acc + full])[even], rtol=1e-5, atol=1e-5)


def test_misuse_immediates():
    @S.prim_func
    def bad_imm(a: S.ptr("int8", "global")):
        S.vstore(S.vadd(S.vload(a), 300), a)

    expect_diag(bad_imm, "S.vadd(", "the literal 300 fits none of")

    @S.prim_func
    def bad_out_sign(a: S.ptr("int16", "global")):
        S.vstore(S.vsub(S.vload(a), 1, out_sign="x"), a)

    expect_diag(bad_out_sign, "S.vsub(", 'out_sign')

    @S.prim_func
    def bad_clip(a: S.ptr("uint8", "global")):
        S.vstore(S.clip(S.vload(a), 0, 1000), a)

    expect_diag(bad_clip, "S.clip(", "1000")


@pytest.mark.parametrize("sdtype,udtype,first", [("int8", "uint8", "s"), ("int8", "uint8", "u"),
                                                ("int16", "uint16", "s"), ("int16", "uint16", "u")])
def test_dot_of_mixed_signs(sdtype, udtype, first):
    # A signed and an unsigned operand: the signed double-width result, saturated (quad: int32),
    # inactive lanes contributing nothing; vdpa/vqdpa saturate the accumulated total.
    n = lanes(sdtype)
    bits = T_bits(sdtype)
    wide = f"int{2 * bits}"
    xt, yt = (sdtype, udtype) if first == "s" else (udtype, sdtype)

    @S.prim_func
    def k(a: S.ptr(xt, "global"), b: S.ptr(yt, "global"), acc: S.ptr(wide, "global"), qacc: S.ptr("int32", "global"),
          w: S.ptr(wide, "global"), q: S.ptr("int32", "global")):
        # Every TEC runs the kernel: the accumulators are read from inputs, not updated in place.
        x = S.vload(a)
        y = S.vload(b)
        S.vstore(S.vdot(x, y, mask=MASK), w)
        S.vstore(S.vdpa(S.vload(acc), x, y), w + n // 2)
        if bits == 8:
            S.vstore(S.vqdot(x, y, MASK), q)
            S.vstore(S.vqdpa(S.vload(qacc), x, y), q + 8)

    a, b = rand(n, xt, seed=8), rand(n, yt, seed=9)
    a[:4] = np.iinfo(xt).min if first == "s" else np.iinfo(xt).max
    b[:4] = np.iinfo(yt).max if first == "s" else np.iinfo(yt).min
    wl = n // 2
    acc, qacc = rand(wl, wide, seed=10), rand(8, "int32", seed=11)
    w, q = np.zeros(2 * wl, wide), np.zeros(16, "int32")
    (_, _, _, _, wc, qc), (_, _, _, _, ws, qs) = run_both(k, a, b, acc, qacc, w, q)
    info = np.iinfo(wide)
    x, y = a.astype(np.int64), b.astype(np.int64)
    m = mask_bits(MASK, n)
    dot = np.clip(np.where(m, x * y, 0).reshape(-1, 2).sum(1), info.min, info.max)
    # vdpa saturates the total once, as Compass (acc may bring a pair sum back into range).
    dpa = np.clip(acc.astype(np.int64) + (x * y).reshape(-1, 2).sum(1), info.min, info.max)
    check_active([wc, ws], np.concatenate([dot, dpa]).astype(wide))
    if bits == 8:
        qdot = np.where(m, x * y, 0).reshape(-1, 4).sum(1)
        qdpa = qacc.astype(np.int64) + (x * y).reshape(-1, 4).sum(1)
        check_active([qc, qs], np.clip(np.concatenate([qdot, qdpa]), -2**31, 2**31 - 1).astype("int32"))


def test_dot_refuses_other_widths_as_compass():
    @S.prim_func
    def wide(a: S.ptr("int32", "global"), out: S.ptr("int32", "global")):
        S.vstore(S.vdot(S.vload(a), S.vload(a)), out)

    expect_diag(wide, "S.vdot(", "takes 8-bit or 16-bit integer vectors only")

    @S.prim_func
    def widths(a: S.ptr("int8", "global"), b: S.ptr("int16", "global"), out: S.ptr("int16", "global")):
        S.vstore(S.vdot(S.vload(a), S.vload(b)), out)

    expect_diag(widths, "S.vdot(", "Argument type mismatch")

    @S.prim_func
    def quad(a: S.ptr("int16", "global"), out: S.ptr("int32", "global")):
        S.vstore(S.vqdot(S.vload(a), S.vload(a)), out)

    expect_diag(quad, "S.vqdot(", "takes 8-bit integer or 16-bit float vectors only")
