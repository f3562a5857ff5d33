// Tensors and operations: placeholder and compute, with the checks on compute bodies.
#include "tessera/te/tensor.h"

#include <algorithm>
#include <unordered_set>

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
    // A scalar float index is accepted, as TVM does (a comm_reducer combiner may index with its
    // accumulator); ts.build refuses it with its location (RefuseNonIntegerIndices).
    if (!i || !i->dtype.is_scalar() || i->dtype.is_handle() || i->dtype.is_bool()) {
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
  size_t n = num_outputs();
  if (index >= n) {
    ValueError("operation '" + name + "' has " + std::to_string(n) + " output" +
               (n == 1 ? "" : "s") + "; output(" + std::to_string(index) + ") does not exist");
  }
  if (outputs_.size() < n) outputs_.resize(n);
  if (Tensor t = outputs_[index].lock()) return t;
  DataType dtype = OutputDType(index);
  // As in TVM, the outputs of a multi-output operation are named op.v0, op.v1, ...
  std::string tname = n == 1 ? name : name + ".v" + std::to_string(index);
  Var data = VarNode::MakePointer(tname, dtype, "global");
  auto t = std::make_shared<TensorNode>(shared_from_this(), static_cast<int>(index), data, dtype,
                                        OutputShape(index), tname);
  outputs_[index] = t;
  return t;
}

std::shared_ptr<const ExternOpNode> ExternOpNode::Make(std::string name, std::string tag,
                                                       AttrMap attrs, std::vector<Tensor> inputs,
                                                       std::vector<Buffer> input_placeholders,
                                                       std::vector<Buffer> output_placeholders,
                                                       Stmt body) {
  std::string what = "te.extern '" + name + "'";
  if (inputs.size() != input_placeholders.size()) {
    ValueError(what + ": " + std::to_string(inputs.size()) + " inputs but " +
               std::to_string(input_placeholders.size()) + " input buffers");
  }
  if (output_placeholders.empty()) ValueError(what + ": needs at least one output");
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i];
    const Buffer& b = input_placeholders[i];
    if (!t || !b) ValueError(what + ": input " + std::to_string(i) + " is null");
    if (t->dtype != b->dtype || t->shape.size() != b->shape.size()) {
      TypeError(what + ": input buffer '" + b->name + "' (" + b->dtype.ToString() + ", " +
                std::to_string(b->shape.size()) + " dimensions) does not match tensor '" +
                t->name + "' (" + t->dtype.ToString() + ", " + std::to_string(t->shape.size()) +
                " dimensions)");
    }
  }
  for (const Buffer& b : output_placeholders) {
    if (!b) ValueError(what + ": an output buffer is null");
    CheckShape(b->shape, what);
    if (!b->dtype.is_scalar() || b->dtype.is_void() || b->dtype.is_handle()) {
      TypeError(what + ": output elements must be scalar numbers, got " + b->dtype.ToString());
    }
  }
  if (!body) ValueError(what + ": the function returned no statement");
  auto op = std::make_shared<ExternOpNode>(std::move(name), std::move(tag), std::move(attrs));
  op->inputs = std::move(inputs);
  op->input_placeholders = std::move(input_placeholders);
  op->output_placeholders = std::move(output_placeholders);
  op->body = std::move(body);
  return op;
}

std::vector<Tensor> ScanOpNode::InputTensors() const {
  std::vector<Tensor> out = init;
  out.insert(out.end(), update.begin(), update.end());
  return out;
}

std::shared_ptr<const ScanOpNode> ScanOpNode::Make(std::string name, std::string tag,
                                                   AttrMap attrs, std::vector<Tensor> init,
                                                   std::vector<Tensor> update,
                                                   std::vector<Tensor> state_placeholder,
                                                   std::vector<Tensor> inputs) {
  std::string what = "te.scan '" + name + "'";
  if (init.empty() || init.size() != update.size() || init.size() != state_placeholder.size()) {
    ValueError(what + ": init, update and state_placeholder must be non-empty lists of one "
               "length, got " + std::to_string(init.size()) + ", " +
               std::to_string(update.size()) + " and " +
               std::to_string(state_placeholder.size()));
  }
  auto same = [](const Expr& a, const Expr& b) {
    auto ca = AsConstInt(a), cb = AsConstInt(b);
    if (ca && cb) return *ca == *cb;
    return a.get() == b.get() || (AsPtr<VarNode>(a) == nullptr || AsPtr<VarNode>(b) == nullptr);
  };
  for (size_t k = 0; k < init.size(); ++k) {
    const Tensor& i = init[k];
    const Tensor& u = update[k];
    const Tensor& s = state_placeholder[k];
    if (!i || !u || !s) ValueError(what + ": a null tensor in init, update or state_placeholder");
    if (s->op->kind != OpKind::kPlaceholder) {
      TypeError(what + ": state_placeholder '" + s->name + "' must be a te.placeholder");
    }
    if (u->op->kind != OpKind::kCompute) {
      TypeError(what + ": update '" + u->name + "' must be a te.compute");
    }
    if (s->shape.empty()) ValueError(what + ": the state '" + s->name + "' has no dimension to scan");
    if (i->shape.size() != s->shape.size() || u->shape.size() != s->shape.size()) {
      ValueError(what + ": init '" + i->name + "', update '" + u->name + "' and state '" +
                 s->name + "' must have the same number of dimensions");
    }
    if (i->dtype != s->dtype || u->dtype != s->dtype) {
      TypeError(what + ": init '" + i->name + "' (" + i->dtype.ToString() + "), update '" +
                u->name + "' (" + u->dtype.ToString() + ") and state '" + s->name + "' (" +
                s->dtype.ToString() + ") must have one dtype");
    }
    for (size_t d = 1; d < s->shape.size(); ++d) {
      if (!same(i->shape[d], s->shape[d]) || !same(u->shape[d], s->shape[d])) {
        ValueError(what + ": dimension " + std::to_string(d) + " of init '" + i->name +
                   "', update '" + u->name + "' and state '" + s->name + "' differ");
      }
    }
    if (!same(u->shape[0], s->shape[0])) {
      ValueError(what + ": update '" + u->name + "' and state '" + s->name +
                 "' must have the same first dimension (the scan length)");
    }
  }
  Expr begin = init[0]->shape[0], end = update[0]->shape[0];
  DataType t = end->dtype;
  if (begin->dtype != t) begin = CastNode::Make(t, begin);
  for (size_t k = 1; k < init.size(); ++k) {
    if (!same(init[k]->shape[0], init[0]->shape[0]) ||
        !same(update[k]->shape[0], update[0]->shape[0])) {
      ValueError(what + ": every init must cover the same rows and every update the same length");
    }
  }
  auto op = std::make_shared<ScanOpNode>(std::move(name), std::move(tag), std::move(attrs));
  auto var = std::make_shared<AxisVarNode>(op->name + ".idx", t, IterVarType::kOrdered);
  op->scan_axis = IterVarNode::Make(RangeNode::Make(begin, SubNode::Make(end, begin)), var,
                                    IterVarType::kOrdered);
  op->init = std::move(init);
  op->update = std::move(update);
  op->state_placeholder = std::move(state_placeholder);
  op->inputs = std::move(inputs);
  return op;
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
  if (auto* expr = std::get_if<Expr>(&body)) body = std::vector<Expr>{*expr};
  if (auto* exprs = std::get_if<std::vector<Expr>>(&body)) {
    if (exprs->empty()) ValueError("te.compute '" + n + "': the function returned no value");
    for (const Expr& e : *exprs) {
      if (!e) ValueError("te.compute '" + n + "': the function returned no value");
      if (!e->dtype.is_scalar() || e->dtype.is_void() || e->dtype.is_handle()) {
        TypeError("te.compute '" + n + "': elements must be scalar numbers, got " +
                  e->dtype.ToString());
      }
      checker.Check(e, {});
    }
    op->bodies = *exprs;
    op->body = op->bodies[0];
  } else {
    const Reduce& reduce = std::get<Reduce>(body);
    if (!reduce) ValueError("te.compute '" + n + "': the function returned no value");
    for (const Expr& source : reduce->sources) checker.Check(source, reduce->axis);
    checker.Check(reduce->condition, reduce->axis);
    for (const Expr& init : reduce->inits) checker.Check(init, {});
    // A reducer may read tensors and use the compute's axes (an identity `init[i]`).
    for (const Expr& r : reduce->combiner->result) checker.Check(r, reduce->axis);
    for (const Expr& id : reduce->combiner->identity) checker.Check(id, {});
    // As TVM's: the domain of a reduce axis may depend on the compute's own axes and on the
    // reduce axes before it (a window per output point); create_prim_func then nests a block
    // per level of that dependence. Any other axis is not in scope there.
    std::unordered_set<const VarNode*> in_scope;
    for (const IterVar& iv : axis) in_scope.insert(iv->var.get());
    for (const IterVar& iv : reduce->axis) {
      for (const Expr& e : {iv->dom->min, iv->dom->extent}) {
        PostOrderVisit(e, [&](const ObjectRef& node) {
          auto* v = AsPtr<VarNode>(node);
          if (v && AsAxisVar(v) && !in_scope.count(v)) {
            ValueError("te.compute '" + n + "': the domain of reduce axis '" + iv->var->name +
                       "' depends on axis '" + v->name +
                       "', which is neither an axis of this compute nor a reduce axis before it");
          }
        });
      }
      in_scope.insert(iv->var.get());
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
