"""The three examples of the DSL documentation: results and generated C code."""

import re

import numpy as np

from tessera.dsl import BuildManager, script as S


def norm(text):
    return re.sub(r"\s+", " ", text).strip()


@S.prim_func
def add_one(a: S.ptr("int32", "global"), b: S.ptr("int32", "global")):
    va = S.vload(a)
    vb = S.vadd(va, 1)
    S.vstore(vb, b)


def test_example1_vector_add_one():
    ex = BuildManager(target="X2_1204").build(add_one)
    a = np.array(list(range(8)), dtype="int32")
    out = np.zeros((8,), dtype="int32")
    ex(a, out)
    np.testing.assert_array_equal(out, a + 1)
    np.testing.assert_array_equal(a, np.arange(8, dtype="int32"))  # input untouched
    code = ex.c_code
    assert "__kernel void add_one(__global int* a, __global int* b);" in code
    assert "int8 va = __vload((__global int8*)a, ALL_TRUE_w);" in code
    assert "__vstore(vb, (__global int8*)b, ALL_TRUE_w);" in code
    assert "barrier(CLK_LOCAL_MEM_FENCE);" in code


def test_example1_on_random_data():
    ex = BuildManager().build(add_one)
    rng = np.random.default_rng(7)
    a = rng.integers(-(2**31), 2**31 - 1, size=8, dtype="int32")
    out = np.zeros(8, "int32")
    ex(a, out)
    np.testing.assert_array_equal(out, (a.astype("int64") + 1).astype("int32"))  # wraps like C


@S.prim_func
def subfunc(a: S.ptr("int32", "global"), b: S.ptr("int32", "global")):
    b[0] = a[0] + 1


@S.prim_func
def calls_subfunc(a: S.ptr("int32", "global"), b: S.ptr("int32", "global")):
    subfunc(a, b)


def test_example2_subroutine():
    ex = BuildManager().build(calls_subfunc)
    code = ex.c_code
    proto_kernel = "__kernel void calls_subfunc(__global int* a, __global int* b);"
    proto_sub = "void calls_subfunc_subfunc(__global int* a, __global int* b);"  # <kernel>_<name>
    def_kernel = "__kernel void calls_subfunc(__global int* a, __global int* b) {"
    def_sub = "void calls_subfunc_subfunc(__global int* a, __global int* b) {"
    for piece in (proto_kernel, proto_sub, def_kernel, def_sub):
        assert piece in code, piece
    # Prototypes of both functions come before both definitions.
    assert max(code.index(proto_kernel), code.index(proto_sub)) < min(code.index(def_kernel), code.index(def_sub))
    assert "calls_subfunc_subfunc(a, b);" in code
    assert "b[0] = (a[0] + 1);" in code
    a = np.array([41, 0], "int32")
    b = np.zeros(2, "int32")
    ex(a, b)
    assert b.tolist() == [42, 0]


n = 8


@S.macro
def add_func(inp, out, idx):
    out[idx] = inp[idx] + n


@S.prim_func
def macro_kernel(a: S.ptr("i32", "global"), b: S.ptr("i32", "global"), n: S.i32):
    if n > 0:
        add_func(a, b, 0)
    else:
        add_func(a, b, 1)


def test_example3_macro_static_capture():
    ex = BuildManager().build(macro_kernel)
    assert "if (0 < n) { b[0] = (a[0] + 8); } else { b[1] = (a[1] + 8); }" in norm(ex.c_code)
    a = np.array([1, 2], "int32")
    b = np.zeros(2, "int32")
    ex(a, b, 5)
    assert b.tolist() == [9, 0]
    b[:] = 0
    ex(a, b, -5)
    assert b.tolist() == [0, 10]


def test_example_names_match_docs():
    # The docs name the kernel of examples 2 and 3 "func"; the entry name can be overridden.
    ex = BuildManager().build(calls_subfunc, name="func")
    assert "__kernel void func(__global int* a, __global int* b);" in ex.c_code
