// dsl.CombineInstructions: pairs of DSL operations that the target does in one instruction.
//
//   x & ~y    -> dsl.vbclr(x, y)        x | ~y   -> dsl.vbset(x, y)
//   ~(x & y)  -> dsl.vnand(x, y)        ~(x | y) -> dsl.vnor(x, y)
// on integer vectors (tir.bitwise_*) and on masks (And / Or / Not of bool vectors), and two
// strength reductions that give bit-identical results:
//   integer vector * 2^k     -> vector << k   (two's complement wraps the same way)
//   float / c, 1/c exact     -> float * (1/c) (c a power of two whose reciprocal is
//                                              representable: both round x * 2^-k once)
// Divisions whose reciprocal is inexact (x / 10) are kept, so results never change.
// A right shift whose lanes are narrowed (S.cast(S.vsr(x, s, with_round=r), narrower,
// saturate=t), after dsl.AlignVectorWidth a dsl.vcvt_into of the shift, clamped when saturating)
// becomes one narrowing shift, dsl.vnsr_into, with the same rounding and the same clamp.
// A product of two integer vectors widened from the same narrower width (S.cast(a, wide) *
// S.cast(b, wide), b possibly a broadcast scalar) multiplies the narrow lanes into double width
// at once: dsl.vmull_to / dsl.vmulh_to (the low / high half), then widened again for 8 -> 32 bits.
// The product's bits are the same: each lane is the exact product modulo 2^bits.
// A 16-bit float vector rounded (S.rint) and converted to 32-bit integers is the rounding
// conversion of the target: on X3 dsl.vcvtul_tw / dsl.vcvtuh_tw (the low / high half), before X3
// dsl.vcvtue_tw / dsl.vcvtuo_tw (even / odd lanes) zipped back into order by dsl.vzip_low/high.
#include <cmath>
#include <optional>

#include "tessera/ir/dsl_target.h"
#include "tessera/ir/functor.h"
#include "tessera/ir/op.h"
#include "tessera/transform/dsl_passes.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace transform {
namespace {

const CallNode* AsOpCall(const Expr& e, const char* name) {
  const auto* call = AsPtr<CallNode>(e);
  if (call == nullptr || AsPtr<OpNode>(call->op) == nullptr) return nullptr;
  return call->op_name() == name ? call : nullptr;
}

// Whether `e` is a constant mask (dsl.const_mask) with every lane on.
bool IsAllTrueConstMask(const Expr& e) {
  const CallNode* mask = AsOpCall(e, "dsl.const_mask");
  if (mask == nullptr) return false;
  for (const Expr& lane : mask->args) {
    const auto* imm = AsPtr<IntImmNode>(lane);
    if (imm == nullptr || imm->value == 0) return false;
  }
  return true;
}

Expr Combined(const char* name, DataType t, Expr x, Expr y, const Span& span) {
  return CallNode::Make(t, OpNode::Get(name), {std::move(x), std::move(y)}, span);
}

bool IsNativeIntVector(DataType t) {
  return t.is_vector() && (t.is_int() || t.is_uint()) &&
         (t.bits() == 8 || t.bits() == 16 || t.bits() == 32);
}

// The scalar constant of `e`, itself or broadcast.
const ExprNode* ScalarConst(const Expr& e) {
  if (const auto* b = AsPtr<BroadcastNode>(e)) return b->value.get();
  return e.get();
}

// k where `e` (an integer constant or its broadcast) is 2^k, k >= 1.
std::optional<int> PowerOfTwoShift(const Expr& e) {
  const auto* imm = dynamic_cast<const IntImmNode*>(ScalarConst(e));
  if (imm == nullptr || imm->value < 2 || (imm->value & (imm->value - 1)) != 0) return std::nullopt;
  int k = 0;
  for (int64_t v = imm->value; v > 1; v >>= 1) ++k;
  if (k >= e->dtype.bits()) return std::nullopt;
  return k;
}

// 1/c where `e` (a float constant or its broadcast) is c = +-2^k and 2^-k is a normal number of
// the type, so that x / c and x * (1/c) are the same rounding of the same exact value.
std::optional<double> ExactReciprocal(const Expr& e) {
  const auto* imm = dynamic_cast<const FloatImmNode*>(ScalarConst(e));
  if (imm == nullptr || imm->value == 0.0 || !std::isfinite(imm->value)) return std::nullopt;
  int exp = 0;
  double mant = std::frexp(imm->value, &exp);  // value = mant * 2^exp, |mant| in [0.5, 1)
  if (std::fabs(mant) != 0.5) return std::nullopt;
  int k = exp - 1;  // |value| = 2^k
  DataType t = e->dtype;
  int min_exp = -126, max_exp = 127;  // float32 and bfloat16
  if (t.bits() == 16 && !t.is_bfloat16()) min_exp = -14, max_exp = 15;
  if (t.bits() == 64) min_exp = -1022, max_exp = 1023;
  if (-k < min_exp || -k > max_exp) return std::nullopt;
  return 1.0 / imm->value;
}

Expr SameShape(const Expr& like, Expr scalar) {
  if (const auto* b = AsPtr<BroadcastNode>(like)) {
    return BroadcastNode::Make(std::move(scalar), b->lanes, like->span);
  }
  return scalar;
}

int64_t RangeLo(DataType t) { return t.is_uint() ? 0 : -(int64_t(1) << (t.bits() - 1)); }
int64_t RangeHi(DataType t) {
  return t.is_uint() ? (int64_t(1) << t.bits()) - 1 : (int64_t(1) << (t.bits() - 1)) - 1;
}

// The integer constant of `e` (itself or broadcast), if it is one.
std::optional<int64_t> IntConst(const Expr& e) {
  const auto* imm = dynamic_cast<const IntImmNode*>(ScalarConst(e));
  if (imm == nullptr) return std::nullopt;
  return imm->value;
}

// `x` narrowed to `to` by dsl.vcvt_into (`acc` from lane `first`) as one dsl.vnsr_into when `x`
// is a right shift of 16- or 32-bit lanes, wrapped, when saturating, in the clamp to the range of
// `to` that a saturating S.cast puts there (Min/Max, in either order, only the bounds that cut).
std::optional<Expr> NarrowingShift(const Expr& acc, const Expr& x, const Expr& first,
                                   const Span& span) {
  DataType to = acc->dtype, from = x->dtype;
  if (!(to.is_int() || to.is_uint()) || !(from.is_int() || from.is_uint())) return std::nullopt;
  if (from.bits() != 16 && from.bits() != 32) return std::nullopt;
  if (to.bits() >= from.bits() || (to.bits() != 8 && to.bits() != 16)) return std::nullopt;
  Expr inner = x;
  std::optional<int64_t> lo, hi;
  for (int depth = 0; depth < 2; ++depth) {
    if (const auto* mx = AsPtr<MaxNode>(inner)) {
      if (lo) return std::nullopt;
      lo = IntConst(mx->b);
      if (!lo) return std::nullopt;
      inner = mx->a;
    } else if (const auto* mn = AsPtr<MinNode>(inner)) {
      if (hi) return std::nullopt;
      hi = IntConst(mn->b);
      if (!hi) return std::nullopt;
      inner = mn->a;
    }
  }
  bool clamped = lo || hi;
  if (clamped) {  // exactly the clamp of a saturating cast
    bool need_lo = RangeLo(to) > RangeLo(from), need_hi = RangeHi(to) < RangeHi(from);
    if (need_lo != lo.has_value() || need_hi != hi.has_value()) return std::nullopt;
    if ((lo && *lo != RangeLo(to)) || (hi && *hi != RangeHi(to))) return std::nullopt;
  }
  const auto* shift = AsPtr<CallNode>(inner);
  if (shift == nullptr || shift->args.size() != 2 || shift->dtype != from) return std::nullopt;
  bool round = AsOpCall(inner, "dsl.vasrr") != nullptr;
  if (!round && AsOpCall(inner, "tir.shift_right") == nullptr) return std::nullopt;
  if (shift->args[1]->dtype != from) return std::nullopt;
  return CallNode::Make(to, OpNode::Get("dsl.vnsr_into"),
                        {acc, shift->args[0], shift->args[1], first,
                         IntImmNode::Make(DataType::Int(32), clamped ? 1 : 0),
                         IntImmNode::Make(DataType::Int(32), round ? 1 : 0)},
                        span);
}

// One factor of a widening product: a native integer vector of 8 or 16 bits and the first lane
// that the widening conversion reads (-1 for a broadcast scalar, which reads any lane).
struct Narrow {
  Expr src;
  int first;
};

std::optional<Narrow> WidenedFactor(const Expr& e, DataType to) {
  auto narrow_int = [&](DataType t) {
    return (t.is_int() || t.is_uint()) && (t.bits() == 8 || t.bits() == 16) && t.bits() < to.bits();
  };
  if (const CallNode* cvt = AsOpCall(e, "dsl.vcvt")) {
    if (cvt->args.size() != 3 || !narrow_int(cvt->args[0]->dtype)) return std::nullopt;
    auto first = IntConst(cvt->args[1]);
    auto stride = IntConst(cvt->args[2]);
    if (!first || !stride || *stride != 1) return std::nullopt;
    if (cvt->args[0]->dtype.lanes() * cvt->args[0]->dtype.bits() != 256) return std::nullopt;
    return Narrow{cvt->args[0], static_cast<int>(*first)};
  }
  if (const auto* b = AsPtr<BroadcastNode>(e)) {
    const auto* cast = AsPtr<CastNode>(b->value);
    if (cast == nullptr || cast->value->dtype.is_vector() || !narrow_int(cast->value->dtype)) {
      return std::nullopt;
    }
    DataType t = cast->value->dtype;
    return Narrow{BroadcastNode::Make(cast->value, 256 / t.bits(), e->span), -1};
  }
  return std::nullopt;
}

// a * b of `to` lanes as a widening multiplication of the narrow lanes, if it is one.
std::optional<Expr> WideningProduct(const Expr& a, const Expr& b, DataType to, const Span& span) {
  if (!(to.is_int() || to.is_uint()) || to.lanes() * to.bits() != 256) return std::nullopt;
  auto x = WidenedFactor(a, to), y = WidenedFactor(b, to);
  if (!x || !y || x->src->dtype.bits() != y->src->dtype.bits()) return std::nullopt;
  if (x->first < 0 && y->first < 0) return std::nullopt;
  if (x->first >= 0 && y->first >= 0 && x->first != y->first) return std::nullopt;
  int first = std::max(x->first, y->first);
  int bits = x->src->dtype.bits();
  // The double-width product type: unsigned only when both factors are.
  bool both_unsigned = x->src->dtype.is_uint() && y->src->dtype.is_uint();
  DataType wide = to.bits() == 2 * bits ? to
                  : both_unsigned       ? DataType::UInt(2 * bits, 128 / bits)
                                        : DataType::Int(2 * bits, 128 / bits);
  int half_lanes = wide.lanes();  // lanes of each half of the narrow vector
  if (first % to.lanes() != 0 || first >= 2 * half_lanes) return std::nullopt;
  const char* op = first < half_lanes ? "dsl.vmull_to" : "dsl.vmulh_to";
  Expr product = CallNode::Make(wide, OpNode::Get(op), {x->src, y->src}, span);
  if (wide == to) return product;
  return CallNode::Make(to, OpNode::Get("dsl.vcvt"),
                        {product, IntImmNode::Make(DataType::Int(32), first % half_lanes),
                         IntImmNode::Make(DataType::Int(32), 1)},
                        span);
}

// dsl.vcvt(rint(x), first, 1) of a 16-bit float vector x into 32-bit integers as the target's
// rounding conversion.
std::optional<Expr> RoundingConversion(const CallNode* cvt, bool x3) {
  DataType to = cvt->dtype;
  if (cvt->args.size() != 3 || to.bits() != 32 || to.lanes() != 8) return std::nullopt;
  const CallNode* rint = AsOpCall(cvt->args[0], "dsl.vrint");
  if (rint == nullptr || rint->args.size() != 1) return std::nullopt;
  const Expr& x = rint->args[0];
  if (!x->dtype.is_float() || x->dtype.bits() != 16 || x->dtype.lanes() != 16) return std::nullopt;
  auto first = IntConst(cvt->args[1]);
  auto stride = IntConst(cvt->args[2]);
  if (!first || !stride || *stride != 1 || (*first != 0 && *first != 8)) return std::nullopt;
  const Span& span = cvt->span;
  auto op = [&](const char* name, std::vector<Expr> args) {
    return CallNode::Make(to, OpNode::Get(name), std::move(args), span);
  };
  if (x3) return op(*first == 0 ? "dsl.vcvtul_tw" : "dsl.vcvtuh_tw", {x});
  return op(*first == 0 ? "dsl.vzip_low" : "dsl.vzip_high",
            {op("dsl.vcvtue_tw", {x}), op("dsl.vcvtuo_tw", {x})});
}

class Combiner : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitExpr_;

  explicit Combiner(bool x3) : x3_(x3) {}

  Expr VisitExpr_(const CallNode* op) override {
    Expr e = StmtExprMutator::VisitExpr_(op);
    const auto* call = AsPtr<CallNode>(e);
    if (call == nullptr || AsPtr<OpNode>(call->op) == nullptr) return e;
    // A result whose inactive lanes are undefined under a mask with every lane on (S.abs(x,
    // mask="32T")) is the result itself.
    if (call->op_name() == "dsl.undef_inactive" && call->args.size() == 2 &&
        IsAllTrueConstMask(call->args[1])) {
      return call->args[0];
    }
    if (!IsNativeIntVector(call->dtype)) return e;
    const std::string& name = call->op_name();
    if (name == "dsl.vcvt") {
      if (auto rounded = RoundingConversion(call, x3_)) return *rounded;
    }
    if (name == "dsl.vcvt_into" && call->args.size() == 3) {
      if (auto nsr = NarrowingShift(call->args[0], call->args[1], call->args[2], call->span)) {
        return *nsr;
      }
    }
    if ((name == "tir.bitwise_and" || name == "tir.bitwise_or") && call->args.size() == 2) {
      const char* fused = name == "tir.bitwise_and" ? "dsl.vbclr" : "dsl.vbset";
      for (int i = 0; i < 2; ++i) {
        if (const CallNode* inv = AsOpCall(call->args[1 - i], "tir.bitwise_not")) {
          return Combined(fused, call->dtype, call->args[i], inv->args[0], call->span);
        }
      }
    }
    if (name == "tir.bitwise_not" && call->args.size() == 1) {
      if (const CallNode* inner = AsOpCall(call->args[0], "tir.bitwise_and")) {
        return Combined("dsl.vnand", call->dtype, inner->args[0], inner->args[1], call->span);
      }
      if (const CallNode* inner = AsOpCall(call->args[0], "tir.bitwise_or")) {
        return Combined("dsl.vnor", call->dtype, inner->args[0], inner->args[1], call->span);
      }
    }
    return e;
  }

  // Masks: bool vectors.
  Expr VisitExpr_(const AndNode* op) override { return MaskLogic(StmtExprMutator::VisitExpr_(op)); }
  Expr VisitExpr_(const OrNode* op) override { return MaskLogic(StmtExprMutator::VisitExpr_(op)); }

  Expr VisitExpr_(const NotNode* op) override {
    Expr e = StmtExprMutator::VisitExpr_(op);
    const auto* n = AsPtr<NotNode>(e);
    if (n == nullptr || !n->dtype.is_vector()) return e;
    if (const auto* a = AsPtr<AndNode>(n->a)) {
      return Combined("dsl.vnand", n->dtype, a->a, a->b, n->span);
    }
    if (const auto* o = AsPtr<OrNode>(n->a)) {
      return Combined("dsl.vnor", n->dtype, o->a, o->b, n->span);
    }
    return e;
  }

  Expr VisitExpr_(const MulNode* op) override {
    Expr e = StmtExprMutator::VisitExpr_(op);
    const auto* m = AsPtr<MulNode>(e);
    if (m == nullptr || !IsNativeIntVector(m->dtype)) return e;
    if (auto wide = WideningProduct(m->a, m->b, m->dtype, m->span)) return *wide;
    for (int i = 0; i < 2; ++i) {
      const Expr& factor = i == 0 ? m->b : m->a;
      const Expr& other = i == 0 ? m->a : m->b;
      if (AsPtr<BroadcastNode>(factor) == nullptr) continue;
      if (auto k = PowerOfTwoShift(factor)) {
        Expr amount = BroadcastNode::Make(IntImmNode::Make(m->dtype.element_of(), *k),
                                          m->dtype.lanes(), m->span);
        return CallNode::Make(m->dtype, OpNode::Get("tir.shift_left"), {other, amount}, m->span);
      }
    }
    return e;
  }

  Expr VisitExpr_(const DivNode* op) override {
    Expr e = StmtExprMutator::VisitExpr_(op);
    const auto* d = AsPtr<DivNode>(e);
    if (d == nullptr || !d->dtype.is_float()) return e;
    auto r = ExactReciprocal(d->b);
    if (!r) return e;
    Expr scalar = FloatImmNode::Make(d->dtype.element_of(), *r, d->b->span);
    return MulNode::Make(d->a, SameShape(d->b, scalar), d->span);
  }

 private:
  bool x3_;

  Expr MaskLogic(Expr e) {
    const auto* bin = AsPtr<BinaryNode>(e);
    if (bin == nullptr || !bin->dtype.is_vector()) return e;
    const char* fused = bin->kind == NodeKind::kAnd ? "dsl.vbclr" : "dsl.vbset";
    for (int i = 0; i < 2; ++i) {
      const Expr& x = i == 0 ? bin->a : bin->b;
      if (const auto* inv = AsPtr<NotNode>(i == 0 ? bin->b : bin->a)) {
        return Combined(fused, bin->dtype, x, inv->a, bin->span);
      }
    }
    return e;
  }
};

PrimFunc CombineInstructionsFunc(PrimFunc f, IRModule, const PassContext&) {
  bool x3 = IsX3Target(f->GetStrAttr("target"));
  Stmt body = Combiner(x3).VisitStmt(f->body);
  if (body == f->body) return f;
  return f->WithBody(body);
}

}  // namespace

Pass CombineInstructions() {
  return CreatePrimFuncPass(CombineInstructionsFunc, 0, "dsl.CombineInstructions");
}
TESSERA_REGISTER_PASS("dsl.CombineInstructions", CombineInstructions);

}  // namespace transform
}  // namespace tessera
