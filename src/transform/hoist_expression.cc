// tir.HoistExpression: conditions and let bindings that do not change inside a loop move out
// of it, as TVM v0.23's pass of this name does.
//
//   for i in range(4):              for i in range(4):
//     for j in range(4):              if i < 3:
//       if i < 3:              ->       for j in range(4):
//         A[i, j] = 0.0                   A[i, j] = 0.0
//
// How: a first walk records, for every loop (a For, or an AttrStmt binding a thread/block
// variable), the conditions and bindings that may be placed just outside it: the outermost
// loop whose variables they do not use, stopping at a loop holding a sequence of statements
// (the condition would then guard statements it did not guard). A second walk wraps each such
// loop in `if cond: loop else: loop` (no else when the condition came from an `if` without
// one) and in `let var = value`, and drops the let bindings it moved. ConvertSSA then renames
// the duplicated definitions, and Simplify, knowing the condition in each branch, removes the
// tests it now decides; RemoveNoOp drops the branches left empty. (These three run only where
// something was hoisted: a module with nothing to hoist comes back as it was.)
//
// Which kinds move is set by the "tir.HoistExpression" record, two bit sets with TVM's values:
//   hoisted_conditionals: 1 if-statement conditions, 2 T.if_then_else conditions, 4 the
//     operands of `and`/`or`, 8 conditions using a thread variable (and hoisting past one);
//   hoisted_let_bindings: 1 bindings a hoisted condition needs, 2 LetStmt, 4 Let expressions.
// tir.HoistIfThenElse is the same machinery with only if-statement conditions (and thread
// variables where "support_block_scope_hoisting" is set) and no let bindings.
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "tessera/ir/functor.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/ir/op.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace transform {
namespace {

enum CondFlag : int { kIfElseStmt = 1, kIfElseExpr = 2, kBooleanExpr = 4, kUsingBlockVar = 8 };
enum LetFlag : int { kRequiredByCondition = 1, kLetStmt = 2, kLetExpr = 4 };

struct HoistConfig {
  int conditionals = kIfElseStmt | kIfElseExpr | kBooleanExpr;
  int let_bindings = kRequiredByCondition | kLetStmt | kLetExpr;
  bool Cond(int flag) const { return (conditionals & flag) != 0; }
  bool Let(int flag) const { return (let_bindings & flag) != 0; }
};

using VarSet = std::unordered_set<const VarNode*>;

struct CondInfo {
  Expr condition;
  int source;  // a CondFlag
  bool uses_block_var;
  VarSet required_lets;
  bool with_else;
  bool enabled = false;  // set by the second walk
  bool FlagsAllow(const HoistConfig& cfg) const {
    return cfg.Cond(source) && (cfg.Cond(kUsingBlockVar) || !uses_block_var);
  }
};

struct LetInfo {
  Var var;
  Expr value;
  int source;  // a LetFlag
};

struct LoopInfo {
  const VarNode* var = nullptr;
  const StmtNode* def = nullptr;
  bool is_block_var = false;  // an AttrStmt binding a thread variable, not a For
  bool has_sequence = false;
  std::vector<LetInfo> lets;
  std::vector<CondInfo> conds;
};

bool IsPure(const Expr& e) {
  bool ok = true;
  PostOrderVisit(e, [&ok](const ObjectRef& n) {
    if (AsPtr<BufferLoadNode>(n)) ok = false;
    if (auto* call = AsPtr<CallNode>(n)) {
      auto* op = AsPtr<OpNode>(call->op);
      if (!op || op->effect != CallEffect::kPure) ok = false;
    }
  });
  return ok;
}

std::vector<const VarNode*> VarsOf(const Expr& e) {
  std::vector<const VarNode*> out;
  PostOrderVisit(e, [&out](const ObjectRef& n) {
    if (auto* v = AsPtr<VarNode>(n)) out.push_back(v);
  });
  return out;
}

const VarNode* BoundVar(const AttrStmtNode* op) {
  if (auto* iv = AsPtr<IterVarNode>(op->node)) return iv->var.get();
  if (auto* v = AsPtr<VarNode>(op->node)) return v;
  return nullptr;
}

// First walk: where each condition and binding may go.
class HoistCollector : public StmtExprVisitor {
 public:
  using StmtExprVisitor::VisitExpr_;
  using StmtExprVisitor::VisitStmt_;
  explicit HoistCollector(const HoistConfig& cfg) : cfg_(cfg) {}
  std::vector<LoopInfo> done;

  void VisitStmt_(const ForNode* op) override {
    Enter(op->loop_var.get(), op, false);
    StmtExprVisitor::VisitStmt_(op);
    Leave();
  }
  void VisitStmt_(const AttrStmtNode* op) override {
    const VarNode* v = BoundVar(op);
    if (!v) return StmtExprVisitor::VisitStmt_(op);
    block_vars_.insert(v);
    Enter(v, op, true);
    StmtExprVisitor::VisitStmt_(op);
    Leave();
    block_vars_.erase(v);
  }
  void VisitStmt_(const SeqStmtNode* op) override {
    if (!active_.empty()) active_.back().has_sequence = true;
    StmtExprVisitor::VisitStmt_(op);
  }
  void VisitStmt_(const IfThenElseNode* op) override {
    TryCondition(op->condition, kIfElseStmt, op->else_case != nullptr);
    StmtExprVisitor::VisitStmt_(op);
  }
  void VisitStmt_(const LetStmtNode* op) override {
    Binding(op->var, op->value, kLetStmt);
    StmtExprVisitor::VisitStmt_(op);
    let_loops_.erase(op->var.get());
    let_lets_.erase(op->var.get());
  }
  void VisitExpr_(const LetNode* op) override {
    Binding(op->var, op->value, kLetExpr);
    StmtExprVisitor::VisitExpr_(op);
    let_loops_.erase(op->var.get());
    let_lets_.erase(op->var.get());
  }
  void VisitExpr_(const CallNode* op) override {
    if (op->is_op("tir.if_then_else") && !op->args.empty()) {
      TryCondition(op->args[0], kIfElseExpr, true);
    }
    StmtExprVisitor::VisitExpr_(op);
  }
  void VisitExpr_(const AndNode* op) override {
    TryCondition(op->a, kBooleanExpr, true);
    TryCondition(op->b, kBooleanExpr, true);
    StmtExprVisitor::VisitExpr_(op);
  }
  void VisitExpr_(const OrNode* op) override {
    TryCondition(op->a, kBooleanExpr, true);
    TryCondition(op->b, kBooleanExpr, true);
    StmtExprVisitor::VisitExpr_(op);
  }

 private:
  void Enter(const VarNode* v, const StmtNode* def, bool block) {
    LoopInfo info;
    info.var = v;
    info.def = def;
    info.is_block_var = block;
    active_.push_back(std::move(info));
    loop_vars_.insert(v);
  }
  void Leave() {
    loop_vars_.erase(active_.back().var);
    done.push_back(std::move(active_.back()));
    active_.pop_back();
  }

  // The loop just inside the innermost loop `e` depends on (or cannot cross); null when `e`
  // must stay where it is.
  LoopInfo* Destination(const Expr& e) {
    if (active_.empty()) return nullptr;
    for (size_t k = active_.size(); k-- > 0;) {
      LoopInfo& loop = active_[k];
      bool uses = UsesVar(e, [&](const VarNode* x) {
        if (x == loop.var) return true;
        auto it = let_loops_.find(x);
        return it != let_loops_.end() && it->second.count(loop.var) > 0;
      });
      bool blocked = loop.is_block_var && !cfg_.Cond(kUsingBlockVar);
      if (loop.has_sequence || uses || blocked) {
        return k + 1 == active_.size() ? nullptr : &active_[k + 1];
      }
    }
    return &active_.front();
  }

  void TryCondition(const Expr& cond, int source, bool with_else) {
    if (!IsPure(cond)) return;
    LoopInfo* dest = Destination(cond);
    if (!dest || dest->has_sequence) return;
    bool uses_block = !block_vars_.empty() &&
                      UsesVar(cond, [&](const VarNode* x) { return block_vars_.count(x) > 0; });
    VarSet lets;
    for (const VarNode* v : VarsOf(cond)) {
      auto it = let_lets_.find(v);
      if (it == let_lets_.end()) continue;
      lets.insert(v);
      lets.insert(it->second.begin(), it->second.end());
    }
    dest->conds.push_back({cond, source, uses_block, std::move(lets), with_else});
  }

  void Binding(const Var& var, const Expr& value, int source) {
    // A binding outside every loop already holds wherever a condition may go: no dependency.
    if (active_.empty()) return;
    // A binding with side effects stays where it is (as, then, does a condition using it).
    LoopInfo* dest = IsPure(value) ? Destination(value) : nullptr;
    if (dest && !dest->has_sequence) {
      dest->lets.push_back({var, value, source});
    }
    VarSet loops, lets;
    for (const VarNode* v : VarsOf(value)) {
      if (loop_vars_.count(v)) {
        loops.insert(v);
      } else if (auto it = let_loops_.find(v); it != let_loops_.end()) {
        loops.insert(it->second.begin(), it->second.end());
      }
      if (auto it = let_lets_.find(v); it != let_lets_.end()) {
        lets.insert(v);
        lets.insert(it->second.begin(), it->second.end());
      }
    }
    let_loops_[var.get()] = std::move(loops);
    let_lets_[var.get()] = std::move(lets);
  }

  HoistConfig cfg_;
  std::vector<LoopInfo> active_;
  VarSet loop_vars_, block_vars_;
  std::unordered_map<const VarNode*, VarSet> let_loops_;  // let var -> loop vars it depends on
  std::unordered_map<const VarNode*, VarSet> let_lets_;   // let var -> let vars it depends on
};

// Second walk: wrap each loop in what was hoisted to it; drop the moved bindings.
class Hoister : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;
  Hoister(std::vector<LoopInfo> loops, const HoistConfig& cfg) : cfg_(cfg) {
    // Unlike TVM, a condition moves only when every binding it needs moves with it (to a loop
    // at or outside the condition's place): a condition is never left above the definition of
    // a variable it uses.
    VarSet movable;
    for (const LoopInfo& info : loops) {
      for (const LetInfo& let : info.lets) {
        movable.insert(let.var.get());
        if (cfg.Let(let.source)) moved_.insert(let.var.get());
      }
    }
    auto all_in = [](const VarSet& vars, const VarSet& set) {
      for (const VarNode* v : vars) {
        if (!set.count(v)) return false;
      }
      return true;
    };
    if (cfg.Let(kRequiredByCondition)) {
      for (LoopInfo& info : loops) {
        for (CondInfo& c : info.conds) {
          if (c.FlagsAllow(cfg) && all_in(c.required_lets, movable)) {
            moved_.insert(c.required_lets.begin(), c.required_lets.end());
          }
        }
      }
    }
    for (LoopInfo& info : loops) {
      for (CondInfo& c : info.conds)
        c.enabled = c.FlagsAllow(cfg) && all_in(c.required_lets, moved_);
      const StmtNode* def = info.def;
      info_.emplace(def, std::move(info));
    }
  }

  Stmt VisitStmt_(const ForNode* op) override { return Wrap(op, StmtMutator::VisitStmt_(op)); }
  Stmt VisitStmt_(const AttrStmtNode* op) override {
    return Wrap(op, StmtExprMutator::VisitStmt_(op));
  }
  Stmt VisitStmt_(const LetStmtNode* op) override {
    if (moved_.count(op->var.get())) return VisitStmt(op->body);
    return StmtExprMutator::VisitStmt_(op);
  }
  Expr VisitExpr_(const LetNode* op) override {
    if (moved_.count(op->var.get())) return VisitExpr(op->body);
    return StmtExprMutator::VisitExpr_(op);
  }

 private:
  Stmt Wrap(const StmtNode* def, Stmt s) {
    auto it = info_.find(def);
    if (it == info_.end()) return s;
    const LoopInfo& info = it->second;
    for (auto c = info.conds.rbegin(); c != info.conds.rend(); ++c) {
      if (!c->enabled) continue;
      s = IfThenElseNode::Make(c->condition, s, c->with_else ? s : Stmt(), s->span);
    }
    for (auto l = info.lets.rbegin(); l != info.lets.rend(); ++l) {
      if (moved_.count(l->var.get())) s = LetStmtNode::Make(l->var, l->value, s, s->span);
    }
    return s;
  }

  HoistConfig cfg_;
  std::unordered_map<const StmtNode*, LoopInfo> info_;
  VarSet moved_;
};

Stmt HoistWith(const Stmt& body, const HoistConfig& cfg) {
  HoistCollector collector(cfg);
  collector.VisitStmt(body);
  return Hoister(std::move(collector.done), cfg).VisitStmt(body);
}

// The insertion step followed by the clean-up that turns the duplicated loops into the result.
// A module where nothing was hoisted is returned as it came (not re-simplified).
Pass WithCleanup(std::function<PrimFunc(PrimFunc, IRModule, const PassContext&)> insert,
                 const std::string& name) {
  Pass inserter = CreatePrimFuncPass(std::move(insert), 0, name + "Insert");
  Pass cleanup = Sequential({ConvertSSA(), Simplify(), RemoveNoOp()}, name + "Cleanup");
  return CreateModulePass(
      [inserter, cleanup](IRModule mod, const PassContext& ctx) {
        IRModule hoisted = inserter->fn(mod, ctx);
        return hoisted == mod ? mod : cleanup->fn(hoisted, ctx);
      },
      0, name);
}

PrimFunc HoistExpressionFunc(PrimFunc f, IRModule, const PassContext& ctx) {
  HoistConfig cfg;
  const char* k = "tir.HoistExpression";
  cfg.conditionals =
      static_cast<int>(ctx.GetRecordInt(k, "hoisted_conditionals", cfg.conditionals));
  cfg.let_bindings =
      static_cast<int>(ctx.GetRecordInt(k, "hoisted_let_bindings", cfg.let_bindings));
  Stmt body = HoistWith(f->body, cfg);
  return body == f->body ? f : f->WithBody(body);
}

// A thread launched again inside its own launch must keep its extent: the hoisting analysis
// gives each thread variable one range (TVM's analyzer refuses the second binding too).
class RelaunchChecker : public StmtVisitor {
 public:
  using StmtVisitor::VisitStmt_;
  void VisitStmt_(const AttrStmtNode* op) override {
    auto* iv = AsPtr<IterVarNode>(op->node);
    if (!iv || (op->attr_key != "thread_extent" && op->attr_key != "virtual_thread")) {
      StmtVisitor::VisitStmt_(op);
      return;
    }
    auto it = extents_.find(iv->var.get());
    auto now = AsConstInt(op->value);
    if (it != extents_.end() && now && *now != it->second) {
      TESSERA_THROW_KIND(op->span, ErrorKind::kValue)
          << "tir.HoistIfThenElse: thread " << iv->var->name << " (" << iv->thread_tag
          << ") is launched with extent " << *now << " inside its own launch with extent "
          << it->second << "; a thread keeps one extent in its scope";
    }
    bool fresh = it == extents_.end() && now;
    if (fresh) extents_[iv->var.get()] = *now;
    StmtVisitor::VisitStmt_(op);
    if (fresh) extents_.erase(iv->var.get());
  }

 private:
  std::unordered_map<const VarNode*, int64_t> extents_;
};

// TVM v0.23's HoistIfThenElse: if-statement conditions only (and, with the
// "support_block_scope_hoisting" option, those using thread variables); a function marked
// "tir.HoistIfThenElseExprWithBlock" = 1 hoists T.if_then_else conditions instead.
PrimFunc HoistIfThenElseFunc(PrimFunc f, IRModule, const PassContext& ctx) {
  HoistConfig cfg;
  cfg.let_bindings = 0;
  if (f->GetIntAttr("tir.HoistIfThenElseExprWithBlock", 0) == 1) {
    cfg.conditionals = kIfElseExpr | kUsingBlockVar;
  } else {
    const char* k = "tir.HoistIfThenElse";
    bool block = ctx.GetRecordBool(k, "support_block_scope_hoisting", false) ||
                 ctx.GetRecordBool(k, "support_block_scope_hosting", false);
    cfg.conditionals = kIfElseStmt | (block ? kUsingBlockVar : 0);
  }
  RelaunchChecker().VisitStmt(f->body);
  Stmt body = HoistWith(f->body, cfg);
  return body == f->body ? f : f->WithBody(body);
}

// The "basic" variant: if-statement conditions, never past a thread variable.
PrimFunc HoistIfThenElseBasicFunc(PrimFunc f, IRModule, const PassContext&) {
  HoistConfig cfg;
  cfg.conditionals = kIfElseStmt;
  cfg.let_bindings = 0;
  Stmt body = HoistWith(f->body, cfg);
  return body == f->body ? f : f->WithBody(body);
}

}  // namespace

Pass HoistIfThenElse() { return WithCleanup(HoistIfThenElseFunc, "tir.HoistIfThenElse"); }
TESSERA_REGISTER_PASS("tir.HoistIfThenElse", HoistIfThenElse);

Pass HoistIfThenElseBasic() {
  return WithCleanup(HoistIfThenElseBasicFunc, "tir.HoistIfThenElseBasic");
}
TESSERA_REGISTER_PASS("tir.HoistIfThenElseBasic", HoistIfThenElseBasic);

Pass HoistExpression() { return WithCleanup(HoistExpressionFunc, "tir.HoistExpression"); }
TESSERA_REGISTER_PASS("tir.HoistExpression", HoistExpression);

}  // namespace transform
}  // namespace tessera
