// tir.CommonSubexprElimTIR from C++: where its bindings go (before an `if` both branches of
// which compute the value, inside the one branch that repeats it), its two options, and the
// integer `if` conditions TVM's IfThenElse accepts.
#include <gtest/gtest.h>

#include "tessera/ir/buffer.h"
#include "tessera/ir/expr.h"
#include "tessera/ir/function.h"
#include "tessera/ir/stmt.h"
#include "tessera/ir/structural_equal.h"
#include "tessera/support/error.h"
#include "tessera/transform/pass.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace {

const DataType kI32 = DataType::Int(32);

struct Program {
  Buffer b = BufferNode::Decl("B", kI32, {Int32(8)});
  Var x = VarNode::Make("x", kI32);
  Var y = VarNode::Make("y", kI32);
  Stmt Store(Expr value, int at) const { return BufferStoreNode::Make(b, value, {Int32(at)}); }
  IRModule Module(const Stmt& body) const {
    AttrMap attrs;
    attrs["global_symbol"] = StringImmNode::Make("main");
    return IRModuleNode::FromFunc(
        PrimFuncNode::Make({b->data, x, y}, {}, body, DataType::Void(), attrs), "main");
  }
};

Stmt Body(const IRModule& mod) { return mod->Lookup("main")->body; }

TEST(CommonSubexprElimTIR, SharedByBothBranchesBeforeTheIfRepeatedInOneInsideIt) {
  Program p;
  Expr sum = AddNode::Make(p.x, p.y), prod = MulNode::Make(p.x, p.y);
  Stmt then_case = SeqStmtNode::Make({p.Store(sum, 0), p.Store(prod, 1), p.Store(prod, 2)});
  Stmt body = IfThenElseNode::Make(LTNode::Make(p.x, p.y), then_case, p.Store(sum, 3));
  IRModule out = transform::CommonSubexprElimTIR()->fn(p.Module(body), {});

  auto* outer = AsPtr<LetStmtNode>(Body(out));
  ASSERT_NE(outer, nullptr);
  EXPECT_EQ(outer->var->name, "cse_v1");
  EXPECT_TRUE(StructuralEqual(outer->value, sum));
  auto* branch = AsPtr<IfThenElseNode>(outer->body);
  ASSERT_NE(branch, nullptr);
  auto* inner = AsPtr<LetStmtNode>(branch->then_case);
  ASSERT_NE(inner, nullptr);
  EXPECT_EQ(inner->var->name, "cse_v2");
  EXPECT_TRUE(StructuralEqual(inner->value, prod));
  Stmt expected_then =
      SeqStmtNode::Make({p.Store(outer->var, 0), p.Store(inner->var, 1), p.Store(inner->var, 2)});
  EXPECT_TRUE(StructuralEqual(inner->body, expected_then));
  EXPECT_TRUE(StructuralEqual(branch->else_case, p.Store(outer->var, 3)));
}

TEST(CommonSubexprElimTIR, OptionsEnableAndIdentifyEquivalentTerms) {
  Program p;
  // x * (y + 1) and y * x + x: one computation only when equivalent terms are identified.
  Expr factored = MulNode::Make(p.x, AddNode::Make(p.y, Int32(1)));
  Expr expanded = AddNode::Make(MulNode::Make(p.y, p.x), p.x);
  IRModule mod = p.Module(SeqStmtNode::Make({p.Store(factored, 0), p.Store(expanded, 1)}));

  EXPECT_EQ(transform::CommonSubexprElimTIR(true, false)->fn(mod, {}), mod);
  EXPECT_EQ(transform::CommonSubexprElimTIR(false, true)->fn(mod, {}), mod);
  IRModule out = transform::CommonSubexprElimTIR(true, true)->fn(mod, {});
  auto* let = AsPtr<LetStmtNode>(Body(out));
  ASSERT_NE(let, nullptr);
  EXPECT_TRUE(StructuralEqual(let->value, factored));  // the first one seen represents both
  EXPECT_TRUE(
      StructuralEqual(let->body, SeqStmtNode::Make({p.Store(let->var, 0), p.Store(let->var, 1)})));
}

TEST(CommonSubexprElimTIR, IfAndWhileTakeAnIntegerConditionNotAFloatOrVector) {
  Program p;
  Stmt store = p.Store(Int32(1), 0);
  EXPECT_EQ(IfThenElseNode::Make(p.x, store)->condition->dtype, kI32);
  EXPECT_EQ(WhileNode::Make(p.x, store)->condition->dtype, kI32);
  Var f = VarNode::Make("f", DataType::Float(32));
  Var v = VarNode::Make("v", DataType::Int(32, 4));
  EXPECT_THROW(IfThenElseNode::Make(f, store), Error);
  EXPECT_THROW(IfThenElseNode::Make(v, store), Error);
  EXPECT_THROW(WhileNode::Make(f, store), Error);
  // Select and AssertStmt keep TVM's bool.
  EXPECT_THROW(SelectNode::Make(p.x, Int32(1), Int32(2)), Error);
  EXPECT_THROW(AssertStmtNode::Make(p.x, StringImmNode::Make("no"), store), Error);
}

}  // namespace
}  // namespace tessera
