// Opaque computations on GPU targets: the parallel loops of a te.extern body written with
// tir.ir_builder (topi.cumsum's lines) carry no block that the rules could bind, so the
// automatic schedule binds them itself: each outermost parallel loop outside every thread
// binding becomes blockIdx.x x threadIdx.x (one thread per iteration, a guard when the
// threads do not divide the extent), and parallel loops inside a thread become serial.
#include "tessera/autoschedule/auto_schedule.h"
#include "tessera/ir/expr_ops.h"
#include "tessera/ir/functor.h"
#include "tessera/ir/ir_utils.h"

namespace tessera {
namespace autoschedule {
namespace {

class ParallelBinder : public StmtMutator {
 public:
  explicit ParallelBinder(int64_t max_threads) : max_threads_(max_threads) {}
  using StmtMutator::VisitStmt_;

  Stmt VisitStmt_(const AttrStmtNode* op) override {
    // An extern that launches its own threads (tir.ir_builder's scope_attr "thread_extent").
    const bool thread = op->attr_key == "thread_extent" || op->attr_key == "virtual_thread";
    bound_ += thread;
    Stmt out = StmtMutator::VisitStmt_(op);
    bound_ -= thread;
    return out;
  }

  Stmt VisitStmt_(const ForNode* op) override {
    if (op->for_kind == ForKind::kThreadBinding) {
      ++bound_;
      Stmt out = StmtMutator::VisitStmt_(op);
      --bound_;
      return out;
    }
    if (op->for_kind != ForKind::kParallel) return StmtMutator::VisitStmt_(op);
    if (bound_ > 0) {
      // Inside a thread: the iterations run one after another.
      Stmt body = VisitStmt(op->body);
      return ForNode::Make(op->loop_var, op->min, op->extent, ForKind::kSerial, body, nullptr,
                           op->annotations, op->span);
    }
    ++bound_;
    Stmt body = VisitStmt(op->body);
    --bound_;
    const DataType t = op->loop_var->dtype;
    const IntImmNode* constant = AsPtr<IntImmNode>(op->extent);
    int64_t threads = max_threads_;
    if (constant && constant->value < threads) threads = std::max<int64_t>(1, constant->value);
    const std::string name = op->loop_var->name;
    Var bx = VarNode::Make(name + "_b", t), tx = VarNode::Make(name + "_t", t);
    Expr th = IntConst(t, threads);
    Expr index = AddE(AddE(MulE(bx, th), tx), op->min);
    VarMap vmap{{op->loop_var.get(), index}};
    body = Substitute(body, vmap);
    if (!(constant && constant->value % threads == 0)) {
      body = IfThenElseNode::Make(LTNode::Make(AddE(MulE(bx, th), tx), op->extent), body);
    }
    Expr blocks = FloorDivE(AddE(op->extent, IntConst(t, threads - 1)), th);
    auto axis = [&](const Var& v, const Expr& extent, const std::string& tag) {
      return IterVarNode::Make(RangeNode::Make(IntConst(t, 0), extent), VarNode::Make(tag, t),
                               IterVarType::kThreadIndex, tag);
    };
    Stmt inner = ForNode::Make(tx, IntConst(t, 0), th, ForKind::kThreadBinding, body,
                               axis(tx, th, "threadIdx.x"));
    return ForNode::Make(bx, IntConst(t, 0), blocks, ForKind::kThreadBinding, inner,
                         axis(bx, blocks, "blockIdx.x"), {}, op->span);
  }

 private:
  int64_t max_threads_;
  int bound_ = 0;
};

}  // namespace

PrimFunc BindParallelLoops(const PrimFunc& func, const TargetFacts& facts) {
  int64_t threads = std::min<int64_t>(256, facts.max_threads_per_block);
  Stmt body = ParallelBinder(threads).VisitStmt(func->body);
  return body == func->body ? func : PrimFunc(func->WithBody(body));
}

}  // namespace autoschedule
}  // namespace tessera
