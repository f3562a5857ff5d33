// The CUDA emulator: kernels of CUDA C compiled for the host (tessera/cuda_emu.h) and run block
// after block on the calling thread. Inside a block every CUDA thread is a fiber when
// the kernel synchronises (__syncthreads, __syncwarp, warp shuffles and votes); a fiber runs
// until it reaches a barrier or returns, and the block scheduler releases a barrier once every
// thread that must arrive has. Kernels without synchronisation run their threads as a loop.
// Fibers switch with a few instructions of assembly on x86-64 and with ucontext elsewhere (or
// when built with -DTESSERA_EMU_UCONTEXT). Reading the source is emulator_source.cc; device
// memory and memory faults are emulator_memory.cc.
#include "tessera/runtime/cuda/emulator.h"

#include "emulator_internal.h"

#include <dlfcn.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <sstream>

#include "tessera/cuda_emu_abi.h"
#include "tessera/runtime/cuda/cuda_driver.h"
#include "tessera/support/error.h"
#include "tessera/target/toolchain.h"

#if defined(__x86_64__) && !defined(TESSERA_EMU_UCONTEXT)
#define TESSERA_EMU_ASM_SWITCH 1
// Saves the callee-saved registers on the current stack, stores the stack pointer in *save_sp,
// and continues on the stack `new_sp` saved the same way (System V x86-64 ABI). The x87 and
// SSE control words are not switched: every fiber runs with the caller's.
extern "C" void tessera_emu_switch(void** save_sp, void* new_sp);
asm(R"(
  .text
  .p2align 4
  .globl tessera_emu_switch
  .hidden tessera_emu_switch
  .type tessera_emu_switch, @function
tessera_emu_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size tessera_emu_switch, .-tessera_emu_switch
)");
#endif

namespace tessera {
namespace runtime {
namespace cuda {
namespace emu {
namespace internal {

[[noreturn]] void LaunchError(const std::string& message) {
  TESSERA_THROW_KIND(Span(), ErrorKind::kRuntime) << message;
}

}  // namespace internal

namespace {

using namespace internal;  // NOLINT: the emulator's own parts

std::mutex g_mu;
std::string g_include_dir;
std::atomic<int> g_enabled{-1};  // -1: the environment has not been read yet

constexpr int kMaxThreadsPerBlock = 1024;
constexpr int64_t kMaxStaticShared = 48 * 1024;
// Per fiber: above the 512 KiB of local memory a GPU thread may have. Reserved, not committed:
// pages are committed as a thread touches them.
constexpr size_t kStackBytes = 1024 * 1024;
constexpr size_t kGuardBytes = 4096;

// ---------------------------------------------------------------------------------------------
// Fibers and the block scheduler.

enum class FiberState { kReady, kBarrier, kWarp, kDone };

struct Fiber {
#ifdef TESSERA_EMU_ASM_SWITCH
  void* sp = nullptr;
#else
  ucontext_t ctx;
#endif
  FiberState state = FiberState::kReady;
  TesseraEmuThread idx;
  // The warp operation it waits at, and its result.
  int kind = 0;
  unsigned mask = 0;
  unsigned long long value = 0, result = 0;
  int arg = 0, width = 32;
};

// Fiber stacks, mmap'ed once (with a guard page below each) and reused by every launch.
class StackPool {
 public:
  char* Get(size_t i) {
    while (stacks_.size() <= i) {
      void* p = mmap(nullptr, kStackBytes + kGuardBytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      if (p == MAP_FAILED) LaunchError("the CUDA emulator cannot map a stack for a CUDA thread");
      mprotect(p, kGuardBytes, PROT_NONE);
      stacks_.push_back(static_cast<char*>(p) + kGuardBytes);
    }
    return stacks_[i];
  }

 private:
  std::vector<char*> stacks_;
};

struct Scheduler {
  TesseraEmuState state;
  void (*kernel)(void**) = nullptr;
  void** args = nullptr;
  std::vector<Fiber> fibers;
#ifdef TESSERA_EMU_ASM_SWITCH
  void* main_sp = nullptr;
#else
  ucontext_t main_ctx;
#endif
  int current = -1;
  bool fast = false;   // threads run as a loop, without fibers
  std::string misuse;  // a barrier reached where none can be served
};

Scheduler* g_sched = nullptr;  // during a launch (launches are serialised by g_launch_mu)
std::mutex g_launch_mu;
StackPool g_stacks;

// From the running fiber back to the block scheduler.
void Yield(Scheduler* s) {
  Fiber& f = s->fibers[s->current];
#ifdef TESSERA_EMU_ASM_SWITCH
  tessera_emu_switch(&f.sp, s->main_sp);
#else
  swapcontext(&f.ctx, &s->main_ctx);
#endif
}

void FiberEntry() {
  Scheduler* s = g_sched;
  s->kernel(s->args);
  s->fibers[s->current].state = FiberState::kDone;
  Yield(s);  // never resumed
  std::abort();
}

void SyncThreadsHook(void* sched) {
  auto* s = static_cast<Scheduler*>(sched);
  if (s->fast) {
    if (s->misuse.empty()) s->misuse = "__syncthreads was reached by a kernel run without fibers";
    return;
  }
  s->fibers[s->current].state = FiberState::kBarrier;
  Yield(s);
}

unsigned LiveLanes(const Scheduler& s, size_t warp_base) {
  unsigned m = 0;
  for (size_t l = 0; l < 32 && warp_base + l < s.fibers.size(); ++l) {
    if (s.fibers[warp_base + l].state != FiberState::kDone) m |= 1u << l;
  }
  return m;
}

unsigned long long WarpOpHook(void* sched, int kind, unsigned mask, unsigned long long value,
                              int arg, int width) {
  auto* s = static_cast<Scheduler*>(sched);
  if (kind == TESSERA_EMU_ACTIVEMASK) {
    if (s->fast) return 1;
    return LiveLanes(*s, size_t(s->current) & ~size_t(31));
  }
  if (s->fast) {
    if (s->misuse.empty())
      s->misuse = "a warp operation was reached by a kernel run without fibers";
    return value;
  }
  Fiber& f = s->fibers[s->current];
  f.state = FiberState::kWarp;
  f.kind = kind;
  f.mask = mask;
  f.value = value;
  f.arg = arg;
  f.width = (width > 0 && width <= 32 && (width & (width - 1)) == 0) ? width : 32;
  Yield(s);
  return f.result;
}

// Release the warp operations of warp `w` whose lanes have all arrived: for each waiting lane,
// the lanes its mask names (those that exist) must all wait at a warp operation.
bool ReleaseWarp(Scheduler& s, size_t w) {
  size_t base = w * 32;
  size_t lanes = std::min<size_t>(32, s.fibers.size() - base);
  unsigned exist = lanes == 32 ? 0xffffffffu : ((1u << lanes) - 1);
  unsigned waiting = 0;
  for (size_t l = 0; l < lanes; ++l) {
    if (s.fibers[base + l].state == FiberState::kWarp) waiting |= 1u << l;
  }
  bool released = false;
  for (size_t first = 0; first < lanes; ++first) {
    if (!(waiting >> first & 1)) continue;
    unsigned need = (s.fibers[base + first].mask & exist) | (1u << first);
    if ((waiting & need) != need) continue;
    unsigned ballot = 0;
    for (size_t l = 0; l < lanes; ++l) {
      const Fiber& f = s.fibers[base + l];
      if ((need >> l & 1) && f.kind == TESSERA_EMU_BALLOT && f.value != 0) ballot |= 1u << l;
    }
    for (size_t l = 0; l < lanes; ++l) {
      if (!(need >> l & 1)) continue;
      Fiber& f = s.fibers[base + l];
      int lane = int(l), seg = lane & ~(f.width - 1), src = lane;
      switch (f.kind) {
        case TESSERA_EMU_SHFL_IDX:
          src = seg + (f.arg & (f.width - 1));
          break;
        case TESSERA_EMU_SHFL_UP:
          src = lane - f.arg >= seg ? lane - f.arg : lane;
          break;
        case TESSERA_EMU_SHFL_DOWN:
          src = lane + f.arg < seg + f.width ? lane + f.arg : lane;
          break;
        case TESSERA_EMU_SHFL_XOR:
          src = lane ^ f.arg;
          if (src < 0 || src >= seg + f.width) src = lane;
          break;
        default:
          break;
      }
      if (src < 0 || src >= 32 || !(need >> src & 1)) src = lane;  // a lane not taking part
      f.result = f.kind == TESSERA_EMU_BALLOT ? ballot : s.fibers[base + src].value;
    }
    for (size_t l = 0; l < lanes; ++l) {
      if (need >> l & 1) s.fibers[base + l].state = FiberState::kReady;
    }
    waiting &= ~need;
    released = true;
  }
  return released;
}

// Set up `f` to run the kernel from its start on `stack`.
__attribute__((noinline)) void StartFiber(Fiber& f, char* stack) {
  f.state = FiberState::kReady;
#ifdef TESSERA_EMU_ASM_SWITCH
  // What tessera_emu_switch pops: six registers, then FiberEntry as the return address; above
  // it a null return address for FiberEntry, which thus starts with rsp = 8 (mod 16) as after
  // a call.
  void** sp = reinterpret_cast<void**>(stack + kStackBytes) - 8;
  for (int r = 0; r < 6; ++r) sp[r] = nullptr;
  sp[6] = reinterpret_cast<void*>(&FiberEntry);
  sp[7] = nullptr;
  f.sp = sp;
#else
  getcontext(&f.ctx);
  f.ctx.uc_stack.ss_sp = stack;
  f.ctx.uc_stack.ss_size = kStackBytes;
  f.ctx.uc_link = nullptr;
  makecontext(&f.ctx, FiberEntry, 0);
#endif
}

// Run fiber `i` until it waits or returns (apart, since swapcontext returns twice).
__attribute__((noinline)) void RunFiber(Scheduler& s, size_t i) {
  s.current = int(i);
  s.state.cur = &s.fibers[i].idx;
#ifdef TESSERA_EMU_ASM_SWITCH
  tessera_emu_switch(&s.main_sp, s.fibers[i].sp);
#else
  swapcontext(&s.main_ctx, &s.fibers[i].ctx);
#endif
}

std::string Dim(const unsigned* v) {
  return "(" + std::to_string(v[0]) + ", " + std::to_string(v[1]) + ", " + std::to_string(v[2]) +
         ")";
}

void RunBlockFibers(Scheduler& s, const std::string& kernel) {
  size_t n = s.fibers.size();
  for (size_t i = 0; i < n; ++i) StartFiber(s.fibers[i], g_stacks.Get(i));
  while (true) {
    for (size_t i = 0; i < n; ++i) {
      if (s.fibers[i].state != FiberState::kReady) continue;
      RunFiber(s, i);
    }
    size_t done = 0, barrier = 0, warp = 0;
    for (const Fiber& f : s.fibers) {
      done += f.state == FiberState::kDone;
      barrier += f.state == FiberState::kBarrier;
      warp += f.state == FiberState::kWarp;
    }
    if (done == n) return;
    bool released = false;
    if (barrier == n) {
      for (Fiber& f : s.fibers) f.state = FiberState::kReady;
      released = true;
    }
    for (size_t w = 0; w * 32 < n; ++w) released = ReleaseWarp(s, w) || released;
    if (!released) {
      std::ostringstream os;
      os << "the CUDA kernel " << kernel << " deadlocked in block "
         << Dim(s.fibers[0].idx.block_idx) << ": " << barrier << " of " << n
         << " threads wait at __syncthreads while " << done << " exited and " << warp
         << " wait at a warp-level sync (__syncwarp, __shfl_*_sync, vote) whose lanes do not "
            "all arrive";
      LaunchError(os.str());
    }
  }
}

}  // namespace

bool Enabled() {
  int e = g_enabled.load();
  if (e < 0) {
    const char* v = std::getenv("TESSERA_CUDA_EMULATOR");
    e = (v != nullptr && *v != '\0' && std::strcmp(v, "0") != 0) ? 1 : 0;
    int expected = -1;
    if (!g_enabled.compare_exchange_strong(expected, e)) e = g_enabled.load();
  }
  return e == 1;
}

void EnableEmulator() {
  if (RealDriverLoaded()) {
    TESSERA_THROW_KIND(Span(), ErrorKind::kRuntime)
        << "cannot switch to the CUDA emulator: this process already uses the CUDA driver; set "
           "TESSERA_CUDA_EMULATOR=1 before the first use of CUDA instead";
  }
  g_enabled = 1;
}

void SetIncludeDir(const std::string& dir) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_include_dir = dir;
}

std::string IncludeDir() {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_include_dir.empty()) {
    const char* env = std::getenv("TESSERA_INCLUDE_DIR");
    if (env != nullptr && *env != '\0') g_include_dir = env;
  }
  return g_include_dir;
}

int ComputeCapability() {
  const char* arch = std::getenv("TESSERA_CUDA_EMULATOR_ARCH");
  if (arch == nullptr || *arch == '\0') return 80;
  std::string a = arch;
  if (a.rfind("sm_", 0) == 0) a = a.substr(3);
  char* end = nullptr;
  long cc = std::strtol(a.c_str(), &end, 10);
  if (a.empty() || *end != '\0' || cc < 30 || cc > 200) {
    TESSERA_THROW_KIND(Span(), ErrorKind::kRuntime)
        << "TESSERA_CUDA_EMULATOR_ARCH=" << arch
        << " is not a GPU architecture; write it like sm_80 or sm_90";
  }
  return int(cc);
}


struct Program::Impl {
  void* handle = nullptr;
  TesseraEmuState** state_slot = nullptr;
  bool synchronises = false;
  std::vector<std::string> names;
  struct Kernel {
    void (*fn)(void**) = nullptr;
    int nargs = 0;
    int64_t static_shared = 0;
  };
  std::map<std::string, Kernel> kernels;
};

Program::Program(const std::string& source) : impl_(new Impl) {
  std::vector<KernelInfo> infos = ScanKernels(source);
  if (infos.empty()) {
    TESSERA_THROW_KIND(Span(), ErrorKind::kBuild)
        << "the CUDA emulator found no kernel in the source (kernels are declared as extern \"C\" "
           "__global__ void NAME(...))";
  }
  std::string include = IncludeDir();
  if (include.empty()) {
    TESSERA_THROW_KIND(Span(), ErrorKind::kBuild)
        << "the CUDA emulator does not know where tessera's shipped headers are (import tessera, "
           "or set TESSERA_INCLUDE_DIR to the package's include folder)";
  }
  std::string unit = "#include <tessera/cuda_emu.h>\n#line 1 \"kernel.cu\"\n" + source + "\n";
  for (const KernelInfo& k : infos) unit += "TESSERA_EMU_KERNEL(" + k.name + ")\n";
  std::vector<std::string> flags = {"-std=gnu++17",
                                    "-O2",
                                    "-fwrapv",
                                    "-fno-strict-aliasing",
                                    "-fvisibility=hidden",
                                    "-Wno-unknown-pragmas",
                                    "-I" + include + "/tessera/cuda_emu",
                                    "-I" + include};
  std::string header_key;
  for (const char* h : {"/tessera/cuda_emu.h", "/tessera/cuda_emu_abi.h"}) {
    FILE* f = std::fopen((include + h).c_str(), "rb");
    if (f == nullptr) {
      TESSERA_THROW_KIND(Span(), ErrorKind::kBuild)
          << "the CUDA emulator's header " << include << h << " is missing";
    }
    char buf[4096];
    size_t got;
    while ((got = std::fread(buf, 1, sizeof(buf), f)) > 0) header_key.append(buf, got);
    std::fclose(f);
  }
  std::string path =
      CompileSharedLibraryCXX(unit, flags, DefaultCacheDir() + "/cuda_emu", header_key);
  impl_->handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (impl_->handle == nullptr) {
    const char* e = dlerror();
    TESSERA_THROW_KIND(Span(), ErrorKind::kBuild)
        << "the CUDA emulator cannot load " << path << ": " << (e ? e : "dlopen failed");
  }
  impl_->state_slot = static_cast<TesseraEmuState**>(dlsym(impl_->handle, "__tessera_emu_state"));
  TESSERA_ICHECK(impl_->state_slot != nullptr) << "emulated kernels without __tessera_emu_state";
  impl_->synchronises = UsesSynchronisation(source);
  for (const KernelInfo& k : infos) {
    Impl::Kernel kernel;
    kernel.fn = reinterpret_cast<void (*)(void**)>(
        dlsym(impl_->handle, ("__tessera_emu_" + k.name).c_str()));
    auto nargs = reinterpret_cast<int (*)()>(
        dlsym(impl_->handle, ("__tessera_emu_nargs_" + k.name).c_str()));
    TESSERA_ICHECK(kernel.fn != nullptr && nargs != nullptr)
        << "kernel " << k.name << " not exported";
    kernel.nargs = nargs();
    kernel.static_shared = StaticSharedBytes(source, k.body_begin, k.body_end);
    impl_->kernels[k.name] = kernel;
    impl_->names.push_back(k.name);
  }
}

Program::~Program() {
  if (impl_->handle != nullptr) dlclose(impl_->handle);
}

const std::vector<std::string>& Program::kernels() const { return impl_->names; }

void Program::Launch(const std::string& kernel, const int64_t* dims, void** args, int num_args) {
  auto it = impl_->kernels.find(kernel);
  if (it == impl_->kernels.end()) {
    std::string known;
    for (const std::string& n : impl_->names) known += (known.empty() ? "" : ", ") + n;
    LaunchError("cannot launch " + kernel + ": the CUDA module has no kernel named '" + kernel +
                "' (its kernels: " + known + ")");
  }
  const Impl::Kernel& k = it->second;
  for (int i = 0; i < 6; ++i) {
    if (dims[i] <= 0 || dims[i] > 0x7fffffff || (i > 0 && i != 3 && dims[i] > 65535)) {
      LaunchError("cannot launch " + kernel + ": launch extent " + std::to_string(dims[i]) +
                  " of " + (i < 3 ? "the grid" : "the block") + " is out of range");
    }
  }
  int64_t threads = dims[3] * dims[4] * dims[5];
  if (threads > kMaxThreadsPerBlock || dims[5] > 64) {
    LaunchError("cannot launch " + kernel + ": a block of " + std::to_string(dims[3]) + " x " +
                std::to_string(dims[4]) + " x " + std::to_string(dims[5]) + " = " +
                std::to_string(threads) + " threads exceeds the limit of " +
                std::to_string(kMaxThreadsPerBlock) + " threads per block (z at most 64)");
  }
  int cc = ComputeCapability();
  int64_t max_dynamic = cc >= 90 ? 227 * 1024 : cc >= 80 ? 163 * 1024 : 96 * 1024;
  if (dims[6] < 0 || dims[6] > max_dynamic) {
    LaunchError("cannot launch " + kernel + ": " + std::to_string(dims[6]) +
                " bytes of dynamic shared memory exceed the " + std::to_string(max_dynamic) +
                " bytes of sm_" + std::to_string(cc));
  }
  if (k.static_shared > kMaxStaticShared) {
    LaunchError("cannot launch " + kernel + ": it declares " + std::to_string(k.static_shared) +
                " bytes of static shared memory; the limit is " + std::to_string(kMaxStaticShared) +
                " bytes");
  }
  if (num_args >= 0 && num_args != k.nargs) {
    LaunchError("cannot launch " + kernel + ": it takes " + std::to_string(k.nargs) +
                " arguments, " + std::to_string(num_args) + " were given");
  }

  std::lock_guard<std::mutex> lock(g_launch_mu);
  Scheduler s;
  s.state.sched = &s;
  s.state.syncthreads = SyncThreadsHook;
  s.state.warp_op = WarpOpHook;
  s.kernel = k.fn;
  s.args = args;
  s.fast = !impl_->synchronises;
  s.fibers.resize(size_t(threads));
  *impl_->state_slot = &s.state;
  g_sched = &s;
  struct Reset {
    TesseraEmuState** slot;
    ~Reset() {
      *slot = nullptr;
      g_sched = nullptr;
    }
  } reset{impl_->state_slot};
  unsigned grid[3] = {unsigned(dims[0]), unsigned(dims[1]), unsigned(dims[2])};
  unsigned block[3] = {unsigned(dims[3]), unsigned(dims[4]), unsigned(dims[5])};
  for (size_t t = 0; t < s.fibers.size(); ++t) {
    TesseraEmuThread& idx = s.fibers[t].idx;
    idx.thread_idx[0] = unsigned(t % block[0]);
    idx.thread_idx[1] = unsigned(t / block[0] % block[1]);
    idx.thread_idx[2] = unsigned(t / (size_t(block[0]) * block[1]));
    std::memcpy(idx.block_dim, block, sizeof(block));
    std::memcpy(idx.grid_dim, grid, sizeof(grid));
  }
  FaultGuard guard;
  sigjmp_buf jump;
  volatile unsigned at_block[3] = {0, 0, 0};  // read after the jump: kept in memory
  if (sigsetjmp(jump, 1) != 0) {
    unsigned block_at[3] = {at_block[0], at_block[1], at_block[2]};
    char where[160];
    std::snprintf(where, sizeof(where), "%s %p", t_fault_signal == SIGBUS ? "bus error at" : "at address",
                  t_fault_address);
    std::ostringstream os;
    os << "the CUDA kernel " << kernel << " made an invalid memory access (" << where
       << ") in thread ";
    if (s.current >= 0) {
      os << Dim(s.fibers[size_t(s.current)].idx.thread_idx);
    } else {
      os << "?";
    }
    os << " of block " << Dim(block_at)
       << ": an index outside its buffer, or a thread whose stack overflowed; on a GPU this is "
          "an illegal address error. The launch was abandoned.";
    LaunchError(os.str());
  }
  t_fault_jump = &jump;
  for (unsigned bz = 0; bz < grid[2]; ++bz) {
    for (unsigned by = 0; by < grid[1]; ++by) {
      for (unsigned bx = 0; bx < grid[0]; ++bx) {
        at_block[0] = bx;
        at_block[1] = by;
        at_block[2] = bz;
        for (Fiber& f : s.fibers) {
          f.idx.block_idx[0] = bx;
          f.idx.block_idx[1] = by;
          f.idx.block_idx[2] = bz;
        }
        if (s.fast) {
          for (size_t t = 0; t < s.fibers.size(); ++t) {
            s.current = int(t);
            s.state.cur = &s.fibers[t].idx;
            s.kernel(s.args);
          }
        } else {
          RunBlockFibers(s, kernel);
        }
        if (!s.misuse.empty()) LaunchError("the CUDA kernel " + kernel + ": " + s.misuse);
      }
    }
  }
  t_fault_jump = nullptr;
}

}  // namespace emu
}  // namespace cuda
}  // namespace runtime
}  // namespace tessera
