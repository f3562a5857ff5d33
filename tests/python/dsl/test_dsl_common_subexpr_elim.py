"""dsl.CommonSubexprElim: a computation a kernel does more than once is computed once into a
`cse_var_<n>` variable, with the rules of TVM's CommonSubexprElimTIR, which Compass's DSL build
runs before legalizing vector widths. Calls and buffer reads are never bound."""

import re

import numpy as np
import pytest

from tessera.dsl import BuildManager, script as S


@S.prim_func
def picks(a: S.ptr("int32", "global"), c: S.ptr("int32", "global")):
    x, y = a[0], a[1]
    c[0] = y if x == 3 else 7
    c[1] = 4 if x < 0 else 5
    c[2] = a[2] + y
    c[3] = a[2] + y
    vc = (c + 8).as_ptr("i32x8")
    va = (a + 8).as_ptr("i32x8")
    vc[0] = va[0] if x == 3 else 5


def _expected(a):
    x, y = int(a[0]), int(a[1])
    c = np.zeros(16, "int32")
    c[0] = y if x == 3 else 7
    c[1] = 4 if x < 0 else 5
    c[2] = c[3] = a[2] + y
    c[8:16] = a[8:16] if x == 3 else 5
    return c


def test_a_shared_condition_is_computed_once():
    code = BuildManager().build(picks).c_code
    assert "bool cse_var_1 = (x == 3);" in code, code
    assert "c[0] = (cse_var_1 ? y : 7);" in code, code
    assert "vc[0] = (cse_var_1 ? va[0] : (int8)5);" in code, code
    # Done once, and a sum that reads memory: not bound.
    assert "c[1] = ((x < 0) ? 4 : 5);" in code, code
    assert "c[2] = (a[2] + y);" in code and "c[3] = (a[2] + y);" in code, code
    assert len(set(re.findall(r"cse_var_\d+", code))) == 1, code


@pytest.mark.parametrize("first", [3, -2, 9])
def test_shared_condition_results_match_numpy(first):
    a = np.arange(16, dtype="int32") * 3 - 5
    a[0] = first
    ex = BuildManager().build(picks)
    out = np.zeros(16, "int32")
    ex(a, out)
    np.testing.assert_array_equal(out, _expected(a))
    sim = np.zeros(16, "int32")
    picks(a, sim)
    np.testing.assert_array_equal(sim, _expected(a))


@S.prim_func
def strided(a: S.ptr("int32", "global"), c: S.ptr("int32", "global"), n: S.i32):
    for i in range(4):
        c[i * n + 1] = a[i * n + 1] * 2


def test_an_index_computed_twice_in_a_loop_is_bound_inside_it():
    code = BuildManager().build(strided).c_code
    assert re.search(r"int cse_var_1 = \(\(i \* n\) \+ 1\);\s*c\[cse_var_1\] = \(a\[cse_var_1\] \* 2\);",
                     code), code
    a = np.arange(40, dtype="int32")
    out = np.zeros(40, "int32")
    BuildManager().build(strided)(a, out, 9)
    want = np.zeros(40, "int32")
    want[[1, 10, 19, 28]] = a[[1, 10, 19, 28]] * 2
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("name", ["dsl.CommonSubexprElim", "tir.CommonSubexprElimTIR"])
def test_disabled_pass_keeps_the_repeated_computation(name):
    # Compass's tests disable the pass by TVM's name.
    code = BuildManager(disabled_pass=[name]).build(picks).c_code
    assert "cse_var" not in code and "c[0] = ((x == 3) ? y : 7);" in code, code


@S.prim_func
def guarded(c: S.ptr("int32", "global"), x: S.i32, n: S.i32):
    if n == 0:
        return
    c[0] = x // n + 1
    c[1] = x // n + 2


def test_nothing_is_computed_ahead_of_an_early_return():
    # x // n, done twice after the return that guards n == 0, is not moved before it.
    ex = BuildManager().build(guarded)
    code = ex.c_code
    assert "return;" in code, code
    assert "cse_var" not in code[:code.index("return;")], code
    out = np.full(2, 5, "int32")
    ex(out, 7, 0)
    np.testing.assert_array_equal(out, [5, 5])
    ex(out, 7, 2)
    np.testing.assert_array_equal(out, [7 // 2 + 1, 7 // 2 + 2])
    sim = np.full(2, 5, "int32")
    guarded(sim, 7, 2)
    np.testing.assert_array_equal(sim, out)
