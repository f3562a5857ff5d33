// ScheduleError: a primitive's precondition failed; rendered with the program and its culprits.
#pragma once

#include <exception>
#include <string>
#include <vector>

#include "tessera/ir/function.h"

namespace tessera {
namespace schedule {

/*! \brief How much a schedule error message shows (`error_render_level`). */
enum class ErrorRenderLevel { kDetail = 0, kFast = 1, kNone = 2 };

/*!
 * \brief Thrown by a primitive whose checks fail. `detail` may refer to the nodes in `locs` as
 *  {0}, {1}, ...: the rendered message names them `tir.For#0`, `tir.Block#1`, ... and marks
 *  them in the printed program. `fast` says the same without the program.
 */
class ScheduleError : public std::exception {
 public:
  ScheduleError(std::string fast, std::string detail, std::vector<ObjectRef> locs = {})
      : fast_(std::move(fast)), detail_(std::move(detail)), locs_(std::move(locs)) {}
  const char* what() const noexcept override { return fast_.c_str(); }
  const std::string& fast() const { return fast_; }
  const std::string& detail() const { return detail_; }
  const std::vector<ObjectRef>& locs() const { return locs_; }

  /*!
   * \brief The user-facing message:
   *  "ScheduleError: the schedule primitive '<primitive>' failed.", the module as
   *  TVMScript with the culprits underlined and tagged, then "Error message: ..." (kDetail);
   *  the message alone (kFast); a fixed text (kNone).
   */
  std::string Render(const IRModule& mod, const std::string& primitive,
                     ErrorRenderLevel level) const;

 private:
  std::string fast_, detail_;
  std::vector<ObjectRef> locs_;
};

/*! \brief The tag of a culprit in a rendered message ("tir.For#0", "tir.Block#1"). */
std::string LocationTag(const ObjectRef& node, size_t index);

}  // namespace schedule
}  // namespace tessera
