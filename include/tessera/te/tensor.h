// Tensor expressions: tensors, the placeholder and compute operations producing them, axes.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "tessera/ir/buffer.h"
#include "tessera/ir/stmt.h"
#include "tessera/te/reduce.h"

namespace tessera {
namespace te {

struct OperationNode;
struct TensorNode;
using Operation = std::shared_ptr<const OperationNode>;
using Tensor = Ref<TensorNode>;

/*!
 * \brief The variable of a compute axis or of a reduce axis.
 *
 * A subclass of Var so that te can tell an axis used where it does not belong (a reduce axis
 * outside its reducer, an index of another compute) from a symbolic size. CreatePrimFunc
 * replaces every axis variable by a block iterator, so none reaches a PrimFunc.
 */
struct AxisVarNode : VarNode {
  IterVarType iter_type;
  AxisVarNode(std::string name, DataType dtype, IterVarType type)
      : VarNode(NodeKind::kVar, std::move(name), dtype, std::nullopt, Span()), iter_type(type) {}
};

/*! \brief The axis variable behind `var`, or null when it is an ordinary variable. */
const AxisVarNode* AsAxisVar(const VarNode* var);

/*!
 * \brief A tensor: the output `value_index` of an operation.
 *
 * A tensor is the buffer its readers load from: `A(i, j)` is a BufferLoad of this buffer, so
 * the expression operators of the IR work on tensor reads unchanged. CreatePrimFunc gives each
 * function its own buffers and rewrites the loads; the tensor's own buffer stays in te.
 */
struct TensorNode : BufferNode {
  Operation op;
  int value_index;
  TensorNode(Operation o, int index, Var data, DataType dtype, std::vector<Expr> shape,
             std::string name);
  /*! \brief A read of the tensor; checks one integer index per dimension. */
  Expr operator()(std::vector<Expr> indices, Span span = {}) const;
};

/*! \brief The tensor behind `buffer`, or null when it is an ordinary buffer. */
const TensorNode* AsTensor(const BufferNode* buffer);

enum class OpKind : uint8_t { kPlaceholder, kCompute, kExtern, kScan };

/*! \brief What produces tensors. Operations are te-only objects, not IR nodes: CreatePrimFunc
 *  turns them into parameters, allocations and blocks. */
struct OperationNode : std::enable_shared_from_this<OperationNode> {
  OpKind kind;
  std::string name, tag;
  AttrMap attrs;
  OperationNode(OpKind k, std::string n, std::string t, AttrMap a)
      : kind(k), name(std::move(n)), tag(std::move(t)), attrs(std::move(a)) {}
  virtual ~OperationNode() = default;
  OperationNode(const OperationNode&) = delete;
  OperationNode& operator=(const OperationNode&) = delete;

  /*! \brief The shape and element type of output 0. */
  virtual const std::vector<Expr>& output_shape() const = 0;
  virtual DataType output_dtype() const = 0;
  /*! \brief How many tensors the operation produces (several for te.extern and te.scan). */
  virtual size_t num_outputs() const { return 1; }
  /*! \brief The shape and element type of output `i`. */
  virtual const std::vector<Expr>& OutputShape(size_t i) const { return output_shape(); }
  virtual DataType OutputDType(size_t i) const { return output_dtype(); }
  /*! \brief The tensors this operation reads, in order of first use. */
  virtual std::vector<Tensor> InputTensors() const = 0;
  /*! \brief The output tensor `index` (the same object for as long as anything holds it). */
  Tensor output(size_t index = 0) const;

 private:
  mutable std::vector<std::weak_ptr<TensorNode>> outputs_;
};

/*! \brief An input tensor of the given shape and element type. */
struct PlaceholderOpNode : OperationNode {
  std::vector<Expr> shape;
  DataType dtype;
  PlaceholderOpNode(std::string n, std::vector<Expr> s, DataType t)
      : OperationNode(OpKind::kPlaceholder, std::move(n), "", {}), shape(std::move(s)), dtype(t) {}
  const std::vector<Expr>& output_shape() const override { return shape; }
  DataType output_dtype() const override { return dtype; }
  std::vector<Tensor> InputTensors() const override { return {}; }
};

/*! \brief A compute body: an expression of the axes, a reduction over reduce axes, or several
 *  expressions (a multi-output compute: one tensor per expression). */
using ComputeBody = std::variant<Expr, Reduce, std::vector<Expr>>;

/*!
 * \brief out[axis...] = body: one value per point of the axes' domain.
 *
 * `axis` are the spatial IterVars (one per output dimension, domain [0, extent)); a reduction
 * body adds its reduce axes as `reduce_axis`. Exactly one of `body` and `reduce` is set. A
 * multi-output compute (fcompute returning a tuple) has one value per output in `bodies`, all
 * over the same axes; `body` is output 0's.
 */
struct ComputeOpNode : OperationNode {
  std::vector<IterVar> axis;
  std::vector<IterVar> reduce_axis;
  Expr body;                // null for a reduction
  std::vector<Expr> bodies;  // every output's value (body first); empty for a reduction
  Reduce reduce;             // null for an elementwise body
  std::vector<Expr> shape;
  std::vector<Tensor> inputs;
  ComputeOpNode(std::string n, std::string t, AttrMap a)
      : OperationNode(OpKind::kCompute, std::move(n), std::move(t), std::move(a)) {}
  const std::vector<Expr>& output_shape() const override { return shape; }
  DataType output_dtype() const override;
  size_t num_outputs() const override { return reduce ? reduce->size() : bodies.size(); }
  DataType OutputDType(size_t i) const override {
    return reduce ? reduce->dtype(i) : bodies.at(i)->dtype;
  }
  std::vector<Tensor> InputTensors() const override { return inputs; }

  /*! \brief Checks that the body reads only te tensors and uses its own axes (reduce axes only
   *  inside their reducer). */
  static std::shared_ptr<const ComputeOpNode> Make(std::string name, std::string tag, AttrMap attrs,
                                                   std::vector<IterVar> axis, ComputeBody body);
};

/*!
 * \brief `te.extern`: outputs computed by an arbitrary statement, usually a call of a packed or
 *  C function, over buffers standing for the inputs and the outputs.
 *
 * `input_placeholders[i]` stands for `inputs[i]` (same dtype and rank) and
 * `output_placeholders[i]` for output i; `body` reads and writes only through them.
 * CreatePrimFunc makes the placeholders the function's buffers and the body one opaque block.
 */
struct ExternOpNode : OperationNode {
  std::vector<Tensor> inputs;
  std::vector<Buffer> input_placeholders;
  std::vector<Buffer> output_placeholders;
  Stmt body;
  ExternOpNode(std::string n, std::string t, AttrMap a)
      : OperationNode(OpKind::kExtern, std::move(n), std::move(t), std::move(a)) {}
  const std::vector<Expr>& output_shape() const override { return OutputShape(0); }
  DataType output_dtype() const override { return OutputDType(0); }
  size_t num_outputs() const override { return output_placeholders.size(); }
  const std::vector<Expr>& OutputShape(size_t i) const override {
    return output_placeholders.at(i)->shape;
  }
  DataType OutputDType(size_t i) const override { return output_placeholders.at(i)->dtype; }
  std::vector<Tensor> InputTensors() const override { return inputs; }

  /*! \brief Checks the counts, the placeholders against the inputs, and that there is a body
   *  and at least one output. */
  static std::shared_ptr<const ExternOpNode> Make(std::string name, std::string tag,
                                                  AttrMap attrs, std::vector<Tensor> inputs,
                                                  std::vector<Buffer> input_placeholders,
                                                  std::vector<Buffer> output_placeholders,
                                                  Stmt body);
};

/*!
 * \brief `te.scan`: tensors defined by a recurrence over their first dimension.
 *
 * Output k holds `init[k]` in rows [0, init[k].shape[0]) and `update[k]` in the rows
 * [init rows, update[k].shape[0]), computed in order of the row. `update[k]` reads the rows
 * computed before through `state_placeholder[k]`, which stands for output k. `scan_axis` is the
 * ordered axis over the update rows. `inputs` are the tensors the update reads (a hint only).
 */
struct ScanOpNode : OperationNode {
  IterVar scan_axis;
  std::vector<Tensor> init, update, state_placeholder, inputs;
  ScanOpNode(std::string n, std::string t, AttrMap a)
      : OperationNode(OpKind::kScan, std::move(n), std::move(t), std::move(a)) {}
  const std::vector<Expr>& output_shape() const override { return OutputShape(0); }
  DataType output_dtype() const override { return OutputDType(0); }
  size_t num_outputs() const override { return update.size(); }
  const std::vector<Expr>& OutputShape(size_t i) const override {
    return state_placeholder.at(i)->shape;
  }
  DataType OutputDType(size_t i) const override { return update.at(i)->dtype; }
  /*! \brief The initial and the update tensors. */
  std::vector<Tensor> InputTensors() const override;

  /*! \brief Checks that init, update and state match in number, rank, dtype and trailing
   *  dimensions, that the states are placeholders and the updates computes. */
  static std::shared_ptr<const ScanOpNode> Make(std::string name, std::string tag, AttrMap attrs,
                                                std::vector<Tensor> init,
                                                std::vector<Tensor> update,
                                                std::vector<Tensor> state_placeholder,
                                                std::vector<Tensor> inputs);
};

/*! \brief `te.placeholder`: an input tensor. */
Tensor Placeholder(std::vector<Expr> shape, DataType dtype = DataType::Float(32),
                   std::string name = "placeholder");

/*!
 * \brief `te.compute`: a tensor of `shape` whose element at (i0, i1, ...) is
 *  `fcompute({i0, i1, ...})`. The index variables are named `axis_names` (default i0, i1, ...).
 */
Tensor Compute(std::vector<Expr> shape,
               const std::function<ComputeBody(const std::vector<Var>&)>& fcompute,
               std::string name = "compute", std::string tag = "", AttrMap attrs = {},
               std::vector<std::string> axis_names = {});

/*! \brief The spatial axes `te.compute` would give a tensor of `shape` (domains [0, extent)). */
std::vector<IterVar> MakeComputeAxes(const std::vector<Expr>& shape,
                                     const std::vector<std::string>& names);

/*! \brief `te.reduce_axis`: a reduction iterator over `dom`. */
IterVar ReduceAxis(Range dom, std::string name = "rv");

}  // namespace te
}  // namespace tessera
