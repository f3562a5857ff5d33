// tir.InjectPTXAsyncCopy (CUDA): inside `async_scope` (tir.SkewSoftwarePipeline's
// asynchronous stages), a copy from global to shared memory of 4, 8 or 16 contiguous bytes
// (a scalar or a vector of consecutive lanes on both sides, after tir.VectorizeLoop and
// tir.FlattenBuffer) becomes ptx_cp_async(shared data, offset, global data, offset, bytes),
// offsets in elements. Other statements there stay as they are (synchronous, still correct:
// the pipeline's waits and barriers order them all the same). The scope attribute goes.
#include "tessera/ir/functor.h"
#include "tessera/ir/op.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace transform {
namespace {

bool IsScope(const BufferNode* b, std::initializer_list<const char*> scopes) {
  if (!b->data->pointer) return false;
  for (const char* s : scopes) {
    if (b->data->pointer->scope == s) return true;
  }
  return false;
}

/*! \brief The first element's index of a flat access of `lanes` consecutive elements. */
Expr Contiguous(const std::vector<Expr>& indices, int lanes) {
  if (indices.size() != 1) return nullptr;
  if (lanes == 1) return indices[0]->dtype.lanes() == 1 ? indices[0] : nullptr;
  auto* ramp = AsPtr<RampNode>(indices[0]);
  if (ramp == nullptr || ramp->lanes != lanes || !IsConstInt(ramp->stride, 1)) return nullptr;
  return ramp->base;
}

class AsyncCopyInjector : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;

  Stmt VisitStmt_(const AttrStmtNode* op) override {
    if (op->attr_key != "async_scope") return StmtExprMutator::VisitStmt_(op);
    bool saved = in_async_;
    in_async_ = true;
    Stmt body = VisitStmt(op->body);
    in_async_ = saved;
    return body;
  }

  Stmt VisitStmt_(const BufferStoreNode* op) override {
    if (!in_async_) return StmtExprMutator::VisitStmt_(op);
    auto* load = AsPtr<BufferLoadNode>(op->value);
    if (load == nullptr || op->predicate || load->predicate ||
        !IsScope(op->buffer.get(), {"shared", "shared.dyn"}) ||
        !IsScope(load->buffer.get(), {"global"}) || load->buffer->dtype != op->buffer->dtype) {
      return GetRef(op);
    }
    const int lanes = op->value->dtype.lanes();
    const int bytes = op->value->dtype.bytes();
    if (bytes != 4 && bytes != 8 && bytes != 16) return GetRef(op);
    Expr dst = Contiguous(op->indices, lanes);
    Expr src = Contiguous(load->indices, lanes);
    if (!dst || !src) return GetRef(op);
    Expr call = CallNode::Make(op->buffer->dtype, OpNode::Get("tir.ptx_cp_async"),
                               {op->buffer->data, dst, load->buffer->data, src, Int32(bytes)},
                               op->span);
    return EvaluateNode::Make(call, op->span);
  }

 private:
  bool in_async_ = false;
};

PrimFunc InjectPTXAsyncCopyFunc(PrimFunc f, IRModule, const PassContext&) {
  Stmt body = AsyncCopyInjector().VisitStmt(f->body);
  return body == f->body ? f : f->WithBody(body);
}

}  // namespace

Pass InjectPTXAsyncCopy() {
  return CreatePrimFuncPass(InjectPTXAsyncCopyFunc, 0, "tir.InjectPTXAsyncCopy");
}
TESSERA_REGISTER_PASS("tir.InjectPTXAsyncCopy", InjectPTXAsyncCopy);

}  // namespace transform
}  // namespace tessera
