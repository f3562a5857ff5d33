// storage_align: ask for padding so that a buffer's stride on an axis is offset mod factor.
#include "../utils.h"
#include "tessera/schedule/primitive.h"

namespace tessera {
namespace schedule {

void StorageAlign(ScheduleState& state, const StmtSRef& block_sref, int buffer_index, int axis,
                  int factor, int offset) {
  const BlockNode* block = BlockOf(block_sref);
  if (buffer_index < 0 || static_cast<size_t>(buffer_index) >= block->writes.size()) {
    Fail("The write buffer index is out of range",
         "The write buffer index " + std::to_string(buffer_index) +
             " is out of range: the block {0} "
             "has " +
             std::to_string(block->writes.size()) + " write buffers",
         {block_sref->stmt});
  }
  const Buffer& buffer = block->writes[buffer_index]->buffer;
  int ndim = static_cast<int>(buffer->shape.size());
  if (axis < -ndim || axis >= ndim) {
    Fail("The axis is out of range",
         "The axis " + std::to_string(axis) + " is out of range for the " + std::to_string(ndim) +
             "-dimensional buffer " + buffer->name + " written by {0}",
         {block_sref->stmt});
  }
  if (axis < 0) axis += ndim;
  if (factor <= 0) {
    Fail("The factor must be positive, but got " + std::to_string(factor), "", {block_sref->stmt});
  }
  if (offset < 0 || offset >= factor) {
    Fail("The offset must be in [0, factor)",
         "The offset " + std::to_string(offset) + " must be in [0, " + std::to_string(factor) + ")",
         {block_sref->stmt});
  }
  if (!FindAllocatingBlock(state, block_sref.get(), buffer.get())) {
    Fail("Cannot align a buffer of the function's parameters",
         "The buffer " + buffer->name +
             " written by {0} is a function parameter; storage_align "
             "applies to buffers allocated in the function",
         {block_sref->stmt});
  }
  auto entry = [](int a, int b, int c, int d) {
    return ArrayNode::Make({Int32(a), Int32(b), Int32(c), Int32(d)});
  };
  std::vector<ObjectRef> entries;
  auto it = block->annotations.find("buffer_dim_align");
  if (it != block->annotations.end()) {
    if (auto* old = AsPtr<ArrayNode>(it->second)) {
      for (const ObjectRef& e : old->items) {
        auto* items = AsPtr<ArrayNode>(e);
        bool same = items && items->items.size() == 4 &&
                    IsConstInt(std::static_pointer_cast<ExprNode>(items->items[0]), buffer_index) &&
                    IsConstInt(std::static_pointer_cast<ExprNode>(items->items[1]), axis);
        if (!same) entries.push_back(e);
      }
    }
  }
  entries.push_back(entry(buffer_index, axis, factor, offset));
  Block result = CopyBlock(block);
  result->annotations["buffer_dim_align"] = ArrayNode::Make(entries);
  state.Replace(block_sref.get(), block, result);
}

}  // namespace schedule
}  // namespace tessera
