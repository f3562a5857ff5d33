// tir.UnrollLoop: unroll T.unroll loops and small constant loops chosen by the "tir.UnrollLoop"
// options (auto_max_step, auto_max_depth, auto_max_extent, explicit_unroll, unroll_local_access).
#include "tessera/ir/functor.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/ir/printer.h"
#include "tessera/support/error.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace transform {
namespace {

// A copy of an unrolled body in which the loops, lets and allocations it defines bind fresh
// variables (an allocation's buffers are remapped to the fresh data pointer), so that the
// copies side by side still define each variable once.
class FreshDefs : public BufferRemapMutator<> {
 public:
  explicit FreshDefs(VarMap vmap) : vmap_(std::move(vmap)) {}
  using BufferRemapMutator::VisitExpr_;
  using BufferRemapMutator::VisitStmt_;

  Expr VisitExpr_(const VarNode* op) override {
    auto it = vmap_.find(op);
    return it == vmap_.end() ? GetRef(op) : it->second;
  }

  Stmt VisitStmt_(const ForNode* op) override {
    Expr min = VisitExpr(op->min), extent = VisitExpr(op->extent);
    Var v = Renew(op->loop_var);
    return ForNode::Make(v, min, extent, op->for_kind, VisitStmt(op->body), op->thread_binding,
                         op->annotations, op->span);
  }

  Stmt VisitStmt_(const LetStmtNode* op) override {
    Expr value = VisitExpr(op->value);
    Var v = Renew(op->var);
    return LetStmtNode::Make(v, value, VisitStmt(op->body), op->span);
  }

  Stmt VisitStmt_(const AllocateNode* op) override {
    std::vector<Expr> extents;
    for (const Expr& e : op->extents) extents.push_back(VisitExpr(e));
    Expr cond = op->condition ? VisitExpr(op->condition) : op->condition;
    const Var& old = op->buffer_var;
    Var fresh = old->pointer ? VarNode::MakePointer(old->name, old->pointer->element,
                                                    old->pointer->scope, old->span)
                             : VarNode::Make(old->name, old->dtype, old->span);
    vmap_[old.get()] = fresh;
    return AllocateNode::Make(fresh, op->dtype, extents, cond, VisitStmt(op->body), op->annotations,
                              op->span);
  }

  Stmt VisitStmt_(const DeclBufferNode* op) override {
    Buffer b = RemapBuffer(op->buffer);
    return DeclBufferNode::Make(b, VisitStmt(op->body), op->span);
  }

 protected:
  // The buffer over a renewed data pointer (one new Buffer per old one).
  Buffer RemapBuffer(const Buffer& b) override {
    auto it = vmap_.find(b->data.get());
    if (it == vmap_.end()) return b;
    auto done = buffers_.find(b.get());
    if (done != buffers_.end()) return done->second;
    Var data = std::static_pointer_cast<VarNode>(std::const_pointer_cast<ExprNode>(it->second));
    Buffer nb = WithData(b, data);
    buffers_[b.get()] = nb;
    return nb;
  }

 private:
  Var Renew(const Var& v) {
    if (v->pointer) return v;
    Var fresh = VarNode::Make(v->name, v->dtype, v->span);
    vmap_[v.get()] = fresh;
    return fresh;
  }

  VarMap vmap_;
  std::unordered_map<const BufferNode*, Buffer> buffers_;
};

struct UnrollConfig {
  int64_t auto_max_step = 0;
  int64_t auto_max_depth = 8;
  int64_t auto_max_extent = 0;
  bool explicit_unroll = true;
  bool unroll_local_access = false;
};

class LoopUnroller : public StmtExprMutator {
 public:
  explicit LoopUnroller(UnrollConfig cfg) : cfg_(cfg) {}
  using StmtExprMutator::VisitStmt_;

  Stmt VisitStmt_(const ForNode* op) override {
    // Loop annotations from the schedule (`sch.annotate(l, "pragma_auto_unroll_max_step", 16)`)
    // override the configured limits for the loops they enclose.
    UnrollConfig saved = cfg_;
    if (auto v = IntAnnotation(op, "pragma_auto_unroll_max_step")) cfg_.auto_max_step = *v;
    if (auto v = IntAnnotation(op, "pragma_unroll_explicit")) cfg_.explicit_unroll = *v != 0;
    int64_t outer_steps = steps_, outer_depth = depth_;
    steps_ = 0;
    depth_ = 0;
    Stmt body = VisitStmt(op->body);
    int64_t body_steps = steps_, body_depth = depth_;
    UnrollConfig inner = cfg_;
    cfg_ = saved;

    // The extent after constant folding: `for i in range(n, n + 2)` runs twice.
    auto extent = AsConstInt(op->extent);
    if (!extent) extent = AsConstInt(SimplifyExpr(op->extent));
    bool unroll = false;
    // Without explicit unrolling, a serial loop chosen for unrolling becomes a T.unroll loop
    // (the code generator's pragma) and counts as unrolled for the loops around it.
    bool mark_only = false;
    if (extent && *extent >= 0) {
      if (op->for_kind == ForKind::kUnrolled) {
        unroll = inner.explicit_unroll;
        mark_only = !unroll;
      } else if (op->for_kind == ForKind::kSerial) {
        unroll = (*extent * std::max<int64_t>(body_steps, 1) <= inner.auto_max_step &&
                  body_depth < inner.auto_max_depth) ||
                 *extent <= inner.auto_max_extent ||
                 (inner.unroll_local_access && AccessesLocal(op->body));
      }
    }
    // A break or continue belongs to a loop: the unrolled copies would have none.
    if (unroll && HasLoopControl(body)) unroll = false;
    // ... except a loop of at most one iteration under auto_max_extent 1, which is expanded.
    bool fake_loop = extent && *extent <= inner.auto_max_extent && inner.auto_max_extent == 1;
    if (unroll && !inner.explicit_unroll && op->for_kind == ForKind::kSerial && !fake_loop) {
      unroll = false;
      mark_only = true;
    }
    Stmt result;
    if (unroll || mark_only) {
      result = unroll ? Unroll(op, body, *extent)
                      : ForNode::Make(op->loop_var, op->min, op->extent, ForKind::kUnrolled, body,
                                      op->thread_binding, op->annotations, op->span, op->step);
      if (mark_only && op->for_kind == ForKind::kUnrolled && body == op->body) result = GetRef(op);
      steps_ = outer_steps + body_steps * *extent;
      depth_ = std::max(outer_depth, body_depth);
    } else {
      steps_ = outer_steps + body_steps;
      depth_ = std::max(outer_depth, body_depth + 1);
      result = body == op->body
                   ? Stmt(GetRef(op))
                   : ForNode::Make(op->loop_var, op->min, op->extent, op->for_kind, body,
                                   op->thread_binding, op->annotations, op->span);
    }
    return result;
  }

  // `T.attr(0, "pragma_auto_unroll_max_step", n)` / `"pragma_unroll_explicit"` set the option
  // for the statement they wrap and disappear.
  Stmt VisitStmt_(const AttrStmtNode* op) override {
    bool step = op->attr_key == "pragma_auto_unroll_max_step";
    if (!step && op->attr_key != "pragma_unroll_explicit") return StmtExprMutator::VisitStmt_(op);
    auto value = AsConstInt(op->value);
    if (!value) {
      TESSERA_THROW_KIND(op->span, ErrorKind::kValue)
          << "tir.UnrollLoop: " << op->attr_key << " must be a constant integer, got "
          << AsScript(op->value);
    }
    UnrollConfig saved = cfg_;
    if (step) {
      cfg_.auto_max_step = *value;
    } else {
      cfg_.explicit_unroll = *value != 0;
    }
    Stmt body = VisitStmt(op->body);
    cfg_ = saved;
    return body;
  }

  Stmt VisitStmt_(const BufferStoreNode* op) override {
    ++steps_;
    return GetRef(op);
  }
  Stmt VisitStmt_(const EvaluateNode* op) override {
    ++steps_;
    return GetRef(op);
  }

 private:
  static std::optional<int64_t> IntAnnotation(const ForNode* op, const std::string& key) {
    auto it = op->annotations.find(key);
    if (it == op->annotations.end()) return std::nullopt;
    if (auto* imm = AsPtr<IntImmNode>(it->second)) return imm->value;
    return std::nullopt;
  }

  static bool HasLoopControl(const Stmt& s) {
    bool found = false;
    PostOrderVisit(s, [&found](const ObjectRef& n) {
      auto* call = AsPtr<CallNode>(n);
      found = found || (call && (call->is_op("tir.break") || call->is_op("tir.continue")));
    });
    return found;
  }

  static bool AccessesLocal(const Stmt& s) {
    return UsesVar(s, [](const VarNode* v) { return v->pointer && v->pointer->scope == "local"; });
  }

  static Stmt Unroll(const ForNode* op, const Stmt& body, int64_t extent) {
    if (extent == 0) return EvaluateNode::Make(Int32(0), op->span);
    std::vector<Stmt> seq;
    for (int64_t i = 0; i < extent; ++i) {
      Expr value = SimplifyExpr(AddNode::Make(op->min, MakeConst(op->min->dtype, i)));
      // The first copy keeps the body's own definitions; the others get fresh ones.
      seq.push_back(i == 0 ? Substitute(body, {{op->loop_var.get(), value}})
                           : FreshDefs({{op->loop_var.get(), value}}).VisitStmt(body));
    }
    return SeqStmtNode::Flatten(seq, op->span);
  }

  UnrollConfig cfg_;
  int64_t steps_ = 0;  // statements the visited subtree executes (unrolled loops multiply)
  int64_t depth_ = 0;  // nesting depth of the loops kept in the visited subtree
};

PrimFunc UnrollLoopFunc(PrimFunc f, IRModule, const PassContext& ctx) {
  UnrollConfig cfg;
  const char* k = "tir.UnrollLoop";
  cfg.auto_max_step = ctx.GetRecordInt(k, "auto_max_step", cfg.auto_max_step);
  cfg.auto_max_depth = ctx.GetRecordInt(k, "auto_max_depth", cfg.auto_max_depth);
  cfg.auto_max_extent = ctx.GetRecordInt(k, "auto_max_extent", cfg.auto_max_extent);
  cfg.explicit_unroll = ctx.GetRecordBool(k, "explicit_unroll", cfg.explicit_unroll);
  cfg.unroll_local_access = ctx.GetRecordBool(k, "unroll_local_access", cfg.unroll_local_access);
  Stmt body = LoopUnroller(cfg).VisitStmt(f->body);
  return body == f->body ? f : f->WithBody(body);
}

}  // namespace

Pass UnrollLoop() { return CreatePrimFuncPass(UnrollLoopFunc, 0, "tir.UnrollLoop"); }
TESSERA_REGISTER_PASS("tir.UnrollLoop", UnrollLoop);

}  // namespace transform
}  // namespace tessera
