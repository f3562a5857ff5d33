"""Memory intrinsics: vload (mask, lanes, stride), vstore (mask, stride), vload_gather and
vstore_scatter on every dtype, compiled and under PySim; the misc family (printf, perf ticks);
misuse."""

import numpy as np
import pytest

from tessera.dsl import script as S

from _util import ALL_TYPES, INT_TYPES, check_active, expect_diag, lanes, mask_bits, np_dtype, rand, run_both

MASK = "1T2F3T"


@pytest.mark.parametrize("dtype", ALL_TYPES)
def test_load_store_gather_scatter(dtype):
    n = lanes(dtype)
    itype = "uint16"  # the spec's 16-bit index vector, one index per data lane

    @S.prim_func
    def k(a: S.ptr(dtype, "global"), idx: S.ptr(itype, "global"), out: S.ptr(dtype, "global")):
        S.vstore(S.vload(a, mask=MASK), out)
        S.vstore(S.vload(a, stride=2), out + n)
        S.vstore(S.vload(a, lanes=n + 3), out + 2 * n)  # flexible width
        S.vstore(S.vload(a), out + 4 * n, mask=MASK)
        S.vstore(S.vload(a), out + 5 * n, stride=2)
        S.vstore(S.vload_gather(a, S.vload(idx, lanes=n), mask=MASK), out + 7 * n)
        S.vstore_scatter(S.vload(a), out + 8 * n, S.vload(idx, lanes=n), mask="TTT")
        S.perf_tick_begin(0)
        S.perf_tick_end(0)

    a = rand(2 * n, dtype, seed=51) if dtype in INT_TYPES else rand(2 * n, dtype, seed=51, low=-9.0, high=9.0)
    idx = np.random.default_rng(52).permutation(n).astype(itype)
    out = np.zeros(9 * n, np_dtype(dtype))
    (_, _, c), (_, _, s) = run_both(k, a, idx, out)
    m = mask_bits(MASK, n)
    z = np.zeros(n, np_dtype(dtype))
    strided_store = np.zeros(2 * n, np_dtype(dtype))
    strided_store[0::2] = a[:n]
    scatter = np.zeros(n, np_dtype(dtype))
    scatter[idx[:3]] = a[:3]
    expected = np.concatenate([np.where(m, a[:n], z), a[0:2 * n:2], a[:n + 3], z[:n - 3],
                               np.where(m, a[:n], z), strided_store, np.where(m, a[idx], z), scatter])
    active = np.ones(9 * n, bool)
    active[3 * n + 3:4 * n] = False  # not written
    active[5 * n + 1:7 * n:2] = False  # gaps of the strided store
    check_active([c, s], expected, active)


GATHER_LANES = {"flexible": lambda n: n + 3, "multiple": lambda n: 2 * n, "short": lambda n: 5}


@pytest.mark.parametrize("width", sorted(GATHER_LANES))
@pytest.mark.parametrize("signed", [False, True])
@pytest.mark.parametrize("dtype", ALL_TYPES)
def test_gather_scatter_widths(dtype, signed, width):
    """16-bit indices for every data width (i16x32 for 8-bit data, i16x8 for 32-bit data) and
    flexible/multiple widths, with and without masks; compiled and PySim against numpy."""
    n = lanes(dtype)
    L = GATHER_LANES[width](n)
    itype = "int16" if signed else "uint16"
    size = 3 * L
    mask = "".join("TF"[i % 3 == 1] for i in range(L))

    @S.prim_func
    def k(a: S.ptr(dtype, "global"), idx: S.ptr(itype, "global"), out: S.ptr(dtype, "global")):
        i = S.vload(idx, lanes=L)
        S.vstore(S.vload_gather(a, i), out)
        S.vstore(S.vload_gather(a, i, mask=mask), out + L)
        S.vstore_scatter(S.vload(a, lanes=L), out + 2 * L, i)
        S.vstore_scatter(S.vload(a + L, lanes=L), out + 2 * L + size, i, mask=mask)

    a = rand(size, dtype, seed=61) if dtype in INT_TYPES else rand(size, dtype, seed=61, low=-9.0, high=9.0)
    idx = np.random.default_rng(62).permutation(size)[:L].astype(itype)
    out = np.zeros(2 * L + 2 * size, np_dtype(dtype))
    (_, _, c), (_, _, s) = run_both(k, a, idx, out)
    m = mask_bits(mask, L)
    z = np.zeros(L, np_dtype(dtype))
    scatter = np.zeros(size, np_dtype(dtype))
    scatter[idx] = a[:L]
    scatter_m = np.zeros(size, np_dtype(dtype))
    scatter_m[idx[m]] = a[L:2 * L][m]
    expected = np.concatenate([a[idx], np.where(m, a[idx], z), scatter, scatter_m])
    active = np.ones(expected.size, bool)
    active[L:2 * L] = m  # inactive gather lanes are zero, but only active lanes are specified
    check_active([c, s], expected, active)


def test_printf(capfd):
    @S.prim_func
    def k(a: S.ptr("int32", "global"), h: S.ptr("int16", "global"), f: S.ptr("fp32", "global")):
        for t in S.tec_range(1):
            S.printf("value=%d %x\n", a[0], a[1])
            S.printf("v=%v8hlx|%v16hx|%v8hlf%%\n", S.vload(a), S.vload(h), S.vload(f))

    a = np.array([42, -1, 2, 3, 4, 5, 6, 7], "int32")
    h = np.arange(16, dtype="int16") - 1
    f = np.arange(8, dtype="float32") / 2
    run_both(k, a, h, f)
    out = capfd.readouterr().out
    assert out.count("value=42 ffffffff") == 2
    line = ("v=2a,ffffffff,2,3,4,5,6,7|ffff," + ",".join(f"{i:x}" for i in range(15)) + "|" +
            ",".join(f"{v:f}" for v in f) + "%")
    assert out.count(line) == 2, out


def test_misuse():
    @S.prim_func
    def bad_index(a: S.ptr("int32", "global"), i: S.ptr("int32", "global")):
        S.vstore(S.vload_gather(a, S.vload(i)), a)

    expect_diag(bad_index, "S.vload_gather(", "the indices must be a 16-bit index vector")

    @S.prim_func
    def bad_lanes(a: S.ptr("int8", "global"), i: S.ptr("int16", "global")):
        S.vstore_scatter(S.vload(a), a, S.vload(i))

    expect_diag(bad_lanes, "S.vstore_scatter(", 'the indices must be a 16-bit index vector ("int16x32"')

    @S.prim_func
    def bad_value(a: S.ptr("int32", "global"), i: S.ptr("int16", "global")):
        S.vstore_scatter(S.vload(i, lanes=8), a, S.vload(i, lanes=8))

    expect_diag(bad_value, "S.vstore_scatter(", "Argument type mismatch")

    @S.prim_func
    def bad_stride(a: S.ptr("int32", "global")):
        S.vstore(S.vload(a, stride=0), a)

    expect_diag(bad_stride, "S.vload(", "stride")


def test_printf_misuse():
    @S.prim_func
    def bad_lanes(a: S.ptr("int32", "global")):
        S.printf("%v16hx\n", S.vload(a))

    expect_diag(bad_lanes, "S.printf(", "%v16")

    @S.prim_func
    def bad_count(a: S.ptr("int32", "global")):
        S.printf("%d %d\n", a[0])

    expect_diag(bad_count, "S.printf(", "more arguments")
