// tir.RemoveNoOp: drop statements that do nothing. Loop ranges, let values and enclosing
// conditions are known to an arithmetic analyzer (a loop of no iteration, a store of the element
// just read under another form of its index). With the option use_dataflow_analysis, as TVM's:
// a store of the value the element is known to hold, and a write that a later statement
// overwrites before anything reads the buffer, are removed too.
#include <optional>
#include <unordered_map>

#include "known_buffer_values.h"
#include "tessera/arith/analyzer.h"
#include "tessera/ir/expr_ops.h"
#include "tessera/ir/functor.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/ir/op.h"
#include "tessera/ir/structural_equal.h"
#include "tessera/transform/passes.h"
#include "write_nest.h"

namespace tessera {
namespace transform {
namespace {

bool Uses(const Stmt& s, const VarNode* var) {
  return UsesVar(s, [var](const VarNode* v) { return v == var; });
}

bool LoadsFrom(const Stmt& s, const VarNode* data) {
  bool reads = false;
  PostOrderVisit(s, [&](const ObjectRef& n) {
    if (auto* l = AsPtr<BufferLoadNode>(n)) reads = reads || l->buffer->data.get() == data;
  });
  return reads;
}

class NoOpRemover : public StmtMutator {
 public:
  using StmtMutator::VisitStmt_;
  explicit NoOpRemover(bool dataflow) : dataflow_(dataflow) {}

  Stmt VisitStmt_(const SeqStmtNode* op) override {
    std::vector<Stmt> seq;
    bool changed = false;
    for (const Stmt& s : op->seq) {
      Stmt t = VisitStmt(s);
      changed = changed || t != s;
      if (IsNoOp(t)) {
        changed = true;
        continue;
      }
      seq.push_back(t);
    }
    if (dataflow_) {
      for (size_t k = 0; k + 1 < seq.size(); ++k) {
        if (Stmt t = RemoveOverwritten(seq, k); t != seq[k]) {
          seq[k] = t;
          changed = true;
        }
      }
      std::vector<Stmt> kept;
      for (const Stmt& t : seq) {
        if (!IsNoOp(t)) kept.push_back(t);
      }
      seq = std::move(kept);
    }
    if (!changed) return GetRef(op);
    return SeqStmtNode::Flatten(seq, op->span);
  }
  Stmt VisitStmt_(const ForNode* op) override {
    ana_.Bind(op->loop_var, RangeNode::Make(op->min, op->extent));
    KnownBufferValues::State entry;
    if (dataflow_) entry = known_.EnterLoop(op->loop_var, op->body);
    Stmt s = StmtMutator::VisitStmt_(op);
    auto* f = AsPtr<ForNode>(s);
    if (dataflow_) known_.ExitLoop(op->loop_var, f->min, f->extent, f->body, entry);
    ana_.Unbind(op->loop_var);
    // No iteration: an extent that is 0, or provably not positive where the loop is.
    if (IsConstInt(f->extent, 0) || IsNoOp(f->body) ||
        ana_.CanProve(LENode::Make(f->extent, IntConst(f->extent->dtype, 0)))) {
      return NoOp(op->span);
    }
    return s;
  }
  Stmt VisitStmt_(const WhileNode* op) override {
    known_.Clear();
    Stmt s = StmtMutator::VisitStmt_(op);
    known_.Clear();
    auto* w = AsPtr<WhileNode>(s);
    if (IsConstInt(w->condition, 0)) return NoOp(op->span);
    return s;
  }
  Stmt VisitStmt_(const BlockNode* op) override { return Opaque(op); }
  Stmt VisitStmt_(const BlockRealizeNode* op) override { return Opaque(op); }
  Stmt VisitStmt_(const BufferRealizeNode* op) override { return Opaque(op); }
  Stmt VisitStmt_(const IfThenElseNode* op) override {
    const Expr& c = op->condition;
    KnownBufferValues::State before = known_.state(), then_end;
    Stmt t, e;
    {
      arith::ConstraintContext known(ana_, c);
      if (dataflow_) known_.Assume(c);
      t = VisitStmt(op->then_case);
    }
    then_end = known_.state();
    known_.Restore(before);
    if (op->else_case) {
      Expr negated = arith::NegateCondition(c);
      arith::ConstraintContext known(ana_, negated);
      if (dataflow_) known_.Assume(negated);
      e = VisitStmt(op->else_case);
    }
    if (dataflow_) {
      known_.Merge(then_end, known_.state(), c);
    } else {
      known_.Clear();
    }
    bool else_empty = !e || IsNoOp(e);
    if (IsNoOp(t) && else_empty && !HasSideEffect(c)) return NoOp(op->span);
    // As TVM: an empty then branch goes, and the else branch runs under the negation.
    if (IsNoOp(t) && !else_empty) {
      return IfThenElseNode::Make(NotNode::Make(c, c->span), e, nullptr, op->span);
    }
    if (e && IsNoOp(e)) e = nullptr;
    if (t == op->then_case && e == op->else_case) return GetRef(op);
    return IfThenElseNode::Make(c, t, e, op->span);
  }
  Stmt VisitStmt_(const LetStmtNode* op) override {
    bool bound = op->value->dtype.is_integer() && op->value->dtype.is_scalar();
    if (bound) ana_.Bind(op->var, op->value);
    if (!HasSideEffect(op->value)) let_values_[op->var.get()] = op->value;
    Stmt s = StmtMutator::VisitStmt_(op);
    let_values_.erase(op->var.get());
    known_.ForgetVar(op->var.get());
    if (bound) ana_.Unbind(op->var);
    auto* let = AsPtr<LetStmtNode>(s);
    if (IsNoOp(let->body) || !Uses(let->body, let->var.get())) {
      // An unused binding: its value goes, unless evaluating it has an effect.
      if (!HasSideEffect(let->value)) return let->body;
      if (IsNoOp(let->body)) return EvaluateNode::Make(let->value, op->span);
    }
    return s;
  }
  Stmt VisitStmt_(const AllocateNode* op) override {
    Stmt s = StmtMutator::VisitStmt_(op);
    auto* a = AsPtr<AllocateNode>(s);
    if (IsNoOp(a->body) || !Uses(a->body, a->buffer_var.get())) return a->body;
    return s;
  }
  Stmt VisitStmt_(const DeclBufferNode* op) override {
    Stmt s = StmtMutator::VisitStmt_(op);
    auto* d = AsPtr<DeclBufferNode>(s);
    if (IsNoOp(d->body)) return d->body;
    return s;
  }
  Stmt VisitStmt_(const AttrStmtNode* op) override {
    Stmt s = StmtMutator::VisitStmt_(op);
    auto* a = AsPtr<AttrStmtNode>(s);
    if (IsNoOp(a->body)) return a->body;
    return s;
  }
  Stmt VisitStmt_(const EvaluateNode* op) override {
    if (KnownBufferValues::MayWriteMemory(op->value)) known_.Clear();
    // A value computed for nothing: a pure expression without calls of effect.
    if (!IsNoOp(GetRef(op)) && !HasSideEffect(op->value) &&
        !IsInstance<CallNode>(op->value.get())) {
      return NoOp(op->span);
    }
    if (auto* call = AsPtr<CallNode>(op->value)) {
      auto* callee = AsPtr<OpNode>(call->op);
      if (callee && callee->effect == CallEffect::kPure && !HasSideEffect(op->value)) {
        return NoOp(op->span);
      }
    }
    return GetRef(op);
  }
  Stmt VisitStmt_(const BufferStoreNode* op) override {
    // A[i] = A[j] where i and j are provably the same element.
    auto* load = AsPtr<BufferLoadNode>(op->value);
    if (load && load->buffer == op->buffer && !op->predicate && !load->predicate &&
        load->indices.size() == op->indices.size()) {
      bool same = true;
      for (size_t i = 0; i < op->indices.size() && same; ++i) {
        same = StructuralEqual(load->indices[i], op->indices[i]) ||
               ana_.CanProveEqual(WithLets(load->indices[i]), WithLets(op->indices[i]));
      }
      if (same) return NoOp(op->span);
    }
    if (dataflow_) {
      // The element already holds the value stored.
      Expr held;
      if (!op->predicate && op->value->dtype.is_scalar() && !HasSideEffect(op->value)) {
        auto probe = BufferLoadNode::Make(op->buffer, op->indices);
        held = known_.Lookup(probe.get());
      }
      if (held && ana_.CanProveEqual(WithLets(held), WithLets(op->value))) return NoOp(op->span);
      known_.Store(op);
    }
    return GetRef(op);
  }

 private:
  template <class T>
  Stmt Opaque(const T* op) {
    known_.Clear();
    Stmt r = StmtMutator::VisitStmt_(op);
    known_.Clear();
    return r;
  }

  Expr WithLets(const Expr& e) const {
    if (let_values_.empty()) return e;
    VarMap m;
    for (const auto& [var, value] : let_values_) m[var] = value;
    return Substitute(Substitute(e, m), m);
  }

  /*! \brief seq[k] without its write when a later statement of seq writes every element it
   *  writes before anything reads the buffer (Evaluate(0) when nothing is left; the stored value
   *  is still evaluated when that has an effect). */
  Stmt RemoveOverwritten(const std::vector<Stmt>& seq, size_t k) {
    auto first = AsWriteNest(seq[k], /*noop_else_allowed=*/false);
    if (!first) return seq[k];
    const VarNode* data = first->store->buffer->data.get();
    if (LoadsFrom(seq[k], data)) return seq[k];  // e.g. A[i] = A[i] + 1 also reads
    for (size_t m = k + 1; m < seq.size(); ++m) {
      if (MayRead(seq[m], data)) return seq[k];
      auto later = AsWriteNest(seq[m], /*noop_else_allowed=*/false);
      if (later && later->store->buffer->data.get() == data && Covers(*first, *later)) {
        if (!HasSideEffect(first->store->value)) return NoOp(seq[k]->span);
        if (!first->loops.empty() || !first->guards.empty()) return seq[k];
        return EvaluateNode::Make(first->store->value, seq[k]->span);
      }
      if (Writes(seq[m], data)) return seq[k];
    }
    return seq[k];
  }

  /*! \brief Every element `first` writes is written by `later`: each index of `later` is
   *  one of its loop variables (solved for) or provably the same expression, and the solved
   *  point lies in its loops' ranges and guards. */
  bool Covers(const WriteNest& first, const WriteNest& later) {
    const auto& a = first.store->indices;
    const auto& b = later.store->indices;
    if (first.store->buffer != later.store->buffer || a.size() != b.size()) return false;
    for (const ForNode* f : first.loops) ana_.Bind(f->loop_var, RangeNode::Make(f->min, f->extent));
    std::vector<std::unique_ptr<arith::ConstraintContext>> guards;
    for (const Expr& g : first.guards) {
      guards.push_back(std::make_unique<arith::ConstraintContext>(ana_, g));
    }
    VarMap solved;
    bool ok = true;
    for (size_t d = 0; d < b.size() && ok; ++d) {
      const ForNode* loop = nullptr;
      for (const ForNode* f : later.loops) {
        if (b[d].get() == f->loop_var.get()) loop = f;
      }
      if (loop && !solved.count(loop->loop_var.get())) {
        solved[loop->loop_var.get()] = a[d];
      } else {
        ok = StructuralEqual(a[d], b[d]) || ana_.CanProveEqual(a[d], b[d]);
        for (const ForNode* f : later.loops) ok = ok && !UsesVar(b[d], f->loop_var.get());
      }
    }
    for (const ForNode* f : later.loops) ok = ok && solved.count(f->loop_var.get());
    // The solved point lies in each loop's range (which may use outer loops' variables).
    for (const ForNode* f : later.loops) {
      if (!ok) break;
      Expr point = solved[f->loop_var.get()];
      Expr min = Substitute(f->min, solved), end = Substitute(AddE(f->min, f->extent), solved);
      ok = ana_.CanProve(LENode::Make(min, point)) && ana_.CanProve(LTNode::Make(point, end));
    }
    for (const Expr& g : later.guards) {
      ok = ok && ana_.CanProve(Substitute(g, solved));
    }
    guards.clear();
    for (const ForNode* f : first.loops) ana_.Unbind(f->loop_var);
    return ok;
  }

  arith::Analyzer ana_;
  KnownBufferValues known_{&ana_};
  std::unordered_map<const VarNode*, Expr> let_values_;
  bool dataflow_;
};

PrimFunc RemoveNoOpFunc(PrimFunc f, IRModule, const PassContext& ctx) {
  bool dataflow = ctx.GetRecordBool("tir.RemoveNoOp", "use_dataflow_analysis", false);
  Stmt body = NoOpRemover(dataflow).VisitStmt(f->body);
  return body == f->body ? f : f->WithBody(body);
}

}  // namespace

Pass RemoveNoOp() { return CreatePrimFuncPass(RemoveNoOpFunc, 0, "tir.RemoveNoOp"); }
TESSERA_REGISTER_PASS("tir.RemoveNoOp", RemoveNoOp);

Pass BindTarget(const std::string& target) {
  return CreatePrimFuncPass(
      [target](PrimFunc f, IRModule, const PassContext&) {
        if (f->GetStrAttr("target") == target) return f;
        return f->WithAttr("target", StringImmNode::Make(target));
      },
      0, "tir.BindTarget");
}

}  // namespace transform
}  // namespace tessera
