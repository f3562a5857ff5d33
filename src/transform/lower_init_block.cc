// tir.LowerInitBlock: a block's T.init() becomes an `if` that runs it when every reduction
// iterator is at its minimum, ahead of the block's body.
#include "tessera/ir/functor.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace transform {
namespace {

class InitBlockLowerer : public StmtMutator {
 public:
  using StmtMutator::VisitStmt_;
  Stmt VisitStmt_(const BlockNode* op) override {
    Stmt s = StmtMutator::VisitStmt_(op);
    auto* b = AsPtr<BlockNode>(s);
    if (!b->init) return s;
    Expr first;
    for (const IterVar& iv : b->iter_vars) {
      if (iv->iter_type != IterVarType::kCommReduce) continue;
      Expr at_min = EQNode::Make(iv->var, iv->dom->min);
      first = first ? Expr(AndNode::Make(first, at_min)) : at_min;
    }
    Stmt init =
        first ? Stmt(IfThenElseNode::Make(first, b->init, nullptr, b->init->span)) : b->init;
    Stmt body = SeqStmtNode::Flatten({init, b->body}, b->span);
    return BlockNode::Make(b->iter_vars, b->reads, b->writes, b->name_hint, body, nullptr,
                           b->alloc_buffers, b->match_buffers, b->annotations, b->span);
  }
};

PrimFunc LowerInitBlockFunc(PrimFunc f, IRModule, const PassContext&) {
  Stmt body = InitBlockLowerer().VisitStmt(f->body);
  return body == f->body ? f : f->WithBody(body);
}

}  // namespace

Pass LowerInitBlock() { return CreatePrimFuncPass(LowerInitBlockFunc, 0, "tir.LowerInitBlock"); }
TESSERA_REGISTER_PASS("tir.LowerInitBlock", LowerInitBlock);

}  // namespace transform
}  // namespace tessera
