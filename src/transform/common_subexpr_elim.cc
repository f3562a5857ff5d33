// tir.CommonSubexprElimTIR: a computation repeated inside one statement is computed once.
//
//   B[i] = (A[i] * x + y) * (A[i] * x + y)   ->   cse_v1 = A[i] * x + y
//                                                  B[i] = cse_v1 * cse_v1
//
// Per BufferStore, Evaluate, IfThenElse condition and loop bound: every pure, non-trivial
// subexpression (an operation; not a variable, a constant, a Ramp or a Broadcast) occurring
// more than once in that statement is bound by a LetStmt just before it, the largest first (a
// repeated subexpression inside a bound one is then shared through it). Calls with effects and
// expressions containing them are never bound; buffer reads are, since nothing writes memory
// within one expression. Off with "tir.disable_cse_tir".
#include <functional>

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

bool IsEligible(const Expr& e) {
  if (IsTrivial(e) || e->dtype.is_handle()) return false;
  // Ramps and Broadcasts stay in place (a contiguous vector access is recognized by its Ramp
  // index); their scalar operands may be bound.
  if (AsPtr<RampNode>(e) || AsPtr<BroadcastNode>(e)) return false;
  bool ok = true;
  PostOrderVisit(e, [&ok](const ObjectRef& n) {
    if (auto* call = AsPtr<CallNode>(n)) {
      auto* op = AsPtr<OpNode>(call->op);
      if (!op || op->effect != CallEffect::kPure || op->name == "tir.address_of") ok = false;
    }
  });
  return ok;
}

int Size(const Expr& e) {
  int n = 0;
  PostOrderVisit(e, [&n](const ObjectRef&) { ++n; });
  return n;
}

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
      // Count the eligible subexpressions of the statement's own expressions.
      struct Entry {
        Expr expr;
        int count;
      };
      std::unordered_map<size_t, std::vector<Entry>> table;
      for (const Expr& root : OwnExprs(s)) {
        PostOrderVisit(root, [&table](const ObjectRef& n) {
          auto* node = AsPtr<ExprNode>(n);
          if (node == nullptr) return;
          Expr e = GetRef(node);
          if (!IsEligible(e)) return;
          auto& bucket = table[StructuralHash(e)];
          for (Entry& entry : bucket) {
            if (entry.expr->dtype == e->dtype && StructuralEqual(entry.expr, e)) {
              ++entry.count;
              return;
            }
          }
          bucket.push_back({e, 1});
        });
      }
      Expr best;
      int best_size = 0;
      for (auto& [h, bucket] : table) {
        for (Entry& entry : bucket) {
          int size = Size(entry.expr);
          if (entry.count > 1 && size > best_size) {
            best = entry.expr;
            best_size = size;
          }
        }
      }
      if (!best) break;
      Var v = VarNode::Make("cse_v" + std::to_string(++counter_), best->dtype);
      s = Replacer(best, v).VisitStmt(s);
      lets.push_back({v, best});
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
  Stmt body = CSE().VisitStmt(f->body);
  return body == f->body ? f : f->WithBody(body);
}

}  // namespace

Pass CommonSubexprElimTIR() { return CreatePrimFuncPass(CSEFunc, 0, "tir.CommonSubexprElimTIR"); }
TESSERA_REGISTER_PASS("tir.CommonSubexprElimTIR", CommonSubexprElimTIR);

}  // namespace transform
}  // namespace tessera
