/* Stand-in for CUDA's <cuda_fp16.h> under tessera's CPU emulator: everything lives in tessera/cuda_emu.h. */
#pragma once
#include <tessera/cuda_emu.h>
