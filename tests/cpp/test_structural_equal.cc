// Structural equality and hashing: alpha-equivalence, free variables, buffers, failure paths.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tessera/ir/buffer.h"
#include "tessera/ir/expr.h"
#include "tessera/ir/function.h"
#include "tessera/ir/functor.h"
#include "tessera/ir/op.h"
#include "tessera/ir/stmt.h"
#include "tessera/ir/structural_equal.h"
#include "tessera/ir/structural_hash.h"
#include "tessera/support/error.h"

namespace tessera {
namespace {

const DataType kI32 = DataType::Int(32);
const DataType kF32 = DataType::Float(32);

Var I32Var(const std::string& name) { return VarNode::Make(name, kI32); }
Expr F32(double v) { return FloatImmNode::Make(kF32, v); }

// Equal both ways, with equal hashes.
void ExpectEqual(const ObjectRef& a, const ObjectRef& b, bool map_free_vars = false) {
  EXPECT_TRUE(StructuralEqual(a, b, map_free_vars)) << StructuralEqualFailure(a, b, map_free_vars);
  EXPECT_TRUE(StructuralEqual(b, a, map_free_vars)) << StructuralEqualFailure(b, a, map_free_vars);
  EXPECT_EQ(StructuralEqualFailure(a, b, map_free_vars), "");
  EXPECT_EQ(StructuralHash(a, map_free_vars), StructuralHash(b, map_free_vars));
}

// Unequal both ways; returns the failure message of (a, b).
std::string ExpectNotEqual(const ObjectRef& a, const ObjectRef& b, bool map_free_vars = false) {
  EXPECT_FALSE(StructuralEqual(a, b, map_free_vars));
  EXPECT_FALSE(StructuralEqual(b, a, map_free_vars));
  std::string failure = StructuralEqualFailure(a, b, map_free_vars);
  EXPECT_FALSE(failure.empty());
  return failure;
}

// ---- Constants, kinds, dtypes ----

TEST(StructuralEqual, Constants) {
  ExpectEqual(Int32(1), Int32(1));
  ExpectEqual(F32(0.25), F32(0.25));
  ExpectEqual(StringImmNode::Make("abc"), StringImmNode::Make("abc"));
  ExpectNotEqual(StringImmNode::Make("abc"), StringImmNode::Make("abd"));
  ExpectNotEqual(F32(0.25), F32(0.5));
  EXPECT_NE(StructuralHash(Int32(1)), StructuralHash(Int32(2)));
  EXPECT_NE(StructuralHash(F32(1.0)), StructuralHash(F32(2.0)));

  std::string msg = ExpectNotEqual(Int32(1), Int32(2));
  EXPECT_EQ(msg, "root: IntImm 1 vs IntImm 2");
}

TEST(StructuralEqual, FloatSpecialValues) {
  double nan = std::numeric_limits<double>::quiet_NaN();
  ExpectEqual(F32(nan), F32(nan));  // NaN equals NaN here, unlike ==
  ExpectEqual(F32(0.0), F32(-0.0));
  ExpectNotEqual(F32(nan), F32(0.0));
  ExpectEqual(F32(std::numeric_limits<double>::infinity()),
              F32(std::numeric_limits<double>::infinity()));
  // Exact, no tolerance; the message shows enough digits to tell the values apart.
  EXPECT_EQ(ExpectNotEqual(F32(1.0), F32(std::nextafter(1.0, 2.0))),
            "root: FloatImm 1 vs FloatImm 1.0000000000000002");
  EXPECT_EQ(ExpectNotEqual(F32(0.1), F32(0.2)), "root: FloatImm 0.1 vs FloatImm 0.2");
}

TEST(StructuralEqual, DTypeMismatch) {
  std::string msg = ExpectNotEqual(Int32(1), IntImmNode::Make(DataType::Int(64), 1));
  EXPECT_NE(msg.find("dtype int32 vs int64"), std::string::npos) << msg;
  EXPECT_NE(StructuralHash(Int32(1)), StructuralHash(IntImmNode::Make(DataType::Int(64), 1)));
  ExpectNotEqual(FloatImmNode::Make(DataType::Float(16), 1.0), F32(1.0));
  ExpectNotEqual(FloatImmNode::Make(DataType::BFloat16(), 1.0),
                 FloatImmNode::Make(DataType::Float(16), 1.0));
  ExpectNotEqual(BroadcastNode::Make(Int32(1), 4), BroadcastNode::Make(Int32(1), 8));
}

TEST(StructuralEqual, NodeKindMismatch) {
  Var x = I32Var("x");
  Expr add = AddNode::Make(x, Int32(1)), sub = SubNode::Make(x, Int32(1));
  EXPECT_EQ(ExpectNotEqual(add, sub), "root: Add vs Sub");
  EXPECT_NE(StructuralHash(add), StructuralHash(sub));
  EXPECT_NE(StructuralHash(MulNode::Make(x, x)), StructuralHash(DivNode::Make(x, x)));
  EXPECT_NE(StructuralHash(FloorDivNode::Make(x, x)), StructuralHash(FloorModNode::Make(x, x)));
  // Operands are ordered: x - 1 is not 1 - x.
  ExpectNotEqual(sub, SubNode::Make(Int32(1), x));
  EXPECT_NE(StructuralHash(sub), StructuralHash(SubNode::Make(Int32(1), x)));
  // A Var and a SizeVar are different kinds even when mapped freely.
  ExpectNotEqual(I32Var("n"), SizeVarNode::Make("n", kI32), /*map_free_vars=*/true);
  // Null versus a node.
  ExpectNotEqual(Int32(1), nullptr);
  ExpectEqual(nullptr, nullptr);
}

TEST(StructuralEqual, CallsCompareOpsByIdentityAndFunctionsByName) {
  Var f = VarNode::Make("f", kF32);
  Op exp = OpNode::Get("tir.exp"), log = OpNode::Get("tir.log");
  ExpectEqual(CallNode::Make(kF32, exp, {f}), CallNode::Make(kF32, exp, {f}));
  std::string msg = ExpectNotEqual(CallNode::Make(kF32, exp, {f}), CallNode::Make(kF32, log, {f}));
  EXPECT_EQ(msg, "root.op: Op tir.exp vs Op tir.log");
  EXPECT_NE(StructuralHash(CallNode::Make(kF32, exp, {f})),
            StructuralHash(CallNode::Make(kF32, log, {f})));

  // Callees are GlobalVars: two objects with one name are the same function.
  ExpectEqual(CallNode::Make(kI32, GlobalVarNode::Make("sub"), {Int32(1)}),
              CallNode::Make(kI32, GlobalVarNode::Make("sub"), {Int32(1)}));
  ExpectNotEqual(CallNode::Make(kI32, GlobalVarNode::Make("sub"), {Int32(1)}),
                 CallNode::Make(kI32, GlobalVarNode::Make("sub2"), {Int32(1)}));
  msg = ExpectNotEqual(CallNode::Make(kI32, GlobalVarNode::Make("g"), {Int32(1)}),
                       CallNode::Make(kI32, GlobalVarNode::Make("g"), {Int32(1), Int32(2)}));
  // A difference of length is at the first item one side lacks (TVM's array_item_missing).
  EXPECT_EQ(msg, "root.args[1]: 1 elements vs 2 elements");
}

TEST(StructuralEqual, SpansAreIgnored) {
  Var x = I32Var("x");
  Expr a = AddNode::Make(x, Int32(1), Span("a.py", 3, 4));
  Expr b = AddNode::Make(x, IntImmNode::Make(kI32, 1, Span("b.py", 10, 0)));
  ExpectEqual(a, b);
}

// ---- Free variables ----

TEST(StructuralEqual, FreeVariablesMustBeTheSameObjectByDefault) {
  Var x = I32Var("x"), y = I32Var("y"), x2 = I32Var("x");
  ExpectEqual(AddNode::Make(x, Int32(1)), AddNode::Make(x, Int32(1)));
  std::string msg = ExpectNotEqual(AddNode::Make(x, Int32(1)), AddNode::Make(y, Int32(1)));
  EXPECT_NE(msg.find("root.a:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("map_free_vars"), std::string::npos) << msg;
  // Same name, different variable.
  ExpectNotEqual(x, x2);
}

TEST(StructuralEqual, MapFreeVarsPairsThemOneToOne) {
  Var x = I32Var("x"), y = I32Var("y"), u = I32Var("u"), v = I32Var("v");
  ExpectEqual(AddNode::Make(x, y), AddNode::Make(u, v), /*map_free_vars=*/true);
  ExpectEqual(MulNode::Make(AddNode::Make(x, y), x), MulNode::Make(AddNode::Make(u, v), u), true);
  // x + x vs u + v: x is already paired with u.
  std::string msg = ExpectNotEqual(AddNode::Make(x, x), AddNode::Make(u, v), true);
  EXPECT_EQ(msg, "root.b: Var x is bound to Var u, got Var v");
  // x + y vs u + u: u is already paired with x.
  ExpectNotEqual(AddNode::Make(x, y), AddNode::Make(u, u), true);
  // Free variables of different types never pair.
  ExpectNotEqual(x, VarNode::Make("z", DataType::Int(64)), true);
  ExpectNotEqual(VarNode::MakePointer("p", kF32, "global"),
                 VarNode::MakePointer("q", kF32, "shared"), true);
  ExpectEqual(VarNode::MakePointer("p", kF32, "global"), VarNode::MakePointer("q", kF32, "global"),
              true);
}

TEST(StructuralEqual, MapFreeVarsHashesByFirstUse) {
  Var x = I32Var("x"), y = I32Var("y"), u = I32Var("u"), v = I32Var("v");
  Expr a = SubNode::Make(x, y), b = SubNode::Make(u, v), c = SubNode::Make(y, x);
  EXPECT_EQ(StructuralHash(a, true), StructuralHash(b, true));
  EXPECT_EQ(StructuralHash(a, true), StructuralHash(c, true));
  EXPECT_NE(StructuralHash(SubNode::Make(x, x), true), StructuralHash(a, true));
  // Without mapping, free variables hash by identity.
  EXPECT_NE(StructuralHash(a), StructuralHash(b));
  EXPECT_EQ(StructuralHash(a), StructuralHash(SubNode::Make(x, y)));
}

// ---- Bound variables ----

TEST(StructuralEqual, LetIsEqualUpToRenaming) {
  Var a = I32Var("a"), b = I32Var("b");
  Expr la = LetNode::Make(a, Int32(1), AddNode::Make(a, a));
  Expr lb = LetNode::Make(b, Int32(1), AddNode::Make(b, b));
  ExpectEqual(la, lb);

  // The bound variable against a free one.
  Var free = I32Var("free");
  std::string msg = ExpectNotEqual(la, LetNode::Make(b, Int32(1), AddNode::Make(b, free)));
  EXPECT_EQ(msg, "root.body.b: Var a is bound to Var b, got Var free");
  // The value is outside the scope of the binding.
  ExpectNotEqual(LetNode::Make(a, a, a), LetNode::Make(b, b, b));
  ExpectEqual(LetNode::Make(a, free, a), LetNode::Make(b, free, b));
}

TEST(StructuralEqual, LetStmtUsesBoundVariablesByPosition) {
  Var a = I32Var("a"), b = I32Var("b"), c = I32Var("c"), d = I32Var("d");
  auto program = [](Var outer, Var inner, Expr value) {
    return LetStmtNode::Make(outer, Int32(1),
                             LetStmtNode::Make(inner, Int32(2), EvaluateNode::Make(value)));
  };
  Stmt s1 = program(a, b, SubNode::Make(a, b));
  ExpectEqual(s1, program(c, d, SubNode::Make(c, d)));
  // Same shape, but the inner and outer variables are used the other way round.
  Stmt swapped = program(c, d, SubNode::Make(d, c));
  std::string msg = ExpectNotEqual(s1, swapped);
  EXPECT_EQ(msg, "root.body.body.value.a: Var a is bound to Var c, got Var d");
  // Names do not matter, even when they collide the other way round.
  ExpectEqual(program(a, b, SubNode::Make(a, b)), program(b, a, SubNode::Make(b, a)));
}

TEST(StructuralEqual, ForLoopsAreEqualUpToRenaming) {
  Buffer buf = BufferNode::Decl("A", kF32, {Int32(8), Int32(8)});
  auto nest = [&](Var i, Var j, bool transpose) {
    std::vector<Expr> idx = transpose ? std::vector<Expr>{j, i} : std::vector<Expr>{i, j};
    Stmt store = BufferStoreNode::Make(buf, F32(0), idx);
    return ForNode::Make(i, Int32(0), Int32(8), ForKind::kSerial,
                         ForNode::Make(j, Int32(0), Int32(8), ForKind::kParallel, store));
  };
  Stmt s = nest(I32Var("i"), I32Var("j"), false);
  ExpectEqual(s, nest(I32Var("x"), I32Var("y"), false));
  std::string msg = ExpectNotEqual(s, nest(I32Var("x"), I32Var("y"), true));
  EXPECT_NE(msg.find("root.body.body.indices[0]"), std::string::npos) << msg;
  EXPECT_NE(StructuralHash(s), StructuralHash(nest(I32Var("x"), I32Var("y"), true)));

  Var i = I32Var("i");
  Stmt serial = ForNode::Make(i, Int32(0), Int32(8), ForKind::kSerial, EvaluateNode::Make(i));
  Stmt unrolled = ForNode::Make(i, Int32(0), Int32(8), ForKind::kUnrolled, EvaluateNode::Make(i));
  EXPECT_EQ(ExpectNotEqual(serial, unrolled), "root.for_kind: serial vs unroll");
  Stmt annotated = ForNode::Make(i, Int32(0), Int32(8), ForKind::kSerial, EvaluateNode::Make(i),
                                 nullptr, {{"pragma_unroll", Int32(4)}});
  msg = ExpectNotEqual(serial, annotated);
  EXPECT_NE(msg.find("only in the second"), std::string::npos) << msg;
  Stmt annotated2 = ForNode::Make(i, Int32(0), Int32(8), ForKind::kSerial, EvaluateNode::Make(i),
                                  nullptr, {{"pragma_unroll", Int32(2)}});
  EXPECT_EQ(ExpectNotEqual(annotated, annotated2),
            "root.annotations[\"pragma_unroll\"]: IntImm 4 vs IntImm 2");

  // The step (TVM v0.23's For.step): a constant 1 is no step; other steps differ.
  auto stepped = [&](int64_t step) {
    return ForNode::Make(i, Int32(0), Int32(8), ForKind::kSerial, EvaluateNode::Make(i), nullptr,
                         {}, {}, Int32(step));
  };
  EXPECT_EQ(AsPtr<ForNode>(stepped(1))->step, nullptr);
  EXPECT_TRUE(StructuralEqual(serial, stepped(1)));
  msg = ExpectNotEqual(stepped(2), stepped(3));
  EXPECT_NE(msg.find("root.step"), std::string::npos) << msg;
  EXPECT_NE(ExpectNotEqual(serial, stepped(2)).find("root.step"), std::string::npos);
  EXPECT_NE(StructuralHash(stepped(2)), StructuralHash(stepped(3)));
  EXPECT_THROW(stepped(0), Error);
}

TEST(StructuralEqual, ReusedLoopVariableInSiblingScopes) {
  // Passes may reuse one Var object for two sibling loops; scopes keep the pairings apart.
  Var i = I32Var("i"), j = I32Var("j"), k = I32Var("k");
  auto loop = [](Var v, int64_t extent) {
    return ForNode::Make(v, Int32(0), Int32(extent), ForKind::kSerial, EvaluateNode::Make(v));
  };
  Stmt reused = SeqStmtNode::Make({loop(i, 4), loop(i, 8)});
  Stmt distinct = SeqStmtNode::Make({loop(j, 4), loop(k, 8)});
  ExpectEqual(reused, distinct);
  // Shadowing: the inner binding wins inside, the outer one again after it.
  Stmt shadow =
      LetStmtNode::Make(i, Int32(1),
                        SeqStmtNode::Make({LetStmtNode::Make(i, Int32(2), EvaluateNode::Make(i)),
                                           EvaluateNode::Make(i)}));
  Stmt renamed =
      LetStmtNode::Make(j, Int32(1),
                        SeqStmtNode::Make({LetStmtNode::Make(k, Int32(2), EvaluateNode::Make(k)),
                                           EvaluateNode::Make(j)}));
  ExpectEqual(shadow, renamed);
  Stmt wrong =
      LetStmtNode::Make(j, Int32(1),
                        SeqStmtNode::Make({LetStmtNode::Make(k, Int32(2), EvaluateNode::Make(k)),
                                           EvaluateNode::Make(k)}));
  ExpectNotEqual(shadow, wrong);
}

TEST(StructuralEqual, VariableUsedAfterItsScopeIsFree) {
  Var a = I32Var("a"), b = I32Var("b");
  auto program = [](Var v) {
    return SeqStmtNode::Make(
        {LetStmtNode::Make(v, Int32(1), EvaluateNode::Make(v)), EvaluateNode::Make(v)});
  };
  // After the LetStmt, a and b are free (and different) variables.
  std::string msg = ExpectNotEqual(program(a), program(b));
  EXPECT_NE(msg.find("root.seq[1].value"), std::string::npos) << msg;
  ExpectEqual(program(a), program(b), /*map_free_vars=*/true);
}

TEST(StructuralEqual, AllocateBindsItsPointer) {
  Var p = VarNode::MakePointer("p", kF32, "local"), q = VarNode::MakePointer("q", kF32, "local");
  auto alloc = [](Var ptr, int64_t n) {
    Buffer view = BufferNode::Make(ptr, kF32, {Int32(n)});
    return AllocateNode::Make(ptr, kF32, {Int32(n)}, nullptr,
                              BufferStoreNode::Make(view, F32(1), {Int32(0)}));
  };
  ExpectEqual(alloc(p, 16), alloc(q, 16));
  ExpectNotEqual(alloc(p, 16), alloc(q, 32));
  Var shared = VarNode::MakePointer("s", kF32, "shared");
  std::string msg = ExpectNotEqual(alloc(p, 16), alloc(shared, 16));
  EXPECT_NE(msg.find("root.buffer_var"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'shared'"), std::string::npos) << msg;
}

TEST(StructuralEqual, ThreadBindingsAndAttrStmtIterVars) {
  auto kernel = [](const std::string& tag) {
    Var tx = I32Var("tx"), i = I32Var("i");
    IterVar iv =
        IterVarNode::Make(RangeNode::Make(Int32(0), Int32(32)), tx, IterVarType::kThreadIndex, tag);
    Stmt attr = AttrStmtNode::Make(iv, "thread_extent", Int32(32),
                                   EvaluateNode::Make(AddNode::Make(tx, Int32(1))));
    IterVar bind = IterVarNode::Make(nullptr, I32Var("b"), IterVarType::kThreadIndex, "blockIdx.x");
    return ForNode::Make(i, Int32(0), Int32(4), ForKind::kThreadBinding,
                         SeqStmtNode::Make({attr, EvaluateNode::Make(i)}), bind);
  };
  ExpectEqual(kernel("threadIdx.x"), kernel("threadIdx.x"));
  EXPECT_EQ(ExpectNotEqual(kernel("threadIdx.x"), kernel("threadIdx.y")),
            "root.body.seq[0].node.thread_tag: \"threadIdx.x\" vs \"threadIdx.y\"");
}

// ---- Buffers and functions ----

struct FuncOptions {
  double addend = 1.0;
  int64_t fixed_extent = 16;
  std::string buffer_name = "A";
  bool symbolic = true;  // shape (n, fixed_extent) with n bound by the buffer, else (8, ...)
  std::string symbol = "add";
};

// def add(a: handle, b: handle): A = (n, 16), B = (n, 16)
//   for i, j: B[i, j] = A[i, j] + addend
PrimFunc MakeAddFunc(const FuncOptions& o = {}) {
  Var a = VarNode::Make("a", DataType::Handle()), b = VarNode::Make("b", DataType::Handle());
  Expr rows = o.symbolic ? Expr(I32Var("n")) : Int32(8);
  Buffer A = BufferNode::Make(VarNode::MakePointer(o.buffer_name + "_data", kF32, "global"), kF32,
                              {rows, Int32(o.fixed_extent)}, {}, nullptr, o.buffer_name);
  Buffer B = BufferNode::Make(VarNode::MakePointer("B_data", kF32, "global"), kF32,
                              {rows, Int32(o.fixed_extent)}, {}, nullptr, "B");
  Var i = I32Var("i"), j = I32Var("j");
  Stmt store = BufferStoreNode::Make(
      B, AddNode::Make(BufferLoadNode::Make(A, {i, j}), F32(o.addend)), {i, j});
  Stmt body =
      ForNode::Make(i, Int32(0), rows, ForKind::kSerial,
                    ForNode::Make(j, Int32(0), Int32(o.fixed_extent), ForKind::kSerial, store));
  return PrimFuncNode::Make({a, b}, {{a, A}, {b, B}}, body, DataType::Void(),
                            {{"global_symbol", StringImmNode::Make(o.symbol)}});
}

TEST(StructuralEqual, PrimFuncsBuiltTwiceAreEqual) {
  // Every variable and buffer is fresh in each build: parameters, data pointers, the symbolic n.
  ExpectEqual(MakeAddFunc(), MakeAddFunc());
  FuncOptions renamed;
  renamed.buffer_name = "Input";  // buffer names do not matter
  ExpectEqual(MakeAddFunc(), MakeAddFunc(renamed));
  FuncOptions fixed;
  fixed.symbolic = false;
  ExpectEqual(MakeAddFunc(fixed), MakeAddFunc(fixed));
}

TEST(StructuralEqual, PrimFuncDifferences) {
  PrimFunc base = MakeAddFunc();
  FuncOptions o;
  o.addend = 2.0;
  EXPECT_EQ(ExpectNotEqual(base, MakeAddFunc(o)),
            "root.body.body.body.value.b: FloatImm 1 vs FloatImm 2");
  EXPECT_NE(StructuralHash(base), StructuralHash(MakeAddFunc(o)));

  o = {};
  o.fixed_extent = 32;
  EXPECT_EQ(ExpectNotEqual(base, MakeAddFunc(o)),
            "root.buffer_map[a].shape[1]: IntImm 16 vs IntImm 32");

  o = {};
  o.symbolic = false;
  std::string msg = ExpectNotEqual(base, MakeAddFunc(o));
  EXPECT_NE(msg.find("root.buffer_map[a].shape[0]"), std::string::npos) << msg;

  o = {};
  o.symbol = "add2";
  EXPECT_EQ(ExpectNotEqual(base, MakeAddFunc(o)),
            "root.attrs[\"global_symbol\"]: StringImm \"add\" vs StringImm \"add2\"");

  PrimFunc with_attr = base->WithAttr("tir.noalias", Bool(true));
  ExpectNotEqual(base, with_attr);
  ExpectEqual(with_attr, MakeAddFunc()->WithAttr("tir.noalias", Bool(true)));

  PrimFunc returns = PrimFuncNode::Make(base->params, base->buffer_map, base->body,
                                        DataType::Int(32), base->attrs);
  EXPECT_EQ(ExpectNotEqual(base, returns), "root.ret_type: dtype void vs dtype int32");
}

// A variable first seen inside a buffer_map shape expression (x of x * 8) is defined there, as a
// bare shape variable is: two functions differing only in its name are equal.
TEST(StructuralEqual, VariablesInsideBufferShapesAreDefinitions) {
  auto func = [](Var x) {
    Var handle = VarNode::Make("a", DataType::Handle());
    Buffer a = BufferNode::Make(VarNode::MakePointer("A", kF32, "global"), kF32,
                                {MulNode::Make(x, Int32(8))});
    Stmt body = EvaluateNode::Make(AddNode::Make(x, Int32(1)));
    return PrimFuncNode::Make({handle}, {{handle, a}}, body);
  };
  ExpectEqual(func(I32Var("x")), func(I32Var("y")));
  // Outside a definition the variable stays free: the bodies alone differ.
  ExpectNotEqual(func(I32Var("x"))->body, func(I32Var("y"))->body);
}

TEST(StructuralEqual, PrimFuncParametersAreDefinitions) {
  auto scale = [](Var x, Var y, bool swap) {
    Stmt body = EvaluateNode::Make(swap ? SubNode::Make(y, x) : SubNode::Make(x, y));
    return PrimFuncNode::Make({x, y}, {}, body);
  };
  ExpectEqual(scale(I32Var("x"), I32Var("y"), false), scale(I32Var("p"), I32Var("q"), false));
  ExpectNotEqual(scale(I32Var("x"), I32Var("y"), false), scale(I32Var("p"), I32Var("q"), true));
  ExpectNotEqual(scale(I32Var("x"), I32Var("y"), false),
                 PrimFuncNode::Make({I32Var("x")}, {}, EvaluateNode::Make(Int32(0))));
  std::string msg =
      ExpectNotEqual(PrimFuncNode::Make({I32Var("x")}, {}, EvaluateNode::Make(Int32(0))),
                     PrimFuncNode::Make({VarNode::Make("x", DataType::Int(64))}, {},
                                        EvaluateNode::Make(Int32(0))));
  EXPECT_NE(msg.find("root.params[0].dtype"), std::string::npos) << msg;
}

TEST(StructuralEqual, UndeclaredBuffersPairByFieldsAtFirstUse) {
  // Buffers over an Allocate, with no DeclBuffer: compared by fields and paired one to one.
  auto program = [](DataType dtype, bool second_buffer) {
    Var ptr = VarNode::MakePointer("ptr", dtype, "local");
    Buffer view = BufferNode::Make(ptr, dtype, {Int32(4)});
    Buffer other = second_buffer ? BufferNode::Make(ptr, dtype, {Int32(4)}) : view;
    Expr one = MakeConst(dtype, int64_t{1});
    Stmt body = SeqStmtNode::Make({BufferStoreNode::Make(view, one, {Int32(0)}),
                                   BufferStoreNode::Make(other, one, {Int32(1)})});
    return AllocateNode::Make(ptr, dtype, {Int32(4)}, nullptr, body);
  };
  ExpectEqual(program(kF32, false), program(kF32, false));
  ExpectEqual(program(kF32, true), program(kF32, true));
  ExpectNotEqual(program(kF32, false), program(DataType::Float(16), false));
  // One buffer used twice is not two buffers used once each.
  std::string msg = ExpectNotEqual(program(kF32, false), program(kF32, true));
  EXPECT_NE(msg.find("root.body.seq[1].buffer"), std::string::npos) << msg;
}

TEST(StructuralEqual, FreeBuffersCompareByFields) {
  Buffer a1 = BufferNode::Decl("A", kF32, {Int32(4)});
  Buffer a2 = BufferNode::Decl("A", kF32, {Int32(4)});
  Expr l1 = BufferLoadNode::Make(a1, {Int32(0)}), l2 = BufferLoadNode::Make(a2, {Int32(0)});
  // The data pointers are free variables of their own.
  std::string msg = ExpectNotEqual(l1, l2);
  EXPECT_NE(msg.find("root.buffer.data"), std::string::npos) << msg;
  ExpectEqual(l1, l2, /*map_free_vars=*/true);
  ExpectEqual(l1, BufferLoadNode::Make(a1, {Int32(0)}));
}

TEST(StructuralEqual, BindFreeBuffersPairsThemAtFirstUse) {
  Buffer a = BufferNode::Decl("A", kF32, {Int32(4)});
  Buffer b = BufferNode::Decl("B", kF32, {Int32(4)});
  Buffer c = BufferNode::Decl("C", kF32, {Int32(4)});
  auto load = [](const Buffer& buf, int64_t i) { return BufferLoadNode::Make(buf, {Int32(i)}); };
  // Off (the passes' comparison): different data pointers differ.
  EXPECT_FALSE(StructuralEqual(load(a, 0), load(b, 0)));
  EXPECT_TRUE(StructuralEqual(load(a, 0), load(b, 0), false, /*bind_free_buffers=*/true));
  // One to one: A pairs with B, then A against C (or C against B) fails.
  Expr ab = AddNode::Make(load(a, 0), load(a, 1));
  EXPECT_TRUE(StructuralEqual(ab, AddNode::Make(load(b, 0), load(b, 1)), false, true));
  EXPECT_FALSE(StructuralEqual(ab, AddNode::Make(load(b, 0), load(c, 1)), false, true));
  EXPECT_FALSE(StructuralEqual(AddNode::Make(load(a, 0), load(c, 1)),
                               AddNode::Make(load(b, 0), load(b, 1)), false, true));
  // Fields still compare: another shape differs.
  Buffer d = BufferNode::Decl("D", kF32, {Int32(8)});
  EXPECT_NE(StructuralEqualFailure(load(a, 0), load(d, 0), false, true).find("shape"),
            std::string::npos);
}

TEST(StructuralEqual, DeclBufferDefinesTheBuffer) {
  auto program = [](int64_t offset, int alignment) {
    Var ptr = VarNode::MakePointer("p", kF32, "global");
    Buffer buf =
        BufferNode::Make(ptr, kF32, {Int32(8)}, {Int32(1)}, Int32(offset), "buf", alignment);
    Stmt body = BufferStoreNode::Make(buf, F32(0), {Int32(3)});
    return AllocateNode::Make(ptr, kF32, {Int32(8)}, nullptr, DeclBufferNode::Make(buf, body));
  };
  ExpectEqual(program(0, 64), program(0, 64));
  EXPECT_EQ(ExpectNotEqual(program(0, 64), program(2, 64)),
            "root.body.buffer.elem_offset: IntImm 0 vs IntImm 2");
  EXPECT_EQ(ExpectNotEqual(program(0, 64), program(0, 16)),
            "root.body.buffer.data_alignment: 64 vs 16");
}

TEST(StructuralEqual, IRModulesCompareByFunctionName) {
  FuncOptions g_options;
  g_options.symbol = "g";
  auto module = [&](bool reversed) {
    std::vector<std::pair<GlobalVar, PrimFunc>> fns = {
        {GlobalVarNode::Make("f"), MakeAddFunc()},
        {GlobalVarNode::Make("g"), MakeAddFunc(g_options)}};
    if (reversed) std::swap(fns[0], fns[1]);
    return IRModuleNode::Make(fns);
  };
  ExpectEqual(module(false), module(false));
  ExpectEqual(module(false), module(true));  // insertion order does not matter

  IRModule only_f = IRModuleNode::Make({{GlobalVarNode::Make("f"), MakeAddFunc()}});
  EXPECT_EQ(ExpectNotEqual(module(false), only_f),
            "root.functions: function 'g' only in the first module");
  IRModule renamed = IRModuleNode::Make(
      {{GlobalVarNode::Make("f"), MakeAddFunc()}, {GlobalVarNode::Make("h"), MakeAddFunc()}});
  ExpectNotEqual(module(false), renamed);

  IRModule changed = module(false)->WithFunction(GlobalVarNode::Make("g"), MakeAddFunc());
  std::string msg = ExpectNotEqual(module(false), changed);
  EXPECT_EQ(msg,
            "root.functions[\"g\"].attrs[\"global_symbol\"]: StringImm \"g\" vs "
            "StringImm \"add\"");

  IRModule with_attr =
      IRModuleNode::Make(module(false)->functions, {{"target", StringImmNode::Make("c")}});
  ExpectNotEqual(module(false), with_attr);
}

// ---- Other nodes and statements ----

TEST(StructuralEqual, ArraysAndAttributeValues) {
  Var x = I32Var("x");
  auto arr = [](std::vector<ObjectRef> items) { return ArrayNode::Make(std::move(items)); };
  ExpectEqual(arr({Int32(1), StringImmNode::Make("s")}), arr({Int32(1), StringImmNode::Make("s")}));
  ExpectNotEqual(arr({Int32(1)}), arr({Int32(1), Int32(2)}));
  ExpectEqual(arr({RangeNode::Make(Int32(0), Int32(4))}),
              arr({RangeNode::Make(Int32(0), Int32(4))}));
  EXPECT_EQ(ExpectNotEqual(arr({RangeNode::Make(Int32(0), Int32(4))}),
                           arr({RangeNode::Make(Int32(0), Int32(5))})),
            "root[0].extent: IntImm 4 vs IntImm 5");
  ExpectEqual(arr({x, arr({x})}), arr({x, arr({x})}));
}

TEST(StructuralEqual, EveryStatementKind) {
  // One program per statement kind, built twice with fresh variables: equal each time.
  auto build = [](int which, int64_t c) -> Stmt {
    Var v = I32Var("v");
    Var ptr = VarNode::MakePointer("ptr", kI32, "global");
    Buffer buf = BufferNode::Make(ptr, kI32, {Int32(4)});
    Stmt use = EvaluateNode::Make(AddNode::Make(v, Int32(c)));
    Stmt store = BufferStoreNode::Make(buf, Int32(c), {Int32(0)}, LTNode::Make(Int32(0), Int32(1)));
    switch (which) {
      case 0:
        return LetStmtNode::Make(v, Int32(c), use);
      case 1:
        return AttrStmtNode::Make(StringImmNode::Make("k"), "pragma", Int32(c),
                                  EvaluateNode::Make(Int32(0)));
      case 2:
        return AssertStmtNode::Make(Bool(true), StringImmNode::Make("m"),
                                    EvaluateNode::Make(Int32(c)));
      case 3:
        return AllocateNode::Make(ptr, kI32, {Int32(4)}, nullptr, store);
      case 4:
        return AllocateNode::Make(ptr, kI32, {Int32(4)}, nullptr, DeclBufferNode::Make(buf, store));
      case 5:
        return ForNode::Make(v, Int32(0), Int32(4), ForKind::kVectorized, use);
      case 6:
        return WhileNode::Make(Bool(true), EvaluateNode::Make(Int32(c)));
      case 7:
        return IfThenElseNode::Make(Bool(false), EvaluateNode::Make(Int32(c)),
                                    EvaluateNode::Make(Int32(0)));
      default:
        return SeqStmtNode::Make({EvaluateNode::Make(Int32(c)), EvaluateNode::Make(Int32(0))});
    }
  };
  for (int which = 0; which <= 8; ++which) {
    SCOPED_TRACE("statement " + std::to_string(which));
    ExpectEqual(build(which, 1), build(which, 1));
    ExpectNotEqual(build(which, 1), build(which, 2));
    EXPECT_NE(StructuralHash(build(which, 1)), StructuralHash(build(which, 2)));
    for (int other = 0; other < which; ++other) {
      EXPECT_FALSE(StructuralEqual(build(which, 1), build(other, 1))) << other;
    }
  }
}

TEST(StructuralEqual, OptionalFieldsAndFailurePaths) {
  Stmt a = EvaluateNode::Make(Int32(1)), b = EvaluateNode::Make(Int32(2));
  Stmt with_else = IfThenElseNode::Make(Bool(true), a, b);
  Stmt without_else = IfThenElseNode::Make(Bool(true), a);
  EXPECT_EQ(ExpectNotEqual(with_else, without_else), "root.else_case: Evaluate vs null");
  ExpectEqual(without_else, IfThenElseNode::Make(Bool(true), a));

  Var x = I32Var("x");
  Buffer buf = BufferNode::Decl("A", kI32, {Int32(4)});
  auto body = [&](int64_t c) {
    return SeqStmtNode::Make(
        {a, BufferStoreNode::Make(buf, AddNode::Make(x, Int32(c)), {Int32(0)})});
  };
  EXPECT_EQ(ExpectNotEqual(body(1), body(2)), "root.seq[1].value.b: IntImm 1 vs IntImm 2");
  EXPECT_EQ(ExpectNotEqual(SeqStmtNode::Make({a, a}), SeqStmtNode::Make({a})),
            "root.seq[1]: 2 elements vs 1 elements");
}

TEST(StructuralEqual, AssertStructuralEqualThrowsAValueError) {
  EXPECT_NO_THROW(AssertStructuralEqual(MakeAddFunc(), MakeAddFunc()));
  FuncOptions o;
  o.addend = 3.0;
  try {
    AssertStructuralEqual(MakeAddFunc(), MakeAddFunc(o));
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kValue);
    EXPECT_NE(e.message().find("root.body.body.body.value.b"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("FloatImm 1 vs FloatImm 3"), std::string::npos) << e.message();
  }
}

// ---- Hashing ----

TEST(StructuralHash, EqualProgramsHashAlike) {
  // Pairs built independently; each pair must be equal and hash alike.
  std::vector<std::pair<ObjectRef, ObjectRef>> pairs;
  for (bool symbolic : {true, false}) {
    FuncOptions o;
    o.symbolic = symbolic;
    pairs.emplace_back(MakeAddFunc(o), MakeAddFunc(o));
  }
  for (int64_t c : {0, 1, -7}) {
    Var a = I32Var("a"), b = I32Var("b");
    pairs.emplace_back(LetNode::Make(a, Int32(c), MulNode::Make(a, Int32(c))),
                       LetNode::Make(b, Int32(c), MulNode::Make(b, Int32(c))));
  }
  Var x = I32Var("x");
  pairs.emplace_back(RampNode::Make(x, Int32(2), 8), RampNode::Make(x, Int32(2), 8));
  pairs.emplace_back(SelectNode::Make(Bool(true), x, Int32(0)),
                     SelectNode::Make(Bool(true), x, Int32(0)));
  pairs.emplace_back(CastNode::Make(kF32, x), CastNode::Make(kF32, x));
  pairs.emplace_back(IRModuleNode::FromFunc(MakeAddFunc()), IRModuleNode::FromFunc(MakeAddFunc()));
  for (const auto& [a, b] : pairs) ExpectEqual(a, b);
}

TEST(StructuralHash, DistinctSimpleProgramsHashApart) {
  Var x = I32Var("x");
  std::vector<ObjectRef> nodes = {Int32(0),
                                  Int32(1),
                                  IntImmNode::Make(DataType::Int(64), 1),
                                  F32(1.0),
                                  StringImmNode::Make("1"),
                                  x,
                                  AddNode::Make(x, Int32(1)),
                                  SubNode::Make(x, Int32(1)),
                                  AddNode::Make(Int32(1), x),
                                  CastNode::Make(DataType::Int(64), x),
                                  BroadcastNode::Make(x, 4),
                                  RampNode::Make(x, Int32(1), 4),
                                  RampNode::Make(x, Int32(1), 8),
                                  EvaluateNode::Make(x),
                                  MakeAddFunc(),
                                  GlobalVarNode::Make("x"),
                                  OpNode::Get("tir.exp"),
                                  OpNode::Get("tir.log"),
                                  ArrayNode::Make({}),
                                  ArrayNode::Make({Int32(0)})};
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      EXPECT_FALSE(StructuralEqual(nodes[i], nodes[j])) << i << " " << j;
      EXPECT_NE(StructuralHash(nodes[i]), StructuralHash(nodes[j])) << i << " " << j;
    }
  }
}

// Random programs over a few shapes and small constants, so that different seeds often build
// equal programs. Bound variables are fresh on every build; free ones are shared or fresh.
class RandomProgram {
 public:
  RandomProgram(uint32_t seed, std::vector<Var> free_vars, Buffer buffer)
      : rng_(seed),
        depth_(1 + seed % 3),
        free_vars_(std::move(free_vars)),
        buffer_(std::move(buffer)) {}

  Stmt Build() { return GenStmt(depth_); }

 private:
  int Pick(int n) { return static_cast<int>(rng_() % static_cast<uint32_t>(n)); }

  Var AnyVar() {
    int n = static_cast<int>(bound_.size() + free_vars_.size());
    int k = Pick(n);
    return k < static_cast<int>(bound_.size()) ? bound_[k] : free_vars_[k - bound_.size()];
  }

  Expr GenExpr(int depth) {
    switch (depth <= 0 ? Pick(2) : Pick(8)) {
      case 0:
        return Int32(Pick(2));
      case 1:
        return AnyVar();
      case 2:
        return AddNode::Make(GenExpr(depth - 1), GenExpr(depth - 1));
      case 3:
        return SubNode::Make(GenExpr(depth - 1), GenExpr(depth - 1));
      case 4:
        return MinNode::Make(GenExpr(depth - 1), GenExpr(depth - 1));
      case 5: {
        Expr value = GenExpr(depth - 1);
        Var v = I32Var("let" + std::to_string(bound_.size()));
        bound_.push_back(v);
        Expr body = GenExpr(depth - 1);
        bound_.pop_back();
        return LetNode::Make(v, value, body);
      }
      case 6:
        return BufferLoadNode::Make(buffer_, {GenExpr(depth - 1)});
      default:
        return SelectNode::Make(LTNode::Make(GenExpr(depth - 1), GenExpr(depth - 1)),
                                GenExpr(depth - 1), GenExpr(depth - 1));
    }
  }

  Stmt GenStmt(int depth) {
    switch (depth <= 0 ? Pick(2) : Pick(6)) {
      case 0:
        return EvaluateNode::Make(GenExpr(depth));
      case 1:
        return BufferStoreNode::Make(buffer_, GenExpr(depth - 1), {GenExpr(depth - 1)});
      case 2:
      case 3: {
        Var v = I32Var("loop" + std::to_string(bound_.size()));
        Expr extent = Int32(1 + Pick(2));
        bound_.push_back(v);
        Stmt body = GenStmt(depth - 1);
        bound_.pop_back();
        if (Pick(2) == 0) return ForNode::Make(v, Int32(0), extent, ForKind::kSerial, body);
        return LetStmtNode::Make(v, extent, body);
      }
      case 4:
        return SeqStmtNode::Make({GenStmt(depth - 1), GenStmt(depth - 1)});
      default:
        return IfThenElseNode::Make(LTNode::Make(GenExpr(depth - 1), GenExpr(depth - 1)),
                                    GenStmt(depth - 1));
    }
  }

  std::mt19937 rng_;
  int depth_;
  std::vector<Var> bound_;
  std::vector<Var> free_vars_;
  Buffer buffer_;
};

bool HasBinding(const Stmt& s) {
  bool found = false;
  PostOrderVisit(s, [&](const ObjectRef& n) {
    found = found || n->kind == NodeKind::kFor || n->kind == NodeKind::kLetStmt ||
            n->kind == NodeKind::kLet;
  });
  return found;
}

TEST(StructuralHash, EqualImpliesEqualHashOnRandomPrograms) {
  std::vector<Var> shared_free = {I32Var("x"), I32Var("y")};
  Buffer buffer = BufferNode::Decl("A", kI32, {Int32(4)});
  std::vector<Stmt> first, second;
  for (uint32_t seed = 0; seed < 300; ++seed) {
    first.push_back(RandomProgram(seed, shared_free, buffer).Build());
    second.push_back(RandomProgram(seed, shared_free, buffer).Build());
  }
  int equal_across_seeds = 0, equal_with_bindings = 0;
  for (size_t i = 0; i < first.size(); ++i) {
    ExpectEqual(first[i], second[i]);
    ExpectEqual(first[i], second[i], /*map_free_vars=*/true);
    for (size_t j = 0; j < i; ++j) {
      for (bool map_free_vars : {false, true}) {
        if (StructuralEqual(first[i], second[j], map_free_vars)) {
          ++equal_across_seeds;
          if (HasBinding(first[i])) ++equal_with_bindings;
          EXPECT_EQ(StructuralHash(first[i], map_free_vars),
                    StructuralHash(second[j], map_free_vars))
              << i << " " << j;
        }
      }
    }
  }
  // The generator does produce equal pairs from different seeds, some with bound variables.
  EXPECT_GT(equal_across_seeds, 20);
  EXPECT_GT(equal_with_bindings, 0);

  // Fresh free variables per build: equal only with map_free_vars.
  Stmt a = RandomProgram(7, {I32Var("x"), I32Var("y")}, buffer).Build();
  Stmt b = RandomProgram(7, {I32Var("x"), I32Var("y")}, buffer).Build();
  ExpectEqual(a, b, /*map_free_vars=*/true);
}

TEST(StructuralHash, HashContainersDeduplicateEqualPrograms) {
  std::unordered_map<ObjectRef, int, StructuralHashFn, StructuralEqualFn> seen;
  for (int round = 0; round < 3; ++round) {
    ++seen[MakeAddFunc()];
    FuncOptions o;
    o.addend = 5.0;
    ++seen[MakeAddFunc(o)];
  }
  EXPECT_EQ(seen.size(), 2u);
  for (const auto& [func, count] : seen) EXPECT_EQ(count, 3);
}

}  // namespace
}  // namespace tessera
