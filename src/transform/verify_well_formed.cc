// VerifyWellFormed: variables defined once and used in scope; blocks use their own iterators.
#include <unordered_map>
#include <unordered_set>

#include "span_tracking.h"
#include "tessera/ir/functor.h"
#include "tessera/transform/analysis.h"

namespace tessera {
namespace transform {
namespace {

enum class DefKind { kOther, kLoop, kBlockIter, kThread };

struct Definition {
  DefKind kind;
  const BlockNode* block;  // for block iterators
};

// Every binding site of the function, found before the scoped walk so that a use can be told
// apart from a free variable even when it comes first in program order.
class DefinitionCollector : public StmtExprVisitor {
 public:
  using StmtExprVisitor::VisitExpr_;
  using StmtExprVisitor::VisitStmt_;
  std::unordered_map<const VarNode*, Definition> defs;

  void VisitExpr_(const LetNode* op) override {
    defs.emplace(op->var.get(), Definition{DefKind::kOther, nullptr});
    StmtExprVisitor::VisitExpr_(op);
  }
  void VisitStmt_(const LetStmtNode* op) override {
    defs.emplace(op->var.get(), Definition{DefKind::kOther, nullptr});
    StmtExprVisitor::VisitStmt_(op);
  }
  void VisitStmt_(const AllocateNode* op) override {
    defs.emplace(op->buffer_var.get(), Definition{DefKind::kOther, nullptr});
    StmtExprVisitor::VisitStmt_(op);
  }
  void VisitStmt_(const AllocateConstNode* op) override {
    defs.emplace(op->buffer_var.get(), Definition{DefKind::kOther, nullptr});
    StmtExprVisitor::VisitStmt_(op);
  }
  void VisitStmt_(const ForNode* op) override {
    defs.emplace(op->loop_var.get(), Definition{DefKind::kLoop, nullptr});
    StmtExprVisitor::VisitStmt_(op);
  }
  void VisitStmt_(const AttrStmtNode* op) override {
    if (auto* iv = AsPtr<IterVarNode>(op->node)) {
      defs.emplace(iv->var.get(), Definition{DefKind::kThread, nullptr});
    }
    StmtExprVisitor::VisitStmt_(op);
  }
  void VisitStmt_(const BlockNode* op) override {
    for (const IterVar& iv : op->iter_vars) {
      defs.emplace(iv->var.get(), Definition{DefKind::kBlockIter, op});
    }
    StmtExprVisitor::VisitStmt_(op);
  }
};

class Checker : public SpanTrackingVisitor {
 public:
  using StmtExprVisitor::VisitExpr_;
  using StmtExprVisitor::VisitStmt_;

  explicit Checker(const PrimFuncNode* func) {
    DefinitionCollector collector;
    collector.VisitStmt(func->body);
    defs_ = std::move(collector.defs);
    span_ = func->span;
    for (const Var& p : func->params) Define(p.get(), func->span);
  }

  std::vector<WellFormedError> errors;

  void VisitExpr_(const VarNode* op) override { Use(op); }
  void VisitExpr_(const SizeVarNode* op) override { Use(op); }

  void VisitExpr_(const LetNode* op) override {
    VisitExpr(op->value);
    Define(op->var.get(), op->span);
    VisitExpr(op->body);
    Undefine(op->var.get());
  }
  void VisitStmt_(const LetStmtNode* op) override {
    VisitExpr(op->value);
    Define(op->var.get(), op->span);
    VisitStmt(op->body);
    Undefine(op->var.get());
  }
  void VisitStmt_(const AllocateNode* op) override {
    for (const Expr& e : op->extents) VisitExpr(e);
    VisitExpr(op->condition);
    Define(op->buffer_var.get(), op->span);
    VisitStmt(op->body);
    Undefine(op->buffer_var.get());
  }
  void VisitStmt_(const AllocateConstNode* op) override {
    for (const Expr& e : op->extents) VisitExpr(e);
    Define(op->buffer_var.get(), op->span);
    VisitStmt(op->body);
    Undefine(op->buffer_var.get());
  }
  void VisitStmt_(const ForNode* op) override {
    VisitExpr(op->min);
    VisitExpr(op->extent);
    Define(op->loop_var.get(), op->span);
    VisitStmt(op->body);
    Undefine(op->loop_var.get());
  }
  void VisitStmt_(const AttrStmtNode* op) override {
    auto* iv = AsPtr<IterVarNode>(op->node);
    // An environment thread may be launched in several places: each launch binds it anew.
    if (iv) in_scope_.insert(iv->var.get());
    VisitExpr(op->value);
    VisitStmt(op->body);
    if (iv) in_scope_.erase(iv->var.get());
  }
  void VisitStmt_(const BlockRealizeNode* op) override {
    for (const Expr& v : op->iter_values) VisitExpr(v);
    VisitExpr(op->predicate);
    VisitStmt(op->block);
  }
  void VisitStmt_(const BlockNode* op) override {
    for (const IterVar& iv : op->iter_vars) {
      VisitExpr(iv->dom->min);
      VisitExpr(iv->dom->extent);
    }
    for (const IterVar& iv : op->iter_vars) Define(iv->var.get(), op->span);
    // Inside a block with iterators, the loops outside it are out of reach.
    std::unordered_set<const VarNode*> outer_loops;
    if (!op->iter_vars.empty()) {
      for (const VarNode* v : in_scope_) {
        auto d = defs_.find(v);
        if (d != defs_.end() && d->second.kind == DefKind::kLoop) outer_loops.insert(v);
      }
    }
    blocks_.push_back({op, std::move(outer_loops)});
    // The body first: a bad use there has the most precise location.
    if (op->init) VisitStmt(op->init);
    VisitStmt(op->body);
    auto visit_region = [this](const BufferRegion& r) {
      for (const Range& range : r->region) {
        VisitExpr(range->min);
        VisitExpr(range->extent);
      }
    };
    for (const BufferRegion& r : op->reads) visit_region(r);
    for (const BufferRegion& r : op->writes) visit_region(r);
    for (const MatchBufferRegion& m : op->match_buffers) visit_region(m->source);
    blocks_.pop_back();
    for (const IterVar& iv : op->iter_vars) Undefine(iv->var.get());
  }

 private:
  struct OpenBlock {
    const BlockNode* block;
    std::unordered_set<const VarNode*> outer_loops;
  };

  void Error(const std::string& message, const std::string& detail = "") {
    errors.push_back({message, span_, detail});
  }

  void Define(const VarNode* v, const Span& span) {
    if (!defined_once_.insert(v).second) {
      const Span& first = first_span_[v];
      const Span& again = span.defined() ? span : span_;
      const bool nested = in_scope_.count(v) != 0;
      Error("Variable " + v->name + " is defined more than once",
            "the function is not well formed: variable " + v->name +
                (nested ? " is bound again inside its own scope (bound first at "
                        : " is bound in two places (bound first at ") +
                first.ToString() + (nested ? ", bound again inside at " : ", bound again after at ") +
                again.ToString() + ")");
    } else {
      first_span_[v] = span.defined() ? span : span_;
    }
    in_scope_.insert(v);
  }

  void Undefine(const VarNode* v) { in_scope_.erase(v); }

  void Use(const VarNode* v) {
    if (!blocks_.empty() && blocks_.back().outer_loops.count(v)) {
      Error("Variable " + v->name +
            " is a loop variable of an enclosing loop and is used inside block \"" +
            blocks_.back().block->name_hint + "\", which must use its own iterators instead");
      return;
    }
    if (in_scope_.count(v)) return;
    auto d = defs_.find(v);
    if (d == defs_.end()) return;  // a free (symbolic) variable
    if (d->second.kind == DefKind::kBlockIter) {
      Error("Block iterator " + v->name + " of block \"" + d->second.block->name_hint +
            "\" is used outside its block");
    } else {
      Error("Variable " + v->name + " is used outside the scope of its definition",
            "variable " + v->name + " is used at " + span_.ToString() +
                " after the statement that bound it has ended: it is out of scope there");
    }
  }

  std::unordered_map<const VarNode*, Definition> defs_;
  std::unordered_set<const VarNode*> in_scope_, defined_once_;
  std::unordered_map<const VarNode*, Span> first_span_;
  std::vector<OpenBlock> blocks_;
};

}  // namespace

std::vector<WellFormedError> VerifyWellFormed(const PrimFunc& func) {
  Checker checker(func.get());
  checker.VisitStmt(func->body);
  // Bounds are the build's check (tir.VerifyBufferBounds), as in TVM, whose parser accepts a
  // constant index past a buffer's shape (its tests write such IR); a constant divisor of zero
  // is refused here, as TVM's arithmetic refuses it when the expression is made.
  for (WellFormedError& e : VerifyConstantDivisors(func)) checker.errors.push_back(std::move(e));
  return std::move(checker.errors);
}

std::vector<WellFormedError> VerifyDefinitionsPerFunction(const IRModule& mod) {
  std::vector<WellFormedError> errors;
  std::unordered_map<const VarNode*, std::string> owner;
  for (const auto& [gvar, func] : mod->functions) {
    DefinitionCollector collector;
    collector.VisitStmt(func->body);
    std::vector<const VarNode*> defined;
    for (const Var& p : func->params) defined.push_back(p.get());
    for (const auto& [var, def] : collector.defs) defined.push_back(var);
    for (const VarNode* v : defined) {
      auto [it, fresh] = owner.emplace(v, gvar->name_hint);
      if (fresh || it->second == gvar->name_hint) continue;
      std::string message = "Variable " + v->name + " is defined by both function " + it->second +
                            " and function " + gvar->name_hint;
      errors.push_back({message, func->span,
                        "the module is not well formed: variable " + v->name +
                            " is bound by both function " + it->second + " and function " +
                            gvar->name_hint + "; each function must bind its own variables"});
    }
  }
  return errors;
}

}  // namespace transform
}  // namespace tessera
