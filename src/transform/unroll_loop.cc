// tir.UnrollLoop: unroll T.unroll loops and small constant loops chosen by the "tir.UnrollLoop"
// options (auto_max_step, auto_max_depth, auto_max_extent, explicit_unroll, unroll_local_access).
#include "tessera/ir/functor.h"
#include "tessera/transform/ir_utils.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace transform {
namespace {

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

    auto extent = AsConstInt(op->extent);
    bool unroll = false;
    if (extent && *extent >= 0) {
      if (op->for_kind == ForKind::kUnrolled) {
        unroll = inner.explicit_unroll;
      } else if (op->for_kind == ForKind::kSerial) {
        unroll = (*extent * std::max<int64_t>(body_steps, 1) <= inner.auto_max_step &&
                  body_depth < inner.auto_max_depth) ||
                 *extent <= inner.auto_max_extent ||
                 (inner.unroll_local_access && AccessesLocal(op->body));
      }
    }
    Stmt result;
    if (unroll) {
      result = Unroll(op, body, *extent);
      steps_ = outer_steps + body_steps * *extent;
      depth_ = std::max(outer_depth, body_depth);
    } else {
      steps_ = outer_steps + body_steps;
      depth_ = std::max(outer_depth, body_depth + 1);
      result = body == op->body ? Stmt(GetRef(op))
                                : ForNode::Make(op->loop_var, op->min, op->extent, op->for_kind,
                                                body, op->thread_binding, op->annotations, op->span);
    }
    return result;
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

  static bool AccessesLocal(const Stmt& s) {
    return UsesVar(s, [](const VarNode* v) { return v->pointer && v->pointer->scope == "local"; });
  }

  static Stmt Unroll(const ForNode* op, const Stmt& body, int64_t extent) {
    if (extent == 0) return EvaluateNode::Make(Int32(0), op->span);
    std::vector<Stmt> seq;
    for (int64_t i = 0; i < extent; ++i) {
      Expr value = SimplifyExpr(AddNode::Make(op->min, MakeConst(op->min->dtype, i)));
      seq.push_back(Substitute(body, {{op->loop_var.get(), value}}));
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
