// Analyzer::RewriteSimplify: the rule-based simplifier (TVM's rewrite_simplify), which keeps
// the shape of an expression where Simplify would put it into canonical form. Comparisons of
// index expressions are rewritten here by local rules (constants moved to one side, common
// terms cancelled, multiplications and divisions by constants solved for the variable);
// sums and differences by rules of their own (min/max moved inside, common factors taken out,
// div(x, c) * c against x as mod(x, c)), and min/max (absorption, common operands taken out,
// constants solved for); every other node, and the operands, go through Simplify.
#include <algorithm>
#include <cmath>
#include <optional>

#include "canonical_simplify.h"
#include "tessera/arith/analyzer.h"
#include "tessera/ir/structural_equal.h"
#include "tessera/support/error.h"

namespace tessera {
namespace arith {
namespace {

bool IsIndexType(DataType t) { return canonical::IsCanonicalType(t); }

bool IsComparisonKind(NodeKind k) {
  return k == NodeKind::kLT || k == NodeKind::kLE || k == NodeKind::kGT || k == NodeKind::kGE ||
         k == NodeKind::kEQ || k == NodeKind::kNE;
}

bool Same(const Expr& a, const Expr& b) { return a.get() == b.get() || StructuralEqual(a, b); }

/*! \brief Truncating division of constants (C's `/`), as TIR's truncdiv. */
int64_t TruncDiv(int64_t a, int64_t b) { return a / b; }

/*! \brief The bool constant `v`. */
Expr Bool(bool v) { return IntImmNode::Make(DataType::Bool(), v ? 1 : 0); }

/*! \brief The rules; `depth` bounds the re-application of rules to a rewritten result. */
class ComparisonRewriter {
 public:
  explicit ComparisonRewriter(Analyzer& ana) : ana_(ana) {}

  Expr Visit(const Expr& e) {
    if (IsComparisonKind(e->kind)) {
      auto* op = static_cast<const BinaryNode*>(e.get());
      if (op->a->dtype.is_scalar() && IsIndexType(op->a->dtype)) {
        Expr a = Visit(op->a), b = Visit(op->b);
        return Compare(e->kind, a, b, 0);
      }
    }
    if (auto* op = AsPtr<NotNode>(e)) {
      if (IsComparisonKind(op->a->kind)) {
        auto* cmp = static_cast<const BinaryNode*>(op->a.get());
        if (cmp->a->dtype.is_scalar() && IsIndexType(cmp->a->dtype)) {
          return RewriteNot(Visit(op->a), 0);
        }
      }
    }
    if (auto r = FloatVectorZero(e)) return *r;
    if (auto r = VectorRules(e)) return *r;
    if (auto r = ScalarFolds(e)) return *r;
    if (auto r = SelectRules(e)) return *r;
    if (auto r = BroadcastCompare(e)) return *r;
    // x - x is 0 for the other integer types too
    if (auto* op = AsPtr<SubNode>(e); op && op->dtype.is_scalar() && op->dtype.is_integer() &&
                                      !IsIndexType(op->dtype) && Same(op->a, op->b)) {
      return Int(op->dtype, 0);
    }
    NodeKind k = e->kind;
    if (k == NodeKind::kAdd || k == NodeKind::kSub || k == NodeKind::kMul ||
        k == NodeKind::kFloorDiv || k == NodeKind::kFloorMod || k == NodeKind::kMin ||
        k == NodeKind::kMax || k == NodeKind::kDiv || k == NodeKind::kMod) {
      auto* op = static_cast<const BinaryNode*>(e.get());
      if (op->dtype.is_scalar() && IsIndexType(op->dtype)) {
        // the operands are rewritten once; each rule set sees them
        Expr a = Visit(op->a), b = Visit(op->b);
        if (auto r = ModTwoRules(k, a, b)) return *r;
        std::optional<Expr> r;
        if (k == NodeKind::kAdd) r = AddRules(a, b);
        if (k == NodeKind::kSub) r = SubRules(a, b);
        // (x - y) * c is (y - x) * -c for a negative constant c
        if (k == NodeKind::kMul) {
          auto* sub = AsPtr<SubNode>(a);
          auto c = AsConstInt(b);
          if (sub && c && *c < 0 && WrapToType(op->dtype, -*c) == -*c && !AsConstInt(sub->a) &&
              !AsConstInt(sub->b)) {
            r = Expr(MulNode::Make(SubNode::Make(sub->b, sub->a), Int(op->dtype, -*c)));
          }
        }
        if (k == NodeKind::kFloorDiv) r = FloorDivRules(a, b);
        if (k == NodeKind::kFloorMod) r = FloorModRules(a, b);
        if (k == NodeKind::kDiv) r = TruncDivRules(a, b);
        if (k == NodeKind::kMod) r = TruncModRules(a, b);
        if (k == NodeKind::kMin || k == NodeKind::kMax) r = MinMaxRules(a, b, k == NodeKind::kMin);
        if (r) return *r;
        // truncated division stays truncated (Simplify would make it floordiv where it can
        // prove the operands non-negative)
        if (k == NodeKind::kDiv) return Same(a, op->a) && Same(b, op->b) ? e : DivNode::Make(a, b);
        if (k == NodeKind::kMod) return Same(a, op->a) && Same(b, op->b) ? e : ModNode::Make(a, b);
      }
    }
    if (auto* op = AsPtr<AndNode>(e); op && op->dtype.is_scalar()) {
      if (auto r = Logic(Visit(op->a), Visit(op->b), true)) return *r;
    }
    if (auto* op = AsPtr<OrNode>(e); op && op->dtype.is_scalar()) {
      if (auto r = Logic(Visit(op->a), Visit(op->b), false)) return *r;
    }
    return ana_.Simplify(e);
  }

 private:
  // ---- sums and differences: each rule rewrites the node as a whole; where none applies
  // the caller simplifies the original expression ----

  /*! \brief e + c with the constant folded into a constant offset of e (`(x + 2) + -2` is x). */
  Expr AddConst(const Expr& e, int64_t c) {
    DataType t = e->dtype;
    if (c == 0) return e;
    if (auto v = AsConstInt(e)) return Int(t, *v + c);
    if (auto* add = AsPtr<AddNode>(e)) {
      if (auto k = AsConstInt(add->b))
        return *k + c == 0 ? add->a : AddNode::Make(add->a, Int(t, *k + c));
    }
    if (auto* sub = AsPtr<SubNode>(e)) {
      if (auto k = AsConstInt(sub->b)) {
        return c - *k == 0 ? sub->a : AddNode::Make(sub->a, Int(t, c - *k));
      }
    }
    return AddNode::Make(e, Int(t, c));
  }

  /*! \brief Whether e has a constant offset that `+ c` cancels. */
  static bool CancelsOffset(const Expr& e, int64_t c) {
    auto [rest, offset] = ConstantOffset(e);
    auto* sub = AsPtr<SubNode>(e);
    bool neg = sub && AsConstInt(sub->a);
    return !neg && offset != 0 && offset + c == 0;
  }

  /*! \brief x - e when e is x, x + y or y + x (0, 0 - y), else nothing. */
  std::optional<Expr> CancelFrom(const Expr& x, const Expr& e) {
    DataType t = x->dtype;
    if (Same(x, e)) return Int(t, 0);
    if (auto* add = AsPtr<AddNode>(e)) {
      if (Same(add->a, x)) return Expr(SubNode::Make(Int(t, 0), add->b));
      if (Same(add->b, x)) return Expr(SubNode::Make(Int(t, 0), add->a));
    }
    return std::nullopt;
  }
  /*! \brief e - x when e is x, x + y or y + x (0, y), else nothing. */
  std::optional<Expr> Minus(const Expr& e, const Expr& x) {
    if (Same(e, x)) return Int(x->dtype, 0);
    if (auto* add = AsPtr<AddNode>(e)) {
      if (Same(add->a, x)) return add->b;
      if (Same(add->b, x)) return add->a;
    }
    return std::nullopt;
  }
  Expr Diff(const Expr& x, const Expr& e) {
    if (auto r = CancelFrom(x, e)) return *r;
    if (IsConstInt(e, 0)) return x;
    return SubNode::Make(x, e);
  }

  /*! \brief A product `p * q` as its two factors (a bare x is x * 1). */
  static void Factors(const Expr& e, Expr* p, Expr* q, DataType t) {
    if (auto* mul = AsPtr<MulNode>(e)) {
      *p = mul->a, *q = mul->b;
    } else {
      *p = e, *q = IntImmNode::Make(t, 1);
    }
  }

  /*! \brief f * p (+ or -) f * q as (p (+ or -) q) * f, for a factor f common to both terms. */
  std::optional<Expr> CommonFactor(const Expr& a, const Expr& b, bool add) {
    if (!AsPtr<MulNode>(a)) return std::nullopt;
    DataType t = a->dtype;
    Expr a1, a2, b1, b2;
    Factors(a, &a1, &a2, t);
    Factors(b, &b1, &b2, t);
    Expr common, pa, pb;
    if (!AsConstInt(a1) && Same(a1, b1)) {
      common = a1, pa = a2, pb = b2;
    } else if (!AsConstInt(a1) && Same(a1, b2)) {
      common = a1, pa = a2, pb = b1;
    } else if (!AsConstInt(a2) && Same(a2, b1)) {
      common = a2, pa = a1, pb = b2;
    } else if (!AsConstInt(a2) && Same(a2, b2)) {
      common = a2, pa = a1, pb = b1;
    } else {
      return std::nullopt;
    }
    auto ca = AsConstInt(pa), cb = AsConstInt(pb);
    if (ca && cb) return std::nullopt;  // the canonical form folds these
    Expr sum;
    if (cb) {
      sum = AddNode::Make(pa, Int(t, add ? *cb : -*cb));
    } else {
      sum = add ? Expr(AddNode::Make(pa, pb)) : Expr(SubNode::Make(pa, pb));
    }
    return Expr(MulNode::Make(sum, common));
  }

  /*! \brief min(...) + b and max(...) + b by the rules of a min or max plus a value. */
  std::optional<Expr> MinMaxPlus(const Expr& a, const Expr& b) {
    for (bool is_min : {true, false}) {
      const BinaryNode* mm = is_min ? static_cast<const BinaryNode*>(AsPtr<MinNode>(a))
                                    : static_cast<const BinaryNode*>(AsPtr<MaxNode>(a));
      if (!mm) continue;
      auto make = [&](Expr p, Expr q) {
        return is_min ? Expr(MinNode::Make(std::move(p), std::move(q)))
                      : Expr(MaxNode::Make(std::move(p), std::move(q)));
      };
      // max(0, c - x) + x is max(x, c)
      for (int side = 0; side < 2; ++side) {
        const Expr& konst = side ? mm->b : mm->a;
        const Expr& other = side ? mm->a : mm->b;
        auto* sub = AsPtr<SubNode>(other);
        if (IsConstInt(konst, 0) && sub && AsConstInt(sub->a) && Same(sub->b, b)) {
          return make(b, sub->a);
        }
      }
      // min(x, y - z) + z, min(x - z, y) + z
      if (auto* sub = AsPtr<SubNode>(mm->b); sub && Same(sub->b, b) && !AsConstInt(b)) {
        return make(AddNode::Make(mm->a, b), sub->a);
      }
      if (auto* sub = AsPtr<SubNode>(mm->a); sub && Same(sub->b, b) && !AsConstInt(b)) {
        return make(sub->a, AddNode::Make(mm->b, b));
      }
      // min(x, y + c) + -c and the like: the constant taken into both operands
      if (auto c = AsConstInt(b); c && (CancelsOffset(mm->a, *c) || CancelsOffset(mm->b, *c))) {
        return make(AddConst(mm->a, *c), AddConst(mm->b, *c));
      }
      // max(x, y) + min(x, y) is x + y
      const BinaryNode* other = is_min ? static_cast<const BinaryNode*>(AsPtr<MaxNode>(b))
                                       : static_cast<const BinaryNode*>(AsPtr<MinNode>(b));
      if (other && ((Same(mm->a, other->a) && Same(mm->b, other->b)) ||
                    (Same(mm->a, other->b) && Same(mm->b, other->a)))) {
        return Expr(AddNode::Make(mm->a, mm->b));
      }
    }
    return std::nullopt;
  }

  std::optional<Expr> AddRules(const Expr& a, const Expr& b) {
    // a truncated quotient or remainder plus a constant keeps its truncation (Simplify would
    // turn it into floordiv/floormod where the operands are non-negative)
    if ((AsPtr<DivNode>(a) || AsPtr<ModNode>(a)) && AsConstInt(b) && !IsConstInt(b, 0)) {
      return Expr(AddNode::Make(a, b));
    }
    if (auto r = MinMaxPlus(a, b)) return r;
    if (!AsPtr<MinNode>(a) && !AsPtr<MaxNode>(a)) {
      if (auto r = MinMaxPlus(b, a)) return r;
    }
    if (auto r = CommonFactor(a, b, true)) return r;
    // (c - y) + x is (x - y) + c
    if (auto* sub = AsPtr<SubNode>(a); sub && AsConstInt(sub->a) && !AsConstInt(b)) {
      return Expr(AddNode::Make(SubNode::Make(b, sub->b), sub->a));
    }
    // div(x, c) * c + mod(x, c) is x
    if (auto* mul = AsPtr<MulNode>(a)) {
      auto* td = AsPtr<DivNode>(mul->a);
      auto* tm = AsPtr<ModNode>(b);
      if (td && tm && Same(td->a, tm->a) && Same(td->b, mul->b) && Same(tm->b, mul->b))
        return td->a;
      auto* fd = AsPtr<FloorDivNode>(mul->a);
      auto* fm = AsPtr<FloorModNode>(b);
      if (fd && fm && Same(fd->a, fm->a) && Same(fd->b, mul->b) && Same(fm->b, mul->b))
        return fd->a;
    }
    return std::nullopt;
  }

  std::optional<Expr> SubRules(const Expr& a, const Expr& b) {
    DataType t = a->dtype;
    // x - (x + y) is 0 - y
    if (AsPtr<AddNode>(b) && !Same(a, b)) {
      if (auto r = CancelFrom(a, b)) return r;
    }
    // (x + c1) - c2 is x + (c1 - c2)
    if (auto c2 = AsConstInt(b)) {
      if (auto* add = AsPtr<AddNode>(a)) {
        if (auto c1 = AsConstInt(add->b)) return AddConst(add->a, *c1 - *c2);
      }
    }
    for (bool is_min : {true, false}) {
      auto as_mm = [&](const Expr& e) {
        return is_min ? static_cast<const BinaryNode*>(AsPtr<MinNode>(e))
                      : static_cast<const BinaryNode*>(AsPtr<MaxNode>(e));
      };
      auto make = [&](bool min, Expr p, Expr q) {
        return min ? Expr(MinNode::Make(std::move(p), std::move(q)))
                   : Expr(MaxNode::Make(std::move(p), std::move(q)));
      };
      // min(x, y) - min(x + c, y + c) and the like: a constant
      if (auto* ma = as_mm(a)) {
        if (auto* mb = as_mm(b)) {
          for (bool swap : {false, true}) {
            const Expr& p = swap ? mb->b : mb->a;
            const Expr& q = swap ? mb->a : mb->b;
            auto d1 = AsConstInt(ana_.Simplify(SubNode::Make(ma->a, p)));
            auto d2 = AsConstInt(ana_.Simplify(SubNode::Make(ma->b, q)));
            if (d1 && d2 && *d1 == *d2) return Int(t, *d1);
          }
        }
        // min(x + y, z) - x is min(y, z - x); min(x, y) - x is min(0, y - x)
        if (!AsConstInt(b)) {
          if (auto r = Minus(ma->a, b)) return make(is_min, *r, Diff(ma->b, b));
          if (auto r = Minus(ma->b, b)) return make(is_min, Diff(ma->a, b), *r);
        }
      }
      // x - min(x + y, z) is max(0 - y, x - z)
      if (auto* mb = as_mm(b); mb && !AsConstInt(a)) {
        if (CancelFrom(a, mb->a) || CancelFrom(a, mb->b)) {
          return make(!is_min, Diff(a, mb->a), Diff(a, mb->b));
        }
      }
    }
    if (auto r = CommonFactor(a, b, false)) return r;
    // x - div(x, c) * c is mod(x, c); div(x, c) * c - x is 0 - mod(x, c)
    auto div_times = [&](const Expr& e, const Expr& x) -> std::optional<Expr> {
      auto* mul = AsPtr<MulNode>(e);
      if (!mul) return std::nullopt;
      auto c = AsConstInt(mul->b);
      if (!c || *c == 0) return std::nullopt;
      if (auto* td = AsPtr<DivNode>(mul->a); td && Same(td->a, x)) {
        // truncmod(x, -c) is truncmod(x, c)
        if (IsConstInt(td->b, *c)) return Expr(ModNode::Make(x, Int(t, *c < 0 ? -*c : *c)));
      }
      if (auto* fd = AsPtr<FloorDivNode>(mul->a); fd && Same(fd->a, x) && IsConstInt(fd->b, *c)) {
        return Expr(FloorModNode::Make(x, fd->b));
      }
      return std::nullopt;
    };
    if (auto r = div_times(b, a)) return r;
    if (auto r = div_times(a, b)) return Expr(SubNode::Make(Int(t, 0), *r));
    if (auto r = ScaledDivRemainder(a, b, false)) return r;
    if (auto r = ScaledDivRemainder(b, a, true)) return r;
    return std::nullopt;
  }

  /*! \brief x * k - div(x (+ or -) r, c) * (c * k) through the remainder m = mod(x (+/-) r, c):
   *  (m - r) * k or (m + r) * k; `reversed` gives div(...) * (c * k) - x * k. k may be 1 (a
   *  bare x); r is a non-constant term or absent. */
  std::optional<Expr> ScaledDivRemainder(const Expr& a, const Expr& b, bool reversed) {
    DataType t = a->dtype;
    Expr x = a;
    int64_t k = 1;
    if (auto* mul = AsPtr<MulNode>(a)) {
      if (auto c = AsConstInt(mul->b)) x = mul->a, k = *c;
    }
    auto* mul = AsPtr<MulNode>(b);
    if (!mul || k == 0) return std::nullopt;
    auto m = AsConstInt(mul->b);
    if (!m) return std::nullopt;
    Expr num, divisor;
    bool floor = false;
    if (auto* td = AsPtr<DivNode>(mul->a)) {
      num = td->a, divisor = td->b;
    } else if (auto* fd = AsPtr<FloorDivNode>(mul->a)) {
      num = fd->a, divisor = fd->b, floor = true;
    } else {
      return std::nullopt;
    }
    auto c = AsConstInt(divisor);
    if (!c || *c <= 0 || *c * k != *m) return std::nullopt;
    Expr mod = floor ? Expr(FloorModNode::Make(num, divisor)) : Expr(ModNode::Make(num, divisor));
    Expr core;
    bool plain = Same(num, x);
    if (plain) {
      if (k == 1) return std::nullopt;  // the unscaled forms are the rules above
      core = mod;
      if (reversed) return Expr(MulNode::Make(mod, Int(t, -k)));
    } else if (auto* add = AsPtr<AddNode>(num); add && Same(add->a, x) && !AsConstInt(add->b)) {
      core = reversed ? Expr(SubNode::Make(add->b, mod)) : Expr(SubNode::Make(mod, add->b));
    } else if (auto* sub = AsPtr<SubNode>(num); sub && Same(sub->a, x) && !AsConstInt(sub->b)) {
      core = reversed ? Expr(SubNode::Make(SubNode::Make(Int(t, 0), mod), sub->b))
                      : Expr(AddNode::Make(mod, sub->b));
    } else {
      return std::nullopt;
    }
    return k == 1 ? core : Expr(MulNode::Make(core, Int(t, k)));
  }

  // ---- min and max (each rule written for min; max is its mirror) ----

  const BinaryNode* AsMM(const Expr& e, bool is_min) {
    return is_min ? static_cast<const BinaryNode*>(AsPtr<MinNode>(e))
                  : static_cast<const BinaryNode*>(AsPtr<MaxNode>(e));
  }
  static Expr MakeMM(bool is_min, Expr a, Expr b) {
    return is_min ? Expr(MinNode::Make(std::move(a), std::move(b)))
                  : Expr(MaxNode::Make(std::move(a), std::move(b)));
  }
  /*! \brief Whether e occurs in the chain min(min(min(a, b), c), d) of `chain`. */
  bool InChain(const Expr& chain, const Expr& e, bool is_min) {
    if (Same(chain, e)) return true;
    auto* mm = AsMM(chain, is_min);
    return mm && (InChain(mm->a, e, is_min) || Same(mm->b, e));
  }

  std::optional<Expr> MinMaxRules(const Expr& a, const Expr& b, bool is_min) {
    DataType t = a->dtype;
    auto ca = AsConstInt(a), cb = AsConstInt(b);
    if (ca && cb) return Int(t, is_min ? std::min(*ca, *cb) : std::max(*ca, *cb));
    // one side is known to be the smaller (the larger, for max)
    Order o = TryCompare(a, b);
    if (o.le) return is_min ? a : b;
    if (o.ge) return is_min ? b : a;
    // a value already in the chain of the other side
    if (InChain(a, b, is_min)) return a;
    if (InChain(b, a, is_min)) return b;
    auto* ma = AsMM(a, is_min);
    auto* mb = AsMM(b, is_min);
    auto* oa = AsMM(a, !is_min);
    auto* ob = AsMM(b, !is_min);
    // min(max(x, y), min(x, y)) is min(x, y)
    if (oa && mb &&
        ((Same(oa->a, mb->a) && Same(oa->b, mb->b)) ||
         (Same(oa->a, mb->b) && Same(oa->b, mb->a)))) {
      return MakeMM(is_min, oa->a, oa->b);
    }
    // min(x, max(x, y)) is x
    if (ob && (Same(ob->a, a) || Same(ob->b, a))) return a;
    if (oa && (Same(oa->a, b) || Same(oa->b, b))) return b;
    // min(min(x, y), min(x, z)) is min(min(y, z), x)
    if (ma && mb) {
      for (int i = 0; i < 4; ++i) {
        const Expr& p = i & 1 ? ma->b : ma->a;
        const Expr& q = i & 2 ? mb->b : mb->a;
        if (Same(p, q)) {
          return MakeMM(is_min, MakeMM(is_min, i & 1 ? ma->a : ma->b, i & 2 ? mb->a : mb->b), p);
        }
      }
    }
    // min(div(x + (c - 1), c) * c, x) is x (it rounds x up); min(x, floordiv(x, c) * c) is the
    // rounded-down value
    for (int side = 0; side < 2; ++side) {
      const Expr& prod = side ? b : a;
      const Expr& x = side ? a : b;
      auto* mul = AsPtr<MulNode>(prod);
      if (!mul) continue;
      auto c = AsConstInt(mul->b);
      if (!c || *c <= 0) continue;
      auto* div = AsPtr<BinaryNode>(mul->a);
      if (!div || !(div->kind == NodeKind::kDiv || div->kind == NodeKind::kFloorDiv) ||
          !IsConstInt(div->b, *c)) {
        continue;
      }
      auto [rest, offset] = ConstantOffset(div->a);
      auto* neg = AsPtr<SubNode>(div->a);
      if (!(neg && AsConstInt(neg->a)) && offset + 1 == *c && Same(rest, x)) {
        return is_min ? x : prod;
      }
      // min(div(y + (c - 1), c) * c, max(y, c)) is max(y, c) for y >= 1: y rounded up to a
      // multiple of c is at least y and at least c.
      if (auto* mx = is_min ? AsPtr<MaxNode>(x) : nullptr) {
        if (!(neg && AsConstInt(neg->a)) && offset + 1 == *c && IsConstInt(mx->b, *c) &&
            Same(rest, mx->a) && ana_.CanProveGreaterEqual(rest, 1)) {
          return x;
        }
      }
      if (div->kind == NodeKind::kFloorDiv && Same(div->a, x)) return is_min ? prod : x;
    }
    if (ma && ob &&
        ((Same(ob->a, ma->a) && Same(ob->b, ma->b)) ||
         (Same(ob->a, ma->b) && Same(ob->b, ma->a)))) {
      return a;
    }
    // min(max(x, y), max(x, z)) is max(min(y, z), x)
    if (oa && ob) {
      for (int i = 0; i < 4; ++i) {
        const Expr& p = i & 1 ? oa->b : oa->a;
        const Expr& q = i & 2 ? ob->b : ob->a;
        if (Same(p, q)) {
          return MakeMM(!is_min, MakeMM(is_min, i & 1 ? oa->a : oa->b, i & 2 ? ob->a : ob->b), p);
        }
      }
    }
    // min(min(x, c1), c2) is min(x, min(c1, c2))
    if (ma && cb) {
      if (auto c1 = AsConstInt(ma->b)) {
        return MakeMM(is_min, ma->a, Int(t, is_min ? std::min(*c1, *cb) : std::max(*c1, *cb)));
      }
    }
    // min(y + x, z + x) is min(y, z) + x; min(x - y, x - z) is x - max(y, z)
    auto* add_a = AsPtr<AddNode>(a);
    auto* add_b = AsPtr<AddNode>(b);
    if (add_a && add_b) {
      for (int i = 0; i < 4; ++i) {
        const Expr& p = i & 1 ? add_a->a : add_a->b;
        const Expr& q = i & 2 ? add_b->a : add_b->b;
        if (Same(p, q) && !AsConstInt(p)) {
          return Expr(AddNode::Make(
              MakeMM(is_min, i & 1 ? add_a->b : add_a->a, i & 2 ? add_b->b : add_b->a), p));
        }
      }
    }
    auto* sub_a = AsPtr<SubNode>(a);
    auto* sub_b = AsPtr<SubNode>(b);
    if (sub_a && sub_b) {
      if (Same(sub_a->a, sub_b->a)) {
        return Expr(SubNode::Make(sub_a->a, MakeMM(!is_min, sub_a->b, sub_b->b)));
      }
      if (Same(sub_a->b, sub_b->b)) {
        return Expr(SubNode::Make(MakeMM(is_min, sub_a->a, sub_b->a), sub_a->b));
      }
    }
    // min(x * c1, c2) is min(x, c2 / c1) * c1 (max for a negative c1)
    if (cb) {
      if (auto* mul = AsPtr<MulNode>(a)) {
        auto c1 = AsConstInt(mul->b);
        if (c1 && *c1 != 0 && !AsConstInt(mul->a) && *cb % *c1 == 0) {
          bool inner_min = *c1 > 0 ? is_min : !is_min;
          return Expr(MulNode::Make(MakeMM(inner_min, mul->a, Int(t, *cb / *c1)), mul->b));
        }
      }
      // min(c1 - x, c2) is c1 - max(x, c1 - c2) (for c2 != 0)
      if (sub_a && *cb != 0) {
        if (auto c1 = AsConstInt(sub_a->a)) {
          return Expr(SubNode::Make(sub_a->a, MakeMM(!is_min, sub_a->b, Int(t, *c1 - *cb))));
        }
      }
    }
    // min(div(x, c), div(y, c)) is div(min(x, y), c) (max for a negative c)
    for (bool floor : {false, true}) {
      const BinaryNode* da = floor ? static_cast<const BinaryNode*>(AsPtr<FloorDivNode>(a))
                                   : static_cast<const BinaryNode*>(AsPtr<DivNode>(a));
      const BinaryNode* db = floor ? static_cast<const BinaryNode*>(AsPtr<FloorDivNode>(b))
                                   : static_cast<const BinaryNode*>(AsPtr<DivNode>(b));
      if (!da || !db) continue;
      auto c = AsConstInt(da->b);
      if (!c || *c == 0 || !IsConstInt(db->b, *c)) continue;
      Expr inner = MakeMM(*c > 0 ? is_min : !is_min, da->a, db->a);
      return floor ? Expr(FloorDivNode::Make(inner, da->b)) : Expr(DivNode::Make(inner, da->b));
    }
    return std::nullopt;
  }

  // ---- floordiv: identities that hold for every value of the operands ----

  /*! \brief The terms of a sum, left to right (`(a + b) + c` is a, b, c). */
  static void Terms(const Expr& e, std::vector<Expr>* out) {
    if (auto* add = AsPtr<AddNode>(e)) {
      Terms(add->a, out);
      Terms(add->b, out);
      return;
    }
    out->push_back(e);
  }
  static Expr SumOf(const std::vector<Expr>& terms, size_t skip) {
    Expr sum;
    for (size_t i = 0; i < terms.size(); ++i) {
      if (i == skip) continue;
      sum = sum ? Expr(AddNode::Make(sum, terms[i])) : terms[i];
    }
    return sum;
  }

  std::optional<Expr> FloorDivRules(const Expr& a, const Expr& b) {
    DataType t = a->dtype;
    auto c = AsConstInt(b);
    if (c && *c <= 0) return std::nullopt;
    // x * y // y is x
    if (auto* mul = AsPtr<MulNode>(a); mul && !c) {
      if (Same(mul->b, b)) return mul->a;
      if (Same(mul->a, b)) return mul->b;
    }
    // (x // c1 + k) // c2 is (x + c1 * k) // (c1 * c2)
    if (c) {
      auto [rest, k] = ConstantOffset(a);
      auto* neg = AsPtr<SubNode>(a);
      if (auto* inner = AsPtr<FloorDivNode>(rest); inner && !(neg && AsConstInt(neg->a))) {
        auto c1 = AsConstInt(inner->b);
        if (c1 && *c1 > 0) {
          Expr num = k == 0 ? inner->a : AddConst(inner->a, *c1 * k);
          return Expr(FloorDivNode::Make(num, Int(t, *c1 * *c)));
        }
      }
      // (x * c1) // c2: whole multiples, or a smaller divisor
      if (auto* mul = AsPtr<MulNode>(a)) {
        auto c1 = AsConstInt(mul->b);
        if (c1 && *c1 > 0 && *c1 % *c == 0) {
          return *c1 == *c ? mul->a : Expr(MulNode::Make(mul->a, Int(t, *c1 / *c)));
        }
        if (c1 && *c1 > 0 && *c % *c1 == 0) {
          return Expr(FloorDivNode::Make(mul->a, Int(t, *c / *c1)));
        }
      }
      // (x * c1 + rest) // c is x // (c / c1) when c1 divides c and 0 <= rest < c1
      {
        std::vector<Expr> terms;
        Terms(a, &terms);
        for (size_t i = 0; terms.size() > 1 && i < terms.size(); ++i) {
          auto sc = ScaledBy(terms[i]);
          if (!sc || sc->second <= 0 || *c % sc->second != 0) continue;
          ConstIntBound rb = ana_.GetConstIntBound(SumOf(terms, i));
          if (rb.min_value < 0 || rb.max_value >= sc->second) continue;
          if (sc->second == *c) return sc->first;
          return Expr(FloorDivNode::Make(sc->first, Int(t, *c / sc->second)));
        }
      }
      // (x * c1 + k) // c is x * (c1 / c) + k // c when c divides c1
      if (auto* add = AsPtr<AddNode>(a)) {
        auto* mul = AsPtr<MulNode>(add->a);
        // Plain integers: GCC 12 sees a maybe-uninitialized std::optional<int64_t> here.
        bool has_c1 = false;
        int64_t c1 = 0;
        if (mul != nullptr) {
          if (auto v = AsConstInt(mul->b)) {
            has_c1 = true;
            c1 = *v;
          }
        }
        auto k = AsConstInt(add->b);
        if (has_c1 && k && c1 % *c == 0) {
          Expr q = c1 == *c ? mul->a : Expr(MulNode::Make(mul->a, Int(t, c1 / *c)));
          int64_t kq = FloorDiv(*k, *c);
          return kq == 0 ? q : Expr(AddNode::Make(q, Int(t, kq)));
        }
      }
      // (x - x % c) // c is x // c
      if (auto* sub = AsPtr<SubNode>(a)) {
        auto* mod = AsPtr<FloorModNode>(sub->b);
        if (mod && Same(mod->a, sub->a) && IsConstInt(mod->b, *c)) {
          return Expr(FloorDivNode::Make(sub->a, b));
        }
      }
      // min(x * (k * c), y) // c is min(x * k, y // c)
      for (bool is_min : {true, false}) {
        auto* mm = AsMM(a, is_min);
        if (!mm) continue;
        for (int side = 0; side < 2; ++side) {
          const Expr& prod = side ? mm->b : mm->a;
          const Expr& other = side ? mm->a : mm->b;
          auto* mul = AsPtr<MulNode>(prod);
          auto k = mul ? AsConstInt(mul->b) : std::nullopt;
          if (!k || *k % *c != 0) continue;
          Expr scaled = MulNode::Make(mul->a, Int(t, *k / *c));
          Expr divided = FloorDivNode::Make(other, b);
          return side ? MakeMM(is_min, divided, scaled) : MakeMM(is_min, scaled, divided);
        }
      }
      return std::nullopt;
    }
    // (x * z * c1 + y) // (z * c1) is x + y // (z * c1)
    if (auto* add = AsPtr<AddNode>(a); add && AsPtr<MulNode>(b)) {
      auto* div = AsPtr<MulNode>(b);
      auto* outer = AsPtr<MulNode>(add->a);
      auto* inner = outer ? AsPtr<MulNode>(outer->a) : nullptr;
      if (inner && Same(inner->b, div->a) && Same(outer->b, div->b) && AsConstInt(div->b)) {
        return Expr(AddNode::Make(inner->a, FloorDivNode::Make(add->b, b)));
      }
    }
    // (... + d + ...) // d is (...) // d + 1; (... + q * d + ...) // d is q + (...) // d
    std::vector<Expr> terms;
    Terms(a, &terms);
    if (terms.size() < 2) return std::nullopt;
    for (size_t i = 0; i < terms.size(); ++i) {
      if (Same(terms[i], b)) {
        return Expr(AddNode::Make(FloorDivNode::Make(SumOf(terms, i), b), Int(t, 1)));
      }
      auto* mul = AsPtr<MulNode>(terms[i]);
      if (!mul) continue;
      Expr q;
      if (Same(mul->b, b)) q = mul->a;
      if (Same(mul->a, b)) q = mul->b;
      if (!q) continue;
      Expr rest = FloorDivNode::Make(SumOf(terms, i), b);
      return i == 0 ? Expr(AddNode::Make(q, rest)) : Expr(AddNode::Make(rest, q));
    }
    return std::nullopt;
  }

  // ---- truncdiv and truncmod: C division rounds toward zero, so most rules hold only where
  // the operands are known (by their constant bounds) to be non-negative ----

  bool NonNeg(const Expr& e) { return ana_.CanProveGreaterEqual(e, 0); }
  bool NonPos(const Expr& e) { return ana_.CanProveLess(e, 1); }
  /*! \brief e is `x * c` (either order of the factors); gives x and c. */
  static std::optional<std::pair<Expr, int64_t>> ScaledBy(const Expr& e) {
    auto* mul = AsPtr<MulNode>(e);
    if (!mul) return std::nullopt;
    if (auto c = AsConstInt(mul->b)) return std::make_pair(mul->a, *c);
    return std::nullopt;
  }

  std::optional<Expr> TruncDivRules(const Expr& a, const Expr& b) {
    DataType t = a->dtype;
    auto c = AsConstInt(b);
    auto ca = AsConstInt(a);
    if (ca && c && *c != 0) return Int(t, TruncDiv(*ca, *c));
    if (c && *c > 0) {
      int64_t d = *c;
      // (x / c1) / c2 is x / (c1 * c2)
      if (auto* inner = AsPtr<DivNode>(a)) {
        auto c1 = AsConstInt(inner->b);
        if (c1 && *c1 > 0) return Expr(DivNode::Make(inner->a, Int(t, *c1 * d)));
      }
      // (x / c1 + k) / c2 is (x + c1 * k) / (c1 * c2) for x >= 0, k >= 0
      if (auto* add = AsPtr<AddNode>(a)) {
        auto* inner = AsPtr<DivNode>(add->a);
        auto k = AsConstInt(add->b);
        auto c1 = inner ? AsConstInt(inner->b) : std::nullopt;
        if (inner && k && c1 && *c1 > 0 && *k >= 0 && NonNeg(inner->a)) {
          return Expr(DivNode::Make(AddNode::Make(inner->a, Int(t, *c1 * *k)), Int(t, *c1 * d)));
        }
      }
      // (x * c1) / c2: whole multiples, or a smaller divisor
      if (auto s = ScaledBy(a); s && s->second > 0) {
        if (s->second % d == 0) return Expr(MulNode::Make(s->first, Int(t, s->second / d)));
        if (d % s->second == 0) return Expr(DivNode::Make(s->first, Int(t, d / s->second)));
      }
    }
    if (Same(a, b)) return Int(t, 1);
    if (auto* mul = AsPtr<MulNode>(a)) {
      if (Same(mul->a, b) && AsConstInt(mul->b)) return mul->b;
      if (Same(mul->b, b) && AsConstInt(mul->a)) return mul->a;
    }
    if (c && *c > 0) {
      int64_t d = *c;
      // a multiple of d (with a non-negative factor) taken out of a non-negative sum
      auto whole = [&](const Expr& e) -> std::optional<Expr> {
        auto s = ScaledBy(e);
        if (!s || s->second < 0 || s->second % d != 0 || !NonNeg(s->first)) return std::nullopt;
        if (s->second == d) return s->first;
        return Expr(MulNode::Make(s->first, Int(t, s->second / d)));
      };
      auto div = [&](const Expr& e) {
        if (auto v = AsConstInt(e)) return Int(t, TruncDiv(*v, d));
        return Expr(DivNode::Make(e, b));
      };
      if (auto* add = AsPtr<AddNode>(a)) {
        if (auto q = whole(add->a); q && NonNeg(add->b)) {
          Expr rest = div(add->b);
          return IsConstInt(rest, 0) ? *q : Expr(AddNode::Make(*q, rest));
        }
      }
      for (bool is_min : {true, false}) {
        auto* mm = AsMM(a, is_min);
        if (!mm) continue;
        if (auto q = whole(mm->a); q && NonNeg(mm->b)) return MakeMM(is_min, *q, div(mm->b));
      }
      if (auto* add = AsPtr<AddNode>(a)) {
        if (auto q = whole(add->b); q && NonNeg(add->a))
          return Expr(AddNode::Make(div(add->a), *q));
      }
      for (bool is_min : {true, false}) {
        auto* mm = AsMM(a, is_min);
        if (!mm) continue;
        if (auto q = whole(mm->b); q && NonNeg(mm->a)) return MakeMM(is_min, div(mm->a), *q);
      }
      // three terms: (x * c1 +- y) +- z with the multiple first or second
      auto three = [&](const Expr& x_c1, const Expr& rest) -> std::optional<Expr> {
        auto q = whole(x_c1);
        if (!q || !NonNeg(rest)) return std::nullopt;
        return Expr(AddNode::Make(*q, div(Visit(rest))));
      };
      if (auto* add = AsPtr<AddNode>(a)) {
        if (auto* in = AsPtr<AddNode>(add->a)) {
          if (auto r = three(in->a, AddNode::Make(in->b, add->b))) return r;
        }
        if (auto* in = AsPtr<SubNode>(add->a)) {
          if (auto r = three(in->a, SubNode::Make(add->b, in->b))) return r;
        }
      }
      if (auto* sub = AsPtr<SubNode>(a)) {
        if (auto* in = AsPtr<AddNode>(sub->a)) {
          if (auto r = three(in->a, SubNode::Make(in->b, sub->b))) return r;
        }
      }
      if (auto* add = AsPtr<AddNode>(a)) {
        auto* in = AsPtr<AddNode>(add->a);
        auto s = in ? ScaledBy(in->b) : std::nullopt;
        if (in && s && s->second > 0) {
          if (auto r = three(in->b, AddNode::Make(in->a, add->b))) return r;
        }
      }
      // (x + c1) / c2 is x / c2 + c1 / c2
      if (auto* add = AsPtr<AddNode>(a)) {
        auto c1 = AsConstInt(add->b);
        if (c1 && *c1 > 0 && *c1 % d == 0 && NonNeg(add->a)) {
          return Expr(AddNode::Make(div(add->a), Int(t, *c1 / d)));
        }
      }
      return std::nullopt;
    }
    if (c) return std::nullopt;
    const Expr& x = b;
    auto one_more = [&](const Expr& y) -> std::optional<Expr> {
      if (!NonNeg(x) || !NonNeg(y)) return std::nullopt;
      return Expr(AddNode::Make(DivNode::Make(y, x), Int(t, 1)));
    };
    // (x + y) / x is y / x + 1
    if (auto* add = AsPtr<AddNode>(a)) {
      if (Same(add->a, x)) return one_more(add->b);
      if (Same(add->b, x)) return one_more(add->a);
      // ((x + y) + z) / x, ((y + x) + z) / x, (y + (z + x)) / x, (y + (x + z)) / x
      if (auto* in = AsPtr<AddNode>(add->a)) {
        if (Same(in->a, x)) return one_more(AddNode::Make(in->b, add->b));
        if (Same(in->b, x)) return one_more(AddNode::Make(in->a, add->b));
      }
      if (auto* in = AsPtr<AddNode>(add->b)) {
        if (Same(in->b, x)) return one_more(AddNode::Make(add->a, in->a));
        if (Same(in->a, x)) return one_more(AddNode::Make(add->a, in->b));
      }
    }
    // (q * y) / y is q; (q * z + y) / z is q + y / z; (y + q * z) / z is y / z + q
    auto factor = [&](const Expr& e) -> std::optional<Expr> {
      auto* mul = AsPtr<MulNode>(e);
      if (!mul) return std::nullopt;
      if (Same(mul->b, x)) return mul->a;
      if (Same(mul->a, x)) return mul->b;
      return std::nullopt;
    };
    if (auto q = factor(a)) {
      if (NonNeg(*q) && NonNeg(x)) return q;
      return std::nullopt;
    }
    if (auto* add = AsPtr<AddNode>(a)) {
      bool ok = NonNeg(x);
      if (auto q = factor(add->a); q && ok && NonNeg(*q) && NonNeg(add->b)) {
        return Expr(AddNode::Make(*q, DivNode::Make(add->b, x)));
      }
      if (auto q = factor(add->b); q && ok && NonNeg(*q) && NonNeg(add->a)) {
        return Expr(AddNode::Make(DivNode::Make(add->a, x), *q));
      }
    }
    return std::nullopt;
  }

  std::optional<Expr> TruncModRules(const Expr& a, const Expr& b) {
    DataType t = a->dtype;
    auto c = AsConstInt(b);
    if (!c || *c == 0) return std::nullopt;
    if (auto ca = AsConstInt(a)) return Int(t, *ca % *c);
    // (x * c1) % c2 is 0 when c2 divides c1
    if (auto s = ScaledBy(a); s && s->second % *c == 0) return Int(t, 0);
    if (*c > 0) {
      auto mod = [&](const Expr& e) {
        if (auto r = TruncModRules(e, b)) return *r;
        return Expr(ModNode::Make(e, b));
      };
      // multiples of c dropped from a non-negative sum
      if (auto* add = AsPtr<AddNode>(a)) {
        if (auto s = ScaledBy(add->a);
            s && s->second % *c == 0 && NonNeg(add->a) && NonNeg(add->b)) {
          return mod(add->b);
        }
        auto k = AsConstInt(add->b);
        if (k && *k >= 0 && *k % *c == 0 && NonNeg(add->a)) return mod(add->a);
        if (auto s = ScaledBy(add->b);
            s && s->second % *c == 0 && NonNeg(add->a) && NonNeg(add->b)) {
          return mod(add->a);
        }
      }
      // the same with the multiple subtracted: p - q * c1 with q * c1 <= 0
      if (auto* sub = AsPtr<SubNode>(a)) {
        auto s = ScaledBy(sub->b);
        if (s && s->second % *c == 0 && NonPos(sub->b) && NonNeg(sub->a)) return mod(sub->a);
      }
    }
    // x % c is x % -c for truncated division
    if (*c < 0) {
      Expr positive = Int(t, -*c);
      if (auto r = TruncModRules(a, positive)) return r;
      return Expr(ModNode::Make(a, positive));
    }
    // a non-negative value known modulo a multiple of c
    ModularSet m = ana_.GetModularSet(a);
    if (m.coeff % *c == 0 && NonNeg(a)) return Int(t, m.base % *c);
    return std::nullopt;
  }

  // ---- floormod: factors reduced modulo the divisor ----

  std::optional<Expr> FloorModRules(const Expr& a, const Expr& b) {
    DataType t = a->dtype;
    auto c = AsConstInt(b);
    auto mod = [&](const Expr& e) { return Expr(FloorModNode::Make(e, b)); };
    auto times = [&](const Expr& e, int64_t k) {
      return k == 1 ? e : Expr(MulNode::Make(e, Int(t, k)));
    };
    if (!c) {
      // (x * z * c1 + y) % (z * c1) is y % (z * c1) where z * c1 >= 0
      auto* add = AsPtr<AddNode>(a);
      auto* outer = add ? AsPtr<MulNode>(add->a) : nullptr;
      auto* inner = outer ? AsPtr<MulNode>(outer->a) : nullptr;
      auto* div = AsPtr<MulNode>(b);
      if (inner && div && Same(inner->b, div->a) && Same(outer->b, div->b) && NonNeg(b)) {
        return mod(add->b);
      }
      return std::nullopt;
    }
    if (*c <= 0) return std::nullopt;
    int64_t d = *c;
    // (x * c1) % c is (x * (c1 mod c)) % c
    if (auto sc = ScaledBy(a)) {
      int64_t m = FloorMod(sc->second, d);
      if (m == 0) return Int(t, 0);
      if (m != sc->second) return mod(times(sc->first, m));
      return std::nullopt;
    }
    auto* add = AsPtr<AddNode>(a);
    if (!add) return std::nullopt;
    if (auto sc = ScaledBy(add->a)) {
      auto [x, c1] = *sc;
      // (x * c1 + y) % c is (x % (c / c1)) * c1 + y where 0 <= y < c1
      if (c1 > 0 && d % c1 == 0) {
        ConstIntBound yb = ana_.GetConstIntBound(add->b);
        if (yb.min_value >= 0 && yb.max_value < c1) {
          Expr block = FloorModNode::Make(x, Int(t, d / c1));
          return Expr(AddNode::Make(times(block, c1), add->b));
        }
      }
      int64_t m = FloorMod(c1, d);
      if (m == 0) return mod(add->b);
      if (m != c1) return mod(AddNode::Make(times(x, m), add->b));
    }
    if (auto sc = ScaledBy(add->b)) {
      auto [y, c1] = *sc;
      int64_t m = FloorMod(c1, d);
      if (m == 0) return mod(add->a);
      if (m != c1) return mod(AddNode::Make(add->a, times(y, m)));
    }
    return std::nullopt;
  }

  // ---- floor division by 2 and remainders of a value's own remainder (exact identities) ----

  static bool IsFloorOp(const Expr& e, NodeKind k, const Expr& x, int64_t c) {
    auto* op = AsPtr<BinaryNode>(e);
    return op && e->kind == k && Same(op->a, x) && IsConstInt(op->b, c);
  }
  /*! \brief e is x + 1 (as `x + 1`); gives x. */
  static std::optional<Expr> PlusOne(const Expr& e) {
    auto* add = AsPtr<AddNode>(e);
    if (add && IsConstInt(add->b, 1)) return add->a;
    return std::nullopt;
  }
  /*! \brief Whether d is c, -c (a constant) or c * -1. */
  static bool SameUpToSign(const Expr& d, const Expr& c) {
    if (Same(d, c)) return true;
    auto cd = AsConstInt(d), cc = AsConstInt(c);
    if (cd && cc) return *cd == -*cc;
    auto* mul = AsPtr<MulNode>(d);
    return mul && Same(mul->a, c) && IsConstInt(mul->b, -1);
  }

  /*! \brief a (k) b, the operands rewritten already. */
  std::optional<Expr> ModTwoRules(NodeKind k, const Expr& a, const Expr& b) {
    DataType t = a->dtype;
    if (k == NodeKind::kMul) {
      // min(x, y) * max(x, y) is x * y
      auto* mn = AsPtr<MinNode>(a);
      auto* mx = AsPtr<MaxNode>(b);
      if (!mn || !mx) mn = AsPtr<MinNode>(b), mx = AsPtr<MaxNode>(a);
      if (mn && mx &&
          ((Same(mn->a, mx->a) && Same(mn->b, mx->b)) ||
           (Same(mn->a, mx->b) && Same(mn->b, mx->a)))) {
        return Expr(MulNode::Make(mn->a, mn->b));
      }
      return std::nullopt;
    }
    if (k == NodeKind::kMin || k == NodeKind::kMax) return std::nullopt;
    if (k == NodeKind::kDiv || k == NodeKind::kMod) return std::nullopt;
    if (k == NodeKind::kFloorMod) {
      // (x - x % d) % c and (x + (k * x) % d) % c with k = -1 (mod c) are 0, d being c or -c
      if (auto* sub = AsPtr<SubNode>(a)) {
        auto* mod = AsPtr<FloorModNode>(sub->b);
        if (mod && Same(mod->a, sub->a) && SameUpToSign(mod->b, b)) return Int(t, 0);
      }
      if (auto* add = AsPtr<AddNode>(a)) {
        auto* mod = AsPtr<FloorModNode>(add->b);
        auto* mul = mod ? AsPtr<MulNode>(mod->a) : nullptr;
        if (mul && Same(mul->a, add->a) && SameUpToSign(mod->b, b)) {
          auto m = AsConstInt(mul->b);
          auto c = AsConstInt(b);
          if (m && ((c && *c != 0 && FloorMod(*m + 1, *c) == 0) || *m == -1)) return Int(t, 0);
        }
      }
      return std::nullopt;
    }
    if (k == NodeKind::kFloorDiv) {
      // (x % 2 + 1) // 2 is x % 2
      if (auto x = PlusOne(a); x && IsConstInt(b, 2)) {
        auto* mod = AsPtr<FloorModNode>(*x);
        if (mod && IsConstInt(mod->b, 2)) return *x;
      }
      return std::nullopt;
    }
    if (k == NodeKind::kAdd) {
      // x % 2 + (x + 1) % 2 is 1; x // 2 + x % 2 is (x + 1) // 2
      auto* ma = AsPtr<FloorModNode>(a);
      auto* mb = AsPtr<FloorModNode>(b);
      if (ma && mb && IsConstInt(ma->b, 2) && IsConstInt(mb->b, 2)) {
        auto xa = PlusOne(ma->a), xb = PlusOne(mb->a);
        if ((xb && Same(*xb, ma->a)) || (xa && Same(*xa, mb->a))) return Int(t, 1);
      }
      auto* da = AsPtr<FloorDivNode>(a);
      if (da && IsConstInt(da->b, 2) && IsFloorOp(b, NodeKind::kFloorMod, da->a, 2)) {
        return Expr(FloorDivNode::Make(AddNode::Make(da->a, Int(t, 1)), da->b));
      }
      return std::nullopt;
    }
    // (x + 1) // 2 - x // 2 is x % 2; (x + 1) // 2 - x % 2 is x // 2
    auto* da = AsPtr<FloorDivNode>(a);
    if (!da || !IsConstInt(da->b, 2)) return std::nullopt;
    auto x = PlusOne(da->a);
    if (!x) return std::nullopt;
    if (IsFloorOp(b, NodeKind::kFloorDiv, *x, 2)) return Expr(FloorModNode::Make(*x, da->b));
    if (IsFloorOp(b, NodeKind::kFloorMod, *x, 2)) return Expr(FloorDivNode::Make(*x, da->b));
    return std::nullopt;
  }

  // ---- vectors: floordiv/floormod of a ramp by a broadcast constant, min/max of broadcasts ----

  std::optional<Expr> VectorRules(const Expr& e) {
    NodeKind k = e->kind;
    if (k == NodeKind::kMin || k == NodeKind::kMax) {
      // min(min(v, broadcast(p)), broadcast(q)) is min(v, broadcast(min(p, q)))
      auto* op = static_cast<const BinaryNode*>(e.get());
      if (!op->dtype.is_vector()) return std::nullopt;
      bool is_min = k == NodeKind::kMin;
      Expr a = Visit(op->a), b = Visit(op->b);
      auto* inner = AsMM(a, is_min);
      auto* q = AsPtr<BroadcastNode>(b);
      if (!inner || !q) return std::nullopt;
      auto* p = AsPtr<BroadcastNode>(inner->b);
      if (!p || p->lanes != q->lanes) return std::nullopt;
      return MakeMM(is_min, inner->a,
                    BroadcastNode::Make(MakeMM(is_min, p->value, q->value), q->lanes));
    }
    if (k != NodeKind::kFloorDiv && k != NodeKind::kFloorMod && k != NodeKind::kDiv &&
        k != NodeKind::kMod)
      return std::nullopt;
    bool div = k == NodeKind::kFloorDiv || k == NodeKind::kDiv;
    auto* op = static_cast<const BinaryNode*>(e.get());
    auto* ramp = AsPtr<RampNode>(op->a);
    auto* bc = AsPtr<BroadcastNode>(op->b);
    if (bc && op->a->dtype.is_vector() && IsConstInt(bc->value, 0)) {
      TESSERA_THROW_KIND(e->span, ErrorKind::kValue)
          << "rewrite_simplify: " << (div ? "division" : "remainder")
          << " of a vector by a broadcast of the constant zero";
    }
    if (!ramp || !bc || ramp->lanes <= 0 || bc->lanes != ramp->lanes) return std::nullopt;
    auto c = AsConstInt(bc->value);
    auto stride = AsConstInt(ramp->stride);
    if (!c || *c <= 0 || !stride || !IsIndexType(ramp->base->dtype)) return std::nullopt;
    Expr base = Visit(ramp->base);
    DataType t = base->dtype;
    int lanes = ramp->lanes;
    int64_t s = *stride, d = *c;
    auto ramp_of = [&](const Expr& b) { return Expr(RampNode::Make(b, ramp->stride, lanes)); };
    auto bcast = [&](const Expr& v) { return Expr(BroadcastNode::Make(v, lanes)); };
    ModularSet m = ana_.GetModularSet(base);
    if (k == NodeKind::kDiv || k == NodeKind::kMod) {
      // truncated: only where every lane is non-negative, where it is floor division
      if (s < 0 || !NonNeg(base)) return std::nullopt;
      auto q = [&](const Expr& b) {
        if (auto r = TruncDivRules(b, bc->value)) return *r;
        return Expr(DivNode::Make(b, bc->value));
      };
      auto rem = [&](const Expr& b) {
        if (auto r = TruncModRules(b, bc->value)) return *r;
        return Expr(ModNode::Make(b, bc->value));
      };
      if (s % d == 0) {
        return div ? Expr(RampNode::Make(q(base), Int(t, s / d), lanes)) : bcast(rem(base));
      }
      if (m.coeff <= 0 || m.coeff % d != 0) return std::nullopt;
      bool one_block = m.base / d == (m.base + (lanes - 1) * s) / d;
      if (div) return one_block ? std::optional<Expr>(bcast(q(base))) : std::nullopt;
      Expr start = ramp_of(Int(t, m.base % d));
      return one_block ? start : Expr(ModNode::Make(start, op->b));
    }
    // floor division
    auto q = [&](const Expr& b) {
      if (auto r = FloorDivRules(b, bc->value)) return *r;
      return Expr(FloorDivNode::Make(b, bc->value));
    };
    auto rem = [&](const Expr& b) {
      if (auto v = AsConstInt(b)) return Int(t, FloorMod(*v, d));
      return Expr(FloorModNode::Make(b, bc->value));
    };
    // a stride that is a multiple of c: each lane moves by whole blocks
    if (s % d == 0) {
      return div ? Expr(RampNode::Make(q(base), Int(t, s / d), lanes)) : bcast(rem(base));
    }
    // the base is g * k + r (0 <= r < g)
    if (m.coeff <= 0) return std::nullopt;
    int64_t last = m.base + (lanes - 1) * s;
    if (FloorDiv(m.base, d) == FloorDiv(last, d)) {
      // every lane in the block of the base
      if (m.coeff % d == 0) return div ? bcast(q(base)) : ramp_of(rem(Int(t, m.base)));
      if (d % m.coeff == 0 && last < m.coeff) return div ? bcast(q(base)) : ramp_of(rem(base));
    }
    if (!div && m.coeff % d == 0)
      return Expr(FloorModNode::Make(ramp_of(rem(Int(t, m.base))), op->b));
    return std::nullopt;
  }

  // ---- float vectors: adding a broadcast 0.0 keeps the value, multiplying by one gives 0.0
  // (as TVM does; this ignores NaN and infinities) ----

  static bool IsBroadcastFloatZero(const Expr& e) {
    auto* bc = AsPtr<BroadcastNode>(e);
    auto* f = bc ? AsPtr<FloatImmNode>(bc->value) : nullptr;
    return f && f->value == 0.0;
  }
  std::optional<Expr> FloatVectorZero(const Expr& e) {
    if (!e->dtype.is_vector() || !e->dtype.is_float()) return std::nullopt;
    if (auto* add = AsPtr<AddNode>(e); add && IsBroadcastFloatZero(add->b)) return Visit(add->a);
    if (auto* mul = AsPtr<MulNode>(e); mul && IsBroadcastFloatZero(mul->a)) return mul->a;
    return std::nullopt;
  }

  // ---- casts of constants, clz of a constant, selects and broadcasts ----

  /*! \brief Whether the float v is exactly a value of the float type t. */
  static bool Representable(double v, DataType t) {
    if (t.bits() == 64) return true;
    if (t.bits() == 32) return static_cast<double>(static_cast<float>(v)) == v;
    // float16: the integers up to 2048 are exact
    return t.bits() == 16 && !t.is_bfloat16() && v == std::floor(v) && std::fabs(v) <= 2048;
  }

  std::optional<Expr> ScalarFolds(const Expr& e) {
    if (auto* cast = AsPtr<CastNode>(e); cast && cast->dtype.is_scalar()) {
      Expr v = Visit(cast->value);
      if (auto* f = AsPtr<FloatImmNode>(v)) {
        DataType t = cast->dtype;
        if (t.is_bool()) return Bool(f->value != 0);
        if (t.is_float() && !t.is_narrow_float() && Representable(f->value, t)) {
          return Expr(FloatImmNode::Make(t, f->value));
        }
      }
      return std::nullopt;
    }
    if (auto* call = AsPtr<CallNode>(e); call && call->is_op("tir.clz") && call->args.size() == 1) {
      Expr arg = Visit(call->args[0]);
      auto v = AsConstInt(arg);
      if (!v || !arg->dtype.is_integer() || !call->dtype.is_integer()) return std::nullopt;
      int bits = arg->dtype.bits();
      uint64_t u = static_cast<uint64_t>(*v);
      if (bits < 64) u &= (uint64_t{1} << bits) - 1;
      int n = bits;
      while (u) u >>= 1, --n;
      return Int(call->dtype, n);
    }
    return std::nullopt;
  }

  /*! \brief a (op) b for the operands of a select: constants folded, 0 dropped, x - c as
   *  x + -c. */
  Expr Fold(NodeKind k, const Expr& a, const Expr& b) {
    auto ca = AsConstInt(a), cb = AsConstInt(b);
    DataType t = a->dtype;
    if (k == NodeKind::kAdd) {
      if (ca && cb) return Int(t, *ca + *cb);
      if (ca && *ca == 0) return b;
      if (cb) return AddConst(a, *cb);
      return AddNode::Make(a, b);
    }
    if (k == NodeKind::kSub) {
      if (ca && cb) return Int(t, *ca - *cb);
      if (Same(a, b)) return Int(t, 0);
      if (cb) return AddConst(a, -*cb);
      return SubNode::Make(a, b);
    }
    return k == NodeKind::kMin ? Expr(MinNode::Make(a, b)) : Expr(MaxNode::Make(a, b));
  }

  std::optional<Expr> SelectRules(const Expr& e) {
    if (auto* sel = AsPtr<SelectNode>(e)) {
      Expr t = Visit(sel->true_value), f = Visit(sel->false_value);
      if (Same(t, f)) return t;
      return std::nullopt;
    }
    NodeKind k = e->kind;
    if (!(k == NodeKind::kAdd || k == NodeKind::kSub || k == NodeKind::kMin ||
          k == NodeKind::kMax)) {
      return std::nullopt;
    }
    auto* op = static_cast<const BinaryNode*>(e.get());
    if (!op->dtype.is_scalar() || !IsIndexType(op->dtype)) return std::nullopt;
    auto* sa = AsPtr<SelectNode>(op->a);
    auto* sb = AsPtr<SelectNode>(op->b);
    if (sa && sb && Same(sa->condition, sb->condition)) {
      Expr c = Visit(sa->condition);
      return Expr(SelectNode::Make(c, Fold(k, Visit(sa->true_value), Visit(sb->true_value)),
                                   Fold(k, Visit(sa->false_value), Visit(sb->false_value))));
    }
    // select(c, y, z) - y is select(c, 0, z - y)
    if (sa && k == NodeKind::kSub) {
      Expr b = Visit(op->b);
      Expr tv = Visit(sa->true_value), fv = Visit(sa->false_value);
      if (Same(tv, b) || Same(fv, b)) {
        return Expr(SelectNode::Make(Visit(sa->condition), Fold(k, tv, b), Fold(k, fv, b)));
      }
    }
    return std::nullopt;
  }

  /*! \brief broadcast(x) (op) broadcast(y) as broadcast(x (op) y) for comparisons and &&, ||. */
  std::optional<Expr> BroadcastCompare(const Expr& e) {
    NodeKind k = e->kind;
    bool logic = k == NodeKind::kAnd || k == NodeKind::kOr;
    if (!IsComparisonKind(k) && !logic) return std::nullopt;
    auto* op = static_cast<const BinaryNode*>(e.get());
    if (!op->a->dtype.is_vector()) return std::nullopt;
    Expr a = Visit(op->a), b = Visit(op->b);
    auto* ba = AsPtr<BroadcastNode>(a);
    auto* bb = AsPtr<BroadcastNode>(b);
    if (!ba || !bb || ba->lanes != bb->lanes || ba->lanes <= 0) return std::nullopt;
    Expr x = ba->value, y = bb->value;
    Expr inner;
    switch (k) {
      case NodeKind::kGT:
        inner = LTNode::Make(y, x);
        break;
      case NodeKind::kGE:
        inner = LENode::Make(y, x);
        break;
      case NodeKind::kLT:
        inner = LTNode::Make(x, y);
        break;
      case NodeKind::kLE:
        inner = LENode::Make(x, y);
        break;
      case NodeKind::kEQ:
        inner = EQNode::Make(x, y);
        break;
      case NodeKind::kNE:
        inner = NENode::Make(x, y);
        break;
      case NodeKind::kAnd:
        inner = AndNode::Make(x, y);
        break;
      default:
        inner = OrNode::Make(x, y);
        break;
    }
    return Expr(BroadcastNode::Make(inner, ba->lanes));
  }

  /*! \brief `e` as `x` in [lo, hi] when it compares an index expression with a constant. */
  struct Interval {
    Expr x;
    int64_t lo = ConstIntBound::kNegInf, hi = ConstIntBound::kPosInf;
  };
  static std::optional<Interval> AsInterval(const Expr& e) {
    auto* op = AsPtr<BinaryNode>(e);
    if (!op || !(e->kind == NodeKind::kLT || e->kind == NodeKind::kLE || e->kind == NodeKind::kEQ))
      return std::nullopt;
    if (!IsIndexType(op->a->dtype)) return std::nullopt;
    Interval iv;
    auto ca = AsConstInt(op->a), cb = AsConstInt(op->b);
    if (cb && !ca) {
      iv.x = op->a;
      iv.hi = e->kind == NodeKind::kLT ? *cb - 1 : *cb;
      if (e->kind == NodeKind::kEQ) iv.lo = *cb;
    } else if (ca && !cb) {
      iv.x = op->b;
      iv.lo = e->kind == NodeKind::kLT ? *ca + 1 : *ca;
      if (e->kind == NodeKind::kEQ) iv.hi = *ca;
    } else {
      return std::nullopt;
    }
    return iv;
  }

  /*! \brief `a && b` (`a || b` when !is_and) by the rules below, or nothing when none applies
   *  (the caller then simplifies the original expression). */
  std::optional<Expr> Logic(const Expr& a, const Expr& b, bool is_and) {
    auto ca = AsConstInt(a), cb = AsConstInt(b);
    if (ca) return is_and ? (*ca ? b : Bool(false)) : (*ca ? Bool(true) : b);
    if (cb) return is_and ? (*cb ? a : Bool(false)) : (*cb ? Bool(true) : a);
    if (Same(b, RewriteNot(a, kMaxDepth)) || Same(a, RewriteNot(b, kMaxDepth))) {
      return Bool(!is_and);
    }
    auto ia = AsInterval(a), ib = AsInterval(b);
    if (ia && ib && Same(ia->x, ib->x)) {
      if (is_and && std::max(ia->lo, ib->lo) > std::min(ia->hi, ib->hi)) return Bool(false);
      if (!is_and) {
        const Interval& low = ia->lo == ConstIntBound::kNegInf ? *ia : *ib;
        const Interval& high = &low == &*ia ? *ib : *ia;
        if (low.lo == ConstIntBound::kNegInf && high.hi == ConstIntBound::kPosInf &&
            low.hi != ConstIntBound::kPosInf && high.lo <= low.hi + 1) {
          return Bool(true);
        }
      }
    }
    if (is_and) {
      if (auto r = MergeDivMod(a, b)) return r;
      if (auto r = MergeDivMod(b, a)) return r;
      if (auto r = NarrowByFloorMod(a, b)) return r;
      if (auto r = DivisionDefinition(a, b)) return r;
      if (auto r = DivisionDefinition(b, a)) return r;
      if (auto* inner = AsPtr<AndNode>(b))
        return AndNode::Make(AndNode::Make(a, inner->a), inner->b);
    } else if (auto* inner = AsPtr<OrNode>(b)) {
      return OrNode::Make(OrNode::Make(a, inner->a), inner->b);
    }
    return std::nullopt;
  }

  /*! \brief floordiv(x, c) == k together with a comparison of floormod(x, c) with a constant:
   *  the range of x. */
  std::optional<Expr> MergeDivMod(const Expr& a, const Expr& b) {
    auto* eq = AsPtr<EQNode>(a);
    if (!eq) return std::nullopt;
    auto* div = AsPtr<FloorDivNode>(eq->a);
    auto k = AsConstInt(eq->b);
    if (!div || !k) return std::nullopt;
    auto c = AsConstInt(div->b);
    if (!c || *c <= 0) return std::nullopt;
    auto* cmp = AsPtr<BinaryNode>(b);
    if (!cmp || !cmp->is_comparison()) return std::nullopt;
    DataType t = div->a->dtype;
    auto is_mod = [&](const Expr& e) {
      auto* mod = AsPtr<FloorModNode>(e);
      return mod && Same(mod->a, div->a) && IsConstInt(mod->b, *c);
    };
    int64_t base = *k * *c;
    Expr x = div->a;
    auto cm = AsConstInt(cmp->b);
    if (is_mod(cmp->a) && cm) {
      if (b->kind == NodeKind::kEQ) return Expr(EQNode::Make(x, Int(t, base + *cm)));
      if (b->kind == NodeKind::kLT) {
        return Expr(
            AndNode::Make(LENode::Make(Int(t, base), x), LTNode::Make(x, Int(t, base + *cm))));
      }
      if (b->kind == NodeKind::kLE) {
        return Expr(
            AndNode::Make(LENode::Make(Int(t, base), x), LENode::Make(x, Int(t, base + *cm))));
      }
    }
    cm = AsConstInt(cmp->a);
    if (is_mod(cmp->b) && cm) {
      Expr upper = LTNode::Make(x, Int(t, base + *c));
      if (b->kind == NodeKind::kLT)
        return Expr(AndNode::Make(LTNode::Make(Int(t, base + *cm), x), upper));
      if (b->kind == NodeKind::kLE)
        return Expr(AndNode::Make(LENode::Make(Int(t, base + *cm), x), upper));
      if (b->kind == NodeKind::kEQ) return Expr(EQNode::Make(x, Int(t, base + *cm)));
    }
    return std::nullopt;
  }

  /*! \brief x < u && floormod(x, c) < m: the upper bound lowered to the last value whose
   *  remainder is below m. */
  std::optional<Expr> NarrowByFloorMod(const Expr& a, const Expr& b) {
    auto ia = AsInterval(a);
    if (!ia || ia->lo != ConstIntBound::kNegInf || ia->hi == ConstIntBound::kPosInf) {
      return std::nullopt;
    }
    auto* lt = AsPtr<LTNode>(b);
    if (!lt) return std::nullopt;
    auto* mod = AsPtr<FloorModNode>(lt->a);
    auto m = AsConstInt(lt->b);
    if (!mod || !m || !Same(mod->a, ia->x)) return std::nullopt;
    auto c = AsConstInt(mod->b);
    if (!c || *c <= 0 || *m <= 0 || *m > *c) return std::nullopt;
    int64_t last = ia->hi, r = FloorMod(last, *c);
    if (r < *m) return std::nullopt;
    DataType t = ia->x->dtype;
    return Expr(AndNode::Make(LTNode::Make(ia->x, Int(t, last - (r - (*m - 1)) + 1)), b));
  }

  /*! \brief 0 <= x - y * c && x - y * c < c: y is floordiv(x, c). */
  std::optional<Expr> DivisionDefinition(const Expr& a, const Expr& b) {
    auto* le = AsPtr<LENode>(a);
    auto* lt = AsPtr<LTNode>(b);
    if (!le || !lt || !IsConstInt(le->a, 0) || !Same(le->b, lt->a)) return std::nullopt;
    auto* sub = AsPtr<SubNode>(le->b);
    if (!sub) return std::nullopt;
    auto* mul = AsPtr<MulNode>(sub->b);
    auto c = AsConstInt(lt->b);
    if (!mul || !c || *c <= 0 || !IsConstInt(mul->b, *c)) return std::nullopt;
    return Expr(EQNode::Make(mul->a, FloorDivNode::Make(sub->a, mul->b)));
  }

  static constexpr int kMaxDepth = 8;

  Expr Int(DataType t, int64_t v) { return IntImmNode::Make(t, WrapToType(t, v)); }

  /*! \brief a (k) b with a and b rewritten already. */
  Expr Compare(NodeKind k, const Expr& a, const Expr& b, int depth) {
    switch (k) {
      case NodeKind::kGT:
        return Compare(NodeKind::kLT, b, a, depth);
      case NodeKind::kGE:
        return Compare(NodeKind::kLE, b, a, depth);
      case NodeKind::kLT:
        return Lt(a, b, depth);
      case NodeKind::kLE:
        return Le(a, b, depth);
      case NodeKind::kEQ:
        return Eq(a, b, depth);
      default:
        return Ne(a, b, depth);
    }
  }

  /*! \brief What the bounds (and divisibility) of a - b decide: -1 a < b, 0 a == b, 1 a > b;
   *  `le`/`ge`/`ne` report the weaker facts. */
  struct Order {
    bool lt = false, gt = false, eq = false, le = false, ge = false, ne = false;
  };
  Order TryCompare(const Expr& a, const Expr& b) {
    Order o;
    Expr diff = ana_.Simplify(SubNode::Make(a, b));
    if (auto c = AsConstInt(diff)) {
      o.lt = *c<0, o.gt = *c> 0, o.eq = *c == 0;
      o.le = *c <= 0, o.ge = *c >= 0, o.ne = *c != 0;
      return o;
    }
    ConstIntBound bound = ana_.GetConstIntBound(diff);
    o.lt = bound.max_value < 0;
    o.gt = bound.min_value > 0;
    o.le = bound.max_value <= 0;
    o.ge = bound.min_value >= 0;
    o.eq = o.le && o.ge;
    ModularSet m = ana_.GetModularSet(diff);
    o.ne = o.lt || o.gt || (m.coeff != 0 && FloorMod(m.base, m.coeff) != 0) ||
           (m.coeff == 0 && m.base != 0);
    ConstIntBound known = ana_.KnownDifference(a, b);
    if (known.max_value < 0) o.lt = o.le = o.ne = true;
    if (known.min_value > 0) o.gt = o.ge = o.ne = true;
    if (known.max_value <= 0) o.le = true;
    if (known.min_value >= 0) o.ge = true;
    if (o.le && o.ge) o.eq = true;
    if (ana_.KnownNotEqual(a, b)) o.ne = true;
    return o;
  }

  std::optional<Expr> Known(const Expr& e) {
    if (auto v = ana_.MatchLiteral(e)) return Bool(*v);
    return std::nullopt;
  }

  Expr Again(const Expr& e, int depth) {
    if (depth >= kMaxDepth) return e;
    if (auto* op = AsPtr<NotNode>(e)) return RewriteNot(op->a, depth + 1);
    if (IsComparisonKind(e->kind)) {
      auto* op = static_cast<const BinaryNode*>(e.get());
      return Compare(e->kind, op->a, op->b, depth + 1);
    }
    return e;
  }

  /*! \brief !a, with a rewritten already; a negated comparison is rewritten again. */
  Expr RewriteNot(const Expr& a, int depth) {
    if (auto c = AsConstInt(a)) return Bool(*c == 0);
    if (auto* op = AsPtr<LTNode>(a)) {
      if (depth >= kMaxDepth) return LENode::Make(op->b, op->a);
      return Le(op->b, op->a, depth + 1);
    }
    if (auto* op = AsPtr<LENode>(a)) {
      if (depth >= kMaxDepth) return LTNode::Make(op->b, op->a);
      return Lt(op->b, op->a, depth + 1);
    }
    if (auto* op = AsPtr<EQNode>(a)) return NENode::Make(op->a, op->b);
    if (auto* op = AsPtr<NENode>(a)) return EQNode::Make(op->a, op->b);
    if (auto* op = AsPtr<NotNode>(a)) return op->a;
    return ana_.Simplify(NotNode::Make(a));
  }

  Expr Le(const Expr& a, const Expr& b, int depth) {
    if (auto ca = AsConstInt(a), cb = AsConstInt(b); ca && cb) return Bool(*ca <= *cb);
    Expr node = LENode::Make(a, b);
    if (auto k = Known(node)) return *k;
    // The rules of `b < a`, negated: `x * 4 <= 2` becomes `!(0 < x)`, then `x <= 0`.
    Expr inner = Lt(b, a, depth);
    auto* same = AsPtr<LTNode>(inner);
    Expr ret = same && Same(same->a, b) && Same(same->b, a) ? node : RewriteNot(inner, depth);
    if (auto* op = AsPtr<LENode>(ret)) {
      Order o = TryCompare(op->a, op->b);
      if (o.le) return Bool(true);
      if (o.gt) return Bool(false);
      if (o.ne) return Again(LTNode::Make(op->a, op->b), depth);
      if (o.ge) return Again(EQNode::Make(op->a, op->b), depth);
    }
    return ret;
  }

  Expr Eq(const Expr& a, const Expr& b, int depth) {
    if (auto ca = AsConstInt(a), cb = AsConstInt(b); ca && cb) return Bool(*ca == *cb);
    Expr node = EQNode::Make(a, b);
    if (auto k = Known(node)) return *k;
    Order o = TryCompare(a, b);
    if (o.eq) return Bool(true);
    if (o.ne) return Bool(false);
    DataType t = a->dtype;
    // As TVM: the constant goes to the right (`1 == i` is `i == 1`).
    if (AsConstInt(a) && !AsConstInt(b)) return EQNode::Make(b, a);
    if (auto c2 = AsConstInt(b)) {
      if (auto* sub = AsPtr<SubNode>(a)) {
        if (auto c1 = AsConstInt(sub->b)) return EQNode::Make(sub->a, Int(t, *c2 + *c1));
        if (auto c1 = AsConstInt(sub->a)) return EQNode::Make(sub->b, Int(t, *c1 - *c2));
      }
      if (auto* add = AsPtr<AddNode>(a)) {
        if (auto c1 = AsConstInt(add->b)) return EQNode::Make(add->a, Int(t, *c2 - *c1));
      }
      // The canonical form of `c1 - x` is `x * -1 + c1` (or `x * -1`).
      if (auto* add = AsPtr<AddNode>(a)) {
        auto* mul = AsPtr<MulNode>(add->a);
        auto c1 = AsConstInt(add->b);
        if (mul && c1 && IsConstInt(mul->b, -1)) return EQNode::Make(mul->a, Int(t, *c1 - *c2));
      }
      if (auto* mul = AsPtr<MulNode>(a); mul && IsConstInt(mul->b, -1)) {
        return EQNode::Make(mul->a, Int(t, -*c2));
      }
      if (auto* mul = AsPtr<MulNode>(a); mul && *c2 == 0 && !AsConstInt(mul->b)) {
        Expr zero = Int(t, 0);
        return OrNode::Make(Eq(mul->a, zero, depth + 1), Eq(mul->b, zero, depth + 1));
      }
    }
    if (Same(a, b)) return Bool(true);
    return node;
  }

  Expr Ne(const Expr& a, const Expr& b, int depth) {
    if (auto ca = AsConstInt(a), cb = AsConstInt(b); ca && cb) return Bool(*ca != *cb);
    Expr node = NENode::Make(a, b);
    if (auto k = Known(node)) return *k;
    Order o = TryCompare(a, b);
    if (o.ne) return Bool(true);
    if (o.eq) return Bool(false);
    if (o.ge) return Again(LTNode::Make(b, a), depth);
    if (o.le) return Again(LTNode::Make(a, b), depth);
    return RewriteNot(Eq(a, b, depth), depth);
  }

  /*! \brief e as (rest, c) with e == rest + c: `x + c`, `x - c` and `c - x` (rest `x`, as
   *  TVM takes it for merging constants). */
  static std::pair<Expr, int64_t> ConstantOffset(const Expr& e) {
    if (auto* add = AsPtr<AddNode>(e)) {
      if (auto c = AsConstInt(add->b)) return {add->a, *c};
    }
    if (auto* sub = AsPtr<SubNode>(e)) {
      if (auto c = AsConstInt(sub->b)) return {sub->a, -*c};
      if (auto c = AsConstInt(sub->a)) return {sub->b, *c};
    }
    return {e, 0};
  }

  /*! \brief Matches `x * c` with a constant c (not a constant x). */
  static bool MatchMulConst(const Expr& e, Expr* x, int64_t* c) {
    auto* mul = AsPtr<MulNode>(e);
    if (!mul || AsConstInt(mul->a)) return false;
    auto v = AsConstInt(mul->b);
    if (!v) return false;
    *x = mul->a;
    *c = *v;
    return true;
  }

  Expr Lt(const Expr& a, const Expr& b, int depth) {
    if (auto ca = AsConstInt(a), cb = AsConstInt(b); ca && cb) return Bool(*ca < *cb);
    Expr node = LTNode::Make(a, b);
    if (auto k = Known(node)) return *k;
    Order o = TryCompare(a, b);
    if (o.lt) return Bool(true);
    if (o.ge) return Bool(false);
    DataType t = a->dtype;
    auto lt = [&](Expr x, Expr y) {
      return Again(LTNode::Make(std::move(x), std::move(y)), depth);
    };
    auto lt_now = [](Expr x, Expr y) { return Expr(LTNode::Make(std::move(x), std::move(y))); };

    // Cancel a term common to both sides.
    auto* add_a = AsPtr<AddNode>(a);
    auto* add_b = AsPtr<AddNode>(b);
    if (add_a && add_b) {
      if (Same(add_a->a, add_b->a)) return lt_now(add_a->b, add_b->b);
      if (Same(add_a->a, add_b->b)) return lt_now(add_a->b, add_b->a);
      if (Same(add_a->b, add_b->a)) return lt_now(add_a->a, add_b->b);
      if (Same(add_a->b, add_b->b)) return lt_now(add_a->a, add_b->a);
    }
    auto* sub_a = AsPtr<SubNode>(a);
    auto* sub_b = AsPtr<SubNode>(b);
    if (sub_a && sub_b) {
      if (Same(sub_a->b, sub_b->b)) return lt_now(sub_a->a, sub_b->a);
      if (Same(sub_a->a, sub_b->a)) return lt_now(sub_b->b, sub_a->b);
    }
    if (add_b) {
      if (Same(a, add_b->a)) return lt_now(Int(t, 0), add_b->b);
      if (Same(a, add_b->b)) return lt_now(Int(t, 0), add_b->a);
    }
    if (sub_b && Same(a, sub_b->a)) return lt_now(sub_b->b, Int(t, 0));

    // Multiplications by the same constant.
    Expr x, y;
    int64_t c1 = 0, c2 = 0;
    if (MatchMulConst(a, &x, &c1) && MatchMulConst(b, &y, &c2) && c1 == c2 && c1 != 0) {
      return c1 > 0 ? lt_now(x, y) : lt_now(y, x);
    }
    // x * c2 < c1 and c1 < x * c2, solved for x (truncating division of the constants).
    if (auto cb = AsConstInt(b); cb && MatchMulConst(a, &x, &c2) && c2 != 0) {
      c1 = *cb;
      if (c1 > 0 && c2 > 0) return lt_now(x, Int(t, TruncDiv(c1 - 1, c2) + 1));
      if (c1 <= 0 && c2 > 0) return lt_now(x, Int(t, TruncDiv(c1, c2)));
      if (c1 > 0 && c2 < 0) return lt_now(Int(t, TruncDiv(c1 - 1, c2) - 1), x);
      return lt_now(Int(t, TruncDiv(c1, c2)), x);
    }
    if (auto ca = AsConstInt(a); ca && MatchMulConst(b, &x, &c2) && c2 != 0) {
      c1 = *ca;
      if (c1 < 0 && c2 > 0) return lt_now(Int(t, TruncDiv(c1 + 1, c2) - 1), x);
      if (c1 >= 0 && c2 > 0) return lt_now(Int(t, TruncDiv(c1, c2)), x);
      if (c1 < 0 && c2 < 0) return lt_now(x, Int(t, TruncDiv(c1 + 1, c2) + 1));
      return lt_now(x, Int(t, TruncDiv(c1, c2)));
    }
    // Divisions by a positive constant compared with a constant.
    if (auto cb = AsConstInt(b)) {
      if (auto* div = AsPtr<DivNode>(a)) {
        if (auto d = AsConstInt(div->b); d && *d > 0) {
          if (*cb > 0) return lt_now(div->a, Int(t, *d * *cb));
          return lt_now(div->a, Int(t, *d * (*cb - 1) + 1));
        }
      }
      if (auto* div = AsPtr<FloorDivNode>(a)) {
        if (auto d = AsConstInt(div->b); d && *d > 0) return lt_now(div->a, Int(t, *d * *cb));
      }
    }
    if (auto ca = AsConstInt(a)) {
      if (auto* div = AsPtr<DivNode>(b)) {
        if (auto d = AsConstInt(div->b); d && *d > 0) {
          if (*ca >= 0) return lt_now(Int(t, (*ca + 1) * *d - 1), div->a);
          return lt_now(Int(t, *ca * *d), div->a);
        }
      }
      if (auto* div = AsPtr<FloorDivNode>(b)) {
        if (auto d = AsConstInt(div->b); d && *d > 0) {
          return lt_now(Int(t, (*ca + 1) * *d - 1), div->a);
        }
      }
    }
    if (auto r = DivTimesDivisor(a, b, t)) return *r;

    // min/max against a value: split into comparisons of their operands.
    if (auto* mn = AsPtr<MinNode>(a)) {
      return ana_.Simplify(OrNode::Make(Lt(mn->a, b, depth + 1), Lt(mn->b, b, depth + 1)));
    }
    if (auto* mx = AsPtr<MaxNode>(a)) {
      return ana_.Simplify(AndNode::Make(Lt(mx->a, b, depth + 1), Lt(mx->b, b, depth + 1)));
    }
    if (auto* mn = AsPtr<MinNode>(b)) {
      return ana_.Simplify(AndNode::Make(Lt(a, mn->a, depth + 1), Lt(a, mn->b, depth + 1)));
    }
    if (auto* mx = AsPtr<MaxNode>(b)) {
      return ana_.Simplify(OrNode::Make(Lt(a, mx->a, depth + 1), Lt(a, mx->b, depth + 1)));
    }

    // Constants to one side.
    if (auto ca = AsConstInt(a)) {
      if (auto* add = AsPtr<AddNode>(b)) {
        if (auto c = AsConstInt(add->b)) return lt(Int(t, *ca - *c), add->a);
      }
      if (auto* sub = AsPtr<SubNode>(b)) {
        if (auto c = AsConstInt(sub->a)) return lt(sub->b, Int(t, *c - *ca));
        if (auto c = AsConstInt(sub->b)) return lt(Int(t, *ca + *c), sub->a);
      }
      // The canonical form of `c - x`: `x * -1 + c`.
      if (auto* add = AsPtr<AddNode>(b)) {
        auto* mul = AsPtr<MulNode>(add->a);
        auto c = AsConstInt(add->b);
        if (mul && c && IsConstInt(mul->b, -1)) return lt(mul->a, Int(t, *c - *ca));
      }
    }
    if (auto cb = AsConstInt(b)) {
      if (auto* add = AsPtr<AddNode>(a)) {
        if (auto c = AsConstInt(add->b)) return lt(add->a, Int(t, *cb - *c));
      }
      if (auto* sub = AsPtr<SubNode>(a)) {
        if (auto c = AsConstInt(sub->a)) return lt(Int(t, *c - *cb), sub->b);
        if (auto c = AsConstInt(sub->b)) return lt(sub->a, Int(t, *cb + *c));
      }
    }
    if (sub_b) {
      if (auto c = AsConstInt(sub_b->a)) return lt(AddNode::Make(a, sub_b->b), sub_b->a);
    }
    if (sub_a) {
      if (auto c = AsConstInt(sub_a->a)) return lt(sub_a->a, AddNode::Make(b, sub_a->b));
    }

    // x + c1 < y + c2: the constants merged to one side (or `<=` where they differ by one).
    auto [lhs, lhs_offset] = ConstantOffset(a);
    auto [rhs, rhs_offset] = ConstantOffset(b);
    bool a_neg = sub_a && AsConstInt(sub_a->a);
    bool b_neg = sub_b && AsConstInt(sub_b->a);
    if ((lhs_offset != 0 || rhs_offset != 0) && !a_neg && !b_neg) {
      int64_t diff = rhs_offset - lhs_offset;
      if (diff == 0) return lt(lhs, rhs);
      if (diff == 1) return LENode::Make(lhs, rhs);
      if (diff < 0 && rhs_offset != 0) return lt(AddNode::Make(lhs, Int(t, -diff)), rhs);
      if (diff > 0 && lhs_offset != 0) return lt(lhs, AddNode::Make(rhs, Int(t, diff)));
    }
    return node;
  }

  /*! \brief div(x + c2, c1) * c1 < x (+ y, - y), with div floor or truncating: the part of
   *  `x + c2` that the division drops is `mod(x + c2, c1)`. */
  std::optional<Expr> DivTimesDivisor(const Expr& a, const Expr& b, DataType t) {
    Expr num;
    int64_t c1 = 0;
    bool floor = false;
    auto* mul = AsPtr<MulNode>(a);
    if (!mul) return std::nullopt;
    auto c = AsConstInt(mul->b);
    if (!c || *c <= 0) return std::nullopt;
    c1 = *c;
    if (auto* fd = AsPtr<FloorDivNode>(mul->a); fd && IsConstInt(fd->b, c1)) {
      num = fd->a, floor = true;
    } else if (auto* td = AsPtr<DivNode>(mul->a); td && IsConstInt(td->b, c1)) {
      num = td->a;
    } else {
      return std::nullopt;
    }
    Expr mod = floor ? Expr(FloorModNode::Make(num, mul->b)) : Expr(ModNode::Make(num, mul->b));
    auto [x, c2] = ConstantOffset(num);
    if (auto* sub = AsPtr<SubNode>(num); sub && AsConstInt(sub->a)) return std::nullopt;
    Expr c2e = Int(t, c2);
    if (Same(b, x)) return Expr(LTNode::Make(c2e, mod));
    if (auto* add = AsPtr<AddNode>(b); add && Same(add->a, x)) {
      return Expr(LTNode::Make(c2e, AddNode::Make(mod, add->b)));
    }
    if (auto* sub = AsPtr<SubNode>(b); sub && Same(sub->a, x)) {
      if (c2 == 0) return Expr(LTNode::Make(sub->b, mod));
      return Expr(LTNode::Make(sub->b, AddNode::Make(mod, Int(t, -c2))));
    }
    return std::nullopt;
  }

  Analyzer& ana_;
};

}  // namespace

Expr Analyzer::RewriteSimplify(const Expr& e) { return ComparisonRewriter(*this).Visit(e); }

}  // namespace arith
}  // namespace tessera
