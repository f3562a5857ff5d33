"""AMDGPU tensor intrinsics under TVM's names: ``sdot4``, the 4-element int8 dot product.

tessera has no AMDGPU code generator: the implementation is the portable dot-product code of
:mod:`.dot_product_common` (the same results as ``llvm.amdgcn.sdot4``).
"""

from .dot_product_common import get_dp4a_intrin, register_all

AMDGPU_SDOT4_INTRIN = "sdot4"

register_all({AMDGPU_SDOT4_INTRIN: get_dp4a_intrin("int8", "int8", "int32")})

__all__ = ["AMDGPU_SDOT4_INTRIN"]
