"""Memory intrinsics: vload (mask, lanes, stride), vstore (mask, stride), vload_gather and
vstore_scatter on every dtype, compiled and under PySim; the misc family (printf, perf ticks);
misuse."""

import numpy as np
import pytest

from tessera.dsl import script as S

from _util import ALL_TYPES, INT_TYPES, build, check_active, expect_diag, lanes, mask_bits, np_dtype, rand, run_both

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
    assert out.count("value=42 0xffffffff") == 2
    line = ("v=0x2a,0xffffffff,0x2,0x3,0x4,0x5,0x6,0x7|0xffff," +
            ",".join(f"0x{i:x}" for i in range(15)) + "|" + ",".join(f"{v:f}" for v in f) + "%")
    assert out.count(line) == 2, out


def _printf_lines(capfd, k, *args):
    """The lines ``k`` prints compiled and under PySim (one TEC), checked to be the same."""
    run_both(k, *args)
    out = capfd.readouterr().out.splitlines()
    half = len(out) // 2
    assert out[:half] == out[half:], out
    return out[:half]


def test_printf_prints_as_the_npu(capfd):
    """The NPU's printf: 32-bit integers; "0" and "0x" prefixes, also for 0; %x of a float is
    its float32 bits; %f keeps its decimals truncated toward zero (numpy's float32 value, whose
    7th decimal would round up in C)."""
    @S.prim_func
    def k(a: S.ptr("int32", "global"), f: S.ptr("fp32", "global"), b: S.ptr("int8", "global")):
        for t in S.tec_range(1):
            S.printf("%d|%i|%u|%o|%x|%X|%c\n", a[0], a[0], a[0], a[0], a[0], a[0], a[1])
            S.printf("%o|%x|%X|%d\n", a[2], a[2], a[2], 4294967295)
            S.printf("%f|%f|%f|%.2f|%.0f|%e|%g\n", f[0], f[1], f[2], f[3], f[3], f[1], f[1])
            S.printf("%x|%X|%hhx|%hd|%hhu\n", f[4], S.fp16(1.5), a[3], a[3], a[3])
            S.printf("%v32hhx\n", S.vload(b))
            S.printf("[%6d|%-6x|%06x|%08.3f|%+d|% d|%s|%-5s]\n", a[1], a[1], a[1], f[1], a[1],
                     a[1], "lit%eral", "ab")

    a = np.array([-6, 83, 0, 0x1234fe, 0, 0, 0, 0], "int32")
    f = np.array([1.2345678, -1.2345678, 0.0000546, 2.999, 1.25, 0, 0, 0], "float32")
    b = np.arange(-16, 16, dtype="int8")
    lines = _printf_lines(capfd, k, a, f, b)
    assert lines[0] == "-6|-6|4294967290|037777777772|0xfffffffa|0xFFFFFFFA|S"
    assert lines[1] == "00|0x0|0x0|-1"
    assert lines[2] == (f"1.234567|-1.234567|0.000054|2.99|2|{float(f[1]):e}|{float(f[1]):g}")
    assert lines[3] == "0x3fa00000|0x3FC00000|0xfe|13566|254"
    assert lines[4] == ",".join(f"0x{int(v) & 0xff:x}" for v in b)
    assert lines[5] == "[    83|0x53  |0x0053|-001.234|+83| 83|lit%eral|ab   ]"


def test_printf_pointer(capfd):
    """%p prints the address compiled; PySim, which has no addresses, prints it as written."""
    @S.prim_func
    def k(a: S.ptr("int32", "global")):
        for t in S.tec_range(1):
            S.printf("at %p.\n", a + 1)

    a = np.zeros(8, "int32")
    build(k)(a)
    compiled = capfd.readouterr().out
    assert compiled == f"at {hex(a.ctypes.data + 4)}.\n", compiled
    k(a)
    assert capfd.readouterr().out == "at %p.\n"


def test_printf_misuse_of_conversions():
    @S.prim_func
    def float_as_int(f: S.ptr("fp32", "global")):
        S.printf("%d\n", f[0])

    expect_diag(float_as_int, "S.printf(", "%d in '%d\\n' prints an integer, got a float32 value")

    @S.prim_func
    def int_as_float(a: S.ptr("int32", "global")):
        S.printf("%f\n", a[0])

    expect_diag(int_as_float, "S.printf(", "prints a floating-point value, got a int32 value")

    @S.prim_func
    def unknown(a: S.ptr("int32", "global")):
        S.printf("%q %d\n", a[0])

    expect_diag(unknown, "S.printf(", "unsupported conversion '%q'")

    @S.prim_func
    def not_a_string(a: S.ptr("int32", "global")):
        S.printf("%s\n", a[0])

    expect_diag(not_a_string, "S.printf(", "%s in '%s\\n' prints a literal string")


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
