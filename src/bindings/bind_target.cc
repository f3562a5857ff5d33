// Bindings of the compilation target (tessera.target.Target holds one): kind, options, facts.
#include "common.h"
#include "tessera/ir/target.h"
#include "tessera/target/codegen_dsl.h"
#include "tessera/target/dsl_intrinsics.h"

namespace tessera {
namespace bindings {

void BindTarget(nb::module_& m) {
  m.def(
      "dsl_intrinsics",
      [] {
        nb::list out;
        for (const DslIntrinsic& d : DslIntrinsics()) {
          nb::dict e;
          e["name"] = d.name;
          e["op"] = d.op;
          e["c_name"] = d.c_name;
          e["form"] = d.form;
          e["elements"] = nb::tuple(nb::cast(d.elements));
          e["scalar_elements"] = nb::tuple(nb::cast(d.scalar_elements));
          e["mask"] = d.mask;
          e["keywords"] = nb::tuple(nb::cast(d.keywords));
          e["lane_fn"] = d.lane_fn;
          e["saturate"] = d.saturate;
          e["doc"] = d.doc;
          e["split"] = d.split;
          e["plain_op"] = d.plain_op;
          e["variant_op"] = d.variant_op;
          e["effect"] = d.effect;
          e["num_inputs"] = d.num_inputs;
          out.append(e);
        }
        return out;
      },
      "The DSL intrinsics declared in C++'s table (tessera/target/dsl_intrinsics.h).");
  m.def(
      "codegen_dsl",
      [](const IRModule& mod, const std::string& entry) {
        return CodeGenDSL(mod, entry) + "\n" + CodeGenDSLLauncher(mod, entry);
      },
      "mod"_a, "entry"_a,
      "The C unit the DSL pipeline compiles for a legalized module: the kernel source "
      "(CodeGenDSL, splats spelled `(int8)__vbcast(x)`) and its packed entry point "
      "(CodeGenDSLLauncher).");
  m.def(
      "codegen_dsl_shown",
      [](const IRModule& mod, const std::string& entry) {
        return CodeGenDSL(mod, entry, /*opencl_spelling=*/true);
      },
      "mod"_a, "entry"_a,
      "The kernel source as Executor.c_code shows it: splats spelled as OpenCL C's cast "
      "`(int8)x`, bfloat16 vector +, -, * as C operators.");
  nb::class_<Target>(m, "Target")
      .def(
          "__init__",
          [](Target* self, const std::string& text) { new (self) Target(Target::Parse(text)); },
          "text"_a)
      .def_prop_ro("kind", &Target::kind)
      .def_prop_ro("options", &Target::options)
      .def_prop_ro("attrs", &Target::attrs)
      .def("has_attr", &Target::HasAttr, "key"_a)
      .def("get_attr", &Target::GetAttr, "key"_a, "fallback"_a = "")
      .def_prop_ro("is_gpu", &Target::IsGpu)
      .def_prop_ro("is_host", &Target::IsHost)
      .def_prop_ro("facts",
                   [](const Target& t) {
                     const TargetFacts& f = t.facts();
                     nb::dict out;
                     out["kind"] = f.kind;
                     out["isa"] = f.isa;
                     for (const std::string& name : TargetFacts::Names()) {
                       out[name.c_str()] = f.Get(name);
                     }
                     return out;
                   })
      .def("override_fact", &Target::OverrideFact, "name"_a, "value"_a)
      .def("__str__", &Target::str)
      .def("__repr__", [](const Target& t) { return "_core.Target('" + t.str() + "')"; });
  m.def("target_fact_names", &TargetFacts::Names);
}

}  // namespace bindings
}  // namespace tessera
