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
    if (!found_) Invalid("No buffer accesses found.");
    return indices_;
  }

  void VisitStmt_(const BlockNode* op) override {
    Fail("The target block is not a leaf block.", "The target block {0} is not a leaf block.",
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
    if (op == buffer_->data.get()) Invalid("Opaque buffer accesses found.");
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
    if (!same) Invalid("Multiple buffer accesses have non-unique indices.");
  }
  [[noreturn]] void Invalid(const std::string& why) {
    Fail(
        "The target buffer should be accessed via BufferLoad or BufferStore. The indices should "
        "be the same if there are multiple accesses to the target buffer.",
        "The target buffer " + buffer_->name +
            " should be accessed in the leaf block {0} via BufferLoad or BufferStore. The "
            "indices should be the same if there are multiple accesses to the target buffer. " +
            why,
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

}  // namespace schedule
}  // namespace tessera
