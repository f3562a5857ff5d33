"""The first DSL subset: scalar arithmetic, comparisons, assignment, loops, branches, calls."""

import numpy as np
import pytest

from tessera.dsl import BuildManager, script as S


def build(f):
    return BuildManager().build(f)


@S.prim_func
def inc(a: S.ptr("int32", "global"), b: S.ptr("int32", "global"), n: S.i32):
    for i in range(n):
        b[i] = a[i] + 1


def test_loop_matches_spec_code():
    ex = build(inc)
    assert "for (int i = 0; i < n; i += 1) {" in ex.c_code
    assert "b[i] = (a[i] + 1);" in ex.c_code
    a = np.arange(100, dtype="int32")
    b = np.zeros(100, "int32")
    ex(a, b, 100)
    np.testing.assert_array_equal(b, a + 1)
    b[:] = 0
    ex(a, b, 10)
    np.testing.assert_array_equal(b[:10], a[:10] + 1)
    assert not b[10:].any()


@S.prim_func
def scalar_ops(a: S.ptr("int32", "global"), out: S.ptr("int32", "global")):
    x = a[0]
    y = a[1]
    out[0] = x + y
    out[1] = x - y
    out[2] = x * y
    out[3] = x / y
    out[4] = x // y
    out[5] = x % y
    out[6] = -x
    out[7] = (x + 1) * (y - 2)


@pytest.mark.parametrize("x,y", [(7, 2), (-7, 2), (7, -2), (-7, -2), (100, 7), (0, 3)])
def test_integer_division_truncates_like_c(x, y):
    ex = build(scalar_ops)
    out = np.zeros(8, "int32")
    ex(np.array([x, y], "int32"), out)
    q = int(x / y)  # C truncation
    r = x - q * y   # sign of the dividend
    assert out.tolist() == [x + y, x - y, x * y, q, q, r, -x, (x + 1) * (y - 2)]


@S.prim_func
def float_ops(a: S.ptr("float32", "global"), out: S.ptr("float32", "global")):
    out[0] = a[0] * 2.5 + a[1]
    out[1] = a[0] / a[1]


def test_float_arithmetic():
    ex = build(float_ops)
    out = np.zeros(2, "float32")
    a = np.array([3.0, 4.0], "float32")
    ex(a, out)
    np.testing.assert_allclose(out, [3.0 * 2.5 + 4.0, 0.75], rtol=1e-6)


@S.prim_func
def compare_ops(a: S.ptr("int32", "global"), out: S.ptr("int32", "global")):
    x = a[0]
    y = a[1]
    out[0] = 1 if x < y else 0
    out[1] = 1 if x <= y else 0
    out[2] = 1 if x > y else 0
    out[3] = 1 if x >= y else 0
    out[4] = 1 if x == y else 0
    out[5] = 1 if x != y else 0
    out[6] = 1 if (x < y and y > 0) else 0
    out[7] = 1 if (x > y or not y > 0) else 0


@pytest.mark.parametrize("x,y", [(1, 2), (2, 1), (3, 3), (-1, -5)])
def test_comparisons(x, y):
    ex = build(compare_ops)
    out = np.zeros(8, "int32")
    ex(np.array([x, y], "int32"), out)
    expect = [x < y, x <= y, x > y, x >= y, x == y, x != y, x < y and y > 0, x > y or not y > 0]
    assert out.tolist() == [int(e) for e in expect]


@S.prim_func
def running_sum(a: S.ptr("int32", "global"), out: S.ptr("int32", "global"), n: S.i32):
    acc = 0
    for i in range(n):
        acc = acc + a[i]
    i = 0
    while i < 3:
        acc += 1
        i += 1
    out[0] = acc


def test_reassignment_and_while():
    ex = build(running_sum)
    a = np.arange(50, dtype="int32")
    out = np.zeros(1, "int32")
    ex(a, out, 50)
    assert out[0] == a.sum() + 3


@S.prim_func
def branches(a: S.ptr("int32", "global"), out: S.ptr("int32", "global"), n: S.i32):
    for i in range(n):
        if a[i] > 10:
            out[i] = 2
        elif a[i] > 5:
            out[i] = 1
        else:
            out[i] = 0


def test_if_elif_else():
    ex = build(branches)
    a = np.array([0, 6, 11, 5, 10, 100], "int32")
    out = np.full(6, -1, "int32")
    ex(a, out, 6)
    assert out.tolist() == [0, 1, 2, 0, 1, 2]


@S.prim_func
def scale(v: S.i32, k: S.i32 = 2) -> S.i32:
    return v * k


@S.prim_func
def kern(a: S.ptr("i32", "global"), out: S.ptr("i32", "global")):
    out[0] = scale(a[0]) + scale(a[1], k=3)


def test_subroutine_with_return_default_and_keyword():
    ex = build(kern)
    assert "int kern_scale(int v, int k);" in ex.c_code
    assert "out[0] = (kern_scale(a[0], 2) + kern_scale(a[1], 3));" in ex.c_code
    assert "return (v * k);" in ex.c_code
    a = np.array([5, 7], "int32")
    out = np.zeros(1, "int32")
    ex(a, out)
    assert out[0] == 5 * 2 + 7 * 3


@S.prim_func
def bump(a: S.ptr("i32", "global")):
    a[0] = a[0] + 1


def test_every_tec_runs_the_whole_body():
    # The kernel runs on all 4 TECs of the core, as on the NPU: an unpartitioned in-place
    # update is applied by each TEC (the race is the program's responsibility; here the
    # TEC threads serialise on nothing, so only the range of outcomes is fixed).
    a = np.zeros(1, "int32")
    build(bump)(a)
    assert 1 <= a[0] <= 4


@S.prim_func
def offset_sub(p: S.ptr("int32", "global"), q: S.ptr("int32", "global")):
    q[0] = p[0] * 10


@S.prim_func
def pointer_arith(a: S.ptr("int32", "global"), out: S.ptr("int32", "global")):
    offset_sub(a + 2, out + 1)
    b = out + 1
    b[2] = 99


def test_pointer_arithmetic_and_pointer_arguments():
    ex = build(pointer_arith)
    a = np.array([1, 2, 3, 4, 5], "int32")
    out = np.zeros(5, "int32")
    ex(a, out)
    assert out.tolist() == [0, 30, 0, 99, 0]


K = 3


def python_helper(x):
    return x * 2


@S.prim_func
def compile_time(a: S.ptr("int32", "global")):
    if K > 2:
        a[0] = python_helper(K) + 1
    else:
        a[0] = -1
    a[1] = S.i32(len([1, 2, 3, 4]))


def test_compile_time_python():
    ex = build(compile_time)
    assert "if" not in ex.c_code.split("{", 1)[1]  # the branch was decided while parsing
    a = np.zeros(2, "int32")
    ex(a)
    assert a.tolist() == [7, 4]


@S.prim_func
def vec_float(a: S.ptr("fp32", "global"), b: S.ptr("fp32", "global"), c: S.ptr("fp32", "global")):
    S.vstore(S.vadd(S.vload(a), S.vload(b)), c)


def test_float_vectors():
    ex = build(vec_float)
    a = np.linspace(0, 1, 8, dtype="float32")
    b = np.linspace(5, 2, 8, dtype="float32")
    c = np.zeros(8, "float32")
    ex(a, b, c)
    np.testing.assert_array_equal(c, a + b)


@S.prim_func
def vec_i16(a: S.ptr("int16", "global"), c: S.ptr("int16", "global")):
    S.vstore(S.vadd(S.vload(a), S.i16(-3)), c)


def test_int16_vectors_have_16_lanes():
    ex = build(vec_i16)
    assert "short16" in ex.c_code
    a = np.arange(16, dtype="int16")
    c = np.zeros(16, "int16")
    ex(a, c)
    np.testing.assert_array_equal(c, a - 3)


@S.prim_func
def vec_offsets(a: S.ptr("int32", "global"), b: S.ptr("int32", "global"), c: S.ptr("int32", "global"), n: S.i32):
    for i in range(n):
        S.vstore(S.vadd(S.vload(a + i * 8), S.vload(b + i * 8)), c + i * 8)


def test_vector_loop_with_pointer_offsets():
    ex = build(vec_offsets)
    a = np.arange(64, dtype="int32")
    b = np.full(64, 10, "int32")
    c = np.zeros(64, "int32")
    ex(a, b, c, 8)
    np.testing.assert_array_equal(c, a + 10)


# ---- Language features of the full DSL ---------------------------------------------------------


@S.prim_func
def steps(out: S.ptr("int32", "global"), n: S.i32):
    for t in S.tec_range(1):
        k = 0
        for i in range(1, n, 3):
            out[k] = i
            k += 1
        for i in range(n, 0, -4):
            out[k] = i
            k += 1
        out[k] = -1


def test_range_with_steps():
    out = np.zeros(16, "int32")
    build(steps)(out, 10)
    want = list(range(1, 10, 3)) + list(range(10, 0, -4)) + [-1]
    assert out[:len(want)].tolist() == want


@S.prim_func
def swap_and_while(a: S.ptr("int32", "global"), out: S.ptr("int32", "global")):
    x, y = a[0], a[1]
    x, y = y, x                       # the right side is evaluated first
    out[0] = x
    out[1] = y
    p, (q, r) = 1, (2, 3)
    out[2] = p * 100 + q * 10 + r
    i = 0
    total = 0
    while i < 10 and total < 20:
        total += i
        i += 1
    out[3] = total
    out[4] = i


def test_tuple_assignment_and_while():
    out = np.zeros(5, "int32")
    build(swap_and_while)(np.array([7, 9], "int32"), out)
    assert out.tolist() == [9, 7, 123, 21, 7]


@S.prim_func(is_inline=True)
def clamp(v: S.i32, lo: S.i32 = 0, hi: S.i32 = 100) -> S.i32:
    if v < lo:
        return lo
    return hi if v > hi else v


@S.prim_func(is_inline=False)
def twice(v: S.int32x8) -> S.int32x8:
    return v + v


@S.prim_func
def positive(v: S.int32x8) -> S.boolx8:
    return v > 0


@S.prim_func(is_entry=True)
def subroutines(a: S.ptr("int32", "global"), out: S.ptr("int32", "global")):
    out[0] = clamp(a[0])
    out[1] = clamp(a[1], hi=5)
    out[2] = clamp(a[2], -10, hi=10)
    v = S.vload(a)
    S.vstore(twice(v), out + 8, mask=positive(v))


def test_subroutines_with_defaults_keywords_and_vector_returns():
    a = np.array([-5, 50, -20, 3, 0, -1, 8, 2], "int32")
    out = np.zeros(16, "int32")
    ex = build(subroutines)
    ex(a, out)
    assert out[:3].tolist() == [0, 5, -10]
    np.testing.assert_array_equal(out[8:], np.where(a > 0, 2 * a, 0))
    code = ex.c_code
    assert "__kernel void subroutines(" in code
    assert "inline int subroutines_clamp(int v, int lo, int hi) {" in code
    assert "__attribute__((noinline)) int8 subroutines_twice(int8 v) {" in code
    assert "bool8 subroutines_positive(int8 v);" in code


SCALE = 3
TABLE = np.array([1, 1, 2, 3, 5, 8, 13, 21], "int32")


def axpy(x, y):
    """A plain Python helper: runs at compile time on symbolic kernel values."""
    return x * SCALE + y


def masked_sum(v, w, n):
    return S.vsel(v + w, v, S.tail_mask(n, 8))


@S.prim_func
def compile_time_helpers(a: S.ptr("int32", "global"), out: S.ptr("int32", "global"), n: S.i32):
    out[0] = axpy(a[0], a[1])
    S.vstore(axpy(S.vload(a), 1), out + 8)
    S.vstore(masked_sum(S.vload(a), S.int32x8(100), n), out + 16)
    out[1] = TABLE[5] + len(TABLE)     # Python values fold
    if SCALE > 2:
        out[2] = 1
    else:
        out[2] = 2


def test_compile_time_evaluation_of_python_helpers():
    a = np.arange(8, dtype="int32")
    out = np.zeros(24, "int32")
    ex = build(compile_time_helpers)
    ex(a, out, 3)
    assert out[:3].tolist() == [0 * 3 + 1, 8 + 8, 1]
    np.testing.assert_array_equal(out[8:16], a * 3 + 1)
    np.testing.assert_array_equal(out[16:24], np.where(np.arange(8) < 3, a + 100, a))


def branching_helper(x):
    if x > 0:
        return x
    return -x


def test_python_helper_cannot_branch_on_kernel_values():
    from _util import expect_diag

    @S.prim_func
    def k(a: S.ptr("int32", "global")):
        a[0] = branching_helper(a[1])

    expect_diag(k, "a[0] = branching_helper(a[1])", "a kernel value has no truth value at compile time")


def test_c_like_scoping_in_loops():
    from _util import expect_diag

    @S.prim_func
    def k(a: S.ptr("int32", "global"), n: S.i32):
        for i in range(n):
            last = a[i]
        a[0] = last

    expect_diag(k, "a[0] = last", "name 'last' is not defined")


def test_duplicate_names_on_one_left_side():
    from _util import expect_diag

    @S.prim_func
    def k(a: S.ptr("int32", "global")):
        b, b = 1, 2
        a[0] = b

    expect_diag(k, "b, b = 1, 2", "the name 'b' is assigned twice in one assignment")


def test_vector_type_changing_reassignment():
    from _util import expect_diag

    @S.prim_func
    def k(a: S.ptr("int32", "global"), f: S.ptr("float32", "global"), n: S.i32):
        v = S.vload(a)
        if n > 0:
            v = S.vload(f)
        S.vstore(v, a)

    expect_diag(k, "v = S.vload(f)", 'Type mismatch assignment: "int32x8" vs. "float32x8"')


def test_function_named_like_a_c_keyword_or_library_function():
    from tessera.error import BuildError

    @S.prim_func
    def double(v: S.i32) -> S.i32:
        return v * 2

    @S.prim_func
    def log2(v: S.i32) -> S.i32:          # <math.h> has a log2 too
        r = 0
        while v > 1:
            v = v >> 1
            r = r + 1
        return r

    @S.prim_func
    def k(a: S.ptr("int32", "global")):
        a[0] = double(a[1]) + log2(a[2])

    # A sub-function's C name is prefixed by the kernel's, as Compass names them.
    ex = build(k)
    assert "int k_double(int v)" in ex.c_code and "k_log2(a[2])" in ex.c_code
    for run in (ex, k):
        a = np.array([0, 5, 64], "int32")
        run(a)
        assert a[0] == 16

    # The kernel itself keeps its name, which must be a usable C name.
    @S.prim_func
    def double(a: S.ptr("int32", "global")):  # noqa: F811
        a[0] = a[0] * 2

    with pytest.raises(BuildError, match="function name 'double' cannot be used on the DSL target"):
        build(double)


@S.prim_func
def _declared_with_value(a: S.ptr("int32", "global"), v: S.ptr("int32x8", "global")):
    counter = S.int32(3)
    lanes = S.int32x8(0)
    if a[0] > 1:
        counter = a[0]
        lanes = v[0]
    acc = counter + 1
    acc = acc * 2  # reads itself: stays an assignment
    a[1] = acc
    v[1] = lanes


def test_mutable_local_is_declared_with_its_first_value():
    code = build(_declared_with_value).c_code
    assert "int counter = 3;" in code and "int8 lanes = (int8)0;" in code, code
    assert "counter = a[0];" in code and "lanes = v[0];" in code, code
    a = np.array([5, 0], "int32")
    v = np.arange(16, dtype="int32")
    build(_declared_with_value)(a, v)
    _declared_with_value(b := np.array([0, 0], "int32"), w := np.arange(16, dtype="int32"))
    assert a[1] == 12 and (v[8:] == np.arange(8)).all()
    assert b[1] == 8 and (w[8:] == 0).all()
