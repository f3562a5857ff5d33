"""Corners of Compass DSL 4.2 semantics that its own tests check: S.vdpa saturating once, ...
Each kernel runs compiled and in PySim, both checked against numpy."""

import numpy as np
import pytest

from tessera.dsl import script as S

from _util import expect_diag, mask_bits, run_both


def _vdpa_reference(acc, a, b, mask):
    prod = np.where(mask, a.astype(np.int64) * b.astype(np.int64), 0)
    total = acc.astype(np.int64) + prod.reshape(-1, 2).sum(axis=1)
    info = np.iinfo(acc.dtype)
    return np.clip(total, info.min, info.max).astype(acc.dtype)


@pytest.mark.parametrize("xt, yt, at", [("uint8", "int8", "int16"), ("int8", "int8", "int16"),
                                        ("int16", "uint16", "int32"), ("uint16", "uint16", "uint32")])
def test_vdpa_saturates_the_total_once(xt, yt, at):
    # A pair sum past acc's range is brought back by acc: 255*-128*2 + 100 saturates to -32768
    # once (saturating the pair sum first, then the total, gives -32668).
    lanes = 64 if xt.endswith("8") else 32  # two native parts on a 256-bit host: split by parts

    @S.prim_func
    def k(a: S.ptr(xt, "global"), b: S.ptr(yt, "global"), acc: S.ptr(at, "global"),
          out: S.ptr(at, "global")):
        va = S.vload(a, lanes=lanes)
        vb = S.vload(b, lanes=lanes)
        S.vstore(S.vdpa(S.vload(acc, lanes=lanes // 2), va, vb, "14T1F"), out)

    xi, yi, ai = np.iinfo(xt), np.iinfo(yt), np.iinfo(at)
    rng = np.random.default_rng(5)
    a = rng.integers(xi.min, xi.max, lanes, endpoint=True).astype(xt)
    b = rng.integers(yi.min, yi.max, lanes, endpoint=True).astype(yt)
    a[:8] = xi.max if xi.min == 0 else xi.min
    b[:8] = yi.min if yi.min < 0 else yi.max
    acc = rng.integers(max(ai.min, -30000), min(ai.max, 30000), lanes // 2, endpoint=True).astype(at)
    acc[:4] = [100, 0, ai.min, ai.max]
    if ai.min == 0:
        acc[0] = ai.max
    mask = mask_bits("14T1F", lanes)
    want = _vdpa_reference(acc, a, b, mask)
    for args in run_both(k, a, b, acc, np.zeros(lanes // 2, at)):
        np.testing.assert_array_equal(args[3], want)


def test_vdpa_accumulator_of_another_width_is_a_type_mismatch():
    @S.prim_func
    def k(a: S.ptr("int32x8", "global"), c: S.ptr("int8x32", "global")):
        c[0] = S.vdpa(c[0], a[0], a[0])

    expect_diag(k, "S.vdpa(", 'Argument type mismatch: the accumulator "int8x32"')


def test_vqdpa_float_accumulator_of_float32_operands_is_a_type_mismatch():
    @S.prim_func
    def k(a: S.ptr("float32x8", "global"), c: S.ptr("float16x16", "global")):
        c[0] = S.vqdpa(c[0], a[0], a[0])

    expect_diag(k, "S.vqdpa(", 'Argument type mismatch: the accumulator "float16x16"')


def _bf16(values):
    from _util import np_dtype
    return np.asarray(values, np.float32).astype(np_dtype("bfloat16"))


def test_vqdot_bf16_compiled_models_the_npu_adder_pysim_sums_exactly():
    # Group 0: 1.5*2**40 - 1.5*2**40 + 3 + 1.25. The NPU aligns the products to the largest
    # exponent (2**40) and keeps 24 bits there (units of 2**17): 3 and 1.25 are cut to 0, so the
    # compiled kernel gives 0.0; PySim, as Compass's, sums exactly: 4.25. Group 1: -2**30 + 2**7
    # + 1: units of 2**7, 1 is cut: -2**30 + 128 (PySim -2**30 + 129, rounded to float32: -2**30
    # + 128 as well). Group 2: small exact values, both 1*2 + 3*4 - 5*6 + 0.5*0.5 = -15.75.
    # Group 3 (lanes 12-15) inactive but its products are huge: 0 in both.
    a = _bf16([2**20, -2**20, 1.5, 1.25, -2**15, 2**7, 1, 0, 1, 3, -5, 0.5, 2**60, 2**60, 1, 1])
    b = _bf16([1.5 * 2**20, 1.5 * 2**20, 2, 1, 2**15, 1, 1, 7, 2, 4, 6, 0.5, 2**60, 2**60, 1, 1])

    @S.prim_func
    def k(x: S.ptr("bfloat16x16", "global"), y: S.ptr("bfloat16x16", "global"), out: S.ptr("fp32x8", "global")):
        out[0] = S.vqdot(x[0], y[0], "12T4F")

    compiled, pysim = run_both(k, a, b, np.full(8, 7.0, np.float32))
    np.testing.assert_array_equal(compiled[2], [0.0, 0, -2.0**30 + 128, 0, -15.75, 0, 0, 0])
    np.testing.assert_array_equal(pysim[2], [4.25, 0, np.float32(-2.0**30 + 129), 0, -15.75, 0, 0, 0])


@S.prim_func
def _strided_copy(a: S.ptr("int16", "global"), out: S.ptr("int16", "global"), rows: S.i32, cols: S.i32,
                  row_step: S.i32, col_step: S.i32):
    # Element (i, j) of a strided view: a[i * row_step + j * col_step] from its first element.
    for i in range(rows):
        for j in range(cols):
            out[i * cols + j] = a[i * row_step + j * col_step]


def test_non_contiguous_view_passes_a_pointer_to_its_first_element():
    from tessera.dsl import BuildManager

    ex = BuildManager().build(_strided_copy)
    base = np.arange(6 * 8, dtype="int16").reshape(6, 8) * 3 - 40
    for view in (base[::-1, :], base[1:5, ::3], base[::-2, 1::2], base.T):
        out = np.zeros(view.size, "int16")
        steps = [s // view.itemsize for s in view.strides]
        ex(view, out, *view.shape, *steps)
        np.testing.assert_array_equal(out, view.reshape(-1))
    np.testing.assert_array_equal(base, np.arange(6 * 8, dtype="int16").reshape(6, 8) * 3 - 40)


def test_non_contiguous_output_view_is_written_in_place():
    @S.prim_func
    def k(out: S.ptr("float32", "global"), n: S.i32, step: S.i32):
        for i in range(n):
            out[i * step] = S.fp32(i) + 0.5

    from tessera.dsl import BuildManager

    base = np.full((4, 6), -1.0, "float32")
    BuildManager().build(k)(base[:, 1::2], 12, 2)  # the odd columns, row after row
    want = np.full((4, 6), -1.0, "float32")
    want[:, 1::2] = (np.arange(12, dtype="float32") + 0.5).reshape(4, 3)
    np.testing.assert_array_equal(base, want)


def test_strided_array_that_is_not_one_block_is_refused():
    from tessera.dsl import BuildManager
    from tessera.error import TesseraValueError

    ex = BuildManager().build(_strided_copy)
    odd = np.lib.stride_tricks.as_strided(np.zeros(16, "int16"), shape=(4, 2), strides=(8, 2))
    with pytest.raises(TesseraValueError, match="argument 'a' of _strided_copy\\(\\) is a view of an array that is not one block"):
        ex(odd, np.zeros(8, "int16"), 4, 2, 4, 1)


def test_strided_view_in_the_checked_mode_is_refused():
    from tessera.dsl import BuildManager
    from tessera.error import TesseraValueError

    ex = BuildManager(check_bounds=True).build(_strided_copy)
    base = np.zeros((4, 4), "int16")
    with pytest.raises(TesseraValueError, match="argument 'a' of _strided_copy\\(\\) is a strided view; the checked mode"):
        ex(base[::-1], np.zeros(16, "int16"), 4, 4, -4, 1)


def _lsram_kernels(entry_bytes):
    """Two subroutines with 24 KB of lsram each, called one after the other from an entry that
    holds ``entry_bytes`` of its own."""

    @S.prim_func
    def scale(a: S.ptr("int32", "global"), n: S.i32, k: S.i32):
        tile = S.alloc(6 * 1024, "int32", scope="lsram")  # 24 KB
        S.dma_copy(tile, a, n)
        for i in range(n):
            tile[i] = tile[i] * k
        S.dma_copy(a, tile, n)

    @S.prim_func
    def shift(a: S.ptr("int32", "global"), n: S.i32, k: S.i32):
        tile = S.alloc(6 * 1024, "int32", scope="lsram")  # 24 KB
        S.dma_copy(tile, a, n)
        for i in range(n):
            tile[i] = tile[i] + k
        S.dma_copy(a, tile, n)

    @S.prim_func(is_entry=True)
    def entry(a: S.ptr("int32", "global"), n: S.i32):
        own = S.alloc(entry_bytes // 4, "int32", scope="lsram")
        own[0] = 7
        if S.get_local_id() == 0:
            scale(a, n, own[0])
            shift(a, n, 3)

    return entry


def test_lsram_of_functions_that_do_not_call_each_other_is_reused():
    # 24 KB + 24 KB in two subroutines: they run in turn, at most 4 + 24 KB are in use at once
    # (the X2 TEC has 32 KB), as Compass accepts.
    a = np.arange(100, dtype="int32") - 50
    for args in run_both(_lsram_kernels(4 * 1024), a, 100):
        np.testing.assert_array_equal(args[0], a * 7 + 3)


def test_lsram_of_a_callee_counts_with_its_callers():
    from tessera.dsl import BuildManager
    from tessera.error import DiagnosticError

    with pytest.raises(DiagnosticError) as info:
        BuildManager(target="X2_1204").build(_lsram_kernels(12 * 1024))
    err = info.value
    assert ('lsram allocation "tile" (24576 bytes) exceeds the local SRAM of X2_1204: 36864 of '
            '32768 bytes per TEC would be in use (12288 of them allocated by the functions that '
            'call this one)') in err.message
    assert 'tile = S.alloc(6 * 1024, "int32", scope="lsram")' in str(err) and "^" in str(err)


def test_operators_promote_as_compass_intrinsics_refuse():
    # uint8x32 + 300 -> int32x32 (300 is not a uint8), uint8x32 + 2.5 -> float32x32,
    # float16x16 + 0.25 -> float32x16 (a float literal is float32), float16x16 + int32 -> float16,
    # int8x32 + int16 variable -> int16x32; results stored through slices of pointers to vectors.
    @S.prim_func
    def k(a: S.ptr("u8x32", "global"), h: S.ptr("fp16x16", "global"), n: S.i16, i: S.ptr("i32x8", "global"),
          f: S.ptr("fp32x8", "global"), g: S.ptr("fp16x16", "global"), w: S.ptr("i16x16", "global")):
        i[0:4] = a[0] + 300
        i[4:8] = 300 - a[0]
        f[0:4] = a[0] * 2.5
        f[4:6] = h[0] + 0.25
        g[0] = h[0] + S.i32(3)
        w[0:2] = S.cast(a[0], "i8") + n

    a = np.arange(32, dtype="uint8") * 8
    h = (np.arange(16, dtype="float16") - 8) / np.float16(3)
    outs = [np.zeros(64, "int32"), np.zeros(48, "float32"), np.zeros(16, "float16"), np.zeros(32, "int16")]
    for args in run_both(k, a, h, -1000, *outs):
        i, f, g, w = args[3:]
        np.testing.assert_array_equal(i, np.concatenate([a.astype(np.int32) + 300, 300 - a.astype(np.int32)]))
        np.testing.assert_array_equal(f[:32], a * np.float32(2.5))
        np.testing.assert_array_equal(f[32:], h.astype(np.float32) + np.float32(0.25))
        np.testing.assert_array_equal(g, h + np.float16(3))
        np.testing.assert_array_equal(w, a.view("int8").astype(np.int16) - 1000)


def test_intrinsics_keep_refusing_literals_out_of_range():
    @S.prim_func
    def k(a: S.ptr("int8x32", "global")):
        a[0] = S.vadd(a[0], 300)

    expect_diag(k, "S.vadd(", "the literal 300 fits none of the types it could take here (int8x32, uint8x32)")


def test_slice_of_pointer_to_vectors_loads_and_stores_whole_vectors():
    @S.prim_func
    def k(a: S.ptr("i32x8", "global"), out: S.ptr("i32x8", "global"), j: S.i32):
        v = a[1:3]                      # int32x16: vectors 1 and 2
        out[0:2] = v + 1
        out[j + 2:j + 4] = a[j:j + 2]   # a run-time start
        q = out + 1                     # the slice counts from q's vector
        q[4:5] = a[:1]

    a = np.arange(32, dtype="int32") * 3
    for args in run_both(k, a, np.zeros(48, "int32"), 1):
        out = args[1]
        np.testing.assert_array_equal(out[0:16], a[8:24] + 1)
        np.testing.assert_array_equal(out[16:24], 0)
        np.testing.assert_array_equal(out[24:40], a[8:24])
        np.testing.assert_array_equal(out[40:48], a[0:8])


def test_slice_of_pointer_to_vectors_with_a_step_is_refused():
    @S.prim_func
    def k(a: S.ptr("i32x8", "global")):
        a[0:4:2] = a[4:8:2]

    expect_diag(k, "a[0:4:2] = a[4:8:2]", "takes whole vectors: no step")


def test_reassigned_pointer_to_virtual_vectors_at_an_unaligned_offset():
    # (out + 3) is not a whole number of int32x32 from out: the variable holds the int32 address.
    @S.prim_func
    def k(a: S.ptr("i32x8", "global"), out: S.ptr("i32x8", "global")):
        cur = (out + 3).as_ptr("i32x32")
        cur[0] = a.as_ptr("i32x32")[0] * 2
        cur += 1
        cur.as_ptr("i32x8")[0] = a[0] - 1

    a = np.arange(32, dtype="int32") - 7
    for args in run_both(k, a, np.zeros(8 * 8, "int32")):
        out = args[1]
        np.testing.assert_array_equal(out[24:56], a * 2)
        np.testing.assert_array_equal(out[56:64], a[:8] - 1)


def test_intrinsic_with_a_scalar_variable_that_does_not_fit_is_refused():
    @S.prim_func
    def k(a: S.ptr("int8x32", "global"), n: S.i16):
        a[0] = S.vadd(a[0], n)

    expect_diag(k, "S.vadd(", "a scalar of type int16 cannot be broadcast into (int8x32, uint8x32)")
