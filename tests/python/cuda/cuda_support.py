"""Markers of the CUDA tests: compile-only tests need NVRTC; runtime tests need a GPU and its driver."""

import pytest

from tessera import _core

NVRTC_OK, NVRTC_WHY = _core.nvrtc_status()
GPU_OK, GPU_WHY = _core.cuda_driver_status()

requires_nvrtc = pytest.mark.skipif(not NVRTC_OK, reason=f"NVRTC not available: {NVRTC_WHY}")
requires_gpu = pytest.mark.skipif(not GPU_OK, reason=f"no CUDA GPU/driver available ({GPU_WHY})")
