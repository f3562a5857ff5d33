// tir.AnnotateIrregularLoop: a loop whose own body (not a nested loop's) leaves an iteration
// early, by T.break_loop() or T.continue_loop(), gets the annotation
// {"irregular_loop_mark": 1}, so that later passes (unrolling, partitioning, pipelining, the
// removal of unit loops) leave its control flow alone. Such a loop must be serial and must not
// carry an annotation that reorders or copies its iterations.
#include "tessera/ir/functor.h"
#include "tessera/support/error.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace transform {
namespace {

class IrregularLoopMarker : public StmtMutator {
 public:
  using StmtMutator::VisitStmt_;

  Stmt VisitStmt_(const ForNode* op) override {
    bool outer = jumps_;
    jumps_ = false;
    Stmt s = StmtMutator::VisitStmt_(op);
    bool jumps = jumps_;
    jumps_ = outer;  // a jump binds to its innermost loop only
    if (!jumps) return s;
    auto* loop = AsPtr<ForNode>(s);
    if (loop->for_kind != ForKind::kSerial) {
      TESSERA_THROW_KIND(op->span, ErrorKind::kValue)
          << "tir.AnnotateIrregularLoop: loop " << op->loop_var->name
          << " leaves iterations early (break/continue), so it must be serial";
    }
    for (const char* key : {"pragma_auto_unroll_max_step", "pragma_unroll_explicit",
                            "pragma_loop_partition_hint", "software_pipeline_stage"}) {
      if (loop->annotations.count(key)) {
        TESSERA_THROW_KIND(op->span, ErrorKind::kValue)
            << "tir.AnnotateIrregularLoop: loop " << op->loop_var->name
            << " leaves iterations early (break/continue) and cannot carry the annotation \"" << key
            << "\"";
      }
    }
    AttrMap annotations = loop->annotations;
    annotations["irregular_loop_mark"] = IntImmNode::Make(DataType::Int(32), 1);
    return ForNode::Make(loop->loop_var, loop->min, loop->extent, loop->for_kind, loop->body,
                         loop->thread_binding, std::move(annotations), loop->span, loop->step);
  }

  Stmt VisitStmt_(const WhileNode* op) override {
    // A while loop has no annotations; its jumps are its own.
    bool outer = jumps_;
    Stmt s = StmtMutator::VisitStmt_(op);
    jumps_ = outer;
    return s;
  }

  Stmt VisitStmt_(const EvaluateNode* op) override {
    auto* call = AsPtr<CallNode>(op->value);
    if (call && (call->is_op("tir.break") || call->is_op("tir.continue"))) jumps_ = true;
    return GetRef(op);
  }

 private:
  bool jumps_ = false;
};

PrimFunc AnnotateIrregularLoopFunc(PrimFunc f, IRModule, const PassContext&) {
  Stmt body = IrregularLoopMarker().VisitStmt(f->body);
  return body == f->body ? f : f->WithBody(body);
}

}  // namespace

Pass AnnotateIrregularLoop() {
  return CreatePrimFuncPass(AnnotateIrregularLoopFunc, 0, "tir.AnnotateIrregularLoop");
}
TESSERA_REGISTER_PASS("tir.AnnotateIrregularLoop", AnnotateIrregularLoop);

}  // namespace transform
}  // namespace tessera
