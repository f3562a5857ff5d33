// A visitor that knows where it is: tir.VerifyWellFormed and tir.VerifyBufferBounds report each
// problem at the innermost statement or expression around it that has a span.
#pragma once
#include "tessera/ir/functor.h"

namespace tessera {
namespace transform {

/*! \brief A StmtExprVisitor whose `span_` is, during a visit, the span of the innermost
 *  statement or expression being visited that has one (what it was before when none has); a
 *  variable does not count, its span being where it is defined rather than where it is used.
 *  Restored on the way out. */
class SpanTrackingVisitor : public StmtExprVisitor {
 public:
  void VisitStmt(const Stmt& s) override {
    Span saved = span_;
    if (s->span.defined()) span_ = s->span;
    StmtExprVisitor::VisitStmt(s);
    span_ = saved;
  }
  void VisitExpr(const Expr& e) override {
    Span saved = span_;
    if (e->span.defined() && !IsInstance<VarNode>(e.get())) span_ = e->span;
    StmtExprVisitor::VisitExpr(e);
    span_ = saved;
  }

 protected:
  Span span_;
};

}  // namespace transform
}  // namespace tessera
