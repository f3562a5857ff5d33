// unsafe_hide_buffer_access: drop chosen entries of a block's read or write regions (e.g. the
// index buffers of an indirect access), so that later analyses and tensorize see only the rest.
// Unsafe: dependence analysis no longer sees the hidden accesses.
#include <set>

#include "../utils.h"
#include "tessera/schedule/primitive.h"

namespace tessera {
namespace schedule {

void UnsafeHideBufferAccess(ScheduleState& state, const StmtSRef& block_sref, bool is_write,
                            const std::vector<int64_t>& indices) {
  const BlockNode* block = BlockOf(block_sref);
  const std::vector<BufferRegion>& regions = is_write ? block->writes : block->reads;
  const int64_t n = static_cast<int64_t>(regions.size());
  std::set<int64_t> hidden;
  for (int64_t index : indices) {
    if (index < 0 || index >= n) {
      std::string kind = is_write ? "write" : "read";
      Fail("unsafe_hide_buffer_access: buffer index " + std::to_string(index) +
               " is out of range",
           "unsafe_hide_buffer_access: the block {0} has " + std::to_string(n) + " " + kind +
               " region" + (n == 1 ? "" : "s") + ", so an index must be in [0, " +
               std::to_string(n) + "); got " + std::to_string(index),
           {block_sref->stmt});
    }
    hidden.insert(index);
  }
  Block result = CopyBlock(block);
  std::vector<BufferRegion> kept;
  for (int64_t i = 0; i < n; ++i) {
    if (!hidden.count(i)) kept.push_back(regions[static_cast<size_t>(i)]);
  }
  (is_write ? result->writes : result->reads) = std::move(kept);
  state.Replace(block_sref.get(), block, result, {{block, result}});
}

}  // namespace schedule
}  // namespace tessera
