// tir.InlinePrivateFunctions: a call statement `T.evaluate(f(args))` of a private function is
// replaced by f's body with its parameters bound to the arguments, as TVM's pass of this name
// does; a function whose every call was inlined leaves the module. Not inlined: public
// functions, recursive ones, functions with buffer parameters or a block body (schedulable
// TIR), and calls between functions of different "target" attributes.
#include <map>
#include <set>
#include <string>

#include "tessera/ir/functor.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/ir/structural_equal.h"
#include "tessera/support/error.h"
#include "tessera/transform/passes.h"
#include "tessera/transform/specialize.h"

namespace tessera {
namespace transform {
namespace {

const GlobalVarNode* Callee(const CallNode* call) { return AsPtr<GlobalVarNode>(call->op); }

/*! \brief The functions that reach themselves through calls. */
std::set<std::string> RecursiveFunctions(const IRModule& mod) {
  std::map<std::string, std::set<std::string>> calls;
  for (const auto& [gv, f] : mod->functions) {
    PostOrderVisit(f->body, [&, name = gv->name_hint](const ObjectRef& n) {
      auto* call = AsPtr<CallNode>(n);
      if (call && Callee(call)) calls[name].insert(Callee(call)->name_hint);
    });
  }
  std::set<std::string> recursive;
  for (const auto& [start, _] : calls) {
    std::set<std::string> seen;
    std::vector<std::string> todo(calls[start].begin(), calls[start].end());
    while (!todo.empty()) {
      std::string f = todo.back();
      todo.pop_back();
      if (f == start) recursive.insert(start);
      if (!seen.insert(f).second) continue;
      auto it = calls.find(f);
      if (it != calls.end()) todo.insert(todo.end(), it->second.begin(), it->second.end());
    }
  }
  return recursive;
}

bool IsInlinable(const GlobalVar& gv, const PrimFunc& f, const std::set<std::string>& recursive) {
  return !IsPublic(f) && !recursive.count(gv->name_hint) && f->buffer_map.empty() &&
         !AsPtr<BlockRealizeNode>(f->body);
}

class Inliner : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;

  explicit Inliner(std::map<std::string, PrimFunc> inlinable) : inlinable_(std::move(inlinable)) {
    for (const auto& [name, _] : inlinable_) removable.insert(name);
  }

  PrimFunc VisitFunc(const PrimFunc& f) {
    auto it = f->attrs.find("target");
    target_ = it == f->attrs.end() ? ObjectRef() : it->second;
    Stmt body = VisitStmt(f->body);
    return body == f->body ? f : f->WithBody(body);
  }

  Stmt VisitStmt_(const EvaluateNode* op) override {
    auto* call = AsPtr<CallNode>(op->value);
    auto* gv = call ? Callee(call) : nullptr;
    auto it = gv ? inlinable_.find(gv->name_hint) : inlinable_.end();
    if (it == inlinable_.end() || !SameTarget(it->second)) return StmtExprMutator::VisitStmt_(op);
    const PrimFunc& callee = it->second;
    if (callee->params.size() != call->args.size()) {
      TESSERA_THROW_KIND(op->span, ErrorKind::kValue)
          << "tir.InlinePrivateFunctions: " << gv->name_hint << " takes " << callee->params.size()
          << " arguments, but is called with " << call->args.size();
    }
    // A fresh copy per call site, so that the definitions of two inlined bodies stay distinct.
    PrimFunc copy = RenewDefs(callee);
    std::vector<std::pair<Var, ObjectRef>> bind;
    for (size_t i = 0; i < copy->params.size(); ++i)
      bind.emplace_back(copy->params[i], call->args[i]);
    return VisitStmt(Specialize(copy, bind)->body);
  }

  Expr VisitExpr_(const CallNode* op) override {
    // A call left in place keeps its callee in the module.
    if (auto* gv = Callee(op)) removable.erase(gv->name_hint);
    return StmtExprMutator::VisitExpr_(op);
  }

  std::set<std::string> removable;

 private:
  bool SameTarget(const PrimFunc& callee) const {
    auto it = callee->attrs.find("target");
    if (!target_ || it == callee->attrs.end()) return true;
    return StructuralEqual(target_, it->second);
  }

  std::map<std::string, PrimFunc> inlinable_;
  ObjectRef target_;
};

IRModule InlinePrivateFunctionsModule(IRModule mod, const PassContext&) {
  std::set<std::string> recursive = RecursiveFunctions(mod);
  std::map<std::string, PrimFunc> inlinable;
  for (const auto& [gv, f] : mod->functions) {
    if (IsInlinable(gv, f, recursive)) inlinable[gv->name_hint] = f;
  }
  if (inlinable.empty()) return mod;
  Inliner inliner(std::move(inlinable));
  std::vector<std::pair<GlobalVar, PrimFunc>> updated;
  bool changed = false;
  for (const auto& [gv, f] : mod->functions) {
    PrimFunc g = inliner.VisitFunc(f);
    changed = changed || g != f;
    updated.emplace_back(gv, g);
  }
  if (!changed) return mod;
  std::vector<std::pair<GlobalVar, PrimFunc>> out;
  for (auto& [gv, f] : updated) {
    if (!inliner.removable.count(gv->name_hint)) out.emplace_back(gv, f);
  }
  return IRModuleNode::Make(std::move(out), mod->attrs);
}

}  // namespace

Pass InlinePrivateFunctions() {
  return CreateModulePass(InlinePrivateFunctionsModule, 0, "tir.InlinePrivateFunctions");
}
TESSERA_REGISTER_PASS("tir.InlinePrivateFunctions", InlinePrivateFunctions);

}  // namespace transform
}  // namespace tessera
