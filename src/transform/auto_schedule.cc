// tir.AutoSchedule: the automatic schedule as a pass of the begin stage (see autoschedule/).
#include "tessera/autoschedule/auto_schedule.h"

#include "tessera/transform/passes.h"

namespace tessera {
namespace transform {
namespace {

const bool kAutoScheduleConfigs = [] {
  // "tir.auto_schedule": run the pass (ts.build: yes, ts.lower: no, unless set).
  RegisterConfigOption("tir.auto_schedule", ConfigType::kBool);
  std::vector<std::pair<std::string, ConfigType>> fields;
  for (const std::string& name : TargetFacts::Names()) {
    fields.emplace_back(name, ConfigType::kInt);
  }
  RegisterConfigRecord("tir.AutoSchedule", fields);
  return true;
}();

IRModule AutoScheduleModule(IRModule mod, const PassContext& ctx) {
  std::string target;
  std::vector<std::string> unscheduled;
  for (const auto& [gv, func] : mod->functions) {
    if (autoschedule::CarriesNoSchedule(func)) {
      if (target.empty()) target = func->GetStrAttr("target", "c");
      unscheduled.push_back(gv->name_hint);
    }
  }
  if (target.empty()) return mod;
  TargetFacts facts = FactsForTarget(target);
  for (const std::string& name : TargetFacts::Names()) {
    int64_t v = ctx.GetRecordInt("tir.AutoSchedule", name, -1);
    if (v != -1) facts.Override(name, v);
  }
  IRModule out = autoschedule::AutoSchedule(mod, facts).mod();
  if (!facts.IsGpu()) return out;
  for (const std::string& name : unscheduled) {
    PrimFunc func = out->Lookup(name);
    PrimFunc bound = func ? autoschedule::BindParallelLoops(func, facts) : func;
    if (func && bound != func) out = out->WithFunction(out->GetGlobalVar(name), bound);
  }
  return out;
}

}  // namespace

Pass AutoSchedule() { return CreateModulePass(AutoScheduleModule, 0, "tir.AutoSchedule"); }
TESSERA_REGISTER_PASS("tir.AutoSchedule", AutoSchedule);

}  // namespace transform
}  // namespace tessera
