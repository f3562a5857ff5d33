// tir.CompactBufferAllocation: a block's allocation shrinks to the region its body touches
// (loops inside the block relaxed over their ranges); accesses are shifted to match.
#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "tessera/arith/estimate_region.h"
#include "tessera/ir/functor.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace transform {
namespace {

// An `if` condition as a bool (TVM's IfThenElse takes an integer too: true when nonzero).
Expr AsBoolCondition(const Expr& c) {
  if (c->dtype.is_bool()) return c;
  return NENode::Make(c, MakeConst(c->dtype, int64_t(0)), c->span);
}

Expr Cast(const Expr& e, DataType t) { return e->dtype == t ? e : Expr(CastNode::Make(t, e)); }

// [lo, hi] of an index over the loops inside the allocating block, as expressions in the
// variables outside it; `ok` is false for index forms this interval arithmetic does not cover.
struct Interval {
  Expr lo, hi;
  bool ok = true;
};

class IntervalEvaluator {
 public:
  explicit IntervalEvaluator(const std::unordered_map<const VarNode*, Ref<RangeNode>>& loops)
      : loops_(loops) {}

  Interval Eval(const Expr& e) {
    if (!Relaxed(e)) return {e, e};
    if (auto* v = AsPtr<VarNode>(e)) {
      auto it = loops_.find(v);
      if (it == loops_.end() || Relaxed(it->second->min) || Relaxed(it->second->extent))
        return Fail();
      Expr min = Cast(it->second->min, e->dtype);
      return {min, AddNode::Make(min, SubNode::Make(Cast(it->second->extent, e->dtype),
                                                    MakeConst(e->dtype, int64_t(1))))};
    }
    if (auto* op = AsPtr<AddNode>(e)) {
      Interval a = Eval(op->a), b = Eval(op->b);
      if (!a.ok || !b.ok) return Fail();
      return {AddNode::Make(a.lo, b.lo), AddNode::Make(a.hi, b.hi)};
    }
    if (auto* op = AsPtr<SubNode>(e)) {
      Interval a = Eval(op->a), b = Eval(op->b);
      if (!a.ok || !b.ok) return Fail();
      return {SubNode::Make(a.lo, b.hi), SubNode::Make(a.hi, b.lo)};
    }
    if (auto* op = AsPtr<MulNode>(e)) {
      Expr x = op->a, c = op->b;
      if (!AsConstInt(c)) std::swap(x, c);
      auto k = AsConstInt(c);
      if (!k) return Fail();
      Interval a = Eval(x);
      if (!a.ok) return Fail();
      Interval r{MulNode::Make(a.lo, c), MulNode::Make(a.hi, c)};
      if (*k < 0) std::swap(r.lo, r.hi);
      return r;
    }
    if (auto* op = AsPtr<FloorDivNode>(e)) {
      auto k = AsConstInt(op->b);
      Interval a = Eval(op->a);
      if (!k || *k <= 0 || !a.ok) return Fail();
      return {FloorDivNode::Make(a.lo, op->b), FloorDivNode::Make(a.hi, op->b)};
    }
    if (auto* op = AsPtr<FloorModNode>(e)) {
      auto k = AsConstInt(op->b);
      if (!k || *k <= 0) return Fail();
      return {MakeConst(e->dtype, int64_t(0)), MakeConst(e->dtype, *k - 1)};
    }
    if (auto* op = AsPtr<MinNode>(e)) {
      Interval a = Eval(op->a), b = Eval(op->b);
      if (!a.ok || !b.ok) return Fail();
      return {MinNode::Make(a.lo, b.lo), MinNode::Make(a.hi, b.hi)};
    }
    if (auto* op = AsPtr<MaxNode>(e)) {
      Interval a = Eval(op->a), b = Eval(op->b);
      if (!a.ok || !b.ok) return Fail();
      return {MaxNode::Make(a.lo, b.lo), MaxNode::Make(a.hi, b.hi)};
    }
    return Fail();
  }

 private:
  static Interval Fail() { return {nullptr, nullptr, false}; }
  bool Relaxed(const Expr& e) {
    return UsesVar(e, [this](const VarNode* v) { return loops_.count(v) != 0; });
  }
  const std::unordered_map<const VarNode*, Ref<RangeNode>>& loops_;
};

// TVM's storage ranks: the thread scopes whose variables index one shared copy of a buffer.
int StorageRank(const std::string& scope) {
  if (scope.empty() || scope == "global") return 0;
  if (scope == "shared" || scope == "shared.dyn") return 1;
  if (scope == "warp") return 2;
  return 3;  // local, fragments and the other per-thread scopes
}

/*! \brief Whether a loop bound to thread `tag` around the allocation of a buffer of `scope`
 *  iterates over one copy of it (so its region is relaxed over that loop): shared memory is one
 *  copy per thread block (its threadIdx and vthread loops relaxed), warp memory one per warp
 *  (threadIdx.x relaxed); local memory is per thread. Unlike TVM, which relaxes a "global"
 *  buffer over every thread loop, tessera keeps it per thread as well: its CUDA code generator
 *  makes a "global" allocation inside a kernel an array of the thread's own. */
bool RelaxOuterThread(const std::string& scope, const std::string& tag) {
  int rank = StorageRank(scope);
  if (rank == 0) return false;
  if (rank == 2) return tag == "threadIdx.x";
  int thread_rank = -1;
  if (tag.rfind("blockIdx.", 0) == 0) {
    thread_rank = 0;
  } else if (tag.rfind("threadIdx.", 0) == 0 || tag.rfind("vthread", 0) == 0 || tag == "cthread") {
    thread_rank = 1;
  }
  return thread_rank >= 0 && rank <= thread_rank;
}

/*! \brief The thread tag of an AttrStmt binding a thread ("thread_extent", "virtual_thread"),
 *  with its variable; null otherwise. */
const IterVarNode* ThreadAttr(const AttrStmtNode* op) {
  if (op->attr_key != "thread_extent" && op->attr_key != "virtual_thread") return nullptr;
  return AsPtr<IterVarNode>(op->node);
}

// The touched region of each buffer allocated at one point, per dimension: a base and a
// constant extent, or nothing when the dimension stays whole. What counts as touched, as in
// TVM: the loads and stores (their indices through the let bindings in scope), the sources of
// match buffers, and, where the buffer's data pointer is used otherwise (an opaque call), the
// read/write regions that the innermost block around the use declares for it, or the whole
// buffer when none does. Inside `if c` (and T.if_then_else, and a block predicate), the loops
// that `c` bounds (`i < e`, `e <= i`, ... with `e` free of the relaxed loops) are relaxed over
// the narrowed range only.
class RegionCollector : public StmtExprVisitor {
 public:
  /*! \brief `outer`: loops outside the allocation that are relaxed as well. */
  /*! \brief `shared`: the buffers are one per thread block (relaxed over threadIdx loops);
   *  else one per thread (local, fragments: not relaxed over any thread-bound loop). Neither is
   *  relaxed over blockIdx loops. */
  RegionCollector(const std::unordered_set<const BufferNode*>& buffers, bool shared,
                  std::unordered_map<const VarNode*, Ref<RangeNode>> outer = {})
      : buffers_(buffers), shared_(shared), loops_(std::move(outer)) {
    for (const BufferNode* b : buffers_) data_[b->data.get()] = b;
  }
  using StmtExprVisitor::VisitExpr_;
  using StmtExprVisitor::VisitStmt_;

  void VisitStmt_(const ForNode* op) override {
    bool fixed = false;
    if (op->for_kind == ForKind::kThreadBinding && op->thread_binding) {
      fixed = FixedThread(op->thread_binding->thread_tag);
    }
    // (A loop of one iteration is relaxed exactly.)
    if (!fixed || IsConstInt(op->extent, 1)) loops_[op->loop_var.get()] = RangeNode::Make(op->min, op->extent);
    StmtExprVisitor::VisitStmt_(op);
  }
  void VisitStmt_(const AttrStmtNode* op) override {
    if (const IterVarNode* iv = ThreadAttr(op)) {
      if (!FixedThread(iv->thread_tag) || IsConstInt(op->value, 1)) {
        loops_[iv->var.get()] = RangeNode::Make(MakeConst(op->value->dtype, int64_t(0)), op->value);
      }
    }
    StmtExprVisitor::VisitStmt_(op);
  }
  void VisitStmt_(const LetStmtNode* op) override {
    VisitExpr(op->value);
    Bind(op->var, op->value);
    VisitStmt(op->body);
  }
  void VisitExpr_(const LetNode* op) override {
    VisitExpr(op->value);
    Bind(op->var, op->value);
    VisitExpr(op->body);
  }
  void VisitStmt_(const IfThenElseNode* op) override {
    VisitExpr(op->condition);
    auto saved = loops_;
    Narrow(op->condition, true);
    conds_.push_back(AsBoolCondition(op->condition));
    VisitStmt(op->then_case);
    conds_.pop_back();
    loops_ = saved;
    if (op->else_case) {
      Narrow(op->condition, false);
      conds_.push_back(NotNode::Make(AsBoolCondition(op->condition)));
      VisitStmt(op->else_case);
      conds_.pop_back();
      loops_ = std::move(saved);
    }
  }
  void VisitExpr_(const CallNode* op) override {
    if (!op->is_op("tir.if_then_else") || op->args.size() != 3) {
      StmtExprVisitor::VisitExpr_(op);
      return;
    }
    VisitExpr(op->args[0]);
    auto saved = loops_;
    Narrow(op->args[0], true);
    conds_.push_back(op->args[0]);
    VisitExpr(op->args[1]);
    conds_.back() = NotNode::Make(op->args[0]);
    loops_ = saved;
    Narrow(op->args[0], false);
    VisitExpr(op->args[2]);
    conds_.pop_back();
    loops_ = std::move(saved);
  }
  void VisitStmt_(const BlockRealizeNode* op) override {
    auto saved = loops_;
    bool pred = op->predicate && !IsConstInt(op->predicate, 1);
    if (pred) {
      Narrow(op->predicate, true);
      conds_.push_back(op->predicate);
    }
    StmtExprVisitor::VisitStmt_(op);
    if (pred) conds_.pop_back();
    loops_ = std::move(saved);
  }
  void VisitExpr_(const VarNode* op) override {
    auto it = data_.find(op);
    if (it == data_.end()) return;
    auto ann = annotations_.find(it->second);
    if (ann == annotations_.end()) {
      MarkWhole(it->second);
      return;
    }
    for (const BufferRegion& r : ann->second) TouchRegion(r);
  }
  void VisitExpr_(const BufferLoadNode* op) override {
    Touch(op->buffer.get(), op->indices, {});
    StmtExprVisitor::VisitExpr_(op);
  }
  void VisitStmt_(const BufferStoreNode* op) override {
    Touch(op->buffer.get(), op->indices, {});
    StmtExprVisitor::VisitStmt_(op);
  }
  void VisitStmt_(const BlockNode* op) override {
    // A match buffer's view covers its source region (tir.LowerMatchBuffer computes the view's
    // offset and strides from the compacted buffer afterwards).
    for (const MatchBufferRegion& m : op->match_buffers) TouchRegion(m->source);
    // The block's read/write regions stand for the opaque uses of a buffer inside it.
    std::unordered_map<const BufferNode*, std::vector<BufferRegion>> mine;
    for (const auto& regions : {op->reads, op->writes}) {
      for (const BufferRegion& r : regions) {
        if (buffers_.count(r->buffer.get())) mine[r->buffer.get()].push_back(r);
      }
    }
    std::unordered_map<const BufferNode*, std::optional<std::vector<BufferRegion>>> outer;
    for (auto& [buf, regions] : mine) {
      auto it = annotations_.find(buf);
      outer[buf] = it == annotations_.end() ? std::nullopt : std::make_optional(it->second);
      annotations_[buf] = std::move(regions);
    }
    StmtExprVisitor::VisitStmt_(op);
    for (auto& [buf, regions] : outer) {
      if (regions) {
        annotations_[buf] = std::move(*regions);
      } else {
        annotations_.erase(buf);
      }
    }
  }

  struct Dim {
    Expr lo, hi;                     // symbolic base bounds of the first access
    int64_t lo_off = 0, hi_off = 0;  // constant widening from the other accesses
    bool whole = false;
  };
  std::unordered_map<const BufferNode*, std::vector<Dim>> dims;

 private:
  bool FixedThread(const std::string& tag) const {
    return tag.rfind("blockIdx.", 0) == 0 || (!shared_ && tag.rfind("threadIdx.", 0) == 0);
  }
  bool Relaxed(const Expr& e) const {
    return UsesVar(e, [this](const VarNode* v) { return loops_.count(v) != 0; });
  }
  // An integer let binding: its uses in indices stand for its value.
  void Bind(const Var& var, const Expr& value) {
    if (!value->dtype.is_int() && !value->dtype.is_uint()) return;
    if (!value->dtype.is_scalar()) return;
    lets_[var.get()] = lets_.empty() ? value : Substitute(value, lets_);
  }

  // Narrows the ranges of the relaxed loops that `cond` (or its negation) bounds.
  void Narrow(const Expr& cond, bool positive) {
    if (auto* op = AsPtr<AndNode>(cond)) {
      if (positive) {
        Narrow(op->a, true);
        Narrow(op->b, true);
      }
      return;
    }
    if (auto* op = AsPtr<OrNode>(cond)) {
      if (!positive) {
        Narrow(op->a, false);
        Narrow(op->b, false);
      }
      return;
    }
    if (auto* op = AsPtr<NotNode>(cond)) {
      Narrow(op->a, !positive);
      return;
    }
    auto* cmp = AsPtr<BinaryNode>(cond);
    if (!cmp || !cmp->is_comparison() || !cmp->a->dtype.is_scalar()) return;
    NodeKind kind = cmp->kind;
    if (!positive) {
      switch (kind) {
        case NodeKind::kLT: kind = NodeKind::kGE; break;
        case NodeKind::kLE: kind = NodeKind::kGT; break;
        case NodeKind::kGT: kind = NodeKind::kLE; break;
        case NodeKind::kGE: kind = NodeKind::kLT; break;
        case NodeKind::kNE: kind = NodeKind::kEQ; break;
        default: return;
      }
    }
    Expr var = cmp->a, bound = cmp->b;
    if (!AsPtr<VarNode>(var) || !loops_.count(AsPtr<VarNode>(var))) {
      std::swap(var, bound);
      switch (kind) {  // e < v is v > e
        case NodeKind::kLT: kind = NodeKind::kGT; break;
        case NodeKind::kLE: kind = NodeKind::kGE; break;
        case NodeKind::kGT: kind = NodeKind::kLT; break;
        case NodeKind::kGE: kind = NodeKind::kLE; break;
        default: break;
      }
    }
    auto* v = AsPtr<VarNode>(var);
    if (!v || !loops_.count(v) || Relaxed(bound) || !bound->dtype.is_int()) return;
    const Ref<RangeNode>& range = loops_[v];
    DataType t = range->min->dtype;
    Expr e = Cast(bound, t), one = MakeConst(t, int64_t(1));
    Expr lo = range->min, hi = AddNode::Make(range->min, SubNode::Make(Cast(range->extent, t), one));
    switch (kind) {
      case NodeKind::kLT: hi = MinNode::Make(hi, SubNode::Make(e, one)); break;
      case NodeKind::kLE: hi = MinNode::Make(hi, e); break;
      case NodeKind::kGT: lo = MaxNode::Make(lo, AddNode::Make(e, one)); break;
      case NodeKind::kGE: lo = MaxNode::Make(lo, e); break;
      case NodeKind::kEQ:
        lo = MaxNode::Make(lo, e);
        hi = MinNode::Make(hi, e);
        break;
      default: return;
    }
    lo = SimplifyExpr(lo);
    Expr extent = SimplifyExpr(AddNode::Make(SubNode::Make(hi, lo), one));
    auto n = AsConstInt(extent);
    if (n && *n <= 0) return;  // an empty branch: keep the loop's range
    loops_[v] = RangeNode::Make(lo, extent);
  }

  // As TVM: under the enclosing conditions (block predicates, `if`s), an index that is one
  // fused iterator of the relaxed loops (constant ranges) may cover less than interval
  // arithmetic says: `j * 8 + k` with `j * 8 + k < 60` over 8 x 8 iterations covers [0, 60).
  // [lo, hi] becomes that narrower bound when both widths are constants.
  void NarrowByConditions(const Expr& index, const Expr& extent, Expr* lo, Expr* hi) {
    if (conds_.empty()) return;
    auto width = AsConstInt(SimplifyExpr(SubNode::Make(*hi, Cast(*lo, (*hi)->dtype))));
    if (!width) return;
    std::vector<arith::IterDomain> iters;
    std::vector<std::pair<Var, arith::IntervalSet>> dom;
    for (const auto& [v, range] : loops_) {
      auto lo_c = AsConstInt(range->min), n = AsConstInt(range->extent);
      if (!lo_c || !n) {
        if (UsesVar(index, [v = v](const VarNode* u) { return u == v; })) return;
        continue;
      }
      iters.push_back({GetRef(v), *lo_c, *n});
      dom.push_back({GetRef(v), {MakeConst(v->dtype, *lo_c), MakeConst(v->dtype, *lo_c + *n - 1)}});
    }
    Expr pred;
    for (const Expr& c : conds_) {
      Expr b = lets_.empty() ? c : Substitute(c, lets_);
      pred = pred ? AndNode::Make(pred, b) : b;
    }
    arith::Analyzer ana;
    auto sets = arith::EstimateRegionUpperBound({{index, extent}}, &iters, dom, pred, ana);
    if (sets.size() != 1 || !sets[0].HasLowerBound() || !sets[0].HasUpperBound()) return;
    Expr nlo = SimplifyExpr(sets[0].min_value), nhi = SimplifyExpr(sets[0].max_value);
    if (Relaxed(nlo) || Relaxed(nhi)) return;
    auto nwidth = AsConstInt(SimplifyExpr(SubNode::Make(nhi, Cast(nlo, nhi->dtype))));
    if (!nwidth || *nwidth >= *width) return;
    *lo = nlo;
    *hi = nhi;
  }

  void MarkWhole(const BufferNode* buf) {
    auto& ds = dims[buf];
    if (ds.empty()) ds.resize(buf->shape.size());
    for (Dim& d : ds) d.whole = true;
  }

  void TouchRegion(const BufferRegion& r) {
    std::vector<Expr> mins, extents;
    for (const Range& range : r->region) {
      mins.push_back(range->min);
      extents.push_back(range->extent);
    }
    Touch(r->buffer.get(), mins, extents);
  }

  void Touch(const BufferNode* buf, const std::vector<Expr>& mins,
             const std::vector<Expr>& extents) {
    if (!buffers_.count(buf)) return;
    auto& ds = dims[buf];
    if (ds.empty()) ds.resize(buf->shape.size());
    IntervalEvaluator eval(loops_);
    for (size_t d = 0; d < mins.size() && d < ds.size(); ++d) {
      Dim& dim = ds[d];
      if (dim.whole) continue;
      // A vector index covers its first to last lane (a Ramp with a non-negative stride).
      Expr first = lets_.empty() ? mins[d] : Substitute(mins[d], lets_), last = first;
      if (first->dtype.is_vector()) {
        auto* ramp = AsPtr<RampNode>(first);
        auto stride = ramp ? AsConstInt(ramp->stride) : std::nullopt;
        if (!stride || *stride < 0 || ramp->lanes < 0) {  // lanes < 0: vscale * k lanes
          dim.whole = true;
          continue;
        }
        first = ramp->base;
        last = AddNode::Make(ramp->base, MakeConst(ramp->base->dtype, *stride * (ramp->lanes - 1)));
      }
      Interval lo_iv = eval.Eval(first), hi_iv = eval.Eval(last);
      if (!lo_iv.ok || !hi_iv.ok) {
        dim.whole = true;
        continue;
      }
      Expr lo = SimplifyExpr(lo_iv.lo);
      Expr hi = SimplifyExpr(hi_iv.hi);
      if (!extents.empty()) {
        hi = SimplifyExpr(AddNode::Make(
            hi, SubNode::Make(Cast(extents[d], hi->dtype), MakeConst(hi->dtype, int64_t(1)))));
      }
      if (first.get() == last.get()) {
        Expr ext = extents.empty() ? MakeConst(first->dtype, int64_t(1)) : extents[d];
        NarrowByConditions(first, ext, &lo, &hi);
      }
      if (!dim.lo) {
        dim.lo = lo;
        dim.hi = hi;
        continue;
      }
      auto dlo = AsConstInt(SimplifyExpr(SubNode::Make(Cast(lo, dim.lo->dtype), dim.lo)));
      auto dhi = AsConstInt(SimplifyExpr(SubNode::Make(Cast(hi, dim.hi->dtype), dim.hi)));
      if (!dlo || !dhi) {
        dim.whole = true;
        continue;
      }
      dim.lo_off = std::min(dim.lo_off, *dlo);
      dim.hi_off = std::max(dim.hi_off, *dhi);
    }
  }

  const std::unordered_set<const BufferNode*>& buffers_;
  bool shared_ = false;
  std::unordered_map<const VarNode*, Ref<RangeNode>> loops_;
  std::unordered_map<const VarNode*, const BufferNode*> data_;
  VarMap lets_;
  std::unordered_map<const BufferNode*, std::vector<BufferRegion>> annotations_;
  std::vector<Expr> conds_;  // the conditions around the current point
};

// Points accesses of the compacted buffers at their new buffer, shifted by the region base.
class AccessShifter : public StmtExprMutator {
 public:
  struct Compacted {
    Buffer buffer;
    std::vector<Expr> base;  // per dimension; null: unchanged
  };
  /*! \brief `units`: loops of one iteration outside the block, replaced by their min in the
   *  shifted indices (constant indices keep fragments and local arrays in registers). */
  AccessShifter(const std::unordered_map<const BufferNode*, Compacted>& map, VarMap units)
      : map_(map), units_(std::move(units)) {}
  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;

  Expr VisitExpr_(const BufferLoadNode* op) override {
    Expr e = StmtExprMutator::VisitExpr_(op);
    auto* load = AsPtr<BufferLoadNode>(e);
    auto it = map_.find(load->buffer.get());
    if (it == map_.end()) return e;
    return BufferLoadNode::Make(it->second.buffer, Shift(it->second, load->indices),
                                load->predicate, load->span);
  }
  Stmt VisitStmt_(const BufferStoreNode* op) override {
    Stmt s = StmtExprMutator::VisitStmt_(op);
    auto* store = AsPtr<BufferStoreNode>(s);
    auto it = map_.find(store->buffer.get());
    if (it == map_.end()) return s;
    return BufferStoreNode::Make(it->second.buffer, store->value, Shift(it->second, store->indices),
                                 store->predicate, store->span);
  }
  Stmt VisitStmt_(const DeclBufferNode* op) override {
    Stmt body = VisitStmt(op->body);
    auto it = map_.find(op->buffer.get());
    Buffer buf = it == map_.end() ? op->buffer : it->second.buffer;
    if (body == op->body && buf == op->buffer) return GetRef(op);
    return DeclBufferNode::Make(buf, body, op->span);
  }
  Stmt VisitStmt_(const BlockNode* op) override {
    Stmt s = StmtExprMutator::VisitStmt_(op);
    auto* b = AsPtr<BlockNode>(s);
    auto shift = [&](const std::vector<BufferRegion>& regions) {
      std::vector<BufferRegion> out;
      for (const BufferRegion& r : regions) {
        auto it = map_.find(r->buffer.get());
        if (it == map_.end()) {
          out.push_back(r);
          continue;
        }
        std::vector<Expr> mins;
        for (const Range& range : r->region) mins.push_back(range->min);
        mins = Shift(it->second, mins);
        std::vector<Range> region;
        for (size_t d = 0; d < mins.size(); ++d)
          region.push_back(RangeNode::Make(mins[d], r->region[d]->extent));
        out.push_back(BufferRegionNode::Make(it->second.buffer, region, r->span));
      }
      return out;
    };
    std::vector<MatchBufferRegion> matches;
    for (const MatchBufferRegion& m : b->match_buffers) {
      auto it = map_.find(m->source->buffer.get());
      if (it == map_.end()) {
        matches.push_back(m);
        continue;
      }
      matches.push_back(MatchBufferRegionNode::Make(m->buffer, shift({m->source})[0], m->span));
    }
    std::vector<Buffer> allocs;
    for (const Buffer& buf : b->alloc_buffers) {
      auto it = map_.find(buf.get());
      allocs.push_back(it == map_.end() ? buf : it->second.buffer);
    }
    return BlockNode::Make(b->iter_vars, shift(b->reads), shift(b->writes), b->name_hint, b->body,
                           b->init, allocs, matches, b->annotations, b->span);
  }

 private:
  std::vector<Expr> Shift(const Compacted& c, const std::vector<Expr>& indices) const {
    std::vector<Expr> out;
    for (size_t d = 0; d < indices.size(); ++d) {
      const Expr& i = indices[d];
      if (!c.base[d]) {
        out.push_back(i);
        continue;
      }
      Expr base = Cast(c.base[d], i->dtype.element_of());
      if (i->dtype.is_vector()) base = BroadcastNode::Make(base, i->dtype.lanes());
      Expr shifted = SubNode::Make(i, base);
      if (!units_.empty()) shifted = Substitute(shifted, units_);
      out.push_back(SimplifyExpr(shifted));
    }
    return out;
  }
  const std::unordered_map<const BufferNode*, Compacted>& map_;
  VarMap units_;
};

// storage_align: the "buffer_dim_align" annotation of the blocks that write a buffer asks that
// the stride of a dimension be `offset` more than a multiple of `factor` (against shared
// memory bank conflicts); the compacted buffer gets the strides.
struct DimAlign {
  int axis = 0;
  int64_t factor = 0, offset = 0;
};

std::unordered_map<const BufferNode*, std::vector<DimAlign>> CollectDimAligns(const Stmt& body) {
  std::unordered_map<const BufferNode*, std::vector<DimAlign>> out;
  PostOrderVisit(body, [&](const ObjectRef& node) {
    auto* block = AsPtr<BlockNode>(node);
    if (!block) return;
    auto it = block->annotations.find("buffer_dim_align");
    if (it == block->annotations.end()) return;
    auto* entries = AsPtr<ArrayNode>(it->second);
    if (!entries) return;
    for (const ObjectRef& e : entries->items) {
      auto* items = AsPtr<ArrayNode>(e);
      if (!items || items->items.size() != 4) continue;
      std::optional<int64_t> v[4];
      for (int k = 0; k < 4; ++k) {
        v[k] = AsConstInt(std::static_pointer_cast<ExprNode>(items->items[k]));
      }
      if (!v[0] || !v[1] || !v[2] || !v[3] || *v[0] < 0 ||
          *v[0] >= static_cast<int64_t>(block->writes.size()) || *v[2] <= 0)
        continue;
      const BufferNode* buf = block->writes[*v[0]]->buffer.get();
      int64_t rank = static_cast<int64_t>(buf->shape.size());
      int64_t axis = *v[1] < 0 ? *v[1] + rank : *v[1];
      if (axis < 0 || axis >= rank) continue;
      out[buf].push_back(DimAlign{static_cast<int>(axis), *v[2], *v[3]});
    }
  });
  return out;
}

/*! \brief The strides of `shape` with the alignments applied; empty when the shape is not
 *  constant or no alignment changes a stride. */
std::vector<Expr> AlignedStrides(const std::vector<Expr>& shape, const std::vector<DimAlign>& aligns) {
  std::vector<Expr> strides(shape.size());
  int64_t stride = 1;
  bool changed = false;
  for (size_t d = shape.size(); d-- > 0;) {
    for (const DimAlign& a : aligns) {
      if (a.axis != static_cast<int>(d)) continue;
      int64_t padded = stride + ((a.factor + a.offset - stride % a.factor) % a.factor);
      changed = changed || padded != stride;
      stride = padded;
    }
    strides[d] = MakeConst(shape[d]->dtype, stride);
    auto n = AsConstInt(shape[d]);
    if (!n) return {};
    stride *= *n;
  }
  if (!changed) return {};
  return strides;
}

/*! \brief The compacted form of `buf` from its touched region `dims` (null: not touched) and
 *  its storage alignments `aligns` (null: none); nothing when it stays as it is. `strict`
 *  (TVM's is_strict): a dimension only shrinks; otherwise it becomes the touched region even
 *  when that is larger than the buffer (a padded tile written past a buffer too small). */
std::optional<AccessShifter::Compacted> CompactedBuffer(
    const Buffer& buf, const std::vector<RegionCollector::Dim>* dims,
    const std::vector<DimAlign>* aligns, bool strict) {
  if (!dims) {
    if (!aligns || !buf->strides.empty()) return std::nullopt;
    std::vector<Expr> strides = AlignedStrides(buf->shape, *aligns);
    if (strides.empty()) return std::nullopt;
    return AccessShifter::Compacted{
        BufferNode::Make(buf->data, buf->dtype, buf->shape, strides, buf->elem_offset, buf->name,
                         buf->data_alignment, buf->offset_factor, buf->span),
        std::vector<Expr>(buf->shape.size())};
  }
  std::vector<Expr> shape, base;
  bool smaller = false;
  for (size_t d = 0; d < buf->shape.size(); ++d) {
    const auto& dim = (*dims)[d];
    auto full = AsConstInt(buf->shape[d]);
    std::optional<int64_t> extent;
    if (!dim.whole && dim.lo) extent = AsConstInt(SimplifyExpr(SubNode::Make(dim.hi, dim.lo)));
    // A symbolic dimension shrinks to a constant extent as well (the accesses lie in it).
    if (extent) {
      int64_t n = *extent + dim.hi_off - dim.lo_off + 1;
      Expr lo = SimplifyExpr(AddNode::Make(dim.lo, MakeConst(dim.lo->dtype, dim.lo_off)));
      bool same = full && n == *full && IsConstInt(lo, 0);
      if (n > 0 && (!full || n < *full || (!strict && !same))) {
        smaller = true;
        shape.push_back(MakeConst(buf->shape[d]->dtype, n));
        base.push_back(lo);
        continue;
      }
    }
    shape.push_back(buf->shape[d]);
    base.push_back(nullptr);
  }
  std::vector<Expr> strides;
  if (aligns) strides = AlignedStrides(shape, *aligns);
  if (!smaller && strides.empty()) return std::nullopt;
  Buffer nb = BufferNode::Make(buf->data, buf->dtype, shape, strides, buf->elem_offset, buf->name,
                               buf->data_alignment, buf->offset_factor, buf->span);
  return AccessShifter::Compacted{nb, base};
}

class BufferCompactor : public StmtMutator {
 public:
  explicit BufferCompactor(bool strict) : strict_(strict) {}
  using StmtMutator::VisitStmt_;

  Stmt VisitStmt_(const ForNode* op) override {
    bool thread = op->for_kind == ForKind::kThreadBinding && op->thread_binding;
    if (thread) {
      thread_loops_[op->loop_var.get()] = {RangeNode::Make(op->min, op->extent),
                                           op->thread_binding->thread_tag};
    }
    // A loop of one iteration outside the block is its min in every access (relaxed exactly),
    // so that accesses simplified with it and without it compare.
    const bool unit = IsConstInt(op->extent, 1);
    if (unit) unit_loops_[op->loop_var.get()] = RangeNode::Make(op->min, op->extent);
    Stmt s = StmtMutator::VisitStmt_(op);
    if (thread) thread_loops_.erase(op->loop_var.get());
    if (unit) unit_loops_.erase(op->loop_var.get());
    return s;
  }

  Stmt VisitStmt_(const AttrStmtNode* op) override {
    const IterVarNode* iv = ThreadAttr(op);
    if (!iv) return StmtMutator::VisitStmt_(op);
    thread_loops_[iv->var.get()] = {
        RangeNode::Make(MakeConst(op->value->dtype, int64_t(0)), op->value), iv->thread_tag};
    Stmt s = StmtMutator::VisitStmt_(op);
    thread_loops_.erase(iv->var.get());
    return s;
  }

  Stmt VisitStmt_(const BlockNode* op) override {
    Stmt s = StmtMutator::VisitStmt_(op);
    auto* b = AsPtr<BlockNode>(s);
    if (b->alloc_buffers.empty()) return s;
    // The buffers of each scope are collected together: a "shared" buffer declared inside
    // loops bound to threadIdx is one buffer for all the threads of the block, so its region
    // is relaxed over those loops too (RelaxOuterThread).
    std::map<std::string, std::unordered_set<const BufferNode*>> by_scope;
    for (const Buffer& buf : b->alloc_buffers) {
      if (buf->strides.empty()) by_scope[buf->scope()].insert(buf.get());
    }
    std::unordered_map<const BufferNode*, std::vector<RegionCollector::Dim>> dims;
    for (const auto& [scope, buffers] : by_scope) {
      RegionCollector collect(buffers, StorageRank(scope) == 1, OuterLoops(scope));
      collect.VisitStmt(b->body);
      if (b->init) collect.VisitStmt(b->init);
      for (auto& [buf, d] : collect.dims) dims[buf] = std::move(d);
    }
    std::unordered_map<const BufferNode*, std::vector<DimAlign>> aligns = CollectDimAligns(b->body);
    std::unordered_map<const BufferNode*, AccessShifter::Compacted> map;
    for (const Buffer& buf : b->alloc_buffers) {
      auto it = dims.find(buf.get());
      auto align = aligns.find(buf.get());
      auto c = CompactedBuffer(buf, it == dims.end() ? nullptr : &it->second,
                               align == aligns.end() ? nullptr : &align->second, strict_);
      if (c) map[buf.get()] = std::move(*c);
    }
    if (map.empty()) return s;
    return AccessShifter(map, Units()).VisitStmt(s);
  }

  // An allocation outside blocks (after tir.LowerOpaqueBlock) is compacted as a block's is,
  // when one buffer object alone names its storage, with the allocation's type and shape.
  Stmt VisitStmt_(const AllocateNode* op) override {
    Stmt s = StmtMutator::VisitStmt_(op);
    auto* a = AsPtr<AllocateNode>(s);
    Buffer buf = OnlyBuffer(a);
    if (!buf || buf->dtype != a->dtype || !buf->strides.empty() ||
        buf->shape.size() != a->extents.size()) {
      return s;
    }
    for (size_t i = 0; i < a->extents.size(); ++i) {
      auto x = AsConstInt(a->extents[i]), y = AsConstInt(buf->shape[i]);
      if (x && y ? *x != *y : a->extents[i] != buf->shape[i]) return s;
    }
    std::unordered_set<const BufferNode*> buffers{buf.get()};
    const std::string& scope = buf->scope();
    RegionCollector collect(buffers, StorageRank(scope) == 1, OuterLoops(scope));
    collect.VisitStmt(a->body);
    auto it = collect.dims.find(buf.get());
    if (it == collect.dims.end()) return s;
    auto c = CompactedBuffer(buf, &it->second, nullptr, strict_);
    if (!c) return s;
    std::vector<Expr> extents = c->buffer->shape;
    std::unordered_map<const BufferNode*, AccessShifter::Compacted> map{{buf.get(), *c}};
    Stmt body = AccessShifter(map, Units()).VisitStmt(a->body);
    return AllocateNode::Make(a->buffer_var, a->dtype, extents, a->condition, body,
                              a->annotations, a->span);
  }

 private:
  // The one buffer object over the storage of `a` in its body; null when there are several
  // (views of other shapes or types: aliases, which are not compacted) or none.
  static Buffer OnlyBuffer(const AllocateNode* a) {
    Buffer only;
    bool unique = true;
    auto see = [&](const Buffer& b) {
      if (b->data != a->buffer_var) return;
      if (!only) {
        only = b;
      } else if (b != only) {
        unique = false;
      }
    };
    PostOrderVisit(a->body, [&](const ObjectRef& n) {
      if (auto* load = AsPtr<BufferLoadNode>(n)) {
        see(load->buffer);
      } else if (auto* store = AsPtr<BufferStoreNode>(n)) {
        see(store->buffer);
      } else if (auto* decl = AsPtr<DeclBufferNode>(n)) {
        see(decl->buffer);
      } else if (auto* block = AsPtr<BlockNode>(n)) {
        for (const auto& regions : {block->reads, block->writes}) {
          for (const BufferRegion& r : regions) see(r->buffer);
        }
        for (const MatchBufferRegion& m : block->match_buffers) see(m->source->buffer);
      }
    });
    return unique ? only : Buffer();
  }

  // The loops outside the allocation over which a buffer of `scope` is relaxed: those of one
  // iteration, and the thread-bound ones that iterate over one copy of it.
  std::unordered_map<const VarNode*, Ref<RangeNode>> OuterLoops(const std::string& scope) const {
    std::unordered_map<const VarNode*, Ref<RangeNode>> out = unit_loops_;
    for (const auto& [var, loop] : thread_loops_) {
      if (RelaxOuterThread(scope, loop.second)) out[var] = loop.first;
    }
    return out;
  }

  VarMap Units() const {
    VarMap units;
    for (const auto& [var, range] : unit_loops_) units[var] = range->min;
    return units;
  }

  bool strict_ = true;
  std::unordered_map<const VarNode*, std::pair<Ref<RangeNode>, std::string>> thread_loops_;
  std::unordered_map<const VarNode*, Ref<RangeNode>> unit_loops_;
};

PrimFunc CompactBufferAllocationFunc(PrimFunc f, IRModule, const PassContext&) {
  Stmt body = BufferCompactor(true).VisitStmt(f->body);
  return body == f->body ? f : f->WithBody(body);
}

PrimFunc CompactBufferAllocationNonStrictFunc(PrimFunc f, IRModule, const PassContext&) {
  Stmt body = BufferCompactor(false).VisitStmt(f->body);
  return body == f->body ? f : f->WithBody(body);
}

}  // namespace

Pass CompactBufferAllocation() {
  return CreatePrimFuncPass(CompactBufferAllocationFunc, 0, "tir.CompactBufferAllocation");
}
TESSERA_REGISTER_PASS("tir.CompactBufferAllocation", CompactBufferAllocation);

// TVM's CompactBufferAllocation(is_strict=False).
Pass CompactBufferAllocationNonStrict() {
  return CreatePrimFuncPass(CompactBufferAllocationNonStrictFunc, 0,
                            "tir.CompactBufferAllocationNonStrict");
}
TESSERA_REGISTER_PASS("tir.CompactBufferAllocationNonStrict", CompactBufferAllocationNonStrict);

}  // namespace transform
}  // namespace tessera
