// tir.ReduceBranchingThroughOvercompute: drop an `if` by running one of its branches where the
// other one was meant to run, when doing so changes nothing observable (TVM's pass of the same
// name, with its option record "tir.ReduceBranchingThroughOvercompute").
//
//   if c: T  else: E        ->   E   when, wherever c holds, E reduces to T;
//                           ->   T   when, wherever c fails, T reduces to E.
//
// An absent else branch is a no-op. "Reduces to" drops what does nothing in that region:
// constant evaluations, a store of the value its element already holds (`A[0] = A[0] + i * i`
// where i is 0), a loop or `if` left empty. The result must be structurally equal to the other
// branch. With use_dataflow_analysis, buffer contents known at that point (stores, T.assume,
// enclosing conditions; see known_buffer_values.h) are substituted first, and a store is also a
// no-op when a later statement of the same sequence writes every element it writes before
// anything reads the buffer (its elements are enumerated when the loop nests are constant).
#include <functional>
#include <optional>
#include <set>
#include <unordered_set>

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

using Point = std::vector<int64_t>;
constexpr int64_t kMaxPoints = 4096;

/*! \brief The element indices a write nest stores to, each loop taking every value of its
 *  constant range; nullopt when a range is not constant, an index or guard uses a variable
 *  other than the nest's loops, or there are too many points. */
std::optional<std::set<Point>> Elements(const WriteNest& w) {
  std::unordered_set<const VarNode*> own;
  for (const ForNode* f : w.loops) own.insert(f->loop_var.get());
  auto only_own = [&own](const Expr& e) {
    return !UsesVar(e, [&own](const VarNode* v) { return !own.count(v); });
  };
  for (const Expr& i : w.store->indices) {
    if (!i->dtype.is_scalar() || !only_own(i)) return std::nullopt;
  }
  for (const Expr& g : w.guards) {
    if (!only_own(g)) return std::nullopt;
  }
  arith::Analyzer ana;
  std::set<Point> out;
  VarMap at;
  int64_t visited = 0;
  std::function<bool(size_t)> walk = [&](size_t depth) -> bool {
    if (depth == w.loops.size()) {
      if (++visited > kMaxPoints) return false;
      for (const Expr& g : w.guards) {
        auto v = AsConstInt(ana.Simplify(Substitute(g, at)));
        if (!v) return false;
        if (*v == 0) return true;
      }
      Point p;
      for (const Expr& i : w.store->indices) {
        auto v = AsConstInt(ana.Simplify(Substitute(i, at)));
        if (!v) return false;
        p.push_back(*v);
      }
      out.insert(std::move(p));
      return true;
    }
    const ForNode* f = w.loops[depth];
    auto lo = AsConstInt(ana.Simplify(Substitute(f->min, at)));
    auto n = AsConstInt(ana.Simplify(Substitute(f->extent, at)));
    if (!lo || !n || *n > kMaxPoints) return false;
    for (int64_t k = 0; k < *n; ++k) {
      at[f->loop_var.get()] = IntConst(f->loop_var->dtype, *lo + k);
      if (!walk(depth + 1)) return false;
    }
    at.erase(f->loop_var.get());
    return true;
  };
  if (!walk(0)) return std::nullopt;
  return out;
}

class BranchReducer : public StmtMutator {
 public:
  using StmtMutator::VisitStmt_;
  explicit BranchReducer(bool dataflow) : dataflow_(dataflow) {}

  Stmt VisitStmt(const Stmt& s) override {
    bool nest = AsPtr<ForNode>(s) || AsPtr<IfThenElseNode>(s) || AsPtr<SeqStmtNode>(s);
    if (!nest && !frames_.empty()) ++frames_.back().opaque;
    Stmt r = StmtMutator::VisitStmt(s);
    if (!nest && !frames_.empty()) --frames_.back().opaque;
    return r;
  }

  Stmt VisitStmt_(const SeqStmtNode* op) override {
    std::vector<Stmt> seq;
    bool changed = false;
    for (size_t k = 0; k < op->seq.size(); ++k) {
      frames_.push_back(Frame{op, k});
      Stmt t = VisitStmt(op->seq[k]);
      frames_.pop_back();
      changed = changed || t != op->seq[k];
      seq.push_back(t);
    }
    if (!changed) return GetRef(op);
    return SeqStmtNode::Flatten(seq, op->span);
  }

  Stmt VisitStmt_(const ForNode* op) override {
    ana_.Bind(op->loop_var, RangeNode::Make(op->min, op->extent));
    KnownBufferValues::State entry;
    if (dataflow_) entry = known_.EnterLoop(op->loop_var, op->body);
    if (!frames_.empty()) frames_.back().loops.push_back(op);
    Stmt s = StmtMutator::VisitStmt_(op);
    if (!frames_.empty()) frames_.back().loops.pop_back();
    auto* f = AsPtr<ForNode>(s);
    if (dataflow_) known_.ExitLoop(op->loop_var, f->min, f->extent, f->body, entry);
    ana_.Unbind(op->loop_var);
    return s;
  }

  Stmt VisitStmt_(const IfThenElseNode* op) override {
    const Expr& c = op->condition;
    KnownBufferValues::State before = known_.state(), then_end;
    Stmt t, e;
    // With two branches, a write added to one may be read by the other in a later iteration.
    bool two_way = op->else_case && !IsNoOp(op->else_case);
    if (two_way && !frames_.empty()) ++frames_.back().opaque;
    {
      arith::ConstraintContext known(ana_, c);
      if (dataflow_) known_.Assume(c);
      PushGuard(c);
      t = VisitStmt(op->then_case);
      PopGuard();
    }
    then_end = known_.state();
    known_.Restore(before);
    Expr negated = arith::NegateCondition(c);
    if (op->else_case) {
      arith::ConstraintContext known(ana_, negated);
      if (dataflow_) known_.Assume(negated);
      PushGuard(negated);
      e = VisitStmt(op->else_case);
      PopGuard();
    }
    if (two_way && !frames_.empty()) --frames_.back().opaque;
    KnownBufferValues::State else_end = known_.state();
    Stmt visited = (t == op->then_case && e == op->else_case)
                       ? GetRef(op)
                       : IfThenElseNode::Make(c, t, e, op->span);

    // The decision is made with what is known where the `if` starts.
    known_.Restore(before);
    Stmt general = e ? e : NoOp(op->span);
    Stmt result = visited;
    if (ReducesTo(c, general, t, false)) {
      result = general;
    } else if (ReducesTo(negated, t, general, !e || IsNoOp(e))) {
      result = t;
    }
    if (result == visited) {
      known_.Merge(then_end, else_end, c);
    } else {
      // The branch kept now also writes where it did not: nothing is known after it.
      known_.Clear();
    }
    return result;
  }

  Stmt VisitStmt_(const LetStmtNode* op) override {
    bool bound = op->value->dtype.is_integer() && op->value->dtype.is_scalar();
    if (bound) ana_.Bind(op->var, op->value);
    Stmt s = StmtMutator::VisitStmt_(op);
    known_.ForgetVar(op->var.get());
    if (bound) ana_.Unbind(op->var);
    return s;
  }

  Stmt VisitStmt_(const BufferStoreNode* op) override {
    if (dataflow_) known_.Store(op);
    return GetRef(op);
  }

  Stmt VisitStmt_(const EvaluateNode* op) override {
    auto* call = AsPtr<CallNode>(op->value);
    if (dataflow_ && call && call->is_op("tir.assume") && call->args.size() == 1) {
      known_.Assume(call->args[0]);
    } else if (KnownBufferValues::MayWriteMemory(op->value)) {
      known_.Clear();
    }
    return GetRef(op);
  }

  Stmt VisitStmt_(const WhileNode* op) override { return Opaque(op); }
  Stmt VisitStmt_(const BlockNode* op) override { return Opaque(op); }
  Stmt VisitStmt_(const BlockRealizeNode* op) override { return Opaque(op); }
  Stmt VisitStmt_(const BufferRealizeNode* op) override { return Opaque(op); }

 private:
  // A SeqStmt element being visited, with the loops and guards from it down to the current
  // statement; `opaque` counts the other statements on that path (lets, allocations, ...).
  struct Frame {
    const SeqStmtNode* seq;
    size_t index;
    std::vector<const ForNode*> loops{};
    std::vector<Expr> guards{};
    int opaque = 0;
  };

  void PushGuard(const Expr& g) {
    if (!frames_.empty()) frames_.back().guards.push_back(g);
  }
  void PopGuard() {
    if (!frames_.empty()) frames_.back().guards.pop_back();
  }

  template <class T>
  Stmt Opaque(const T* op) {
    known_.Clear();
    Stmt r = StmtMutator::VisitStmt_(op);
    known_.Clear();
    return r;
  }

  /*! \brief Whether, where `cond` holds, `general` without what does nothing there is `special`.
   *  `alone`: `general` is the whole branch of an `if` without another branch, so a store that
   *  is overwritten later may count as nothing. */
  bool ReducesTo(const Expr& cond, const Stmt& general, const Stmt& special, bool alone) {
    arith::ConstraintContext known(ana_, ana_.Simplify(cond));
    KnownBufferValues::State saved = known_.state();
    if (dataflow_) known_.Assume(cond);
    Stmt reduced = Reduce(general);
    if (dataflow_ && alone && !IsNoOp(reduced) && IsNoOp(special) &&
        OverwrittenLater(reduced, cond)) {
      reduced = NoOp(general->span);
    }
    known_.Restore(saved);
    return StructuralEqual(reduced, special);
  }

  /*! \brief `s` without the statements that do nothing under the current constraints. */
  Stmt Reduce(const Stmt& s) {
    if (IsNoOp(s)) return NoOp(s->span);
    if (auto* seq = AsPtr<SeqStmtNode>(s)) {
      std::vector<Stmt> kept;
      bool changed = false;
      for (const Stmt& t : seq->seq) {
        Stmt r = Reduce(t);
        changed = changed || r != t;
        if (!IsNoOp(r)) kept.push_back(r);
      }
      if (!changed) return s;
      return SeqStmtNode::Flatten(kept, s->span);
    }
    if (auto* store = AsPtr<BufferStoreNode>(s)) {
      if (store->predicate) return s;
      Expr load = BufferLoadNode::Make(store->buffer, store->indices);
      Expr value = store->value, held = load;
      if (dataflow_) {
        value = known_.SubstituteLoads(value);
        held = known_.SubstituteLoads(load);
      }
      if (StructuralEqual(value, held) || ana_.CanProveEqual(value, held)) return NoOp(s->span);
      return s;
    }
    if (auto* f = AsPtr<ForNode>(s)) {
      if (f->for_kind == ForKind::kThreadBinding) return s;
      ana_.Bind(f->loop_var, RangeNode::Make(f->min, f->extent));
      KnownBufferValues::State saved = known_.state();
      if (dataflow_) known_.EnterLoop(f->loop_var, f->body);
      Stmt body = Reduce(f->body);
      known_.Restore(saved);
      ana_.Unbind(f->loop_var);
      return IsNoOp(body) ? NoOp(s->span) : s;
    }
    if (auto* i = AsPtr<IfThenElseNode>(s)) {
      if (ana_.CanProve(i->condition)) return Reduce(i->then_case);
      if (ana_.CanProve(arith::NegateCondition(i->condition))) {
        return i->else_case ? Reduce(i->else_case) : NoOp(s->span);
      }
      return s;
    }
    return s;
  }

  /*! \brief Whether the store `s`, run where `cond` holds inside the loops and guards of the
   *  current SeqStmt element, is overwritten by a later element of that sequence before
   *  anything reads its buffer. */
  bool OverwrittenLater(const Stmt& s, const Expr& cond) {
    auto* store = AsPtr<BufferStoreNode>(s);
    if (!store || store->predicate || frames_.empty()) return false;
    const Frame& fr = frames_.back();
    if (fr.opaque > 0) return false;
    const VarNode* data = store->buffer->data.get();
    if (MayRead(s, data)) return false;
    WriteNest first;
    first.loops = fr.loops;
    first.guards = fr.guards;
    first.guards.push_back(cond);
    first.store = store;
    std::optional<std::set<Point>> written;
    for (size_t m = fr.index + 1; m < fr.seq->seq.size(); ++m) {
      const Stmt& later = fr.seq->seq[m];
      if (MayRead(later, data)) return false;
      auto nest = AsWriteNest(later, /*noop_else_allowed=*/true);
      if (nest && nest->store->buffer->data.get() == data) {
        if (!written) written = Elements(first);
        auto covered = Elements(*nest);
        if (!written || !covered) return false;
        bool all = true;
        for (const Point& p : *written) all = all && covered->count(p);
        if (all) return true;
      }
      if (Writes(later, data)) return false;
    }
    return false;
  }

  arith::Analyzer ana_;
  KnownBufferValues known_{&ana_};
  std::vector<Frame> frames_;
  bool dataflow_;
};

PrimFunc ReduceBranchingFunc(PrimFunc f, IRModule, const PassContext& ctx) {
  bool dataflow =
      ctx.GetRecordBool("tir.ReduceBranchingThroughOvercompute", "use_dataflow_analysis", false);
  Stmt body = BranchReducer(dataflow).VisitStmt(f->body);
  return body == f->body ? f : f->WithBody(body);
}

}  // namespace

Pass ReduceBranchingThroughOvercompute() {
  return CreatePrimFuncPass(ReduceBranchingFunc, 0, "tir.ReduceBranchingThroughOvercompute");
}
TESSERA_REGISTER_PASS("tir.ReduceBranchingThroughOvercompute", ReduceBranchingThroughOvercompute);

}  // namespace transform
}  // namespace tessera
