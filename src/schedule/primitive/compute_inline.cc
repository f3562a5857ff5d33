// compute_inline, reverse_compute_inline: fold a block into its consumers (its producer).
#include "../utils.h"
#include "tessera/schedule/primitive.h"

namespace tessera {
namespace schedule {
namespace {

// The store of a block whose body is `buf[v...] = value` with distinct iterators as indices.
const BufferStoreNode* CheckSimpleStore(const StmtSRef& block_sref, const char* role) {
  const BlockNode* block = block_sref->block();
  auto* store = AsPtr<BufferStoreNode>(block->body);
  if (!store) {
    Fail(std::string("The body of the ") + role +
             " block should be in form of 'A[i, j, k, ...] = f(i, j, k, ...)'",
         std::string("The body of the ") + role +
             " block {0} should be in form of 'A[i, j, k, ...] = "
             "f(i, j, k, ...)', where the indices on the left are distinct block iterators",
         {block_sref->stmt});
  }
  return store;
}

bool IndicesAreDistinctIters(const std::vector<Expr>& indices, const BlockNode* block) {
  std::unordered_set<const VarNode*> iters, seen;
  for (const IterVar& iv : block->iter_vars) iters.insert(iv->var.get());
  for (const Expr& index : indices) {
    auto* v = AsPtr<VarNode>(index);
    if (!v || !iters.count(v) || !seen.insert(v).second) return false;
  }
  return true;
}

void CheckTrivialPredicate(const ScheduleState& state, const StmtSRef& block_sref) {
  if (!IsConstInt(GetBlockRealize(state, block_sref.get())->predicate, 1)) {
    Fail("The block has a non-trivial predicate",
         "The block {0} has a non-trivial predicate (T.where) and cannot be inlined",
         {block_sref->stmt});
  }
}

// Every access to `buffer` under `root` other than the given block must be a BufferLoad.
void CheckNoOpaqueAccess(const ScheduleState& state, const StmtSRef& scope_root,
                         const BufferNode* buffer, const BlockNode* except) {
  std::vector<const BlockNode*> culprits;
  PostOrderVisit(BodyOf(scope_root.get()), [&](const ObjectRef& n) {
    if (auto* block = AsPtr<BlockNode>(n)) {
      if (block == except) return;
      for (const MatchBufferRegion& m : block->match_buffers) {
        if (m->source->buffer.get() == buffer) culprits.push_back(block);
      }
      for (const BufferRegion& w : block->writes) {
        if (w->buffer.get() == buffer) culprits.push_back(block);
      }
    }
    if (auto* call = AsPtr<CallNode>(n)) {
      for (const Expr& a : call->args) {
        if (auto* v = AsPtr<VarNode>(a)) {
          if (v == buffer->data.get()) culprits.push_back(nullptr);
        }
      }
    }
  });
  if (!culprits.empty()) {
    std::vector<ObjectRef> locs;
    if (culprits[0]) locs.push_back(GetRef(culprits[0]));
    Fail("The buffer is accessed opaquely or written by another block",
         "The buffer " + buffer->name + " is accessed opaquely or written by another block" +
             (locs.empty() ? std::string() : std::string(": {0}")),
         locs);
  }
}

// Substitutes loads of one buffer and refreshes the read regions of blocks that read it.
class LoadInliner : public StmtEditor {
 public:
  using StmtEditor::VisitExpr_;
  using StmtEditor::VisitStmt_;
  LoadInliner(const BufferNode* buffer, std::vector<Var> iters, Expr value, const BlockNode* scope)
      : buffer_(buffer), iters_(std::move(iters)), value_(std::move(value)), scope_(scope) {}

  Expr VisitExpr_(const BufferLoadNode* op) override {
    Expr e = StmtEditor::VisitExpr_(op);
    auto* load = AsPtr<BufferLoadNode>(e);
    if (load->buffer.get() != buffer_) return e;
    VarMap vmap;
    for (size_t i = 0; i < iters_.size(); ++i) vmap[iters_[i].get()] = load->indices[i];
    return Substitute(value_, vmap);
  }
  Stmt VisitStmt_(const BlockNode* op) override {
    Stmt s = StmtEditor::VisitStmt_(op);
    if (op == scope_) return s;
    bool reads_buffer = false;
    for (const BufferRegion& r : op->reads)
      reads_buffer = reads_buffer || r->buffer.get() == buffer_;
    if (!reads_buffer) return s;
    Block refreshed = WithInferredRegions(As<BlockNode>(s), /*reads=*/true, /*writes=*/false);
    reuse[op] = refreshed;
    return refreshed;
  }
  Stmt VisitStmt_(const BufferStoreNode* op) override {
    // StmtEditor does not descend into expressions; BufferStore values need it.
    return StmtExprMutator::VisitStmt_(op);
  }

 private:
  const BufferNode* buffer_;
  std::vector<Var> iters_;
  Expr value_;
  const BlockNode* scope_;
};

// The scope root without the allocation of `buffer`.
Block WithoutAllocation(const Block& root, const BufferNode* buffer) {
  Block copy = CopyBlock(root.get());
  copy->alloc_buffers.clear();
  for (const Buffer& b : root->alloc_buffers) {
    if (b.get() != buffer) copy->alloc_buffers.push_back(b);
  }
  return copy;
}

void ReplaceScope(ScheduleState& state, const StmtSRef& scope_root, StmtEditor* editor,
                  const BufferNode* removed_buffer) {
  const BlockNode* root = scope_root->block();
  Block result = As<BlockNode>(editor->VisitStmt(scope_root->stmt));
  if (IsAllocatedIn(result.get(), removed_buffer))
    result = WithoutAllocation(result, removed_buffer);
  BlockReuse reuse = editor->reuse;
  reuse[root] = result;
  state.Replace(scope_root.get(), root, result, reuse);
}

}  // namespace

void ComputeInline(ScheduleState& state, const StmtSRef& block_sref) {
  const BlockNode* block = BlockOf(block_sref);
  StmtSRef scope_root = GetScopeRoot(state, block_sref.get());
  if (!scope_root) Fail("Cannot inline the root block", "", {block_sref->stmt});
  const BufferStoreNode* store = CheckSimpleStore(block_sref, "inlined");
  if (block->writes.size() != 1) {
    Fail("The inlined block should write exactly one buffer",
         "The block {0} writes " + std::to_string(block->writes.size()) +
             " buffers; an inlined block should write exactly one",
         {block_sref->stmt});
  }
  if (block->init) {
    Fail("The inlined block has an init statement",
         "The block {0} has an init statement (it is a reduction) and cannot be inlined",
         {block_sref->stmt});
  }
  if (!IndicesAreDistinctIters(store->indices, block)) {
    Fail("The body of the inlined block should be in form of 'A[i, j, k, ...] = f(i, j, k, ...)'",
         "The body of the inlined block {0} should be in form of 'A[i, j, k, ...] = f(i, j, k, "
         "...)', where the indices on the left are distinct block iterators",
         {block_sref->stmt});
  }
  std::vector<Var> iters;
  for (const Expr& index : store->indices)
    iters.push_back(std::static_pointer_cast<VarNode>(index));
  std::unordered_set<const VarNode*> stored(iters.size());
  for (const Var& v : iters) stored.insert(v.get());
  for (const IterVar& iv : block->iter_vars) {
    if (!stored.count(iv->var.get()) && UsesVars(store->value, {iv->var.get()})) {
      Fail("The value of the inlined block uses an iterator that does not index its output",
           "The value stored by {0} uses the iterator '" + iv->var->name +
               "', which does not "
               "index the buffer it writes",
           {block_sref->stmt});
    }
  }
  CheckTrivialPredicate(state, block_sref);
  CheckNotOutputBlock(state, block_sref);
  const BufferNode* buffer = store->buffer.get();
  if (UsesVar(store->value, [&](const VarNode* v) { return v == buffer->data.get(); })) {
    Fail("The inlined block reads the buffer it writes", "", {block_sref->stmt});
  }
  CheckNoOpaqueAccess(state, scope_root, buffer, block);

  LoadInliner inliner(buffer, iters, store->value, scope_root->block());
  inliner.replace[LeafToRemove(state, block_sref)] = nullptr;
  ReplaceScope(state, scope_root, &inliner, buffer);
}

void ReverseComputeInline(ScheduleState& state, const StmtSRef& block_sref) {
  const BlockNode* block = BlockOf(block_sref);
  StmtSRef scope_root = GetScopeRoot(state, block_sref.get());
  if (!scope_root) Fail("Cannot inline the root block", "", {block_sref->stmt});
  const BufferStoreNode* store = CheckSimpleStore(block_sref, "reverse-inlined");
  if (block->init) {
    Fail("The reverse-inlined block has an init statement",
         "The block {0} has an init statement (it is a reduction) and cannot be inlined",
         {block_sref->stmt});
  }
  CheckTrivialPredicate(state, block_sref);
  // The one buffer read from a producer of the scope, at one index tuple of distinct iterators.
  BlockScope scope = ComputeBlockScope(state, scope_root.get());
  std::vector<StmtSRef> producers = scope.Producers(block_sref.get());
  if (producers.size() != 1 || block->reads.empty()) {
    Fail("The reverse-inlined block should read exactly one buffer produced in its scope",
         "The block {0} reads " + std::to_string(producers.size()) +
             " buffers produced by other blocks of its scope; it should read exactly one",
         {block_sref->stmt});
  }
  const StmtSRef& producer = producers[0];
  const BlockNode* pblock = producer->block();
  const BufferStoreNode* pstore = CheckSimpleStore(producer, "producer");
  if (pblock->writes.size() != 1 || pblock->init) {
    Fail("The producer should write exactly one buffer and have no init",
         "The producer {0} of {1} should write exactly one buffer and have no init statement",
         {producer->stmt, block_sref->stmt});
  }
  CheckTrivialPredicate(state, producer);
  const BufferNode* buffer = pstore->buffer.get();
  std::vector<const BufferLoadNode*> loads;
  PostOrderVisit(store->value, [&](const ObjectRef& n) {
    if (auto* load = AsPtr<BufferLoadNode>(n)) {
      if (load->buffer.get() == buffer) loads.push_back(load);
    }
  });
  if (loads.empty()) {
    Fail("The reverse-inlined block does not load its producer's buffer in its value", "",
         {block_sref->stmt});
  }
  for (const BufferLoadNode* load : loads) {
    if (!IndicesAreDistinctIters(load->indices, block) ||
        !StructuralEqual(ArrayNode::Make({load->indices.begin(), load->indices.end()}),
                         ArrayNode::Make({loads[0]->indices.begin(), loads[0]->indices.end()}))) {
      Fail("The consumer must load the buffer at distinct block iterators, the same everywhere",
           "The block {0} must load " + buffer->name +
               " at distinct block iterators, the same "
               "indices at every load",
           {block_sref->stmt});
    }
  }
  if (loads[0]->indices.size() != block->iter_vars.size()) {
    Fail("Every iterator of the consumer must index the loaded buffer",
         "Every iterator of {0} must index the buffer " + buffer->name + " it loads",
         {block_sref->stmt});
  }
  if (UsesVar(store->value, [&](const VarNode* v) { return v == store->buffer->data.get(); }) ||
      store->buffer.get() == buffer) {
    Fail("The reverse-inlined block reads the buffer it writes", "", {block_sref->stmt});
  }
  if (IsParamBuffer(state.FuncOf(block_sref.get()), buffer)) {
    Fail("Cannot operate on an output block",
         "Cannot operate on an output block: {0} writes a buffer of the function's parameters",
         {producer->stmt});
  }
  CheckNoOpaqueAccess(state, scope_root, buffer, pblock);
  for (const StmtSRef& other : scope.blocks) {
    if (other == block_sref || other == producer) continue;
    for (const BufferRegion& r : other->block()->reads) {
      if (r->buffer.get() == buffer) {
        Fail("The producer's buffer has other consumers",
             "The buffer " + buffer->name + " is also read by {0}", {other->stmt});
      }
    }
  }
  // The consumer's iterators at the producer's store indices.
  VarMap vmap;
  for (size_t i = 0; i < loads[0]->indices.size(); ++i) {
    vmap[static_cast<const VarNode*>(loads[0]->indices[i].get())] = pstore->indices[i];
  }
  struct LoadReplacer : StmtExprMutator {
    using StmtExprMutator::VisitExpr_;
    const BufferNode* buffer;
    Expr value;
    Expr VisitExpr_(const BufferLoadNode* op) override {
      if (op->buffer.get() == buffer) return value;
      return StmtExprMutator::VisitExpr_(op);
    }
  } replacer;
  replacer.buffer = buffer;
  replacer.value = pstore->value;
  Expr value = Substitute(replacer.VisitExpr(store->value), vmap);
  std::vector<Expr> indices;
  for (const Expr& index : store->indices) indices.push_back(Simplify(Substitute(index, vmap)));
  Block new_producer = CopyBlock(pblock);
  new_producer->body = BufferStoreNode::Make(store->buffer, value, indices, nullptr, pstore->span);
  new_producer = WithInferredRegions(new_producer);

  StmtEditor editor;
  editor.replace[LeafToRemove(state, block_sref)] = nullptr;
  BlockRealize prealize = GetBlockRealize(state, producer.get());
  editor.replace[prealize.get()] = BlockRealizeNode::Make(
      prealize->iter_values, prealize->predicate, new_producer, prealize->span);
  editor.reuse[pblock] = new_producer;
  ReplaceScope(state, scope_root, &editor, buffer);
}

}  // namespace schedule
}  // namespace tessera
