// tir.Simplify: canonical simplification of every expression with loop ranges, let values and
// enclosing conditions known to the arithmetic analyzer; constant branches, proven asserts and
// stores of a just-loaded value are removed; pure integer lets are inlined.
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "tessera/arith/analyzer.h"
#include "tessera/ir/functor.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/ir/structural_equal.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace transform {
namespace {

class StmtSimplifier : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;

  void SetTransitiveComparisons(bool on) { ana_.SetTransitiveComparisons(on); }
  void SetConstraintsOnBooleanBranches(bool on) { ana_.SetConstraintsOnBooleanBranches(on); }
  void SetInlineLets(bool on) { inline_lets_ = on; }

  Expr VisitExpr(const Expr& e) override { return ana_.Simplify(e); }

  Stmt VisitStmt_(const ForNode* op) override {
    Expr min = VisitExpr(op->min), extent = VisitExpr(op->extent);
    ana_.Bind(op->loop_var, RangeNode::Make(min, extent));
    // A loop of one iteration: its variable is its min in the body (as TVM's analyzer binds
    // it), so that indices of unit batch loops fold to constants.
    Stmt body = op->body;
    if (IsConstInt(extent, 1) && op->for_kind != ForKind::kThreadBinding) {
      body = Substitute(body, VarMap{{op->loop_var.get(), min}});
    }
    body = VisitStmt(body);
    ana_.Unbind(op->loop_var);
    if (min == op->min && extent == op->extent && body == op->body) return GetRef(op);
    return ForNode::Make(op->loop_var, min, extent, op->for_kind, body, op->thread_binding,
                         op->annotations, op->span);
  }

  // As TVM: a let of a constant, a variable or a pure integer expression is inlined (the
  // statement goes, its variable is replaced by the simplified value), unless a buffer's
  // shape, strides, offset or data pointer use the variable. Another pure value is kept but
  // still substituted into the conditions the simplifier tries to prove.
  Stmt VisitStmt_(const LetStmtNode* op) override {
    Expr value = VisitExpr(op->value);
    if (inline_lets_ && CanInline(op->value) && !used_in_buffer_def_.count(op->var.get())) {
      return VisitStmt(Substitute(op->body, VarMap{{op->var.get(), value}}));
    }
    bool bound = value->dtype.is_integer() && value->dtype.is_scalar();
    if (bound) ana_.Bind(op->var, value);
    bool remembered = IsPure(op->value);
    if (remembered) non_inlined_[op->var.get()] = value;
    Stmt body = VisitStmt(op->body);
    if (remembered) non_inlined_.erase(op->var.get());
    if (bound) ana_.Unbind(op->var);
    if (value == op->value && body == op->body) return GetRef(op);
    return LetStmtNode::Make(op->var, value, body, op->span);
  }

  /*! \brief The variables that the data, shape, strides or offset of an accessed buffer use. */
  void CollectBufferDefVars(const Stmt& body) {
    auto add_buffer = [&](const Buffer& b) {
      auto add = [&](const Expr& e) {
        if (!e) return;
        PostOrderVisit(e, [&](const ObjectRef& n) {
          if (auto* v = AsPtr<VarNode>(n)) used_in_buffer_def_.insert(v);
          if (auto* v = AsPtr<SizeVarNode>(n)) used_in_buffer_def_.insert(v);
        });
      };
      used_in_buffer_def_.insert(b->data.get());
      for (const Expr& e : b->shape) add(e);
      for (const Expr& e : b->strides) add(e);
      add(b->elem_offset);
    };
    PostOrderVisit(body, [&](const ObjectRef& n) {
      if (auto* load = AsPtr<BufferLoadNode>(n)) add_buffer(load->buffer);
      if (auto* store = AsPtr<BufferStoreNode>(n)) add_buffer(store->buffer);
      if (auto* decl = AsPtr<DeclBufferNode>(n)) add_buffer(decl->buffer);
    });
  }

  Stmt VisitStmt_(const IfThenElseNode* op) override {
    if (auto v = ProveCondition(op->condition)) {
      if (*v) return VisitStmt(op->then_case);
      return op->else_case ? VisitStmt(op->else_case) : EvaluateNode::Make(Int32(0), op->span);
    }
    Expr c = VisitExpr(op->condition);
    if (auto v = AsConstInt(c)) {
      if (*v) return VisitStmt(op->then_case);
      return op->else_case ? VisitStmt(op->else_case) : EvaluateNode::Make(Int32(0), op->span);
    }
    // As TVM: the condition is known inside the then branch, its negation inside the else.
    Stmt t, e;
    {
      arith::ConstraintContext known(ana_, c);
      t = VisitStmt(op->then_case);
    }
    if (op->else_case) {
      arith::ConstraintContext known(ana_, arith::NegateCondition(c));
      e = VisitStmt(op->else_case);
    }
    if (c == op->condition && t == op->then_case && e == op->else_case) return GetRef(op);
    return IfThenElseNode::Make(c, t, e, op->span);
  }

  Stmt VisitStmt_(const AssertStmtNode* op) override {
    Expr c = VisitExpr(op->condition);
    if (IsConstInt(c, 1)) return VisitStmt(op->body);  // proven: the check cannot fail
    Stmt body = VisitStmt(op->body);
    if (c == op->condition && body == op->body) return GetRef(op);
    return AssertStmtNode::Make(c, op->message, body, op->span);
  }

  // As TVM: a thread or virtual thread variable lies in [0, extent) inside its attribute.
  Stmt VisitStmt_(const AttrStmtNode* op) override {
    auto* iv = AsPtr<IterVarNode>(op->node);
    if (!iv || !op->value ||
        (op->attr_key != "thread_extent" && op->attr_key != "virtual_thread")) {
      return StmtExprMutator::VisitStmt_(op);
    }
    Expr value = VisitExpr(op->value);
    const arith::ConstIntBound* outer = ana_.VarBound(iv->var.get());
    std::optional<arith::ConstIntBound> saved;
    if (outer) saved = *outer;
    ana_.Bind(iv->var, RangeNode::Make(MakeConst(value->dtype, int64_t(0)), value));
    Stmt body = VisitStmt(op->body);
    if (saved) {
      ana_.Bind(iv->var, *saved);
    } else {
      ana_.Unbind(iv->var);
    }
    if (value == op->value && body == op->body) return GetRef(op);
    return AttrStmtNode::Make(op->node, op->attr_key, value, body, op->span);
  }

  // As TVM: storing a value just loaded from the same element does nothing.
  Stmt VisitStmt_(const BufferStoreNode* op) override {
    Stmt r = StmtExprMutator::VisitStmt_(op);
    auto* store = AsPtr<BufferStoreNode>(r);
    auto* load = store ? AsPtr<BufferLoadNode>(store->value) : nullptr;
    if (load && !store->predicate && !load->predicate && load->buffer == store->buffer &&
        load->indices.size() == store->indices.size()) {
      bool same = true;
      for (size_t n = 0; n < load->indices.size() && same; ++n) {
        same = StructuralEqual(load->indices[n], store->indices[n]);
      }
      if (same) return EvaluateNode::Make(Int32(0), op->span);
    }
    return r;
  }

 private:
  static bool IsPure(const Expr& e) {
    bool pure = true;
    PostOrderVisit(e, [&](const ObjectRef& n) {
      if (AsPtr<BufferLoadNode>(n) || AsPtr<CallNode>(n)) pure = false;
    });
    return pure;
  }

  static bool CanInline(const Expr& value) {
    if (AsPtr<IntImmNode>(value) || AsPtr<FloatImmNode>(value)) return true;
    if (AsPtr<VarNode>(value) || AsPtr<SizeVarNode>(value)) return true;
    return value->dtype.is_int() && IsPure(value);
  }

  /*! \brief The value of `cond` with the kept let values substituted, when it is constant. */
  std::optional<bool> ProveCondition(const Expr& cond) {
    if (non_inlined_.empty()) return std::nullopt;
    VarMap vmap;
    for (const auto& [var, value] : non_inlined_) vmap[var] = value;
    if (auto v = AsConstInt(ana_.Simplify(Substitute(cond, vmap)))) return *v != 0;
    return std::nullopt;
  }

  arith::Analyzer ana_;
  std::unordered_map<const VarNode*, Expr> non_inlined_;
  std::unordered_set<const VarNode*> used_in_buffer_def_;
  bool inline_lets_ = true;
};

PrimFunc SimplifyFunc(PrimFunc f, const PassContext& ctx, bool inline_lets) {
  StmtSimplifier simplifier;
  simplifier.SetInlineLets(inline_lets);
  simplifier.CollectBufferDefVars(f->body);
  simplifier.SetTransitiveComparisons(
      ctx.GetRecordBool("tir.Simplify", "transitively_prove_inequalities", false));
  simplifier.SetConstraintsOnBooleanBranches(
      ctx.GetRecordBool("tir.Simplify", "apply_constraints_to_boolean_branches", false));
  Stmt body = simplifier.VisitStmt(f->body);
  return body == f->body ? f : f->WithBody(body);
}

}  // namespace

Expr SimplifyExpr(const Expr& e) { return arith::Analyzer().Simplify(e); }

Pass Simplify() {
  return CreatePrimFuncPass(
      [](PrimFunc f, IRModule, const PassContext& ctx) { return SimplifyFunc(f, ctx, true); }, 0,
      "tir.Simplify");
}

Pass SimplifyKeepingLets() {
  return CreatePrimFuncPass(
      [](PrimFunc f, IRModule, const PassContext& ctx) { return SimplifyFunc(f, ctx, false); }, 0,
      "tir.Simplify");
}
TESSERA_REGISTER_PASS("tir.Simplify", Simplify);

}  // namespace transform
}  // namespace tessera
