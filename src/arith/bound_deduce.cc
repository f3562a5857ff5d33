// Interval evaluation over relaxed variables, the deduction of a variable's bound from a
// comparison, and the region of a buffer touched by a statement.
#include <functional>
#include <unordered_set>

#include "tessera/arith/analyzer.h"
#include "tessera/arith/int_set.h"
#include "tessera/arith/int_solver.h"
#include "tessera/ir/expr_ops.h"
#include "tessera/ir/functor.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/ir/structural_equal.h"

namespace tessera {
namespace arith {
namespace {

Expr Neg(const Expr& e) { return MulE(e, IntConst(e->dtype, -1)); }

bool IsPoint(const Interval& s) { return !s.nothing && s.min && s.min == s.max; }

// The sign of the values of an interval: 1 positive, -1 negative, 0 unknown (or zero).
int SignOf(const Interval& s) {
  Analyzer ana;
  if (s.min) {
    auto c = AsConstInt(ana.Simplify(s.min));
    if (c && *c > 0) return 1;
  }
  if (s.max) {
    auto c = AsConstInt(ana.Simplify(s.max));
    if (c && *c < 0) return -1;
  }
  return 0;
}

// EvalInterval's ends: the operations themselves, unfolded (as the callers' results show them).
Expr UnfoldedEnd(NodeKind kind, const Expr& a, const Expr& b) {
  switch (kind) {
    case NodeKind::kAdd:
      return AddE(a, b);
    case NodeKind::kSub:
      return SubE(a, b);
    case NodeKind::kMul:
      return MulE(a, b);
    case NodeKind::kFloorDiv:
      return FloorDivE(a, b);
    case NodeKind::kMin:
      return MinNode::Make(a, b);
    default:
      TESSERA_ICHECK(kind == NodeKind::kMax) << "EvalInterval builds no end of this operation";
      return MaxNode::Make(a, b);
  }
}

// An Interval as the IntervalSet of int_set.h (a null end is an open one) and back, for the
// interval arithmetic the two share.
IntervalSet AsSet(const Interval& s) {
  return {s.min ? s.min : Expr(NegInf()), s.max ? s.max : Expr(PosInf())};
}
Interval AsInterval(const IntervalSet& s) {
  return {s.HasLowerBound() ? s.min_value : nullptr, s.HasUpperBound() ? s.max_value : nullptr};
}

}  // namespace

Interval EvalInterval(const Expr& e, const IntervalMap& dom) {
  auto relaxed = [&](const VarNode* v) { return dom.count(v) != 0; };
  if (auto* v = AsPtr<VarNode>(e)) {
    auto it = dom.find(v);
    return it == dom.end() ? Interval::Point(e) : it->second;
  }
  if (!UsesVar(e, relaxed)) return Interval::Point(e);
  auto binary = [&](const BinaryNode* op, Interval* a, Interval* b) {
    *a = EvalInterval(op->a, dom);
    *b = EvalInterval(op->b, dom);
    return !a->nothing && !b->nothing;
  };
  Interval a, b;
  // A product or quotient by the point b of a known sign.
  auto scale = [&](NodeKind kind, int sign) {
    auto apply = [&](const Expr& end) { return UnfoldedEnd(kind, end, b.min); };
    return AsInterval(IntervalMapEnds(AsSet(a), apply, /*decreasing=*/sign < 0));
  };
  if (auto* op = AsPtr<AddNode>(e)) {
    if (!binary(op, &a, &b)) return Interval::Nothing();
    return AsInterval(IntervalAdd(AsSet(a), AsSet(b), UnfoldedEnd));
  }
  if (auto* op = AsPtr<SubNode>(e)) {
    if (!binary(op, &a, &b)) return Interval::Nothing();
    return AsInterval(IntervalSub(AsSet(a), AsSet(b), UnfoldedEnd));
  }
  if (auto* op = AsPtr<MulNode>(e)) {
    if (!binary(op, &a, &b)) return Interval::Nothing();
    if (IsPoint(a)) std::swap(a, b);
    if (!IsPoint(b)) return Interval::Everything();
    int sign = SignOf(b);
    if (auto c = AsConstInt(b.min)) sign = *c > 0 ? 1 : (*c < 0 ? -1 : 0);
    if (IsConstInt(b.min, 0)) return Interval::Point(IntConst(e->dtype, 0));
    if (sign == 0) return Interval::Everything();
    return scale(NodeKind::kMul, sign);
  }
  if (auto* op = AsPtr<FloorDivNode>(e)) {
    if (!binary(op, &a, &b)) return Interval::Nothing();
    auto c = IsPoint(b) ? AsConstInt(b.min) : std::nullopt;
    if (!c || *c == 0) return Interval::Everything();
    return scale(NodeKind::kFloorDiv, *c > 0 ? 1 : -1);
  }
  if (auto* op = AsPtr<MinNode>(e)) {
    if (!binary(op, &a, &b)) return Interval::Nothing();
    return AsInterval(IntervalMin(AsSet(a), AsSet(b), UnfoldedEnd));
  }
  if (auto* op = AsPtr<MaxNode>(e)) {
    if (!binary(op, &a, &b)) return Interval::Nothing();
    return AsInterval(IntervalMax(AsSet(a), AsSet(b), UnfoldedEnd));
  }
  if (auto* op = AsPtr<CastNode>(e)) {
    if (!op->dtype.is_int() || !op->value->dtype.is_int()) return Interval::Everything();
    a = EvalInterval(op->value, dom);
    if (a.nothing) return a;
    return AsInterval(
        IntervalMapEnds(AsSet(a), [&](const Expr& end) { return CastTo(op->dtype, end); }));
  }
  return Interval::Everything();
}

namespace {

enum class CompareOp { kGreater, kLess, kEqual };

CompareOp Reverse(CompareOp op) {
  if (op == CompareOp::kGreater) return CompareOp::kLess;
  if (op == CompareOp::kLess) return CompareOp::kGreater;
  return CompareOp::kEqual;
}

// The nodes from `root` down to the first occurrence of `target` (empty when absent).
std::vector<const Object*> PathTo(const Expr& root, const Object* target) {
  std::vector<const Object*> path;
  std::function<bool(const Expr&)> walk = [&](const Expr& e) -> bool {
    path.push_back(e.get());
    if (e.get() == target) return true;
    bool found = false;
    if (auto* bin = AsPtr<BinaryNode>(e)) {
      found = walk(bin->a) || walk(bin->b);
    } else if (auto* cast = AsPtr<CastNode>(e)) {
      found = walk(cast->value);
    } else if (auto* n = AsPtr<NotNode>(e)) {
      found = walk(n->a);
    } else if (auto* call = AsPtr<CallNode>(e)) {
      for (const Expr& arg : call->args) {
        if ((found = walk(arg))) break;
      }
    } else if (auto* load = AsPtr<BufferLoadNode>(e)) {
      for (const Expr& idx : load->indices) {
        if ((found = walk(idx))) break;
      }
    } else if (auto* sel = AsPtr<SelectNode>(e)) {
      found = walk(sel->condition) || walk(sel->true_value) || walk(sel->false_value);
    }
    if (!found) path.pop_back();
    return found;
  };
  walk(root);
  return path;
}

int CountOccurrences(const Expr& e, const Object* target) {
  int count = 0;
  PostOrderVisit(e, [&](const ObjectRef& n) {
    if (n.get() == target) ++count;
  });
  return count;
}

// Moves the operations around the target variable to the other side of the comparison, from the
// outside in: `expr op result` becomes `var op' result'`.
class BoundDeducer {
 public:
  BoundDeducer(const Var& var, const IntervalMap& hint) : var_(var), hint_(hint) {}

  bool Run(Expr cond, const IntervalMap& relax, Expr* result, CompareOp* op) {
    if (CountOccurrences(cond, var_.get()) != 1) return false;
    auto* cmp = AsPtr<BinaryNode>(cond);
    if (!cmp || !cmp->is_comparison() || AsPtr<NENode>(cond)) return false;
    bool on_left = !PathTo(cmp->a, var_.get()).empty();
    const Expr& side = on_left ? cmp->a : cmp->b;
    const Expr& other = on_left ? cmp->b : cmp->a;
    DataType t = other->dtype;
    Expr one = IntConst(t, 1);
    // The variable's side compared to the other side: `side > r`, `side < r` or `side == r`
    // (strict comparisons become non-strict by one).
    switch (cond->kind) {
      case NodeKind::kLT:
        op_ = on_left ? CompareOp::kLess : CompareOp::kGreater;
        result_ = on_left ? SubE(other, one) : AddE(other, one);
        break;
      case NodeKind::kLE:
        op_ = on_left ? CompareOp::kLess : CompareOp::kGreater;
        result_ = other;
        break;
      case NodeKind::kGT:
        op_ = on_left ? CompareOp::kGreater : CompareOp::kLess;
        result_ = on_left ? AddE(other, one) : SubE(other, one);
        break;
      case NodeKind::kGE:
        op_ = on_left ? CompareOp::kGreater : CompareOp::kLess;
        result_ = other;
        break;
      case NodeKind::kEQ:
        op_ = CompareOp::kEqual;
        result_ = other;
        break;
      default:
        return false;
    }
    // Relax: the bound must hold for every value of the relaxed variables.
    Interval a = EvalInterval(side, relax), b = EvalInterval(result_, relax);
    if (a.nothing || b.nothing || a.is_everything() || b.is_everything()) return false;
    Expr expr;
    if (op_ == CompareOp::kEqual) {
      if (!a.min || !a.max || !b.min || !b.max) return false;
      if (!ana_.CanProveEqual(a.min, a.max) || !ana_.CanProveEqual(b.min, b.max)) return false;
      expr = a.min;
      result_ = b.min;
    } else if (op_ == CompareOp::kGreater) {
      expr = a.min;
      result_ = b.max;
    } else {
      expr = a.max;
      result_ = b.min;
    }
    if (!expr || !result_) return false;
    path_ = PathTo(expr, var_.get());
    if (path_.empty()) return false;
    if (!Visit(expr)) return false;
    *result = ana_.Simplify(result_);
    *op = op_;
    return true;
  }

 private:
  int Sign(const Expr& e) {
    if (e->dtype.is_uint()) return 1;
    return SignOf(EvalInterval(e, hint_));
  }

  bool Visit(const Expr& e) {
    if (iter_ >= path_.size() || e.get() != path_[iter_]) return false;
    ++iter_;
    if (AsPtr<VarNode>(e)) return true;
    const Object* next = iter_ < path_.size() ? path_[iter_] : nullptr;
    if (auto* op = AsPtr<AddNode>(e)) {
      bool left = op->a.get() == next;
      result_ = SubE(result_, left ? op->b : op->a);
      return Visit(left ? op->a : op->b);
    }
    if (auto* op = AsPtr<SubNode>(e)) {
      bool left = op->a.get() == next;
      if (left) {
        result_ = AddE(result_, op->b);
      } else {
        result_ = Neg(SubE(result_, op->a));
        op_ = Reverse(op_);
      }
      return Visit(left ? op->a : op->b);
    }
    if (auto* op = AsPtr<MulNode>(e)) {
      bool left = op->a.get() == next;
      const Expr& factor = left ? op->b : op->a;
      int sign = Sign(factor);
      if (sign == 0) return false;
      if (sign < 0) op_ = Reverse(op_);
      bool divides;
      if (StructuralEqual(ana_.Simplify(result_), ana_.Simplify(factor))) {
        // `b * a == b`: the quotient is 1 (the factor is known not to be zero).
        divides = true;
        result_ = IntConst(result_->dtype, 1);
      } else {
        divides =
            ana_.CanProve(EQNode::Make(FloorModE(result_, factor), IntConst(factor->dtype, 0)));
        result_ = FloorDivE(result_, factor);
      }
      if (!divides) {
        if (op_ == CompareOp::kEqual) return false;
        if (op_ == CompareOp::kGreater) result_ = AddE(result_, IntConst(result_->dtype, 1));
      }
      return Visit(left ? op->a : op->b);
    }
    if (auto* op = AsPtr<FloorDivNode>(e)) {
      if (op->b.get() == next) return false;
      Expr divisor = op->b;
      if (ana_.CanProveEqual(divisor, IntConst(divisor->dtype, 0))) return false;
      int sign = Sign(divisor);
      if (sign == 0 || op_ == CompareOp::kEqual) return false;
      if (sign < 0) {
        op_ = Reverse(op_);
        divisor = Neg(divisor);
        result_ = Neg(result_);
      }
      Expr one = IntConst(divisor->dtype, 1);
      if (op_ == CompareOp::kGreater) {
        result_ = MulE(result_, divisor);
      } else {
        result_ = SubE(AddE(MulE(result_, divisor), divisor), one);
      }
      if (sign < 0) result_ = AddE(SubE(result_, divisor), one);
      return Visit(op->a);
    }
    return false;
  }

  Var var_;
  const IntervalMap& hint_;
  Analyzer ana_;
  Expr result_;
  CompareOp op_ = CompareOp::kGreater;
  std::vector<const Object*> path_;
  size_t iter_ = 0;
};

}  // namespace

Interval DeduceBound(const Var& var, const Expr& cond, const IntervalMap& hint,
                     const IntervalMap& relax) {
  BoundDeducer deducer(var, hint);
  Expr result;
  CompareOp op;
  if (!deducer.Run(cond, relax, &result, &op)) return Interval::Nothing();
  if (op == CompareOp::kEqual) return Interval::Point(result);
  if (op == CompareOp::kGreater) return {result, nullptr};
  return {nullptr, result};
}

namespace {

// Collects, per dimension, the intervals of a buffer's load and store indices, each loop
// variable relaxed over its loop.
class TouchCollector : public StmtExprVisitor {
 public:
  TouchCollector(const BufferNode* buffer, bool loads, bool stores)
      : buffer_(buffer), loads_(loads), stores_(stores) {}
  std::vector<std::vector<Interval>> touches;

  void VisitStmt_(const ForNode* op) override {
    Expr hi = SubE(AddE(op->min, op->extent), IntConst(op->extent->dtype, 1));
    Interval lo_set = EvalInterval(op->min, dom_), hi_set = EvalInterval(hi, dom_);
    dom_[op->loop_var.get()] = {lo_set.min, hi_set.max};
    StmtExprVisitor::VisitStmt_(op);
    dom_.erase(op->loop_var.get());
  }
  void VisitExpr_(const BufferLoadNode* op) override {
    if (loads_ && op->buffer.get() == buffer_) Touch(op->indices);
    StmtExprVisitor::VisitExpr_(op);
  }
  void VisitStmt_(const BufferStoreNode* op) override {
    if (stores_ && op->buffer.get() == buffer_) Touch(op->indices);
    StmtExprVisitor::VisitStmt_(op);
  }

 private:
  void Touch(const std::vector<Expr>& indices) {
    if (touches.size() < indices.size()) touches.resize(indices.size());
    for (size_t i = 0; i < indices.size(); ++i) {
      if (auto* ramp = AsPtr<RampNode>(indices[i])) {
        // The lanes of a vector index, its base as it is.
        Expr last = AddE(ramp->base, MulE(ramp->stride, RampLastLane(ramp)));
        auto stride = AsConstInt(ramp->stride);
        if (stride && *stride < 0) {
          touches[i].push_back({last, ramp->base});
        } else {
          touches[i].push_back({ramp->base, last});
        }
      } else {
        touches[i].push_back(EvalInterval(indices[i], dom_));
      }
    }
  }

  const BufferNode* buffer_;
  bool loads_, stores_;
  IntervalMap dom_;
};

}  // namespace

std::vector<Range> DomainTouched(const Stmt& stmt, const Buffer& buffer, bool loads, bool stores) {
  TouchCollector collector(buffer.get(), loads, stores);
  collector.VisitStmt(stmt);
  Analyzer ana;
  std::vector<Range> out;
  for (const auto& sets : collector.touches) {
    Expr lo, hi;
    bool lo_inf = false, hi_inf = false;
    for (const Interval& s : sets) {
      if (!s.min) lo_inf = true;
      if (!s.max) hi_inf = true;
      if (s.min && !lo_inf) {
        Expr m = ana.Simplify(s.min);
        if (!lo || ana.CanProve(LENode::Make(m, CastTo(m->dtype, lo)))) {
          lo = m;
        } else if (!ana.CanProve(LENode::Make(CastTo(m->dtype, lo), m))) {
          lo = MinNode::Make(CastTo(m->dtype, lo), m);
        }
      }
      if (s.max && !hi_inf) {
        Expr m = ana.Simplify(s.max);
        if (!hi || ana.CanProve(GENode::Make(m, CastTo(m->dtype, hi)))) {
          hi = m;
        } else if (!ana.CanProve(GENode::Make(CastTo(m->dtype, hi), m))) {
          hi = MaxNode::Make(CastTo(m->dtype, hi), m);
        }
      }
    }
    if (lo_inf || hi_inf || !lo || !hi) {
      // Unbounded: the whole dimension.
      Expr size = out.size() < buffer->shape.size() ? buffer->shape[out.size()] : nullptr;
      DataType t = size ? size->dtype : DataType::Int(32);
      out.push_back(RangeNode::Make(IntConst(t, 0), size ? size : IntConst(t, 0)));
      continue;
    }
    Expr extent = ana.Simplify(AddE(SubE(hi, CastTo(hi->dtype, lo)), IntConst(hi->dtype, 1)));
    out.push_back(RangeNode::Make(lo, extent));
  }
  return out;
}

}  // namespace arith
}  // namespace tessera
