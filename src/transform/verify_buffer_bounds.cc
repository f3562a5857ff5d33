// tir.VerifyBufferBounds: a constant index outside a constant extent is a compile-time error, not
// a read or write past the buffer at run time.
#include <algorithm>

#include "tessera/ir/functor.h"
#include "tessera/support/error.h"
#include "tessera/transform/analysis.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace transform {
namespace {

class BoundsChecker : public StmtExprVisitor {
 public:
  using StmtExprVisitor::VisitExpr_;
  using StmtExprVisitor::VisitStmt_;
  std::vector<WellFormedError> errors;

  explicit BoundsChecker(Span span) : span_(std::move(span)) {}

  void VisitStmt(const Stmt& s) override {
    Span saved = span_;
    if (s->span.defined()) span_ = s->span;
    StmtExprVisitor::VisitStmt(s);
    span_ = saved;
  }
  void VisitExpr(const Expr& e) override {
    Span saved = span_;
    if (e->span.defined() && !IsInstance<VarNode>(e.get())) span_ = e->span;
    StmtExprVisitor::VisitExpr(e);
    span_ = saved;
  }
  void VisitExpr_(const BufferLoadNode* op) override {
    Check(op->buffer, op->indices);
    StmtExprVisitor::VisitExpr_(op);
  }
  void VisitStmt_(const BufferStoreNode* op) override {
    Check(op->buffer, op->indices);
    StmtExprVisitor::VisitStmt_(op);
  }

 private:
  void Check(const Buffer& buffer, const std::vector<Expr>& indices) {
    if (indices.size() != buffer->shape.size()) return;
    for (size_t d = 0; d < indices.size(); ++d) {
      auto extent = AsConstInt(buffer->shape[d]);
      if (!extent) continue;
      int64_t lo = 0, hi = 0;
      if (auto c = AsConstInt(indices[d])) {
        lo = hi = *c;
      } else if (auto* ramp = AsPtr<RampNode>(indices[d])) {
        auto base = AsConstInt(ramp->base), stride = AsConstInt(ramp->stride);
        if (!base || !stride) continue;
        int64_t last = *base + (ramp->lanes - 1) * *stride;
        lo = std::min(*base, last);
        hi = std::max(*base, last);
      } else {
        continue;
      }
      if (lo < 0 || hi >= *extent) {
        errors.push_back({"Index " + std::to_string(lo < 0 ? lo : hi) +
                              " is out of bounds for dimension " + std::to_string(d) +
                              " of buffer " + buffer->name + " (extent " +
                              std::to_string(*extent) + ")",
                          span_});
      }
    }
  }

  Span span_;
};

PrimFunc VerifyBufferBoundsFunc(PrimFunc f, IRModule, const PassContext&) {
  std::vector<WellFormedError> errors = VerifyConstantBufferBounds(f);
  if (!errors.empty()) TESSERA_THROW(errors.front().span) << errors.front().message;
  return f;
}

}  // namespace

std::vector<WellFormedError> VerifyConstantBufferBounds(const PrimFunc& func) {
  BoundsChecker checker(func->span);
  checker.VisitStmt(func->body);
  return std::move(checker.errors);
}

Pass VerifyBufferBounds() {
  return CreatePrimFuncPass(VerifyBufferBoundsFunc, 0, "tir.VerifyBufferBounds");
}
TESSERA_REGISTER_PASS("tir.VerifyBufferBounds", VerifyBufferBounds);

}  // namespace transform
}  // namespace tessera
