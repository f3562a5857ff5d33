// VerifySSA: each variable bound once; a let expression may be repeated with an equal value.
#include <unordered_map>

#include "tessera/ir/functor.h"
#include "tessera/ir/structural_equal.h"
#include "tessera/transform/analysis.h"

namespace tessera {
namespace transform {
namespace {

class SSAChecker : public StmtExprVisitor {
 public:
  using StmtExprVisitor::VisitExpr_;
  using StmtExprVisitor::VisitStmt_;
  bool ok = true;

  // A binding with no value (parameter, loop, allocation, iterator) never matches another.
  void Define(const VarNode* v, const Expr& value) {
    auto [it, fresh] = defs_.emplace(v, value);
    if (fresh) return;
    if (!value || !it->second || !StructuralEqual(value, it->second, /*map_free_vars=*/false)) {
      ok = false;
    }
  }

  void VisitExpr_(const LetNode* op) override {
    Define(op->var.get(), op->value);
    StmtExprVisitor::VisitExpr_(op);
  }
  void VisitStmt_(const LetStmtNode* op) override {
    Define(op->var.get(), nullptr);
    StmtExprVisitor::VisitStmt_(op);
  }
  void VisitStmt_(const ForNode* op) override {
    Define(op->loop_var.get(), nullptr);
    StmtExprVisitor::VisitStmt_(op);
  }
  void VisitStmt_(const AllocateNode* op) override {
    Define(op->buffer_var.get(), nullptr);
    StmtExprVisitor::VisitStmt_(op);
  }
  void VisitStmt_(const AllocateConstNode* op) override {
    Define(op->buffer_var.get(), nullptr);
    StmtExprVisitor::VisitStmt_(op);
  }
  void VisitStmt_(const BlockNode* op) override {
    for (const IterVar& iv : op->iter_vars) Define(iv->var.get(), nullptr);
    StmtExprVisitor::VisitStmt_(op);
  }

 private:
  std::unordered_map<const VarNode*, Expr> defs_;
};

}  // namespace

bool VerifySSA(const PrimFunc& func) {
  SSAChecker checker;
  for (const Var& p : func->params) checker.Define(p.get(), nullptr);
  checker.VisitStmt(func->body);
  return checker.ok;
}

}  // namespace transform
}  // namespace tessera
