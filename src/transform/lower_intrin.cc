// tir.LowerIntrin: math intrinsics become calls of the C library function for their type
// (tir.exp on float32 -> expf), following each Op's "c.name" attribute or registered lowering.
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

Expr FloatConst(DataType t, double v) { return FloatImmNode::Make(t, v); }

class IntrinLowerer : public ExprMutator {
 public:
  explicit IntrinLowerer(std::string target) : target_(std::move(target)) {}

  Expr VisitExpr_(const CallNode* op) override {
    Expr e = ExprMutator::VisitExpr_(op);
    auto* call = AsPtr<CallNode>(e);
    auto* callee = call ? AsPtr<OpNode>(call->op) : nullptr;
    if (!callee || !call->dtype.is_scalar()) return e;
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
      if (t.is_float()) return Math(t, "fabs", {x});
      if (t.is_uint()) return x;
      return SelectNode::Make(LTNode::Make(x, MakeConst(t, int64_t(0))),
                              SubNode::Make(MakeConst(t, int64_t(0)), x), x);
    }
    if (!t.is_float() && name != "tir.isnan" && name != "tir.isinf" && name != "tir.isfinite") {
      return GetRef(call);
    }
    if (name == "tir.rsqrt") return DivNode::Make(FloatConst(t, 1.0), Math(t, "sqrt", {args[0]}));
    if (name == "tir.sigmoid") {
      Expr e = Math(t, "exp", {SubNode::Make(FloatConst(t, 0.0), args[0])});
      return DivNode::Make(FloatConst(t, 1.0), AddNode::Make(FloatConst(t, 1.0), e));
    }
    if (name == "tir.isnan" || name == "tir.isinf" || name == "tir.isfinite") {
      // The C classification macros, whose int result is compared to 0.
      Expr c = Extern(DataType::Int(32), name.substr(4), {args[0]});
      return NENode::Make(c, Int32(0));
    }
    std::string cname = callee->GetStrAttr("c.name");
    if (cname.empty()) return GetRef(call);
    return Math(t, cname, args);
  }

  // name(args) in the precision of `t`: the f-suffixed float version for float32; float16
  // computes in float32.
  Expr Math(DataType t, const std::string& name, const std::vector<Expr>& args) {
    if (t.bits() == 64) return Extern(t, name, args);
    if (t.bits() == 32) return Extern(t, name + "f", args);
    DataType f32 = DataType::Float(32);
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
        Stmt body = StmtIntrinLowerer(target).VisitStmt(f->body);
        return body == f->body ? f : f->WithBody(body);
      },
      0, "tir.LowerIntrin");
}
TESSERA_REGISTER_PASS("tir.LowerIntrin", [] { return LowerIntrin("c"); });

}  // namespace transform
}  // namespace tessera
