"""tir.InstrumentBoundCheckers ("tir.instrument_bound_checkers"): accesses that cannot be proven
in bounds are checked at run time; a failing access is skipped and reported as an error."""

import numpy as np
import pytest

import tessera as ts
from tessera import tir
from tessera.script import tir as T

CHECK = {"tir.instrument_bound_checkers": True}


@T.prim_func
def gather(A: T.Buffer((8,), "float32"), I: T.Buffer((4,), "int32"), B: T.Buffer((4,), "float32")):
    for i in range(4):
        B[i] = A[I[i]]


@T.prim_func
def shifted(a: T.handle, b: T.handle, s: T.int32):
    n = T.int32()
    A = T.match_buffer(a, (n,), "float32")
    B = T.match_buffer(b, (n,), "float32")
    for i in T.parallel(n):
        B[i] = A[i + s]


@T.prim_func
def in_bounds(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(16):
        B[i] = A[i] * T.float32(2)


def build(func, checked=True):
    with ts.transform.PassContext(config=CHECK if checked else {}):
        return ts.build(func, target="c")


def test_good_indices_run_unchanged():
    lib = build(gather)
    a = np.arange(8, dtype="float32")
    b = np.zeros(4, "float32")
    lib(a, np.array([7, 0, 3, 3], "int32"), b)
    np.testing.assert_array_equal(b, [7, 0, 3, 3])


def test_bad_index_is_reported_with_the_access_and_values():
    lib = build(gather)
    a = np.arange(8, dtype="float32")
    b = np.full(4, -1, "float32")
    with pytest.raises(Exception) as err:
        lib(a, np.array([1, 9, 2, -3], "int32"), b)
    msg = str(err.value)
    assert "out-of-bounds access A[I[i]]" in msg
    assert "index 9 is outside [0, 8)" in msg
    assert "test_instrument_bound_checkers.py:" in msg  # where the access is written
    # The failing access was skipped, the others ran.
    assert b[0] == 1 and b[1] == -1 and b[2] == 2
    # The error is reported once; the next good call succeeds.
    lib(a, np.array([0, 1, 2, 3], "int32"), b)
    np.testing.assert_array_equal(b, [0, 1, 2, 3])


def test_checks_inside_parallel_loops_with_symbolic_sizes():
    lib = build(shifted)
    a = np.arange(100, dtype="float32")
    b = np.zeros(100, "float32")
    lib(a, b, 0)
    np.testing.assert_array_equal(b, a)
    with pytest.raises(Exception, match=r"index 10\d is outside \[0, 100\)"):
        lib(a, b, 5)
    with pytest.raises(Exception, match=r"index -1 is outside \[0, 100\)"):
        lib(a, b, -1)


def test_provable_accesses_get_no_check():
    with ts.transform.PassContext(config=CHECK):
        lowered = ts.lower(in_bounds, target="c", stage="cleanup")
    assert "bound_error" not in lowered.script()
    assert "tessera_bound_error" not in build(in_bounds).get_source()


def test_off_by_default():
    src = build(gather, checked=False).get_source()
    assert "tessera_bound_error" not in src
    with ts.transform.PassContext(config=CHECK):
        lowered = ts.lower(gather, target="c", stage="cleanup")
    assert "tessera.bound_error" in lowered.script()


def test_guarded_loads_are_not_checked_eagerly():
    @T.prim_func
    def guarded(A: T.Buffer((8,), "float32"), B: T.Buffer((10,), "float32")):
        for i in range(10):
            B[i] = T.if_then_else(i < 8, A[i], T.float32(0))

    lib = build(guarded)
    a = np.arange(8, dtype="float32")
    b = np.full(10, -1, "float32")
    lib(a, b)
    np.testing.assert_array_equal(b, list(range(8)) + [0, 0])


def test_user_pass_runs_before_the_checks():
    # A phase-3 pass that shifts every store one element further: the check catches it.
    from tessera.tir import stmt_functor, transform as tt

    @tt.prim_func_pass(opt_level=0)
    def shift_stores(func, mod, ctx):
        def post(node):
            return tir.BufferStore(node.buffer, node.value, [i + 1 for i in node.indices])

        return func.with_body(stmt_functor.ir_transform(func.body, None, post, ["tir.BufferStore"]))

    with ts.transform.PassContext(config={**CHECK, "tir.add_lower_pass": [(3, shift_stores)]}):
        lib = ts.build(in_bounds, target="c")
    with pytest.raises(Exception, match=r"out-of-bounds access B\[i \+ 1\].*index 16 is outside \[0, 16\)"):
        lib(np.ones(16, "float32"), np.zeros(16, "float32"))


def test_vector_accesses_check_both_end_lanes():
    @T.prim_func
    def vshift(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32"), s: T.int32):
        for io in range(8):
            for ii in T.vectorized(8):
                B[io * 8 + ii] = A[io * 8 + ii + s]

    lib = build(vshift)
    a = np.arange(64, dtype="float32")
    b = np.zeros(64, "float32")
    lib(a, b, 0)
    np.testing.assert_array_equal(b, a)
    with pytest.raises(Exception, match=r"out-of-bounds access A\[\(io \* 8\) \+ s \.\. \+7\].*index 64 is outside \[0, 64\)"):
        lib(a, b, 1)
    with pytest.raises(Exception, match=r"index -2 is outside \[0, 64\)"):
        lib(a, b, -2)


def test_golden(golden):
    @T.prim_func
    def before(A: T.Buffer((8,), "float32"), I: T.Buffer((4,), "int32"), B: T.Buffer((4,), "float32")):
        for i in range(4):
            B[i] = A[I[i]]

    where = f"{__file__}:{before.body.span.line + 1}"

    @T.prim_func
    def expected(A: T.Buffer((8,), "float32"), I: T.Buffer((4,), "int32"), B: T.Buffer((4,), "float32")):
        for i in range(4):
            if T.int64(0) <= T.Cast("int64", I[i]) and T.Cast("int64", I[i]) < T.int64(8):
                B[i] = A[I[i]]
            else:
                T.evaluate(T.call_intrin("int32", "tessera.bound_error",
                                         "out-of-bounds access A[I[i]] at " + where + ":20: index %lld is outside [0, %lld) (tir.instrument_bound_checkers)",
                                         T.Cast("int64", I[i]), T.int64(8)))

    with ts.transform.PassContext(config=CHECK):
        golden("InstrumentBoundCheckers", before, expected)


def test_cuda_kernels_are_left_alone():
    # Code inside thread-bound loops runs on the GPU, which has no host error path.
    @T.prim_func
    def kernel(A: T.Buffer((8,), "float32"), I: T.Buffer((4,), "int32"), B: T.Buffer((4,), "float32")):
        for tx in T.thread_binding(4, thread="threadIdx.x"):
            B[tx] = A[I[tx]]

    with ts.transform.PassContext(config=CHECK):
        lowered = ts.lower(kernel, target="cuda", stage="cleanup")
    assert "bound_error" not in lowered.script()
