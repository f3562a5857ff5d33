"""BuildManager on TensorIR and te PrimFuncs (scheduled or not) for the DSL targets, the
TensorIR-style @S.prim_func read through tessera.dsl.schedule, Compass's schedule shorthands
(read_at, write_at, bind_tec), dsl.SerializeTecBinding and the lsram/gsram schedule scopes; results
against numpy."""

import numpy as np
import pytest

from tessera import te, tir
from tessera.ir import IRModule
from tessera.dsl import BuildManager, schedule, script as S
from tessera.dsl.testing import clear_traceback
from tessera.error import ScheduleError, TesseraError, TesseraTypeError, TesseraValueError
from tessera.script import tir as T
from tessera.transform import Pass


def _add_te(n, dtype):
    A = te.placeholder((n,), name="A", dtype=dtype)
    B = te.placeholder((n,), name="B", dtype=dtype)
    C = te.compute((n,), lambda i: A[i] * 3 + B[i], name="C")
    return A, B, C


def test_te_prim_func_in_any_argument_order():
    A, B, C = _add_te(40, "int16")
    a = np.arange(40, dtype="int16")
    b = np.full(40, -7, dtype="int16")
    bm = BuildManager()
    ex = bm.build(te.create_prim_func([A, B, C]), name="fma3")
    c = np.zeros(40, "int16")
    ex(a, b, c)
    np.testing.assert_array_equal(c, a * 3 + b)
    assert ex.name == "fma3" and "fma3" in ex.c_code
    ex = bm.build(te.create_prim_func([C, B, A]))
    c = np.zeros(40, "int16")
    ex.run(c, b, a)
    np.testing.assert_array_equal(c, a * 3 + b)
    lowered = bm.lower(te.create_prim_func([A, B, C]), name="fma3")
    assert [gv.name_hint for gv, _ in lowered.functions] == ["fma3"]


def test_scheduled_on_tecs_with_lsram_caches_and_vectors():
    A, B, C = _add_te(96, "float32")
    sch = tir.Schedule(te.create_prim_func([A, B, C]))
    block = sch.get_block("C")
    (i,) = sch.get_loops(block)
    tec, outer, vec = sch.split(i, [4, None, 8])
    sch.bind(tec, "threadIdx.x")
    sch.vectorize(vec)
    sch.compute_at(sch.cache_read(block, 0, "lsram"), outer)
    sch.reverse_compute_at(sch.cache_write(block, 0, "lsram"), outer)
    ex = BuildManager().build(sch.mod)
    a = np.linspace(-3, 3, 96, dtype="float32")
    b = np.linspace(5, 1, 96, dtype="float32")
    c = np.zeros(96, "float32")
    ex(a, b, c)
    np.testing.assert_allclose(c, a * 3 + b, rtol=1e-6)
    assert "threadIdx" not in ex.c_code
    assert ex.benchmark(a, b, c, repeat=2, number=2).mean > 0


def test_serialize_tec_binding_pass():
    @T.prim_func
    def bound(A: T.Buffer((8,), "int32")):
        for t in T.thread_binding(4, thread="threadIdx.x"):
            for j in range(2):
                A[t * 2 + j] = t

    mod = Pass("dsl.SerializeTecBinding")(IRModule({"main": bound}))
    text = mod.script()
    assert "thread_binding" not in text and "for t, j in T.grid(4, 2)" in text

    @T.prim_func
    def synced(A: T.Buffer((8,), "int32")):
        for t in T.thread_binding(4, thread="threadIdx.x"):
            A[t] = t
            T.tvm_storage_sync("shared")

    with pytest.raises(TesseraError, match="synchronises them"):
        Pass("dsl.SerializeTecBinding")(IRModule({"main": synced}))


def test_schedule_scopes_of_the_npu():
    A, B, C = _add_te(16, "int32")
    sch = tir.Schedule(te.create_prim_func([A, B, C]))
    sch.cache_read(sch.get_block("C"), 0, "gsram")
    with pytest.raises(ScheduleError, match="Invalid storage scope 'sram'.*\"lsram\", \"gsram\""):
        sch.cache_read(sch.get_block("C"), 1, "sram")


def test_arguments_checked():
    A, B, C = _add_te(8, "int32")
    ex = BuildManager().build(te.create_prim_func([A, B, C]))
    a = np.ones(8, "int32")
    with pytest.raises(TesseraTypeError, match="takes 3 arguments") as info:
        ex(a, a)
    assert isinstance(info.value, AssertionError)  # as Compass raises it
    with pytest.raises(TesseraTypeError, match="must have dtype int32"):
        ex(a, a, np.zeros(8, "float32"))
    with pytest.raises(TesseraValueError, match="has 4 elements"):
        ex(a, a, np.zeros(4, "int32"))
    two = IRModule({"f": te.create_prim_func([A, B, C]), "g": te.create_prim_func([A, B, C])})
    with pytest.raises(TesseraValueError, match="one PrimFunc"):
        BuildManager().build(two)


@S.prim_func
def scaled_add(A: S.ptr("int16", "global"), B: S.ptr("int16", "global"), C: S.ptr("int16", "global"),
               n: S.i32, scale: S.i16):
    a = S.match_buffer(A, shape=(n,))
    b = S.match_buffer(B, shape=(n,))
    c = S.match_buffer(C, shape=(n,))
    for i in range(n):
        with S.block("B"):
            vi = S.axis.remap("S", [i])
            c[vi] = a[vi] * scale + b[vi]


def test_tensor_ir_style_kernel_scheduled_and_called():
    n = 1000
    a = np.arange(n, dtype="int16") - 500
    b = np.full(n, 11, dtype="int16")
    expected = (a * 3 + b).astype("int16")
    sch = schedule.Schedule(scaled_add)
    block = sch.get_block("B")
    (i,) = sch.get_loops(block)
    outer, inner = sch.split(i, factors=[None, 16])
    sch.read_at(outer, block, 0, "lsram")
    sch.write_at(outer, block, 0, "lsram")
    text = sch.mod.script()
    assert text.count('scope="lsram"') == 2 and 'T.match_buffer(A, (n,), "int16")' in text
    ex = BuildManager().build(sch.mod)
    c = np.zeros(n, "int16")
    ex(a, b, c, n, 3)
    np.testing.assert_array_equal(c, expected)
    # Unscheduled: built directly (through the DSL pipeline, see below), and called as a
    # Python function (which builds it).
    c = np.zeros(n, "int16")
    BuildManager().build(scaled_add)(a, b, c, n, 3)
    np.testing.assert_array_equal(c, expected)
    c = np.zeros(n, "int16")
    scaled_add(a, b, c, n, 3)
    np.testing.assert_array_equal(c, expected)
    with pytest.raises(TesseraValueError, match=r"argument 'C' of scaled_add\(\) has 999 elements"):
        scaled_add(a, b, c[:-1], n, 3)  # the shape (n,) with n from the scalar argument


def test_tensor_ir_style_kernel_built_directly_gets_dsl_c():
    # As Compass builds it: the blocks lowered to loops, then the DSL's own passes and code
    # generator (a kernel, vector loads and stores), not the host C of a TensorIR build.
    @S.prim_func
    def add2d(A: S.ptr("int32", "global"), B: S.ptr("int32", "global"), C: S.ptr("int32", "global")):
        a = S.match_buffer(A, shape=(4, 16))
        b = S.match_buffer(B, shape=(4, 16))
        c = S.match_buffer(C, shape=(4, 16))
        for i in range(4):
            for j in S.vectorized(16):
                with S.block("C"):
                    vi, vj = S.axis.remap("SS", [i, j])
                    c[vi, vj] = a[vi, vj] * 2 + b[vi, 15 - vj]

    ex = BuildManager().build(add2d)
    kernel = ex.c_code.split("/* Packed")[0]
    assert "__kernel void add2d(__global int* A, __global int* B, __global int* C)" in kernel
    assert kernel.count("__vstore(") == 2 and "__vload_stride(" in kernel
    a = np.arange(64, dtype="int32").reshape(4, 16)
    b = (np.arange(64, dtype="int32") * 7 - 100).reshape(4, 16)
    c = np.zeros((4, 16), "int32")
    ex(a, b, c)
    np.testing.assert_array_equal(c, a * 2 + b[:, ::-1])
    # An array smaller than its matched buffer is refused before the call.
    with pytest.raises(TesseraValueError, match=r"argument 'C' of add2d\(\) has 63 elements; the "
                       r"kernel's buffer on it has shape \(4, 16\)"):
        ex(a, b, np.zeros(63, "int32"))
    # A scheduled one (an IRModule) still takes the TensorIR build.
    sch = schedule.Schedule(add2d)
    assert "__kernel" not in BuildManager().build(sch.mod).c_code


def test_tensor_ir_style_kernel_c_names_and_shifts_as_compass():
    # Long loop names become i, j, ... (a second i prints as i_1), loops step with `+= 1`, and a
    # floordiv by 2^k of a value of any sign is a shift; the values agree with numpy.
    @S.prim_func
    def k(A: S.ptr("int32", "global"), C: S.ptr("int32", "global"), n: S.i32):
        a = S.match_buffer(A, shape=(n,))
        c = S.match_buffer(C, shape=(n,))
        for first_very_long_loop_name in range(n // 32):
            with S.block("B"):
                vi = S.axis.remap("S", [first_very_long_loop_name])
                c[vi] = a[vi] // 8
        for second_very_long_loop_name in range(n - n // 32):
            with S.block("C"):
                vi = S.axis.remap("S", [second_very_long_loop_name])
                c[n // 32 + vi] = a[n // 32 + vi] // 4

    ex = BuildManager().build(k)
    kernel = ex.c_code.split("/* Packed")[0]
    assert "for (int i = 0; i < (n >> 5); i += 1) {" in kernel
    assert "for (int i_1 = 0; i_1 < (n - (n >> 5)); i_1 += 1) {" in kernel
    assert "very_long" not in kernel and "__floordiv" not in kernel
    n = 96
    a = np.arange(n, dtype="int32") * 37 - 1800
    c = np.zeros(n, "int32")
    ex(a, c, n)
    want = np.concatenate([a[:n // 32] // 8, a[n // 32:] // 4])
    np.testing.assert_array_equal(c, want)


def test_tensor_ir_style_kernel_error_found_by_a_pass_is_located(capfd):
    @S.prim_func
    def oob(A: S.ptr("int32", "global"), C: S.ptr("int32", "global")):
        a = S.match_buffer(A, shape=(4,))
        c = S.match_buffer(C, shape=(4,))
        for i in range(4):
            with S.block("C"):
                vi = S.axis.remap("S", [i])
                c[vi] = a[vi + 4]

    with pytest.raises(TesseraError) as info:
        BuildManager().build(oob)
    assert "out of bounds" in info.value.message and "c[vi] = a[vi + 4]" in str(info.value)
    assert str(info.value) in capfd.readouterr().err


def test_bind_tec_names_thread_x():
    @T.prim_func
    def copy(A: T.Buffer((64,), "int8"), B: T.Buffer((64,), "int8")):
        for i in range(64):
            with T.block("B"):
                vi = T.axis.remap("S", [i])
                B[vi] = A[vi]

    sch = schedule.Schedule(copy)
    outer, _ = sch.split(sch.get_loops(sch.get_block("B"))[0], factors=[4, None])
    sch.bind_tec(outer)
    assert 'T.thread_binding(4, thread="threadIdx.x")' in sch.mod.script()
    a = np.arange(64, dtype="int8")
    b = np.zeros(64, "int8")
    BuildManager().build(sch.mod)(a, b)
    np.testing.assert_array_equal(a, b)


def test_clear_traceback_keeps_the_error():
    @clear_traceback
    def failing(x):
        big = np.zeros(10)  # noqa: F841
        raise ValueError(f"bad {x}")

    with pytest.raises(ValueError, match="bad 3"):
        failing(3)
    assert failing.__name__ == "failing"


def test_only_kernels_with_blocks_are_tensor_ir():
    @S.prim_func
    def view(a: S.ptr("int32", "global"), out: S.ptr("int32", "global")):
        buf = S.match_buffer(a, shape=(8,))
        out[0] = buf[3]

    assert schedule.uses_tensor_ir(scaled_add) and not schedule.uses_tensor_ir(view)
    a = np.arange(8, dtype="int32")
    out = np.zeros(1, "int32")
    BuildManager().build(view)(a, out)
    assert out[0] == 3


def test_plain_te_function_gets_the_dsl_kernel_c():
    # A te function with no schedule is written as a DSL kernel, as Compass writes it: global
    # pointer parameters named as the buffers, restrict (te functions do not alias), serial
    # loops, narrow integer arithmetic cast back without extra parentheses; and it runs.
    A = te.placeholder((100,), name="A", dtype="uint8")
    B = te.placeholder((100,), name="B", dtype="uint8")
    C = te.compute(A.shape, lambda *i: A(*i) + B(*i), name="C")
    ex = BuildManager().build(te.create_prim_func([A, B, C]), name="fadd")
    code = ex.c_code
    assert code.startswith("#include <compass/dsl.h>\n")
    head = "__kernel void fadd(__global uchar* restrict A, __global uchar* restrict B, " \
           "__global uchar* restrict C)"
    assert head + ";" in code and head + " {" in code
    assert "for (int i0 = 0; i0 < 100; i0 += 1) {" in code
    assert "C[i0] = (uchar)(A[i0] + B[i0]);" in code
    a = np.arange(100, dtype="uint8") * 3
    b = np.arange(100, dtype="uint8") + 200
    c = np.zeros(100, "uint8")
    ex(a, b, c)
    np.testing.assert_array_equal(c, a + b)  # wraps as uint8


def test_te_function_the_dsl_cannot_name_is_built_for_the_host():
    # "main" is no DSL kernel name (C's main): the function is built for the host as before.
    A, B, C = _add_te(8, "int32")
    ex = BuildManager().build(te.create_prim_func([A, B, C]))
    assert "__kernel" not in ex.c_code
    a = np.arange(8, dtype="int32")
    c = np.zeros(8, "int32")
    ex(a, a, c)
    np.testing.assert_array_equal(c, a * 4)
