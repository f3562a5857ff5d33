// NVRTC through dlopen: tessera builds for CUDA on machines without the toolkit installed at
// build time, and compiles kernels on machines without a GPU.
#include "tessera/runtime/cuda/nvrtc.h"

#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>
#include <sstream>

#include "tessera/support/error.h"
#include "tessera/support/hash.h"

namespace tessera {
namespace runtime {
namespace cuda {
namespace {

namespace fs = std::filesystem;

using nvrtcResult = int;
using nvrtcProgram = void*;

struct NVRTC {
  void* handle = nullptr;
  std::string path;
  nvrtcResult (*Version)(int*, int*) = nullptr;
  const char* (*GetErrorString)(nvrtcResult) = nullptr;
  nvrtcResult (*CreateProgram)(nvrtcProgram*, const char*, const char*, int, const char* const*,
                               const char* const*) = nullptr;
  nvrtcResult (*CompileProgram)(nvrtcProgram, int, const char* const*) = nullptr;
  nvrtcResult (*GetProgramLogSize)(nvrtcProgram, size_t*) = nullptr;
  nvrtcResult (*GetProgramLog)(nvrtcProgram, char*) = nullptr;
  nvrtcResult (*GetPTXSize)(nvrtcProgram, size_t*) = nullptr;
  nvrtcResult (*GetPTX)(nvrtcProgram, char*) = nullptr;
  nvrtcResult (*DestroyProgram)(nvrtcProgram*) = nullptr;
};

std::atomic<int64_t> g_nvrtc_runs{0};

std::vector<std::string> Candidates() {
  const char* forced = std::getenv("TESSERA_NVRTC_PATH");
  if (forced != nullptr && *forced != '\0') return {forced};
  std::vector<std::string> names = {"libnvrtc.so"};
  for (const char* home : {std::getenv("CUDA_HOME"), std::getenv("CUDA_PATH")}) {
    if (home != nullptr && *home != '\0') names.push_back(std::string(home) + "/lib64/libnvrtc.so");
  }
  names.push_back("/usr/local/cuda/lib64/libnvrtc.so");
  for (const char* v : {"13", "12", "11.2"}) names.push_back(std::string("libnvrtc.so.") + v);
  return names;
}

// The loaded library, or null with `why` filled in. A failure is not cached, so that setting
// $TESSERA_NVRTC_PATH or installing the toolkit takes effect in the same process.
const NVRTC* Load(std::string* why) {
  static std::mutex mu;
  static NVRTC* loaded = nullptr;
  std::lock_guard<std::mutex> lock(mu);
  if (loaded != nullptr) return loaded;
  std::string tried;
  for (const std::string& path : Candidates()) {
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) {
      const char* e = dlerror();
      tried += "\n  " + path + ": " + (e ? e : "cannot be loaded");
      continue;
    }
    auto* n = new NVRTC;
    n->handle = h;
    n->path = path;
    bool ok = true;
    auto sym = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(h, name));
      ok = ok && fn != nullptr;
    };
    sym(n->Version, "nvrtcVersion");
    sym(n->GetErrorString, "nvrtcGetErrorString");
    sym(n->CreateProgram, "nvrtcCreateProgram");
    sym(n->CompileProgram, "nvrtcCompileProgram");
    sym(n->GetProgramLogSize, "nvrtcGetProgramLogSize");
    sym(n->GetProgramLog, "nvrtcGetProgramLog");
    sym(n->GetPTXSize, "nvrtcGetPTXSize");
    sym(n->GetPTX, "nvrtcGetPTX");
    sym(n->DestroyProgram, "nvrtcDestroyProgram");
    if (!ok) {
      tried += "\n  " + path + ": not a usable NVRTC (symbols missing)";
      dlclose(h);
      delete n;
      continue;
    }
    loaded = n;
    return loaded;
  }
  if (why != nullptr) *why = "tried:" + tried;
  return nullptr;
}

const NVRTC& Require() {
  std::string why;
  const NVRTC* n = Load(&why);
  if (n == nullptr) {
    TESSERA_THROW_KIND(Span(), ErrorKind::kBuild)
        << "NVRTC not found: tessera needs the CUDA toolkit's libnvrtc to compile for target "
           "'cuda' (set CUDA_HOME, add its lib64 to LD_LIBRARY_PATH, or point "
           "TESSERA_NVRTC_PATH at libnvrtc.so); "
        << why;
  }
  return *n;
}

void Check(const NVRTC& n, nvrtcResult r, const char* what) {
  if (r != 0) {
    TESSERA_THROW_KIND(Span(), ErrorKind::kBuild)
        << what << " failed: " << (n.GetErrorString ? n.GetErrorString(r) : "NVRTC error");
  }
}

std::string IncludeDir() {
  for (const char* home : {std::getenv("CUDA_HOME"), std::getenv("CUDA_PATH")}) {
    if (home != nullptr && *home != '\0' && fs::exists(std::string(home) + "/include/cuda_fp16.h"))
      return std::string(home) + "/include";
  }
  if (fs::exists("/usr/local/cuda/include/cuda_fp16.h")) return "/usr/local/cuda/include";
  return "";
}

void WriteAtomically(const std::string& path, const std::string& text) {
  std::random_device rd;
  std::string tmp = path + ".tmp." + std::to_string(getpid()) + "." + std::to_string(rd());
  {
    std::ofstream out(tmp, std::ios::binary);
    out << text;
    if (!out.good()) {
      TESSERA_THROW_KIND(Span(), ErrorKind::kBuild) << "cannot write " << tmp;
    }
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    TESSERA_THROW_KIND(Span(), ErrorKind::kBuild)
        << "cannot write " << path << ": " << ec.message();
  }
}

}  // namespace

bool NVRTCAvailable(std::string* why) { return Load(why) != nullptr; }

std::string NVRTCVersion() {
  const NVRTC& n = Require();
  int major = 0, minor = 0;
  Check(n, n.Version(&major, &minor), "nvrtcVersion");
  return std::to_string(major) + "." + std::to_string(minor);
}

std::string CompileCUDA(const std::string& source, const std::string& arch,
                        const std::string& cache_dir, const std::vector<std::string>& options) {
  const NVRTC& n = Require();
  std::string compute = arch;
  if (compute.rfind("sm_", 0) == 0) compute = "compute_" + compute.substr(3);
  std::vector<std::string> opts = {"--gpu-architecture=" + compute, "--std=c++17",
                                   "-default-device"};
  std::string include = IncludeDir();
  if (!include.empty()) opts.push_back("-I" + include);
  opts.insert(opts.end(), options.begin(), options.end());

  Hasher128 hasher;
  hasher.UpdateField("tessera.CompileCUDA.v1").UpdateField(source).UpdateField(NVRTCVersion());
  for (const std::string& o : opts) hasher.UpdateField(o);
  hasher.UpdateField(TESSERA_VERSION);
  std::error_code ec;
  fs::create_directories(cache_dir, ec);
  fs::path ptx_path = fs::path(cache_dir) / (hasher.HexDigest() + ".ptx");
  if (fs::is_regular_file(ptx_path, ec)) {
    std::ifstream in(ptx_path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  ++g_nvrtc_runs;
  nvrtcProgram prog = nullptr;
  Check(n, n.CreateProgram(&prog, source.c_str(), "tessera_kernels.cu", 0, nullptr, nullptr),
        "nvrtcCreateProgram");
  std::vector<const char*> argv;
  for (const std::string& o : opts) argv.push_back(o.c_str());
  nvrtcResult rc = n.CompileProgram(prog, static_cast<int>(argv.size()), argv.data());
  size_t log_size = 0;
  n.GetProgramLogSize(prog, &log_size);
  std::string log(log_size, '\0');
  if (log_size) n.GetProgramLog(prog, &log[0]);
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  if (rc != 0) {
    n.DestroyProgram(&prog);
    std::string cmd;
    for (const std::string& o : opts) cmd += " " + o;
    TESSERA_THROW_KIND(Span(), ErrorKind::kBuild)
        << "NVRTC compilation failed (" << n.GetErrorString(rc) << ")\noptions:" << cmd << "\n"
        << log << "\nsource:\n"
        << source;
  }
  size_t ptx_size = 0;
  Check(n, n.GetPTXSize(prog, &ptx_size), "nvrtcGetPTXSize");
  std::string ptx(ptx_size, '\0');
  Check(n, n.GetPTX(prog, &ptx[0]), "nvrtcGetPTX");
  n.DestroyProgram(&prog);
  while (!ptx.empty() && ptx.back() == '\0') ptx.pop_back();
  WriteAtomically(ptx_path.string(), ptx);
  return ptx;
}

int64_t NVRTCInvocationCount() { return g_nvrtc_runs.load(); }

}  // namespace cuda
}  // namespace runtime
}  // namespace tessera
