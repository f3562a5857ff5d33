// Bindings of the te layer (tessera._core.te): tensors, operations, reducers, create_prim_func.
#include <nanobind/stl/variant.h>

#include "common.h"
#include "tessera/te/create_prim_func.h"
#include "tessera/te/data_layout.h"
#include "tessera/te/reduce.h"
#include "tessera/te/tensor.h"

namespace tessera {
namespace bindings {
namespace {

DataType DT(const std::string& s) { return DataType::Parse(s); }

}  // namespace

void BindTE(nb::module_& parent) {
  using namespace te;
  nb::module_ m = parent.def_submodule("te", "Tensor expressions (the C++ te layer).");

  // tir.Layout / tir.BijectiveLayout (tessera.tir.data_layout wraps them as TVM spells them).
  nb::class_<Layout>(m, "Layout")
      .def_ro("name", &Layout::name)
      .def_ro("axes", &Layout::axes)
      .def("index_of", &Layout::IndexOf, "axis"_a)
      .def("factor_of", &Layout::FactorOf, "axis"_a)
      .def("__len__", [](const Layout& l) { return l.axes.size(); })
      .def("__repr__", [](const Layout& l) { return "Layout(" + l.name + ")"; });
  m.def("layout", [](const std::string& name, const std::string& dtype) {
    return Layout::Parse(name, DT(dtype));
  }, "name"_a, "dtype"_a);
  nb::class_<BijectiveLayout>(m, "BijectiveLayout")
      .def_ro("src_layout", &BijectiveLayout::src)
      .def_ro("dst_layout", &BijectiveLayout::dst)
      .def("forward_index", &BijectiveLayout::ForwardIndex, "index"_a)
      .def("backward_index", &BijectiveLayout::BackwardIndex, "index"_a)
      .def("forward_shape", &BijectiveLayout::ForwardShape, "shape"_a)
      .def("backward_shape", &BijectiveLayout::BackwardShape, "shape"_a)
      .def("__repr__", [](const BijectiveLayout& b) {
        return "BijectiveLayout(" + b.src.name + "->" + b.dst.name + ")";
      });
  m.def("bijective_layout", &BijectiveLayout::Make, "src"_a, "dst"_a);

  nb::class_<TensorNode, BufferNode>(m, "Tensor")
      .def_ro("op", &TensorNode::op)
      .def_ro("value_index", &TensorNode::value_index)
      .def_prop_ro("ndim", [](const TensorNode& t) { return t.shape.size(); })
      .def(
          "load",
          [](const TensorNode& t, std::vector<Expr> indices, std::optional<Span> span) {
            return t(indices, span ? *span : Span());
          },
          "indices"_a, "span"_a = nb::none(),
          "A read of the tensor at `indices` (a BufferLoad), with the source location `span`.");

  nb::enum_<OpKind>(m, "OpKind")
      .value("PLACEHOLDER", OpKind::kPlaceholder)
      .value("COMPUTE", OpKind::kCompute)
      .value("EXTERN", OpKind::kExtern)
      .value("SCAN", OpKind::kScan);
  nb::class_<OperationNode>(m, "Operation")
      .def_ro("kind", &OperationNode::kind)
      .def_ro("name", &OperationNode::name)
      .def_ro("tag", &OperationNode::tag)
      .def_ro("attrs", &OperationNode::attrs)
      .def_prop_ro("num_outputs", [](const OperationNode& op) { return op.num_outputs(); })
      .def_prop_ro("input_tensors", &OperationNode::InputTensors)
      .def("output", &OperationNode::output, "index"_a = 0);
  nb::class_<PlaceholderOpNode, OperationNode>(m, "PlaceholderOp")
      .def_ro("shape", &PlaceholderOpNode::shape)
      .def_prop_ro("dtype", [](const PlaceholderOpNode& op) { return PyDType(op.dtype); });
  nb::class_<ComputeOpNode, OperationNode>(m, "ComputeOp")
      .def_ro("axis", &ComputeOpNode::axis)
      .def_ro("reduce_axis", &ComputeOpNode::reduce_axis)
      .def_ro("body", &ComputeOpNode::body)
      .def_ro("bodies", &ComputeOpNode::bodies)
      .def_ro("reduce", &ComputeOpNode::reduce)
      .def_ro("shape", &ComputeOpNode::shape);

  nb::class_<ExternOpNode, OperationNode>(m, "ExternOp")
      .def_ro("inputs", &ExternOpNode::inputs)
      .def_ro("input_placeholders", &ExternOpNode::input_placeholders)
      .def_ro("output_placeholders", &ExternOpNode::output_placeholders)
      .def_ro("body", &ExternOpNode::body);
  nb::class_<ScanOpNode, OperationNode>(m, "ScanOp")
      .def_ro("scan_axis", &ScanOpNode::scan_axis)
      .def_ro("init", &ScanOpNode::init)
      .def_ro("update", &ScanOpNode::update)
      .def_ro("state_placeholder", &ScanOpNode::state_placeholder)
      .def_ro("inputs", &ScanOpNode::inputs);

  nb::class_<te::CommReducerNode>(m, "CommReducer")
      .def(nb::new_([](const std::string& name, Var lhs, Var rhs, Expr result, Expr identity) {
             return te::CommReducerNode::Make(name, lhs, rhs, result, identity);
           }),
           "name"_a, "lhs"_a, "rhs"_a, "result"_a, "identity"_a)
      .def_static(
          "tuple",
          [](const std::string& name, std::vector<Var> lhs, std::vector<Var> rhs,
             std::vector<Expr> result, std::vector<Expr> identity) {
            return te::CommReducerNode::Make(name, lhs, rhs, result, identity);
          },
          "name"_a, "lhs"_a, "rhs"_a, "result"_a, "identity"_a,
          "A reducer of a tuple of values: one lhs, rhs, result and identity per value.")
      .def_ro("name", &te::CommReducerNode::name)
      .def_ro("lhs", &te::CommReducerNode::lhs)
      .def_ro("rhs", &te::CommReducerNode::rhs)
      .def_ro("result", &te::CommReducerNode::result)
      .def_ro("identity_element", &te::CommReducerNode::identity)
      .def_prop_ro("size", &te::CommReducerNode::size)
      .def(
          "combine",
          [](const te::CommReducerNode& r, const Expr& a, const Expr& b) { return r.Combine(a, b); },
          "a"_a, "b"_a);
  nb::class_<ReduceNode>(m, "Reduce")
      .def(nb::new_(
               [](te::CommReducer combiner, Expr source, std::vector<IterVar> axis, Expr condition,
                  Expr init) { return ReduceNode::Make(combiner, source, axis, condition, init); }),
           "combiner"_a, "source"_a, "axis"_a, "condition"_a.none() = nb::none(),
           "init"_a.none() = nb::none())
      .def_static(
          "tuple",
          [](te::CommReducer combiner, std::vector<Expr> sources, std::vector<IterVar> axis,
             Expr condition, std::vector<Expr> inits) {
            return ReduceNode::Make(combiner, sources, axis, condition, inits);
          },
          "combiner"_a, "sources"_a, "axis"_a, "condition"_a.none() = nb::none(),
          "inits"_a = std::vector<Expr>{}, "The reduction of a tuple: one source per value.")
      .def_ro("combiner", &ReduceNode::combiner)
      .def_ro("source", &ReduceNode::source)
      .def_ro("sources", &ReduceNode::sources)
      .def_ro("axis", &ReduceNode::axis)
      .def_ro("condition", &ReduceNode::condition)
      .def_ro("init", &ReduceNode::init)
      .def_prop_ro("dtype", [](const ReduceNode& r) { return PyDType(r.dtype()); })
      .def("__repr__", &ReduceNode::ToString);

  m.def(
      "placeholder",
      [](std::vector<Expr> shape, const std::string& dtype, const std::string& name) {
        return Placeholder(shape, DT(dtype), name);
      },
      "shape"_a, "dtype"_a, "name"_a);
  m.def("compute", &Compute, "shape"_a, "fcompute"_a, "name"_a, "tag"_a, "attrs"_a, "axis_names"_a);
  m.def(
      "extern_op",
      [](const std::string& name, const std::string& tag, AttrMap attrs,
         std::vector<Tensor> inputs, std::vector<Buffer> in_buffers,
         std::vector<Buffer> out_buffers, Stmt body) -> std::shared_ptr<const OperationNode> {
        return ExternOpNode::Make(name, tag, attrs, inputs, in_buffers, out_buffers, body);
      },
      "name"_a, "tag"_a, "attrs"_a, "inputs"_a, "in_buffers"_a, "out_buffers"_a, "body"_a);
  m.def(
      "scan_op",
      [](const std::string& name, const std::string& tag, AttrMap attrs, std::vector<Tensor> init,
         std::vector<Tensor> update, std::vector<Tensor> state,
         std::vector<Tensor> inputs) -> std::shared_ptr<const OperationNode> {
        return ScanOpNode::Make(name, tag, attrs, init, update, state, inputs);
      },
      "name"_a, "tag"_a, "attrs"_a, "init"_a, "update"_a, "state_placeholder"_a, "inputs"_a);
  m.def("reduce_axis", &ReduceAxis, "dom"_a, "name"_a);
  m.def("sum", &Sum, "source"_a, "axis"_a, "condition"_a.none() = nb::none(),
        "init"_a.none() = nb::none());
  m.def("max", &Max, "source"_a, "axis"_a, "condition"_a.none() = nb::none(),
        "init"_a.none() = nb::none());
  m.def("min", &Min, "source"_a, "axis"_a, "condition"_a.none() = nb::none(),
        "init"_a.none() = nb::none());
  m.def(
      "min_value", [](const std::string& t) { return MinValue(DT(t)); }, "dtype"_a);
  m.def(
      "max_value", [](const std::string& t) { return MaxValue(DT(t)); }, "dtype"_a);
  m.def(
      "create_prim_func",
      [](const std::vector<PrimFuncArg>& args, std::optional<std::string> index_dtype) {
        std::optional<DataType> t;
        if (index_dtype) t = DT(*index_dtype);
        return CallWithLargeStack([&] { return CreatePrimFunc(args, t); });
      },
      "args"_a, "index_dtype_override"_a.none() = nb::none());
}

}  // namespace bindings
}  // namespace tessera
