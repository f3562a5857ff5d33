// tir.SplitHostDevice: on a GPU target, every outermost loop bound to blockIdx/threadIdx is
// outlined into a device kernel (a PrimFunc with calling_conv "device_kernel" whose parameters
// are the variables the region uses but does not define); the host function calls the kernel.
// The kernel records its launch extents per thread tag in "tessera.thread_extents".
#include <cctype>
#include <map>
#include <unordered_set>

#include "tessera/ir/functor.h"
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

IRModule SplitHostDeviceModule(IRModule mod, const PassContext&) {
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

}  // namespace

Pass SplitHostDevice() { return CreateModulePass(SplitHostDeviceModule, 0, "tir.SplitHostDevice"); }
TESSERA_REGISTER_PASS("tir.SplitHostDevice", SplitHostDevice);

}  // namespace transform
}  // namespace tessera
