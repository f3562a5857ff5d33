// Data layouts named by strings ("NCHW16c") and the index and shape conversions between two of
// them (TVM's tir.Layout / tir.BijectiveLayout, used by operators with blocked layouts).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tessera/ir/stmt.h"

namespace tessera {
namespace te {

/*!
 * \brief A layout: one axis per letter. An upper-case letter is a primal axis (its extent is a
 *  variable "<L>_shape"); a lower-case letter preceded by a number is a subordinate axis of that
 *  extent, a split of the primal axis of the same letter: "NCHW16c" is N, C, H, W, then 16 of C.
 */
struct Layout {
  std::string name;
  std::vector<IterVar> axes;

  /*! \brief The layout `name` with `dtype` index variables; nullopt for "__undef__". A type
   *  error when `dtype` is not an integer type, a value error for a malformed name. */
  static std::optional<Layout> Parse(const std::string& name, DataType dtype);
  /*! \brief The position of the axis `axis` (one letter), -1 when absent. */
  int IndexOf(const std::string& axis) const;
  /*! \brief The product of the extents of the subordinate axes of `axis` (either case), -1 when
   *  the layout does not split it. */
  int64_t FactorOf(const std::string& axis) const;
};

/*! \brief The conversion between two layouts of the same axes: each destination index (shape)
 *  as an expression of the source axes, and back. */
struct BijectiveLayout {
  Layout src, dst;
  std::vector<Expr> index_forward, shape_forward, index_backward, shape_backward;

  /*! \brief nullopt when a layout is empty or an axis of one has no counterpart in the other. */
  static std::optional<BijectiveLayout> Make(const Layout& src, const Layout& dst);
  /*! \brief The index in dst of the src index `index` (simplified); ForwardShape the shape,
   *  rounded up to whole splits. Backward* convert from dst to src. */
  std::vector<Expr> ForwardIndex(const std::vector<Expr>& index) const;
  std::vector<Expr> BackwardIndex(const std::vector<Expr>& index) const;
  std::vector<Expr> ForwardShape(const std::vector<Expr>& shape) const;
  std::vector<Expr> BackwardShape(const std::vector<Expr>& shape) const;
};

}  // namespace te
}  // namespace tessera
