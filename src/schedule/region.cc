// Intervals and regions over loop domains, shared by the schedule primitives: bounds of an
// expression, regions relaxed over loops, unions of regions, the loop domains between two srefs.
#include <algorithm>
#include <functional>

#include "tessera/ir/block_access.h"
#include "tessera/ir/structural_equal.h"
#include "utils.h"

namespace tessera {
namespace schedule {

std::optional<std::pair<Expr, Expr>> EvalBounds(const Expr& e, const DomMap& dom,
                                                arith::Analyzer* facts) {
  using Bounds = std::optional<std::pair<Expr, Expr>>;
  std::function<Bounds(const Expr&)> eval = [&](const Expr& x) -> Bounds {
    if (AsConstInt(x)) return std::make_pair(x, x);
    if (auto* v = AsPtr<VarNode>(x)) {
      auto it = dom.find(v);
      if (it == dom.end()) return std::make_pair(x, x);
      const Range& r = it->second;
      Expr hi = SubE(AddE(r->min, r->extent), IntConst(r->extent->dtype, 1));
      // A range over other relaxed variables (an inner loop whose extent depends on an outer
      // one) is relaxed in turn.
      Bounds lo_bounds = eval(r->min), hi_bounds = eval(hi);
      if (!lo_bounds || !hi_bounds) return std::nullopt;
      return std::make_pair(CastTo(x->dtype, lo_bounds->first),
                            CastTo(x->dtype, hi_bounds->second));
    }
    if (auto* add = AsPtr<AddNode>(x)) {
      Bounds a = eval(add->a), b = eval(add->b);
      if (!a || !b) return std::nullopt;
      return std::make_pair(AddE(a->first, b->first), AddE(a->second, b->second));
    }
    if (auto* sub = AsPtr<SubNode>(x)) {
      Bounds a = eval(sub->a), b = eval(sub->b);
      if (!a || !b) return std::nullopt;
      return std::make_pair(SubE(a->first, b->second), SubE(a->second, b->first));
    }
    if (auto* mul = AsPtr<MulNode>(x)) {
      Expr var_side = mul->a;
      auto c = AsConstInt(mul->b);
      if (!c) {
        c = AsConstInt(mul->a);
        var_side = mul->b;
      }
      if (!c) {
        // Both symbolic: fine when neither side varies.
        Bounds a = eval(mul->a), b = eval(mul->b);
        if (a && b && a->first == a->second && b->first == b->second) return std::make_pair(x, x);
        if (a && b && StructuralEqual(a->first, a->second) &&
            StructuralEqual(b->first, b->second)) {
          return std::make_pair(MulE(a->first, b->first), MulE(a->first, b->first));
        }
        // A varying side times an invariant factor known (from `facts`) not to be negative,
        // such as a shape variable: monotonic in the varying side.
        if (a && b && facts) {
          bool a_point = StructuralEqual(a->first, a->second);
          bool b_point = StructuralEqual(b->first, b->second);
          if (a_point != b_point) {
            const auto& point = a_point ? *a : *b;
            const auto& range = a_point ? *b : *a;
            if (facts->CanProveGreaterEqual(point.first, 0)) {
              return std::make_pair(MulE(range.first, point.first),
                                    MulE(range.second, point.first));
            }
          }
        }
        return std::nullopt;
      }
      Bounds a = eval(var_side);
      if (!a) return std::nullopt;
      Expr k = IntConst(x->dtype, *c);
      if (*c >= 0) return std::make_pair(MulE(a->first, k), MulE(a->second, k));
      return std::make_pair(MulE(a->second, k), MulE(a->first, k));
    }
    if (auto* div = AsPtr<FloorDivNode>(x)) {
      auto c = AsConstInt(div->b);
      Bounds a = eval(div->a);
      if (!c || *c <= 0 || !a) return std::nullopt;
      return std::make_pair(FloorDivE(a->first, div->b), FloorDivE(a->second, div->b));
    }
    if (auto* mod = AsPtr<FloorModNode>(x)) {
      auto c = AsConstInt(mod->b);
      Bounds a = eval(mod->a);
      if (!c || *c <= 0 || !a) return std::nullopt;
      arith::Analyzer ana;
      // Within one period the modulo is monotonic.
      if (ana.CanProveEqual(FloorDivE(a->first, mod->b), FloorDivE(a->second, mod->b))) {
        Expr lo = FloorModE(a->first, mod->b);
        return std::make_pair(lo, AddE(lo, SubE(a->second, a->first)));
      }
      return std::make_pair(IntConst(x->dtype, 0), IntConst(x->dtype, *c - 1));
    }
    if (auto* mn = AsPtr<MinNode>(x)) {
      Bounds a = eval(mn->a), b = eval(mn->b);
      if (!a || !b) return std::nullopt;
      return std::make_pair(Expr(MinNode::Make(a->first, b->first)),
                            Expr(MinNode::Make(a->second, b->second)));
    }
    if (auto* mx = AsPtr<MaxNode>(x)) {
      Bounds a = eval(mx->a), b = eval(mx->b);
      if (!a || !b) return std::nullopt;
      return std::make_pair(Expr(MaxNode::Make(a->first, b->first)),
                            Expr(MaxNode::Make(a->second, b->second)));
    }
    // Anything not using a relaxed variable is a point.
    if (!UsesVar(x, [&](const VarNode* v) { return dom.count(v) != 0; }))
      return std::make_pair(x, x);
    return std::nullopt;
  };
  Bounds b = eval(e);
  if (!b) return std::nullopt;
  return std::make_pair(Simplify(b->first), Simplify(b->second));
}

BufferRegion RelaxRegion(const BufferRegion& region, const DomMap& dom) {
  std::vector<Range> out;
  bool changed = false;
  for (size_t d = 0; d < region->region.size(); ++d) {
    const Range& r = region->region[d];
    Expr hi_expr = SubE(AddE(r->min, r->extent), IntConst(r->extent->dtype, 1));
    auto lo = EvalBounds(r->min, dom);
    auto hi = EvalBounds(hi_expr, dom);
    if (!lo || !hi) {
      const Expr& extent = region->buffer->shape[d];
      out.push_back(RangeNode::Make(IntConst(extent->dtype, 0), extent));
      changed = true;
      continue;
    }
    // Accesses stay inside the buffer (predicates guard the others): clip constant bounds.
    Expr lo_e = lo->first, hi_e = hi->second;
    auto lo_c = AsConstInt(lo_e), hi_c = AsConstInt(hi_e);
    auto size = AsConstInt(region->buffer->shape[d]);
    if (lo_c && *lo_c < 0) lo_e = IntConst(lo_e->dtype, 0);
    if (hi_c && size && *hi_c > *size - 1) hi_e = IntConst(hi_e->dtype, *size - 1);
    Expr extent = Simplify(AddE(SubE(hi_e, lo_e), IntConst(r->extent->dtype, 1)));
    Range nr = RangeNode::Make(lo_e, extent);
    changed = changed || !StructuralEqual(nr, r);
    out.push_back(StructuralEqual(nr, r) ? r : nr);
  }
  return changed ? BufferRegionNode::Make(region->buffer, out, region->span) : region;
}

BufferRegion UnionRegion(const BufferRegion& a, const BufferRegion& b) {
  arith::Analyzer ana;
  std::vector<Range> out;
  for (size_t d = 0; d < a->region.size(); ++d) {
    const Range &ra = a->region[d], &rb = b->region[d];
    Expr a_hi = AddE(ra->min, ra->extent), b_hi = AddE(rb->min, rb->extent);
    Expr lo, hi;
    if (ana.CanProve(LENode::Make(CastTo(rb->min->dtype, ra->min), rb->min))) {
      lo = ra->min;
    } else if (ana.CanProve(LENode::Make(CastTo(ra->min->dtype, rb->min), ra->min))) {
      lo = rb->min;
    } else {
      lo = MinNode::Make(ra->min, CastTo(ra->min->dtype, rb->min));
    }
    Expr ah = Simplify(a_hi), bh = Simplify(b_hi);
    if (ana.CanProve(GENode::Make(ah, CastTo(ah->dtype, bh)))) {
      hi = ah;
    } else if (ana.CanProve(GENode::Make(bh, CastTo(bh->dtype, ah)))) {
      hi = bh;
    } else {
      hi = MaxNode::Make(ah, CastTo(ah->dtype, bh));
    }
    out.push_back(RangeNode::Make(lo, Simplify(SubE(hi, lo))));
  }
  return BufferRegionNode::Make(a->buffer, out, a->span);
}

BufferRegion RegionInLoops(const ScheduleState& state, const StmtSRefNode* block_sref,
                           const BufferRegion& region) {
  const BlockNode* block = block_sref->block();
  BlockRealize realize = GetBlockRealize(state, block_sref);
  VarMap bindings;
  for (size_t i = 0; i < block->iter_vars.size(); ++i) {
    bindings[block->iter_vars[i]->var.get()] = realize->iter_values[i];
  }
  return Substitute(region, bindings);
}

DomMap LoopDomainsBetween(const StmtSRefNode* top, const StmtSRefNode* sref) {
  DomMap dom;
  for (const StmtSRefNode* p = sref->parent; p && p != top; p = p->parent) {
    if (auto* loop = p->loop())
      dom[loop->loop_var.get()] = RangeNode::Make(loop->min, loop->extent);
  }
  return dom;
}

int StorageRank(const std::string& scope) {
  if (scope.empty() || scope == "global") return 0;
  if (scope == "shared" || scope == "shared.dyn") return 1;
  if (scope == "warp") return 2;
  return 3;
}

DomMap SharedThreadDomains(const StmtSRefNode* loop, const std::string& scope) {
  DomMap dom;
  int rank = StorageRank(scope);
  for (const StmtSRefNode* p = loop; p; p = p->parent) {
    const ForNode* f = p->loop();
    if (!f || f->for_kind != ForKind::kThreadBinding || !f->thread_binding) continue;
    const std::string& tag = f->thread_binding->thread_tag;
    // As TVM's thread scopes: virtual threads rank with threadIdx; warp memory is shared by
    // the threads of threadIdx.x only.
    bool vthread = tag.rfind("vthread", 0) == 0 || tag == "cthread";
    int thread_rank = tag.rfind("blockIdx.", 0) == 0               ? 0
                      : tag.rfind("threadIdx.", 0) == 0 || vthread ? 1
                                                                   : -1;
    if (rank == 2) {
      if (tag == "threadIdx.x") dom[f->loop_var.get()] = RangeNode::Make(f->min, f->extent);
      continue;
    }
    if (thread_rank >= 0 && rank <= thread_rank)
      dom[f->loop_var.get()] = RangeNode::Make(f->min, f->extent);
  }
  return dom;
}

}  // namespace schedule
}  // namespace tessera
