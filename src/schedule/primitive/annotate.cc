// annotate, unannotate: set or remove a key in the annotations of a loop or block.
#include "../utils.h"
#include "tessera/schedule/primitive.h"

namespace tessera {
namespace schedule {
namespace {

void SetAnnotations(ScheduleState& state, const StmtSRef& sref, const AttrMap& annotations) {
  if (const ForNode* loop = sref->loop()) {
    For result = ForNode::Make(loop->loop_var, loop->min, loop->extent, loop->for_kind, loop->body,
                               loop->thread_binding, annotations, loop->span);
    state.Replace(sref.get(), loop, result);
    return;
  }
  const BlockNode* block = BlockOf(sref);
  Block result = CopyBlock(block);
  result->annotations = annotations;
  state.Replace(sref.get(), block, result);
}

const AttrMap& AnnotationsOf(const StmtSRef& sref) {
  if (!sref->stmt) Fail("the block or loop was removed from the IR by an earlier primitive");
  if (const ForNode* loop = sref->loop()) return loop->annotations;
  return BlockOf(sref)->annotations;
}

}  // namespace

void Annotate(ScheduleState& state, const StmtSRef& sref, const std::string& key,
              const ObjectRef& value) {
  AttrMap annotations = AnnotationsOf(sref);
  if (!value) Fail("annotate: the value of '" + key + "' is None");
  annotations[key] = value;
  SetAnnotations(state, sref, annotations);
}

void Unannotate(ScheduleState& state, const StmtSRef& sref, const std::string& key) {
  AttrMap annotations = AnnotationsOf(sref);
  if (!annotations.erase(key)) return;
  SetAnnotations(state, sref, annotations);
}

}  // namespace schedule
}  // namespace tessera
