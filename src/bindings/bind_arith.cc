// Bindings of the affine iterator-map analysis (tessera.arith's detect_iter_map and friends hold
// these handles; the Python classes IterMark, IterSplitExpr and IterSumExpr wrap them).
#include "common.h"
#include "tessera/arith/estimate_region.h"
#include "tessera/arith/iter_affine_map.h"
#include "tessera/ir/structural_equal.h"

namespace tessera {
namespace bindings {
namespace {

using arith::IterMark;
using arith::IterMarkNode;
using arith::IterSplit;
using arith::IterSplitNode;
using arith::IterSum;
using arith::IterSumNode;

// Python passes iterators as (var, min, extent) with constant bounds.
std::vector<arith::IterDomain> Domains(
    const std::vector<std::tuple<Var, int64_t, int64_t>>& iters) {
  std::vector<arith::IterDomain> out;
  for (const auto& [var, min, extent] : iters) out.push_back({var, min, extent});
  return out;
}

// Python passes a region as (min, extent) pairs.
std::vector<arith::RegionDim> Region(const std::vector<std::pair<Expr, Expr>>& region) {
  std::vector<arith::RegionDim> out;
  for (const auto& [min, extent] : region) out.push_back({min, extent});
  return out;
}

// Interval sets go back to Python as (min, max) pairs.
std::vector<std::pair<Expr, Expr>> Ends(const std::vector<arith::IntervalSet>& sets) {
  std::vector<std::pair<Expr, Expr>> out;
  for (const auto& s : sets) out.push_back({s.min_value, s.max_value});
  return out;
}

}  // namespace

void BindIterMap(nb::module_& m) {
  nb::class_<IterMarkNode>(m, "_IterMark")
      .def_ro("var", &IterMarkNode::var)
      .def_ro("sum", &IterMarkNode::sum)
      .def_ro("expr", &IterMarkNode::expr)
      .def_ro("extent", &IterMarkNode::extent);
  nb::class_<IterSplitNode>(m, "_IterSplit")
      .def_ro("source", &IterSplitNode::source)
      .def_ro("lower_factor", &IterSplitNode::lower_factor)
      .def_ro("extent", &IterSplitNode::extent)
      .def_ro("scale", &IterSplitNode::scale);
  nb::class_<IterSumNode>(m, "_IterSum")
      .def_ro("args", &IterSumNode::args)
      .def_ro("base", &IterSumNode::base)
      .def_ro("free_base", &IterSumNode::free_base);

  m.def("iter_mark", [](std::optional<Var> var, std::optional<IterSum> sum,
                        std::optional<Expr> expr, int64_t extent) {
    auto mark = std::make_shared<IterMarkNode>();
    if (var) mark->var = *var;
    if (sum) mark->sum = *sum;
    if (expr) mark->expr = *expr;
    mark->extent = extent;
    return mark;
  });
  m.def("iter_split", [](IterMark source, int64_t lower_factor, int64_t extent, int64_t scale) {
    auto split = std::make_shared<IterSplitNode>();
    split->source = std::move(source);
    split->lower_factor = lower_factor;
    split->extent = extent;
    split->scale = scale;
    return split;
  });
  m.def("iter_sum", [](std::vector<IterSplit> args, int64_t base, std::optional<Expr> free_base) {
    auto sum = std::make_shared<IterSumNode>();
    sum->args = std::move(args);
    sum->base = base;
    if (free_base) sum->free_base = *free_base;
    return sum;
  });
  m.def(
      "detect_iter_map",
      [](const std::vector<Expr>& indices,
         const std::vector<std::tuple<Var, int64_t, int64_t>>& iters, int level,
         bool simplify_trivial, std::optional<Expr> predicate) {
        std::string error;
        auto map = arith::DetectIterMapChecked(
            indices, Domains(iters), static_cast<arith::IterMapLevel>(level), simplify_trivial,
            &error, predicate ? *predicate : Expr());
        return std::make_pair(map, error);
      },
      "indices"_a, "iters"_a, "level"_a, "simplify_trivial"_a, "predicate"_a = nb::none(),
      "(sums or None, the reason it failed) for TVM's DetectIterMap.");
  m.def(
      "normalize_to_iter_sum",
      [](const Expr& index, const std::vector<std::tuple<Var, int64_t, int64_t>>& iters) {
        std::string error;
        auto sum = arith::NormalizeToIterSum(index, Domains(iters), &error);
        return std::make_pair(sum, error);
      },
      "index"_a, "iters"_a);
  m.def("iter_map_to_expr", [](const IterSum& sum, const std::string& dtype) {
    return arith::IterSumToExpr(sum, DataType::Parse(dtype));
  });
  m.def("iter_map_to_expr", [](const IterSplit& split, const std::string& dtype) {
    return arith::IterSplitToExpr(split, DataType::Parse(dtype));
  });
  m.def("iter_map_to_expr", [](const IterMark& mark, const std::string& dtype) {
    return arith::IterMarkToExpr(mark, DataType::Parse(dtype));
  });
  m.def("iter_map_equal", &arith::IterSumEqual);
  m.def("iter_map_equal", &arith::IterSplitEqual);
  m.def("iter_map_equal", &arith::IterMarkEqual);
  m.def(
      "subspace_divide",
      [](const std::vector<IterSum>& map, const std::vector<Var>& sub_iters,
         const std::string& dtype) -> std::optional<nb::tuple> {
        auto division = arith::SubspaceDivide(map, sub_iters, DataType::Parse(dtype));
        if (!division) return std::nullopt;
        return nb::make_tuple(division->parts, division->outer_predicate,
                              division->inner_predicate);
      },
      "map"_a, "sub_iters"_a, "dtype"_a);
  m.def(
      "estimate_region_strict_bound",
      [](const std::vector<std::pair<Expr, Expr>>& region,
         const std::vector<std::tuple<Var, int64_t, int64_t>>& iters,
         std::optional<Expr> predicate) -> std::optional<std::vector<std::pair<Expr, Expr>>> {
        arith::Analyzer ana;
        auto sets = arith::EstimateRegionStrictBound(Region(region), Domains(iters),
                                                     predicate ? *predicate : Expr(), ana);
        if (!sets) return std::nullopt;
        return Ends(*sets);
      },
      "region"_a, "iters"_a, "predicate"_a = nb::none(),
      "[(min, max)] per dimension, or None (TVM's EstimateRegionStrictBound).");
  m.def(
      "estimate_region_upper_bound",
      [](const std::vector<std::pair<Expr, Expr>>& region,
         std::optional<std::vector<std::tuple<Var, int64_t, int64_t>>> iters,
         const std::vector<std::tuple<Var, Expr, Expr>>& dom, std::optional<Expr> predicate) {
        arith::Analyzer ana;
        std::vector<std::pair<Var, arith::IntervalSet>> intervals;
        for (const auto& [var, lo, hi] : dom)
          intervals.push_back({var, arith::IntervalSet{lo, hi}});
        std::vector<arith::IterDomain> domains;
        if (iters) domains = Domains(*iters);
        return Ends(arith::EstimateRegionUpperBound(Region(region), iters ? &domains : nullptr,
                                                    intervals, predicate ? *predicate : Expr(),
                                                    ana));
      },
      "region"_a, "iters"_a, "dom"_a, "predicate"_a = nb::none(),
      "[(min, max)] per dimension (TVM's EstimateRegionUpperBound).");
  m.def("inverse_affine_iter_map", &arith::InverseAffineIterMap, "map"_a, "outputs"_a);
}

}  // namespace bindings
}  // namespace tessera
