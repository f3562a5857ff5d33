// dsl.VerifyTargetFeatures: intrinsic forms only X3 targets have are errors on other targets, and
// those only X2 targets have (the op attribute "dsl.x2_feature") are errors on X3 targets. A form
// that is X2-only for some operand types (S.vqdpa of float vectors, dsl.vqdpa) is marked by the
// parser instead, as the function attribute "dsl.x2_feature": a StringImm naming the form,
// spanning its first use.
#include <string>

#include "tessera/ir/functor.h"
#include "tessera/ir/op.h"
#include "tessera/support/error.h"
#include "tessera/transform/dsl_passes.h"

namespace tessera {
namespace transform {
namespace {

class FeatureChecker : public StmtExprVisitor {
 public:
  explicit FeatureChecker(const DSLTargetDesc& target) : target_(target) {}

  // A call of an op with the attributes "dsl.x3_arg" (an argument index) and "dsl.x3_feature"
  // (set by the intrinsic table) uses the feature when that argument is a nonzero constant.
  void VisitExpr_(const CallNode* op) override {
    const auto* callee = AsPtr<OpNode>(op->op);
    if (target_.is_x3) {
      std::string feature = callee != nullptr ? callee->GetStrAttr("dsl.x2_feature") : "";
      if (!feature.empty()) {
        TESSERA_THROW(op->span) << feature << " is an X2 instruction; the target " << target_.name
                                << " has no such instruction";
      }
      StmtExprVisitor::VisitExpr_(op);
      return;
    }
    std::string arg = callee != nullptr ? callee->GetStrAttr("dsl.x3_arg") : "";
    if (!arg.empty()) {
      size_t index = std::stoul(arg);
      auto flag = index < op->args.size() ? AsConstInt(op->args[index]) : std::nullopt;
      if (flag && *flag != 0) {
        TESSERA_THROW(op->span) << callee->GetStrAttr("dsl.x3_feature")
                                << " needs an X3 target, not " << target_.name;
      }
    }
    StmtExprVisitor::VisitExpr_(op);
  }

 private:
  const DSLTargetDesc& target_;
};

}  // namespace

Pass VerifyTargetFeatures(const DSLTargetDesc& target) {
  return CreateModulePass(
      [target](IRModule mod, const PassContext&) {
        FeatureChecker checker(target);
        for (const auto& [gv, f] : mod->functions) {
          if (target.is_x3) {
            auto it = f->attrs.find("dsl.x2_feature");
            const auto* use = it != f->attrs.end() ? AsPtr<StringImmNode>(it->second) : nullptr;
            if (use != nullptr) {
              TESSERA_THROW(use->span) << use->value << " is an X2 instruction; the target "
                                       << target.name << " has no such instruction";
            }
          }
          checker.VisitStmt(f->body);
        }
        return mod;
      },
      0, "dsl.VerifyTargetFeatures");
}

TESSERA_REGISTER_PASS("dsl.VerifyTargetFeatures",
                      [] { return VerifyTargetFeatures(GetDSLTarget("X2_1204")); });

}  // namespace transform
}  // namespace tessera
