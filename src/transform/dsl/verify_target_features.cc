// dsl.VerifyTargetFeatures: intrinsic forms only X3 targets have are errors on other targets.
#include "tessera/ir/functor.h"
#include "tessera/support/error.h"
#include "tessera/transform/dsl_passes.h"

namespace tessera {
namespace transform {
namespace {

// A call of `op` whose argument `arg` is a nonzero constant uses `feature`.
struct X3Feature {
  const char* op;
  size_t arg;
  const char* feature;
};

const X3Feature kX3Features[] = {
    {"dsl.vrpmax", 2, "S.vrpmax(return_idx=True)"},
    {"dsl.vrpmin", 2, "S.vrpmin(return_idx=True)"},
};

class FeatureChecker : public StmtExprVisitor {
 public:
  explicit FeatureChecker(const DSLTargetDesc& target) : target_(target) {}

  void VisitExpr_(const CallNode* op) override {
    for (const X3Feature& f : kX3Features) {
      if (!op->is_op(f.op) || op->args.size() <= f.arg) continue;
      auto flag = AsConstInt(op->args[f.arg]);
      if (flag && *flag != 0) {
        TESSERA_THROW(op->span) << f.feature << " needs an X3 target, not " << target_.name;
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
        if (target.is_x3) return mod;
        FeatureChecker checker(target);
        for (const auto& [gv, f] : mod->functions) checker.VisitStmt(f->body);
        return mod;
      },
      0, "dsl.VerifyTargetFeatures");
}

TESSERA_REGISTER_PASS("dsl.VerifyTargetFeatures",
                      [] { return VerifyTargetFeatures(GetDSLTarget("X2_1204")); });

}  // namespace transform
}  // namespace tessera
