// Checked calls of pointer kernels (guarded_call.h): guarded copies of the array arguments and
// a SIGSEGV/SIGBUS handler that records the first access to a guard region.
#include "tessera/runtime/guarded_call.h"

#include <signal.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <sstream>

#include "tessera/support/error.h"

namespace tessera {
namespace runtime {
namespace {

size_t PageSize() {
  static const size_t page = size_t(sysconf(_SC_PAGESIZE));
  return page;
}

// One guarded copy: [base, base + length) is mapped; the copy ends where the upper guard
// region begins, so the first byte past it faults.
struct Region {
  char* base = nullptr;
  size_t length = 0;
  char* data = nullptr;
  size_t bytes = 0;
  char* slack = nullptr;  // the accessible bytes before `data`
};

constexpr unsigned char kCanary = 0xA5;

// Guard pages a call may touch before it is taken for a runaway (16 MiB with 4 KiB pages).
constexpr size_t kMaxOpenedPages = 4096;

struct ActiveCall {
  std::vector<Region> regions;
  std::vector<const char*> names;  // the argument of each region
  const char* kernel = "";
  std::atomic<size_t> pages_opened{0};
  std::atomic<bool> faulted{false};
  char* fault_address = nullptr;
  int fault_region = -1;
  int fault_write = -1;  // 1 write, 0 read, -1 unknown
};

std::atomic<ActiveCall*> g_active{nullptr};
struct sigaction g_old_segv, g_old_bus;

void Chain(int sig, siginfo_t* info, void* uctx) {
  const struct sigaction& old = sig == SIGBUS ? g_old_bus : g_old_segv;
  if ((old.sa_flags & SA_SIGINFO) && old.sa_sigaction) {
    old.sa_sigaction(sig, info, uctx);
    return;
  }
  if (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN && old.sa_handler) {
    old.sa_handler(sig);
    return;
  }
  // Not ours and nobody else's: the default action, as without the check (the faulting
  // instruction faults again when the handler returns).
  signal(sig, SIG_DFL);
}

void OnFault(int sig, siginfo_t* info, void* uctx) {
  ActiveCall* call = g_active.load(std::memory_order_acquire);
  char* addr = info ? static_cast<char*>(info->si_addr) : nullptr;
  if (call != nullptr && addr != nullptr) {
    for (size_t i = 0; i < call->regions.size(); ++i) {
      const Region& r = call->regions[i];
      if (addr < r.base || addr >= r.base + r.length) continue;
      if (!call->faulted.exchange(true)) {
        call->fault_address = addr;
        call->fault_region = int(i);
#if defined(__x86_64__)
        auto* uc = static_cast<ucontext_t*>(uctx);
        call->fault_write = (uc->uc_mcontext.gregs[REG_ERR] & 2) ? 1 : 0;
#endif
      }
      // A kernel that keeps running through its guards (a loop far past the end) cannot be
      // stopped from here (its threads share the TEC pool's mutex and barriers): past a limit
      // it ends the process with the report, before it can leave the guards.
      if (call->pages_opened.fetch_add(1) >= kMaxOpenedPages) {
        char msg[512];
        int n = std::snprintf(msg, sizeof(msg),
                              "tessera checked call: the kernel %s accessed more than %zu pages "
                              "outside its argument '%s' (first at byte offset %lld); stopping "
                              "the process\n",
                              call->kernel, kMaxOpenedPages,
                              call->fault_region >= 0 ? call->names[size_t(call->fault_region)] : "?",
                              call->fault_region >= 0
                                  ? (long long)(call->fault_address -
                                                call->regions[size_t(call->fault_region)].data)
                                  : 0LL);
        if (n > 0) (void)!write(2, msg, size_t(std::min<int>(n, int(sizeof(msg)) - 1)));
        abort();
      }
      // Let the access through to the guard page (ours, holding nothing): the call finishes
      // and its results are discarded.
      char* page = reinterpret_cast<char*>(reinterpret_cast<uintptr_t>(addr) & ~(PageSize() - 1));
      mprotect(page, PageSize(), PROT_READ | PROT_WRITE);
      return;
    }
  }
  Chain(sig, info, uctx);
}

Region MapGuarded(size_t bytes) {
  size_t page = PageSize();
  size_t data_pages = (std::max<size_t>(bytes, 1) + page - 1) / page;
  // Guards of 64 GiB of address space (reserved, not memory: any 32-bit index of elements of
  // up to 32 bytes lands in them), or 1 GiB where the address space is limited, or the array's
  // size when larger.
  size_t guard = 0, length = 0;
  void* p = MAP_FAILED;
  for (size_t want : {size_t(64) << 30, size_t(1) << 30}) {
    guard = std::max<size_t>(data_pages * page, want / page * page);
    length = data_pages * page + 2 * guard;
    p = mmap(nullptr, length, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p != MAP_FAILED) break;
  }
  if (p == MAP_FAILED ||
      mprotect(static_cast<char*>(p) + guard, data_pages * page, PROT_READ | PROT_WRITE) != 0) {
    if (p != MAP_FAILED) munmap(p, length);
    TESSERA_THROW_KIND(Span(), ErrorKind::kRuntime)
        << "checked call: cannot map " << bytes << " bytes between guard pages";
  }
  Region r;
  r.base = static_cast<char*>(p);
  r.length = length;
  r.data = r.base + guard + data_pages * page - bytes;
  r.bytes = bytes;
  r.slack = r.base + guard;
  // The bytes between the lower guard and the copy hold a pattern: a write there (before the
  // array's start, closer than a page) is found after the call.
  std::memset(r.slack, kCanary, size_t(r.data - r.slack));
  return r;
}

std::mutex g_call_mu;  // one checked call at a time: one set of regions in the handler

}  // namespace

void CallWithGuards(const std::string& kernel, const std::vector<GuardedArg>& args,
                    const std::function<void(const std::vector<void*>&)>& call) {
  std::lock_guard<std::mutex> lock(g_call_mu);
  ActiveCall active;
  active.kernel = kernel.c_str();
  std::vector<int> region_of(args.size(), -1);
  std::vector<void*> pointers(args.size(), nullptr);
  struct Unmap {
    ActiveCall* a;
    ~Unmap() {
      for (const Region& r : a->regions) munmap(r.base, r.length);
    }
  } unmap{&active};
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].data == nullptr) continue;
    Region r = MapGuarded(args[i].bytes);
    std::memcpy(r.data, args[i].data, args[i].bytes);
    region_of[i] = int(active.regions.size());
    pointers[i] = r.data;
    active.regions.push_back(r);
    active.names.push_back(args[i].name.c_str());
  }
  struct sigaction sa {};
  sa.sa_sigaction = OnFault;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  g_active.store(&active, std::memory_order_release);
  sigaction(SIGSEGV, &sa, &g_old_segv);
  sigaction(SIGBUS, &sa, &g_old_bus);
  struct Restore {
    ~Restore() {
      sigaction(SIGSEGV, &g_old_segv, nullptr);
      sigaction(SIGBUS, &g_old_bus, nullptr);
      g_active.store(nullptr, std::memory_order_release);
    }
  } restore;
  call(pointers);
  if (!active.faulted.load()) {
    for (size_t k = 0; k < active.regions.size() && !active.faulted.load(); ++k) {
      const Region& r = active.regions[k];
      for (char* p = r.slack; p < r.data; ++p) {
        if (static_cast<unsigned char>(*p) != kCanary) {
          active.faulted.store(true);
          active.fault_address = p;
          active.fault_region = int(k);
          active.fault_write = 1;
          break;
        }
      }
    }
  }
  if (active.faulted.load()) {
    int k = active.fault_region;
    size_t arg = 0;
    for (size_t i = 0; i < args.size(); ++i) {
      if (region_of[i] == k) arg = i;
    }
    const Region& r = active.regions[size_t(k)];
    const GuardedArg& a = args[arg];
    int64_t offset = int64_t(active.fault_address - r.data);
    std::ostringstream os;
    os << "the kernel " << kernel << " "
       << (active.fault_write == 1 ? "wrote" : active.fault_write == 0 ? "read" : "accessed")
       << " outside its argument '" << a.name << "' (" << a.bytes << " bytes";
    if (a.itemsize > 1) os << ", " << a.bytes / a.itemsize << " elements";
    os << "): at byte offset " << offset;
    if (a.itemsize > 1) {
      int64_t item = int64_t(a.itemsize);
      int64_t elem = offset >= 0 ? offset / item : -((-offset + item - 1) / item);
      os << " (element " << elem << ")";
    }
    os << (offset < 0 ? ", before its start" : ", past its end")
       << "; the call's results were discarded and the arguments left unchanged";
    TESSERA_THROW_KIND(Span(), ErrorKind::kRuntime) << os.str();
  }
  for (size_t i = 0; i < args.size(); ++i) {
    if (region_of[i] >= 0 && args[i].copy_back) {
      std::memcpy(args[i].data, active.regions[size_t(region_of[i])].data, args[i].bytes);
    }
  }
}

}  // namespace runtime
}  // namespace tessera
