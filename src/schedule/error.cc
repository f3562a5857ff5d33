// Rendering of schedule errors: the program with its culprits marked, then the message.
#include "tessera/schedule/error.h"

#include "tessera/ir/printer.h"

namespace tessera {
namespace schedule {

std::string LocationTag(const ObjectRef& node, size_t index) {
  const char* kind = node ? NodeKindName(node->kind) : "None";
  return std::string("tir.") + kind + "#" + std::to_string(index);
}

std::string ScheduleError::Render(const IRModule& mod, const std::string& primitive,
                                  ErrorRenderLevel level) const {
  if (level == ErrorRenderLevel::kNone) return "ScheduleError: (not rendered)";
  if (level == ErrorRenderLevel::kFast) return "ScheduleError: " + fast_;
  std::string message = detail_;
  PrinterConfig cfg;
  cfg.syntax_sugar = false;  // as TVM: no T.grid folding, the root block spelled out
  for (size_t i = 0; i < locs_.size(); ++i) {
    std::string tag = LocationTag(locs_[i], i);
    std::string key = "{" + std::to_string(i) + "}";
    for (size_t pos = message.find(key); pos != std::string::npos; pos = message.find(key, pos)) {
      message.replace(pos, key.size(), tag);
      pos += tag.size();
    }
    if (locs_[i]) cfg.marks.emplace(locs_[i].get(), tag);
  }
  return "ScheduleError: the schedule primitive '" + primitive +
         "' failed.\nThe IR, with the offending nodes marked:\n" + AsScript(mod, cfg) +
         "\nError message: " + message;
}

}  // namespace schedule
}  // namespace tessera
