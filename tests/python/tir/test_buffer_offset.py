"""Buffer.offset_of (element offsets per physical axis, div/mod pairs merged) and
Buffer.get_flattened_buffer (one dimension per physical axis)."""

import numpy as np
import pytest

from tessera import te, tir
from tessera.error import TesseraError, TesseraValueError
from tessera.ir import assert_structural_equal


def test_offset_of_constant_buffers_against_numpy():
    rng = np.random.default_rng(1)
    shape = (3, 5, 7)
    row_major = tir.decl_buffer(shape, "float32", elem_offset=11)
    strided = tir.decl_buffer(shape, "float32", strides=[50, 9, 1])
    for _ in range(10):
        index = [int(rng.integers(0, n)) for n in shape]
        (offset,) = row_major.offset_of(index)
        assert int(offset) == np.ravel_multi_index(index, shape) + 11
        (offset,) = strided.offset_of(index)
        assert int(offset) == index[0] * 50 + index[1] * 9 + index[2]


def test_offset_of_symbolic_shape_is_simplified():
    m, n = te.size_var("m"), te.size_var("n")
    buf = tir.decl_buffer((m, n), "float32", elem_offset=100)
    assert_structural_equal(buf.offset_of([2, 3]), [n * 2 + 103])


def test_offset_of_merges_division_and_remainder_pairs():
    m, n, s, k0, k1 = (te.size_var(name) for name in ("m", "n", "s", "k0", "k1"))
    strided = tir.decl_buffer((m, n), "float32", strides=(s, 1))
    x = tir.floormod(k0, k1)
    # x // s * s + x % s is x, and then x + k0 // k1 * k1 is k0, for symbolic divisors.
    merged = strided.offset_of((tir.floordiv(x, s), tir.floormod(x, s) + tir.floordiv(k0, k1) * k1))
    assert_structural_equal(merged, strided.offset_of((0, k0)))
    # With constant divisors, remainders that differ by a multiple of the divisor pair too.
    i, j, k = te.size_var("i"), te.size_var("j"), te.size_var("k")
    flat = tir.decl_buffer((1, 14, 14, 1024))
    q = tir.floordiv(k, 1024)
    split = flat.offset_of((tir.floordiv(tir.floordiv(i * 49 + j * 28 + q, 14), 14),
                            tir.floormod(tir.floordiv(i * 49 + j * 28 + q, 14), 14),
                            tir.floormod(i * 7 + q, 14), tir.floormod(k, 1024)))
    assert_structural_equal(split, flat.offset_of((0, 0, 0, i * 50176 + j * 28672 + k)))


def test_offset_of_with_axis_separators_gives_one_offset_per_axis():
    buf = tir.decl_buffer((4, 16, 32), "int8", axis_separators=[2])
    first, second = buf.offset_of([1, 2, 3])
    assert (int(first), int(second)) == (1 * 16 + 2, 3)


def test_flattened_buffer():
    m, n = te.size_var("m"), te.size_var("n")
    buf = tir.decl_buffer((m, n, 4), "float32")
    flat = buf.get_flattened_buffer()
    assert flat.data.same_as(buf.data)
    assert_structural_equal(flat.shape, [m * n * 4])
    one_d = tir.decl_buffer((16,), "float32")
    assert one_d.get_flattened_buffer().same_as(one_d)
    parted = tir.decl_buffer((4, 16, 32), axis_separators=[2]).get_flattened_buffer()
    assert [int(e) for e in parted.shape] == [64, 32]
    assert [int(e) for e in parted.axis_separators] == [1]
    strided = tir.decl_buffer((4, 8), strides=[10, 1]).get_flattened_buffer()
    assert [int(e) for e in strided.shape] == [40] and len(strided.strides) == 0


def test_buffer_offset_errors():
    buf = tir.decl_buffer((4, 8), "float32")
    with pytest.raises(TesseraError, match="has 2 dimensions; offset_of got 1 indices"):
        buf.offset_of([1])
    with pytest.raises(TesseraValueError, match=r"outside \[0, 1\]"):
        tir.decl_buffer([1], axis_separators=[1, 2])
    with pytest.raises(TesseraValueError, match="must not decrease"):
        tir.decl_buffer([4, 4, 4], axis_separators=[2, 1])


def test_merged_div_mod_pair_keeps_the_order_of_the_terms():
    # (x // n) * n + x % n + y over a symbolic n merges back to x where the quotient's term stood:
    # x + y, the form the direct offset has, not y + x.
    m, n, s = te.size_var("m"), te.size_var("n"), te.size_var("s")
    k0, k1 = te.size_var("k0"), te.size_var("k1")
    buf = tir.decl_buffer((m, n), "float32")
    x = tir.floormod(k0, tir.floordiv(k1, s))
    y = tir.floormod(k0, k1)
    merged = buf.offset_of([tir.floordiv(x, n), tir.floormod(x, n) + y])
    assert_structural_equal(merged, buf.offset_of([0, x + y]))
    assert_structural_equal(merged, [x + y])
