// te: tensors, reductions and CreatePrimFunc against functions built with the IRBuilder.
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "tessera/ir/functor.h"
#include "tessera/ir/ir_builder.h"
#include "tessera/ir/structural_equal.h"
#include "tessera/support/error.h"
#include "tessera/te/create_prim_func.h"
#include "tessera/te/reduce.h"
#include "tessera/te/tensor.h"

namespace tessera {
namespace {

const DataType kI32 = DataType::Int(32);
const DataType kF32 = DataType::Float(32);

Expr C(int64_t v) { return Int32(v); }
Expr F(double v) { return FloatImmNode::Make(kF32, v); }

// A compute body from a lambda over the index variables.
template <class F>
std::function<te::ComputeBody(const std::vector<Var>&)> Body(F f) {
  return [f](const std::vector<Var>& v) -> te::ComputeBody { return f(v); };
}

// The message of the Error `f` throws (empty when it throws none).
template <class F>
std::string ErrorOf(F f) {
  try {
    f();
  } catch (const Error& e) {
    return e.message();
  }
  return "";
}

std::vector<std::string> BlockNames(const PrimFunc& func) {
  std::vector<std::string> names;
  PostOrderVisit(func->body, [&](const ObjectRef& n) {
    if (auto* block = AsPtr<BlockNode>(n)) names.push_back(block->name_hint);
  });
  return names;  // children first: the root block is last
}

// Y = A @ B (reduction), C = max(Y, 0): the te program of spec/tensorir.md §4.
struct MatmulRelu {
  te::Tensor a = te::Placeholder({C(16), C(16)}, kF32, "A");
  te::Tensor b = te::Placeholder({C(16), C(16)}, kF32, "B");
  IterVar k = te::ReduceAxis(RangeNode::Make(C(0), C(16)), "k");
  te::Tensor y, c;

  MatmulRelu() {
    y = te::Compute(
        {C(16), C(16)}, Body([&](const std::vector<Var>& v) {
          return te::Sum(MulNode::Make((*a)({v[0], k->var}), (*b)({k->var, v[1]})), {k});
        }),
        "Y");
    c = te::Compute({C(16), C(16)}, Body([&](const std::vector<Var>& v) -> Expr {
                      return MaxNode::Make((*y)({v[0], v[1]}), F(0));
                    }),
                    "C");
  }
};

// The same function written with the IRBuilder, as the TVMScript parser would build it.
PrimFunc ExpectedMatmulRelu() {
  IRBuilder ib;
  ib.BeginFunction("main");
  std::vector<Buffer> params;
  for (const char* name : {"A", "B", "C"}) {
    Buffer buf = BufferNode::Decl(name, kF32, {C(16), C(16)});
    Var handle = VarNode::Make(name, DataType::Handle());
    ib.AddParam(handle);
    ib.BindParamBuffer(handle, buf);
    params.push_back(buf);
  }
  Buffer y = BufferNode::Decl("Y", kF32, {C(16), C(16)});
  ib.AllocBuffer(y);
  ib.SetFunctionAttr("tir.noalias", Bool(true));
  auto range = RangeNode::Make(C(0), C(16));
  {
    Var i = VarNode::Make("i", kI32), j = VarNode::Make("j", kI32), k = VarNode::Make("k", kI32);
    for (const Var& v : {i, j, k}) ib.BeginFor(v, C(0), C(16), ForKind::kSerial);
    ib.BeginBlock("Y");
    Var vi = VarNode::Make("vi", kI32), vj = VarNode::Make("vj", kI32);
    Var vk = VarNode::Make("vk", kI32);
    ib.AddBlockIter(IterVarNode::Make(range, vi, IterVarType::kDataPar), i);
    ib.AddBlockIter(IterVarNode::Make(range, vj, IterVarType::kDataPar), j);
    ib.AddBlockIter(IterVarNode::Make(range, vk, IterVarType::kCommReduce), k);
    ib.BeginInit();
    ib.Emit(BufferStoreNode::Make(y, F(0), {vi, vj}));
    ib.EndInit();
    Expr update = AddNode::Make(BufferLoadNode::Make(y, {vi, vj}),
                                MulNode::Make(BufferLoadNode::Make(params[0], {vi, vk}),
                                              BufferLoadNode::Make(params[1], {vk, vj})));
    ib.Emit(BufferStoreNode::Make(y, update, {vi, vj}));
    ib.EndBlock();
    for (int n = 0; n < 3; ++n) ib.EndFor();
  }
  {
    Var i = VarNode::Make("i", kI32), j = VarNode::Make("j", kI32);
    for (const Var& v : {i, j}) ib.BeginFor(v, C(0), C(16), ForKind::kSerial);
    ib.BeginBlock("C");
    Var vi = VarNode::Make("vi", kI32), vj = VarNode::Make("vj", kI32);
    ib.AddBlockIter(IterVarNode::Make(range, vi, IterVarType::kDataPar), i);
    ib.AddBlockIter(IterVarNode::Make(range, vj, IterVarType::kDataPar), j);
    ib.Emit(BufferStoreNode::Make(params[2], MaxNode::Make(BufferLoadNode::Make(y, {vi, vj}), F(0)),
                                  {vi, vj}));
    ib.EndBlock();
    for (int n = 0; n < 2; ++n) ib.EndFor();
  }
  return ib.EndFunction();
}

TEST(TE, TensorsAreBuffersOfTheirOperation) {
  MatmulRelu m;
  EXPECT_EQ(m.y->name, "Y");
  EXPECT_EQ(m.y->dtype, kF32);
  EXPECT_EQ(m.y->op->output(0), m.y);  // one tensor per output while it is held
  auto* op = dynamic_cast<const te::ComputeOpNode*>(m.y->op.get());
  ASSERT_NE(op, nullptr);
  ASSERT_NE(op->reduce, nullptr);
  EXPECT_EQ(op->reduce_axis.size(), 1u);
  ASSERT_EQ(op->InputTensors().size(), 2u);
  EXPECT_EQ(op->InputTensors()[0], m.a);
  EXPECT_EQ(op->InputTensors()[1], m.b);
  Expr load = (*m.a)({C(1), C(2)});
  auto* bl = AsPtr<BufferLoadNode>(load);
  ASSERT_NE(bl, nullptr);
  EXPECT_EQ(te::AsTensor(bl->buffer.get()), m.a.get());
  EXPECT_THROW((*m.a)({C(1)}), Error);
}

TEST(TE, CreatePrimFuncMatchesTheBuilderForm) {
  MatmulRelu m;
  PrimFunc func = te::CreatePrimFunc({m.a, m.b, m.c});
  PrimFunc expected = ExpectedMatmulRelu();
  EXPECT_TRUE(StructuralEqual(func, expected)) << StructuralEqualFailure(func, expected);
  EXPECT_EQ(func->GetStrAttr("global_symbol"), "main");
  EXPECT_EQ(func->GetIntAttr("tir.noalias"), 1);
  EXPECT_EQ(BlockNames(func), (std::vector<std::string>{"Y", "C", "root"}));
  auto* root = AsPtr<BlockRealizeNode>(func->body);
  ASSERT_NE(root, nullptr);
  ASSERT_EQ(root->block->alloc_buffers.size(), 1u);
  EXPECT_EQ(root->block->alloc_buffers[0]->name, "Y");
  // The function has its own buffers, not the tensors.
  EXPECT_EQ(te::AsTensor(func->buffer_map[0].second.get()), nullptr);
}

TEST(TE, ReductionIdentities) {
  auto max_id = te::MaxReducer(kF32)->identity[0];
  auto* f = AsPtr<FloatImmNode>(max_id);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->value, -static_cast<double>(std::numeric_limits<float>::max()));
  EXPECT_EQ(AsConstInt(te::MinReducer(kI32)->identity[0]), std::numeric_limits<int32_t>::max());
  EXPECT_EQ(AsConstInt(te::SumReducer(DataType::Int(8))->identity[0]), 0);
  EXPECT_EQ(AsConstInt(te::MinValue(DataType::UInt(8))), 0);
  EXPECT_EQ(AsConstInt(te::MaxValue(DataType::UInt(8))), 255);

  // A custom product reducer combines by substitution.
  Var x = VarNode::Make("x", kF32), y = VarNode::Make("y", kF32);
  auto product = te::CommReducerNode::Make("product", x, y, MulNode::Make(x, y), F(1));
  Expr combined = product->Combine(F(2), F(3));
  EXPECT_TRUE(StructuralEqual(combined, MulNode::Make(F(2), F(3))));
  EXPECT_THROW(te::CommReducerNode::Make("bad", x, y, MulNode::Make(x, y), C(1)), Error);
}

TEST(TE, ReduceAxisOutsideAReducerIsRejected) {
  te::Tensor a = te::Placeholder({C(4), C(8)}, kF32, "A");
  IterVar k = te::ReduceAxis(RangeNode::Make(C(0), C(8)), "k");
  std::string msg = ErrorOf([&] {
    te::Compute({C(4)}, Body([&](const std::vector<Var>& v) -> Expr {
                  return (*a)({v[0], k->var});
                }),
                "B");
  });
  EXPECT_NE(msg.find("reduce axis 'k' is used outside a reducer"), std::string::npos) << msg;
  // A spatial axis is not a reduce axis.
  msg = ErrorOf([&] {
    te::Compute({C(4)}, Body([&](const std::vector<Var>& v) {
                  IterVar fake = IterVarNode::Make(RangeNode::Make(C(0), C(4)), v[0],
                                                   IterVarType::kCommReduce);
                  return te::Sum((*a)({v[0], C(0)}), {fake});
                }),
                "B");
  });
  EXPECT_NE(msg.find("is not a reduce axis"), std::string::npos) << msg;
}

TEST(TE, UnlistedPlaceholderAndUndefinedSizesAreRejected) {
  MatmulRelu m;
  std::string msg = ErrorOf([&] { te::CreatePrimFunc({m.a, m.c}); });
  EXPECT_NE(msg.find("tensor 'B' (a te.placeholder read by 'Y') is not among the listed tensors"),
            std::string::npos)
      << msg;
  msg = ErrorOf([&] { te::CreatePrimFunc({m.a, m.b, m.c, m.a}); });
  EXPECT_NE(msg.find("listed twice"), std::string::npos) << msg;

  Var n = VarNode::Make("n", kI32);
  te::Tensor a = te::Placeholder({C(8)}, kF32, "A");
  te::Tensor b =
      te::Compute({n}, Body([&](const std::vector<Var>& v) -> Expr { return (*a)({v[0]}); }), "B");
  te::Tensor scaled = te::Compute({C(8)}, Body([&](const std::vector<Var>& v) -> Expr {
                                    return MulNode::Make((*a)({v[0]}), CastNode::Make(kF32, n));
                                  }),
                                  "S");
  msg = ErrorOf([&] { te::CreatePrimFunc({a, scaled}); });
  EXPECT_NE(msg.find("variable 'n' (used by 'S') is not defined"), std::string::npos) << msg;
  EXPECT_EQ(te::CreatePrimFunc({a, scaled, n})->params.size(), 3u);
  // B's size n is defined by B's own shape once B is a parameter.
  PrimFunc func = te::CreatePrimFunc({a, b});
  EXPECT_EQ(func->buffer_map[1].second->shape[0], n);
}

TEST(TE, RepeatedNamesSymbolicShapesAndIndexType) {
  Var n = VarNode::Make("n", kI32);
  te::Tensor a = te::Placeholder({n}, kF32, "A");
  auto add_one = [&](te::Tensor in) {
    return te::Compute({n}, Body([in](const std::vector<Var>& v) -> Expr {
                         return AddNode::Make((*in)({v[0]}), F(1));
                       }),
                       "B");
  };
  te::Tensor b1 = add_one(a), b2 = add_one(b1), b3 = add_one(b2);
  PrimFunc func = te::CreatePrimFunc({a, b3});
  EXPECT_EQ(BlockNames(func), (std::vector<std::string>{"B", "B_1", "B_2", "root"}));
  for (const auto& [param, buffer] : func->buffer_map) EXPECT_EQ(buffer->shape[0], n);

  te::Tensor c = te::Placeholder({C(8)}, kF32, "C");
  te::Tensor d = te::Compute({C(4)}, Body([&](const std::vector<Var>& v) -> Expr {
                               return (*c)({AddNode::Make(MulNode::Make(v[0], C(2)), C(1))});
                             }),
                             "D");
  PrimFunc wide = te::CreatePrimFunc({c, d}, DataType::Int(64));
  EXPECT_EQ(wide->buffer_map[0].second->shape[0]->dtype, DataType::Int(64));
  bool all_int64 = true;
  PostOrderVisit(wide->body, [&](const ObjectRef& node) {
    if (auto* loop = AsPtr<ForNode>(node))
      all_int64 = all_int64 && loop->loop_var->dtype.bits() == 64;
    if (auto* load = AsPtr<BufferLoadNode>(node)) {
      for (const Expr& i : load->indices) all_int64 = all_int64 && i->dtype == DataType::Int(64);
    }
  });
  EXPECT_TRUE(all_int64);
  std::string msg = ErrorOf([&] { te::CreatePrimFunc({a, b3}, DataType::Int(64)); });
  EXPECT_NE(msg.find("cannot convert the int32 shape entry"), std::string::npos) << msg;
}

}  // namespace
}  // namespace tessera
