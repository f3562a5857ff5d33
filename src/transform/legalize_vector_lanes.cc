// tir.LegalizeVectorLanes: the host's vector types have a power-of-two number of lanes, while
// tir.VectorizeLoop (as TVM's) makes one vector of a loop's whole extent. A store of n lanes,
// n not a power of two, becomes stores of power-of-two pieces (12 lanes: 8, then 4; a piece of
// one lane is scalar code):
//
//   B[T.Ramp(2, 1, 12)] = A[T.Ramp(2, 1, 12)] + T.Broadcast(x, 12)
//   ->  B[T.Ramp(2, 1, 8)] = A[T.Ramp(2, 1, 8)] + T.Broadcast(x, 8)
//       B[T.Ramp(10, 1, 4)] = A[T.Ramp(10, 1, 4)] + T.Broadcast(x, 4)
//
// A store whose value holds what cannot be cut into lanes (a vector variable, a shuffle, a
// reinterpret, a call that is not lane-wise) is left as it is (the code generator then says so).
#include <vector>

#include "tessera/arith/const_fold.h"
#include "tessera/ir/functor.h"
#include "tessera/ir/op.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace transform {
namespace {

struct NotSliceable {};

bool PowerOfTwo(int n) { return n > 0 && (n & (n - 1)) == 0; }

// Lanes [offset, offset + lanes) of a vector expression (a scalar when lanes is 1); scalars
// are their own slices.
class LaneSlicer : public ExprFunctor<Expr> {
 public:
  LaneSlicer(int offset, int lanes) : offset_(offset), lanes_(lanes) {}

  Expr VisitExpr(const Expr& e) override {
    if (e->dtype.is_scalar()) return e;
    if (e->dtype.is_scalable_vector()) throw NotSliceable();
    return ExprFunctor<Expr>::VisitExpr(e);
  }

  Expr VisitExpr_(const IntImmNode*) override { throw NotSliceable(); }
  Expr VisitExpr_(const FloatImmNode*) override { throw NotSliceable(); }
  Expr VisitExpr_(const StringImmNode*) override { throw NotSliceable(); }
  Expr VisitExpr_(const VarNode*) override { throw NotSliceable(); }
  Expr VisitExpr_(const SizeVarNode*) override { throw NotSliceable(); }
  Expr VisitExpr_(const CastNode* op) override {
    Expr v = VisitExpr(op->value);
    return CastNode::Make(op->dtype.with_lanes(lanes_), v, op->span);
  }
#define TESSERA_SLICE_BINARY(name)                                         \
  Expr VisitExpr_(const name##Node* op) override {                         \
    return name##Node::Make(VisitExpr(op->a), VisitExpr(op->b), op->span); \
  }
  TESSERA_BINARY_NODES(TESSERA_SLICE_BINARY)
#undef TESSERA_SLICE_BINARY
  Expr VisitExpr_(const NotNode* op) override { return NotNode::Make(VisitExpr(op->a), op->span); }
  Expr VisitExpr_(const SelectNode* op) override {
    return SelectNode::Make(VisitExpr(op->condition), VisitExpr(op->true_value),
                            VisitExpr(op->false_value), op->span);
  }
  Expr VisitExpr_(const RampNode* op) override {
    DataType t = op->base->dtype;
    Expr base = arith::FoldBinary(
        NodeKind::kAdd, op->base,
        arith::FoldBinary(NodeKind::kMul, op->stride, MakeConst(t, int64_t{offset_})));
    if (lanes_ == 1) return base;
    return RampNode::Make(base, op->stride, lanes_, op->span);
  }
  Expr VisitExpr_(const BroadcastNode* op) override {
    if (lanes_ == 1) return op->value;
    return BroadcastNode::Make(op->value, lanes_, op->span);
  }
  Expr VisitExpr_(const ShuffleNode*) override { throw NotSliceable(); }
  Expr VisitExpr_(const LetNode*) override { throw NotSliceable(); }
  Expr VisitExpr_(const CallNode* op) override {
    auto* callee = AsPtr<OpNode>(op->op);
    if (!callee || callee->effect != CallEffect::kPure || op->is_op("tir.reinterpret") ||
        op->is_op("tir.call_llvm_pure_intrin") || op->is_op("tir.get_active_lane_mask")) {
      throw NotSliceable();
    }
    std::vector<Expr> args;
    for (const Expr& a : op->args) {
      // Every vector argument of a lane-wise call has the call's lanes.
      if (a->dtype.is_vector() && a->dtype.lanes() != op->dtype.lanes()) throw NotSliceable();
      args.push_back(VisitExpr(a));
    }
    return CallNode::Make(op->dtype.with_lanes(lanes_), op->op, std::move(args), op->span);
  }
  Expr VisitExpr_(const BufferLoadNode* op) override {
    if (op->buffer->dtype.is_vector() || op->predicate) throw NotSliceable();
    std::vector<Expr> idx = op->indices;
    for (size_t i = 0; i + 1 < idx.size(); ++i) {
      if (idx[i]->dtype.is_vector()) throw NotSliceable();
    }
    idx.back() = VisitExpr(idx.back());
    return BufferLoadNode::Make(op->buffer, std::move(idx), nullptr, op->span);
  }

 private:
  int offset_, lanes_;
};

class Legalizer : public StmtMutator {
 public:
  using StmtMutator::VisitStmt_;

  Stmt VisitStmt_(const BufferStoreNode* op) override {
    DataType t = op->value->dtype;
    if (!t.is_vector() || t.is_scalable_vector() || PowerOfTwo(t.lanes()) ||
        op->buffer->dtype.is_vector() || op->predicate) {
      return GetRef(op);
    }
    for (size_t i = 0; i + 1 < op->indices.size(); ++i) {
      if (op->indices[i]->dtype.is_vector()) return GetRef(op);
    }
    std::vector<Stmt> pieces;
    try {
      for (int offset = 0, left = t.lanes(); left > 0;) {
        int lanes = 1;
        while (lanes * 2 <= left) lanes *= 2;
        LaneSlicer slice(offset, lanes);
        std::vector<Expr> idx = op->indices;
        idx.back() = slice.VisitExpr(idx.back());
        pieces.push_back(BufferStoreNode::Make(op->buffer, slice.VisitExpr(op->value),
                                               std::move(idx), nullptr, op->span));
        offset += lanes;
        left -= lanes;
      }
    } catch (const NotSliceable&) {
      return GetRef(op);
    }
    return SeqStmtNode::Flatten(pieces, op->span);
  }
};

PrimFunc LegalizeVectorLanesFunc(PrimFunc f, IRModule, const PassContext&) {
  Stmt body = Legalizer().VisitStmt(f->body);
  return body == f->body ? f : f->WithBody(body);
}

}  // namespace

Pass LegalizeVectorLanes() {
  return CreatePrimFuncPass(LegalizeVectorLanesFunc, 0, "tir.LegalizeVectorLanes");
}
TESSERA_REGISTER_PASS("tir.LegalizeVectorLanes", LegalizeVectorLanes);

}  // namespace transform
}  // namespace tessera
