// Bindings of the automatic schedule: target facts and tessera.autoschedule.
#include "common.h"
#include "tessera/autoschedule/auto_schedule.h"

namespace tessera {
namespace bindings {
namespace {

using namespace tessera::autoschedule;

TargetFacts Facts(const std::string& target, const std::map<std::string, int64_t>& overrides) {
  TargetFacts facts = FactsForTarget(target);
  for (const auto& [name, value] : overrides) facts.Override(name, value);
  return facts;
}

}  // namespace

void BindAutoSchedule(nb::module_& m) {
  m.def(
      "auto_schedule",
      [](IRModule mod, const std::string& target, const std::map<std::string, int64_t>& facts) {
        return AutoSchedule(mod, Facts(target, facts));
      },
      "mod"_a, "target"_a, "facts"_a);
  m.def(
      "auto_schedule_space",
      [](IRModule mod, const std::string& target, const std::map<std::string, int64_t>& facts,
         const std::vector<int64_t>& decisions, int64_t seed, bool draw_missing) {
        SpacePoint point =
            AutoScheduleSpace(mod, Facts(target, facts), decisions, seed, draw_missing);
        return std::make_tuple(std::move(point.sch), point.decisions, point.sizes);
      },
      "mod"_a, "target"_a, "facts"_a, "decisions"_a, "seed"_a, "draw_missing"_a = true);
  m.def(
      "target_facts",
      [](const std::string& target, const std::map<std::string, int64_t>& overrides) {
        TargetFacts facts = Facts(target, overrides);
        nb::dict out;
        out["kind"] = facts.kind;
        out["isa"] = facts.isa;
        for (const std::string& name : TargetFacts::Names()) out[name.c_str()] = facts.Get(name);
        return out;
      },
      "target"_a, "overrides"_a);
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
