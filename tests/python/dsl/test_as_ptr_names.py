"""`name = p.as_ptr(dtype)`, the name bound once: the C declares a pointer variable of that name
(as Compass's C does) and reads and writes through it; the argument checks still see how far
into the argument the kernel reaches through it."""

import numpy as np
import pytest

from tessera.dsl import BuildManager, script as S


@S.prim_func
def pick_vectors(a: S.ptr("int32", "global"), c: S.ptr("int32", "global")):
    first = a[0]
    out = (c + 7).as_ptr("i32x8")
    src = a.as_ptr("i32x8")
    out[0] = src[0] if first == 0 else 10


def _expected(a):
    c = np.zeros(15, "int32")
    c[7:15] = a[:8] if a[0] == 0 else 10
    return c


def test_pointer_views_bound_to_a_name_keep_the_name():
    code = BuildManager().build(pick_vectors).c_code
    assert "__global int8* out = (__global int8*)(c + 7);" in code, code
    assert "__global int8* src = (__global int8*)a;" in code, code
    assert "out[0] = ((first == 0) ? src[0] : (int8)10);" in code, code


@pytest.mark.parametrize("first", [0, 4])
def test_named_views_compute_as_numpy_compiled_and_in_pysim(first):
    a = np.arange(15, dtype="int32") + 3
    a[0] = first
    out = np.zeros(15, "int32")
    BuildManager().build(pick_vectors)(a, out)
    np.testing.assert_array_equal(out, _expected(a))
    sim = np.zeros(15, "int32")
    pick_vectors(a, sim)
    np.testing.assert_array_equal(sim, _expected(a))


@S.prim_func
def shifted(a: S.ptr("int32", "global"), c: S.ptr("int32", "global")):
    va = (a + 3).as_ptr("i32x8")
    vc = (c + 8).as_ptr("i32x8")
    vc[0] = va[0] + 1


def test_accesses_through_a_named_view_count_in_the_argument_checks():
    ex = BuildManager().build(shifted)
    a = np.arange(11, dtype="int32")
    out = np.zeros(16, "int32")
    ex(a, out)  # a[3:11] is the last element the view reads
    np.testing.assert_array_equal(out[8:], a[3:11] + 1)
    with pytest.raises(ValueError, match="argument 'a' of shifted\\(\\) has 10 elements but the "
                                         "kernel accesses 11"):
        ex(np.arange(10, dtype="int32"), out)
    with pytest.raises(ValueError, match="argument 'c' of shifted\\(\\) has 15 elements but the "
                                         "kernel accesses 16"):
        ex(a, np.zeros(15, "int32"))


@S.prim_func
def copy_three_vectors(a: S.ptr("int8", "global"), c: S.ptr("int8", "global")):
    va = a.as_ptr("int8x32")
    vc = (c + 50).as_ptr("int8x32")
    v = va[:3]
    (vc + 1)[:3] = v


def test_a_slice_of_a_named_vector_view_counts_lanes_once():
    # va[:3] reads 3 vectors of 32 lanes (96 elements), not 3 * 32 vectors.
    ex = BuildManager().build(copy_three_vectors)
    a = np.arange(200, dtype="int8")
    out = np.zeros(200, "int8")
    ex(a, out)
    np.testing.assert_array_equal(out[82:178], a[:96])
    np.testing.assert_array_equal(out[:82], 0)
    with pytest.raises(ValueError, match="argument 'a' of copy_three_vectors\\(\\) has 95 elements "
                                         "but the kernel accesses 96"):
        ex(np.arange(95, dtype="int8"), out)
    with pytest.raises(ValueError, match="argument 'c' of copy_three_vectors\\(\\) has 177 elements "
                                         "but the kernel accesses 178"):
        ex(a, np.zeros(177, "int8"))


@S.prim_func
def walk(a: S.ptr("int32", "global"), c: S.ptr("int32", "global")):
    src = a.as_ptr("i32x8")
    dst = c.as_ptr("i32x8")
    for i in range(2):
        dst[0] = src[0] * 2
        src = src + 1
        dst = dst + 1


def test_a_view_reassigned_later_stays_a_moving_view():
    code = BuildManager().build(walk).c_code
    assert "__global int8* src =" not in code, code
    a = np.arange(16, dtype="int32") - 5
    out = np.zeros(16, "int32")
    BuildManager().build(walk)(a, out)
    np.testing.assert_array_equal(out, a * 2)
    sim = np.zeros(16, "int32")
    walk(a, sim)
    np.testing.assert_array_equal(sim, a * 2)


@S.prim_func
def not_bound(a: S.ptr("int32", "global"), c: S.ptr("int32", "global")):
    S.vstore(S.vload(a.as_ptr("i32x8")) + 1, c.as_ptr("i32x8"))


def test_a_view_used_in_place_is_not_a_variable():
    code = BuildManager().build(not_bound).c_code
    assert "__global int8* ptr" not in code, code
    a = np.arange(8, dtype="int32")
    out = np.zeros(8, "int32")
    BuildManager().build(not_bound)(a, out)
    np.testing.assert_array_equal(out, a + 1)
