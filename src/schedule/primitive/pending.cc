// Temporary: primitives not written yet.
#include "../utils.h"
#include "tessera/schedule/primitive.h"

namespace tessera {
namespace schedule {
#define TODO Fail("not implemented yet")
StmtSRef RFactor(ScheduleState&, const StmtSRef&, int) { TODO; }
void TransformLayout(ScheduleState&, const StmtSRef&, int, bool, const IndexMap&, const Expr&) { TODO; }
StmtSRef Blockize(ScheduleState&, const StmtSRef&, bool) { TODO; }
StmtSRef BlockizeBlocks(ScheduleState&, const std::vector<StmtSRef>&, bool) { TODO; }
}  // namespace schedule
}  // namespace tessera
