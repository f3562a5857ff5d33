// tir.CombineContextCall: in a host function, each distinct `tvm_thread_context(ctx)` is made
// once, in a `ctx_cache_` variable bound before the region that uses it (the function, a thread
// launch or a parallel loop, whose threads each need their own), as TVM's pass of this name does.
// A context that uses a variable defined inside that region stays where it is.
#include <unordered_set>
#include <utility>
#include <vector>

#include "tessera/ir/functor.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/ir/structural_equal.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace transform {
namespace {

class ContextCombiner : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;

  Stmt Combine(const Stmt& body) {
    return Region([&] { return VisitStmt(body); });
  }

  Expr VisitExpr_(const CallNode* op) override {
    if (!op->is_op("tir.tvm_thread_context") || op->args.size() != 1) {
      return StmtExprMutator::VisitExpr_(op);
    }
    Expr ctx = VisitExpr(op->args[0]);
    if (UsesVar(ctx, [&](const VarNode* v) { return inner_.count(v) != 0; })) {
      return ctx == op->args[0] ? GetRef(op) : CallNode::Make(op->dtype, op->op, {ctx}, op->span);
    }
    for (const auto& [known, var] : contexts_) {
      if (StructuralEqual(known, ctx)) return var;
    }
    Var var = VarNode::Make("ctx_cache_", ctx->dtype);
    contexts_.emplace_back(ctx, var);
    return var;
  }
  Stmt VisitStmt_(const AttrStmtNode* op) override {
    if (op->attr_key != "thread_extent" && op->attr_key != "coproc_uop_scope") {
      return StmtExprMutator::VisitStmt_(op);
    }
    return Region([&] { return StmtExprMutator::VisitStmt_(op); });
  }
  Stmt VisitStmt_(const ForNode* op) override {
    if (op->for_kind != ForKind::kParallel) return Defining(op->loop_var, op);
    return Region([&] { return Defining(op->loop_var, op); });
  }
  Stmt VisitStmt_(const LetStmtNode* op) override { return Defining(op->var, op); }
  Stmt VisitStmt_(const AllocateNode* op) override { return Defining(op->buffer_var, op); }

 private:
  template <class Node>
  Stmt Defining(const Var& v, const Node* op) {
    inner_.insert(v.get());
    Stmt s = StmtExprMutator::VisitStmt_(op);
    inner_.erase(v.get());
    return s;
  }
  // The contexts first used inside `visit`'s statement are bound around it, the first outermost.
  template <class F>
  Stmt Region(F visit) {
    auto saved_contexts = std::move(contexts_);
    auto saved_inner = std::move(inner_);
    contexts_.clear();
    inner_.clear();
    Stmt body = visit();
    for (auto it = contexts_.rbegin(); it != contexts_.rend(); ++it) {
      body = LetStmtNode::Make(it->second, it->first, body);
    }
    contexts_ = std::move(saved_contexts);
    inner_ = std::move(saved_inner);
    return body;
  }

  std::vector<std::pair<Expr, Var>> contexts_;
  std::unordered_set<const VarNode*> inner_;
};

bool IsHostFunction(const PrimFunc& f) {
  auto it = f->attrs.find("target");
  if (it == f->attrs.end()) return false;
  std::string kind = TargetKindOf(it->second);
  return kind == "c" || kind == "llvm";
}

PrimFunc CombineContextCallFunc(PrimFunc f, IRModule, const PassContext&) {
  if (!IsHostFunction(f)) return f;
  Stmt body = ContextCombiner().Combine(f->body);
  return body == f->body ? f : f->WithBody(body);
}

}  // namespace

Pass CombineContextCall() {
  return CreatePrimFuncPass(CombineContextCallFunc, 0, "tir.CombineContextCall");
}
TESSERA_REGISTER_PASS("tir.CombineContextCall", CombineContextCall);

}  // namespace transform
}  // namespace tessera
