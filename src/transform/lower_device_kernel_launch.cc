// tir.LowerDeviceKernelLaunch: a host call of a device kernel becomes tessera.launch_kernel
// with the kernel's name, grid (blockIdx.x/y/z) and block (threadIdx.x/y/z) extents, the
// dynamic shared memory size and the kernel's arguments.
#include <map>

#include "tessera/ir/functor.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/ir/op.h"
#include "tessera/transform/gpu_utils.h"
#include "tessera/transform/passes.h"

namespace tessera {
TESSERA_REGISTER_OP("tessera.launch_kernel")
    .describe(
        "Launch a device kernel: name, grid x/y/z, block x/y/z, dynamic shared bytes, "
        "arguments.");

namespace transform {
namespace {

class LaunchLowerer : public StmtExprMutator {
 public:
  explicit LaunchLowerer(const IRModule& mod) : mod_(mod) {}
  using StmtExprMutator::VisitExpr_;
  Expr VisitExpr_(const CallNode* op) override {
    Expr e = StmtExprMutator::VisitExpr_(op);
    auto* call = AsPtr<CallNode>(e);
    auto* gv = call ? AsPtr<GlobalVarNode>(call->op) : nullptr;
    PrimFunc kernel = gv ? mod_->Lookup(gv->name_hint) : nullptr;
    if (!kernel || kernel->GetStrAttr("calling_conv") != "device_kernel") return e;
    VarMap bind;
    for (size_t i = 0; i < kernel->params.size() && i < call->args.size(); ++i) {
      bind[kernel->params[i].get()] = call->args[i];
    }
    std::map<std::string, Expr> extents;
    if (auto* arr = AsPtr<ArrayNode>(kernel->attrs.at("tessera.thread_extents"))) {
      for (size_t i = 0; i + 1 < arr->items.size(); i += 2) {
        auto* tag = AsPtr<StringImmNode>(arr->items[i]);
        extents[tag->value] =
            Substitute(std::static_pointer_cast<ExprNode>(arr->items[i + 1]), bind);
      }
    }
    std::vector<Expr> args = {StringImmNode::Make(kernel->GetStrAttr("tessera.kernel_name"))};
    for (const char* tag :
         {"blockIdx.x", "blockIdx.y", "blockIdx.z", "threadIdx.x", "threadIdx.y", "threadIdx.z"}) {
      auto it = extents.find(tag);
      Expr x = it == extents.end() ? Expr(IntImmNode::Make(DataType::Int(64), 1)) : it->second;
      args.push_back(x->dtype == DataType::Int(64) ? x : CastNode::Make(DataType::Int(64), x));
    }
    // The dynamic shared memory of the kernel's "shared.dyn" allocations, in host terms.
    args.push_back(Substitute(PlanDynamicShared(kernel->body).total_bytes, bind));
    args.insert(args.end(), call->args.begin(), call->args.end());
    return CallNode::Make(DataType::Int(32), OpNode::Get("tessera.launch_kernel"), args,
                          call->span);
  }

 private:
  const IRModule& mod_;
};

IRModule LowerDeviceKernelLaunchModule(IRModule mod, const PassContext&) {
  std::vector<std::pair<GlobalVar, PrimFunc>> out;
  bool changed = false;
  for (const auto& [gv, f] : mod->functions) {
    Stmt body = f->GetStrAttr("calling_conv") == "device_kernel"
                    ? f->body
                    : LaunchLowerer(mod).VisitStmt(f->body);
    changed = changed || body != f->body;
    out.emplace_back(gv, body == f->body ? f : f->WithBody(body));
  }
  return changed ? IRModuleNode::Make(std::move(out), mod->attrs) : mod;
}

}  // namespace

Pass LowerDeviceKernelLaunch() {
  return CreateModulePass(LowerDeviceKernelLaunchModule, 0, "tir.LowerDeviceKernelLaunch");
}
TESSERA_REGISTER_PASS("tir.LowerDeviceKernelLaunch", LowerDeviceKernelLaunch);

}  // namespace transform
}  // namespace tessera
