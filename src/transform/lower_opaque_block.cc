// tir.LowerOpaqueBlock: blocks disappear: their allocations become Allocate + DeclBuffer around
// their body and their predicates become `if`s. From here on the IR cannot be scheduled.
// As TVM v0.23 does, loops of extent 1 without annotations disappear (their variable becomes the
// loop's start), thread-bound loops become `T.launch_thread` (thread_extent / virtual_thread
// AttrStmts), and `pragma_*` annotations of loops and blocks become AttrStmts (sorted by key)
// around the lowered statement; other block annotations are dropped. A strided buffer allocates
// [shape[0], strides[0] / strides[1], ..., strides[n-2] / strides[n-1]].
// tessera's own pipeline runs the pass with `keep_loops`: thread-bound and unit loops stay loops
// and loop annotations stay on the loop, as its later passes and code generators expect.
#include "tessera/ir/buffer_strides.h"
#include "tessera/ir/functor.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/support/error.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace transform {
namespace {

bool IsPragmaKey(const std::string& key) { return key.compare(0, 7, "pragma_") == 0; }

class OpaqueBlockLowerer : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;
  explicit OpaqueBlockLowerer(bool keep_loops) : keep_loops_(keep_loops) {}

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
      if (!strides.empty() && strides.size() == buf->shape.size()) {
        for (size_t d = 1; d < strides.size(); ++d) {
          Expr outer = strides[d - 1], inner = strides[d];
          if (!IsConstInt(inner, 1)) outer = SimplifyExpr(FloorDivNode::Make(outer, inner));
          DataType t = buf->shape[d]->dtype;
          if (outer->dtype != t) outer = CastNode::Make(t, outer);
          extents[d] = outer;
        }
      } else if (!strides.empty() && !buf->shape.empty()) {
        Expr stride = strides[0];
        Expr n = buf->shape[0];
        if (stride->dtype != n->dtype) stride = CastNode::Make(n->dtype, stride);
        extents = {SimplifyExpr(MulNode::Make(n, stride))};
      }
      body = AllocateNode::Make(buf->data, buf->dtype, extents, Bool(true), body, {}, buf->span);
    }
    Expr predicate = VisitExpr(op->predicate);
    if (!IsConstInt(predicate, 1)) body = IfThenElseNode::Make(predicate, body, nullptr, op->span);
    // Block pragmas wrap the lowered block; the block's other annotations are dropped.
    return WrapPragmas(b->annotations, IntImmNode::Make(DataType::Int(32), 0), body, b->span);
  }

  Stmt VisitStmt_(const ForNode* op) override {
    if (keep_loops_) return StmtExprMutator::VisitStmt_(op);
    Expr min = VisitExpr(op->min);
    Expr extent = VisitExpr(op->extent);
    bool unit = IsConstInt(extent, 1) && op->annotations.empty();
    if (unit) {
      Expr v = min;
      if (v->dtype != op->loop_var->dtype) v = CastNode::Make(op->loop_var->dtype, v);
      vmap_[op->loop_var.get()] = v;
    }
    Stmt body = VisitStmt(op->body);
    AttrMap kept;
    for (const auto& kv : op->annotations) {
      if (!IsPragmaKey(kv.first)) kept.emplace(kv.first, kv.second);
    }
    if (op->for_kind == ForKind::kThreadBinding && op->thread_binding) {
      const std::string& tag = op->thread_binding->thread_tag;
      bool virt =
          tag == "vthread" || tag == "vthread.x" || tag == "vthread.y" || tag == "vthread.z";
      IterVar iv = IterVarNode::Make(RangeNode::Make(min, extent), op->loop_var,
                                     IterVarType::kThreadIndex, tag, op->thread_binding->span);
      body = AttrStmtNode::Make(iv, virt ? "virtual_thread" : "thread_extent", extent, body,
                                op->span);
    } else if (unit) {
      return body;
    } else {
      body = ForNode::Make(op->loop_var, min, extent, op->for_kind, body, op->thread_binding, kept,
                           op->span, op->step);
    }
    return WrapPragmas(op->annotations, op->loop_var, body, op->span);
  }

  Stmt VisitStmt_(const BlockNode* op) override {
    TESSERA_THROW_KIND(op->span, ErrorKind::kValue)
        << "block " << op->name_hint << " appears without its BlockRealize";
  }

 private:
  /*! \brief `body` inside one AttrStmt per `pragma_*` annotation, the smallest key outermost. */
  Stmt WrapPragmas(const AttrMap& annotations, const ObjectRef& node, Stmt body, const Span& span) {
    if (keep_loops_) return body;
    std::vector<std::pair<std::string, Expr>> pragmas;
    for (const auto& kv : annotations) {
      if (!IsPragmaKey(kv.first)) continue;
      Expr value = As<ExprNode>(kv.second);
      if (kv.second && !value) {
        TESSERA_THROW_KIND(span, ErrorKind::kValue)
            << "tir.LowerOpaqueBlock: annotation " << kv.first
            << " must be a number or a string to become an attribute statement";
      }
      pragmas.emplace_back(kv.first, value);
    }
    // AttrMap is ordered by key: wrap from the last key so that the first ends outermost.
    for (auto it = pragmas.rbegin(); it != pragmas.rend(); ++it) {
      body = AttrStmtNode::Make(node, it->first, it->second, body, span);
    }
    return body;
  }

  bool keep_loops_;
  VarMap vmap_;
};

}  // namespace

Pass LowerOpaqueBlock(bool keep_loops) {
  return CreatePrimFuncPass(
      [keep_loops](PrimFunc f, IRModule, const PassContext&) {
        Stmt body = OpaqueBlockLowerer(keep_loops).VisitStmt(f->body);
        return body == f->body ? f : f->WithBody(body);
      },
      0, "tir.LowerOpaqueBlock");
}
TESSERA_REGISTER_PASS("tir.LowerOpaqueBlock", [] { return LowerOpaqueBlock(false); });

}  // namespace transform
}  // namespace tessera
