// Bindings of the TensorIR nodes: buffer regions, matched buffers, blocks and their realizes;
// the arithmetic analyzer (tessera.arith.Analyzer holds one).
#include "common.h"
#include "tessera/arith/analyzer.h"
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

  nb::class_<arith::Analyzer>(m, "Analyzer")
      .def(nb::init<>())
      .def("bind_range",
           [](arith::Analyzer& a, const Var& v, const Range& r) { a.Bind(v, r); }, "var"_a,
           "range"_a)
      .def("bind_value",
           [](arith::Analyzer& a, const Var& v, const Expr& e) { a.Bind(v, e); }, "var"_a,
           "value"_a)
      .def("unbind", &arith::Analyzer::Unbind, "var"_a)
      .def("simplify", &arith::Analyzer::Simplify, "expr"_a)
      .def("can_prove", &arith::Analyzer::CanProve, "cond"_a)
      .def("can_prove_equal", &arith::Analyzer::CanProveEqual, "a"_a, "b"_a)
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
                   &arith::Analyzer::SetEnabledExtensions)
      .def("enter_constraint", &arith::Analyzer::EnterConstraint, "cond"_a,
           "Assume cond until exit_constraint(mark) with the mark this returns.")
      .def("exit_constraint", &arith::Analyzer::ExitConstraint, "mark"_a);
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
