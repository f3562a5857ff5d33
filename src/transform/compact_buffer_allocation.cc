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
  /*! \brief `shared`: the buffers are one per thread block (relaxed over threadIdx loops);
   *  else one per thread (local, fragments: not relaxed over any thread-bound loop). Neither is
   *  relaxed over blockIdx loops. */
  RegionCollector(const std::unordered_set<const BufferNode*>& buffers, bool shared,
                  std::unordered_map<const VarNode*, Ref<RangeNode>> outer = {})
      : buffers_(buffers), shared_(shared), loops_(std::move(outer)) {}
  using StmtExprVisitor::VisitExpr_;
  using StmtExprVisitor::VisitStmt_;

  void VisitStmt_(const ForNode* op) override {
    bool fixed = false;
    if (op->for_kind == ForKind::kThreadBinding && op->thread_binding) {
      const std::string& tag = op->thread_binding->thread_tag;
      fixed = tag.rfind("blockIdx.", 0) == 0 || (!shared_ && tag.rfind("threadIdx.", 0) == 0);
    }
    // (A loop of one iteration is relaxed exactly.)
    if (!fixed || IsConstInt(op->extent, 1)) loops_[op->loop_var.get()] = RangeNode::Make(op->min, op->extent);
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
    // A match buffer's view covers its source region (tir.LowerMatchBuffer computes the view's
    // offset and strides from the compacted buffer afterwards).
    for (const MatchBufferRegion& m : op->match_buffers) {
      std::vector<Expr> mins, extents;
      for (const Range& range : m->source->region) {
        mins.push_back(range->min);
        extents.push_back(range->extent);
      }
      Touch(m->source->buffer.get(), mins, extents);
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

class BufferCompactor : public StmtMutator {
 public:
  using StmtMutator::VisitStmt_;

  Stmt VisitStmt_(const ForNode* op) override {
    bool thread = op->for_kind == ForKind::kThreadBinding && op->thread_binding &&
                  op->thread_binding->thread_tag.rfind("threadIdx.", 0) == 0;
    if (thread) thread_loops_[op->loop_var.get()] = RangeNode::Make(op->min, op->extent);
    // A loop of one iteration outside the block is its min in every access (relaxed exactly),
    // so that accesses simplified with it and without it compare.
    const bool unit = IsConstInt(op->extent, 1);
    if (unit) unit_loops_[op->loop_var.get()] = RangeNode::Make(op->min, op->extent);
    Stmt s = StmtMutator::VisitStmt_(op);
    if (thread) thread_loops_.erase(op->loop_var.get());
    if (unit) unit_loops_.erase(op->loop_var.get());
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
    std::unordered_map<const VarNode*, Ref<RangeNode>> shared_outer = thread_loops_;
    shared_outer.insert(unit_loops_.begin(), unit_loops_.end());
    RegionCollector collect(owned, false, unit_loops_), collect_shared(shared, true, shared_outer);
    for (RegionCollector* c : {&collect, &collect_shared}) {
      c->VisitStmt(b->body);
      if (b->init) c->VisitStmt(b->init);
    }
    for (auto& [buf, dims] : collect_shared.dims) collect.dims[buf] = std::move(dims);
    std::unordered_map<const BufferNode*, std::vector<DimAlign>> aligns = CollectDimAligns(b->body);
    std::unordered_map<const BufferNode*, AccessShifter::Compacted> map;
    for (const Buffer& buf : b->alloc_buffers) {
      auto it = collect.dims.find(buf.get());
      auto align = aligns.find(buf.get());
      if (it == collect.dims.end()) {
        if (align != aligns.end() && buf->strides.empty()) {
          std::vector<Expr> strides = AlignedStrides(buf->shape, align->second);
          if (!strides.empty()) {
            map[buf.get()] = {BufferNode::Make(buf->data, buf->dtype, buf->shape, strides,
                                               buf->elem_offset, buf->name, buf->data_alignment,
                                               buf->offset_factor, buf->span),
                              std::vector<Expr>(buf->shape.size())};
          }
        }
        continue;
      }
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
      std::vector<Expr> strides;
      if (align != aligns.end()) strides = AlignedStrides(shape, align->second);
      if (!smaller && strides.empty()) continue;
      Buffer nb = BufferNode::Make(buf->data, buf->dtype, shape, strides, buf->elem_offset,
                                   buf->name, buf->data_alignment, buf->offset_factor, buf->span);
      map[buf.get()] = {nb, base};
    }
    if (map.empty()) return s;
    VarMap units;
    for (const auto& [var, range] : unit_loops_) units[var] = range->min;
    return AccessShifter(map, std::move(units)).VisitStmt(s);
  }

 private:
  std::unordered_map<const VarNode*, Ref<RangeNode>> thread_loops_;
  std::unordered_map<const VarNode*, Ref<RangeNode>> unit_loops_;
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
