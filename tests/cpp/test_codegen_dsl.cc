// Golden tests of CodeGenDSL: hand-built DSL IR printed as OpenCL-C-style source.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "tessera/ir/function.h"
#include "tessera/ir/op.h"
#include "tessera/support/error.h"
#include "tessera/target/codegen_dsl.h"

namespace tessera {
namespace {

DataType T(const char* name) { return DataType::Parse(name); }
Expr I32(int64_t v) { return IntImmNode::Make(DataType::Int(32), v); }

Var Ptr(const std::string& name, const char* elem = "int32", const char* scope = "global") {
  return VarNode::MakePointer(name, T(elem), scope);
}

// The unbounded flat buffer the front end declares over a pointer parameter.
Buffer FlatBuffer(const Var& ptr) {
  return BufferNode::Make(ptr, ptr->pointer->element, {I32(2147483647)}, {}, nullptr, ptr->name);
}

Expr Load(const Buffer& buf, Expr index, Expr predicate = nullptr) {
  return BufferLoadNode::Make(buf, {std::move(index)}, std::move(predicate));
}
Stmt Store(const Buffer& buf, Expr value, Expr index, Expr predicate = nullptr) {
  return BufferStoreNode::Make(buf, std::move(value), {std::move(index)}, std::move(predicate));
}
Expr Ramp(Expr base, int64_t stride, int lanes) { return RampNode::Make(base, I32(stride), lanes); }
Stmt Seq(std::vector<Stmt> s) { return SeqStmtNode::Make(std::move(s)); }

using BodyFn = std::function<Stmt(const std::vector<Buffer>&)>;

// A function as the front end builds it: a DeclBuffer per pointer parameter around the body.
PrimFunc Func(const std::string& name, std::vector<Var> params, bool entry, DataType ret,
              const BodyFn& body) {
  std::vector<Buffer> bufs;
  for (const Var& p : params) bufs.push_back(p->pointer ? FlatBuffer(p) : nullptr);
  Stmt s = body(bufs);
  for (size_t i = bufs.size(); i-- > 0;) {
    if (bufs[i]) s = DeclBufferNode::Make(bufs[i], s);
  }
  AttrMap attrs;
  attrs["global_symbol"] = StringImmNode::Make(name);
  if (entry) attrs["tessera.is_entry"] = I32(1);
  return PrimFuncNode::Make(std::move(params), {}, s, ret, std::move(attrs));
}
PrimFunc Kernel(const std::string& name, std::vector<Var> params, const BodyFn& body) {
  return Func(name, std::move(params), true, DataType::Void(), body);
}
PrimFunc Subroutine(const std::string& name, std::vector<Var> params, DataType ret,
                    const BodyFn& body) {
  return Func(name, std::move(params), false, ret, body);
}

IRModule Module(std::vector<std::pair<std::string, PrimFunc>> funcs) {
  std::vector<std::pair<GlobalVar, PrimFunc>> entries;
  for (auto& [name, f] : funcs) entries.emplace_back(GlobalVarNode::Make(name), f);
  return IRModuleNode::Make(std::move(entries));
}

// Example 1: va = vload(a); vb = va + 1; vstore(vb, b).
IRModule AddOneModule() {
  PrimFunc f = Kernel("func", {Ptr("a"), Ptr("b")}, [](const std::vector<Buffer>& buf) {
    Var va = VarNode::Make("va", T("int32x8")), vb = VarNode::Make("vb", T("int32x8"));
    Stmt store = Store(buf[1], vb, Ramp(I32(0), 1, 8));
    return LetStmtNode::Make(
        va, Load(buf[0], Ramp(I32(0), 1, 8)),
        LetStmtNode::Make(vb, AddNode::Make(va, BroadcastNode::Make(I32(1), 8)), store));
  });
  return Module({{"func", f}});
}

std::string GenerateOrError(const IRModule& mod, const std::string& entry) {
  try {
    CodeGenDSL(mod, entry);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kBuild);
    return e.what();
  }
  return "<no error>";
}

TEST(CodeGenDSL, VectorLoadAddStore) {
  EXPECT_EQ(CodeGenDSL(AddOneModule(), "func"),
            "#include <compass/dsl.h>\n"
            "\n"
            "__kernel void func(__global int* a, __global int* b);\n"
            "\n"
            "__kernel void func(__global int* a, __global int* b) {\n"
            "  int8 va = __vload((__global int8*)a, ALL_TRUE_w);\n"
            "  int8 vb = (va + (int8)__vbcast(1));\n"
            "  __vstore(vb, (__global int8*)b, ALL_TRUE_w);\n"
            "  barrier(CLK_LOCAL_MEM_FENCE);\n"
            "}\n");
}

TEST(CodeGenDSL, SubroutineCall) {
  auto gv_sub = GlobalVarNode::Make("subfunc");
  PrimFunc sub = Subroutine(
      "subfunc", {Ptr("a"), Ptr("b")}, DataType::Void(), [](const std::vector<Buffer>& buf) {
        return Store(buf[1], AddNode::Make(Load(buf[0], I32(0)), I32(1)), I32(0));
      });
  Var a = Ptr("a"), b = Ptr("b");
  PrimFunc kernel = Kernel("func", {a, b}, [&](const std::vector<Buffer>&) {
    return EvaluateNode::Make(CallNode::Make(DataType::Void(), gv_sub, {a, b}));
  });
  // The callee is listed first in the module: the entry still comes first in the output.
  IRModule mod = IRModuleNode::Make({{gv_sub, sub}, {GlobalVarNode::Make("func"), kernel}});
  EXPECT_EQ(CodeGenDSL(mod, "func"),
            "#include <compass/dsl.h>\n"
            "\n"
            "__kernel void func(__global int* a, __global int* b);\n"
            "void subfunc(__global int* a, __global int* b);\n"
            "\n"
            "__kernel void func(__global int* a, __global int* b) {\n"
            "  subfunc(a, b);\n"
            "  barrier(CLK_LOCAL_MEM_FENCE);\n"
            "}\n"
            "\n"
            "void subfunc(__global int* a, __global int* b) {\n"
            "  b[0] = (a[0] + 1);\n"
            "}\n");
}

TEST(CodeGenDSL, IfThenElse) {
  Var n = VarNode::Make("n", T("int32"));
  PrimFunc f = Kernel("func", {Ptr("a"), Ptr("b"), n}, [&](const std::vector<Buffer>& buf) {
    return IfThenElseNode::Make(LTNode::Make(I32(0), n),
                                Store(buf[1], AddNode::Make(Load(buf[0], I32(0)), I32(8)), I32(0)),
                                Store(buf[1], AddNode::Make(Load(buf[0], I32(1)), I32(8)), I32(1)));
  });
  EXPECT_EQ(CodeGenDSL(Module({{"func", f}}), "func"),
            "#include <compass/dsl.h>\n"
            "\n"
            "__kernel void func(__global int* a, __global int* b, int n);\n"
            "\n"
            "__kernel void func(__global int* a, __global int* b, int n) {\n"
            "  if (0 < n) {\n"
            "    b[0] = (a[0] + 8);\n"
            "  } else {\n"
            "    b[1] = (a[1] + 8);\n"
            "  }\n"
            "  barrier(CLK_LOCAL_MEM_FENCE);\n"
            "}\n");
}

IRModule IncModule() {
  Var n = VarNode::Make("n", T("int32"));
  PrimFunc f = Kernel("inc", {Ptr("a"), Ptr("b"), n}, [&](const std::vector<Buffer>& buf) {
    Var i = VarNode::Make("i", T("int32"));
    return ForNode::Make(i, I32(0), n, ForKind::kSerial,
                         Store(buf[1], AddNode::Make(Load(buf[0], i), I32(1)), i));
  });
  return Module({{"inc", f}});
}

TEST(CodeGenDSL, SerialLoop) {
  EXPECT_EQ(CodeGenDSL(IncModule(), "inc"),
            "#include <compass/dsl.h>\n"
            "\n"
            "__kernel void inc(__global int* a, __global int* b, int n);\n"
            "\n"
            "__kernel void inc(__global int* a, __global int* b, int n) {\n"
            "  for (int i = 0; i < n; i += 1) {\n"
            "    b[i] = (a[i] + 1);\n"
            "  }\n"
            "  barrier(CLK_LOCAL_MEM_FENCE);\n"
            "}\n");
}

TEST(CodeGenDSL, SubroutineReturningValue) {
  auto gv_scale = GlobalVarNode::Make("scale");
  Var v = VarNode::Make("v", T("int32")), k = VarNode::Make("k", T("int32"));
  PrimFunc scale = Subroutine("scale", {v, k}, T("int32"), [&](const std::vector<Buffer>&) {
    return EvaluateNode::Make(
        CallNode::Make(T("int32"), OpNode::Get("tir.ret"), {MulNode::Make(v, k)}));
  });
  PrimFunc kern = Kernel("kern", {Ptr("a")}, [&](const std::vector<Buffer>& buf) {
    Expr lhs = CallNode::Make(T("int32"), gv_scale, {Load(buf[0], I32(0)), I32(2)});
    Expr rhs = CallNode::Make(T("int32"), gv_scale, {Load(buf[0], I32(1)), I32(3)});
    return Store(buf[0], AddNode::Make(lhs, rhs), I32(0));
  });
  IRModule mod = IRModuleNode::Make({{GlobalVarNode::Make("kern"), kern}, {gv_scale, scale}});
  EXPECT_EQ(CodeGenDSL(mod, "kern"),
            "#include <compass/dsl.h>\n"
            "\n"
            "__kernel void kern(__global int* a);\n"
            "int scale(int v, int k);\n"
            "\n"
            "__kernel void kern(__global int* a) {\n"
            "  a[0] = (scale(a[0], 2) + scale(a[1], 3));\n"
            "  barrier(CLK_LOCAL_MEM_FENCE);\n"
            "}\n"
            "\n"
            "int scale(int v, int k) {\n"
            "  return (v * k);\n"
            "}\n");
  // An empty entry name picks the function marked tessera.is_entry.
  EXPECT_EQ(CodeGenDSL(mod, ""), CodeGenDSL(mod, "kern"));
}

TEST(CodeGenDSL, MasksStridesAndOffsets) {
  Var n = VarNode::Make("n", T("int32"));
  PrimFunc f =
      Kernel("k", {Ptr("a"), Ptr("c", "float32", "lsram"), Ptr("d", "float32", "shared"), n},
             [&](const std::vector<Buffer>& buf) {
               Var m = VarNode::Make("m", T("boolx8")), vf = VarNode::Make("vf", T("float32x8"));
               Expr cmp = LTNode::Make(Load(buf[0], Ramp(I32(8), 1, 8)), BroadcastNode::Make(n, 8));
               Stmt store = Store(buf[2], vf, Ramp(I32(0), 1, 8), NotNode::Make(m));
               return LetStmtNode::Make(
                   m, cmp, LetStmtNode::Make(vf, Load(buf[1], Ramp(n, 2, 8), m), store));
             });
  std::string code = CodeGenDSL(Module({{"k", f}}), "k");
  EXPECT_NE(
      code.find("__kernel void k(__global int* a, __lsram float* c, __local float* d, int n) {\n"
                "  bool8 m = __vclt(__vload((__global int8*)(a + 8), ALL_TRUE_w), "
                "(int8)__vbcast(n), ALL_TRUE_w);\n"
                "  float8 vf = __vload_stride((__lsram float8*)(c + n), 2, m);\n"
                "  __vstore(vf, (__local float8*)d, __vinv(m, ALL_TRUE_w));\n"),
      std::string::npos)
      << code;
}

TEST(CodeGenDSL, LocalsAllocationsAndScalarForms) {
  Var n = VarNode::Make("n", T("int16"));
  PrimFunc f =
      Kernel("k", {Ptr("a", "int16"), Ptr("f", "float32"), n}, [&](const std::vector<Buffer>& buf) {
        // A mutable local `x` (Allocate + shape-[1] DeclBuffer) and an lsram array.
        Var x = VarNode::MakePointer("x", T("int32"), "private");
        Buffer xb = BufferNode::Make(x, T("int32"), {I32(1)}, {}, nullptr, "x_buf");
        Var tile = VarNode::MakePointer("tile", T("int16"), "lsram");
        Buffer tb = BufferNode::Make(tile, T("int16"), {I32(64)}, {}, nullptr, "tile");
        Var sh = VarNode::MakePointer("sh", T("float32"), "shared");
        Buffer shb = BufferNode::Make(sh, T("float32"), {I32(16)}, {}, nullptr, "sh");
        Var i = VarNode::Make("i", T("int32")), i2 = VarNode::Make("i", T("int32"));
        Var max = VarNode::Make("max", T("int32"));
        Expr x_val = Load(xb, I32(0));
        Stmt body = Seq({
            Store(xb, I32(0), I32(0)),
            ForNode::Make(i, I32(2), I32(8), ForKind::kSerial,
                          Store(xb, AddNode::Make(x_val, FloorDivNode::Make(i, I32(3))), I32(0))),
            ForNode::Make(i2, I32(0), I32(4), ForKind::kSerial,
                          Store(tb, BroadcastNode::Make(AddNode::Make(n, Load(buf[0], i2)), 16),
                                Ramp(MulNode::Make(i2, I32(16)), 1, 16))),
            LetStmtNode::Make(
                max, MaxNode::Make(x_val, MinNode::Make(I32(-2147483647 - 1), I32(7))),
                Store(buf[1],
                      SelectNode::Make(GTNode::Make(max, I32(3)), CastNode::Make(T("float32"), max),
                                       ModNode::Make(FloatImmNode::Make(T("float32"), 2.5),
                                                     FloatImmNode::Make(T("float32"), 1.0))),
                      I32(0))),
            WhileNode::Make(AndNode::Make(GENode::Make(x_val, I32(1)), NotNode::Make(Bool(false))),
                            Store(xb, SubNode::Make(x_val, I32(1)), I32(0))),
            Store(buf[0], IntImmNode::Make(T("int16"), -3), I32(0)),
            Store(shb, FloatImmNode::Make(T("float32"), INFINITY), I32(1)),
        });
        AttrMap local;
        local["tessera.local_var"] = I32(1);
        Stmt s = AllocateNode::Make(sh, T("float32"), {I32(16)}, nullptr,
                                    DeclBufferNode::Make(shb, body));
        s = AllocateNode::Make(tile, T("int16"), {I32(64)}, nullptr, DeclBufferNode::Make(tb, s));
        return AllocateNode::Make(x, T("int32"), {I32(1)}, nullptr, DeclBufferNode::Make(xb, s),
                                  local);
      });
  EXPECT_EQ(CodeGenDSL(Module({{"k", f}}), "k"),
            "#include <compass/dsl.h>\n"
            "\n"
            "__kernel void k(__global short* a, __global float* f, short n);\n"
            "\n"
            "__kernel void k(__global short* a, __global float* f, short n) {\n"
            "  int x;\n"
            "  __lsram short tile[64];\n"
            "  static __local float sh[16];\n"
            "  x = 0;\n"
            "  for (int i = 2; i < 10; i += 1) {\n"
            "    x = (x + __floordiv(i, 3));\n"
            "  }\n"
            "  for (int i_1 = 0; i_1 < 4; i_1 += 1) {\n"
            "    __vstore((short16)__vbcast((short)(n + a[i_1])), (__lsram short16*)(tile + (i_1 * 16)), "
            "ALL_TRUE_h);\n"
            "  }\n"
            "  int max_1 = max(x, min((-2147483647 - 1), 7));\n"
            "  f[0] = ((max_1 > 3) ? ((float)max_1) : fmodf(0x1.4p+1f/*2.500000e+00*/, "
            "0x1p+0f/*1.000000e+00*/));\n"
            "  while (((x >= 1) && (!false))) {\n"
            "    x = (x - 1);\n"
            "  }\n"
            "  a[0] = (short)-3;\n"
            "  sh[1] = INFINITY;\n"
            "  barrier(CLK_LOCAL_MEM_FENCE);\n"
            "}\n");
}

TEST(CodeGenDSL, InlineAttributesAndPointerArguments) {
  auto gv_a = GlobalVarNode::Make("helper_a"), gv_b = GlobalVarNode::Make("helper_b");
  PrimFunc ha =
      Subroutine("helper_a", {Ptr("p")}, DataType::Void(), [](const std::vector<Buffer>& buf) {
        return Store(buf[0], I32(1), I32(0));
      })->WithAttr("tessera.inline", I32(1));
  PrimFunc hb =
      Subroutine("helper_b", {Ptr("p")}, DataType::Void(), [&](const std::vector<Buffer>& buf) {
        // helper_b calls helper_a: depth-first order puts helper_a right after helper_b.
        Expr addr = CallNode::Make(DataType::Handle(), OpNode::Get("tir.address_of"),
                                   {Load(buf[0], I32(4))});
        return EvaluateNode::Make(CallNode::Make(DataType::Void(), gv_a, {addr}));
      })->WithAttr("tessera.inline", I32(0));
  Var a = Ptr("a");
  PrimFunc kern = Kernel("kern", {a}, [&](const std::vector<Buffer>& buf) {
    Expr addr =
        CallNode::Make(DataType::Handle(), OpNode::Get("tir.address_of"), {Load(buf[0], I32(0))});
    return Seq({EvaluateNode::Make(CallNode::Make(DataType::Void(), gv_b, {addr})),
                EvaluateNode::Make(CallNode::Make(DataType::Void(), gv_a, {a}))});
  });
  IRModule mod = IRModuleNode::Make({{gv_a, ha}, {GlobalVarNode::Make("kern"), kern}, {gv_b, hb}});
  EXPECT_EQ(CodeGenDSL(mod, "kern"),
            "#include <compass/dsl.h>\n"
            "\n"
            "__kernel void kern(__global int* a);\n"
            "__attribute__((noinline)) void helper_b(__global int* p);\n"
            "void helper_a(__global int* p);\n"
            "\n"
            "__kernel void kern(__global int* a) {\n"
            "  helper_b(a);\n"
            "  helper_a(a);\n"
            "  barrier(CLK_LOCAL_MEM_FENCE);\n"
            "}\n"
            "\n"
            "__attribute__((noinline)) void helper_b(__global int* p) {\n"
            "  helper_a((p + 4));\n"
            "}\n"
            "\n"
            "inline void helper_a(__global int* p) {\n"
            "  p[0] = 1;\n"
            "}\n");
}

TEST(CodeGenDSL, BufferMapBuffersReadThroughTheirParameter) {
  // TVMScript-style functions bind buffers with their own data variable in buffer_map.
  Var a = Ptr("a");
  Buffer buf = BufferNode::Decl("A", T("int32"), {I32(16)}, "global");
  Stmt body = Store(buf, AddNode::Make(Load(buf, I32(2)), I32(1)), I32(3));
  AttrMap attrs;
  attrs["global_symbol"] = StringImmNode::Make("k");
  PrimFunc f = PrimFuncNode::Make({a}, {{a, buf}}, body, DataType::Void(), attrs);
  EXPECT_NE(CodeGenDSL(Module({{"k", f}}), "k").find("  a[3] = (a[2] + 1);\n"), std::string::npos);
}

TEST(CodeGenDSL, Launcher) {
  std::string launcher = CodeGenDSLLauncher(IncModule(), "inc");
  auto has = [&](const std::string& text) { return launcher.find(text) != std::string::npos; };
  EXPECT_TRUE(has("static void __tessera_tec_main(void* data) {\n"
                  "  __tessera_args_t* v = (__tessera_args_t*)data;\n"
                  "  inc(v->a0, v->a1, v->a2);\n"
                  "}\n"))
      << launcher;
  // The packed entry point checks the count, each argument's kind, dtype and layout, and
  // refuses read-only arrays only for the pointer the kernel writes (b).
  EXPECT_TRUE(has("int32_t __tessera_packed_inc(TesseraValue* args, int32_t* codes, "
                  "int32_t num_args, TesseraValue* ret,\n"
                  "    int32_t* ret_code) {\n"))
      << launcher;
  EXPECT_TRUE(has("\"inc() takes 3 arguments (a, b, n) but %d were given\""));
  EXPECT_TRUE(has("\"argument 'a' of inc() must have dtype int32, got %s\""));
  EXPECT_TRUE(has("\"argument 'b' of inc() must be a C-contiguous array\""));
  EXPECT_FALSE(has("\"argument 'a' of inc() is a read-only array"));
  EXPECT_TRUE(has("\"argument 'b' of inc() is a read-only array"));
  EXPECT_TRUE(has("\"argument 'n' of inc() must be an integer (int32), got %s\""));
  EXPECT_TRUE(has("  v.a2 = (int)args[2].v_int64;\n"));
  EXPECT_TRUE(has("if (__tessera_run_tecs(__tessera_tec_main, &v, __tessera_last_error,"));
}

TEST(CodeGenDSL, Errors) {
  // An op without a DSL spelling.
  PrimFunc f = Kernel("k", {Ptr("a", "float32")}, [](const std::vector<Buffer>& buf) {
    Expr e = CallNode::Make(T("float32"), OpNode::Get("tir.exp"), {Load(buf[0], I32(0))});
    return Store(buf[0], e, I32(0));
  });
  EXPECT_NE(GenerateOrError(Module({{"k", f}}), "k")
                .find("codegen for op tir.exp is not supported on the DSL target"),
            std::string::npos);

  // A vector that is not 256 bits wide.
  PrimFunc narrow = Kernel("k", {Ptr("a")}, [](const std::vector<Buffer>& buf) {
    return Store(buf[0], Load(buf[0], Ramp(I32(0), 1, 4)), Ramp(I32(4), 1, 4));
  });
  EXPECT_NE(GenerateOrError(Module({{"k", narrow}}), "k").find("int32x4"), std::string::npos);

  // Recursion.
  auto gv = GlobalVarNode::Make("k");
  PrimFunc rec = Kernel("k", {}, [&](const std::vector<Buffer>&) {
    return EvaluateNode::Make(CallNode::Make(DataType::Void(), gv, {}));
  });
  EXPECT_NE(GenerateOrError(IRModuleNode::Make({{gv, rec}}), "k").find("k -> k"),
            std::string::npos);

  // A kernel named after a prelude function.
  PrimFunc clash =
      Kernel("barrier", {}, [](const std::vector<Buffer>&) { return EvaluateNode::Make(I32(0)); });
  EXPECT_NE(GenerateOrError(Module({{"barrier", clash}}), "barrier").find("rename the function"),
            std::string::npos);

  // An unknown entry names the functions that exist.
  EXPECT_NE(GenerateOrError(AddOneModule(), "nope").find("(it has: func)"), std::string::npos);
}

}  // namespace
}  // namespace tessera
