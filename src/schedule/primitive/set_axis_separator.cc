// set_axis_separator: set the axis separators of a buffer a block reads or writes.
#include "../utils.h"
#include "tessera/schedule/primitive.h"

namespace tessera {
namespace schedule {
namespace {

Buffer WithAxisSeparators(const Buffer& b, std::vector<int64_t> separators) {
  Buffer out = BufferNode::Make(b->data, b->dtype, b->shape, b->strides, b->elem_offset, b->name,
                                b->data_alignment, b->offset_factor, b->span);
  out->axis_separators = std::move(separators);
  return out;
}

// The match buffers over `from` (and over those, recursively) get separators as TVM gives
// them: the backing buffer's when they have its rank, else as many zeros.
void AddViews(const Stmt& root, BufferMap* map) {
  bool grew = true;
  while (grew) {
    grew = false;
    PostOrderVisit(root, [&](const ObjectRef& n) {
      auto* block = AsPtr<BlockNode>(n);
      if (!block) return;
      for (const MatchBufferRegion& m : block->match_buffers) {
        auto src = map->find(m->source->buffer.get());
        if (src == map->end() || map->count(m->buffer.get())) continue;
        const Buffer& backing = src->second;
        std::vector<int64_t> seps = m->buffer->shape.size() == backing->shape.size()
                                        ? backing->axis_separators
                                        : std::vector<int64_t>(backing->axis_separators.size(), 0);
        (*map)[m->buffer.get()] = WithAxisSeparators(m->buffer, seps);
        grew = true;
      }
    });
  }
}

}  // namespace

void SetAxisSeparator(ScheduleState& state, const StmtSRef& block_sref, int buffer_index,
                      bool is_write, const std::vector<int64_t>& axis_separators) {
  const Buffer& buffer = NthAccessBuffer(block_sref, buffer_index, is_write);
  for (int64_t s : axis_separators) {
    if (s < 0 || s > static_cast<int64_t>(buffer->shape.size())) {
      Fail("An axis separator is out of range",
           "The axis separator " + std::to_string(s) + " of buffer " + buffer->name +
               " is out of range: the buffer has " + std::to_string(buffer->shape.size()) +
               " dimensions",
           {block_sref->stmt});
    }
  }
  for (size_t i = 1; i < axis_separators.size(); ++i) {
    if (axis_separators[i] < axis_separators[i - 1])
      Fail("axis separators must be given in ascending order");
  }
  Buffer updated = WithAxisSeparators(buffer, axis_separators);
  BufferMap map{{buffer.get(), updated}};
  StmtSRef alloc = FindAllocatingBlock(state, block_sref.get(), buffer.get());
  std::string func_name = state.FuncNameOf(block_sref.get());
  PrimFunc func = state.mod()->Lookup(func_name);
  if (alloc) {
    AddViews(alloc->stmt, &map);
    BlockReuse reuse;
    Stmt result = ReplaceBuffers(alloc->stmt, map, &reuse);
    state.Replace(alloc.get(), alloc->stmt.get(), result, reuse);
    return;
  }
  if (!IsParamBuffer(func, buffer.get())) {
    Fail("The buffer is defined by a match_buffer of a block",
         "The buffer " + buffer->name +
             " is a view (match_buffer) of another buffer: set the axis separators of the "
             "buffer it views",
         {block_sref->stmt});
  }
  AddViews(func->body, &map);
  BlockReuse reuse;
  Stmt body = ReplaceBuffers(func->body, map, &reuse);
  std::vector<std::pair<Var, Buffer>> buffer_map = func->buffer_map;
  for (auto& [param, buf] : buffer_map) {
    if (buf == buffer) buf = updated;
  }
  state.ReplaceFunc(
      func_name,
      PrimFuncNode::Make(func->params, buffer_map, body, func->ret_type, func->attrs, func->span),
      reuse);
}

}  // namespace schedule
}  // namespace tessera
