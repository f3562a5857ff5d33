// parallel, vectorize, unroll, bind: change the kind of a loop.
#include "../utils.h"
#include "tessera/schedule/primitive.h"

namespace tessera {
namespace schedule {
namespace {

bool IsValidThreadAxis(const std::string& axis) {
  for (const char* prefix : {"blockIdx.", "threadIdx.", "vthread."}) {
    std::string p = prefix;
    if (axis.size() == p.size() + 1 && axis.compare(0, p.size(), p) == 0 &&
        (axis.back() == 'x' || axis.back() == 'y' || axis.back() == 'z')) {
      return true;
    }
  }
  return axis == "vthread";
}

// The checks of parallel, vectorize and bind: compact dataflow under the loop, affine bindings, and the loop bound only to spatial iterators (reduction ones too
// for a thread binding: cross-thread reduction).
void CheckParallelizable(const ScheduleState& state, const StmtSRef& loop_sref, const char* what,
                         bool allow_reduction) {
  const ForNode* loop = loop_sref->loop();
  StmtSRef scope_root = GetScopeRoot(state, loop_sref.get());
  if (!scope_root) return;  // a function without blocks: nothing to check against
  BlockScope scope = ComputeBlockScope(state, scope_root.get());
  // As TVM: compact dataflow under the loop; the scope need not be a stage pipeline.
  CheckSubtreeCompactDataflow(state, loop_sref, scope_root, scope);
  for (const StmtSRef& b : GetChildBlocks(state, loop_sref.get())) {
    if (!IsAffineBinding(state, b.get())) {
      Fail(std::string("The loop cannot be ") + what +
               ": a block under it does not have affine bindings",
           std::string("The loop {0} cannot be ") + what +
               " because the block {1} under it does not "
               "have affine bindings",
           {loop_sref->stmt, b->stmt});
    }
    BlockRealize realize = GetBlockRealize(state, b.get());
    const BlockNode* block = b->block();
    for (size_t i = 0; i < block->iter_vars.size(); ++i) {
      const IterVar& iv = block->iter_vars[i];
      if (!UsesVars(realize->iter_values[i], {loop->loop_var.get()})) continue;
      if (iv->iter_type == IterVarType::kDataPar) continue;
      if (iv->iter_type == IterVarType::kCommReduce && allow_reduction) continue;
      Fail(std::string("The loop cannot be ") + what + ": it is bound to a reduction iterator",
           std::string("The loop {0} cannot be ") + what +
               " because it is bound to the iterator '" + iv->var->name +
               "' of block {1}, which is not a spatial iterator",
           {loop_sref->stmt, b->stmt});
    }
  }
}

void SetKind(ScheduleState& state, const StmtSRef& loop_sref, ForKind kind, IterVar thread) {
  const ForNode* loop = LoopOf(loop_sref);
  For result = ForNode::Make(loop->loop_var, loop->min, loop->extent, kind, loop->body, thread,
                             loop->annotations, loop->span);
  state.Replace(loop_sref.get(), loop, result);
}

}  // namespace

void Parallel(ScheduleState& state, const StmtSRef& loop_sref) {
  LoopOf(loop_sref);
  CheckParallelizable(state, loop_sref, "parallelized", false);
  SetKind(state, loop_sref, ForKind::kParallel, nullptr);
}

void Vectorize(ScheduleState& state, const StmtSRef& loop_sref) {
  LoopOf(loop_sref);
  CheckParallelizable(state, loop_sref, "vectorized", false);
  SetKind(state, loop_sref, ForKind::kVectorized, nullptr);
}

void Unroll(ScheduleState& state, const StmtSRef& loop_sref) {
  LoopOf(loop_sref);
  SetKind(state, loop_sref, ForKind::kUnrolled, nullptr);
}

void Bind(ScheduleState& state, const StmtSRef& loop_sref, const std::string& thread_axis) {
  const ForNode* loop = LoopOf(loop_sref);
  if (!IsValidThreadAxis(thread_axis)) {
    Fail("Invalid thread axis '" + thread_axis + "'",
         "Invalid thread axis '" + thread_axis +
             "' for {0}: expected blockIdx.x/y/z, "
             "threadIdx.x/y/z or vthread.x/y/z",
         {loop_sref->stmt});
  }
  CheckParallelizable(state, loop_sref, "bound to a thread",
                      thread_axis.rfind("threadIdx.", 0) == 0);
  IterVar thread = IterVarNode::Make(RangeNode::Make(loop->min, loop->extent),
                                     VarNode::Make(thread_axis, loop->loop_var->dtype),
                                     IterVarType::kThreadIndex, thread_axis);
  SetKind(state, loop_sref, ForKind::kThreadBinding, thread);
}

}  // namespace schedule
}  // namespace tessera
