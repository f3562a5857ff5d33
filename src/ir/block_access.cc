// Inference of a block's read and write regions from the buffer accesses in its body.
#include "tessera/ir/block_access.h"

#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "tessera/ir/buffer.h"
#include "tessera/ir/functor.h"
#include "tessera/ir/structural_equal.h"

namespace tessera {
namespace {

// An index bound as a symbolic part plus a constant: `sym + c` (sym null means 0), so bounds
// like `vi * 16` and `vi * 16 + 15` give the constant extent 16 without a simplifier.
struct Affine {
  Expr sym;
  int64_t c = 0;
};

bool SameSym(const Expr& a, const Expr& b) {
  if (!a || !b) return a == b;
  return a == b || StructuralEqual(a, b);
}

Expr ToExpr(const Affine& t, DataType dtype) {
  if (!t.sym) return MakeConst(dtype, t.c);
  if (t.c == 0) return t.sym;
  if (t.c > 0) return AddNode::Make(t.sym, MakeConst(dtype, t.c));
  return SubNode::Make(t.sym, MakeConst(dtype, -t.c));
}

Affine Plus(const Affine& a, const Affine& b) {
  if (!a.sym) return {b.sym, a.c + b.c};
  if (!b.sym) return {a.sym, a.c + b.c};
  return {AddNode::Make(a.sym, b.sym), a.c + b.c};
}

Affine Minus(const Affine& a, const Affine& b) {
  if (SameSym(a.sym, b.sym)) return {nullptr, a.c - b.c};
  if (!b.sym) return {a.sym, a.c - b.c};
  if (!a.sym) return {SubNode::Make(MakeConst(b.sym->dtype, int64_t{0}), b.sym), a.c - b.c};
  return {SubNode::Make(a.sym, b.sym), a.c - b.c};
}

Affine Times(const Affine& a, int64_t k) {
  if (!a.sym) return {nullptr, a.c * k};
  if (k == 0) return {nullptr, 0};
  Expr sym = k == 1 ? a.sym : MulNode::Make(a.sym, MakeConst(a.sym->dtype, k));
  return {sym, a.c * k};
}

int64_t FloorDivInt(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

struct Interval {
  Affine lo, hi;  // inclusive
  DataType dtype;
  bool joined = false;  // lo is the min and hi the max of the data-dependent `points`
  std::vector<Affine> points{};
};

// Whether `e` is a data-dependent index: built of buffer loads and constants only, with no
// variable whose range could order it against another index (`B[B[0]]`, not `B[i]`).
bool IsDataDependentPoint(const Affine& a) {
  if (!a.sym) return true;
  bool var = false;
  PostOrderVisit(a.sym, [&](const ObjectRef& n) { var = var || AsPtr<VarNode>(n) != nullptr; });
  return !var;
}

enum Kind { kRead = 0, kWrite = 1, kOpaque = 2 };

class AccessCollector : public StmtExprVisitor {
 public:
  using StmtExprVisitor::VisitExpr_;
  using StmtExprVisitor::VisitStmt_;

  // With `buffer_var_map` (TVM's get_block_access_region), only buffers whose data variable it
  // holds count (allocated ones too), a use of such a variable outside an access is an opaque
  // access of the whole buffer, and let-bound variables are replaced by their values.
  explicit AccessCollector(const BlockNode* block,
                           const BufferVarMap* buffer_var_map = nullptr)
      : buffer_var_map_(buffer_var_map) {
    for (const Buffer& b : block->alloc_buffers) local_.insert(b.get());
    for (const MatchBufferRegion& m : block->match_buffers) {
      matched_[m->buffer.get()] = m->source;
      matched_by_data_[m->buffer->data.get()] = m->buffer.get();
    }
    // The buffers the block declares it accesses, by data pointer: an opaque
    // tvm_access_ptr(type, data, offset, extent, rw_mask) to one of them accesses all of it.
    for (const BufferRegion& r : block->reads) declared_[r->buffer->data.get()] = r->buffer.get();
    for (const BufferRegion& r : block->writes) declared_[r->buffer->data.get()] = r->buffer.get();
  }

  std::vector<BufferRegion> Regions(Kind kind) const {
    const auto& order = orders_[kind];
    const auto& acc = accs_[kind];
    std::vector<BufferRegion> out;
    for (const BufferNode* b : order) {
      const auto& dims = acc.at(b);
      std::vector<Range> region;
      for (size_t d = 0; d < dims.size(); ++d) {
        const Expr& extent = b->shape[d];
        if (!dims[d]) {
          region.push_back(RangeNode::Make(MakeConst(extent->dtype, int64_t{0}), extent));
          continue;
        }
        DataType t = dims[d]->dtype;
        if (dims[d]->joined) {
          // As TVM writes such a union: [min(a, b), max(a, b) + 1).
          Expr lo = ToExpr(dims[d]->lo, t);
          Affine stop = dims[d]->hi;
          stop.c += 1;
          region.push_back(RangeNode::Make(lo, SubNode::Make(ToExpr(stop, t), lo)));
          continue;
        }
        Affine size = Minus(dims[d]->hi, dims[d]->lo);
        size.c += 1;
        region.push_back(RangeNode::Make(ToExpr(dims[d]->lo, t), ToExpr(size, t)));
      }
      out.push_back(BufferRegionNode::Make(GetRef(b), region));
    }
    return out;
  }

  void VisitExpr_(const BufferLoadNode* op) override {
    // As TVM's detector: the load itself, then the loads in its indices (`A[B[i]]` reads A, B).
    Access(op->buffer.get(), op->indices, kRead);
    StmtExprVisitor::VisitExpr_(op);
  }
  void VisitStmt_(const BufferStoreNode* op) override {
    StmtExprVisitor::VisitStmt_(op);
    Access(op->buffer.get(), op->indices, kWrite);
  }
  void VisitExpr_(const VarNode* op) override {
    if (!buffer_var_map_) return;
    if (const BufferNode* buffer = Lookup(op)) Whole(buffer, kOpaque);
  }
  void VisitStmt_(const LetStmtNode* op) override {
    if (!buffer_var_map_) return StmtExprVisitor::VisitStmt_(op);
    VisitExpr(op->value);
    substitute_[op->var.get()] = op->value;
    VisitStmt(op->body);
    substitute_.erase(op->var.get());
  }
  void VisitExpr_(const CallNode* op) override {
    bool access_ptr = op->is_op("tir.tvm_access_ptr") && op->args.size() == 5;
    auto* data = access_ptr ? AsPtr<VarNode>(op->args[1]) : nullptr;
    auto mask = access_ptr ? AsConstInt(op->args[4]) : std::nullopt;
    if (buffer_var_map_) {
      // As TVM: a read-and-write tvm_access_ptr of a known buffer is an opaque access, and its
      // data pointer is not an opaque use of its own.
      if (!data || !mask) return StmtExprVisitor::VisitExpr_(op);
      const BufferNode* buffer = Lookup(data);
      Kind kind = (*mask & 3) == 3 ? kOpaque : (*mask & 1) ? kRead : kWrite;
      if (buffer && (*mask & 3)) Whole(buffer, kind);
      return;
    }
    StmtExprVisitor::VisitExpr_(op);
    auto it = data ? declared_.find(data) : declared_.end();
    if (it == declared_.end() || !mask || local_.count(it->second)) return;
    const BufferNode* buffer = it->second;
    if (*mask & 1) Record(buffer, Dims(buffer->shape.size()), kRead);
    if (*mask & 2) Record(buffer, Dims(buffer->shape.size()), kWrite);
  }
  void VisitStmt_(const ForNode* op) override {
    VisitExpr(op->min);
    VisitExpr(op->extent);
    relaxed_[op->loop_var.get()] = RangeNode::Make(op->min, op->extent);
    VisitStmt(op->body);
    relaxed_.erase(op->loop_var.get());
  }
  void VisitStmt_(const DeclBufferNode* op) override {
    local_.insert(op->buffer.get());
    StmtExprVisitor::VisitStmt_(op);
  }
  void VisitStmt_(const BlockRealizeNode* op) override {
    // An inner block accesses what it declares, with its iterators replaced by their values.
    VisitExpr(op->predicate);
    for (const Expr& v : op->iter_values) VisitExpr(v);
    const BlockNode* inner = op->block.get();
    for (size_t i = 0; i < inner->iter_vars.size(); ++i) {
      substitute_[inner->iter_vars[i]->var.get()] = op->iter_values[i];
    }
    for (const BufferRegion& r : inner->reads) Region(r, kRead);
    for (const BufferRegion& r : inner->writes) Region(r, kWrite);
    for (size_t i = 0; i < inner->iter_vars.size(); ++i) {
      substitute_.erase(inner->iter_vars[i]->var.get());
    }
  }

 private:
  using Dims = std::vector<std::optional<Interval>>;

  // The whole of `buffer` (for a match_buffer: its source region).
  void Whole(const BufferNode* buffer, Kind kind) {
    auto m = matched_.find(buffer);
    if (m != matched_.end()) return Region(m->second, kind);
    if (Skipped(buffer)) return;
    Record(buffer, Dims(buffer->shape.size()), kind);
  }

  // The buffer (one of the map's, or a match_buffer of the block) whose data variable is `var`.
  const BufferNode* Lookup(const VarNode* var) const {
    auto m = matched_by_data_.find(var);
    if (m != matched_by_data_.end()) return m->second;
    auto it = buffer_var_map_->find(var);
    return it == buffer_var_map_->end() ? nullptr : it->second.get();
  }

  bool Skipped(const BufferNode* buffer) const {
    if (buffer_var_map_) return !buffer_var_map_->count(buffer->data.get());
    return local_.count(buffer) != 0;
  }

  void Region(const BufferRegion& r, Kind kind) {
    auto m = matched_.find(r->buffer.get());
    if (m != matched_.end() && r->region.size() <= m->second->region.size()) {
      // A region of one of the block's match_buffers (an inner block's declared access) is
      // the same region of the source: the trailing dimensions shifted by the source's mins.
      const BufferRegion& source = m->second;
      size_t offset = source->region.size() - r->region.size();
      std::vector<Range> region(source->region.begin(), source->region.begin() + offset);
      for (size_t k = 0; k < r->region.size(); ++k) {
        const Range& s = source->region[offset + k];
        region.push_back(RangeNode::Make(AddNode::Make(s->min, r->region[k]->min),
                                         r->region[k]->extent));
      }
      Region(BufferRegionNode::Make(source->buffer, std::move(region)), kind);
      return;
    }
    if (Skipped(r->buffer.get())) return;
    Dims dims;
    for (const Range& range : r->region) {
      auto lo = Bound(range->min);
      Expr last = SubNode::Make(AddNode::Make(range->min, range->extent),
                                MakeConst(range->min->dtype, int64_t{1}));
      auto hi = Bound(last);
      if (lo && hi) {
        dims.push_back(Interval{lo->lo, hi->hi, range->min->dtype});
      } else {
        dims.push_back(std::nullopt);
      }
    }
    Record(r->buffer.get(), std::move(dims), kind);
  }

  void Access(const BufferNode* buffer, const std::vector<Expr>& indices, Kind kind) {
    auto m = matched_.find(buffer);
    if (m != matched_.end() && !buffer_var_map_) {
      Region(m->second, kind);
      return;
    }
    if (m == matched_.end() && Skipped(buffer)) return;
    Dims dims;
    for (const Expr& index : indices) {
      if (auto* ramp = AsPtr<RampNode>(index)) {
        // A vector access covers base .. base + (lanes - 1) * stride.
        Expr last = AddNode::Make(
            ramp->base,
            MulNode::Make(ramp->stride, RampLastLane(ramp)));
        auto lo = Bound(ramp->base), hi = Bound(last);
        if (lo && hi && IsConstInt(ramp->stride, 1)) {
          dims.push_back(Interval{lo->lo, hi->hi, ramp->base->dtype});
        } else {
          dims.push_back(std::nullopt);
        }
        continue;
      }
      if (index->dtype.is_vector()) {
        dims.push_back(std::nullopt);
        continue;
      }
      dims.push_back(Bound(index));
    }
    if (m != matched_.end()) {
      // As TVM: the accessed part of a match_buffer, moved into its source.
      std::vector<Range> region;
      for (size_t d = 0; d < dims.size() && d < buffer->shape.size(); ++d) {
        const Expr& extent = buffer->shape[d];
        if (!dims[d]) {
          region.push_back(RangeNode::Make(MakeConst(extent->dtype, int64_t{0}), extent));
          continue;
        }
        DataType t = dims[d]->dtype;
        Affine size = Minus(dims[d]->hi, dims[d]->lo);
        size.c += 1;
        region.push_back(RangeNode::Make(ToExpr(dims[d]->lo, t), ToExpr(size, t)));
      }
      Region(BufferRegionNode::Make(GetRef(buffer), std::move(region)), kind);
      return;
    }
    Record(buffer, std::move(dims), kind);
  }

  void Record(const BufferNode* buffer, Dims dims, Kind kind) {
    auto& acc = accs_[kind];
    auto& order = orders_[kind];
    auto it = acc.find(buffer);
    if (it == acc.end()) {
      order.push_back(buffer);
      acc.emplace(buffer, std::move(dims));
      return;
    }
    Dims& old = it->second;
    for (size_t d = 0; d < old.size() && d < dims.size(); ++d) {
      if (!old[d] || !dims[d]) {
        old[d].reset();
        continue;
      }
      if (!SameSym(old[d]->lo.sym, dims[d]->lo.sym) || !SameSym(old[d]->hi.sym, dims[d]->hi.sym)) {
        // Two data-dependent points (`B[B[0]]` and `B[0]`) cannot be ordered: as TVM's region
        // detection, the union is [min, max]. Anything else becomes the whole dimension.
        Interval& a = *old[d];
        const Interval& b = *dims[d];
        if ((a.joined || IsPoint(a)) && IsPoint(b) && IsDataDependentPoint(a.lo) &&
            IsDataDependentPoint(b.lo)) {
          if (!a.joined) a.points = {a.lo};
          bool known = false;
          for (const Affine& p : a.points) known = known || (p.c == b.lo.c && SameSym(p.sym, b.lo.sym));
          if (known) continue;
          DataType t = a.dtype;
          Expr lo = MinNode::Make(ToExpr(a.lo, t), ToExpr(b.lo, t));
          Expr hi = MaxNode::Make(ToExpr(a.hi, t), ToExpr(b.hi, t));
          std::vector<Affine> points = std::move(a.points);
          points.push_back(b.lo);
          old[d] = Interval{{lo, 0}, {hi, 0}, t, true, std::move(points)};
          continue;
        }
        old[d].reset();
        continue;
      }
      old[d]->lo.c = std::min(old[d]->lo.c, dims[d]->lo.c);
      old[d]->hi.c = std::max(old[d]->hi.c, dims[d]->hi.c);
    }
  }

  // Bounds of an index over the relaxed (inner loop) variables; none when not affine enough.
  std::optional<Interval> Bound(const Expr& e) {
    DataType t = e->dtype;
    if (auto c = AsConstInt(e)) return Interval{{nullptr, *c}, {nullptr, *c}, t};
    if (auto* v = AsPtr<VarNode>(e)) {
      auto sub = substitute_.find(v);
      if (sub != substitute_.end()) return Bound(sub->second);
      auto r = relaxed_.find(v);
      if (r == relaxed_.end()) return Interval{{e, 0}, {e, 0}, t};
      auto lo = Bound(r->second->min);
      Expr last =
          SubNode::Make(AddNode::Make(r->second->min, r->second->extent), MakeConst(t, int64_t{1}));
      auto hi = Bound(last);
      if (!lo || !hi) return std::nullopt;
      return Interval{lo->lo, hi->hi, t};
    }
    if (auto* add = AsPtr<AddNode>(e)) {
      auto a = Bound(add->a), b = Bound(add->b);
      if (!a || !b) return std::nullopt;
      return Interval{Plus(a->lo, b->lo), Plus(a->hi, b->hi), t};
    }
    if (auto* sub = AsPtr<SubNode>(e)) {
      auto a = Bound(sub->a), b = Bound(sub->b);
      if (!a || !b) return std::nullopt;
      return Interval{Minus(a->lo, b->hi), Minus(a->hi, b->lo), t};
    }
    if (auto* mul = AsPtr<MulNode>(e)) {
      Expr x = mul->a;
      auto k = AsConstInt(mul->b);
      if (!k) {
        k = AsConstInt(mul->a);
        x = mul->b;
      }
      if (!k) return Point(e);
      auto a = Bound(x);
      if (!a) return std::nullopt;
      if (*k >= 0) return Interval{Times(a->lo, *k), Times(a->hi, *k), t};
      return Interval{Times(a->hi, *k), Times(a->lo, *k), t};
    }
    if (auto* div = AsPtr<FloorDivNode>(e)) {
      auto k = AsConstInt(div->b);
      auto a = Bound(div->a);
      if (!k || *k <= 0 || !a) return Point(e);
      if (!a->lo.sym && !a->hi.sym) {
        return Interval{
            {nullptr, FloorDivInt(a->lo.c, *k)}, {nullptr, FloorDivInt(a->hi.c, *k)}, t};
      }
      if (IsPoint(*a)) return PointOf(e, FloorDivNode::Make(ToExpr(a->lo, t), div->b));
      auto lo = FloorDivNode::Make(ToExpr(a->lo, t), div->b);
      auto hi = FloorDivNode::Make(ToExpr(a->hi, t), div->b);
      return Interval{{lo, 0}, {hi, 0}, t};
    }
    if (auto* mod = AsPtr<FloorModNode>(e)) {
      auto k = AsConstInt(mod->b);
      auto a = Bound(mod->a);
      if (!k || *k <= 0 || !a) return Point(e);
      if (IsPoint(*a)) return PointOf(e, FloorModNode::Make(ToExpr(a->lo, t), mod->b));
      // Constant ends with one quotient: the remainders run from one end's to the other's.
      if (!a->lo.sym && !a->hi.sym && FloorDivInt(a->lo.c, *k) == FloorDivInt(a->hi.c, *k)) {
        int64_t base = FloorDivInt(a->lo.c, *k) * *k;
        return Interval{{nullptr, a->lo.c - base}, {nullptr, a->hi.c - base}, t};
      }
      return Interval{{nullptr, 0}, {nullptr, *k - 1}, t};
    }
    return Point(e);
  }

  // The single value of `e` (a division or modulo of a single value): `e` itself when it reads
  // no relaxed or substituted variable, else `rebuilt`, the same operation on the operand's value
  // (an inner block's iterator bound to the outer block's one: `v_i_1 * 4 // 3` is
  // `v_i * 4 // 3` there).
  std::optional<Interval> PointOf(const Expr& e, const Expr& rebuilt) {
    const Expr& p = Point(e) ? e : rebuilt;
    return Interval{{p, 0}, {p, 0}, e->dtype};
  }

  static bool IsPoint(const Interval& iv) {
    return iv.lo.c == iv.hi.c && SameSym(iv.lo.sym, iv.hi.sym);
  }

  // An expression that does not involve relaxed variables is its own bound. As in TVM, an
  // index computed in floating point (an integer cast of a float) has no bound: the region is
  // the whole dimension.
  std::optional<Interval> Point(const Expr& e) {
    bool relaxed = false;
    PostOrderVisit(e, [&](const ObjectRef& n) {
      if (auto* v = AsPtr<VarNode>(n))
        relaxed = relaxed || relaxed_.count(v) || substitute_.count(v);
      if (auto* cast = AsPtr<CastNode>(n))
        relaxed = relaxed || !cast->value->dtype.is_int_or_bool();
    });
    if (relaxed) return std::nullopt;
    return Interval{{e, 0}, {e, 0}, e->dtype};
  }

  std::unordered_set<const BufferNode*> local_;
  std::unordered_map<const VarNode*, const BufferNode*> declared_;
  std::unordered_map<const BufferNode*, BufferRegion> matched_;
  std::unordered_map<const VarNode*, const BufferNode*> matched_by_data_;
  std::unordered_map<const VarNode*, Range> relaxed_;
  std::unordered_map<const VarNode*, Expr> substitute_;
  const BufferVarMap* buffer_var_map_;
  std::vector<const BufferNode*> orders_[3];
  std::unordered_map<const BufferNode*, Dims> accs_[3];
};

}  // namespace

std::pair<std::vector<BufferRegion>, std::vector<BufferRegion>> InferBlockAccessRegions(
    const BlockNode* block) {
  AccessCollector collector(block);
  if (block->init) collector.VisitStmt(block->init);
  collector.VisitStmt(block->body);
  std::vector<BufferRegion> reads = collector.Regions(kRead);
  std::vector<BufferRegion> writes = collector.Regions(kWrite);
  if (block->init) {
    // As in TVM: a reduction block (one with an init statement) does not list the buffers it
    // writes among its reads, although its update reads them back.
    std::unordered_set<const BufferNode*> written;
    for (const BufferRegion& w : writes) written.insert(w->buffer.get());
    std::vector<BufferRegion> kept;
    for (const BufferRegion& r : reads) {
      if (!written.count(r->buffer.get())) kept.push_back(r);
    }
    reads = std::move(kept);
  }
  return {std::move(reads), std::move(writes)};
}

namespace {

std::vector<BufferRegion> Without(std::vector<BufferRegion> regions,
                                  const std::unordered_set<const BufferNode*>& excluded) {
  std::vector<BufferRegion> kept;
  for (BufferRegion& r : regions) {
    if (!excluded.count(r->buffer.get())) kept.push_back(std::move(r));
  }
  return kept;
}

}  // namespace

BlockAccessRegions GetBlockAccessRegion(const BlockNode* block, const BufferVarMap& buffer_var_map,
                                        bool opaque_as_read_write) {
  AccessCollector collector(block, &buffer_var_map);
  if (block->init) collector.VisitStmt(block->init);
  collector.VisitStmt(block->body);
  BlockAccessRegions out{collector.Regions(kRead), collector.Regions(kWrite),
                         collector.Regions(kOpaque)};
  std::unordered_set<const BufferNode*> excluded;
  if (opaque_as_read_write) {
    for (const BufferRegion& r : out.opaques) excluded.insert(r->buffer.get());
    out.writes = Without(std::move(out.writes), excluded);
  }
  // A reduction block does not list what it writes among its reads.
  if (block->init) {
    for (const BufferRegion& w : out.writes) excluded.insert(w->buffer.get());
  }
  out.reads = Without(std::move(out.reads), excluded);
  if (opaque_as_read_write) {
    out.reads.insert(out.reads.end(), out.opaques.begin(), out.opaques.end());
    out.writes.insert(out.writes.end(), out.opaques.begin(), out.opaques.end());
    out.opaques.clear();
  }
  return out;
}

}  // namespace tessera
