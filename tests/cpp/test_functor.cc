// Visitors and mutators: every child is reached, and mutators rebuild only the changed path.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "tessera/ir/buffer.h"
#include "tessera/ir/expr.h"
#include "tessera/ir/function.h"
#include "tessera/ir/functor.h"
#include "tessera/ir/stmt.h"
#include "tessera/ir/structural_equal.h"

namespace tessera {
namespace {

const DataType kI32 = DataType::Int(32);
const DataType kF32 = DataType::Float(32);

// Counts nodes by kind; every node passes through VisitExpr.
class KindCounter : public ExprVisitor {
 public:
  void VisitExpr(const Expr& e) override {
    ++counts[e->kind];
    ++total;
    ExprVisitor::VisitExpr(e);
  }
  std::map<NodeKind, int> counts;
  int total = 0;
};

// Collects the names of the variables met, in visiting order.
class VarCollector : public StmtExprVisitor {
 public:
  void VisitExpr_(const VarNode* op) override { names.push_back(op->name); }
  std::vector<std::string> names;
};

// Replaces one variable by an expression everywhere.
class ReplaceVar : public StmtExprMutator {
 public:
  ReplaceVar(Var from, Expr to) : from_(std::move(from)), to_(std::move(to)) {}
  Expr VisitExpr_(const VarNode* op) override {
    if (op == from_.get()) return to_;
    return StmtExprMutator::VisitExpr_(op);
  }

 private:
  Var from_;
  Expr to_;
};

// A fixture holding one expression and one statement that use every node kind.
class FunctorTest : public ::testing::Test {
 protected:
  FunctorTest() {
    buf = BufferNode::Decl("A", kF32, {Int32(64)});
    x = VarNode::Make("x", kI32);
    y = VarNode::Make("y", kI32);
    t = VarNode::Make("t", kI32);
    f = VarNode::Make("f", kF32);
    // let t = x * 2 in A[Ramp(t, 1, 4)] (predicated) + Broadcast(cast(f32, min(x, y)), 4), ...
    Expr ramp = RampNode::Make(t, Int32(1), 4);
    Expr load = BufferLoadNode::Make(buf, {ramp}, BroadcastNode::Make(LTNode::Make(t, y), 4));
    Expr bcast = BroadcastNode::Make(CastNode::Make(kF32, MinNode::Make(x, y)), 4);
    Expr shuffled = ShuffleNode::Make({AddNode::Make(load, bcast)}, {Int32(3), Int32(0)});
    Expr sel = SelectNode::Make(NotNode::Make(AndNode::Make(EQNode::Make(x, y), Bool(true))), f,
                                CallNode::Make(kF32, GlobalVarNode::Make("helper"), {f}));
    Expr body = AddNode::Make(ShuffleNode::Make({shuffled}, {Int32(0)}), sel);
    expr = LetNode::Make(t, MulNode::Make(x, Int32(2)), body);

    Var i = VarNode::Make("i", kI32);
    Var ptr = VarNode::MakePointer("scratch", kF32, "local");
    Stmt store = BufferStoreNode::Make(buf, FloatImmNode::Make(kF32, 0.5), {AddNode::Make(i, x)});
    Stmt loop = ForNode::Make(i, Int32(0), y, ForKind::kSerial,
                              SeqStmtNode::Make({store, EvaluateNode::Make(x)}));
    Stmt branch = IfThenElseNode::Make(LTNode::Make(x, y), loop, EvaluateNode::Make(y));
    Stmt guarded =
        AssertStmtNode::Make(GTNode::Make(y, Int32(0)), StringImmNode::Make("y > 0"), branch);
    Stmt attr = AttrStmtNode::Make(x, "pragma", Int32(1), guarded);
    Stmt alloc = AllocateNode::Make(ptr, kF32, {Int32(16)}, nullptr, attr);
    Stmt decl = DeclBufferNode::Make(buf, alloc);
    Stmt wh = WhileNode::Make(LTNode::Make(t, Int32(10)), EvaluateNode::Make(t));
    stmt = LetStmtNode::Make(t, AddNode::Make(x, y), SeqStmtNode::Make({decl, wh}));
  }

  Buffer buf;
  Var x, y, t, f;
  Expr expr;
  Stmt stmt;
};

TEST_F(FunctorTest, ExprVisitorCountsNodes) {
  // (x + 1) * (y - x): Mul, Add, Sub, three Vars, one IntImm.
  KindCounter counter;
  counter.VisitExpr(MulNode::Make(AddNode::Make(x, Int32(1)), SubNode::Make(y, x)));
  EXPECT_EQ(counter.total, 7);
  EXPECT_EQ(counter.counts[NodeKind::kVar], 3);
  EXPECT_EQ(counter.counts[NodeKind::kIntImm], 1);
  EXPECT_EQ(counter.counts[NodeKind::kMul], 1);
  EXPECT_EQ(counter.counts[NodeKind::kAdd], 1);
  EXPECT_EQ(counter.counts[NodeKind::kSub], 1);
}

TEST_F(FunctorTest, ExprVisitorReachesEveryChild) {
  KindCounter counter;
  counter.VisitExpr(expr);
  for (NodeKind k :
       {NodeKind::kLet, NodeKind::kMul, NodeKind::kRamp, NodeKind::kBufferLoad,
        NodeKind::kBroadcast, NodeKind::kLT, NodeKind::kCast, NodeKind::kMin, NodeKind::kShuffle,
        NodeKind::kSelect, NodeKind::kNot, NodeKind::kAnd, NodeKind::kEQ, NodeKind::kCall}) {
    EXPECT_GE(counter.counts[k], 1) << NodeKindName(k);
  }
  EXPECT_EQ(counter.counts[NodeKind::kShuffle], 2);
  // Let visits its variable too: t (binding), t (ramp base), t (predicate).
  VarCollector vars;
  vars.VisitExpr(expr);
  EXPECT_EQ(std::count(vars.names.begin(), vars.names.end(), "t"), 3);
  EXPECT_EQ(std::count(vars.names.begin(), vars.names.end(), "f"), 2);
}

TEST_F(FunctorTest, StmtExprVisitorReachesExpressionsInEveryStatement) {
  VarCollector vars;
  vars.VisitStmt(stmt);
  std::map<std::string, int> seen;
  for (const std::string& n : vars.names) ++seen[n];
  // x: LetStmt value, If condition, store index, Evaluate(x); AttrStmt.node is not visited.
  EXPECT_EQ(seen["x"], 4);
  // y: LetStmt value, assert, if condition, loop extent, else branch.
  EXPECT_EQ(seen["y"], 5);
  EXPECT_EQ(seen["i"], 1);  // the loop variable itself is not an expression of the For
  EXPECT_EQ(seen["t"], 2);  // while condition and body
}

TEST_F(FunctorTest, IdentityExprMutatorKeepsTheSameObject) {
  ExprMutator identity;
  EXPECT_EQ(identity.VisitExpr(expr), expr);
  for (const Expr& e : {Expr(x), Int32(3), Expr(StringImmNode::Make("s")),
                        Expr(SizeVarNode::Make("n", kI32)), Expr(FloatImmNode::Make(kF32, 1.0))}) {
    EXPECT_EQ(identity.VisitExpr(e), e);
  }
}

TEST_F(FunctorTest, IdentityStmtExprMutatorKeepsTheSameObject) {
  StmtExprMutator identity;
  EXPECT_EQ(identity.VisitStmt(stmt), stmt);
  EXPECT_EQ(identity.VisitExpr(expr), expr);
  // A plain StmtMutator leaves expressions alone and returns the same statements too.
  StmtMutator stmt_only;
  EXPECT_EQ(stmt_only.VisitStmt(stmt), stmt);

  Var tx = VarNode::Make("tx", kI32);
  IterVar iv = IterVarNode::Make(RangeNode::Make(Int32(0), Int32(32)), tx,
                                 IterVarType::kThreadIndex, "threadIdx.x");
  Stmt bound = ForNode::Make(tx, Int32(0), Int32(32), ForKind::kThreadBinding,
                             EvaluateNode::Make(tx), iv, {{"note", Int32(1)}});
  EXPECT_EQ(identity.VisitStmt(bound), bound);
}

TEST_F(FunctorTest, ReplacingAVariableRebuildsOnlyTheChangedPath) {
  Var z = VarNode::Make("z", kI32);
  Expr lhs = MulNode::Make(x, Int32(3));
  Expr rhs = SubNode::Make(y, Int32(4));
  Expr e = AddNode::Make(lhs, rhs);
  Expr out = ReplaceVar(y, z).VisitExpr(e);
  ASSERT_NE(out, e);
  auto* add = AsPtr<AddNode>(out);
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->a, lhs);  // untouched sibling keeps its identity
  auto* sub = AsPtr<SubNode>(add->b);
  ASSERT_NE(sub, nullptr);
  EXPECT_EQ(sub->a, z);
  EXPECT_EQ(sub->b, AsPtr<SubNode>(rhs)->b);  // the constant is shared, not copied
  // The original is unchanged.
  EXPECT_EQ(AsPtr<SubNode>(rhs)->a, y);
}

TEST_F(FunctorTest, ReplacingInStatementsKeepsUnchangedSiblings) {
  Var z = VarNode::Make("z", kI32);
  Stmt uses_x = EvaluateNode::Make(AddNode::Make(x, Int32(1)));
  Stmt uses_y = EvaluateNode::Make(AddNode::Make(y, Int32(1)));
  Stmt seq = SeqStmtNode::Make({uses_x, uses_y});
  Stmt loop = ForNode::Make(VarNode::Make("i", kI32), Int32(0), Int32(8), ForKind::kSerial, seq);

  Stmt out = ReplaceVar(x, z).VisitStmt(loop);
  ASSERT_NE(out, loop);
  auto* new_loop = AsPtr<ForNode>(out);
  ASSERT_NE(new_loop, nullptr);
  EXPECT_EQ(new_loop->loop_var, AsPtr<ForNode>(loop)->loop_var);
  EXPECT_EQ(new_loop->min, AsPtr<ForNode>(loop)->min);
  auto* new_seq = AsPtr<SeqStmtNode>(new_loop->body);
  ASSERT_NE(new_seq, nullptr);
  EXPECT_NE(new_seq->seq[0], uses_x);
  EXPECT_EQ(new_seq->seq[1], uses_y);  // the sibling that does not use x is shared

  Stmt expected =
      ForNode::Make(AsPtr<ForNode>(loop)->loop_var, Int32(0), Int32(8), ForKind::kSerial,
                    SeqStmtNode::Make({EvaluateNode::Make(AddNode::Make(z, Int32(1))), uses_y}));
  EXPECT_TRUE(StructuralEqual(out, expected)) << StructuralEqualFailure(out, expected);

  // Replacing a variable that does not occur returns the very same tree.
  EXPECT_EQ(ReplaceVar(VarNode::Make("w", kI32), z).VisitStmt(loop), loop);
  EXPECT_EQ(ReplaceVar(VarNode::Make("w", kI32), z).VisitStmt(stmt), stmt);
}

TEST_F(FunctorTest, ReplacingDeepInsideTheFixtureChangesTheRoot) {
  Var z = VarNode::Make("z", kI32);
  Stmt out = ReplaceVar(y, z).VisitStmt(stmt);
  EXPECT_NE(out, stmt);
  VarCollector vars;
  vars.VisitStmt(out);
  EXPECT_EQ(std::count(vars.names.begin(), vars.names.end(), "y"), 0);
  EXPECT_EQ(std::count(vars.names.begin(), vars.names.end(), "z"), 5);
  // The while loop after the DeclBuffer does not mention y and is shared.
  auto* let = AsPtr<LetStmtNode>(out);
  ASSERT_NE(let, nullptr);
  EXPECT_EQ(AsPtr<SeqStmtNode>(let->body)->seq[1],
            AsPtr<SeqStmtNode>(AsPtr<LetStmtNode>(stmt)->body)->seq[1]);
}

TEST_F(FunctorTest, MutatorSubclassRewritesAStatementKind) {
  // Drops every Evaluate of a bare variable (the result is flattened by SeqStmt).
  class DropEvaluateVar : public StmtExprMutator {
   public:
    Stmt VisitStmt_(const SeqStmtNode* op) override {
      std::vector<Stmt> kept;
      for (const Stmt& s : op->seq) {
        auto* ev = AsPtr<EvaluateNode>(s);
        if (ev != nullptr && IsInstance<VarNode>(ev->value.get())) continue;
        kept.push_back(VisitStmt(s));
      }
      if (kept.size() == op->seq.size()) return StmtExprMutator::VisitStmt_(op);
      return SeqStmtNode::Flatten(kept, op->span);
    }
  };
  Stmt store = BufferStoreNode::Make(buf, FloatImmNode::Make(kF32, 1.0), {x});
  Stmt seq = SeqStmtNode::Make({store, EvaluateNode::Make(y)});
  EXPECT_EQ(DropEvaluateVar().VisitStmt(seq), store);
}

TEST_F(FunctorTest, PostOrderVisitVisitsChildrenFirst) {
  Stmt s = EvaluateNode::Make(AddNode::Make(x, Int32(1)));
  std::vector<NodeKind> order;
  PostOrderVisit(s, [&](const ObjectRef& n) { order.push_back(n->kind); });
  EXPECT_EQ(order, (std::vector<NodeKind>{NodeKind::kVar, NodeKind::kIntImm, NodeKind::kAdd,
                                          NodeKind::kEvaluate}));

  Stmt seq = SeqStmtNode::Make(
      {EvaluateNode::Make(x), IfThenElseNode::Make(Bool(true), EvaluateNode::Make(y))});
  std::vector<std::string> seen;
  PostOrderVisit(seq, [&](const ObjectRef& n) {
    if (auto* v = AsPtr<VarNode>(n)) {
      seen.push_back(v->name);
    } else {
      seen.push_back(NodeKindName(n->kind));
    }
  });
  EXPECT_EQ(seen, (std::vector<std::string>{"x", "Evaluate", "IntImm", "y", "Evaluate",
                                            "IfThenElse", "SeqStmt"}));

  std::vector<NodeKind> expr_order;
  PostOrderVisit(Expr(NotNode::Make(LTNode::Make(x, y))),
                 [&](const ObjectRef& n) { expr_order.push_back(n->kind); });
  EXPECT_EQ(expr_order,
            (std::vector<NodeKind>{NodeKind::kVar, NodeKind::kVar, NodeKind::kLT, NodeKind::kNot}));
}

TEST_F(FunctorTest, PostOrderVisitCountsEveryNodeOfTheFixture) {
  int exprs = 0, stmts = 0;
  PostOrderVisit(stmt, [&](const ObjectRef& n) {
    if (IsExprKind(n->kind)) ++exprs;
    if (IsStmtKind(n->kind)) ++stmts;
  });
  // LetStmt, Seq, DeclBuffer, Allocate, AttrStmt, Assert, If, For, Seq, Store, Evaluate x3, While.
  EXPECT_EQ(stmts, 14);
  EXPECT_GT(exprs, 20);
}

}  // namespace
}  // namespace tessera
