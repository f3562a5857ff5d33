// Substitution and variable-use queries over expressions and statements.
#include "tessera/transform/ir_utils.h"

#include "tessera/ir/functor.h"

namespace tessera {
namespace transform {
namespace {

class Substituter : public StmtExprMutator {
 public:
  explicit Substituter(const VarMap& vmap) : vmap_(vmap) {}
  using StmtExprMutator::VisitExpr_;
  Expr VisitExpr_(const VarNode* op) override { return Lookup(op); }
  Expr VisitExpr_(const SizeVarNode* op) override { return Lookup(op); }

 private:
  Expr Lookup(const VarNode* op) {
    auto it = vmap_.find(op);
    return it == vmap_.end() ? GetRef(op) : it->second;
  }
  const VarMap& vmap_;
};

class VarUseFinder : public StmtExprVisitor {
 public:
  explicit VarUseFinder(const std::function<bool(const VarNode*)>& pred) : pred_(pred) {}
  using StmtExprVisitor::VisitExpr_;
  using StmtExprVisitor::VisitStmt_;
  void VisitExpr(const Expr& e) override {
    if (!found) StmtExprVisitor::VisitExpr(e);
  }
  void VisitStmt(const Stmt& s) override {
    if (!found) StmtExprVisitor::VisitStmt(s);
  }
  void VisitExpr_(const VarNode* op) override { found = found || pred_(op); }
  void VisitExpr_(const SizeVarNode* op) override { found = found || pred_(op); }
  void VisitExpr_(const BufferLoadNode* op) override {
    found = found || pred_(op->buffer->data.get());
    StmtExprVisitor::VisitExpr_(op);
  }
  void VisitStmt_(const BufferStoreNode* op) override {
    found = found || pred_(op->buffer->data.get());
    StmtExprVisitor::VisitStmt_(op);
  }
  bool found = false;

 private:
  const std::function<bool(const VarNode*)>& pred_;
};

}  // namespace

Expr Substitute(const Expr& e, const VarMap& vmap) {
  if (vmap.empty()) return e;
  return Substituter(vmap).VisitExpr(e);
}

Stmt Substitute(const Stmt& s, const VarMap& vmap) {
  if (vmap.empty()) return s;
  return Substituter(vmap).VisitStmt(s);
}

bool UsesVar(const Expr& e, const std::function<bool(const VarNode*)>& pred) {
  VarUseFinder f(pred);
  f.VisitExpr(e);
  return f.found;
}

bool UsesVar(const Stmt& s, const std::function<bool(const VarNode*)>& pred) {
  VarUseFinder f(pred);
  f.VisitStmt(s);
  return f.found;
}

bool IsPublic(const PrimFunc& func) { return func->attrs.count("global_symbol") != 0; }

std::string SymbolName(const GlobalVar& gv, const PrimFunc& func) {
  return func->GetStrAttr("global_symbol", gv->name_hint);
}

}  // namespace transform
}  // namespace tessera
