// The stack check and the large-stack runner (see tessera/support/stack.h).
#include "tessera/support/stack.h"

#include <pthread.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <exception>

#include "tessera/support/error.h"

#if defined(__SANITIZE_ADDRESS__)
#define TESSERA_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TESSERA_ASAN 1
#endif
#endif
#ifdef TESSERA_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

namespace tessera {
namespace detail {

// Room kept below the limit for the error's own unwinding and for callees between checks.
constexpr uintptr_t kStackMargin = 256 * 1024;

thread_local uintptr_t t_stack_limit = 0;

namespace {
// The current thread's own stack: [lo, lo + size).
bool ThreadStack(void** lo, size_t* size) {
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) != 0) return false;
  bool ok = pthread_attr_getstack(&attr, lo, size) == 0 && *lo != nullptr;
  pthread_attr_destroy(&attr);
  return ok;
}
}  // namespace

uintptr_t InitStackLimit() {
  void* lo = nullptr;
  size_t size = 0;
  uintptr_t limit = 1;  // unknown stack: never trips
  if (ThreadStack(&lo, &size) && size > 2 * kStackMargin) {
    limit = reinterpret_cast<uintptr_t>(lo) + kStackMargin;
  }
  t_stack_limit = limit;
  return limit;
}

void StackExhausted(const char* construct) {
  TESSERA_THROW_KIND(Span(), ErrorKind::kBuild)
      << "the program is nested too deeply for the compiler: the walk ran out of stack at a '"
      << construct
      << "' node; split the nesting (e.g. long chains of operators or of let/assert "
         "statements) into smaller parts";
}

}  // namespace detail

namespace {

thread_local bool t_on_large_stack = false;

struct StackJob {
  const std::function<void()>* run = nullptr;
  std::exception_ptr error;
  ucontext_t caller{}, callee{};
  const void* caller_bottom = nullptr;
  size_t caller_size = 0;
};

void StackMain(unsigned lo, unsigned hi) {
  auto* job = reinterpret_cast<StackJob*>((static_cast<uintptr_t>(hi) << 32) | lo);
#ifdef TESSERA_ASAN
  __sanitizer_finish_switch_fiber(nullptr, &job->caller_bottom, &job->caller_size);
#endif
  try {
    (*job->run)();
  } catch (...) {
    job->error = std::current_exception();
  }
#ifdef TESSERA_ASAN
  __sanitizer_start_switch_fiber(nullptr, job->caller_bottom, job->caller_size);
#endif
  // Returning resumes uc_link, the caller.
}

}  // namespace

void RunWithLargeStack(const std::function<void()>& f) {
  if (t_on_large_stack) {
    f();
    return;
  }
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t guard = 16 * page;
  void* mem = mmap(nullptr, kLargeStackBytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
  StackJob job;
  job.run = &f;
  if (mem == MAP_FAILED || getcontext(&job.callee) != 0) {
    // No address space for it: run here; CheckStack still stops a walk that goes too deep.
    if (mem != MAP_FAILED) munmap(mem, kLargeStackBytes);
    f();
    return;
  }
  mprotect(mem, guard, PROT_NONE);
  job.callee.uc_stack.ss_sp = static_cast<char*>(mem) + guard;
  job.callee.uc_stack.ss_size = kLargeStackBytes - guard;
  job.callee.uc_link = &job.caller;
  auto addr = reinterpret_cast<uintptr_t>(&job);
  makecontext(&job.callee, reinterpret_cast<void (*)()>(StackMain), 2,
              static_cast<unsigned>(addr & 0xffffffffu), static_cast<unsigned>(addr >> 32));

  uintptr_t saved_limit = detail::t_stack_limit;
  detail::t_stack_limit = reinterpret_cast<uintptr_t>(mem) + guard + detail::kStackMargin;
  t_on_large_stack = true;
#ifdef TESSERA_ASAN
  void* fake_stack = nullptr;
  __sanitizer_start_switch_fiber(&fake_stack, job.callee.uc_stack.ss_sp,
                                 job.callee.uc_stack.ss_size);
#endif
  swapcontext(&job.caller, &job.callee);
#ifdef TESSERA_ASAN
  __sanitizer_finish_switch_fiber(fake_stack, nullptr, nullptr);
#endif
  t_on_large_stack = false;
  detail::t_stack_limit = saved_limit;
  munmap(mem, kLargeStackBytes);
  if (job.error) std::rethrow_exception(job.error);
}

}  // namespace tessera
