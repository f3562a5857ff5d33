// Deep programs: a stack check for recursive walkers and a runner with a large stack.
//
// Visitors, mutators, equality, hashing, the printer and the code generators recurse over the
// IR. Each recursive entry calls CheckStack: when the native stack is nearly used up it throws
// an Error naming the construct instead of overflowing (a crash). Entry points that may meet
// deep programs (building, printing, comparing) run through RunWithLargeStack, which gives the
// walk a stack of kLargeStackBytes (address space reserved; pages touched only as deep as the
// program needs).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <type_traits>

namespace tessera {

namespace detail {
extern thread_local uintptr_t t_stack_limit;
uintptr_t InitStackLimit();
[[noreturn]] void StackExhausted(const char* construct);
}  // namespace detail

/*! \brief The stack reserved by RunWithLargeStack. */
constexpr size_t kLargeStackBytes = size_t(2) << 30;

/*! \brief Whether less than a safety margin of stack is left. */
inline bool StackLow() {
  uintptr_t here = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  uintptr_t limit = detail::t_stack_limit;
  if (limit == 0) limit = detail::InitStackLimit();
  return here < limit;
}

/*! \brief Throws an Error naming `construct` when less than a safety margin of stack is left. */
inline void CheckStack(const char* construct) {
  if (StackLow()) detail::StackExhausted(construct);
}

/*! \brief Runs `f` on a stack of kLargeStackBytes (directly when already on one) and rethrows
 *  what it throws. The same thread runs it (its stack is switched, as coroutines do), so the
 *  GIL, thread-local state and the current PassContext stay as they are. */
void RunWithLargeStack(const std::function<void()>& f);

/*! \brief Calls `f` on a large stack and returns its result. */
template <class F>
auto CallWithLargeStack(F&& f) -> decltype(f()) {
  using R = decltype(f());
  if constexpr (std::is_void_v<R>) {
    RunWithLargeStack([&] { f(); });
  } else {
    std::optional<R> result;
    RunWithLargeStack([&] { result.emplace(f()); });
    return std::move(*result);
  }
}

}  // namespace tessera
