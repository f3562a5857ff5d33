// Module-level helpers on PrimFuncs:
//  - tir.AnnotateEntryFunc: the module's entry function gets {"tir.is_entry_func": True}: its
//    only function, else its only public one; with several public functions nothing is marked.
//  - tir.Filter(cond): the module keeps the functions for which cond(func) holds.
#include "tessera/ir/ir_utils.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace transform {
namespace {

IRModule AnnotateEntryFuncModule(IRModule mod, const PassContext&) {
  int entry = -1;
  if (mod->functions.size() == 1) {
    entry = 0;
  } else {
    for (size_t i = 0; i < mod->functions.size(); ++i) {
      if (!IsPublic(mod->functions[i].second)) continue;
      if (entry >= 0) return mod;  // several public functions: no single entry
      entry = static_cast<int>(i);
    }
  }
  if (entry < 0) return mod;
  const auto& [gv, f] = mod->functions[entry];
  if (f->GetIntAttr("tir.is_entry_func", 0) != 0) return mod;
  std::vector<std::pair<GlobalVar, PrimFunc>> out = mod->functions;
  out[entry].second = f->WithAttr("tir.is_entry_func", Bool(true));
  return IRModuleNode::Make(std::move(out), mod->attrs);
}

}  // namespace

Pass AnnotateEntryFunc() {
  return CreateModulePass(AnnotateEntryFuncModule, 0, "tir.AnnotateEntryFunc");
}
TESSERA_REGISTER_PASS("tir.AnnotateEntryFunc", AnnotateEntryFunc);

Pass Filter(std::function<bool(const PrimFunc&)> cond) {
  return CreateModulePass(
      [cond](IRModule mod, const PassContext&) {
        std::vector<std::pair<GlobalVar, PrimFunc>> out;
        for (const auto& entry : mod->functions) {
          if (cond(entry.second)) out.push_back(entry);
        }
        if (out.size() == mod->functions.size()) return mod;
        return IRModuleNode::Make(std::move(out), mod->attrs);
      },
      0, "tir.Filter");
}

}  // namespace transform
}  // namespace tessera
