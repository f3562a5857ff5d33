// reindex: a buffer a block accesses at one index tuple is copied to (or from) a new buffer
// indexed by the block iterators used in that tuple, by a new block placed before (read) or
// after (write) the block's loop nest.
#include "../utils.h"
#include "tessera/schedule/primitive.h"

namespace tessera {
namespace schedule {
namespace {

/*! \brief The one index tuple at which a leaf block loads and stores `buffer`. */
class AccessCollector : public StmtExprVisitor {
 public:
  using StmtExprVisitor::VisitExpr_;
  using StmtExprVisitor::VisitStmt_;
  AccessCollector(const Buffer& buffer, const StmtSRef& block_sref)
      : buffer_(buffer), block_sref_(block_sref) {}

  std::vector<Expr> Collect() {
    VisitStmt(block_sref_->block()->body);
    if (!found_) Invalid("the block does not access it");
    return indices_;
  }

  void VisitStmt_(const BlockNode* op) override {
    Fail("reindex: the block contains other blocks", "reindex: the block {0} contains other blocks",
         {block_sref_->stmt});
  }
  void VisitExpr_(const BufferLoadNode* op) override {
    StmtExprVisitor::VisitExpr_(op);
    if (op->buffer == buffer_) Update(op->indices);
  }
  void VisitStmt_(const BufferStoreNode* op) override {
    StmtExprVisitor::VisitStmt_(op);
    if (op->buffer == buffer_) Update(op->indices);
  }
  void VisitExpr_(const VarNode* op) override {
    if (op == buffer_->data.get()) Invalid("the block uses its data pointer directly");
  }

 private:
  void Update(const std::vector<Expr>& indices) {
    if (!found_) {
      found_ = true;
      indices_ = indices;
      return;
    }
    bool same = indices.size() == indices_.size();
    for (size_t i = 0; same && i < indices.size(); ++i)
      same = StructuralEqual(indices[i], indices_[i]);
    if (!same) Invalid("the block indexes it in more than one way");
  }
  [[noreturn]] void Invalid(const std::string& why) {
    Fail("reindex needs every access of the buffer to be a load or store with the same indices",
         "reindex needs every access of " + buffer_->name +
             " in {0} to be a load or store with one set of indices, but " + why,
         {block_sref_->stmt});
  }

  const Buffer& buffer_;
  const StmtSRef& block_sref_;
  bool found_ = false;
  std::vector<Expr> indices_;
};

/*! \brief Accesses of `old` become accesses of `new_buffer` at `indices`. */
class AccessRewriter : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;
  AccessRewriter(const Buffer& old, const Buffer& new_buffer, std::vector<Expr> indices)
      : old_(old), new_(new_buffer), indices_(std::move(indices)) {}
  Expr VisitExpr_(const BufferLoadNode* op) override {
    Expr e = StmtExprMutator::VisitExpr_(op);
    auto* load = AsPtr<BufferLoadNode>(e);
    if (load->buffer != old_) return e;
    return BufferLoadNode::Make(new_, indices_, load->predicate, load->span);
  }
  Stmt VisitStmt_(const BufferStoreNode* op) override {
    Stmt s = StmtExprMutator::VisitStmt_(op);
    auto* store = AsPtr<BufferStoreNode>(s);
    if (store->buffer != old_) return s;
    return BufferStoreNode::Make(new_, store->value, indices_, store->predicate, store->span);
  }

 private:
  const Buffer& old_;
  const Buffer& new_;
  std::vector<Expr> indices_;
};

BufferRegion PointRegion(const Buffer& buffer, const std::vector<Expr>& indices) {
  std::vector<Range> region;
  for (const Expr& i : indices) region.push_back(RangeNode::Make(i, IntConst(i->dtype, 1)));
  return BufferRegionNode::Make(buffer, region);
}

}  // namespace

StmtSRef ReIndex(ScheduleState& state, const StmtSRef& block_sref, int buffer_index,
                 bool is_write) {
  const BlockNode* block = BlockOf(block_sref);
  Buffer buffer = NthAccessBuffer(block_sref, buffer_index, is_write);
  StmtSRef scope_root = GetScopeRoot(state, block_sref.get());
  if (!scope_root) Fail("reindex: the block has no enclosing block");
  CheckStagePipeline(state, scope_root, ComputeBlockScope(state, scope_root.get()));

  // Step 1. The index tuple, simplified over the iterator domains, and the iterators it uses.
  std::vector<Expr> indices = AccessCollector(buffer, block_sref).Collect();
  arith::Analyzer ana;
  for (const IterVar& iv : block->iter_vars) ana.Bind(iv->var, iv->dom);
  for (Expr& e : indices) e = ana.Simplify(e);
  std::unordered_set<const VarNode*> covered;
  for (const Expr& e : indices) {
    PostOrderVisit(e, [&](const ObjectRef& n) {
      if (auto* v = AsPtr<VarNode>(n)) covered.insert(v);
    });
  }

  // Step 2. The reindex buffer: one dimension per used iterator, in iterator order.
  std::vector<Expr> shape;
  for (const IterVar& iv : block->iter_vars) {
    if (covered.count(iv->var.get()))
      shape.push_back(Simplify(AddE(iv->dom->min, iv->dom->extent)));
  }
  Buffer reindex = BufferNode::Make(
      VarNode::MakePointer(buffer->data->name + "_reindex", buffer->dtype, buffer->scope()),
      buffer->dtype, shape, {}, buffer->elem_offset, buffer->name + "_reindex",
      buffer->data_alignment, buffer->offset_factor);
  const Buffer& src = is_write ? reindex : buffer;
  const Buffer& dst = is_write ? buffer : reindex;

  // Step 3. The copy block, over the used iterators, in its own loop nest.
  std::vector<IterVar> iters;
  std::vector<Expr> reindex_indices, loop_values;
  std::vector<For> loops;
  VarMap rename;
  for (const IterVar& iv : block->iter_vars) {
    Var v = NewVar("v" + std::to_string(iters.size()), iv->var->dtype);
    rename[iv->var.get()] = v;
    if (!covered.count(iv->var.get())) continue;
    iters.push_back(IterVarNode::Make(iv->dom, v, IterVarType::kDataPar));
    reindex_indices.push_back(v);
    Var loop_var = NewVar("ax" + std::to_string(loops.size()), iv->var->dtype);
    loop_values.push_back(loop_var);
    loops.push_back(
        ForNode::Make(loop_var, iv->dom->min, iv->dom->extent, ForKind::kSerial, Evaluate0()));
  }
  std::vector<Expr> target_indices;
  for (const Expr& e : indices) target_indices.push_back(Substitute(e, rename));
  const std::vector<Expr>& src_indices = is_write ? reindex_indices : target_indices;
  const std::vector<Expr>& dst_indices = is_write ? target_indices : reindex_indices;
  Block copy = BlockNode::Make(
      iters, {PointRegion(src, src_indices)}, {PointRegion(dst, dst_indices)},
      dst->name + "_reindex",
      BufferStoreNode::Make(dst, BufferLoadNode::Make(src, src_indices), dst_indices));
  Stmt stage =
      MakeLoopNest(loops, BlockRealizeNode::Make(loop_values, IntConst(DataType::Bool(), 1), copy));

  // Step 4. The block accesses the reindex buffer at its iterators.
  std::vector<Expr> new_indices;
  std::vector<Range> new_region;
  for (const IterVar& iv : block->iter_vars) {
    if (!covered.count(iv->var.get())) continue;
    new_indices.push_back(iv->var);
    new_region.push_back(RangeNode::Make(iv->var, IntConst(iv->var->dtype, 1)));
  }
  AccessRewriter rewriter(buffer, reindex, new_indices);
  Block rewritten = CopyBlock(block);
  rewritten->body = rewriter.VisitStmt(block->body);
  if (block->init) rewritten->init = rewriter.VisitStmt(block->init);
  auto replace_regions = [&](std::vector<BufferRegion>& regions) {
    for (BufferRegion& r : regions) {
      if (r->buffer == buffer) r = BufferRegionNode::Make(reindex, new_region, r->span);
    }
  };
  replace_regions(rewritten->reads);
  replace_regions(rewritten->writes);
  for (MatchBufferRegion& m : rewritten->match_buffers) {
    if (m->source->buffer == buffer) {
      m = MatchBufferRegionNode::Make(m->buffer, BufferRegionNode::Make(reindex, new_region),
                                      m->span);
    }
  }
  BlockRealize realize = GetBlockRealize(state, block_sref.get());

  // Step 5. Where the stage goes: before (read) or after (write) the outermost loop of the
  // block below the scope root, which must hold the block alone.
  const StmtSRefNode* top = block_sref.get();
  while (top->parent != scope_root.get()) {
    const StmtSRefNode* parent = top->parent;
    if (!parent->loop() ||
        parent->loop()->body.get() != (top->loop() ? top->stmt.get() : realize.get())) {
      Fail("reindex: the loops above the block hold other statements",
           "reindex requires the loops between the block {0} and its scope root to hold the "
           "block alone",
           {block_sref->stmt});
    }
    top = parent;
  }
  int64_t pos = ChildIndex(scope_root.get(), top) + (is_write ? 1 : 0);

  StmtEditor editor;
  editor.replace[realize.get()] =
      BlockRealizeNode::Make(realize->iter_values, realize->predicate, rewritten, realize->span);
  editor.insert[scope_root->stmt.get()].emplace_back(pos, stage);
  EditAndAllocate(state, scope_root, &editor, reindex, {{block, rewritten}});
  return state.GetSRef(copy.get());
}

/*!
 * \brief reindex_cache_read / reindex_cache_write: the block accesses a cache in
 *  `storage_scope` at `index_map` of its iterators; a copy block over the loops the mapped
 *  iterators use copies the buffer into the cache (after its writer) or back (after the block).
 */
StmtSRef ReindexCache(ScheduleState& state, const StmtSRef& block_sref, int buffer_index,
                      bool is_write, const std::string& storage_scope, const IndexMap& index_map) {
  const char* primitive = is_write ? "reindex_cache_write" : "reindex_cache_read";
  const BlockNode* block = BlockOf(block_sref);
  if (!IsValidScope(storage_scope)) {
    Fail("Invalid storage scope '" + storage_scope + "'",
         "Invalid storage scope '" + storage_scope +
             "': expected \"global\", \"shared\", \"shared.dyn\", \"local\", \"warp\", "
             "\"lsram\", \"gsram\", "
             "or global/shared/local/warp with a tag (\"global.vtcm\")");
  }
  Buffer buffer = NthAccessBuffer(block_sref, buffer_index, is_write);
  StmtSRef scope_root = GetScopeRoot(state, block_sref.get());
  if (!scope_root) Fail(std::string(primitive) + ": the block has no enclosing block");
  BlockScope scope = ComputeBlockScope(state, scope_root.get());
  CheckStagePipeline(state, scope_root, scope);
  BlockRealize realize = GetBlockRealize(state, block_sref.get());

  // The accessed region must be one point.
  BufferRegion region = (is_write ? block->writes : block->reads)[buffer_index];
  for (const Range& r : region->region) {
    if (!IsConstInt(r->extent, 1)) {
      Fail(std::string(primitive) + ": the block accesses more than one element of the buffer",
           std::string(primitive) +
               " needs the block {0} to access one element at a time, but it "
               "accesses the region " +
               AsScript(region),
           {block_sref->stmt});
    }
  }
  if (index_map.initial_indices.size() != block->iter_vars.size()) {
    Fail(std::string(primitive) + ": the index map takes " +
         std::to_string(index_map.initial_indices.size()) + " indices but the block has " +
         std::to_string(block->iter_vars.size()) + " iterators");
  }
  std::vector<Expr> iters;
  DomMap dom;
  for (const IterVar& iv : block->iter_vars) {
    iters.push_back(iv->var);
    dom[iv->var.get()] = iv->dom;
  }
  std::vector<Expr> new_indices = index_map.Apply(iters);
  std::vector<Expr> old_indices;
  for (const Range& r : region->region) old_indices.push_back(r->min);
  auto uses = [](const std::vector<Expr>& es, const VarNode* v) {
    for (const Expr& e : es) {
      if (UsesVar(e, [&](const VarNode* u) { return u == v; })) return true;
    }
    return false;
  };
  auto list = [](const std::vector<Expr>& es) {
    std::string out = "[";
    for (size_t i = 0; i < es.size(); ++i) out += (i ? ", " : "") + AsScript(es[i]);
    return out + "]";
  };
  std::vector<size_t> covered;
  for (size_t i = 0; i < block->iter_vars.size(); ++i) {
    const VarNode* v = block->iter_vars[i]->var.get();
    bool in_new = uses(new_indices, v), in_old = uses(old_indices, v);
    if (in_new != in_old) {
      Fail(std::string(primitive) + ": the index map changes which block iterators the indices use",
           std::string(primitive) + " on {0}: the iterator " + v->name + " is used by " +
               list(in_old ? old_indices : new_indices) + " but not by " +
               list(in_old ? new_indices : old_indices),
           {block_sref->stmt});
    }
    if (in_new) covered.push_back(i);
  }
  // The cache buffer: the shape of the map's image over the iterator domains.
  std::vector<Expr> shape;
  for (const Expr& e : new_indices) {
    auto bounds = EvalBounds(e, dom);
    if (!bounds) Fail(std::string(primitive) + ": the index map is not affine");
    shape.push_back(Simplify(AddE(SubE(bounds->second, bounds->first), IntConst(e->dtype, 1))));
  }
  Buffer cache = WithNameAndScope(buffer, buffer->name + "_" + storage_scope, storage_scope);
  cache = BufferNode::Make(cache->data, cache->dtype, shape, {}, buffer->elem_offset, cache->name,
                           buffer->data_alignment, buffer->offset_factor);

  // Where the copy goes: after the writer (read; the scope start without one), in the deepest
  // loop holding it and the block; after the block, in the deepest loop holding its readers
  // (write).
  const StmtSRefNode* parent = scope_root.get();
  int64_t position = 0;
  if (!is_write) {
    auto it = scope.writers.find(buffer.get());
    if (it != scope.writers.end() && !it->second.empty()) {
      const StmtSRef& writer = it->second[0];
      parent = LowestCommonAncestor({writer.get(), block_sref.get()});
      position = ChildIndex(parent, writer.get()) + 1;
      if (ChildIndex(parent, block_sref.get()) < position) {
        Fail("Cannot find a place for the cache between the writer and the block",
             "Cannot place the cache of " + buffer->name +
                 ": the block {1} shares its loop nest with the writer {0}",
             {writer->stmt, block_sref->stmt});
      }
    }
  } else {
    std::vector<const StmtSRefNode*> nodes = {block_sref.get()};
    for (const StmtSRef& b : scope.blocks) {
      if (b == block_sref) continue;
      for (const BufferRegion& r : b->block()->reads) {
        if (r->buffer == buffer) {
          nodes.push_back(b.get());
          break;
        }
      }
    }
    if (nodes.size() > 1) parent = LowestCommonAncestor(nodes);
    position = ChildIndex(parent, block_sref.get()) + 1;
  }

  // The copy block: the mapped iterators with the block's bindings, over copies of the loops
  // (below the placement) those bindings use.
  VarMap rename;
  std::vector<Var> loop_vars;
  std::vector<For> loops;
  std::vector<Expr> covered_values;
  for (size_t i : covered) covered_values.push_back(realize->iter_values[i]);
  std::vector<StmtSRef> above = GetLoopsAbove(state, block_sref.get());
  for (const StmtSRef& l : above) {
    if (!IsAncestor(parent, l.get())) continue;
    const ForNode* loop = l->loop();
    if (!uses(covered_values, loop->loop_var.get())) continue;
    Var v = NewVar(loop->loop_var->name, loop->loop_var->dtype);
    rename[loop->loop_var.get()] = v;
    loops.push_back(ForNode::Make(v, loop->min, loop->extent, ForKind::kSerial, Evaluate0()));
  }
  std::vector<IterVar> copy_iters;
  std::vector<Expr> copy_values;
  for (size_t i : covered) {
    const IterVar& iv = block->iter_vars[i];
    Var v = NewVar(iv->var->name, iv->var->dtype);
    copy_iters.push_back(IterVarNode::Make(iv->dom, v, IterVarType::kDataPar));
    copy_values.push_back(Substitute(realize->iter_values[i], rename));
    rename[iv->var.get()] = v;
  }
  std::vector<Expr> copy_old, copy_new;
  for (const Expr& e : old_indices) copy_old.push_back(Substitute(e, rename));
  for (const Expr& e : new_indices) copy_new.push_back(Substitute(e, rename));
  const Buffer& src = is_write ? cache : buffer;
  const Buffer& dst = is_write ? buffer : cache;
  const std::vector<Expr>& src_indices = is_write ? copy_new : copy_old;
  const std::vector<Expr>& dst_indices = is_write ? copy_old : copy_new;
  Block copy = BlockNode::Make(
      copy_iters, {PointRegion(src, src_indices)}, {PointRegion(dst, dst_indices)},
      buffer->name + "_" + storage_scope,
      BufferStoreNode::Make(dst, BufferLoadNode::Make(src, src_indices), dst_indices));
  Stmt stage =
      MakeLoopNest(loops, BlockRealizeNode::Make(copy_values, IntConst(DataType::Bool(), 1), copy));

  // The block accesses the cache at the mapped indices.
  AccessRewriter rewriter(buffer, cache, new_indices);
  Block rewritten = CopyBlock(block);
  rewritten->body = rewriter.VisitStmt(block->body);
  if (block->init) rewritten->init = rewriter.VisitStmt(block->init);
  std::vector<Range> new_region;
  for (const Expr& e : new_indices) new_region.push_back(RangeNode::Make(e, IntConst(e->dtype, 1)));
  for (auto* regions : {&rewritten->reads, &rewritten->writes}) {
    for (BufferRegion& r : *regions) {
      if (r->buffer == buffer) r = BufferRegionNode::Make(cache, new_region, r->span);
    }
  }
  StmtEditor editor;
  editor.replace[realize.get()] =
      BlockRealizeNode::Make(realize->iter_values, realize->predicate, rewritten, realize->span);
  editor.insert[parent->stmt.get()].emplace_back(position, stage);
  EditAndAllocate(state, scope_root, &editor, cache, {{block, rewritten}});
  return state.GetSRef(copy.get());
}

}  // namespace schedule
}  // namespace tessera
