// tir.RemoveNoOp: drop statements that do nothing.
#include "tessera/ir/functor.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/ir/op.h"
#include "tessera/ir/structural_equal.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace transform {
namespace {

// Whether evaluating `e` can have an effect (a call that is not pure).
bool HasSideEffect(const Expr& e) {
  bool effect = false;
  PostOrderVisit(e, [&effect](const ObjectRef& n) {
    auto* call = AsPtr<CallNode>(n);
    if (!call) return;
    auto* op = AsPtr<OpNode>(call->op);
    if (!op || op->effect != CallEffect::kPure) effect = true;
  });
  return effect;
}

bool IsNoOp(const Stmt& s) {
  auto* e = AsPtr<EvaluateNode>(s);
  return e && (IsInstance<IntImmNode>(e->value.get()) || IsInstance<FloatImmNode>(e->value.get()));
}

Stmt NoOp(const Span& span) { return EvaluateNode::Make(Int32(0), span); }

bool Uses(const Stmt& s, const VarNode* var) {
  return UsesVar(s, [var](const VarNode* v) { return v == var; });
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
    if (IsConstInt(f->extent, 0) || IsNoOp(f->body)) return NoOp(op->span);
    return s;
  }
  Stmt VisitStmt_(const WhileNode* op) override {
    Stmt s = StmtMutator::VisitStmt_(op);
    auto* w = AsPtr<WhileNode>(s);
    if (IsConstInt(w->condition, 0)) return NoOp(op->span);
    return s;
  }
  Stmt VisitStmt_(const IfThenElseNode* op) override {
    Stmt s = StmtMutator::VisitStmt_(op);
    auto* i = AsPtr<IfThenElseNode>(s);
    bool else_empty = !i->else_case || IsNoOp(i->else_case);
    if (IsNoOp(i->then_case) && else_empty && !HasSideEffect(i->condition)) return NoOp(op->span);
    if (i->else_case && IsNoOp(i->else_case)) {
      return IfThenElseNode::Make(i->condition, i->then_case, nullptr, i->span);
    }
    return s;
  }
  Stmt VisitStmt_(const LetStmtNode* op) override {
    Stmt s = StmtMutator::VisitStmt_(op);
    auto* let = AsPtr<LetStmtNode>(s);
    // An unused binding whose value has no effect.
    if (!HasSideEffect(let->value) && (IsNoOp(let->body) || !Uses(let->body, let->var.get()))) {
      return let->body;
    }
    return s;
  }
  Stmt VisitStmt_(const AllocateNode* op) override {
    Stmt s = StmtMutator::VisitStmt_(op);
    auto* a = AsPtr<AllocateNode>(s);
    if (IsNoOp(a->body) || !Uses(a->body, a->buffer_var.get())) return a->body;
    return s;
  }
  Stmt VisitStmt_(const DeclBufferNode* op) override {
    Stmt s = StmtMutator::VisitStmt_(op);
    auto* d = AsPtr<DeclBufferNode>(s);
    if (IsNoOp(d->body)) return d->body;
    return s;
  }
  Stmt VisitStmt_(const AttrStmtNode* op) override {
    Stmt s = StmtMutator::VisitStmt_(op);
    auto* a = AsPtr<AttrStmtNode>(s);
    if (IsNoOp(a->body)) return a->body;
    return s;
  }
  Stmt VisitStmt_(const EvaluateNode* op) override {
    // A value computed for nothing: a pure expression without calls of effect.
    if (!IsNoOp(GetRef(op)) && !HasSideEffect(op->value) &&
        !IsInstance<CallNode>(op->value.get())) {
      return NoOp(op->span);
    }
    if (auto* call = AsPtr<CallNode>(op->value)) {
      auto* callee = AsPtr<OpNode>(call->op);
      if (callee && callee->effect == CallEffect::kPure && !HasSideEffect(op->value)) {
        return NoOp(op->span);
      }
    }
    return GetRef(op);
  }
  Stmt VisitStmt_(const BufferStoreNode* op) override {
    // A[i] = A[i]
    auto* load = AsPtr<BufferLoadNode>(op->value);
    if (load && load->buffer == op->buffer && !op->predicate && !load->predicate &&
        load->indices.size() == op->indices.size()) {
      bool same = true;
      for (size_t i = 0; i < op->indices.size() && same; ++i) {
        same = StructuralEqual(load->indices[i], op->indices[i]);
      }
      if (same) return NoOp(op->span);
    }
    return GetRef(op);
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
