// tir.RemoveAssume and tir.RemoveStoreUndef: the statements that only carry information for the
// analyses (T.assume) or store a value that is not defined (T.undef) are dropped before code
// generation, and what is left empty by that (a loop of assumptions) goes with tir.RemoveNoOp,
// as TVM's passes of these names do.
#include <unordered_set>

#include "tessera/ir/functor.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/support/error.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace transform {
namespace {

Stmt Nothing(const Span& span) { return EvaluateNode::Make(Int32(0), span); }

class AssumeRemover : public StmtMutator {
 public:
  using StmtMutator::VisitStmt_;
  Stmt VisitStmt_(const EvaluateNode* op) override {
    auto* call = AsPtr<CallNode>(op->value);
    if (call && call->is_op("tir.assume")) return Nothing(op->span);
    return GetRef(op);
  }
};

PrimFunc RemoveAssumeFunc(PrimFunc f, IRModule, const PassContext&) {
  Stmt body = AssumeRemover().VisitStmt(f->body);
  return body == f->body ? f : f->WithBody(body);
}

/*! \brief Stores of a value that depends on T.undef() (directly or through a LetStmt variable
 *  bound to one) are removed with the LetStmts binding such values; an index that depends on one
 *  (of the store or of a load it reads) is an error, since no address can be made of it. */
class UndefStoreRemover : public StmtMutator {
 public:
  using StmtMutator::VisitStmt_;

  Stmt VisitStmt_(const LetStmtNode* op) override {
    if (!DependsOnUndef(op->value)) return StmtMutator::VisitStmt_(op);
    undef_vars_.insert(op->var.get());
    return VisitStmt(op->body);
  }

  Stmt VisitStmt_(const BufferStoreNode* op) override {
    for (const Expr& index : op->indices) CheckIndex(index, op->buffer, op->span);
    PostOrderVisit(op->value, [&](const ObjectRef& n) {
      if (auto* load = AsPtr<BufferLoadNode>(n)) {
        for (const Expr& index : load->indices) CheckIndex(index, load->buffer, op->span);
      }
    });
    if (DependsOnUndef(op->value)) return Nothing(op->span);
    return GetRef(op);
  }

 private:
  bool DependsOnUndef(const Expr& e) const {
    bool found = false;
    PostOrderVisit(e, [&](const ObjectRef& n) {
      if (auto* call = AsPtr<CallNode>(n)) {
        if (call->is_op("tir.undef")) found = true;
      } else if (auto* var = AsPtr<VarNode>(n)) {
        if (undef_vars_.count(var)) found = true;
      }
    });
    return found;
  }

  void CheckIndex(const Expr& index, const Buffer& buffer, const Span& span) const {
    if (!DependsOnUndef(index)) return;
    TESSERA_THROW_KIND(span, ErrorKind::kValue)
        << "tir.RemoveStoreUndef: an index of buffer " << buffer->name
        << " depends on T.undef(); an undefined value may be stored, but not used as an index";
  }

  std::unordered_set<const VarNode*> undef_vars_;
};

PrimFunc RemoveStoreUndefFunc(PrimFunc f, IRModule, const PassContext&) {
  Stmt body = UndefStoreRemover().VisitStmt(f->body);
  return body == f->body ? f : f->WithBody(body);
}

}  // namespace

Pass RemoveAssume() {
  return Sequential({CreatePrimFuncPass(RemoveAssumeFunc, 0, "tir.RemoveAssumeInternal"), RemoveNoOp()},
                    "tir.RemoveAssume");
}
TESSERA_REGISTER_PASS("tir.RemoveAssume", RemoveAssume);

Pass RemoveStoreUndef() {
  return Sequential(
      {CreatePrimFuncPass(RemoveStoreUndefFunc, 0, "tir.RemoveStoreUndefInternal"), RemoveNoOp()},
      "tir.RemoveStoreUndef");
}
TESSERA_REGISTER_PASS("tir.RemoveStoreUndef", RemoveStoreUndef);

}  // namespace transform
}  // namespace tessera
