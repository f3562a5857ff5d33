// tir.UnifyThreadBinding: every loop bound to one thread tag ("threadIdx.x") uses one variable,
// so that the kernel reads each hardware index once.
#include <map>

#include "tessera/ir/functor.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/transform/gpu_utils.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace transform {
namespace {

class ThreadBindingUnifier : public StmtMutator {
 public:
  using StmtMutator::VisitStmt_;
  Stmt VisitStmt_(const ForNode* op) override {
    std::string tag = ThreadTag(op);
    if (tag.empty()) return StmtMutator::VisitStmt_(op);
    auto it = vars_.find(tag);
    if (it == vars_.end()) {
      std::string name = tag;
      for (char& c : name) c = c == '.' ? '_' : c;
      it = vars_.emplace(tag, VarNode::Make(name, op->loop_var->dtype, op->loop_var->span)).first;
    }
    Var var = it->second;
    Stmt body = op->body;
    if (var != op->loop_var) body = Substitute(body, VarMap{{op->loop_var.get(), var}});
    body = VisitStmt(body);
    if (var == op->loop_var && body == op->body) return GetRef(op);
    IterVar iv = IterVarNode::Make(op->thread_binding->dom, var, op->thread_binding->iter_type, tag,
                                   op->thread_binding->span);
    return ForNode::Make(var, op->min, op->extent, op->for_kind, body, iv, op->annotations,
                         op->span);
  }

 private:
  std::map<std::string, Var> vars_;
};

PrimFunc UnifyThreadBindingFunc(PrimFunc f, IRModule, const PassContext&) {
  Stmt body = ThreadBindingUnifier().VisitStmt(f->body);
  return body == f->body ? f : f->WithBody(body);
}

}  // namespace

Pass UnifyThreadBinding() {
  return CreatePrimFuncPass(UnifyThreadBindingFunc, 0, "tir.UnifyThreadBinding");
}
TESSERA_REGISTER_PASS("tir.UnifyThreadBinding", UnifyThreadBinding);

}  // namespace transform
}  // namespace tessera
