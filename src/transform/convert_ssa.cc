// tir.ConvertSSA: every variable of a module is defined once, as TVM's pass of this name makes
// it. A function that defines a variable again (within itself, or one an earlier function of
// the module defines) gets new definitions throughout; a use refers to the innermost definition
// around it. The thread variable of `T.launch_thread` is defined once per function, however
// many launches name it. A module already in SSA form is returned as it is.
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "def_renewer.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace transform {
namespace {

const VarNode* ThreadVar(const AttrStmtNode* op) {
  auto* iv = AsPtr<IterVarNode>(op->node);
  return iv && op->attr_key == "thread_extent" ? iv->var.get() : nullptr;
}

/*! \brief The variables a function defines, in order, each as often as it is defined. */
class DefinitionCollector : public StmtExprVisitor {
 public:
  using StmtExprVisitor::VisitExpr_;
  using StmtExprVisitor::VisitStmt_;
  std::vector<const VarNode*> defs;

  void VisitStmt_(const LetStmtNode* op) override {
    defs.push_back(op->var.get());
    StmtExprVisitor::VisitStmt_(op);
  }
  void VisitExpr_(const LetNode* op) override {
    defs.push_back(op->var.get());
    StmtExprVisitor::VisitExpr_(op);
  }
  void VisitStmt_(const ForNode* op) override {
    defs.push_back(op->loop_var.get());
    StmtExprVisitor::VisitStmt_(op);
  }
  void VisitStmt_(const AllocateNode* op) override {
    defs.push_back(op->buffer_var.get());
    StmtExprVisitor::VisitStmt_(op);
  }
  void VisitStmt_(const AllocateConstNode* op) override {
    defs.push_back(op->buffer_var.get());
    StmtExprVisitor::VisitStmt_(op);
  }
  void VisitStmt_(const BlockNode* op) override {
    for (const IterVar& iv : op->iter_vars) defs.push_back(iv->var.get());
    for (const Buffer& b : op->alloc_buffers) defs.push_back(b->data.get());
    for (const MatchBufferRegion& m : op->match_buffers) defs.push_back(m->buffer->data.get());
    StmtExprVisitor::VisitStmt_(op);
  }
  void VisitStmt_(const AttrStmtNode* op) override {
    if (const VarNode* v = ThreadVar(op); v && threads_.insert(v).second) defs.push_back(v);
    StmtExprVisitor::VisitStmt_(op);
  }

 private:
  std::unordered_set<const VarNode*> threads_;
};

/*! \brief RenewDefs with scopes: a definition's new variable is used inside its scope only. */
class SSARenewer : public DefRenewer {
 public:
  using DefRenewer::VisitExpr_;
  using DefRenewer::VisitStmt_;

  Stmt VisitStmt_(const LetStmtNode* op) override {
    return Scoped(op->var.get(), [&] { return DefRenewer::VisitStmt_(op); });
  }
  Stmt VisitStmt_(const ForNode* op) override {
    return Scoped(op->loop_var.get(), [&] { return DefRenewer::VisitStmt_(op); });
  }
  Stmt VisitStmt_(const AllocateNode* op) override {
    return Scoped(op->buffer_var.get(), [&] { return DefRenewer::VisitStmt_(op); });
  }
  Stmt VisitStmt_(const AllocateConstNode* op) override {
    return Scoped(op->buffer_var.get(), [&] { return DefRenewer::VisitStmt_(op); });
  }
  Expr VisitExpr_(const LetNode* op) override {
    Expr value = VisitExpr(op->value);
    auto saved = vars_.find(op->var.get());
    Expr outer = saved == vars_.end() ? Expr() : saved->second;
    Var v = Renew(op->var);
    Expr e = LetNode::Make(v, value, VisitExpr(op->body), op->span);
    Restore(op->var.get(), outer);
    return e;
  }
  Stmt VisitStmt_(const AttrStmtNode* op) override {
    const VarNode* v = ThreadVar(op);
    if (v == nullptr) return DefRenewer::VisitStmt_(op);
    if (vars_.count(v) == 0) Renew(GetRef(v));  // one definition for all launches of v
    auto* iv = AsPtr<IterVarNode>(op->node);
    IterVar node =
        IterVarNode::Make(RenewRange(iv->dom), As<VarNode>(Lookup(v)), iv->iter_type,
                          iv->thread_tag, iv->span);
    return AttrStmtNode::Make(node, op->attr_key, VisitExpr(op->value), VisitStmt(op->body),
                              op->span);
  }

 private:
  template <class F>
  Stmt Scoped(const VarNode* v, F visit) {
    auto it = vars_.find(v);
    Expr outer = it == vars_.end() ? Expr() : it->second;
    Stmt s = visit();
    Restore(v, outer);
    return s;
  }
  void Restore(const VarNode* v, const Expr& outer) {
    if (outer) {
      vars_[v] = outer;
    } else {
      vars_.erase(v);
    }
  }
};

IRModule ConvertSSAModule(IRModule mod, const PassContext&) {
  std::unordered_set<const VarNode*> seen;
  std::vector<std::pair<GlobalVar, PrimFunc>> out;
  bool changed = false;
  for (const auto& [gv, f] : mod->functions) {
    DefinitionCollector collector;
    for (const Var& p : f->params) collector.defs.push_back(p.get());
    for (const auto& [param, buffer] : f->buffer_map) collector.defs.push_back(buffer->data.get());
    collector.VisitStmt(f->body);
    bool repeated = false;
    for (const VarNode* v : collector.defs) repeated = !seen.insert(v).second || repeated;
    if (!repeated) {
      out.emplace_back(gv, f);
      continue;
    }
    SSARenewer renewer;
    PrimFunc g = RenewFunction(renewer, f);
    // The renewed function's definitions are all new: nothing later can repeat them.
    out.emplace_back(gv, g);
    changed = true;
  }
  return changed ? IRModuleNode::Make(std::move(out), mod->attrs) : mod;
}

}  // namespace

Pass ConvertSSA() { return CreateModulePass(ConvertSSAModule, 0, "tir.ConvertSSA"); }
TESSERA_REGISTER_PASS("tir.ConvertSSA", ConvertSSA);

}  // namespace transform
}  // namespace tessera
