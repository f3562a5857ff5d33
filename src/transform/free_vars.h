// The variables a region of TIR uses but does not define, in order of first use (private to the
// transform layer: the parameters of a region outlined into a function of its own).
#pragma once

#include <unordered_set>
#include <vector>

#include "tessera/ir/functor.h"

namespace tessera {
namespace transform {

class FreeVarCollector : public StmtExprVisitor {
 public:
  using StmtExprVisitor::VisitExpr_;
  using StmtExprVisitor::VisitStmt_;
  std::vector<Var> free;

  void VisitExpr_(const VarNode* op) override { Use(op); }
  void VisitExpr_(const SizeVarNode* op) override { Use(op); }
  void VisitExpr_(const LetNode* op) override {
    defined_.insert(op->var.get());
    StmtExprVisitor::VisitExpr_(op);
  }
  void VisitExpr_(const BufferLoadNode* op) override {
    UseBuffer(op->buffer.get());
    StmtExprVisitor::VisitExpr_(op);
  }
  void VisitStmt_(const BufferStoreNode* op) override {
    UseBuffer(op->buffer.get());
    StmtExprVisitor::VisitStmt_(op);
  }
  void VisitStmt_(const ForNode* op) override {
    defined_.insert(op->loop_var.get());
    StmtExprVisitor::VisitStmt_(op);
  }
  void VisitStmt_(const LetStmtNode* op) override {
    defined_.insert(op->var.get());
    StmtExprVisitor::VisitStmt_(op);
  }
  void VisitStmt_(const AllocateNode* op) override {
    defined_.insert(op->buffer_var.get());
    StmtExprVisitor::VisitStmt_(op);
  }
  void VisitStmt_(const AllocateConstNode* op) override {
    defined_.insert(op->buffer_var.get());
    StmtExprVisitor::VisitStmt_(op);
  }
  void VisitStmt_(const DeclBufferNode* op) override {
    UseBuffer(op->buffer.get());
    StmtExprVisitor::VisitStmt_(op);
  }

 protected:
  void Use(const VarNode* v) {
    if (defined_.count(v) || !seen_.insert(v).second) return;
    free.push_back(GetRef(v));
  }
  void UseBuffer(const BufferNode* b) {
    Use(b->data.get());
    if (b->elem_offset) VisitExpr(b->elem_offset);
  }
  std::unordered_set<const VarNode*> defined_, seen_;
};

}  // namespace transform
}  // namespace tessera
