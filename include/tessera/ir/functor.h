// Visitors and mutators over expressions and statements, dispatched by node kind.
#pragma once

#include <functional>
#include <utility>

#include "tessera/ir/buffer.h"
#include "tessera/ir/function.h"
#include "tessera/ir/stmt.h"
#include "tessera/support/error.h"
#include "tessera/support/stack.h"

namespace tessera {

/*! \brief Dispatch on the kind of an expression to VisitExpr_(const XNode*). */
template <class R>
class ExprFunctor {
 public:
  virtual ~ExprFunctor() = default;
  virtual R VisitExpr(const Expr& e) {
    TESSERA_ICHECK(e != nullptr) << "visiting a null expression";
    if (StackLow()) detail::StackExhausted(NodeKindName(e->kind));
    switch (e->kind) {
#define TESSERA_EXPR_DISPATCH(name) \
  case NodeKind::k##name:           \
    return VisitExpr_(static_cast<const name##Node*>(e.get()));
      TESSERA_EXPR_NODES(TESSERA_EXPR_DISPATCH)
#undef TESSERA_EXPR_DISPATCH
      default:
        break;
    }
    throw InternalError("ExprFunctor: not an expression kind");
  }

#define TESSERA_EXPR_VISIT_DECL(name) virtual R VisitExpr_(const name##Node* op) = 0;
  TESSERA_EXPR_NODES(TESSERA_EXPR_VISIT_DECL)
#undef TESSERA_EXPR_VISIT_DECL
};

/*! \brief Dispatch on the kind of a statement to VisitStmt_(const XNode*). */
template <class R>
class StmtFunctor {
 public:
  virtual ~StmtFunctor() = default;
  virtual R VisitStmt(const Stmt& s) {
    TESSERA_ICHECK(s != nullptr) << "visiting a null statement";
    if (StackLow()) detail::StackExhausted(NodeKindName(s->kind));
    switch (s->kind) {
#define TESSERA_STMT_DISPATCH(name) \
  case NodeKind::k##name:           \
    return VisitStmt_(static_cast<const name##Node*>(s.get()));
      TESSERA_STMT_NODES(TESSERA_STMT_DISPATCH)
#undef TESSERA_STMT_DISPATCH
      default:
        break;
    }
    throw InternalError("StmtFunctor: not a statement kind");
  }

#define TESSERA_STMT_VISIT_DECL(name) virtual R VisitStmt_(const name##Node* op) = 0;
  TESSERA_STMT_NODES(TESSERA_STMT_VISIT_DECL)
#undef TESSERA_STMT_VISIT_DECL
};

/*! \brief Walks every sub-expression; override the cases of interest and call the base. */
class ExprVisitor : public ExprFunctor<void> {
 public:
#define TESSERA_EXPR_VISITOR_DECL(name) void VisitExpr_(const name##Node* op) override;
  TESSERA_EXPR_NODES(TESSERA_EXPR_VISITOR_DECL)
#undef TESSERA_EXPR_VISITOR_DECL
};

/*! \brief Rebuilds expressions bottom-up; returns the same node when no child changed. */
class ExprMutator : public ExprFunctor<Expr> {
 public:
#define TESSERA_EXPR_MUTATOR_DECL(name) Expr VisitExpr_(const name##Node* op) override;
  TESSERA_EXPR_NODES(TESSERA_EXPR_MUTATOR_DECL)
#undef TESSERA_EXPR_MUTATOR_DECL
};

/*! \brief Walks every sub-statement; expressions go to VisitExpr (a no-op here). */
class StmtVisitor : public StmtFunctor<void> {
 public:
  virtual void VisitExpr(const Expr& e) {}
#define TESSERA_STMT_VISITOR_DECL(name) void VisitStmt_(const name##Node* op) override;
  TESSERA_STMT_NODES(TESSERA_STMT_VISITOR_DECL)
#undef TESSERA_STMT_VISITOR_DECL
};

/*! \brief Rebuilds statements bottom-up; returns the same node when nothing changed. */
class StmtMutator : public StmtFunctor<Stmt> {
 public:
  virtual Expr VisitExpr(const Expr& e) { return e; }
#define TESSERA_STMT_MUTATOR_DECL(name) Stmt VisitStmt_(const name##Node* op) override;
  TESSERA_STMT_NODES(TESSERA_STMT_MUTATOR_DECL)
#undef TESSERA_STMT_MUTATOR_DECL
};

/*! \brief Visits statements and the expressions inside them. */
class StmtExprVisitor : public StmtVisitor, public ExprVisitor {
 public:
  using ExprVisitor::VisitExpr_;
  using StmtVisitor::VisitStmt;
  using StmtVisitor::VisitStmt_;
  void VisitExpr(const Expr& e) override { ExprVisitor::VisitExpr(e); }
};

/*! \brief Mutates statements and the expressions inside them. */
class StmtExprMutator : public StmtMutator, public ExprMutator {
 public:
  using ExprMutator::VisitExpr_;
  using StmtMutator::VisitStmt;
  using StmtMutator::VisitStmt_;
  Expr VisitExpr(const Expr& e) override { return ExprMutator::VisitExpr(e); }
};

/*! \brief Calls `f` on every expression and statement node, children first. */
void PostOrderVisit(const Stmt& stmt, const std::function<void(const ObjectRef&)>& f);
void PostOrderVisit(const Expr& expr, const std::function<void(const ObjectRef&)>& f);

}  // namespace tessera
