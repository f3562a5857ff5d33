// tir.LowerIntrin: math intrinsics become calls of the C library function for their type
// (tir.exp on float32 -> expf), following each Op's "c.name" attribute or registered lowering.
#include <unordered_map>

#include "tessera/ir/functor.h"
#include "tessera/ir/op.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace transform {
namespace {

Expr Extern(DataType t, const std::string& name, std::vector<Expr> args) {
  args.insert(args.begin(), StringImmNode::Make(name));
  return CallNode::Make(t, OpNode::Get("tir.call_pure_extern"), std::move(args));
}

Expr FloatConst(DataType t, double v) { return MakeConst(t, v); }

class IntrinLowerer : public ExprMutator {
 public:
  explicit IntrinLowerer(std::string target) : target_(std::move(target)) {}

  Expr VisitExpr_(const CallNode* op) override {
    Expr e = ExprMutator::VisitExpr_(op);
    auto* call = AsPtr<CallNode>(e);
    auto* callee = call ? AsPtr<OpNode>(call->op) : nullptr;
    if (!callee) return e;
    auto rule = callee->lowering.find(target_);
    if (rule != callee->lowering.end()) return rule->second(*call);
    return Lower(call, callee);
  }

 private:
  Expr Lower(const CallNode* call, const OpNode* callee) {
    const std::string& name = callee->name;
    DataType t = call->dtype;
    const auto& args = call->args;
    if (name == "tir.abs") {
      Expr x = args[0];
      if (t.is_float() && t.bits() == 16 && target_ != "cuda") {
        // |x| of 16-bit floats clears the sign bit of int16 lanes: through float32 it took two
        // conversions (and quieted a signalling NaN, which numpy's float16 abs keeps).
        DataType bits = DataType::Int(16, t.lanes());
        Expr b = CallNode::Make(bits, OpNode::Get("tir.reinterpret"), {x});
        b = CallNode::Make(bits, OpNode::Get("tir.bitwise_and"),
                           {b, MakeConst(bits, int64_t(0x7fff))});
        return CallNode::Make(t, OpNode::Get("tir.reinterpret"), {b});
      }
      if (t.is_float()) return Math(t, "fabs", {x});
      if (t.is_uint()) return x;
      return SelectNode::Make(LTNode::Make(x, MakeConst(t, int64_t(0))),
                              SubNode::Make(MakeConst(t, int64_t(0)), x), x);
    }
    if (!t.is_float() && name != "tir.isnan" && name != "tir.isinf" && name != "tir.isfinite") {
      return GetRef(call);
    }
    if (name == "tir.call_llvm_pure_intrin" || name == "tir.call_llvm_intrin") {
      // Without LLVM, an LLVM math intrinsic of floats is the TIR math op of the same meaning.
      Expr same = FromLLVMIntrinsic(call);
      if (same == nullptr) return GetRef(call);
      auto* math = AsPtr<CallNode>(same);
      return Lower(math, AsPtr<OpNode>(math->op));
    }
    if (target_ == "cuda") {
      if (Expr e = LowerCUDA(name, t, args)) return e;
    }
    if (name == "tir.rsqrt") return DivNode::Make(FloatConst(t, 1.0), Math(t, "sqrt", {args[0]}));
    // C has no exp10: 10 ** x.
    if (name == "tir.exp10") return Math(t, "pow", {FloatConst(t, 10.0), args[0]});
    if (name == "tir.sigmoid") {
      Expr e = Math(t, "exp", {SubNode::Make(FloatConst(t, 0.0), args[0])});
      return DivNode::Make(FloatConst(t, 1.0), AddNode::Make(FloatConst(t, 1.0), e));
    }
    if (name == "tir.isnan" || name == "tir.isinf" || name == "tir.isfinite") {
      if (t.is_vector()) return GetRef(call);
      // The C classification macros, whose int result is compared to 0.
      Expr c = Extern(DataType::Int(32), name.substr(4), {args[0]});
      return NENode::Make(c, Int32(0));
    }
    std::string cname = callee->GetStrAttr("c.name");
    if (cname.empty()) return GetRef(call);
    return Math(t, cname, args);
  }

  // The TIR op call computing what the LLVM float intrinsic `call` names ("llvm.sqrt",
  // "llvm.sqrt.f32", ...), or null for an intrinsic without one.
  static Expr FromLLVMIntrinsic(const CallNode* call) {
    static const std::unordered_map<std::string, std::string> kSame = {
        {"sqrt", "tir.sqrt"},   {"exp", "tir.exp"},         {"exp2", "tir.exp2"},
        {"log", "tir.log"},     {"log2", "tir.log2"},       {"log10", "tir.log10"},
        {"sin", "tir.sin"},     {"cos", "tir.cos"},         {"floor", "tir.floor"},
        {"ceil", "tir.ceil"},   {"trunc", "tir.trunc"},     {"nearbyint", "tir.nearbyint"},
        {"rint", "tir.nearbyint"}, {"fabs", "tir.fabs"},    {"pow", "tir.pow"},
        {"copysign", "tir.copysign"}};
    if (call->args.empty()) return nullptr;
    auto* id = AsPtr<StringImmNode>(call->args[0]);
    if (id == nullptr || id->value.rfind("llvm.", 0) != 0) return nullptr;
    std::string base = id->value.substr(5);
    base = base.substr(0, base.find('.'));  // drop an overload suffix (".f32", ".v4f32")
    auto it = kSame.find(base);
    if (it == kSame.end()) return nullptr;
    std::vector<Expr> args(call->args.begin() + 1, call->args.end());
    auto* op = AsPtr<OpNode>(OpNode::Get(it->second));
    if (op != nullptr && op->num_inputs >= 0 && static_cast<size_t>(op->num_inputs) != args.size()) {
      return nullptr;
    }
    return CallNode::Make(call->dtype, OpNode::Get(it->second), std::move(args), call->span);
  }

  // CUDA's own math functions: half-precision ones (cuda_fp16.h, cuda_bf16.h) and the
  // reciprocal square root and exp10 that C lacks.
  Expr LowerCUDA(const std::string& name, DataType t, const std::vector<Expr>& args) {
    static const std::unordered_map<std::string, std::string> kHalf = {
        {"tir.exp", "hexp"},     {"tir.exp2", "hexp2"},   {"tir.exp10", "hexp10"},
        {"tir.log", "hlog"},     {"tir.log2", "hlog2"},   {"tir.log10", "hlog10"},
        {"tir.sqrt", "hsqrt"},   {"tir.rsqrt", "hrsqrt"}, {"tir.sin", "hsin"},
        {"tir.cos", "hcos"},     {"tir.floor", "hfloor"}, {"tir.ceil", "hceil"},
        {"tir.trunc", "htrunc"}, {"tir.round", "hrint"},  {"tir.nearbyint", "hrint"}};
    if (t.bits() == 16 && t.is_scalar()) {
      auto it = kHalf.find(name);
      if (it != kHalf.end()) return Extern(t, it->second, args);
      return nullptr;
    }
    if (name == "tir.rsqrt" || name == "tir.exp10") return Math(t, name.substr(4), args);
    return nullptr;
  }

  // name(args) in the precision of `t`: the f-suffixed float version for float32; float16
  // computes in float32.
  Expr Math(DataType t, const std::string& name, const std::vector<Expr>& args) {
    if (t.bits() == 64) return Extern(t, name, args);
    if (t.bits() == 32) return Extern(t, name + "f", args);
    DataType f32 = DataType::Float(32, t.lanes());
    std::vector<Expr> wide;
    for (const Expr& a : args) wide.push_back(CastNode::Make(f32, a));
    return CastNode::Make(t, Extern(f32, name + "f", wide));
  }

  std::string target_;
};

class StmtIntrinLowerer : public StmtExprMutator {
 public:
  explicit StmtIntrinLowerer(std::string target) : lower_(std::move(target)) {}
  Expr VisitExpr(const Expr& e) override { return lower_.VisitExpr(e); }

 private:
  IntrinLowerer lower_;
};

}  // namespace

Pass LowerIntrin(const std::string& target) {
  return CreatePrimFuncPass(
      [target](PrimFunc f, IRModule, const PassContext&) {
        // A module of a GPU build holds host and device functions; each has its own rules.
        if ((f->GetStrAttr("target") == "cuda") != (target == "cuda")) return f;
        Stmt body = StmtIntrinLowerer(target).VisitStmt(f->body);
        return body == f->body ? f : f->WithBody(body);
      },
      0, "tir.LowerIntrin");
}
TESSERA_REGISTER_PASS("tir.LowerIntrin", [] { return LowerIntrin("c"); });

}  // namespace transform
}  // namespace tessera
