// tir.StatementCSE: the host build's common subexpression elimination. A computation repeated
// inside one statement is computed once, just before it:
//
//   B[i] = (A[i] * x + y) * (A[i] * x + y)   ->   cse_v1 = A[i] * x + y
//                                                  B[i] = cse_v1 * cse_v1
//
// Per BufferStore and Evaluate: every pure, non-trivial subexpression (an operation; not a
// variable, a constant, a Ramp or a Broadcast) occurring more than once in that statement is
// bound by a LetStmt just before it, the largest first (a repeated subexpression inside a bound
// one is then shared through it). Calls with effects and expressions containing them are never
// bound; buffer reads are, since nothing writes memory within one expression.
//
// Why the build runs this and not tir.CommonSubexprElimTIR (TVM's hierarchical rules, in
// common_subexpr_elim.cc), measured on bench/bench_auto.py's kernels (2026-11-28, 2 shared
// cores): TVM's pass never binds a buffer load nor anything containing one, so the values the
// kernels repeat (loaded operands) stay as they are, while it binds every index computation an
// unrolled register tile shares (76 lets in the gemm tile, against 3) ahead of the tile, where
// they stay live and hide the address patterns the code generator matches: conv2d 3x3 went from
// 103 to 74 GFLOP/s (gemm 105 either way, batch_matmul 80 -> 78), and lowering the gemm took
// 14.5 ms instead of 10.4. So the build keeps this per-statement pass, off as TVM's is where the
// build runs it: with "tir.disable_cse_tir", or when disabled_pass names "tir.StatementCSE" or
// "tir.CommonSubexprElimTIR".
#include <cstring>
#include <functional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "cse_engine.h"
#include "tessera/ir/functor.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/ir/op.h"
#include "tessera/ir/structural_equal.h"
#include "tessera/ir/structural_hash.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace transform {
namespace {

bool IsTrivial(const Expr& e) {
  if (AsPtr<VarNode>(e) || AsPtr<SizeVarNode>(e) || AsPtr<IntImmNode>(e) ||
      AsPtr<FloatImmNode>(e) || AsPtr<StringImmNode>(e)) {
    return true;
  }
  if (auto* b = AsPtr<BroadcastNode>(e)) return IsTrivial(b->value);
  if (auto* r = AsPtr<RampNode>(e)) return IsTrivial(r->base) && IsTrivial(r->stride);
  return false;
}

// Value numbering of the expressions of one statement, in one post-order walk: two nodes get
// the same number when they have the same kind, type and own fields (constant values, the
// variable, buffer or op they name) and their children have the same numbers, i.e. when they
// are structurally equal with variables compared by identity. Sizes and purity are computed
// bottom-up in the same walk, so numbering a statement is linear in its size however deep its
// expressions nest (a chain of 20,000 additions included).
struct NodeInfo {
  int64_t number = 0;
  int64_t size = 1;
  bool pure = true;  // no call with effects and no variable bound inside the statement below
};

class Numbering : public ExprVisitor {
 public:
  using ExprVisitor::VisitExpr_;

  struct Candidate {
    Expr expr;
    int64_t size;
    int count;
  };

  /*! \brief Notes the variables that Let expressions of `root` bind: a subexpression using one
   *  cannot be computed before the statement. Call for every root before walking them. */
  void NoteBoundVars(const Expr& root) {
    PostOrderVisit(root, [this](const ObjectRef& n) {
      if (auto* let = AsPtr<LetNode>(n)) bound_.insert(let->var.get());
    });
  }

  void VisitExpr(const Expr& e) override {
    const NodeInfo* ni;
    auto it = info_.find(e.get());
    if (it != info_.end()) {
      // A node shared in the expression DAG: counted again, not walked again.
      ni = &it->second;
    } else {
      frames_.emplace_back();
      ExprVisitor::VisitExpr(e);
      std::vector<NodeInfo> kids = std::move(frames_.back());
      frames_.pop_back();
      ni = &info_.emplace(e.get(), Number(e, kids)).first->second;
    }
    if (!frames_.empty()) frames_.back().push_back(*ni);
    if (Eligible(e, *ni)) {
      auto [pos, fresh] = index_.emplace(ni->number, candidates_.size());
      if (fresh) {
        candidates_.push_back({e, ni->size, 1});
      } else {
        ++candidates_[pos->second].count;
      }
    }
  }

  /*! \brief The largest subexpression occurring more than once (the first found among equals). */
  const Candidate* Best() const {
    const Candidate* best = nullptr;
    for (const Candidate& c : candidates_) {
      if (c.count > 1 && (best == nullptr || c.size > best->size)) best = &c;
    }
    return best;
  }

  /*! \brief The number of a node of the walked expressions (-1 for others). */
  int64_t NumberOf(const Object* node) const {
    auto it = info_.find(node);
    return it == info_.end() ? -1 : it->second.number;
  }

 private:
  static bool Eligible(const Expr& e, const NodeInfo& ni) {
    if (!ni.pure || IsTrivial(e) || e->dtype.is_handle()) return false;
    // Ramps and Broadcasts stay in place (a contiguous vector access is recognized by its Ramp
    // index); their scalar operands may be bound.
    // So do lane masks (an access's predicate, which the code generator reads as the count of
    // active lanes).
    if (auto* call = AsPtr<CallNode>(e); call && call->is_op("tir.get_active_lane_mask")) {
      return false;
    }
    return !AsPtr<RampNode>(e) && !AsPtr<BroadcastNode>(e);
  }

  NodeInfo Number(const Expr& e, const std::vector<NodeInfo>& kids) {
    std::vector<int64_t> key = values_.OwnFields(e, kids.size());
    NodeInfo ni;
    if (AsPtr<VarNode>(e) && bound_.count(e.get())) ni.pure = false;
    if (auto* call = AsPtr<CallNode>(e)) {
      auto* op = AsPtr<OpNode>(call->op);
      if (!op || op->effect != CallEffect::kPure || op->name == "tir.address_of") ni.pure = false;
    }
    for (const NodeInfo& kid : kids) {
      key.push_back(kid.number);
      ni.size += kid.size;
      ni.pure = ni.pure && kid.pure;
    }
    ni.number = values_.Number(std::move(key));
    return ni;
  }

  std::vector<std::vector<NodeInfo>> frames_;
  std::unordered_map<const Object*, NodeInfo> info_;
  ValueNumbers values_;
  std::unordered_set<const Object*> bound_;
  std::unordered_map<int64_t, size_t> index_;
  std::vector<Candidate> candidates_;
};

// Replaces every node numbered `number` (the occurrences of one subexpression) by `var`.
class NumberReplacer : public StmtExprMutator {
 public:
  NumberReplacer(const Numbering& numbering, int64_t number, Var var)
      : numbering_(numbering), number_(number), var_(std::move(var)) {}
  using StmtExprMutator::VisitExpr;
  Expr VisitExpr(const Expr& e) override {
    if (numbering_.NumberOf(e.get()) == number_) return var_;
    return StmtExprMutator::VisitExpr(e);
  }

 private:
  const Numbering& numbering_;
  int64_t number_;
  Var var_;
};

// Replaces every occurrence of `target` (structurally) in an expression by `var`.
class Replacer : public StmtExprMutator {
 public:
  Replacer(Expr target, Var var) : target_(std::move(target)), var_(std::move(var)) {}
  using StmtExprMutator::VisitExpr;
  Expr VisitExpr(const Expr& e) override {
    if (e->dtype == target_->dtype && StructuralEqual(e, target_)) return var_;
    return StmtExprMutator::VisitExpr(e);
  }

 private:
  Expr target_;
  Var var_;
};

class CSE : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitStmt_;

  Stmt VisitStmt_(const BufferStoreNode* op) override { return Eliminate(GetRef(op)); }
  Stmt VisitStmt_(const EvaluateNode* op) override { return Eliminate(GetRef(op)); }

 private:
  // The expressions of `s` itself (not of nested statements).
  static std::vector<Expr> OwnExprs(const Stmt& s) {
    if (auto* st = AsPtr<BufferStoreNode>(s)) {
      std::vector<Expr> v = st->indices;
      v.push_back(st->value);
      return v;
    }
    if (auto* ev = AsPtr<EvaluateNode>(s)) return {ev->value};
    return {};
  }

  Stmt Eliminate(Stmt s) {
    const Stmt original = s;
    std::vector<std::pair<Var, Expr>> lets;
    for (int round = 0; round < 64; ++round) {
      Numbering numbering;
      const std::vector<Expr> roots = OwnExprs(s);
      for (const Expr& root : roots) numbering.NoteBoundVars(root);
      for (const Expr& root : roots) numbering.VisitExpr(root);
      const Numbering::Candidate* best = numbering.Best();
      if (best == nullptr) break;
      Var v = VarNode::Make("cse_v" + std::to_string(++counter_), best->expr->dtype);
      s = NumberReplacer(numbering, numbering.NumberOf(best->expr.get()), v).VisitStmt(s);
      lets.push_back({v, best->expr});
    }
    // Later lets were found inside the statement after the earlier replacements, so they may
    // be used by the values of earlier ones: the later a let was found, the further out.
    for (size_t i = 0; i < lets.size(); ++i) {
      const auto& [v, value] = lets[i];
      Expr bound = value;
      for (size_t j = i + 1; j < lets.size(); ++j) {
        bound = Replacer(lets[j].second, lets[j].first).VisitExpr(bound);
      }
      lets[i].second = bound;
    }
    // Safety: a let must not use a variable bound further in (cannot happen when the largest
    // expression is taken first, but the statement is kept unchanged if it did).
    for (size_t i = 0; i < lets.size(); ++i) {
      for (size_t j = i + 1; j < lets.size(); ++j) {
        const VarNode* inner = lets[i].first.get();
        if (UsesVar(lets[j].second, [inner](const VarNode* x) { return x == inner; })) {
          return original;
        }
      }
    }
    for (const auto& [v, value] : lets) s = LetStmtNode::Make(v, value, s);
    return s;
  }

  int counter_ = 0;
};

PrimFunc CSEFunc(PrimFunc f, IRModule, const PassContext& ctx) {
  if (ctx.GetBool("tir.disable_cse_tir", false)) return f;
  for (const std::string& name : ctx.disabled_pass) {
    if (name == "tir.CommonSubexprElimTIR") return f;
  }
  Stmt body = CSE().VisitStmt(f->body);
  return body == f->body ? f : f->WithBody(body);
}

}  // namespace

Pass StatementCSE() { return CreatePrimFuncPass(CSEFunc, 0, "tir.StatementCSE"); }
TESSERA_REGISTER_PASS("tir.StatementCSE", StatementCSE);

}  // namespace transform
}  // namespace tessera
