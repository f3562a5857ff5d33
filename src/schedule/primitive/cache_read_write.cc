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
             "\"local\", \"warp\", \"lsram\", \"gsram\", "
             "or global/shared/local/warp with a tag (\"global.vtcm\")");
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

std::vector<StmtSRef> CheckConsumers(const ScheduleState& state, const std::vector<StmtSRef>& given,
                                     const BlockScope& scope, const BufferNode* buffer) {
  auto reads = [&](const StmtSRef& b) {
    for (const BufferRegion& r : b->block()->reads) {
      if (r->buffer.get() == buffer) return true;
    }
    return false;
  };
  for (const StmtSRef& b : given) {
    if (std::find(scope.blocks.begin(), scope.blocks.end(), b) == scope.blocks.end() || !reads(b)) {
      Fail("A consumer block does not read the buffer in the scope",
           "The block {0} given as a consumer does not read " + buffer->name + " in this scope",
           {b->stmt});
    }
  }
  return given;
}

/*! \brief Where a cache stage goes and what it copies (TVM's CacheStageInfo). */
struct CacheStage {
  Buffer original, cache;
  /*! \brief The region of `original` the stage copies. */
  BufferRegion region;
  /*! \brief The cache holds only `region` (indices shifted by its minimum), not the whole
   *  buffer. */
  bool compact = false;
  /*! \brief The loop or block whose body gets the stage, and the index among its items. */
  const StmtSRefNode* loc = nullptr;
  int64_t pos = 0;
  /*! \brief Blocks that read the cache (cache_read: empty means every reader). */
  std::unordered_set<const StmtNode*> consumers;
  Stmt nest;
  Block block;
};

/*!
 * \brief TVM's insertion point of a cache stage: the deepest loop (or the scope root) whose
 *  body holds `block_sref` (the writer) and, later, one of `related` (the consumers of
 *  cache_read, the other readers for cache_write), right before that related item; with no
 *  related block, the end of the scope root's body.
 */
void DetectLocation(const ScheduleState& state, const StmtSRef& block_sref,
                    const StmtSRef& scope_root, const std::vector<StmtSRef>& related,
                    CacheStage* info) {
  if (related.empty()) {
    info->loc = scope_root.get();
    info->pos = static_cast<int64_t>(BodyItems(BodyOf(scope_root.get())).size());
    return;
  }
  class Detector : public StmtVisitor {
   public:
    using StmtVisitor::VisitStmt_;
    Detector(const ScheduleState& state, const StmtNode* block, const StmtNode* scope,
             const std::vector<StmtSRef>& related)
        : state_(state), block_(block), scope_(scope), related_(related) {}
    void VisitStmt_(const SeqStmtNode* op) override {
      bool previous = visited_block;
      visited_block = false;
      for (size_t i = 0; i < op->seq.size(); ++i) {
        if (pos != -1) break;
        VisitStmt(op->seq[i]);
        if (visited_block && visited_related && pos == -1) {
          pos = static_cast<int64_t>(i);
          break;
        }
        if (visited_related) break;
      }
      visited_block = visited_block || previous;
    }
    void VisitStmt_(const BlockNode* op) override {
      if (op == scope_) {
        StmtVisitor::VisitStmt_(op);
        if (visited_related && !loc) {
          loc = state_.GetSRef(op).get();
          if (!visited_block && pos == -1) pos = 0;
        }
        return;
      }
      if (op == block_) {
        visited_block = true;
        return;
      }
      for (const StmtSRef& r : related_) {
        if (r->stmt.get() == op) {
          visited_related = true;
          return;
        }
      }
    }
    void VisitStmt_(const ForNode* op) override {
      StmtVisitor::VisitStmt_(op);
      if (visited_block && visited_related && !loc && pos != -1) loc = state_.GetSRef(op).get();
    }
    const StmtSRefNode* loc = nullptr;
    int64_t pos = -1;
    bool visited_block = false, visited_related = false;

   private:
    const ScheduleState& state_;
    const StmtNode* block_;
    const StmtNode* scope_;
    const std::vector<StmtSRef>& related_;
  };
  Detector detector(state, block_sref->stmt.get(), scope_root->stmt.get(), related);
  detector.VisitStmt(scope_root->stmt);
  info->loc = detector.loc ? detector.loc : scope_root.get();
  info->pos = detector.pos < 0 ? 0 : detector.pos;
}

/*! \brief Whether every block of the scope reading `buffer` lies under `stmt_sref`. */
bool AllReadersUnder(const ScheduleState& state, const BufferNode* buffer,
                     const StmtSRef& scope_root, const StmtSRefNode* stmt_sref) {
  std::unordered_set<const StmtSRefNode*> under;
  for (const StmtSRef& b : GetChildBlocks(state, stmt_sref)) under.insert(b.get());
  for (const StmtSRef& b : GetChildBlocks(state, scope_root.get())) {
    for (const BufferRegion& r : b->block()->reads) {
      if (r->buffer.get() == buffer && !under.count(b.get())) return false;
    }
  }
  return true;
}

/*! \brief The cache buffer, shaped as the region when compact; the stage copying between it
 *  and the original (`is_read`: original to cache). */
void MakeStage(CacheStage* info, bool is_read, const std::string& scope) {
  const Buffer& original = info->original;
  Buffer cache = WithNameAndScope(original, original->name + "_" + scope, scope);
  if (info->compact) {
    std::vector<Expr> shape;
    for (const Range& r : info->region->region) shape.push_back(r->extent);
    Buffer reshaped =
        BufferNode::Make(cache->data, cache->dtype, shape, {}, cache->elem_offset, cache->name,
                         cache->data_alignment, cache->offset_factor, cache->span);
    reshaped->axis_separators = cache->axis_separators;
    cache = reshaped;
  }
  info->cache = cache;
  arith::Analyzer ana;
  BindLoops(&ana, info->loc, /*inclusive=*/true);
  // The iterators of the blocks around the stage range over their domains.
  for (const StmtSRefNode* p = info->loc; p; p = p->parent) {
    if (const BlockNode* b = p->block()) {
      for (const IterVar& iv : b->iter_vars) {
        if (iv->dom) ana.Bind(iv->var, iv->dom);
      }
    }
  }
  std::vector<For> loops;
  std::vector<IterVar> iters;
  std::vector<Expr> values, original_indices, cache_indices;
  std::vector<Range> original_point, cache_point;
  Expr predicate;
  for (size_t d = 0; d < info->region->region.size(); ++d) {
    const Range& r = info->region->region[d];
    DataType t = r->extent->dtype;
    Var ax = NewVar("ax" + std::to_string(d), t);
    loops.push_back(ForNode::Make(ax, IntConst(t, 0), r->extent, ForKind::kSerial, Evaluate0()));
    ana.Bind(ax, RangeNode::Make(IntConst(t, 0), r->extent));
    Var v = NewVar("v" + std::to_string(d), t);
    // Where the copy may leave the buffer (a relaxed access guarded by a predicate), it gets
    // the predicate that keeps it inside.
    const Expr& extent = original->shape[d];
    Expr position = Simplify(AddE(r->min, ax));
    // Only where the bounds show it can happen: TVM adds no predicate, and symbolic bounds
    // are taken to stay inside.
    arith::ConstIntBound bound = ana.GetConstIntBound(position);
    auto size = AsConstInt(extent);
    if (bound.min_value < 0 && !ana.CanProve(GENode::Make(position, IntConst(t, 0)))) {
      predicate = AndE(predicate, GENode::Make(position, IntConst(t, 0)));
    }
    if (size && bound.max_value >= *size &&
        !ana.CanProve(LTNode::Make(position, CastTo(t, extent)))) {
      predicate = AndE(predicate, LTNode::Make(position, CastTo(t, extent)));
    }
    if (info->compact) {
      iters.push_back(
          IterVarNode::Make(RangeNode::Make(IntConst(t, 0), r->extent), v, IterVarType::kDataPar));
      values.push_back(ax);
      // min + v, as TVM's operator+ folds it (0 + v is v).
      auto min_value = AsConstInt(r->min);
      Expr at = min_value && *min_value == 0 ? Expr(v) : AddE(r->min, v);
      original_indices.push_back(at);
      original_point.push_back(RangeNode::Make(at, IntConst(t, 1)));
    } else {
      iters.push_back(IterVarNode::Make(RangeNode::Make(IntConst(extent->dtype, 0), extent), v,
                                        IterVarType::kDataPar));
      values.push_back(position);
      original_indices.push_back(v);
      original_point.push_back(RangeNode::Make(v, IntConst(t, 1)));
    }
    cache_indices.push_back(v);
    cache_point.push_back(RangeNode::Make(v, IntConst(t, 1)));
  }
  const Buffer& src = is_read ? original : cache;
  const Buffer& dst = is_read ? cache : original;
  const auto& src_indices = is_read ? original_indices : cache_indices;
  const auto& dst_indices = is_read ? cache_indices : original_indices;
  const auto& src_point = is_read ? original_point : cache_point;
  const auto& dst_point = is_read ? cache_point : original_point;
  Stmt body = BufferStoreNode::Make(dst, BufferLoadNode::Make(src, src_indices), dst_indices);
  info->block = BlockNode::Make(iters, {BufferRegionNode::Make(src, src_point)},
                                {BufferRegionNode::Make(dst, dst_point)}, cache->name, body);
  Expr guard = predicate ? predicate : Bool(true);
  info->nest = MakeLoopNest(loops, BlockRealizeNode::Make(values, guard, info->block));
}

/*! \brief Rewrites a scope for a cache stage: accesses of the original buffer in the blocks
 *  concerned go to the cache (shifted by the region's minimum when compact), the stage is
 *  inserted and the cache allocated in the scope root. */
class CacheRewriter : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;
  CacheRewriter(const CacheStage& info, const StmtNode* scope, const StmtNode* writer, bool is_read)
      : info_(info), scope_(scope), writer_(writer), is_read_(is_read) {}
  BlockReuse reuse;

  Stmt VisitStmt_(const ForNode* op) override {
    Stmt s = StmtExprMutator::VisitStmt_(op);
    if (op != info_.loc->stmt.get()) return s;
    auto* loop = AsPtr<ForNode>(s);
    return ForNode::Make(loop->loop_var, loop->min, loop->extent, loop->for_kind,
                         Insert(loop->body), loop->thread_binding, loop->annotations, loop->span);
  }

  Stmt VisitStmt_(const BlockNode* op) override {
    return is_read_ ? VisitReadBlock(op) : VisitWriteBlock(op);
  }

  Expr VisitExpr_(const BufferLoadNode* op) override {
    Expr e = StmtExprMutator::VisitExpr_(op);
    auto* load = AsPtr<BufferLoadNode>(e);
    if (!redirect_ || load->buffer != info_.original) return e;
    return BufferLoadNode::Make(info_.cache, Shift(load->indices), load->predicate, load->span);
  }
  Stmt VisitStmt_(const BufferStoreNode* op) override {
    Stmt s = StmtExprMutator::VisitStmt_(op);
    auto* store = AsPtr<BufferStoreNode>(s);
    if (!redirect_ || store->buffer != info_.original) return s;
    return BufferStoreNode::Make(info_.cache, store->value, Shift(store->indices), store->predicate,
                                 store->span);
  }
  Expr VisitExpr_(const VarNode* op) override {
    if (redirect_ && op == info_.original->data.get()) return info_.cache->data;
    return GetRef(op);
  }

 private:
  Stmt VisitReadBlock(const BlockNode* op) {
    if (op != scope_) {
      for (const BufferRegion& w : op->writes) {
        if (w->buffer == info_.original) return GetRef(op);
      }
    }
    bool consumes = info_.consumers.empty() || info_.consumers.count(op);
    bool saved = redirect_;
    redirect_ = consumes;
    Stmt s = StmtExprMutator::VisitStmt_(op);
    redirect_ = saved;
    Block block = CopyBlock(AsPtr<BlockNode>(s));
    if (op == info_.loc->stmt.get()) block->body = Insert(block->body);
    if (op == scope_) {
      block->alloc_buffers.push_back(info_.cache);
    } else if (consumes) {
      block->reads = Regions(block->reads);
      block->match_buffers = MatchBuffers(block->match_buffers);
    }
    return Record(op, block, s);
  }

  Stmt VisitWriteBlock(const BlockNode* op) {
    bool saved = redirect_;
    if (info_.consumers.count(op)) {
      redirect_ = true;
      Stmt s = StmtExprMutator::VisitStmt_(op);
      redirect_ = saved;
      Block block = CopyBlock(AsPtr<BlockNode>(s));
      block->reads = Regions(block->reads);
      block->writes = Regions(block->writes);
      block->match_buffers = MatchBuffers(block->match_buffers);
      return Record(op, block, s);
    }
    if (op != writer_ && op != scope_ && !under_writer_) return GetRef(op);
    bool saved_under = under_writer_;
    under_writer_ = under_writer_ || op == writer_;
    redirect_ = under_writer_;
    Stmt s = StmtExprMutator::VisitStmt_(op);
    under_writer_ = saved_under;
    redirect_ = saved;
    Block block = CopyBlock(AsPtr<BlockNode>(s));
    if (op == info_.loc->stmt.get()) block->body = Insert(block->body);
    if (op == scope_) {
      block->alloc_buffers.push_back(info_.cache);
    } else {
      block->reads = Regions(block->reads);
      block->writes = Regions(block->writes);
      block->match_buffers = MatchBuffers(block->match_buffers);
    }
    return Record(op, block, s);
  }

  Stmt Record(const BlockNode* op, const Block& block, const Stmt& visited) {
    auto same = [](const auto& a, const auto& b) {
      if (a.size() != b.size()) return false;
      for (size_t i = 0; i < a.size(); ++i) {
        if (a[i] != b[i]) return false;
      }
      return true;
    };
    if (visited.get() == op && block->body == op->body && same(block->reads, op->reads) &&
        same(block->writes, op->writes) && same(block->match_buffers, op->match_buffers) &&
        same(block->alloc_buffers, op->alloc_buffers)) {
      return visited;
    }
    reuse[op] = block;
    return block;
  }

  Stmt Insert(const Stmt& body) {
    std::vector<Stmt> items = BodyItems(body);
    int64_t pos = std::min<int64_t>(info_.pos, static_cast<int64_t>(items.size()));
    items.insert(items.begin() + pos, info_.nest);
    return ReplaceUnderDecls(body, SeqStmtNode::Flatten(items));
  }

  /*! \brief `index - offset` (the index itself for a zero offset). */
  static Expr Minus(const Expr& index, const Expr& offset) {
    auto c = AsConstInt(offset);
    if (c && *c == 0) return index;
    return Simplify(SubE(index, offset));
  }

  std::vector<Expr> Shift(const std::vector<Expr>& indices) const {
    if (!info_.compact) return indices;
    std::vector<Expr> out;
    for (size_t i = 0; i < indices.size(); ++i)
      out.push_back(Minus(indices[i], info_.region->region[i]->min));
    return out;
  }

  BufferRegion Region(const BufferRegion& r) const {
    if (r->buffer != info_.original) return r;
    if (!info_.compact) return BufferRegionNode::Make(info_.cache, r->region, r->span);
    std::vector<Range> shifted;
    for (size_t i = 0; i < r->region.size(); ++i) {
      shifted.push_back(RangeNode::Make(Minus(r->region[i]->min, info_.region->region[i]->min),
                                        r->region[i]->extent));
    }
    return BufferRegionNode::Make(info_.cache, shifted, r->span);
  }
  std::vector<BufferRegion> Regions(const std::vector<BufferRegion>& regions) const {
    std::vector<BufferRegion> out;
    for (const BufferRegion& r : regions) out.push_back(Region(r));
    return out;
  }
  std::vector<MatchBufferRegion> MatchBuffers(const std::vector<MatchBufferRegion>& m) const {
    std::vector<MatchBufferRegion> out;
    for (const MatchBufferRegion& mb : m) {
      BufferRegion source = Region(mb->source);
      out.push_back(
          source == mb->source ? mb : MatchBufferRegionNode::Make(mb->buffer, source, mb->span));
    }
    return out;
  }

  const CacheStage& info_;
  const StmtNode* scope_;
  const StmtNode* writer_;
  bool is_read_;
  bool redirect_ = false;
  bool under_writer_ = false;
};

/*! \brief The consumers a cache_read or cache_write names, with their child blocks. */
std::unordered_set<const StmtNode*> ConsumerSet(const ScheduleState& state,
                                                const std::vector<StmtSRef>& consumers) {
  std::unordered_set<const StmtNode*> out;
  for (const StmtSRef& c : consumers) {
    out.insert(c->stmt.get());
    for (const StmtSRef& child : GetChildBlocks(state, c.get())) out.insert(child->stmt.get());
  }
  return out;
}

StmtSRef ApplyStage(ScheduleState& state, const StmtSRef& scope_root, const StmtSRef& writer,
                    CacheStage* info, bool is_read) {
  CacheRewriter rewriter(*info, scope_root->stmt.get(), writer ? writer->stmt.get() : nullptr,
                         is_read);
  Stmt new_root = rewriter.VisitStmt(scope_root->stmt);
  const BlockNode* old_root = scope_root->block();
  Block root = As<BlockNode>(new_root);
  BlockReuse reuse = rewriter.reuse;
  reuse[old_root] = root;
  state.Replace(scope_root.get(), old_root, root, reuse);
  return state.GetSRef(info->block.get());
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
  std::vector<StmtSRef> consumers = CheckConsumers(state, consumer_srefs, scope, buffer.get());
  CacheStage info;
  info.original = buffer;
  info.consumers = ConsumerSet(state, consumers);
  if (writer) {
    // The copy goes after the writer, before the first consumer, in their deepest common loop;
    // it copies what the writer writes there.
    std::vector<StmtSRef> related = consumers.empty() ? scope.Consumers(writer.get()) : consumers;
    DetectLocation(state, writer, scope_root, related, &info);
    for (const BufferRegion& w : writer->block()->writes) {
      if (w->buffer == buffer) {
        info.region = RelaxRegion(RegionInLoops(state, writer.get(), w),
                                  LoopDomainsBetween(info.loc, writer.get()));
        break;
      }
    }
  } else {
    // An input of the scope: copied at the start of the scope, the region the scope reads.
    info.loc = scope_root.get();
    info.pos = 0;
    info.region = BufferRegionNode::FullRegion(buffer);
    for (const BufferRegion& r : scope_root->block()->reads) {
      if (r->buffer == buffer) {
        info.region = r;
        break;
      }
    }
  }
  info.compact = info.loc->block() && AllReadersUnder(state, buffer.get(), scope_root, info.loc);
  MakeStage(&info, /*is_read=*/true, storage_scope);
  return ApplyStage(state, scope_root, writer, &info, /*is_read=*/true);
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
    consumers = CheckConsumers(state, consumer_srefs, scope, buffer.get());
  CacheStage info;
  info.original = buffer;
  info.consumers = ConsumerSet(state, consumers);
  // The copy back goes before the first reader that does not read the cache.
  std::vector<StmtSRef> related;
  for (const StmtSRef& c : scope.Consumers(block_sref.get())) {
    if (!info.consumers.count(c->stmt.get())) related.push_back(c);
  }
  DetectLocation(state, block_sref, scope_root, related, &info);
  info.region = RelaxRegion(RegionInLoops(state, block_sref.get(), block->writes[index]),
                            LoopDomainsBetween(info.loc, block_sref.get()));
  info.compact = info.loc->block() && AllReadersUnder(state, buffer.get(), scope_root, info.loc);
  MakeStage(&info, /*is_read=*/false, storage_scope);
  return ApplyStage(state, scope_root, block_sref, &info, /*is_read=*/false);
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
    Fail("cache_inplace: the block must read and write the buffer",
         "cache_inplace: the block {0} must read and write " + buffer->name +
             ", but it does only one of the two",
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
