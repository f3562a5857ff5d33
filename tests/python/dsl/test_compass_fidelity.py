"""Compass DSL behaviours that Compass 4.2's own tests rely on: pointers to virtual vector types,
pointer variables re-pointed into another buffer (in a loop or a branch too),
extract_prim_func_info. Each kernel runs
compiled and in PySim, both checked against numpy."""

import numpy as np
import pytest

from tessera.dsl import BuildManager, schedule, script as S
from tessera.dsl.analysis import extract_prim_func_info

from _util import build, expect_diag, np_dtype, rand


def _both(func, *args):
    """Run ``func`` compiled and in PySim on copies of ``args``; return both sets of arrays."""
    compiled = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    pysim = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    build(func)(*compiled)
    func(*pysim)
    return compiled, pysim


def test_pointer_to_multiple_width_vector_loads_stores_and_moves():
    @S.prim_func
    def k(a: S.ptr("fp32x32", "global"), b: S.ptr("float32x16", "global"), out: S.ptr("fp32x32", "global")):
        out[0] = a[0] + a[1]             # 32 lanes each
        q = out + 1                      # one whole fp32x32 further: element 32
        q[0] = S.vload(a + 1) * 2.0      # vload takes the pointee's 32 lanes
        half = a.as_ptr("fp32x8")        # the same memory seen as native vectors
        sb = b.as_ptr("fp32")
        out[2] = S.vconcat([half[1], half[0], S.vload(sb, lanes=8), S.vload(sb + 24, lanes=8)], "all")
        S.vstore(b[1], out.as_ptr("fp32") + 100)

    a = rand(64, "float32", seed=1)
    b = rand(32, "float32", seed=2)
    for out in _both(k, a, b, np.zeros(128, "float32")):
        out = out[2]
        np.testing.assert_allclose(out[:32], a[:32] + a[32:], rtol=1e-6)
        np.testing.assert_allclose(out[32:64], a[32:] * 2, rtol=1e-6)
        np.testing.assert_array_equal(out[64:96], np.concatenate([a[8:16], a[0:8], b[0:8], b[24:32]]))
        np.testing.assert_array_equal(out[100:116], b[16:32])


def test_pointer_to_flexible_width_vector_with_runtime_index():
    @S.prim_func
    def k(a: S.ptr("int32x3", "global"), out: S.ptr("int32x3", "global"), n: S.i32):
        for i in range(n):
            out[i] = a[n - 1 - i] + i    # reverse the triples, add the index

    n = 5
    a = rand(3 * n, "int32", seed=3, low=-1000, high=1000)
    want = np.concatenate([a[3 * (n - 1 - i):3 * (n - i)] + i for i in range(n)])
    for args in _both(k, a, np.zeros(3 * n, "int32"), n):
        np.testing.assert_array_equal(args[1], want)


def test_pointer_to_virtual_vector_in_gather_and_mask():
    @S.prim_func
    def k(idx: S.ptr("uint16x32", "global"), b: S.ptr("float32x32", "global"), c: S.ptr("float32x32", "global")):
        indices = idx[0]
        c[0] = 0
        c[0] = S.vload_gather(b, indices, mask=indices > 16)

    idx = rand(32, "uint16", seed=4, low=0, high=31)
    b = rand(32, "float32", seed=5)
    for args in _both(k, idx, b, np.full(32, 7, "float32")):
        np.testing.assert_array_equal(args[2], np.where(idx > 16, b[idx], 0))


def test_pointer_to_virtual_mask_is_refused():
    with pytest.raises(TypeError, match="virtual mask type"):
        S.ptr("boolx30", "global")


def test_pointer_variable_repointed_into_another_buffer():
    @S.prim_func
    def k(a: S.ptr("int32", "global"), b: S.ptr("int32", "global"), out: S.ptr("int32", "global")):
        p = a + 1
        out[0] = p[0]
        p = b + 2                        # another buffer, same block: a new pointer from here on
        out[1] = p[0]
        for i in range(3):
            p = p + 1                    # moves inside b
            out[2 + i] = p[0]
        p = out + 10
        p[0] = 99

    a = np.arange(10, dtype="int32")
    b = np.arange(100, 110, dtype="int32")
    for args in _both(k, a, b, np.zeros(16, "int32")):
        np.testing.assert_array_equal(args[2][:5], [1, 102, 103, 104, 105])
        assert args[2][10] == 99


def test_pointer_variable_repointed_in_a_branch():
    @S.prim_func
    def k(a: S.ptr("int32", "global"), b: S.ptr("int32", "global"), n: S.i32):
        p = a + 1
        if n > 0:
            p = b                        # which buffer p points into depends on n
        p[0] = 1
        p = p + 1
        p[0] = 2

    for n, want_a, want_b in ((0, [0, 1, 2, 0], [0, 0, 0, 0]), (3, [0, 0, 0, 0], [1, 2, 0, 0])):
        for a, b, _ in _both(k, np.zeros(4, "int32"), np.zeros(4, "int32"), n):
            np.testing.assert_array_equal(a, want_a)
            np.testing.assert_array_equal(b, want_b)
    # The variable holds an address: one pointer read from it at each use.
    c_code = build(k).c_code
    assert "void* p = (a + 1);" in c_code and "p = b;" in c_code


def test_pointer_variable_repointed_in_a_loop_and_its_category():
    @S.prim_func
    def sub(x: S.ptr("fp16", "global"), y: S.ptr("fp16", "global"), z: S.ptr("fp16", "global"),
            n: S.i32):
        e = x + 2
        for i in range(n):
            if i % 2 == 0:
                e = y + i                # y is written only through e
            else:
                e = e + 1
            e[0] = 7.0
        z[0] = e[0]

    @S.prim_func
    def k(a: S.ptr("fp16", "global"), b: S.ptr("fp16", "global"), c: S.ptr("fp16", "global"),
          n: S.i32):
        sub(a, c + 1, b, n)

    infos = extract_prim_func_info(BuildManager().lower(k)).param_infos
    assert [i.category for i in infos] == ["output_tensor", "output_tensor", "output_tensor", "attr"]
    for n in (0, 1, 4):
        want_a, want_b, want_c = np.zeros(8, "float16"), np.zeros(8, "float16"), np.zeros(8, "float16")
        e_buf, e_off = want_a, 2
        for i in range(n):
            e_buf, e_off = (want_c, 1 + i) if i % 2 == 0 else (e_buf, e_off + 1)
            e_buf[e_off] = 7.0
        want_b[0] = e_buf[e_off]
        for a, b, c, _ in _both(k, np.zeros(8, "float16"), np.zeros(8, "float16"),
                                np.zeros(8, "float16"), n):
            np.testing.assert_array_equal(a, want_a)
            np.testing.assert_array_equal(b, want_b)
            np.testing.assert_array_equal(c, want_c)


def test_pointer_variable_repointed_keeps_its_type():
    @S.prim_func
    def k(a: S.ptr("int32", "global"), f: S.ptr("float32", "global"), n: S.i32):
        p = a
        for i in range(n):
            p = f                        # another element type
        p[0] = 1

    expect_diag(k, "p = f", "the pointer variable 'p' must keep pointing to int32 in global memory",
                lower=True)


@S.prim_func
def _move(x: S.ptr("i32", "global")) -> S.ptr("i32", "global"):
    return x + 1


@S.prim_func
def _pick(x: S.ptr("i32", "global"), y: S.ptr("i32", "global"), c: S.i32) -> S.ptr("i32", "global"):
    if c == 1:
        return x + 1
    return y + 1


@S.prim_func
def _fill(dst: S.ptr("i32", "global"), src: S.ptr("i32", "global")):
    dst[0] = src[0]


def test_extract_prim_func_info_categories():
    @S.prim_func
    def k(a: S.ptr("i32", "global"), o1: S.ptr("i32", "global"), o2: S.ptr("i32", "global"),
          o3: S.ptr("i32", "global"), r: S.ptr("i32", "global"), lut: S.ptr("i32", "constant"),
          o4: S.ptr("i32", "lsram"), n: S.i32):
        q = _move(o1)                    # written through a pointer a sub-function returns
        q[0] = a[0] + lut[0]
        q = _pick(r, o2, n)              # either may be returned: both count as written
        q[0] = 1
        _fill(o3, r)                     # written by the callee
        S.dma_copy(o4, a, 4)             # written by a DMA

    infos = extract_prim_func_info(BuildManager().lower(k)).param_infos
    got = [(i.name, i.category) for i in infos]
    assert got == [("a", "input_tensor"), ("o1", "output_tensor"), ("o2", "output_tensor"),
                   ("o3", "output_tensor"), ("r", "output_tensor"), ("lut", "const_tensor"),
                   ("o4", "output_tensor"), ("n", "attr")]
    assert [i.tensor_idx for i in infos[:7]] == [0, 0, 1, 2, 3, 1, 4]
    assert infos[0].is_input_tensor and infos[1].is_output_tensor and infos[7].is_attr
    assert infos[0].dtype == "int32"


def test_extract_prim_func_info_input_only():
    @S.prim_func
    def k(a: S.ptr("fp16", "global"), b: S.ptr("fp16", "global"), out: S.ptr("fp16", "global")):
        p = b + 3
        out[0] = a[0] + p[0]

    infos = extract_prim_func_info(BuildManager().lower(k)).param_infos
    assert [i.category for i in infos] == ["input_tensor", "input_tensor", "output_tensor"]
    with pytest.raises(TypeError):
        extract_prim_func_info(42)


@S.prim_func
def _scale(A: S.ptr("int16", "global"), B: S.ptr("int16", "global"), n: S.i32, k: S.i16):
    a = S.match_buffer(A, shape=(n,))
    b = S.match_buffer(B, shape=(n,))
    for i in range(n):
        with S.block("B"):
            vi = S.axis.remap("S", [i])
            b[vi] = a[vi] * k


@S.prim_func
def _add2d(A: S.ptr("float32", "global"), B: S.ptr("float32", "global"), C: S.ptr("float32", "global")):
    a = S.match_buffer(A, shape=(7, 13))
    b = S.match_buffer(B, shape=(7, 13))
    c = S.match_buffer(C, shape=(7, 13))
    for i, j in S.grid(7, 13):
        with S.block("C"):
            vi, vj = S.axis.remap("SS", [i, j])
            c[vi, vj] = a[vi, vj] - b[vi, vj]


@pytest.mark.parametrize("n", [1, 5, 1003])
def test_schedule_elementwise_unary_spreads_over_tecs(n):
    sch = schedule.elementwise_unary(_scale, "X2_1204", "B")
    assert "threadIdx.x" in sch.mod.script()
    a = rand(n, "int16", seed=n)
    out = np.zeros(n, "int16")
    BuildManager().build(sch.mod)(a, out, n, 3)
    np.testing.assert_array_equal(out, (a * np.int16(3)).astype("int16"))


def test_schedule_elementwise_binary_fuses_the_loops():
    sch = schedule.elementwise_binary(_add2d, "compass -mcpu=X2_1204", "C")
    assert len(sch.get_loops(sch.get_block("C"))) == 2       # fused, then split over the TECs
    a, b = rand((7, 13), "float32", seed=7), rand((7, 13), "float32", seed=8)
    out = np.zeros((7, 13), "float32")
    BuildManager().build(sch.mod)(a, b, out)
    np.testing.assert_array_equal(out, a - b)


def test_schedule_elementwise_checks_the_pointers():
    with pytest.raises(ValueError, match="2 input pointer"):
        schedule.elementwise_binary(_scale, "X2_1204", "B")


def test_target_string_with_mcpu():
    assert BuildManager(target="compass -mcpu=X2_1204").target.name == "X2_1204"
    assert BuildManager(target="compass").target.name == "X2_1204"
    with pytest.raises(Exception, match="X9_9999"):
        BuildManager(target="compass -mcpu=X9_9999")


def test_runtime_convert():
    from tessera import runtime, tir as TIR

    assert runtime.convert(1000) == 1000 and runtime.convert("s") == "s"
    arr = runtime.convert([1, TIR.IntImm("int32", 2)])
    assert len(arr) == 2
    x = TIR.Var("x", "int32")
    assert runtime.convert(x).same_as(x)


@pytest.mark.parametrize("name", ["vmml", "vmma"])
def test_address_of_a_multiple_width_local_for_vmml(name):
    op = getattr(S, name)

    @S.prim_func
    def k(a: S.ptr("fp16x16", "global"), b: S.ptr("fp16x16", "global"), c: S.ptr("fp32x8", "global"),
          d: S.ptr("fp32x8", "global")):
        acc = S.vconcat((c[0], c[1]))    # float32x16: two registers, one piece of memory here
        op(acc.addr, a[0], b[0])
        lo, hi = S.vsplit(acc)
        d[0] = lo
        d[1] = hi

    a, b = rand((4, 4), "float16", seed=11), rand((4, 4), "float16", seed=12)
    c = rand((4, 4), "float32", seed=13)
    want = a.astype("float32") @ b.astype("float32").T + (c if name == "vmma" else 0)
    for args in _both(k, a, b, c, np.zeros((4, 4), "float32")):
        np.testing.assert_allclose(args[3], want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_vmma_compiled_and_pysim_round_alike(dtype):
    """Large accumulators with products of mixed signs: the order of the float32 additions and
    whether a multiply-add is fused show in the last bits; compiled and PySim must agree."""

    @S.prim_func
    def k(a: S.ptr(f"{dtype}x16", "global"), b: S.ptr(f"{dtype}x16", "global"), c: S.ptr("fp32x8", "global"),
          d: S.ptr("fp32x8", "global")):
        acc = S.vconcat((c[0], c[1]))
        S.vmma(acc.addr, a[0], b[0])
        lo, hi = S.vsplit(acc)
        d[0] = lo
        d[1] = hi

    for seed in range(4):
        a = (rand((4, 4), "float32", seed=seed) * 1e2).astype(np_dtype(dtype))
        b = (rand((4, 4), "float32", seed=seed + 9) * 1e2).astype(np_dtype(dtype))
        c = rand((4, 4), "float32", seed=seed + 20) * 1e6
        compiled, pysim = _both(k, a, b, c, np.zeros((4, 4), "float32"))
        np.testing.assert_array_equal(compiled[3], pysim[3])
        want = a.astype("float64") @ b.astype("float64").T + c
        np.testing.assert_allclose(compiled[3], want, rtol=1e-5, atol=1)


def test_float_multiply_add_is_not_fused():
    @S.prim_func
    def k(a: S.ptr("fp32x8", "global"), b: S.ptr("fp32x8", "global"), c: S.ptr("fp32x8", "global"),
          out: S.ptr("fp32x8", "global")):
        out[0] = a[0] * b[0] + c[0]

    # a * b is not exact in float32: a fused multiply-add would keep the low bits.
    a = np.full(8, 1 + 2.0 ** -12, "float32")
    b = np.full(8, 1 + 2.0 ** -12, "float32")
    c = np.full(8, -1.0, "float32")
    want = (a * b) + c                   # numpy: two roundings
    for args in _both(k, a, b, c, np.zeros(8, "float32")):
        np.testing.assert_array_equal(args[3], want)


@pytest.mark.parametrize("src, dst, saturate", [("int8", "uint16", True), ("int8", "uint16", None),
                                                ("int16", "uint32", True), ("int8", "uint32", True),
                                                ("uint8", "int16", True)])
def test_widening_cast_of_parts_saturates(src, dst, saturate):
    sv, dv = f"{src}x{256 // np.dtype(src).itemsize // 8}", f"{dst}x{256 // np.dtype(dst).itemsize // 8}"
    quarter = np.dtype(dst).itemsize // np.dtype(src).itemsize == 4
    parts = ("ll", "lh", "hl", "hh") if quarter else ("low", "high", "even", "odd")

    p0, p1, p2, p3 = parts

    @S.prim_func
    def k(a: S.ptr(sv, "global"), out: S.ptr(dv, "global")):
        out[0] = S.cast(a[0], dv, part=p0, saturate=saturate)
        out[1] = S.cast(a[0], dv, part=p1, saturate=saturate)
        out[2] = S.cast(a[0], dv, part=p2, saturate=saturate)
        out[3] = S.cast(a[0], dv, part=p3, saturate=saturate)

    n = 256 // 8 // np.dtype(src).itemsize
    a = rand(n, src, seed=30)
    wide = a.astype("int64")
    if saturate:
        info = np.iinfo(dst)
        wide = np.clip(wide, info.min, info.max)
    want = wide.astype(dst)
    m = n // 4 if quarter else n // 2     # lanes of one part: a native vector of dst
    pick = {"low": want[:m], "high": want[m:], "even": want[0::2], "odd": want[1::2],
            "ll": want[:m], "lh": want[m:2 * m], "hl": want[2 * m:3 * m], "hh": want[3 * m:]}
    for args in _both(k, a, np.zeros(len(parts) * m, dst)):
        np.testing.assert_array_equal(args[1], np.concatenate([pick[p] for p in parts]))


@pytest.mark.parametrize("n", [3, 27])
def test_cast_of_a_list_of_scalars_is_a_vector(n):
    values = list(range(n))

    @S.prim_func
    def k(x: S.ptr("int32", "global"), out: S.ptr("float32", "global")):
        S.vstore(S.cast(values, "float32"), out)
        v = S.cast([x[0], 7, x[1]], "int16")           # expressions and numbers mixed
        out[n] = S.cast(v[0] + v[1] + v[2], "float32")

    x = np.array([1000, -3], "int32")
    for args in _both(k, x, np.zeros(n + 1, "float32")):
        np.testing.assert_array_equal(args[1], np.array(values + [1004], "float32"))


@pytest.mark.parametrize("dtype", ["int8", "uint16", "int16", "uint32"])
def test_scalar_shift_count_is_read_modulo_32(dtype):
    @S.prim_func
    def k(a: S.ptr(dtype, "global"), b: S.ptr(dtype, "global"), out: S.ptr(dtype, "global")):
        for i in range(8):
            out[i] = a[i] << b[i]
            out[8 + i] = a[i] >> b[i]

    bits = np.dtype(dtype).itemsize * 8
    signed = np.dtype(dtype).kind == "i"
    counts = [3, bits - 1, bits, 31, 33, 0, 1, 2] if not signed else [3, -29, bits, -1, 33, 0, -31, 2]
    a = rand(8, dtype, seed=40)
    b = np.array(counts, "int64").astype(dtype)
    c = b.astype("int64") % 32
    x = a.astype("int64")
    info = np.iinfo(dtype)
    wrap = lambda v: ((v - info.min) % (1 << bits) + info.min).astype(dtype)
    left = np.where(c >= bits, 0, x << np.minimum(c, 62))
    right = np.where(c >= bits, np.where(x < 0, -1, 0), x >> np.minimum(c, bits - 1))
    for args in _both(k, a, b, np.zeros(16, dtype)):
        np.testing.assert_array_equal(args[2], np.concatenate([wrap(left), wrap(right)]))


@pytest.mark.parametrize("dtype", ["uint8", "float32"])
def test_scalar_number_as_condition(dtype):
    @S.prim_func
    def k(a: S.ptr(dtype, "global"), out: S.ptr("int32", "global")):
        for i in range(4):
            x = a[i]
            if x:
                out[i] = 1
            else:
                out[i] = 2
            n = 3
            count = 0
            while n:
                n -= 1
                count += 1
            out[4 + i] = count             # every TEC runs the kernel: no read-modify-write

    a = np.array([0, 1, 5, 0], dtype)
    for args in _both(k, a, np.zeros(8, "int32")):
        np.testing.assert_array_equal(args[1], [2, 1, 1, 2, 3, 3, 3, 3])


@S.prim_func
def _skip3(x: S.ptr("i32", "global")) -> S.ptr("i32x3", "global"):
    return (x + 3).as_ptr("i32x3")


def test_virtual_vector_pointer_passed_and_returned():
    @S.prim_func
    def k(a: S.ptr("i32", "global"), out: S.ptr("i32", "global")):
        v = _skip3(out)                  # points at out[3], as triples
        v[0] = a[0:3] + 1
        w = _skip3(v)                    # a pointer to i32x3 where a pointer to i32 is expected
        w[0] = a[3:6] * 2

    a = np.arange(1, 7, dtype="int32")
    for args in _both(k, a, np.zeros(12, "int32")):
        np.testing.assert_array_equal(args[1], [0, 0, 0, 2, 3, 4, 8, 10, 12, 0, 0, 0])


def test_pointer_to_another_type_passes_to_a_sub_function_as_its_bytes():
    # As Compass (whose sub-function calls check a pointer argument's scope only): an i16x3
    # pointer where _skip3 takes an i32 one; _skip3 sees the same address as int32 elements.
    @S.prim_func
    def k(a: S.ptr("i16x3", "global"), out: S.ptr("i32", "global")):
        w = _skip3(a)                    # 3 int32 past a's start: a's bytes 12 to 23
        out[0:3] = w[0]

    a = np.arange(1, 19, dtype="int16")
    for args in _both(k, a, np.zeros(3, "int32")):
        np.testing.assert_array_equal(args[1], a.view("int32")[3:6])


def test_addr_of_with_a_list_and_with_fewer_indices():
    @S.prim_func
    def k(A: S.ptr("int32", "global"), out: S.ptr("int32", "global")):
        a = S.match_buffer(A, shape=(4, 6))
        p = a.addr_of([1, 2])            # element 1 * 6 + 2
        q = a.addr_of(2)                 # row 2
        r = a.addr_of(3, 5)
        out[0] = p[0]
        out[1] = q[0]
        out[2] = r[0]
        out[3] = a.addr_of((0, 4))[1]

    a = np.arange(24, dtype="int32")
    for args in _both(k, a, np.zeros(4, "int32")):
        np.testing.assert_array_equal(args[1], [8, 12, 23, 5])


def test_pysim_out_of_bounds_is_an_index_error():
    @S.prim_func
    def k(a: S.ptr("fp32", "global"), c: S.ptr("fp32", "global")):
        c[8] = a[7]

    with pytest.raises(IndexError, match="out-of-bounds store to c"):
        k(np.zeros(8, "float32"), np.zeros(8, "float32"))


def test_is_nullptr_is_a_property_and_a_tested_pointer_may_be_null():
    @S.prim_func
    def k(p: S.ptr("int32", "global"), q: S.ptr("int32", "global"), out: S.ptr("int32", "global")):
        out[0:8] = 2
        if p.is_nullptr:                 # Compass's form: a property
            out[0] = 1
        else:
            q[0] = p[0]                  # q is accessed only where p is not null
        if q.is_nullptr():               # the call form reads the same
            out[1] = 1

    for p, q, want in ((None, 0, [1, 1]), (np.array([7], "int32"), np.zeros(1, "int32"), [2, 2])):
        for _, oq, out in _both(k, p, q, np.zeros(8, "int32")):
            np.testing.assert_array_equal(out[:3], want + [2])
            if p is not None:
                assert oq[0] == 7


def test_scalar_type_of_a_vector_converts_each_lane():
    @S.prim_func
    def k(a: S.ptr("int16x16", "global"), out: S.ptr("fp32", "global")):
        out[0:16] = S.fp32(S.i32(a[0])) * 0.5   # S.i32(v) is S.cast(v, "int32")

    a = rand(16, "int16", seed=11)
    for _, out in _both(k, a, np.zeros(16, "float32")):
        np.testing.assert_array_equal(out, a.astype("float32") * 0.5)


def test_returned_scalar_is_converted_to_the_return_type():
    @S.prim_func
    def total(x: S.i8, y: S.fp16 = 2.75) -> S.i32:
        return x + y                     # float16, converted as C converts it (truncated)

    @S.prim_func
    def k(out: S.ptr("i32", "global")):
        out[0] = total(10)
        out[1] = total(-10, 0.5)

    for (out,) in _both(k, np.zeros(2, "int32")):
        np.testing.assert_array_equal(out, [12, -9])


def test_stored_scalar_is_converted_to_the_element_type():
    @S.prim_func
    def k(h: S.ptr("fp16", "global"), i: S.ptr("int32", "global"), v: S.fp16):
        h[0] = S.rint(1.75)              # a float32 expression into float16 elements
        h[1] = h[2] * 2.0
        i[0] = v + 1                     # float16 into int32 elements: truncated, as in C
        i[1] = h[2] + i[2]

    h = np.array([0, 0, 1.25], "float16")
    i = np.array([0, 0, 5], "int32")
    for oh, oi, _ in _both(k, h, i, np.float16(-2.5)):
        np.testing.assert_array_equal(oh, np.array([2, 2.5, 1.25], "float16"))
        np.testing.assert_array_equal(oi, [-1, 6, 5])

    @S.prim_func
    def vec(a: S.ptr("int16x16", "global"), b: S.ptr("int8x32", "global")):
        b[0] = a[0]                      # vectors still need S.cast

    expect_diag(vec, "b[0] = a[0]", 'cannot store "int16x16" into "int8x32" elements')


# ---- sub-functions taking and returning virtual-width vectors ----------------------------------


@S.prim_func
def _fwv_store6(a: S.i32x6, out: S.ptr("int32", "global")):
    S.vstore(a * 3, out)


@S.prim_func
def _fwv_store20(a: S.i16x40, m: S.boolx40, out: S.ptr("int16", "global")):
    S.vstore(a, out, mask=m)


@S.prim_func
def _fwv_twice(a: S.ptr("fp32", "global"), n: S.i32) -> S.fp32x20:
    v = S.vload(a, lanes=20)
    if n > 0:
        return v + v
    return v


@S.prim_func
def _fwv_pair(x: S.fp32x20, y: S.fp32x20) -> S.fp32x40:
    return S.vconcat((x, y))


def test_sub_functions_take_and_return_virtual_width_vectors():
    @S.prim_func
    def k(a: S.ptr("int32", "global"), h: S.ptr("int16", "global"), f: S.ptr("fp32", "global"),
          out: S.ptr("int32", "global"), hout: S.ptr("int16", "global"), fout: S.ptr("fp32", "global")):
        _fwv_store6(S.vload(a, lanes=6), out)
        _fwv_store20(S.vload(h, lanes=40), S.const_mask("30T10F"), hout)
        # Results used inside expressions and as arguments of another sub-function.
        w = _fwv_pair(_fwv_twice(f, 1), _fwv_twice(f + 20, 0)) * 0.5
        S.vstore(w, fout)
        S.vstore(S.abs(_fwv_twice(f + 40, 1)) + _fwv_twice(f + 40, 0), fout + 40)

    a = rand(8, "int32", seed=3)
    h = rand(40, "int16", seed=4)
    f = rand(60, "float32", seed=5)
    expect_f = np.concatenate([f[:20], f[20:40] * 0.5, np.abs(2 * f[40:60]) + f[40:60]])
    for out, hout, fout in (r[3:] for r in _both(k, a, h, f, np.zeros(8, "int32"),
                                                  np.zeros(40, "int16"), np.zeros(60, "float32"))):
        np.testing.assert_array_equal(out[:6], a[:6] * 3)
        np.testing.assert_array_equal(out[6:], 0)
        np.testing.assert_array_equal(hout[:30], h[:30])
        np.testing.assert_array_equal(hout[30:], 0)
        np.testing.assert_allclose(fout, expect_f, rtol=1e-6)

    # The C form: parameters of native parts, results through a pointer to their parts.
    c_code = build(k).c_code
    assert "void k__fwv_store6(int8 a_0, __global int* out)" in c_code
    # boolx40: two 32-lane masks (regrouped into 16-lane parts where the int16 data uses them).
    assert "void k__fwv_store20(short16 a_0, short16 a_1, short16 a_2, bool32 m_0, bool32 m_1, " in c_code
    assert "void k__fwv_twice(__global float* a, int n, float8* ret)" in c_code
    assert "void k__fwv_pair(float8 x_0, float8 x_1, float8 x_2, float8 y_0, float8 y_1, " \
           "float8 y_2, float8* ret)" in c_code
    assert "float8 _fwv_twice_ret0[3];" in c_code and "k__fwv_twice(f, 1, _fwv_twice_ret0);" in c_code


def test_virtual_width_result_in_while_condition_is_refused():
    @S.prim_func
    def k(f: S.ptr("fp32", "global"), out: S.ptr("int32", "global")):
        i = 0
        while S.vall(_fwv_twice(f, i) > 0.0) and i < 3:
            i += 1
        out[0] = i

    expect_diag(k, "while S.vall", "cannot be part of a while loop's condition")


# ---- BuildManager.parse, transform.FoldConstant, range() steps bound to a name -------------------


@S.prim_func
def _scaled(x: S.i32) -> S.i32:
    return x * 3


def test_parse_then_fold_constant():
    @S.prim_func
    def k(buf: S.ptr("int32", "global")):
        lo = 1
        hi = 9
        step = 2
        for i in range(lo, hi, step):
            buf[i] = _scaled(i)

    from tessera.dsl import transform as dsl_transform

    mod = BuildManager().parse(k, "kern")
    assert [gv.name_hint for gv, _ in mod.functions.items()] == ["kern", "_scaled"]
    text = str(mod)
    assert "lo: T.int32 = 1" in text and "step: T.int32 = 2" in text  # nothing folded yet
    folded = str(dsl_transform.FoldConstant()(mod))
    assert "lo: T.int32" not in folded and "step: T.int32" not in folded
    assert "i: T.int32 = i_iter * 2 + 1" in folded
    assert BuildManager()._parse is not None  # Compass's tests call it by this name

    for out in _both(k, np.zeros(10, "int32")):
        np.testing.assert_array_equal(out[0], [0, 3, 0, 9, 0, 15, 0, 21, 0, 0])


# ---- pointers as 32-bit addresses; PySim's out-of-bounds error --------------------------------


def test_pointer_as_32_bit_address_and_back():
    @S.prim_func
    def k(a: S.ptr("int32", "global"), b: S.ptr("fp32", "global"), out: S.ptr("int32", "global")):
        if S.get_local_id() != 0:
            return
        addr_a = S.reinterpret(a, "uint32")
        addr_b = S.reinterpret(b + 2, "int32")
        p = S.reinterpret(addr_a + 5 * 4, "int32 *")          # a + 5, by byte arithmetic
        q = S.reinterpret(addr_b - 4, "global float32 *")       # b + 1
        r = S.reinterpret(addr_a + 8, "global int16 *")         # the low half of a[2]
        out[0] = p[0]
        out[1] = S.i32(q[0])
        out[2] = r[0]
        out[3] = S.reinterpret(p, "uint32") - addr_a            # 20 bytes apart

    a = np.array([10, 11, 0x00070003, 13, 14, 15, 16, 17], "int32")
    b = np.array([1.0, 2.0, 3.0, 4.0], "float32")
    for out in _both(k, a, b, np.zeros(4, "int32")):
        np.testing.assert_array_equal(out[2], [15, 2, 3, 20])


def test_integer_that_is_no_address():
    from tessera.dsl.pysim import PySimError
    from tessera.error import TesseraRuntimeError

    @S.prim_func
    def k(out: S.ptr("int32", "global")):
        p = S.reinterpret(S.u32(4096), "int32 *")
        p[0] = 1

    with pytest.raises(TesseraRuntimeError, match="no address"):
        build(k)(np.zeros(1, "int32"))
    with pytest.raises(PySimError, match="no pointer was turned into that address"):
        k(np.zeros(1, "int32"))

    @S.prim_func
    def ptr_to_ptr(a: S.ptr("int32", "global")):
        p = S.reinterpret(a, "int16 *")
        p[0] = 1

    expect_diag(ptr_to_ptr, "S.reinterpret(a", "a pointer becomes a pointer of another type with ptr.as_ptr")

    @S.prim_func
    def narrow(a: S.ptr("int16", "global")):
        p = S.reinterpret(a[0], "int16 *")
        p[0] = 1

    expect_diag(narrow, "S.reinterpret(a[0]", "an address is a 32-bit integer")


def test_pysim_out_of_bounds_is_index_and_assertion_error():
    from tessera.dsl.pysim import PySimIndexError

    @S.prim_func
    def k(c: S.ptr("float32", "global")):
        for i in range(9):
            c[0] = i
            c += 1

    with pytest.raises(PySimIndexError, match="out-of-bounds store") as info:
        k(np.zeros(8, "float32"))
    assert isinstance(info.value, IndexError) and isinstance(info.value, AssertionError)


def test_pointer_passed_for_a_scalar_parameter_is_refused():
    @S.prim_func
    def k(a: S.ptr("int32", "global")):
        x = S.fp16(1)
        _scaled(x.addr)

    expect_diag(k, "_scaled(x.addr)", "Argument type mismatch: 'x' of _scaled() expects a \"int32\" value, "
                                      "got a pointer to float16")


def test_dma_copy_of_consecutive_rows_between_buffers():
    # width == src_stride == dst_stride: PySim copies all rows at once (the same elements as
    # row by row); strided rows and a copy inside one buffer still go row by row.
    @S.prim_func
    def k(a: S.ptr("i16", "global"), out: S.ptr("i16", "global")):
        S.dma_memset(out, 7, 64)
        S.dma_copy(out, a, 5, src_stride=5, times=6, dst_stride=5)     # 30 consecutive elements
        S.dma_copy(out + 32, a, 3, src_stride=4, times=4, dst_stride=8)  # strided rows
        S.dma_copy(a + 40, a, 4, src_stride=4, times=2, dst_stride=4)    # one buffer

    a = rand(48, "int16", seed=3)
    expected_out = np.full(64, 7, "int16")
    expected_out[:30] = a[:30]
    for t in range(4):
        expected_out[32 + 8 * t:35 + 8 * t] = a[4 * t:4 * t + 3]
    expected_a = a.copy()
    expected_a[40:48] = a[:8]
    for run in (k, build(k)):
        a_run, out = a.copy(), np.zeros(64, "int16")
        run(a_run, out)
        np.testing.assert_array_equal(out, expected_out)
        np.testing.assert_array_equal(a_run, expected_a)
