// The table of vector DSL targets.
#include "tessera/ir/dsl_target.h"

#include "tessera/support/error.h"

namespace tessera {

const std::vector<DSLTargetDesc>& DSLTargets() {
  static const std::vector<DSLTargetDesc> targets = {
      {"X1_1204", 1, 4, 2 * 32 * 1024 - 4 * 1024, 2 * 512 * 1024, false},
      {"X2_1204", 1, 4, 32 * 1024, 256 * 1024, false},
      {"X2_1204MP3", 3, 4, 32 * 1024, 256 * 1024, false},
      {"X3P_1304", 1, 4, 32 * 1024, 128 * 1024, true},
      {"X3S_1304", 1, 4, 32 * 1024, 128 * 1024, true},
      {"X3P_1304MP2", 2, 4, 32 * 1024, 128 * 1024, true},
      {"X3S_1304MP2", 2, 4, 32 * 1024, 128 * 1024, true},
      {"X3P_1304MP4", 4, 4, 32 * 1024, 128 * 1024, true},
      {"X3S_1304MP4", 4, 4, 32 * 1024, 128 * 1024, true},
  };
  return targets;
}

const DSLTargetDesc& GetDSLTarget(const std::string& name) {
  std::string supported;
  for (const auto& t : DSLTargets()) {
    if (t.name.rfind("X1", 0) != 0) supported += (supported.empty() ? "" : ", ") + t.name;
  }
  for (const auto& t : DSLTargets()) {
    if (t.name != name) continue;
    if (name.rfind("X1", 0) == 0) {
      TESSERA_THROW_KIND(Span(), ErrorKind::kValue)
          << "the DSL does not support X1 targets (\"" << name << "\"); supported targets: "
          << supported;
    }
    return t;
  }
  TESSERA_THROW_KIND(Span(), ErrorKind::kValue)
      << "unknown target \"" << name << "\"; known targets: " << supported;
}

bool IsX3Target(const std::string& name) {
  for (const auto& t : DSLTargets()) {
    if (t.name == name) return t.is_x3;
  }
  return false;
}

}  // namespace tessera
