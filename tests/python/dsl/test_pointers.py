"""Pointers and buffers: scalar, vector and void element types, arithmetic in elements, slices,
as_ptr, match_buffer, alloc_buffer/addr_of, alloc, alloc_const, null pointers, comparisons."""

import ml_dtypes
import numpy as np
import pytest

from tessera.dsl import script as S

from _util import ALL_TYPES, build, expect_diag, lanes, np_dtype, rand


@pytest.mark.parametrize("dtype", ALL_TYPES)
def test_vector_pointers_move_by_whole_vectors(dtype):
    vt = f"{dtype}x{lanes(dtype)}"
    n = lanes(dtype)

    @S.prim_func
    def k(a: S.ptr(vt, "global"), out: S.ptr(vt, "global"), s: S.ptr(dtype, "global")):
        v = a[1]                       # the second vector: elements n..2n-1
        out[0] = v
        q = out + 1                    # one vector further
        q[0] = (a + 2)[0]
        S.vstore(S.vload(a + 1), out + 2)
        s[0] = a[2][3]
        p = a.as_ptr(dtype)            # the same memory, element by element
        s[1] = p[n + 1]

    a = rand(3 * n, dtype, seed=41, low=0, high=100)
    out = np.zeros(3 * n, np_dtype(dtype))
    s = np.zeros(2, np_dtype(dtype))
    build(k)(a, out, s)
    np.testing.assert_array_equal(out[:n], a[n:2 * n])
    np.testing.assert_array_equal(out[n:2 * n], a[2 * n:])
    np.testing.assert_array_equal(out[2 * n:], a[n:2 * n])
    assert s[0] == a[2 * n + 3] and s[1] == a[n + 1]


def test_slices_load_and_store_vectors():
    @S.prim_func
    def k(a: S.ptr("int16", "global"), out: S.ptr("int16", "global"), i: S.i32):
        out[0:16] = a[16:32]
        out[16:32] = a[0:32:2]            # every other element
        out[32:48] = a[i:i + 16] + 1      # a runtime start
        v = a[1:9]                        # a flexible-width int16x8
        out[48:56] = v
        out[56:72:2] = a[0:8]             # a strided store
        out[57:73:2] = S.int16x8(-1)

    a = np.arange(100, dtype="int16")
    out = np.zeros(80, "int16")
    build(k)(a, out, 5)
    np.testing.assert_array_equal(out[0:16], a[16:32])
    np.testing.assert_array_equal(out[16:32], a[0:32:2])
    np.testing.assert_array_equal(out[32:48], a[5:21] + 1)
    np.testing.assert_array_equal(out[48:56], a[1:9])
    np.testing.assert_array_equal(out[56:72:2], a[0:8])
    np.testing.assert_array_equal(out[57:73:2], np.full(8, -1))
    assert not out[73:].any()


def test_void_pointers_and_as_ptr():
    @S.prim_func
    def fill(p: S.ptr("void", "global"), n: S.i32):
        q = p.as_ptr("float32")
        for i in range(n):
            q[i] = S.fp32(i) * 0.5

    @S.prim_func
    def k(raw: S.ptr("void", "global"), a: S.ptr("int32", "global"), out: S.ptr("int32", "global"),
          i: S.i32):
        fill(raw, 4)
        b = a.as_ptr("int8")
        out[0] = S.i32(b[4])                 # byte 4 of a
        c = (a + 2).as_ptr("int16")          # a static offset converts (2 ints = 4 shorts)
        out[1] = S.i32(c[1])
        d = (a + i).as_ptr("int8x32")        # a runtime offset: a new pointer variable
        S.vstore(S.reinterpret(d[0], "int32x8"), out + 8)
        e = (a + 1).as_ptr("int8") + 2       # byte 6 of a
        out[2] = S.i32(e[0])

    raw = np.zeros(4, "float32")
    a = np.arange(0x01020304, 0x01020304 + 16, dtype="int32")
    out = np.zeros(16, "int32")
    build(k)(raw, a, out, 3)
    np.testing.assert_array_equal(raw, [0, 0.5, 1, 1.5])
    assert out[0] == a.view("int8")[4]
    assert out[1] == a.view("int16")[5]
    np.testing.assert_array_equal(out[8:], a[3:11])
    assert out[2] == a.view("int8")[6]


def test_pointer_variables_comparisons_and_null():
    @S.prim_func
    def first(p: S.ptr("int32", "global"), q: S.ptr("int32", "global")) -> S.ptr("int32", "global"):
        if p.is_nullptr():
            return q
        return p + 1

    @S.prim_func
    def k(a: S.ptr("int32", "global"), b: S.ptr("int32", "global"), out: S.ptr("int32", "global"),
          n: S.i32):
        p = a
        end = a + n
        total = 0
        while p < end:                     # a pointer variable moving through a buffer
            total += p[0]
            p = p + 2
        out[0] = total
        out[1] = 1 if b.is_nullptr() else 0
        out[2] = 1 if a == a + 0 else 0
        out[3] = 1 if (a + 3) > (a + 1) else 0
        r = first(None, a)
        out[4] = r[5]
        s = first(a, b)
        out[5] = s[0]

    a = np.arange(10, 30, dtype="int32")
    out = np.zeros(6, "int32")
    build(k)(a, None, out, 10)
    assert out.tolist() == [sum(a[0:10:2]), 1, 1, 1, a[5], a[1]]


def test_match_buffer_alloc_buffer_and_alloc():
    @S.prim_func
    def k(A: S.ptr("int32", "global"), B: S.ptr("int32", "global"), h: S.i32, w: S.i32):
        a = S.match_buffer(A, (h, w))
        b = S.match_buffer(B, (w, h))
        for t in S.tec_range(1):
            for i in range(h):
                for j in range(w):
                    b[j, i] = a[i, j]
        tile = S.alloc_buffer((2, 8), "int32")
        for i in range(2):
            tile[i, 0:8] = S.int32x8(i + 1)
        p = tile.addr_of((1, 2))
        scratch = S.alloc(16, "int32")
        scratch[0] = p[0] + tile[0, 7]
        B[h * w + S.get_local_id()] = scratch[0]

    h, w = 3, 5
    A = np.arange(h * w, dtype="int32")
    B = np.zeros(h * w + 4, "int32")
    build(k)(A, B, h, w)
    np.testing.assert_array_equal(B[:h * w].reshape(w, h), A.reshape(h, w).T)
    np.testing.assert_array_equal(B[h * w:], [3, 3, 3, 3])


@pytest.mark.parametrize("dtype", ALL_TYPES)
def test_alloc_const_tables(dtype):
    table = rand(48, dtype, seed=43, low=-50 if dtype.startswith(("int", "float", "bf")) else 0,
                 high=50)
    data = table.astype("float32") if dtype == "bfloat16" else table

    @S.prim_func
    def k(idx: S.ptr("int32", "global"), out: S.ptr(dtype, "global")):
        lut = S.alloc_const((48,), dtype, data)
        for i in range(8):
            out[i] = lut[idx[i]]
        S.vstore(S.vload(lut + 8), out + 8)

    idx = np.array([0, 5, 23, 7, 1, 1, 12, 3], "int32")
    out = np.zeros(8 + lanes(dtype), np_dtype(dtype))
    ex = build(k)
    ex(idx, out)
    assert "__constant" in ex.c_code
    np.testing.assert_array_equal(out[:8], table[idx])
    np.testing.assert_array_equal(out[8:], table[8:8 + lanes(dtype)])


def test_executor_null_pointer_and_bfloat16_arrays():
    @S.prim_func
    def k(a: S.ptr("bf16", "global"), out: S.ptr("bf16", "global"), flag: S.ptr("int32", "global")):
        if flag.is_nullptr():
            out[0] = a[0]
        else:
            out[0] = a[1]

    a = np.array([1.5, 2.5], ml_dtypes.bfloat16)
    out = np.zeros(1, ml_dtypes.bfloat16)
    ex = build(k)
    ex(a, out, None)
    assert out[0] == a[0]
    ex(a, out, np.zeros(1, "int32"))
    assert out[0] == a[1]
    ex(a, out, 0)
    assert out[0] == a[0]


def test_pointer_errors():
    @S.prim_func
    def void_index(p: S.ptr("void", "global")):
        p[0] = 1

    expect_diag(void_index, "p[0] = 1", 'cannot access a "void" pointer')

    @S.prim_func
    def dynamic_slice(a: S.ptr("int32", "global"), n: S.i32):
        S.vstore(a[0:n], a)

    expect_diag(dynamic_slice, "S.vstore(a[0:n], a)", "the length of a slice must be known at compile time")

    @S.prim_func
    def wrong_pointee(a: S.ptr("int32", "global"), f: S.ptr("float32", "global")):
        S.vstore(S.vload(a), f)

    expect_diag(wrong_pointee, "S.vstore(S.vload(a), f)",
                'Argument type mismatch: cannot store "int32x8" through a pointer to "float32"')

    @S.prim_func
    def moved(a: S.ptr("int32", "global"), b: S.ptr("int8", "global"), n: S.i32):
        p = a
        for i in range(n):
            p = b
        p[0] = 1

    expect_diag(moved, "p = b", "the pointer variable 'p' must keep pointing to int32 in global memory")
