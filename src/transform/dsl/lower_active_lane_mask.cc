// dsl.LowerActiveLaneMask: the lane masks tir.VectorizeLoop puts on the loads and stores of a
// loop's tail become DSL masks, as Compass writes them:
//
//   get_active_lane_mask(0, 3), 8 lanes  ->  const_mask(T, T, T, F, F, F, F, F)
//                                            (C: __vmov_w(0x00000111))
//   get_active_lane_mask(i, n)           ->  tail_mask(n - i)  (lanes below n - i)
#include "tessera/arith/analyzer.h"
#include "tessera/ir/expr_ops.h"
#include "tessera/ir/functor.h"
#include "tessera/ir/op.h"
#include "tessera/transform/dsl_passes.h"

namespace tessera {
namespace transform {
namespace {

class ActiveLaneMaskLowerer : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitExpr_;

  Expr VisitExpr_(const CallNode* op) override {
    Expr e = StmtExprMutator::VisitExpr_(op);
    const auto* call = AsPtr<CallNode>(e);
    if (call == nullptr || !call->is_op("tir.get_active_lane_mask") || call->args.size() != 2 ||
        call->dtype.is_scalable_vector()) {
      return e;
    }
    int lanes = call->dtype.lanes();
    DataType mask = DataType::Bool(lanes);
    // Lane i is active where base + i < limit: the first limit - base lanes.
    Expr count = ana_.Simplify(SubE(call->args[1], call->args[0]));
    if (const auto* imm = AsPtr<IntImmNode>(count)) {
      std::vector<Expr> on;
      for (int i = 0; i < lanes; ++i) {
        on.push_back(IntImmNode::Make(DataType::Bool(), i < imm->value ? 1 : 0, call->span));
      }
      return CallNode::Make(mask, OpNode::Get("dsl.const_mask"), std::move(on), call->span);
    }
    return CallNode::Make(mask, OpNode::Get("dsl.tail_mask"), {count}, call->span);
  }

 private:
  arith::Analyzer ana_;
};

PrimFunc LowerActiveLaneMaskFunc(PrimFunc f, IRModule, const PassContext&) {
  Stmt body = ActiveLaneMaskLowerer().VisitStmt(f->body);
  return body == f->body ? f : f->WithBody(body);
}

}  // namespace

Pass LowerActiveLaneMask() {
  return CreatePrimFuncPass(LowerActiveLaneMaskFunc, 0, "dsl.LowerActiveLaneMask");
}
TESSERA_REGISTER_PASS("dsl.LowerActiveLaneMask", LowerActiveLaneMask);

}  // namespace transform
}  // namespace tessera
