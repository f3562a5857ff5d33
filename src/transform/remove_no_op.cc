// tir.RemoveNoOp: drop statements that do nothing.
#include "tessera/ir/functor.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace transform {
namespace {

bool IsNoOp(const Stmt& s) {
  auto* e = AsPtr<EvaluateNode>(s);
  return e && (IsInstance<IntImmNode>(e->value.get()) || IsInstance<FloatImmNode>(e->value.get()));
}

class NoOpRemover : public StmtMutator {
 public:
  using StmtMutator::VisitStmt_;
  Stmt VisitStmt_(const SeqStmtNode* op) override {
    std::vector<Stmt> seq;
    bool changed = false;
    for (const Stmt& s : op->seq) {
      Stmt t = VisitStmt(s);
      changed = changed || t != s;
      if (IsNoOp(t)) {
        changed = true;
        continue;
      }
      seq.push_back(t);
    }
    if (!changed) return GetRef(op);
    return SeqStmtNode::Flatten(seq, op->span);
  }
  Stmt VisitStmt_(const ForNode* op) override {
    Stmt s = StmtMutator::VisitStmt_(op);
    auto* f = AsPtr<ForNode>(s);
    if (IsConstInt(f->extent, 0) || IsNoOp(f->body)) return EvaluateNode::Make(Int32(0), op->span);
    return s;
  }
  Stmt VisitStmt_(const IfThenElseNode* op) override {
    Stmt s = StmtMutator::VisitStmt_(op);
    auto* i = AsPtr<IfThenElseNode>(s);
    bool else_empty = !i->else_case || IsNoOp(i->else_case);
    if (IsNoOp(i->then_case) && else_empty) return EvaluateNode::Make(Int32(0), op->span);
    if (i->else_case && IsNoOp(i->else_case)) {
      return IfThenElseNode::Make(i->condition, i->then_case, nullptr, i->span);
    }
    return s;
  }
};

PrimFunc RemoveNoOpFunc(PrimFunc f, IRModule, const PassContext&) {
  Stmt body = NoOpRemover().VisitStmt(f->body);
  return body == f->body ? f : f->WithBody(body);
}

}  // namespace

Pass RemoveNoOp() { return CreatePrimFuncPass(RemoveNoOpFunc, 0, "tir.RemoveNoOp"); }
TESSERA_REGISTER_PASS("tir.RemoveNoOp", RemoveNoOp);

Pass BindTarget(const std::string& target) {
  return CreatePrimFuncPass(
      [target](PrimFunc f, IRModule, const PassContext&) {
        if (f->GetStrAttr("target") == target) return f;
        return f->WithAttr("target", StringImmNode::Make(target));
      },
      0, "tir.BindTarget");
}

}  // namespace transform
}  // namespace tessera
