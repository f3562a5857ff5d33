// Modular sets: which residues an integer expression can take (coeff * k + base).
#include <numeric>

#include "tessera/arith/analyzer.h"
#include "tessera/ir/functor.h"

namespace tessera {
namespace arith {
namespace {

using M = ModularSet;

int64_t Gcd(int64_t a, int64_t b) { return std::gcd(a < 0 ? -a : a, b < 0 ? -b : b); }

// Coefficients beyond this are not worth tracking (and their products could overflow).
constexpr int64_t kMaxCoeff = int64_t(1) << 31;

M Make(int64_t coeff, int64_t base) {
  if (coeff < 0) coeff = -coeff;
  if (coeff > kMaxCoeff || base > kMaxCoeff * kMaxCoeff || base < -kMaxCoeff * kMaxCoeff) {
    return M::Everything();
  }
  if (coeff > 0) base = FloorMod(base, coeff);
  return {coeff, base};
}

M Union(M a, M b) {
  int64_t coeff = Gcd(Gcd(a.coeff, b.coeff), a.base - b.base);
  return Make(coeff, a.base);
}

class ModularAnalyzer : public ExprFunctor<M> {
 public:
  explicit ModularAnalyzer(const Analyzer& parent) : parent_(parent) {}

  M VisitExpr(const Expr& e) override {
    if (!e->dtype.is_integer()) return M::Everything();
    return ExprFunctor<M>::VisitExpr(e);
  }

  M VisitExpr_(const IntImmNode* op) override {
    if (op->value > kMaxCoeff * kMaxCoeff || op->value < -kMaxCoeff * kMaxCoeff) return M::Everything();
    return {0, op->value};
  }
  M VisitExpr_(const FloatImmNode*) override { return M::Everything(); }
  M VisitExpr_(const StringImmNode*) override { return M::Everything(); }
  M VisitExpr_(const VarNode* op) override { return VarSet(op); }
  M VisitExpr_(const SizeVarNode* op) override { return VarSet(op); }
  M VisitExpr_(const CastNode* op) override {
    // Widening integer casts keep the residues; anything else may wrap.
    DataType from = op->value->dtype;
    if (from.is_integer() && from.bits() <= op->dtype.bits()) return VisitExpr(op->value);
    return M::Everything();
  }
  M VisitExpr_(const AddNode* op) override {
    M a = VisitExpr(op->a), b = VisitExpr(op->b);
    return Make(Gcd(a.coeff, b.coeff), a.base + b.base);
  }
  M VisitExpr_(const SubNode* op) override {
    M a = VisitExpr(op->a), b = VisitExpr(op->b);
    return Make(Gcd(a.coeff, b.coeff), a.base - b.base);
  }
  M VisitExpr_(const MulNode* op) override {
    M a = VisitExpr(op->a), b = VisitExpr(op->b);
    // (ca*x + ba)(cb*y + bb) = ca*cb*xy + ca*bb*x + cb*ba*y + ba*bb
    int64_t coeff = Gcd(Gcd(a.coeff * b.coeff, a.coeff * b.base), b.coeff * a.base);
    return Make(coeff, a.base * b.base);
  }
  M VisitExpr_(const DivNode* op) override {
    // Truncating division agrees with floor division on non-negative values only.
    if (parent_bound(op->a).min_value >= 0) return DivideBy(op);
    return M::Everything();
  }
  M VisitExpr_(const FloorDivNode* op) override { return DivideBy(op); }
  M VisitExpr_(const ModNode* op) override {
    if (parent_bound(op->a).min_value >= 0) return ModBy(op);
    return M::Everything();
  }
  M VisitExpr_(const FloorModNode* op) override { return ModBy(op); }
  M VisitExpr_(const MinNode* op) override { return Union(VisitExpr(op->a), VisitExpr(op->b)); }
  M VisitExpr_(const MaxNode* op) override { return Union(VisitExpr(op->a), VisitExpr(op->b)); }
  M VisitExpr_(const EQNode*) override { return M::Everything(); }
  M VisitExpr_(const NENode*) override { return M::Everything(); }
  M VisitExpr_(const LTNode*) override { return M::Everything(); }
  M VisitExpr_(const LENode*) override { return M::Everything(); }
  M VisitExpr_(const GTNode*) override { return M::Everything(); }
  M VisitExpr_(const GENode*) override { return M::Everything(); }
  M VisitExpr_(const AndNode*) override { return M::Everything(); }
  M VisitExpr_(const OrNode*) override { return M::Everything(); }
  M VisitExpr_(const NotNode*) override { return M::Everything(); }
  M VisitExpr_(const SelectNode* op) override {
    return Union(VisitExpr(op->true_value), VisitExpr(op->false_value));
  }
  M VisitExpr_(const RampNode* op) override {
    M base = VisitExpr(op->base), stride = VisitExpr(op->stride);
    return Make(Gcd(base.coeff, Gcd(stride.coeff, stride.base)), base.base);
  }
  M VisitExpr_(const BroadcastNode* op) override { return VisitExpr(op->value); }
  M VisitExpr_(const ShuffleNode*) override { return M::Everything(); }
  M VisitExpr_(const LetNode* op) override {
    M v = VisitExpr(op->value);
    let_sets_[op->var.get()] = v;
    M r = VisitExpr(op->body);
    let_sets_.erase(op->var.get());
    return r;
  }
  M VisitExpr_(const CallNode*) override { return M::Everything(); }
  M VisitExpr_(const BufferLoadNode*) override { return M::Everything(); }

 private:
  ConstIntBound parent_bound(const Expr& e) { return const_cast<Analyzer&>(parent_).GetConstIntBound(e); }
  M VarSet(const VarNode* v) {
    auto it = let_sets_.find(v);
    if (it != let_sets_.end()) return it->second;
    if (const M* m = parent_.VarModular(v)) return *m;
    return M::Everything();
  }
  M DivideBy(const BinaryNode* op) {
    auto c = AsConstInt(op->b);
    if (!c || *c == 0) return M::Everything();
    M a = VisitExpr(op->a);
    if (a.coeff % *c == 0) return Make(a.coeff / *c, FloorDiv(a.base, *c));
    return M::Everything();
  }
  M ModBy(const BinaryNode* op) {
    auto c = AsConstInt(op->b);
    if (!c || *c == 0) return M::Everything();
    M a = VisitExpr(op->a);
    int64_t g = Gcd(a.coeff, *c);
    if (g == (*c < 0 ? -*c : *c)) return {0, FloorMod(a.base, *c)};  // c divides every value's step
    return Make(g, a.base);
  }

  const Analyzer& parent_;
  std::unordered_map<const VarNode*, M> let_sets_;
};

}  // namespace

ModularSet Analyzer::GetModularSet(const Expr& e) { return ModularAnalyzer(*this).VisitExpr(e); }

}  // namespace arith
}  // namespace tessera
