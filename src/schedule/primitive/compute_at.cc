// compute_at, reverse_compute_at: move a producer (consumer) under a loop, with loops that
// cover exactly the region its consumers (producers) there use.
#include <algorithm>

#include "../utils.h"
#include "tessera/schedule/primitive.h"

namespace tessera {
namespace schedule {
namespace {

/*! \brief Per block iterator, the range required of it (null: its whole domain). */
using IterRanges = std::unordered_map<const VarNode*, Range>;

/*! \brief The rank of a storage scope among the levels of the thread hierarchy: global memory
 *  is shared by the whole grid (0), shared memory by a thread block (1), warp memory by a warp
 *  (2); local memory and unknown scopes belong to one thread (3). */
int StorageRank(const std::string& scope) {
  if (scope.empty() || scope == "global") return 0;
  if (scope == "shared" || scope == "shared.dyn") return 1;
  if (scope == "warp") return 2;
  return 3;
}

/*! \brief The domains of the thread-bound loops at or above `loop` whose threads all see one
 *  copy of a buffer in `scope` (blockIdx and threadIdx for global, threadIdx for shared): the
 *  region such a buffer needs is the union over those threads, not one thread's part. */
DomMap SharedThreadDomains(const StmtSRefNode* loop, const std::string& scope) {
  DomMap dom;
  int rank = StorageRank(scope);
  for (const StmtSRefNode* p = loop; p; p = p->parent) {
    const ForNode* f = p->loop();
    if (!f || f->for_kind != ForKind::kThreadBinding || !f->thread_binding) continue;
    const std::string& tag = f->thread_binding->thread_tag;
    int thread_rank = tag.rfind("blockIdx.", 0) == 0 ? 0 : tag.rfind("threadIdx.", 0) == 0 ? 1 : -1;
    if (thread_rank >= 0 && rank <= thread_rank)
      dom[f->loop_var.get()] = RangeNode::Make(f->min, f->extent);
  }
  return dom;
}

/*! \brief The regions of `buffers` that `blocks` access (reads or writes), in terms of the loops
 *  at or above `loop`: bindings substituted, loops below `loop` relaxed, and so are the
 *  thread-bound loops above it whose threads share the buffer (SharedThreadDomains). */
std::unordered_map<const BufferNode*, BufferRegion> RegionsUnder(
    const ScheduleState& state, const std::vector<StmtSRef>& blocks, const StmtSRef& loop,
    const std::unordered_set<const BufferNode*>& buffers, bool writes) {
  std::unordered_map<const BufferNode*, BufferRegion> out;
  for (const StmtSRef& b : blocks) {
    const BlockNode* block = b->block();
    BlockRealize realize = GetBlockRealize(state, b.get());
    VarMap bindings;
    for (size_t i = 0; i < block->iter_vars.size(); ++i) {
      bindings[block->iter_vars[i]->var.get()] = realize->iter_values[i];
    }
    DomMap dom = LoopDomainsBetween(loop.get(), b.get());
    for (const BufferRegion& r : writes ? block->writes : block->reads) {
      if (!buffers.count(r->buffer.get())) continue;
      DomMap relax = dom;
      for (const auto& [var, range] : SharedThreadDomains(loop.get(), r->buffer->scope()))
        relax[var] = range;
      BufferRegion relaxed = RelaxRegion(Substitute(r, bindings), relax);
      auto it = out.find(r->buffer.get());
      out[r->buffer.get()] = it == out.end() ? relaxed : UnionRegion(it->second, relaxed);
    }
  }
  return out;
}

/*! \brief The ranges of the block's iterators that cover `required` of the buffers it
 *  accesses at `access` (its writes for compute_at, its reads for reverse_compute_at). */
IterRanges RequiredIterRanges(const StmtSRef& block_sref, const std::vector<BufferRegion>& access,
                              const std::unordered_map<const BufferNode*, BufferRegion>& required) {
  const BlockNode* block = block_sref->block();
  std::unordered_set<const VarNode*> iters;
  for (const IterVar& iv : block->iter_vars) iters.insert(iv->var.get());
  IterRanges ranges;
  for (const BufferRegion& r : access) {
    auto it = required.find(r->buffer.get());
    if (it == required.end()) continue;
    for (size_t d = 0; d < r->region.size(); ++d) {
      const Range& own = r->region[d];
      if (AsConstInt(own->min) && IsConstInt(own->extent, 1)) continue;
      auto* v = AsPtr<VarNode>(own->min);
      if (!v || !iters.count(v) || !IsConstInt(own->extent, 1)) {
        Fail("The block accesses the buffer at indices that are not its iterators",
             "The block {0} accesses " + r->buffer->name +
                 " at indices that are not plain block "
                 "iterators; the primitive supports only such blocks",
             {block_sref->stmt});
      }
      const Range& need = it->second->region[d];
      auto prev = ranges.find(v);
      ranges[v] = prev == ranges.end()
                      ? need
                      : UnionRegion(BufferRegionNode::Make(r->buffer, {prev->second}),
                                    BufferRegionNode::Make(r->buffer, {need}))
                            ->region[0];
    }
  }
  return ranges;
}

/*! \brief Clip [min, min + extent) to the iterator's domain where that is not provably so. */
Range ClipToDomain(const Range& need, const Range& dom, arith::Analyzer& ana) {
  DataType t = dom->min->dtype;
  Expr lo = CastTo(t, need->min), hi = Simplify(AddE(need->min, need->extent));
  Expr dom_hi = Simplify(AddE(dom->min, dom->extent));
  if (!ana.CanProve(GENode::Make(lo, dom->min))) lo = Simplify(MaxNode::Make(lo, dom->min));
  if (!ana.CanProve(LENode::Make(CastTo(t, hi), dom_hi)))
    hi = Simplify(MinNode::Make(CastTo(t, hi), dom_hi));
  return RangeNode::Make(lo, Simplify(SubE(hi, lo)));
}

void ComputeAtImpl(ScheduleState& state, const StmtSRef& block_sref, const StmtSRef& loop_sref,
                   bool preserve_unit_loops, int index, bool reverse) {
  const BlockNode* block = BlockOf(block_sref);
  const ForNode* loop = LoopOf(loop_sref);
  StmtSRef scope_root = GetScopeRoot(state, block_sref.get());
  if (!scope_root) Fail("Cannot move the root block", "", {block_sref->stmt});
  if (GetScopeRoot(state, loop_sref.get()) != scope_root) {
    Fail("Expected the block and loop to be under the same block scope, and loop not to be the "
         "ancestor of block",
         "Expected the block {0} and loop {1} to be under the same block scope, and loop not to "
         "be the ancestor of block (they are not in the same scope)",
         {block_sref->stmt, loop_sref->stmt});
  }
  if (IsAncestor(loop_sref.get(), block_sref.get())) {
    Fail("Expected the block and loop to be under the same block scope, and loop not to be the "
         "ancestor of block",
         "Expected the block {0} and loop {1} to be under the same block scope, and loop not to "
         "be the ancestor of block (the loop is an ancestor of the block; the primitive moves a "
         "block under a loop of another loop nest)",
         {block_sref->stmt, loop_sref->stmt});
  }
  BlockScope scope = ComputeBlockScope(state, scope_root.get());
  if (state.enable_check()) CheckCompleteOrReduction(state, block_sref, scope_root, scope);
  CheckStagePipeline(state, scope_root, scope);
  if (!reverse) CheckNotOutputBlock(state, block_sref);

  // Producers must stay before the block and consumers after it.
  std::vector<StmtSRef> producers = scope.Producers(block_sref.get());
  std::vector<StmtSRef> consumers = scope.Consumers(block_sref.get());
  const std::vector<StmtSRef>& related = reverse ? producers : consumers;
  std::vector<StmtSRef> related_under;
  std::vector<ObjectRef> outside;
  for (const StmtSRef& b : related) {
    if (IsAncestor(loop_sref.get(), b.get())) {
      related_under.push_back(b);
    } else {
      outside.push_back(b->stmt);
    }
  }
  if (!outside.empty()) {
    // As TVM's text: "The primitive requires all the consumer(s) of the given block ...".
    std::string relation = reverse ? "producer(s)" : "consumer(s)";
    std::string detail = "The primitive requires all the " + relation +
                         " of the given block {0} to be present under the target loop {1}. "
                         "However, there are " +
                         std::to_string(outside.size()) + " " + relation +
                         " not satisfying the constraint. List of the " + relation + ":";
    std::vector<ObjectRef> locs = {block_sref->stmt, loop_sref->stmt};
    for (size_t i = 0; i < outside.size(); ++i) {
      detail += (i ? ", {" : " {") + std::to_string(i + 2) + "}";
      locs.push_back(outside[i]);
    }
    Fail("Not all required blocks are under the loop scope", detail, locs);
  }
  if (related_under.empty()) {
    Fail(reverse ? "The block has no producer under the loop"
                 : "The block has no consumer under the loop",
         std::string("The block {0} has no ") + (reverse ? "producer" : "consumer") +
             " under the loop {1}",
         {block_sref->stmt, loop_sref->stmt});
  }
  int64_t items = static_cast<int64_t>(BodyItems(loop->body).size());
  int64_t lower = 0, upper = items;
  for (const StmtSRef& p : producers) {
    if (IsAncestor(loop_sref.get(), p.get()))
      lower = std::max(lower, ChildIndex(loop_sref.get(), p.get()) + 1);
  }
  for (const StmtSRef& c : consumers) {
    if (IsAncestor(loop_sref.get(), c.get()))
      upper = std::min(upper, ChildIndex(loop_sref.get(), c.get()));
  }
  if (lower > upper) {
    Fail("No valid position to insert the block",
         "No position under {1} puts the block {0} after its producers and before its consumers",
         {block_sref->stmt, loop_sref->stmt});
  }
  int64_t position = index == -1 ? upper : index == -2 ? lower : index;
  if (position < lower || position > upper) {
    Fail("The index is not a valid insertion point",
         "The index " + std::to_string(index) +
             " is not a valid insertion point under {0}: valid "
             "ones are " +
             std::to_string(lower) + " to " + std::to_string(upper),
         {loop_sref->stmt});
  }

  // The region the related blocks under the loop use, as ranges of the block's iterators.
  std::unordered_set<const BufferNode*> buffers;
  for (const BufferRegion& r : reverse ? block->reads : block->writes)
    buffers.insert(r->buffer.get());
  auto required = RegionsUnder(state, related_under, loop_sref, buffers, /*writes=*/reverse);
  IterRanges ranges =
      RequiredIterRanges(block_sref, reverse ? block->reads : block->writes, required);

  arith::Analyzer ana;
  // As TVM's analyzer, a loop of extent 1 above the block is its start in the new bindings.
  VarMap unit_loops;
  for (const auto& [var, range] : LoopDomainsBetween(scope_root.get(), loop_sref.get())) {
    ana.Bind(GetRef(var), range);
    if (IsConstInt(range->extent, 1)) unit_loops[var] = range->min;
  }
  ana.Bind(loop->loop_var, RangeNode::Make(loop->min, loop->extent));
  if (IsConstInt(loop->extent, 1)) unit_loops[loop->loop_var.get()] = loop->min;
  // A required range that may leave the iterator's domain (around a split that does not
  // divide) keeps its constant extent, and the block a predicate; a symbolic one is clipped.
  std::vector<For> loops;
  std::vector<Expr> values;
  Expr predicate;
  for (const IterVar& iv : block->iter_vars) {
    auto it = ranges.find(iv->var.get());
    DataType t = iv->var->dtype;
    Range r = iv->dom;
    Expr dom_hi = Simplify(AddE(iv->dom->min, iv->dom->extent));
    bool guard_low = false, guard_high = false;
    if (it != ranges.end()) {
      r = RangeNode::Make(CastTo(t, Simplify(Substitute(it->second->min, unit_loops))),
                          CastTo(t, Simplify(Substitute(it->second->extent, unit_loops))));
      guard_low = !ana.CanProve(GENode::Make(r->min, iv->dom->min));
      guard_high = !ana.CanProve(LENode::Make(Simplify(AddE(r->min, r->extent)), dom_hi));
      if (!AsConstInt(r->extent) && (guard_low || guard_high)) {
        r = ClipToDomain(r, iv->dom, ana);
        guard_low = guard_high = false;
      }
    }
    Expr value;
    if (IsConstInt(r->extent, 1) && !preserve_unit_loops) {
      value = CastTo(t, r->min);
    } else {
      Var ax = NewVar("ax" + std::to_string(loops.size()), t);
      loops.push_back(
          ForNode::Make(ax, IntConst(t, 0), CastTo(t, r->extent), ForKind::kSerial, Evaluate0()));
      value = Simplify(AddE(CastTo(t, r->min), ax));
    }
    values.push_back(value);
    if (guard_low) predicate = AndE(predicate, GENode::Make(value, iv->dom->min));
    if (guard_high) predicate = AndE(predicate, LTNode::Make(value, dom_hi));
  }
  Stmt nest = MakeLoopNest(
      loops, BlockRealizeNode::Make(values, predicate ? predicate : Bool(true), GetRef(block)));

  StmtEditor editor;
  editor.replace[LeafToRemove(state, block_sref)] = nullptr;
  editor.insert[loop].emplace_back(position, nest);
  const BlockNode* root = scope_root->block();
  Block result = As<BlockNode>(editor.VisitStmt(scope_root->stmt));
  BlockReuse reuse = editor.reuse;
  reuse[root] = result;
  state.Replace(scope_root.get(), root, result, reuse);
}

}  // namespace

void ComputeAt(ScheduleState& state, const StmtSRef& block, const StmtSRef& loop,
               bool preserve_unit_loops, int index) {
  ComputeAtImpl(state, block, loop, preserve_unit_loops, index, /*reverse=*/false);
}

void ReverseComputeAt(ScheduleState& state, const StmtSRef& block, const StmtSRef& loop,
                      bool preserve_unit_loops, int index) {
  ComputeAtImpl(state, block, loop, preserve_unit_loops, index, /*reverse=*/true);
}

}  // namespace schedule
}  // namespace tessera
