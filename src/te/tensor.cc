// Tensors and operations: placeholder and compute, with the checks on compute bodies.
#include "tessera/te/tensor.h"

#include <algorithm>

#include "tessera/ir/functor.h"
#include "tessera/support/error.h"

namespace tessera {
namespace te {
namespace {

[[noreturn]] void ValueError(const std::string& msg) {
  TESSERA_THROW_KIND(Span(), ErrorKind::kValue) << msg;
}

[[noreturn]] void TypeError(const std::string& msg) {
  TESSERA_THROW_KIND(Span(), ErrorKind::kType) << msg;
}

void CheckShape(const std::vector<Expr>& shape, const std::string& what) {
  for (const Expr& e : shape) {
    if (!e || !e->dtype.is_integer() || !e->dtype.is_scalar()) {
      TypeError(what + ": shape entries must be scalar integers" +
                (e ? ", got " + e->dtype.ToString() : std::string()));
    }
    if (auto c = AsConstInt(e); c && *c < 0) {
      ValueError(what + ": shape entries must not be negative, got " + std::to_string(*c));
    }
  }
}

bool Contains(const std::vector<IterVar>& axes, const VarNode* v) {
  return std::any_of(axes.begin(), axes.end(),
                     [&](const IterVar& iv) { return iv->var.get() == v; });
}

// Checks where the axes and tensors of one part of a compute body are used; collects inputs.
class BodyChecker : public ExprVisitor {
 public:
  BodyChecker(const std::string& op_name, const std::vector<IterVar>& axis,
              std::vector<Tensor>* inputs)
      : op_name_(op_name), axis_(axis), inputs_(inputs) {}

  /*! \brief Checks `e`, where the reduce axes in `reduce_axis` may appear. */
  void Check(const Expr& e, const std::vector<IterVar>& reduce_axis) {
    if (!e) return;
    reduce_axis_ = &reduce_axis;
    VisitExpr(e);
  }

  using ExprVisitor::VisitExpr_;
  void VisitExpr_(const VarNode* op) override {
    const AxisVarNode* axis = AsAxisVar(op);
    if (!axis) return;  // a symbolic size or scalar parameter
    if (axis->iter_type == IterVarType::kCommReduce) {
      if (Contains(*reduce_axis_, op)) return;
      ValueError("te.compute '" + op_name_ + "': reduce axis '" + op->name +
                 "' is used outside a reducer; reduce over it with te.sum/te.max/te.min or a "
                 "te.comm_reducer (axis=" +
                 op->name + ")");
    }
    if (!Contains(axis_, op)) {
      ValueError("te.compute '" + op_name_ + "': index variable '" + op->name +
                 "' belongs to another te.compute; use the variables given to this compute's "
                 "function");
    }
  }
  void VisitExpr_(const BufferLoadNode* op) override {
    ExprVisitor::VisitExpr_(op);
    const TensorNode* tensor = AsTensor(op->buffer.get());
    if (!tensor) {
      ValueError("te.compute '" + op_name_ + "' reads buffer '" + op->buffer->name +
                 "', which is not a te tensor; read te.placeholder or te.compute results");
    }
    for (const Tensor& t : *inputs_) {
      if (t.get() == tensor) return;
    }
    inputs_->push_back(GetRef(tensor));
  }

 private:
  const std::string& op_name_;
  const std::vector<IterVar>& axis_;
  const std::vector<IterVar>* reduce_axis_ = nullptr;
  std::vector<Tensor>* inputs_;
};

}  // namespace

const AxisVarNode* AsAxisVar(const VarNode* var) { return dynamic_cast<const AxisVarNode*>(var); }

const TensorNode* AsTensor(const BufferNode* buffer) {
  return dynamic_cast<const TensorNode*>(buffer);
}

TensorNode::TensorNode(Operation o, int index, Var data, DataType dtype, std::vector<Expr> shape,
                       std::string name)
    : BufferNode(std::move(data), dtype, std::move(shape), {}, Int32(0), std::move(name), 64, 1,
                 Span()),
      op(std::move(o)),
      value_index(index) {}

Expr TensorNode::operator()(std::vector<Expr> indices, Span span) const {
  if (indices.size() != shape.size()) {
    TESSERA_THROW_KIND(span, ErrorKind::kType)
        << "tensor " << name << " has " << shape.size() << " dimensions but is indexed with "
        << indices.size();
  }
  for (const Expr& i : indices) {
    if (!i || !i->dtype.is_int_or_bool() || i->dtype.is_bool() || !i->dtype.is_scalar()) {
      TESSERA_THROW_KIND(span, ErrorKind::kType)
          << "tensor " << name << " needs scalar integer indices"
          << (i ? ", got " + i->dtype.ToString() : std::string());
    }
  }
  Buffer self =
      std::static_pointer_cast<BufferNode>(const_cast<TensorNode*>(this)->shared_from_this());
  return BufferLoadNode::Make(self, std::move(indices), nullptr, std::move(span));
}

Tensor OperationNode::output(size_t index) const {
  if (index != 0) {
    ValueError("operation '" + name + "' has one output; output(" + std::to_string(index) +
               ") does not exist");
  }
  if (Tensor t = output_.lock()) return t;
  DataType dtype = output_dtype();
  Var data = VarNode::MakePointer(name, dtype, "global");
  auto t = std::make_shared<TensorNode>(shared_from_this(), 0, data, dtype, output_shape(), name);
  output_ = t;
  return t;
}

DataType ComputeOpNode::output_dtype() const { return reduce ? reduce->dtype() : body->dtype; }

std::shared_ptr<const ComputeOpNode> ComputeOpNode::Make(std::string name, std::string tag,
                                                         AttrMap attrs, std::vector<IterVar> axis,
                                                         ComputeBody body) {
  auto op = std::make_shared<ComputeOpNode>(std::move(name), std::move(tag), std::move(attrs));
  const std::string& n = op->name;
  for (const IterVar& iv : axis) {
    const AxisVarNode* v = iv ? AsAxisVar(iv->var.get()) : nullptr;
    if (!v || v->iter_type != IterVarType::kDataPar || !iv->dom) {
      ValueError("te.compute '" + n + "': its axes must be spatial axes made by te.compute");
    }
    op->shape.push_back(iv->dom->extent);
  }
  BodyChecker checker(n, axis, &op->inputs);
  if (auto* expr = std::get_if<Expr>(&body)) {
    if (!*expr) ValueError("te.compute '" + n + "': the function returned no value");
    if (!(*expr)->dtype.is_scalar() || (*expr)->dtype.is_void() || (*expr)->dtype.is_handle()) {
      TypeError("te.compute '" + n + "': elements must be scalar numbers, got " +
                (*expr)->dtype.ToString());
    }
    checker.Check(*expr, {});
    op->body = *expr;
  } else {
    const Reduce& reduce = std::get<Reduce>(body);
    if (!reduce) ValueError("te.compute '" + n + "': the function returned no value");
    checker.Check(reduce->source, reduce->axis);
    checker.Check(reduce->condition, reduce->axis);
    checker.Check(reduce->init, {});
    for (const IterVar& iv : reduce->axis) {
      for (const Expr& e : {iv->dom->min, iv->dom->extent}) {
        PostOrderVisit(e, [&](const ObjectRef& node) {
          auto* v = AsPtr<VarNode>(node);
          if (v && AsAxisVar(v)) {
            ValueError("te.compute '" + n + "': the domain of reduce axis '" + iv->var->name +
                       "' depends on axis '" + v->name + "'; reduce axes need fixed domains");
          }
        });
      }
    }
    op->reduce = reduce;
    op->reduce_axis = reduce->axis;
  }
  op->axis = std::move(axis);
  return op;
}

std::vector<IterVar> MakeComputeAxes(const std::vector<Expr>& shape,
                                     const std::vector<std::string>& names) {
  CheckShape(shape, "te.compute");
  if (!names.empty() && names.size() != shape.size()) {
    ValueError("te.compute: " + std::to_string(names.size()) + " axis names for a shape of " +
               std::to_string(shape.size()) + " dimensions");
  }
  std::vector<IterVar> axes;
  for (size_t d = 0; d < shape.size(); ++d) {
    std::string name = names.empty() ? "i" + std::to_string(d) : names[d];
    DataType t = shape[d]->dtype;
    auto var = std::make_shared<AxisVarNode>(std::move(name), t, IterVarType::kDataPar);
    axes.push_back(IterVarNode::Make(RangeNode::Make(MakeConst(t, int64_t{0}), shape[d]), var,
                                     IterVarType::kDataPar));
  }
  return axes;
}

Tensor Placeholder(std::vector<Expr> shape, DataType dtype, std::string name) {
  CheckShape(shape, "te.placeholder '" + name + "'");
  if (!dtype.is_scalar() || dtype.is_void() || dtype.is_handle()) {
    TypeError("te.placeholder '" + name + "': elements must be scalar numbers, got " +
              dtype.ToString());
  }
  auto op = std::make_shared<PlaceholderOpNode>(std::move(name), std::move(shape), dtype);
  return op->output(0);
}

Tensor Compute(std::vector<Expr> shape,
               const std::function<ComputeBody(const std::vector<Var>&)>& fcompute,
               std::string name, std::string tag, AttrMap attrs,
               std::vector<std::string> axis_names) {
  std::vector<IterVar> axes = MakeComputeAxes(shape, axis_names);
  std::vector<Var> vars;
  for (const IterVar& iv : axes) vars.push_back(iv->var);
  ComputeBody body = fcompute(vars);
  auto op = ComputeOpNode::Make(std::move(name), std::move(tag), std::move(attrs), std::move(axes),
                                std::move(body));
  return op->output(0);
}

IterVar ReduceAxis(Range dom, std::string name) {
  if (!dom || !dom->min || !dom->extent) ValueError("te.reduce_axis needs a domain (start, stop)");
  DataType t = dom->extent->dtype;
  if (!t.is_integer() || !t.is_scalar() || dom->min->dtype != t) {
    TypeError("te.reduce_axis '" + name + "': the domain must be integers of one type, got " +
              dom->min->dtype.ToString() + " and " + t.ToString());
  }
  auto var = std::make_shared<AxisVarNode>(std::move(name), t, IterVarType::kCommReduce);
  return IterVarNode::Make(std::move(dom), var, IterVarType::kCommReduce);
}

}  // namespace te
}  // namespace tessera
