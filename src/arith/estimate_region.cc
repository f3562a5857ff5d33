// Region bounds through the iterator-map analysis (TVM's EstimateRegion*Bound): a dimension
// whose start is `base + split * scale`, split in [0, n), and whose width is a constant w >=
// |scale| covers [base, base + (n-1)*scale + w) without gaps.
#include "tessera/arith/estimate_region.h"

#include "tessera/arith/const_fold.h"

namespace tessera {
namespace arith {
namespace {

IntervalSet Nothing() { return {PosInf(), NegInf()}; }

// [min, min + extent - 1], simplified; a single point when extent is 1.
IntervalSet FromMinExtent(const Expr& min, int64_t extent, Analyzer& ana) {
  Expr lo = ana.Simplify(min);
  if (extent == 1) return IntervalSet::SinglePoint(lo);
  Expr hi = ana.Simplify(FoldBinary(NodeKind::kAdd, lo, MakeConst(lo->dtype, extent - 1)));
  return {lo, hi};
}

// The set a dimension of constant width `extent` starting at the value of `sum` covers;
// nullopt when the sum is not one split or its stride leaves gaps between accesses.
std::optional<IntervalSet> EvalIterSum(const IterSum& sum, int64_t extent, DataType dtype,
                                       Analyzer& ana) {
  if (extent == 0) return Nothing();
  Expr base = MakeConst(dtype, sum->base);
  if (sum->free_base.get()) base = FoldBinary(NodeKind::kAdd, sum->free_base, base);
  if (sum->args.empty()) return FromMinExtent(base, extent, ana);
  if (sum->args.size() != 1) return std::nullopt;
  const IterSplit& split = sum->args[0];
  if (split->extent == 0) return Nothing();
  if (extent < split->scale) return std::nullopt;
  int64_t span = (split->extent - 1) * split->scale;
  if (split->scale < 0) {
    // the start ranges over [base + span, base]
    return FromMinExtent(FoldBinary(NodeKind::kAdd, base, MakeConst(dtype, span)), extent - span,
                         ana);
  }
  return FromMinExtent(base, extent + span, ana);
}

// Interval arithmetic on a dimension: the hull of its first and last element.
IntervalSet EvalRange(const RegionDim& dim, const std::vector<std::pair<Var, IntervalSet>>& dom,
                      Analyzer& ana) {
  IntervalSet first = EvalIntervalSet(dim.min, dom, ana);
  Expr last_expr =
      ana.Simplify(FoldBinary(NodeKind::kSub, FoldBinary(NodeKind::kAdd, dim.min, dim.extent),
                              MakeConst(dim.min->dtype, int64_t{1})));
  IntervalSet last = EvalIntervalSet(last_expr, dom, ana);
  auto lower = [&](const Expr& a, const Expr& b) -> Expr {
    if (IsNegInf(a) || IsNegInf(b)) return NegInf();
    if (IsPosInf(a)) return b;
    if (IsPosInf(b)) return a;
    return ana.Simplify(FoldBinary(NodeKind::kMin, a, b));
  };
  auto upper = [&](const Expr& a, const Expr& b) -> Expr {
    if (IsPosInf(a) || IsPosInf(b)) return PosInf();
    if (IsNegInf(a)) return b;
    if (IsNegInf(b)) return a;
    return ana.Simplify(FoldBinary(NodeKind::kMax, a, b));
  };
  return {lower(first.min_value, last.min_value), upper(first.max_value, last.max_value)};
}

}  // namespace

std::optional<std::vector<IntervalSet>> EstimateRegionStrictBound(
    const std::vector<RegionDim>& region, const std::vector<IterDomain>& iters,
    const Expr& predicate, Analyzer& ana) {
  std::vector<Expr> starts;
  std::vector<int64_t> extents;
  for (const RegionDim& dim : region) {
    std::optional<int64_t> extent = AsConstInt(dim.extent);
    if (!extent) return std::nullopt;  // symbolic widths are not analysed
    starts.push_back(dim.min);
    extents.push_back(*extent);
  }
  auto map = DetectIterMapChecked(starts, iters, IterMapLevel::kSurjective,
                                  /*simplify_trivial=*/true, nullptr, predicate);
  if (!map || map->empty() || map->size() != region.size()) return std::nullopt;
  std::vector<IntervalSet> result;
  for (size_t i = 0; i < region.size(); ++i) {
    auto set = EvalIterSum((*map)[i], extents[i], starts[i]->dtype, ana);
    if (!set) return std::nullopt;
    result.push_back(*set);
  }
  return result;
}

std::vector<IntervalSet> EstimateRegionUpperBound(
    const std::vector<RegionDim>& region, const std::vector<IterDomain>* iters,
    const std::vector<std::pair<Var, IntervalSet>>& dom, const Expr& predicate, Analyzer& ana) {
  if (iters) {
    if (auto strict = EstimateRegionStrictBound(region, *iters, predicate, ana)) return *strict;
  }
  std::vector<IntervalSet> result;
  for (const RegionDim& dim : region) {
    if (iters) {
      std::optional<int64_t> extent = AsConstInt(dim.extent);
      auto map = extent ? DetectIterMapChecked({dim.min}, *iters, IterMapLevel::kSurjective,
                                               /*simplify_trivial=*/true, nullptr, predicate)
                        : std::nullopt;
      if (map && map->size() == 1) {
        if (auto set = EvalIterSum((*map)[0], *extent, dim.min->dtype, ana)) {
          result.push_back(*set);
          continue;
        }
      }
    }
    result.push_back(EvalRange(dim, dom, ana));
  }
  return result;
}

}  // namespace arith
}  // namespace tessera
