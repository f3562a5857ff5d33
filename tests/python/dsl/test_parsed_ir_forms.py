"""The IR the DSL parser produces, in the forms Compass 4.2 prints and its tests read: the flat
buffer behind a pointer is named ``<pointer>_buf``, and a loop written with a step of 1 in
``range()`` keeps it as ``annotations={"step": 1}``. Each kernel also runs compiled and in PySim
against numpy."""

import numpy as np
import pytest

from tessera.dsl import BuildManager, script as S
from tessera.dsl import transform as dsl_transform
from tessera.script import tir as T
from tessera.tir.schedule.testing import assert_structural_equal_ignore_global_symbol

from _util import build, rand


@S.prim_func
def stepped(a: S.ptr("int32", "global"), out: S.ptr("int32", "global")):
    for i in range(0, 4, 1):
        out[i] = a[i]
    for j in range(4, 11, 3):
        out[j] = a[j] + 1
    for k in range(2):
        out[k + 12] = a[k] * 2


@T.prim_func
def stepped_parsed(a: T.handle("int32", "global"), out: T.handle("int32", "global")):
    T.func_attr({"tessera.is_entry": 1})
    out_buf = T.Buffer((2147483647,), "int32", data=out)
    a_buf = T.Buffer((2147483647,), "int32", data=a)
    for i in T.serial(4, annotations={"step": 1}):
        out_buf[i] = a_buf[i]
    for j_iter in range(3):
        j: T.int32 = j_iter * 3 + 4
        out_buf[j] = a_buf[j] + 1
    for k in range(2):
        out_buf[k + 12] = a_buf[k] * 2


def _expected_stepped(a):
    want = np.zeros(14, "int32")
    want[0:4] = a[0:4]
    for j in range(4, 11, 3):
        want[j] = a[j] + 1
    want[12:14] = a[0:2] * 2
    return want


def test_range_step_of_one_is_an_annotation_and_pointer_buffers_are_named_buf():
    mod = BuildManager().parse(stepped)
    func = mod.functions[0][1]
    assert_structural_equal_ignore_global_symbol(func, stepped_parsed)
    text = str(mod)
    assert 'for i in T.serial(4, annotations={"step": 1}):' in text, text
    assert "out_buf[i] = a_buf[i]" in text, text
    # range() without a step, and a step other than 1 (a counter loop), carry no annotation.
    assert text.count('"step"') == 1, text


def test_stepped_loops_compiled_and_pysim_against_numpy():
    a = rand(14, "int32", seed=3)
    want = _expected_stepped(a)
    compiled = np.zeros(14, "int32")
    build(stepped)(a, compiled)
    pysim = np.zeros(14, "int32")
    stepped(a, pysim)
    np.testing.assert_array_equal(compiled, want)  # elements 5, 6, 8, 9, 11 stay 0
    np.testing.assert_array_equal(pysim, want)
    # the step annotation changes nothing in C: the loop advances by 1
    assert "for (int i = 0; i < 4; i += 1)" in build(stepped).c_code


def test_fold_constant_keeps_the_step_annotation():
    @S.prim_func
    def k(buf: S.ptr("float32", "global")):
        lo = 0
        rows = 3
        cols = 5
        one = 1
        for r in range(lo, lo + rows, one):
            for c in range(lo, cols, one):
                buf[r * cols + c] = 2.5

    bm = BuildManager()
    mod = dsl_transform.FoldConstant()(bm.parse(k))
    text = str(mod)
    assert text.count('annotations={"step": 1}') == 2, text
    assert "buf_buf[r * 5 + c] = T.float32(2.5)" in text, text
    for run in (build(k), k):
        out = np.zeros(15, "float32")
        run(out)
        np.testing.assert_array_equal(out, np.full(15, 2.5, "float32"))


def test_pysim_out_of_bounds_names_the_pointer_not_its_buffer():
    @S.prim_func
    def k(a: S.ptr("int32", "global"), out: S.ptr("int32", "global")):
        out[0] = a[5]

    with pytest.raises(AssertionError) as info:
        k(np.zeros(2, "int32"), np.zeros(1, "int32"))
    message = str(info.value)
    assert "out-of-bounds load from a: element 5 of 2" in message, message
    assert "a_buf" not in message, message
