// Analyzer: variable bindings and the proofs built on bounds, divisibility and simplification.
#include "tessera/arith/analyzer.h"
#include "tessera/arith/vscale.h"

#include <cstdio>

#include "tessera/ir/functor.h"
#include "tessera/ir/stmt.h"

namespace tessera {
namespace arith {

void Analyzer::Bind(const Var& var, const Ref<RangeNode>& range) {
  ConstIntBound lo = GetConstIntBound(range->min);
  ConstIntBound ext = GetConstIntBound(range->extent);
  ConstIntBound b{lo.min_value, ConstIntBound::kPosInf};
  if (lo.max_value != ConstIntBound::kPosInf && ext.max_value != ConstIntBound::kPosInf) {
    b.max_value = lo.max_value + ext.max_value - 1;
  }
  ModularSet m = ModularSet::Everything();
  if (IsConstInt(range->extent, 1)) m = GetModularSet(range->min);
  vars_[var.get()] = VarInfo{var, b, m};
}

void Analyzer::Bind(const Var& var, const Expr& value) {
  ConstIntBound b = GetConstIntBound(value);
  ModularSet m = GetModularSet(value);
  vars_[var.get()] = VarInfo{var, b, m};
}

void Analyzer::Bind(const Var& var, ConstIntBound bound) {
  vars_[var.get()] = VarInfo{var, bound, ModularSet::Everything()};
}

void Analyzer::Unbind(const Var& var) { vars_.erase(var.get()); }

const ConstIntBound* Analyzer::VarBound(const VarNode* var) const {
  auto it = vars_.find(var);
  return it == vars_.end() ? nullptr : &it->second.bound;
}

const ModularSet* Analyzer::VarModular(const VarNode* var) const {
  auto it = vars_.find(var);
  return it == vars_.end() ? nullptr : &it->second.modular;
}

VScaleContext& CurrentVScaleContext() {
  static VScaleContext context;
  return context;
}

bool ContainsVScale(const Expr& e) {
  bool found = false;
  PostOrderVisit(e, [&](const ObjectRef& n) {
    auto* call = AsPtr<CallNode>(n);
    found = found || (call && call->args.empty() && call->is_op("tir.vscale"));
  });
  return found;
}

namespace {

/*! \brief `e` with every `T.vscale()` replaced by the constant `value`. */
class VScaleSubstituter : public ExprMutator {
 public:
  explicit VScaleSubstituter(int64_t value) : value_(value) {}
  Expr VisitExpr_(const CallNode* op) override {
    if (op->args.empty() && op->is_op("tir.vscale")) return MakeConst(op->dtype, value_);
    return ExprMutator::VisitExpr_(op);
  }

 private:
  int64_t value_;
};

}  // namespace

bool Analyzer::CanProve(const Expr& cond) {
  Expr s = Simplify(cond);
  if (auto c = AsConstInt(s)) return *c != 0;
  if (auto* a = AsPtr<AndNode>(s)) return CanProve(a->a) && CanProve(a->b);
  if (auto* o = AsPtr<OrNode>(s)) return CanProve(o->a) || CanProve(o->b);
  if (!ContainsVScale(s)) return false;
  // As TVM: on a target with scalable vectors, a condition on vscale holds when it holds for
  // every value vscale can take there.
  const VScaleContext& context = CurrentVScaleContext();
  if (context.values.empty()) {
    std::fprintf(stderr,
                 "Warning: a comparison over T.vscale() was not checked against the possible "
                 "vscale values: they are known only for a VLA target (SVE), and the target "
                 "is %s\n",
                 context.target.c_str());
    return false;
  }
  for (int64_t value : context.values) {
    auto c = AsConstInt(Simplify(VScaleSubstituter(value).VisitExpr(s)));
    if (!c || *c == 0) return false;
  }
  return true;
}

bool Analyzer::CanProveGreaterEqual(const Expr& e, int64_t v) {
  return GetConstIntBound(Simplify(e)).min_value >= v;
}

bool Analyzer::CanProveLess(const Expr& e, int64_t v) {
  return GetConstIntBound(Simplify(e)).max_value < v;
}

bool Analyzer::CanProveEqual(const Expr& a, const Expr& b) {
  if (a->dtype != b->dtype) return false;
  return CanProve(EQNode::Make(a, b));
}

}  // namespace arith
}  // namespace tessera
