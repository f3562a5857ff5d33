// Canonical simplification: int32/int64 index expressions become sums of products with
// combined like terms; floordiv/floormod are reduced with bounds and divisibility; everything
// else gets constant folding and a few algebraic rules.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <unordered_map>

#include "tessera/arith/analyzer.h"
#include "tessera/ir/functor.h"
#include "tessera/ir/structural_equal.h"
#include "tessera/ir/structural_hash.h"

namespace tessera {
namespace arith {
namespace {

// The types whose arithmetic is put into canonical form: the index types.
bool IsCanonicalType(DataType t) {
  return t.is_scalar() && t.is_int() && (t.bits() == 32 || t.bits() == 64);
}

bool IsArithKind(NodeKind k) { return k >= NodeKind::kAdd && k <= NodeKind::kMax; }

int64_t Gcd(int64_t a, int64_t b) { return std::gcd(a < 0 ? -a : a, b < 0 ? -b : b); }

Expr Const(DataType t, int64_t v) { return IntImmNode::Make(t, WrapToType(t, v)); }

/*! \brief sum(coeff * product of atoms) + base; atoms are indices into the simplifier's table. */
struct Sum {
  struct Term {
    std::vector<int> factors;  // sorted atom ids; never empty
    int64_t coeff;
  };
  std::vector<Term> terms;
  int64_t base = 0;

  bool is_const() const {
    for (const Term& t : terms)
      if (t.coeff != 0) return false;
    return true;
  }
  void Add(const std::vector<int>& factors, int64_t coeff) {
    if (coeff == 0) return;
    for (Term& t : terms) {
      if (t.factors == factors) {
        t.coeff += coeff;
        return;
      }
    }
    terms.push_back({factors, coeff});
  }
  void AddSum(const Sum& o, int64_t scale) {
    for (const Term& t : o.terms) Add(t.factors, t.coeff * scale);
    base += o.base * scale;
  }
  void Compact() {
    terms.erase(
        std::remove_if(terms.begin(), terms.end(), [](const Term& t) { return t.coeff == 0; }),
        terms.end());
  }
};

class Simplifier : public ExprMutator {
 public:
  explicit Simplifier(Analyzer& ana) : ana_(ana) {}

  Expr VisitExpr(const Expr& e) override {
    if (IsCanonicalType(e->dtype) && IsArithKind(e->kind)) {
      // Keep the original node (and its spans) when the canonical form is the same program.
      Expr r = FromSum(ToSum(e), e->dtype);
      return StructuralEqual(r, e) ? e : r;
    }
    return ExprMutator::VisitExpr(e);
  }

  // ---- non-canonical arithmetic: vectors, floats, small and unsigned integers ----
  Expr VisitExpr_(const AddNode* op) override { return Arith(op); }
  Expr VisitExpr_(const SubNode* op) override { return Arith(op); }
  Expr VisitExpr_(const MulNode* op) override { return Arith(op); }
  Expr VisitExpr_(const DivNode* op) override { return Arith(op); }
  Expr VisitExpr_(const ModNode* op) override { return Arith(op); }
  Expr VisitExpr_(const FloorDivNode* op) override { return Arith(op); }
  Expr VisitExpr_(const FloorModNode* op) override { return Arith(op); }
  Expr VisitExpr_(const MinNode* op) override { return Arith(op); }
  Expr VisitExpr_(const MaxNode* op) override { return Arith(op); }

  // ---- comparisons: a > b and a >= b become b < a and b <= a ----
  Expr VisitExpr_(const GTNode* op) override {
    return Compare(NodeKind::kLT, VisitExpr(op->b), VisitExpr(op->a), op);
  }
  Expr VisitExpr_(const GENode* op) override {
    return Compare(NodeKind::kLE, VisitExpr(op->b), VisitExpr(op->a), op);
  }
  Expr VisitExpr_(const LTNode* op) override {
    return Compare(NodeKind::kLT, VisitExpr(op->a), VisitExpr(op->b), op);
  }
  Expr VisitExpr_(const LENode* op) override {
    return Compare(NodeKind::kLE, VisitExpr(op->a), VisitExpr(op->b), op);
  }
  Expr VisitExpr_(const EQNode* op) override {
    return Compare(NodeKind::kEQ, VisitExpr(op->a), VisitExpr(op->b), op);
  }
  Expr VisitExpr_(const NENode* op) override {
    return Compare(NodeKind::kNE, VisitExpr(op->a), VisitExpr(op->b), op);
  }

  Expr VisitExpr_(const AndNode* op) override {
    Expr a = VisitExpr(op->a), b = VisitExpr(op->b);
    if (a->dtype.is_scalar()) {
      if (IsConstInt(a, 0) || IsConstInt(b, 0)) return Bool(false);
      if (IsConstInt(a, 1)) return b;
      if (IsConstInt(b, 1)) return a;
    }
    if (a == op->a && b == op->b) return GetRef(op);
    return AndNode::Make(a, b, op->span);
  }
  Expr VisitExpr_(const OrNode* op) override {
    Expr a = VisitExpr(op->a), b = VisitExpr(op->b);
    if (a->dtype.is_scalar()) {
      if (IsConstInt(a, 1) || IsConstInt(b, 1)) return Bool(true);
      if (IsConstInt(a, 0)) return b;
      if (IsConstInt(b, 0)) return a;
    }
    if (a == op->a && b == op->b) return GetRef(op);
    return OrNode::Make(a, b, op->span);
  }
  Expr VisitExpr_(const NotNode* op) override {
    Expr a = VisitExpr(op->a);
    if (auto c = AsConstInt(a)) return Bool(*c == 0);
    if (auto* n = AsPtr<NotNode>(a)) return n->a;
    if (a == op->a) return GetRef(op);
    return NotNode::Make(a, op->span);
  }
  Expr VisitExpr_(const SelectNode* op) override {
    Expr c = VisitExpr(op->condition);
    if (auto v = AsConstInt(c)) return VisitExpr(*v ? op->true_value : op->false_value);
    Expr t = VisitExpr(op->true_value), f = VisitExpr(op->false_value);
    if (c == op->condition && t == op->true_value && f == op->false_value) return GetRef(op);
    return SelectNode::Make(c, t, f, op->span);
  }
  Expr VisitExpr_(const CastNode* op) override {
    Expr v = VisitExpr(op->value);
    if (v->dtype == op->dtype) return v;
    if (op->dtype.is_scalar()) {
      if (auto* i = AsPtr<IntImmNode>(v)) {
        if (op->dtype.is_int_or_bool()) {
          return IntImmNode::Make(op->dtype, WrapToType(op->dtype, i->value), op->span);
        }
        if (op->dtype.is_float()) {
          return FloatImmNode::Make(op->dtype, static_cast<double>(i->value), op->span);
        }
      }
    }
    if (v == op->value) return GetRef(op);
    return CastNode::Make(op->dtype, v, op->span);
  }
  Expr VisitExpr_(const LetNode* op) override {
    Expr value = VisitExpr(op->value);
    if (value->dtype.is_integer() && value->dtype.is_scalar()) ana_.Bind(op->var, value);
    Expr body = VisitExpr(op->body);
    ana_.Unbind(op->var);
    if (value == op->value && body == op->body) return GetRef(op);
    return LetNode::Make(op->var, value, body, op->span);
  }
  Expr VisitExpr_(const CallNode* op) override {
    Expr r = ExprMutator::VisitExpr_(op);
    auto* call = AsPtr<CallNode>(r);
    if (call && call->is_op("tir.if_then_else")) {
      if (auto c = AsConstInt(call->args[0])) return *c ? call->args[1] : call->args[2];
    }
    return r;
  }

 private:
  // ---------------------------------------------------------------------------------------------
  // Canonical form
  // ---------------------------------------------------------------------------------------------

  int AtomId(const Expr& e) {
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
  Sum AtomSum(const Expr& e) {
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
  Sum Leaf(const Expr& e) {
    Expr s = ExprMutator::VisitExpr(e);
    if (IsArithKind(s->kind)) return ToSum(s);
    return AtomSum(s);
  }

  Sum ToSum(const Expr& e) {
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

  Sum MulSum(const MulNode* op) {
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
        out.Add(f, ta.coeff * tb.coeff);
      }
      out.Add(ta.factors, ta.coeff * b.base);
    }
    for (const auto& tb : b.terms) out.Add(tb.factors, tb.coeff * a.base);
    out.base = a.base * b.base;
    return out;
  }

  Sum MinMaxSum(const BinaryNode* op) {
    DataType t = op->dtype;
    bool is_min = op->kind == NodeKind::kMin;
    Expr a = FromSum(ToSum(op->a), t), b = FromSum(ToSum(op->b), t);
    auto ca = AsConstInt(a), cb = AsConstInt(b);
    if (ca && cb) return AtomSum(Const(t, is_min ? std::min(*ca, *cb) : std::max(*ca, *cb)));
    if (StructuralEqual(a, b)) return ToSum(a);
    Sum diff = ToSum(a);
    diff.AddSum(ToSum(b), -1);
    ConstIntBound d = ana_.GetConstIntBound(FromSum(diff, t));
    if (d.max_value <= 0) return ToSum(is_min ? a : b);  // a <= b
    if (d.min_value >= 0) return ToSum(is_min ? b : a);  // a >= b
    if (is_min) return AtomSum(MinNode::Make(a, b, op->span));
    return AtomSum(MaxNode::Make(a, b, op->span));
  }

  Sum DivModSum(const BinaryNode* op) {
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
    // Truncating and floor division agree on a non-negative numerator and positive divisor.
    if (c && *c > 0 && truncating && ana_.GetConstIntBound(FromSum(num, t)).min_value < 0)
      c.reset();
    if (!c || *c <= 0) {
      Expr a = FromSum(num, t);
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

  // floordiv(c*Q + R, c) = Q + floordiv(R, c), for c > 0.
  Sum FloorDivSum(const Sum& num, int64_t c, DataType t) {
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
    // floordiv(g*y + b, g*k) = floordiv(y, k) when 0 <= b < g.
    int64_t g = 0;
    for (const auto& term : rest.terms) g = Gcd(g, term.coeff);
    if (g > 1 && c % g == 0 && rest.base < g && !rest.terms.empty()) {
      Sum reduced;
      for (const auto& term : rest.terms) reduced.Add(term.factors, term.coeff / g);
      quot.AddSum(FloorDivSum(reduced, c / g, t), 1);
      return quot;
    }
    quot.AddSum(FloorDivRest(rest, c, t), 1);
    return quot;
  }

  Sum FloorDivRest(Sum rest, int64_t c, DataType t) {
    if (rest.is_const()) return AtomSum(Const(t, FloorDiv(rest.base, c)));
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
  Sum FloorModSum(const Sum& num, int64_t c, DataType t) {
    if (c == 1) return Sum();
    Sum rest;
    rest.base = FloorMod(num.base, c);
    for (const auto& term : num.terms) {
      if (term.coeff % c != 0) rest.Add(term.factors, term.coeff);
    }
    if (rest.is_const()) return rest;
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
    return AtomSum(FloorModNode::Make(r, Const(t, c)));
  }

  // floordiv(x, c) * c * k + floormod(x, c) * k = x * k: undo a split of x.
  bool RecombineDivMod(Sum* s) {
    for (size_t i = 0; i < s->terms.size(); ++i) {
      const auto& ti = s->terms[i];
      if (ti.factors.size() != 1 || ti.coeff == 0) continue;
      auto* div = AsPtr<FloorDivNode>(atoms_[ti.factors[0]]);
      auto c = div ? AsConstInt(div->b) : std::nullopt;
      if (!c || *c <= 0 || ti.coeff % *c != 0) continue;
      int64_t k = ti.coeff / *c;
      for (size_t j = 0; j < s->terms.size(); ++j) {
        const auto& tj = s->terms[j];
        if (tj.factors.size() != 1 || tj.coeff != k) continue;
        auto* mod = AsPtr<FloorModNode>(atoms_[tj.factors[0]]);
        if (!mod || !IsConstInt(mod->b, *c) || !StructuralEqual(mod->a, div->a)) continue;
        Expr x = div->a;
        s->terms[i].coeff = 0;
        s->terms[j].coeff = 0;
        s->AddSum(ToSum(x), k);
        return true;
      }
    }
    return false;
  }

  // TVM's canonical order of the terms of a sum (stable): larger coefficient first, then for a
  // division/modulo atom the larger divisor ("lower factor"), then the larger modulus ("upper
  // factor", infinite for anything but a modulo).
  void SortTerms(Sum* s) {
    struct Key {
      int64_t coeff, lower, upper;
    };
    auto key = [&](const Sum::Term& t) {
      Key k{t.coeff, 1, ConstIntBound::kPosInf};
      if (t.factors.size() != 1) return k;
      Expr atom = atoms_[t.factors[0]];
      if (auto* mod = AsPtr<FloorModNode>(atom)) {
        if (auto c = AsConstInt(mod->b)) k.upper = *c;
        atom = mod->a;
      }
      if (auto* div = AsPtr<FloorDivNode>(atom)) {
        if (auto c = AsConstInt(div->b)) k.lower = *c;
      }
      return k;
    };
    std::stable_sort(s->terms.begin(), s->terms.end(),
                     [&](const Sum::Term& a, const Sum::Term& b) {
                       Key ka = key(a), kb = key(b);
                       if (ka.coeff != kb.coeff) return ka.coeff > kb.coeff;
                       if (ka.lower != kb.lower) return ka.lower > kb.lower;
                       return ka.upper > kb.upper;
                     });
  }

  Expr Product(const std::vector<int>& factors, DataType t) {
    Expr e = atoms_[factors[0]];
    for (size_t i = 1; i < factors.size(); ++i) e = MulNode::Make(e, atoms_[factors[i]]);
    return e;
  }

  Expr FromSum(Sum s, DataType t) {
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
    if (base < 0) return SubNode::Make(result, Const(t, -base));
    return result;
  }

  // ---------------------------------------------------------------------------------------------
  // Folding for the other types
  // ---------------------------------------------------------------------------------------------

  template <class Node>
  Expr Arith(const Node* op) {
    constexpr NodeKind k = Node::kKind;
    Expr a = VisitExpr(op->a), b = VisitExpr(op->b);
    DataType t = op->dtype;
    if (t.is_vector()) {
      if (Expr v = VectorRule(k, a, b, t)) return v;
    }
    auto ca = AsConstInt(a), cb = AsConstInt(b);
    if (ca && cb && t.is_integer()) {
      int64_t x = *ca, y = *cb;
      bool div = k == NodeKind::kDiv || k == NodeKind::kMod || k == NodeKind::kFloorDiv ||
                 k == NodeKind::kFloorMod;
      if (!(div && y == 0)) {
        int64_t r = 0;
        switch (k) {
          case NodeKind::kAdd:
            r = x + y;
            break;
          case NodeKind::kSub:
            r = x - y;
            break;
          case NodeKind::kMul:
            r = x * y;
            break;
          case NodeKind::kDiv:
            r = x / y;
            break;
          case NodeKind::kMod:
            r = x % y;
            break;
          case NodeKind::kFloorDiv:
            r = FloorDiv(x, y);
            break;
          case NodeKind::kFloorMod:
            r = FloorMod(x, y);
            break;
          case NodeKind::kMin:
            r = std::min(x, y);
            break;
          case NodeKind::kMax:
            r = std::max(x, y);
            break;
          default:
            break;
        }
        return IntImmNode::Make(t, WrapToType(t, r), op->span);
      }
    }
    auto* fa = AsPtr<FloatImmNode>(a);
    auto* fb = AsPtr<FloatImmNode>(b);
    if (fa && fb) {
      double x = fa->value, y = fb->value, r;
      switch (k) {
        case NodeKind::kAdd:
          r = x + y;
          break;
        case NodeKind::kSub:
          r = x - y;
          break;
        case NodeKind::kMul:
          r = x * y;
          break;
        case NodeKind::kDiv:
          r = x / y;
          break;
        case NodeKind::kMin:
          r = std::min(x, y);
          break;
        case NodeKind::kMax:
          r = std::max(x, y);
          break;
        default:
          goto identities;
      }
      if (t.bits() == 32) r = static_cast<float>(r);
      return FloatImmNode::Make(t, r, op->span);
    }
  identities:
    if (t.is_integer()) {
      if ((k == NodeKind::kAdd || k == NodeKind::kSub) && IsConstInt(b, 0)) return a;
      if (k == NodeKind::kAdd && IsConstInt(a, 0)) return b;
      if (k == NodeKind::kMul && IsConstInt(b, 1)) return a;
      if (k == NodeKind::kMul && IsConstInt(a, 1)) return b;
      if (k == NodeKind::kMul && (IsConstInt(a, 0) || IsConstInt(b, 0))) {
        return MakeConst(t, int64_t(0), op->span);
      }
      if ((k == NodeKind::kDiv || k == NodeKind::kFloorDiv) && IsConstInt(b, 1)) return a;
    }
    if (a == op->a && b == op->b) return GetRef(op);
    return Node::Make(a, b, op->span);
  }

  // Ramp and Broadcast arithmetic: lane-wise operations on them stay Ramps and Broadcasts.
  Expr VectorRule(NodeKind k, const Expr& a, const Expr& b, DataType t) {
    auto* ba = AsPtr<BroadcastNode>(a);
    auto* bb = AsPtr<BroadcastNode>(b);
    auto* ra = AsPtr<RampNode>(a);
    auto* rb = AsPtr<RampNode>(b);
    int lanes = t.lanes();
    auto bin = [&](NodeKind kind, const Expr& x, const Expr& y) -> Expr {
      switch (kind) {
        case NodeKind::kAdd:
          return AddNode::Make(x, y);
        case NodeKind::kSub:
          return SubNode::Make(x, y);
        case NodeKind::kMul:
          return MulNode::Make(x, y);
        case NodeKind::kDiv:
          return DivNode::Make(x, y);
        case NodeKind::kMod:
          return ModNode::Make(x, y);
        case NodeKind::kFloorDiv:
          return FloorDivNode::Make(x, y);
        case NodeKind::kFloorMod:
          return FloorModNode::Make(x, y);
        case NodeKind::kMin:
          return MinNode::Make(x, y);
        case NodeKind::kMax:
          return MaxNode::Make(x, y);
        default:
          return nullptr;
      }
    };
    auto ramp = [&](const Expr& base, const Expr& stride) -> Expr {
      Expr s = VisitExpr(stride);
      if (IsConstInt(s, 0)) return BroadcastNode::Make(VisitExpr(base), lanes);
      return RampNode::Make(VisitExpr(base), s, lanes);
    };
    if (ba && bb) {
      Expr v = bin(k, ba->value, bb->value);
      return v ? Expr(BroadcastNode::Make(VisitExpr(v), lanes)) : nullptr;
    }
    if (!t.is_integer()) return nullptr;
    if (k == NodeKind::kAdd || k == NodeKind::kSub) {
      if (ra && rb) return ramp(bin(k, ra->base, rb->base), bin(k, ra->stride, rb->stride));
      if (ra && bb) return ramp(bin(k, ra->base, bb->value), ra->stride);
      if (ba && rb) {
        Expr stride = k == NodeKind::kAdd ? rb->stride
                                          : SubNode::Make(Const(rb->stride->dtype, 0), rb->stride);
        return ramp(bin(k, ba->value, rb->base), stride);
      }
    }
    if (k == NodeKind::kMul) {
      if (ra && bb)
        return ramp(MulNode::Make(ra->base, bb->value), MulNode::Make(ra->stride, bb->value));
      if (ba && rb)
        return ramp(MulNode::Make(ba->value, rb->base), MulNode::Make(ba->value, rb->stride));
    }
    // floordiv/floormod of a ramp that stays inside one period of the divisor.
    if ((k == NodeKind::kFloorDiv || k == NodeKind::kFloorMod) && ra && bb) {
      auto c = AsConstInt(bb->value);
      auto s = AsConstInt(ra->stride);
      if (c && s && *c > 0 && *s >= 0) {
        // base = coeff * k + b: base mod c is b mod g plus a multiple of g = gcd(coeff, c), so
        // the lanes stay in one period when (b mod g) + s * (lanes - 1) < g.
        ModularSet m = ana_.GetModularSet(ra->base);
        int64_t g = std::gcd(m.coeff, *c);
        if (FloorMod(m.base, g) + *s * (lanes - 1) < g) {
          if (k == NodeKind::kFloorDiv) {
            return BroadcastNode::Make(VisitExpr(FloorDivNode::Make(ra->base, bb->value)), lanes);
          }
          return ramp(FloorModNode::Make(ra->base, bb->value), ra->stride);
        }
      }
    }
    return nullptr;
  }

  Expr Compare(NodeKind k, Expr a, Expr b, const BinaryNode* orig) {
    DataType t = a->dtype;
    if (t.is_scalar() && t.is_integer()) {
      auto x = AsConstInt(a), y = AsConstInt(b);
      if (x && y) return Bool(Decide(k, *x < *y ? -1 : (*x == *y ? 0 : 1)));
      if (IsCanonicalType(t)) {
        Sum diff = ToSum(a);
        diff.AddSum(ToSum(b), -1);
        Expr d = FromSum(diff, t);
        ConstIntBound bound = ana_.GetConstIntBound(d);
        switch (k) {
          case NodeKind::kLT:
            if (bound.max_value < 0) return Bool(true);
            if (bound.min_value >= 0) return Bool(false);
            break;
          case NodeKind::kLE:
            if (bound.max_value <= 0) return Bool(true);
            if (bound.min_value > 0) return Bool(false);
            break;
          case NodeKind::kEQ:
          case NodeKind::kNE: {
            bool ne = k == NodeKind::kNE;
            if (bound.is_const()) return Bool((bound.min_value == 0) != ne);
            ModularSet m = ana_.GetModularSet(d);
            if (bound.min_value > 0 || bound.max_value < 0 || (m.coeff > 0 && m.base != 0)) {
              return Bool(ne);
            }
            break;
          }
          default:
            break;
        }
        // As TVM's rewrite rules x + c1 < c2 -> x < c2 - c1 and c1 < x + c2 -> c1 - c2 < x:
        // the constant offset of a sum compared with a constant moves to the constant.
        if (x || y) {
          Sum sum = ToSum(x ? b : a);
          if (sum.base != 0 && !sum.is_const()) {
            int64_t c = (x ? *x : *y) - sum.base;
            sum.base = 0;
            Expr moved = FromSum(sum, t);
            Expr constant = Const(t, c);
            a = x ? constant : moved;
            b = x ? moved : constant;
          }
        }
      }
    } else if (t.is_scalar()) {
      auto x = AsConstInt(a), y = AsConstInt(b);
      if (x && y) return Bool(Decide(k, *x < *y ? -1 : (*x == *y ? 0 : 1)));
    }
    bool same = (orig->kind == k) && a == orig->a && b == orig->b;
    if (same) return GetRef(orig);
    switch (k) {
      case NodeKind::kLT:
        return LTNode::Make(a, b, orig->span);
      case NodeKind::kLE:
        return LENode::Make(a, b, orig->span);
      case NodeKind::kEQ:
        return EQNode::Make(a, b, orig->span);
      default:
        return NENode::Make(a, b, orig->span);
    }
  }

  static bool Decide(NodeKind k, int sign) {
    switch (k) {
      case NodeKind::kLT:
        return sign < 0;
      case NodeKind::kLE:
        return sign <= 0;
      case NodeKind::kEQ:
        return sign == 0;
      default:
        return sign != 0;
    }
  }

  Analyzer& ana_;
  std::vector<Expr> atoms_;
  std::unordered_map<size_t, std::vector<int>> atom_index_;
};

}  // namespace

Expr Analyzer::Simplify(const Expr& e) { return Simplifier(*this).VisitExpr(e); }

}  // namespace arith
}  // namespace tessera
