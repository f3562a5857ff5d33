"""CUDA tensor-core (``wmma``) intrinsics: 16x16x16 fragment load (float16, row-major, from
shared memory), fill (float32 accumulator), mma (f16 x f16 -> f32 or f16) and store (to global or shared
memory). The implementations call TVM's fragment builtins (``T.tvm_load_matrix_sync``,
``T.tvm_fill_fragment``, ``T.tvm_mma_sync``, ``T.tvm_store_matrix_sync``), which the CUDA code
generator emits as ``nvcuda::wmma`` calls on fragments declared for the ``wmma.matrix_a``,
``wmma.matrix_b`` and ``wmma.accumulator`` buffers.

A fragment buffer holds one or more 16x16 tiles; the fragment a region of it names is its
element offset divided into tiles: ``(offset // stride // 16) * (stride // 16) + offset % stride // 16``.
"""

from ... import _core
from ...script import tir as T
from ..schedule.tensor_intrin import TensorIntrin

_M = _N = _K = 16


def _fragment_index(buffer, stride, rows, cols):
    return buffer.elem_offset // stride // rows * (stride // cols) + buffer.elem_offset % stride // cols


def _load(scope_from, fragment, dtype):
    @T.prim_func
    def desc(a: T.handle, c: T.handle):
        A = T.match_buffer(a, (16, 16), dtype, align=64, offset_factor=16, scope=scope_from)
        C = T.match_buffer(c, (16, 16), dtype, align=64, offset_factor=16, scope=fragment)
        with T.block("root"):
            T.reads(A[0:16, 0:16])
            T.writes(C[0:16, 0:16])
            for i, j in T.grid(16, 16):
                with T.block("load"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    C[vi, vj] = A[vi, vj]

    @T.prim_func
    def impl(a: T.handle, c: T.handle):
        s1 = T.int32()
        s0 = T.int32()
        d1 = T.int32()
        d0 = T.int32()
        A = T.match_buffer(a, (16, 16), dtype, align=64, offset_factor=16, scope=scope_from, strides=[s1, s0])
        C = T.match_buffer(c, (16, 16), dtype, align=64, offset_factor=16, scope=fragment, strides=[d1, d0])
        with T.block("root"):
            T.reads(A[0:16, 0:16])
            T.writes(C[0:16, 0:16])
            T.evaluate(T.tvm_load_matrix_sync(
                C.data, _M, _N, _K, _fragment_index(C, d1, 16, 16),
                T.tvm_access_ptr(T.type_annotation(dtype), A.data, A.elem_offset, s1 * 16, 1),
                s1, "row_major", dtype="handle"))

    return desc, impl


def _fill(dtype):
    zero = _core.FloatImm(dtype, 0.0)

    @T.prim_func
    def desc(c: T.handle):
        C = T.match_buffer(c, (16, 16), dtype, align=64, offset_factor=16, scope="wmma.accumulator")
        with T.block("root"):
            T.reads()
            T.writes(C[0:16, 0:16])
            for i, j in T.grid(16, 16):
                with T.block("init"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    C[vi, vj] = zero

    @T.prim_func
    def impl(c: T.handle):
        d1 = T.int32()
        d0 = T.int32()
        C = T.match_buffer(c, (16, 16), dtype, align=64, offset_factor=16, scope="wmma.accumulator",
                           strides=[d1, d0])
        with T.block("root"):
            T.reads()
            T.writes(C[0:16, 0:16])
            T.evaluate(T.tvm_fill_fragment(C.data, _M, _N, _K, _fragment_index(C, d1, 16, 16),
                                           zero, dtype="handle"))

    return desc, impl


def _cast(dtype, value):
    """``value`` converted to ``dtype`` (no conversion when it has that type already, as in the
    blocks ``te.compute`` makes of ``x.astype(dtype)``)."""
    return value if value.dtype == dtype else T.Cast(dtype, value)


def _sync(in_dtype, out_dtype):
    @T.prim_func
    def desc(a: T.handle, b: T.handle, c: T.handle):
        A = T.match_buffer(a, (16, 16), in_dtype, align=64, offset_factor=16, scope="wmma.matrix_a")
        B = T.match_buffer(b, (16, 16), in_dtype, align=64, offset_factor=16, scope="wmma.matrix_b")
        C = T.match_buffer(c, (16, 16), out_dtype, align=64, offset_factor=16, scope="wmma.accumulator")
        with T.block("root"):
            T.reads(C[0:16, 0:16], A[0:16, 0:16], B[0:16, 0:16])
            T.writes(C[0:16, 0:16])
            for i, j, k in T.grid(16, 16, 16):
                with T.block("update"):
                    vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                    C[vi, vj] = C[vi, vj] + _cast(out_dtype, A[vi, vk]) * _cast(out_dtype, B[vk, vj])

    @T.prim_func
    def impl(a: T.handle, b: T.handle, c: T.handle):
        a1 = T.int32()
        a0 = T.int32()
        b1 = T.int32()
        b0 = T.int32()
        c1 = T.int32()
        c0 = T.int32()
        A = T.match_buffer(a, (16, 16), in_dtype, align=64, offset_factor=16, scope="wmma.matrix_a",
                           strides=[a1, a0])
        B = T.match_buffer(b, (16, 16), in_dtype, align=64, offset_factor=16, scope="wmma.matrix_b",
                           strides=[b1, b0])
        C = T.match_buffer(c, (16, 16), out_dtype, align=64, offset_factor=16, scope="wmma.accumulator",
                           strides=[c1, c0])
        with T.block("root"):
            T.reads(C[0:16, 0:16], A[0:16, 0:16], B[0:16, 0:16])
            T.writes(C[0:16, 0:16])
            T.evaluate(T.tvm_mma_sync(
                C.data, _fragment_index(C, c1, 16, 16), A.data, _fragment_index(A, a1, 16, 16),
                B.data, _fragment_index(B, b1, 16, 16), C.data, _fragment_index(C, c1, 16, 16),
                dtype="handle"))

    return desc, impl


def _store(dtype, scope_to):
    @T.prim_func
    def desc(a: T.handle, c: T.handle):
        A = T.match_buffer(a, (16, 16), dtype, align=64, offset_factor=16, scope="wmma.accumulator")
        C = T.match_buffer(c, (16, 16), dtype, align=64, offset_factor=16, scope=scope_to)
        with T.block("root"):
            T.reads(A[0:16, 0:16])
            T.writes(C[0:16, 0:16])
            for i, j in T.grid(16, 16):
                with T.block("store"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    C[vi, vj] = A[vi, vj]

    @T.prim_func
    def impl(a: T.handle, c: T.handle):
        s1 = T.int32()
        s0 = T.int32()
        d1 = T.int32()
        d0 = T.int32()
        A = T.match_buffer(a, (16, 16), dtype, align=64, offset_factor=16, scope="wmma.accumulator",
                           strides=[d1, d0])
        C = T.match_buffer(c, (16, 16), dtype, align=64, offset_factor=16, scope=scope_to, strides=[s1, s0])
        with T.block("root"):
            T.reads(A[0:16, 0:16])
            T.writes(C[0:16, 0:16])
            T.evaluate(T.tvm_store_matrix_sync(
                A.data, _M, _N, _K, _fragment_index(A, d1, 16, 16),
                T.tvm_access_ptr(T.type_annotation(dtype), C.data, C.elem_offset, s1 * 16, 2),
                s1, "row_major", dtype="handle"))

    return desc, impl


WMMA_LOAD_16x16x16_F16_A_INTRIN = "wmma_load_16x16x16_f16_a_shared"
WMMA_LOAD_16x16x16_F16_B_INTRIN = "wmma_load_16x16x16_f16_b_shared"
WMMA_FILL_16x16x16_F32_INTRIN = "wmma_fill_16x16x16_f32"
WMMA_SYNC_16x16x16_f16f16f32_INTRIN = "wmma_sync_16x16x16_f16f16f32"
WMMA_SYNC_16x16x16_f16f16f16_INTRIN = "wmma_sync_16x16x16_f16f16f16"
WMMA_STORE_16x16x16_F32_GLOBAL_INTRIN = "wmma_store_16x16x16_f32_global"
WMMA_STORE_16x16x16_F32_SHARED_INTRIN = "wmma_store_16x16x16_f32_shared"

TensorIntrin.register(WMMA_LOAD_16x16x16_F16_A_INTRIN, *_load("shared", "wmma.matrix_a", "float16"), override=True)
TensorIntrin.register(WMMA_LOAD_16x16x16_F16_B_INTRIN, *_load("shared", "wmma.matrix_b", "float16"), override=True)
TensorIntrin.register(WMMA_FILL_16x16x16_F32_INTRIN, *_fill("float32"), override=True)
TensorIntrin.register(WMMA_SYNC_16x16x16_f16f16f32_INTRIN, *_sync("float16", "float32"), override=True)
TensorIntrin.register(WMMA_SYNC_16x16x16_f16f16f16_INTRIN, *_sync("float16", "float16"), override=True)
TensorIntrin.register(WMMA_STORE_16x16x16_F32_GLOBAL_INTRIN, *_store("float32", "global"), override=True)
TensorIntrin.register(WMMA_STORE_16x16x16_F32_SHARED_INTRIN, *_store("float32", "shared"), override=True)

__all__ = ["WMMA_FILL_16x16x16_F32_INTRIN", "WMMA_LOAD_16x16x16_F16_A_INTRIN", "WMMA_LOAD_16x16x16_F16_B_INTRIN",
           "WMMA_STORE_16x16x16_F32_GLOBAL_INTRIN", "WMMA_STORE_16x16x16_F32_SHARED_INTRIN",
           "WMMA_SYNC_16x16x16_f16f16f16_INTRIN", "WMMA_SYNC_16x16x16_f16f16f32_INTRIN"]
