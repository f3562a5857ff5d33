// tir.Simplify: canonical simplification of every expression with loop ranges, let values and
// enclosing conditions known to the arithmetic analyzer; constant branches, proven asserts and
// stores of a just-loaded value are removed; pure integer lets are inlined.
#include <functional>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "known_buffer_values.h"
#include "tessera/arith/analyzer.h"
#include "tessera/ir/functor.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/ir/op.h"
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
  void SetConvertBooleanToAndOfOrs(bool on) { ana_.SetConvertBooleanToAndOfOrs(on); }
  void SetInlineLets(bool on) { inline_lets_ = on; }
  /*! \brief As TVM's propagate_knowns_to_prove_conditional / _to_simplify_expressions:
   *  values known to be in a buffer (stored, assumed, or implied by an enclosing condition)
   *  decide conditions, or replace the loads of any stored value. */
  void SetPropagateKnowns(bool to_conditions, bool to_expressions) {
    knowns_to_conditions_ = to_conditions || to_expressions;
    knowns_to_expressions_ = to_expressions;
  }

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
    KnownBufferValues::State entry;
    bool track = knowns_to_conditions_ && !IsConstInt(extent, 1);
    if (track) entry = known_.EnterLoop(op->loop_var, body);
    body = VisitStmt(body);
    if (track) known_.ExitLoop(op->loop_var, min, extent, body, entry);
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
    known_.ForgetVar(op->var.get());
    if (remembered) non_inlined_.erase(op->var.get());
    if (bound) ana_.Unbind(op->var);
    if (value == op->value && body == op->body) return GetRef(op);
    return LetStmtNode::Make(op->var, value, body, op->span);
  }

  /*! \brief As TVM: the shapes of the function's buffers are not negative. A dimension of
   *  the form `c * n + offset` (c > 0) gives n >= -offset, as TVM's hint does. */
  void AssumeShapesNonNegative(const PrimFunc& f) {
    for (const auto& [param, buf] : f->buffer_map) {
      for (const Expr& dim : buf->shape) {
        int64_t offset = 0;
        const VarNode* var = nullptr;
        bool ok = true;
        std::function<void(const Expr&, int)> collect = [&](const Expr& e, int sign) {
          if (auto* add = AsPtr<AddNode>(e)) {
            collect(add->a, sign);
            collect(add->b, sign);
          } else if (auto* sub = AsPtr<SubNode>(e)) {
            collect(sub->a, sign);
            collect(sub->b, -sign);
          } else if (auto* imm = AsPtr<IntImmNode>(e)) {
            offset += sign * imm->value;
          } else {
            const Expr* term = &e;
            auto* mul = AsPtr<MulNode>(e);
            if (mul && AsPtr<IntImmNode>(mul->b) && AsPtr<IntImmNode>(mul->b)->value > 0) {
              term = &mul->a;
            } else if (mul && AsPtr<IntImmNode>(mul->a) && AsPtr<IntImmNode>(mul->a)->value > 0) {
              term = &mul->b;
            }
            auto* v = AsPtr<VarNode>(*term);
            ok = ok && v && !var && sign > 0 && v->dtype.is_int();
            var = v;
          }
        };
        collect(dim, 1);
        if (!ok || !var || ana_.VarBound(var)) continue;
        ana_.Bind(GetRef(var), arith::ConstIntBound{-offset, arith::ConstIntBound::kPosInf});
      }
    }
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
    if (knowns_to_conditions_ && KnownBufferValues::ReadsBuffer(c)) {
      Expr with_knowns = ana_.Simplify(known_.SubstituteLoads(c));
      if (knowns_to_expressions_ || AsConstInt(with_knowns)) c = with_knowns;
    }
    if (auto v = AsConstInt(c)) {
      if (*v) return VisitStmt(op->then_case);
      return op->else_case ? VisitStmt(op->else_case) : EvaluateNode::Make(Int32(0), op->span);
    }
    // As TVM: the condition is known inside the then branch, its negation inside the else.
    Stmt t, e;
    KnownBufferValues::State before = known_.state(), then_end;
    {
      arith::ConstraintContext known(ana_, c);
      if (knowns_to_conditions_) known_.Assume(c);
      t = VisitStmt(op->then_case);
    }
    then_end = known_.state();
    known_.Restore(before);
    if (op->else_case) {
      arith::ConstraintContext known(ana_, arith::NegateCondition(c));
      if (knowns_to_conditions_) known_.Assume(arith::NegateCondition(c));
      e = VisitStmt(op->else_case);
    }
    if (knowns_to_conditions_) known_.Merge(then_end, known_.state(), c);
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
    if (store && knowns_to_expressions_) {
      Expr value = ana_.Simplify(known_.SubstituteLoads(store->value));
      if (value != store->value) {
        r = BufferStoreNode::Make(store->buffer, value, store->indices, store->predicate,
                                  store->span);
        store = AsPtr<BufferStoreNode>(r);
      }
    }
    if (store && knowns_to_conditions_) known_.Store(store);
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

  // A sequence: a T.assume of a condition that reads no buffer holds for the statements after
  // it (with the known-value options); one about a buffer's contents becomes a known value.
  Stmt VisitStmt_(const SeqStmtNode* op) override {
    if (!knowns_to_conditions_) return StmtExprMutator::VisitStmt_(op);
    std::vector<std::unique_ptr<arith::ConstraintContext>> assumed;
    std::vector<Stmt> seq;
    bool changed = false;
    for (const Stmt& s : op->seq) {
      Stmt t = VisitStmt(s);
      changed = changed || t != s;
      seq.push_back(t);
      if (Expr cond = AssumedCondition(t)) {
        std::vector<Expr> conjuncts;
        for (Expr c = cond; c;) {
          auto* a = AsPtr<AndNode>(c);
          Expr part = a ? a->b : c;
          if (!KnownBufferValues::ReadsBuffer(part)) {
            assumed.push_back(std::make_unique<arith::ConstraintContext>(ana_, part));
          }
          c = a ? a->a : nullptr;
        }
      }
    }
    if (!changed) return GetRef(op);
    return SeqStmtNode::Flatten(seq, op->span);
  }

  Stmt VisitStmt_(const EvaluateNode* op) override {
    if (!knowns_to_conditions_) return StmtExprMutator::VisitStmt_(op);
    if (Expr cond = AssumedCondition(GetRef(op))) {
      known_.Assume(cond);  // the assumption itself is kept as written
      return GetRef(op);
    }
    Stmt r = StmtExprMutator::VisitStmt_(op);
    if (KnownBufferValues::MayWriteMemory(op->value)) known_.Clear();
    return r;
  }

  // Statements the known-value walk does not follow: nothing known survives them.
  Stmt VisitStmt_(const WhileNode* op) override { return Opaque(op); }
  Stmt VisitStmt_(const BlockNode* op) override { return Opaque(op); }
  Stmt VisitStmt_(const BlockRealizeNode* op) override { return Opaque(op); }
  Stmt VisitStmt_(const BufferRealizeNode* op) override { return Opaque(op); }

 private:
  template <class T>
  Stmt Opaque(const T* op) {
    known_.Clear();
    Stmt r = StmtExprMutator::VisitStmt_(op);
    known_.Clear();
    return r;
  }

  static Expr AssumedCondition(const Stmt& s) {
    auto* eval = AsPtr<EvaluateNode>(s);
    auto* call = eval ? AsPtr<CallNode>(eval->value) : nullptr;
    if (call && call->is_op("tir.assume") && call->args.size() == 1) return call->args[0];
    return nullptr;
  }

  static bool IsPure(const Expr& e) {
    bool pure = true;
    PostOrderVisit(e, [&](const ObjectRef& n) {
      if (AsPtr<BufferLoadNode>(n)) pure = false;
      // As TVM: a call of an op without effect (ceil, log2, shift_left, ...) is pure too.
      if (auto* call = AsPtr<CallNode>(n)) {
        auto* callee = AsPtr<OpNode>(call->op);
        if (!callee || callee->effect != CallEffect::kPure) pure = false;
      }
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
  bool knowns_to_conditions_ = false;
  bool knowns_to_expressions_ = false;
  KnownBufferValues known_{&ana_};
};

PrimFunc SimplifyFunc(PrimFunc f, const PassContext& ctx, bool inline_lets) {
  StmtSimplifier simplifier;
  simplifier.SetInlineLets(inline_lets);
  simplifier.CollectBufferDefVars(f->body);
  simplifier.AssumeShapesNonNegative(f);
  simplifier.SetTransitiveComparisons(
      ctx.GetRecordBool("tir.Simplify", "transitively_prove_inequalities", false));
  simplifier.SetPropagateKnowns(
      ctx.GetRecordBool("tir.Simplify", "propagate_knowns_to_prove_conditional", false),
      ctx.GetRecordBool("tir.Simplify", "propagate_knowns_to_simplify_expressions", false));
  simplifier.SetConvertBooleanToAndOfOrs(
      ctx.GetRecordBool("tir.Simplify", "convert_boolean_to_and_of_ors", false));
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
