"""tir.UnrollLoop: T.unroll loops and small loops picked by the "tir.UnrollLoop" options."""

import pytest

import tessera as ts
from tessera.error import TesseraError
from tessera.script import tir as T


def test_explicit_unroll(golden):
    @T.prim_func
    def before(A: T.Buffer((4,), "float32")):
        for i in T.unroll(4):
            A[i] = T.float32(0)

    @T.prim_func
    def expected(A: T.Buffer((4,), "float32")):
        A[0] = T.float32(0)
        A[1] = T.float32(0)
        A[2] = T.float32(0)
        A[3] = T.float32(0)

    golden("UnrollLoop", before, expected)


def test_explicit_unroll_off_keeps_the_loop(unchanged):
    @T.prim_func
    def func(A: T.Buffer((4,), "float32")):
        for i in T.unroll(4):
            A[i] = T.float32(0)

    with ts.transform.PassContext(config={"tir.UnrollLoop": {"explicit_unroll": False}}):
        unchanged("UnrollLoop", func)


def test_serial_loops_are_kept_by_default(unchanged):
    @T.prim_func
    def func(A: T.Buffer((2,), "float32")):
        for i in T.serial(2):
            A[i] = T.float32(0)

    unchanged("UnrollLoop", func)


def test_auto_max_step_unrolls_small_inner_loops(golden):
    @T.prim_func
    def before(A: T.Buffer((8, 2), "float32")):
        for i in T.serial(8):
            for j in T.serial(2):
                A[i, j] = T.float32(1)

    @T.prim_func
    def expected(A: T.Buffer((8, 2), "float32")):
        for i in T.serial(8):
            A[i, 0] = T.float32(1)
            A[i, 1] = T.float32(1)

    with ts.transform.PassContext(config={"tir.UnrollLoop": {"auto_max_step": 4}}):
        golden("UnrollLoop", before, expected)


def test_auto_max_extent(golden):
    @T.prim_func
    def before(A: T.Buffer((3,), "int32")):
        for i in T.serial(3):
            A[i] = i

    @T.prim_func
    def expected(A: T.Buffer((3,), "int32")):
        A[0] = 0
        A[1] = 1
        A[2] = 2

    with ts.transform.PassContext(config={"tir.UnrollLoop": {"auto_max_extent": 3}}):
        golden("UnrollLoop", before, expected)


def test_unrolled_copies_define_fresh_inner_loops():
    # Each copy of the unrolled body defines its own inner loop variable, so the C code generator
    # (which requires one definition per variable) accepts the result.
    import numpy as np

    @T.prim_func
    def func(A: T.Buffer((4, 8), "float32")):
        for i in T.unroll(4):
            for j in T.serial(8):
                A[i, j] = T.Cast("float32", i * 8 + j)

    mod = ts.lower(func, stage="loop")
    text = mod.script()
    assert text.count("for j") == 4 and "T.unroll" not in text
    lib = ts.build(func, target="c")
    a = np.zeros((4, 8), "float32")
    lib(a)
    np.testing.assert_array_equal(a, np.arange(32, dtype="float32").reshape(4, 8))


def test_unrolled_copies_allocate_their_own_buffers():
    import numpy as np

    @T.prim_func
    def func(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
        for i in T.unroll(4):
            with T.block(""):
                tmp = T.alloc_buffer((8,), "float32")
                for j in range(8):
                    tmp[j] = A[i, j] * T.float32(2)
                for j in range(8):
                    B[i, j] = tmp[j] + T.float32(1)

    lib = ts.build(func, target="c")
    a = np.arange(32, dtype="float32").reshape(4, 8)
    b = np.zeros_like(a)
    lib(a, b)
    np.testing.assert_array_equal(b, a * 2 + 1)


def test_symbolic_bounds_with_constant_extent_unroll(golden):
    @T.prim_func
    def before(A: T.Buffer((16,), "float32"), n: T.int32):
        for i in T.serial(n, n + 2):
            A[i] = T.float32(1)

    @T.prim_func
    def expected(A: T.Buffer((16,), "float32"), n: T.int32):
        A[n] = T.float32(1)
        A[n + 1] = T.float32(1)

    with ts.transform.PassContext(config={"tir.UnrollLoop": {"auto_max_step": 2}}):
        golden("UnrollLoop", before, expected)


def test_without_explicit_unroll_chosen_loops_become_unroll_loops(golden):
    @T.prim_func
    def before(A: T.Buffer((8, 2), "float32")):
        for i in T.serial(8):
            for j in T.serial(2):
                A[i, j] = T.float32(1)

    @T.prim_func
    def expected(A: T.Buffer((8, 2), "float32")):
        for i in T.serial(8):
            for j in T.unroll(2):
                A[i, j] = T.float32(1)

    config = {"tir.UnrollLoop": {"auto_max_step": 4, "explicit_unroll": False}}
    with ts.transform.PassContext(config=config):
        golden("UnrollLoop", before, expected)


def test_pragma_attributes_set_the_options_and_disappear(golden):
    @T.prim_func
    def before(A: T.Buffer((8, 2), "float32")):
        with T.attr(0, "pragma_auto_unroll_max_step", 4):
            for i in T.serial(8):
                for j in T.serial(2):
                    A[i, j] = T.float32(1)
        for k in T.serial(2):
            A[0, k] = T.float32(2)

    @T.prim_func
    def expected(A: T.Buffer((8, 2), "float32")):
        for i in T.serial(8):
            A[i, 0] = T.float32(1)
            A[i, 1] = T.float32(1)
        for k in T.serial(2):
            A[0, k] = T.float32(2)

    golden("UnrollLoop", before, expected)


def test_pragma_attribute_that_is_not_a_constant_is_rejected(apply):
    @T.prim_func
    def before(A: T.Buffer((8,), "float32"), n: T.int32):
        with T.attr(0, "pragma_auto_unroll_max_step", n):
            for i in T.serial(8):
                A[i] = T.float32(1)

    with pytest.raises(TesseraError, match="pragma_auto_unroll_max_step must be a constant"):
        apply("UnrollLoop", before)
