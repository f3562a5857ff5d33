"""Operators on scalars and vectors: C-style truncating / and // on integers, % with the
dividend's sign, wrapping arithmetic, shifts, bitwise ops, comparisons giving masks, and/or/not,
the ternary and lane get/set, for every dtype, against numpy."""

import ml_dtypes
import numpy as np
import pytest

from tessera.dsl import BuildManager, hw_native_vdtype, script as S

from _util import ALL_TYPES, INT_TYPES, build, expect_diag, lanes, np_dtype, rand

INT_OPS = ["add", "sub", "mul", "div", "floordiv", "mod", "and", "or", "xor", "shl", "shr",
           "neg", "inv", "lt", "le", "gt", "ge", "eq", "ne", "sel"]
FLOAT_OPS = ["add", "sub", "mul", "div", "floordiv", "mod", "neg", "lt", "le", "gt", "ge", "eq",
             "ne", "sel"]


def wrap(values, dtype):
    return np.asarray(values).astype("int64").astype(dtype)


def c_div(a, b):
    q = np.abs(a) // np.abs(b)
    return np.where((a < 0) != (b < 0), -q, q)


def int_reference(op, a, b, dtype, vector):
    """The DSL's result of ``a op b`` on ``dtype`` (b holds shift counts for shifts)."""
    info = np.iinfo(dtype)
    x, y = a.astype("int64"), b.astype("int64")
    bits = info.bits
    if op in ("div", "floordiv", "mod"):
        safe = np.where(y == 0, 1, y)
        q = c_div(x, safe)
        if op == "mod":
            r = x - q * safe
            return wrap(np.where((y == 0) | ((y == -1) & (info.min < 0)), 0, r), dtype)
        q = np.where(y == 0, 0, q)
        return wrap(np.minimum(q, info.max), dtype)
    if op in ("shl", "shr"):
        count = y.astype(dtype).astype("int64") & ((1 << bits) - 1) if vector else y
        if op == "shl":
            return wrap(np.where(count >= bits, 0, x << np.minimum(count, 63)), dtype)
        shifted = x >> np.minimum(count, bits - 1)
        return wrap(np.where(count >= bits, np.where(x < 0, -1, 0), shifted), dtype)
    table = {"add": x + y, "sub": x - y, "mul": x * y, "and": x & y, "or": x | y, "xor": x ^ y,
             "neg": -x, "inv": ~x}
    if op in table:
        return wrap(table[op], dtype)
    return compare_reference(op, a, b, dtype)


def compare_reference(op, a, b, dtype):
    cmp = {"lt": a < b, "le": a <= b, "gt": a > b, "ge": a >= b, "eq": a == b, "ne": a != b}
    if op == "sel":
        return np.where(a > b, a, b).astype(np_dtype(dtype))
    return cmp[op].astype(np_dtype(dtype))


def float_reference(op, a, b, dtype):
    dt = np_dtype(dtype)
    x, y = a.astype(dt), b.astype(dt)
    with np.errstate(all="ignore"):
        table = {"add": x + y, "sub": x - y, "mul": x * y, "div": x / y,
                 "floordiv": np.floor(x / y).astype(dt), "mod": np.fmod(x, y).astype(dt), "neg": -x}
    if op in table:
        return table[op]
    return compare_reference(op, a, b, dtype)


def operator_kernel(dtype, ops):
    """One kernel computing every operator, scalar and vector, into slots of ``out``."""
    n = lanes(dtype)
    T = getattr(S, dtype)
    V = getattr(S, hw_native_vdtype(dtype))
    is_int = dtype in INT_TYPES
    bits = np_dtype(dtype).itemsize * 8
    # Operators do not compute on bfloat16 scalars (as in Compass; test_compass_refusals.py).
    scalars = dtype != "bfloat16"

    def compute(op, x, y):
        # A compile-time helper: x and y are symbolic kernel values.
        table = {"add": lambda: x + y, "sub": lambda: x - y, "mul": lambda: x * y,
                 "div": lambda: x / y, "floordiv": lambda: x // y, "mod": lambda: x % y,
                 "and": lambda: x & y, "or": lambda: x | y, "xor": lambda: x ^ y,
                 "shl": lambda: x << y, "shr": lambda: x >> y, "neg": lambda: -x,
                 "inv": lambda: ~x, "lt": lambda: x < y, "le": lambda: x <= y,
                 "gt": lambda: x > y, "ge": lambda: x >= y, "eq": lambda: x == y,
                 "ne": lambda: x != y}
        return table[op]()

    @S.macro
    def put(out, k, r, vector):
        if vector:
            S.vstore(r, out + k * n)
        else:
            out[k * n] = r

    @S.macro
    def slot(out, k, op, x, y, vector):
        if op == "sel":
            r = x if x > y else y
            put(out, k, r, vector)
        elif op in ("lt", "le", "gt", "ge", "eq", "ne"):
            m = compute(op, x, y)
            if vector:
                put(out, k, S.vsel(V(1), V(0), m), vector)
            else:
                put(out, k, T(1) if m else T(0), vector)
        else:
            put(out, k, compute(op, x, y), vector)

    @S.prim_func
    def k(a: S.ptr(dtype, "global"), b: S.ptr(dtype, "global"), sa: S.ptr(dtype, "global"),
          sb: S.ptr(dtype, "global"), vout: S.ptr(dtype, "global"), sout: S.ptr(dtype, "global")):
        va = S.vload(a)
        vb = S.vload(b)
        if "add" in ops:
            slot(vout, ops.index("add"), "add", va, vb, True)
        if "sub" in ops:
            slot(vout, ops.index("sub"), "sub", va, vb, True)
        if "mul" in ops and (not is_int or n < 32):
            slot(vout, ops.index("mul"), "mul", va, vb, True)
        if "div" in ops:
            slot(vout, ops.index("div"), "div", va, vb, True)
        if "floordiv" in ops:
            slot(vout, ops.index("floordiv"), "floordiv", va, vb, True)
        if "mod" in ops:
            slot(vout, ops.index("mod"), "mod", va, vb, True)
        if "and" in ops:
            slot(vout, ops.index("and"), "and", va, vb, True)
        if "or" in ops:
            slot(vout, ops.index("or"), "or", va, vb, True)
        if "xor" in ops:
            slot(vout, ops.index("xor"), "xor", va, vb, True)
        if "shl" in ops:
            slot(vout, ops.index("shl"), "shl", va, vb, True)
        if "shr" in ops:
            slot(vout, ops.index("shr"), "shr", va, vb, True)
        slot(vout, ops.index("neg"), "neg", va, vb, True)
        if "inv" in ops:
            slot(vout, ops.index("inv"), "inv", va, vb, True)
        slot(vout, ops.index("lt"), "lt", va, vb, True)
        slot(vout, ops.index("le"), "le", va, vb, True)
        slot(vout, ops.index("gt"), "gt", va, vb, True)
        slot(vout, ops.index("ge"), "ge", va, vb, True)
        slot(vout, ops.index("eq"), "eq", va, vb, True)
        slot(vout, ops.index("ne"), "ne", va, vb, True)
        slot(vout, ops.index("sel"), "sel", va, vb, True)
        if scalars:  # a compile-time bool: the branch not taken is not parsed
            for i in range(n):
                x = sa[i]
                y = sb[i]
                o = sout + i
                if "add" in ops:
                    slot(o, ops.index("add"), "add", x, y, False)
                if "sub" in ops:
                    slot(o, ops.index("sub"), "sub", x, y, False)
                if "mul" in ops:
                    slot(o, ops.index("mul"), "mul", x, y, False)
                if "div" in ops:
                    slot(o, ops.index("div"), "div", x, y, False)
                if "floordiv" in ops:
                    slot(o, ops.index("floordiv"), "floordiv", x, y, False)
                if "mod" in ops:
                    slot(o, ops.index("mod"), "mod", x, y, False)
                if "and" in ops:
                    slot(o, ops.index("and"), "and", x, y, False)
                if "or" in ops:
                    slot(o, ops.index("or"), "or", x, y, False)
                if "xor" in ops:
                    slot(o, ops.index("xor"), "xor", x, y, False)
                if "shl" in ops:
                    slot(o, ops.index("shl"), "shl", x, y & (bits - 1), False)
                if "shr" in ops:
                    slot(o, ops.index("shr"), "shr", x, y & (bits - 1), False)
                slot(o, ops.index("neg"), "neg", x, y, False)
                if "inv" in ops:
                    slot(o, ops.index("inv"), "inv", x, y, False)
                slot(o, ops.index("lt"), "lt", x, y, False)
                slot(o, ops.index("le"), "le", x, y, False)
                slot(o, ops.index("gt"), "gt", x, y, False)
                slot(o, ops.index("ge"), "ge", x, y, False)
                slot(o, ops.index("eq"), "eq", x, y, False)
                slot(o, ops.index("ne"), "ne", x, y, False)
                slot(o, ops.index("sel"), "sel", x, y, False)

    return k


def operands(dtype):
    n = lanes(dtype)
    if dtype in INT_TYPES:
        a = rand(n, dtype, seed=21)
        b = rand(n, dtype, seed=22)
        b[n // 2] = a[n // 2]  # equal lanes for == and <=
        b[1] = 0               # vector division by zero gives 0
        if np.iinfo(dtype).min < 0:
            a[2], b[2] = np.iinfo(dtype).min, -1  # MIN / -1 saturates
        # Scalar divisors are non-zero and MIN / -1 is avoided; shift counts stay in range.
        sb = np.where(b == 0, 3, b).astype(dtype)
        sb[2] = 7
        return a, b, a.copy(), sb
    a = rand(n, dtype, seed=21, low=-50, high=50)
    b = rand(n, dtype, seed=22, low=-50, high=50)
    b[n // 2] = a[n // 2]
    b = np.where(b == 0, np_dtype(dtype).type(2.5), b).astype(np_dtype(dtype))
    return a, b, a.copy(), b.copy()


@pytest.mark.parametrize("dtype", ALL_TYPES)
def test_operators_scalar_and_vector(dtype):
    is_int = dtype in INT_TYPES
    ops = INT_OPS if is_int else FLOAT_OPS
    n = lanes(dtype)
    a, b, sa, sb = operands(dtype)
    bits = np_dtype(dtype).itemsize * 8
    vout = np.zeros(len(ops) * n, np_dtype(dtype))
    sout = np.zeros(len(ops) * n, np_dtype(dtype))
    shift_b = None
    if is_int:
        # Vector shift counts: in range, >= the width, and negative (read as unsigned).
        shift_b = b.copy()
    ex = build(operator_kernel(dtype, ops))
    ex(a, b, sa, sb, vout, sout)
    for k, op in enumerate(ops):
        got_v = vout[k * n:(k + 1) * n]
        got_s = sout[k * n:(k + 1) * n]
        if is_int:
            if op == "mul" and n == 32:
                pass  # no 8-bit vector multiply
            else:
                want_v = int_reference(op, a, shift_b if op in ("shl", "shr") else b, dtype, True)
                np.testing.assert_array_equal(got_v, want_v, err_msg=f"vector {op} on {dtype}")
            sb_op = sb.astype("int64") & (bits - 1) if op in ("shl", "shr") else sb
            want_s = int_reference(op, sa, np.asarray(sb_op), dtype, False)
            np.testing.assert_array_equal(got_s, want_s, err_msg=f"scalar {op} on {dtype}")
        else:
            want = float_reference(op, a, b, dtype)
            np.testing.assert_array_equal(got_v.astype("float64"), want.astype("float64"),
                                          err_msg=f"vector {op} on {dtype}")
            if dtype != "bfloat16":
                np.testing.assert_array_equal(got_s.astype("float64"), want.astype("float64"),
                                              err_msg=f"scalar {op} on {dtype}")


def test_division_follows_c_not_python():
    @S.prim_func
    def k(a: S.ptr("int32", "global"), out: S.ptr("int32", "global")):
        out[0] = a[0] // a[1]
        out[1] = a[0] % a[1]
        out[2] = a[0] / a[1]
        out[3] = -7 // 2      # Python values fold with Python's rules at compile time
        out[4] = -7 % 3

    out = np.zeros(5, "int32")
    build(k)(np.array([-7, 2], "int32"), out)
    assert out.tolist() == [-3, -1, -3, -4, 2]


def test_logic_ternary_and_lanes():
    @S.prim_func
    def k(a: S.ptr("int32", "global"), out: S.ptr("int32", "global"), n: S.i32):
        va = S.vload(a)
        m = va > 3
        x = a[0]
        out[0] = 1 if (x > 0 and x < 10) else 0
        out[1] = 1 if (x < 0 or not x > 5) else 0
        out[2] = 1 if (m[4] and not m[0]) else 0
        v = S.int32x8(0)
        v[3] = 30
        v[n] = 77               # a runtime lane index
        S.vstore(v, out + 3)
        out[11] = va[n]
        mm = S.boolx8(False)
        mm[2] = True
        S.vstore(S.vsel(va, S.int32x8(-1), mm), out + 12)
        S.vstore(va if x > 100 else S.int32x8(5), out + 20)
        S.vstore(S.vsel(va, S.int32x8(-1), m & (va < 7)), out + 28)

    a = np.arange(8, dtype="int32")
    out = np.zeros(36, "int32")
    build(k)(a, out, 6)
    assert out[:3].tolist() == [0, 1, 1]
    assert out[3:11].tolist() == [0, 0, 0, 30, 0, 0, 77, 0]
    assert out[11] == 6
    assert out[12:20].tolist() == [-1, -1, 2, -1, -1, -1, -1, -1]
    assert out[20:28].tolist() == [5] * 8
    assert out[28:36].tolist() == [-1, -1, -1, -1, 4, 5, 6, -1]


def test_operator_errors():
    # Operators on vectors of both signs give the unsigned type (test_compass_rules.py); storing
    # that through a pointer to the signed type is refused.
    @S.prim_func
    def sign(a: S.ptr("int32", "global"), b: S.ptr("uint32", "global")):
        S.vstore(S.vload(a) + S.vload(b), a)

    expect_diag(sign, "S.vstore(S.vload(a) + S.vload(b), a)",
                'cannot store "uint32x8" through a pointer to "int32"')

    @S.prim_func
    def broadcast(a: S.ptr("int8", "global")):
        S.vstore(S.vload(a) + 300, a)

    # Operators promote as Compass's get_binary_op_result_type: int8x32 + 300 is int32x32,
    # which an int8 pointer does not take.
    expect_diag(broadcast, "S.vstore(S.vload(a) + 300, a)",
                'Argument type mismatch: cannot store "int32x32" through a pointer to "int8"')

    @S.prim_func
    def width(a: S.ptr("int8", "global"), n: S.i32):
        S.vstore(S.vload(a) + n, a)

    expect_diag(width, "S.vstore(S.vload(a) + n, a)",
                'Argument type mismatch: cannot store "int32x32" through a pointer to "int8"')

    @S.prim_func
    def mul8(a: S.ptr("int8", "global")):
        S.vstore(S.vload(a) * S.vload(a), a)

    expect_diag(mul8, "S.vstore(S.vload(a) * S.vload(a), a)", "does not support 8-bit elements")

    @S.prim_func
    def vec_and(a: S.ptr("int32", "global")):
        m = S.vload(a) > 0
        if m and m:
            a[0] = 1

    expect_diag(vec_and, "if m and m:", '"and"/"or" work on scalar bools and single mask lanes')

    @S.prim_func
    def lane(a: S.ptr("int32", "global")):
        a[0] = S.vload(a)[8]

    expect_diag(lane, "a[0] = S.vload(a)[8]", "lane 8 is out of range for int32x8")

    @S.prim_func
    def builtin_max(a: S.ptr("int32", "global")):
        S.vstore(max(S.vload(a), S.vload(a + 8)), a)

    expect_diag(builtin_max, "max(S.vload(a), S.vload(a + 8))", "please use S.max")


def test_float_literal_with_integer_vector_is_a_float_operation():
    # As Compass's get_binary_op_result_type: int32x8 * 1.5 is float32x8, not an int32 pointer's.
    @S.prim_func
    def k(a: S.ptr("int32", "global")):
        S.vstore(S.vload(a) * 1.5, a)

    expect_diag(k, "S.vstore(S.vload(a) * 1.5, a)",
                'Argument type mismatch: cannot store "float32x8" through a pointer to "int32"')


def test_unsigned_literal_broadcast_and_scalar_promotion():
    @S.prim_func
    def k(a: S.ptr("uint8", "global"), out: S.ptr("uint8", "global"), s: S.ptr("int16", "global")):
        S.vstore(S.vload(a) + 200, out)     # 200 fits uint8
        s[2] = s[0] * 3 + 1                  # int16 scalar arithmetic wraps
        s[3] = s[1] << 4

    a = np.arange(32, dtype="uint8")
    out = np.zeros(32, "uint8")
    s = np.array([20000, 0x1234, 0, 0], "int16")
    build(k)(a, out, s)
    s = s[2:]
    np.testing.assert_array_equal(out, (a.astype(int) + 200).astype("uint8"))
    assert s[0] == np.int16(np.int64(20000 * 3 + 1).astype("int16"))
    assert s[1] == np.int64(0x1234 << 4).astype("int16")


def test_bfloat16_scalars_compute_in_float32():
    # Operators refuse bfloat16 scalars (as Compass: test_compass_refusals.py); converted to
    # float32 they compute, and a float32 result stores into bfloat16 elements.
    @S.prim_func
    def k(a: S.ptr("bf16", "global"), out: S.ptr("bf16", "global")):
        out[0] = S.fp32(a[0]) * S.fp32(a[1]) - S.fp32(a[2])
        out[1] = a[0] if S.fp32(a[0]) > S.fp32(a[1]) else a[1]

    a = np.array([1.5, -2.25, 0.125], ml_dtypes.bfloat16)
    out = np.zeros(2, ml_dtypes.bfloat16)
    build(k)(a, out)
    f = a.astype("float32")
    assert out[0] == ml_dtypes.bfloat16(f[0] * f[1] - f[2])
    assert out[1] == a[0]


@pytest.mark.parametrize("dtype", ["int16", "uint16", "int32", "float16", "float32", "bfloat16"])
def test_unmasked_add_sub_mul_print_as_c_operators(dtype):
    # As Compass prints them (its tests look for "a[0] + b[0]" in ex.c_code); the compiled text
    # of bfloat16 keeps the header's calls (test_bf16_vector_operators.py). Overflowing integer
    # lanes wrap.
    @S.prim_func
    def kernel(a: S.ptr(hw_native_vdtype(dtype), "global"), b: S.ptr(hw_native_vdtype(dtype), "global"),
               out: S.ptr(hw_native_vdtype(dtype), "global")):
        out[0] = a[0] + b[0]
        out[1] = a[0] - b[0]
        out[2] = a[0] * b[0]

    n = hw_native_vdtype(dtype).lanes
    a, b = rand(n, dtype, seed=4), rand(n, dtype, seed=5)
    if dtype in ("float16", "bfloat16"):
        a, b = rand(n, dtype, seed=4, low=-4.0, high=4.0), rand(n, dtype, seed=5, low=-4.0, high=4.0)
    ex = BuildManager().build(kernel)
    for sym, call in (("+", "__vadd"), ("-", "__vsub"), ("*", "__vmul")):
        assert f"a[0] {sym} b[0]" in ex.c_code, ex.c_code
        compiled_call = f"{call}(a[0], b[0], ALL_TRUE_h)" in ex.compiled_source
        assert compiled_call == (dtype == "bfloat16"), ex.compiled_source
    out = np.zeros(3 * n, a.dtype)
    ex(a, b, out)
    py = np.zeros(3 * n, a.dtype)
    kernel(a, b, py)
    if dtype in INT_TYPES:
        wide = [a.astype(np.int64) + b, a.astype(np.int64) - b, a.astype(np.int64) * b]
        expected = np.concatenate([w.astype(dtype) for w in wide])
        np.testing.assert_array_equal(out, expected)
        np.testing.assert_array_equal(py, expected)
    else:
        f = a.astype(np.float32), b.astype(np.float32)
        expected = np.concatenate([f[0] + f[1], f[0] - f[1], f[0] * f[1]]).astype(a.dtype)
        from tessera.dsl.testing import assert_allclose

        assert_allclose(out, expected)
        assert_allclose(py, expected)
