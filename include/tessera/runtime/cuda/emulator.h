// A CPU emulator of CUDA devices: runs the CUDA C of "cuda" builds, compiled for the host with
// the C++ compiler against tessera/cuda_emu.h, so that they run where there is no GPU.
// cuda_driver.cc serves every entry point from here when TESSERA_CUDA_EMULATOR=1 (or after
// EnableEmulator()).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tessera {
namespace runtime {
namespace cuda {
namespace emu {

/*! \brief Whether the driver layer serves the emulated device: TESSERA_CUDA_EMULATOR=1 in the
 *  environment when first asked, or EnableEmulator(). */
bool Enabled();

/*! \brief Switch the driver layer to the emulator. Throws tessera::Error (kRuntime) when the
 *  real driver has already been loaded in this process. */
void EnableEmulator();

/*! \brief The folder holding tessera/cuda_emu.h (the package's include folder). */
void SetIncludeDir(const std::string& dir);
std::string IncludeDir();

/*! \brief Compute capability of the emulated GPU: 80, or TESSERA_CUDA_EMULATOR_ARCH=sm_NN. */
int ComputeCapability();

/*! \brief Host memory standing in for device memory (256-byte aligned). */
void* Alloc(size_t bytes);
void Free(void* ptr);

/*! \brief The kernels named in CUDA C `source` (extern "C" __global__ [...] void NAME(). */
std::vector<std::string> KernelNames(const std::string& source);

/*! \brief CUDA C compiled for the host, loaded, ready to launch. Compilation is cached by
 *  content under the cache dir ($TESSERA_CACHE_DIR or ~/.cache/tessera, subfolder cuda_emu). */
class Program {
 public:
  /*! \brief Compiles `source`. Throws tessera::Error (kBuild) with the compiler's output, or
   *  when the source defines no kernel. */
  explicit Program(const std::string& source);
  ~Program();
  /*! \brief Run `kernel`: dims = grid x/y/z, block x/y/z, dynamic shared bytes; `args` points
   *  to each argument's value; `num_args` < 0 skips the argument count check. Synchronous.
   *  Throws tessera::Error (kRuntime) for a missing kernel, bad launch dimensions, or a
   *  deadlock. */
  void Launch(const std::string& kernel, const int64_t* dims, void** args, int num_args = -1);
  const std::vector<std::string>& kernels() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace emu
}  // namespace cuda
}  // namespace runtime
}  // namespace tessera
