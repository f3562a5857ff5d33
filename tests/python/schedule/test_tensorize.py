"""tensorize and the TensorIntrin registry: a block (or the block blockize makes of a loop) that
computes what an intrinsic's description does gets the intrinsic's implementation as its body."""

import numpy as np
import pytest

import tessera as ts
from tessera import tir
from tessera.error import ScheduleError
from tessera.script import tir as T
from tessera.tir.tensor_intrin import x86


@T.prim_func
def dot4_desc(a: T.handle, b: T.handle, c: T.handle):
    A = T.match_buffer(a, (4,), "float32", offset_factor=1)
    B = T.match_buffer(b, (4,), "float32", offset_factor=1)
    C = T.match_buffer(c, (), "float32", offset_factor=1)
    with T.block("root"):
        T.reads(C[()], A[0:4], B[0:4])
        T.writes(C[()])
        for k in range(4):
            with T.block("update"):
                vk = T.axis.remap("R", [k])
                C[()] = C[()] + A[vk] * B[vk]


@T.prim_func
def dot4_impl(a: T.handle, b: T.handle, c: T.handle):
    A = T.match_buffer(a, (4,), "float32", offset_factor=1)
    B = T.match_buffer(b, (4,), "float32", offset_factor=1)
    C = T.match_buffer(c, (), "float32", offset_factor=1)
    with T.block("root"):
        T.reads(C[()], A[0:4], B[0:4])
        T.writes(C[()])
        T.evaluate(T.call_extern("int32", "dot4", C.data, C.elem_offset, A.data, A.elem_offset,
                                 B.data, B.elem_offset))


tir.TensorIntrin.register("tessera_test_dot4", dot4_desc, dot4_impl, override=True)


@T.prim_func
def matvec(A: T.Buffer((16, 32), "float32"), x: T.Buffer((32,), "float32"), y: T.Buffer((16,), "float32")):
    for i, k in T.grid(16, 32):
        with T.block("y"):
            vi, vk = T.axis.remap("SR", [i, k])
            y[vi] = y[vi] + A[vi, vk] * x[vk]


@T.prim_func
def matvec_dot4(A: T.Buffer((16, 32), "float32"), x: T.Buffer((32,), "float32"), y: T.Buffer((16,), "float32")):
    A_elem_offset = T.int32()
    x_elem_offset = T.int32()
    y_elem_offset = T.int32()
    for i, k_0 in T.grid(16, 8):
        with T.block("y_o"):
            vi, vk_o = T.axis.remap("SR", [i, k_0])
            T.reads(y[vi], A[vi, vk_o * 4:vk_o * 4 + 4], x[vk_o * 4:vk_o * 4 + 4])
            T.writes(y[vi])
            A_1 = T.match_buffer(A[vi, vk_o * 4:vk_o * 4 + 4], (4,), "float32", elem_offset=A_elem_offset)
            x_1 = T.match_buffer(x[vk_o * 4:vk_o * 4 + 4], (4,), "float32", elem_offset=x_elem_offset)
            y_1 = T.match_buffer(y[vi], (), "float32", elem_offset=y_elem_offset)
            T.evaluate(T.call_extern("int32", "dot4", y_1.data, y_elem_offset, A_1.data, A_elem_offset,
                                     x_1.data, x_elem_offset))


def split_k(sch, factor=4):
    _, k = sch.get_loops("y")
    return sch.split(k, [None, factor])[1]


# ---- the registry ----

def test_register_and_get():
    intrin = tir.TensorIntrin.get("tessera_test_dot4")
    assert intrin is not None
    assert len(intrin.desc.params) == 3 and len(intrin.impl.params) == 3
    assert "tessera_test_dot4" in tir.TensorIntrin.list()
    assert tir.TensorIntrin.get("no_such_intrin", allow_missing=True) is None
    with pytest.raises(ValueError, match="TensorIntrin 'no_such_intrin' is not registered"):
        tir.TensorIntrin.get("no_such_intrin")


def test_register_twice_needs_override():
    with pytest.raises(ValueError, match="has already been registered"):
        tir.TensorIntrin.register("tessera_test_dot4", dot4_desc, dot4_impl)
    tir.TensorIntrin.register("tessera_test_dot4", dot4_desc, dot4_impl, override=True)


def test_register_rejects_mismatched_functions():
    @T.prim_func
    def two(a: T.handle, b: T.handle):
        A = T.match_buffer(a, (4,), "float32")
        B = T.match_buffer(b, (4,), "float32")
        with T.block("root"):
            for k in range(4):
                with T.block("update"):
                    vk = T.axis.remap("S", [k])
                    B[vk] = A[vk]

    @T.prim_func
    def scalar_param(a: T.handle, n: T.int32, c: T.handle):
        A = T.match_buffer(a, (4,), "float32")
        C = T.match_buffer(c, (4,), "float32")
        with T.block("root"):
            for k in range(4):
                with T.block("update"):
                    vk = T.axis.remap("S", [k])
                    C[vk] = A[vk]

    with pytest.raises(ValueError, match="different numbers of parameters"):
        tir.TensorIntrin(dot4_desc, two)
    with pytest.raises(ValueError, match="must be a handle"):
        tir.TensorIntrin(dot4_desc, scalar_param)
    with pytest.raises(TypeError):
        tir.TensorIntrin("desc", dot4_impl)


# ---- tensorize ----

def test_tensorize_loop_with_extern_call(golden):
    golden(matvec, matvec_dot4, lambda sch: sch.tensorize(split_k(sch), "tessera_test_dot4"))


def test_tensorize_blockized_block(golden):
    def apply(sch):
        outer = sch.blockize(split_k(sch))
        sch.tensorize(outer, "tessera_test_dot4")

    golden(matvec, matvec_dot4, apply)


def test_tensorize_trace_text():
    sch = tir.Schedule(matvec)
    sch.tensorize(split_k(sch), "tessera_test_dot4")
    assert sch.trace.as_python()[-1] == (
        'sch.tensorize(block_or_loop=l4, tensor_intrin="tessera_test_dot4", preserve_unit_iters=True)')


def test_tensorize_mismatch_is_schedule_error(schedule_error):
    # A loop of 8 against a description of 4.
    message = schedule_error(matvec, lambda sch, loop: sch.tensorize(loop, "tessera_test_dot4"),
                             "tensorize", "cannot be replaced by the tensor intrinsic",
                             "differs from the intrinsic's description", setup=lambda sch: split_k(sch, 8))
    assert "region extents differ" in message


def test_tensorize_unknown_intrin():
    sch = tir.Schedule(matvec)
    loop = split_k(sch)
    with pytest.raises(ValueError, match="is not registered"):
        sch.tensorize(loop, "no_such_intrin")
    with pytest.raises(TypeError):
        sch.tensorize(loop, tir.TensorIntrin.get("tessera_test_dot4"))


def test_tensorize_wrong_computation():
    @T.prim_func
    def matvec_sub(A: T.Buffer((16, 32), "float32"), x: T.Buffer((32,), "float32"), y: T.Buffer((16,), "float32")):
        for i, k in T.grid(16, 32):
            with T.block("y"):
                vi, vk = T.axis.remap("SR", [i, k])
                y[vi] = y[vi] - A[vi, vk] * x[vk]

    sch = tir.Schedule(matvec_sub)
    with pytest.raises(ScheduleError, match="cannot be replaced by the tensor intrinsic"):
        sch.tensorize(split_k(sch), "tessera_test_dot4")


# ---- the x86 intrinsics, built and run ----

@T.prim_func
def matmul(A: T.Buffer((32, 48), "float32"), B: T.Buffer((48, 64), "float32"), C: T.Buffer((32, 64), "float32")):
    for i, j, k in T.grid(32, 64, 48):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


@pytest.mark.parametrize("intrin", [x86.AVX2_FMA_F32_INTRIN, x86.AVX512_FMA_F32_INTRIN])
def test_x86_fma_matmul_runs(intrin):
    lanes = 8 if intrin == x86.AVX2_FMA_F32_INTRIN else 16
    sch = tir.Schedule(matmul)
    c = sch.get_block("C")
    i, j, k = sch.get_loops(c)
    j0, j1 = sch.split(j, [None, lanes])
    sch.reorder(i, j0, k, j1)
    sch.decompose_reduction(c, k)
    sch.tensorize(j1, intrin)
    assert "T.Broadcast" in sch.mod.script()
    lib = ts.build(sch.mod, target="c")
    rng = np.random.default_rng(0)
    a = rng.random((32, 48), dtype="float32")
    b = rng.random((48, 64), dtype="float32")
    out = ts.nd.array(np.zeros((32, 64), "float32"))
    lib(ts.nd.array(a), ts.nd.array(b), out)
    np.testing.assert_allclose(out.numpy(), a @ b, rtol=1e-5)


def test_host_intrinsics_follow_vector_width():
    lanes = x86.host_lanes32()
    assert lanes == ts._core.host_vector_bits() // 32
    assert x86.host_fma_f32_intrin() == (x86.AVX512_FMA_F32_INTRIN if lanes >= 16 else x86.AVX2_FMA_F32_INTRIN)


@pytest.mark.parametrize("intrin", [x86.AVX2_DOT_8x4_INTRIN, x86.VNNI_DOT_16x4_INTRIN])
def test_x86_dot_u8i8_runs(intrin):
    lanes = 8 if intrin == x86.AVX2_DOT_8x4_INTRIN else 16

    @T.prim_func
    def dense(X: T.Buffer((8, 32), "uint8"), W: T.Buffer((32, 32), "int8"), Y: T.Buffer((8, 32), "int32")):
        for i, j, k in T.grid(8, 32, 32):
            with T.block("Y"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    Y[vi, vj] = 0
                Y[vi, vj] = Y[vi, vj] + T.Cast("int32", X[vi, vk]) * T.Cast("int32", W[vj, vk])

    sch = tir.Schedule(dense)
    y = sch.get_block("Y")
    i, j, k = sch.get_loops(y)
    j0, j1 = sch.split(j, [None, lanes])
    k0, k1 = sch.split(k, [None, 4])
    sch.reorder(i, j0, k0, j1, k1)
    sch.decompose_reduction(y, k0)
    sch.tensorize(j1, intrin)
    lib = ts.build(sch.mod, target="c")
    rng = np.random.default_rng(1)
    x = rng.integers(0, 256, (8, 32), dtype="uint8")
    w = rng.integers(-128, 128, (32, 32), dtype="int8")
    out = ts.nd.array(np.zeros((8, 32), "int32"))
    lib(ts.nd.array(x), ts.nd.array(w), out)
    np.testing.assert_array_equal(out.numpy(), x.astype("int32") @ w.astype("int32").T)
