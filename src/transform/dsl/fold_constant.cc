// dsl.FoldConstant: a name of a DSL kernel bound once to a constant stands for the constant.
//
//   n = 127                          (LetStmt n = 127)
//   if each_size % n > 0: ...   ->   if each_size % 127 > 0: ...
//
// The DSL parser binds a name assigned once (and whose address is never taken) with a LetStmt;
// a reassigned or addressed one lives in storage (a "tessera.local_var" allocation) and is not
// touched here. A LetStmt whose value is a scalar integer or float constant, a broadcast of one,
// or a constant mask (dsl.const_mask) is removed and its variable replaced by the value, as
// Compass's DSL folds such names before code generation: the generated C then shows the
// constant (`each_size % 127`, where a variable divisor would go through the checked division),
// and the simplifier sees it. A variable that a buffer's shape, strides or offset uses keeps its
// binding (buffers are not rewritten).
#include <unordered_set>

#include "tessera/ir/functor.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/ir/op.h"
#include "tessera/transform/dsl_passes.h"

namespace tessera {
namespace transform {
namespace {

bool IsConstScalar(const Expr& e) {
  return AsPtr<IntImmNode>(e) != nullptr || AsPtr<FloatImmNode>(e) != nullptr;
}

bool IsFoldable(const Expr& value) {
  if (IsConstScalar(value)) return true;
  if (const auto* b = AsPtr<BroadcastNode>(value)) return IsConstScalar(b->value);
  const auto* call = AsPtr<CallNode>(value);
  if (call == nullptr || AsPtr<OpNode>(call->op) == nullptr ||
      call->op_name() != "dsl.const_mask") {
    return false;
  }
  for (const Expr& lane : call->args) {
    if (!IsConstScalar(lane)) return false;
  }
  return true;
}

// The variables that some buffer's shape, strides or element offset uses.
std::unordered_set<const VarNode*> BufferDefinitionVars(const Stmt& body) {
  std::unordered_set<const VarNode*> vars;
  std::unordered_set<const BufferNode*> seen;
  auto add_buffer = [&](const Buffer& buf) {
    if (!buf || !seen.insert(buf.get()).second) return;
    auto add_expr = [&](const Expr& e) {
      if (!e) return;
      PostOrderVisit(e, [&](const ObjectRef& n) {
        if (const auto* v = AsPtr<VarNode>(n)) vars.insert(v);
      });
    };
    for (const Expr& e : buf->shape) add_expr(e);
    for (const Expr& e : buf->strides) add_expr(e);
    add_expr(buf->elem_offset);
  };
  PostOrderVisit(body, [&](const ObjectRef& n) {
    if (const auto* load = AsPtr<BufferLoadNode>(n)) add_buffer(load->buffer);
    if (const auto* store = AsPtr<BufferStoreNode>(n)) add_buffer(store->buffer);
    if (const auto* decl = AsPtr<DeclBufferNode>(n)) add_buffer(decl->buffer);
  });
  return vars;
}

class ConstantFolder : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;

  explicit ConstantFolder(std::unordered_set<const VarNode*> keep) : keep_(std::move(keep)) {}

  Expr VisitExpr_(const VarNode* op) override {
    auto it = constants_.find(op);
    return it == constants_.end() ? GetRef(op) : it->second;
  }

  Stmt VisitStmt_(const LetStmtNode* op) override {
    Expr value = VisitExpr(op->value);
    if (!op->var->pointer && !keep_.count(op->var.get()) && IsFoldable(value) &&
        value->dtype == op->var->dtype) {
      constants_[op->var.get()] = value;
      return VisitStmt(op->body);
    }
    Stmt body = VisitStmt(op->body);
    if (value == op->value && body == op->body) return GetRef(op);
    return LetStmtNode::Make(op->var, value, body, op->span);
  }

 private:
  std::unordered_set<const VarNode*> keep_;
  VarMap constants_;
};

PrimFunc FoldConstantFunc(PrimFunc f, IRModule, const PassContext&) {
  Stmt body = ConstantFolder(BufferDefinitionVars(f->body)).VisitStmt(f->body);
  return body == f->body ? f : f->WithBody(body);
}

}  // namespace

Pass FoldConstant() { return CreatePrimFuncPass(FoldConstantFunc, 0, "dsl.FoldConstant"); }
TESSERA_REGISTER_PASS("dsl.FoldConstant", FoldConstant);

}  // namespace transform
}  // namespace tessera
