// Helpers shared by the schedule primitives: errors and expressions over loop domains (intervals
// and regions: region.cc).
#include "utils.h"

#include "tessera/arith/vscale.h"

namespace tessera {
namespace schedule {

void Fail(const std::string& fast, const std::string& detail, std::vector<ObjectRef> locs) {
  throw ScheduleError(fast, detail.empty() ? fast : detail, std::move(locs));
}

// ---- expressions ----

Expr Simplify(const Expr& e) {
  arith::Analyzer ana;
  return ana.Simplify(e);
}

void BindLoops(arith::Analyzer* ana, const StmtSRefNode* sref, bool inclusive) {
  for (const StmtSRefNode* p = inclusive ? sref : sref->parent; p; p = p->parent) {
    if (auto* loop = p->loop()) ana->Bind(loop->loop_var, RangeNode::Make(loop->min, loop->extent));
  }
}

namespace {
class BindingSimplifier : public StmtMutator {
 public:
  BindingSimplifier(arith::Analyzer* ana, const VarMap& unit_vars, Expr predicate,
                    bool simplify_predicates, const std::vector<Var>& iter_vars)
      : ana_(ana),
        unit_vars_(unit_vars),
        predicate_(std::move(predicate)),
        simplify_predicates_(simplify_predicates) {
    for (const Var& v : iter_vars) iter_vars_.insert(v.get());
  }
  Stmt VisitStmt_(const ForNode* op) override {
    ana_->Bind(op->loop_var, RangeNode::Make(op->min, op->extent));
    return StmtMutator::VisitStmt_(op);
  }
  Stmt VisitStmt_(const BlockRealizeNode* op) override {
    std::vector<Expr> values;
    for (const Expr& v : op->iter_values) {
      Expr value = Substitute(v, unit_vars_);
      values.push_back(Scalable(value) ? value : IterScaleForm(ana_->Simplify(value)));
    }
    Expr predicate = Substitute(op->predicate, unit_vars_);
    if (predicate_ && Scalable(predicate_)) {
      predicate = IsConstInt(predicate, 1) ? predicate_ : AndE(predicate, predicate_);
    } else {
      if (predicate_) predicate = AndE(predicate, predicate_);
      if (simplify_predicates_) predicate = ana_->Simplify(predicate);
    }
    return BlockRealizeNode::Make(values, predicate, op->block, op->span);
  }

 private:
  // As TVM: a binding over loops of T.vscale() extents is not an affine map it can simplify,
  // so it stays as the split wrote it (`i_0 * (T.vscale() * 4) + i_1`).
  static bool Scalable(const Expr& e) { return arith::ContainsVScale(e); }

  arith::Analyzer* ana_;
  const VarMap& unit_vars_;
  Expr predicate_;
  bool simplify_predicates_;
  std::unordered_set<const VarNode*> iter_vars_;

  // The terms of a sum `v * x * c` (v an iterator, x free of iterators, c a constant) as
  // `v * (x * c)`: TVM writes an iterator times its scale, the scale one expression.
  Expr IterScaleForm(const Expr& e) const {
    if (iter_vars_.empty()) return e;
    if (const auto* add = AsPtr<AddNode>(e)) {
      Expr a = IterScaleForm(add->a), b = IterScaleForm(add->b);
      if (a == add->a && b == add->b) return e;
      return AddNode::Make(a, b, add->span);
    }
    const auto* outer = AsPtr<MulNode>(e);
    if (outer == nullptr || !IsInstance<IntImmNode>(outer->b.get())) return e;
    const auto* inner = AsPtr<MulNode>(outer->a);
    if (inner == nullptr) return e;
    const auto* v = AsPtr<VarNode>(inner->a);
    if (v == nullptr || !iter_vars_.count(v) || UsesVars(inner->b, iter_vars_)) return e;
    return MulNode::Make(inner->a, MulNode::Make(inner->b, outer->b, outer->span), outer->span);
  }
};
}  // namespace

Stmt SimplifyBindings(const Stmt& s, arith::Analyzer* ana, const VarMap& unit_vars,
                      const Expr& extra_predicate, bool simplify_predicates,
                      const std::vector<Var>& iter_vars) {
  return BindingSimplifier(ana, unit_vars, extra_predicate, simplify_predicates, iter_vars)
      .VisitStmt(s);
}

bool UsesVars(const Expr& e, const std::unordered_set<const VarNode*>& vars) {
  return UsesVar(e, [&](const VarNode* v) { return vars.count(v) != 0; });
}

Range Substitute(const Range& r, const VarMap& vmap) {
  Expr m = Substitute(r->min, vmap), e = Substitute(r->extent, vmap);
  if (m == r->min && e == r->extent) return r;
  return RangeNode::Make(m, e, r->span);
}
BufferRegion Substitute(const BufferRegion& r, const VarMap& vmap) {
  std::vector<Range> region;
  bool changed = false;
  for (const Range& range : r->region) {
    region.push_back(Substitute(range, vmap));
    changed = changed || region.back() != range;
  }
  return changed ? BufferRegionNode::Make(r->buffer, region, r->span) : r;
}

}  // namespace schedule
}  // namespace tessera
