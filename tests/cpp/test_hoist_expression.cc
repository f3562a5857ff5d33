// tir.HoistExpression from C++: an invariant condition rises above the loops that do not use
// it; the record fields switch kinds off; a module with nothing to hoist comes back as it was.
#include <gtest/gtest.h>

#include <memory>

#include "tessera/ir/buffer.h"
#include "tessera/ir/expr.h"
#include "tessera/ir/function.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/ir/stmt.h"
#include "tessera/transform/pass.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace {

const DataType kI32 = DataType::Int(32);
const DataType kF32 = DataType::Float(32);

// for i in range(4): for j in range(4): if n < 3 (or `cond`): A[i * 4 + j] = 1.0
struct Program {
  Buffer a = BufferNode::Decl("A", kF32, {Int32(16)});
  Var n = VarNode::Make("n", kI32);
  Var i = VarNode::Make("i", kI32);
  Var j = VarNode::Make("j", kI32);
  IRModule Module(const Expr& cond) const {
    Stmt store = BufferStoreNode::Make(a, FloatImmNode::Make(kF32, 1.0),
                                       {AddNode::Make(MulNode::Make(i, Int32(4)), j)});
    Stmt body = cond ? Stmt(IfThenElseNode::Make(cond, store)) : store;
    Stmt loops = ForNode::Make(i, Int32(0), Int32(4), ForKind::kSerial,
                               ForNode::Make(j, Int32(0), Int32(4), ForKind::kSerial, body));
    AttrMap attrs;
    attrs["global_symbol"] = StringImmNode::Make("main");
    return IRModuleNode::FromFunc(
        PrimFuncNode::Make({a->data, n}, {}, DeclBufferNode::Make(a, loops), DataType::Void(),
                           attrs),
        "main");
  }
};

Stmt BodyAfterDecl(const IRModule& mod) {
  Stmt body = mod->Lookup("main")->body;
  auto* decl = AsPtr<DeclBufferNode>(body);
  return decl ? decl->body : body;
}

TEST(HoistExpression, InvariantConditionRisesAboveBothLoops) {
  Program p;
  IRModule out = transform::HoistExpression()->fn(p.Module(LTNode::Make(p.n, Int32(3))), {});
  auto* branch = AsPtr<IfThenElseNode>(BodyAfterDecl(out));
  ASSERT_NE(branch, nullptr);
  EXPECT_EQ(branch->else_case, nullptr);
  auto* outer = AsPtr<ForNode>(branch->then_case);
  ASSERT_NE(outer, nullptr);
  auto* inner = AsPtr<ForNode>(outer->body);
  ASSERT_NE(inner, nullptr);
  EXPECT_NE(AsPtr<BufferStoreNode>(inner->body), nullptr);  // the inner test is gone
}

TEST(HoistExpression, ConditionOnTheOuterLoopStopsInsideIt) {
  Program p;
  IRModule out = transform::HoistExpression()->fn(p.Module(LTNode::Make(p.i, Int32(3))), {});
  auto* outer = AsPtr<ForNode>(BodyAfterDecl(out));
  ASSERT_NE(outer, nullptr);
  auto* branch = AsPtr<IfThenElseNode>(outer->body);
  ASSERT_NE(branch, nullptr);
  EXPECT_NE(AsPtr<ForNode>(branch->then_case), nullptr);
}

TEST(HoistExpression, SwitchedOffOrNothingToHoistReturnsTheSameModule) {
  Program p;
  IRModule plain = p.Module(nullptr);
  EXPECT_EQ(transform::HoistExpression()->fn(plain, {}), plain);

  IRModule guarded = p.Module(LTNode::Make(p.n, Int32(3)));
  transform::PassContext ctx;
  auto record = std::make_shared<transform::ConfigDict>();
  (*record)["hoisted_conditionals"] = transform::ConfigValue{int64_t{0}};
  ctx.config["tir.HoistExpression"] = transform::ConfigValue{record};
  EXPECT_EQ(transform::HoistExpression()->fn(guarded, ctx), guarded);
}

}  // namespace
}  // namespace tessera
