// The CUDA emulator's device memory (host memory between guard regions) and the handling of
// memory faults inside a launch.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <mutex>

#include "emulator_internal.h"
#include "tessera/runtime/cuda/emulator.h"
#include "tessera/support/error.h"

namespace tessera {
namespace runtime {
namespace cuda {
namespace emu {
namespace {

// Device memory is host memory between two inaccessible regions as large as itself, its end
// (rounded to 16 bytes, the widest CUDA vector access) against the upper one: an access past the
// end of an allocation, or more than 15 bytes before its start, faults (up to the allocation's
// size away), and the launch reports it (below) instead of reading or overwriting other data.
struct Mapping {
  char* base;
  size_t length;
};
std::mutex g_alloc_mu;
std::map<const void*, Mapping> g_mappings;

size_t PageSize() {
  static const size_t page = size_t(sysconf(_SC_PAGESIZE));
  return page;
}

}  // namespace

void* Alloc(size_t bytes) {
  size_t page = PageSize();
  size_t used = (std::max<size_t>(bytes, 1) + 15) / 16 * 16;
  size_t data_pages = (used + page - 1) / page;
  // Guards as large as the data (at least 1 MiB) on both sides: address space, not memory. With
  // 64 KiB, an index 80 KB before a small buffer could land in a neighbouring mapping.
  size_t guard = std::max<size_t>(data_pages * page, (size_t(1) << 20) / page * page);
  size_t length = data_pages * page + 2 * guard;
  void* p = mmap(nullptr, length, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED ||
      mprotect(static_cast<char*>(p) + guard, data_pages * page, PROT_READ | PROT_WRITE) != 0) {
    if (p != MAP_FAILED) munmap(p, length);
    TESSERA_THROW_KIND(Span(), ErrorKind::kRuntime)
        << "the CUDA emulator cannot allocate " << bytes << " bytes of device memory";
  }
  char* base = static_cast<char*>(p);
  char* data = base + guard + data_pages * page - used;
  std::lock_guard<std::mutex> lock(g_alloc_mu);
  g_mappings[data] = {base, length};
  return data;
}

void Free(void* ptr) {
  if (ptr == nullptr) return;
  Mapping m;
  {
    std::lock_guard<std::mutex> lock(g_alloc_mu);
    auto it = g_mappings.find(ptr);
    if (it == g_mappings.end()) return;  // not ours: never unmap what we did not map
    m = it->second;
    g_mappings.erase(it);
  }
  munmap(m.base, m.length);
}

namespace internal {

// ---------------------------------------------------------------------------------------------
// Memory faults inside a launch become errors: the handler jumps back to the launch, which
// abandons the block (its fibers' stacks are reused by the next launch) and throws.

thread_local sigjmp_buf* t_fault_jump = nullptr;
thread_local void* t_fault_address = nullptr;
thread_local int t_fault_signal = 0;

namespace {

void OnFault(int sig, siginfo_t* info, void*) {
  if (t_fault_jump != nullptr) {
    t_fault_address = info ? info->si_addr : nullptr;
    t_fault_signal = sig;
    sigjmp_buf* jump = t_fault_jump;
    t_fault_jump = nullptr;
    siglongjmp(*jump, 1);
  }
  // A fault outside a launch on this thread: not ours. Restore the default action and return,
  // so that the faulting instruction faults again and the process stops as it would have.
  signal(sig, SIG_DFL);
}

}  // namespace

FaultGuard::FaultGuard() {
  static thread_local std::vector<char> alt(64 * 1024);
  stack_t ss{};
  ss.ss_sp = alt.data();
  ss.ss_size = alt.size();
  sigaltstack(&ss, &old_stack_);
  struct sigaction sa {};
  sa.sa_sigaction = OnFault;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGSEGV, &sa, &old_segv_);
  sigaction(SIGBUS, &sa, &old_bus_);
}
FaultGuard::~FaultGuard() {
  t_fault_jump = nullptr;
  sigaction(SIGSEGV, &old_segv_, nullptr);
  sigaction(SIGBUS, &old_bus_, nullptr);
  sigaltstack(&old_stack_, nullptr);
}

}  // namespace internal
}  // namespace emu
}  // namespace cuda
}  // namespace runtime
}  // namespace tessera
