// Helpers shared by the iterator-map files (iter_affine_map*.cc): building nodes, failing a
// rewrite, and TVM's folding of index expressions.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "tessera/arith/iter_affine_map.h"
#include "tessera/ir/expr_ops.h"

namespace tessera {
namespace arith {
namespace iter_map_detail {

struct RewriteFailure {
  std::string reason;
};

[[noreturn]] inline void Unsupported(const std::string& reason) { throw RewriteFailure{reason}; }

inline IterSplit MakeSplit(IterMark source, int64_t lower_factor, int64_t extent, int64_t scale) {
  auto s = std::make_shared<IterSplitNode>();
  s->source = std::move(source);
  s->lower_factor = lower_factor;
  s->extent = extent;
  s->scale = scale;
  return s;
}

inline IterSum MakeSum(std::vector<IterSplit> args, int64_t base) {
  auto s = std::make_shared<IterSumNode>();
  s->args = std::move(args);
  s->base = base;
  return s;
}

inline IterSplit CopySplit(const IterSplit& s) { return std::make_shared<IterSplitNode>(*s); }

// TVM's operator folding on index expressions: x + 0, x * 1, x // 1, x % 1, constants.
inline Expr Const(const Expr& like, int64_t v) { return IntConst(like->dtype, v); }
inline Expr Plus(const Expr& a, const Expr& b) {
  if (IsConstInt(a, 0)) return b;
  if (IsConstInt(b, 0)) return a;
  return AddE(a, b);
}
inline Expr Minus(const Expr& a, int64_t b) { return b == 0 ? a : SubE(a, Const(a, b)); }
inline Expr Times(const Expr& a, int64_t b) {
  if (b == 1) return a;
  if (b == 0 || IsConstInt(a, 0)) return Const(a, 0);
  return MulE(a, Const(a, b));
}
inline Expr Div(const Expr& a, int64_t b) {
  if (b == 1 || IsConstInt(a, 0)) return a;
  return FloorDivE(a, Const(a, b));
}
inline Expr Mod(const Expr& a, int64_t b) {
  if (b == 1) return Const(a, 0);
  if (IsConstInt(a, 0)) return a;
  return FloorModE(a, Const(a, b));
}

// The whole base of a sum (its free terms plus its constant) as an expression.
inline Expr FullBase(const IterSum& sum, DataType dtype) {
  if (!sum->free_base) return IntConst(dtype, sum->base);
  return sum->base == 0 ? sum->free_base : AddE(sum->free_base, IntConst(dtype, sum->base));
}

// A bound lower <= iter < upper that a predicate puts on a sum of iterators.
struct IterConstraint {
  Expr iter;
  std::optional<int64_t> lower, upper;
  size_t size = 0;
};

/*! \brief TVM's MatchBoundConstraints: the predicate as a conjunction of constant bounds. A
 *  bound on one iterator narrows its domain in `iters`; a bound on a sum becomes a constraint
 *  (sorted, smaller sums first). False, with the reason in *error, when it is not such. */
bool ParsePredicate(const Expr& predicate, std::vector<IterDomain>* iters,
                    std::vector<IterConstraint>* constraints, std::string* error);

}  // namespace iter_map_detail
}  // namespace arith
}  // namespace tessera
