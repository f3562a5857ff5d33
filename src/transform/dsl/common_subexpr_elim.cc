// dsl.CommonSubexprElim: a computation done more than once in a statement and the statements
// under it is computed once, into a `cse_var_<n>` variable, with the rules of TVM's
// tir.transform.CommonSubexprElimTIR (the pass Compass's DSL build runs before its width
// legalization):
//
//   c[0] = (a0 == 0) ? a1 : 20;               bool cse_var_1 = (a0 == 0);
//   ...                                ->     c[0] = cse_var_1 ? a1 : 20;
//   v[0] = (a0 == 0) ? w[0] : (int8)10;       ...  v[0] = cse_var_1 ? w[0] : (int8)10;
//
// - A computation is an expression that is not a constant or a variable, neither is nor contains
//   a call or a buffer load (their value may change between two statements), is not a Ramp or a
//   Broadcast (vector accesses are recognized by them), a Let or a pointer.
// - Only scalar computations are bound. Compass's vector operations (S.vadd, masks, `~m`, the
//   narrowing and widening casts) are intrinsic calls there, which TVM's pass never binds; here
//   they are IR nodes, and binding one would hide it from dsl.AlignVectorWidth and
//   dsl.CombineInstructions (`a & ~b` is one vbclr only while `~b` is in place).
// - The computations "done by" a statement: those of its expressions (an eligible expression
//   counts once, without its parts), summed over the children of a sequence, a let, a store...;
//   for an `if`, those done by at least two of condition / then / else; for a loop, by at least
//   two of start / extent / body; for a while, by both condition and body. A computation only
//   done inside one branch or one loop body is thus left to that branch or body.
// - At each statement, from the largest computation (node count) down: one already held by a
//   variable in scope is replaced by it; one done twice or more whose variables are all in scope
//   (parameters, enclosing lets and loop variables) gets a new `cse_var_<n>` bound by a LetStmt
//   around the statement; otherwise its direct parts are considered in its place. After new
//   variables, the statement is examined again; without, its children are.
//
// Variables of the DSL are immutable (a value assigned again lives in a local buffer, read by
// loads), so a let computed before a statement keeps its value in it.
#include <algorithm>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "tessera/ir/functor.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/ir/op.h"
#include "tessera/ir/structural_equal.h"
#include "tessera/ir/structural_hash.h"
#include "tessera/transform/dsl_passes.h"

namespace tessera {
namespace transform {
namespace {

bool IsAtom(const Expr& e) {
  return AsPtr<IntImmNode>(e) || AsPtr<FloatImmNode>(e) || AsPtr<StringImmNode>(e) ||
         AsPtr<VarNode>(e) || AsPtr<SizeVarNode>(e);
}

bool Forbidden(const Expr& e) { return AsPtr<CallNode>(e) || AsPtr<BufferLoadNode>(e); }

bool Eligible(const Expr& e) {
  if (IsAtom(e) || Forbidden(e) || AsPtr<RampNode>(e) || AsPtr<BroadcastNode>(e) ||
      AsPtr<LetNode>(e) || e->dtype.is_handle() || e->dtype.is_vector()) {
    return false;
  }
  bool bad = false;
  PostOrderVisit(e, [&bad](const ObjectRef& n) {
    bad = bad || n->kind == NodeKind::kCall || n->kind == NodeKind::kBufferLoad ||
          n->kind == NodeKind::kLet;
  });
  return !bad;
}

int64_t Complexity(const Expr& e) {
  int64_t n = 0;
  PostOrderVisit(e, [&n](const ObjectRef&) { ++n; });
  return n;
}

// Computations with the number of times they are done, in the order first seen; structurally
// equal expressions are one computation.
class Table {
 public:
  void Add(const Expr& e, int64_t count) {
    size_t h = StructuralHash(e);
    for (size_t i : index_[h]) {
      if (StructuralEqual(entries_[i].first, e)) {
        entries_[i].second += count;
        return;
      }
    }
    index_[h].push_back(entries_.size());
    entries_.push_back({e, count});
  }
  int64_t Count(const Expr& e) const {
    auto it = index_.find(StructuralHash(e));
    if (it == index_.end()) return 0;
    for (size_t i : it->second) {
      if (StructuralEqual(entries_[i].first, e)) return entries_[i].second;
    }
    return 0;
  }
  void Union(const Table& other) {
    for (const auto& [e, n] : other.entries_) Add(e, n);
  }
  const std::vector<std::pair<Expr, int64_t>>& entries() const { return entries_; }

 private:
  std::vector<std::pair<Expr, int64_t>> entries_;
  std::unordered_map<size_t, std::vector<size_t>> index_;
};

// Computations done by at least two of the tables, each counted as the sum over all of them.
Table AtLeastTwo(const std::vector<const Table*>& tables) {
  Table out;
  for (size_t i = 0; i < tables.size(); ++i) {
    for (const auto& [e, n] : tables[i]->entries()) {
      if (out.Count(e) > 0) continue;
      int found = 0;
      int64_t total = 0;
      for (const Table* t : tables) {
        int64_t c = t->Count(e);
        found += c > 0;
        total += c;
      }
      if (found >= 2) out.Add(e, total);
    }
  }
  return out;
}

bool MayLeave(const Stmt& s) {
  bool leaves = false;
  PostOrderVisit(s, [&leaves](const ObjectRef& n) {
    if (auto* call = AsPtr<CallNode>(n)) {
      if (auto* op = AsPtr<OpNode>(call->op)) {
        leaves = leaves || op->name == "tir.ret" || op->name == "tir.break" ||
                 op->name == "tir.continue";
      }
    }
  });
  return leaves;
}

class ComputationsDoneBy : public StmtExprVisitor {
 public:
  using StmtExprVisitor::VisitStmt_;

  static Table Of(const Stmt& s) {
    ComputationsDoneBy v;
    v.VisitStmt(s);
    return std::move(v.table_);
  }
  static Table Of(const Expr& e) {
    ComputationsDoneBy v;
    if (e != nullptr) v.VisitExpr(e);
    return std::move(v.table_);
  }

  void VisitExpr(const Expr& e) override {
    if (IsAtom(e)) return;
    if (Eligible(e)) {
      table_.Add(e, 1);
      return;
    }
    ExprVisitor::VisitExpr(e);
  }

  void VisitStmt_(const IfThenElseNode* op) override {
    Table c = Of(op->condition), t = Of(op->then_case);
    Table e = op->else_case != nullptr ? Of(op->else_case) : Table();
    table_.Union(AtLeastTwo({&c, &t, &e}));
  }
  void VisitStmt_(const ForNode* op) override {
    Table m = Of(op->min), x = Of(op->extent), b = Of(op->body);
    if (op->step != nullptr) m.Union(Of(op->step));
    table_.Union(AtLeastTwo({&m, &x, &b}));
  }
  // One departure from TVM's rule, for kernels that return early: computations after a
  // statement that may leave (`return`, `break`, `continue`) are not counted with those before
  // it, so nothing (a division by a variable, say) is computed ahead of the exit that guards it.
  void VisitStmt_(const SeqStmtNode* op) override {
    for (const Stmt& s : op->seq) {
      VisitStmt(s);
      if (MayLeave(s)) break;
    }
  }
  void VisitStmt_(const WhileNode* op) override {
    Table c = Of(op->condition), b = Of(op->body);
    table_.Union(AtLeastTwo({&c, &b}));
  }

 private:
  Table table_;
};

// The largest eligible parts of `e` (e's children, or their parts where a child is not eligible).
std::vector<Expr> DirectParts(const Expr& e) {
  std::vector<Expr> parts;
  class Collect : public ExprVisitor {
   public:
    explicit Collect(std::vector<Expr>* out) : out_(out) {}
    void VisitExpr(const Expr& x) override {
      if (IsAtom(x)) return;
      if (Eligible(x)) {
        out_->push_back(x);
        return;
      }
      ExprVisitor::VisitExpr(x);
    }

   private:
    std::vector<Expr>* out_;
  };
  Collect c(&parts);
  c.ExprVisitor::VisitExpr(e);  // the children of e, not e itself
  return parts;
}

// Replaces the eligible occurrences of `target` by `var`.
class ReplaceComputation : public StmtExprMutator {
 public:
  ReplaceComputation(Expr target, Var var) : target_(std::move(target)), var_(std::move(var)) {}
  Expr VisitExpr(const Expr& e) override {
    if (!IsAtom(e) && e->dtype == target_->dtype && StructuralEqual(e, target_) && Eligible(e)) {
      return var_;
    }
    return StmtExprMutator::VisitExpr(e);
  }

 private:
  Expr target_;
  Var var_;
};

class Eliminator : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitStmt_;

  explicit Eliminator(const PrimFunc& f) {
    for (const Var& p : f->params) context_.push_back({p, nullptr});
    PostOrderVisit(f->body, [this](const ObjectRef& n) {
      if (auto* v = AsPtr<VarNode>(n)) taken_.insert(v->name);
    });
    for (const Var& p : f->params) taken_.insert(p->name);
  }

  Stmt VisitStmt(const Stmt& stmt) override {
    Stmt result = stmt;
    bool created = false;
    struct Work {
      Expr comp;
      int64_t count, size;
    };
    std::vector<Work> work;
    const Table done = ComputationsDoneBy::Of(stmt);
    for (const auto& [e, n] : done.entries()) {
      work.push_back({e, n, Complexity(e)});
    }
    // Largest first; std::stable_sort keeps equal sizes in the order first seen.
    std::stable_sort(work.begin(), work.end(),
                     [](const Work& a, const Work& b) { return a.size > b.size; });
    for (size_t i = 0; i < work.size(); ++i) {
      const Expr comp = work[i].comp;
      const int64_t count = work[i].count;
      Var held;
      for (const auto& [v, value] : context_) {
        if (value != nullptr && value->dtype == comp->dtype && StructuralEqual(value, comp)) {
          held = v;
          break;
        }
      }
      if (held != nullptr) {
        result = ReplaceComputation(comp, held).VisitStmt(result);
        continue;
      }
      if (count >= 2 && InScope(comp)) {
        Var v = NewVar(comp->dtype);
        result = ReplaceComputation(comp, v).VisitStmt(result);
        result = LetStmtNode::Make(v, comp, result, stmt->span);
        created = true;
        continue;
      }
      for (const Expr& part : DirectParts(comp)) {
        auto it = std::find_if(work.begin(), work.end(), [&part](const Work& w) {
          return w.comp->dtype == part->dtype && StructuralEqual(w.comp, part);
        });
        if (it != work.end()) {
          it->count += 1;
          continue;
        }
        // Keep the order by size: after the last entry at least as large.
        int64_t size = Complexity(part);
        auto at = std::find_if(work.begin() + static_cast<std::ptrdiff_t>(i) + 1, work.end(),
                               [size](const Work& w) { return w.size < size; });
        work.insert(at, {part, 1, size});
      }
    }
    if (created) return VisitStmt(result);
    return StmtExprMutator::VisitStmt(result);
  }

  Stmt VisitStmt_(const LetStmtNode* op) override {
    context_.push_back({op->var, op->value});
    Stmt out = StmtExprMutator::VisitStmt_(op);
    context_.pop_back();
    return out;
  }

  Stmt VisitStmt_(const ForNode* op) override {
    context_.push_back({op->loop_var, nullptr});
    Stmt out = StmtExprMutator::VisitStmt_(op);
    context_.pop_back();
    return out;
  }

 private:
  bool InScope(const Expr& e) const {
    return !UsesVar(e, [this](const VarNode* v) {
      for (const auto& [known, value] : context_) {
        if (known.get() == v) return false;
      }
      return true;
    });
  }

  Var NewVar(DataType t) {
    std::string name;
    do {
      name = "cse_var_" + std::to_string(++counter_);
    } while (taken_.count(name));
    return VarNode::Make(name, t);
  }

  std::vector<std::pair<Var, Expr>> context_;
  std::unordered_set<std::string> taken_;
  int counter_ = 0;
};

PrimFunc CommonSubexprElimFunc(PrimFunc f, IRModule, const PassContext& ctx) {
  // Off as Compass turns it off: the config, or disabled_pass naming TVM's pass.
  if (ctx.GetBool("tir.disable_cse_tir", false)) return f;
  for (const std::string& name : ctx.disabled_pass) {
    if (name == "tir.CommonSubexprElimTIR") return f;
  }
  Stmt body = Eliminator(f).VisitStmt(f->body);
  return body == f->body ? f : f->WithBody(body);
}

}  // namespace

Pass CommonSubexprElim() {
  return CreatePrimFuncPass(CommonSubexprElimFunc, 0, "dsl.CommonSubexprElim");
}
TESSERA_REGISTER_PASS("dsl.CommonSubexprElim", CommonSubexprElim);

}  // namespace transform
}  // namespace tessera
