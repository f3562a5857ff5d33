// The CUDA driver API through dlopen (libcuda.so.1), so that tessera imports and runs on the
// CPU where there is no GPU driver. Every entry point uses the device's primary context (the
// one torch and cupy use), made current on the calling thread.
#include "tessera/runtime/cuda/cuda_driver.h"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#include "tessera/ir/target.h"
#include "tessera/runtime/cuda/emulator.h"
#include "tessera/support/error.h"

namespace tessera {
namespace runtime {
namespace cuda {
namespace {

using CUresult = int;
using CUdevice = int;
using CUcontext = void*;
using CUmodule = void*;
using CUfunction = void*;
using CUstream = void*;
using CUdeviceptr = unsigned long long;
constexpr int kAttrComputeCapabilityMajor = 75;
constexpr int kAttrComputeCapabilityMinor = 76;
constexpr int kAttrMultiprocessorCount = 16;
constexpr int kAttrMaxSharedMemoryPerBlockOptin = 97;
constexpr int kFuncAttrMaxDynamicSharedBytes = 8;

struct Driver {
  CUresult (*Init)(unsigned) = nullptr;
  CUresult (*DeviceGetCount)(int*) = nullptr;
  CUresult (*DeviceGet)(CUdevice*, int) = nullptr;
  CUresult (*DeviceGetAttribute)(int*, int, CUdevice) = nullptr;
  CUresult (*DevicePrimaryCtxRetain)(CUcontext*, CUdevice) = nullptr;
  CUresult (*CtxSetCurrent)(CUcontext) = nullptr;
  CUresult (*CtxSynchronize)() = nullptr;
  CUresult (*MemAlloc)(CUdeviceptr*, size_t) = nullptr;
  CUresult (*MemFree)(CUdeviceptr) = nullptr;
  CUresult (*MemcpyHtoD)(CUdeviceptr, const void*, size_t) = nullptr;
  CUresult (*MemcpyDtoH)(void*, CUdeviceptr, size_t) = nullptr;
  CUresult (*MemcpyDtoD)(CUdeviceptr, CUdeviceptr, size_t) = nullptr;
  CUresult (*ModuleLoadData)(CUmodule*, const void*) = nullptr;
  CUresult (*ModuleUnload)(CUmodule) = nullptr;
  CUresult (*ModuleGetFunction)(CUfunction*, CUmodule, const char*) = nullptr;
  CUresult (*FuncSetAttribute)(CUfunction, int, int) = nullptr;
  CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                           unsigned, CUstream, void**, void**) = nullptr;
  CUresult (*GetErrorString)(CUresult, const char**) = nullptr;
  std::map<int, CUcontext> contexts;
  int device_count = 0;
};

std::mutex g_mu;
Driver* g_driver = nullptr;
thread_local int g_current_device = 0;

// The driver, loaded and initialised, or null with the reason.
Driver* Load(std::string* why) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_driver != nullptr) return g_driver;
  const char* forced = std::getenv("TESSERA_CUDA_DRIVER_PATH");
  std::vector<std::string> names = forced && *forced
                                       ? std::vector<std::string>{forced}
                                       : std::vector<std::string>{"libcuda.so.1", "libcuda.so"};
  void* h = nullptr;
  std::string tried;
  for (const std::string& n : names) {
    h = dlopen(n.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (h != nullptr) break;
    const char* e = dlerror();
    tried += " " + n + " (" + (e ? e : "cannot be loaded") + ");";
  }
  if (h == nullptr) {
    if (why) *why = "libcuda is not installed or not on the loader path:" + tried;
    return nullptr;
  }
  auto* d = new Driver;
  bool ok = true;
  auto sym = [&](auto& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(h, name));
    ok = ok && fn != nullptr;
  };
  sym(d->Init, "cuInit");
  sym(d->DeviceGetCount, "cuDeviceGetCount");
  sym(d->DeviceGet, "cuDeviceGet");
  sym(d->DeviceGetAttribute, "cuDeviceGetAttribute");
  sym(d->DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  sym(d->CtxSetCurrent, "cuCtxSetCurrent");
  sym(d->CtxSynchronize, "cuCtxSynchronize");
  sym(d->MemAlloc, "cuMemAlloc_v2");
  sym(d->MemFree, "cuMemFree_v2");
  sym(d->MemcpyHtoD, "cuMemcpyHtoD_v2");
  sym(d->MemcpyDtoH, "cuMemcpyDtoH_v2");
  sym(d->MemcpyDtoD, "cuMemcpyDtoD_v2");
  sym(d->ModuleLoadData, "cuModuleLoadData");
  sym(d->ModuleUnload, "cuModuleUnload");
  sym(d->ModuleGetFunction, "cuModuleGetFunction");
  sym(d->FuncSetAttribute, "cuFuncSetAttribute");
  sym(d->LaunchKernel, "cuLaunchKernel");
  sym(d->GetErrorString, "cuGetErrorString");
  if (!ok) {
    if (why) *why = "libcuda lacks driver API functions tessera needs (driver too old?)";
    delete d;
    return nullptr;
  }
  CUresult r = d->Init(0);
  if (r != 0) {
    const char* s = nullptr;
    d->GetErrorString(r, &s);
    if (why) *why = std::string("cuInit failed: ") + (s ? s : "error " + std::to_string(r));
    delete d;
    return nullptr;
  }
  d->DeviceGetCount(&d->device_count);
  if (d->device_count == 0) {
    if (why) *why = "the CUDA driver sees no GPU";
    delete d;
    return nullptr;
  }
  g_driver = d;
  return d;
}

Driver& Require() {
  std::string why;
  Driver* d = Load(&why);
  if (d == nullptr) {
    TESSERA_THROW_KIND(Span(), ErrorKind::kRuntime)
        << "CUDA driver not found: tessera needs an NVIDIA GPU and driver for target 'cuda' ("
        << why << ")";
  }
  return *d;
}

void Check(Driver& d, CUresult r, const std::string& what) {
  if (r == 0) return;
  const char* s = nullptr;
  d.GetErrorString(r, &s);
  TESSERA_THROW_KIND(Span(), ErrorKind::kRuntime)
      << what << " failed: " << (s ? s : "CUDA error " + std::to_string(r));
}

// Make the primary context of `device` current on this thread.
Driver& Enter(int device) {
  Driver& d = Require();
  if (device < 0 || device >= d.device_count) {
    TESSERA_THROW_KIND(Span(), ErrorKind::kRuntime)
        << "cuda(" << device << ") does not exist; this machine has " << d.device_count
        << " CUDA device(s)";
  }
  CUcontext ctx;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    auto it = d.contexts.find(device);
    if (it == d.contexts.end()) {
      CUdevice dev;
      Check(d, d.DeviceGet(&dev, device), "cuDeviceGet");
      Check(d, d.DevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
      d.contexts[device] = ctx;
    } else {
      ctx = it->second;
    }
  }
  Check(d, d.CtxSetCurrent(ctx), "cuCtxSetCurrent");
  return d;
}

CUdeviceptr Ptr(const void* p) { return reinterpret_cast<CUdeviceptr>(p); }

// The emulated device (TESSERA_CUDA_EMULATOR=1) has one GPU, cuda(0), in host memory.
void EmulatedDevice(int device) {
  if (device != 0) {
    TESSERA_THROW_KIND(Span(), ErrorKind::kRuntime)
        << "cuda(" << device << ") does not exist; the CUDA emulator (TESSERA_CUDA_EMULATOR=1) "
        << "has 1 CUDA device, cuda(0)";
  }
}

}  // namespace

bool RealDriverLoaded() {
  std::lock_guard<std::mutex> lock(g_mu);
  return g_driver != nullptr;
}

bool DriverAvailable(std::string* why) {
  if (emu::Enabled()) return true;
  return Load(why) != nullptr;
}

int ComputeCapability(int device) {
  if (emu::Enabled()) {
    EmulatedDevice(device);
    return emu::ComputeCapability();
  }
  Driver& d = Enter(device);
  CUdevice dev;
  Check(d, d.DeviceGet(&dev, device), "cuDeviceGet");
  int major = 0, minor = 0;
  Check(d, d.DeviceGetAttribute(&major, kAttrComputeCapabilityMajor, dev), "cuDeviceGetAttribute");
  Check(d, d.DeviceGetAttribute(&minor, kAttrComputeCapabilityMinor, dev), "cuDeviceGetAttribute");
  return major * 10 + minor;
}

bool DeviceLimits(int device, int* sm_count, int64_t* shared_memory_optin_bytes) {
  if (emu::Enabled()) return false;
  try {
    Driver& d = Enter(device);
    CUdevice dev;
    int sms = 0, optin = 0;
    if (d.DeviceGet(&dev, device) != 0 ||
        d.DeviceGetAttribute(&sms, kAttrMultiprocessorCount, dev) != 0 ||
        d.DeviceGetAttribute(&optin, kAttrMaxSharedMemoryPerBlockOptin, dev) != 0 || sms <= 0 ||
        optin <= 0) {
      return false;
    }
    *sm_count = sms;
    *shared_memory_optin_bytes = optin;
    return true;
  } catch (const Error&) {  // no driver, no GPU: the caller keeps its defaults
    return false;
  }
}

namespace {
// The "cuda" target's facts (ir/, a lower layer) read GPU 0's limits through this probe.
[[maybe_unused]] const bool device_limits_probe_registered = [] {
  SetCudaDeviceLimitsProbe([](int* sms, int64_t* optin) { return DeviceLimits(0, sms, optin); });
  return true;
}();
}  // namespace

void* DeviceAlloc(int device, size_t bytes) {
  if (emu::Enabled()) {
    EmulatedDevice(device);
    return emu::Alloc(bytes);
  }
  Driver& d = Enter(device);
  CUdeviceptr p = 0;
  Check(
      d, d.MemAlloc(&p, bytes ? bytes : 1),
      "cuMemAlloc of " + std::to_string(bytes) + " bytes on cuda(" + std::to_string(device) + ")");
  return reinterpret_cast<void*>(p);
}

void DeviceFree(int device, void* ptr) {
  if (emu::Enabled()) {
    emu::Free(ptr);
    return;
  }
  std::string why;
  Driver* d = Load(&why);
  if (d == nullptr || ptr == nullptr) return;
  Enter(device);
  d->MemFree(Ptr(ptr));  // never throws: called from destructors
}

void CopyHostToDevice(int device, void* dst, const void* src, size_t bytes) {
  if (emu::Enabled()) {
    EmulatedDevice(device);
    if (bytes) std::memmove(dst, src, bytes);
    return;
  }
  Driver& d = Enter(device);
  if (bytes) Check(d, d.MemcpyHtoD(Ptr(dst), src, bytes), "cuMemcpyHtoD");
}

void CopyDeviceToHost(int device, void* dst, const void* src, size_t bytes) {
  if (emu::Enabled()) {
    EmulatedDevice(device);
    if (bytes) std::memmove(dst, src, bytes);
    return;
  }
  Driver& d = Enter(device);
  if (bytes) Check(d, d.MemcpyDtoH(dst, Ptr(src), bytes), "cuMemcpyDtoH");
}

void CopyDeviceToDevice(int device, void* dst, const void* src, size_t bytes) {
  if (emu::Enabled()) {
    EmulatedDevice(device);
    if (bytes) std::memmove(dst, src, bytes);
    return;
  }
  Driver& d = Enter(device);
  if (bytes) Check(d, d.MemcpyDtoD(Ptr(dst), Ptr(src), bytes), "cuMemcpyDtoD");
}

void Synchronize(int device) {
  if (emu::Enabled()) {  // emulated launches are synchronous
    EmulatedDevice(device);
    return;
  }
  Driver& d = Enter(device);
  Check(d, d.CtxSynchronize(), "cuCtxSynchronize");
}

void SetCurrentDevice(int device) { g_current_device = device; }

struct KernelModule::Impl {
  std::mutex mu;
  std::unique_ptr<emu::Program> emulated;  // compiled on the first emulated launch
  std::map<int, CUmodule> modules;         // per device
  std::map<std::pair<int, std::string>, CUfunction> functions;
};

KernelModule::KernelModule(std::string ptx, std::string source)
    : ptx_(std::move(ptx)), source_(std::move(source)), impl_(new Impl) {}

KernelModule::~KernelModule() {
  if (g_driver == nullptr) return;
  for (auto& [device, m] : impl_->modules) g_driver->ModuleUnload(m);
}

void KernelModule::Launch(const std::string& kernel, const int64_t* dims, void** args,
                          int num_args) {
  int device = g_current_device;
  if (emu::Enabled()) {
    EmulatedDevice(device);
    emu::Program* program;
    {
      std::lock_guard<std::mutex> lock(impl_->mu);
      if (!impl_->emulated) {
        if (source_.empty()) {
          TESSERA_THROW_KIND(Span(), ErrorKind::kRuntime)
              << "cannot launch " << kernel
              << " on the CUDA emulator: this module holds no CUDA source, only PTX";
        }
        impl_->emulated = std::make_unique<emu::Program>(source_);
      }
      program = impl_->emulated.get();
    }
    program->Launch(kernel, dims, args, num_args);
    return;
  }
  if (ptx_.empty()) {
    TESSERA_THROW_KIND(Span(), ErrorKind::kRuntime)
        << "cannot launch " << kernel << ": this build has no PTX (it was built under the CUDA "
        << "emulator on a machine without NVRTC); rebuild it where NVRTC is installed";
  }
  Driver& d = Enter(device);
  CUfunction fn;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    auto key = std::make_pair(device, kernel);
    auto it = impl_->functions.find(key);
    if (it == impl_->functions.end()) {
      auto m = impl_->modules.find(device);
      if (m == impl_->modules.end()) {
        CUmodule mod;
        Check(d, d.ModuleLoadData(&mod, ptx_.c_str()),
              "cuModuleLoadData (loading the PTX of this build on cuda(" + std::to_string(device) +
                  "))");
        m = impl_->modules.emplace(device, mod).first;
      }
      Check(d, d.ModuleGetFunction(&fn, m->second, kernel.c_str()),
            "cuModuleGetFunction(" + kernel + ")");
      if (dims[6] > 48 * 1024) {
        Check(d, d.FuncSetAttribute(fn, kFuncAttrMaxDynamicSharedBytes, int(dims[6])),
              "cuFuncSetAttribute");
      }
      impl_->functions[key] = fn;
    } else {
      fn = it->second;
    }
  }
  for (int i = 0; i < 6; ++i) {
    if (dims[i] <= 0 || dims[i] > 0x7fffffff) {
      TESSERA_THROW_KIND(Span(), ErrorKind::kRuntime)
          << "cannot launch " << kernel << ": launch extent " << dims[i] << " of "
          << (i < 3 ? "the grid" : "the block") << " is out of range";
    }
  }
  Check(d,
        d.LaunchKernel(fn, unsigned(dims[0]), unsigned(dims[1]), unsigned(dims[2]),
                       unsigned(dims[3]), unsigned(dims[4]), unsigned(dims[5]), unsigned(dims[6]),
                       nullptr, args, nullptr),
        "cuLaunchKernel(" + kernel + ")");
}

namespace {

// Workspaces (a kernel chain's intermediate buffers, allocated and freed by every call) are
// reused: a freed one goes back to a pool of the device and its size instead of cuMemFree,
// with no synchronization, since every launch goes to the same (default) stream, which runs a
// later kernel that reuses the memory after the earlier ones that used it. (cuMemAlloc, a
// device synchronization and cuMemFree per call used to cost more than a 4096 x 4096 cast.)
struct WorkspacePool {
  std::mutex mu;
  std::multimap<std::pair<int, size_t>, void*> free;  // (device, bytes) -> memory
  std::map<void*, std::pair<int, size_t>> live;
};
WorkspacePool& Pool() {
  static auto* pool = new WorkspacePool;  // never destroyed: may be used during exit
  return *pool;
}

}  // namespace

void* AllocWorkspace(void* module, size_t bytes, char* err, int32_t err_len) {
  try {
    WorkspacePool& pool = Pool();
    const std::pair<int, size_t> key{g_current_device, bytes};
    {
      std::lock_guard<std::mutex> lock(pool.mu);
      auto it = pool.free.find(key);
      if (it != pool.free.end()) {
        void* p = it->second;
        pool.free.erase(it);
        pool.live[p] = key;
        return p;
      }
    }
    void* p = DeviceAlloc(g_current_device, bytes);
    std::lock_guard<std::mutex> lock(pool.mu);
    pool.live[p] = key;
    return p;
  } catch (const std::exception& e) {
    if (err != nullptr && err_len > 0) {
      std::strncpy(err, e.what(), size_t(err_len) - 1);
      err[err_len - 1] = '\0';
    }
    return nullptr;
  }
}

void FreeWorkspace(void* module, void* ptr) {
  WorkspacePool& pool = Pool();
  {
    std::lock_guard<std::mutex> lock(pool.mu);
    auto it = pool.live.find(ptr);
    if (it != pool.live.end()) {
      pool.free.emplace(it->second, ptr);
      pool.live.erase(it);
      return;
    }
  }
  try {
    Synchronize(g_current_device);  // kernels that use it may still run
  } catch (const std::exception&) {
    // The launch error, if any, was reported; free the memory anyway.
  }
  DeviceFree(g_current_device, ptr);
}

int32_t LaunchKernel(void* module, const char* kernel, const int64_t* dims, void** args,
                     int32_t num_args, char* err, int32_t err_len) {
  try {
    static_cast<KernelModule*>(module)->Launch(kernel, dims, args, num_args);
    return 0;
  } catch (const std::exception& e) {
    if (err != nullptr && err_len > 0) {
      std::strncpy(err, e.what(), size_t(err_len) - 1);
      err[err_len - 1] = '\0';
    }
    return -1;
  }
}

}  // namespace cuda
}  // namespace runtime
}  // namespace tessera
