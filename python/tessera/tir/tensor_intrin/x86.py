"""x86 tensor intrinsics for the host target: vector micro-kernels of AVX2 (256-bit) and
AVX-512 (512-bit) width.

The implementations are vector TensorIR (``T.Ramp`` / ``T.Broadcast`` or a ``T.vectorized``
loop), which the host code generator emits as GCC vector code compiled with ``-march=native``:
on an AVX2 host ``fma_8_f32_avx2`` becomes one ``vfmadd231ps`` on a ``ymm`` register; the
512-bit kernels run on an AVX2 host too (the C compiler splits their vectors).

``fma_<L>_f32_*``: ``C[0:L] += A[0] * B[0:L]`` (float32), the inner step of a matmul whose
``j`` loop is split by ``L`` and whose reduction loop is outside::

    for i, j_o, k, j_i(L):  C[i, j_o * L + j_i] += A[i, k] * B[k, j_o * L + j_i]

``tessera_ukr_f32_<MR>x<NR>_k<K>`` (:func:`micro_kernel_intrin`): the register-tile
micro-kernel of a matmul over packed panels (the automatic schedule's "intrinsic" choice).

``dot_<L>x4_*``: ``C[i] += sum_k u8(A[k]) * i8(B[i, k])`` to int32 for ``i < L``, ``k < 4``
(the layout of TVM's ``dot_16x4_vnni``).

>>> from tessera.tir.tensor_intrin.x86 import host_fma_f32_intrin
>>> sch.tensorize(j_i, host_fma_f32_intrin())
"""

from ... import _core
from ...script import tir as T
from ..schedule.tensor_intrin import TensorIntrin


def _fma_desc(lanes):
    @T.prim_func
    def desc(a: T.handle, b: T.handle, c: T.handle):
        A = T.match_buffer(a, (1,), "float32", offset_factor=1)
        B = T.match_buffer(b, (lanes,), "float32", offset_factor=1)
        C = T.match_buffer(c, (lanes,), "float32", offset_factor=1)
        with T.block("root"):
            T.reads(C[0:lanes], A[0:1], B[0:lanes])
            T.writes(C[0:lanes])
            for j in T.serial(lanes):
                with T.block("update"):
                    vj = T.axis.remap("S", [j])
                    C[vj] = C[vj] + A[0] * B[vj]

    return desc


def _fma_impl(lanes):
    @T.prim_func
    def impl(a: T.handle, b: T.handle, c: T.handle):
        A = T.match_buffer(a, (1,), "float32", offset_factor=1)
        B = T.match_buffer(b, (lanes,), "float32", offset_factor=1)
        C = T.match_buffer(c, (lanes,), "float32", offset_factor=1)
        with T.block("root"):
            T.reads(C[0:lanes], A[0:1], B[0:lanes])
            T.writes(C[0:lanes])
            C[T.Ramp(0, 1, lanes)] = C[T.Ramp(0, 1, lanes)] + T.Broadcast(A[0], lanes) * B[T.Ramp(0, 1, lanes)]

    return impl


def _dot_desc(lanes):
    @T.prim_func
    def desc(a: T.handle, b: T.handle, c: T.handle):
        A = T.match_buffer(a, (4,), "uint8", offset_factor=1)
        B = T.match_buffer(b, (lanes, 4), "int8", offset_factor=1)
        C = T.match_buffer(c, (lanes,), "int32", offset_factor=1)
        with T.block("root"):
            T.reads(C[0:lanes], A[0:4], B[0:lanes, 0:4])
            T.writes(C[0:lanes])
            for i in T.serial(lanes):
                for k in T.serial(4):
                    with T.block("update"):
                        vi, vk = T.axis.remap("SR", [i, k])
                        C[vi] = C[vi] + T.Cast("int32", A[vk]) * T.Cast("int32", B[vi, vk])

    return desc


def _dot_impl(lanes):
    @T.prim_func
    def impl(a: T.handle, b: T.handle, c: T.handle):
        A = T.match_buffer(a, (4,), "uint8", offset_factor=1)
        B = T.match_buffer(b, (lanes, 4), "int8", offset_factor=1)
        C = T.match_buffer(c, (lanes,), "int32", offset_factor=1)
        with T.block("root"):
            T.reads(C[0:lanes], A[0:4], B[0:lanes, 0:4])
            T.writes(C[0:lanes])
            for i in T.vectorized(lanes):
                C[i] = (C[i] + T.Cast("int32", A[0]) * T.Cast("int32", B[i, 0])
                        + T.Cast("int32", A[1]) * T.Cast("int32", B[i, 1])
                        + T.Cast("int32", A[2]) * T.Cast("int32", B[i, 2])
                        + T.Cast("int32", A[3]) * T.Cast("int32", B[i, 3]))

    return impl


AVX2_FMA_F32_INTRIN = "fma_8_f32_avx2"
AVX512_FMA_F32_INTRIN = "fma_16_f32_avx512"
AVX2_DOT_8x4_INTRIN = "dot_8x4_avx2"
AVX512_DOT_16x4_INTRIN = "dot_16x4_avx512"
VNNI_DOT_16x4_INTRIN = "dot_16x4_vnni"

for _name, _lanes in ((AVX2_FMA_F32_INTRIN, 8), (AVX512_FMA_F32_INTRIN, 16)):
    TensorIntrin.register(_name, _fma_desc(_lanes), _fma_impl(_lanes), override=True)
# TVM's names of the 16x4 description and VNNI implementation.
dot_product_16x4_u8i8i32_desc = _dot_desc(16)
dot_product_16x4_u8i8i32_vnni = _dot_impl(16)

for _name, _lanes in ((AVX2_DOT_8x4_INTRIN, 8), (AVX512_DOT_16x4_INTRIN, 16), (VNNI_DOT_16x4_INTRIN, 16)):
    TensorIntrin.register(_name, _dot_desc(_lanes), _dot_impl(_lanes), override=True)


def host_lanes32():
    """The number of 32-bit lanes of the host's widest vector registers (8 on AVX2, 16 on
    AVX-512)."""
    return max(4, _core.host_vector_bits() // 32)


def host_fma_f32_intrin():
    """The float32 FMA intrinsic of the host's vector width."""
    return AVX512_FMA_F32_INTRIN if host_lanes32() >= 16 else AVX2_FMA_F32_INTRIN


def micro_kernel_intrin(mr, nr, k, global_c=False):
    """The name of the register-tile micro-kernel intrinsic ``tessera_ukr_f32_<MR>x<NR>_k<K>``
    (made on first use of the name, in C++): ``C[MR, NR] += A[K, MR]^T B[K, NR]`` in float32,
    A an MR-row panel and B an NR-wide panel packed k-major (contiguous), C the tile in
    ``"local"`` memory (any row stride). Its implementation calls the C function
    ``tessera_ukr_f32_<MR>x<NR>`` that the host code generator defines in the module: inline
    assembly keeping the tile in registers over the whole reduction, AVX-512 (zmm) where the C
    compiler targets AVX-512F and NR % 16 == 0 and MR * NR / 16 + NR / 16 + 1 <= 32, else
    AVX2/FMA (ymm) where it targets AVX2 and FMA and MR * NR / 8 + NR / 8 + 1 <= 16, a C loop
    nest elsewhere.

    Tensorize the reduction loop of a block ``C_local[i, j] += A_panels[i // MR, k, i % MR] *
    B_panels[j // NR, k, j % NR]`` whose loops are ``k, i_inner(MR), j_inner(NR)``.

    With ``global_c``, ``tessera_ukr_f32_<MR>x<NR>_k<K>_global``: the same product with C in
    ``"global"`` memory (a tile of the output itself, any row stride), so that a reduction
    split into k blocks of K accumulates into the output block after block."""
    return f"tessera_ukr_f32_{int(mr)}x{int(nr)}_k{int(k)}" + ("_global" if global_c else "")


def host_dot_intrin():
    """The u8 x i8 -> i32 dot-product intrinsic of the host's vector width."""
    return AVX512_DOT_16x4_INTRIN if host_lanes32() >= 16 else AVX2_DOT_8x4_INTRIN


__all__ = ["AVX2_DOT_8x4_INTRIN", "AVX2_FMA_F32_INTRIN", "AVX512_DOT_16x4_INTRIN", "AVX512_FMA_F32_INTRIN",
           "VNNI_DOT_16x4_INTRIN", "dot_product_16x4_u8i8i32_desc",
           "dot_product_16x4_u8i8i32_vnni", "host_dot_intrin", "host_fma_f32_intrin", "host_lanes32",
           "micro_kernel_intrin"]
