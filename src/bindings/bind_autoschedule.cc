// Bindings of the automatic schedule (tessera.autoschedule); its facts come from a Target.
#include "common.h"
#include "tessera/autoschedule/auto_schedule.h"

namespace tessera {
namespace bindings {
using namespace tessera::autoschedule;

void BindAutoSchedule(nb::module_& m) {
  m.def(
      "auto_schedule",
      [](IRModule mod, const Target& target) { return AutoSchedule(mod, target.facts()); }, "mod"_a,
      "target"_a);
  m.def(
      "carries_no_schedule",
      [](const PrimFunc& func) {
        std::string why;
        bool yes = CarriesNoSchedule(func, &why);
        return std::make_pair(yes, why);
      },
      "func"_a);
}

}  // namespace bindings
}  // namespace tessera
