"""AMDGPU tensor intrinsics under TVM's names: ``sdot4`` (the 4-element int8 dot product) and the
matrix-core (MFMA) intrinsics of a 16x16 tile on a 64-lane wavefront: loads of A (16 x k) and B
(k x 16) tiles from shared memory into ``warp`` fragments, the multiply-accumulate
(f32 16x16x4, f16 16x16x16 -> f32, int8 16x16x16 -> int32), the accumulator fill and its store.

A fragment is a ``(64, slots)`` buffer: element (i, j) of a tile lives in lane ``t`` at slot ``s``
given by the ``shared_*_to_local_64x*_layout_*`` functions (the register layouts of the
``v_mfma_*`` instructions). tessera has no AMDGPU code generator: the implementations are portable
TensorIR, one lane per ``threadIdx.x``, each lane moving or computing its own slots (a lane's
accumulator slot sums the products of its row of A and column of B in the order of ``k``), so
they give the results ``llvm.amdgcn.mfma.*`` gives on every tessera target.
"""

from ... import _core
from ..expr_ops import const
from ...script import tir as T
from ..schedule.tensor_intrin import TensorIntrin
from .fragment import fragment_store_desc
from .dot_product_common import get_dp4a_intrin, register_all

AMDGPU_SDOT4_INTRIN = "sdot4"

register_all({AMDGPU_SDOT4_INTRIN: get_dp4a_intrin("int8", "int8", "int32")})

_LANES = 64


# Tile element (i, j) -> (lane, slot), and the inverses (lane, slot) -> (i, j).
def shared_16x4_to_local_64x1_layout_A(i, j):
    return j * 16 + i, _core.IntImm("int32", 0)


def thread_id_shared_access_64x1_to_16x4_layout_A(thread_id, local_id):
    return thread_id % 16, thread_id // 16 + local_id


def shared_4x16_to_local_64x1_layout_B(i, j):
    return i * 16 + j, _core.IntImm("int32", 0)


def thread_id_shared_access_64x1_to_4x16_layout_B(thread_id, local_id):
    return thread_id // 16, thread_id % 16 + local_id


def shared_16x16_to_local_64x4_layout_A(i, j):
    return i + (j // 4) * 16, j % 4


def thread_id_shared_access_64x4_to_16x16_layout_A(thread_id, local_id):
    return thread_id % 16, (thread_id // 16) * 4 + local_id


def shared_16x16_to_local_64x4_layout_B(i, j):
    return j + (i // 4) * 16, i % 4


def thread_id_shared_access_64x4_to_16x16_layout_B(thread_id, local_id):
    return (thread_id // 16) * 4 + local_id, thread_id % 16


shared_16x16_to_local_64x4_layout_C = shared_16x16_to_local_64x4_layout_B
thread_id_shared_access_64x4_to_16x16_layout_C = thread_id_shared_access_64x4_to_16x16_layout_B


def _operand_layouts(k_dim):
    """(layout of A, its inverse, layout of B, its inverse) for a k_dim-deep tile."""
    if k_dim == 4:
        return (shared_16x4_to_local_64x1_layout_A, thread_id_shared_access_64x1_to_16x4_layout_A,
                shared_4x16_to_local_64x1_layout_B, thread_id_shared_access_64x1_to_4x16_layout_B)
    if k_dim == 16:
        return (shared_16x16_to_local_64x4_layout_A, thread_id_shared_access_64x4_to_16x16_layout_A,
                shared_16x16_to_local_64x4_layout_B, thread_id_shared_access_64x4_to_16x16_layout_B)
    raise ValueError(f"MFMA intrinsics: k_dim must be 4 or 16, not {k_dim}")


def get_mma_fill_intrin(dtype, local_size):
    """(description, implementation) of zeroing a 16x16 accumulator fragment of ``dtype``."""
    zero = const(0, dtype)
    layout = shared_16x16_to_local_64x4_layout_C

    @T.prim_func
    def desc(a: T.handle):
        C = T.match_buffer(a, (_LANES, local_size), dtype, scope="warp")
        with T.block("root"):
            T.reads()
            T.writes(C[0:_LANES, 0:local_size])
            for i0, i1 in T.grid(16, 16):
                with T.block("C_warp"):
                    i, j = T.axis.remap("SS", [i0, i1])
                    t, s = T.meta_var(layout(i, j))
                    T.reads()
                    T.writes(C[t, s])
                    C[t, s] = zero

    @T.prim_func
    def impl(a: T.handle):
        C = T.match_buffer(a, (_LANES, local_size), dtype, scope="warp", offset_factor=1)
        with T.block("root"):
            T.reads()
            T.writes(C[0:_LANES, 0:local_size])
            for tx in T.thread_binding(0, _LANES, "threadIdx.x"):
                for s in T.serial(local_size):
                    C[tx, s] = zero

    return desc, impl


def get_mfma_load_intrin(k_dim=4, dtype="float32", scope="shared", is_b=False, transposed=False):
    """(description, implementation) of loading an A tile (16 x k_dim) or a B tile (k_dim x 16,
    or 16 x k_dim when ``transposed``) from ``scope`` memory into a fragment."""
    layout_a, inverse_a, layout_b, inverse_b = _operand_layouts(k_dim)
    slots = 16 * k_dim // _LANES
    if not is_b:
        rows, cols, layout, inverse = 16, k_dim, layout_a, inverse_a
    elif transposed:
        rows, cols, layout, inverse = 16, k_dim, layout_a, inverse_a
    else:
        rows, cols, layout, inverse = k_dim, 16, layout_b, inverse_b

    @T.prim_func
    def desc(reg_handle: T.handle, memory_handle: T.handle):
        memory = T.match_buffer(memory_handle, (rows, cols), dtype, offset_factor=1, scope=scope)
        reg = T.match_buffer(reg_handle, (_LANES, slots), dtype, offset_factor=1, scope="warp")
        with T.block("root"):
            T.reads(memory[0:rows, 0:cols])
            T.writes(reg[0:_LANES, 0:slots])
            for ax0, ax1 in T.grid(rows, cols):
                with T.block("memory_reg"):
                    v0, v1 = T.axis.remap("SS", [ax0, ax1])
                    t, s = T.meta_var(layout(v0, v1))
                    T.reads(memory[v0, v1])
                    T.writes(reg[t, s])
                    reg[t, s] = memory[v0, v1]

    @T.prim_func
    def impl(reg_handle: T.handle, memory_handle: T.handle):
        s0 = T.int32()
        s1 = T.int32()
        memory = T.match_buffer(memory_handle, (rows, cols), dtype, align=64, offset_factor=1, scope=scope,
                                strides=[s0, s1])
        reg = T.match_buffer(reg_handle, (_LANES, slots), dtype, align=64, offset_factor=1, scope="warp")
        with T.block("root"):
            T.reads(memory[0:rows, 0:cols])
            T.writes(reg[0:_LANES, 0:slots])
            for tx in T.thread_binding(0, _LANES, "threadIdx.x"):
                for s in T.serial(slots):
                    row, col = T.meta_var(inverse(tx, s))
                    reg[tx, s] = memory[row, col]

    return desc, impl


def get_mfma_intrin(k_dim, in_dtype="float32", out_dtype="float32", b_transposed=False):
    """(description, implementation) of C[16, 16] += A[16, k_dim] * B[k_dim, 16] on fragments
    (B given as 16 x k_dim when ``b_transposed``)."""
    layout_a, _, layout_b, _ = _operand_layouts(k_dim)
    if b_transposed:
        layout_b = layout_a
    layout_c = shared_16x16_to_local_64x4_layout_C
    inverse_c = thread_id_shared_access_64x4_to_16x16_layout_C
    slots = 16 * k_dim // _LANES
    out_slots = 16 * 16 // _LANES

    def cast(v):
        return T.Cast(out_dtype, v) if out_dtype != in_dtype else v

    def index_b(k, j):
        return layout_b(j, k) if b_transposed else layout_b(k, j)

    @T.prim_func
    def desc(a: T.handle, b: T.handle, c: T.handle):
        A = T.match_buffer(a, (_LANES, slots), in_dtype, offset_factor=1, scope="warp")
        B = T.match_buffer(b, (_LANES, slots), in_dtype, offset_factor=1, scope="warp")
        C = T.match_buffer(c, (_LANES, out_slots), out_dtype, offset_factor=1, scope="warp")
        with T.block("root"):
            T.reads(C[0:_LANES, 0:out_slots], A[0:_LANES, 0:slots], B[0:_LANES, 0:slots])
            T.writes(C[0:_LANES, 0:out_slots])
            for i, j, k in T.grid(16, 16, k_dim):
                with T.block("C"):
                    vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                    tc, sc = T.meta_var(layout_c(vi, vj))
                    ta, sa = T.meta_var(layout_a(vi, vk))
                    tb, sb = T.meta_var(index_b(vk, vj))
                    T.reads(C[tc, sc], A[ta, sa], B[tb, sb])
                    T.writes(C[tc, sc])
                    C[tc, sc] = C[tc, sc] + cast(A[ta, sa]) * cast(B[tb, sb])

    @T.prim_func
    def impl(a: T.handle, b: T.handle, c: T.handle):
        A = T.match_buffer(a, (_LANES, slots), in_dtype, offset_factor=1, scope="warp")
        B = T.match_buffer(b, (_LANES, slots), in_dtype, offset_factor=1, scope="warp")
        C = T.match_buffer(c, (_LANES, out_slots), out_dtype, offset_factor=1, scope="warp")
        with T.block("root"):
            T.reads(C[0:_LANES, 0:out_slots], A[0:_LANES, 0:slots], B[0:_LANES, 0:slots])
            T.writes(C[0:_LANES, 0:out_slots])
            for tx in T.thread_binding(0, _LANES, "threadIdx.x"):
                for s in T.serial(out_slots):
                    for k in T.serial(k_dim):
                        row, col = T.meta_var(inverse_c(tx, s))
                        ta, sa = T.meta_var(layout_a(row, k))
                        tb, sb = T.meta_var(index_b(k, col))
                        C[tx, s] = C[tx, s] + cast(A[ta, sa]) * cast(B[tb, sb])

    return desc, impl


def get_mfma_store_intrin(local_size=4, dtype="float32", scope="global"):
    """(description, implementation) of storing a 16x16 accumulator fragment to ``scope`` memory."""
    layout = shared_16x16_to_local_64x4_layout_C
    inverse = thread_id_shared_access_64x4_to_16x16_layout_C

    desc = fragment_store_desc(_LANES, local_size, dtype, scope, layout)

    @T.prim_func
    def impl(a: T.handle, c: T.handle):
        s0 = T.int32()
        s1 = T.int32()
        C_warp = T.match_buffer(a, (_LANES, local_size), dtype, scope="warp", offset_factor=1)
        C = T.match_buffer(c, (16, 16), dtype, scope=scope, offset_factor=1, strides=[s0, s1])
        with T.block("root"):
            T.reads(C_warp[0:_LANES, 0:local_size])
            T.writes(C[0:16, 0:16])
            for tx in T.thread_binding(0, _LANES, "threadIdx.x"):
                for s in T.serial(local_size):
                    row, col = T.meta_var(inverse(tx, s))
                    C[row, col] = C_warp[tx, s]

    return desc, impl


ROCM_MFMA_fill_16x16_f32_INTRIN = "ROCM_mfma_fill_16x16_f32"
ROCM_MFMA_fill_16x16_i32_INTRIN = "ROCM_mfma_fill_16x16_i32"
ROCM_MFMA_LOAD_16x16_A_SHARED_s8_INTRIN = "rocm_mfma_load_16x16_a_shared_s8"
ROCM_MFMA_LOAD_16x16_B_SHARED_s8_INTRIN = "rocm_mfma_load_b_16x16_shared_s8"
ROCM_MFMA_LOAD_16x16_A_SHARED_f16_INTRIN = "rocm_mfma_load_16x16_a_shared_f16"
ROCM_MFMA_LOAD_16x16_B_SHARED_f16_INTRIN = "rocm_mfma_load_b_16x16_shared_f16"
ROCM_MFMA_LOAD_16x4_A_SHARED_f32_INTRIN = "rocm_mfma_load_16x4_a_shared_f32"
ROCM_MFMA_LOAD_16x4_B_SHARED_f32_INTRIN = "rocm_mfma_load_b_16x4_shared_f32"
ROCM_MFMA_f32f32f32_INTRIN = "rocm_mfma_f32f32f32"
ROCM_MFMA_f16f16f32_INTRIN = "rocm_mfma_f16f16f32"
ROCM_MFMA_s8s8s32_INTRIN = "rocm_mfma_s8s8s32"
ROCM_MFMA_STORE_16x16_s32_INTRIN = "rocm_mfma_store_16x16_s32"
ROCM_MFMA_STORE_16x16_f32_INTRIN = "rocm_mfma_store_16x16_f32"

for _name, _intrin in {
    ROCM_MFMA_fill_16x16_f32_INTRIN: get_mma_fill_intrin("float32", 4),
    ROCM_MFMA_fill_16x16_i32_INTRIN: get_mma_fill_intrin("int32", 4),
    ROCM_MFMA_LOAD_16x16_A_SHARED_s8_INTRIN: get_mfma_load_intrin(16, "int8", "shared"),
    ROCM_MFMA_LOAD_16x16_B_SHARED_s8_INTRIN: get_mfma_load_intrin(16, "int8", "shared", is_b=True),
    ROCM_MFMA_LOAD_16x16_A_SHARED_f16_INTRIN: get_mfma_load_intrin(16, "float16", "shared"),
    ROCM_MFMA_LOAD_16x16_B_SHARED_f16_INTRIN: get_mfma_load_intrin(16, "float16", "shared", is_b=True),
    ROCM_MFMA_LOAD_16x4_A_SHARED_f32_INTRIN: get_mfma_load_intrin(4, "float32", "shared"),
    ROCM_MFMA_LOAD_16x4_B_SHARED_f32_INTRIN: get_mfma_load_intrin(4, "float32", "shared", is_b=True),
    ROCM_MFMA_f32f32f32_INTRIN: get_mfma_intrin(4, "float32", "float32"),
    ROCM_MFMA_f16f16f32_INTRIN: get_mfma_intrin(16, "float16", "float32"),
    ROCM_MFMA_s8s8s32_INTRIN: get_mfma_intrin(16, "int8", "int32"),
    ROCM_MFMA_STORE_16x16_s32_INTRIN: get_mfma_store_intrin(4, "int32", "global"),
    ROCM_MFMA_STORE_16x16_f32_INTRIN: get_mfma_store_intrin(4, "float32", "global"),
}.items():
    TensorIntrin.register(_name, *_intrin, override=True)

__all__ = ["AMDGPU_SDOT4_INTRIN"] + [n for n in dir() if n.startswith("ROCM_MFMA_")] + [
    "get_mfma_intrin", "get_mfma_load_intrin", "get_mfma_store_intrin", "get_mma_fill_intrin",
    "shared_16x4_to_local_64x1_layout_A", "shared_4x16_to_local_64x1_layout_B",
    "shared_16x16_to_local_64x4_layout_A", "shared_16x16_to_local_64x4_layout_B",
    "shared_16x16_to_local_64x4_layout_C", "thread_id_shared_access_64x1_to_16x4_layout_A",
    "thread_id_shared_access_64x1_to_4x16_layout_B", "thread_id_shared_access_64x4_to_16x16_layout_A",
    "thread_id_shared_access_64x4_to_16x16_layout_B", "thread_id_shared_access_64x4_to_16x16_layout_C"]
