// cache_read, cache_write: route a buffer's reads (writes) through a copy in another scope.
#include <tuple>

#include "../utils.h"
#include "tessera/schedule/primitive.h"

namespace tessera {
namespace schedule {
namespace {

/*! \brief Loops ax0, ax1, ... over `region` around a block `name` copying `src` to `dst`. */
/*! \brief Loops ax0, ax1, ... over `region` around a block `name` copying `src` to `dst`,
 *  placed under `parent`; where the region may leave the buffer (a relaxed access guarded by a
 *  predicate), the copy gets the predicate that keeps it inside. */
std::pair<Stmt, Block> MakeCacheStage(const BufferRegion& region, const Buffer& src,
                                      const Buffer& dst, const std::string& name,
                                      const StmtSRefNode* parent) {
  arith::Analyzer ana;
  BindLoops(&ana, parent, /*inclusive=*/true);
  std::vector<For> loops;
  std::vector<IterVar> iters;
  std::vector<Expr> values, indices;
  std::vector<Range> point;
  Expr predicate;
  for (size_t d = 0; d < region->region.size(); ++d) {
    const Range& r = region->region[d];
    DataType t = r->extent->dtype;
    Var ax = NewVar("ax" + std::to_string(d), t);
    loops.push_back(ForNode::Make(ax, IntConst(t, 0), r->extent, ForKind::kSerial, Evaluate0()));
    ana.Bind(ax, RangeNode::Make(IntConst(t, 0), r->extent));
    Var v = NewVar("v" + std::to_string(d), t);
    const Expr& extent = src->shape[d];
    iters.push_back(IterVarNode::Make(RangeNode::Make(IntConst(extent->dtype, 0), extent), v,
                                      IterVarType::kDataPar));
    Expr value = Simplify(AddE(r->min, ax));
    values.push_back(value);
    if (!ana.CanProve(GENode::Make(value, IntConst(t, 0)))) {
      predicate = AndE(predicate, GENode::Make(value, IntConst(t, 0)));
    }
    if (!ana.CanProve(LTNode::Make(value, CastTo(t, extent)))) {
      predicate = AndE(predicate, LTNode::Make(value, CastTo(t, extent)));
    }
    indices.push_back(v);
    point.push_back(RangeNode::Make(v, IntConst(t, 1)));
  }
  Stmt body = BufferStoreNode::Make(dst, BufferLoadNode::Make(src, indices), indices);
  Block block = BlockNode::Make(iters, {BufferRegionNode::Make(src, point)},
                                {BufferRegionNode::Make(dst, point)}, name, body);
  Expr guard = predicate ? predicate : Bool(true);
  return {MakeLoopNest(loops, BlockRealizeNode::Make(values, guard, block)), block};
}

void CheckIndexAndScope(const StmtSRef& block_sref, int index, size_t count, const char* kind,
                        const std::string& scope) {
  if (index < 0 || static_cast<size_t>(index) >= count) {
    Fail(std::string("The ") + kind + " buffer index is out of range",
         std::string("The ") + kind + " buffer index " + std::to_string(index) +
             " is out of range: "
             "the block {0} has " +
             std::to_string(count) + " " + kind + " buffers",
         {block_sref->stmt});
  }
  if (!IsValidScope(scope)) {
    Fail("Invalid storage scope '" + scope + "'",
         "Invalid storage scope '" + scope +
             "': expected \"global\", \"shared\", \"shared.dyn\", "
             "\"local\", \"warp\", \"lsram\" or \"gsram\"");
  }
}

StmtSRef CheckSingleWriter(const ScheduleState& state, const BlockScope& scope,
                           const BufferNode* buffer, const StmtSRef& scope_root) {
  auto it = scope.writers.find(buffer);
  if (it == scope.writers.end() || it->second.empty()) return nullptr;
  if (it->second.size() > 1 && state.enable_check()) {
    Fail("The buffer has more than one writer",
         "The buffer " + buffer->name +
             " is written by more than one block of the scope {0}: {1} "
             "and {2}",
         {scope_root->stmt, it->second[0]->stmt, it->second[1]->stmt});
  }
  return it->second[0];
}

/*! \brief Replace `buffer` by `cache` in the read accesses of `consumers`. */
void RedirectReads(const ScheduleState& state, const std::vector<StmtSRef>& consumers,
                   const Buffer& buffer, const Buffer& cache, StmtEditor* editor) {
  for (const StmtSRef& c : consumers) {
    BlockRealize realize = GetBlockRealize(state, c.get());
    BlockReuse reuse;
    Stmt replaced = ReplaceBuffers(realize, {{buffer.get(), cache}}, &reuse);
    editor->replace[realize.get()] = replaced;
    for (const auto& [old_block, new_block] : reuse) editor->reuse[old_block] = new_block;
  }
}

StmtSRef Finish(ScheduleState& state, const StmtSRef& block_sref, const Buffer& buffer,
                StmtEditor* editor, const Buffer& cache, const Block& cache_block) {
  EditAndAllocate(state, AllocationSite(state, block_sref.get(), buffer.get()), editor, cache);
  return state.GetSRef(cache_block.get());
}

std::vector<StmtSRef> CheckConsumers(const ScheduleState& state, const std::vector<StmtSRef>& given,
                                     const BlockScope& scope, const BufferNode* buffer,
                                     const StmtSRef& exclude) {
  std::vector<StmtSRef> out;
  auto reads = [&](const StmtSRef& b) {
    for (const BufferRegion& r : b->block()->reads) {
      if (r->buffer.get() == buffer) return true;
    }
    return false;
  };
  if (!given.empty()) {
    for (const StmtSRef& b : given) {
      if (std::find(scope.blocks.begin(), scope.blocks.end(), b) == scope.blocks.end() ||
          !reads(b)) {
        Fail("A consumer block does not read the buffer in the scope",
             "The block {0} given as a consumer does not read " + buffer->name + " in this scope",
             {b->stmt});
      }
      out.push_back(b);
    }
    return out;
  }
  for (const StmtSRef& b : scope.blocks) {
    if (b != exclude && reads(b)) out.push_back(b);
  }
  return out;
}

/*! \brief The readers of `buffer` among the blocks of the scope, but `writer`. */
std::vector<StmtSRef> ReadersOf(const BlockScope& scope, const BufferNode* buffer,
                                const StmtSRef& writer) {
  std::vector<StmtSRef> out;
  for (const StmtSRef& b : scope.blocks) {
    if (b == writer) continue;
    for (const BufferRegion& r : b->block()->reads) {
      if (r->buffer.get() == buffer) {
        out.push_back(b);
        break;
      }
    }
  }
  return out;
}

/*! \brief Where a copy of what `writer` wrote goes: right after the writer, in the deepest loop
 *  (or the scope root) that holds the writer and every reader, which must all come later there. */
std::pair<const StmtSRefNode*, int64_t> PlaceAfterWriter(const StmtSRef& scope_root,
                                                         const StmtSRef& writer,
                                                         const std::vector<StmtSRef>& readers,
                                                         const BufferNode* buffer) {
  const StmtSRefNode* parent = scope_root.get();
  if (!readers.empty()) {
    std::vector<const StmtSRefNode*> nodes = {writer.get()};
    for (const StmtSRef& r : readers) nodes.push_back(r.get());
    parent = LowestCommonAncestor(nodes);
  }
  int64_t position = ChildIndex(parent, writer.get()) + 1;
  for (const StmtSRef& r : readers) {
    if (ChildIndex(parent, r.get()) < position) {
      Fail("Cannot find a place for the cache between the writer and a consumer",
           "Cannot place the cache of " + buffer->name +
               ": the consumer {1} shares its loop nest with the writer {0}",
           {writer->stmt, r->stmt});
    }
  }
  return {parent, position};
}

}  // namespace

StmtSRef CacheRead(ScheduleState& state, const StmtSRef& block_sref, int index,
                   const std::string& storage_scope, const std::vector<StmtSRef>& consumer_srefs) {
  const BlockNode* block = BlockOf(block_sref);
  CheckIndexAndScope(block_sref, index, block->reads.size(), "read", storage_scope);
  StmtSRef scope_root = GetScopeRoot(state, block_sref.get());
  if (!scope_root) Fail("The root block has no scope to cache in", "", {block_sref->stmt});
  Buffer buffer = block->reads[index]->buffer;
  BlockScope scope = ComputeBlockScope(state, scope_root.get());
  StmtSRef writer = CheckSingleWriter(state, scope, buffer.get(), scope_root);
  std::vector<StmtSRef> consumers =
      CheckConsumers(state, consumer_srefs, scope, buffer.get(), writer);
  if (consumers.empty()) consumers.push_back(block_sref);
  for (const StmtSRef& c : consumers) {
    for (const BufferRegion& w : c->block()->writes) {
      if (w->buffer == buffer) {
        Fail("The consumer block also writes the buffer",
             "The block {0} reads and writes " + buffer->name +
                 "; cache_read redirects the reads of blocks that only read the buffer",
             {c->stmt});
      }
    }
  }
  Buffer cache = WithNameAndScope(buffer, buffer->name + "_" + storage_scope, storage_scope);
  BufferRegion region = BufferRegionNode::FullRegion(buffer);
  const StmtSRefNode* parent = scope_root.get();
  int64_t position = 0;
  if (writer) {
    std::tie(parent, position) =
        PlaceAfterWriter(scope_root, writer, ReadersOf(scope, buffer.get(), writer), buffer.get());
    for (const BufferRegion& w : writer->block()->writes) {
      if (w->buffer == buffer) {
        region = RelaxRegion(RegionInLoops(state, writer.get(), w),
                             LoopDomainsBetween(parent, writer.get()));
      }
    }
  }
  auto [nest, cache_block] = MakeCacheStage(region, buffer, cache, cache->name, parent);
  StmtEditor editor;
  RedirectReads(state, consumers, buffer, cache, &editor);
  editor.insert[parent->stmt.get()].emplace_back(position, nest);
  return Finish(state, block_sref, buffer, &editor, cache, cache_block);
}

StmtSRef CacheWrite(ScheduleState& state, const StmtSRef& block_sref, int index,
                    const std::string& storage_scope, const std::vector<StmtSRef>& consumer_srefs) {
  const BlockNode* block = BlockOf(block_sref);
  CheckIndexAndScope(block_sref, index, block->writes.size(), "write", storage_scope);
  StmtSRef scope_root = GetScopeRoot(state, block_sref.get());
  if (!scope_root) Fail("The root block has no scope to cache in", "", {block_sref->stmt});
  Buffer buffer = block->writes[index]->buffer;
  BlockScope scope = ComputeBlockScope(state, scope_root.get());
  CheckSingleWriter(state, scope, buffer.get(), scope_root);
  std::vector<StmtSRef> consumers;
  if (!consumer_srefs.empty())
    consumers = CheckConsumers(state, consumer_srefs, scope, buffer.get(), block_sref);
  Buffer cache = WithNameAndScope(buffer, buffer->name + "_" + storage_scope, storage_scope);
  auto [parent, position] = PlaceAfterWriter(
      scope_root, block_sref, ReadersOf(scope, buffer.get(), block_sref), buffer.get());
  BufferRegion region = RelaxRegion(RegionInLoops(state, block_sref.get(), block->writes[index]),
                                    LoopDomainsBetween(parent, block_sref.get()));
  auto [nest, cache_block] = MakeCacheStage(region, cache, buffer, cache->name, parent);
  StmtEditor editor;
  // The writer writes (and reads, for a reduction) the cache.
  BlockRealize realize = GetBlockRealize(state, block_sref.get());
  BlockReuse reuse;
  editor.replace[realize.get()] = ReplaceBuffers(realize, {{buffer.get(), cache}}, &reuse);
  for (const auto& [old_block, new_block] : reuse) editor.reuse[old_block] = new_block;
  RedirectReads(state, consumers, buffer, cache, &editor);
  editor.insert[parent->stmt.get()].emplace_back(position, nest);
  return Finish(state, block_sref, buffer, &editor, cache, cache_block);
}

std::vector<StmtSRef> CacheInplace(ScheduleState& state, const StmtSRef& block_sref, int index,
                                   const std::string& storage_scope) {
  const BlockNode* block = BlockOf(block_sref);
  CheckIndexAndScope(block_sref, index, block->reads.size(), "read", storage_scope);
  StmtSRef scope_root = GetScopeRoot(state, block_sref.get());
  if (!scope_root) Fail("The root block has no scope to cache in", "", {block_sref->stmt});
  Buffer buffer = block->reads[index]->buffer;
  BufferRegion read_region, write_region;
  for (const BufferRegion& r : block->reads) {
    if (r->buffer == buffer && !read_region) read_region = r;
  }
  for (const BufferRegion& w : block->writes) {
    if (w->buffer == buffer && !write_region) write_region = w;
  }
  if (!read_region || !write_region) {
    Fail("The target block does not both read & write target buffer.",
         "The target block {0} does not both read & write target buffer " + buffer->name + ".",
         {block_sref->stmt});
  }
  Buffer cache = WithNameAndScope(buffer, buffer->name + "_" + storage_scope, storage_scope);
  // Both copies go next to the block, in its parent: the copy in before it, the copy out after.
  const StmtSRefNode* parent = block_sref->parent;
  int64_t position = ChildIndex(parent, block_sref.get());
  DomMap none;
  BufferRegion in_region = RelaxRegion(RegionInLoops(state, block_sref.get(), read_region), none);
  BufferRegion out_region = RelaxRegion(RegionInLoops(state, block_sref.get(), write_region), none);
  auto [in_nest, in_block] = MakeCacheStage(in_region, buffer, cache, cache->name, parent);
  auto [out_nest, out_block] = MakeCacheStage(out_region, cache, buffer, cache->name, parent);
  StmtEditor editor;
  BlockRealize realize = GetBlockRealize(state, block_sref.get());
  BlockReuse reuse;
  // Opaque uses of the data pointer (an extern call's argument) move to the cache too.
  Stmt replaced = ReplaceBuffers(realize, {{buffer.get(), cache}}, &reuse);
  Stmt substituted = Substitute(replaced, VarMap{{buffer->data.get(), cache->data}});
  if (substituted != replaced) reuse[block] = AsPtr<BlockRealizeNode>(substituted)->block;
  editor.replace[realize.get()] = substituted;
  for (const auto& [old_block, new_block] : reuse) editor.reuse[old_block] = new_block;
  editor.insert[parent->stmt.get()].emplace_back(position, in_nest);
  editor.insert[parent->stmt.get()].emplace_back(position + 1, out_nest);
  EditAndAllocate(state, AllocationSite(state, block_sref.get(), buffer.get()), &editor, cache);
  return {state.GetSRef(in_block.get()), state.GetSRef(out_block.get())};
}

}  // namespace schedule
}  // namespace tessera
