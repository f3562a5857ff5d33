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

Expr NegateCondition(const Expr& e) {
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

/*! \brief The conjuncts of a condition: `a && b` splits, and so does `!(a || b)`. */
void SplitConjuncts(const Expr& e, std::vector<Expr>* out) {
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
  ConstraintFrame frame{literals_.size(), {}};
  std::vector<Expr> conjuncts;
  SplitConjuncts(Simplify(cond), &conjuncts);
  for (const Expr& c : conjuncts) {
    if (!c->dtype.is_scalar() || AsConstInt(c) || !IsPureLiteral(c)) continue;
    NarrowByLiteral(c, &frame);
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
    frames_.pop_back();
  }
}

std::optional<bool> Analyzer::MatchLiteral(const Expr& e) const {
  for (const auto& [literal, value] : literals_) {
    if (literal->kind == e->kind && StructuralEqual(literal, e)) return value;
  }
  return std::nullopt;
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
  auto it = vars_.find(var.get());
  std::optional<VarInfo> old;
  if (it != vars_.end()) old = it->second;
  frame->saved.emplace_back(var, old);
  vars_[var.get()] = VarInfo{var, b, m};
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
