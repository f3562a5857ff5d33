"""Markers of the CUDA tests: compile-only tests need NVRTC; runtime tests need a GPU and its driver,
or the CPU emulator (TESSERA_CUDA_EMULATOR=1), which also builds without NVRTC."""

import pytest

from tessera import _core

NVRTC_OK, NVRTC_WHY = _core.nvrtc_status()
GPU_OK, GPU_WHY = _core.cuda_driver_status()
EMULATED = _core.cuda_emulator_enabled()

requires_nvrtc = pytest.mark.skipif(not NVRTC_OK, reason=f"NVRTC not available: {NVRTC_WHY}")
requires_gpu = pytest.mark.skipif(
    not GPU_OK,
    reason=f"no CUDA GPU/driver available ({GPU_WHY}); set TESSERA_CUDA_EMULATOR=1 to run these "
    "tests on the CPU emulator")
# Building for "cuda" needs NVRTC, except under the emulator.
requires_cuda_build = pytest.mark.skipif(
    not NVRTC_OK and not EMULATED, reason=f"NVRTC not available: {NVRTC_WHY}")
requires_emulator = pytest.mark.skipif(
    not EMULATED, reason="runs only on the CUDA emulator (set TESSERA_CUDA_EMULATOR=1)")
not_emulated = pytest.mark.skipif(
    EMULATED, reason="the CUDA emulator's arrays live in host memory and are not exported to "
    "torch/cupy through DLPack")
