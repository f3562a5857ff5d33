// Checked calls of pointer kernels: each array argument is copied into memory between
// inaccessible guard regions for the call, so that an access outside it becomes an error naming
// the kernel, the argument and the offset instead of reading or corrupting other memory.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace tessera {
namespace runtime {

/*! \brief One array argument of a checked call. */
struct GuardedArg {
  void* data = nullptr;   // the caller's memory (null: not an array, left as it is)
  size_t bytes = 0;       // its size
  size_t itemsize = 1;    // bytes per element, for the offset in elements of a report
  bool copy_back = true;  // copy the guarded copy back after the call (false: read-only)
  std::string name;       // the parameter, for the report
};

/*! \brief Runs `call(pointers)` with a guarded copy of each argument (pointers[i] is the copy of
 *  args[i], or null where args[i].data is null), then copies the copies back. When the call
 *  touched memory outside a copy (past its end, up to the copy's size and at least 64 GiB of address space; or
 *  before its start: reads from the guard below the page the copy ends, writes anywhere up to
 *  that far, found by a pattern in the bytes just before the copy), nothing
 *  is copied back and a kRuntime error names `kernel`, the argument and the offset.
 *
 *  A faulting access is let through to the guard page it hit (made accessible) rather than
 *  unwound with siglongjmp: kernels run on a pool of threads that share a mutex and barriers,
 *  which a jump out of one thread would leave held. A call that touches more than 16 MiB of
 *  guard pages (a runaway loop) ends the process with the report on stderr before it can leave
 *  the guards. Checked calls run one at a time. */
void CallWithGuards(const std::string& kernel, const std::vector<GuardedArg>& args,
                    const std::function<void(const std::vector<void*>&)>& call);

}  // namespace runtime
}  // namespace tessera
