// NarrowPredicateExpression: a condition without its free parameters that implies the original.
#include <vector>

#include "tessera/arith/const_fold.h"
#include "tessera/arith/narrow_predicate.h"
#include "tessera/ir/functor.h"
#include "tessera/support/error.h"

namespace tessera {
namespace arith {
namespace {

/*!
 * Each free parameter is replaced by the end of its range that makes the condition hardest to
 * satisfy: the top level is to be kept true, so a value on the small side of a comparison
 * (`a` of `a < b`) takes its largest value, one on the large side its smallest; `-` and `!`
 * turn the direction round. A comparison over something that cannot be bounded that way (a
 * floormod, a buffer load, a division by a parameter that may be 0) becomes the constant that
 * keeps the implication: false where the condition is to hold, true under a negation.
 */
class Narrower : public ExprMutator {
 public:
  explicit Narrower(const std::vector<std::pair<Var, Range>>& params) : params_(params) {}

  Expr VisitExpr_(const LTNode* op) override {
    return Inequality(op, Current(), Opposite(Current()));
  }
  Expr VisitExpr_(const LENode* op) override {
    return Inequality(op, Current(), Opposite(Current()));
  }
  Expr VisitExpr_(const GTNode* op) override {
    return Inequality(op, Opposite(Current()), Current());
  }
  Expr VisitExpr_(const GENode* op) override {
    return Inequality(op, Opposite(Current()), Current());
  }
  Expr VisitExpr_(const SubNode* op) override {
    return Inequality(op, Current(), Opposite(Current()));
  }
  Expr VisitExpr_(const EQNode* op) override {
    Expr le = VisitExpr(LENode::Make(op->a, op->b, op->span));
    Expr ge = VisitExpr(LENode::Make(op->b, op->a, op->span));
    return FoldBinary(NodeKind::kAnd, le, ge, op->span);
  }
  Expr VisitExpr_(const NENode* op) override {
    Expr lt = VisitExpr(LTNode::Make(op->a, op->b, op->span));
    Expr gt = VisitExpr(LTNode::Make(op->b, op->a, op->span));
    return FoldBinary(NodeKind::kOr, lt, gt, op->span);
  }
  Expr VisitExpr_(const NotNode* op) override {
    stack_.push_back(Opposite(Current()));
    Expr a = VisitExpr(op->a);
    stack_.pop_back();
    return FoldNot(a, op->span);
  }
  Expr VisitExpr_(const FloorModNode* op) override {
    unknown_ = true;
    return ExprMutator::VisitExpr_(op);
  }
  Expr VisitExpr_(const FloorDivNode* op) override {
    Expr a = VisitExpr(op->a), b = VisitExpr(op->b);
    if (IsConstInt(b, 0)) {  // a parameter divisor narrowed to 0
      unknown_ = true;
      return MakeConst(op->dtype, int64_t(0));
    }
    return FoldBinary(NodeKind::kFloorDiv, a, b, op->span);
  }
  Expr VisitExpr_(const BufferLoadNode* op) override {
    unknown_ = true;
    return GetRef(op);
  }
  Expr VisitExpr_(const VarNode* op) override {
    for (const auto& [var, range] : params_) {
      if (var.get() != op) continue;
      if (Current() == kMinimize) return range->min;
      Expr end = FoldBinary(NodeKind::kAdd, range->min, range->extent);
      return FoldBinary(NodeKind::kSub, end, MakeConst(end->dtype, int64_t(1)));
    }
    return GetRef(op);
  }

 private:
  enum Direction { kMaximize, kMinimize };
  Direction Current() const { return stack_.empty() ? kMaximize : stack_.back(); }
  static Direction Opposite(Direction d) { return d == kMaximize ? kMinimize : kMaximize; }

  template <class T>
  Expr Inequality(const T* op, Direction a_dir, Direction b_dir) {
    stack_.push_back(a_dir);
    Expr a = VisitExpr(op->a);
    stack_.back() = b_dir;
    Expr b = VisitExpr(op->b);
    stack_.pop_back();
    if (unknown_ && op->dtype.is_bool()) {
      unknown_ = false;
      return Bool(Current() == kMinimize);
    }
    if (a.get() == op->a.get() && b.get() == op->b.get()) return GetRef(op);
    return T::Make(a, b, op->span);
  }

  const std::vector<std::pair<Var, Range>>& params_;
  std::vector<Direction> stack_;
  bool unknown_ = false;
};

}  // namespace

Expr NarrowPredicateExpression(const Expr& cond,
                               const std::vector<std::pair<Var, Range>>& free_parameters) {
  if (!cond->dtype.is_bool()) {
    TESSERA_THROW_KIND(cond->span, ErrorKind::kType)
        << "narrow_predicate_expression: expected a bool condition, got a " << cond->dtype
        << " expression";
  }
  return Narrower(free_parameters).VisitExpr(cond);
}

}  // namespace arith
}  // namespace tessera
