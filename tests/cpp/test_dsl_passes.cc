// Golden tests of the DSL passes (dsl.AlignVectorWidth, dsl.VerifyLocalMemory,
// dsl.VerifyTargetFeatures) and of the C forms
// CodeGenDSL gives the dsl.* ops, conversions, masks and constant tables.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tessera/ir/function.h"
#include "tessera/ir/op.h"
#include "tessera/ir/printer.h"
#include "tessera/support/error.h"
#include "tessera/target/codegen_dsl.h"
#include "tessera/transform/dsl_passes.h"
#include "tessera/transform/pass.h"

namespace tessera {
namespace {

DataType T(const char* name) { return DataType::Parse(name); }
Expr I32(int64_t v) { return IntImmNode::Make(DataType::Int(32), v); }

Var Ptr(const std::string& name, const char* elem = "int32", const char* scope = "global") {
  return VarNode::MakePointer(name, T(elem), scope);
}
Buffer Flat(const Var& ptr) {
  return BufferNode::Make(ptr, ptr->pointer->element, {I32(2147483647)}, {}, nullptr, ptr->name);
}
Expr Ramp(Expr base, int lanes) { return RampNode::Make(std::move(base), I32(1), lanes); }
Expr Call(const char* dtype, const char* op, std::vector<Expr> args) {
  return CallNode::Make(T(dtype), OpNode::Get(op), std::move(args));
}

// A kernel: a DeclBuffer per pointer parameter around `body(buffers)`.
IRModule Kernel(std::vector<Var> params,
                const std::function<Stmt(const std::vector<Buffer>&)>& body) {
  std::vector<Buffer> bufs;
  for (const Var& p : params) bufs.push_back(p->pointer ? Flat(p) : nullptr);
  Stmt s = body(bufs);
  for (size_t i = bufs.size(); i-- > 0;) {
    if (bufs[i]) s = DeclBufferNode::Make(bufs[i], s);
  }
  AttrMap attrs;
  attrs["global_symbol"] = StringImmNode::Make("k");
  attrs["tessera.is_entry"] = I32(1);
  return IRModuleNode::FromFunc(PrimFuncNode::Make(params, {}, s, DataType::Void(), attrs), "k");
}

std::string Body(const std::string& code) {
  size_t open = code.find("{\n");
  size_t close = code.rfind("  barrier(CLK_LOCAL_MEM_FENCE);");
  return code.substr(open + 2, close - open - 2);
}

std::string Aligned(const IRModule& mod) {
  IRModule out = transform::AlignVectorWidth()->fn(mod, transform::PassContext());
  return Body(CodeGenDSL(out, "k"));
}

TEST(AlignVectorWidth, SplitsAFlexibleWidthAndMasksThePadding) {
  // out[0:12] = a[0:12] + 1 on int32: one full part and one of 4 lanes.
  IRModule mod = Kernel({Ptr("a"), Ptr("out")}, [](const std::vector<Buffer>& b) {
    Expr load = BufferLoadNode::Make(b[0], {Ramp(I32(0), 12)});
    Expr sum = AddNode::Make(load, BroadcastNode::Make(I32(1), 12));
    return BufferStoreNode::Make(b[1], sum, {Ramp(I32(0), 12)});
  });
  EXPECT_EQ(
      Aligned(mod),
      "  __vstore((__vload((__global int8*)a, ALL_TRUE_w) + (int8)__vbcast(1)), "
      "(__global int8*)out, ALL_TRUE_w);\n"
      "  __vstore((__vload((__global int8*)(a + 8), __vmov_w(0x00001111)) + (int8)__vbcast(1)), "
      "(__global int8*)(out + 8), __vmov_w(0x00001111));\n");
}

TEST(AlignVectorWidth, ConstantMaskOfANarrowVectorIsPaddedAsOneConstant) {
  // out[0:8] = a[0:8] on lanes 0-2 (int8): a char32 whose upper 24 lanes are off, the mask one
  // constant (not the __vand of the mask and the padding).
  IRModule mod = Kernel({Ptr("a", "int8"), Ptr("out", "int8")}, [](const std::vector<Buffer>& b) {
    std::vector<Expr> on;
    for (int i = 0; i < 8; ++i) on.push_back(Bool(i < 3));
    Expr mask = Call("boolx8", "dsl.const_mask", on);
    return BufferStoreNode::Make(b[1], BufferLoadNode::Make(b[0], {Ramp(I32(0), 8)}, mask),
                                 {Ramp(I32(0), 8)}, mask);
  });
  EXPECT_EQ(Aligned(mod),
            "  __vstore(__vload((__global char32*)a, __vmov_b(0x00000007)), (__global char32*)out, "
            "__vmov_b(0x00000007));\n");
}

TEST(AlignVectorWidth, SubFunctionSignaturesOfVirtualWidth) {
  // f(v: int32x12) -> int32x12 { return v + 1; }   k: out[0:12] = f(a[0:12])
  Var v = VarNode::Make("v", T("int32x12"));
  Stmt ret = EvaluateNode::Make(
      Call("int32", "tir.ret", {AddNode::Make(v, BroadcastNode::Make(I32(1), 12))}));
  AttrMap fattrs;
  fattrs["global_symbol"] = StringImmNode::Make("k_f");
  PrimFunc f = PrimFuncNode::Make({v}, {}, ret, T("int32x12"), fattrs);
  IRModule mod = Kernel({Ptr("a"), Ptr("out")}, [](const std::vector<Buffer>& b) {
    Expr load = BufferLoadNode::Make(b[0], {Ramp(I32(0), 12)});
    Expr call = CallNode::Make(T("int32x12"), GlobalVarNode::Make("f"), {load});
    return BufferStoreNode::Make(b[1], call, {Ramp(I32(0), 12)});
  });
  mod = mod->WithFunction(GlobalVarNode::Make("f"), f);
  IRModule out = transform::AlignVectorWidth()->fn(mod, transform::PassContext());
  std::string code = CodeGenDSL(out, "k");
  // The parameter in native parts, the result through a pointer to its parts.
  EXPECT_NE(code.find("void k_f(int8 v_0, int8 v_1, int8* ret) {\n"
                      "  ret[0] = (v_0 + (int8)__vbcast(1));\n"
                      "  ret[1] = (v_1 + (int8)__vbcast(1));\n"
                      "  return;\n"),
            std::string::npos)
      << code;
  // The call is hoisted before the store, into a private array of the parts.
  EXPECT_EQ(Body(code),
            "  int8 f_ret0[2];\n"
            "  k_f(__vload((__global int8*)a, ALL_TRUE_w), __vload((__global int8*)(a + 8), "
            "__vmov_w(0x00001111)), f_ret0);\n"
            "  __vstore(f_ret0[0], (__global int8*)out, ALL_TRUE_w);\n"
            "  __vstore(f_ret0[1], (__global int8*)(out + 8), __vmov_w(0x00001111));\n");
}

TEST(AlignVectorWidth, VariablesCastsAndRegroupedMasks) {
  // v = a[0:16] (int32x16: two parts); m = h[0:16] > 0 (an int16 mask: one part of 16 lanes);
  // out[0:16] = v where m, and a narrowing cast of v to int16 into h.
  Var a = Ptr("a"), out = Ptr("out"), h = Ptr("h", "int16");
  IRModule mod = Kernel({a, out, h}, [](const std::vector<Buffer>& b) {
    Var v = VarNode::Make("v", T("int32x16")), m = VarNode::Make("m", T("boolx16"));
    Expr hv = BufferLoadNode::Make(b[2], {Ramp(I32(0), 16)});
    Expr zero = BroadcastNode::Make(IntImmNode::Make(DataType::Int(16), 0), 16);
    Stmt store = BufferStoreNode::Make(b[1], v, {Ramp(I32(0), 16)}, m);
    Stmt narrow =
        BufferStoreNode::Make(b[2], CastNode::Make(T("int16x16"), v), {Ramp(I32(16), 16)});
    return LetStmtNode::Make(
        v, BufferLoadNode::Make(b[0], {Ramp(I32(0), 16)}),
        LetStmtNode::Make(m, GTNode::Make(hv, zero), SeqStmtNode::Make({store, narrow})));
  });
  EXPECT_EQ(
      Aligned(mod),
      "  int8 v_0 = __vload((__global int8*)a, ALL_TRUE_w);\n"
      "  int8 v_1 = __vload((__global int8*)(a + 8), ALL_TRUE_w);\n"
      "  bool16 m = __vcgt(__vload((__global short16*)h, ALL_TRUE_h), (short16)__vbcast((short)0), "
      "ALL_TRUE_h);\n"
      "  __vstore(v_0, (__global int8*)out, __vmask_repack(8, 16, 0, (const uint32_t[]){m}, "
      "1));\n"
      "  __vstore(v_1, (__global int8*)(out + 8), __vmask_repack(8, 16, 8, (const "
      "uint32_t[]){m}, 1));\n"
      "  __vstore(__vcvt_into_short16(__vcvt_into_short16((short16)__vbcast((short)0), v_0, 0), v_1, "
      "8), (__global short16*)(h + 16), ALL_TRUE_h);\n");
}

TEST(AlignVectorWidth, LeavesNativeCodeAlone) {
  IRModule mod = Kernel({Ptr("a")}, [](const std::vector<Buffer>& b) {
    Expr load = BufferLoadNode::Make(b[0], {Ramp(I32(0), 8)});
    return BufferStoreNode::Make(b[0], load, {Ramp(I32(8), 8)},
                                 Call("boolx8", "dsl.tail_mask", {I32(3)}));
  });
  IRModule out = transform::AlignVectorWidth()->fn(mod, transform::PassContext());
  EXPECT_EQ(out, mod);  // the same object: the runner sees no change
}

TEST(AlignVectorWidth, TailMasksAndLanesOfVirtualVectors) {
  // out[0:20] = a[0:20] where tail_mask(n, 20); out[20] = a[0:20][n] (a runtime lane).
  Var a = Ptr("a"), out = Ptr("out"), n = VarNode::Make("n", DataType::Int(32));
  IRModule mod = Kernel({a, out, n}, [&](const std::vector<Buffer>& b) {
    Expr mask = Call("boolx20", "dsl.tail_mask", {n});
    Expr load = BufferLoadNode::Make(b[0], {Ramp(I32(0), 20)}, mask);
    Stmt s1 = BufferStoreNode::Make(b[1], load, {Ramp(I32(0), 20)});
    Expr lane = Call("int32", "dsl.get_lane", {BufferLoadNode::Make(b[0], {Ramp(I32(0), 20)}), n});
    Stmt s2 = BufferStoreNode::Make(b[1], lane, {I32(20)});
    return SeqStmtNode::Make({s1, s2});
  });
  EXPECT_EQ(Aligned(mod),
            "  __vstore(__vload((__global int8*)a, __vtail_mask(n, 8)), (__global int8*)out, "
            "ALL_TRUE_w);\n"
            "  __vstore(__vload((__global int8*)(a + 8), __vtail_mask((n - 8), 8)), (__global "
            "int8*)(out + 8), ALL_TRUE_w);\n"
            "  __vstore(__vload((__global int8*)(a + 16), __vand(__vtail_mask((n - 16), 8), "
            "__vmov_w(0x00001111), ALL_TRUE_w)), (__global int8*)(out + 16), "
            "__vmov_w(0x00001111));\n"
            "  out[20] = ((n < 8) ? __vget_lane(__vload((__global int8*)a, ALL_TRUE_w), n) : "
            "((n < 16) ? __vget_lane(__vload((__global int8*)(a + 8), ALL_TRUE_w), (n - 8)) : "
            "__vget_lane(__vload((__global int8*)(a + 16), __vmov_w(0x00001111)), (n - 16))));\n");
}

TEST(AlignVectorWidth, SplitsPairwiseOpsByTheirForm) {
  // out[0:16] = vaddh(a[0:16], b[0:16]) on int32 (two parts each): the pairs of a then the pairs
  // of b, so the first result part is vaddh(a0, a1) and the second vaddh(b0, b1).
  IRModule mod = Kernel({Ptr("a"), Ptr("b"), Ptr("out")}, [](const std::vector<Buffer>& b) {
    Expr x = BufferLoadNode::Make(b[0], {Ramp(I32(0), 16)});
    Expr y = BufferLoadNode::Make(b[1], {Ramp(I32(0), 16)});
    return BufferStoreNode::Make(b[2], Call("int32x16", "dsl.vaddh", {x, y}), {Ramp(I32(0), 16)});
  });
  EXPECT_EQ(OpNode::Get("dsl.vaddh")->GetStrAttr("dsl.form"), "pairwise");
  EXPECT_EQ(Aligned(mod),
            "  __vstore(__vaddh(__vload((__global int8*)a, ALL_TRUE_w), __vload((__global int8*)(a "
            "+ 8), ALL_TRUE_w)), (__global int8*)out, ALL_TRUE_w);\n"
            "  __vstore(__vaddh(__vload((__global int8*)b, ALL_TRUE_w), __vload((__global int8*)(b "
            "+ 8), ALL_TRUE_w)), (__global int8*)(out + 8), ALL_TRUE_w);\n");
}

TEST(AlignVectorWidth, SplitsPartCastsBitCastsAndMixedSignDots) {
  // out[0:16] = vcvt(a[0:32], 16, 1) (int8 lanes 16-31 as int32: two parts, from lanes 16 and
  // 24); r[0:16] = reinterpret(a[0:64]) as int32x16 (one part per 256 bits); w[0:16] =
  // vdot(a[0:32], u[0:32]) of int8 and uint8: widened products, summed in pairs by vaddh.
  IRModule mod =
      Kernel({Ptr("a", "int8"), Ptr("u", "uint8"), Ptr("out"), Ptr("r"), Ptr("w", "int16")},
             [](const std::vector<Buffer>& b) {
               Expr x = BufferLoadNode::Make(b[0], {Ramp(I32(0), 32)});
               Expr y = BufferLoadNode::Make(b[1], {Ramp(I32(0), 32)});
               Expr wide = BufferLoadNode::Make(b[0], {Ramp(I32(0), 64)});
               std::vector<Expr> on(32, Bool(true));
               Expr all = Call("boolx32", "dsl.const_mask", on);
               return SeqStmtNode::Flatten(
                   {BufferStoreNode::Make(b[2], Call("int32x16", "dsl.vcvt", {x, I32(16), I32(1)}),
                                          {Ramp(I32(0), 16)}),
                    BufferStoreNode::Make(b[3], Call("int32x16", "tir.reinterpret", {wide}),
                                          {Ramp(I32(0), 16)}),
                    BufferStoreNode::Make(b[4], Call("int16x16", "dsl.vdot", {x, y, all}),
                                          {Ramp(I32(0), 16)})});
             });
  EXPECT_EQ(
      Aligned(mod),
      "  __vstore(__vcvt_int8(__vload((__global char32*)a, ALL_TRUE_b), 16, 1), (__global "
      "int8*)out, ALL_TRUE_w);\n"
      "  __vstore(__vcvt_int8(__vload((__global char32*)a, ALL_TRUE_b), 24, 1), (__global "
      "int8*)(out + 8), ALL_TRUE_w);\n"
      "  __vstore(__vreinterpret(__vload((__global char32*)a, ALL_TRUE_b), int8), (__global "
      "int8*)r, ALL_TRUE_w);\n"
      "  __vstore(__vreinterpret(__vload((__global char32*)(a + 32), ALL_TRUE_b), int8), "
      "(__global int8*)(r + 8), ALL_TRUE_w);\n"
      "  __vstore(__vaddh(__vsel((__vcvt_short16(__vload((__global char32*)a, ALL_TRUE_b), 0, "
      "1) * __vcvt_short16(__vload((__global uchar32*)u, ALL_TRUE_b), 0, 1)), "
      "(short16)__vbcast((short)0), ALL_TRUE_h), __vsel((__vcvt_short16(__vload((__global char32*)a, "
      "ALL_TRUE_b), 16, 1) * __vcvt_short16(__vload((__global uchar32*)u, ALL_TRUE_b), 16, "
      "1)), (short16)__vbcast((short)0), ALL_TRUE_h)), (__global short16*)w, ALL_TRUE_h);\n");
}

TEST(LowerActiveLaneMask, ConstantMaskOrTailMaskAsCompassWritesThem) {
  // out[32:40] = a[32:40] on the lanes where lane < 3 (a constant tail), then where i + lane < n.
  Var a = Ptr("a", "float32"), out = Ptr("out", "float32"), n = VarNode::Make("n", T("int32"));
  Var i = VarNode::Make("i", T("int32"));
  IRModule mod = Kernel({a, out, n, i}, [&](const std::vector<Buffer>& b) {
    std::vector<Stmt> seq;
    for (Expr base : {I32(0), Expr(i)}) {
      Expr limit = base.get() == i.get() ? Expr(n) : I32(3);
      Expr mask = Call("uint1x8", "tir.get_active_lane_mask", {base, limit});
      Expr load = BufferLoadNode::Make(b[0], {Ramp(I32(32), 8)}, mask);
      seq.push_back(BufferStoreNode::Make(b[1], load, {Ramp(I32(32), 8)}, mask));
    }
    return SeqStmtNode::Make(seq);
  });
  IRModule out_mod = transform::LowerActiveLaneMask()->fn(mod, transform::PassContext());
  EXPECT_EQ(Body(CodeGenDSL(out_mod, "k")),
            "  __vstore(__vload((__global float8*)(a + 32), __vmov_w(0x00000111)), "
            "(__global float8*)(out + 32), __vmov_w(0x00000111));\n"
            "  __vstore(__vload((__global float8*)(a + 32), __vtail_mask((n - i), 8)), "
            "(__global float8*)(out + 32), __vtail_mask((n - i), 8));\n");
  // Nothing to lower: the same module.
  EXPECT_EQ(transform::LowerActiveLaneMask()->fn(out_mod, transform::PassContext()), out_mod);
}

TEST(VerifyLocalMemory, NamesTheAllocationThatOverflows) {
  Var tile = Ptr("tile", "int32", "lsram"), big = Ptr("big", "float32", "shared");
  Span span("kernel.py", 12, 4);
  Stmt body = AllocateNode::Make(tile, DataType::Int(32), {I32(4096)}, nullptr,
                                 AllocateNode::Make(big, DataType::Float(32), {I32(40000)}, nullptr,
                                                    EvaluateNode::Make(I32(0)), {}, span));
  IRModule mod = Kernel({Ptr("a")}, [&](const std::vector<Buffer>&) { return body; });
  // X2: 32 KB lsram per TEC (the tile fits exactly), 256 KB shared (160000 bytes fit).
  IRModule same = transform::VerifyLocalMemory(GetDSLTarget("X2_1204"))->fn(mod, {});
  EXPECT_EQ(same, mod);
  try {
    transform::VerifyLocalMemory(GetDSLTarget("X3P_1304"))->fn(mod, {});
    ADD_FAILURE() << "160000 bytes of shared memory fit the 128 KB of X3P";
  } catch (const Error& e) {
    EXPECT_EQ(e.message(),
              "shared allocation \"big\" (160000 bytes) exceeds the shared SRAM of X3P_1304: "
              "160000 of 131072 bytes per core would be in use");
    EXPECT_EQ(e.span().line, 12);
  }
}

TEST(VerifyTargetFeatures, ReturnIdxNeedsAnX3Target) {
  // out[0:8] = vrpmax(a[0:8], all lanes, return_idx) at kernel.py:7.
  Span span("kernel.py", 7, 8);
  auto kernel = [&](int return_idx) {
    return Kernel({Ptr("a"), Ptr("out")}, [&](const std::vector<Buffer>& b) {
      Expr all = Call("boolx8", "dsl.const_mask", std::vector<Expr>(8, I32(1)));
      Expr v = BufferLoadNode::Make(b[0], {Ramp(I32(0), 8)});
      Expr r = CallNode::Make(T("int32x8"), OpNode::Get("dsl.vrpmax"), {v, all, I32(return_idx)},
                              span);
      return BufferStoreNode::Make(b[1], r, {Ramp(I32(0), 8)});
    });
  };
  IRModule plain = kernel(0), with_idx = kernel(1);
  EXPECT_EQ(transform::VerifyTargetFeatures(GetDSLTarget("X2_1204"))->fn(plain, {}), plain);
  EXPECT_EQ(transform::VerifyTargetFeatures(GetDSLTarget("X3P_1304"))->fn(with_idx, {}), with_idx);
  try {
    transform::VerifyTargetFeatures(GetDSLTarget("X2_1204"))->fn(with_idx, {});
    ADD_FAILURE() << "return_idx=True passed on X2";
  } catch (const Error& e) {
    EXPECT_EQ(e.message(), "S.vrpmax(return_idx=True) needs an X3 target, not X2_1204");
    EXPECT_EQ(e.span().line, 7);
  }
}

TEST(VerifyTargetFeatures, MatrixProductsNeedAnX2Target) {
  // S.vmma(acc, a[0:16], b[0:16]) at kernel.py:5, acc a float32 pointer.
  Span span("kernel.py", 5, 4);
  IRModule mod = Kernel({Ptr("a", "float16"), Ptr("b", "float16"), Ptr("acc", "float32")},
                        [&](const std::vector<Buffer>& b) {
                          Expr x = BufferLoadNode::Make(b[0], {Ramp(I32(0), 16)});
                          Expr y = BufferLoadNode::Make(b[1], {Ramp(I32(0), 16)});
                          Expr call = CallNode::Make(T("void"), OpNode::Get("dsl.vmma"),
                                                     {b[2]->data, x, y}, span);
                          return EvaluateNode::Make(call);
                        });
  EXPECT_EQ(transform::VerifyTargetFeatures(GetDSLTarget("X2_1204"))->fn(mod, {}), mod);
  for (const char* target : {"X3P_1304", "X3S_1304MP2"}) {
    try {
      transform::VerifyTargetFeatures(GetDSLTarget(target))->fn(mod, {});
      ADD_FAILURE() << "S.vmma passed on " << target;
    } catch (const Error& e) {
      EXPECT_EQ(e.message(), std::string("S.vmma is an X2 instruction; the target ") + target +
                                 " has no such instruction");
      EXPECT_EQ(e.span().line, 5);
    }
  }
}

TEST(VerifyTargetFeatures, FunctionsMarkedX2OnlyNeedAnX2Target) {
  // The parser marks a float S.vqdpa (at kernel.py:6) on its
  // function: the attribute "dsl.x2_feature", a StringImm spanning the use.
  IRModule plain = Kernel({Ptr("a", "float32")}, [&](const std::vector<Buffer>& b) {
    return BufferStoreNode::Make(b[0], FloatImmNode::Make(T("float32"), 1.0), {I32(0)});
  });
  const PrimFunc& f = plain->functions.front().second;
  PrimFunc marked = f->WithAttr(
      "dsl.x2_feature", StringImmNode::Make("S.vqdpa of float vectors", Span("kernel.py", 6, 8)));
  IRModule mod = IRModuleNode::FromFunc(marked, "k");
  EXPECT_EQ(transform::VerifyTargetFeatures(GetDSLTarget("X2_1204"))->fn(mod, {}), mod);
  EXPECT_EQ(transform::VerifyTargetFeatures(GetDSLTarget("X3P_1304"))->fn(plain, {}), plain);
  try {
    transform::VerifyTargetFeatures(GetDSLTarget("X3P_1304"))->fn(mod, {});
    ADD_FAILURE() << "a float S.vqdpa passed on X3P_1304";
  } catch (const Error& e) {
    EXPECT_EQ(e.message(),
              "S.vqdpa of float vectors is an X2 instruction; the target X3P_1304 has no such "
              "instruction");
    EXPECT_EQ(e.span().line, 6);
  }
}

TEST(DSLTargets, X3FromTheTargetTable) {
  // The DSL passes read a function's "target" attribute through the table, not its spelling.
  EXPECT_TRUE(IsX3Target("X3P_1304"));
  EXPECT_TRUE(IsX3Target("X3S_1304MP4"));
  EXPECT_FALSE(IsX3Target("X2_1204"));
  EXPECT_FALSE(IsX3Target("X3_unknown"));
  EXPECT_FALSE(IsX3Target("c"));
}

TEST(CodeGenDSLForms, ConversionsLanesAndDma) {
  Var a = Ptr("a", "float32"), c = Ptr("c", "int8"), s = Ptr("s", "int8", "lsram");
  Var x = VarNode::Make("x", T("float32"));
  IRModule mod = Kernel({a, c, x}, [&](const std::vector<Buffer>& b) {
    Expr fv = BufferLoadNode::Make(b[0], {Ramp(I32(0), 8)});
    std::vector<Stmt> seq;
    // Scalar float -> int8 saturates through int32; bfloat16 goes through float.
    seq.push_back(BufferStoreNode::Make(b[1], CastNode::Make(DataType::Int(8), x), {I32(0)}));
    // Lanes 8-15 of an int8x32 converted to float32x8.
    Expr cv = BufferLoadNode::Make(b[1], {Ramp(I32(0), 32)});
    seq.push_back(BufferStoreNode::Make(b[0], Call("float32x8", "dsl.vcvt", {cv, I32(8), I32(1)}),
                                        {Ramp(I32(8), 8)}));
    // A lane replaced, a vector from lanes, a constant mask, an all-true one.
    Expr set = Call("float32x8", "dsl.set_lane", {fv, I32(2), x});
    seq.push_back(
        BufferStoreNode::Make(b[0], set, {Ramp(I32(16), 8)},
                              Call("boolx8", "dsl.const_mask",
                                   {Bool(true), Bool(false), Bool(true), Bool(false), Bool(false),
                                    Bool(false), Bool(false), Bool(false)})));
    std::vector<Expr> lanes;
    for (int i = 0; i < 8; ++i) lanes.push_back(FloatImmNode::Make(DataType::Float(32), i));
    seq.push_back(
        BufferStoreNode::Make(b[0], Call("float32x8", "dsl.vmake", lanes), {Ramp(I32(24), 8)}));
    // DMA into SRAM and an event.
    seq.push_back(
        AllocateNode::Make(s, DataType::Int(8), {I32(64)}, nullptr,
                           EvaluateNode::Make(Call("void", "dsl.dma1d", {c, s, I32(64), I32(1)}))));
    return SeqStmtNode::Make(seq);
  });
  EXPECT_EQ(Body(CodeGenDSL(mod, "k")),
            "  c[0] = __tessera_conv_char_float(x);\n"
            "  __vstore(__vcvt_float8(__vload((__global char32*)c, ALL_TRUE_b), 8, 1), (__global "
            "float8*)(a + 8), ALL_TRUE_w);\n"
            "  __vstore(__vset_lane(__vload((__global float8*)a, ALL_TRUE_w), 2, x), (__global "
            "float8*)(a + 16), __vmov_w(0x00000101));\n"
            "  __vstore(((float8){0x0p+0f/*0.000000e+00*/, 0x1p+0f/*1.000000e+00*/, "
            "0x1p+1f/*2.000000e+00*/, 0x1.8p+1f/*3.000000e+00*/, 0x1p+2f/*4.000000e+00*/, "
            "0x1.4p+2f/*5.000000e+00*/, 0x1.8p+2f/*6.000000e+00*/, 0x1.cp+2f/*7.000000e+00*/}), "
            "(__global "
            "float8*)(a + 24), ALL_TRUE_w);\n"
            "  __lsram char s[64];\n"
            "  DMA1D(c, s, 64, 1);\n");
}

TEST(CodeGenDSLForms, ConstantTablesAndPointerBindings) {
  Var lut = Ptr("lut", "bfloat16", "constant"), a = Ptr("a", "int32");
  Var q = VarNode::MakePointer("q", T("int8"), "global");
  IRModule mod = Kernel({a}, [&](const std::vector<Buffer>& b) {
    AttrMap ann;
    ann["tessera.const_data"] = ArrayNode::Make(
        {FloatImmNode::Make(T("bfloat16"), 1.0), FloatImmNode::Make(T("bfloat16"), -2.5)});
    Buffer lb = Flat(lut);
    Expr addr = CallNode::Make(DataType::Handle(), OpNode::Get("tir.address_of"),
                               {BufferLoadNode::Make(b[0], {I32(1)})});
    Stmt use = LetStmtNode::Make(
        q, addr,
        BufferStoreNode::Make(
            b[0], CastNode::Make(DataType::Int(32), BufferLoadNode::Make(lb, {I32(1)})), {I32(0)}));
    return AllocateNode::Make(lut, T("bfloat16"), {I32(2)}, nullptr, DeclBufferNode::Make(lb, use),
                              ann);
  });
  std::string code = CodeGenDSL(mod, "k");
  EXPECT_NE(code.find("\n__constant bfloat16 k_lut[2] = {{0x3F80}, {0xC020}};\n"),
            std::string::npos)
      << code;
  EXPECT_EQ(Body(code),
            "  __constant bfloat16* lut = k_lut;\n"
            "  __global char* q = (__global char*)(a + 1);\n"
            "  a[0] = __tessera_conv_int_bfloat16(lut[1]);\n");
}

std::string Combined(const IRModule& mod) {
  IRModule out = transform::CombineInstructions()->fn(mod, transform::PassContext());
  return Body(CodeGenDSL(out, "k"));
}

TEST(CombineInstructions, LogicOfVectorsAndMasks) {
  // out[0:8] = a & ~b; out[8:16] = ~(a | b); out[16:24] = select(p & !q, a, b) with p = a > 0,
  // q = b > 0; out[24:32] = select(!(p | q), a, b).
  IRModule mod = Kernel({Ptr("a"), Ptr("b"), Ptr("out")}, [](const std::vector<Buffer>& buf) {
    Expr a = BufferLoadNode::Make(buf[0], {Ramp(I32(0), 8)});
    Expr b = BufferLoadNode::Make(buf[1], {Ramp(I32(0), 8)});
    Expr zero = BroadcastNode::Make(I32(0), 8);
    Expr p = GTNode::Make(a, zero), q = GTNode::Make(b, zero);
    auto store = [&](Expr v, int at) {
      return BufferStoreNode::Make(buf[2], v, {Ramp(I32(at), 8)});
    };
    return SeqStmtNode::Make({
        store(Call("int32x8", "tir.bitwise_and", {a, Call("int32x8", "tir.bitwise_not", {b})}), 0),
        store(Call("int32x8", "tir.bitwise_not", {Call("int32x8", "tir.bitwise_or", {a, b})}), 8),
        store(SelectNode::Make(AndNode::Make(p, NotNode::Make(q)), a, b), 16),
        store(SelectNode::Make(NotNode::Make(OrNode::Make(p, q)), a, b), 24),
    });
  });
  const std::string a = "__vload((__global int8*)a, ALL_TRUE_w)";
  const std::string b = "__vload((__global int8*)b, ALL_TRUE_w)";
  const std::string p = "__vcgt(" + a + ", (int8)__vbcast(0), ALL_TRUE_w)";
  const std::string q = "__vcgt(" + b + ", (int8)__vbcast(0), ALL_TRUE_w)";
  auto store = [](const std::string& v, const std::string& at) {
    return "  __vstore(" + v + ", (__global int8*)" + at + ", ALL_TRUE_w);\n";
  };
  EXPECT_EQ(Combined(mod),
            store("__vbclr(" + a + ", " + b + ")", "out") +
                store("__vnor(" + a + ", " + b + ")", "(out + 8)") +
                store("__vsel(" + a + ", " + b + ", __vbclr(" + p + ", " + q + "))", "(out + 16)") +
                store("__vsel(" + a + ", " + b + ", __vnor(" + p + ", " + q + "))", "(out + 24)"));
}

TEST(CombineInstructions, StrengthReductionsKeepTheBits) {
  // out[0:8] = a * 8 (a shift); out[8:16] = a * 6 (kept); f[0] = f[1] / 0.25 (a product by 4);
  // f[2] = f[3] / 10 and f[4] = f[5] / 2^127 (1/c inexact or subnormal: kept).
  Var a = Ptr("a"), out = Ptr("out"), f = Ptr("f", "float32");
  IRModule mod = Kernel({a, out, f}, [](const std::vector<Buffer>& buf) {
    Expr va = BufferLoadNode::Make(buf[0], {Ramp(I32(0), 8)});
    auto fl = [&](int i) { return BufferLoadNode::Make(buf[2], {I32(i)}); };
    auto c = [](double v) { return FloatImmNode::Make(DataType::Float(32), v); };
    return SeqStmtNode::Make({
        BufferStoreNode::Make(buf[1], MulNode::Make(va, BroadcastNode::Make(I32(8), 8)),
                              {Ramp(I32(0), 8)}),
        BufferStoreNode::Make(buf[1], MulNode::Make(va, BroadcastNode::Make(I32(6), 8)),
                              {Ramp(I32(8), 8)}),
        BufferStoreNode::Make(buf[2], DivNode::Make(fl(1), c(0.25)), {I32(0)}),
        BufferStoreNode::Make(buf[2], DivNode::Make(fl(3), c(10.0)), {I32(2)}),
        BufferStoreNode::Make(buf[2], DivNode::Make(fl(5), c(1.7014118346046923e38)), {I32(4)}),
    });
  });
  std::string code = Combined(mod);
  const std::string la = "__vload((__global int8*)a, ALL_TRUE_w)";
  EXPECT_NE(code.find("__vstore(__vlsl(" + la + ", (int8)__vbcast(3)), (__global int8*)out"),
            std::string::npos)
      << code;
  EXPECT_NE(code.find("__vstore((" + la + " * (int8)__vbcast(6))"), std::string::npos)
      << code;
  EXPECT_NE(code.find("f[0] = (float)(f[1] * 0x1p+2f/*4.000000e+00*/);"), std::string::npos)
      << code;
  EXPECT_NE(code.find("f[2] = (float)(f[3] / 0x1.4p+3f/*1.000000e+01*/);"), std::string::npos)
      << code;
  EXPECT_NE(code.find("f[4] = (float)(f[5] / "), std::string::npos) << code;
}

// dsl.SerializeTecBinding: TensorIR's loops bound to threadIdx.x become serial loops for the host
// build; other loops stay; a bound loop that synchronises threads is refused.
TEST(SerializeTecBinding, TecLoopsBecomeSerial) {
  Var t = VarNode::Make("t", DataType::Int(32));
  Var j = VarNode::Make("j", DataType::Int(32));
  IterVar tec = IterVarNode::Make(nullptr, VarNode::Make("threadIdx.x", DataType::Int(32)),
                                  IterVarType::kThreadIndex, "threadIdx.x");
  auto build = [&](bool sync) {
    return Kernel({Ptr("a")}, [&](const std::vector<Buffer>& b) {
      Stmt store = BufferStoreNode::Make(b[0], t, {AddNode::Make(t, j)});
      Stmt inner = ForNode::Make(j, I32(0), I32(2), ForKind::kUnrolled, store);
      if (sync) {
        Expr sync_call = Call("int32", "tir.tvm_storage_sync", {StringImmNode::Make("shared")});
        inner = SeqStmtNode::Make({inner, EvaluateNode::Make(sync_call)});
      }
      return ForNode::Make(t, I32(0), I32(4), ForKind::kThreadBinding, inner, tec);
    });
  };
  IRModule out = transform::SerializeTecBinding()->fn(build(false), transform::PassContext());
  const auto* outer = AsPtr<ForNode>(AsPtr<DeclBufferNode>(out->Lookup("k")->body)->body);
  ASSERT_NE(outer, nullptr);
  EXPECT_EQ(outer->for_kind, ForKind::kSerial);
  EXPECT_FALSE(outer->thread_binding);
  const auto* inner = AsPtr<ForNode>(outer->body);
  ASSERT_NE(inner, nullptr);
  EXPECT_EQ(inner->for_kind, ForKind::kUnrolled);
  EXPECT_THROW(transform::SerializeTecBinding()->fn(build(true), transform::PassContext()), Error);
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

Expr ConstMask(const std::vector<bool>& lanes) {
  std::vector<Expr> args;
  for (bool on : lanes) args.push_back(IntImmNode::Make(DataType::Bool(), on ? 1 : 0));
  return CallNode::Make(DataType::Bool(static_cast<int>(lanes.size())),
                        OpNode::Get("dsl.const_mask"), std::move(args));
}

std::vector<bool> Runs(const std::vector<std::pair<bool, int>>& runs) {
  std::vector<bool> lanes;
  for (const auto& [on, n] : runs) lanes.insert(lanes.end(), n, on);
  return lanes;
}

TEST(Printer, ConstantMaskAsConstPred) {
  // Runs with their lengths; a run of one lane after another such run (or first) has no count.
  EXPECT_EQ(AsScript(ConstMask(Runs({{true, 32}}))), "T.const_pred(\"32T\")");
  EXPECT_EQ(AsScript(ConstMask(Runs({{false, 16}, {true, 16}}))), "T.const_pred(\"16F16T\")");
  EXPECT_EQ(AsScript(ConstMask(Runs({{true, 15}, {false, 1}, {true, 1}, {false, 14}, {true, 1}}))),
            "T.const_pred(\"15T1FT14F1T\")");
  EXPECT_EQ(AsScript(ConstMask({true, false, true, false, false, false, false, false})),
            "T.const_pred(\"TFT5F\")");
  // A lane that is not a constant: the generic call form.
  std::vector<Expr> args = {IntImmNode::Make(DataType::Bool(), 1),
                            VarNode::Make("p", DataType::Bool())};
  Expr odd = CallNode::Make(DataType::Bool(2), OpNode::Get("dsl.const_mask"), args);
  EXPECT_EQ(AsScript(odd).find("const_pred"), std::string::npos) << AsScript(odd);
}

std::string RunPass(transform::Pass (*pass)(), const IRModule& mod) {
  return Body(CodeGenDSL(pass()->fn(mod, transform::PassContext()), "k"));
}

TEST(FoldConstant, NamesOfConstantsAreTheirValues) {
  // n = 127; v = broadcast(3); m = const mask; out[0] = a[0] % n; out[8:16] = select(m, v, a);
  // w = a[1] (not a constant) stays a variable.
  Var a = Ptr("a"), out = Ptr("out");
  Var n = VarNode::Make("n", DataType::Int(32));
  Var v = VarNode::Make("v", T("int32x8"));
  Var m = VarNode::Make("m", DataType::Bool(8));
  Var w = VarNode::Make("w", DataType::Int(32));
  IRModule mod = Kernel({a, out}, [&](const std::vector<Buffer>& buf) {
    Expr a0 = BufferLoadNode::Make(buf[0], {I32(0)});
    Expr av = BufferLoadNode::Make(buf[0], {Ramp(I32(0), 8)});
    Stmt body = SeqStmtNode::Make({
        BufferStoreNode::Make(buf[1], ModNode::Make(a0, n), {I32(0)}),
        BufferStoreNode::Make(buf[1], SelectNode::Make(m, v, av), {Ramp(I32(8), 8)}),
        BufferStoreNode::Make(buf[1], w, {I32(1)}),
    });
    body = LetStmtNode::Make(w, BufferLoadNode::Make(buf[0], {I32(1)}), body);
    body = LetStmtNode::Make(m, ConstMask(Runs({{true, 4}, {false, 4}})), body);
    body = LetStmtNode::Make(v, BroadcastNode::Make(I32(3), 8), body);
    return LetStmtNode::Make(n, I32(127), body);
  });
  std::string code = RunPass(transform::FoldConstant, mod);
  EXPECT_EQ(code.find("int n ="), std::string::npos) << code;
  EXPECT_NE(code.find("(a[0] % 127)"), std::string::npos) << code;
  EXPECT_NE(code.find("__vbcast(3)"), std::string::npos) << code;
  EXPECT_NE(code.find("int w = a[1];"), std::string::npos) << code;
  EXPECT_NE(code.find("out[1] = w;"), std::string::npos) << code;
}

TEST(TruncDivMod, NonNegativeNumeratorsOnly) {
  // i in [0, 10): floormod(i, 3) and floordiv(i, 3) are C's % and /; floormod(x, 3) of a
  // parameter x of any sign keeps the floor helper.
  Var out = Ptr("out"), x = VarNode::Make("x", DataType::Int(32));
  Var i = VarNode::Make("i", DataType::Int(32));
  IRModule mod = Kernel({out, x}, [&](const std::vector<Buffer>& buf) {
    Stmt body = SeqStmtNode::Make({
        BufferStoreNode::Make(buf[0], AddNode::Make(FloorModNode::Make(i, I32(3)),
                                                    FloorDivNode::Make(i, I32(3))), {i}),
        BufferStoreNode::Make(buf[0], FloorModNode::Make(x, I32(3)), {I32(10)}),
    });
    return ForNode::Make(i, I32(0), I32(10), ForKind::kSerial, body);
  });
  std::string code = RunPass(transform::TruncDivMod, mod);
  EXPECT_NE(code.find("out[i] = ((i % 3) + (i / 3));"), std::string::npos) << code;
  EXPECT_EQ(code.find("(x % 3)"), std::string::npos) << code;
}

TEST(TruncDivMod, SignedFloorDivByAPowerOfTwoIsAShift) {
  // x of any sign: floordiv(x, 32) is x >> 5 (as Compass writes it); floordiv(x, 3) keeps the
  // helper, and a non-negative numerator is still C's `/`.
  Var out = Ptr("out"), x = VarNode::Make("x", DataType::Int(32));
  Var i = VarNode::Make("i", DataType::Int(32));
  IRModule mod = Kernel({out, x}, [&](const std::vector<Buffer>& buf) {
    Stmt body = SeqStmtNode::Make({
        BufferStoreNode::Make(buf[0], FloorDivNode::Make(x, I32(32)), {I32(0)}),
        BufferStoreNode::Make(buf[0], FloorDivNode::Make(x, I32(3)), {I32(1)}),
        BufferStoreNode::Make(buf[0], FloorDivNode::Make(i, I32(32)), {i}),
    });
    return ForNode::Make(i, I32(0), I32(10), ForKind::kSerial, body);
  });
  std::string code = RunPass(transform::TruncDivMod, mod);
  EXPECT_NE(code.find("out[0] = (x >> 5);"), std::string::npos) << code;
  EXPECT_NE(code.find("out[1] = __floordiv(x, 3);"), std::string::npos) << code;
  EXPECT_NE(code.find("out[i] = (i / 32);"), std::string::npos) << code;
}

TEST(RenameLoopVar, LongLoopNamesBecomeLettersByDepth) {
  // Two sibling loops and one nested loop with long names, and a short-named loop: the long
  // ones are i (twice: the generator prints the second as i_1) and j inside; `t` stays.
  Var out = Ptr("out"), n = VarNode::Make("n", DataType::Int(32));
  Var a = VarNode::Make("a_very_long_loop_variable", DataType::Int(32));
  Var b = VarNode::Make("another_very_long_loop_var", DataType::Int(32));
  Var c = VarNode::Make("a_nested_very_long_loop_var", DataType::Int(32));
  Var t = VarNode::Make("t", DataType::Int(32));
  IRModule mod = Kernel({out, n}, [&](const std::vector<Buffer>& buf) {
    Stmt inner = ForNode::Make(c, I32(0), I32(4), ForKind::kSerial,
                               BufferStoreNode::Make(buf[0], AddNode::Make(a, c), {c}));
    Stmt first = ForNode::Make(a, I32(0), n, ForKind::kSerial, inner);
    Stmt second = ForNode::Make(b, I32(0), n, ForKind::kSerial,
                                ForNode::Make(t, I32(0), I32(2), ForKind::kSerial,
                                              BufferStoreNode::Make(buf[0], t, {b})));
    return SeqStmtNode::Make({first, second});
  });
  std::string code = RunPass(transform::RenameLoopVar, mod);
  EXPECT_NE(code.find("for (int i = 0; i < n; i += 1) {"), std::string::npos) << code;
  EXPECT_NE(code.find("for (int j = 0; j < 4; j += 1) {"), std::string::npos) << code;
  EXPECT_NE(code.find("out[j] = (i + j);"), std::string::npos) << code;
  EXPECT_NE(code.find("for (int i_1 = 0; i_1 < n; i_1 += 1) {"), std::string::npos) << code;
  EXPECT_NE(code.find("for (int t = 0; t < 2; t += 1) {"), std::string::npos) << code;
  EXPECT_EQ(code.find("very_long"), std::string::npos) << code;
}

TEST(CommonSubexprElim, SharedComputationsBecomeOneLetWhereTheirVariablesAreKnown) {
  // out[0] = x == 0 ? x : 20; out[1] = (x == 0 ? 1 : 2) + a[0]: neither select is done twice,
  // so their parts are looked at, and `x == 0` is computed once. a[0] + x, twice, reads memory:
  // never bound. In the loop, i * 4 + x (three times) is bound inside the loop, where i is
  // known. x * 3, done by the `if`'s condition and its then-branch, is bound before the `if`;
  // x * 5, done twice by the then-branch only, is bound inside it.
  Var a = Ptr("a"), out = Ptr("out");
  Var x = VarNode::Make("x", DataType::Int(32)), i = VarNode::Make("i", DataType::Int(32));
  IRModule mod = Kernel({a, out, x}, [&](const std::vector<Buffer>& buf) {
    Expr is0 = EQNode::Make(x, I32(0));
    Expr a0 = BufferLoadNode::Make(buf[0], {I32(0)});
    Expr a1 = BufferLoadNode::Make(buf[0], {I32(1)});
    auto store = [&](Expr v, Expr at) { return BufferStoreNode::Make(buf[1], std::move(v), {at}); };
    Expr idx = AddNode::Make(MulNode::Make(i, I32(4)), x);
    Stmt loop = ForNode::Make(i, I32(0), I32(4), ForKind::kSerial,
                              store(AddNode::Make(idx, idx), idx));
    Expr x3 = MulNode::Make(x, I32(3)), x5 = MulNode::Make(x, I32(5));
    Stmt branch = IfThenElseNode::Make(
        LTNode::Make(x3, a1),
        SeqStmtNode::Make({store(AddNode::Make(a0, x3), I32(4)),
                           store(AddNode::Make(a0, x5), I32(5)),
                           store(AddNode::Make(a1, x5), I32(6))}),
        store(I32(1), I32(7)));
    return SeqStmtNode::Make({
        store(SelectNode::Make(is0, x, I32(20)), I32(0)),
        store(AddNode::Make(SelectNode::Make(is0, I32(1), I32(2)), a0), I32(1)),
        store(AddNode::Make(a0, x), I32(2)),
        store(AddNode::Make(a0, x), I32(3)),
        loop,
        branch,
    });
  });
  std::string code = RunPass(transform::CommonSubexprElim, mod);
  EXPECT_EQ(code,
            "  bool cse_var_2 = (x == 0);\n"
            "  int cse_var_1 = (x * 3);\n"
            "  out[0] = (cse_var_2 ? x : 20);\n"
            "  out[1] = ((cse_var_2 ? 1 : 2) + a[0]);\n"
            "  out[2] = (a[0] + x);\n"
            "  out[3] = (a[0] + x);\n"
            "  for (int i = 0; i < 4; i += 1) {\n"
            "    int cse_var_3 = ((i * 4) + x);\n"
            "    out[cse_var_3] = (cse_var_3 + cse_var_3);\n"
            "  }\n"
            "  if (cse_var_1 < a[1]) {\n"
            "    int cse_var_4 = (x * 5);\n"
            "    out[4] = (a[0] + cse_var_1);\n"
            "    out[5] = (a[0] + cse_var_4);\n"
            "    out[6] = (a[1] + cse_var_4);\n"
            "  } else {\n"
            "    out[7] = 1;\n"
            "  }\n")
      << code;
  // Off with tir.disable_cse_tir.
  transform::PassContext off;
  off.config["tir.disable_cse_tir"] = transform::ConfigValue{true};
  IRModule same = transform::CommonSubexprElim()->fn(mod, off);
  EXPECT_EQ(Body(CodeGenDSL(same, "k")).find("cse_var"), std::string::npos);
}

TEST(RemoveUnitLoops, ALoopOfOneIterationIsItsBodyAtTheStart) {
  // for i in [2, 3): out[i * 8] = i  ->  out[16] = 2; a loop of two iterations stays, and so
  // does a one-iteration loop with an annotation.
  Var out = Ptr("out"), i = VarNode::Make("i", DataType::Int(32));
  Var j = VarNode::Make("j", DataType::Int(32)), m = VarNode::Make("m", DataType::Int(32));
  IRModule mod = Kernel({out}, [&](const std::vector<Buffer>& buf) {
    AttrMap note;
    note["pragma_keep"] = I32(1);
    return SeqStmtNode::Make({
        ForNode::Make(i, I32(2), I32(1), ForKind::kSerial,
                      BufferStoreNode::Make(buf[0], i, {MulNode::Make(i, I32(8))})),
        ForNode::Make(j, I32(0), I32(2), ForKind::kSerial,
                      BufferStoreNode::Make(buf[0], j, {j})),
        ForNode::Make(m, I32(0), I32(1), ForKind::kSerial, BufferStoreNode::Make(buf[0], m, {m}),
                      nullptr, note),
    });
  });
  std::string code = RunPass(transform::RemoveUnitLoops, mod);
  EXPECT_NE(code.find("out[(2 * 8)] = 2;"), std::string::npos) << code;
  EXPECT_NE(code.find("for (int j = 0; j < 2; j += 1)"), std::string::npos) << code;
  EXPECT_NE(code.find("for (int m = 0; m < 1; m += 1)"), std::string::npos) << code;
  IRModule once = transform::RemoveUnitLoops()->fn(mod, transform::PassContext());
  EXPECT_EQ(transform::RemoveUnitLoops()->fn(once, transform::PassContext()), once);
}

}  // namespace
}  // namespace tessera
