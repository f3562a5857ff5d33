// Shared by the trace's files (trace.cc: replay, trace_print.cc: Python, trace_json.cc: JSON).
#pragma once

#include <string>
#include <unordered_map>

#include "tessera/schedule/trace.h"
#include "tessera/support/json.h"

namespace tessera {
namespace schedule {

/*! \brief The names of handles in a written trace: b0, l1, v2 ..., numbered in first-use order. */
class RVNames {
 public:
  std::string Name(const RV& rv) {
    auto it = names_.find(rv.get());
    if (it != names_.end()) return it->second;
    const char* prefix = rv->kind == RVNode::kBlock ? "b" : rv->kind == RVNode::kLoop ? "l" : "v";
    return names_[rv.get()] = prefix + std::to_string(counter_++);
  }

 private:
  std::unordered_map<const RVNode*, std::string> names_;
  int counter_ = 0;
};

/*! \brief A value of a trace read from JSON; a handle is a kRV value holding its name. */
TraceValue ValueFromJSON(const JsonValue& j);

}  // namespace schedule
}  // namespace tessera
