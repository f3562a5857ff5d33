// Bounds of the region a buffer access touches while its iterators range over their domains
// under a predicate (TVM's EstimateRegion{Lower,Upper,Strict}Bound), through the iterator-map
// analysis: each dimension's start must be one fused split of the iterators.
//
//   region [ (x*4, extent 8) ] over xo in [0, 16), xi in [0, 4), x = xo*4 + xi, predicate x < 63
//   -> [ [0, 255] ]   (x is a mark of extent 63, stride 4, each access 8 wide)
#pragma once

#include <optional>
#include <utility>
#include <vector>

#include "tessera/arith/analyzer.h"
#include "tessera/arith/int_set.h"
#include "tessera/arith/iter_affine_map.h"
#include "tessera/ir/expr.h"

namespace tessera {
namespace arith {

/*! \brief One dimension of a region: [min, min + extent). */
struct RegionDim {
  Expr min;
  Expr extent;
};

/*!
 * \brief The exact set every dimension of `region` covers: nullopt unless every extent is a
 *  constant, the starts form a surjective iterator map over `iters` under `predicate` (null:
 *  true) and each access is at least as wide as the stride of its iterator (no gaps). The
 *  lower bound is the same analysis (TVM's EstimateRegionLowerBound).
 */
std::optional<std::vector<IntervalSet>> EstimateRegionStrictBound(
    const std::vector<RegionDim>& region, const std::vector<IterDomain>& iters,
    const Expr& predicate, Analyzer& ana);

/*!
 * \brief A set containing every dimension of `region`: the strict bound when there is one,
 *  else each dimension on its own (its start alone as an iterator map, else interval
 *  arithmetic over `dom`, which may add values the region never touches). `iters` is null when
 *  the domains are not constant; only interval arithmetic is used then.
 */
std::vector<IntervalSet> EstimateRegionUpperBound(
    const std::vector<RegionDim>& region, const std::vector<IterDomain>* iters,
    const std::vector<std::pair<Var, IntervalSet>>& dom, const Expr& predicate, Analyzer& ana);

}  // namespace arith
}  // namespace tessera
