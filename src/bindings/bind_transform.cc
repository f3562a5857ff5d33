// Bindings of passes, PassContext and the staged lowerer.
#include "common.h"
#include "tessera/transform/analysis.h"
#include "tessera/transform/passes.h"
#include "tessera/transform/stage.h"

namespace tessera {
namespace bindings {
namespace {

using transform::ConfigDict;
using transform::ConfigValue;
using transform::PassContext;

ConfigValue ToConfig(nb::handle h) {
  ConfigValue v;
  if (nb::isinstance<nb::bool_>(h)) {
    v.value = nb::cast<bool>(h);
  } else if (nb::isinstance<nb::int_>(h)) {
    v.value = nb::cast<int64_t>(h);
  } else if (nb::isinstance<nb::float_>(h)) {
    v.value = nb::cast<double>(h);
  } else if (nb::isinstance<nb::str>(h)) {
    v.value = nb::cast<std::string>(h);
  } else if (nb::isinstance<nb::dict>(h)) {
    auto d = std::make_shared<ConfigDict>();
    for (auto [k, item] : nb::borrow<nb::dict>(h)) (*d)[nb::cast<std::string>(k)] = ToConfig(item);
    v.value = d;
  } else {
    throw nb::type_error("config values must be bool, int, float, str or dict");
  }
  return v;
}

nb::object FromConfig(const ConfigValue& v) {
  switch (v.value.index()) {
    case 0:
      return nb::cast(std::get<bool>(v.value));
    case 1:
      return nb::cast(std::get<int64_t>(v.value));
    case 2:
      return nb::cast(std::get<double>(v.value));
    case 3:
      return nb::cast(std::get<std::string>(v.value));
    default: {
      nb::dict d;
      for (const auto& [k, item] : *std::get<std::shared_ptr<ConfigDict>>(v.value)) d[k.c_str()] = FromConfig(item);
      return d;
    }
  }
}

}  // namespace

void BindTransform(nb::module_& m) {
  nb::class_<PassContext>(m, "PassContext")
      .def(nb::init<>())
      .def_rw("opt_level", &PassContext::opt_level)
      .def_rw("required_pass", &PassContext::required_pass)
      .def_rw("disabled_pass", &PassContext::disabled_pass)
      .def("set_config", [](PassContext& c, const std::string& k, nb::handle v) { c.SetConfig(k, ToConfig(v)); })
      .def_prop_ro("config",
                   [](const PassContext& c) {
                     nb::dict d;
                     for (const auto& [k, v] : c.config) d[k.c_str()] = FromConfig(v);
                     return d;
                   })
      .def("pass_enabled", &PassContext::PassEnabled)
      .def_static("current", &PassContext::Current)
      .def_static("enter_with_scope", &PassContext::EnterWithScope)
      .def_static("exit_with_scope", &PassContext::ExitWithScope)
      .def_static("list_configs", &transform::ListConfigOptions);
  m.def("list_passes", &transform::PassRegistry::List);
  m.def("pass_exists", &transform::PassRegistry::Exists);
  m.def("host_vector_bits", &transform::HostVectorBits);
  m.def("apply_pass", [](const std::string& name, IRModule mod) {
    auto pass = transform::PassRegistry::Get(name);
    return pass->fn(mod, PassContext::Current());
  }, "name"_a, "mod"_a, "Run one registered pass on a module under the current PassContext.");
  m.def("simplify_expr", &transform::SimplifyExpr);
  m.def("pointer_access_extents", &transform::PointerAccessExtents, "mod"_a, "entry"_a);
  m.def(
      "verify_well_formed",
      [](PrimFunc f) {
        std::vector<std::pair<std::string, Span>> out;
        for (const auto& e : transform::VerifyWellFormed(f)) out.emplace_back(e.message, e.span);
        return out;
      },
      "func"_a, "Well-formedness violations of a PrimFunc as (message, span) pairs.");

  nb::class_<DSLTargetDesc>(m, "DSLTarget")
      .def_ro("name", &DSLTargetDesc::name)
      .def_ro("cores", &DSLTargetDesc::cores)
      .def_ro("tecs_per_core", &DSLTargetDesc::tecs_per_core)
      .def_ro("lsram_bytes_per_tec", &DSLTargetDesc::lsram_bytes_per_tec)
      .def_ro("shared_bytes_per_core", &DSLTargetDesc::shared_bytes_per_core)
      .def_ro("is_x3", &DSLTargetDesc::is_x3);
  m.def("get_dsl_target", &GetDSLTarget, nb::rv_policy::copy);
  m.def("dsl_targets", &DSLTargets, nb::rv_policy::copy);

  nb::class_<runtime::ModuleNode>(m, "RuntimeModule")
      .def_ro("target", &runtime::ModuleNode::target)
      .def_ro("entry", &runtime::ModuleNode::entry)
      .def_ro("source", &runtime::ModuleNode::source)
      .def_ro("lib_path", &runtime::ModuleNode::lib_path)
      .def_ro("ir", &runtime::ModuleNode::ir)
      .def_ro("device_source", &runtime::ModuleNode::device_source)
      .def_prop_ro("device_binary",
                   [](const runtime::ModuleNode& m) {
                     return nb::bytes(m.device_binary.data(), m.device_binary.size());
                   })
      .def_ro("device_format", &runtime::ModuleNode::device_format);

  nb::class_<lower::StageLowerer>(m, "StageLowerer")
      .def("__init__",
           [](lower::StageLowerer* self, IRModule mod, const std::string& target,
              const std::string& dsl_target, const std::string& entry,
              const std::string& include_dir, const std::string& cache_dir) {
             lower::LowerContext ctx;
             // "cuda -arch=sm_80": the kind names the stage table, the rest are its options.
             size_t space = target.find(' ');
             ctx.target = target.substr(0, space);
             if (space != std::string::npos) ctx.target_options = target.substr(space + 1);
             ctx.pass_ctx = PassContext::Current();
             if (!dsl_target.empty()) ctx.dsl_target = &GetDSLTarget(dsl_target);
             ctx.entry = entry;
             ctx.include_dir = include_dir;
             ctx.cache_dir = cache_dir;
             new (self) lower::StageLowerer(mod, std::move(ctx));
           },
           "mod"_a, "target"_a, "dsl_target"_a = "", "entry"_a = "", "include_dir"_a = "",
           "cache_dir"_a = "")
      .def("run_to", [](lower::StageLowerer& l, const std::string& s) { l.RunTo(lower::ParseStage(s)); })
      .def_prop_rw("mod", &lower::StageLowerer::Module, &lower::StageLowerer::SetModule)
      .def_prop_ro("current_stage",
                   [](const lower::StageLowerer& l) { return lower::StageName(l.current_stage()); })
      .def_prop_ro("result", &lower::StageLowerer::Result)
      .def_prop_ro("timings",
                   [](const lower::StageLowerer& l) {
                     nb::list out;
                     for (const auto& t : l.context().timings) {
                       out.append(nb::make_tuple(t.stage, t.pass, t.seconds, t.changed, t.skipped));
                     }
                     return out;
                   })
      .def("timing_report", &lower::StageLowerer::TimingReport);
}

}  // namespace bindings
}  // namespace tessera
