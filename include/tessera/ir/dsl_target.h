// Descriptions of the vector DSL targets (cores, TECs, SRAM sizes), from the DSL reference §7.2.
#pragma once

#include <string>
#include <vector>

namespace tessera {

struct DSLTargetDesc {
  std::string name;
  int cores;
  int tecs_per_core;
  int64_t lsram_bytes_per_tec;
  int64_t shared_bytes_per_core;
  bool is_x3;
};

/*! \brief All known targets, X1 included (BuildManager refuses it). */
const std::vector<DSLTargetDesc>& DSLTargets();
/*! \brief The description of `name`; unknown names throw an error listing the known ones, and
 *  X1 targets throw the "DSL does not support X1" error. */
const DSLTargetDesc& GetDSLTarget(const std::string& name);
/*! \brief Whether `name` (a function's "target" attribute) is a known X3 target; false for any
 *  other name. */
bool IsX3Target(const std::string& name);

}  // namespace tessera
