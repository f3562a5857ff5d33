// set_scope: change the storage scope of a buffer allocated in the function.
#include "../utils.h"
#include "tessera/schedule/primitive.h"

namespace tessera {
namespace schedule {

void SetScope(ScheduleState& state, const StmtSRef& block_sref, int buffer_index,
              const std::string& storage_scope) {
  const BlockNode* block = BlockOf(block_sref);
  if (buffer_index < 0 || static_cast<size_t>(buffer_index) >= block->writes.size()) {
    Fail("The write buffer index is out of range",
         "The write buffer index " + std::to_string(buffer_index) +
             " is out of range: the block {0} "
             "has " +
             std::to_string(block->writes.size()) + " write buffers",
         {block_sref->stmt});
  }
  if (!IsValidScope(storage_scope)) {
    Fail("Invalid storage scope '" + storage_scope + "'",
         "Invalid storage scope '" + storage_scope +
             "': expected \"global\", \"shared\", "
             "\"shared.dyn\", \"local\", \"warp\", \"lsram\", \"gsram\", "
             "or global/shared/local/warp with a tag (\"global.vtcm\")");
  }
  const Buffer& buffer = block->writes[buffer_index]->buffer;
  StmtSRef alloc = FindAllocatingBlock(state, block_sref.get(), buffer.get());
  if (!alloc) {
    Fail("Cannot set the scope of a buffer of the function's parameters",
         "The buffer " + buffer->name +
             " written by {0} is a function parameter; set_scope applies "
             "to buffers allocated in the function",
         {block_sref->stmt});
  }
  if (buffer->scope() == storage_scope) return;
  Buffer scoped = WithNameAndScope(buffer, buffer->name, storage_scope);
  BufferMap bmap{{buffer.get(), scoped}};
  // A buffer matched to a subregion of it lives in the same memory: it takes the scope too
  // (and so does a match of that match), as in TVM.
  for (bool grew = true; grew;) {
    grew = false;
    PostOrderVisit(alloc->stmt, [&](const ObjectRef& n) {
      auto* b = AsPtr<BlockNode>(n);
      if (!b) return;
      for (const MatchBufferRegion& m : b->match_buffers) {
        if (!bmap.count(m->source->buffer.get()) || bmap.count(m->buffer.get())) continue;
        bmap[m->buffer.get()] = WithNameAndScope(m->buffer, m->buffer->name, storage_scope);
        grew = true;
      }
    });
  }
  BlockReuse reuse;
  Stmt result = ReplaceBuffers(alloc->stmt, bmap, &reuse);
  state.Replace(alloc.get(), alloc->stmt.get(), result, reuse);
}

}  // namespace schedule
}  // namespace tessera
