// unsafe_set_dtype: change the element type of a buffer allocated in the function; stores cast
// to the new type and loads cast back to the old one.
#include "../utils.h"
#include "tessera/schedule/primitive.h"

namespace tessera {
namespace schedule {
namespace {

Buffer WithDType(const Buffer& b, DataType dtype) {
  Var data = VarNode::MakePointer(b->data->name, dtype, b->scope());
  Buffer out = BufferNode::Make(data, dtype, b->shape, b->strides, b->elem_offset, b->name,
                                b->data_alignment, b->offset_factor, b->span);
  out->axis_separators = b->axis_separators;
  return out;
}

/*! \brief Replaces `old` (and the match buffers over it) by buffers of `dtype`. */
class DTypeRewriter : public BlockRecordingMutator {
 public:
  using BlockRecordingMutator::VisitExpr_;
  using BlockRecordingMutator::VisitStmt_;
  DTypeRewriter(const Buffer& old, DataType dtype) : from_(old->dtype), to_(dtype) {
    map_[old.get()] = WithDType(old, dtype);
  }

  Expr VisitExpr_(const BufferLoadNode* op) override {
    Expr e = StmtExprMutator::VisitExpr_(op);
    auto* load = AsPtr<BufferLoadNode>(e);
    auto it = map_.find(load->buffer.get());
    if (it == map_.end()) return e;
    return CastNode::Make(
        from_, BufferLoadNode::Make(it->second, load->indices, load->predicate, load->span));
  }
  Stmt VisitStmt_(const BufferStoreNode* op) override {
    Stmt s = StmtExprMutator::VisitStmt_(op);
    auto* store = AsPtr<BufferStoreNode>(s);
    auto it = map_.find(store->buffer.get());
    if (it == map_.end()) return s;
    return BufferStoreNode::Make(it->second, CastNode::Make(to_, store->value), store->indices,
                                 store->predicate, store->span);
  }
  Stmt VisitStmt_(const BlockNode* op) override {
    // Match buffers over the buffer change type first, so that the body sees them.
    std::vector<MatchBufferRegion> matches = op->match_buffers;
    bool changed = false;
    for (MatchBufferRegion& m : matches) {
      auto it = map_.find(m->source->buffer.get());
      if (it == map_.end()) continue;
      Buffer target = WithDType(m->buffer, to_);
      map_[m->buffer.get()] = target;
      m = MatchBufferRegionNode::Make(
          target, BufferRegionNode::Make(it->second, m->source->region, m->source->span), m->span);
      changed = true;
    }
    Stmt s = StmtExprMutator::VisitStmt_(op);
    Block copy = CopyBlock(AsPtr<BlockNode>(s));
    auto map_regions = [&](std::vector<BufferRegion>& regions) {
      for (BufferRegion& r : regions) {
        auto it = map_.find(r->buffer.get());
        if (it == map_.end()) continue;
        r = BufferRegionNode::Make(it->second, r->region, r->span);
        changed = true;
      }
    };
    map_regions(copy->reads);
    map_regions(copy->writes);
    for (Buffer& b : copy->alloc_buffers) {
      auto it = map_.find(b.get());
      if (it == map_.end()) continue;
      b = it->second;
      changed = true;
    }
    if (changed) copy->match_buffers = matches;
    Stmt result = changed ? Stmt(copy) : s;
    if (result.get() != op) reuse[op] = As<BlockNode>(result);
    return result;
  }

 private:
  DataType from_, to_;
  BufferMap map_;
};

}  // namespace

const Buffer& NthAccessBuffer(const StmtSRef& block_sref, int index, bool is_write) {
  const BlockNode* block = BlockOf(block_sref);
  const auto& regions = is_write ? block->writes : block->reads;
  if (index < 0 || static_cast<size_t>(index) >= regions.size()) {
    const char* kind = is_write ? "write" : "read";
    std::string n = std::to_string(regions.size());
    Fail(std::string("the ") + kind + " buffer index is out of range",
         std::string("the ") + kind + " buffer index " + std::to_string(index) +
             " is out of range: the block {0} has " + n + " " + kind + " buffers",
         {block_sref->stmt});
  }
  return regions[index]->buffer;
}

StmtSRef AllocatingBlockOrFail(const ScheduleState& state, const StmtSRef& block_sref,
                               const Buffer& buffer) {
  StmtSRef alloc = FindAllocatingBlock(state, block_sref.get(), buffer.get());
  if (!alloc) {
    Fail("the buffer is a function parameter or a match_buffer, not a block's allocation",
         "the buffer " + buffer->name +
             " is not allocated by any block: a function parameter or a buffer bound by "
             "match_buffer has a dtype fixed from outside");
  }
  return alloc;
}

void UnsafeSetDType(ScheduleState& state, const StmtSRef& block_sref, int buffer_index,
                    DataType dtype) {
  const Buffer& buffer = NthAccessBuffer(block_sref, buffer_index, /*is_write=*/true);
  if (buffer->dtype == dtype) return;
  StmtSRef alloc = AllocatingBlockOrFail(state, block_sref, buffer);
  DTypeRewriter rewriter(buffer, dtype);
  Stmt result = rewriter.VisitStmt(alloc->stmt);
  state.Replace(alloc.get(), alloc->stmt.get(), result, rewriter.reuse);
}

}  // namespace schedule
}  // namespace tessera
