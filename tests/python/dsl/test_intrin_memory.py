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
    bits = np_dtype(dtype).itemsize * 8
    itype = f"uint{bits}"

    @S.prim_func
    def k(a: S.ptr(dtype, "global"), idx: S.ptr(itype, "global"), out: S.ptr(dtype, "global")):
        S.vstore(S.vload(a, mask=MASK), out)
        S.vstore(S.vload(a, stride=2), out + n)
        S.vstore(S.vload(a, lanes=n + 3), out + 2 * n)  # flexible width
        S.vstore(S.vload(a), out + 4 * n, mask=MASK)
        S.vstore(S.vload(a), out + 5 * n, stride=2)
        S.vstore(S.vload_gather(a, S.vload(idx), mask=MASK), out + 7 * n)
        S.vstore_scatter(S.vload(a), out + 8 * n, S.vload(idx), mask="TTT")
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


def test_printf(capfd):
    @S.prim_func
    def k(a: S.ptr("int32", "global")):
        for t in S.tec_range(1):
            S.printf("value=%d\n", a[0])

    a = np.array([42], "int32")
    run_both(k, a)
    out = capfd.readouterr().out
    assert out.count("value=42") == 2


def test_misuse():
    @S.prim_func
    def bad_index(a: S.ptr("int32", "global"), i: S.ptr("int16", "global")):
        S.vstore(S.vload_gather(a, S.vload(i)), a)

    expect_diag(bad_index, "S.vload_gather(", "indices")

    @S.prim_func
    def bad_value(a: S.ptr("int32", "global"), i: S.ptr("int32", "global")):
        S.vstore_scatter(S.vload(i, lanes=4), a, S.vload(i))

    expect_diag(bad_value, "S.vstore_scatter(", "Argument type mismatch")

    @S.prim_func
    def bad_stride(a: S.ptr("int32", "global")):
        S.vstore(S.vload(a, stride=0), a)

    expect_diag(bad_stride, "S.vload(", "stride")
