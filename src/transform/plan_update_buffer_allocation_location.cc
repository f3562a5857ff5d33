// Two planners of block allocations.
//
// tir.PlanAndUpdateBufferAllocationLocation (TVM v0.23's rules): each buffer that a block
// allocates (or that a match_buffer names) is allocated at the lowest common ancestor of its
// accesses (tir.analysis.detect_buffer_access_lca), up or down: at a block it joins the block's
// alloc_buffers, at a loop a new opaque block around the loop body holds it. Buffers go in the
// order they are first met (parameters, then allocations and accesses in program order). Every
// block's reads and writes then leave out the buffers it (or a block inside it) allocates.
//
// tir.PlanBufferAllocationDown (the tessera pipeline's planner): each block allocation moves down
// to the lowest loop or block that encloses all its accesses, as long as no value crosses
// iterations of the loops it moves into.
#include <unordered_map>
#include <unordered_set>

#include "tessera/ir/block_access.h"
#include "tessera/ir/functor.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/transform/analysis.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace transform {
namespace {

Expr Cast(const Expr& e, DataType t) { return e->dtype == t ? e : Expr(CastNode::Make(t, e)); }

const ForNode* AsFor(const StmtNode* n) {
  return n->kind == NodeKind::kFor ? static_cast<const ForNode*>(n) : nullptr;
}

// Where each allocated buffer is accessed: the chain of enclosing For and Block nodes of every
// access, plus the loop ranges seen on the way.
class AccessPathCollector : public StmtExprVisitor {
 public:
  using StmtExprVisitor::VisitExpr_;
  using StmtExprVisitor::VisitStmt_;

  struct Access {
    std::vector<const StmtNode*> path;
    std::vector<Expr> indices;
  };
  std::unordered_map<const BufferNode*, std::vector<Access>> accesses;
  std::unordered_map<const BufferNode*, const BlockNode*> owner;
  std::unordered_map<const BufferNode*, std::vector<const StmtNode*>> owner_path;
  std::unordered_map<const VarNode*, Ref<RangeNode>> loops;

  void VisitStmt_(const ForNode* op) override {
    loops[op->loop_var.get()] = RangeNode::Make(op->min, op->extent);
    path_.push_back(op);
    StmtExprVisitor::VisitStmt_(op);
    path_.pop_back();
  }
  void VisitStmt_(const BlockRealizeNode* op) override {
    // Accesses read block iterators as the loop expressions they are bound to.
    for (size_t i = 0; i < op->iter_values.size(); ++i) {
      bindings_[op->block->iter_vars[i]->var.get()] = Substitute(op->iter_values[i], bindings_);
    }
    StmtExprVisitor::VisitStmt_(op);
  }
  void VisitStmt_(const BlockNode* op) override {
    path_.push_back(op);
    for (const Buffer& b : op->alloc_buffers) {
      owner[b.get()] = op;
      owner_path[b.get()] = path_;
      data_[b->data.get()] = b.get();
    }
    // A match buffer views its source region (a tensor intrinsic's operands): the block
    // accesses the region's first and last elements.
    for (const MatchBufferRegion& m : op->match_buffers) {
      std::vector<Expr> first, last;
      for (const Range& r : m->source->region) {
        first.push_back(r->min);
        last.push_back(SubNode::Make(AddNode::Make(r->min, Cast(r->extent, r->min->dtype)),
                                     MakeConst(r->min->dtype, int64_t(1))));
      }
      Record(m->source->buffer.get(), first);
      Record(m->source->buffer.get(), last);
    }
    StmtExprVisitor::VisitStmt_(op);
    path_.pop_back();
  }
  void VisitExpr_(const BufferLoadNode* op) override {
    Record(op->buffer.get(), op->indices);
    StmtExprVisitor::VisitExpr_(op);
  }
  void VisitStmt_(const BufferStoreNode* op) override {
    Record(op->buffer.get(), op->indices);
    StmtExprVisitor::VisitStmt_(op);
  }
  void VisitExpr_(const VarNode* op) override {
    // A use of the data pointer itself (e.g. the result of tir.tvm_thread_allreduce) may touch
    // any element: record its first and last ones.
    auto it = data_.find(op);
    if (it == data_.end()) return;
    std::vector<Expr> first, last;
    for (const Expr& extent : it->second->shape) {
      first.push_back(MakeConst(extent->dtype, int64_t(0)));
      last.push_back(SubNode::Make(extent, MakeConst(extent->dtype, int64_t(1))));
    }
    Record(it->second, first);
    Record(it->second, last);
  }

 private:
  void Record(const BufferNode* b, const std::vector<Expr>& indices) {
    // Only buffers a block allocates can move (an access is always inside its owner block);
    // a function of thousands of parameter buffers recorded every access of each.
    if (!owner.count(b)) return;
    std::vector<Expr> bound;
    for (const Expr& i : indices) bound.push_back(Substitute(i, bindings_));
    accesses[b].push_back({path_, bound});
  }
  std::vector<const StmtNode*> path_;
  VarMap bindings_;
  std::unordered_map<const VarNode*, const BufferNode*> data_;
};

// lo/hi of `e` over the loops in `relaxed` (interval arithmetic on sums, constant products and
// floor division and modulo by constants); null when the form is not covered.
std::pair<Expr, Expr> Bounds(const Expr& e,
                             const std::unordered_map<const VarNode*, Ref<RangeNode>>& relaxed) {
  auto uses = [&](const Expr& x) {
    return UsesVar(x, [&](const VarNode* v) { return relaxed.count(v) != 0; });
  };
  if (!uses(e)) return {e, e};
  if (auto* v = AsPtr<VarNode>(e)) {
    const Ref<RangeNode>& r = relaxed.at(v);
    if (uses(r->min) || uses(r->extent)) return {nullptr, nullptr};
    Expr min = Cast(r->min, e->dtype);
    return {min, AddNode::Make(min, SubNode::Make(Cast(r->extent, e->dtype),
                                                  MakeConst(e->dtype, int64_t(1))))};
  }
  auto* bin = AsPtr<BinaryNode>(e);
  if (!bin) return {nullptr, nullptr};
  auto [alo, ahi] = Bounds(bin->a, relaxed);
  if (e->kind == NodeKind::kAdd || e->kind == NodeKind::kSub) {
    auto [blo, bhi] = Bounds(bin->b, relaxed);
    if (!alo || !blo) return {nullptr, nullptr};
    if (e->kind == NodeKind::kAdd) return {AddNode::Make(alo, blo), AddNode::Make(ahi, bhi)};
    return {SubNode::Make(alo, bhi), SubNode::Make(ahi, blo)};
  }
  if (e->kind == NodeKind::kMul) {
    auto c = AsConstInt(bin->b);
    if (!c || !alo) return {nullptr, nullptr};
    if (*c >= 0) return {MulNode::Make(alo, bin->b), MulNode::Make(ahi, bin->b)};
    return {MulNode::Make(ahi, bin->b), MulNode::Make(alo, bin->b)};
  }
  if (e->kind == NodeKind::kFloorDiv) {
    auto c = AsConstInt(bin->b);
    if (!c || *c <= 0 || !alo) return {nullptr, nullptr};
    return {FloorDivNode::Make(alo, bin->b), FloorDivNode::Make(ahi, bin->b)};
  }
  if (e->kind == NodeKind::kFloorMod) {
    auto c = AsConstInt(bin->b);
    if (!c || *c <= 0) return {nullptr, nullptr};
    return {MakeConst(e->dtype, int64_t(0)), MakeConst(e->dtype, *c - 1)};
  }
  return {nullptr, nullptr};
}

// Whether the accesses of one iteration of `loop` touch a part of the buffer that no other
// iteration touches, so the buffer may live inside the loop body.
/*! \brief The row-major offset of `indices` into a buffer of constant `shape` (null when the
 *  shape is not constant), simplified: a fused loop's `f // 64` and `f % 64` indices of two
 *  dimensions become `f` again. */
Expr LinearOffset(const std::vector<Expr>& indices, const std::vector<Expr>& shape) {
  if (indices.size() != shape.size() || indices.size() < 2) return Expr();
  Expr offset;
  int64_t stride = 1;
  for (size_t d = indices.size(); d-- > 0;) {
    const Expr& i = indices[d];
    if (i->dtype.is_vector()) return Expr();
    Expr term = stride == 1 ? i : Expr(MulNode::Make(i, MakeConst(i->dtype, stride)));
    offset = offset ? Expr(AddNode::Make(term, Cast(offset, term->dtype))) : term;
    auto extent = AsConstInt(shape[d]);
    if (!extent) return Expr();
    stride *= *extent;
  }
  return SimplifyExpr(offset);
}

bool IterationsAreDisjoint(const ForNode* loop,
                           const std::vector<AccessPathCollector::Access>& accesses,
                           const std::unordered_map<const VarNode*, Ref<RangeNode>>& loops,
                           const std::vector<Expr>& shape) {
  // A loop of one iteration has nothing to keep apart (a unit batch loop outside a register
  // tile whose write-back iterates its own unit loop instead).
  if (auto* extent = AsPtr<IntImmNode>(loop->extent); extent && extent->value == 1) return true;
  size_t ndim = accesses.front().indices.size();
  // Each dimension, then the row-major offset: a loop fused from two that index two dimensions
  // (`f // 64`, `f % 64`) keeps its iterations apart in the offset only (adaptive_pool1d's
  // window sums computed at the average's fused row loop: the buffers of partial sums).
  std::vector<Expr> offsets;
  for (const auto& a : accesses) offsets.push_back(LinearOffset(a.indices, shape));
  for (size_t d = 0; d <= ndim; ++d) {
    Expr lo, hi;
    bool ok = true;
    for (const auto& a : accesses) {
      // Relax the loops below `loop` on this access's path.
      std::unordered_map<const VarNode*, Ref<RangeNode>> relaxed;
      bool below = false;
      for (const StmtNode* n : a.path) {
        if (n == loop) {
          below = true;
          continue;
        }
        if (auto* f = AsFor(n); f && below)
          relaxed[f->loop_var.get()] = loops.at(f->loop_var.get());
      }
      Expr index = d < ndim ? a.indices[d] : offsets[&a - accesses.data()];
      if (!index || index->dtype.is_vector()) {
        ok = false;
        break;
      }
      auto [l, h] = Bounds(index, relaxed);
      if (!l) {
        ok = false;
        break;
      }
      l = SimplifyExpr(l);
      h = SimplifyExpr(h);
      if (!lo) {
        lo = l;
        hi = h;
        continue;
      }
      // Keep a common symbolic base; widen by constant offsets only.
      auto dl = AsConstInt(SimplifyExpr(SubNode::Make(l, Cast(lo, l->dtype))));
      auto dh = AsConstInt(SimplifyExpr(SubNode::Make(h, Cast(hi, h->dtype))));
      if (!dl || !dh) {
        ok = false;
        break;
      }
      if (*dl < 0) lo = l;
      if (*dh > 0) hi = h;
    }
    if (!ok || !lo) continue;
    // Iteration v touches [lo(v), hi(v)]; the next one starts after it ends.
    const Var& v = loop->loop_var;
    VarMap next{{v.get(), AddNode::Make(v, MakeConst(v->dtype, int64_t(1)))}};
    Expr next_lo = Substitute(lo, next);
    auto gap = AsConstInt(SimplifyExpr(SubNode::Make(next_lo, Cast(hi, next_lo->dtype))));
    if (gap && *gap > 0) return true;
    Expr next_hi = Substitute(hi, next);
    auto back = AsConstInt(SimplifyExpr(SubNode::Make(lo, Cast(next_hi, lo->dtype))));
    if (back && *back > 0) return true;
  }
  return false;
}

class AllocationMover : public StmtMutator {
 public:
  AllocationMover(std::unordered_map<const StmtNode*, std::vector<Buffer>> into,
                  std::unordered_set<const BufferNode*> moved)
      : into_(std::move(into)), moved_(std::move(moved)) {}
  using StmtMutator::VisitStmt_;

  Stmt VisitStmt_(const ForNode* op) override {
    Stmt s = StmtMutator::VisitStmt_(op);
    auto it = into_.find(op);
    if (it == into_.end()) return s;
    auto* f = AsPtr<ForNode>(s);
    // A new opaque block in the loop body holds the allocations.
    Block holder = BlockNode::Make({}, {}, {}, "", f->body, nullptr, it->second);
    auto [reads, writes] = InferBlockAccessRegions(holder.get());
    holder = BlockNode::Make({}, reads, writes, "", f->body, nullptr, it->second);
    Stmt body = BlockRealizeNode::Make({}, Bool(true), holder);
    return ForNode::Make(f->loop_var, f->min, f->extent, f->for_kind, body, f->thread_binding,
                         f->annotations, f->span);
  }

  Stmt VisitStmt_(const BlockNode* op) override {
    Stmt s = StmtMutator::VisitStmt_(op);
    auto* b = AsPtr<BlockNode>(s);
    std::vector<Buffer> allocs;
    bool changed = false;
    for (const Buffer& buf : b->alloc_buffers) {
      if (moved_.count(buf.get())) {
        changed = true;
      } else {
        allocs.push_back(buf);
      }
    }
    auto it = into_.find(op);
    if (it != into_.end()) {
      allocs.insert(allocs.end(), it->second.begin(), it->second.end());
      changed = true;
    }
    if (!changed) return s;
    return BlockNode::Make(b->iter_vars, b->reads, b->writes, b->name_hint, b->body, b->init,
                           allocs, b->match_buffers, b->annotations, b->span);
  }

 private:
  std::unordered_map<const StmtNode*, std::vector<Buffer>> into_;
  std::unordered_set<const BufferNode*> moved_;
};

PrimFunc PlanFunc(PrimFunc f, IRModule, const PassContext&) {
  // Visit allocations in program order so that several moved to one place keep their order.
  std::vector<std::pair<const BlockNode*, Buffer>> allocations;
  PostOrderVisit(f->body, [&](const ObjectRef& n) {
    if (auto* b = AsPtr<BlockNode>(n)) {
      for (const Buffer& buf : b->alloc_buffers) allocations.emplace_back(b, buf);
    }
  });
  if (allocations.empty()) return f;
  AccessPathCollector collect;
  collect.VisitStmt(f->body);
  std::unordered_map<const StmtNode*, std::vector<Buffer>> into;
  std::unordered_set<const BufferNode*> moved;
  for (const auto& [block, buf] : allocations) {
    auto acc = collect.accesses.find(buf.get());
    if (acc == collect.accesses.end() || acc->second.empty()) continue;
    // The common prefix of every access path: the lowest common ancestor.
    std::vector<const StmtNode*> lca = acc->second.front().path;
    for (const auto& a : acc->second) {
      size_t k = 0;
      while (k < lca.size() && k < a.path.size() && lca[k] == a.path[k]) ++k;
      lca.resize(k);
    }
    const auto& start = collect.owner_path[buf.get()];
    if (lca.size() <= start.size()) continue;
    // Go down from the owner while every loop entered keeps its iterations apart. On a GPU,
    // every iteration of a loop bound to blockIdx (for "shared" memory) or to any thread index
    // (for "local" memory) has its own copy of the buffer, so such loops are always entered.
    // The threads of a block share one copy of a "shared" buffer wherever it is declared, so
    // loops bound to threadIdx are entered too (tir.CompactBufferAllocation then sizes the
    // buffer for all the threads of the block).
    const std::string scope = buf->data->pointer ? buf->data->pointer->scope : "";
    auto private_per_iteration = [&](const ForNode* loop) {
      if (loop->for_kind != ForKind::kThreadBinding || !loop->thread_binding) return false;
      const std::string& tag = loop->thread_binding->thread_tag;
      if (scope == "local" || scope.rfind("wmma.", 0) == 0) return true;  // registers
      return (scope == "shared" || scope == "shared.dyn") &&
             (tag.rfind("blockIdx.", 0) == 0 || tag.rfind("threadIdx.", 0) == 0);
    };
    const StmtNode* target = nullptr;
    for (size_t k = start.size(); k < lca.size(); ++k) {
      if (auto* loop = AsFor(lca[k])) {
        if (!private_per_iteration(loop) &&
            !IterationsAreDisjoint(loop, acc->second, collect.loops, buf->shape))
          break;
      }
      target = lca[k];
    }
    if (!target) continue;
    into[target].push_back(buf);
    moved.insert(buf.get());
  }
  if (moved.empty()) return f;
  Stmt body = AllocationMover(std::move(into), std::move(moved)).VisitStmt(f->body);
  return body == f->body ? f : f->WithBody(body);
}

// ---- TVM's rules ----

class AllocationOrder : public StmtExprVisitor {
 public:
  using StmtExprVisitor::VisitExpr_;
  using StmtExprVisitor::VisitStmt_;
  std::vector<const BufferNode*> order;
  void Add(const BufferNode* b) {
    if (seen_.insert(b).second) order.push_back(b);
  }
  void VisitStmt_(const BlockNode* op) override {
    for (const Buffer& b : op->alloc_buffers) Add(b.get());
    for (const MatchBufferRegion& m : op->match_buffers) Add(m->source->buffer.get());
    StmtExprVisitor::VisitStmt_(op);
  }
  void VisitExpr_(const BufferLoadNode* op) override {
    Add(op->buffer.get());
    StmtExprVisitor::VisitExpr_(op);
  }
  void VisitStmt_(const BufferStoreNode* op) override {
    Add(op->buffer.get());
    StmtExprVisitor::VisitStmt_(op);
  }

 private:
  std::unordered_set<const BufferNode*> seen_;
};

class AllocationLocator : public StmtMutator {
 public:
  using StmtMutator::VisitStmt_;
  std::unordered_map<const StmtNode*, std::vector<Buffer>> at;
  std::unordered_set<const VarNode*> visible;  // data variables of buffers in scope

  Stmt VisitStmt_(const ForNode* op) override {
    auto it = at.find(op);
    if (it == at.end()) return StmtMutator::VisitStmt_(op);
    for (const Buffer& b : it->second) visible.insert(b->data.get());
    Stmt s = StmtMutator::VisitStmt_(op);
    for (const Buffer& b : it->second) visible.erase(b->data.get());
    auto* f = AsPtr<ForNode>(s);
    Block holder = BlockNode::Make({}, {}, {}, "", f->body, nullptr, it->second);
    auto [reads, writes] = InferBlockAccessRegions(holder.get());
    holder = BlockNode::Make({}, Visible(reads), Visible(writes), "", f->body, nullptr, it->second);
    return ForNode::Make(f->loop_var, f->min, f->extent, f->for_kind,
                         BlockRealizeNode::Make({}, Bool(true), holder), f->thread_binding,
                         f->annotations, f->span, f->step);
  }

  Stmt VisitStmt_(const BlockNode* op) override {
    std::vector<Buffer> allocs;
    if (auto it = at.find(op); it != at.end()) allocs = it->second;
    for (const Buffer& b : allocs) visible.insert(b->data.get());
    for (const MatchBufferRegion& m : op->match_buffers) visible.insert(m->buffer->data.get());
    Stmt s = StmtMutator::VisitStmt_(op);
    for (const MatchBufferRegion& m : op->match_buffers) visible.erase(m->buffer->data.get());
    for (const Buffer& b : allocs) visible.erase(b->data.get());
    auto* b = AsPtr<BlockNode>(s);
    std::vector<BufferRegion> reads = Visible(b->reads), writes = Visible(b->writes);
    if (s.get() == op && reads.size() == b->reads.size() && writes.size() == b->writes.size() &&
        SameBuffers(allocs, b->alloc_buffers)) {
      return s;
    }
    return BlockNode::Make(b->iter_vars, reads, writes, b->name_hint, b->body, b->init, allocs,
                           b->match_buffers, b->annotations, b->span);
  }

 private:
  static bool SameBuffers(const std::vector<Buffer>& a, const std::vector<Buffer>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (a[i] != b[i]) return false;
    }
    return true;
  }
  std::vector<BufferRegion> Visible(const std::vector<BufferRegion>& regions) const {
    std::vector<BufferRegion> out;
    for (const BufferRegion& r : regions) {
      if (visible.count(r->buffer->data.get())) out.push_back(r);
    }
    return out;
  }
};

PrimFunc PlanAtLcaFunc(PrimFunc f, IRModule, const PassContext&) {
  std::unordered_set<const VarNode*> managed, params;
  PostOrderVisit(f->body, [&](const ObjectRef& n) {
    if (auto* b = AsPtr<BlockNode>(n)) {
      for (const Buffer& buf : b->alloc_buffers) managed.insert(buf->data.get());
      for (const MatchBufferRegion& m : b->match_buffers) managed.insert(m->buffer->data.get());
    }
  });
  AllocationLocator locate;
  AllocationOrder order;
  for (const auto& [param, buf] : f->buffer_map) {
    params.insert(buf->data.get());
    order.Add(buf.get());
  }
  order.VisitStmt(f->body);
  std::unordered_map<const BufferNode*, Stmt> lca;
  for (auto& [buf, stmt] : DetectBufferAccessLCA(f)) lca[buf.get()] = stmt;
  for (const BufferNode* b : order.order) {
    auto it = lca.find(b);
    if (it == lca.end()) continue;
    locate.visible.insert(b->data.get());
    if (params.count(b->data.get()) || !managed.count(b->data.get())) continue;
    if (it->second) locate.at[it->second.get()].push_back(GetRef(b));
  }
  Stmt body = locate.VisitStmt(f->body);
  return body == f->body ? f : f->WithBody(body);
}

}  // namespace

Pass PlanBufferAllocationDown() {
  return CreatePrimFuncPass(PlanFunc, 0, "tir.PlanBufferAllocationDown");
}
TESSERA_REGISTER_PASS("tir.PlanBufferAllocationDown", PlanBufferAllocationDown);

Pass PlanAndUpdateBufferAllocationLocation() {
  return CreatePrimFuncPass(PlanAtLcaFunc, 0, "tir.PlanAndUpdateBufferAllocationLocation");
}
TESSERA_REGISTER_PASS("tir.PlanAndUpdateBufferAllocationLocation",
                      PlanAndUpdateBufferAllocationLocation);

}  // namespace transform
}  // namespace tessera
