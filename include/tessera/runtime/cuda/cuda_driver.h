// The CUDA driver API, loaded at run time (libcuda.so.1): devices, memory, modules, launches.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace tessera {
namespace runtime {
namespace cuda {

/*! \brief Whether the real driver (libcuda) has been loaded in this process. */
bool RealDriverLoaded();

/*! \brief Whether the driver loads, initialises and sees at least one GPU; otherwise `why`
 *  says which step failed. Never throws. */
bool DriverAvailable(std::string* why = nullptr);

/*! \brief Compute capability of GPU `device` as major*10+minor (80 for sm_80). Throws
 *  tessera::Error (kRuntime) "CUDA driver not found: ..." without a driver. */
int ComputeCapability(int device);

/*! \brief The multiprocessor count and the dynamic shared memory a block may opt in to of GPU
 *  `device`, read from the real driver; false (nothing set) without one, under the emulator,
 *  or on any driver error. Never throws. */
bool DeviceLimits(int device, int* sm_count, int64_t* shared_memory_optin_bytes);

/*! \brief Device memory of GPU `device` (the primary context is made current). */
void* DeviceAlloc(int device, size_t bytes);
void DeviceFree(int device, void* ptr);
void CopyHostToDevice(int device, void* dst, const void* src, size_t bytes);
void CopyDeviceToHost(int device, void* dst, const void* src, size_t bytes);
void CopyDeviceToDevice(int device, void* dst, const void* src, size_t bytes);
/*! \brief Wait for the work queued on GPU `device`. */
void Synchronize(int device);

/*! \brief Compiled kernels (PTX) of one build, loaded into each device's context on first use;
 *  under the emulator, its CUDA C `source` is compiled for the host on the first launch. */
class KernelModule {
 public:
  explicit KernelModule(std::string ptx, std::string source = "");
  ~KernelModule();
  /*! \brief Launch `kernel` on the current device: dims = grid x/y/z, block x/y/z, dynamic
   *  shared bytes; `num_args` < 0 when unknown. Throws tessera::Error (kRuntime). */
  void Launch(const std::string& kernel, const int64_t* dims, void** args, int num_args = -1);
  const std::string& ptx() const { return ptx_; }
  const std::string& source() const { return source_; }

 private:
  struct Impl;
  std::string ptx_;
  std::string source_;
  std::unique_ptr<Impl> impl_;
};

/*! \brief The launcher installed in host libraries of "cuda" builds (C calling convention:
 *  returns 0, or nonzero with a message in `err`). `module` is a KernelModule. */
int32_t LaunchKernel(void* module, const char* kernel, const int64_t* dims, void** args,
                     int32_t num_args, char* err, int32_t err_len);

/*! \brief The workspace allocator installed in host libraries of "cuda" builds: device memory on
 *  the current device (null with a message in `err` on failure); the free waits for the device. */
void* AllocWorkspace(void* module, size_t bytes, char* err, int32_t err_len);
void FreeWorkspace(void* module, void* ptr);

/*! \brief The GPU that launches go to (set by calls with arrays on it). */
void SetCurrentDevice(int device);

}  // namespace cuda
}  // namespace runtime
}  // namespace tessera
