// Bindings of the TensorIR nodes: buffer regions, matched buffers, blocks and their realizes;
// the arithmetic analyzer (tessera.arith.Analyzer holds one).
#include "common.h"
#include "tessera/arith/analyzer.h"
#include "tessera/arith/int_set.h"
#include "tessera/arith/narrow_predicate.h"
#include "tessera/arith/vscale.h"
#include "tessera/ir/block_access.h"
#include "tessera/ir/stmt.h"

namespace tessera {
namespace bindings {

void BindTIR(nb::module_& m) {
  nb::class_<BufferRegionNode, Object>(m, "BufferRegion")
      .def(nb::new_([](Buffer b, std::vector<Range> region, std::optional<Span> s) {
             return BufferRegionNode::Make(b, region, OrEmpty(s));
           }),
           "buffer"_a, "region"_a, "span"_a = nb::none())
      .def_static(
          "full_region",
          [](Buffer b, std::optional<Span> s) {
            return BufferRegionNode::FullRegion(b, OrEmpty(s));
          },
          "buffer"_a, "span"_a = nb::none())
      .def_ro("buffer", &BufferRegionNode::buffer)
      .def_ro("region", &BufferRegionNode::region)
      .def_ro("span", &BufferRegionNode::span);
  auto matchBufferRegion_class =
      nb::class_<MatchBufferRegionNode, Object>(m, "MatchBufferRegion")
          .def(nb::new_([](Buffer b, BufferRegion source, std::optional<Span> s) {
                 return MatchBufferRegionNode::Make(b, source, OrEmpty(s));
               }),
               "buffer"_a, "source"_a, "span"_a = nb::none())
          .def_ro("buffer", &MatchBufferRegionNode::buffer)
          .def_ro("source", &MatchBufferRegionNode::source);
  // TVM's MatchBufferRegion(buffer, A[0:32, 0:32]): the source as a buffer slice.
  WithConstructorFallback(matchBufferRegion_class, "MatchBufferRegion");
  auto block_class = nb::class_<BlockNode, StmtNode>(m, "Block")
      .def(nb::new_([](std::vector<IterVar> iter_vars, std::vector<BufferRegion> reads,
                       std::vector<BufferRegion> writes, const std::string& name_hint, Stmt body,
                       Stmt init, std::optional<std::vector<Buffer>> alloc_buffers,
                       std::optional<std::vector<MatchBufferRegion>> match_buffers,
                       std::optional<AttrMap> annotations, std::optional<Span> s) {
             // None stands for "none" in alloc_buffers, match_buffers and annotations, as in TVM.
             return BlockNode::Make(iter_vars, reads, writes, name_hint, body, init,
                                    alloc_buffers.value_or(std::vector<Buffer>()),
                                    match_buffers.value_or(std::vector<MatchBufferRegion>()),
                                    annotations.value_or(AttrMap()), OrEmpty(s));
           }),
           "iter_vars"_a, "reads"_a, "writes"_a, "name_hint"_a, "body"_a,
           "init"_a.none() = nb::none(), "alloc_buffers"_a.none() = nb::none(),
           "match_buffers"_a.none() = nb::none(), "annotations"_a.none() = nb::none(),
           "span"_a = nb::none())
      .def_ro("iter_vars", &BlockNode::iter_vars)
      .def_ro("reads", &BlockNode::reads)
      .def_ro("writes", &BlockNode::writes)
      .def_ro("name_hint", &BlockNode::name_hint)
      .def_ro("body", &BlockNode::body)
      .def_ro("init", &BlockNode::init)
      .def_ro("alloc_buffers", &BlockNode::alloc_buffers)
      .def_ro("match_buffers", &BlockNode::match_buffers)
      .def_ro("annotations", &BlockNode::annotations);
  // TVM's Block(reads=[A[0:16, 0:16]], ...): regions as buffer slices.
  WithConstructorFallback(block_class, "Block");
  nb::class_<BlockRealizeNode, StmtNode>(m, "BlockRealize")
      .def(nb::new_(
               [](std::vector<Expr> values, Expr predicate, Block block, std::optional<Span> s) {
                 return BlockRealizeNode::Make(values, predicate, block, OrEmpty(s));
               }),
           "iter_values"_a, "predicate"_a.none(), "block"_a, "span"_a = nb::none())
      .def(nb::new_(
               [](std::vector<Expr> values, bool predicate, Block block, std::optional<Span> s) {
                 // predicate=True / False: a bool constant, as TVM converts it.
                 return BlockRealizeNode::Make(
                     values, IntImmNode::Make(DataType::Bool(), predicate), block, OrEmpty(s));
               }),
           "iter_values"_a, "predicate"_a, "block"_a, "span"_a = nb::none())
      .def_ro("iter_values", &BlockRealizeNode::iter_values)
      .def_ro("predicate", &BlockRealizeNode::predicate)
      .def_ro("block", &BlockRealizeNode::block);
  m.def(
      "infer_block_access_regions",
      [](Block block) { return InferBlockAccessRegions(block.get()); }, "block"_a,
      "The (reads, writes) regions of a block, inferred from its accesses.");
  m.def(
      "get_block_access_region",
      [](Block block, const std::vector<std::pair<Var, Buffer>>& buffer_var_map,
         bool opaque_as_read_write) {
        BufferVarMap map;
        for (const auto& [var, buffer] : buffer_var_map) map[var.get()] = buffer;
        BlockAccessRegions r = GetBlockAccessRegion(block.get(), map, opaque_as_read_write);
        return std::make_tuple(r.reads, r.writes, r.opaques);
      },
      "block"_a, "buffer_var_map"_a, "opaque_as_read_write"_a,
      "(reads, writes, opaques) of a block among the buffers of (data var, buffer) pairs.");

  nb::class_<arith::Analyzer>(m, "Analyzer")
      .def(nb::init<>())
      .def("bind_range",
           [](arith::Analyzer& a, const Var& v, const Range& r) { a.Bind(v, r); }, "var"_a,
           "range"_a)
      .def("bind_value",
           [](arith::Analyzer& a, const Var& v, const Expr& e) { a.BindAndSubstitute(v, e); },
           "var"_a, "value"_a, "var equals value: simplify and can_prove replace it by value.")
      .def("unbind", &arith::Analyzer::Unbind, "var"_a)
      .def("update_bound",
           [](arith::Analyzer& a, const Var& v, int64_t lo, int64_t hi, bool allow_override) {
             a.Update(v, arith::ConstIntBound{lo, hi}, allow_override);
           },
           "var"_a, "min_value"_a, "max_value"_a, "allow_override"_a,
           "Record [min_value, max_value] for var (an error when it differs from the recorded "
           "bound and allow_override is false).")
      .def("is_bound", [](const arith::Analyzer& a, const Var& v) { return a.IsBound(v.get()); },
           "var"_a)
      .def("int_set",
           [](arith::Analyzer& a, const Expr& e, const std::vector<Var>& vars,
              const std::vector<Expr>& mins, const std::vector<Expr>& maxs) {
             std::vector<std::pair<Var, arith::IntervalSet>> dom;
             for (size_t n = 0; n < vars.size() && n < mins.size() && n < maxs.size(); ++n) {
               dom.push_back({vars[n], arith::IntervalSet{mins[n], maxs[n]}});
             }
             arith::IntervalSet r = arith::EvalIntervalSet(e, dom, a);
             return std::make_pair(r.min_value, r.max_value);
           },
           "expr"_a, "vars"_a, "mins"_a, "maxs"_a,
           "(min, max) of expr while each var ranges over [min, max] (pos_inf/neg_inf: open).")
      .def("vector_int_set",
           [](arith::Analyzer& a, const Expr& e) {
             arith::IntervalSet r = arith::VectorIntervalSet(e, a);
             return std::make_pair(r.min_value, r.max_value);
           },
           "vec"_a)
      .def("enter_constraint", &arith::Analyzer::EnterConstraint, "cond"_a,
           "Assume cond until exit_constraint(mark); returns the mark.")
      .def("exit_constraint", &arith::Analyzer::ExitConstraint, "mark"_a)
      .def("simplify",
           [](arith::Analyzer& a, const Expr& e) { return a.Simplify(a.SubstituteBound(e)); },
           "expr"_a)
      .def("can_prove",
           [](arith::Analyzer& a, const Expr& e) { return a.CanProve(a.SubstituteBound(e)); },
           "cond"_a)
      .def("can_prove_equal",
           [](arith::Analyzer& a, const Expr& x, const Expr& y) {
             return a.CanProveEqual(a.SubstituteBound(x), a.SubstituteBound(y));
           },
           "a"_a, "b"_a)
      .def("const_int_bound",
           [](arith::Analyzer& a, const Expr& e) {
             arith::ConstIntBound b = a.GetConstIntBound(e);
             return std::make_pair(b.min_value, b.max_value);
           },
           "expr"_a, "(min, max) of the values of an integer expression (+-2**63-1: unbounded).")
      .def("modular_set",
           [](arith::Analyzer& a, const Expr& e) {
             arith::ModularSet m = a.GetModularSet(e);
             return std::make_pair(m.coeff, m.base);
           },
           "expr"_a, "(coeff, base): every value is coeff * k + base.")
      // The simplifier's entry points, its extension flags and constraint scopes (arith13b).
      .def("rewrite_simplify", &arith::Analyzer::RewriteSimplify, "expr"_a)
      .def("canonical_simplify", &arith::Analyzer::CanonicalSimplify, "expr"_a)
      .def_prop_rw("enabled_extensions", &arith::Analyzer::EnabledExtensions,
                   &arith::Analyzer::SetEnabledExtensions);
  m.def(
      "narrow_predicate_expression",
      [](const Expr& cond, const std::vector<Var>& vars, const std::vector<Range>& ranges) {
        std::vector<std::pair<Var, Range>> params;
        for (size_t n = 0; n < vars.size() && n < ranges.size(); ++n) {
          params.emplace_back(vars[n], ranges[n]);
        }
        return arith::NarrowPredicateExpression(cond, params);
      },
      "cond"_a, "vars"_a, "ranges"_a,
      "A condition without the free parameters vars (in ranges) that implies cond.");
  m.def("int_set_pos_inf", []() { return arith::PosInf(); },
        "The end of an interval unbounded above (the same var every time).");
  m.def("int_set_neg_inf", []() { return arith::NegInf(); },
        "The end of an interval unbounded below (the same var every time).");
  m.def(
      "int_set_union_lower_bound",
      [](const std::vector<Expr>& mins, const std::vector<Expr>& maxs) {
        std::vector<arith::IntervalSet> sets;
        for (size_t n = 0; n < mins.size() && n < maxs.size(); ++n) {
          sets.push_back({mins[n], maxs[n]});
        }
        arith::IntervalSet r = arith::UnionLowerBound(sets);
        return std::make_pair(r.min_value, r.max_value);
      },
      "mins"_a, "maxs"_a, "TVM's union_lower_bound of the intervals [mins[k], maxs[k]].");
  m.def("contains_vscale", &arith::ContainsVScale, "expr"_a,
        "Whether the expression holds a T.vscale() call.");
  m.def(
      "set_vscale_context",
      [](std::vector<int64_t> values, const std::string& target) {
        arith::CurrentVScaleContext() = {std::move(values), target};
      },
      "values"_a, "target"_a,
      "The values T.vscale() may take on the current target (empty: not a scalable-vector "
      "target) and its name, for the analyzer's proofs.");
}

}  // namespace bindings
}  // namespace tessera
