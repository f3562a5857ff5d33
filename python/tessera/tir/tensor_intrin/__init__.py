"""Tensor intrinsics for tessera's targets, registered on import (``tir.TensorIntrin.get``).

- :mod:`.x86`: float32 FMA and uint8 x int8 -> int32 dot-product micro-kernels for the host
  (AVX2 and AVX-512 widths).
- :mod:`.cuda`: tensor-core ``wmma`` 16x16x16 fragment load / fill / mma / store for the CUDA
  target.
- :mod:`.arm_cpu`, :mod:`.hexagon`, :mod:`.rocm`, :mod:`.dot_product_common`: TVM's dot-product
  intrinsics of other targets under TVM's names (Arm ``sdot``/NEON, Hexagon ``vrmpy``/``vdmpy``,
  AMDGPU ``sdot4``, ``dp4a``), implemented by portable vector code that tessera's targets lower.
"""

from . import arm_cpu, cuda, dot_product_common, hexagon, rocm, x86  # noqa: F401 - registers the intrinsics

__all__ = ["arm_cpu", "cuda", "dot_product_common", "hexagon", "rocm", "x86"]
