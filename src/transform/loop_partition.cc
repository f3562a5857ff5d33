// tir.LoopPartition: split a constant loop at the point where an `if` inside it stops being
// provably true, so that the main part runs without the test and only the tail keeps it.
//
//   for io in range(3):                         for io in range(2):
//     for ii in range(4):                         for ii in range(4):
//       if io * 4 + ii < 10:          ->            body
//         body                                  for ii in range(4):      # io = 2, the tail
//                                                 if 8 + ii < 10:  ->  (ii's own partition)
//                                                   body
//
// This is the shape a split with a factor that does not divide the extent leaves behind (the
// block predicate, lowered to an `if`). For a serial, unrolled or parallel loop with constant
// bounds, the pass takes the `if` conditions of the body using the loop variable that are decided
// (provably true or provably false for every value of the inner loops' variables) at the first
// iteration, and looks for the longest prefix [min, min + K) on which all of them stay decided
// (a binary search with the arith Analyzer). With 0 < K < extent, the loop becomes the part over
// the prefix, where every condition decided there is replaced by its branch, followed by the
// tail loop (a fresh variable; a tail of one iteration is the body with the variable replaced),
// itself partitioned the same way: so `if i < 64` / `if 64 <= i and i < 96` / `if 96 <= i`
// over 128 iterations gives three loops without tests, and `if i == 63` a single point.
// The pieces are partitioned again, so the inner loop of a one-iteration tail is split too.
// Vectorized and thread-bound loops are left alone, and so are loops whose body allocates, unless
// the allocations open the body of a serial loop and have a constant size: they move above it;
// or the loop is parallel (each thread its own register tile): the tail's copy of the body then
// defines its own buffers (DefRenewer), after the parallel loop of the full tiles.
// The terms of a conjunction are decided one by one: the tests of a tile partial in rows and in
// columns (`i < M and j < N`) partition the row loop on `i < M`, the column loop inside on
// `j < N` (matmul 127 x 255 x 129, AVX-512, one thread: 0.175 -> 0.088 ms with 5-row tiles).
#include <unordered_set>

#include "def_renewer.h"
#include "tessera/arith/analyzer.h"
#include "tessera/ir/functor.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/ir/op.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace transform {
namespace {

// An `if` condition as a bool (TVM's IfThenElse takes an integer too: true when nonzero).
Expr AsBoolCondition(const Expr& c) {
  if (c->dtype.is_bool()) return c;
  return NENode::Make(c, MakeConst(c->dtype, int64_t(0)), c->span);
}

constexpr const char* kPartitionHint = "pragma_loop_partition_hint";

/*! \brief The terms of a conjunction `a && b && ...` (the condition itself when it is none). */
void Conjuncts(const Expr& e, std::vector<Expr>* out) {
  if (auto* a = AsPtr<AndNode>(e)) {
    Conjuncts(a->a, out);
    Conjuncts(a->b, out);
  } else {
    out->push_back(e);
  }
}

// Binds the loops of a statement in an analyzer while visiting it.
class ProvenBranchRemover : public StmtExprMutator {
 public:
  explicit ProvenBranchRemover(arith::Analyzer* ana) : ana_(ana) {}
  using StmtExprMutator::VisitStmt_;

  Stmt VisitStmt_(const ForNode* op) override {
    ana_->Bind(op->loop_var, RangeNode::Make(op->min, op->extent));
    Stmt s = StmtMutator::VisitStmt_(op);
    ana_->Unbind(op->loop_var);
    return s;
  }

  Stmt VisitStmt_(const IfThenElseNode* op) override {
    if (op->condition->dtype.is_scalar() && ana_->CanProve(op->condition)) {
      return VisitStmt(op->then_case);
    }
    if (op->condition->dtype.is_scalar() &&
        ana_->CanProve(NotNode::Make(AsBoolCondition(op->condition)))) {
      return op->else_case ? VisitStmt(op->else_case)
                           : EvaluateNode::Make(MakeConst(DataType::Int(32), int64_t(0)));
    }
    // A conjunction (a partial row tile's test and a partial column tile's, `i < M && j < N`):
    // the terms proven true go, the others stay; one proven false decides the whole.
    std::vector<Expr> terms;
    if (op->condition->dtype.is_scalar()) Conjuncts(op->condition, &terms);
    if (terms.size() > 1) {
      std::vector<Expr> kept;
      for (const Expr& t : terms) {
        if (ana_->CanProve(NotNode::Make(t))) {
          return op->else_case ? VisitStmt(op->else_case)
                               : EvaluateNode::Make(MakeConst(DataType::Int(32), int64_t(0)));
        }
        if (!ana_->CanProve(t)) kept.push_back(t);
      }
      if (kept.size() < terms.size()) {
        Expr cond = kept[0];
        for (size_t k = 1; k < kept.size(); ++k) cond = AndNode::Make(cond, kept[k], op->span);
        Stmt then_case = VisitStmt(op->then_case);
        Stmt else_case = op->else_case ? VisitStmt(op->else_case) : op->else_case;
        return IfThenElseNode::Make(cond, then_case, else_case, op->span);
      }
    }
    return StmtMutator::VisitStmt_(op);
  }

 private:
  arith::Analyzer* ana_;
};

// The `if` conditions of the loop's body that use its variable and are decided (provably true,
// or provably false, for every value of the inner loops) with the variable in [lo, lo + k); of
// an undecided conjunction, its terms that are.
using LoopRanges = std::vector<std::pair<Var, Range>>;

/*! \brief An analyzer that knows the ranges of the loops around the one being partitioned. */
void BindOuter(arith::Analyzer* ana, const LoopRanges& outer) {
  for (const auto& [v, r] : outer) ana->Bind(v, r);
}

std::unordered_set<const Object*> DecidedOnPrefix(const ForNode* loop, int64_t lo, int64_t k,
                                                  const LoopRanges& outer) {
  arith::Analyzer ana;
  BindOuter(&ana, outer);
  const Var& v = loop->loop_var;
  ana.Bind(v, RangeNode::Make(MakeConst(v->dtype, lo), MakeConst(v->dtype, k)));
  std::unordered_set<const Object*> decided;
  std::function<void(const Stmt&)> walk = [&](const Stmt& s) {
    if (!s) return;
    if (auto* f = AsPtr<ForNode>(s)) {
      ana.Bind(f->loop_var, RangeNode::Make(f->min, f->extent));
      walk(f->body);
      ana.Unbind(f->loop_var);
    } else if (auto* i = AsPtr<IfThenElseNode>(s)) {
      const VarNode* vp = v.get();
      auto uses = [vp](const Expr& e) {
        return UsesVar(e, [vp](const VarNode* x) { return x == vp; });
      };
      if (i->condition->dtype.is_scalar() && uses(i->condition)) {
        if (ana.CanProve(i->condition) || ana.CanProve(NotNode::Make(i->condition))) {
          decided.insert(i);
        } else {
          // The terms of a conjunction decided on their own (ProvenBranchRemover drops them).
          std::vector<Expr> terms;
          Conjuncts(i->condition, &terms);
          for (size_t t = 0; terms.size() > 1 && t < terms.size(); ++t) {
            if (uses(terms[t]) &&
                (ana.CanProve(terms[t]) || ana.CanProve(NotNode::Make(terms[t])))) {
              decided.insert(terms[t].get());
            }
          }
        }
      }
      walk(i->then_case);
      walk(i->else_case);
    } else if (auto* seq = AsPtr<SeqStmtNode>(s)) {
      for (const Stmt& x : seq->seq) walk(x);
    } else if (auto* let = AsPtr<LetStmtNode>(s)) {
      walk(let->body);
    } else if (auto* attr = AsPtr<AttrStmtNode>(s)) {
      walk(attr->body);
    } else if (auto* alloc = AsPtr<AllocateNode>(s)) {
      walk(alloc->body);
    } else if (auto* decl = AsPtr<DeclBufferNode>(s)) {
      walk(decl->body);
    }
  };
  walk(loop->body);
  return decided;
}

// The tail's copy of the body: the loop variable replaced (by a constant or a fresh variable),
// the touched expressions simplified, and the loops and lets of the copy binding fresh
// variables (the main loop keeps the originals; each variable is defined once).
class TailCopier : public StmtExprMutator {
 public:
  TailCopier(const VarNode* var, Expr value) { vmap_[var] = std::move(value); }
  using StmtExprMutator::VisitExpr;
  using StmtExprMutator::VisitStmt_;
  Expr VisitExpr(const Expr& e) override {
    if (!UsesVar(e, [this](const VarNode* x) { return vmap_.count(x) != 0; })) return e;
    return SimplifyExpr(Substitute(e, vmap_));
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

 private:
  Var Renew(const Var& v) {
    if (v->pointer) return v;
    Var fresh = VarNode::Make(v->name, v->dtype, v->span);
    vmap_[v.get()] = fresh;
    return fresh;
  }
  VarMap vmap_;
};

class LoopPartitioner : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitStmt_;

  // A body with a break or continue is not split (a part of one iteration has no loop for it).
  static bool HasJump(const Stmt& body) {
    bool found = false;
    PostOrderVisit(body, [&found](const ObjectRef& n) {
      auto* call = AsPtr<CallNode>(n);
      found = found || (call && (call->is_op("tir.break") || call->is_op("tir.continue")));
    });
    return found;
  }

  // A body that allocates is not copied (the tail would define the buffer a second time).
  static bool HasAllocation(const Stmt& body) {
    bool found = false;
    PostOrderVisit(body, [&found](const ObjectRef& n) {
      found = found || AsPtr<AllocateNode>(n) != nullptr || AsPtr<DeclBufferNode>(n) != nullptr;
    });
    return found;
  }

  /*!
   * \brief The allocations of constant size that open the body of a serial or unrolled loop,
   *  taken out of it: each iteration writes such a buffer before reading it (its contents are
   *  undefined at the start of an iteration anyway), so one allocation above the loop serves
   *  every iteration, and the loop can be partitioned without defining the buffer twice (a
   *  register tile C_local[MR * NR] under the loop of a partial row tile); so are those that
   *  open the body of a nest of serial loops that is the whole body. Fills `outer` (outermost
   *  first) and returns the rest of the body; a parallel loop keeps its own.
   */
  static Stmt TakeLeadingAllocations(const ForNode* op, std::vector<Stmt>* outer) {
    if (op->for_kind != ForKind::kSerial && op->for_kind != ForKind::kUnrolled) return op->body;
    Stmt body = op->body;
    while (true) {
      if (auto* alloc = AsPtr<AllocateNode>(body)) {
        bool constant = IsConstInt(alloc->condition, 1) || !alloc->condition;
        for (const Expr& e : alloc->extents) constant = constant && AsConstInt(e).has_value();
        if (!constant) break;
        outer->push_back(body);
        body = alloc->body;
      } else if (auto* decl = AsPtr<DeclBufferNode>(body)) {
        outer->push_back(body);
        body = decl->body;
      } else {
        break;
      }
    }
    // None opens the body, which is a serial loop: the allocations that open that loop's body
    // (recursively) come out of the whole nest, for the same reason (a register tile under the
    // column loop inside the loop of the partial row tile: rows outside the columns).
    auto* inner = AsPtr<ForNode>(body);
    if (outer->empty() && inner != nullptr) {
      Stmt rest = TakeLeadingAllocations(inner, outer);
      if (!outer->empty()) {
        body = ForNode::Make(inner->loop_var, inner->min, inner->extent, inner->for_kind, rest,
                             inner->thread_binding, inner->annotations, inner->span);
      }
    }
    return body;
  }

  /*! \brief Whether every buffer the body declares is over an allocation of the body itself (so
   *  that DefRenewer, renewing the definitions of a copy of it, names no variable defined
   *  outside: it renews the data of every declared buffer). */
  static bool DeclaresOnlyOwnAllocations(const Stmt& body) {
    std::unordered_set<const VarNode*> allocated;
    PostOrderVisit(body, [&](const ObjectRef& n) {
      if (auto* a = AsPtr<AllocateNode>(n)) allocated.insert(a->buffer_var.get());
      if (auto* a = AsPtr<AllocateConstNode>(n)) allocated.insert(a->buffer_var.get());
    });
    bool own = true;
    PostOrderVisit(body, [&](const ObjectRef& n) {
      if (auto* d = AsPtr<DeclBufferNode>(n)) own = own && allocated.count(d->buffer->data.get());
    });
    return own;
  }

  /*! \brief `inner` under the allocations and declarations of `outer` (their bodies replaced). */
  static Stmt Rewrap(const std::vector<Stmt>& outer, Stmt inner) {
    for (size_t k = outer.size(); k-- > 0;) {
      if (auto* alloc = AsPtr<AllocateNode>(outer[k])) {
        inner = AllocateNode::Make(alloc->buffer_var, alloc->dtype, alloc->extents,
                                   alloc->condition, inner, alloc->annotations, alloc->span);
      } else if (auto* decl = AsPtr<DeclBufferNode>(outer[k])) {
        inner = DeclBufferNode::Make(decl->buffer, inner, decl->span);
      }
    }
    return inner;
  }

  Stmt VisitStmt_(const ForNode* op) override {
    auto lo = AsConstInt(op->min);
    auto extent = AsConstInt(op->extent);
    bool kind_ok = op->for_kind == ForKind::kSerial || op->for_kind == ForKind::kUnrolled ||
                   op->for_kind == ForKind::kParallel;
    if (!kind_ok || !lo || !extent || *extent < 2 || HasJump(op->body)) {
      return VisitInside(op);
    }
    // The conditions decided at the first iteration; those undecided there stay as they are.
    std::unordered_set<const Object*> first = DecidedOnPrefix(op, *lo, 1, outer_);
    if (first.empty()) return VisitInside(op);
    // A parallel loop whose body allocates (each thread its own register tile) is partitioned
    // with the definitions of the tail renewed (the allocations stay in each part).
    bool renew_tail = false;
    if (HasAllocation(op->body) && op->for_kind == ForKind::kParallel &&
        DeclaresOnlyOwnAllocations(op->body)) {
      renew_tail = true;
    } else if (HasAllocation(op->body)) {
      std::vector<Stmt> outer;
      Stmt rest = TakeLeadingAllocations(op, &outer);
      if (outer.empty() || HasAllocation(rest)) return VisitInside(op);
      For bare = ForNode::Make(op->loop_var, op->min, op->extent, op->for_kind, rest,
                               op->thread_binding, op->annotations, op->span);
      return Rewrap(outer, VisitStmt_(bare.get()));
    }
    // The longest prefix on which every one of them stays decided (as TVM takes the interval
    // where its conditions all keep one value): a binary search, k = 1 holding.
    auto all_decided = [&](int64_t k) {
      std::unordered_set<const Object*> decided = DecidedOnPrefix(op, *lo, k, outer_);
      for (const Object* c : first) {
        if (!decided.count(c)) return false;
      }
      return true;
    };
    int64_t good = 1, bad = *extent + 1;
    while (bad - good > 1) {
      int64_t mid = good + (bad - good) / 2;
      (all_decided(mid) ? good : bad) = mid;
    }
    if (good >= *extent) {
      // Decided on the whole loop: only drop the tests (Simplify may not see through the loops).
      arith::Analyzer ana;
      BindOuter(&ana, outer_);
      ana.Bind(op->loop_var, RangeNode::Make(op->min, op->extent));
      Stmt body = ProvenBranchRemover(&ana).VisitStmt(op->body);
      Stmt s = ForNode::Make(op->loop_var, op->min, op->extent, op->for_kind, body,
                             op->thread_binding, op->annotations, op->span);
      return VisitInside(AsPtr<ForNode>(s));
    }
    DataType t = op->loop_var->dtype;
    arith::Analyzer ana;
    BindOuter(&ana, outer_);
    ana.Bind(op->loop_var, RangeNode::Make(op->min, MakeConst(t, good)));
    Stmt main_body = ProvenBranchRemover(&ana).VisitStmt(op->body);
    Stmt main = Piece(op, op->loop_var, *lo, good, main_body);
    int64_t tail_n = *extent - good;
    // The tail: a fresh variable (or the constant of its one iteration), and the tests decided
    // on its whole range go too (a `k == 0` init test after a one-iteration main part is false
    // there).
    Stmt tail = Piece(op, VarNode::Make(op->loop_var->name, t, op->loop_var->span), *lo + good,
                      tail_n, op->body);
    if (renew_tail) tail = DefRenewer().VisitStmt(tail);
    if (auto* tail_loop = AsPtr<ForNode>(tail)) {
      arith::Analyzer tana;
      BindOuter(&tana, outer_);
      tana.Bind(tail_loop->loop_var, RangeNode::Make(tail_loop->min, tail_loop->extent));
      tail =
          ForNode::Make(tail_loop->loop_var, tail_loop->min, tail_loop->extent, tail_loop->for_kind,
                        ProvenBranchRemover(&tana).VisitStmt(tail_loop->body),
                        tail_loop->thread_binding, tail_loop->annotations, tail_loop->span);
    } else {
      arith::Analyzer tana;
      BindOuter(&tana, outer_);
      tail = ProvenBranchRemover(&tana).VisitStmt(tail);
    }
    Stmt main_done =
        AsPtr<ForNode>(main) ? VisitInside(AsPtr<ForNode>(main)) : VisitStmt(main);
    return SeqStmtNode::Flatten({main_done, VisitStmt(tail)}, op->span);
  }

 private:
  // The loops around the current point with their ranges (as TVM's partition finder, which
  // deduces bounds knowing the enclosing loops' domains: a unit loop around is its one value).
  LoopRanges outer_;

  /*! \brief The loop's body visited (partitioned inside) with the loop's range known. */
  Stmt VisitInside(const ForNode* op) {
    outer_.push_back({op->loop_var, RangeNode::Make(op->min, op->extent)});
    Stmt s = StmtMutator::VisitStmt_(op);
    outer_.pop_back();
    return s;
  }

  /*!
   * \brief One part of a partitioned loop, as TVM makes it: iterations [start, start + n) of
   *  `op` with `body`, as a loop of `var` from 0 (its uses become `var + start`), keeping the
   *  loop's kind and annotations; a part of one iteration is the body at `start` unless the
   *  loop carries annotations (other than the partition hint).
   */
  static Stmt Piece(const ForNode* op, const Var& var, int64_t start, int64_t n,
                    const Stmt& body) {
    DataType t = op->loop_var->dtype;
    AttrMap annotations = op->annotations;
    annotations.erase(kPartitionHint);
    if (n == 1 && annotations.empty()) {
      return TailCopier(op->loop_var.get(), MakeConst(t, start)).VisitStmt(body);
    }
    Stmt b = body;
    if (start != 0 || var != op->loop_var) {
      Expr value = start == 0 ? Expr(var) : Expr(AddNode::Make(var, MakeConst(t, start)));
      b = TailCopier(op->loop_var.get(), value).VisitStmt(body);
    }
    return ForNode::Make(var, MakeConst(t, int64_t(0)), MakeConst(t, n), op->for_kind, b,
                         op->thread_binding, op->annotations, op->span);
  }
};

// After partitioning, as in TVM: the partition hints (loop annotations and attributes) go, and
// so do the `likely` and `ignore_loop_partition` marks around conditions.
class HintRemover : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;
  Stmt VisitStmt_(const ForNode* op) override {
    Stmt s = StmtExprMutator::VisitStmt_(op);
    auto* loop = AsPtr<ForNode>(s);
    if (!loop->annotations.count(kPartitionHint)) return s;
    AttrMap annotations = loop->annotations;
    annotations.erase(kPartitionHint);
    return ForNode::Make(loop->loop_var, loop->min, loop->extent, loop->for_kind, loop->body,
                         loop->thread_binding, annotations, loop->span, loop->step);
  }
  Stmt VisitStmt_(const AttrStmtNode* op) override {
    if (op->attr_key == kPartitionHint) return VisitStmt(op->body);
    return StmtExprMutator::VisitStmt_(op);
  }
  Expr VisitExpr_(const CallNode* op) override {
    if ((op->is_op("tir.likely") || op->is_op("tir.ignore_loop_partition")) &&
        op->args.size() == 1) {
      return VisitExpr(op->args[0]);
    }
    return StmtExprMutator::VisitExpr_(op);
  }
};

PrimFunc LoopPartitionFunc(PrimFunc f, IRModule, const PassContext& ctx) {
  Stmt body = f->body;
  if (ctx.GetRecordBool("tir.LoopPartition", "partition_const_loop", true)) {
    body = LoopPartitioner().VisitStmt(body);
  }
  body = HintRemover().VisitStmt(body);
  return body == f->body ? f : f->WithBody(body);
}

}  // namespace

Pass LoopPartition() { return CreatePrimFuncPass(LoopPartitionFunc, 0, "tir.LoopPartition"); }
TESSERA_REGISTER_PASS("tir.LoopPartition", LoopPartition);

}  // namespace transform
}  // namespace tessera
