// CalculateAllocatedBytes: the peak bytes of live Allocate statements per memory scope.
#include <algorithm>
#include <map>

#include "tessera/ir/functor.h"
#include "tessera/transform/analysis.h"

namespace tessera {
namespace transform {
namespace {

class AllocationCounter : public StmtVisitor {
 public:
  std::map<std::string, int64_t> peak;

  void VisitStmt_(const AllocateNode* op) override {
    const std::string scope = op->buffer_var->pointer ? op->buffer_var->pointer->scope : "global";
    // Symbolic extents count 0, as a constant allocation size of 0.
    int64_t elements = 1;
    for (const Expr& e : op->extents) {
      auto c = AsConstInt(e);
      elements = c ? elements * *c : 0;
    }
    // A scalable vector's size is known only on the hardware: it counts 0 too.
    int64_t bytes = op->dtype.is_scalable_vector() ? 0 : elements * op->dtype.bytes();
    int64_t& live = live_[scope];
    live += bytes;
    int64_t& most = peak[scope];
    most = std::max(most, live);
    StmtVisitor::VisitStmt_(op);
    live_[scope] -= bytes;
  }

 private:
  std::map<std::string, int64_t> live_;
};

}  // namespace

std::vector<std::pair<std::string, int64_t>> CalculateAllocatedBytes(const PrimFunc& func) {
  AllocationCounter counter;
  counter.VisitStmt(func->body);
  return {counter.peak.begin(), counter.peak.end()};
}

}  // namespace transform
}  // namespace tessera
