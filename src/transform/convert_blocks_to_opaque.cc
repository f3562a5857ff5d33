// tir.ConvertBlocksToOpaque: block iterators are replaced by their bindings, so every block
// becomes opaque (no iterators) and refers to the loop variables directly.
#include "tessera/ir/functor.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/support/error.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace transform {
namespace {

class BlockOpaquer : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;

  Expr VisitExpr_(const VarNode* op) override {
    auto it = vmap_.find(op);
    return it == vmap_.end() ? GetRef(op) : it->second;
  }

  Stmt VisitStmt_(const BlockRealizeNode* op) override {
    const Block& block = op->block;
    // The predicate and the bindings are evaluated outside the block: they may not read the
    // block's own iterators (as in TVM, where such IR is not well formed).
    for (const IterVar& iv : block->iter_vars) {
      const Var& var = iv->var;
      bool used = UsesVar(op->predicate, var.get());
      for (const Expr& v : op->iter_values) used = used || UsesVar(v, var.get());
      if (used) {
        TESSERA_THROW_KIND(op->span, ErrorKind::kValue)
            << "tir.ConvertBlocksToOpaque: block " << block->name_hint << "'s iterator "
            << var->name << " occurs in its own predicate (T.where) or iterator bindings; write "
            << "them in terms of the loop variables outside the block";
      }
    }
    std::vector<Expr> values;
    for (const Expr& v : op->iter_values) values.push_back(VisitExpr(v));
    Expr predicate = VisitExpr(op->predicate);
    for (size_t i = 0; i < block->iter_vars.size(); ++i) {
      vmap_[block->iter_vars[i]->var.get()] = values[i];
    }
    Stmt s = VisitStmt(block);
    auto* b = AsPtr<BlockNode>(s);
    if (block->iter_vars.empty() && s == block && predicate == op->predicate) return GetRef(op);
    Block opaque = BlockNode::Make({}, b->reads, b->writes, b->name_hint, b->body, b->init,
                                   b->alloc_buffers, b->match_buffers, b->annotations, b->span);
    return BlockRealizeNode::Make({}, predicate, opaque, op->span);
  }

 private:
  VarMap vmap_;
};

PrimFunc ConvertBlocksToOpaqueFunc(PrimFunc f, IRModule, const PassContext&) {
  Stmt body = BlockOpaquer().VisitStmt(f->body);
  return body == f->body ? f : f->WithBody(body);
}

}  // namespace

Pass ConvertBlocksToOpaque() {
  return CreatePrimFuncPass(ConvertBlocksToOpaqueFunc, 0, "tir.ConvertBlocksToOpaque");
}
TESSERA_REGISTER_PASS("tir.ConvertBlocksToOpaque", ConvertBlocksToOpaque);

}  // namespace transform
}  // namespace tessera
