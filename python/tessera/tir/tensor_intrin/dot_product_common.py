"""Dot-product tensor intrinsics shared by several targets' modules.

``row_dot_intrin(rows, depth, ...)``: ``C[i] += sum_k cast(A[k]) * cast(B[i, k])`` for
``i < rows``, ``k < depth`` (the layout of x86 VNNI, Arm SDOT/UDOT and Hexagon VRMPY/VDMPY).

``get_dp4a_intrin(dtype_a, dtype_b, dtype_c)``: ``C[0] += sum_k cast(A[k]) * cast(B[k])`` for
``k < 4``, with ``A`` and ``B`` in shared memory and ``C`` in local memory (CUDA's ``__dp4a``,
AMDGPU's ``sdot4``).

The implementations are portable TensorIR with the instruction's arithmetic (the products of one
output summed in the order of ``k``, a vectorized loop over the rows), so every tessera target
lowers them: on the host the code generator emits vector code for the row loop. tessera has no
code generator for the Arm, Hexagon or AMDGPU instructions these intrinsics are named after; the
names are TVM's, so that schedules written for TVM tensorize the same blocks.

>>> desc, impl = row_dot_intrin(4, 4, "int8", "int8", "int32")
>>> TensorIntrin.register("my_dot_4x4", desc, impl)
"""

from ...script import tir as T
from ..schedule.tensor_intrin import TensorIntrin


def _products(A, B, row, depth, dtype_c):
    """``cast(A[0]) * cast(B[row, 0]) + ... `` over ``k < depth`` (B 1-D when row is None)."""
    total = None
    for k in range(depth):
        b = B[k] if row is None else B[row, k]
        term = T.Cast(dtype_c, A[k]) * T.Cast(dtype_c, b)
        total = term if total is None else total + term
    return total


def row_dot_intrin(rows, depth, dtype_a, dtype_b, dtype_c, scope="global"):
    """(desc, impl) of ``C[i] += sum_k cast(A[k]) * cast(B[i, k])``, ``A: (depth,)``,
    ``B: (rows, depth)``, ``C: (rows,)``, all in memory ``scope``."""

    @T.prim_func
    def desc(a: T.handle, b: T.handle, c: T.handle):
        A = T.match_buffer(a, (depth,), dtype_a, offset_factor=1, scope=scope)
        B = T.match_buffer(b, (rows, depth), dtype_b, offset_factor=1, scope=scope)
        C = T.match_buffer(c, (rows,), dtype_c, offset_factor=1, scope=scope)
        with T.block("root"):
            T.reads(C[0:rows], A[0:depth], B[0:rows, 0:depth])
            T.writes(C[0:rows])
            for i in T.serial(rows):
                for k in T.serial(depth):
                    with T.block("update"):
                        vi, vk = T.axis.remap("SR", [i, k])
                        C[vi] = C[vi] + T.Cast(dtype_c, A[vk]) * T.Cast(dtype_c, B[vi, vk])

    @T.prim_func
    def impl(a: T.handle, b: T.handle, c: T.handle):
        A = T.match_buffer(a, (depth,), dtype_a, offset_factor=1, scope=scope)
        B = T.match_buffer(b, (rows, depth), dtype_b, offset_factor=1, scope=scope)
        C = T.match_buffer(c, (rows,), dtype_c, offset_factor=1, scope=scope)
        with T.block("root"):
            T.reads(C[0:rows], A[0:depth], B[0:rows, 0:depth])
            T.writes(C[0:rows])
            for i in T.vectorized(rows):
                C[i] = C[i] + _products(A, B, i, depth, dtype_c)

    return desc, impl


def get_dp4a_intrin(dtype_a, dtype_b, dtype_c):
    """(desc, impl) of the 4-element dot product ``C[0] += sum_k cast(A[k]) * cast(B[k])``;
    ``dtype_c`` uint32 needs uint8 operands (as CUDA's ``__dp4a``)."""
    if dtype_c == "uint32" and not dtype_a == dtype_b == "uint8":
        raise ValueError(f"a uint32 dp4a takes uint8 operands, got {dtype_a} and {dtype_b}")

    @T.prim_func
    def desc(a: T.handle, b: T.handle, c: T.handle):
        A = T.match_buffer(a, (4,), dtype_a, offset_factor=1, align=4, scope="shared")
        B = T.match_buffer(b, (4,), dtype_b, offset_factor=1, align=4, scope="shared")
        C = T.match_buffer(c, (1,), dtype_c, offset_factor=1, align=4, scope="local")
        with T.block("root"):
            T.reads(C[0], A[0:4], B[0:4])
            T.writes(C[0])
            for i in range(0, 4):
                with T.block("update"):
                    vi = T.axis.remap("R", [i])
                    C[0] = C[0] + T.Cast(dtype_c, A[vi]) * T.Cast(dtype_c, B[vi])

    @T.prim_func
    def impl(a: T.handle, b: T.handle, c: T.handle):
        A = T.match_buffer(a, (4,), dtype_a, offset_factor=1, align=4, scope="shared")
        B = T.match_buffer(b, (4,), dtype_b, offset_factor=1, align=4, scope="shared")
        C = T.match_buffer(c, (1,), dtype_c, offset_factor=1, align=4, scope="local")
        with T.block("root"):
            T.reads(C[0], A[0:4], B[0:4])
            T.writes(C[0])
            C[0] = C[0] + _products(A, B, None, 4, dtype_c)

    return desc, impl


def register_all(table):
    """Register ``{name: (desc, impl)}`` (replacing earlier registrations of the names)."""
    for name, (desc, impl) in table.items():
        TensorIntrin.register(name, desc, impl, override=True)


DP4A_S8S8S32_INTRIN = "dp4a_s8s8s32"
DP4A_U8S8S32_INTRIN = "dp4a_u8s8s32"
DP4A_S8U8S32_INTRIN = "dp4a_s8u8s32"
DP4A_U8U8U32_INTRIN = "dp4a_u8u8u32"

register_all({
    DP4A_S8S8S32_INTRIN: get_dp4a_intrin("int8", "int8", "int32"),
    DP4A_U8S8S32_INTRIN: get_dp4a_intrin("uint8", "int8", "int32"),
    DP4A_S8U8S32_INTRIN: get_dp4a_intrin("int8", "uint8", "int32"),
    DP4A_U8U8U32_INTRIN: get_dp4a_intrin("uint8", "uint8", "uint32"),
})

__all__ = ["DP4A_S8S8S32_INTRIN", "DP4A_S8U8S32_INTRIN", "DP4A_U8S8S32_INTRIN", "DP4A_U8U8U32_INTRIN",
           "get_dp4a_intrin", "register_all", "row_dot_intrin"]
