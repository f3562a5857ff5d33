"""Hexagon HVX tensor intrinsics under TVM's names: the 32x4 byte dot products of ``vrmpy`` and
the 32x2 int16 dot product of ``vdmpy``, in global memory or in VTCM (``global.vtcm``).

tessera has no Hexagon code generator: the implementations are the portable dot-product code of
:mod:`.dot_product_common` (the same results), so schedules written for TVM's Hexagon intrinsics
tensorize and run on tessera's targets.
"""

from .dot_product_common import register_all, row_dot_intrin

VRMPY_u8u8i32_INTRIN = "dot_32x4_u8u8i32_vrmpy"
VRMPY_u8i8i32_INTRIN = "dot_32x4_u8i8i32_vrmpy"
VDMPY_i16i16i32_INTRIN = "dot_product_32x2_i16i16i32_vdmpy"
VRMPY_u8u8i32_VTCM_INTRIN = "dot_32x4_u8u8i32_vtcm_vrmpy"
VRMPY_u8i8i32_VTCM_INTRIN = "dot_32x4_u8i8i32_vtcm_vrmpy"

register_all({
    VRMPY_u8u8i32_INTRIN: row_dot_intrin(32, 4, "uint8", "uint8", "int32"),
    VRMPY_u8i8i32_INTRIN: row_dot_intrin(32, 4, "uint8", "int8", "int32"),
    VDMPY_i16i16i32_INTRIN: row_dot_intrin(32, 2, "int16", "int16", "int32"),
    VRMPY_u8u8i32_VTCM_INTRIN: row_dot_intrin(32, 4, "uint8", "uint8", "int32", "global.vtcm"),
    VRMPY_u8i8i32_VTCM_INTRIN: row_dot_intrin(32, 4, "uint8", "int8", "int32", "global.vtcm"),
})

__all__ = ["VDMPY_i16i16i32_INTRIN", "VRMPY_u8i8i32_INTRIN", "VRMPY_u8i8i32_VTCM_INTRIN",
           "VRMPY_u8u8i32_INTRIN", "VRMPY_u8u8i32_VTCM_INTRIN"]
