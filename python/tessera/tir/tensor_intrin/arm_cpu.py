"""Arm CPU tensor intrinsics under TVM's names: the 4x4 int8 dot products of NEON and of the
``sdot``/``udot`` instructions, and the 4-element dot products (``dp4a_*``).

tessera has no AArch64 code generator: the implementations are the portable dot-product code of
:mod:`.dot_product_common` (the same results), so schedules written for TVM's Arm intrinsics
tensorize and run on tessera's targets.
"""

from .dot_product_common import (DP4A_S8S8S32_INTRIN, DP4A_S8U8S32_INTRIN, DP4A_U8S8S32_INTRIN,
                                 DP4A_U8U8U32_INTRIN, register_all, row_dot_intrin)

ARM_DOT_4x4_i8_NEON_INTRIN = "dot_4x4_i8i8s32_neon"
ARM_DOT_4x4_i8_SDOT_INTRIN = "dot_4x4_i8i8s32_sdot"
ARM_DOT_4x4_u8_UDOT_INTRIN = "dot_4x4_u8u8u32_udot"
ARM_DOT_4x4_u8_HDOT_INTRIN = "dot_4x4_u8u8i32_hdot"

register_all({
    ARM_DOT_4x4_i8_NEON_INTRIN: row_dot_intrin(4, 4, "int8", "int8", "int32"),
    ARM_DOT_4x4_i8_SDOT_INTRIN: row_dot_intrin(4, 4, "int8", "int8", "int32"),
    ARM_DOT_4x4_u8_UDOT_INTRIN: row_dot_intrin(4, 4, "uint8", "uint8", "uint32"),
    ARM_DOT_4x4_u8_HDOT_INTRIN: row_dot_intrin(4, 4, "uint8", "uint8", "int32"),
})

__all__ = ["ARM_DOT_4x4_i8_NEON_INTRIN", "ARM_DOT_4x4_i8_SDOT_INTRIN", "ARM_DOT_4x4_u8_HDOT_INTRIN",
           "ARM_DOT_4x4_u8_UDOT_INTRIN", "DP4A_S8S8S32_INTRIN", "DP4A_S8U8S32_INTRIN", "DP4A_U8S8S32_INTRIN",
           "DP4A_U8U8U32_INTRIN"]
