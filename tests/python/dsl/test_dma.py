"""DMA: dma_copy (1-D, strided, 2-D), async_dma_copy with events, dma_memset, dma_transpose2d and
dma_upsample, with the reference's argument order (destination first) and semantics."""

import numpy as np
import pytest

from tessera.dsl import script as S

from _util import ALL_TYPES, build, expect_diag, lanes, np_dtype, rand


@S.prim_func
def staged_scale(a: S.ptr("float32", "global"), out: S.ptr("float32", "global"), n: S.i32):
    tid = S.get_local_id()
    per_tec = n // 4
    tile = S.alloc_buffer(256, "float32", scope="lsram")
    base = tid * per_tec
    done = 0
    while done < per_tec:
        count = per_tec - done if per_tec - done < 256 else 256
        S.dma_copy(tile, a + base + done, count)               # DDR -> lsram
        for i in range(0, count, 8):
            tile[i:i + 8] = tile[i:i + 8] * 2.0 + 1.0
        S.dma_copy(out + base + done, tile, count)             # lsram -> DDR
        done += count


def test_staging_through_lsram():
    n = 4 * 600
    a = rand(n, "float32", seed=61)
    out = np.zeros(n, "float32")
    ex = build(staged_scale)
    ex(a, out, n)
    np.testing.assert_array_equal(out, a * np.float32(2.0) + np.float32(1.0))
    assert "DMA1D(" in ex.c_code and ", 1);" in ex.c_code and ", 0);" in ex.c_code


def test_async_copy_waited_on_through_events():
    @S.prim_func
    def k(a: S.ptr("int16", "global"), out: S.ptr("int16", "global")):
        tid = S.get_local_id()
        buf = S.alloc_buffer(64, "int16", scope="lsram")
        ev0, ev1 = S.alloc_events(2)
        S.async_dma_copy(buf, a + tid * 64, 32, event=ev0)
        S.async_dma_copy(buf.addr_of(32), a + tid * 64 + 32, 32, event=ev1)
        S.wait_events(ev0, ev1)
        for i in range(0, 64, 16):
            buf[i:i + 16] = buf[i:i + 16] - 7
        done = S.alloc_events(1)
        S.async_dma_copy(out + tid * 64, buf, 64, event=done)
        S.wait_events(done)
        S.free_events(ev0, ev1, done)

    a = rand(256, "int16", seed=62)
    out = np.zeros(256, "int16")
    build(k)(a, out)
    np.testing.assert_array_equal(out, (a.astype(int) - 7).astype("int16"))


@pytest.mark.parametrize("dtype", ALL_TYPES)
def test_copies_of_every_dtype(dtype):
    @S.prim_func
    def k(a: S.ptr(dtype, "global"), out: S.ptr(dtype, "global")):
        tid = S.get_local_id()
        sram = S.alloc_buffer(40, dtype, scope="lsram")
        S.dma_copy(sram, a + tid * 40, 40)
        S.dma_copy(out + tid * 40, sram, 10, src_stride=20, times=2, dst_stride=10)

    a = rand(160, dtype, seed=63)
    out = np.zeros(160, np_dtype(dtype))
    build(k)(a, out)
    want = np.zeros(160, np_dtype(dtype))
    for t in range(4):
        block = a[t * 40:(t + 1) * 40]
        want[t * 40:t * 40 + 20] = np.concatenate([block[0:10], block[20:30]])
    np.testing.assert_array_equal(out.astype("float64"), want.astype("float64"))


def test_strided_and_2d_copies():
    @S.prim_func
    def k(a: S.ptr("int32", "global"), out: S.ptr("int32", "global"), out2: S.ptr("int32", "global")):
        for t in S.tec_range(1):
            # Five "@" out of every eight, four times, stored contiguously.
            S.dma_copy(out, a, width=5, src_stride=8, times=4)
            tile = S.alloc_buffer(6 * 4, "int32", scope="shared")
            # A 4 x 3 block of a 8-wide matrix into a 6-wide tile, then back out contiguously.
            S.dma_copy(tile, a + 2, 3, src_stride=8, times=4, dst_stride=6)
            S.dma_copy(out2, tile, 3, src_stride=6, times=4)

    a = np.arange(64, dtype="int32")
    out, out2 = np.zeros(20, "int32"), np.zeros(12, "int32")
    build(k)(a, out, out2)
    np.testing.assert_array_equal(out, a[:32].reshape(4, 8)[:, :5].ravel())
    np.testing.assert_array_equal(out2, a[:32].reshape(4, 8)[:, 2:5].ravel())


@pytest.mark.parametrize("dtype", ALL_TYPES)
def test_dma_memset_every_dtype(dtype):
    value = 3 if dtype not in ("float16", "float32", "bfloat16") else 2.5

    @S.prim_func
    def k(out: S.ptr(dtype, "global"), v: S.ptr(getattr(S, dtype).name + f"x{lanes(dtype)}", "global")):
        for t in S.tec_range(1):
            S.dma_memset(out + 1, value, 10)
            S.dma_memset(v + 1, value, lanes(dtype) + 2)   # counts are scalar elements

    out = np.zeros(12, np_dtype(dtype))
    v = np.zeros(4 * lanes(dtype), np_dtype(dtype))
    build(k)(out, v)
    want = np.zeros(12, np_dtype(dtype))
    want[1:11] = value
    np.testing.assert_array_equal(out, want)
    n = lanes(dtype)
    np.testing.assert_array_equal(v[n:2 * n + 2], np.full(n + 2, value, np_dtype(dtype)))
    assert not v[:n].astype("float64").any() and not v[2 * n + 2:].astype("float64").any()


def test_dma_transpose2d():
    @S.prim_func
    def k(a: S.ptr("int16", "global"), out: S.ptr("int16", "global"), out2: S.ptr("int16", "global")):
        for t in S.tec_range(1):
            S.dma_transpose2d(out, a, 4, 6)                              # 4 x 6 -> 6 x 4
            S.dma_transpose2d(out2, a, 3, 2, dst_stride=5, src_stride=6)  # a 3 x 2 corner

    a = np.arange(24, dtype="int16")
    out, out2 = np.zeros(24, "int16"), np.full(10, -1, "int16")
    build(k)(a, out, out2)
    np.testing.assert_array_equal(out.reshape(6, 4), a.reshape(4, 6).T)
    want = np.full(10, -1, "int16").reshape(2, 5)
    want[:, :3] = a.reshape(4, 6)[:3, :2].T
    np.testing.assert_array_equal(out2, want.ravel())


def upsample_reference(src, h_scale, w_scale, c, w, src_c_stride, dst_c_stride, dst_w_stride, size):
    dst = np.full(size, -1, src.dtype)
    for wi in range(w):
        row = src[wi * src_c_stride:wi * src_c_stride + c]
        for hi in range(h_scale):
            for k in range(w_scale):
                at = hi * dst_w_stride * dst_c_stride + (wi * w_scale + k) * dst_c_stride
                dst[at:at + c] = row
    return dst


def test_dma_upsample():
    @S.prim_func
    def k(a: S.ptr("int8", "global"), out: S.ptr("int8", "global"), out2: S.ptr("int8", "global")):
        for t in S.tec_range(1):
            sram = S.alloc_buffer(8, "int8", scope="lsram")
            S.dma_copy(sram, a, 8)
            S.dma_upsample(dst=out, src=sram, h_scale=2, w_scale=3, c=3, w=2)
            S.dma_upsample(out2, sram, 2, 3, 3, 2, src_c_stride=4, dst_c_stride=5, dst_w_stride=7)

    a = np.array([0, 1, 2, 9, 3, 4, 5, 9], "int8")
    out, out2 = np.full(36, -1, "int8"), np.full(2 * 7 * 5, -1, "int8")
    build(k)(a, out, out2)
    # Rows of the source are 3 apart by default (the spec's case 0), 4 apart in case 1.
    np.testing.assert_array_equal(out, upsample_reference(a, 2, 3, 3, 2, 3, 3, 6, 36))
    np.testing.assert_array_equal(out2, upsample_reference(a, 2, 3, 3, 2, 4, 5, 7, 70))


def test_dma_errors():
    @S.prim_func
    def sram_to_sram(out: S.ptr("int32", "global")):
        x = S.alloc_buffer(8, "int32", scope="lsram")
        y = S.alloc_buffer(8, "int32", scope="shared")
        S.dma_copy(y, x, 8)

    expect_diag(sram_to_sram, "S.dma_copy(y, x, 8)",
                "a DMA copy cannot move data from lsram to shared")

    @S.prim_func
    def mismatch(a: S.ptr("int32", "global"), b: S.ptr("float32", "global")):
        S.dma_copy(a, b, 8)

    expect_diag(mismatch, "S.dma_copy(a, b, 8)",
                "dst points to int32, src to float32")

    @S.prim_func
    def upsample_ddr(a: S.ptr("int8", "global"), b: S.ptr("int8", "global")):
        S.dma_upsample(a, b, 2, 2, 1, 1)

    expect_diag(upsample_ddr, "S.dma_upsample(a, b, 2, 2, 1, 1)",
                "S.dma_upsample only copies between DDR (global) and SRAM (lsram, shared)")

    @S.prim_func
    def no_event(a: S.ptr("int8", "global"), b: S.ptr("int8", "global")):
        S.async_dma_copy(a, b, 8)

    expect_diag(no_event, "S.async_dma_copy(a, b, 8)", 'the arg "event" must be an event from S.alloc_events')


def test_alloc_events_count_is_bounded():
    @S.prim_func
    def too_many(a: S.ptr("int8", "global")):
        ev = S.alloc_events(10**12)

    expect_diag(too_many, "S.alloc_events(10**12)", 'the arg "count" must be at most 32')


@S.prim_func
def transpose_sized(out: S.ptr("int32", "global"), a: S.ptr("int32", "global"), row: S.i32,
                    col: S.i32):
    for t in S.tec_range(1):
        S.dma_transpose2d(out, a, row, col)


@S.prim_func
def copy_sized(out: S.ptr("int32", "global"), a: S.ptr("int32", "global"), width: S.i32,
               times: S.i32):
    for t in S.tec_range(1):
        S.dma_copy(out, a, width, times=times)
        S.dma_memset(out, 7, width)


def test_dma_with_huge_runtime_sizes_is_an_error_not_a_crash():
    # Found by trying: sizes given at run time and far past the arrays wrote past them (a
    # segmentation fault in a plain call, without check_bounds).
    from tessera.dsl import BuildManager
    from tessera.error import TesseraError

    ex = BuildManager().build(transpose_sized)
    a = np.arange(24, dtype="int32")
    out = np.zeros(24, "int32")
    ex(out, a, 4, 6)
    np.testing.assert_array_equal(out, a.reshape(4, 6).T.ravel())
    with pytest.raises(TesseraError, match=r"S.dma_transpose2d: the destination reaches elements "
                                           r"\[0, 9999999999\] .*outside its array \(24 elements"):
        ex(out, a, 100000, 100000)
    with pytest.raises(TesseraError, match=r"S.dma_transpose2d: the source"):
        ex(np.zeros(100, "int32"), a, 5, 6)  # reads a 5 x 6 source from 24 elements
    ex(out, a, 4, 6)  # the library is still usable
    np.testing.assert_array_equal(out, a.reshape(4, 6).T.ravel())

    cp = BuildManager().build(copy_sized)
    dst = np.zeros(8, "int32")
    cp(dst, np.arange(8, dtype="int32"), 8, 1)
    assert (dst == 7).all()
    with pytest.raises(TesseraError, match=r"S.dma_copy: the destination"):
        cp(dst, np.arange(1 << 20, dtype="int32"), 1 << 20, 1)
    with pytest.raises(TesseraError, match=r"S.dma_copy: the source"):
        cp(np.zeros(1 << 20, "int32"), np.arange(8, dtype="int32"), 1 << 20, 1)
