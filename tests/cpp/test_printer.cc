// TVMScript printer: exact expected text for modules, functions, statements and expressions.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "tessera/ir/buffer.h"
#include "tessera/ir/expr.h"
#include "tessera/ir/function.h"
#include "tessera/ir/op.h"
#include "tessera/ir/printer.h"
#include "tessera/ir/printer_verbose.h"
#include "tessera/ir/stmt.h"

namespace tessera {
namespace {

TESSERA_REGISTER_OP("test_printer.vadd").set_num_inputs(2).set_effect(CallEffect::kPure);

const DataType kI32 = DataType::Int(32);
const DataType kF32 = DataType::Float(32);
// A module's header imports both dialects; a function's only T (as TVM prints them).
const std::string kHeader =
    "# from tessera.script import ir as I\n"
    "# from tessera.script import tir as T\n"
    "\n";
const std::string kFuncHeader =
    "# from tessera.script import tir as T\n"
    "\n";

Var V(const std::string& name, DataType t = kI32) { return VarNode::Make(name, t); }
Expr C(int64_t v) { return Int32(v); }
Expr F(double v) { return FloatImmNode::Make(kF32, v); }
Expr Str(const std::string& s) { return StringImmNode::Make(s); }
Expr Add(Expr a, Expr b) { return AddNode::Make(a, b); }
Expr Sub(Expr a, Expr b) { return SubNode::Make(a, b); }
Expr Mul(Expr a, Expr b) { return MulNode::Make(a, b); }
Expr LT(Expr a, Expr b) { return LTNode::Make(a, b); }
Expr Load(Buffer b, std::vector<Expr> idx) { return BufferLoadNode::Make(b, std::move(idx)); }
Stmt Store(Buffer b, Expr v, std::vector<Expr> idx) {
  return BufferStoreNode::Make(b, v, std::move(idx));
}
Stmt Seq(std::vector<Stmt> s) { return SeqStmtNode::Make(std::move(s)); }
Stmt Eval(Expr e) { return EvaluateNode::Make(e); }
Stmt Nop() { return Eval(C(0)); }
Stmt Loop(Var v, Expr extent, Stmt body) {
  return ForNode::Make(v, C(0), extent, ForKind::kSerial, body);
}
Expr CallOp(const std::string& name, DataType t, std::vector<Expr> args) {
  return CallNode::Make(t, OpNode::Get(name), std::move(args));
}
AttrMap Symbol(const std::string& name) { return {{"global_symbol", Str(name)}}; }

/*! \brief A node and its expected text with the default configuration. */
struct Golden {
  ObjectRef node;
  std::string expected;
};

void ExpectGoldens(const std::vector<Golden>& cases) {
  for (size_t i = 0; i < cases.size(); ++i) {
    EXPECT_EQ(AsScript(cases[i].node), cases[i].expected) << "case " << i;
  }
}

// A 128x128 element-wise add over three buffer parameters.
PrimFunc VectorAddFunc() {
  std::vector<Var> params;
  std::vector<std::pair<Var, Buffer>> buffers;
  for (const char* name : {"A", "B", "C"}) {
    params.push_back(V(name, DataType::Handle()));
    buffers.emplace_back(params.back(), BufferNode::Decl(name, kF32, {C(128), C(128)}));
  }
  Buffer a = buffers[0].second, b = buffers[1].second, c = buffers[2].second;
  Var i = V("i"), j = V("j");
  Stmt body =
      Loop(i, C(128), Loop(j, C(128), Store(c, Add(Load(a, {i, j}), Load(b, {i, j})), {i, j})));
  AttrMap attrs = Symbol("main");
  attrs["tir.noalias"] = Bool(true);
  return PrimFuncNode::Make(params, buffers, body, DataType::Void(), attrs);
}

std::vector<Golden> VectorAddGoldens() {
  return {{VectorAddFunc(), kFuncHeader + "@T.prim_func\n"
                                          "def main(A: T.Buffer((128, 128), \"float32\"), "
                                          "B: T.Buffer((128, 128), \"float32\"), "
                                          "C: T.Buffer((128, 128), \"float32\")):\n"
                                          "    T.func_attr({\"tir.noalias\": True})\n"
                                          "    for i, j in T.grid(128, 128):\n"
                                          "        C[i, j] = A[i, j] + B[i, j]"}};
}

TEST(Printer, VectorAddWithGrid) {
  ExpectGoldens(VectorAddGoldens());
  // Without sugar, loops nest; a bare statement first declares the buffers it uses.
  PrinterConfig cfg;
  cfg.syntax_sugar = false;
  cfg.tir_prefix = "tir";
  cfg.indent_spaces = 2;
  EXPECT_EQ(AsScript(VectorAddFunc()->body, cfg),
            "C = tir.Buffer((128, 128))\n"
            "A = tir.Buffer((128, 128))\n"
            "B = tir.Buffer((128, 128))\n"
            "for i in range(128):\n"
            "  for j in range(128):\n"
            "    C[i, j] = A[i, j] + B[i, j]");
}

// main(a, b, n) loads and stores 8-lane vectors through pointers and calls add_one(n).
std::vector<Golden> PointerModuleGoldens() {
  Var x = V("x");
  PrimFunc add_one = PrimFuncNode::Make({x}, {}, Eval(CallOp("tir.ret", kI32, {Add(x, C(1))})),
                                        kI32, Symbol("add_one"));
  GlobalVar add_one_gv = GlobalVarNode::Make("add_one");

  Var a = VarNode::MakePointer("a", kI32, "global"), b = VarNode::MakePointer("b", kI32, "global");
  Var n = V("n"), i = V("i"), v = V("v", DataType::Int(32, 8));
  Buffer buf_a = BufferNode::Make(a, kI32, {n}, {}, nullptr, "A");
  Buffer buf_b = BufferNode::Make(b, kI32, {n}, {}, nullptr, "B");
  Expr lanes = RampNode::Make(Mul(i, C(8)), C(1), 8);
  Stmt branch =
      IfThenElseNode::Make(LT(i, C(4)), Store(buf_b, Add(v, BroadcastNode::Make(C(1), 8)), {lanes}),
                           Store(buf_b, v, {lanes}));
  Stmt loop =
      Loop(i, FloorDivNode::Make(n, C(8)), LetStmtNode::Make(v, Load(buf_a, {lanes}), branch));
  Stmt body = Seq({loop, Eval(CallNode::Make(kI32, add_one_gv, {n}))});
  PrimFunc main = PrimFuncNode::Make({a, b, n}, {}, body, DataType::Void(), Symbol("main"));
  IRModule mod = IRModuleNode::Make({{GlobalVarNode::Make("main"), main}, {add_one_gv, add_one}});
  // Outside a module a callee prints bare; without global_symbol a function is private.
  PrimFunc anon = PrimFuncNode::Make({n}, {}, Eval(CallNode::Make(kI32, add_one_gv, {n})));
  return {{mod, kHeader + "@I.ir_module\n"
                          "class Module:\n"
                          "    @T.prim_func\n"
                          "    def main(a: T.handle(\"int32\", \"global\"), "
                          "b: T.handle(\"int32\", \"global\"), n: T.int32):\n"
                          "        A = T.Buffer((n,), \"int32\", data=a)\n"
                          "        B = T.Buffer((n,), \"int32\", data=b)\n"
                          "        for i in range(n // 8):\n"
                          "            v: T.int32x8 = A[i * 8:i * 8 + 8]\n"
                          "            if i < 4:\n"
                          "                B[i * 8:i * 8 + 8] = v + T.Broadcast(1, 8)\n"
                          "            else:\n"
                          "                B[i * 8:i * 8 + 8] = v\n"
                          "        T.evaluate(cls.add_one(n))\n"
                          "\n"
                          "    @T.prim_func\n"
                          "    def add_one(x: T.int32) -> T.int32:\n"
                          "        return x + 1"},
          {anon, kFuncHeader + "@T.prim_func(private=True)\n"
                               "def main(n: T.int32):\n"
                               "    T.evaluate(add_one(n))"}};
}

TEST(Printer, ModuleWithPointersVectorsBranchesAndCalls) { ExpectGoldens(PointerModuleGoldens()); }

std::vector<Golden> AttributeGoldens() {
  Var n = V("n");
  AttrMap attrs = Symbol("kernel");
  attrs["a.int"] = IntImmNode::Make(DataType::Int(64), 7);
  attrs["b.float"] = F(0.5);
  attrs["c.str"] = Str("x\"y");
  attrs["d.list"] = ArrayNode::Make({C(1), Bool(false)});
  PrimFunc f = PrimFuncNode::Make({n}, {}, Nop(), DataType::Bool(), attrs);
  const std::string attr_line =
      "    T.func_attr({\"a.int\": 7, \"b.float\": 0.5, \"c.str\": \"x\\\"y\", "
      "\"d.list\": [1, False]";
  // In a module under another name, global_symbol is kept; "tir.private" makes it private.
  IRModule mod = IRModuleNode::FromFunc(f->WithAttr("tir.private", Bool(true)), "other");
  // A symbol that is not an identifier names the function after sanitising and stays an attr.
  PrimFunc dotted = PrimFuncNode::Make({}, {}, Nop(), DataType::Void(), Symbol("my.kernel"));
  return {{dotted, kFuncHeader + "@T.prim_func\n"
                                 "def my_kernel():\n"
                                 "    T.func_attr({\"global_symbol\": \"my.kernel\"})\n"
                                 "    T.evaluate(0)"},
          {f, kFuncHeader + "@T.prim_func\ndef kernel(n: T.int32) -> T.bool:\n" + attr_line +
                  "})\n    T.evaluate(0)"},
          {mod, kHeader +
                    "@I.ir_module\nclass Module:\n"
                    "    @T.prim_func(private=True)\n"
                    "    def other(n: T.int32) -> T.bool:\n    " +
                    attr_line +
                    ", \"global_symbol\": \"kernel\", \"tir.private\": True})\n"
                    "        T.evaluate(0)"}};
}

TEST(Printer, FunctionAttributesAndReturnType) { ExpectGoldens(AttributeGoldens()); }

std::vector<Golden> ParameterGoldens() {
  // A's keywords are all non-default; B's shape uses a variable that no parameter defines, so
  // it is bound by T.match_buffer in the body.
  Var a = V("a", DataType::Handle()), b = V("b", DataType::Handle()), n = V("n"), m = V("m");
  Var data_a = VarNode::MakePointer("A", kF32, "shared");
  Buffer buf_a = BufferNode::Make(data_a, kF32, {C(4), n}, {n, C(1)}, C(2), "A", 16, 4);
  Buffer buf_b = BufferNode::Decl("B", DataType::Float(16), {m});
  PrimFunc f = PrimFuncNode::Make({n, a, b}, {{a, buf_a}, {b, buf_b}},
                                  Store(buf_b, Load(buf_b, {C(0)}), {Sub(m, C(1))}),
                                  DataType::Void(), Symbol("main"));
  // A buffer parameter's data pointer prints as `A.data`.
  Var h = V("A", DataType::Handle());
  Buffer buf_h = BufferNode::Decl("A", kF32, {C(4)});
  Stmt use = Eval(CallOp("tir.call_extern", kI32, {Str("use"), buf_h->data}));
  PrimFunc g = PrimFuncNode::Make({h}, {{h, buf_h}}, use, DataType::Void(), Symbol("main"));
  return {{f, kFuncHeader +
                  "@T.prim_func\n"
                  // As TVM: only a plain buffer is a parameter's annotation.
                  "def main(n: T.int32, a: T.handle, b: T.handle):\n"
                  "    m = T.int32()\n"
                  "    A = T.match_buffer(a, (4, n), strides=(n, 1), elem_offset=2, "
                  "scope=\"shared\", align=16, offset_factor=4)\n"
                  "    B = T.match_buffer(b, (m,), \"float16\")\n"
                  "    B[m - 1] = B[0]"},
          {g, kFuncHeader + "@T.prim_func\n"
                            "def main(A: T.Buffer((4,), \"float32\")):\n"
                            "    T.evaluate(T.call_extern(\"int32\", \"use\", A.data))"}};
}

TEST(Printer, BufferParametersAndMatchBuffer) { ExpectGoldens(ParameterGoldens()); }

std::vector<Golden> NameGoldens() {
  Buffer buf = BufferNode::Decl("x", kI32, {C(4)});
  Var i1 = V("i"), i2 = V("i"), empty = V(""), keyword = V("in"), dotted = V("i.outer");
  Var x = V("x"), t = V("T");
  Stmt body = Seq({Loop(i1, C(4), Store(buf, i1, {i1})), Loop(i2, C(4), Store(buf, i2, {i2})),
                   Loop(empty, C(2), Loop(keyword, C(2), Loop(dotted, empty, Nop()))),
                   LetStmtNode::Make(x, t, Store(buf, x, {C(0)}))});
  return {{body,
           "T_1 = T.int32()\n"
           "x = T.Buffer((4,), \"int32\")\n"
           "for i in range(4):\n"
           "    x[i] = i\n"
           "for i in range(4):\n"
           "    x[i] = i\n"
           "for v, in_1 in T.grid(2, 2):\n"
           "    for i_outer in range(v):\n"
           "        T.evaluate(0)\n"
           "x_1: T.int32 = T_1\n"
           "x[0] = x_1"}};
}

TEST(Printer, NameDeduplication) { ExpectGoldens(NameGoldens()); }

std::vector<Golden> ExpressionGoldens() {
  Var a = V("a"), b = V("b");
  Var p = V("p", DataType::Bool()), q = V("q", DataType::Bool());
  Var fx = V("fx", kF32), fy = V("fy", kF32);
  Var vec = V("vec", DataType::Int(32, 4));
  Buffer buf = BufferNode::Decl("A", kF32, {C(16)});
  Buffer scalar = BufferNode::Decl("S", kF32, {});
  Expr ramp = RampNode::Make(a, C(1), 4);
  Var t = V("t");
  const double inf = std::numeric_limits<double>::infinity();
  return {
      {C(1), "1"},
      {C(-3), "-3"},
      {IntImmNode::Make(DataType::Int(8), 1), "T.int8(1)"},
      {IntImmNode::Make(DataType::Int(64), 5), "T.int64(5)"},
      {IntImmNode::Make(DataType::UInt(64), -1), "T.uint64(18446744073709551615)"},
      {Bool(true), "T.bool(True)"},
      {Bool(false), "T.bool(False)"},
      {F(1.5), "T.float32(1.5)"},
      {F(100), "T.float32(100.0)"},
      {F(0.1), "T.float32(0.1)"},
      {F(1e-7), "T.float32(1e-07)"},
      {F(1e20), "T.float32(1e+20)"},
      {F(-2.25), "T.float32(-2.25)"},
      {FloatImmNode::Make(DataType::Float(64), 1.0 / 3), "T.float64(0.3333333333333333)"},
      {F(inf), "T.float32(\"inf\")"},
      {F(-inf), "T.float32(\"-inf\")"},
      {F(std::nan("")), "T.float32(\"nan\")"},
      // (A string of several lines prints as metadata: MultiLineStringsPrintAsMetadata.)
      {Str("a\"b\\c\td\x01"), "\"a\\\"b\\\\c\\td\\x01\""},
      {a, "a"},
      {SizeVarNode::Make("s", kI32), "s"},
      {CastNode::Make(kF32, a), "T.Cast(\"float32\", a)"},
      {Add(a, b), "a + b"},
      {Sub(a, b), "a - b"},
      {Mul(a, b), "a * b"},
      {DivNode::Make(a, b), "T.Div(a, b)"},
      {DivNode::Make(fx, fy), "fx / fy"},
      {ModNode::Make(a, b), "T.truncmod(a, b)"},
      {FloorDivNode::Make(a, b), "a // b"},
      {FloorModNode::Make(a, b), "a % b"},
      {MinNode::Make(a, b), "T.min(a, b)"},
      {MaxNode::Make(a, b), "T.max(a, b)"},
      {EQNode::Make(a, b), "a == b"},
      {NENode::Make(a, b), "a != b"},
      {LT(a, b), "a < b"},
      {LENode::Make(a, b), "a <= b"},
      {GTNode::Make(a, b), "a > b"},
      {GENode::Make(a, b), "a >= b"},
      {AndNode::Make(p, q), "p and q"},
      {OrNode::Make(p, q), "p or q"},
      {NotNode::Make(p), "not p"},
      {SelectNode::Make(p, a, b), "T.Select(p, a, b)"},
      {ramp, "T.Ramp(a, 1, 4)"},
      {RampNode::Make(C(0), C(2), 4), "T.Ramp(0, 2, 4)"},
      {BroadcastNode::Make(F(0), 8), "T.Broadcast(T.float32(0.0), 8)"},
      {ShuffleNode::Make({vec, vec}, {C(0), C(5)}), "T.Shuffle([vec, vec], [0, 5])"},
      {LetNode::Make(t, Add(a, C(1)), Mul(t, t)), "T.Let(t * t, where={t: a + 1})"},
      {CallOp("tir.exp", kF32, {fx}), "T.exp(fx)"},
      {CallOp("tir.call_extern", kF32, {Str("expf"), fx}),
       "T.call_extern(\"float32\", \"expf\", fx)"},
      {CallOp("tir.reinterpret", kI32, {fx}), "T.reinterpret(\"int32\", fx)"},
      {CallOp("test_printer.vadd", DataType::Int(32, 4), {vec, vec}),
       "T.call_intrin(\"int32x4\", \"test_printer.vadd\", vec, vec)"},
      {CallNode::Make(kI32, GlobalVarNode::Make("f"), {a, C(2)}), "f(a, 2)"},
      {Load(buf, {a}), "A[a]"},
      {Load(buf, {ramp}), "A[a:a + 4]"},
      {Load(buf, {RampNode::Make(C(4), C(1), 4)}), "A[4:8]"},
      {Load(buf, {RampNode::Make(C(0), C(2), 4)}), "A[T.Ramp(0, 2, 4)]"},
      {BufferLoadNode::Make(buf, {ramp}, BroadcastNode::Make(Bool(true), 4)),
       "A.vload([T.Ramp(a, 1, 4)], predicate=T.Broadcast(T.bool(True), 4))"},
      {Load(scalar, {}), "S[()]"},
      // Python folds an operator between two int literals; one keeps its T.int32 to stay a node.
      {Add(C(1), C(2)), "T.Add(1, 2)"},
      {LT(C(-1), C(2)), "T.LT(-1, 2)"},
      {Mul(F(1.5), F(2)), "T.Mul(T.float32(1.5), T.float32(2.0))"},
  };
}

TEST(Printer, ExpressionKinds) {
  ExpectGoldens(ExpressionGoldens());
  PrinterConfig cfg;
  cfg.syntax_sugar = false;
  Buffer buf = BufferNode::Decl("A", kF32, {C(16)});
  EXPECT_EQ(AsScript(Load(buf, {RampNode::Make(V("a"), C(1), 4)}), cfg), "A[T.Ramp(a, 1, 4)]");
}

// TVM's verbose_expr: an expression printed alone declares its free variables and buffers.
TEST(Printer, VerboseExpressionDeclaresWhatItUses) {
  PrinterConfig cfg;
  Var a = V("a", kF32);
  Buffer buf = BufferNode::Decl("A", DataType::Float(16), {C(8)});
  EXPECT_EQ(AsVerboseScript(a, cfg), "a = T.float32()\na");
  EXPECT_EQ(AsVerboseScript(Add(V("i"), V("j")), cfg), "i = T.int32()\nj = T.int32()\ni + j");
  EXPECT_EQ(AsVerboseScript(buf, cfg), "A = T.Buffer((8,), \"float16\")\nA");
  EXPECT_EQ(AsVerboseScript(Load(buf, {V("k")}), cfg),
            "k = T.int32()\nA = T.Buffer((8,), \"float16\")\nA[k]");
  // Without it, as before: no declarations.
  EXPECT_EQ(AsScript(a, cfg), "a");
  EXPECT_EQ(AsScript(buf, cfg), "T.Buffer((8,), \"float16\")");
}

std::vector<Golden> PrecedenceGoldens() {
  Var a = V("a"), b = V("b"), c = V("c");
  Var p = V("p", DataType::Bool()), q = V("q", DataType::Bool()), r = V("r", DataType::Bool());
  return {
      {Mul(Add(a, b), c), "(a + b) * c"},
      {Add(Mul(a, b), c), "a * b + c"},
      {Add(a, Mul(b, c)), "a + b * c"},
      {Sub(a, Sub(b, c)), "a - (b - c)"},
      {Sub(Sub(a, b), c), "a - b - c"},
      {Add(a, Add(b, c)), "a + (b + c)"},
      {FloorDivNode::Make(a, Mul(b, c)), "a // (b * c)"},
      {Mul(FloorModNode::Make(a, b), c), "a % b * c"},
      {Sub(a, C(-1)), "a - -1"},
      {Mul(C(-1), a), "-1 * a"},
      {LT(Add(a, b), c), "a + b < c"},
      {EQNode::Make(LT(a, b), p), "(a < b) == p"},
      {EQNode::Make(p, LT(a, b)), "p == (a < b)"},
      {AndNode::Make(OrNode::Make(p, q), r), "(p or q) and r"},
      {OrNode::Make(AndNode::Make(p, q), r), "p and q or r"},
      {AndNode::Make(p, AndNode::Make(q, r)), "p and (q and r)"},
      {NotNode::Make(AndNode::Make(p, q)), "not (p and q)"},
      {NotNode::Make(LT(a, b)), "not a < b"},
      {EQNode::Make(NotNode::Make(p), q), "(not p) == q"},
      {AndNode::Make(NotNode::Make(p), LT(a, b)), "not p and a < b"},
      {MinNode::Make(Add(a, b), c), "T.min(a + b, c)"},
  };
}

TEST(Printer, OperatorPrecedence) { ExpectGoldens(PrecedenceGoldens()); }

std::vector<Golden> ForGoldens() {
  Buffer buf = BufferNode::Decl("A", kI32, {C(64)});
  Var i = V("i"), n = V("n");
  auto loop = [&](ForKind kind, Expr min, Expr extent, AttrMap ann = {}, IterVar iv = nullptr) {
    return ForNode::Make(i, min, extent, kind, Store(buf, i, {i}), iv, ann);
  };
  const std::string decl = "A = T.Buffer((64,), \"int32\")\n";
  const std::string store = ":\n    A[i] = i";
  IterVar tx = IterVarNode::Make(nullptr, V("tx"), IterVarType::kThreadIndex, "threadIdx.x");
  // A grid stops at a loop whose extent depends on an outer loop of the chain.
  Var j = V("j"), k = V("k");
  Stmt nest = Loop(i, C(4), Loop(j, C(4), Loop(k, j, Store(buf, k, {k}))));
  return {
      {loop(ForKind::kSerial, C(0), C(8)), decl + "for i in range(8)" + store},
      {loop(ForKind::kSerial, C(2), C(8)), decl + "for i in range(2, 10)" + store},
      {loop(ForKind::kSerial, n, C(8)),
       "n = T.int32()\n" + decl + "for i in range(n, n + 8)" + store},
      {loop(ForKind::kSerial, C(0), C(8), {{"pragma_unroll", C(1)}}),
       decl + "for i in T.serial(8, annotations={\"pragma_unroll\": 1})" + store},
      {loop(ForKind::kParallel, C(0), C(8)), decl + "for i in T.parallel(8)" + store},
      {loop(ForKind::kVectorized, C(0), C(8)), decl + "for i in T.vectorized(8)" + store},
      {loop(ForKind::kUnrolled, C(4), C(4)), decl + "for i in T.unroll(4, 8)" + store},
      {loop(ForKind::kThreadBinding, C(0), C(32), {}, tx),
       decl + "for i in T.thread_binding(32, thread=\"threadIdx.x\")" + store},
      {nest, decl + "for i, j in T.grid(4, 4):\n    for k in range(j):\n        A[k] = k"},
  };
}

TEST(Printer, ForKinds) { ExpectGoldens(ForGoldens()); }

std::vector<Golden> BinderGoldens() {
  Var ptr = VarNode::MakePointer("buf", kF32, "shared"), n = V("n"), x = V("x");
  Buffer view = BufferNode::Make(ptr, kF32, {C(16)}, {}, nullptr, "B");
  Buffer strided = BufferNode::Make(ptr, kF32, {C(4), C(4)}, {C(8), C(1)}, n, "S");
  // Allocate -> DeclBuffer -> stores; S, a buffer without a declaration over the same storage,
  // is declared right after the allocation.
  Stmt inner = Seq({Store(view, F(0), {C(0)}), Store(strided, F(1), {C(1), C(2)})});
  Stmt alloc = AllocateNode::Make(ptr, kF32, {C(16)}, nullptr, DeclBufferNode::Make(view, inner));
  // Not in tail position, binders print as `with` scopes.
  Stmt let = LetStmtNode::Make(x, Add(n, C(1)), Eval(x));
  Stmt check = AssertStmtNode::Make(LT(n, C(8)), Str("n too big"), Nop());
  Stmt seq =
      Seq({let, check,
           AllocateNode::Make(ptr, kF32, {n}, LT(n, C(4)), DeclBufferNode::Make(view, Nop())),
           Eval(C(1))});
  Var h = VarNode::MakePointer("h", kF32, "global");
  return {
      {alloc,
       // An allocation with its buffer is one T.decl_buffer, scoped when printed alone.
       "n = T.int32()\n"
       "with T.decl_buffer((16,), scope=\"shared\") as B:\n"
       "    S = T.Buffer((4, 4), data=B.data, strides=(8, 1), elem_offset=n)\n"
       "    B[0] = T.float32(0.0)\n"
       "    S[1, 2] = T.float32(1.0)"},
      {seq,
       "n = T.int32()\n"
       "with T.LetStmt(n + 1) as x:\n"
       "    T.evaluate(x)\n"
       "with T.Assert(n < 8, \"n too big\"):\n"
       "    T.evaluate(0)\n"
       "with T.allocate([n], \"float32\", \"shared\", condition=n < 4) as buf:\n"
       "    B = T.decl_buffer((16,), data=buf)\n"
       "    T.evaluate(0)\n"
       "T.evaluate(1)"},
      {Seq({Eval(C(1)), let}), "n = T.int32()\nT.evaluate(1)\nx: T.int32 = n + 1\nT.evaluate(x)"},
      {check, "n = T.int32()\nwith T.Assert(n < 8, \"n too big\"):\n    T.evaluate(0)"},
      // Handle-typed lets carry their pointer type.
      {LetStmtNode::Make(h, ptr, Nop()),
       "buf = T.handle(\"float32\", \"shared\")\n"
       "with T.LetStmt(buf, type_annotation=T.handle(\"float32\", \"global\")) as h:\n"
       "    T.evaluate(0)"},
      {Seq({LetStmtNode::Make(h, ptr, Nop()), Nop()}),
       "buf = T.handle(\"float32\", \"shared\")\n"
       "with T.LetStmt(buf, type_annotation=T.handle(\"float32\", \"global\")) as h:\n"
       "    T.evaluate(0)\n"
       "T.evaluate(0)"},
  };
}

TEST(Printer, BindersAndScopes) { ExpectGoldens(BinderGoldens()); }

std::vector<Golden> ControlGoldens() {
  Var n = V("n");
  Var ptr = VarNode::MakePointer("buf", kF32, "shared");
  IterVar tx = IterVarNode::Make(nullptr, V("tx"), IterVarType::kThreadIndex, "threadIdx.x");
  Stmt attrs =
      AttrStmtNode::Make(tx, "thread_extent", C(64),
                         AttrStmtNode::Make(ptr, "storage_alignment", C(16), Eval(tx->var)));
  Buffer buf = BufferNode::Decl("A", kI32, {C(8)});
  Expr ramp = RampNode::Make(C(0), C(1), 4);
  Expr mask = BroadcastNode::Make(Bool(true), 4);
  Expr sevens = BroadcastNode::Make(C(7), 4);
  return {
      {WhileNode::Make(LT(n, C(10)), IfThenElseNode::Make(LT(n, C(5)), Eval(n))),
       "n = T.int32()\nwhile n < 10:\n    if n < 5:\n        T.evaluate(n)"},
      {attrs,
       "tx = T.env_thread(\"threadIdx.x\")\n"
       "buf = T.handle(\"float32\", \"shared\")\n"
       "with T.launch_thread(tx, 64):\n"
       "    with T.attr(buf, \"storage_alignment\", 16):\n"
       "        T.evaluate(tx)"},
      {AttrStmtNode::Make(nullptr, "pragma", Str("x"), Nop()),
       "with T.attr(None, \"pragma\", \"x\"):\n    T.evaluate(0)"},
      {BufferStoreNode::Make(buf, sevens, {ramp}, mask),
       "A = T.Buffer((8,), \"int32\")\n"
       "A.vstore([T.Ramp(0, 1, 4)], T.Broadcast(7, 4), predicate=T.Broadcast(T.bool(True), 4))"},
      {Store(buf, sevens, {ramp}), "A = T.Buffer((8,), \"int32\")\nA[0:4] = T.Broadcast(7, 4)"},
  };
}

TEST(Printer, ControlFlowAttributesAndPredicates) { ExpectGoldens(ControlGoldens()); }

TEST(Printer, OtherObjectsAndOptions) {
  EXPECT_EQ(AsScript(nullptr), "None");
  EXPECT_EQ(AsScript(RangeNode::Make(C(2), C(3))), "I.Range(2, 5)");  // as TVM prints it alone
  EXPECT_EQ(AsScript(BufferNode::Decl("A", kF32, {C(2)}, "local")),
            "T.Buffer((2,), scope=\"local\")");
  EXPECT_EQ(AsScript(ArrayNode::Make({C(1), Str("s")})), "[1, \"s\"]");
  EXPECT_EQ(AsScript(IRModuleNode::Make({})), kHeader + "@I.ir_module\nclass Module:\n    pass");

  PrinterConfig cfg;
  cfg.print_line_numbers = true;
  cfg.ir_prefix = "ir";
  PrimFunc f = PrimFuncNode::Make({}, {}, Nop(), DataType::Void(), Symbol("main"));
  EXPECT_EQ(AsScript(IRModuleNode::FromFunc(f), cfg),
            "1 # from tessera.script import ir as ir\n"
            "2 # from tessera.script import tir as T\n"
            "3\n"
            "4 @ir.ir_module\n"
            "5 class Module:\n"
            "6     @T.prim_func\n"
            "7     def main():\n"
            "8         T.evaluate(0)");
}

// Every golden text is valid Python (checked with the interpreter when there is one).
TEST(Printer, OutputIsValidPython) {
  if (std::system("python3 -c 'import ast' > /dev/null 2>&1") != 0) {
    GTEST_SKIP() << "python3 is not available";
  }
  std::string source;
  for (const auto& goldens :
       {VectorAddGoldens(), PointerModuleGoldens(), AttributeGoldens(), ParameterGoldens(),
        NameGoldens(), ExpressionGoldens(), PrecedenceGoldens(), ForGoldens(), BinderGoldens(),
        ControlGoldens()}) {
    for (const Golden& g : goldens) source += AsScript(g.node) + "\n";
  }
  std::string path = ::testing::TempDir() + "tessera_printer_check.py";
  std::ofstream(path) << source;
  std::string cmd = "python3 -c \"import ast,sys; ast.parse(open(sys.argv[1]).read())\" " + path;
  EXPECT_EQ(std::system(cmd.c_str()), 0) << source;
  std::remove(path.c_str());
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

TEST(Printer, MultiLineStringsPrintAsMetadata) {
  // As TVM: one metadata entry per string object; equal strings of two objects are two entries.
  Expr text = Str("a\nb");
  Var s = V("s", DataType::Handle());
  Stmt body = LetStmtNode::Make(
      s, text, Seq({Eval(CallOp("tir.call_extern", kI32, {Str("puts"), text})),
                    Eval(CallOp("tir.call_extern", kI32, {Str("puts"), Str("a\nb")}))}));
  PrimFunc f = PrimFuncNode::Make({}, {}, body, DataType::Void(), Symbol("main"));
  std::string printed = AsScript(f);
  EXPECT_EQ(printed,
            kFuncHeader +
                "@T.prim_func\n"
                "def main():\n"
                "    s: T.handle = metadata[\"tir.StringImm\"][0]\n"
                "    T.evaluate(T.call_extern(\"int32\", \"puts\", metadata[\"tir.StringImm\"][0]))\n"
                "    T.evaluate(T.call_extern(\"int32\", \"puts\", metadata[\"tir.StringImm\"][1]))\n"
                "\n"
                "# Metadata not shown: print with script(show_meta=True) to include it.");
  PrinterConfig cfg;
  cfg.show_meta = true;
  std::string shown = AsScript(f, cfg);
  EXPECT_EQ(shown.substr(0, shown.find('\n')),
            "metadata = tessera.ir.load_json(\"\"\"{\\\"format\\\": \\\"tessera-metadata\\\", "
            "\\\"version\\\": 1, \\\"metadata\\\": {\\\"tir.StringImm\\\": [\\\"a\\\\nb\\\", "
            "\\\"a\\\\nb\\\"]}}\"\"\")");
  EXPECT_EQ(shown.find("Metadata not shown"), std::string::npos);
  EXPECT_EQ(AsScript(Str("one line")), "\"one line\"");
}

}  // namespace
}  // namespace tessera
