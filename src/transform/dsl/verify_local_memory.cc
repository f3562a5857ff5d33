// dsl.VerifyLocalMemory: static lsram and shared allocations must fit the target's SRAM.
//
// Shared allocations are one static block per core (every function's at once): they are summed
// over the module. An lsram allocation lives while its function runs (the generated C keeps it
// in the function's frame), so the lsram in use is that of the functions on one call path: the
// allocations of a function are counted with those of its callers, and functions that do not
// call each other use the same memory in turn.
#include <algorithm>
#include <functional>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

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

int64_t AllocationBytes(const AllocateNode* op, const char* scope) {
  int64_t count = 1;
  for (const Expr& e : op->extents) {
    auto c = AsConstInt(e);
    if (!c) {
      TESSERA_THROW(op->span) << scope << " allocation \"" << op->buffer_var->name
                              << "\" needs a size known at compile time";
    }
    count *= *c;
  }
  return count * op->dtype.bytes();
}

// Sums the allocations of each checked scope in program order, starting from `used` (lsram:
// the callers' on the deepest path); throws at the first one that makes a scope overflow.
class LocalMemoryChecker : public StmtVisitor {
 public:
  LocalMemoryChecker(const DSLTargetDesc& target, int64_t lsram_of_callers, int64_t shared_used)
      : target_(target),
        usage_{{"lsram", "local SRAM", "per TEC", target.lsram_bytes_per_tec, lsram_of_callers},
               {"shared", "shared SRAM", "per core", target.shared_bytes_per_core, shared_used}},
        callers_(lsram_of_callers) {}

  int64_t shared_used() const { return usage_[1].used; }

  void VisitStmt_(const AllocateNode* op) override {
    const std::string& scope = op->buffer_var->pointer->scope;
    for (Usage& u : usage_) {
      if (scope != u.scope) continue;
      int64_t bytes = AllocationBytes(op, u.scope);
      u.used += bytes;
      if (u.used > u.capacity) {
        std::ostringstream callers;
        if (&u == &usage_[0] && callers_ > 0) {
          callers << " (" << callers_ << " of them allocated by the functions that call this one)";
        }
        TESSERA_THROW(op->span) << u.scope << " allocation \"" << op->buffer_var->name << "\" ("
                                << bytes << " bytes) exceeds the " << u.what << " of "
                                << target_.name << ": " << u.used << " of " << u.capacity
                                << " bytes " << u.per << " would be in use" << callers.str();
      }
    }
    StmtVisitor::VisitStmt_(op);
  }

 private:
  const DSLTargetDesc& target_;
  std::vector<Usage> usage_;
  int64_t callers_;
};

// The lsram bytes a function allocates itself and the module functions it calls.
class FunctionSummary : public StmtExprVisitor {
 public:
  int64_t lsram = 0;
  std::unordered_set<std::string> callees;

  void VisitStmt_(const AllocateNode* op) override {
    if (op->buffer_var->pointer->scope == "lsram") lsram += AllocationBytes(op, "lsram");
    StmtExprVisitor::VisitStmt_(op);
  }
  void VisitExpr_(const CallNode* op) override {
    if (const auto* gv = AsPtr<GlobalVarNode>(op->op)) callees.insert(gv->name_hint);
    StmtExprVisitor::VisitExpr_(op);
  }
};

}  // namespace

Pass VerifyLocalMemory(const DSLTargetDesc& target) {
  return CreateModulePass(
      [target](IRModule mod, const PassContext&) {
        std::unordered_map<std::string, FunctionSummary> summary;
        std::unordered_set<std::string> called;
        for (const auto& [gv, f] : mod->functions) {
          FunctionSummary& s = summary[gv->name_hint];
          s.VisitStmt(f->body);
          for (const std::string& c : s.callees) called.insert(c);
        }
        // above[f]: the most lsram that f's callers hold on a call path from a function that no
        // other calls (the entry). A cycle (refused by the code generator) is not followed.
        std::unordered_map<std::string, int64_t> above;
        std::unordered_set<std::string> on_path;
        std::function<void(const std::string&, int64_t)> walk = [&](const std::string& name,
                                                                    int64_t held) {
          auto it = summary.find(name);
          if (it == summary.end() || on_path.count(name)) return;
          auto seen = above.find(name);
          if (seen != above.end() && seen->second >= held) return;
          above[name] = held;
          on_path.insert(name);
          for (const std::string& c : it->second.callees) walk(c, held + it->second.lsram);
          on_path.erase(name);
        };
        for (const auto& [gv, f] : mod->functions) {
          if (!called.count(gv->name_hint)) walk(gv->name_hint, 0);
        }
        int64_t shared = 0;
        for (const auto& [gv, f] : mod->functions) {
          auto it = above.find(gv->name_hint);
          LocalMemoryChecker checker(target, it == above.end() ? 0 : it->second, shared);
          checker.VisitStmt(f->body);
          shared = checker.shared_used();
        }
        return mod;
      },
      0, "dsl.VerifyLocalMemory");
}

TESSERA_REGISTER_PASS("dsl.VerifyLocalMemory",
                      [] { return VerifyLocalMemory(GetDSLTarget("X2_1204")); });

}  // namespace transform
}  // namespace tessera
