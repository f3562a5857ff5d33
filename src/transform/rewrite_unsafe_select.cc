// tir.RewriteUnsafeSelect: a T.Select evaluates both of its values, so one whose value reads
// memory or has a side effect (a load the condition guards, A[i - 1] under i > 0) becomes
// T.if_then_else, which evaluates only the chosen one, as TVM's pass of this name does.
#include "tessera/ir/functor.h"
#include "tessera/ir/op.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace transform {
namespace {

/*! \brief Whether evaluating `e` may read memory or have an effect. A nested select or
 *  if_then_else counts by its condition only: its values are guarded (or rewritten) already. */
bool IsUnsafe(const Expr& e) {
  if (auto* select = AsPtr<SelectNode>(e)) return IsUnsafe(select->condition);
  if (AsPtr<BufferLoadNode>(e)) return true;
  if (auto* call = AsPtr<CallNode>(e)) {
    if (call->is_op("tir.if_then_else")) return IsUnsafe(call->args[0]);
    if (call->is_op("tir.address_of")) {
      auto* load = AsPtr<BufferLoadNode>(call->args[0]);
      if (load == nullptr) return true;
      for (const Expr& index : load->indices) {
        if (IsUnsafe(index)) return true;
      }
      return false;
    }
    auto* op = AsPtr<OpNode>(call->op);
    if (op == nullptr || op->effect != CallEffect::kPure) return true;
    for (const Expr& arg : call->args) {
      if (IsUnsafe(arg)) return true;
    }
    return false;
  }
  bool unsafe = false;
  // Any other expression: unsafe when one of its operands is (operands are not guarded).
  struct Children : ExprVisitor {
    bool* out;
    explicit Children(bool* o) : out(o) {}
    void VisitExpr(const Expr& x) override {
      if (!*out && IsUnsafe(x)) *out = true;
    }
  } children(&unsafe);
  children.ExprVisitor::VisitExpr(e);
  return unsafe;
}

class UnsafeSelectRewriter : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitExpr_;
  Expr VisitExpr_(const SelectNode* op) override {
    Expr e = StmtExprMutator::VisitExpr_(op);
    auto* select = AsPtr<SelectNode>(e);
    bool scalar_condition =
        select->condition->dtype.is_bool() && select->condition->dtype.is_scalar();
    if (!scalar_condition || !(IsUnsafe(select->true_value) || IsUnsafe(select->false_value))) {
      return e;
    }
    return CallNode::Make(select->dtype, OpNode::Get("tir.if_then_else"),
                          {select->condition, select->true_value, select->false_value},
                          select->span);
  }
};

PrimFunc RewriteUnsafeSelectFunc(PrimFunc f, IRModule, const PassContext&) {
  Stmt body = UnsafeSelectRewriter().VisitStmt(f->body);
  return body == f->body ? f : f->WithBody(body);
}

}  // namespace

Pass RewriteUnsafeSelect() {
  return CreatePrimFuncPass(RewriteUnsafeSelectFunc, 0, "tir.RewriteUnsafeSelect");
}
TESSERA_REGISTER_PASS("tir.RewriteUnsafeSelect", RewriteUnsafeSelect);

}  // namespace transform
}  // namespace tessera
