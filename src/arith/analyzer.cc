// Analyzer: variable bindings and the proofs built on bounds, divisibility and simplification.
#include "tessera/arith/analyzer.h"
#include "tessera/arith/vscale.h"

#include <cstdio>

#include "tessera/ir/functor.h"
#include "tessera/ir/stmt.h"
#include "tessera/ir/structural_equal.h"

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
  BindComparisons(var, range);
}

void Analyzer::Bind(const Var& var, const Expr& value) {
  ConstIntBound b = GetConstIntBound(value);
  ModularSet m = GetModularSet(value);
  vars_[var.get()] = VarInfo{var, b, m};
}

void Analyzer::Bind(const Var& var, ConstIntBound bound) {
  vars_[var.get()] = VarInfo{var, bound, ModularSet::Everything()};
}

void Analyzer::Unbind(const Var& var) {
  vars_.erase(var.get());
  bound_comparisons_.erase(var.get());
  substitutions_.erase(var.get());
}

void Analyzer::Update(const Var& var, ConstIntBound bound, bool allow_override) {
  auto it = vars_.find(var.get());
  if (it == vars_.end()) {
    vars_[var.get()] = VarInfo{var, bound, ModularSet::Everything()};
    return;
  }
  if (!allow_override && !(it->second.bound == bound)) {
    TESSERA_THROW_KIND(var->span, ErrorKind::kValue)
        << "Analyzer.update: '" << var->name << "' already has the bound ["
        << it->second.bound.min_value << ", " << it->second.bound.max_value
        << "]; pass override=True to replace it with [" << bound.min_value << ", "
        << bound.max_value << "]";
  }
  it->second.bound = bound;
}

ConstIntBound Analyzer::ConstraintBound(const Expr& e) const {
  ConstIntBound r = ConstIntBound::Everything();
  for (const auto& [expr, bound] : expr_bounds_) {
    if (expr->kind == e->kind && StructuralEqual(expr, e)) {
      r.min_value = std::max(r.min_value, bound.min_value);
      r.max_value = std::min(r.max_value, bound.max_value);
    }
  }
  return r;
}

void Analyzer::SetEnabledExtensions(int flags) {
  transitive_ = (flags & kTransitivelyProveInequalities) != 0;
  and_of_ors_ = (flags & kConvertBooleanToAndOfOrs) != 0;
  boolean_branches_ = (flags & kApplyConstraintsToBooleanBranches) != 0;
  product_and_sum_ = (flags & kComparisonOfProductAndSum) != 0;
}

int Analyzer::EnabledExtensions() const {
  return (transitive_ ? kTransitivelyProveInequalities : 0) |
         (and_of_ors_ ? kConvertBooleanToAndOfOrs : 0) |
         (boolean_branches_ ? kApplyConstraintsToBooleanBranches : 0) |
         (product_and_sum_ ? kComparisonOfProductAndSum : 0);
}

const ConstIntBound* Analyzer::VarBound(const VarNode* var) const {
  auto it = vars_.find(var);
  return it == vars_.end() ? nullptr : &it->second.bound;
}

const ModularSet* Analyzer::VarModular(const VarNode* var) const {
  auto it = vars_.find(var);
  return it == vars_.end() ? nullptr : &it->second.modular;
}

Expr NegateCondition(const Expr& e) {
  // An integer `if` condition (TVM's IfThenElse takes one): false when zero.
  if (!e->dtype.is_bool()) return EQNode::Make(e, MakeConst(e->dtype, int64_t(0)), e->span);
  if (auto* op = AsPtr<LTNode>(e)) return LENode::Make(op->b, op->a, op->span);
  if (auto* op = AsPtr<LENode>(e)) return LTNode::Make(op->b, op->a, op->span);
  if (auto* op = AsPtr<GTNode>(e)) return LENode::Make(op->a, op->b, op->span);
  if (auto* op = AsPtr<GENode>(e)) return LTNode::Make(op->a, op->b, op->span);
  if (auto* op = AsPtr<EQNode>(e)) return NENode::Make(op->a, op->b, op->span);
  if (auto* op = AsPtr<NENode>(e)) return EQNode::Make(op->a, op->b, op->span);
  if (auto* op = AsPtr<NotNode>(e)) return op->a;
  if (auto* op = AsPtr<AndNode>(e)) {
    return OrNode::Make(NegateCondition(op->a), NegateCondition(op->b), op->span);
  }
  if (auto* op = AsPtr<OrNode>(e)) {
    return AndNode::Make(NegateCondition(op->a), NegateCondition(op->b), op->span);
  }
  return NotNode::Make(e, e->span);
}

namespace {

/*! \brief The conjuncts of a condition: `a && b` and `!(a || b)` split; likely(c) is c. */
void SplitConjuncts(const Expr& e, std::vector<Expr>* out) {
  if (auto* call = AsPtr<CallNode>(e)) {
    if (call->is_op("tir.likely") && call->args.size() == 1) {  // a hint: likely(c) is c
      SplitConjuncts(call->args[0], out);
      return;
    }
  }
  if (auto* op = AsPtr<AndNode>(e)) {
    SplitConjuncts(op->a, out);
    SplitConjuncts(op->b, out);
    return;
  }
  if (auto* op = AsPtr<NotNode>(e)) {
    if (AsPtr<OrNode>(op->a) || AsPtr<NotNode>(op->a)) {
      SplitConjuncts(NegateCondition(op->a), out);
      return;
    }
  }
  out->push_back(e);
}

/*! \brief Whether evaluating `e` has no effect and always gives the same value (no buffer
 *  loads, whose value can change, and no calls other than pure math). */
bool IsPureLiteral(const Expr& e) {
  bool pure = true;
  PostOrderVisit(e, [&](const ObjectRef& n) {
    if (AsPtr<BufferLoadNode>(n)) pure = false;
    if (auto* call = AsPtr<CallNode>(n)) {
      if (!call->is_op("tir.likely")) pure = false;
    }
  });
  return pure;
}

}  // namespace

size_t Analyzer::EnterConstraint(const Expr& cond) {
  size_t mark = frames_.size();
  ConstraintFrame frame{literals_.size(), comparisons_.size(), expr_bounds_.size(), {}};
  std::vector<Expr> conjuncts;
  // Facts are read from the condition as written (as TVM reads them) and as simplified. The
  // simplification comes first: under the facts of the written form it would prove itself
  // true and leave no comparison or literal to record.
  Expr simplified = Simplify(cond);
  SplitConjuncts(cond, &conjuncts);
  for (const Expr& c : conjuncts) AddConjunctFacts(c, &frame);
  conjuncts.clear();
  SplitConjuncts(simplified, &conjuncts);
  for (const Expr& c : conjuncts) {
    AddConjunctFacts(c, &frame);
    if (!c->dtype.is_scalar() || AsConstInt(c) || !IsPureLiteral(c)) continue;
    NarrowByLiteral(c, &frame);
    AddComparison(c);
    literals_.emplace_back(c, true);
    literals_.emplace_back(NegateCondition(c), false);
  }
  frames_.push_back(std::move(frame));
  return mark;
}

void Analyzer::ExitConstraint(size_t mark) {
  while (frames_.size() > mark) {
    ConstraintFrame& frame = frames_.back();
    for (auto it = frame.saved.rbegin(); it != frame.saved.rend(); ++it) {
      if (it->second) {
        vars_[it->first.get()] = *it->second;
      } else {
        vars_.erase(it->first.get());
      }
    }
    literals_.resize(frame.literal_size);
    comparisons_.resize(frame.comparison_size);
    expr_bounds_.resize(frame.expr_bound_size);
    frames_.pop_back();
  }
}

std::optional<bool> Analyzer::MatchLiteral(const Expr& e) const {
  for (const auto& [literal, value] : literals_) {
    if (literal->kind == e->kind && StructuralEqual(literal, e)) return value;
  }
  return std::nullopt;
}

namespace {

/*! \brief An integer expression as (non-constant part, constant offset); a null part is 0. */
std::pair<Expr, int64_t> SplitOffset(const Expr& e) {
  if (auto c = AsConstInt(e)) return {Expr(), *c};
  if (auto* add = AsPtr<AddNode>(e)) {
    if (auto c = AsConstInt(add->b)) return {add->a, *c};
  }
  if (auto* sub = AsPtr<SubNode>(e)) {
    if (auto c = AsConstInt(sub->b)) return {sub->a, -*c};
  }
  return {e, 0};
}

bool SameAtom(const Expr& a, const Expr& b) {
  if (!a || !b) return !a && !b;
  return a.get() == b.get() || StructuralEqual(a, b);
}

constexpr int64_t kInf = ConstIntBound::kPosInf;

int64_t AddBound(int64_t a, int64_t b) {
  if (a == kInf || b == kInf) return kInf;
  return a + b;
}

}  // namespace

void Analyzer::AddComparison(const Expr& literal) {
  NodeKind k = literal->kind;
  if (!(k == NodeKind::kLT || k == NodeKind::kLE || k == NodeKind::kGT || k == NodeKind::kGE ||
        k == NodeKind::kEQ || k == NodeKind::kNE)) {
    return;
  }
  auto* cmp = static_cast<const BinaryNode*>(literal.get());
  if (!cmp->a->dtype.is_scalar() || !cmp->a->dtype.is_integer()) return;
  Expr lhs = cmp->a, rhs = cmp->b;
  if (k == NodeKind::kGT || k == NodeKind::kGE) {
    std::swap(lhs, rhs);
    k = k == NodeKind::kGT ? NodeKind::kLT : NodeKind::kLE;
  }
  auto [x, cx] = SplitOffset(lhs);
  auto [y, cy] = SplitOffset(rhs);
  if (!x && !y) return;
  // x + cx (op) y + cy  <=>  x - y (op) cy - cx
  int64_t c = cy - cx;
  if (k == NodeKind::kLT) {
    comparisons_.push_back({x, y, c - 1, NodeKind::kLE});
  } else {
    comparisons_.push_back({x, y, c, k});
  }
}

void Analyzer::BindComparisons(const Var& var, const Ref<RangeNode>& range) {
  bound_comparisons_.erase(var.get());
  if (!var->dtype.is_scalar() || !var->dtype.is_integer()) return;
  // Constant ends are already the variable's constant bound.
  if (AsConstInt(range->min) && AsConstInt(range->extent)) return;
  std::vector<Comparison> list;
  auto add = [&](const Expr& lhs, const Expr& rhs, int64_t slack) {
    // lhs - rhs <= slack, constants moved to the bound as AddComparison does.
    auto [x, cx] = SplitOffset(lhs);
    auto [y, cy] = SplitOffset(rhs);
    if (!x && !y) return;
    list.push_back({x, y, slack + cy - cx, NodeKind::kLE});
  };
  add(range->min, var, 0);  // min <= var
  if (IsConstInt(range->extent, 1)) {
    add(var, range->min, 0);  // var == min
  } else {
    // var < min + extent; a constant min joins the bound.
    if (auto c = AsConstInt(range->min)) {
      add(var, range->extent, *c - 1);
    } else {
      add(var, AddNode::Make(range->min, range->extent), -1);
    }
  }
  bound_comparisons_[var.get()] = std::move(list);
}

int64_t Analyzer::DifferenceUpperBound(const Expr& x, const Expr& y) const {
  if (SameAtom(x, y)) return 0;
  if (!transitive_) {
    int64_t best = kInf;
    ForEachComparison([&](const Comparison& k) {
      if (k.kind == NodeKind::kNE) return;
      if (SameAtom(k.x, x) && SameAtom(k.y, y)) best = std::min(best, k.c);
      if (k.kind == NodeKind::kEQ && SameAtom(k.x, y) && SameAtom(k.y, x)) {
        best = std::min(best, -k.c);
      }
    });
    return best;
  }
  // Shortest path from x to y over the edges u -> v of weight w for u - v <= w.
  std::vector<Expr> atoms{x, y};
  auto id = [&](const Expr& e) {
    for (size_t n = 0; n < atoms.size(); ++n) {
      if (SameAtom(atoms[n], e)) return n;
    }
    atoms.push_back(e);
    return atoms.size() - 1;
  };
  struct Edge {
    size_t u, v;
    int64_t w;
  };
  std::vector<Edge> edges;
  ForEachComparison([&](const Comparison& k) {
    if (k.kind == NodeKind::kNE) return;
    size_t u = id(k.x), v = id(k.y);
    edges.push_back({u, v, k.c});
    if (k.kind == NodeKind::kEQ) edges.push_back({v, u, -k.c});
  });
  std::vector<int64_t> dist(atoms.size(), kInf);
  dist[0] = 0;
  for (size_t round = 0; round < atoms.size(); ++round) {
    bool changed = false;
    for (const Edge& e : edges) {
      int64_t d = AddBound(dist[e.u], e.w);
      if (d < dist[e.v]) {
        dist[e.v] = d;
        changed = true;
      }
    }
    if (!changed) return dist[1];
  }
  return kInf;  // contradictory constraints (a negative cycle): claim nothing
}

ConstIntBound Analyzer::KnownDifference(const Expr& a, const Expr& b) const {
  auto [x, ca] = SplitOffset(a);
  auto [y, cb] = SplitOffset(b);
  ConstIntBound r = ConstIntBound::Everything();
  int64_t hi = DifferenceUpperBound(x, y), neg_lo = DifferenceUpperBound(y, x);
  if (hi != kInf) r.max_value = hi + ca - cb;
  if (neg_lo != kInf) r.min_value = -neg_lo + ca - cb;
  return r;
}

bool Analyzer::KnownNotEqual(const Expr& a, const Expr& b) const {
  auto [x, ca] = SplitOffset(a);
  auto [y, cb] = SplitOffset(b);
  // a != b  <=>  x - y != cb - ca
  int64_t target = cb - ca;
  for (const Comparison& k : comparisons_) {
    if (k.kind != NodeKind::kNE) continue;
    // x - y = (x - k.x) + (k.x - k.y) + (k.y - y), each of the outer two known exactly.
    for (int flip = 0; flip < 2; ++flip) {
      const Expr& p = flip ? k.y : k.x;
      const Expr& q = flip ? k.x : k.y;
      int64_t c = flip ? -k.c : k.c;
      int64_t up1 = DifferenceUpperBound(x, p), lo1 = DifferenceUpperBound(p, x);
      int64_t up2 = DifferenceUpperBound(q, y), lo2 = DifferenceUpperBound(y, q);
      if (up1 == kInf || lo1 == kInf || up2 == kInf || lo2 == kInf) continue;
      if (up1 != -lo1 || up2 != -lo2) continue;
      if (up1 + c + up2 == target) return true;
    }
  }
  return false;
}

void Analyzer::NarrowByLiteral(const Expr& literal, ConstraintFrame* frame) {
  const BinaryNode* cmp = nullptr;
  if (AsPtr<LTNode>(literal) || AsPtr<LENode>(literal) || AsPtr<EQNode>(literal)) {
    cmp = static_cast<const BinaryNode*>(literal.get());
  }
  if (!cmp) return;
  bool var_left = AsPtr<VarNode>(cmp->a) || AsPtr<SizeVarNode>(cmp->a);
  bool var_right = AsPtr<VarNode>(cmp->b) || AsPtr<SizeVarNode>(cmp->b);
  auto c = AsConstInt(var_left ? cmp->b : cmp->a);
  if (!c || var_left == var_right) return;
  const Expr& v = var_left ? cmp->a : cmp->b;
  if (!v->dtype.is_scalar() || !v->dtype.is_integer()) return;
  Var var = GetRef(static_cast<const VarNode*>(v.get()));
  ConstIntBound b = GetConstIntBound(var);
  ModularSet m = GetModularSet(var);
  if (literal->kind == NodeKind::kEQ) {
    b = ConstIntBound::Single(*c);
    m = ModularSet{0, *c};
  } else if (var_left) {
    int64_t hi = literal->kind == NodeKind::kLT ? *c - 1 : *c;
    b.max_value = std::min(b.max_value, hi);
  } else {
    int64_t lo = literal->kind == NodeKind::kLT ? *c + 1 : *c;
    b.min_value = std::max(b.min_value, lo);
  }
  SetVarInfoInFrame(var, b, m, frame);
}

void Analyzer::SetVarInfoInFrame(const Var& var, ConstIntBound bound, ModularSet modular,
                                 ConstraintFrame* frame) {
  auto it = vars_.find(var.get());
  std::optional<VarInfo> old;
  if (it != vars_.end()) old = it->second;
  frame->saved.emplace_back(var, old);
  vars_[var.get()] = VarInfo{var, bound, modular};
}

void Analyzer::AddConjunctFacts(const Expr& conjunct, ConstraintFrame* frame) {
  NodeKind k = conjunct->kind;
  if (!(k == NodeKind::kLT || k == NodeKind::kLE || k == NodeKind::kGT || k == NodeKind::kGE ||
        k == NodeKind::kEQ)) {
    return;
  }
  auto* cmp = static_cast<const BinaryNode*>(conjunct.get());
  if (!cmp->a->dtype.is_scalar() || !cmp->a->dtype.is_integer()) return;
  auto ca = AsConstInt(cmp->a), cb = AsConstInt(cmp->b);
  if (ca.has_value() == cb.has_value()) return;
  // As `x (op) c`, the constant on the right.
  const Expr& x = ca ? cmp->b : cmp->a;
  int64_t c = ca ? *ca : *cb;
  if (ca) {
    if (k == NodeKind::kLT) k = NodeKind::kGT;
    else if (k == NodeKind::kLE) k = NodeKind::kGE;
    else if (k == NodeKind::kGT) k = NodeKind::kLT;
    else if (k == NodeKind::kGE) k = NodeKind::kLE;
  }
  constexpr int64_t kPos = ConstIntBound::kPosInf, kNeg = ConstIntBound::kNegInf;
  ConstIntBound b{kNeg, kPos};
  switch (k) {
    case NodeKind::kLT: b.max_value = c == kNeg ? kNeg : c - 1; break;
    case NodeKind::kLE: b.max_value = c; break;
    case NodeKind::kGT: b.min_value = c == kPos ? kPos : c + 1; break;
    case NodeKind::kGE: b.min_value = c; break;
    default: b = ConstIntBound::Single(c); break;
  }
  expr_bounds_.emplace_back(x, b);
  // x % m == r (truncating or floor) of a var: the var is congruent to r modulo m.
  if (k != NodeKind::kEQ) return;
  const BinaryNode* mod = AsPtr<FloorModNode>(x);
  if (!mod) mod = AsPtr<ModNode>(x);
  if (!mod) return;
  auto* v = AsPtr<VarNode>(mod->a);
  auto m = AsConstInt(mod->b);
  if (!v || !m || *m == 0) return;
  Var var = GetRef(v);
  int64_t modulus = *m < 0 ? -*m : *m;
  auto meet = IntersectModular(GetModularSet(var), ModularSet{modulus, FloorMod(c, modulus)});
  if (!meet) return;  // contradictory or untrackable: claim nothing more
  SetVarInfoInFrame(var, GetConstIntBound(var), *meet, frame);
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

namespace {

/*! \brief `a == a`, `a <= a` or `a >= a` of any type (the simplifier folds int32/int64 only). */
bool IsReflexiveComparison(const Expr& e) {
  if (!(AsPtr<EQNode>(e) || AsPtr<LENode>(e) || AsPtr<GENode>(e))) return false;
  auto* cmp = static_cast<const BinaryNode*>(e.get());
  return cmp->a.get() == cmp->b.get() || StructuralEqual(cmp->a, cmp->b);
}

}  // namespace

bool Analyzer::CanProve(const Expr& cond) {
  if (IsReflexiveComparison(cond)) return true;
  Expr s = Simplify(cond);
  if (IsReflexiveComparison(s)) return true;
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
  if (a->dtype != b->dtype) {
    // As TVM's operators: an integer constant takes the other side's integer type (`n == 0`
    // of an int64 n), when its value fits that type.
    auto retype = [](const Expr& c, DataType t) -> Expr {
      auto* imm = AsPtr<IntImmNode>(c);
      if (!imm || !t.is_scalar() || !t.is_integer() || WrapToType(t, imm->value) != imm->value)
        return nullptr;
      return IntImmNode::Make(t, imm->value);
    };
    if (Expr rb = retype(b, a->dtype)) return CanProve(EQNode::Make(a, rb));
    if (Expr ra = retype(a, b->dtype)) return CanProve(EQNode::Make(ra, b));
    return false;
  }
  return CanProve(EQNode::Make(a, b));
}

}  // namespace arith
}  // namespace tessera
