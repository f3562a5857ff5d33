// Bindings of the linear analyses and integer solvers (tessera.arith.solve holds the results):
// intervals cross as (min, max, nothing) with None for an infinite end, constraint systems as
// (variables, [(var, range)], relations).
#include "common.h"
#include "tessera/arith/int_solver.h"

namespace tessera {
namespace bindings {
namespace {

using IntervalTuple = std::tuple<Expr, Expr, bool>;
using IntervalItems = std::vector<std::tuple<Var, std::optional<Expr>, std::optional<Expr>>>;
using SystemTuple =
    std::tuple<std::vector<Var>, std::vector<std::pair<Var, Range>>, std::vector<Expr>>;

arith::IntervalMap ToIntervalMap(const IntervalItems& items) {
  arith::IntervalMap out;
  for (const auto& [v, lo, hi] : items) out[v.get()] = {lo.value_or(nullptr), hi.value_or(nullptr)};
  return out;
}

SystemTuple ToTuple(const arith::IntConstraintsData& s) {
  return {s.variables, s.ranges, s.relations};
}

}  // namespace

void BindArithSolve(nb::module_& m) {
  m.def("arith_detect_linear_equation", &arith::DetectLinearEquation, "expr"_a, "vars"_a);
  m.def("arith_detect_clip_bound", &arith::DetectClipBound, "cond"_a, "vars"_a);
  m.def("arith_detect_common_subexpr", &arith::DetectCommonSubexpr, "expr"_a, "threshold"_a);
  m.def(
      "arith_deduce_bound",
      [](const Var& var, const Expr& cond, const IntervalItems& hint, const IntervalItems& relax) {
        arith::Interval s =
            arith::DeduceBound(var, cond, ToIntervalMap(hint), ToIntervalMap(relax));
        return IntervalTuple{s.min, s.max, s.nothing};
      },
      "var"_a, "cond"_a, "hint"_a, "relax"_a);
  m.def(
      "arith_eval_interval",
      [](const Expr& e, const IntervalItems& dom) {
        arith::Interval s = arith::EvalInterval(e, ToIntervalMap(dom));
        return IntervalTuple{s.min, s.max, s.nothing};
      },
      "expr"_a, "dom"_a);
  m.def("arith_domain_touched", &arith::DomainTouched, "stmt"_a, "buffer"_a, "loads"_a, "stores"_a);
  m.def(
      "arith_solve_linear_equations",
      [](const std::vector<Var>& vars, const std::vector<std::pair<Var, Range>>& ranges,
         const std::vector<Expr>& relations) {
        arith::IntConstraintsTransformData t =
            arith::SolveLinearEquations({vars, ranges, relations});
        return std::make_tuple(ToTuple(t.src), ToTuple(t.dst), t.src_to_dst, t.dst_to_src);
      },
      "variables"_a, "ranges"_a, "relations"_a);
  m.def(
      "arith_inequalities_as_conditions",
      [](const std::vector<Var>& vars, const std::vector<std::pair<Var, Range>>& ranges,
         const std::vector<Expr>& relations) {
        return arith::InequalitiesAsConditions({vars, ranges, relations});
      },
      "variables"_a, "ranges"_a, "relations"_a);
  m.def(
      "arith_solve_inequalities_to_range",
      [](const std::vector<Var>& vars, const std::vector<std::pair<Var, Range>>& ranges,
         const std::vector<Expr>& relations) {
        return ToTuple(arith::SolveInequalitiesToRange({vars, ranges, relations}));
      },
      "variables"_a, "ranges"_a, "relations"_a);
  m.def(
      "arith_solve_inequalities_deskew_range",
      [](const std::vector<Var>& vars, const std::vector<std::pair<Var, Range>>& ranges,
         const std::vector<Expr>& relations) {
        arith::IntConstraintsTransformData t =
            arith::SolveInequalitiesDeskewRange({vars, ranges, relations});
        return std::make_tuple(ToTuple(t.src), ToTuple(t.dst), t.src_to_dst, t.dst_to_src);
      },
      "variables"_a, "ranges"_a, "relations"_a);
}

}  // namespace bindings
}  // namespace tessera
