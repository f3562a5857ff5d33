// tir.CompactBufferAllocation: a block's allocation shrinks to the region its body touches
// (loops inside the block relaxed over their ranges); accesses are shifted to match.
#include <unordered_map>
#include <unordered_set>

#include "tessera/ir/functor.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace transform {
namespace {

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

// The touched region of each buffer allocated by one block, per dimension: a base and a
// constant extent, or nothing when the dimension stays whole.
class RegionCollector : public StmtExprVisitor {
 public:
  /*! \brief `outer`: loops outside the block that are relaxed as well. */
  RegionCollector(const std::unordered_set<const BufferNode*>& buffers,
                  std::unordered_map<const VarNode*, Ref<RangeNode>> outer = {})
      : buffers_(buffers), loops_(std::move(outer)) {}
  using StmtExprVisitor::VisitExpr_;
  using StmtExprVisitor::VisitStmt_;

  void VisitStmt_(const ForNode* op) override {
    loops_[op->loop_var.get()] = RangeNode::Make(op->min, op->extent);
    StmtExprVisitor::VisitStmt_(op);
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
    // A buffer a match buffer views keeps its layout (the view's offsets are computed from it).
    for (const MatchBufferRegion& m : op->match_buffers) {
      const BufferNode* buf = m->source->buffer.get();
      if (!buffers_.count(buf)) continue;
      auto& ds = dims[buf];
      if (ds.empty()) ds.resize(buf->shape.size());
      for (Dim& d : ds) d.whole = true;
    }
    for (const auto& regions : {op->reads, op->writes}) {
      for (const BufferRegion& r : regions) {
        std::vector<Expr> mins, extents;
        for (const Range& range : r->region) {
          mins.push_back(range->min);
          extents.push_back(range->extent);
        }
        Touch(r->buffer.get(), mins, extents);
      }
    }
    StmtExprVisitor::VisitStmt_(op);
  }

  struct Dim {
    Expr lo, hi;                     // symbolic base bounds of the first access
    int64_t lo_off = 0, hi_off = 0;  // constant widening from the other accesses
    bool whole = false;
  };
  std::unordered_map<const BufferNode*, std::vector<Dim>> dims;

 private:
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
      Expr first = mins[d], last = mins[d];
      if (first->dtype.is_vector()) {
        auto* ramp = AsPtr<RampNode>(first);
        auto stride = ramp ? AsConstInt(ramp->stride) : std::nullopt;
        if (!stride || *stride < 0) {
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
  std::unordered_map<const VarNode*, Ref<RangeNode>> loops_;
};

// Points accesses of the compacted buffers at their new buffer, shifted by the region base.
class AccessShifter : public StmtExprMutator {
 public:
  struct Compacted {
    Buffer buffer;
    std::vector<Expr> base;  // per dimension; null: unchanged
  };
  explicit AccessShifter(const std::unordered_map<const BufferNode*, Compacted>& map) : map_(map) {}
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
    std::vector<Buffer> allocs;
    for (const Buffer& buf : b->alloc_buffers) {
      auto it = map_.find(buf.get());
      allocs.push_back(it == map_.end() ? buf : it->second.buffer);
    }
    return BlockNode::Make(b->iter_vars, shift(b->reads), shift(b->writes), b->name_hint, b->body,
                           b->init, allocs, b->match_buffers, b->annotations, b->span);
  }

 private:
  static std::vector<Expr> Shift(const Compacted& c, const std::vector<Expr>& indices) {
    std::vector<Expr> out;
    for (size_t d = 0; d < indices.size(); ++d) {
      const Expr& i = indices[d];
      if (!c.base[d]) {
        out.push_back(i);
        continue;
      }
      Expr base = Cast(c.base[d], i->dtype.element_of());
      if (i->dtype.is_vector()) base = BroadcastNode::Make(base, i->dtype.lanes());
      out.push_back(SimplifyExpr(SubNode::Make(i, base)));
    }
    return out;
  }
  const std::unordered_map<const BufferNode*, Compacted>& map_;
};

class BufferCompactor : public StmtMutator {
 public:
  using StmtMutator::VisitStmt_;

  Stmt VisitStmt_(const ForNode* op) override {
    bool thread = op->for_kind == ForKind::kThreadBinding && op->thread_binding &&
                  op->thread_binding->thread_tag.rfind("threadIdx.", 0) == 0;
    if (thread) thread_loops_[op->loop_var.get()] = RangeNode::Make(op->min, op->extent);
    Stmt s = StmtMutator::VisitStmt_(op);
    if (thread) thread_loops_.erase(op->loop_var.get());
    return s;
  }

  Stmt VisitStmt_(const BlockNode* op) override {
    Stmt s = StmtMutator::VisitStmt_(op);
    auto* b = AsPtr<BlockNode>(s);
    if (b->alloc_buffers.empty()) return s;
    // A "shared" buffer declared inside loops bound to threadIdx is one buffer for all the
    // threads of the block: its region is relaxed over those loops too.
    std::unordered_set<const BufferNode*> owned, shared;
    for (const Buffer& buf : b->alloc_buffers) {
      if (!buf->strides.empty()) continue;
      const std::string& scope = buf->scope();
      (scope == "shared" || scope == "shared.dyn" ? shared : owned).insert(buf.get());
    }
    RegionCollector collect(owned), collect_shared(shared, thread_loops_);
    for (RegionCollector* c : {&collect, &collect_shared}) {
      c->VisitStmt(b->body);
      if (b->init) c->VisitStmt(b->init);
    }
    for (auto& [buf, dims] : collect_shared.dims) collect.dims[buf] = std::move(dims);
    std::unordered_map<const BufferNode*, AccessShifter::Compacted> map;
    for (const Buffer& buf : b->alloc_buffers) {
      auto it = collect.dims.find(buf.get());
      if (it == collect.dims.end()) continue;
      std::vector<Expr> shape, base;
      bool smaller = false;
      for (size_t d = 0; d < buf->shape.size(); ++d) {
        const auto& dim = it->second[d];
        auto full = AsConstInt(buf->shape[d]);
        std::optional<int64_t> extent;
        if (!dim.whole && dim.lo) {
          extent = AsConstInt(SimplifyExpr(SubNode::Make(dim.hi, dim.lo)));
        }
        if (full && extent) {
          int64_t n = *extent + dim.hi_off - dim.lo_off + 1;
          if (n < *full && n > 0) {
            smaller = true;
            shape.push_back(MakeConst(buf->shape[d]->dtype, n));
            base.push_back(
                SimplifyExpr(AddNode::Make(dim.lo, MakeConst(dim.lo->dtype, dim.lo_off))));
            continue;
          }
        }
        shape.push_back(buf->shape[d]);
        base.push_back(nullptr);
      }
      if (!smaller) continue;
      Buffer nb = BufferNode::Make(buf->data, buf->dtype, shape, {}, buf->elem_offset, buf->name,
                                   buf->data_alignment, buf->offset_factor, buf->span);
      map[buf.get()] = {nb, base};
    }
    if (map.empty()) return s;
    return AccessShifter(map).VisitStmt(s);
  }

 private:
  std::unordered_map<const VarNode*, Ref<RangeNode>> thread_loops_;
};

PrimFunc CompactBufferAllocationFunc(PrimFunc f, IRModule, const PassContext&) {
  Stmt body = BufferCompactor().VisitStmt(f->body);
  return body == f->body ? f : f->WithBody(body);
}

}  // namespace

Pass CompactBufferAllocation() {
  return CreatePrimFuncPass(CompactBufferAllocationFunc, 0, "tir.CompactBufferAllocation");
}
TESSERA_REGISTER_PASS("tir.CompactBufferAllocation", CompactBufferAllocation);

}  // namespace transform
}  // namespace tessera
