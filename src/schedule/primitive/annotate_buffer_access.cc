// annotate_buffer_access: set the region a block reads or writes of a buffer explicitly and mark
// it in the block's annotations ("explicit_read_region" / "explicit_write_region").
#include "../utils.h"
#include "tessera/schedule/primitive.h"

namespace tessera {
namespace schedule {

void AnnotateBufferAccess(ScheduleState& state, const StmtSRef& block_sref, int buffer_index,
                          bool is_write, const IndexMap& ranges) {
  const BlockNode* block = BlockOf(block_sref);
  const Buffer& buffer = NthAccessBuffer(block_sref, buffer_index, is_write);
  if (ranges.initial_indices.size() != block->iter_vars.size()) {
    Fail("annotate_buffer_access: the region takes " +
         std::to_string(ranges.initial_indices.size()) + " iterators but the block has " +
         std::to_string(block->iter_vars.size()));
  }
  if (ranges.final_indices.size() != 2 * buffer->shape.size()) {
    Fail("annotate_buffer_access: the region has " +
         std::to_string(ranges.final_indices.size() / 2) + " dimensions but the buffer " +
         buffer->name + " has " + std::to_string(buffer->shape.size()));
  }
  std::vector<Expr> iters;
  for (const IterVar& iv : block->iter_vars) iters.push_back(iv->var);
  std::vector<Expr> bounds = ranges.Apply(iters);
  std::vector<Range> region;
  for (size_t i = 0; i < bounds.size(); i += 2) {
    region.push_back(RangeNode::Make(bounds[i], Simplify(SubE(bounds[i + 1], bounds[i]))));
  }
  Block result = CopyBlock(block);
  auto& regions = is_write ? result->writes : result->reads;
  regions[buffer_index] = BufferRegionNode::Make(buffer, region);
  std::string key = is_write ? "explicit_write_region" : "explicit_read_region";
  std::vector<ObjectRef> indices;
  auto it = result->annotations.find(key);
  if (it != result->annotations.end()) {
    if (auto* array = AsPtr<ArrayNode>(it->second)) indices = array->items;
  }
  bool present = false;
  for (const ObjectRef& i : indices) {
    auto c = AsPtr<IntImmNode>(i);
    present = present || (c && c->value == buffer_index);
  }
  if (!present) indices.push_back(IntImmNode::Make(DataType::Int(32), buffer_index));
  result->annotations[key] = ArrayNode::Make(indices);
  state.Replace(block_sref.get(), block, result, {{block, result}});
}

}  // namespace schedule
}  // namespace tessera
