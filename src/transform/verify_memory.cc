// tir.VerifyMemory: on a GPU target, host code may not read or write device memory; every
// access to a buffer must sit inside a loop bound to blockIdx/threadIdx.
#include <unordered_set>

#include "tessera/ir/functor.h"
#include "tessera/support/error.h"
#include "tessera/transform/gpu_utils.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace transform {
namespace {

class HostAccessFinder : public StmtExprVisitor {
 public:
  HostAccessFinder(std::string func, std::unordered_set<const VarNode*> device_data)
      : func_(std::move(func)), device_data_(std::move(device_data)) {}
  using StmtExprVisitor::VisitExpr_;
  using StmtExprVisitor::VisitStmt_;

  void VisitStmt_(const ForNode* op) override {
    bool bound = !ThreadTag(op).empty();
    depth_ += bound;
    StmtExprVisitor::VisitStmt_(op);
    depth_ -= bound;
  }
  void VisitStmt_(const AttrStmtNode* op) override {
    bool bound = LaunchedThread(op) != nullptr;
    depth_ += bound;
    StmtExprVisitor::VisitStmt_(op);
    depth_ -= bound;
  }
  void VisitExpr_(const BufferLoadNode* op) override {
    Check(op->buffer.get(), op->span, "reads");
    StmtExprVisitor::VisitExpr_(op);
  }
  void VisitStmt_(const BufferStoreNode* op) override {
    Check(op->buffer.get(), op->span, "writes");
    StmtExprVisitor::VisitStmt_(op);
  }

 private:
  void Check(const BufferNode* buffer, const Span& span, const char* verb) {
    if (depth_ > 0 || !device_data_.count(buffer->data.get())) return;
    TESSERA_THROW_KIND(span, ErrorKind::kBuild)
        << "tir.VerifyMemory: the host part of '" << func_ << "' " << verb << " the buffer '"
        << buffer->name
        << "' directly, but on target 'cuda' it lives in device memory and only kernels may "
           "touch it (the access is outside every loop bound to blockIdx/threadIdx). Did you "
           "forget to bind?";
  }

  std::string func_;
  std::unordered_set<const VarNode*> device_data_;  // data of the parameters' buffers
  int depth_ = 0;
};

PrimFunc VerifyMemoryFunc(PrimFunc f, IRModule, const PassContext&) {
  if (f->GetStrAttr("target") != "cuda") return f;
  std::unordered_set<const VarNode*> device_data;
  for (const Var& p : f->params) device_data.insert(p.get());
  for (const auto& [param, buffer] : f->buffer_map) device_data.insert(buffer->data.get());
  HostAccessFinder(f->GetStrAttr("global_symbol", "function"), device_data).VisitStmt(f->body);
  return f;
}

}  // namespace

Pass VerifyMemory() { return CreatePrimFuncPass(VerifyMemoryFunc, 0, "tir.VerifyMemory"); }
TESSERA_REGISTER_PASS("tir.VerifyMemory", VerifyMemory);

}  // namespace transform
}  // namespace tessera
