// Specialize, RenewDefs, BufferOffsetOf / FlattenedBuffer, data layouts and index maps over
// padded domains: the C++ units behind PrimFunc.specialize, renew_defs, Buffer.offset_of,
// tir.layout and IndexMap.non_surjective_inverse.
#include <gtest/gtest.h>

#include "tessera/arith/analyzer.h"
#include "tessera/ir/buffer.h"
#include "tessera/ir/function.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/ir/stmt.h"
#include "tessera/ir/structural_equal.h"
#include "tessera/schedule/index_map_analysis.h"
#include "tessera/support/error.h"
#include "tessera/te/data_layout.h"
#include "tessera/transform/buffer_offset.h"
#include "tessera/transform/specialize.h"

namespace tessera {
namespace {

const DataType kI32 = DataType::Int(32);
const DataType kF32 = DataType::Float(32);

Expr I32(int64_t v) { return IntImmNode::Make(kI32, v); }

// f(a, n): A = match_buffer(a, [n * 2]); for i in range(n * 2): A[i] = 1.0
struct Scale {
  Var a = VarNode::Make("a", DataType::Handle());
  Var n = VarNode::Make("n", kI32);
  Var i = VarNode::Make("i", kI32);
  Buffer A =
      BufferNode::Make(VarNode::MakePointer("A", kF32, "global"), kF32, {MulNode::Make(n, I32(2))});
  PrimFunc func = PrimFuncNode::Make(
      {a, n}, {{a, A}},
      ForNode::Make(i, I32(0), MulNode::Make(n, I32(2)), ForKind::kSerial,
                    BufferStoreNode::Make(A, FloatImmNode::Make(kF32, 1.0), {i})));
};

TEST(Specialize, ScalarParameterLeavesTheSignatureAndFolds) {
  Scale s;
  PrimFunc f = transform::Specialize(s.func, {{s.n, I32(3)}});
  ASSERT_EQ(f->params.size(), 1u);
  auto* loop = AsPtr<ForNode>(f->body);
  ASSERT_NE(loop, nullptr);
  EXPECT_EQ(AsConstInt(loop->extent).value_or(-1), 6);
  Buffer A = f->GetBuffer(f->params[0]);
  EXPECT_EQ(AsConstInt(A->shape[0]).value_or(-1), 6);
  // The store writes the rebuilt buffer.
  EXPECT_EQ(AsPtr<BufferStoreNode>(loop->body)->buffer.get(), A.get());
  EXPECT_EQ(transform::Specialize(s.func, {}).get(), s.func.get());
}

TEST(Specialize, BufferShapesMustMatchVariables) {
  Scale s;
  Buffer given = BufferNode::Decl("B", kF32, {I32(6)});
  // n * 2 is not a variable: it cannot take the value 6.
  try {
    transform::Specialize(s.func, {{s.a, given}});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kType);
    EXPECT_NE(std::string(e.what()).find("is n * 2, not a variable"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(transform::Specialize(s.func, {{VarNode::Make("x", kI32), I32(1)}}), Error);
}

TEST(RenewDefs, CopyIsEqualAndSharesNoDefinition) {
  Scale s;
  PrimFunc copy = transform::RenewDefs(s.func);
  EXPECT_TRUE(StructuralEqual(copy, s.func));
  for (size_t k = 0; k < copy->params.size(); ++k) {
    EXPECT_NE(copy->params[k].get(), s.func->params[k].get());
  }
  Buffer A = copy->GetBuffer(copy->params[0]);
  EXPECT_NE(A.get(), s.A.get());
  EXPECT_NE(A->data.get(), s.A->data.get());
  // n in the shape is the copy's own parameter.
  EXPECT_EQ(AsPtr<MulNode>(A->shape[0])->a.get(), copy->params[1].get());
}

TEST(BufferOffset, RowMajorStridedAndMerged) {
  Buffer row = BufferNode::Make(VarNode::MakePointer("A", kF32, "global"), kF32, {I32(3), I32(5)},
                                {}, I32(7));
  auto offset = transform::BufferOffsetOf(row, {I32(2), I32(4)});
  ASSERT_EQ(offset.size(), 1u);
  EXPECT_EQ(AsConstInt(offset[0]).value_or(-1), 2 * 5 + 4 + 7);
  // x // s * s + x % s merges into x for a symbolic s.
  Var s = VarNode::Make("s", kI32), x = VarNode::Make("x", kI32);
  Buffer strided = BufferNode::Make(VarNode::MakePointer("B", kF32, "global"), kF32,
                                    {VarNode::Make("m", kI32), s}, {s, I32(1)});
  auto merged =
      transform::BufferOffsetOf(strided, {FloorDivNode::Make(x, s), FloorModNode::Make(x, s)});
  EXPECT_TRUE(StructuralEqual(merged[0], x));
  EXPECT_THROW(transform::BufferOffsetOf(row, {I32(1)}), Error);
}

TEST(BufferOffset, FlattenedBufferKeepsTheData) {
  Buffer buf = BufferNode::Decl("A", kF32, {I32(4), I32(16), I32(32)});
  Buffer flat = transform::FlattenedBuffer(buf);
  EXPECT_EQ(flat->data.get(), buf->data.get());
  ASSERT_EQ(flat->shape.size(), 1u);
  EXPECT_EQ(AsConstInt(flat->shape[0]).value_or(-1), 4 * 16 * 32);
  buf->axis_separators = {2};
  Buffer parted = transform::FlattenedBuffer(buf);
  ASSERT_EQ(parted->shape.size(), 2u);
  EXPECT_EQ(AsConstInt(parted->shape[0]).value_or(-1), 64);
  EXPECT_EQ(parted->axis_separators, std::vector<int64_t>{1});
  EXPECT_THROW(transform::CheckAxisSeparators({2, 1}, 3), Error);
}

TEST(DataLayout, ParseAndConvert) {
  auto blocked = te::Layout::Parse("NCHW16c", kI32);
  ASSERT_TRUE(blocked.has_value());
  EXPECT_EQ(blocked->axes.size(), 5u);
  EXPECT_EQ(blocked->FactorOf("C"), 16);
  EXPECT_EQ(blocked->IndexOf("c"), 4);
  EXPECT_FALSE(te::Layout::Parse("__undef__", kI32).has_value());
  EXPECT_THROW(te::Layout::Parse("NCHWc", kI32), Error);
  EXPECT_THROW(te::Layout::Parse("NCHW", kF32), Error);
  auto convert = te::BijectiveLayout::Make(*te::Layout::Parse("NCHW", kI32), *blocked);
  ASSERT_TRUE(convert.has_value());
  auto index = convert->ForwardIndex({I32(0), I32(18), I32(6), I32(6)});
  std::vector<int64_t> values;
  for (const Expr& e : index) values.push_back(AsConstInt(e).value_or(-1));
  EXPECT_EQ(values, (std::vector<int64_t>{0, 1, 6, 6, 2}));
  auto shape = convert->ForwardShape({I32(1), I32(20), I32(7), I32(7)});
  EXPECT_EQ(AsConstInt(shape[1]).value_or(-1), 2);  // rounded up
  EXPECT_FALSE(
      te::BijectiveLayout::Make(*te::Layout::Parse("NCHW", kI32), *te::Layout::Parse("NCDW", kI32))
          .has_value());
}

TEST(IndexMapPadding, ShapeInverseAndPadding) {
  Var i = VarNode::Make("i", kI32);
  schedule::IndexMap split{{i}, {FloorDivNode::Make(i, I32(4)), FloorModNode::Make(i, I32(4))}};
  auto shape = schedule::MapShape(split, {I32(14)});
  ASSERT_EQ(shape.size(), 2u);
  EXPECT_EQ(AsConstInt(shape[0]).value_or(-1), 4);
  EXPECT_EQ(AsConstInt(shape[1]).value_or(-1), 4);
  auto [inverse, padding] = schedule::NonSurjectiveInverse(split, {I32(14)});
  ASSERT_EQ(inverse.final_indices.size(), 1u);
  // The padding is the positions 14 and 15: outer 3, inner 2 or 3.
  auto at = [&](int64_t a, int64_t b) { return inverse.Apply({I32(a), I32(b)})[0]; };
  EXPECT_EQ(AsConstInt(at(3, 1)).value_or(-1), 13);
  auto padded = [&](int64_t a, int64_t b) {
    VarMap at_ab{{inverse.initial_indices[0].get(), I32(a)},
                 {inverse.initial_indices[1].get(), I32(b)}};
    return AsConstInt(arith::Analyzer().Simplify(Substitute(padding, at_ab))).value_or(-1);
  };
  EXPECT_EQ(padded(3, 1), 0);
  EXPECT_EQ(padded(3, 2), 1);
  EXPECT_EQ(padded(0, 0), 0);
  std::vector<int64_t> out_shape;
  auto offsets = schedule::MapIndexOffsets(split, {6}, &out_shape);
  EXPECT_EQ(out_shape, (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(offsets, (std::vector<int64_t>{0, 1, 2, 3, 4, 5}));
}

}  // namespace
}  // namespace tessera
