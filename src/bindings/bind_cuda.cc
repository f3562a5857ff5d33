// Bindings of the CUDA runtime: availability of NVRTC and the driver, compile-only NVRTC,
// device synchronisation.
#include <nanobind/ndarray.h>

#include "common.h"
#include "tessera/runtime/cuda/cuda_driver.h"
#include "tessera/runtime/cuda/emulator.h"
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
    if (cuda::emu::Enabled()) why = "the CUDA emulator (TESSERA_CUDA_EMULATOR=1)";
    return nb::make_tuple(ok, why);
  });
  // The CPU emulator of CUDA devices (tessera/runtime/cuda/emulator.h).
  m.def("cuda_emulator_enable", &cuda::emu::EnableEmulator,
        "Serve ts.cuda(0) from the CPU emulator, as TESSERA_CUDA_EMULATOR=1 does; call it before "
        "the first use of CUDA.");
  m.def("cuda_emulator_enabled", &cuda::emu::Enabled);
  m.def("cuda_emulator_set_include_dir", &cuda::emu::SetIncludeDir, "dir"_a);
  m.def("cuda_emulator_kernel_names", &cuda::emu::KernelNames, "source"_a);
  nb::class_<cuda::emu::Program>(m, "CudaEmulatorProgram",
                                 "CUDA C compiled for the CPU emulator: launch(kernel, grid, "
                                 "block, args) runs a kernel on numpy arrays in place.")
      .def(
          "__init__",
          [](cuda::emu::Program* self, const std::string& source) {
            nb::gil_scoped_release release;
            new (self) cuda::emu::Program(source);
          },
          "source"_a)
      .def_prop_ro("kernels", &cuda::emu::Program::kernels)
      .def(
          "launch",
          [](cuda::emu::Program& p, const std::string& kernel, std::vector<int64_t> grid,
             std::vector<int64_t> block, nb::list args, int64_t shared_bytes) {
            if (grid.size() > 3 || block.size() > 3 || grid.empty() || block.empty()) {
              throw nb::value_error("grid and block take 1 to 3 extents (x, y, z)");
            }
            int64_t dims[7] = {1, 1, 1, 1, 1, 1, shared_bytes};
            for (size_t i = 0; i < grid.size(); ++i) dims[i] = grid[i];
            for (size_t i = 0; i < block.size(); ++i) dims[3 + i] = block[i];
            // Arrays pass their data pointer (host memory is the emulated device's memory);
            // Python ints pass as int32, floats as float32.
            union Value {
              void* ptr;
              int32_t i32;
              float f32;
            };
            std::vector<Value> values(args.size());
            std::vector<void*> ptrs(args.size());
            std::vector<nb::ndarray<>> keep;
            for (size_t i = 0; i < args.size(); ++i) {
              nb::handle h = args[i];
              nb::ndarray<> arr;
              if (nb::isinstance<nb::int_>(h)) {
                values[i].i32 = nb::cast<int32_t>(h);
              } else if (nb::isinstance<nb::float_>(h)) {
                values[i].f32 = nb::cast<float>(h);
              } else if (nb::try_cast(h, arr, false) &&
                         arr.device_type() == nb::device::cpu::value) {
                values[i].ptr = arr.data();
                keep.push_back(arr);
              } else {
                throw nb::type_error(("argument " + std::to_string(i) +
                                      " of the kernel must be a numpy array, an int or a float")
                                         .c_str());
              }
              ptrs[i] = &values[i];
            }
            nb::gil_scoped_release release;
            p.Launch(kernel, dims, ptrs.data(), int(ptrs.size()));
          },
          "kernel"_a, "grid"_a, "block"_a, "args"_a, "shared_bytes"_a = 0);
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
