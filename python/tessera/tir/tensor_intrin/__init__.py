"""Tensor intrinsics for tessera's targets, registered on import (``tir.TensorIntrin.get``).

- :mod:`.x86`: float32 FMA and uint8 x int8 -> int32 dot-product micro-kernels for the host
  (AVX2 and AVX-512 widths).
- :mod:`.cuda`: tensor-core ``wmma`` 16x16x16 fragment load / fill / mma / store for the CUDA
  target.
"""

from . import cuda, x86  # noqa: F401 - registers the intrinsics

__all__ = ["cuda", "x86"]
