// FindImpurity: the first store to memory the function did not allocate, or call with effects.
#include <optional>
#include <string>
#include <unordered_set>

#include "tessera/ir/functor.h"
#include "tessera/ir/op.h"
#include "tessera/transform/analysis.h"

namespace tessera {
namespace transform {
namespace {

// Ops that change control flow, annotate an expression or carry information for passes: as in
// TVM, they are no side effect of the function, whatever their registered effect says.
bool IsControlOrAnnotation(const std::string& name) {
  static const std::unordered_set<std::string> kOps = {
      "tir.ret",    "tir.thread_return",  "tir.continue_loop",     "tir.break_loop", "tir.likely",
      "tir.assume", "tir.tvm_access_ptr", "tir.tvm_static_handle", "tir.tvm_tuple"};
  return kOps.count(name) != 0;
}

class PurityChecker : public StmtExprVisitor {
 public:
  using StmtExprVisitor::VisitExpr_;
  using StmtExprVisitor::VisitStmt_;
  std::optional<WellFormedError> impurity;

  void VisitStmt(const Stmt& s) override {
    if (impurity) return;
    Span saved = span_;
    if (s->span.defined()) span_ = s->span;
    StmtExprVisitor::VisitStmt(s);
    span_ = saved;
  }
  void VisitExpr(const Expr& e) override {
    if (impurity) return;
    Span saved = span_;
    if (e->span.defined() && !IsInstance<VarNode>(e.get())) span_ = e->span;
    StmtExprVisitor::VisitExpr(e);
    span_ = saved;
  }

  void VisitStmt_(const AllocateNode* op) override {
    local_.insert(op->buffer_var.get());
    StmtExprVisitor::VisitStmt_(op);
  }
  void VisitStmt_(const BufferStoreNode* op) override {
    StmtExprVisitor::VisitStmt_(op);
    if (!impurity && !local_.count(op->buffer->data.get())) {
      Report("it stores to buffer " + op->buffer->name + ", which it did not allocate");
    }
  }
  void VisitExpr_(const CallNode* op) override {
    StmtExprVisitor::VisitExpr_(op);
    // A call of another function (a GlobalVar) may do anything, as an opaque op.
    auto* callee = AsPtr<OpNode>(op->op);
    CallEffect effect = callee ? callee->effect : CallEffect::kOpaque;
    if (callee && IsControlOrAnnotation(callee->name)) return;
    if (!impurity && (effect == CallEffect::kUpdateState || effect == CallEffect::kOpaque)) {
      Report("it calls " + op->op_name() + ", which may " +
             (effect == CallEffect::kOpaque ? "have any side effect" : "write memory or state"));
    }
  }

 private:
  void Report(const std::string& why) {
    impurity = WellFormedError{"The function is not pure: " + why, span_};
  }

  std::unordered_set<const VarNode*> local_;
  Span span_;
};

}  // namespace

std::optional<WellFormedError> FindImpurity(const PrimFunc& func) {
  PurityChecker checker;
  checker.VisitStmt(func->body);
  return checker.impurity;
}

}  // namespace transform
}  // namespace tessera
