// Two passes that move device code out of host functions.
//
// tir.SplitHostDevice (TVM's rules): each `T.attr(<target>, "target", 0)` region (what
// tir.AnnotateDeviceRegions marks) becomes a private function "<symbol>_kernel" for that target
// (its host dropped), with the attributes "target", "tir.noalias" and "tir.is_global_func". Its
// parameters are the variables the region uses but does not define, handles first, then by name;
// the buffers it uses but does not declare are declared again inside it. A kernel for a CPU-like
// device (cpu, ext_dev, hexagon) returns 0 and the host checks that result; other kernels return
// nothing. The module is then put in SSA form, so that host and kernel share no variable.
//
// tir.SplitThreadKernels (tessera's CUDA pipeline): every outermost loop bound to
// blockIdx/threadIdx is outlined into a device kernel (a PrimFunc with calling_conv "device_kernel" whose parameters
// are the variables the region uses but does not define); the host function calls the kernel.
// The kernel records its launch extents per thread tag in "tessera.thread_extents".
#include <algorithm>
#include <cctype>
#include <functional>
#include <map>
#include <unordered_set>

#include "tessera/ir/functor.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/ir/op.h"
#include "tessera/transform/gpu_utils.h"
#include "tessera/transform/passes.h"
#include "free_vars.h"

namespace tessera {
namespace transform {
namespace {

// The free variables of a kernel region, and its launch extent per thread tag.
class KernelScan : public FreeVarCollector {
 public:
  using FreeVarCollector::VisitStmt_;
  std::map<std::string, Expr> extents;  // thread tag -> launch extent

  void VisitStmt_(const ForNode* op) override {
    std::string tag = ThreadTag(op);
    if (!tag.empty()) Extent(tag, op->extent);
    FreeVarCollector::VisitStmt_(op);
  }
  void VisitStmt_(const AttrStmtNode* op) override {
    if (const IterVarNode* iv = LaunchedThread(op)) {
      defined_.insert(iv->var.get());
      Extent(iv->thread_tag, op->value);
    }
    FreeVarCollector::VisitStmt_(op);
  }

 private:
  // The launch extent of a tag is the largest of its loops' extents.
  void Extent(const std::string& tag, const Expr& extent) {
    auto it = extents.find(tag);
    if (it == extents.end()) {
      extents[tag] = extent;
    } else {
      auto a = AsConstInt(it->second), b = AsConstInt(extent);
      if (a && b && *b > *a) it->second = extent;
    }
  }
};

class KernelOutliner : public StmtMutator {
 public:
  KernelOutliner(std::string prefix, std::vector<std::pair<GlobalVar, PrimFunc>>* kernels)
      : prefix_(std::move(prefix)), kernels_(kernels) {}
  using StmtMutator::VisitStmt_;

  Stmt VisitStmt_(const ForNode* op) override {
    if (ThreadTag(op).empty()) return StmtMutator::VisitStmt_(op);
    return Outline(GetRef(op));
  }
  Stmt VisitStmt_(const AttrStmtNode* op) override {
    if (!LaunchedThread(op)) return StmtMutator::VisitStmt_(op);
    return Outline(GetRef(op));
  }

 private:
  Stmt Outline(const Stmt& region) {
    const Span& span = region->span;
    KernelScan c;
    c.VisitStmt(region);
    std::string name = prefix_ + "_kernel" + (count_ ? std::to_string(count_) : "");
    ++count_;
    std::vector<ObjectRef> extents;
    for (const auto& [tag, extent] : c.extents) {
      extents.push_back(StringImmNode::Make(tag));
      extents.push_back(extent);
    }
    AttrMap attrs;
    attrs["calling_conv"] = StringImmNode::Make("device_kernel");
    attrs["target"] = StringImmNode::Make("cuda");
    attrs["tessera.kernel_name"] = StringImmNode::Make(name);
    attrs["tessera.thread_extents"] = ArrayNode::Make(extents);
    GlobalVar gv = GlobalVarNode::Make(name);
    kernels_->emplace_back(gv,
                           PrimFuncNode::Make(c.free, {}, region, DataType::Void(), attrs, span));
    std::vector<Expr> args(c.free.begin(), c.free.end());
    return EvaluateNode::Make(CallNode::Make(DataType::Int(32), gv, args, span), span);
  }

  std::string prefix_;
  std::vector<std::pair<GlobalVar, PrimFunc>>* kernels_;
  int count_ = 0;
};

IRModule SplitThreadKernelsModule(IRModule mod, const PassContext&) {
  std::vector<std::pair<GlobalVar, PrimFunc>> out;
  bool changed = false;
  for (const auto& [gv, f] : mod->functions) {
    if (f->GetStrAttr("target") != "cuda" || f->GetStrAttr("calling_conv") == "device_kernel") {
      out.emplace_back(gv, f);
      continue;
    }
    std::vector<std::pair<GlobalVar, PrimFunc>> kernels;
    std::string prefix = f->GetStrAttr("global_symbol", gv->name_hint);
    for (char& ch : prefix) {
      if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
    }
    Stmt body = KernelOutliner(prefix, &kernels).VisitStmt(f->body);
    // The host part runs on the CPU and takes arrays in CUDA memory.
    PrimFunc host = f->WithBody(body)
                        ->WithAttr("target", StringImmNode::Make("c"))
                        ->WithAttr("tessera.device_type", IntImmNode::Make(DataType::Int(32), 2));
    out.emplace_back(gv, host);
    out.insert(out.end(), kernels.begin(), kernels.end());
    changed = true;
  }
  return changed ? IRModuleNode::Make(std::move(out), mod->attrs) : mod;
}

// ---- tir.SplitHostDevice ----

// The variables and buffers a region uses before (or without) defining them, in order of use.
class UndefinedUses : public StmtExprVisitor {
 public:
  using StmtExprVisitor::VisitExpr_;
  using StmtExprVisitor::VisitStmt_;
  std::vector<Var> vars;
  std::vector<Buffer> buffers;

  void VisitExpr_(const VarNode* op) override { Use(op); }
  void VisitExpr_(const SizeVarNode* op) override { Use(op); }
  void VisitExpr_(const LetNode* op) override {
    VisitExpr(op->value);
    Define(op->var.get());
    VisitExpr(op->body);
  }
  void VisitExpr_(const BufferLoadNode* op) override {
    UseBuffer(op->buffer);
    StmtExprVisitor::VisitExpr_(op);
  }
  void VisitStmt_(const BufferStoreNode* op) override {
    UseBuffer(op->buffer);
    StmtExprVisitor::VisitStmt_(op);
  }
  void VisitStmt_(const AttrStmtNode* op) override {
    if (op->attr_key == "thread_extent") {
      // A thread launched again keeps its first definition.
      if (auto* iv = AsPtr<IterVarNode>(op->node)) Define(iv->var.get());
      VisitExpr(op->value);  // the launch extent is needed by the kernel too
      VisitStmt(op->body);
      return;
    }
    StmtExprVisitor::VisitStmt_(op);
  }
  void VisitStmt_(const LetStmtNode* op) override {
    Define(op->var.get());
    StmtExprVisitor::VisitStmt_(op);
  }
  void VisitStmt_(const ForNode* op) override {
    Define(op->loop_var.get());
    StmtExprVisitor::VisitStmt_(op);
  }
  void VisitStmt_(const AllocateNode* op) override {
    Define(op->buffer_var.get());
    StmtExprVisitor::VisitStmt_(op);
  }
  void VisitStmt_(const AllocateConstNode* op) override {
    Define(op->buffer_var.get());
    StmtExprVisitor::VisitStmt_(op);
  }
  void VisitStmt_(const DeclBufferNode* op) override {
    declared_.insert(op->buffer.get());
    BufferFields(op->buffer);
    StmtExprVisitor::VisitStmt_(op);
  }

 private:
  void Define(const VarNode* v) { known_.insert(v); }
  void Use(const VarNode* v) {
    if (known_.insert(v).second) vars.push_back(GetRef(v));
  }
  void UseBuffer(const Buffer& b) {
    if (declared_.insert(b.get()).second) buffers.push_back(b);
    BufferFields(b);
  }
  void BufferFields(const Buffer& b) {
    Use(b->data.get());
    for (const Expr& e : b->shape) VisitExpr(e);
    for (const Expr& e : b->strides) VisitExpr(e);
  }
  std::unordered_set<const VarNode*> known_;
  std::unordered_set<const BufferNode*> declared_;
};

// The DLPack device type of a target kind (1 for kinds that run on the host CPU).
int DeviceTypeOfKind(const std::string& kind) {
  static const std::map<std::string, int> types = {
      {"llvm", 1},    {"c", 1},       {"cuda", 2},   {"nvptx", 2},    {"opencl", 4},
      {"vulkan", 7},  {"metal", 8},   {"rocm", 10},  {"ext_dev", 12}, {"hexagon", 14},
      {"webgpu", 15}};
  auto it = types.find(kind);
  return it == types.end() ? 0 : it->second;
}

// A target object without its "host" entry.
ObjectRef WithoutHost(const ObjectRef& target) {
  auto* m = AsPtr<MapNode>(target);
  if (m == nullptr || m->items.count("host") == 0) return target;
  AttrMap items = m->items;
  items.erase("host");
  return MapNode::Make(std::move(items));
}

class DeviceRegionSplitter : public StmtMutator {
 public:
  DeviceRegionSplitter(std::function<GlobalVar()> fresh,
                       std::vector<std::pair<GlobalVar, PrimFunc>>* kernels)
      : fresh_(std::move(fresh)), kernels_(kernels) {}
  using StmtMutator::VisitStmt_;

  Stmt VisitStmt_(const AttrStmtNode* op) override {
    if (op->attr_key != "target") return StmtMutator::VisitStmt_(op);
    return Split(op->body, WithoutHost(op->node), op->span);
  }

 private:
  Stmt Split(Stmt body, const ObjectRef& target, const Span& span) {
    UndefinedUses uses;
    uses.VisitStmt(body);
    std::vector<Var> params = uses.vars;
    std::stable_sort(params.begin(), params.end(), [](const Var& a, const Var& b) {
      bool ha = a->dtype.is_handle(), hb = b->dtype.is_handle();
      if (ha != hb) return ha;
      return a->name < b->name;
    });
    int device = DeviceTypeOfKind(TargetKindOf(target));
    bool returns_status = device == 1 || device == 12 || device == 14;
    Expr zero = Int32(0);
    if (returns_status) {
      body = SeqStmtNode::Flatten(
          {body, EvaluateNode::Make(CallNode::Make(DataType::Int(32), OpNode::Get("tir.ret"),
                                                   {zero}))});
    }
    for (const Buffer& b : uses.buffers) body = DeclBufferNode::Make(b, body);
    AttrMap attrs;
    attrs["target"] = target;
    attrs["tir.noalias"] = Bool(true);
    attrs["tir.is_global_func"] = Bool(true);
    GlobalVar gv = fresh_();
    kernels_->emplace_back(gv, PrimFuncNode::Make(params, {}, body,
                                                  returns_status ? DataType::Int(32)
                                                                 : DataType::Void(),
                                                  attrs, span));
    std::vector<Expr> args(params.begin(), params.end());
    if (!returns_status) {
      return EvaluateNode::Make(CallNode::Make(DataType::Void(), gv, args, span), span);
    }
    Var status = VarNode::Make("kernel_error_code", DataType::Int(32));
    Stmt check = AssertStmtNode::Make(EQNode::Make(status, zero),
                                      StringImmNode::Make("the device kernel returned an error status"),
                                      EvaluateNode::Make(zero), span);
    return LetStmtNode::Make(status, CallNode::Make(DataType::Int(32), gv, args, span), check,
                             span);
  }

  std::function<GlobalVar()> fresh_;
  std::vector<std::pair<GlobalVar, PrimFunc>>* kernels_;
};

IRModule SplitHostDeviceModule(IRModule mod, const PassContext& ctx) {
  std::unordered_set<std::string> taken;
  for (const auto& [gv, f] : mod->functions) taken.insert(gv->name_hint);
  std::vector<std::pair<GlobalVar, PrimFunc>> out, kernels;
  bool changed = false;
  for (const auto& [gv, f] : mod->functions) {
    std::string base = f->GetStrAttr("global_symbol", gv->name_hint) + "_kernel";
    auto fresh = [&taken, &base]() {
      std::string name = base;
      for (int i = 1; taken.count(name); ++i) name = base + "_" + std::to_string(i);
      taken.insert(name);
      return GlobalVarNode::Make(name);
    };
    Stmt body = DeviceRegionSplitter(fresh, &kernels).VisitStmt(f->body);
    changed = changed || body != f->body;
    out.emplace_back(gv, body == f->body ? f : f->WithBody(body));
  }
  if (!changed) return mod;
  out.insert(out.end(), kernels.begin(), kernels.end());
  return ConvertSSA()->fn(IRModuleNode::Make(std::move(out), mod->attrs), ctx);
}

}  // namespace

Pass SplitHostDevice() { return CreateModulePass(SplitHostDeviceModule, 0, "tir.SplitHostDevice"); }
TESSERA_REGISTER_PASS("tir.SplitHostDevice", SplitHostDevice);

Pass SplitThreadKernels() {
  return CreateModulePass(SplitThreadKernelsModule, 0, "tir.SplitThreadKernels");
}
TESSERA_REGISTER_PASS("tir.SplitThreadKernels", SplitThreadKernels);

}  // namespace transform
}  // namespace tessera
