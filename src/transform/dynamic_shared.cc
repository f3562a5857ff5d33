// The layout of a kernel's dynamic shared memory (gpu_utils.h): shared by
// tir.LowerKernelLaunchCalls, which passes its size at launch, and CodeGenCUDA, which points
// each "shared.dyn" allocation into it.
#include "tessera/arith/analyzer.h"
#include "tessera/ir/functor.h"
#include "tessera/transform/gpu_utils.h"

namespace tessera {
namespace transform {

namespace {

// The "shared.dyn" allocations in program order (an allocation before those in its body).
class DynamicAllocCollector : public StmtExprVisitor {
 public:
  using StmtExprVisitor::VisitStmt_;
  std::vector<const AllocateNode*> allocs;
  void VisitStmt_(const AllocateNode* op) override {
    if (op->buffer_var->pointer && op->buffer_var->pointer->scope == "shared.dyn")
      allocs.push_back(op);
    StmtExprVisitor::VisitStmt_(op);
  }
};

}  // namespace

DynamicSharedLayout PlanDynamicShared(const Stmt& kernel_body) {
  const DataType i64 = DataType::Int(64);
  auto to64 = [&](const Expr& e) { return e->dtype == i64 ? e : Expr(CastNode::Make(i64, e)); };
  DynamicAllocCollector collect;
  collect.VisitStmt(kernel_body);
  const std::vector<const AllocateNode*>& allocs = collect.allocs;
  arith::Analyzer ana;
  DynamicSharedLayout layout;
  Expr offset = IntImmNode::Make(i64, 0);
  for (const AllocateNode* a : allocs) {
    layout.offsets.emplace_back(a->buffer_var.get(), offset);
    Expr bytes = IntImmNode::Make(i64, a->dtype.bytes());
    for (const Expr& e : a->extents) bytes = MulNode::Make(bytes, to64(e));
    // The next allocation starts at the next multiple of 16 bytes.
    Expr end = AddNode::Make(offset, bytes);
    offset =
        ana.Simplify(MulNode::Make(FloorDivNode::Make(AddNode::Make(end, IntImmNode::Make(i64, 15)),
                                                      IntImmNode::Make(i64, 16)),
                                   IntImmNode::Make(i64, 16)));
  }
  layout.total_bytes = offset;
  return layout;
}

}  // namespace transform
}  // namespace tessera
