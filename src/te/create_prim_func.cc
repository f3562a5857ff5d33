// CreatePrimFunc: tensors become parameters or root allocations, compute operations blocks.
#include "tessera/te/create_prim_func.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "tessera/ir/functor.h"
#include "tessera/ir/ir_builder.h"
#include "tessera/support/error.h"

namespace tessera {
namespace te {
namespace {

[[noreturn]] void ValueError(const std::string& msg) {
  TESSERA_THROW_KIND(Span(), ErrorKind::kValue) << "te.create_prim_func: " << msg;
}

// `e` recomputed in the integer type `t`: constants and arithmetic are rebuilt in `t`, casts
// between integer types dropped, anything else cast.
Expr ToIndexType(const Expr& e, DataType t) {
  if (e->dtype == t) return e;
  if (!e->dtype.is_integer() || !e->dtype.is_scalar()) return CastNode::Make(t, e);
  if (auto c = AsConstInt(e)) return MakeConst(t, *c);
  if (auto* cast = AsPtr<CastNode>(e); cast && cast->value->dtype.is_integer()) {
    return ToIndexType(cast->value, t);
  }
  auto* bin = AsPtr<BinaryNode>(e);
  if (bin && !bin->is_comparison() && bin->kind != NodeKind::kAnd && bin->kind != NodeKind::kOr) {
    Expr a = ToIndexType(bin->a, t), b = ToIndexType(bin->b, t);
    switch (bin->kind) {
#define TESSERA_REBUILD(name) \
  case NodeKind::k##name:     \
    return name##Node::Make(a, b, e->span);
      TESSERA_REBUILD(Add)
      TESSERA_REBUILD(Sub) TESSERA_REBUILD(Mul) TESSERA_REBUILD(Div) TESSERA_REBUILD(Mod)
          TESSERA_REBUILD(FloorDiv) TESSERA_REBUILD(FloorMod) TESSERA_REBUILD(Min)
              TESSERA_REBUILD(Max)
#undef TESSERA_REBUILD
                  default : break;
    }
  }
  if (auto* sel = AsPtr<SelectNode>(e)) {
    return SelectNode::Make(sel->condition, ToIndexType(sel->true_value, t),
                            ToIndexType(sel->false_value, t), e->span);
  }
  return CastNode::Make(t, e);
}

// A compute body in block terms: axis variables become block iterators and tensor reads
// become reads of the function's buffers (indices in the index type, when overridden).
class BodyRewriter : public ExprMutator {
 public:
  BodyRewriter(const std::unordered_map<const VarNode*, Var>& iters,
               const std::unordered_map<const OperationNode*, Buffer>& buffers,
               std::optional<DataType> index_dtype)
      : iters_(iters), buffers_(buffers), index_dtype_(index_dtype) {}

  using ExprMutator::VisitExpr_;
  Expr VisitExpr_(const VarNode* op) override {
    auto it = iters_.find(op);
    if (it == iters_.end()) return GetRef(op);
    const Var& iter = it->second;
    // Outside indices an axis keeps its own type (e.g. `lambda i: i` stored into int32).
    return iter->dtype == op->dtype ? Expr(iter) : Expr(CastNode::Make(op->dtype, iter));
  }
  Expr VisitExpr_(const BufferLoadNode* op) override {
    const TensorNode* tensor = AsTensor(op->buffer.get());
    TESSERA_ICHECK(tensor != nullptr) << "compute body reads a non-tensor buffer";
    auto it = buffers_.find(tensor->op.get());
    TESSERA_ICHECK(it != buffers_.end()) << "no buffer for tensor " << tensor->name;
    std::vector<Expr> indices;
    for (const Expr& index : op->indices) indices.push_back(Index(index));
    Expr predicate = op->predicate ? VisitExpr(op->predicate) : nullptr;
    return BufferLoadNode::Make(it->second, std::move(indices), predicate, op->span);
  }

  Expr Index(const Expr& index) {
    Expr e = VisitExpr(index);
    return index_dtype_ ? ToIndexType(e, *index_dtype_) : e;
  }

 private:
  const std::unordered_map<const VarNode*, Var>& iters_;
  const std::unordered_map<const OperationNode*, Buffer>& buffers_;
  std::optional<DataType> index_dtype_;
};

class PrimFuncCreator {
 public:
  PrimFuncCreator(const std::vector<PrimFuncArg>& args, std::optional<DataType> index_dtype)
      : args_(args), index_dtype_(index_dtype) {
    if (index_dtype_ && (!index_dtype_->is_int() || !index_dtype_->is_scalar())) {
      ValueError("index_dtype_override must be a signed integer type such as int64, got " +
                 index_dtype_->ToString());
    }
  }

  PrimFunc Create() {
    CollectArgs();
    for (const Tensor& t : listed_) Visit(t, nullptr);
    builder_.BeginFunction("main");
    DeclareBuffers();
    for (const OperationNode* op : order_) {
      if (op->kind == OpKind::kCompute) EmitCompute(static_cast<const ComputeOpNode*>(op));
    }
    CheckFreeVars();
    builder_.SetFunctionAttr("tir.noalias", Bool(true));
    return builder_.EndFunction();
  }

 private:
  void CollectArgs() {
    for (const PrimFuncArg& arg : args_) {
      if (const Tensor* t = std::get_if<Tensor>(&arg)) {
        if (!*t) ValueError("the list holds a null tensor");
        if (listed_ops_.count((*t)->op.get())) {
          ValueError("tensor '" + (*t)->name + "' is listed twice");
        }
        listed_.push_back(*t);
        listed_ops_.insert((*t)->op.get());
      } else {
        const Var& v = std::get<Var>(arg);
        if (!v) ValueError("the list holds a null variable");
        if (AsAxisVar(v.get())) {
          ValueError("'" + v->name + "' is an axis of a te.compute, not a scalar parameter");
        }
        if (!v->dtype.is_scalar() || v->dtype.is_void()) {
          ValueError("scalar parameter '" + v->name + "' has type " + v->dtype.ToString());
        }
        if (defined_.count(v.get())) ValueError("variable '" + v->name + "' is listed twice");
        defined_.insert(v.get());
      }
    }
  }

  // Post-order walk from the listed tensors: producers before their readers.
  void Visit(const Tensor& tensor, const OperationNode* reader) {
    const OperationNode* op = tensor->op.get();
    if (!visited_.insert(op).second) return;
    if (op->kind == OpKind::kPlaceholder && !listed_ops_.count(op)) {
      ValueError("tensor '" + tensor->name + "' (a te.placeholder read by '" + reader->name +
                 "') is not among the listed tensors; list every input placeholder so that it "
                 "becomes a parameter of the function");
    }
    tensors_[op] = tensor;
    for (const Tensor& input : op->InputTensors()) Visit(input, op);
    order_.push_back(op);
  }

  std::vector<Expr> Shape(const Tensor& tensor) {
    std::vector<Expr> shape;
    for (const Expr& e : tensor->shape) {
      if (index_dtype_ && e->dtype != *index_dtype_ && !AsConstInt(e)) {
        ValueError("index_dtype_override=" + index_dtype_->ToString() + " cannot convert the " +
                   e->dtype.ToString() + " shape entry of tensor '" + tensor->name +
                   "'; declare symbolic sizes with that type (te.var(name, \"" +
                   index_dtype_->ToString() + "\"))");
      }
      shape.push_back(index_dtype_ ? ToIndexType(e, *index_dtype_) : e);
    }
    return shape;
  }

  void DeclareBuffers() {
    // Parameters in list order; their bare shape variables become defined.
    for (const PrimFuncArg& arg : args_) {
      if (const Tensor* t = std::get_if<Tensor>(&arg)) {
        const Tensor& tensor = *t;
        Buffer buffer = BufferNode::Decl(tensor->name, tensor->dtype, Shape(tensor));
        Var param = VarNode::Make("var_" + tensor->name, DataType::Handle());
        builder_.AddParam(param);
        builder_.BindParamBuffer(param, buffer);
        buffers_[tensor->op.get()] = buffer;
        for (const Expr& e : buffer->shape) {
          if (auto* v = AsPtr<VarNode>(e)) defined_.insert(v);
        }
        NoteUses(buffer->shape, tensor->name);
      } else {
        builder_.AddParam(std::get<Var>(arg));
      }
    }
    for (const OperationNode* op : order_) {
      if (listed_ops_.count(op)) continue;
      Buffer buffer = BufferNode::Decl(op->name, op->output_dtype(), Shape(tensors_.at(op)));
      builder_.AllocBuffer(buffer);
      buffers_[op] = buffer;
      NoteUses(buffer->shape, op->name);
    }
  }

  std::string UniqueBlockName(const std::string& name) {
    std::string candidate = name;
    for (int k = 1; block_names_.count(candidate); ++k) candidate = name + "_" + std::to_string(k);
    block_names_.insert(candidate);
    return candidate;
  }

  void EmitCompute(const ComputeOpNode* op) {
    struct Loop {
      Var loop_var;
      IterVar iter;
      Expr binding;
    };
    std::vector<Loop> loops;
    std::unordered_map<const VarNode*, Var> iters;
    auto add_axis = [&](const IterVar& axis, IterVarType type) {
      Expr min = axis->dom->min, extent = axis->dom->extent;
      DataType t = index_dtype_ ? *index_dtype_ : axis->var->dtype;
      if (index_dtype_) {
        min = ToIndexType(min, t);
        extent = ToIndexType(extent, t);
      }
      Var loop_var = VarNode::Make(axis->var->name, t);
      Var iter_var = VarNode::Make("v_" + axis->var->name, t);
      Expr binding = IsConstInt(min, 0) ? Expr(loop_var) : Expr(AddNode::Make(loop_var, min));
      loops.push_back(
          {loop_var, IterVarNode::Make(RangeNode::Make(min, extent), iter_var, type), binding});
      iters[axis->var.get()] = iter_var;
      bound_.insert(iter_var.get());
      NoteUses({min, extent}, op->name);
    };
    for (const IterVar& axis : op->axis) add_axis(axis, IterVarType::kDataPar);
    for (const IterVar& axis : op->reduce_axis) add_axis(axis, IterVarType::kCommReduce);

    for (const Loop& loop : loops) {
      const Range& dom = loop.iter->dom;
      builder_.BeginFor(loop.loop_var, MakeConst(dom->extent->dtype, int64_t{0}), dom->extent,
                        ForKind::kSerial);
    }
    builder_.BeginBlock(UniqueBlockName(op->name));
    for (const Loop& loop : loops) builder_.AddBlockIter(loop.iter, loop.binding);
    if (!op->attrs.empty()) builder_.SetBlockAttrs(op->attrs);

    const Buffer& out = buffers_.at(op);
    std::vector<Expr> indices;
    for (size_t d = 0; d < op->axis.size(); ++d) indices.push_back(loops[d].iter->var);
    BodyRewriter rewrite(iters, buffers_, index_dtype_);
    if (!op->reduce) {
      Expr value = rewrite.VisitExpr(op->body);
      NoteUses({value}, op->name);
      builder_.Emit(BufferStoreNode::Make(out, value, indices));
    } else {
      const Reduce& reduce = op->reduce;
      Expr init = reduce->init ? rewrite.VisitExpr(reduce->init) : reduce->combiner->identity;
      builder_.BeginInit();
      builder_.Emit(BufferStoreNode::Make(out, init, indices));
      builder_.EndInit();
      Expr current = BufferLoadNode::Make(out, indices);
      Expr value = reduce->combiner->Combine(current, rewrite.VisitExpr(reduce->source));
      if (reduce->condition) {
        // Points outside the condition keep the running value: the update stays one store.
        value = SelectNode::Make(rewrite.VisitExpr(reduce->condition), value, current);
      }
      NoteUses({init, value}, op->name);
      builder_.Emit(BufferStoreNode::Make(out, value, indices));
    }
    builder_.EndBlock();
    for (size_t i = 0; i < loops.size(); ++i) builder_.EndFor();
  }

  // Remembers the free variables of `exprs` (symbolic sizes) and where they were first used.
  void NoteUses(const std::vector<Expr>& exprs, const std::string& where) {
    for (const Expr& e : exprs) {
      PostOrderVisit(e, [&](const ObjectRef& n) {
        auto* v = AsPtr<VarNode>(n);
        if (v && !v->pointer && !uses_.count(v)) {
          uses_[v] = where;
          use_order_.push_back(v);
        }
      });
    }
  }

  // Block iterators are bound by their blocks; every other variable must be a parameter.
  void CheckFreeVars() {
    for (const VarNode* v : use_order_) {
      if (defined_.count(v) || bound_.count(v)) continue;
      ValueError("variable '" + v->name + "' (used by '" + uses_[v] +
                 "') is not defined by the shape of any listed tensor; add it to the list to make "
                 "it a scalar parameter");
    }
  }

  const std::vector<PrimFuncArg>& args_;
  std::optional<DataType> index_dtype_;
  IRBuilder builder_;
  std::vector<Tensor> listed_;
  std::unordered_set<const OperationNode*> listed_ops_, visited_;
  std::vector<const OperationNode*> order_;
  std::unordered_map<const OperationNode*, Tensor> tensors_;
  std::unordered_map<const OperationNode*, Buffer> buffers_;
  std::unordered_set<std::string> block_names_;
  std::unordered_set<const VarNode*> defined_;
  std::unordered_map<const VarNode*, std::string> uses_;
  std::vector<const VarNode*> use_order_;
  std::unordered_set<const VarNode*> bound_;
};

}  // namespace

PrimFunc CreatePrimFunc(const std::vector<PrimFuncArg>& args,
                        std::optional<DataType> index_dtype_override) {
  return PrimFuncCreator(args, index_dtype_override).Create();
}

}  // namespace te
}  // namespace tessera
