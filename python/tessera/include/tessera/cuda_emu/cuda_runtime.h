/* Stand-in for CUDA's <cuda_runtime.h> under tessera's CPU emulator: everything lives in tessera/cuda_emu.h. */
#pragma once
#include <tessera/cuda_emu.h>
