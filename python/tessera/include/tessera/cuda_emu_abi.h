/* The interface between tessera's CUDA emulator (src/runtime/cuda/emulator.cc) and the kernels
 * it compiles for the host (tessera/cuda_emu.h). Plain C, shared by both sides. */
#ifndef TESSERA_CUDA_EMU_ABI_H_
#define TESSERA_CUDA_EMU_ABI_H_

#ifdef __cplusplus
extern "C" {
#endif

/* The built-in variables of the CUDA thread that runs now: x, y, z each. */
typedef struct TesseraEmuThread {
  unsigned int thread_idx[3];
  unsigned int block_idx[3];
  unsigned int block_dim[3];
  unsigned int grid_dim[3];
} TesseraEmuThread;

/* Warp-level operations, the `kind` of TesseraEmuState::warp_op. */
enum {
  TESSERA_EMU_SYNCWARP = 0,
  TESSERA_EMU_SHFL_IDX = 1,
  TESSERA_EMU_SHFL_UP = 2,
  TESSERA_EMU_SHFL_DOWN = 3,
  TESSERA_EMU_SHFL_XOR = 4,
  TESSERA_EMU_BALLOT = 5,     /* value: the predicate; returns the mask of lanes with it true */
  TESSERA_EMU_ACTIVEMASK = 6  /* no synchronisation: the lanes of the warp still running */
};

/* Set by the emulator in every kernel library it loads (symbol __tessera_emu_state). */
typedef struct TesseraEmuState {
  const TesseraEmuThread* cur; /* the running CUDA thread */
  void* sched;                 /* the block scheduler */
  void (*syncthreads)(void* sched);
  unsigned long long (*warp_op)(void* sched, int kind, unsigned int mask,
                                unsigned long long value, int arg, int width);
} TesseraEmuState;

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_CUDA_EMU_ABI_H_ */
