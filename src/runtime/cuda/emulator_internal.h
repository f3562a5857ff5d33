// The CUDA emulator's parts, shared by its files (emulator.cc: fibers, the block scheduler and
// Program; emulator_source.cc: reading the kernel source; emulator_memory.cc: device memory and
// memory faults). Private to src/runtime/cuda.
#pragma once

#include <setjmp.h>
#include <signal.h>

#include <cstdint>
#include <string>
#include <vector>

namespace tessera {
namespace runtime {
namespace cuda {
namespace emu {
namespace internal {

/*! \brief Throws tessera::Error (kRuntime) with `message`. */
[[noreturn]] void LaunchError(const std::string& message);

// ---- The source (emulator_source.cc) ----

/*! \brief A kernel of the source: its name and the text after its signature, to the next one. */
struct KernelInfo {
  std::string name;
  size_t body_begin = 0, body_end = 0;
};

/*! \brief The `extern "C" __global__ void` kernels of `source`, in order. */
std::vector<KernelInfo> ScanKernels(const std::string& source);
/*! \brief Whether the source synchronises threads (barriers, warp shuffles and votes). */
bool UsesSynchronisation(const std::string& source);
/*! \brief Bytes of `__shared__ TYPE NAME[N]...;` declarations in [begin, end). */
int64_t StaticSharedBytes(const std::string& source, size_t begin, size_t end);

// ---- Memory faults inside a launch (emulator_memory.cc) ----

extern thread_local sigjmp_buf* t_fault_jump;
extern thread_local void* t_fault_address;
extern thread_local int t_fault_signal;

/*! \brief For the duration of a launch: SIGSEGV/SIGBUS jump back to *t_fault_jump (on an
 *  alternate stack: a fiber's stack may be what overflowed); the old handlers come back after. */
class FaultGuard {
 public:
  FaultGuard();
  ~FaultGuard();
  FaultGuard(const FaultGuard&) = delete;
  FaultGuard& operator=(const FaultGuard&) = delete;

 private:
  stack_t old_stack_{};
  struct sigaction old_segv_ {};
  struct sigaction old_bus_ {};
};

}  // namespace internal
}  // namespace emu
}  // namespace cuda
}  // namespace runtime
}  // namespace tessera
