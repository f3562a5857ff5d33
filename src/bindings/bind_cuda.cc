// Bindings of the CUDA runtime: availability of NVRTC and the driver, compile-only NVRTC,
// device synchronisation.
#include "common.h"
#include "tessera/runtime/cuda/cuda_driver.h"
#include "tessera/runtime/cuda/nvrtc.h"

namespace tessera {
namespace bindings {

void BindCUDA(nb::module_& m) {
  namespace cuda = runtime::cuda;
  m.def("nvrtc_status", [] {
    std::string why;
    bool ok = cuda::NVRTCAvailable(&why);
    return nb::make_tuple(ok, why);
  });
  m.def("cuda_driver_status", [] {
    std::string why;
    bool ok = cuda::DriverAvailable(&why);
    return nb::make_tuple(ok, why);
  });
  m.def("nvrtc_version", &cuda::NVRTCVersion);
  m.def(
      "nvrtc_compile",
      [](const std::string& source, const std::string& arch, const std::string& cache_dir,
         std::vector<std::string> options) {
        nb::gil_scoped_release release;
        return cuda::CompileCUDA(source, arch, cache_dir, options);
      },
      "source"_a, "arch"_a, "cache_dir"_a, "options"_a = std::vector<std::string>{},
      "Compile CUDA C to PTX with NVRTC (no GPU needed); cached in cache_dir.");
  m.def("nvrtc_invocation_count", &cuda::NVRTCInvocationCount);
  m.def("cuda_compute_capability", &cuda::ComputeCapability, "device"_a);
  m.def("cuda_sync", [](int device) {
    nb::gil_scoped_release release;
    cuda::Synchronize(device);
  });
  m.def("cuda_copy_device_to_device", [](int device, uintptr_t dst, uintptr_t src, size_t bytes) {
    cuda::CopyDeviceToDevice(device, reinterpret_cast<void*>(dst),
                             reinterpret_cast<const void*>(src), bytes);
  });
}

}  // namespace bindings
}  // namespace tessera
