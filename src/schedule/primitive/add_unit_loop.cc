// add_unit_loop: a loop of extent 1 above a block or a loop.
#include "../utils.h"
#include "tessera/schedule/primitive.h"

namespace tessera {
namespace schedule {

StmtSRef AddUnitLoop(ScheduleState& state, const StmtSRef& sref) {
  if (!sref->stmt) Fail("the block or loop was removed from the IR by an earlier primitive");
  if (sref->block() && !sref->parent) {
    Fail("Cannot add a loop above the root block", "Cannot add a loop above the root block {0}",
         {sref->stmt});
  }
  const StmtNode* target =
      sref->loop() ? sref->stmt.get() : GetBlockRealize(state, sref.get()).get();
  Var u = NewVar("u", DataType::Int(32));
  For loop = ForNode::Make(u, IntConst(DataType::Int(32), 0), IntConst(DataType::Int(32), 1),
                           ForKind::kSerial, GetRef(target));
  const StmtSRefNode* anchor = sref->loop() ? sref.get() : sref->parent;
  state.Replace(anchor, target, loop);
  return state.GetSRef(loop.get());
}

}  // namespace schedule
}  // namespace tessera
