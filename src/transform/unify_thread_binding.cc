// tir.UnifyThreadBinding: inside one kernel, every binding of a thread tag ("threadIdx.x") uses
// one variable, and every thread of the kernel is launched once, at the kernel's outermost
// binding, as nested thread-bound loops in the order the tags first appear. Both thread-bound
// loops and T.launch_thread ("thread_extent"/"virtual_thread" attributes) are unified; the result
// is always thread-bound loops.
//
// A kernel starts at a binding that no other binding encloses; the "blockIdx.*" bindings inside
// it stay in that kernel. Two bindings of one tag in a kernel must have provably equal extents.
// A loop variable whose type differs from the unified variable reads it through a cast.
// Annotations of a unified loop move to the launch loop when the binding was the outermost one,
// and otherwise to a new serial loop of one iteration around the binding's body.
#include <map>
#include <vector>

#include "tessera/arith/analyzer.h"
#include "tessera/ir/functor.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/ir/printer.h"
#include "tessera/transform/gpu_utils.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace transform {
namespace {

class SiblingThreadUnifier : public StmtMutator {
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

struct LaunchedThread {
  Var var;
  Expr min, extent;
  std::string tag;
};

class ThreadBindingUnifier : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;

  Stmt VisitStmt_(const AttrStmtNode* op) override {
    auto* iv = AsPtr<IterVarNode>(op->node);
    if ((op->attr_key != "thread_extent" && op->attr_key != "virtual_thread") || !iv) {
      return StmtExprMutator::VisitStmt_(op);
    }
    return Unify(iv->var, iv->thread_tag, MakeConst(op->value->dtype, int64_t(0)), op->value,
                 op->span, [&] { return VisitStmt(op->body); });
  }

  Stmt VisitStmt_(const ForNode* op) override {
    std::string tag = ThreadTag(op);
    if (tag.empty()) return StmtExprMutator::VisitStmt_(op);
    Stmt s = Unify(op->loop_var, tag, op->min, op->extent, op->span,
                   [&] { return VisitStmt(op->body); });
    if (op->annotations.empty()) return s;
    if (auto* loop = AsPtr<ForNode>(s)) {
      return ForNode::Make(loop->loop_var, loop->min, loop->extent, loop->for_kind, loop->body,
                           loop->thread_binding, op->annotations, loop->span, loop->step);
    }
    DataType t = op->loop_var->dtype;
    return ForNode::Make(VarNode::Make("var", t, op->span), MakeConst(t, int64_t(0)),
                         MakeConst(t, int64_t(1)), ForKind::kSerial, s, nullptr, op->annotations,
                         op->span);
  }

  Expr VisitExpr_(const VarNode* op) override {
    auto it = subst_.find(op);
    return it == subst_.end() ? StmtExprMutator::VisitExpr_(op) : it->second;
  }

 private:
  template <typename F>
  Stmt Unify(const Var& old_var, const std::string& tag, const Expr& min, const Expr& extent,
             const Span& span, F visit_body) {
    bool kernel_start = depth_ == 0;
    int old_depth = depth_;
    if (kernel_start) kernel_.clear();
    if (kernel_start || tag.rfind("blockIdx.", 0) == 0) ++depth_;
    auto it = kernel_.find(tag);
    if (it == kernel_.end()) {
      std::string name = tag;
      for (char& c : name) c = c == '.' ? '_' : c;
      LaunchedThread t{VarNode::Make(name, extent->dtype, span), min, extent, tag};
      it = kernel_.emplace(tag, t).first;
      launch_.push_back(t);
    } else if (!Equal(min, it->second.min) || !Equal(extent, it->second.extent)) {
      TESSERA_THROW_KIND(span, ErrorKind::kValue)
          << "tir.UnifyThreadBinding: the loops bound to " << tag
          << " in one kernel must cover the same range, but one starts at "
          << AsScript(it->second.min) << " with extent " << AsScript(it->second.extent)
          << " and another starts at " << AsScript(min) << " with extent " << AsScript(extent);
    }
    Expr v = it->second.var;
    subst_[old_var.get()] = v->dtype == old_var->dtype ? v : Expr(CastNode::Make(old_var->dtype, v));
    Stmt body = visit_body();
    depth_ = old_depth;
    if (!kernel_start) return body;
    std::vector<LaunchedThread> threads;
    threads.swap(launch_);
    for (auto t = threads.rbegin(); t != threads.rend(); ++t) {
      IterVar binding = IterVarNode::Make(RangeNode::Make(t->min, t->extent),
                                          VarNode::Make(t->tag, t->var->dtype, span),
                                          IterVarType::kThreadIndex, t->tag, span);
      body = ForNode::Make(t->var, t->min, t->extent, ForKind::kThreadBinding, body, binding, {},
                           span);
    }
    return body;
  }

  // Extents of int32 and int64 loops compare as values.
  bool Equal(const Expr& a, const Expr& b) {
    if (a->dtype == b->dtype) return analyzer_.CanProveEqual(a, b);
    DataType wide = a->dtype.bits() >= b->dtype.bits() ? a->dtype : b->dtype;
    auto widen = [&](const Expr& e) { return e->dtype == wide ? e : Expr(CastNode::Make(wide, e)); };
    return analyzer_.CanProveEqual(widen(a), widen(b));
  }

  std::map<std::string, LaunchedThread> kernel_;  // tag -> its thread, in the current kernel
  std::vector<LaunchedThread> launch_;            // the current kernel's threads, in order
  std::unordered_map<const VarNode*, Expr> subst_;
  int depth_ = 0;  // kernels and blockIdx bindings entered
  arith::Analyzer analyzer_;
};

PrimFunc UnifyThreadBindingFunc(PrimFunc f, IRModule, const PassContext&) {
  Stmt body = ThreadBindingUnifier().VisitStmt(f->body);
  return body == f->body ? f : f->WithBody(body);
}

// The tessera CUDA pipeline's form: thread-bound loops keep their place and extents; only the
// loop variables of one tag are merged, which is what its code generator needs.
PrimFunc UnifySiblingThreadsFunc(PrimFunc f, IRModule, const PassContext&) {
  Stmt body = SiblingThreadUnifier().VisitStmt(f->body);
  return body == f->body ? f : f->WithBody(body);
}

}  // namespace

Pass UnifySiblingThreads() {
  return CreatePrimFuncPass(UnifySiblingThreadsFunc, 0, "tir.UnifySiblingThreads");
}
TESSERA_REGISTER_PASS("tir.UnifySiblingThreads", UnifySiblingThreads);

Pass UnifyThreadBinding() {
  return CreatePrimFuncPass(UnifyThreadBindingFunc, 0, "tir.UnifyThreadBinding");
}
TESSERA_REGISTER_PASS("tir.UnifyThreadBinding", UnifyThreadBinding);

}  // namespace transform
}  // namespace tessera
