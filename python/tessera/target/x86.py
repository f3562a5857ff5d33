"""x86 helpers of ``tvm.target.x86``."""

from .codegen import target_has_features

__all__ = ["get_simd_32bit_lanes"]


def get_simd_32bit_lanes():
    """32-bit lanes of the current target's best vector unit: 16 with AVX-512 (F and BW), 8 with
    AVX2, else 4. Needs a current target (``with Target(...):``)."""
    if target_has_features(["avx512bw", "avx512f"]):
        return 16
    if target_has_features("avx2"):
        return 8
    return 4
