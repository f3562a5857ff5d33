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
      "auto_schedule_space",
      [](IRModule mod, const Target& target, const std::vector<int64_t>& decisions, int64_t seed,
         bool draw_missing) {
        SpacePoint point = AutoScheduleSpace(mod, target.facts(), decisions, seed, draw_missing);
        return std::make_tuple(std::move(point.sch), point.decisions, point.sizes);
      },
      "mod"_a, "target"_a, "decisions"_a, "seed"_a, "draw_missing"_a = true);
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
