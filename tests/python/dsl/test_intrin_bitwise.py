"""Bitwise and shift intrinsics on every integer dtype, with masks, r=, saturate, with_round,
out_sign and to_h, compiled and under PySim, against numpy on the active lanes; misuse."""

import numpy as np
import pytest

from tessera.dsl import script as S

from _util import INT_TYPES, check_active, expect_diag, lanes, mask_bits, np_dtype, rand, run_both

MASK = "2T1F5T"


def _bits(dtype):
    return np.dtype(dtype).itemsize * 8


def _wrap(v, dtype):
    return np.asarray(v).astype(np.int64).astype(dtype)


def _round_shift(x, c):
    q = x >> c
    if c == 0:
        return x
    rem = x - (q << c)
    half = 1 << (c - 1)
    return q + ((rem > half) | ((rem == half) & (q & 1 == 1)))


def _clz(u, bits):
    out = np.full(u.shape, bits)
    for b in range(bits - 1, -1, -1):
        out = np.where((((u >> b) & 1) == 1) & (out == bits), bits - 1 - b, out)
    return out


@pytest.mark.parametrize("dtype", INT_TYPES)
def test_logic_shift_count(dtype):
    n = lanes(dtype)
    bits = _bits(dtype)
    signed = dtype.startswith("int")

    @S.prim_func
    def k(a: S.ptr(dtype, "global"), b: S.ptr(dtype, "global"), out: S.ptr(dtype, "global"),
          flags: S.ptr("int32", "global")):
        x = S.vload(a)
        y = S.vload(b)
        S.vstore(S.vand(x, y), out)
        S.vstore(S.vor(x, y, mask=MASK), out + n)
        S.vstore(S.vxor(x, y), out + 2 * n)
        S.vstore(S.vinv(x), out + 3 * n)
        S.vstore(S.vsr(x, 3, mask=MASK, r=y), out + 4 * n)
        S.vstore(S.vsr(x, 3, with_round=True), out + 5 * n)
        S.vstore(S.vsl(x, 2, saturate=True), out + 6 * n)
        S.vstore(S.vsl(x, 2, mask=MASK, r=0), out + 7 * n)
        S.vstore(S.vror(x, 3), out + 8 * n)
        S.vstore(S.clz(x), out + 9 * n)
        S.vstore(S.vbrevs(x), out + 10 * n)
        S.vstore(S.vpcnt(x), out + 11 * n)
        if signed:
            S.vstore(S.vcls(x), out + 12 * n)
        m = S.vand(x > y, x != y, mask=MASK)
        flags[0] = S.i32(1) if S.vall(m) else S.i32(0)
        flags[1] = S.i32(1) if S.vany(S.vinv(m, mask="TF")) else S.i32(0)
        flags[2] = S.i32(S.clz(a[0]))

    a, b = rand(n, dtype, seed=21), rand(n, dtype, seed=22)
    out = np.zeros(13 * n, dtype)
    flags = np.zeros(3, "int32")
    (_, _, c, fc), (_, _, s, fs) = run_both(k, a, b, out, flags)
    x, y = a.astype(np.int64), b.astype(np.int64)
    info = np.iinfo(dtype)
    u = x & ((1 << bits) - 1)
    m = mask_bits(MASK, n)
    lsl_sat = np.where(x == 0, 0, np.clip(x * 4, info.min, info.max))
    ror = ((u >> 3) | (u << (bits - 3))) & ((1 << bits) - 1)
    brev = sum(((u >> i) & 1) << (bits - 1 - i) for i in range(bits))
    pcnt = sum((u >> i) & 1 for i in range(bits))
    cls = _clz(np.where(x < 0, ~u & ((1 << bits) - 1), u), bits) - 1
    rows = [x & y, np.where(m, x | y, 0), x ^ y, ~x, np.where(m, x >> 3, y), _round_shift(x, 3),
            lsl_sat, np.where(m, x << 2, 0), ror, _clz(u, bits), brev, pcnt, cls]
    expected = np.concatenate([_wrap(r, dtype) for r in rows])
    active = np.ones(13 * n, bool)
    active[n:2 * n] = m
    if not signed:
        active[12 * n:] = False
    check_active([c, s], expected, active)
    mm = m & (x > y)
    exp_flags = [int(mm.all()), 0, int(_clz(u[:1], bits)[0])]
    for f in (fc, fs):
        assert f[0] == exp_flags[0] and f[2] == exp_flags[2]
        assert f[1] == int(not mm[0])


@pytest.mark.parametrize("dtype,to_h", [("int16", False), ("uint16", False), ("int32", False),
                                        ("uint32", False), ("int32", True), ("uint32", True)])
def test_narrowing_shift(dtype, to_h):
    n = lanes(dtype)
    rbits = 16 if to_h else 8
    rtype = ("int" if dtype.startswith("int") else "uint") + str(rbits)
    stype = "int" + str(rbits)
    rn = 256 // rbits

    @S.prim_func
    def k(a: S.ptr(dtype, "global"), out: S.ptr(rtype, "global"), out_s: S.ptr(stype, "global")):
        x = S.vload(a)
        S.vstore(S.vnsr(x, 4, to_h=to_h), out)
        S.vstore(S.vnsr(x, 4, mask=MASK, saturate=True, to_h=to_h), out + rn)
        S.vstore(S.vnsrsr(x, 4, to_h=to_h), out + 2 * rn)
        S.vstore(S.vnsr(x, 4, saturate=True, with_round=True, out_sign="s", to_h=to_h), out_s)

    a = rand(n, dtype, seed=23)
    out = np.zeros(3 * rn, rtype)
    out_s = np.zeros(rn, stype)
    (_, c, cs), (_, s, ss) = run_both(k, a, out, out_s)
    x = a.astype(np.int64)
    rinfo, sinfo = np.iinfo(rtype), np.iinfo(stype)
    m = mask_bits(MASK, n)
    step = rn // n

    def place(v):
        r = np.zeros(rn, np.int64)
        r[::step] = v
        return r

    rounded = _round_shift(x, 4)
    rows = [place(x >> 4), place(np.where(m, np.clip(x >> 4, rinfo.min, rinfo.max), 0)),
            place(np.clip(rounded, rinfo.min, rinfo.max))]
    check_active([c, s], np.concatenate([_wrap(r, rtype) for r in rows]))
    check_active([cs, ss], _wrap(place(np.clip(rounded, sinfo.min, sinfo.max)), stype))


@pytest.mark.parametrize("dtype,to_h,parts", [("int16", False, 2), ("uint32", False, 3),
                                              ("int32", True, 2), ("uint16", False, 4)])
def test_narrowing_shift_of_a_multiple_width(dtype, to_h, parts):
    # A vector of several native widths narrows part by part: every result keeps its source
    # position (every 2nd or 4th lane of the narrow type) across the whole multiple width.
    n = lanes(dtype) * parts
    rbits = 16 if to_h else 8
    rtype = ("int" if dtype.startswith("int") else "uint") + str(rbits)
    rn = 256 // rbits * parts
    mask = f"{n - 5}T3F2T"

    @S.prim_func
    def k(a: S.ptr(dtype, "global"), c: S.ptr(dtype, "global"), out: S.ptr(rtype, "global")):
        x = S.vload(a, lanes=n)
        shift = S.vload(c, lanes=n)
        S.vstore(S.vnsrsr(x, shift, to_h=to_h), out, f"{rn}T")
        S.vstore(S.vnsr(x, shift, mask=mask, saturate=True, to_h=to_h), out + rn, f"{rn}T")

    a = rand(n, dtype, seed=5)
    shift = rand(n, dtype, seed=6, low=0, high=_bits(dtype) - 2)
    out = np.zeros(2 * rn, rtype)
    (_, _, c), (_, _, s) = run_both(k, a, shift, out)
    x, sh = a.astype(np.int64), shift.astype(np.int64)
    info = np.iinfo(rtype)
    step = rn // n
    m = mask_bits(mask, n)
    rounded = np.array([_round_shift(int(v), int(t)) for v, t in zip(x, sh)])
    first, second = np.zeros(rn, np.int64), np.zeros(rn, np.int64)
    first[::step] = np.clip(rounded, info.min, info.max)
    second[::step] = np.where(m, np.clip(x >> sh, info.min, info.max), 0)
    check_active([c, s], np.concatenate([_wrap(first, rtype), _wrap(second, rtype)]))


def test_misuse():
    @S.prim_func
    def bad_float(a: S.ptr("fp32", "global")):
        S.vstore(S.vand(S.vload(a), S.vload(a)), a)

    expect_diag(bad_float, "S.vand(", "unsupported type")

    @S.prim_func
    def bad_to_h(a: S.ptr("int16", "global"), b: S.ptr("int16", "global")):
        S.vstore(S.vnsr(S.vload(a), 2, to_h=True), b)

    expect_diag(bad_to_h, "S.vnsr(", "to_h=True narrows 32-bit lanes")

    @S.prim_func
    def bad_count(a: S.ptr("int16", "global"), b: S.ptr("int32", "global")):
        S.vstore(S.vsr(S.vload(a), S.vload(b)), a)

    expect_diag(bad_count, "S.vsr(", "Argument type mismatch")

    @S.prim_func
    def bad_cls(a: S.ptr("uint16", "global")):
        S.vstore(S.vcls(S.vload(a)), a)

    expect_diag(bad_cls, "S.vcls(", "unsupported type")


def test_misuse_immediates():
    @S.prim_func
    def bad_with_round(a: S.ptr("int16", "global")):
        S.vstore(S.vsr(S.vload(a), 1, with_round=2), a)

    expect_diag(bad_with_round, "S.vsr(", "with_round")

    @S.prim_func
    def bad_and(a: S.ptr("uint8", "global")):
        S.vstore(S.vand(S.vload(a), 256), a)

    expect_diag(bad_and, "S.vand(", "the literal 256 fits none of")


@pytest.mark.parametrize("dtype", ["int16", "int32"])
def test_masked_unary_on_flexible_width_wider_than_64_bytes(dtype):
    # 2 * lanes + 1 lanes (66 or 68 bytes): the inactive lanes' filler must cover the vector.
    n = 2 * lanes(dtype) + 1
    active = [bool(i % 3) for i in range(n)]

    @S.prim_func
    def kernel(a: S.ptr(dtype, "global"), out: S.ptr(dtype, "global")):
        x = S.vload(a, lanes=n)
        S.vstore(S.vpcnt(x, active), out)
        S.vstore(S.clz(x, active), out + n)

    a = rand(n, dtype)
    compiled, pysim = run_both(kernel, a, np.zeros(2 * n, dtype))
    bits = _bits(dtype)
    u = a.astype(np.int64) & ((1 << bits) - 1)
    pcnt = np.array([bin(v).count("1") for v in u])
    clz = np.array([bits - v.bit_length() for v in map(int, u)])
    expected = np.concatenate([pcnt, clz])
    check_active([compiled[1], pysim[1]], expected, active + active)
