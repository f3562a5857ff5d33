// dsl.VerifyLocalMemory: static lsram and shared allocations must fit the target's SRAM.
#include "tessera/ir/functor.h"
#include "tessera/support/error.h"
#include "tessera/transform/dsl_passes.h"

namespace tessera {
namespace transform {
namespace {

struct Usage {
  const char* scope;
  const char* what;  // the target's memory, for the message
  const char* per;
  int64_t capacity;
  int64_t used = 0;
};

// Sums the allocations of each checked scope in program order; throws at the first one that
// makes a scope overflow.
class LocalMemoryChecker : public StmtVisitor {
 public:
  LocalMemoryChecker(const DSLTargetDesc& target)
      : target_(target),
        usage_{{"lsram", "local SRAM", "per TEC", target.lsram_bytes_per_tec},
               {"shared", "shared SRAM", "per core", target.shared_bytes_per_core}} {}

  void VisitStmt_(const AllocateNode* op) override {
    const std::string& scope = op->buffer_var->pointer->scope;
    for (Usage& u : usage_) {
      if (scope != u.scope) continue;
      int64_t count = 1;
      for (const Expr& e : op->extents) {
        auto c = AsConstInt(e);
        if (!c) {
          TESSERA_THROW(op->span) << u.scope << " allocation \"" << op->buffer_var->name
                                  << "\" needs a size known at compile time";
        }
        count *= *c;
      }
      int64_t bytes = count * op->dtype.bytes();
      u.used += bytes;
      if (u.used > u.capacity) {
        TESSERA_THROW(op->span) << u.scope << " allocation \"" << op->buffer_var->name << "\" ("
                                << bytes << " bytes) exceeds the " << u.what << " of "
                                << target_.name << ": " << u.used << " of " << u.capacity
                                << " bytes " << u.per << " would be in use";
      }
    }
    StmtVisitor::VisitStmt_(op);
  }

 private:
  const DSLTargetDesc& target_;
  std::vector<Usage> usage_;
};

}  // namespace

Pass VerifyLocalMemory(const DSLTargetDesc& target) {
  return CreateModulePass(
      [target](IRModule mod, const PassContext&) {
        // Every function of the module is reachable from the entry and its storage is static:
        // the sums run over all of them.
        LocalMemoryChecker checker(target);
        for (const auto& [gv, f] : mod->functions) checker.VisitStmt(f->body);
        return mod;
      },
      0, "dsl.VerifyLocalMemory");
}

TESSERA_REGISTER_PASS("dsl.VerifyLocalMemory",
                      [] { return VerifyLocalMemory(GetDSLTarget("X2_1204")); });

}  // namespace transform
}  // namespace tessera
