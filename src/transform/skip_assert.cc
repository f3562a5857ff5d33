// tir.SkipAssert: with "tir.disable_assert", user T.Assert statements are removed.
#include "tessera/ir/functor.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace transform {
namespace {

class AssertRemover : public StmtMutator {
 public:
  using StmtMutator::VisitStmt_;
  Stmt VisitStmt_(const AssertStmtNode* op) override { return VisitStmt(op->body); }
};

PrimFunc SkipAssertFunc(PrimFunc f, IRModule, const PassContext& ctx) {
  if (!ctx.GetBool("tir.disable_assert", false)) return f;
  Stmt body = AssertRemover().VisitStmt(f->body);
  return body == f->body ? f : f->WithBody(body);
}

}  // namespace

Pass SkipAssert() { return CreatePrimFuncPass(SkipAssertFunc, 0, "tir.SkipAssert"); }
TESSERA_REGISTER_PASS("tir.SkipAssert", SkipAssert);

}  // namespace transform
}  // namespace tessera
