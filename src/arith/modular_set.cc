// Modular sets: which residues an integer expression can take (coeff * k + base).
#include <numeric>
#include <optional>
#include <tuple>

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
    // A cast is followed into its value whatever its type (as TVM: int -> float -> int keeps
    // the residues); other non-integer expressions have no residues.
    if (!e->dtype.is_integer() && e->kind != NodeKind::kCast) return M::Everything();
    return ExprFunctor<M>::VisitExpr(e);
  }

  M VisitExpr_(const IntImmNode* op) override {
    if (op->value > kMaxCoeff * kMaxCoeff || op->value < -kMaxCoeff * kMaxCoeff)
      return M::Everything();
    return {0, op->value};
  }
  M VisitExpr_(const FloatImmNode*) override { return M::Everything(); }
  M VisitExpr_(const StringImmNode*) override { return M::Everything(); }
  M VisitExpr_(const VarNode* op) override { return VarSet(op); }
  M VisitExpr_(const SizeVarNode* op) override { return VarSet(op); }
  M VisitExpr_(const CastNode* op) override {
    // Widening integer casts keep the residues; anything else may wrap.
    // Casts between floats and integers keep them too (as TVM); a narrowing integer cast may
    // wrap.
    DataType from = op->value->dtype;
    if (from.is_integer() && op->dtype.is_integer() && from.bits() > op->dtype.bits()) {
      return M::Everything();
    }
    return VisitExpr(op->value);
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
  M VisitExpr_(const DivNode* op) override { return DivideBy(op->a, op->b, /*floor=*/false); }
  M VisitExpr_(const FloorDivNode* op) override { return DivideBy(op->a, op->b, true); }
  M VisitExpr_(const ModNode* op) override { return ModBy(op->a, op->b, /*floor=*/false); }
  M VisitExpr_(const FloorModNode* op) override { return ModBy(op->a, op->b, true); }
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
  M VisitExpr_(const CallNode* op) override {
    if (op->args.size() != 2) return M::Everything();
    // a >> c is floordiv(a, 2**c); a & (2**c - 1) is floormod(a, 2**c).
    auto c = AsConstInt(op->args[1]);
    if (!c) return M::Everything();
    if (op->is_op("tir.shift_right") && *c >= 0 && *c < 62) {
      return DivideBy(op->args[0], int64_t(1) << *c, true);
    }
    if (op->is_op("tir.bitwise_and") && *c >= 0 && *c < kMaxCoeff && ((*c + 1) & *c) == 0) {
      return ModBy(op->args[0], *c + 1, true);
    }
    return M::Everything();
  }
  M VisitExpr_(const BufferLoadNode*) override { return M::Everything(); }

 private:
  ConstIntBound parent_bound(const Expr& e) {
    return const_cast<Analyzer&>(parent_).GetConstIntBound(e);
  }
  M VarSet(const VarNode* v) {
    auto it = let_sets_.find(v);
    if (it != let_sets_.end()) return it->second;
    if (const M* m = parent_.VarModular(v)) return *m;
    return M::Everything();
  }
  M DivideBy(const Expr& a_expr, const Expr& b_expr, bool floor) {
    auto c = AsConstInt(b_expr);
    if (!c || *c == 0) return M::Everything();
    return DivideBy(a_expr, *c, floor);
  }
  // As TVM: (coeff * k + base) / c with c dividing coeff is (coeff / c) * k + base / c, for
  // floor division always; for truncating division when base is 0 or the value is
  // non-negative (c > 0).
  M DivideBy(const Expr& a_expr, int64_t c, bool floor) {
    M a = VisitExpr(a_expr);
    if (a.coeff == 0) return Make(0, floor ? FloorDiv(a.base, c) : a.base / c);
    if (a.coeff % c != 0) return M::Everything();
    if (floor) return Make(a.coeff / c, FloorDiv(a.base, c));
    if (a.base == 0) return Make(a.coeff / c, 0);
    if (c > 0 && parent_bound(a_expr).min_value >= 0) return Make(a.coeff / c, a.base / c);
    return M::Everything();
  }
  M ModBy(const Expr& a_expr, const Expr& b_expr, bool floor) {
    auto c = AsConstInt(b_expr);
    if (!c || *c == 0) return M::Everything();
    return ModBy(a_expr, *c, floor);
  }
  // As TVM: (coeff * k + base) % c takes the residues base mod g, g = gcd(coeff, c), for floor
  // modulo always; for truncating modulo when g divides base or the value is non-negative. A
  // constant stays a constant.
  M ModBy(const Expr& a_expr, int64_t c, bool floor) {
    M a = VisitExpr(a_expr);
    if (a.coeff == 0) return Make(0, floor ? FloorMod(a.base, c) : a.base % c);
    int64_t g = Gcd(a.coeff, c);
    if (floor || a.base % g == 0 || parent_bound(a_expr).min_value >= 0) {
      return Make(g, a.base);
    }
    return M::Everything();
  }

  const Analyzer& parent_;
  std::unordered_map<const VarNode*, M> let_sets_;
};

}  // namespace

std::optional<ModularSet> IntersectModular(ModularSet a, ModularSet b) {
  if (a.coeff == 0 || b.coeff == 0) {
    if (a.coeff != 0) std::swap(a, b);  // a is the constant
    if (b.coeff == 0) return a.base == b.base ? std::optional<ModularSet>(a) : std::nullopt;
    return FloorMod(a.base - b.base, b.coeff) == 0 ? std::optional<ModularSet>(a) : std::nullopt;
  }
  // z = a.base + a.coeff * t with a.coeff * t == b.base - a.base (mod b.coeff).
  int64_t g = Gcd(a.coeff, b.coeff);
  int64_t diff = b.base - a.base;
  if (diff % g != 0) return std::nullopt;
  __int128 lcm = static_cast<__int128>(a.coeff / g) * b.coeff;
  if (lcm > kMaxCoeff) return std::nullopt;
  // The inverse of a.coeff / g modulo b.coeff / g, by the extended Euclidean algorithm.
  int64_t m = b.coeff / g;
  int64_t old_r = FloorMod(a.coeff / g, m == 0 ? 1 : m), r = m, old_s = 1, s = 0;
  while (r != 0) {
    int64_t q = old_r / r;
    std::tie(old_r, r) = std::make_pair(r, old_r - q * r);
    std::tie(old_s, s) = std::make_pair(s, old_s - q * s);
  }
  __int128 t = m == 1 ? 0 : (static_cast<__int128>(diff / g) * old_s) % m;
  __int128 z = a.base + static_cast<__int128>(a.coeff) * t;
  int64_t l = static_cast<int64_t>(lcm);
  return ModularSet{l, static_cast<int64_t>(((z % l) + l) % l)};
}

ModularSet Analyzer::GetModularSet(const Expr& e) { return ModularAnalyzer(*this).VisitExpr(e); }

}  // namespace arith
}  // namespace tessera
