// IR nodes: construction of every kind, the type checks of Make, downcasts, functions, modules,
// ops.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "tessera/ir/buffer.h"
#include "tessera/ir/expr.h"
#include "tessera/ir/function.h"
#include "tessera/ir/op.h"
#include "tessera/ir/stmt.h"
#include "tessera/support/error.h"

namespace tessera {
namespace {

const DataType kI32 = DataType::Int(32);
const DataType kF32 = DataType::Float(32);

// Runs `build`, which must throw tessera::Error of `kind` whose message contains `needle`.
void ExpectError(const std::function<void()>& build, ErrorKind kind, const std::string& needle) {
  try {
    build();
    ADD_FAILURE() << "no error; expected one mentioning \"" << needle << "\"";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.message();
    EXPECT_NE(e.message().find(needle), std::string::npos) << e.message();
  }
}

void ExpectTypeError(const std::function<void()>& build, const std::string& needle) {
  ExpectError(build, ErrorKind::kType, needle);
}

// ---- Expressions ----

TEST(IrNodes, Constants) {
  IntImm i = IntImmNode::Make(DataType::Int(8), -128);
  EXPECT_EQ(i->kind, NodeKind::kIntImm);
  EXPECT_EQ(i->dtype, DataType::Int(8));
  EXPECT_EQ(i->value, -128);
  EXPECT_EQ(IntImmNode::Make(DataType::UInt(8), 255)->value, 255);
  EXPECT_EQ(IntImmNode::Make(DataType::Bool(), 1)->dtype, DataType::Bool());

  FloatImm f = FloatImmNode::Make(DataType::Float(16), 0.5);
  EXPECT_EQ(f->kind, NodeKind::kFloatImm);
  EXPECT_EQ(f->value, 0.5);
  EXPECT_EQ(FloatImmNode::Make(DataType::BFloat16(), 2.0)->dtype, DataType::BFloat16());

  StringImm s = StringImmNode::Make("hello");
  EXPECT_EQ(s->value, "hello");
  EXPECT_EQ(s->dtype, DataType::Handle());
}

TEST(IrNodes, ConstantRangeChecks) {
  ExpectTypeError([] { IntImmNode::Make(DataType::Int(8), 128); }, "out of range for int8");
  ExpectTypeError([] { IntImmNode::Make(DataType::Int(8), -129); }, "out of range");
  ExpectTypeError([] { IntImmNode::Make(DataType::UInt(8), -1); }, "out of range for uint8");
  ExpectTypeError([] { IntImmNode::Make(DataType::UInt(16), 65536); }, "out of range");
  ExpectTypeError([] { IntImmNode::Make(DataType::Bool(), 2); }, "out of range for bool");
  ExpectTypeError([] { IntImmNode::Make(kF32, 1); }, "IntImm needs a scalar integer");
  ExpectTypeError([] { IntImmNode::Make(DataType::Int(32, 4), 1); }, "IntImm needs a scalar");
  ExpectTypeError([] { FloatImmNode::Make(kI32, 1.0); }, "FloatImm needs a scalar float");
  EXPECT_EQ(IntImmNode::Make(DataType::Int(64), INT64_MIN)->value, INT64_MIN);
}

TEST(IrNodes, ConstantHelpers) {
  EXPECT_EQ(AsConstInt(Int32(7)), 7);
  EXPECT_FALSE(AsConstInt(FloatImmNode::Make(kF32, 7.0)).has_value());
  EXPECT_EQ(Bool(true)->dtype, DataType::Bool());
  EXPECT_TRUE(IsConstInt(Bool(true), 1));

  Expr vec = MakeConst(DataType::Int(32, 8), int64_t{3});
  auto* b = AsPtr<BroadcastNode>(vec);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->lanes, 8);
  EXPECT_EQ(vec->dtype, DataType::Int(32, 8));
  EXPECT_TRUE(IsConstInt(vec, 3));
  EXPECT_FALSE(IsConstInt(vec, 4));

  Expr half = MakeConst(DataType::Float(16), 0.5);
  ASSERT_TRUE(IsInstance<FloatImmNode>(half.get()));
  EXPECT_EQ(AsPtr<FloatImmNode>(half)->value, 0.5);
  EXPECT_TRUE(IsInstance<FloatImmNode>(MakeConst(kF32, int64_t{2}).get()));
}

TEST(IrNodes, Variables) {
  Var x = VarNode::Make("x", kI32);
  EXPECT_EQ(x->kind, NodeKind::kVar);
  EXPECT_EQ(x->name, "x");
  EXPECT_FALSE(x->pointer.has_value());
  // Identity is the node, not the name.
  EXPECT_NE(x, VarNode::Make("x", kI32));

  Var p = VarNode::MakePointer("p", DataType::Float(16, 8), "shared");
  EXPECT_EQ(p->dtype, DataType::Handle());
  ASSERT_TRUE(p->pointer.has_value());
  EXPECT_EQ(p->pointer->element, DataType::Float(16, 8));
  EXPECT_EQ(p->pointer->scope, "shared");

  SizeVar n = SizeVarNode::Make("n", DataType::Int(64));
  EXPECT_EQ(n->kind, NodeKind::kSizeVar);
  EXPECT_TRUE(IsInstance<VarNode>(n.get()));
  Var as_var = n;  // a SizeVar is usable wherever a Var is
  EXPECT_EQ(as_var->dtype, DataType::Int(64));
  // As TVM's: a float SizeVar is a non-negative float (T.float32(is_size_var=True)).
  EXPECT_EQ(SizeVarNode::Make("f", kF32)->dtype, kF32);
  ExpectTypeError([] { SizeVarNode::Make("h", DataType::Handle()); },
                  "SizeVar needs a scalar integer or float type");
  ExpectTypeError([] { SizeVarNode::Make("v", DataType::Int(32, 4)); },
                  "SizeVar needs a scalar integer or float type");
}

TEST(IrNodes, Cast) {
  Var x = VarNode::Make("x", DataType::Int(32, 4));
  auto c = CastNode::Make(DataType::Float(32, 4), x);
  EXPECT_EQ(c->dtype, DataType::Float(32, 4));
  EXPECT_EQ(c->value, x);
  ExpectTypeError([&] { CastNode::Make(kF32, x); }, "lane count");
  ExpectError([] { CastNode::Make(kF32, nullptr); }, ErrorKind::kValue, "must not be null");
}

TEST(IrNodes, BinaryKindsAndTypes) {
  Var x = VarNode::Make("x", kI32), y = VarNode::Make("y", kI32);
  std::vector<Expr> arithmetic = {
      AddNode::Make(x, y),      SubNode::Make(x, y), MulNode::Make(x, y),
      DivNode::Make(x, y),      ModNode::Make(x, y), FloorDivNode::Make(x, y),
      FloorModNode::Make(x, y), MinNode::Make(x, y), MaxNode::Make(x, y)};
  for (const Expr& e : arithmetic) {
    EXPECT_EQ(e->dtype, kI32) << NodeKindName(e->kind);
    auto* bin = AsPtr<BinaryNode>(e);
    ASSERT_NE(bin, nullptr);
    EXPECT_EQ(bin->a, x);
    EXPECT_EQ(bin->b, y);
    EXPECT_FALSE(bin->is_comparison());
  }
  std::vector<Expr> comparisons = {EQNode::Make(x, y), NENode::Make(x, y), LTNode::Make(x, y),
                                   LENode::Make(x, y), GTNode::Make(x, y), GENode::Make(x, y)};
  for (const Expr& e : comparisons) {
    EXPECT_EQ(e->dtype, DataType::Bool()) << NodeKindName(e->kind);
    EXPECT_TRUE(AsPtr<BinaryNode>(e)->is_comparison());
  }
  Var vx = VarNode::Make("vx", DataType::Float(16, 8));
  EXPECT_EQ(LTNode::Make(vx, vx)->dtype, DataType::Bool(8));

  Expr p = LTNode::Make(x, y), q = GENode::Make(x, y);
  EXPECT_EQ(AndNode::Make(p, q)->dtype, DataType::Bool());
  EXPECT_EQ(OrNode::Make(p, q)->kind, NodeKind::kOr);
  EXPECT_EQ(NotNode::Make(p)->dtype, DataType::Bool());
}

TEST(IrNodes, BinaryTypeErrors) {
  Var i = VarNode::Make("i", kI32), f = VarNode::Make("f", kF32);
  ExpectTypeError([&] { AddNode::Make(i, f); }, "operand types of Add differ: int32 vs. float32");
  ExpectTypeError([&] { LTNode::Make(i, VarNode::Make("j", DataType::Int(64))); }, "differ");
  ExpectTypeError([&] { AndNode::Make(i, i); }, "And needs bool operands");
  ExpectTypeError([&] { OrNode::Make(f, f); }, "Or needs bool operands");
  ExpectTypeError([&] { NotNode::Make(i); }, "Not needs a bool operand");
  Var h = VarNode::Make("h", DataType::Handle());
  ExpectTypeError([&] { AddNode::Make(h, h); }, "not defined on handle");
  ExpectError([&] { MulNode::Make(i, nullptr); }, ErrorKind::kValue, "right operand");
}

TEST(IrNodes, SelectRampBroadcastShuffle) {
  Var x = VarNode::Make("x", kI32);
  Expr cond = LTNode::Make(x, Int32(4));
  auto sel = SelectNode::Make(cond, x, Int32(0));
  EXPECT_EQ(sel->dtype, kI32);
  ExpectTypeError([&] { SelectNode::Make(x, x, x); }, "condition must be bool");
  ExpectTypeError([&] { SelectNode::Make(cond, x, FloatImmNode::Make(kF32, 0)); },
                  "branches differ");

  auto ramp = RampNode::Make(x, Int32(1), 8);
  EXPECT_EQ(ramp->dtype, DataType::Int(32, 8));
  EXPECT_EQ(ramp->lanes, 8);
  ExpectTypeError([&] { RampNode::Make(x, Int32(1), 1); }, "at least 2 lanes");
  ExpectTypeError(
      [&] { RampNode::Make(FloatImmNode::Make(kF32, 0), FloatImmNode::Make(kF32, 1), 4); },
      "Ramp needs scalar integer");

  auto bc = BroadcastNode::Make(FloatImmNode::Make(kF32, 1.5), 16);
  EXPECT_EQ(bc->dtype, DataType::Float(32, 16));
  ExpectTypeError([&] { BroadcastNode::Make(ramp, 2); }, "Broadcast needs a scalar");

  Var v4 = VarNode::Make("v4", DataType::Float(32, 4));
  auto sh = ShuffleNode::Make({v4, v4}, {Int32(0), Int32(5), Int32(7)});
  EXPECT_EQ(sh->dtype, DataType::Float(32, 3));
  EXPECT_EQ(sh->vectors.size(), 2u);
  ExpectTypeError([&] { ShuffleNode::Make({v4}, {Int32(4)}); }, "in range");
  ExpectTypeError([&] { ShuffleNode::Make({v4}, {x}); }, "constants");
  ExpectTypeError([&] { ShuffleNode::Make({}, {}); }, "at least one vector");
}

TEST(IrNodes, Let) {
  Var x = VarNode::Make("x", kI32);
  auto let = LetNode::Make(x, Int32(3), AddNode::Make(x, x));
  EXPECT_EQ(let->dtype, kI32);
  EXPECT_EQ(let->var, x);
  ExpectTypeError([&] { LetNode::Make(x, FloatImmNode::Make(kF32, 1), x); },
                  "differs from variable type");
}

TEST(IrNodes, CallOfOpAndGlobalVar) {
  Op exp = OpNode::Get("tir.exp");
  Var f = VarNode::Make("f", kF32);
  Call c = CallNode::Make(kF32, exp, {f});
  EXPECT_EQ(c->op_name(), "tir.exp");
  EXPECT_TRUE(c->is_op("tir.exp"));
  EXPECT_FALSE(c->is_op("tir.log"));
  ExpectTypeError([&] { CallNode::Make(kF32, exp, {f, f}); }, "tir.exp takes 1 arguments, got 2");

  // Variadic ops take any number of arguments.
  Op extern_op = OpNode::Get("tir.call_extern");
  EXPECT_EQ(CallNode::Make(kI32, extern_op, {StringImmNode::Make("puts"), f, f})->args.size(), 3u);

  GlobalVar callee = GlobalVarNode::Make("subfunc");
  Call call = CallNode::Make(kI32, callee, {Int32(1)});
  EXPECT_EQ(call->op_name(), "subfunc");
  EXPECT_FALSE(call->is_op("subfunc"));
  ExpectTypeError([&] { CallNode::Make(kI32, f, {}); }, "Op or a GlobalVar");
}

TEST(IrNodes, BufferLoad) {
  Buffer a = BufferNode::Decl("A", kF32, {Int32(16), Int32(32)});
  Var i = VarNode::Make("i", kI32);
  auto load = BufferLoadNode::Make(a, {i, Int32(0)});
  EXPECT_EQ(load->dtype, kF32);
  EXPECT_EQ(load->buffer, a);
  EXPECT_EQ(load->predicate, nullptr);

  auto vload = BufferLoadNode::Make(a, {i, RampNode::Make(Int32(0), Int32(1), 8)});
  EXPECT_EQ(vload->dtype, DataType::Float(32, 8));
  auto masked = BufferLoadNode::Make(a, {i, RampNode::Make(Int32(0), Int32(1), 8)},
                                     BroadcastNode::Make(Bool(true), 8));
  EXPECT_NE(masked->predicate, nullptr);

  ExpectTypeError([&] { BufferLoadNode::Make(a, {i}); }, "has 2 dimensions but is indexed with 1");
  // A scalar float index is kept, as TVM keeps it (lowering refuses it); a handle is not an index.
  EXPECT_EQ(BufferLoadNode::Make(a, {i, FloatImmNode::Make(kF32, 0)})->dtype, kF32);
  ExpectTypeError(
      [&] {
        BufferLoadNode::Make(a, {i, VarNode::Make("h", DataType::Handle())});
      },
      "index must be an integer");
  ExpectTypeError(
      [&] {
        BufferLoadNode::Make(a, {RampNode::Make(Int32(0), Int32(1), 4), i});
      },
      "only the last index");
  ExpectTypeError(
      [&] {
        BufferLoadNode::Make(a, {i, i}, BroadcastNode::Make(Bool(true), 4));
      },
      "load predicate must be bool, got boolx4");
}

// ---- Buffers ----

TEST(IrNodes, Buffers) {
  Buffer a = BufferNode::Decl("A", DataType::Float(16), {Int32(4), Int32(8)}, "shared");
  EXPECT_EQ(a->name, "A");
  EXPECT_EQ(a->scope(), "shared");
  EXPECT_EQ(a->data->name, "A");
  ASSERT_TRUE(a->data->pointer.has_value());
  EXPECT_EQ(a->data->pointer->element, DataType::Float(16));
  EXPECT_TRUE(a->strides.empty());
  EXPECT_TRUE(IsConstInt(a->elem_offset, 0));
  EXPECT_EQ(a->data_alignment, 64);
  EXPECT_EQ(a->offset_factor, 1);

  Var data = VarNode::MakePointer("b_data", kF32, "global");
  Buffer b = BufferNode::Make(data, kF32, {Int32(4)}, {Int32(2)}, Int32(8), "", 16, 4);
  EXPECT_EQ(b->name, "b_data");  // the name defaults to the data pointer's
  EXPECT_EQ(b->scope(), "global");
  EXPECT_EQ(b->strides.size(), 1u);
  EXPECT_TRUE(IsConstInt(b->elem_offset, 8));
  EXPECT_EQ(b->data_alignment, 16);

  ExpectTypeError([] { BufferNode::Make(VarNode::Make("x", kI32), kF32, {Int32(4)}); },
                  "needs a pointer data variable");
  ExpectTypeError(
      [&] {
        BufferNode::Make(data, kF32, {Int32(4)}, {Int32(1), Int32(1)});
      },
      "1 dimensions but 2 strides");
  // Fewer strides than dimensions, as TVM's cache_index declares its buffers.
  Buffer partial = BufferNode::Make(data, kF32, {Int32(4), Int32(4)}, {Int32(1)});
  EXPECT_EQ(partial->strides.size(), 1u);
  ExpectTypeError([&] { BufferNode::Make(data, kF32, {FloatImmNode::Make(kF32, 4)}); },
                  "shape must be scalar integers");
}

// ---- Statements ----

TEST(IrNodes, Statements) {
  Buffer a = BufferNode::Decl("A", kF32, {Int32(16)});
  Var i = VarNode::Make("i", kI32), x = VarNode::Make("x", kI32);
  Stmt store = BufferStoreNode::Make(a, FloatImmNode::Make(kF32, 1.0), {i});
  EXPECT_EQ(store->kind, NodeKind::kBufferStore);

  auto let = LetStmtNode::Make(x, Int32(1), store);
  EXPECT_EQ(let->body, store);
  auto attr = AttrStmtNode::Make(i, "pragma_unroll", Int32(1), store);
  EXPECT_EQ(attr->attr_key, "pragma_unroll");
  auto assert_stmt =
      AssertStmtNode::Make(LTNode::Make(i, Int32(16)), StringImmNode::Make("oob"), store);
  EXPECT_EQ(assert_stmt->message->kind, NodeKind::kStringImm);

  Var ptr = VarNode::MakePointer("buf", kF32, "local");
  auto alloc = AllocateNode::Make(ptr, kF32, {Int32(16)}, nullptr, store);
  EXPECT_TRUE(IsConstInt(alloc->condition, 1));  // no condition means "always"
  auto decl = DeclBufferNode::Make(a, store);
  EXPECT_EQ(decl->buffer, a);

  For loop = ForNode::Make(i, Int32(0), Int32(16), ForKind::kSerial, store);
  EXPECT_EQ(loop->for_kind, ForKind::kSerial);
  EXPECT_EQ(loop->thread_binding, nullptr);
  EXPECT_STREQ(ForKindName(ForKind::kVectorized), "vectorized");

  auto wh = WhileNode::Make(LTNode::Make(x, Int32(3)), store);
  EXPECT_EQ(wh->kind, NodeKind::kWhile);
  auto ite = IfThenElseNode::Make(Bool(true), store);
  EXPECT_EQ(ite->else_case, nullptr);
  auto eval = EvaluateNode::Make(Int32(0));
  auto seq = SeqStmtNode::Make({store, eval});
  EXPECT_EQ(seq->seq.size(), 2u);
}

TEST(IrNodes, AllocateConstHoldsItsElements) {
  Stmt nop = EvaluateNode::Make(Int32(0));
  Var p = VarNode::MakePointer("k", DataType::Int(16), "global");
  std::vector<uint8_t> bytes(6 * 2);
  const int16_t values[6] = {0, 1, -2, 300, -32768, 32767};
  std::memcpy(bytes.data(), values, sizeof(values));
  auto k = AllocateConstNode::Make(p, DataType::Int(16), {Int32(2), Int32(3)}, bytes, nop);
  EXPECT_EQ(k->NumElements(), 6);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(k->IntAt(i), values[i]);

  Var f = VarNode::MakePointer("w", DataType::Float(16), "global");
  const uint16_t halves[3] = {0x3C00, 0xC100, 0x0001};  // 1.0, -2.5, the smallest subnormal
  std::vector<uint8_t> hb(6);
  std::memcpy(hb.data(), halves, sizeof(halves));
  auto w = AllocateConstNode::Make(f, DataType::Float(16), {Int32(3)}, hb, nop);
  EXPECT_EQ(w->FloatAt(0), 1.0);
  EXPECT_EQ(w->FloatAt(1), -2.5);
  EXPECT_EQ(w->FloatAt(2), std::ldexp(1.0, -24));

  ExpectTypeError([&] { AllocateConstNode::Make(p, DataType::Int(16), {Int32(4)}, bytes, nop); },
                  "needs 8 bytes of data, got 12");
  ExpectTypeError(
      [&] {
        AllocateConstNode::Make(p, DataType::Int(16), {VarNode::Make("n", kI32)}, bytes, nop);
      },
      "non-negative constants");
  ExpectTypeError([&] { AllocateConstNode::Make(p, DataType::Bool(), {Int32(1)}, {1}, nop); },
                  "AllocateConst holds");
}

TEST(IrNodes, StatementTypeErrors) {
  Buffer a = BufferNode::Decl("A", kF32, {Int32(16)});
  Var i = VarNode::Make("i", kI32);
  Stmt nop = EvaluateNode::Make(Int32(0));
  ExpectTypeError([&] { BufferStoreNode::Make(a, Int32(1), {i}); },
                  "cannot store int32 into buffer A of float32");
  ExpectTypeError(
      [&] {
        BufferStoreNode::Make(a, FloatImmNode::Make(kF32, 1), {RampNode::Make(i, Int32(1), 4)});
      },
      "at 4 lanes");
  ExpectTypeError(
      [&] {
        BufferStoreNode::Make(a, FloatImmNode::Make(kF32, 1), {i, i});
      },
      "dimensions");
  ExpectTypeError([&] { LetStmtNode::Make(i, FloatImmNode::Make(kF32, 1), nop); },
                  "bound to variable 'i'");
  ExpectTypeError([&] { AllocateNode::Make(i, kF32, {Int32(4)}, nullptr, nop); },
                  "pointer variable");
  ExpectTypeError(
      [&] {
        ForNode::Make(i, Int32(0), IntImmNode::Make(DataType::Int(64), 4), ForKind::kSerial, nop);
      },
      "loop bounds");
  ExpectTypeError(
      [&] {
        ForNode::Make(VarNode::Make("f", kF32), FloatImmNode::Make(kF32, 0),
                      FloatImmNode::Make(kF32, 1), ForKind::kSerial, nop);
      },
      "loop variable must be a scalar integer");
  ExpectTypeError([&] { ForNode::Make(i, Int32(0), Int32(4), ForKind::kThreadBinding, nop); },
                  "thread IterVar");
  // An integer condition is TVM's too (true when nonzero); a float or vector one is refused.
  EXPECT_EQ(IfThenElseNode::Make(i, nop)->condition->dtype, kI32);
  EXPECT_EQ(WhileNode::Make(Int32(1), nop)->condition->dtype, kI32);
  ExpectTypeError([&] { IfThenElseNode::Make(FloatImmNode::Make(kF32, 1), nop); },
                  "if condition must be a scalar bool or integer, got float32");
  ExpectTypeError([&] { WhileNode::Make(BroadcastNode::Make(Bool(true), 4), nop); },
                  "while condition must be a scalar bool or integer, got boolx4");
  ExpectTypeError([&] { AssertStmtNode::Make(i, StringImmNode::Make("m"), nop); },
                  "condition must be a scalar bool");
  ExpectError([&] { SeqStmtNode::Make({nop, nullptr}); }, ErrorKind::kValue, "must not be null");
  ExpectError([&] { EvaluateNode::Make(nullptr); }, ErrorKind::kValue, "must not be null");
}

TEST(IrNodes, BufferRealize) {
  Buffer a = BufferNode::Decl("A", kF32, {Int32(16), Int32(8)});
  Stmt nop = EvaluateNode::Make(Int32(0));
  std::vector<Range> bounds = {RangeNode::Make(Int32(0), Int32(16)),
                               RangeNode::Make(Int32(2), Int32(4))};
  auto realize = BufferRealizeNode::Make(a, bounds, Bool(true), nop);
  EXPECT_EQ(realize->kind, NodeKind::kBufferRealize);
  EXPECT_EQ(realize->buffer, a);
  EXPECT_EQ(realize->bounds.size(), 2u);
  EXPECT_STREQ(NodeKindName(NodeKind::kBufferRealize), "BufferRealize");
  ExpectTypeError([&] { BufferRealizeNode::Make(a, {bounds[0]}, Bool(true), nop); },
                  "one bound per dimension (2), got 1");
  ExpectTypeError([&] { BufferRealizeNode::Make(a, bounds, Int32(1), nop); },
                  "condition must be a scalar bool");
  ExpectError([&] { BufferRealizeNode::Make(a, bounds, Bool(true), nullptr); }, ErrorKind::kValue,
              "must not be null");
}

TEST(IrNodes, ThreadBindingLoop) {
  Var tx = VarNode::Make("threadIdx.x", kI32);
  IterVar iv = IterVarNode::Make(RangeNode::Make(Int32(0), Int32(128)), tx,
                                 IterVarType::kThreadIndex, "threadIdx.x");
  EXPECT_EQ(iv->thread_tag, "threadIdx.x");
  EXPECT_EQ(iv->iter_type, IterVarType::kThreadIndex);
  EXPECT_TRUE(IsConstInt(iv->dom->extent, 128));
  Var i = VarNode::Make("i", kI32);
  For loop =
      ForNode::Make(i, Int32(0), Int32(128), ForKind::kThreadBinding, EvaluateNode::Make(i), iv);
  EXPECT_EQ(loop->thread_binding, iv);
  ExpectTypeError(
      [&] { ForNode::Make(i, Int32(0), Int32(4), ForKind::kSerial, EvaluateNode::Make(i), iv); },
      "thread IterVar");
}

TEST(IrNodes, SeqStmtFlatten) {
  Stmt s1 = EvaluateNode::Make(Int32(1)), s2 = EvaluateNode::Make(Int32(2));
  Stmt s3 = EvaluateNode::Make(Int32(3));
  Stmt nested = SeqStmtNode::Make({s2, s3});
  Stmt flat = SeqStmtNode::Flatten({s1, nested, nullptr});
  auto* seq = AsPtr<SeqStmtNode>(flat);
  ASSERT_NE(seq, nullptr);
  ASSERT_EQ(seq->seq.size(), 3u);
  EXPECT_EQ(seq->seq[0], s1);
  EXPECT_EQ(seq->seq[1], s2);
  EXPECT_EQ(seq->seq[2], s3);

  // One statement stays itself; none becomes a no-op Evaluate.
  EXPECT_EQ(SeqStmtNode::Flatten({s1}), s1);
  EXPECT_EQ(SeqStmtNode::Flatten({nullptr, s2}), s2);
  Stmt empty = SeqStmtNode::Flatten({});
  auto* eval = AsPtr<EvaluateNode>(empty);
  ASSERT_NE(eval, nullptr);
  EXPECT_TRUE(IsConstInt(eval->value, 0));
}

TEST(IrNodes, RangeIterVarArray) {
  Range r = RangeNode::Make(Int32(2), Int32(10));
  EXPECT_EQ(r->kind, NodeKind::kRange);
  EXPECT_TRUE(IsConstInt(r->min, 2));
  ExpectError([] { RangeNode::Make(nullptr, Int32(1)); }, ErrorKind::kValue, "Range min");

  IterVar iv = IterVarNode::Make(r, VarNode::Make("v", kI32), IterVarType::kCommReduce);
  EXPECT_EQ(iv->dom, r);
  EXPECT_TRUE(iv->thread_tag.empty());
  ExpectError([&] { IterVarNode::Make(r, nullptr, IterVarType::kDataPar); }, ErrorKind::kValue,
              "must not be null");

  auto arr = ArrayNode::Make({Int32(1), StringImmNode::Make("s"), r});
  EXPECT_EQ(arr->kind, NodeKind::kArray);
  EXPECT_EQ(arr->items.size(), 3u);
}

// ---- Downcasts and handles ----

TEST(IrNodes, IsInstanceAndDowncasts) {
  Var x = VarNode::Make("x", kI32);
  Expr add = AddNode::Make(x, Int32(1));
  ObjectRef obj = add;
  EXPECT_TRUE(IsInstance<ExprNode>(obj.get()));
  EXPECT_TRUE(IsInstance<BinaryNode>(obj.get()));
  EXPECT_TRUE(IsInstance<AddNode>(obj.get()));
  EXPECT_FALSE(IsInstance<SubNode>(obj.get()));
  EXPECT_FALSE(IsInstance<StmtNode>(obj.get()));
  EXPECT_FALSE(IsInstance<ExprNode>(nullptr));

  Ref<AddNode> as_add = As<AddNode>(obj);
  ASSERT_NE(as_add, nullptr);
  EXPECT_EQ(as_add.get(), add.get());
  EXPECT_EQ(As<MulNode>(obj), nullptr);
  EXPECT_EQ(As<StmtNode>(obj), nullptr);
  EXPECT_EQ(AsPtr<AddNode>(add)->b->kind, NodeKind::kIntImm);
  EXPECT_EQ(AsPtr<VarNode>(add), nullptr);

  Stmt s = EvaluateNode::Make(add);
  EXPECT_TRUE(IsInstance<StmtNode>(s.get()));
  EXPECT_FALSE(IsInstance<ExprNode>(s.get()));
  EXPECT_NE(As<EvaluateNode>(s), nullptr);

  // BinaryNode covers exactly Add..Or; VarNode covers SizeVar.
  EXPECT_FALSE(IsInstance<BinaryNode>(NotNode::Make(Bool(true)).get()));
  EXPECT_TRUE(IsInstance<BinaryNode>(OrNode::Make(Bool(true), Bool(false)).get()));
  EXPECT_TRUE(IsInstance<VarNode>(SizeVarNode::Make("n", kI32).get()));
  EXPECT_FALSE(IsInstance<SizeVarNode>(x.get()));

  // Non-expression nodes are neither expressions nor statements.
  Range r = RangeNode::Make(Int32(0), Int32(1));
  EXPECT_FALSE(IsInstance<ExprNode>(r.get()));
  EXPECT_FALSE(IsInstance<StmtNode>(r.get()));
}

TEST(IrNodes, GetRefSharesOwnership) {
  Expr add = AddNode::Make(VarNode::Make("x", kI32), Int32(1));
  const AddNode* raw = AsPtr<AddNode>(add);
  Ref<AddNode> ref = GetRef(raw);
  EXPECT_EQ(ref.get(), raw);
  EXPECT_EQ(add.use_count(), 2);
  Stmt s = EvaluateNode::Make(add);
  EXPECT_EQ(GetRef(static_cast<const StmtNode*>(s.get())), s);
}

TEST(IrNodes, NodeKindNames) {
  EXPECT_STREQ(NodeKindName(NodeKind::kIntImm), "IntImm");
  EXPECT_STREQ(NodeKindName(NodeKind::kFloorMod), "FloorMod");
  EXPECT_STREQ(NodeKindName(NodeKind::kBufferLoad), "BufferLoad");
  EXPECT_STREQ(NodeKindName(NodeKind::kSeqStmt), "SeqStmt");
  EXPECT_STREQ(NodeKindName(NodeKind::kIRModule), "IRModule");
  EXPECT_TRUE(IsExprKind(NodeKind::kBufferLoad));
  EXPECT_FALSE(IsExprKind(NodeKind::kLetStmt));
  EXPECT_TRUE(IsStmtKind(NodeKind::kEvaluate));
  EXPECT_FALSE(IsStmtKind(NodeKind::kRange));
}

// ---- Functions and modules ----

// f(A_handle, n): for i in [0, 16): A[i] = 1.0
PrimFunc MakeFill(const std::string& name = "fill") {
  Var a_handle = VarNode::Make("A_handle", DataType::Handle());
  Var n = VarNode::Make("n", kI32);
  Buffer a = BufferNode::Decl("A", kF32, {Int32(16)});
  Var i = VarNode::Make("i", kI32);
  Stmt body = ForNode::Make(i, Int32(0), Int32(16), ForKind::kSerial,
                            BufferStoreNode::Make(a, FloatImmNode::Make(kF32, 1.0), {i}));
  return PrimFuncNode::Make({a_handle, n}, {{a_handle, a}}, body, DataType::Void(),
                            {{"global_symbol", StringImmNode::Make(name)}});
}

TEST(IrNodes, PrimFunc) {
  PrimFunc f = MakeFill();
  EXPECT_EQ(f->params.size(), 2u);
  EXPECT_EQ(f->ret_type, DataType::Void());
  EXPECT_EQ(f->GetBuffer(f->params[0]), f->buffer_map[0].second);
  EXPECT_EQ(f->GetBuffer(f->params[1]), nullptr);
  EXPECT_EQ(f->GetStrAttr("global_symbol"), "fill");
  EXPECT_EQ(f->GetStrAttr("missing", "dflt"), "dflt");
  EXPECT_EQ(f->GetIntAttr("global_symbol", 7), 7);  // wrong type falls back

  PrimFunc g = f->WithAttr("tir.noalias", Bool(true));
  EXPECT_EQ(g->GetIntAttr("tir.noalias"), 1);
  EXPECT_EQ(f->attrs.count("tir.noalias"), 0u);  // the original is unchanged
  EXPECT_EQ(g->body, f->body);

  Stmt nop = EvaluateNode::Make(Int32(0));
  PrimFunc h = f->WithBody(nop);
  EXPECT_EQ(h->body, nop);
  EXPECT_EQ(h->params, f->params);
  EXPECT_EQ(h->attrs.size(), f->attrs.size());

  Var stranger = VarNode::Make("B_handle", DataType::Handle());
  ExpectError(
      [&] {
        PrimFuncNode::Make({}, {{stranger, f->buffer_map[0].second}}, nop);
      },
      ErrorKind::kValue, "non-parameter");
  ExpectError([&] { PrimFuncNode::Make({}, {}, nullptr); }, ErrorKind::kValue, "body");
}

TEST(IrNodes, IRModuleLookup) {
  PrimFunc f = MakeFill("f"), g = MakeFill("g");
  IRModule mod = IRModuleNode::Make({{GlobalVarNode::Make("f"), f}, {GlobalVarNode::Make("g"), g}});
  EXPECT_EQ(mod->Lookup("f"), f);
  EXPECT_EQ(mod->Lookup("g"), g);
  EXPECT_EQ(mod->Lookup("h"), nullptr);
  GlobalVar gv = mod->GetGlobalVar("g");
  ASSERT_NE(gv, nullptr);
  EXPECT_EQ(gv->name_hint, "g");
  EXPECT_EQ(mod->Lookup(gv), g);
  EXPECT_EQ(mod->Lookup(GlobalVarNode::Make("f")), f);  // by name, not identity
  EXPECT_EQ(mod->GetGlobalVar("h"), nullptr);

  IRModule main_only = IRModuleNode::FromFunc(f);
  EXPECT_EQ(main_only->functions.size(), 1u);
  EXPECT_EQ(main_only->Lookup("main"), f);

  PrimFunc f2 = MakeFill("f2");
  IRModule replaced = mod->WithFunction(GlobalVarNode::Make("f"), f2);
  EXPECT_EQ(replaced->functions.size(), 2u);
  EXPECT_EQ(replaced->Lookup("f"), f2);
  EXPECT_EQ(mod->Lookup("f"), f);  // the original is unchanged
  IRModule added = mod->WithFunction(GlobalVarNode::Make("h"), f2);
  EXPECT_EQ(added->functions.size(), 3u);
  EXPECT_EQ(added->functions.back().first->name_hint, "h");

  ExpectError(
      [&] {
        IRModuleNode::Make({{GlobalVarNode::Make("f"), f}, {GlobalVarNode::Make("f"), g}});
      },
      ErrorKind::kValue, "defined twice");
}

// ---- Op registry ----

TESSERA_REGISTER_OP("test.fused_multiply_add")
    .set_num_inputs(3)
    .set_effect(CallEffect::kPure)
    .set_attr("c.name", "fma")
    .describe("a * b + c, rounded once.");

TEST(OpRegistry, GetReturnsTheUniqueOp) {
  Op exp = OpNode::Get("tir.exp");
  EXPECT_EQ(exp->name, "tir.exp");
  EXPECT_EQ(exp->num_inputs, 1);
  EXPECT_EQ(exp->effect, CallEffect::kPure);
  EXPECT_EQ(OpNode::Get("tir.exp"), exp);  // ops are unique per name
  EXPECT_TRUE(OpNode::Exists("tir.exp"));
  EXPECT_FALSE(OpNode::Exists("tir.no_such_op"));
}

TEST(OpRegistry, RegisteredInThisTest) {
  Op fma = OpNode::Get("test.fused_multiply_add");
  EXPECT_EQ(fma->num_inputs, 3);
  EXPECT_EQ(fma->GetStrAttr("c.name"), "fma");
  EXPECT_EQ(fma->GetStrAttr("cuda.name", "none"), "none");
  EXPECT_EQ(fma->description, "a * b + c, rounded once.");
  Var x = VarNode::Make("x", kF32);
  EXPECT_EQ(CallNode::Make(kF32, fma, {x, x, x})->op, fma);
}

TEST(OpRegistry, ListNamesIsSorted) {
  std::vector<std::string> names = OpNode::ListNames();
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  EXPECT_NE(std::find(names.begin(), names.end(), "tir.exp"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "test.fused_multiply_add"), names.end());
}

TEST(OpRegistry, UnknownOpThrowsWithSuggestion) {
  ExpectError([] { OpNode::Get("tir.exq"); }, ErrorKind::kAttribute,
              "unknown intrinsic 'tir.exq'; did you mean 'tir.exp'?");
  ExpectError([] { OpNode::Get("completely.unrelated.name"); }, ErrorKind::kAttribute,
              "unknown intrinsic");
}

TEST(OpRegistry, RegisteringTwiceIsAnInternalError) {
  // Uses this file's op, so the registry is left unchanged even if the check regresses.
  EXPECT_THROW(OpRegEntry("test.fused_multiply_add"), InternalError);
}

}  // namespace
}  // namespace tessera
