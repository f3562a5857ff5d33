// tir.LowerOpaqueBlock: blocks disappear: their allocations become Allocate + DeclBuffer around
// their body and their predicates become `if`s. From here on the IR cannot be scheduled.
#include "tessera/ir/buffer_strides.h"
#include "tessera/ir/functor.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/support/error.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace transform {
namespace {

class OpaqueBlockLowerer : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;

  Expr VisitExpr_(const VarNode* op) override {
    auto it = vmap_.find(op);
    return it == vmap_.end() ? GetRef(op) : it->second;
  }

  Stmt VisitStmt_(const BlockRealizeNode* op) override {
    const Block& b = op->block;
    // Blocks that still have iterators read them as their bindings.
    for (size_t i = 0; i < b->iter_vars.size(); ++i) {
      vmap_[b->iter_vars[i]->var.get()] = VisitExpr(op->iter_values[i]);
    }
    if (!b->match_buffers.empty()) {
      TESSERA_THROW_KIND(b->span, ErrorKind::kValue)
          << "block " << b->name_hint
          << " still has match_buffer views: run tir.LowerMatchBuffer first";
    }
    Stmt body = VisitStmt(b->body);
    if (b->init) body = SeqStmtNode::Flatten({VisitStmt(b->init), body}, b->span);
    for (size_t i = b->alloc_buffers.size(); i-- > 0;) {
      const Buffer& buf = b->alloc_buffers[i];
      body = DeclBufferNode::Make(buf, body, buf->span);
      // A strided buffer (storage_align padding) spans its outermost dimension's stride times
      // its extent.
      // Strides as lowering sees them: fewer than the rank (cache_index's `strides=[1]`) are
      // the compact ones, and the allocation is the shape's.
      std::vector<Expr> extents = buf->shape;
      std::vector<Expr> strides = LoweringStrides(buf);
      if (!strides.empty() && !buf->shape.empty()) {
        Expr stride = strides[0];
        Expr n = buf->shape[0];
        if (stride->dtype != n->dtype) stride = CastNode::Make(n->dtype, stride);
        extents = {SimplifyExpr(MulNode::Make(n, stride))};
      }
      body = AllocateNode::Make(buf->data, buf->dtype, extents, Bool(true), body, {}, buf->span);
    }
    Expr predicate = VisitExpr(op->predicate);
    if (!IsConstInt(predicate, 1)) body = IfThenElseNode::Make(predicate, body, nullptr, op->span);
    return body;
  }

  Stmt VisitStmt_(const BlockNode* op) override {
    TESSERA_THROW_KIND(op->span, ErrorKind::kValue)
        << "block " << op->name_hint << " appears without its BlockRealize";
  }

 private:
  VarMap vmap_;
};

PrimFunc LowerOpaqueBlockFunc(PrimFunc f, IRModule, const PassContext&) {
  Stmt body = OpaqueBlockLowerer().VisitStmt(f->body);
  return body == f->body ? f : f->WithBody(body);
}

}  // namespace

Pass LowerOpaqueBlock() {
  return CreatePrimFuncPass(LowerOpaqueBlockFunc, 0, "tir.LowerOpaqueBlock");
}
TESSERA_REGISTER_PASS("tir.LowerOpaqueBlock", LowerOpaqueBlock);

}  // namespace transform
}  // namespace tessera
