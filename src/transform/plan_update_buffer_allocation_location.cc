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
#include <limits>
#include <map>
#include <optional>
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

using RelaxMap = std::unordered_map<const VarNode*, Ref<RangeNode>>;

// Whether, in some dimension whose indices do not read `avoid`, the accesses of one value of `v`
// touch a part of the buffer that the next value's do not ([lo(v), hi(v)] ends before
// [lo(v + 1), hi(v + 1)] starts, or the other way round), so no two values of `v` overlap.
// `relaxed[a]` are the loops relaxed in access a.
bool SeparatesValues(const Var& v, const std::vector<std::vector<Expr>>& indices,
                     const std::vector<RelaxMap>& relaxed,
                     const std::unordered_set<const VarNode*>& avoid) {
  size_t ndim = indices.front().size();
  for (size_t d = 0; d < ndim; ++d) {
    Expr lo, hi;
    bool ok = true;
    for (size_t a = 0; a < indices.size(); ++a) {
      Expr index = indices[a][d];
      if (index->dtype.is_vector() ||
          UsesVar(index, [&](const VarNode* u) { return avoid.count(u) != 0; })) {
        ok = false;
        break;
      }
      auto [l, h] = Bounds(index, relaxed[a]);
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
    // Value v touches [lo(v), hi(v)]; the next one starts after it ends.
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

// A loop fused from several reads its variable v only as digits of mixed radix: v % c (the
// innermost loop), v // c % d or v % (c d) // c (a middle one), v // c (the outermost). Each
// such form is replaced by a variable of its own, keyed by the interval [lo, hi) of place values
// it covers (v % c: [1, c); v // c % d: [c, c d); v // c: [c, infinity)).
class FusedDigits : public ExprMutator {
 public:
  static constexpr int64_t kTop = std::numeric_limits<int64_t>::max();
  explicit FusedDigits(const VarNode* v) : v_(v) {}
  using ExprMutator::VisitExpr_;
  std::map<std::pair<int64_t, int64_t>, Var> digits;

  Expr VisitExpr_(const FloorDivNode* op) override {
    auto c = AsConstInt(op->b);
    if (AsPtr<VarNode>(op->a) == v_ && c && *c > 1) return Digit(*c, kTop, op->a->dtype);
    // v % m // c with c dividing m: the same digit as v // c % (m / c).
    auto* mod = AsPtr<FloorModNode>(op->a);
    auto m = mod ? AsConstInt(mod->b) : std::nullopt;
    if (mod && AsPtr<VarNode>(mod->a) == v_ && c && *c > 1 && m && *m > *c && *m % *c == 0) {
      return Digit(*c, *m, op->a->dtype);
    }
    return ExprMutator::VisitExpr_(op);
  }
  Expr VisitExpr_(const FloorModNode* op) override {
    auto d = AsConstInt(op->b);
    if (d && *d > 1) {
      if (AsPtr<VarNode>(op->a) == v_) return Digit(1, *d, op->a->dtype);
      auto* div = AsPtr<FloorDivNode>(op->a);
      auto c = div ? AsConstInt(div->b) : std::nullopt;
      if (div && AsPtr<VarNode>(div->a) == v_ && c && *c > 1 &&
          *c <= std::numeric_limits<int64_t>::max() / *d) {
        return Digit(*c, *c * *d, op->a->dtype);
      }
    }
    return ExprMutator::VisitExpr_(op);
  }

  /*! \brief Whether the digits' intervals tile [1, infinity): then v and the digits determine
   *  each other. */
  bool Complete() const {
    int64_t at = 1;
    for (const auto& [range, var] : digits) {
      if (range.first != at) return false;
      at = range.second;
    }
    return at == kTop && digits.size() > 1;
  }

 private:
  Expr Digit(int64_t lo, int64_t hi, DataType t) {
    auto [it, fresh] = digits.emplace(std::make_pair(lo, hi), Var());
    if (fresh) it->second = VarNode::Make("digit" + std::to_string(digits.size()), t);
    return it->second;
  }
  const VarNode* v_;
};

// Whether the accesses of one iteration of `loop` touch a part of the buffer that no other
// iteration touches, so the buffer may live inside the loop body.
bool IterationsAreDisjoint(const ForNode* loop,
                           const std::vector<AccessPathCollector::Access>& accesses,
                           const RelaxMap& loops) {
  // A loop of one iteration has nothing to keep apart (a unit batch loop outside a register
  // tile whose write-back iterates its own unit loop instead).
  if (auto* extent = AsPtr<IntImmNode>(loop->extent); extent && extent->value == 1) return true;
  std::vector<std::vector<Expr>> indices;
  std::vector<RelaxMap> relaxed;
  for (const auto& a : accesses) {
    // Relax the loops below `loop` on this access's path.
    RelaxMap below_loop;
    bool below = false;
    for (const StmtNode* n : a.path) {
      if (n == loop) {
        below = true;
        continue;
      }
      if (auto* f = AsFor(n); f && below)
        below_loop[f->loop_var.get()] = loops.at(f->loop_var.get());
    }
    indices.push_back(a.indices);
    relaxed.push_back(std::move(below_loop));
  }
  if (SeparatesValues(loop->loop_var, indices, relaxed, {})) return true;
  // A loop fused from several (a parallel loop over tiles of rows and columns): two iterations
  // differ in at least one digit, so the buffer's parts are apart if, for every digit, one
  // dimension that reads no other digit keeps that digit's values apart.
  FusedDigits fused(loop->loop_var.get());
  std::vector<std::vector<Expr>> split(indices.size());
  for (size_t a = 0; a < indices.size(); ++a) {
    for (const Expr& i : indices[a]) {
      split[a].push_back(fused.VisitExpr(i));
      if (UsesVar(split[a].back(), loop->loop_var.get())) return false;
    }
  }
  if (!fused.Complete()) return false;
  for (const auto& [range, digit] : fused.digits) {
    std::unordered_set<const VarNode*> others;
    for (const auto& [r, other] : fused.digits) {
      if (other.get() != digit.get()) others.insert(other.get());
    }
    if (!SeparatesValues(digit, split, relaxed, others)) return false;
  }
  return true;
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
            !IterationsAreDisjoint(loop, acc->second, collect.loops))
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
