// Host libraries at run time: metadata, loading, packed calls and the time evaluator.
#include "tessera/runtime/packed_func.h"
#include "tessera/runtime/registry.h"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "tessera/runtime/cuda/cuda_driver.h"
#include "tessera/runtime/dso_module.h"
#include "tessera/runtime/openmp_policy.h"
#include "tessera/support/error.h"
#include "tessera/support/json.h"

namespace tessera {
namespace runtime {

void ParseModuleInfo(const std::string& json, ModuleNode* mod) {
  JsonValue info = ParseJson(json);
  mod->entry = info["entry"].string;
  mod->functions.clear();
  for (const JsonValue& f : info["functions"].array) {
    PackedFunctionInfo fi;
    fi.name = f["name"].string;
    fi.symbol = f["symbol"].string;
    fi.ret = f["ret"].string;
    for (const JsonValue& p : f["params"].array) {
      // "kind:dtype:name"
      const std::string& s = p.string;
      size_t a = s.find(':'), b = s.find(':', a + 1);
      if (a == std::string::npos || b == std::string::npos) continue;
      fi.params.push_back({s.substr(0, a), s.substr(a + 1, b - a - 1), s.substr(b + 1)});
    }
    mod->functions.push_back(std::move(fi));
  }
  mod->info["metadata"] = json;
  mod->info["openmp"] = info["openmp"].boolean ? "1" : "0";
}

void LoadHostLibrary(ModuleNode* mod) {
  // Before the kernel's OpenMP runtime starts (it reads its wait policy once, at load).
  if (mod->info["openmp"] == "1") ConfigureOpenMPWaitPolicy();
  if (!mod->library) mod->library = std::make_shared<DSOModule>(mod->lib_path);
  // OpenMP's worker threads outlive a call; unloading the library could unload the OpenMP
  // runtime under them, so such libraries stay loaded for the life of the process.
  if (mod->info["openmp"] == "1") {
    if (void* pin = dlopen(mod->lib_path.c_str(), RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE))
      dlclose(pin);
  }
  mod->last_error =
      reinterpret_cast<const char* (*)()>(mod->library->GetFunction(TESSERA_LAST_ERROR_SYMBOL));
  // A "cuda" build's library embeds its kernels and asks for the runtime's launcher.
  if (auto* launcher = static_cast<void**>(mod->library->GetFunction("__tessera_cuda_launcher"))) {
    auto* ptx = static_cast<const char*>(mod->library->GetFunction("__tessera_cuda_ptx"));
    auto* src = static_cast<const char*>(mod->library->GetFunction("__tessera_cuda_source"));
    auto* slot = static_cast<void**>(mod->library->GetFunction("__tessera_cuda_module"));
    mod->target = "cuda";
    mod->device_source = src ? src : "";
    mod->device_binary = ptx ? ptx : "";
    mod->device_format = "ptx";
    // Loading a cached library twice gives the same dlopen handle and the same globals, so
    // every module loaded from it shares one KernelModule.
    static std::mutex mu;
    static std::map<void**, std::weak_ptr<cuda::KernelModule>> loaded;
    std::lock_guard<std::mutex> lock(mu);
    std::shared_ptr<cuda::KernelModule> kernels = loaded[launcher].lock();
    if (!kernels || *launcher == nullptr) {
      kernels = std::make_shared<cuda::KernelModule>(mod->device_binary, mod->device_source);
      loaded[launcher] = kernels;
    }
    mod->device_module = kernels;
    if (slot) *slot = kernels.get();
    *launcher = reinterpret_cast<void*>(&cuda::LaunchKernel);
    if (auto* alloc = static_cast<void**>(mod->library->GetFunction("__tessera_cuda_alloc"))) {
      *alloc = reinterpret_cast<void*>(&cuda::AllocWorkspace);
    }
    if (auto* free_fn = static_cast<void**>(mod->library->GetFunction("__tessera_cuda_free"))) {
      *free_fn = reinterpret_cast<void*>(&cuda::FreeWorkspace);
    }
  }
  // Libraries that call global functions (T.call_packed) reach the registry through this slot.
  if (auto* slot = static_cast<void**>(mod->library->GetFunction("__tessera_call_global"))) {
    *slot = reinterpret_cast<void*>(&TesseraCallGlobal);
  }
  for (PackedFunctionInfo& f : mod->functions) {
    f.address = mod->library->GetFunction(f.symbol);
    if (f.address == nullptr) {
      TESSERA_THROW_KIND(Span(), ErrorKind::kRuntime)
          << "function " << f.name << " (symbol " << f.symbol << ") is missing from "
          << mod->lib_path;
    }
  }
}

Module LoadModule(const std::string& path) {
  auto mod = std::make_shared<ModuleNode>();
  mod->lib_path = path;
  mod->library = std::make_shared<DSOModule>(path);
  auto* info = static_cast<const char*>(mod->library->GetFunction(TESSERA_MODULE_INFO_SYMBOL));
  if (info == nullptr) {
    TESSERA_THROW_KIND(Span(), ErrorKind::kRuntime)
        << path << " is not a library built by tessera for a host target (it has no "
        << TESSERA_MODULE_INFO_SYMBOL << ")";
  }
  ParseModuleInfo(info, mod.get());
  if (auto* src =
          static_cast<const char*>(mod->library->GetFunction(TESSERA_MODULE_SOURCE_SYMBOL))) {
    mod->source = src;
  }
  mod->target = "c";
  LoadHostLibrary(mod.get());  // "cuda" when the library holds kernels
  return mod;
}

const PackedFunctionInfo& GetFunction(const ModuleNode& mod, const std::string& name) {
  const std::string& want = name.empty() ? mod.entry : name;
  for (const PackedFunctionInfo& f : mod.functions) {
    if (f.name == want && !want.empty()) return f;
  }
  auto t = TESSERA_THROW_KIND(Span(), ErrorKind::kAttribute);
  if (name.empty()) {
    t << "the module has no entry function (no function is named 'main' and there is not exactly "
         "one public function); call one by name with lib[\"name\"]. Functions:";
  } else {
    t << "the module has no function '" << name << "'; functions:";
  }
  for (const PackedFunctionInfo& f : mod.functions) t << " " << f.name;
}

void PackedArgs::AddInt(int64_t v) {
  TesseraValue x;
  x.v_int64 = v;
  values.push_back(x);
  codes.push_back(TESSERA_ARG_INT);
}

void PackedArgs::AddFloat(double v) {
  TesseraValue x;
  x.v_float64 = v;
  values.push_back(x);
  codes.push_back(TESSERA_ARG_FLOAT);
}

void PackedArgs::AddNull() {
  TesseraValue x;
  x.v_handle = nullptr;
  values.push_back(x);
  codes.push_back(TESSERA_ARG_NULL);
}

void PackedArgs::AddTensor(TesseraDLTensor* t) {
  TesseraValue x;
  x.v_handle = t;
  values.push_back(x);
  codes.push_back(TESSERA_ARG_DLTENSOR);
}

namespace {

int32_t Invoke(const PackedFunctionInfo& func, TesseraValue* values, int32_t* codes, int32_t n,
               PackedResult* result) {
  auto fn = reinterpret_cast<TesseraPackedFunc>(func.address);
  return fn(values, codes, n, &result->value, &result->code);
}

int32_t Invoke(const PackedFunctionInfo& func, PackedArgs& args, PackedResult* result) {
  return Invoke(func, args.values.data(), args.codes.data(),
                static_cast<int32_t>(args.values.size()), result);
}

void Check(const ModuleNode& mod, const PackedFunctionInfo& func, int32_t rc) {
  if (rc == 0) return;
  std::string message = mod.last_error ? mod.last_error() : "";
  if (message.empty()) message = func.name + " failed with code " + std::to_string(rc);
  ErrorKind kind = rc == TESSERA_RC_TYPE_ERROR    ? ErrorKind::kType
                   : rc == TESSERA_RC_VALUE_ERROR ? ErrorKind::kValue
                                                  : ErrorKind::kRuntime;
  TESSERA_THROW_KIND(Span(), kind) << message;
}

}  // namespace

// A "cuda" module launches on the GPU of its first CUDA array argument; returns that GPU, or
// -1 for host modules.
static int SelectDevice(const ModuleNode& mod, const TesseraValue* values, const int32_t* codes,
                        int32_t n) {
  static const std::string kCuda = "cuda";
  if (mod.target != kCuda) return -1;
  int device = 0;
  for (int32_t i = 0; i < n; ++i) {
    if (codes[i] != TESSERA_ARG_DLTENSOR) continue;
    auto* t = static_cast<const TesseraDLTensor*>(values[i].v_handle);
    if (t != nullptr && t->device.device_type == TESSERA_DEVICE_CUDA) {
      device = t->device.device_id;
      break;
    }
  }
  cuda::SetCurrentDevice(device);
  return device;
}

static int SelectDevice(const ModuleNode& mod, const PackedArgs& args) {
  return SelectDevice(mod, args.values.data(), args.codes.data(),
                      static_cast<int32_t>(args.codes.size()));
}

PackedResult CallPacked(const ModuleNode& mod, const PackedFunctionInfo& func,
                        TesseraValue* values, int32_t* codes, int32_t n) {
  if (func.address == nullptr) {
    TESSERA_THROW_KIND(Span(), ErrorKind::kRuntime) << "function " << func.name << " is not loaded";
  }
  PackedResult result;
  SelectDevice(mod, values, codes, n);
  Check(mod, func, Invoke(func, values, codes, n, &result));
  return result;
}

PackedResult CallPacked(const ModuleNode& mod, const PackedFunctionInfo& func, PackedArgs& args) {
  return CallPacked(mod, func, args.values.data(), args.codes.data(),
                    static_cast<int32_t>(args.values.size()));
}

std::vector<double> TimeEvaluate(const ModuleNode& mod, const PackedFunctionInfo& func,
                                 PackedArgs& args, const TimeEvaluatorOptions& options) {
  using Clock = std::chrono::steady_clock;
  PackedResult result;
  int device = SelectDevice(mod, args);
  Check(mod, func, Invoke(func, args, &result));  // warm-up, discarded
  // GPU kernels run asynchronously: the clock stops once the device is idle.
  auto sync = [&] {
    if (device >= 0) cuda::Synchronize(device);
  };
  sync();
  std::vector<char> flush(static_cast<size_t>(std::max<int64_t>(options.cache_flush_bytes, 0)));
  std::vector<double> seconds;
  int number = std::max(options.number, 1);
  for (int r = 0; r < std::max(options.repeat, 1); ++r) {
    if (!flush.empty()) std::memset(flush.data(), r, flush.size());
    double elapsed = 0;
    int zero_time_rounds = 0;
    while (true) {
      auto start = Clock::now();
      for (int i = 0; i < number; ++i) Check(mod, func, Invoke(func, args, &result));
      sync();
      elapsed = std::chrono::duration<double>(Clock::now() - start).count();
      if (elapsed * 1e3 >= options.min_repeat_ms) break;
      if (elapsed <= 0 && ++zero_time_rounds >= options.limit_zero_time_iterations) break;
      // Too short: scale the call count to reach min_repeat_ms (at least x1.618).
      double per_call = elapsed > 0 ? elapsed / number : 1e-9;
      int want = static_cast<int>(options.min_repeat_ms / 1e3 / per_call) + 1;
      number = std::max(want, static_cast<int>(number * 1.618) + 1);
    }
    seconds.push_back(elapsed / number);
    if (options.cooldown_interval_ms > 0 && options.repeats_to_cooldown > 0 &&
        (r + 1) % options.repeats_to_cooldown == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(options.cooldown_interval_ms));
    }
  }
  return seconds;
}

}  // namespace runtime
}  // namespace tessera
