// The canonical form of index expressions: sum(coeff * product of atoms) + base, with like terms
// combined, floordiv/floormod by constants reduced, and a split of a variable recombined.
#include <algorithm>

#include "canonical_simplify.h"
#include "tessera/ir/structural_equal.h"
#include "tessera/ir/structural_hash.h"

namespace tessera {
namespace arith {
namespace canonical {

int CanonicalSimplifier::AtomId(const Expr& e) {
  size_t h = StructuralHash(e);
  for (int id : atom_index_[h]) {
    if (StructuralEqual(atoms_[id], e)) return id;
  }
  atoms_.push_back(e);
  int id = static_cast<int>(atoms_.size()) - 1;
  atom_index_[h].push_back(id);
  return id;
}

// `e` as one term (a constant stays a constant); `e` must already be simplified.
Sum CanonicalSimplifier::AtomSum(const Expr& e) {
  Sum s;
  if (auto c = AsConstInt(e)) {
    s.base = *c;
  } else {
    s.Add({AtomId(e)}, 1);
  }
  return s;
}

// A node that is not one of the canonical arithmetic kinds: simplify it as a whole (which may
// give arithmetic, e.g. a Select with a constant condition).
Sum CanonicalSimplifier::Leaf(const Expr& e) {
  Expr s = ExprMutator::VisitExpr(e);
  if (IsArithKind(s->kind)) return ToSum(s);
  return AtomSum(s);
}

Sum CanonicalSimplifier::ToSum(const Expr& e) {
  switch (e->kind) {
    case NodeKind::kIntImm: {
      Sum s;
      s.base = static_cast<const IntImmNode*>(e.get())->value;
      return s;
    }
    case NodeKind::kAdd: {
      auto* op = static_cast<const AddNode*>(e.get());
      Sum s = ToSum(op->a);
      s.AddSum(ToSum(op->b), 1);
      return s;
    }
    case NodeKind::kSub: {
      auto* op = static_cast<const SubNode*>(e.get());
      Sum s = ToSum(op->a);
      s.AddSum(ToSum(op->b), -1);
      return s;
    }
    case NodeKind::kMul:
      return MulSum(static_cast<const MulNode*>(e.get()));
    case NodeKind::kFloorDiv:
    case NodeKind::kDiv:
    case NodeKind::kFloorMod:
    case NodeKind::kMod:
      return DivModSum(static_cast<const BinaryNode*>(e.get()));
    case NodeKind::kMin:
    case NodeKind::kMax:
      return MinMaxSum(static_cast<const BinaryNode*>(e.get()));
    default:
      return Leaf(e);
  }
}

Sum CanonicalSimplifier::MulSum(const MulNode* op) {
  Sum a = ToSum(op->a), b = ToSum(op->b);
  if (a.is_const()) std::swap(a, b);
  Sum out;
  if (b.is_const()) {
    out.AddSum(a, b.base);
    return out;
  }
  size_t na = a.terms.size() + (a.base != 0), nb = b.terms.size() + (b.base != 0);
  if (na * nb > 16) return AtomSum(MulNode::Make(FromSum(a, op->dtype), FromSum(b, op->dtype)));
  // Distribute: (sum a)(sum b), keeping factor lists sorted so x*y and y*x are one monomial.
  for (const auto& ta : a.terms) {
    for (const auto& tb : b.terms) {
      std::vector<int> f = ta.factors;
      f.insert(f.end(), tb.factors.begin(), tb.factors.end());
      std::sort(f.begin(), f.end());
      // As TVM, which keeps a product of two symbolic values as one term of scale 1: its
      // constant factors sort it as 1 unless the product is multiplied by a constant later.
      int64_t c = ta.coeff * tb.coeff;
      out.Add(f, c, c < 0 ? -c : c);
    }
    out.Add(ta.factors, ta.coeff * b.base);
  }
  for (const auto& tb : b.terms) out.Add(tb.factors, tb.coeff * a.base);
  out.base = a.base * b.base;
  return out;
}

Sum CanonicalSimplifier::MinMaxSum(const BinaryNode* op) {
  DataType t = op->dtype;
  bool is_min = op->kind == NodeKind::kMin;
  Expr a = FromSum(ToSum(op->a), t), b = FromSum(ToSum(op->b), t);
  auto ca = AsConstInt(a), cb = AsConstInt(b);
  if (ca && cb) return AtomSum(Const(t, is_min ? std::min(*ca, *cb) : std::max(*ca, *cb)));
  if (StructuralEqual(a, b)) return ToSum(a);
  // Absorption: min(max(x, y), x) = x and max(min(x, y), x) = x, in either operand order.
  NodeKind dual = is_min ? NodeKind::kMax : NodeKind::kMin;
  for (int side = 0; side < 2; ++side) {
    const Expr& inner = side == 0 ? a : b;
    const Expr& other = side == 0 ? b : a;
    const auto* bin = dynamic_cast<const BinaryNode*>(inner.get());
    if (bin != nullptr && bin->kind == dual &&
        (StructuralEqual(bin->a, other) || StructuralEqual(bin->b, other))) {
      return ToSum(other);
    }
  }
  Sum diff = ToSum(a);
  diff.AddSum(ToSum(b), -1);
  ConstIntBound d = ana_.GetConstIntBound(FromSum(diff, t));
  if (d.max_value <= 0) return ToSum(is_min ? a : b);  // a <= b
  if (d.min_value >= 0) return ToSum(is_min ? b : a);  // a >= b
  if (is_min) return AtomSum(MinNode::Make(a, b, op->span));
  return AtomSum(MaxNode::Make(a, b, op->span));
}

Sum CanonicalSimplifier::DivModSum(const BinaryNode* op) {
  DataType t = op->dtype;
  bool is_div = op->kind == NodeKind::kFloorDiv || op->kind == NodeKind::kDiv;
  bool truncating = op->kind == NodeKind::kDiv || op->kind == NodeKind::kMod;
  Sum num = ToSum(op->a);
  Expr divisor = FromSum(ToSum(op->b), t);
  auto c = AsConstInt(divisor);
  if (c && *c != 0 && num.is_const()) {
    int64_t x = num.base, y = *c, r;
    if (truncating) {
      r = is_div ? x / y : x % y;
    } else {
      r = is_div ? FloorDiv(x, y) : FloorMod(x, y);
    }
    return AtomSum(Const(t, r));
  }
  // Truncating and floor division agree on a non-negative numerator and positive divisor; a
  // numerator that may be negative has the truncating rules.
  if (c && *c > 0 && truncating && tvm_canonical_) {
    Sum out;
    if (NonNegTruncSum(num, *c, is_div, t, &out)) return out;
    return is_div ? TruncDivSum(num, *c, t) : TruncModSum(num, *c, t);
  }
  if (c && *c > 0 && truncating && ana_.GetConstIntBound(FromSum(num, t)).min_value < 0) {
    return is_div ? TruncDivSum(num, *c, t) : TruncModSum(num, *c, t);
  }
  if (!c || *c <= 0) {
    Expr a = FromSum(num, t);
    if (!c) {
      Sum prod;
      if (ProdDivSum(op, t, &prod)) return prod;
    }
    switch (op->kind) {
      case NodeKind::kFloorDiv:
        return AtomSum(FloorDivNode::Make(a, divisor, op->span));
      case NodeKind::kFloorMod:
        return AtomSum(FloorModNode::Make(a, divisor, op->span));
      case NodeKind::kDiv:
        return AtomSum(DivNode::Make(a, divisor, op->span));
      default:
        return AtomSum(ModNode::Make(a, divisor, op->span));
    }
  }
  return is_div ? FloorDivSum(num, *c, t) : FloorModSum(num, *c, t);
}

// The bound of the sum's value as a whole number: each term's bound times its coefficient,
// added without wrapping or clamping to the type (the bound of the sum as an expression clamps
// each node: `x * -1` loses x = INT_MIN, which `INT_MIN - x` has).
ConstIntBound CanonicalSimplifier::SumBound(const Sum& s, DataType t) {
  constexpr int64_t kPos = ConstIntBound::kPosInf, kNeg = ConstIntBound::kNegInf;
  __int128 lo = s.base, hi = s.base;
  bool lo_inf = false, hi_inf = false;
  for (const auto& term : s.terms) {
    if (term.coeff == 0) continue;
    ConstIntBound b = ana_.GetConstIntBound(Product(term.factors, t));
    bool min_inf = b.min_value == kNeg, max_inf = b.max_value == kPos;
    __int128 x = static_cast<__int128>(b.min_value) * term.coeff;
    __int128 y = static_cast<__int128>(b.max_value) * term.coeff;
    if (term.coeff > 0) {
      lo_inf |= min_inf;
      hi_inf |= max_inf;
      lo += x;
      hi += y;
    } else {
      lo_inf |= max_inf;
      hi_inf |= min_inf;
      lo += y;
      hi += x;
    }
  }
  auto clamp = [&](__int128 v) {
    return v >= kPos ? kPos : (v <= kNeg ? kNeg : static_cast<int64_t>(v));
  };
  ConstIntBound out;
  out.min_value = lo_inf ? kNeg : clamp(lo);
  out.max_value = hi_inf ? kPos : clamp(hi);
  return out;
}

static void UnpackProduct(const Expr& e, std::vector<Expr>* out) {
  if (auto* mul = AsPtr<MulNode>(e)) {
    UnpackProduct(mul->a, out);
    UnpackProduct(mul->b, out);
    return;
  }
  out->push_back(e);
}

static Expr MulFolded(const Expr& a, const Expr& b) {
  if (IsConstInt(a, 1)) return b;
  if (IsConstInt(b, 1)) return a;
  return MulNode::Make(a, b);
}

// A symbolic divisor: the factors that the numerator's product and the divisor's product have in
// common cancel (floor and truncating division alike are fixed by the real quotient, which a
// common nonzero factor does not change): div(a*f, b*f) = div(a, b) and mod(a*f, b*f) =
// mod(a, b) * f. As TVM's canonical form: x * 32 * x % (x * z) is (x * 32 % z) * x.
bool CanonicalSimplifier::ProdDivSum(const BinaryNode* op, DataType t, Sum* out) {
  NodeKind kind = op->kind;
  // The factors in the order written (as TVM keeps them), each simplified.
  auto factors = [&](const Expr& e) {
    std::vector<Expr> raw, out;
    UnpackProduct(e, &raw);
    for (const Expr& f : raw) UnpackProduct(FromSum(ToSum(f), t), &out);
    return out;
  };
  std::vector<Expr> lhs = factors(op->a), rhs = factors(op->b);
  int64_t lhs_scale = 1, rhs_scale = 1;
  std::vector<bool> used;
  std::vector<Expr> lhs_prods;
  for (const Expr& e : lhs) {
    if (auto v = AsConstInt(e)) {
      lhs_scale *= *v;
    } else {
      lhs_prods.push_back(e);
    }
  }
  used.assign(lhs_prods.size(), false);
  Expr new_rhs = Const(t, 1), common = Const(t, 1);
  int eliminated = 0;
  for (const Expr& e : rhs) {
    if (auto v = AsConstInt(e)) {
      rhs_scale *= *v;
      continue;
    }
    bool found = false;
    for (size_t i = 0; i < lhs_prods.size() && !found; ++i) {
      if (!used[i] && StructuralEqual(lhs_prods[i], e)) {
        used[i] = true;
        found = true;
      }
    }
    if (found) {
      ++eliminated;
      common = MulFolded(common, e);
    } else {
      new_rhs = MulFolded(new_rhs, e);
    }
  }
  int64_t g = Gcd(lhs_scale, rhs_scale);
  if (g == 0 || (eliminated == 0 && g == 1)) return false;
  lhs_scale /= g;
  rhs_scale /= g;
  Expr new_lhs = Const(t, 1);
  for (size_t i = 0; i < lhs_prods.size(); ++i)
    if (!used[i]) new_lhs = MulFolded(new_lhs, lhs_prods[i]);
  new_lhs = MulFolded(new_lhs, Const(t, lhs_scale));
  new_rhs = MulFolded(new_rhs, Const(t, rhs_scale));
  common = MulFolded(common, Const(t, g));
  bool is_div = kind == NodeKind::kFloorDiv || kind == NodeKind::kDiv;
  if (IsConstInt(new_rhs, 1)) {
    *out = is_div ? ToSum(new_lhs) : Sum();
    return true;
  }
  Expr node;
  switch (kind) {
    case NodeKind::kFloorDiv:
      node = FloorDivNode::Make(new_lhs, new_rhs);
      break;
    case NodeKind::kDiv:
      node = DivNode::Make(new_lhs, new_rhs);
      break;
    case NodeKind::kFloorMod:
      node = FloorModNode::Make(new_lhs, new_rhs);
      break;
    default:
      node = ModNode::Make(new_lhs, new_rhs);
      break;
  }
  if (is_div) {
    *out = AsConstInt(new_rhs) ? ToSum(node) : AtomSum(node);
    return true;
  }
  Expr mod = AsConstInt(new_rhs) ? FromSum(ToSum(node), t) : node;
  if (IsConstInt(mod, 0)) {
    *out = Sum();
  } else if (IsConstInt(common, 1)) {
    *out = ToSum(mod);
  } else {
    *out = AtomSum(MulNode::Make(mod, common));
  }
  return true;
}

// Whether every coefficient and the base of `s` are multiples of c.
static bool DividesAll(const Sum& s, int64_t c) {
  if (s.base % c != 0) return false;
  for (const auto& term : s.terms)
    if (term.coeff % c != 0) return false;
  return true;
}

// The common factor of the coefficients, the base and c (positive).
static int64_t CommonFactor(const Sum& s, int64_t c) {
  int64_t g = Gcd(s.base, c);
  for (const auto& term : s.terms) g = Gcd(g, term.coeff);
  return g;
}

static Sum DivideAll(const Sum& s, int64_t g) {
  Sum out;
  for (const auto& term : s.terms) out.Add(term.factors, term.coeff / g);
  out.base = s.base / g;
  return out;
}

// mod(s*y, c) = s * mod(y, c / s) for a single term of negative coefficient s dividing c (floor
// and truncating modulo alike: both are fixed by the real quotient, which the common factor
// does not change). TVM's canonical form of `-x % 2` is `x % -2 * -1`.
bool CanonicalSimplifier::NegativeScaleMod(const Sum& num, int64_t c, bool floor, DataType t,
                                           Sum* out) {
  if (num.base != 0 || num.terms.size() != 1) return false;
  int64_t s = num.terms[0].coeff;
  if (s >= 0 || c % s != 0) return false;
  Expr atom = Product(num.terms[0].factors, t);
  Expr divisor = Const(t, c / s);
  Expr mod = floor ? Expr(FloorModNode::Make(atom, divisor)) : Expr(ModNode::Make(atom, divisor));
  out->terms.clear();
  out->base = 0;
  out->Add({AtomId(mod)}, s);
  return true;
}

// As TVM's canonical form, truncdiv/truncmod(num, c) for c > 0 where num = D + E (D the terms
// and offset that c divides, E the rest) with D >= 0 and E >= 0: there truncating division is
// floor division, so div = D/c + truncdiv(E, c) and mod = truncmod(E, c), kept truncating; E
// within [0, c) drops out of the quotient and is the remainder. A remainder of a numerator
// known non-negative has its offset reduced modulo c when it stays non-negative:
// (x - 5) % 3 is (x - 2) % 3 for x >= 5.
bool CanonicalSimplifier::NonNegTruncSum(const Sum& num, int64_t c, bool is_div, DataType t,
                                         Sum* out) {
  if (num.is_const()) return false;
  Sum lhs, extra;
  (num.base % c == 0 ? lhs : extra).base = num.base;
  for (const auto& term : num.terms) {
    if (term.coeff % c == 0) {
      lhs.Add(term.factors, term.coeff, term.inner);
    } else {
      extra.Add(term.factors, term.coeff, term.inner);
    }
  }
  if (extra.terms.empty() && extra.base == 0) return false;  // exact: TruncDivSum
  Sum work = num;
  if (ana_.GetConstIntBound(FromSum(lhs, t)).min_value >= 0 &&
      ana_.GetConstIntBound(FromSum(extra, t)).min_value >= 0) {
    ConstIntBound eb = ana_.GetConstIntBound(FromSum(extra, t));
    if (is_div) {
      *out = DivideAll(lhs, c);
      if (extra.is_const()) {
        out->base += extra.base / c;
      } else if (eb.max_value >= c) {
        out->AddSum(TruncDivSum(extra, c, t), 1);
      }
      return true;
    }
    if (extra.is_const()) {
      out->base = extra.base % c;
      return true;
    }
    if (eb.max_value < c) {
      *out = extra;
      return true;
    }
    work = extra;
  } else if (is_div) {
    return false;
  }
  ConstIntBound b = ana_.GetConstIntBound(FromSum(work, t));
  int64_t new_base = work.base % c;
  if (b.min_value >= 0 && b.min_value - work.base + new_base >= 0) {
    work.base = new_base;
    *out = TruncModSum(work, c, t);
    return true;
  }
  if (work.base != num.base || work.terms.size() != num.terms.size()) {
    *out = TruncModSum(work, c, t);
    return true;
  }
  return false;
}

// truncdiv(num, c) for c > 0 and a numerator that may be negative. Every rule keeps the value
// for all signs: exact division, a common factor (truncdiv(g*y, g*k) = truncdiv(y, k)), a
// numerator within (-c, c), and truncdiv(truncdiv(x, c1), c) = truncdiv(x, c1*c).
Sum CanonicalSimplifier::TruncDivSum(const Sum& num, int64_t c, DataType t) {
  if (c == 1) return num;
  if (DividesAll(num, c)) return DivideAll(num, c);
  int64_t g = CommonFactor(num, c);
  if (g > 1) return TruncDivSum(DivideAll(num, g), c / g, t);
  Expr r = FromSum(num, t);
  ConstIntBound b = ana_.GetConstIntBound(r);
  if (b.min_value > -c && b.max_value < c) return Sum();
  if (num.base == 0 && num.terms.size() == 1 && num.terms[0].coeff == 1 &&
      num.terms[0].factors.size() == 1) {
    if (auto* inner = AsPtr<DivNode>(atoms_[num.terms[0].factors[0]])) {
      auto c1 = AsConstInt(inner->b);
      if (c1 && *c1 > 0 && *c1 <= (int64_t{1} << 31) && c <= (int64_t{1} << 31)) {
        Sum x = ToSum(inner->a);
        if (!tvm_canonical_ && ana_.GetConstIntBound(FromSum(x, t)).min_value >= 0)
          return FloorDivSum(x, *c1 * c, t);
        return TruncDivSum(x, *c1 * c, t);
      }
    }
  }
  return AtomSum(DivNode::Make(r, Const(t, c)));
}

// truncmod(num, c) for c > 0 and a numerator that may be negative (truncmod(c*Q + R, c) is not
// truncmod(R, c) when Q and R differ in sign, so only whole multiples vanish).
Sum CanonicalSimplifier::TruncModSum(const Sum& num, int64_t c, DataType t) {
  if (c == 1 || DividesAll(num, c)) return Sum();
  Sum neg;
  if (NegativeScaleMod(num, c, /*floor=*/false, t, &neg)) return neg;
  int64_t g = CommonFactor(num, c);
  if (g > 1) {
    Sum out;
    out.AddSum(TruncModSum(DivideAll(num, g), c / g, t), g);
    return out;
  }
  Expr r = FromSum(num, t);
  ConstIntBound b = ana_.GetConstIntBound(r);
  if (b.min_value > -c && b.max_value < c) return num;
  if (num.base == 0 && num.terms.size() == 1 && num.terms[0].coeff == 1 &&
      num.terms[0].factors.size() == 1) {
    Expr atom = atoms_[num.terms[0].factors[0]];
    // truncmod(truncmod(x, c1), c) = truncmod(x, c) when c divides c1.
    if (auto* inner = AsPtr<ModNode>(atom)) {
      auto c1 = AsConstInt(inner->b);
      if (c1 && *c1 > 0 && *c1 % c == 0) {
        Sum x = ToSum(inner->a);
        if (!tvm_canonical_ && ana_.GetConstIntBound(FromSum(x, t)).min_value >= 0)
          return FloorModSum(x, c, t);
        return TruncModSum(x, c, t);
      }
    }
    // truncmod(truncdiv(x, c1), c) = truncdiv(truncmod(x, c1*c), c1): both sides are odd in x
    // and agree with the floor identity for x >= 0.
    if (auto* inner = AsPtr<DivNode>(atom)) {
      auto c1 = AsConstInt(inner->b);
      if (c1 && *c1 > 0 && *c1 <= (int64_t{1} << 31) && c <= (int64_t{1} << 31)) {
        Sum x = ToSum(inner->a);
        Expr low = FromSum(TruncModSum(x, *c1 * c, t), t);
        return AtomSum(DivNode::Make(low, Const(t, *c1)));
      }
    }
  }
  return AtomSum(ModNode::Make(r, Const(t, c)));
}

// floordiv(c*Q + R, c) = Q + floordiv(R, c), for c > 0.
Sum CanonicalSimplifier::FloorDivSum(const Sum& num, int64_t c, DataType t) {
  if (c == 1) return num;
  Sum quot, rest;
  quot.base = FloorDiv(num.base, c);
  rest.base = FloorMod(num.base, c);
  for (const auto& term : num.terms) {
    if (term.coeff % c == 0) {
      quot.Add(term.factors, term.coeff / c);
    } else {
      rest.Add(term.factors, term.coeff);
    }
  }
  // TVM's canonical form keeps an offset that c does not divide with the rest of the sum.
  if (tvm_canonical_ && num.base % c != 0 && !rest.terms.empty()) {
    quot.base = 0;
    rest.base = num.base;
  }
  // floordiv(g*y + b, g*k) = floordiv(y, k) when 0 <= b < g.
  int64_t g = 0;
  for (const auto& term : rest.terms) g = Gcd(g, term.coeff);
  if (g > 1 && c % g == 0 && rest.base >= 0 && rest.base < g && !rest.terms.empty()) {
    Sum reduced;
    for (const auto& term : rest.terms) reduced.Add(term.factors, term.coeff / g);
    quot.AddSum(FloorDivSum(reduced, c / g, t), 1);
    return quot;
  }
  quot.AddSum(FloorDivRest(rest, c, t), 1);
  return quot;
}

Sum CanonicalSimplifier::FloorDivRest(Sum rest, int64_t c, DataType t) {
  if (rest.is_const()) return AtomSum(Const(t, FloorDiv(rest.base, c)));
  // floordiv(sum(k*y) + b, c) = sum((k // c)*y) + floordiv(sum((k % c)*y) + b, c); taken when
  // the bounds put the second part within one period, so that no division is left (as TVM:
  // (x*360 + 7) // 16 with 0 <= x < 2 is x*22).
  {
    Sum quot, part;
    part.base = rest.base;
    bool split = false;
    for (const auto& term : rest.terms) {
      int64_t q = FloorDiv(term.coeff, c), r = FloorMod(term.coeff, c);
      if (q != 0) {
        quot.Add(term.factors, q);
        split = true;
      }
      if (r != 0) part.Add(term.factors, r);
    }
    if (split) {
      ConstIntBound b = ana_.GetConstIntBound(FromSum(part, t));
      if (b.min_value != ConstIntBound::kNegInf && b.max_value != ConstIntBound::kPosInf &&
          FloorDiv(b.min_value, c) == FloorDiv(b.max_value, c)) {
        quot.base += FloorDiv(b.min_value, c);
        return quot;
      }
    }
  }
  // floordiv(g*y, g*c') = floordiv(y, c').
  int64_t g = Gcd(rest.base, c);
  for (const auto& term : rest.terms) g = Gcd(g, term.coeff);
  if (g > 1) {
    for (auto& term : rest.terms) term.coeff /= g;
    rest.base /= g;
    c /= g;
    if (c == 1) return rest;
  }
  Expr r = FromSum(rest, t);
  ConstIntBound b = ana_.GetConstIntBound(r);
  if (b.min_value != ConstIntBound::kNegInf && b.max_value != ConstIntBound::kPosInf &&
      FloorDiv(b.min_value, c) == FloorDiv(b.max_value, c)) {
    return AtomSum(Const(t, FloorDiv(b.min_value, c)));
  }
  // floordiv(floordiv(x, c1), c) = floordiv(x, c1 * c).
  if (auto* inner = AsPtr<FloorDivNode>(r)) {
    auto c1 = AsConstInt(inner->b);
    if (c1 && *c1 > 0 && *c1 <= (int64_t(1) << 31) && c <= (int64_t(1) << 31)) {
      return FloorDivSum(ToSum(inner->a), *c1 * c, t);
    }
  }
  return AtomSum(FloorDivNode::Make(r, Const(t, c)));
}

// floormod(c*Q + R, c) = floormod(R, c), for c > 0.
Sum CanonicalSimplifier::FloorModSum(const Sum& num, int64_t c, DataType t) {
  if (c == 1) return Sum();
  Sum rest;
  rest.base = FloorMod(num.base, c);
  for (const auto& term : num.terms) {
    if (term.coeff % c != 0) rest.Add(term.factors, term.coeff);
  }
  if (rest.is_const()) return rest;
  Sum neg;
  if (NegativeScaleMod(rest, c, /*floor=*/true, t, &neg)) return neg;
  // floormod(g*y, g*c') = g * floormod(y, c').
  int64_t g = Gcd(rest.base, c);
  for (const auto& term : rest.terms) g = Gcd(g, term.coeff);
  if (g > 1) {
    for (auto& term : rest.terms) term.coeff /= g;
    rest.base /= g;
    Sum inner = FloorModSum(rest, c / g, t);
    Sum out;
    out.AddSum(inner, g);
    return out;
  }
  Expr r = FromSum(rest, t);
  ConstIntBound b = ana_.GetConstIntBound(r);
  if (b.min_value != ConstIntBound::kNegInf && b.max_value != ConstIntBound::kPosInf &&
      FloorDiv(b.min_value, c) == FloorDiv(b.max_value, c)) {
    rest.base -= FloorDiv(b.min_value, c) * c;  // all values lie in one period
    return rest;
  }
  ModularSet m = ana_.GetModularSet(r);
  if (m.coeff % c == 0) return AtomSum(Const(t, FloorMod(m.base, c)));
  // floormod(floormod(x, c1), c) = floormod(x, c) when c divides c1.
  if (auto* inner = AsPtr<FloorModNode>(r)) {
    auto c1 = AsConstInt(inner->b);
    if (c1 && *c1 > 0 && *c1 % c == 0) return FloorModSum(ToSum(inner->a), c, t);
  }
  // As TVM's canonical form: floormod(floordiv(x, c1), c) = floordiv(floormod(x, c1*c), c1)
  // (the bits of x between c1 and c1*c), for c1, c > 0.
  if (auto* inner = AsPtr<FloorDivNode>(r)) {
    auto c1 = AsConstInt(inner->b);
    if (c1 && *c1 > 0 && c > 0 && *c1 <= (int64_t{1} << 31) && c <= (int64_t{1} << 31)) {
      Expr low = FromSum(FloorModSum(ToSum(inner->a), *c1 * c, t), t);
      return AtomSum(FloorDivNode::Make(low, Const(t, *c1)));
    }
  }
  return AtomSum(FloorModNode::Make(r, Const(t, c)));
}

// Whether e is mod(x, c2) of the modulo kind `mod_kind` with c dividing the constant c2; then
// mod(e, c) = mod(x, c) (floor and truncating modulo alike).
static bool IsModOfMultiple(const Expr& e, const Expr& x, int64_t c, NodeKind mod_kind) {
  if (e->kind != mod_kind) return false;
  auto* m = static_cast<const BinaryNode*>(e.get());
  auto c2 = AsConstInt(m->b);
  return c2 && *c2 > 0 && *c2 % c == 0 && StructuralEqual(m->a, x);
}

// div(x, c) * c * k + mod(x, c) * k = x * k: undo a split of x (floor or truncating, the two
// of one kind). Also div(mod(y, c2), c) * c * k + mod(y, c) * k = mod(y, c2) * k when c | c2.
bool CanonicalSimplifier::RecombineDivMod(Sum* s) {
  for (size_t i = 0; i < s->terms.size(); ++i) {
    const auto& ti = s->terms[i];
    if (ti.factors.size() != 1 || ti.coeff == 0) continue;
    const Expr& div_atom = atoms_[ti.factors[0]];
    if (div_atom->kind != NodeKind::kFloorDiv && div_atom->kind != NodeKind::kDiv) continue;
    NodeKind mod_kind =
        div_atom->kind == NodeKind::kFloorDiv ? NodeKind::kFloorMod : NodeKind::kMod;
    auto* div = static_cast<const BinaryNode*>(div_atom.get());
    auto c = AsConstInt(div->b);
    if (!c || *c <= 0 || ti.coeff % *c != 0) continue;
    int64_t k = ti.coeff / *c;
    for (size_t j = 0; j < s->terms.size(); ++j) {
      const auto& tj = s->terms[j];
      if (tj.factors.size() != 1 || tj.coeff != k) continue;
      const Expr& mod_atom = atoms_[tj.factors[0]];
      if (mod_atom->kind != mod_kind) continue;
      auto* mod = static_cast<const BinaryNode*>(mod_atom.get());
      if (!IsConstInt(mod->b, *c)) continue;
      if (!StructuralEqual(mod->a, div->a) && !IsModOfMultiple(div->a, mod->a, *c, mod_kind))
        continue;
      Expr x = div->a;
      s->terms[i].coeff = 0;
      s->terms[j].coeff = 0;
      s->AddSum(ToSum(x), k);
      return true;
    }
  }
  // The same over a symbolic divisor: k * (x // d) * d + k * (x % d) = k * x (d an atom).
  for (size_t i = 0; i < s->terms.size(); ++i) {
    const auto& ti = s->terms[i];
    if (ti.factors.size() != 2 || ti.coeff == 0) continue;
    for (int at = 0; at < 2; ++at) {
      auto* div = AsPtr<FloorDivNode>(atoms_[ti.factors[at]]);
      if (!div || AsConstInt(div->b) || !StructuralEqual(atoms_[ti.factors[1 - at]], div->b))
        continue;
      for (size_t j = 0; j < s->terms.size(); ++j) {
        const auto& tj = s->terms[j];
        if (tj.factors.size() != 1 || tj.coeff != ti.coeff) continue;
        auto* mod = AsPtr<FloorModNode>(atoms_[tj.factors[0]]);
        if (!mod || !StructuralEqual(mod->b, div->b) || !StructuralEqual(mod->a, div->a)) continue;
        // x takes the place of the quotient's term, so that the sum keeps the order in which
        // its terms came (x + y, not y + x, for (x // d) * d + x % d + y).
        Sum merged;
        merged.base = s->base;
        for (size_t t = 0; t < s->terms.size(); ++t) {
          if (t == i) merged.AddSum(ToSum(div->a), ti.coeff);
          if (t == i || t == j) continue;
          merged.Add(s->terms[t].factors, s->terms[t].coeff, s->terms[t].inner);
        }
        *s = std::move(merged);
        return true;
      }
    }
  }
  return false;
}

// TVM's canonical order of the terms of a sum (stable): larger coefficient first (of a product
// of symbolic values, the constant applied to the product, see Sum::Term::inner), then for a
// division/modulo atom the larger divisor ("lower factor"), then the larger modulus ("upper
// factor", infinite for anything but a modulo).
void CanonicalSimplifier::SortTerms(Sum* s) {
  struct Key {
    int64_t coeff, lower, upper;
  };
  auto key = [&](const Sum::Term& t) {
    int64_t scale = t.inner > 1 && t.coeff % t.inner == 0 ? t.coeff / t.inner : t.coeff;
    Key k{scale, 1, ConstIntBound::kPosInf};
    if (t.factors.size() != 1) return k;
    Expr atom = atoms_[t.factors[0]];
    if (atom->kind == NodeKind::kFloorMod || atom->kind == NodeKind::kMod) {
      auto* mod = static_cast<const BinaryNode*>(atom.get());
      if (auto c = AsConstInt(mod->b)) k.upper = *c;
      atom = mod->a;
    }
    if (atom->kind == NodeKind::kFloorDiv || atom->kind == NodeKind::kDiv) {
      if (auto c = AsConstInt(static_cast<const BinaryNode*>(atom.get())->b)) k.lower = *c;
    }
    return k;
  };
  std::stable_sort(s->terms.begin(), s->terms.end(), [&](const Sum::Term& a, const Sum::Term& b) {
    Key ka = key(a), kb = key(b);
    if (ka.coeff != kb.coeff) return ka.coeff > kb.coeff;
    if (ka.lower != kb.lower) return ka.lower > kb.lower;
    return ka.upper > kb.upper;
  });
}

Expr CanonicalSimplifier::Product(const std::vector<int>& factors, DataType t) {
  Expr e = atoms_[factors[0]];
  for (size_t i = 1; i < factors.size(); ++i) e = MulNode::Make(e, atoms_[factors[i]]);
  return e;
}

Expr CanonicalSimplifier::FromSum(Sum s, DataType t) {
  while (RecombineDivMod(&s)) {
  }
  s.Compact();
  SortTerms(&s);
  Expr result;
  // As TVM: positive terms first, a positive offset, then the negative terms subtracted, then
  // a negative offset (terms in sorted order).
  int64_t base = WrapToType(t, s.base);
  for (const auto& term : s.terms) {
    if (term.coeff <= 0) continue;
    Expr e = Product(term.factors, t);
    if (term.coeff != 1) e = MulNode::Make(e, Const(t, term.coeff));
    result = result ? Expr(AddNode::Make(result, e)) : e;
  }
  if (base > 0) result = result ? Expr(AddNode::Make(result, Const(t, base))) : Const(t, base);
  for (const auto& term : s.terms) {
    if (term.coeff >= 0) continue;
    Expr e = Product(term.factors, t);
    if (!result) {
      result = MulNode::Make(e, Const(t, term.coeff));
      continue;
    }
    if (term.coeff != -1) e = MulNode::Make(e, Const(t, -term.coeff));
    result = SubNode::Make(result, e);
  }
  if (!result) return Const(t, base);
  // The type's minimum has no negation in the type: it is added, not subtracted.
  if (base < 0 && WrapToType(t, -base) != -base) return AddNode::Make(result, Const(t, base));
  if (base < 0) return SubNode::Make(result, Const(t, -base));
  return result;
}

}  // namespace canonical
}  // namespace arith
}  // namespace tessera
