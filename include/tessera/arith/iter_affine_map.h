// Affine iterator maps: index expressions written as sums of splits of (fused) iterators, and
// their inverse. The analysis behind reverse_compute_inline's remapping of a consumer's
// iterators onto its producer's store indices (TVM's DetectIterMap / InverseAffineIterMap at
// the "no check" level: no independence or bijectivity proof).
//
//   indices [ (i*32 + j) // 8, (i*32 + j) % 8 ] over i in [0, 4), j in [0, 32)
//   -> [ split(mark(i*32 + j, 128), lower 8, extent 16), split(mark(...), lower 1, extent 8) ]
//   inverse at outputs (a, b): j = (b + a*8) % 32, i = (b + a*8) // 32
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tessera/ir/expr.h"

namespace tessera {
namespace arith {

struct IterMarkNode;
struct IterSplitNode;
struct IterSumNode;
using IterMark = std::shared_ptr<IterMarkNode>;
using IterSplit = std::shared_ptr<IterSplitNode>;
using IterSum = std::shared_ptr<IterSumNode>;

/*! \brief An iterator ranging over [0, extent): an input variable, or a fused sum of splits. */
struct IterMarkNode {
  Var var;      // the input iterator, or null
  IterSum sum;  // the fused sum (scales relative to the innermost), or null
  Expr expr;    // any other source (marks built by hand from Python), or null
  int64_t extent = 0;  // -1: symbolic (only outermost in a fused sum, never divided evenly)
  int64_t unpadded_extent = 0;  // > 0: this mark pads a mark of that extent up to `extent`
};

/*! \brief floormod(floordiv(source, lower_factor), extent) * scale. */
struct IterSplitNode {
  IterMark source;
  int64_t lower_factor = 1;
  int64_t extent = 1;
  int64_t scale = 1;
};

/*! \brief sum(args) + base. */
struct IterSumNode {
  std::vector<IterSplit> args;
  int64_t base = 0;
  Expr free_base;  // terms free of the iterators, added to `base` (null: none)
};

/*! \brief One input iterator: var over [min, min + extent); extent -1 when symbolic. */
struct IterDomain {
  Var var;
  int64_t min = 0;
  int64_t extent = 0;
};

/*!
 * \brief Writes every index as an IterSum of splits of the input iterators (each top-level sum
 *  with more than one split is fused into one mark). Fused marks are shared between indices
 *  that fuse the same splits. Returns nullopt, with the reason in *error, when an index is not
 *  such an affine expression (a product of two iterators, a division of a non-fusable sum, a
 *  free variable, a non-constant factor).
 */
std::optional<std::vector<IterSum>> DetectIterMap(const std::vector<Expr>& indices,
                                                  const std::vector<IterDomain>& iters,
                                                  std::string* error = nullptr);

/*! \brief What DetectIterMapChecked proves of the map (TVM's IterMapLevel, same values). */
enum class IterMapLevel { kBijective = 0, kSurjective = 1, kNoCheck = 3 };

/*!
 * \brief TVM's DetectIterMap: as DetectIterMap, and terms free of the iterators go to the base
 *  (`free_base`); iterators of extent 1 are constants when `simplify_trivial`; then the splits of
 *  every mark must not overlap (surjective: they may leave out parts of a mark; bijective: they
 *  tile every mark exactly and every non-unit iterator is used, padding refused). `predicate`
 *  (null: true), a conjunction of constant bounds, narrows iterators and bounds fused sums.
 */
std::optional<std::vector<IterSum>> DetectIterMapChecked(const std::vector<Expr>& indices,
                                                         const std::vector<IterDomain>& iters,
                                                         IterMapLevel level, bool simplify_trivial,
                                                         std::string* error = nullptr,
                                                         const Expr& predicate = nullptr);

/*! \brief `index` as a sum of splits of the iterators, not fused, scales descending (TVM's
 *  NormalizeToIterSum); nullopt, with the reason in *error, when it is not affine. */
std::optional<IterSum> NormalizeToIterSum(const Expr& index, const std::vector<IterDomain>& iters,
                                          std::string* error = nullptr);

/*! \brief The expression an iterator-map node stands for, in `dtype` (TVM's
 *  NormalizeIterMapToExpr): floordiv/floormod only where a split does not take a whole mark. */
Expr IterSumToExpr(const IterSum& sum, DataType dtype);
Expr IterSplitToExpr(const IterSplit& split, DataType dtype);
Expr IterMarkToExpr(const IterMark& mark, DataType dtype);

/*! \brief TVM's SubspaceDivide of a map from DetectIterMapChecked: every index written as
 *  outer * inner_extent + inner, where inner uses only `sub_iters` and outer none of them; each
 *  part a mark over [0, extent). The predicates say which outer and inner values are in range
 *  (constant true when all are). nullopt when an index mixes the subspaces in another way. */
struct SubspaceDivision {
  std::vector<std::pair<IterMark, IterMark>> parts;  // (outer, inner) per index
  Expr outer_predicate, inner_predicate;
};
std::optional<SubspaceDivision> SubspaceDivide(const std::vector<IterSum>& map,
                                               const std::vector<Var>& sub_iters, DataType dtype);

/*! \brief Structural equality of iterator-map nodes: same shape, same constants, same input
 *  variables, structurally equal expressions. */
bool IterSumEqual(const IterSum& a, const IterSum& b);
bool IterSplitEqual(const IterSplit& a, const IterSplit& b);
bool IterMarkEqual(const IterMark& a, const IterMark& b);

/*! \brief Whether `map` (from DetectIterMap over `iters`) is a bijection: every index one split,
 *  the splits of every iterator tile it exactly once, every non-unit iterator used. */
bool IsBijective(const std::vector<IterSum>& map, const std::vector<IterDomain>& iters);

/*!
 * \brief The input iterators as expressions of `outputs`, the values taken by the indices that
 *  `map` describes (back-propagation through the sums and splits, as TVM builds it: splits of a
 *  fused sum become floordiv/floormod of its value). Iterators the map does not mention are
 *  absent. nullopt when a sum is not a fuse pattern (scales not a mixed radix of extents).
 */
std::optional<std::vector<std::pair<Var, Expr>>> InverseAffineIterMap(
    const std::vector<IterSum>& map, const std::vector<Expr>& outputs);

}  // namespace arith
}  // namespace tessera
