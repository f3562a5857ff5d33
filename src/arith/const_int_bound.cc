// Constant integer bounds: intervals propagated through arithmetic, with saturation at infinity.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>

#include "tessera/arith/analyzer.h"
#include "tessera/ir/functor.h"

namespace tessera {
namespace arith {
namespace {

using B = ConstIntBound;
constexpr int64_t kPos = ConstIntBound::kPosInf;
constexpr int64_t kNeg = ConstIntBound::kNegInf;

int64_t Clamp(__int128 v) {
  if (v >= kPos) return kPos;
  if (v <= kNeg) return kNeg;
  return static_cast<int64_t>(v);
}
bool IsInf(int64_t v) { return v == kPos || v == kNeg; }

int64_t SatAdd(int64_t a, int64_t b) {
  if (IsInf(a)) return a;  // inf + (-inf) does not arise from valid intervals' matching ends
  if (IsInf(b)) return b;
  return Clamp(static_cast<__int128>(a) + b);
}
int64_t SatMul(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  if (IsInf(a) || IsInf(b)) return ((a < 0) != (b < 0)) ? kNeg : kPos;
  return Clamp(static_cast<__int128>(a) * b);
}
int64_t Neg(int64_t a) { return a == kNeg ? kPos : (a == kPos ? kNeg : -a); }

// Division of interval ends; `floor` picks floor or truncating division. Infinite numerators
// stay infinite with the quotient's sign.
int64_t SatDiv(int64_t a, int64_t b, bool floor) {
  if (IsInf(a)) return ((a < 0) != (b < 0)) ? kNeg : kPos;
  if (IsInf(b)) return 0;
  return floor ? FloorDiv(a, b) : a / b;
}

B Union(B a, B b) {
  return {std::min(a.min_value, b.min_value), std::max(a.max_value, b.max_value)};
}
B Intersect(B a, B b) {
  return {std::max(a.min_value, b.min_value), std::min(a.max_value, b.max_value)};
}

// Bound of a / b by the four corners, for a divisor interval that excludes 0.
B DivideBounds(B a, B b, bool floor) {
  int64_t c[4] = {SatDiv(a.min_value, b.min_value, floor), SatDiv(a.min_value, b.max_value, floor),
                  SatDiv(a.max_value, b.min_value, floor), SatDiv(a.max_value, b.max_value, floor)};
  return {*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
}

class BoundAnalyzer : public ExprFunctor<B> {
 public:
  explicit BoundAnalyzer(const Analyzer& parent) : parent_(parent) {}

  B VisitExpr(const Expr& e) override {
    B b = ExprFunctor<B>::VisitExpr(e);
    // Values of a type never leave its range (wrap-around aside, which index math avoids):
    // finite ends are limited to it. An infinite end stays infinite, as TVM keeps it (it comes
    // from an unbounded var bound: `update(x, ConstIntBound(NEG_INF, 4))`, or a size var of no
    // known bound, [0, +inf) whatever its width).
    if (e->dtype.is_int_or_bool()) {
      B type = B::OfType(e->dtype.element_of());
      if (b.min_value != kNeg) b.min_value = std::max(b.min_value, type.min_value);
      if (b.max_value != kPos) b.max_value = std::min(b.max_value, type.max_value);
    }
    // What the entered constraints say of this expression (`1 <= x % 58`).
    if (parent_.HasConstraintBounds()) b = Intersect(b, parent_.ConstraintBound(e));
    return b;
  }

  B VisitExpr_(const IntImmNode* op) override { return B::Single(op->value); }
  B VisitExpr_(const FloatImmNode* op) override { return B::Everything(); }
  B VisitExpr_(const StringImmNode* op) override { return B::Everything(); }
  B VisitExpr_(const VarNode* op) override { return VarBound(op); }
  B VisitExpr_(const SizeVarNode* op) override {
    // A float SizeVar is non-negative but not an integer: no integer bound applies.
    if (!op->dtype.is_int_or_bool()) return B::Everything();
    // As TVM: with nothing known, [0, +inf) whatever the width.
    if (!let_bounds_.count(op) && !parent_.VarBound(op)) return B{0, kPos};
    return Intersect(VarBound(op), B{0, kPos});
  }
  B VisitExpr_(const CastNode* op) override {
    // As TVM: the bound of the value (an integer value carried through a float cast keeps its
    // bound), limited to the range of the target type.
    B target = TypeBound(op->dtype);
    if (auto log = CeilLog2Bound(op)) return Intersect(*log, target);
    return Intersect(VisitExpr(op->value), target);
  }
  B VisitExpr_(const AddNode* op) override {
    B a = VisitExpr(op->a), b = VisitExpr(op->b);
    return {SatAdd(a.min_value, b.min_value), SatAdd(a.max_value, b.max_value)};
  }
  B VisitExpr_(const SubNode* op) override {
    B a = VisitExpr(op->a), b = VisitExpr(op->b);
    return {SatAdd(a.min_value, Neg(b.max_value)), SatAdd(a.max_value, Neg(b.min_value))};
  }
  B VisitExpr_(const MulNode* op) override {
    B a = VisitExpr(op->a), b = VisitExpr(op->b);
    int64_t c[4] = {SatMul(a.min_value, b.min_value), SatMul(a.min_value, b.max_value),
                    SatMul(a.max_value, b.min_value), SatMul(a.max_value, b.max_value)};
    return {*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
  }
  B VisitExpr_(const DivNode* op) override { return Divide(op, /*floor=*/false); }
  B VisitExpr_(const FloorDivNode* op) override { return Divide(op, /*floor=*/true); }
  B VisitExpr_(const ModNode* op) override {
    if (!op->dtype.is_integer()) return B::Everything();
    B a = VisitExpr(op->a), b = VisitExpr(op->b);
    if (!AssumeNonZeroDivisor(&b)) return TypeBound(op->dtype);
    if (b.min_value <= 0) return TypeBound(op->dtype);  // modulo by a negative value: rare
    if (auto r = ModularRemainderBound(op->a, b)) return *r;
    int64_t cap = SatAdd(b.max_value, -1);
    if (a.min_value >= 0) {
      if (a.max_value < b.min_value) return a;
      return {0, std::min(a.max_value, cap)};
    }
    // The truncating remainder has the sign of a.
    return {std::max(a.min_value, Neg(cap)), std::min(std::max(a.max_value, int64_t(0)), cap)};
  }
  B VisitExpr_(const FloorModNode* op) override {
    if (!op->dtype.is_integer()) return B::Everything();
    B a = VisitExpr(op->a), b = VisitExpr(op->b);
    if (!AssumeNonZeroDivisor(&b)) return TypeBound(op->dtype);
    if (b.min_value > 0) {
      if (auto r = ModularRemainderBound(op->a, b)) return *r;
      int64_t cap = SatAdd(b.max_value, -1);
      if (a.min_value >= 0) {
        if (a.max_value < b.min_value) return a;
        return {0, std::min(a.max_value, cap)};
      }
      return {0, cap};
    }
    // The floor remainder has the sign of b: between min(0, b_min + 1) and max(0, b_max - 1).
    return Intersect({std::min(int64_t(0), SatAdd(b.min_value, 1)),
                      std::max(int64_t(0), SatAdd(b.max_value, -1))},
                     TypeBound(op->dtype));
  }
  B VisitExpr_(const MinNode* op) override {
    B a = VisitExpr(op->a), b = VisitExpr(op->b);
    return {std::min(a.min_value, b.min_value), std::min(a.max_value, b.max_value)};
  }
  B VisitExpr_(const MaxNode* op) override {
    B a = VisitExpr(op->a), b = VisitExpr(op->b);
    return {std::max(a.min_value, b.min_value), std::max(a.max_value, b.max_value)};
  }
  B VisitExpr_(const EQNode*) override { return {0, 1}; }
  B VisitExpr_(const NENode*) override { return {0, 1}; }
  B VisitExpr_(const LTNode*) override { return {0, 1}; }
  B VisitExpr_(const LENode*) override { return {0, 1}; }
  B VisitExpr_(const GTNode*) override { return {0, 1}; }
  B VisitExpr_(const GENode*) override { return {0, 1}; }
  B VisitExpr_(const AndNode*) override { return {0, 1}; }
  B VisitExpr_(const OrNode*) override { return {0, 1}; }
  B VisitExpr_(const NotNode*) override { return {0, 1}; }
  B VisitExpr_(const SelectNode* op) override {
    return Union(VisitExpr(op->true_value), VisitExpr(op->false_value));
  }
  B VisitExpr_(const RampNode* op) override {
    B base = VisitExpr(op->base), stride = VisitExpr(op->stride);
    if (op->lanes < 0) {  // vscale * k lanes: the last lane is unbounded unless the stride is 0
      return stride.min_value == 0 && stride.max_value == 0 ? base : B{kNeg, kPos};
    }
    B last{SatAdd(base.min_value, SatMul(stride.min_value, op->lanes - 1)),
           SatAdd(base.max_value, SatMul(stride.max_value, op->lanes - 1))};
    return Union(base, last);
  }
  B VisitExpr_(const BroadcastNode* op) override { return VisitExpr(op->value); }
  B VisitExpr_(const ShuffleNode* op) override {
    B r{kPos, kNeg};
    for (const Expr& v : op->vectors) r = Union(r, VisitExpr(v));
    return r;
  }
  B VisitExpr_(const LetNode* op) override {
    B v = VisitExpr(op->value);
    auto saved = let_bounds_.find(op->var.get());
    bool had = saved != let_bounds_.end();
    B old = had ? saved->second : B();
    let_bounds_[op->var.get()] = v;
    B r = VisitExpr(op->body);
    if (had) {
      let_bounds_[op->var.get()] = old;
    } else {
      let_bounds_.erase(op->var.get());
    }
    return r;
  }
  B VisitExpr_(const CallNode* op) override {
    if (op->is_op("tir.if_then_else")) return Union(VisitExpr(op->args[1]), VisitExpr(op->args[2]));
    if (op->is_op("tir.likely")) return VisitExpr(op->args[0]);
    if (op->is_op("tir.shift_left") && op->args.size() == 2) return LeftShift(op);
    if (op->is_op("tir.shift_right") && op->args.size() == 2) return RightShift(op);
    if (op->is_op("tir.bitwise_and") && op->args.size() == 2) return BitwiseAnd(op);
    return TypeBound(op->dtype);
  }
  B VisitExpr_(const BufferLoadNode* op) override { return TypeBound(op->dtype); }

 private:
  // As TVM: int(ceil(log2(float(n)))) (topi's ceil_log2) lies between the ceil_log2 of n's
  // bounds (for n >= 1).
  std::optional<B> CeilLog2Bound(const CastNode* op) {
    auto* ceil = AsPtr<CallNode>(op->value);
    if (!op->dtype.is_int() || !ceil || !ceil->is_op("tir.ceil") || ceil->args.size() != 1) {
      return std::nullopt;
    }
    auto* log = AsPtr<CallNode>(ceil->args[0]);
    if (!log || !log->is_op("tir.log2") || log->args.size() != 1) return std::nullopt;
    const Expr& arg = log->args[0];
    auto ceil_log2 = [](double v) { return static_cast<int64_t>(std::ceil(std::log2(v))); };
    if (auto* f = AsPtr<FloatImmNode>(arg)) {
      if (f->value < 1) return std::nullopt;
      return B::Single(ceil_log2(f->value));
    }
    auto* cast = AsPtr<CastNode>(arg);
    if (!cast || !cast->value->dtype.is_integer()) return std::nullopt;
    B n = VisitExpr(cast->value);
    if (n.min_value < 1 || n.max_value >= (int64_t(1) << 52)) return std::nullopt;
    return B{ceil_log2(double(n.min_value)), ceil_log2(double(n.max_value))};
  }
  // As TVM: a << b of a non-negative value by a count in [0, bits) is bounded by the shifts of
  // the bounds, when they fit the type. A negative value or count is left unbounded.
  B LeftShift(const CallNode* op) {
    B type = TypeBound(op->dtype);
    if (!op->dtype.is_integer()) return type;
    B a = VisitExpr(op->args[0]), b = VisitExpr(op->args[1]);
    int bits = op->dtype.bits();
    if (a.min_value < 0 || b.min_value < 0 || b.max_value >= bits || b.max_value >= 63) return type;
    if (a.max_value > (type.max_value >> b.max_value)) return type;
    return {a.min_value << b.min_value, a.max_value << b.max_value};
  }
  static B TypeBound(DataType t) {
    return t.is_int_or_bool() ? B::OfType(t.element_of()) : B::Everything();
  }
  B VarBound(const VarNode* v) {
    auto it = let_bounds_.find(v);
    if (it != let_bounds_.end()) return it->second;
    if (const B* b = parent_.VarBound(v)) return *b;
    return TypeBound(v->dtype);
  }
  // As TVM: a divisor whose bound starts at 0 is taken to start at 1 (a valid program does not
  // divide by zero; `x // n` with a shape n >= 0 means n >= 1). false: the divisor is 0.
  static bool AssumeNonZeroDivisor(B* b) {
    if (b->min_value == 0 && b->max_value == 0) return false;
    if (b->min_value == 0) b->min_value = 1;
    return true;
  }
  // As TVM: the bound of a % c (c a positive constant) when every value of a is a multiple of
  // g = gcd(coeff, c) plus base: the remainders are base mod g, ..., c - g + base mod g.
  std::optional<B> ModularRemainderBound(const Expr& a, B b) {
    if (!b.is_const()) return std::nullopt;
    int64_t c = b.min_value;
    ModularSet m = const_cast<Analyzer&>(parent_).GetModularSet(a);
    int64_t g = std::gcd(m.coeff, c);
    if (m.coeff == 0 || g <= 1) return std::nullopt;
    int64_t lo = FloorMod(m.base, c);
    int64_t hi = c - g + lo;
    if (hi >= c) hi -= c;
    return B{lo, hi};
  }
  // As TVM: the corners of a / b; a divisor interval across 0 is split into its negative and
  // positive parts (a part that is empty becomes the whole type, as TVM does).
  B Divide(const BinaryNode* op, bool floor) {
    if (!op->dtype.is_integer()) return B::Everything();
    B a = VisitExpr(op->a), b = VisitExpr(op->b);
    if (!AssumeNonZeroDivisor(&b)) return TypeBound(op->dtype);
    if (b.min_value <= 0 && b.max_value >= 0 && op->dtype.is_int()) {
      B whole = TypeBound(op->dtype);
      B neg = b.min_value < 0 ? B{b.min_value, -1} : whole;
      B pos = b.max_value > 0 ? B{1, b.max_value} : whole;
      return Union(DivideBounds(a, neg, floor), DivideBounds(a, pos, floor));
    }
    return DivideBounds(a, b, floor);
  }
  // As TVM: a >> b by the corners of the bounds (a count outside [0, 64) leaves it unbounded).
  B RightShift(const CallNode* op) {
    B type = TypeBound(op->dtype);
    if (!op->dtype.is_integer()) return type;
    B a = VisitExpr(op->args[0]), b = VisitExpr(op->args[1]);
    if (b.min_value < 0 || b.max_value >= 64) return type;
    auto shr = [](int64_t x, int64_t y) { return IsInf(x) ? x : (x >> y); };
    int64_t c[4] = {shr(a.min_value, b.min_value), shr(a.min_value, b.max_value),
                    shr(a.max_value, b.min_value), shr(a.max_value, b.max_value)};
    return {*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
  }
  // As TVM: a & b is in [0, the smaller maximum] when both are non-negative, and in [0, max]
  // of a non-negative side otherwise.
  B BitwiseAnd(const CallNode* op) {
    B type = TypeBound(op->dtype);
    if (!op->dtype.is_integer()) return type;
    B a = VisitExpr(op->args[0]), b = VisitExpr(op->args[1]);
    if (a.min_value >= 0 && b.min_value >= 0) return {0, std::min(a.max_value, b.max_value)};
    if (b.min_value >= 0) return {0, b.max_value};
    if (a.min_value >= 0) return {0, a.max_value};
    return type;
  }

  const Analyzer& parent_;
  std::unordered_map<const VarNode*, B> let_bounds_;
};

}  // namespace

ConstIntBound ConstIntBound::OfType(DataType t) {
  if (t.is_bool()) return {0, 1};
  if (!t.is_integer() || t.bits() >= 64) {
    return t.is_uint() ? ConstIntBound{0, kPosInf} : Everything();
  }
  if (t.is_uint()) return {0, (int64_t(1) << t.bits()) - 1};
  return {-(int64_t(1) << (t.bits() - 1)), (int64_t(1) << (t.bits() - 1)) - 1};
}

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

int64_t FloorMod(int64_t a, int64_t b) { return a - FloorDiv(a, b) * b; }

int64_t WrapToType(DataType t, int64_t v) {
  if (t.is_bool()) return v != 0;
  if (t.bits() >= 64) return v;
  uint64_t mask = (uint64_t(1) << t.bits()) - 1;
  uint64_t u = static_cast<uint64_t>(v) & mask;
  if (t.is_int() && (u >> (t.bits() - 1))) return static_cast<int64_t>(u | ~mask);
  return static_cast<int64_t>(u);
}

ConstIntBound Analyzer::GetConstIntBound(const Expr& e) {
  return BoundAnalyzer(*this).VisitExpr(e);
}

}  // namespace arith
}  // namespace tessera
