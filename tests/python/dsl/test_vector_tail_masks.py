"""A te function whose loop is split by the vector width and vectorized, built by BuildManager
for a DSL target: the DSL's C has a loop of full vectors and a tail of masked loads and stores
(tir.LoopPartition, tir.VectorizeLoop's tail masks, dsl.LowerActiveLaneMask), with Compass's
mask spelling per element width; results against numpy."""

import numpy as np
import pytest

from tessera import te
from tessera.dsl import BuildManager, schedule, script as S


def _add3(n, dtype, lanes):
    """B[i] = A[i] + 3, its loop split by `lanes` and the inner part vectorized."""
    A = te.placeholder((n,), name="A", dtype=dtype)
    B = te.compute((n,), lambda i: A[i] + 3, name="B")
    sch = schedule.Schedule(te.create_prim_func([A, B]).with_attr("global_symbol", "add"))
    (i,) = sch.get_loops("B")
    _, vi = sch.split(i, factors=[None, lanes])
    sch.vectorize(vi)
    return BuildManager().build(sch.mod)


def _check_add3(ex, n, dtype):
    info = np.iinfo(dtype) if dtype.startswith("int") else None
    a = np.arange(n).astype(dtype) if info is None else \
        ((np.arange(n) * 7) % (int(info.max) - 3)).astype(dtype)
    b = np.full(n, 99, dtype)
    ex(a, b)
    np.testing.assert_array_equal(b, (a + np.array(3, dtype)).astype(dtype))


def test_tail_of_a_split_by_8_is_one_masked_vector_as_compass_writes_it():
    ex = _add3(35, "float32", 8)
    code = ex.c_code
    assert "__kernel void add(" in code
    # Four full vectors in a loop, every lane on ...
    assert "__vstore((__vload((__global float8*)(A + cse_var_1), ALL_TRUE_w) + " \
           "(float8)0x1.8p+1f/*3.000000e+00*/), (__global float8*)(B + cse_var_1), ALL_TRUE_w);" \
        in code
    # ... then the three lanes left, one bit per lane's lowest byte (lanes 0, 1, 2 of 8).
    assert "__vstore((__vload((__global float8*)(A + 32), __vmov_w(0x00000111)) + " \
           "(float8)0x1.8p+1f/*3.000000e+00*/), (__global float8*)(B + 32), __vmov_w(0x00000111));" \
        in code
    assert "if (" not in code.split("/* Packed")[0]
    _check_add3(ex, 35, "float32")


@pytest.mark.parametrize("n", [35, 40, 8, 5, 1, 17, 63])
def test_results_for_any_length(n):
    ex = _add3(n, "float32", 8)
    kernel = ex.c_code.split("/* Packed")[0]
    assert "__kernel void add(" in kernel
    tail = n % 8
    masks = {1: "0x00000001", 3: "0x00000111", 5: "0x00011111", 7: "0x01111111"}
    if tail == 0:
        assert "__vmov_w(" not in kernel  # no tail: full vectors only
    elif tail in masks:
        assert f"__vmov_w({masks[tail]})" in kernel
    _check_add3(ex, n, "float32")
    # The elements past the end are neither read nor written (the masked lanes).
    a = np.ones(n + 8, "float32")[:n]
    b_store = np.full(n + 8, -5, "float32")
    b = b_store[:n]
    ex(a, b)
    np.testing.assert_array_equal(b_store[n:], -5)
    np.testing.assert_array_equal(b, 4)


@pytest.mark.parametrize("n, mask", [(5, "__vmov_w(0x00011111)"), (1, "__vmov_w(0x00000001)"),
                                     (8, "ALL_TRUE_w")])
def test_at_most_one_vector_is_no_loop(n, mask):
    # n <= 8: the split's outer loop has one iteration; Compass's build drops such a loop (with the
    # blocks), so the kernel is the one vector, masked where n < 8, and no loop around it.
    ex = _add3(n, "float32", 8)
    kernel = ex.c_code.split("/* Packed")[0].split("__kernel void add(")[2]
    assert "for (" not in kernel and "i_0" not in kernel
    assert kernel.count("__vstore(") == 1
    assert f"__vstore((__vload((__global float8*)A, {mask}) + (float8)0x1.8p+1f/*3.000000e+00*/)" \
           f", (__global float8*)B, {mask});" in kernel
    _check_add3(ex, n, "float32")


def test_a_loop_of_one_full_vector_before_the_tail_is_no_loop():
    # n = 9: one full vector, then the tail of one lane, neither in a loop.
    ex = _add3(9, "float32", 8)
    kernel = ex.c_code.split("/* Packed")[0].split("__kernel void add(")[2]
    assert "for (" not in kernel
    assert "(__global float8*)B, ALL_TRUE_w);" in kernel
    assert "(__global float8*)(B + 8), __vmov_w(0x00000001));" in kernel
    _check_add3(ex, 9, "float32")


@pytest.mark.parametrize("dtype, lanes, n, mask", [
    # one bit a lane for 8-bit elements, every other bit for 16-bit ones, every fourth for 32-bit
    ("int8", 32, 70, "__vmov_b(0x0000003F)"),
    ("uint8", 32, 33, "__vmov_b(0x00000001)"),
    ("int16", 16, 37, "__vmov_h(0x00000155)"),
    ("uint16", 16, 30, "__vmov_h(0x05555555)"),
    ("int32", 8, 14, "__vmov_w(0x00111111)"),
])
def test_tail_mask_spelled_per_element_width(dtype, lanes, n, mask):
    ex = _add3(n, dtype, lanes)
    kernel = ex.c_code.split("/* Packed")[0]
    assert mask in kernel
    assert kernel.count("__vstore(") == 2 and kernel.count("__vload(") == 2
    _check_add3(ex, n, dtype)


def test_split_narrower_than_the_vector_is_correct():
    # int8 split by 8: vectors of 8 lanes, padded to the 32 of a native int8 vector with their
    # upper lanes off; the tail's mask and the padding's are one constant, as Compass pads it.
    ex = _add3(21, "int8", 8)
    kernel = ex.c_code.split("/* Packed")[0]
    assert "(__global char32*)(B + cse_var_1), __vmov_b(0x000000FF));" in kernel
    assert "(__global char32*)(B + 16), __vmov_b(0x0000001F));" in kernel
    assert "__vand(" not in kernel
    _check_add3(ex, 21, "int8")


def test_split_wider_than_the_vector_is_native_vectors_and_masked_parts():
    # float32 split by 16: two native vectors a step; the tail's 3 lanes are on in its first
    # part, none in its second.
    ex = _add3(35, "float32", 16)
    kernel = ex.c_code.split("/* Packed")[0]
    assert "(__global float8*)(B + 32), __vmov_w(0x00000111));" in kernel
    assert "(__global float8*)(B + 40), __vmov_w(0x00000000));" in kernel
    _check_add3(ex, 35, "float32")


def test_tail_with_a_value_read_by_every_lane_is_correct():
    # C[0] is no access of the tail's lanes: the tail is left a loop over its lanes.
    n = 13
    A = te.placeholder((n,), name="A", dtype="int32")
    C = te.placeholder((1,), name="C", dtype="int32")
    B = te.compute((n,), lambda i: A[i] * C[0], name="B")
    sch = schedule.Schedule(te.create_prim_func([A, C, B]).with_attr("global_symbol", "scale"))
    (i,) = sch.get_loops("B")
    _, vi = sch.split(i, factors=[None, 8])
    sch.vectorize(vi)
    ex = BuildManager().build(sch.mod)
    assert "if (i_1_s < 5) {" in ex.c_code
    a = np.arange(n, dtype="int32") - 4
    b = np.zeros(n, "int32")
    ex(a, np.array([-3], "int32"), b)
    np.testing.assert_array_equal(b, a * -3)


@S.prim_func
def _tail(a: S.ptr("int32", "global"), b: S.ptr("int32", "global"), n: S.i32):
    for i in S.vectorized(8):
        if i < n:
            b[i + 8] = a[i + 8] + 1


def test_vectorized_loop_under_a_lane_condition_is_a_tail_mask():
    # An @S.prim_func's vectorized `if i < n` body: one load and one store masked by the
    # lanes below n (at run time), as Compass folds such a condition into its vector loop.
    ex = BuildManager().build(_tail)
    assert "__vstore((__vload((__global int8*)(a + 8), __vtail_mask(n, 8)) + (int8)1), " \
           "(__global int8*)(b + 8), __vtail_mask(n, 8));" in ex.c_code
    a = np.arange(16, dtype="int32")
    for n in (-1, 0, 3, 8, 9):
        want = np.full(16, -1, "int32")
        m = min(max(n, 0), 8)
        want[8:8 + m] = a[8:8 + m] + 1
        for run in (ex, _tail):  # compiled and PySim
            b = np.full(16, -1, "int32")
            run(a, b, n)
            np.testing.assert_array_equal(b, want)
