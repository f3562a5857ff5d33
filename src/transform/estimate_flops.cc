// EstimateTIRFlops: arithmetic operations executed by a statement, per dtype, loops multiplied.
#include <algorithm>
#include <map>

#include "tessera/arith/analyzer.h"
#include "tessera/ir/functor.h"
#include "tessera/transform/analysis.h"

namespace tessera {
namespace transform {
namespace {

// Operation counts by result dtype: the larger branch of a condition is taken dtype by dtype.
struct Counts {
  std::map<std::string, double> by_dtype;
  Counts& operator+=(const Counts& o) {
    for (const auto& [t, n] : o.by_dtype) by_dtype[t] += n;
    return *this;
  }
  Counts& operator*=(double k) {
    for (auto& [t, n] : by_dtype) n *= k;
    return *this;
  }
  Counts& MaxWith(const Counts& o) {
    for (const auto& [t, n] : o.by_dtype) by_dtype[t] = std::max(by_dtype[t], n);
    return *this;
  }
  double Total() const {
    double sum = 0;
    for (const auto& [t, n] : by_dtype) sum += n;
    return sum;
  }
};

class FlopCounter : public ExprFunctor<Counts>, public StmtFunctor<Counts> {
 public:
  Counts Count(const Expr& e) { return ExprFunctor<Counts>::VisitExpr(e); }
  Counts Count(const Stmt& s) { return StmtFunctor<Counts>::VisitStmt(s); }

 private:
  template <class T>
  Counts Binary(const T* op) {
    Counts c = Count(op->a);
    c += Count(op->b);
    c.by_dtype[op->dtype.ToString()] += 1;
    return c;
  }
  // Comparisons are free (and so are their operands); boolean connectives cost their operands.
  Counts VisitExpr_(const AddNode* op) override { return Binary(op); }
  Counts VisitExpr_(const SubNode* op) override { return Binary(op); }
  Counts VisitExpr_(const MulNode* op) override { return Binary(op); }
  Counts VisitExpr_(const DivNode* op) override { return Binary(op); }
  Counts VisitExpr_(const ModNode* op) override { return Binary(op); }
  Counts VisitExpr_(const FloorDivNode* op) override { return Binary(op); }
  Counts VisitExpr_(const FloorModNode* op) override { return Binary(op); }
  Counts VisitExpr_(const MinNode* op) override { return Binary(op); }
  Counts VisitExpr_(const MaxNode* op) override { return Binary(op); }
  Counts VisitExpr_(const EQNode*) override { return {}; }
  Counts VisitExpr_(const NENode*) override { return {}; }
  Counts VisitExpr_(const LTNode*) override { return {}; }
  Counts VisitExpr_(const LENode*) override { return {}; }
  Counts VisitExpr_(const GTNode*) override { return {}; }
  Counts VisitExpr_(const GENode*) override { return {}; }
  Counts VisitExpr_(const AndNode* op) override {
    Counts c = Count(op->a);
    c += Count(op->b);
    return c;
  }
  Counts VisitExpr_(const OrNode* op) override {
    Counts c = Count(op->a);
    c += Count(op->b);
    return c;
  }
  Counts VisitExpr_(const NotNode* op) override { return Count(op->a); }
  Counts VisitExpr_(const SelectNode* op) override {
    Counts c = Count(op->condition);
    c += Count(op->true_value).MaxWith(Count(op->false_value));
    return c;
  }
  Counts VisitExpr_(const LetNode* op) override {
    Counts c = Count(op->value);
    c += Count(op->body);
    return c;
  }
  // A call costs its arguments; the loads' indices are address arithmetic, not counted.
  Counts VisitExpr_(const CallNode* op) override {
    Counts c;
    for (const Expr& a : op->args) c += Count(a);
    return c;
  }
  Counts VisitExpr_(const CastNode* op) override { return Count(op->value); }
  Counts VisitExpr_(const BufferLoadNode*) override { return {}; }
  Counts VisitExpr_(const IntImmNode*) override { return {}; }
  Counts VisitExpr_(const FloatImmNode*) override { return {}; }
  Counts VisitExpr_(const StringImmNode*) override { return {}; }
  Counts VisitExpr_(const VarNode*) override { return {}; }
  Counts VisitExpr_(const SizeVarNode*) override { return {}; }
  Counts VisitExpr_(const RampNode*) override { return {}; }
  Counts VisitExpr_(const BroadcastNode* op) override { return Count(op->value); }
  Counts VisitExpr_(const ShuffleNode*) override { return {}; }

  Counts VisitStmt_(const LetStmtNode* op) override {
    Counts c = Count(op->value);
    c += Count(op->body);
    return c;
  }
  Counts VisitStmt_(const AttrStmtNode* op) override {
    Counts c = Count(op->body);
    if (op->value) c += Count(op->value);
    return c;
  }
  Counts VisitStmt_(const AssertStmtNode* op) override {
    Counts c = Count(op->condition);
    c += Count(op->body);
    return c;
  }
  Counts VisitStmt_(const BufferStoreNode* op) override { return Count(op->value); }
  Counts VisitStmt_(const AllocateNode* op) override { return Count(op->body); }
  Counts VisitStmt_(const AllocateConstNode* op) override { return Count(op->body); }
  Counts VisitStmt_(const DeclBufferNode* op) override { return Count(op->body); }
  // A loop multiplies its body by the most iterations it may run (1 when unbounded).
  Counts VisitStmt_(const ForNode* op) override {
    analyzer_.Bind(op->loop_var, RangeNode::Make(op->min, op->extent));
    int64_t most = analyzer_.GetConstIntBound(op->extent).max_value;
    Counts c = Count(op->body);
    c *= most == arith::ConstIntBound::kPosInf ? 1.0 : static_cast<double>(most);
    return c;
  }
  Counts VisitStmt_(const WhileNode* op) override {
    Counts c = Count(op->condition);
    c += Count(op->body);
    return c;
  }
  Counts VisitStmt_(const IfThenElseNode* op) override {
    Counts c = Count(op->condition);
    Counts then_case = Count(op->then_case);
    if (op->else_case) then_case.MaxWith(Count(op->else_case));
    c += then_case;
    return c;
  }
  Counts VisitStmt_(const SeqStmtNode* op) override {
    Counts c;
    for (const Stmt& s : op->seq) c += Count(s);
    return c;
  }
  Counts VisitStmt_(const EvaluateNode*) override { return {}; }
  Counts VisitStmt_(const BlockNode* op) override {
    Counts c;
    if (op->init) c += Count(op->init);
    c += Count(op->body);
    return c;
  }
  Counts VisitStmt_(const BlockRealizeNode* op) override { return Count(op->block); }
  Counts VisitStmt_(const BufferRealizeNode* op) override { return Count(op->body); }

  arith::Analyzer analyzer_;
};

}  // namespace

double EstimateTIRFlops(const Stmt& stmt) { return FlopCounter().Count(stmt).Total(); }

double EstimateTIRFlops(const IRModule& mod) {
  double given = 0;
  Counts counted;
  FlopCounter counter;
  for (const auto& [gvar, func] : mod->functions) {
    auto attr = func->attrs.find("estimated_flops");
    if (attr != func->attrs.end()) {
      if (auto* n = AsPtr<IntImmNode>(attr->second)) {
        given += static_cast<double>(n->value);
        continue;
      }
    }
    counted += counter.Count(func->body);
  }
  return counted.Total() + given;
}

}  // namespace transform
}  // namespace tessera
