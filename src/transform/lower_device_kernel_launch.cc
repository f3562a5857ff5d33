// Two passes that lower the host's calls of device kernels.
//
// tir.LowerDeviceKernelLaunch (TVM's rules): a call from one function to another whose target is
// a different device becomes T.call_packed(<kernel symbol>, args..., launch arguments...), where
// the launch arguments are the extents of the kernel's thread launches (in order of first launch)
// and, last, the size of its "shared.dyn" allocation. The kernel gets calling_conv 2 (device
// kernel launch), "tir.kernel_launch_params" (the thread tags, then "tir.use_dyn_shared_memory"),
// "global_symbol" (its own, else its name) and "tir.is_global_func", returns nothing, and its
// `T.ret(0)` become no-ops. A call to another target of the same device (llvm calling c) becomes
// T.call_extern of the callee's name, and the callee is made externally visible. Calls within one
// target are left as they are.
//
// tir.LowerKernelLaunchCalls (tessera's CUDA pipeline): a host call of a device kernel becomes
// tessera.launch_kernel with the kernel's name, grid (blockIdx.x/y/z) and block (threadIdx.x/y/z) extents, the
// dynamic shared memory size and the kernel's arguments.
#include <map>
#include <unordered_set>

#include "tessera/ir/functor.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/ir/expr_ops.h"
#include "tessera/ir/op.h"
#include "tessera/ir/structural_equal.h"
#include "tessera/support/error.h"
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

IRModule LowerKernelLaunchCallsModule(IRModule mod, const PassContext&) {
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

// ---- tir.LowerDeviceKernelLaunch ----

ObjectRef DeviceTarget(const PrimFunc& f) {
  auto it = f->attrs.find("target");
  if (it == f->attrs.end()) return nullptr;
  auto* m = AsPtr<MapNode>(it->second);
  if (m == nullptr || m->items.count("host") == 0) return it->second;
  AttrMap items = m->items;
  items.erase("host");
  return MapNode::Make(std::move(items));
}

int DeviceTypeOfKind(const std::string& kind) {
  static const std::map<std::string, int> types = {
      {"llvm", 1},    {"c", 1},       {"cuda", 2},   {"nvptx", 2},    {"opencl", 4},
      {"vulkan", 7},  {"metal", 8},   {"rocm", 10},  {"ext_dev", 12}, {"hexagon", 14},
      {"webgpu", 15}};
  auto it = types.find(kind);
  return it == types.end() ? 0 : it->second;
}

// What a caller needs to launch a kernel.
struct KernelLaunchInfo {
  ObjectRef target;  // without host; null when the function has no target
  std::string symbol;
  std::vector<Var> params;
  std::vector<std::string> launch_params;
  std::vector<Expr> launch_args;  // in terms of the kernel's parameters
};

class LaunchInfoCollector : public StmtVisitor {
 public:
  using StmtVisitor::VisitStmt_;
  std::vector<std::string> tags;
  std::vector<Expr> extents;
  Expr dyn_shared;

  void VisitStmt_(const AttrStmtNode* op) override {
    if (op->attr_key == "thread_extent") {
      auto* iv = AsPtr<IterVarNode>(op->node);
      if (iv && launched_.insert(iv).second) {
        tags.push_back(iv->thread_tag);
        extents.push_back(op->value);
      }
    }
    StmtVisitor::VisitStmt_(op);
  }
  void VisitStmt_(const AllocateNode* op) override {
    const auto& ptr = op->buffer_var->pointer;
    if (ptr && ptr->scope == "shared.dyn") {
      if (dyn_shared) {
        TESSERA_THROW_KIND(op->span, ErrorKind::kValue)
            << "tir.LowerDeviceKernelLaunch: a kernel may hold one \"shared.dyn\" allocation, "
               "this one is the second";
      }
      Expr size;
      for (const Expr& e : op->extents) size = size ? MulE(size, e) : e;
      if (!size) size = Int32(1);
      dyn_shared = MulE(size, IntConst(size->dtype, op->dtype.bytes()));
    }
    StmtVisitor::VisitStmt_(op);
  }

 private:
  std::unordered_set<const IterVarNode*> launched_;
};

KernelLaunchInfo CollectLaunchInfo(const GlobalVar& gv, const PrimFunc& f) {
  KernelLaunchInfo info;
  info.target = DeviceTarget(f);
  info.symbol = SymbolName(gv, f);
  info.params = f->params;
  LaunchInfoCollector c;
  c.VisitStmt(f->body);
  info.launch_params = c.tags;
  info.launch_args = c.extents;
  if (c.dyn_shared) {
    info.launch_params.push_back("tir.use_dyn_shared_memory");
    info.launch_args.push_back(c.dyn_shared);
  }
  return info;
}

// `T.ret(0)` of a kernel that now returns nothing becomes a no-op.
class SuccessReturnRemover : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;
  Stmt VisitStmt_(const EvaluateNode* op) override {
    auto* call = AsPtr<CallNode>(op->value);
    if (call && call->is_op("tir.ret")) {
      auto* v = call->args.empty() ? nullptr : AsPtr<IntImmNode>(call->args[0]);
      if (v == nullptr || v->value != 0) {
        TESSERA_THROW_KIND(op->span, ErrorKind::kValue)
            << "tir.LowerDeviceKernelLaunch: a launched kernel returns nothing, so it may only "
               "return 0 (success) with T.ret";
      }
      return EvaluateNode::Make(Int32(0), op->span);
    }
    return StmtExprMutator::VisitStmt_(op);
  }
};

class LaunchSiteRewriter : public StmtExprMutator {
 public:
  LaunchSiteRewriter(const std::map<std::string, KernelLaunchInfo>& infos, ObjectRef caller)
      : infos_(infos), caller_(std::move(caller)) {}
  using StmtExprMutator::VisitExpr_;
  std::unordered_set<std::string> launched, extern_called;

  Expr VisitExpr_(const CallNode* op) override {
    Expr e = StmtExprMutator::VisitExpr_(op);
    auto* call = AsPtr<CallNode>(e);
    auto* gv = call ? AsPtr<GlobalVarNode>(call->op) : nullptr;
    if (gv == nullptr) return e;
    auto it = infos_.find(gv->name_hint);
    if (it == infos_.end()) {
      TESSERA_THROW_KIND(op->span, ErrorKind::kValue)
          << "tir.LowerDeviceKernelLaunch: the call of " << gv->name_hint
          << " names no function of the module";
    }
    const KernelLaunchInfo& info = it->second;
    if (!caller_ || !info.target || StructuralEqual(caller_, info.target)) return e;
    if (DeviceTypeOfKind(TargetKindOf(caller_)) == DeviceTypeOfKind(TargetKindOf(info.target))) {
      // Another code generator for the same device: an external call by name.
      extern_called.insert(gv->name_hint);
      std::vector<Expr> args = {StringImmNode::Make(gv->name_hint)};
      args.insert(args.end(), call->args.begin(), call->args.end());
      return CallNode::Make(call->dtype, OpNode::Get("tir.call_extern"), args, op->span);
    }
    if (call->args.size() != info.params.size()) {
      TESSERA_THROW_KIND(op->span, ErrorKind::kValue)
          << "tir.LowerDeviceKernelLaunch: kernel " << gv->name_hint << " has "
          << info.params.size() << " parameters but is called with " << call->args.size()
          << " arguments";
    }
    VarMap bind;
    for (size_t i = 0; i < info.params.size(); ++i) bind[info.params[i].get()] = call->args[i];
    launched.insert(gv->name_hint);
    std::vector<Expr> args = {StringImmNode::Make(info.symbol)};
    args.insert(args.end(), call->args.begin(), call->args.end());
    for (const Expr& a : info.launch_args) args.push_back(Substitute(a, bind));
    DataType dtype = call->dtype.is_void() ? DataType::Int(32) : call->dtype;
    return CallNode::Make(dtype, OpNode::Get("tir.tvm_call_packed"), args, op->span);
  }

 private:
  const std::map<std::string, KernelLaunchInfo>& infos_;
  ObjectRef caller_;
};

IRModule LowerDeviceKernelLaunchModule(IRModule mod, const PassContext&) {
  std::map<std::string, KernelLaunchInfo> infos;
  for (const auto& [gv, f] : mod->functions) infos[gv->name_hint] = CollectLaunchInfo(gv, f);
  std::unordered_set<std::string> launched, extern_called;
  std::vector<std::pair<GlobalVar, PrimFunc>> out;
  bool changed = false;
  for (const auto& [gv, f] : mod->functions) {
    LaunchSiteRewriter rewriter(infos, infos[gv->name_hint].target);
    Stmt body = rewriter.VisitStmt(f->body);
    launched.insert(rewriter.launched.begin(), rewriter.launched.end());
    extern_called.insert(rewriter.extern_called.begin(), rewriter.extern_called.end());
    changed = changed || body != f->body;
    out.emplace_back(gv, body == f->body ? f : f->WithBody(body));
  }
  for (auto& [gv, f] : out) {
    bool launch = launched.count(gv->name_hint) != 0;
    bool ext = extern_called.count(gv->name_hint) != 0;
    if (launch && ext) {
      TESSERA_THROW_KIND(f->span, ErrorKind::kValue)
          << "tir.LowerDeviceKernelLaunch: " << gv->name_hint
          << " is both launched as a device kernel and called externally from the same "
             "device; lowering both kinds of call of one function is not supported";
    }
    if (!launch && !ext) continue;
    changed = true;
    AttrMap attrs = f->attrs;
    attrs["tir.is_global_func"] = Bool(true);
    Stmt body = f->body;
    DataType ret = f->ret_type;
    if (launch) {
      const KernelLaunchInfo& info = infos[gv->name_hint];
      body = SuccessReturnRemover().VisitStmt(body);
      ret = DataType::Void();
      std::vector<ObjectRef> params;
      for (const std::string& p : info.launch_params) params.push_back(StringImmNode::Make(p));
      attrs["calling_conv"] = Int32(2);
      attrs["tir.kernel_launch_params"] = ArrayNode::Make(params);
      attrs["global_symbol"] = StringImmNode::Make(info.symbol);
    } else if (!attrs.count("global_symbol")) {
      attrs["global_symbol"] = StringImmNode::Make(gv->name_hint);
    }
    f = PrimFuncNode::Make(f->params, f->buffer_map, body, ret, attrs, f->span);
  }
  return changed ? IRModuleNode::Make(std::move(out), mod->attrs) : mod;
}

}  // namespace

Pass LowerDeviceKernelLaunch() {
  return CreateModulePass(LowerDeviceKernelLaunchModule, 0, "tir.LowerDeviceKernelLaunch");
}
TESSERA_REGISTER_PASS("tir.LowerDeviceKernelLaunch", LowerDeviceKernelLaunch);

Pass LowerKernelLaunchCalls() {
  return CreateModulePass(LowerKernelLaunchCallsModule, 0, "tir.LowerKernelLaunchCalls");
}
TESSERA_REGISTER_PASS("tir.LowerKernelLaunchCalls", LowerKernelLaunchCalls);

}  // namespace transform
}  // namespace tessera
