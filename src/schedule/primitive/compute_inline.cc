// compute_inline, reverse_compute_inline: fold a block into its consumers (its producer).
#include "../utils.h"
#include "tessera/arith/iter_affine_map.h"
#include "tessera/schedule/primitive.h"

namespace tessera {
namespace schedule {
namespace {

// The store of a block whose body is `buf[v...] = value` with distinct iterators as indices.
const BufferStoreNode* CheckSimpleStore(const StmtSRef& block_sref, const char* role) {
  const BlockNode* block = block_sref->block();
  auto* store = AsPtr<BufferStoreNode>(block->body);
  if (!store) {
    Fail(std::string("the ") + role + " block must be one store A[i, j, ...] = f(i, j, ...)",
         std::string("the ") + role +
             " block {0} must be one store A[i, j, ...] = f(i, j, ...) whose indices are "
             "distinct block iterators",
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
    Fail("the inlined block must be one store A[i, j, ...] = f(i, j, ...)",
         "the inlined block {0} must be one store A[i, j, ...] = f(i, j, ...) whose indices are "
         "distinct block iterators",
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

namespace {

// The leaf blocks under `root` (blocks enclosing no other block) that write `buffer`.
void LeafWriters(const Stmt& root, const BufferNode* buffer, std::vector<const BlockNode*>* out) {
  PostOrderVisit(root, [&](const ObjectRef& n) {
    auto* block = AsPtr<BlockNode>(n);
    if (!block) return;
    bool has_child_block = false;
    PostOrderVisit(block->body, [&](const ObjectRef& m) {
      if (AsPtr<BlockNode>(m)) has_child_block = true;
    });
    if (has_child_block) return;
    for (const BufferRegion& w : block->writes) {
      if (w->buffer.get() == buffer) {
        out->push_back(block);
        break;
      }
    }
  });
}

[[noreturn]] void FailReverseBody(const StmtSRef& consumer, const std::string& why) {
  Fail("the block cannot be reverse-inlined: its body has the wrong shape",
       "the consumer block {0} cannot be inlined into its producer: " + why +
           "; reverse_compute_inline needs a body C[f(i, j, ...)] = g(i, j, ..., "
           "B[h(i, j, ...)]) without a predicate, every load of the producer's buffer B at "
           "the same affine indices h, and a producer store that uses every iterator",
       {consumer->stmt});
}

}  // namespace

void ReverseComputeInline(ScheduleState& state, const StmtSRef& block_sref) {
  const BlockNode* block = BlockOf(block_sref);
  if (block->init) {
    Fail("The block has an init statement",
         "The block {0} has an init statement (it is a reduction) and cannot be reverse-inlined",
         {block_sref->stmt});
  }
  StmtSRef scope_root = GetScopeRoot(state, block_sref.get());
  if (!scope_root) Fail("Cannot inline the root block", "", {block_sref->stmt});
  BlockScope scope = ComputeBlockScope(state, scope_root.get());
  // The one buffer the consumer reads that a block of the scope writes.
  const BufferNode* buffer = nullptr;
  bool single_read = true;
  for (const BufferRegion& r : block->reads) {
    if (r->buffer.get() == buffer || !scope.writers.count(r->buffer.get())) continue;
    if (buffer) single_read = false;
    buffer = r->buffer.get();
  }
  if (!buffer || !single_read) {
    Fail("a reverse-inlined block must read exactly one buffer written in its scope",
         "the block {0} reads " + std::to_string(block->reads.size()) +
             " region(s); a reverse-inlined block must read exactly one buffer written in its "
             "scope",
         {block_sref->stmt});
  }
  std::string why = WhyNotComplete(state, block_sref.get(), scope);
  if (!why.empty()) {
    Fail("reverse_compute_inline needs a complete consumer block",
         "reverse_compute_inline needs a complete consumer block, and {0} is not one: " + why,
         {block_sref->stmt});
  }
  // Its single producer: the one leaf block of the scope writing the buffer, a complete block.
  std::vector<const BlockNode*> writers;
  LeafWriters(BodyOf(scope_root.get()), buffer, &writers);
  if (writers.size() != 1) {
    Fail("the consumer block to inline must have exactly one producer block",
         "the consumer block {0} to inline must have exactly one producer block, a complete "
         "block read by nothing else",
         {block_sref->stmt});
  }
  StmtSRef producer = state.GetSRef(writers[0]);
  if (!WhyNotComplete(state, producer.get(), scope).empty()) {
    Fail("the consumer block to inline must have exactly one producer block",
         "the producer {0} of the consumer block is not a complete block", {producer->stmt});
  }
  CheckNotOutputBlock(state, producer);
  const BlockNode* pblock = producer->block();

  // The consumer's body: a store, trivial predicate, loads of the buffer at one affine map.
  BlockRealize consumer_realize = GetBlockRealize(state, block_sref.get());
  if (!IsConstInt(consumer_realize->predicate, 1))
    FailReverseBody(block_sref, "it has a non-trivial predicate");
  auto* store = AsPtr<BufferStoreNode>(block->body);
  if (!store) FailReverseBody(block_sref, "its body is not a single BufferStore");
  std::vector<const BufferLoadNode*> loads;
  auto collect = [&](const ObjectRef& n) {
    if (auto* load = AsPtr<BufferLoadNode>(n)) {
      if (load->buffer.get() == buffer) loads.push_back(load);
    }
  };
  for (const Expr& index : store->indices) PostOrderVisit(index, collect);
  PostOrderVisit(store->value, collect);
  if (loads.empty()) FailReverseBody(block_sref, "it does not load " + buffer->name);
  VarMap idx_sub;
  std::vector<arith::IterDomain> doms;
  for (const IterVar& iv : block->iter_vars) {
    auto min = AsConstInt(iv->dom->min);
    auto extent = AsConstInt(iv->dom->extent);
    if (!min) FailReverseBody(block_sref, "an iterator has a symbolic minimum");
    doms.push_back({iv->var, *min, extent ? *extent : -1});
    if (extent && *extent == 1) idx_sub[iv->var.get()] = iv->dom->min;
  }
  std::vector<Expr> load_indices = loads[0]->indices;
  for (const BufferLoadNode* load : loads) {
    if (!StructuralEqual(ArrayNode::Make({load->indices.begin(), load->indices.end()}),
                         ArrayNode::Make({load_indices.begin(), load_indices.end()}))) {
      FailReverseBody(block_sref, "its loads of " + buffer->name + " differ in their indices");
    }
  }
  std::string map_error;
  auto iter_map = arith::DetectIterMap(load_indices, doms, &map_error);
  if (!iter_map) {
    FailReverseBody(block_sref, "the indices of its load of " + buffer->name +
                                    " are not affine in its iterators (" + map_error + ")");
  }
  // The producer's store, possibly under an if without else.
  const BufferStoreNode* pstore = nullptr;
  const IfThenElseNode* pif = AsPtr<IfThenElseNode>(pblock->body);
  if (pif) {
    if (pif->else_case) FailReverseBody(block_sref, "its producer's body is an if with an else");
    pstore = AsPtr<BufferStoreNode>(pif->then_case);
  } else {
    pstore = AsPtr<BufferStoreNode>(pblock->body);
  }
  if (!pstore) FailReverseBody(block_sref, "the body of its producer is not a single BufferStore");
  auto inverse = arith::InverseAffineIterMap(*iter_map, pstore->indices);
  if (!inverse) {
    FailReverseBody(block_sref, "the indices of its load of " + buffer->name +
                                    " cannot be inverted onto the producer's store");
  }
  for (const auto& [var, value] : *inverse) idx_sub[var.get()] = value;
  // Every consumer iterator is reached, and over its whole domain.
  DomMap producer_doms;
  arith::Analyzer analyzer;
  for (const IterVar& iv : pblock->iter_vars) {
    producer_doms[iv->var.get()] = iv->dom;
    analyzer.Bind(iv->var, iv->dom);
  }
  for (const IterVar& iv : block->iter_vars) {
    auto it = idx_sub.find(iv->var.get());
    if (it == idx_sub.end()) {
      FailReverseBody(block_sref, "its iterator " + iv->var->name +
                                      " is not determined by the producer's store indices");
    }
    auto bounds = EvalBounds(it->second, producer_doms);
    if (!bounds) continue;
    Expr last = Simplify(SubE(AddE(iv->dom->min, iv->dom->extent), IntConst(iv->dom->min->dtype, 1)));
    if (analyzer.CanProve(GTNode::Make(bounds->first, iv->dom->min)) ||
        analyzer.CanProve(LTNode::Make(bounds->second, CastTo(bounds->second->dtype, last)))) {
      FailReverseBody(block_sref, "the producer does not cover the domain of its iterator " +
                                      iv->var->name);
    }
  }
  if (UsesVar(store->value, [&](const VarNode* v) { return v == store->buffer->data.get(); }) ||
      store->buffer.get() == buffer) {
    Fail("The reverse-inlined block reads the buffer it writes", "", {block_sref->stmt});
  }
  CheckNoOpaqueAccess(state, scope_root, buffer, pblock);

  // The rewrite: every store of the producer to the buffer becomes the consumer's store.
  struct VarLoadSubstituter : StmtExprMutator {
    using StmtExprMutator::VisitExpr_;
    const VarMap* vmap;
    const BufferNode* buffer;
    Expr load_value;                // what a load of `buffer` becomes (if set)
    const BufferStoreNode* target;  // else: a load becomes a load of target at its indices
    Expr VisitExpr_(const VarNode* op) override {
      auto it = vmap->find(op);
      return it == vmap->end() ? StmtExprMutator::VisitExpr_(op) : it->second;
    }
    Expr VisitExpr_(const BufferLoadNode* op) override {
      if (op->buffer.get() != buffer) return StmtExprMutator::VisitExpr_(op);
      if (load_value) return load_value;
      std::vector<Expr> indices;
      for (const Expr& i : target->indices) indices.push_back(VisitExpr(i));
      return BufferLoadNode::Make(target->buffer, indices, nullptr, op->span);
    }
  };
  struct Inliner : StmtEditor {
    using StmtEditor::VisitExpr_;
    using StmtEditor::VisitStmt_;
    const BufferNode* buffer;
    const BufferStoreNode* consumer_store;
    const BlockNode* producer;
    const BlockNode* scope;
    const VarMap* idx_sub;
    std::function<BlockRealize(const BlockRealize&)> on_producer;
    Stmt VisitStmt_(const BufferStoreNode* op) override {
      Stmt s = StmtExprMutator::VisitStmt_(op);
      auto* st = AsPtr<BufferStoreNode>(s);
      if (st->buffer.get() != buffer) return s;
      VarLoadSubstituter resolve;
      resolve.vmap = idx_sub;
      resolve.buffer = buffer;
      resolve.target = consumer_store;
      Expr rhs = resolve.VisitExpr(st->value);
      VarLoadSubstituter subst;
      subst.vmap = idx_sub;
      subst.buffer = buffer;
      subst.load_value = rhs;
      std::vector<Expr> indices;
      for (const Expr& i : consumer_store->indices) indices.push_back(subst.VisitExpr(i));
      return BufferStoreNode::Make(consumer_store->buffer, subst.VisitExpr(consumer_store->value),
                                   indices, nullptr, st->span);
    }
    Stmt VisitStmt_(const BlockNode* op) override {
      Stmt s = StmtEditor::VisitStmt_(op);
      if (op == scope) return s;
      bool touches = false;
      for (const BufferRegion& r : op->reads) touches = touches || r->buffer.get() == buffer;
      for (const BufferRegion& r : op->writes) touches = touches || r->buffer.get() == buffer;
      if (!touches) return s;
      Block refreshed = WithInferredRegions(As<BlockNode>(s));
      reuse[op] = refreshed;
      return refreshed;
    }
    Stmt VisitStmt_(const BlockRealizeNode* op) override {
      Stmt s = StmtEditor::VisitStmt_(op);
      if (op->block.get() != producer) return s;
      BlockRealize realize = As<BlockRealizeNode>(s);
      BlockRealize result = on_producer(realize);
      reuse[producer] = result->block;
      return result;
    }
  } inliner;
  inliner.buffer = buffer;
  inliner.consumer_store = store;
  inliner.producer = pblock;
  inliner.scope = scope_root->block();
  inliner.idx_sub = &idx_sub;
  // The producer runs only where the consumer's iterators are in their domains.
  Expr in_bound = nullptr;
  std::unordered_map<const VarNode*, const IterVarNode*> producer_iters;
  for (const IterVar& iv : pblock->iter_vars) producer_iters[iv->var.get()] = iv.get();
  for (const IterVar& iv : block->iter_vars) {
    // Trivially in bounds: the iterator is a producer iterator of the same domain.
    if (auto* v = AsPtr<VarNode>(idx_sub[iv->var.get()])) {
      auto it = producer_iters.find(v);
      if (it != producer_iters.end() && StructuralEqual(it->second->dom, iv->dom)) continue;
    }
    Expr lo = GENode::Make(iv->var, iv->dom->min);
    Expr hi = LTNode::Make(iv->var, IsConstInt(iv->dom->min, 0)
                                        ? iv->dom->extent
                                        : AddE(iv->dom->min, iv->dom->extent));
    in_bound = AndE(in_bound, AndNode::Make(lo, hi));
  }
  inliner.on_producer = [&](const BlockRealize& realize) -> BlockRealize {
    if (!in_bound) return realize;
    Expr predicate = analyzer.Simplify(Substitute(in_bound, idx_sub));
    if (IsConstInt(predicate, 1)) return realize;
    Block pb = realize->block;
    if (auto* cond = AsPtr<IfThenElseNode>(pb->body)) {
      if (!cond->else_case &&
          !StructuralEqual(predicate, analyzer.Simplify(cond->condition))) {
        predicate = analyzer.Simplify(AndNode::Make(predicate, cond->condition));
        pb = CopyBlock(pb.get());
        pb->body = cond->then_case;
      }
    }
    VarMap bindings;
    for (size_t i = 0; i < pb->iter_vars.size(); ++i)
      bindings[pb->iter_vars[i]->var.get()] = realize->iter_values[i];
    Expr outer = analyzer.Simplify(Substitute(predicate, bindings));
    return BlockRealizeNode::Make(realize->iter_values, outer, pb, realize->span);
  };
  inliner.replace[LeafToRemove(state, block_sref)] = nullptr;
  ReplaceScope(state, scope_root, &inliner, buffer);
}

}  // namespace schedule
}  // namespace tessera
