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
from ..expr_ops import const
from ...script import tir as T
from ..schedule.tensor_intrin import TensorIntrin
from .fragment import fragment_store_desc

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


def _store(dtype, scope_to, out_dtype=None):
    """Store an accumulator fragment of ``dtype`` to ``scope_to`` memory; with ``out_dtype``
    (float16 from a float32 fragment) each element converted (the cast of an fp16-output
    matmul fused into the store of its tile)."""
    out_dtype = out_dtype or dtype

    @T.prim_func
    def desc(a: T.handle, c: T.handle):
        A = T.match_buffer(a, (16, 16), dtype, align=64, offset_factor=16, scope="wmma.accumulator")
        C = T.match_buffer(c, (16, 16), out_dtype, align=64, offset_factor=16, scope=scope_to)
        with T.block("root"):
            T.reads(A[0:16, 0:16])
            T.writes(C[0:16, 0:16])
            for i, j in T.grid(16, 16):
                with T.block("store"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    C[vi, vj] = _cast(out_dtype, A[vi, vj])

    @T.prim_func
    def impl(a: T.handle, c: T.handle):
        s1 = T.int32()
        s0 = T.int32()
        d1 = T.int32()
        d0 = T.int32()
        A = T.match_buffer(a, (16, 16), dtype, align=64, offset_factor=16, scope="wmma.accumulator",
                           strides=[d1, d0])
        C = T.match_buffer(c, (16, 16), out_dtype, align=64, offset_factor=16, scope=scope_to, strides=[s1, s0])
        with T.block("root"):
            T.reads(A[0:16, 0:16])
            T.writes(C[0:16, 0:16])
            T.evaluate(T.tvm_store_matrix_sync(
                A.data, _M, _N, _K, _fragment_index(A, d1, 16, 16),
                T.tvm_access_ptr(T.type_annotation(out_dtype), C.data, C.elem_offset, s1 * 16, 2),
                s1, "row_major", dtype="handle"))

    return desc, impl


WMMA_LOAD_16x16x16_F16_A_INTRIN = "wmma_load_16x16x16_f16_a_shared"
WMMA_LOAD_16x16x16_F16_B_INTRIN = "wmma_load_16x16x16_f16_b_shared"
WMMA_LOAD_16x16x16_F16_A_DYN_INTRIN = "wmma_load_16x16x16_f16_a_shared_dyn"
WMMA_LOAD_16x16x16_F16_B_DYN_INTRIN = "wmma_load_16x16x16_f16_b_shared_dyn"
WMMA_FILL_16x16x16_F32_INTRIN = "wmma_fill_16x16x16_f32"
WMMA_SYNC_16x16x16_f16f16f32_INTRIN = "wmma_sync_16x16x16_f16f16f32"
WMMA_SYNC_16x16x16_f16f16f16_INTRIN = "wmma_sync_16x16x16_f16f16f16"
WMMA_STORE_16x16x16_F32_GLOBAL_INTRIN = "wmma_store_16x16x16_f32_global"
WMMA_STORE_16x16x16_F32_SHARED_INTRIN = "wmma_store_16x16x16_f32_shared"
# A float32 accumulator stored as float16 (CodeGenCUDA converts it through a per-warp tile in
# shared memory: the element order of a wmma fragment is unspecified).
WMMA_STORE_16x16x16_F32_F16_GLOBAL_INTRIN = "wmma_store_16x16x16_f32_f16_global"

TensorIntrin.register(WMMA_LOAD_16x16x16_F16_A_INTRIN, *_load("shared", "wmma.matrix_a", "float16"), override=True)
TensorIntrin.register(WMMA_LOAD_16x16x16_F16_B_INTRIN, *_load("shared", "wmma.matrix_b", "float16"), override=True)
TensorIntrin.register(WMMA_LOAD_16x16x16_F16_A_DYN_INTRIN, *_load("shared.dyn", "wmma.matrix_a", "float16"), override=True)
TensorIntrin.register(WMMA_LOAD_16x16x16_F16_B_DYN_INTRIN, *_load("shared.dyn", "wmma.matrix_b", "float16"), override=True)
TensorIntrin.register(WMMA_FILL_16x16x16_F32_INTRIN, *_fill("float32"), override=True)
TensorIntrin.register(WMMA_SYNC_16x16x16_f16f16f32_INTRIN, *_sync("float16", "float32"), override=True)
TensorIntrin.register(WMMA_SYNC_16x16x16_f16f16f16_INTRIN, *_sync("float16", "float16"), override=True)
TensorIntrin.register(WMMA_STORE_16x16x16_F32_GLOBAL_INTRIN, *_store("float32", "global"), override=True)
TensorIntrin.register(WMMA_STORE_16x16x16_F32_SHARED_INTRIN, *_store("float32", "shared"), override=True)
TensorIntrin.register(WMMA_STORE_16x16x16_F32_F16_GLOBAL_INTRIN, *_store("float32", "global", "float16"),
                      override=True)

__all__ = ["WMMA_FILL_16x16x16_F32_INTRIN", "WMMA_LOAD_16x16x16_F16_A_INTRIN", "WMMA_LOAD_16x16x16_F16_B_INTRIN",
           "WMMA_LOAD_16x16x16_F16_A_DYN_INTRIN", "WMMA_LOAD_16x16x16_F16_B_DYN_INTRIN",
           "WMMA_STORE_16x16x16_F32_GLOBAL_INTRIN", "WMMA_STORE_16x16x16_F32_SHARED_INTRIN",
           "WMMA_STORE_16x16x16_F32_F16_GLOBAL_INTRIN",
           "WMMA_SYNC_16x16x16_f16f16f16_INTRIN", "WMMA_SYNC_16x16x16_f16f16f32_INTRIN"]


# --- mma.sync with ldmatrix (TVM's "mma_*" intrinsics) -------------------------------------------
#
# A warp of 32 threads holds a 16 x k tile as a (32, 16 * k / 32) "warp" buffer: element (i, j) of
# the tile lives in thread ``t`` at local slot ``l`` given by the layout functions below (the PTX
# ISA's fragment layouts of ldmatrix / mma.m16n8k16 and m16n8k32). The descriptions compute the
# tile element by element through the layout; the implementations are one ``ptx_ldmatrix``,
# ``ptx_mma`` (two m16n8 halves), ``mma_fill`` or ``mma_store`` per thread.

_WARP = 32


def shared_16x16_to_ldmatrix_32x8_layout(i, j):
    """(thread, slot) of element (i, j) of a 16x16 tile of 16-bit values in an mma fragment."""
    return 4 * (i % 8) + (j % 8) // 2, (j // 8) * 4 + (i // 8) * 2 + j % 2


def shared_16x32_to_ldmatrix_32x16_layout(i, j):
    """(thread, slot) of element (i, j) of a 16x32 tile of 8-bit values (A, or B transposed)."""
    return 4 * (i % 8) + (j % 16) // 4, (j // 16) * 8 + (i // 8) * 4 + j % 4


def shared_32x16_to_ldmatrix_32x16_layout(i, j):
    """(thread, slot) of element (i, j) of a 32x16 tile of 8-bit values (B, not transposed)."""
    return (i % 16) // 4 + 4 * (j % 8), (j // 8) * 8 + (i // 16) * 4 + i % 4


def ldmatrix_32x8_to_shared_16x16_layout(thread_id, local_id):
    """Inverse of :func:`shared_16x16_to_ldmatrix_32x8_layout`: the (row, column) of a slot."""
    return (local_id % 4 // 2) * 8 + thread_id // 4, (local_id // 4) * 8 + (thread_id % 4) * 2 + local_id % 2


_PTX_TYPE = {"float16": "fp16", "float32": "fp32", "int8": "int8", "int32": "int32",
             "float8_e4m3fn": "e4m3", "float8_e5m2": "e5m2"}


def _ldmatrix_plan(k_dim, dtype, operand, transposed):
    """(tile shape in shared memory, layout, whether ldmatrix transposes, offset of the row a
    thread reads as a function of (thread, row stride))."""
    if operand not in ("A", "B"):
        raise ValueError(f"get_ldmatrix_intrin: operand must be 'A' or 'B', not {operand!r}")
    if operand == "A":
        shape = (k_dim, 16) if transposed else (16, k_dim)
        trans = transposed
    else:
        shape = (16, k_dim) if transposed else (k_dim, 16)
        trans = not transposed
    if k_dim == 16:
        if dtype != "float16":
            raise ValueError(f"get_ldmatrix_intrin: a 16-deep tile is float16, not {dtype}")
        layout = shared_16x16_to_ldmatrix_32x8_layout
        if transposed:
            def offset(tx, stride):
                return stride * 8 * (tx // 16) + stride * (tx % 8) + 8 * (tx % 16 // 8)
        else:
            def offset(tx, stride):
                return stride * (tx % 16) + 8 * (tx // 16)
    elif k_dim == 32:
        if dtype not in ("int8", "float8_e4m3fn", "float8_e5m2"):
            raise ValueError(f"get_ldmatrix_intrin: a 32-deep tile is 8-bit, not {dtype}")
        if operand == "A" and transposed:
            raise ValueError("get_ldmatrix_intrin: an 8-bit A tile cannot be transposed")
        if operand == "B" and not transposed:
            layout = shared_32x16_to_ldmatrix_32x16_layout

            def offset(tx, stride):  # loaded element-wise by the code generator: stride only
                return stride
        elif operand == "B":
            layout = shared_16x32_to_ldmatrix_32x16_layout

            def offset(tx, stride):
                return stride * 8 * (tx // 16) + stride * (tx % 8) + 16 * (tx % 16 // 8)
        else:
            layout = shared_16x32_to_ldmatrix_32x16_layout

            def offset(tx, stride):
                return stride * (tx % 16) + 16 * (tx // 16)
    else:
        raise ValueError(f"get_ldmatrix_intrin: k_dim must be 16 or 32, not {k_dim}")
    return shape, layout, trans, offset


def get_ldmatrix_intrin(k_dim, dtype, matrix_name, transposed, shared_scope="shared"):
    """(description, implementation) of loading operand ``matrix_name`` ("A" or "B") of an
    m16n8k{k_dim} mma from ``shared_scope`` memory into a warp fragment with ``ldmatrix``."""
    (rows, cols), layout, trans, offset = _ldmatrix_plan(k_dim, dtype, matrix_name, transposed)
    slots = 16 * k_dim // _WARP

    @T.prim_func
    def desc(warp_handle: T.handle, shared_handle: T.handle):
        shared = T.match_buffer(shared_handle, (rows, cols), dtype, align=64, offset_factor=cols,
                                scope=shared_scope)
        warp = T.match_buffer(warp_handle, (_WARP, slots), dtype, align=64, offset_factor=cols, scope="warp")
        with T.block("root"):
            T.reads(shared[0:rows, 0:cols])
            T.writes(warp[0:_WARP, 0:slots])
            for ax0, ax1 in T.grid(rows, cols):
                with T.block("shared_warp"):
                    v0, v1 = T.axis.remap("SS", [ax0, ax1])
                    t, s = T.meta_var(layout(v0, v1))
                    T.reads(shared[v0, v1])
                    T.writes(warp[t, s])
                    warp[t, s] = shared[v0, v1]

    @T.prim_func
    def impl(warp_handle: T.handle, shared_handle: T.handle):
        s0 = T.int32()
        s1 = T.int32()
        shared = T.match_buffer(shared_handle, (rows, cols), dtype, align=64, offset_factor=cols,
                                scope=shared_scope, strides=[s0, s1])
        warp = T.match_buffer(warp_handle, (_WARP, slots), dtype, align=64, offset_factor=cols, scope="warp")
        with T.block("root"):
            T.reads(shared[0:rows, 0:cols])
            T.writes(warp[0:_WARP, 0:slots])
            for tx in T.thread_binding(0, _WARP, "threadIdx.x"):
                T.evaluate(T.ptx_ldmatrix(trans, 4, ".b16", warp.data, warp.elem_offset + slots * tx,
                                          shared.access_ptr("r"), offset(tx, s0), dtype=dtype))

    return desc, impl


def get_mma_intrin(k_dim, a_dtype="float16", b_dtype="float16", out_dtype="float16", a_transposed=False,
                   b_transposed=False):
    """(description, implementation) of C[16, 16] += A[16, k] * B[k, 16] on warp fragments, as two
    ``mma.sync.m16n8k{k_dim}`` per thread."""
    slots = 16 * k_dim // _WARP
    out_slots = 16 * 16 // _WARP
    if k_dim == 16:
        layout_a = layout_b = shared_16x16_to_ldmatrix_32x8_layout
    elif k_dim == 32:
        layout_a = shared_16x32_to_ldmatrix_32x16_layout
        layout_b = shared_16x32_to_ldmatrix_32x16_layout if b_transposed else shared_32x16_to_ldmatrix_32x16_layout
    else:
        raise ValueError(f"get_mma_intrin: k_dim must be 16 or 32, not {k_dim}")
    shape = f"m16n8k{k_dim}"
    layout_c = shared_16x16_to_ldmatrix_32x8_layout
    widen = out_dtype in ("float32", "int32")
    factor_a = 16 if a_transposed else k_dim
    factor_b = k_dim if b_transposed else 16

    def cast(v):
        return T.Cast(out_dtype, v) if widen else v

    def index_a(i, k):
        return layout_a(k, i) if a_transposed else layout_a(i, k)

    def index_b(k, j):
        return layout_b(j, k) if b_transposed else layout_b(k, j)

    @T.prim_func
    def desc(a: T.handle, b: T.handle, c: T.handle):
        A = T.match_buffer(a, (_WARP, slots), a_dtype, align=64, offset_factor=factor_a, scope="warp")
        B = T.match_buffer(b, (_WARP, slots), b_dtype, align=64, offset_factor=factor_b, scope="warp")
        C = T.match_buffer(c, (_WARP, out_slots), out_dtype, align=64, offset_factor=16, scope="warp")
        with T.block("root"):
            T.reads(C[0:_WARP, 0:out_slots], A[0:_WARP, 0:slots], B[0:_WARP, 0:slots])
            T.writes(C[0:_WARP, 0:out_slots])
            for i, j, k in T.grid(16, 16, k_dim):
                with T.block("C"):
                    vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                    tc, sc = T.meta_var(layout_c(vi, vj))
                    ta, sa = T.meta_var(index_a(vi, vk))
                    tb, sb = T.meta_var(index_b(vk, vj))
                    T.reads(C[tc, sc], A[ta, sa], B[tb, sb])
                    T.writes(C[tc, sc])
                    C[tc, sc] = C[tc, sc] + cast(A[ta, sa]) * cast(B[tb, sb])

    @T.prim_func
    def impl(a: T.handle, b: T.handle, c: T.handle):
        A = T.match_buffer(a, (_WARP, slots), a_dtype, align=64, offset_factor=factor_a, scope="warp")
        B = T.match_buffer(b, (_WARP, slots), b_dtype, align=64, offset_factor=factor_b, scope="warp")
        C = T.match_buffer(c, (_WARP, out_slots), out_dtype, align=64, offset_factor=16, scope="warp")
        with T.block("root"):
            T.reads(C[0:_WARP, 0:out_slots], A[0:_WARP, 0:slots], B[0:_WARP, 0:slots])
            T.writes(C[0:_WARP, 0:out_slots])
            for tx in T.thread_binding(0, _WARP, "threadIdx.x"):
                # Columns 0-7 of C, then columns 8-15 (the second half of B's and C's slots).
                T.evaluate(T.ptx_mma(shape, "row", "col", _PTX_TYPE[a_dtype], _PTX_TYPE[b_dtype],
                                     _PTX_TYPE[out_dtype], A.data, A.elem_offset + tx * slots, B.data,
                                     B.elem_offset + tx * slots, C.data, C.elem_offset + tx * out_slots,
                                     False, dtype=out_dtype))
                T.evaluate(T.ptx_mma(shape, "row", "col", _PTX_TYPE[a_dtype], _PTX_TYPE[b_dtype],
                                     _PTX_TYPE[out_dtype], A.data, A.elem_offset + tx * slots, B.data,
                                     B.elem_offset + tx * slots + slots // 2, C.data,
                                     C.elem_offset + tx * out_slots + out_slots // 2, False, dtype=out_dtype))

    return desc, impl


def get_mma_fill_intrin(dtype, local_size):
    """(description, implementation) of zeroing a 16x16 accumulator fragment."""
    zero = const(0, dtype)
    layout = shared_16x16_to_ldmatrix_32x8_layout

    @T.prim_func
    def desc(a: T.handle):
        C = T.match_buffer(a, (_WARP, local_size), dtype, scope="warp")
        with T.block("root"):
            T.reads()
            T.writes(C[0:_WARP, 0:local_size])
            for i0, i1 in T.grid(16, 16):
                with T.block("C_warp"):
                    i, j = T.axis.remap("SS", [i0, i1])
                    t, s = T.meta_var(layout(i, j))
                    T.reads()
                    T.writes(C[t, s])
                    C[t, s] = zero

    @T.prim_func
    def impl(a: T.handle):
        C = T.match_buffer(a, (_WARP, local_size), dtype, scope="warp", offset_factor=1)
        with T.block("root"):
            T.reads()
            T.writes(C[0:_WARP, 0:local_size])
            for tx in T.thread_binding(0, _WARP, "threadIdx.x"):
                T.evaluate(T.mma_fill(local_size, C.data, C.elem_offset, dtype=dtype))

    return desc, impl


def get_mma_store_intrin(dtype, local_size, scope="global", use_mma_store_intrinic=True):
    """(description, implementation) of storing a 16x16 accumulator fragment to ``scope`` memory:
    with ``mma_store``, or (``use_mma_store_intrinic=False``) slot by slot."""
    layout = shared_16x16_to_ldmatrix_32x8_layout

    desc = fragment_store_desc(_WARP, local_size, dtype, scope, layout)

    @T.prim_func
    def impl_mma_store(a: T.handle, c: T.handle):
        s0 = T.int32()
        s1 = T.int32()
        C_warp = T.match_buffer(a, (_WARP, local_size), dtype, scope="warp", offset_factor=1)
        C = T.match_buffer(c, (16, 16), dtype, scope=scope, offset_factor=1, strides=[s0, s1])
        with T.block("root"):
            T.reads(C_warp[0:_WARP, 0:local_size])
            T.writes(C[0:16, 0:16])
            for tx in T.thread_binding(0, _WARP, "threadIdx.x"):
                T.evaluate(T.mma_store(16, 16, C.access_ptr("w"), C_warp.data, C_warp.elem_offset, s0,
                                       dtype=dtype))

    @T.prim_func
    def impl_by_slot(a: T.handle, c: T.handle):
        s0 = T.int32()
        s1 = T.int32()
        C_warp = T.match_buffer(a, (_WARP, local_size), dtype, scope="warp", offset_factor=1)
        C = T.match_buffer(c, (16, 16), dtype, scope=scope, offset_factor=1, strides=[s0, s1])
        with T.block("root"):
            T.reads(C_warp[0:_WARP, 0:local_size])
            T.writes(C[0:16, 0:16])
            for tx in T.thread_binding(0, _WARP, "threadIdx.x"):
                for s in T.serial(local_size):
                    row, col = T.meta_var(ldmatrix_32x8_to_shared_16x16_layout(tx, s))
                    C[row, col] = C_warp[tx, s]

    return desc, (impl_mma_store if use_mma_store_intrinic else impl_by_slot)


_MMA_INTRINSICS = {
    # ldmatrix: (k_dim, dtype, operand, transposed[, scope])
    "mma_ldmatrix_f16_a": ("ld", 16, "float16", "A", False),
    "mma_ldmatrix_f16_b": ("ld", 16, "float16", "B", False),
    "mma_ldmatrix_f16_a_trans": ("ld", 16, "float16", "A", True),
    "mma_ldmatrix_f16_b_trans": ("ld", 16, "float16", "B", True),
    "mma_ldmatrix_f16_a_dyn": ("ld", 16, "float16", "A", False, "shared.dyn"),
    "mma_ldmatrix_f16_b_dyn": ("ld", 16, "float16", "B", False, "shared.dyn"),
    "mma_ldmatrix_f16_a_trans_dyn": ("ld", 16, "float16", "A", True, "shared.dyn"),
    "mma_ldmatrix_f16_b_trans_dyn": ("ld", 16, "float16", "B", True, "shared.dyn"),
    "mma_ldmatrix_i8_a": ("ld", 32, "int8", "A", False),
    "mma_ldmatrix_i8_b": ("ld", 32, "int8", "B", False),
    "mma_ldmatrix_i8_b_trans": ("ld", 32, "int8", "B", True),
    "mma_ldmatrix_e4m3_a": ("ld", 32, "float8_e4m3fn", "A", False),
    "mma_ldmatrix_e4m3_b": ("ld", 32, "float8_e4m3fn", "B", False),
    "mma_ldmatrix_e4m3_b_trans": ("ld", 32, "float8_e4m3fn", "B", True),
    "mma_ldmatrix_e5m2_a": ("ld", 32, "float8_e5m2", "A", False),
    "mma_ldmatrix_e5m2_b": ("ld", 32, "float8_e5m2", "B", False),
    "mma_ldmatrix_e5m2_b_trans": ("ld", 32, "float8_e5m2", "B", True),
    # mma: (k_dim, a dtype, b dtype, out dtype, a transposed, b transposed)
    "mma_f16f16f32": ("mma", 16, "float16", "float16", "float32", False, False),
    "mma_f16f16f32_trans_b": ("mma", 16, "float16", "float16", "float32", False, True),
    "mma_f16f16f32_trans_a": ("mma", 16, "float16", "float16", "float32", True, False),
    "mma_f16f16f32_trans_a_trans_b": ("mma", 16, "float16", "float16", "float32", True, True),
    "mma_f16f16f16": ("mma", 16, "float16", "float16", "float16", False, False),
    "mma_f16f16f16_trans_b": ("mma", 16, "float16", "float16", "float16", False, True),
    "mma_f16f16f16_trans_a": ("mma", 16, "float16", "float16", "float16", True, False),
    "mma_f16f16f16_trans_a_trans_b": ("mma", 16, "float16", "float16", "float16", True, True),
    "mma_i8i8i32": ("mma", 32, "int8", "int8", "int32", False, False),
    "mma_i8i8i32_trans_b": ("mma", 32, "int8", "int8", "int32", False, True),
    "mma_e5m2e5m2f32": ("mma", 32, "float8_e5m2", "float8_e5m2", "float32", False, False),
    "mma_e5m2e5m2f32_trans_b": ("mma", 32, "float8_e5m2", "float8_e5m2", "float32", False, True),
    "mma_e4m3e4m3f32": ("mma", 32, "float8_e4m3fn", "float8_e4m3fn", "float32", False, False),
    "mma_e4m3e4m3f32_trans_b": ("mma", 32, "float8_e4m3fn", "float8_e4m3fn", "float32", False, True),
    # fill: (dtype, slots); store: (dtype, slots, scope, with mma_store)
    "mma_fill_16x16_f32": ("fill", "float32", 8),
    "mma_fill_16x16_f16": ("fill", "float16", 8),
    "mma_fill_16x16_i32": ("fill", "int32", 8),
    "mma_store_16x16_f32_global_": ("store", "float32", 8, "global", True),
    "mma_store_16x16_f32_shared_dyn_": ("store", "float32", 8, "shared.dyn", True),
    "mma_store_16x16_f32_shared_dyn_simple_": ("store", "float32", 8, "shared.dyn", False),
    "mma_store_16x16_f16_shared_dyn_simple_": ("store", "float16", 8, "shared.dyn", False),
    "mma_store_16x16_f16_global_": ("store", "float16", 8, "global", True),
    "mma_store_16x16_i32_global_": ("store", "int32", 8, "global", True),
}

_MAKERS = {"ld": get_ldmatrix_intrin, "mma": get_mma_intrin, "fill": get_mma_fill_intrin,
           "store": get_mma_store_intrin}

for _name, (_kind, *_args) in _MMA_INTRINSICS.items():
    TensorIntrin.register(_name, *_MAKERS[_kind](*_args), override=True)

LDMATRIX_f16_A_INTRIN = "mma_ldmatrix_f16_a"
LDMATRIX_f16_B_INTRIN = "mma_ldmatrix_f16_b"
LDMATRIX_f16_A_TRANS_INTRIN = "mma_ldmatrix_f16_a_trans"
LDMATRIX_f16_B_TRANS_INTRIN = "mma_ldmatrix_f16_b_trans"
LDMATRIX_f16_A_DYN_INTRIN = "mma_ldmatrix_f16_a_dyn"
LDMATRIX_f16_B_DYN_INTRIN = "mma_ldmatrix_f16_b_dyn"
LDMATRIX_f16_A_TRANS_DYN_INTRIN = "mma_ldmatrix_f16_a_trans_dyn"
LDMATRIX_f16_B_TRANS_DYN_INTRIN = "mma_ldmatrix_f16_b_trans_dyn"
LDMATRIX_i8_A_INTRIN = "mma_ldmatrix_i8_a"
LDMATRIX_i8_B_INTRIN = "mma_ldmatrix_i8_b"
LDMATRIX_i8_B_TRANS_INTRIN = "mma_ldmatrix_i8_b_trans"
LDMATRIX_e4m3_A_INTRIN = "mma_ldmatrix_e4m3_a"
LDMATRIX_e4m3_B_INTRIN = "mma_ldmatrix_e4m3_b"
LDMATRIX_e4m3_B_TRANS_INTRIN = "mma_ldmatrix_e4m3_b_trans"
LDMATRIX_e5m2_A_INTRIN = "mma_ldmatrix_e5m2_a"
LDMATRIX_e5m2_B_INTRIN = "mma_ldmatrix_e5m2_b"
LDMATRIX_e5m2_B_TRANS_INTRIN = "mma_ldmatrix_e5m2_b_trans"
MMA_f16f16f32_INTRIN = "mma_f16f16f32"
MMA_f16f16f32_TRANS_B_INTRIN = "mma_f16f16f32_trans_b"
MMA_f16f16f32_TRANS_A_INTRIN = "mma_f16f16f32_trans_a"
MMA_f16f16f32_TRANS_A_TRANS_B_INTRIN = "mma_f16f16f32_trans_a_trans_b"
MMA_f16f16f16_INTRIN = "mma_f16f16f16"
MMA_f16f16f16_TRANS_B_INTRIN = "mma_f16f16f16_trans_b"
MMA_f16f16f16_TRANS_A_INTRIN = "mma_f16f16f16_trans_a"
MMA_f16f16f16_TRANS_A_TRANS_B_INTRIN = "mma_f16f16f16_trans_a_trans_b"
MMA_i8i8i32_INTRIN = "mma_i8i8i32"
MMA_i8i8i32_TRANS_B_INTRIN = "mma_i8i8i32_trans_b"
MMA_e5m2e5m2f32_INTRIN = "mma_e5m2e5m2f32"
MMA_e5m2e5m2f32_TRANS_B_INTRIN = "mma_e5m2e5m2f32_trans_b"
MMA_e4m3e4m3f32_INTRIN = "mma_e4m3e4m3f32"
MMA_e4m3e4m3f32_TRANS_B_INTRIN = "mma_e4m3e4m3f32_trans_b"
MMA_fill_16x16_f32_INTRIN = "mma_fill_16x16_f32"
MMA_fill_16x16_f16_INTRIN = "mma_fill_16x16_f16"
MMA_fill_16x16_i32_INTRIN = "mma_fill_16x16_i32"
MMA_store_16x16_f32_global_INTRIN = "mma_store_16x16_f32_global_"
MMA_store_16x16_f32_shared_dyn_INTRIN = "mma_store_16x16_f32_shared_dyn_"
MMA_store_16x16_f32_shared_dyn_INTRIN_SIMPLE = "mma_store_16x16_f32_shared_dyn_simple_"
MMA_store_16x16_f16_shared_dyn_INTRIN_SIMPLE = "mma_store_16x16_f16_shared_dyn_simple_"
MMA_store_16x16_f16_global_INTRIN = "mma_store_16x16_f16_global_"
MMA_store_16x16_i32_global_INTRIN = "mma_store_16x16_i32_global_"

__all__ += [n for n in dir() if n.endswith(("_INTRIN", "_INTRIN_SIMPLE")) and n.startswith(("LDMATRIX_", "MMA_"))]
__all__ += ["get_ldmatrix_intrin", "get_mma_intrin", "get_mma_fill_intrin", "get_mma_store_intrin",
            "ldmatrix_32x8_to_shared_16x16_layout", "shared_16x16_to_ldmatrix_32x8_layout",
            "shared_16x32_to_ldmatrix_32x16_layout", "shared_32x16_to_ldmatrix_32x16_layout"]
