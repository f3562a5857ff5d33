"""What a DSL kernel looks like after lowering, in the forms Compass 4.2's tests read: constant
masks printed as ``T.const_pred("...")``, names of constants folded into their uses, remainders
of non-negative values as C's ``%``, a loop-invariant condition tested once outside its loop.
Each kernel also runs compiled and in PySim against numpy."""

import numpy as np
import pytest

from tessera import _core
from tessera.dsl import BuildManager, script as S
from tessera.dsl.masks import parse_mask_string
from tessera.error import DiagnosticError, TesseraValueError
from tessera.script import tir as T

from _util import build, expect_diag, rand


def _both(func, *args):
    """Run ``func`` compiled and in PySim on copies of ``args``; return both sets of arrays."""
    compiled = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    pysim = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    build(func)(*compiled)
    func(*pysim)
    return compiled, pysim


@pytest.mark.parametrize("mask", ["15T1FT14F1T", "16F16T", "TF" * 16])
def test_constant_mask_printed_as_const_pred(mask):
    @S.prim_func
    def k(a: S.ptr("int8x32", "global"), out: S.ptr("int8x32", "global")):
        out[0] = S.abs(a[0], mask=mask)

    text = str(BuildManager().lower(k))
    assert f'T.const_pred("{mask}")' in text, text
    a = rand(32, "int8", seed=5)
    on = np.array(parse_mask_string(mask))
    want = np.abs(a.astype(np.int16)).astype(np.int8)  # abs(-128) wraps to -128
    for _, out in _both(k, a, np.zeros(32, "int8")):
        np.testing.assert_array_equal(out[on], want[on])


def test_all_true_mask_is_kept_in_the_ir_and_dropped_in_the_code():
    @S.prim_func
    def k(a: S.ptr("int16x16", "global"), out: S.ptr("int16x16", "global")):
        out[0] = S.abs(a[0], mask="16T")

    assert 'T.const_pred("16T")' in str(BuildManager().lower(k))
    ex = build(k)
    assert "__vundef_inactive" not in ex.c_code, ex.c_code
    a = rand(16, "int16", seed=6)
    for _, out in _both(k, a, np.zeros(16, "int16")):
        np.testing.assert_array_equal(out, np.abs(a.astype(np.int32)).astype(np.int16))


def test_t_const_pred_reads_mask_strings_and_bool_lists():
    call = T.const_pred("15T1FT14F1T")
    assert call.dtype == "boolx32" and call.op_name == "dsl.const_mask"
    assert [bool(x.value) for x in call.args] == parse_mask_string("15T1FT14F1T")
    assert str(T.const_pred("15T1FT14F1T")) == 'T.const_pred("15T1FT14F1T")'
    call = T.const_pred([True, False, False, True])
    assert call.dtype == "boolx4" and [bool(x.value) for x in call.args] == [True, False, False, True]
    with pytest.raises(TesseraValueError, match="Invalid mask string"):
        T.const_pred("3X")
    with pytest.raises(TypeError, match="mask string or a list of bools"):
        T.const_pred(5)


def test_names_of_constants_are_folded():
    @S.prim_func
    def k(a: S.ptr("int32", "global"), out: S.ptr("int32", "global"), n_tec: S.i32):
        n = 127
        per = S.ceildiv(n, n_tec)
        each = S.clip(n - per * a[0], 0, per)
        out[0] = each % n
        out[1] = a[1] // n
        total = S.int32(0)  # reassigned: stays a variable
        for i in range(4):
            total += a[i]
        out[2] = total

    code = build(k).c_code
    assert "int n =" not in code, code
    assert "(each % 127)" in code, code   # the remainder of a value >= 0 is C's %
    assert "int total = 0;" in code, code
    a = np.array([3, -300, 7, 9], "int32")
    per = -(-127 // 4)
    each = min(max(127 - per * 3, 0), per)
    want = [each % 127, int(np.trunc(-300 / 127)), int(a.sum())]
    for _, out, _ in _both(k, a, np.zeros(3, "int32"), 4):
        np.testing.assert_array_equal(out, want)


def test_remainder_of_a_value_of_any_sign_keeps_c_semantics():
    @S.prim_func
    def k(a: S.ptr("int32", "global"), out: S.ptr("int32", "global")):
        for i in range(8):
            out[i] = a[i] % 5 + a[i] // 5

    a = np.array([-11, -5, -1, 0, 1, 4, 5, 11], "int32")
    want = np.fmod(a, 5) + np.trunc(a / 5).astype("int32")
    for _, out in _both(k, a, np.zeros(8, "int32")):
        np.testing.assert_array_equal(out, want)


def test_loop_invariant_condition_is_tested_outside_the_loop():
    @S.prim_func
    def k(a: S.ptr("fp32", "global")):
        for tx in S.tec_range(4):
            for i in range(8):
                if tx < 3:
                    a[tx * 8 + i] = a[tx * 8 + i] + 2

    text = str(BuildManager().lower(k))
    assert text.index("if tx < 3:") < text.index("for i in range(8):"), text
    a = rand(32, "float32", seed=7)
    want = a.copy()
    want[:24] += 2
    for (out,) in _both(k, a):
        np.testing.assert_allclose(out, want, rtol=1e-6)


def test_tec_range_of_every_tec_has_no_guard_and_pointers_no_declaration():
    @S.prim_func
    def k(a: S.ptr("fp32", "global")):
        for tx in S.tec_range(4):
            for i in range(8):
                if tx < 3:
                    a[tx * 8 + i] = a[tx * 8 + i] + 2

    # The function body: the TEC index, then the hoisted condition around the loop; the buffer
    # of the pointer parameter is not declared (it needs no declaration).
    func = BuildManager().lower(k)["k"]
    assert isinstance(func.body, _core.LetStmt) and func.body.var.name == "tx"
    assert isinstance(func.body.body, _core.IfThenElse)
    assert isinstance(func.body.body.then_case, _core.For)
    assert "decl_buffer" not in func.script()

    @S.prim_func
    def some(out: S.ptr("int32", "global")):
        for t in S.tec_range(1, 3):          # TECs 1 and 2: tested
            out[t] = t
        for t in S.tec_range(2):             # TECs 0 and 1: only the upper bound is tested
            out[4 + t] = t

    text = BuildManager().lower(some).script()
    assert "if 1 <= t and t < 3:" in text and "if t_1 < 2:" in text, text
    for (out,) in _both(some, np.full(8, -1, "int32")):
        np.testing.assert_array_equal(out, [-1, 1, 2, -1, 0, 1, -1, -1])


def test_vectorized_loops_of_a_constant_extent_become_vector_code():
    @S.prim_func
    def k(a: S.ptr("int8", "global"), b: S.ptr("fp32", "global"), c: S.ptr("int32", "global"),
          h: S.ptr("fp16", "global"), n: S.i32):
        for t in S.tec_range(1):
            for i in S.vectorized(32):
                a[i] = a[i] * 2 + 1
            for i in S.vectorized(16):
                c[i] = c[i] + i * n                          # the loop variable as a value
            for i in S.vectorized(8):
                b[i] = S.exp(b[i]) if i < 4 else b[i] * 2.0  # kept a loop
            for i in S.vectorized(5):
                h[i] = h[i] + h[i + 5]

    text = BuildManager().lower(k).script()
    assert "c_buf[0:16] = c_buf[0:16] + T.Ramp(0, 1, 16) * T.Broadcast(n, 16)" in text, text
    # 32 lanes of int8 are one native vector (char32), as Compass writes them.
    assert "a_buf[0:32] = a_buf[0:32] * T.Broadcast(T.int8(2), 32)" in text \
        and "for i in range(8):" in text \
        and "for i in range(5):" in text
    c_code = build(k).c_code
    assert "((int8)(n * 8) + (int8)n * (int8){0, 1, 2, 3, 4, 5, 6, 7})" in c_code, c_code
    a, b = rand(32, "int8", seed=3), rand(8, "float32", low=-1, high=1, seed=4)
    c, h = rand(16, "int32", low=-100, high=100, seed=5), rand(10, "float16", low=-4, high=4, seed=6)
    want_a = (a * 2 + 1).astype("int8")
    want_b = np.where(np.arange(8) < 4, np.exp(b), b * 2).astype("float32")
    want_c = c + np.arange(16, dtype="int32") * 3
    want_h = h.copy()
    want_h[:5] = h[:5] + h[5:]
    for oa, ob, oc, oh, _ in _both(k, a, b, c, h, 3):
        np.testing.assert_array_equal(oa, want_a)
        np.testing.assert_allclose(ob, want_b, rtol=1e-5)
        np.testing.assert_array_equal(oc, want_c)
        np.testing.assert_array_equal(oh, want_h)


def test_vreplic_runtime_index_needs_a_native_vector():
    @S.prim_func
    def native(a: S.ptr("int32", "global"), idx: S.i32, out: S.ptr("int32", "global")):
        S.vstore(S.vreplic(S.vload(a, lanes=8), idx), out)

    a = rand(8, "int32", seed=8)
    for _, _, out in _both(native, a, 5, np.zeros(8, "int32")):
        np.testing.assert_array_equal(out, np.full(8, a[5]))

    @S.prim_func
    def wide(a: S.ptr("int32", "global"), idx: S.i32, out: S.ptr("int32", "global")):
        S.vstore(S.vreplic(S.vload(a, lanes=16), idx), out)

    err = expect_diag(wide, "S.vreplic(", 'the arg "index" must be a compile-time integer')
    assert isinstance(err, RuntimeError) and isinstance(err, DiagnosticError)
