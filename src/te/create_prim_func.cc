// CreatePrimFunc: tensors become parameters or root allocations, compute operations blocks.
#include "tessera/te/create_prim_func.h"

#include <algorithm>
#include <functional>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "tessera/ir/functor.h"
#include "tessera/ir/ir_builder.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/arith/analyzer.h"
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
  if (e->dtype == t) {
    // Already of the type, but maybe computed from narrower parts (`int64(i * 2 + j) % 4`):
    // rebuild those in `t` too, as TVM's index type rewriter does.
    bool narrower = false;
    PostOrderVisit(e, [&](const ObjectRef& n) {
      auto* cast = AsPtr<CastNode>(n);
      narrower = narrower || (cast && cast->dtype == t && cast->value->dtype.is_integer());
    });
    if (!narrower) return e;
    if (auto* cast = AsPtr<CastNode>(e); cast && cast->value->dtype.is_integer()) {
      return ToIndexType(cast->value, t);
    }
    auto* bin = AsPtr<BinaryNode>(e);
    if (!bin || bin->is_comparison() || bin->kind == NodeKind::kAnd || bin->kind == NodeKind::kOr) {
      return e;
    }
  }
  if (!e->dtype.is_integer() || !e->dtype.is_scalar()) return CastNode::Make(t, e);
  if (auto c = AsConstInt(e)) return MakeConst(t, *c);
  if (auto* cast = AsPtr<CastNode>(e); cast && cast->value->dtype.is_integer()) {
    return ToIndexType(cast->value, t);
  }
  if (auto* cast = AsPtr<CastNode>(e); cast && cast->value->dtype.is_scalar()) {
    // A float converted to an index converts to the index type directly, as TVM's.
    return CastNode::Make(t, cast->value, e->span);
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

using TensorKey = std::pair<const OperationNode*, int>;
struct TensorKeyHash {
  size_t operator()(const TensorKey& k) const {
    return std::hash<const void*>()(k.first) * 31 + static_cast<size_t>(k.second);
  }
};
using BufferTable = std::unordered_map<TensorKey, Buffer, TensorKeyHash>;

TensorKey KeyOf(const TensorNode* t) { return {t->op.get(), t->value_index}; }

// The body of a te.extern over the function's buffers: its placeholder buffers (and their data
// pointers and offsets) replaced by the buffers chosen for the tensors they stand for.
class PlaceholderSubstituter : public StmtExprMutator {
 public:
  void Map(const Buffer& from, const Buffer& to) {
    if (from.get() == to.get()) return;
    buffers_[from.get()] = to;
    vars_[from->data.get()] = to->data;
    if (auto* off = AsPtr<VarNode>(from->elem_offset)) {
      vars_[off] = to->elem_offset ? to->elem_offset : Expr(MakeConst(off->dtype, int64_t{0}));
    }
  }
  bool empty() const { return buffers_.empty(); }

  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;
  Expr VisitExpr_(const VarNode* op) override {
    auto it = vars_.find(op);
    return it == vars_.end() ? GetRef(op) : it->second;
  }
  Expr VisitExpr_(const BufferLoadNode* op) override {
    std::vector<Expr> indices;
    for (const Expr& i : op->indices) indices.push_back(VisitExpr(i));
    Expr pred = op->predicate ? VisitExpr(op->predicate) : nullptr;
    return BufferLoadNode::Make(Remap(op->buffer), std::move(indices), pred, op->span);
  }
  Stmt VisitStmt_(const BufferStoreNode* op) override {
    std::vector<Expr> indices;
    for (const Expr& i : op->indices) indices.push_back(VisitExpr(i));
    Expr pred = op->predicate ? VisitExpr(op->predicate) : nullptr;
    return BufferStoreNode::Make(Remap(op->buffer), VisitExpr(op->value), std::move(indices), pred,
                                 op->span);
  }

 private:
  Buffer Remap(const Buffer& b) {
    auto it = buffers_.find(b.get());
    return it == buffers_.end() ? b : it->second;
  }
  std::unordered_map<const BufferNode*, Buffer> buffers_;
  std::unordered_map<const VarNode*, Expr> vars_;
};

// A compute body in block terms: axis variables become block iterators and tensor reads
// become reads of the function's buffers (indices in the index type, when overridden).
class BodyRewriter : public ExprMutator {
 public:
  BodyRewriter(const std::unordered_map<const VarNode*, Var>& iters, const BufferTable& buffers,
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
    auto it = buffers_.find(KeyOf(tensor));
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
  const BufferTable& buffers_;
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
    for (const OperationNode* op : order_) Emit(op);
    CheckFreeVars();
    builder_.SetFunctionAttr("tir.noalias", Bool(true));
    if (!layout_free_params_.empty()) {
      std::vector<ObjectRef> indices;
      for (int i : layout_free_params_) indices.push_back(MakeConst(DataType::Int(32), int64_t{i}));
      builder_.SetFunctionAttr("layout_free_buffers", ArrayNode::Make(std::move(indices)));
    }
    PrimFunc func = builder_.EndFunction();
    if (nested_) {
      // The regions inferred for nested blocks have symbolic bounds built piece by piece
      // (`v_j + v_j - v_j + 1`): simplified, as TVM's completion gives them.
      Stmt body = RegionSimplifier(self_initialized_).VisitStmt(func->body);
      if (body != func->body) func = func->WithBody(body);
    }
    return func;
  }

 private:
  class RegionSimplifier : public StmtMutator {
   public:
    explicit RegionSimplifier(const std::unordered_set<std::string>& self_initialized)
        : self_initialized_blocks_(self_initialized) {}
    using StmtMutator::VisitStmt_;
    Stmt VisitStmt_(const BlockNode* op) override {
      Stmt visited = StmtMutator::VisitStmt_(op);
      auto* b = AsPtr<BlockNode>(visited);
      bool changed = false;
      // A block that stores the identity into its output point before the nested reduction
      // blocks update it reads no value of that buffer from outside: like the outer block of
      // TVM's form, it lists no read of what it writes (so it is a complete block, which
      // parallel loops and thread bindings above it require).
      std::vector<BufferRegion> own_reads;
      if (self_initialized_blocks_.count(b->name_hint)) {
        for (const BufferRegion& r : b->reads) {
          bool written = false;
          for (const BufferRegion& w : b->writes) written = written || w->buffer == r->buffer;
          if (written) changed = true;
          else own_reads.push_back(r);
        }
      }
      auto simplify = [&](const std::vector<BufferRegion>& regions) {
        std::vector<BufferRegion> out;
        for (const BufferRegion& r : regions) {
          std::vector<Range> ranges;
          bool same = true;
          for (const Range& range : r->region) {
            arith::Analyzer analyzer;
            Expr min = analyzer.Simplify(range->min), extent = analyzer.Simplify(range->extent);
            same = same && min == range->min && extent == range->extent;
            ranges.push_back(same ? range : RangeNode::Make(min, extent));
          }
          changed = changed || !same;
          out.push_back(same ? r : BufferRegionNode::Make(r->buffer, std::move(ranges)));
        }
        return out;
      };
      std::vector<BufferRegion> reads = simplify(changed ? own_reads : b->reads);
      std::vector<BufferRegion> writes = simplify(b->writes);
      if (!changed) return visited;
      return BlockNode::Make(b->iter_vars, std::move(reads), std::move(writes), b->name_hint,
                             b->body, b->init, b->alloc_buffers, b->match_buffers, b->annotations,
                             b->span);
    }

   private:
    const std::unordered_set<std::string>& self_initialized_blocks_;
  };

  void Emit(const OperationNode* op) {
    switch (op->kind) {
      case OpKind::kCompute:
        EmitCompute(static_cast<const ComputeOpNode*>(op));
        break;
      case OpKind::kExtern:
        EmitExtern(static_cast<const ExternOpNode*>(op));
        break;
      case OpKind::kScan:
        EmitScan(static_cast<const ScanOpNode*>(op));
        break;
      case OpKind::kPlaceholder:
        break;
    }
  }

  // The annotations a compute's or extern's attrs give its block, as TVM's create_prim_func
  // makes them: in "layout_free_placeholders", a tensor that is a parameter becomes the
  // function's "layout_free_buffers" (its parameter index) and leaves the block, another tensor
  // stays as its buffer; the te-only attrs "const_matrix", "workload" and
  // "auto_scheduler_simplify_const_tensor_indices" are dropped.
  AttrMap BlockAttrs(const AttrMap& attrs) {
    AttrMap out;
    for (const auto& [key, value] : attrs) {
      if (key == "const_matrix" || key == "workload" ||
          key == "auto_scheduler_simplify_const_tensor_indices") {
        continue;
      }
      auto* items = key == "layout_free_placeholders" ? AsPtr<ArrayNode>(value) : nullptr;
      if (!items) {
        out.emplace(key, value);
        continue;
      }
      std::vector<ObjectRef> kept;
      for (const ObjectRef& item : items->items) {
        const TensorNode* tensor = nullptr;
        if (auto* b = AsPtr<BufferNode>(item)) tensor = AsTensor(b);
        if (!tensor) {
          kept.push_back(item);
          continue;
        }
        int param = ParamIndex(tensor);
        if (param >= 0) {
          layout_free_params_.insert(param);
          continue;
        }
        auto it = buffers_.find(KeyOf(tensor));
        kept.push_back(it != buffers_.end() ? ObjectRef(it->second) : item);
      }
      if (!kept.empty()) out.emplace(key, ArrayNode::Make(std::move(kept)));
    }
    return out;
  }

  int ParamIndex(const TensorNode* tensor) const {
    for (size_t i = 0; i < args_.size(); ++i) {
      const Tensor* t = std::get_if<Tensor>(&args_[i]);
      if (t && KeyOf(t->get()) == KeyOf(tensor)) return static_cast<int>(i);
    }
    return -1;
  }

  void CollectArgs() {
    for (const PrimFuncArg& arg : args_) {
      if (const Tensor* t = std::get_if<Tensor>(&arg)) {
        if (!*t) ValueError("the list holds a null tensor");
        if (listed_keys_.count(KeyOf(t->get()))) {
          ValueError("tensor '" + (*t)->name + "' is listed twice");
        }
        listed_.push_back(*t);
        listed_keys_.insert(KeyOf(t->get()));
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
    if (auto it = in_scan_.find(op); it != in_scan_.end()) {
      ValueError("tensor '" + tensor->name + "' is computed inside te.scan '" + it->second->name +
                 "' (it reads the scan's state); read the scan's output instead");
    }
    if (!visited_.insert(op).second) return;
    if (op->kind == OpKind::kPlaceholder && !listed_ops_.count(op)) {
      if (reader == nullptr) ValueError("tensor '" + tensor->name + "' is not listed");
      ValueError("tensor '" + tensor->name + "' (a te.placeholder read by '" + reader->name +
                 "') is not among the listed tensors; list every input placeholder so that it "
                 "becomes a parameter of the function");
    }
    if (op->kind == OpKind::kScan) {
      VisitScan(static_cast<const ScanOpNode*>(op));
    } else {
      for (const Tensor& input : op->InputTensors()) Visit(input, op);
    }
    order_.push_back(op);
  }

  // The operations between a scan's states and its updates (those reading a state, directly
  // or not) run once per row inside the scan; everything else they read runs before it.
  void VisitScan(const ScanOpNode* scan) {
    for (const Tensor& t : scan->init) Visit(t, scan);
    std::unordered_set<const OperationNode*> states;
    for (const Tensor& s : scan->state_placeholder) states.insert(s->op.get());
    std::unordered_map<const OperationNode*, bool> depends;
    std::vector<const OperationNode*>& body = scan_bodies_[scan];
    std::function<bool(const Tensor&, const OperationNode*)> walk = [&](const Tensor& t,
                                                                      const OperationNode* reader) {
      const OperationNode* op = t->op.get();
      if (states.count(op)) return true;
      if (auto it = depends.find(op); it != depends.end()) return it->second;
      bool dep = false;
      if (op->kind == OpKind::kCompute) {
        for (const Tensor& input : op->InputTensors()) dep = walk(input, op) || dep;
      }
      depends[op] = dep;
      if (!dep) {
        Visit(t, reader);
        return false;
      }
      if (visited_.count(op) || in_scan_.count(op)) {
        ValueError("te.scan '" + scan->name + "': '" + op->name +
                   "' reads the scan's state, so it belongs to the scan body; it cannot also be "
                   "computed outside the scan or in another scan");
      }
      for (const Tensor& input : op->InputTensors()) {
        if (!states.count(input->op.get()) && !depends.at(input->op.get())) Visit(input, op);
      }
      in_scan_[op] = scan;
      body.push_back(op);
      return true;
    };
    for (const Tensor& u : scan->update) {
      if (!walk(u, scan)) {
        ValueError("te.scan '" + scan->name + "': update '" + u->name +
                   "' does not read the state placeholder; the recurrence must use it");
      }
    }
    for (const OperationNode* op : body) {
      if (op->kind != OpKind::kCompute) {
        ValueError("te.scan '" + scan->name + "': '" + op->name +
                   "' in the scan body must be a te.compute");
      }
      auto* c = static_cast<const ComputeOpNode*>(op);
      if (c->num_outputs() > 1) {
        ValueError("te.scan '" + scan->name + "': '" + op->name +
                   "' in the scan body has several outputs; a scan body computes one");
      }
      if (c->axis.empty()) {
        ValueError("te.scan '" + scan->name + "': '" + op->name +
                   "' in the scan body needs the scan dimension as its first axis");
      }
    }
    for (const Tensor& u : scan->update) scan_updates_[u->op.get()] = u;
  }

  std::vector<Expr> Shape(const std::vector<Expr>& shape, const std::string& name) {
    std::vector<Expr> out;
    for (const Expr& e : shape) {
      if (index_dtype_ && e->dtype != *index_dtype_ && !AsConstInt(e)) {
        ValueError("index_dtype_override=" + index_dtype_->ToString() + " cannot convert the " +
                   e->dtype.ToString() + " shape entry of tensor '" + name +
                   "'; declare symbolic sizes with that type (te.var(name, \"" +
                   index_dtype_->ToString() + "\"))");
      }
      out.push_back(index_dtype_ ? ToIndexType(e, *index_dtype_) : e);
    }
    return out;
  }

  // As in TVM, a parameter that a te.extern reads or writes is that extern's buffer (with its
  // symbolic elem_offset), so its body needs no rewriting.
  Buffer ParamBuffer(const Tensor& tensor) {
    const OperationNode* op = tensor->op.get();
    if (op->kind == OpKind::kExtern) {
      auto* ext = static_cast<const ExternOpNode*>(op);
      if (!index_dtype_) return ext->output_placeholders.at(tensor->value_index);
    }
    if (!index_dtype_) {
      // The first extern (in emission order) that reads the tensor, indexed once: one scan of
      // order_ per parameter would make functions of many outputs quadratic.
      if (!extern_inputs_indexed_) {
        extern_inputs_indexed_ = true;
        for (const OperationNode* reader : order_) {
          if (reader->kind != OpKind::kExtern) continue;
          auto* ext = static_cast<const ExternOpNode*>(reader);
          for (size_t i = 0; i < ext->inputs.size(); ++i) {
            extern_inputs_.emplace(KeyOf(ext->inputs[i].get()), ext->input_placeholders[i]);
          }
        }
      }
      auto it = extern_inputs_.find(KeyOf(tensor.get()));
      if (it != extern_inputs_.end()) return it->second;
    }
    return BufferNode::Decl(tensor->name, tensor->dtype, Shape(tensor->shape, tensor->name));
  }

  void DeclareBuffers() {
    // Parameters in list order; their bare shape variables become defined.
    for (const PrimFuncArg& arg : args_) {
      if (const Tensor* t = std::get_if<Tensor>(&arg)) {
        const Tensor& tensor = *t;
        if (in_scan_.count(tensor->op.get())) {
          ValueError("tensor '" + tensor->name + "' is computed inside te.scan '" +
                     in_scan_.at(tensor->op.get())->name +
                     "'; list the scan's output instead");
        }
        Buffer buffer = ParamBuffer(tensor);
        Var param = VarNode::Make("var_" + tensor->name, DataType::Handle());
        builder_.AddParam(param);
        builder_.BindParamBuffer(param, buffer);
        buffers_[KeyOf(tensor.get())] = buffer;
        for (const Expr& e : buffer->shape) {
          if (auto* v = AsPtr<VarNode>(e)) defined_.insert(v);
        }
        if (auto* v = AsPtr<VarNode>(buffer->elem_offset)) defined_.insert(v);
        NoteUses(buffer->shape, tensor->name);
      } else {
        builder_.AddParam(std::get<Var>(arg));
      }
    }
    // Updates of a scan write the scan's output, and its states read it.
    std::unordered_map<const OperationNode*, std::pair<const ScanOpNode*, int>> scan_outputs;
    for (const OperationNode* op : order_) {
      if (op->kind != OpKind::kScan) continue;
      auto* scan = static_cast<const ScanOpNode*>(op);
      for (size_t k = 0; k < scan->update.size(); ++k) {
        scan_outputs[scan->update[k]->op.get()] = {scan, static_cast<int>(k)};
      }
    }
    auto declare = [&](const OperationNode* op) {
      for (size_t i = 0; i < op->num_outputs(); ++i) {
        TensorKey key{op, static_cast<int>(i)};
        if (buffers_.count(key) || scan_outputs.count(op)) continue;
        std::string name = op->num_outputs() == 1 ? op->name : op->name + "_v" + std::to_string(i);
        Buffer buffer = BufferNode::Decl(name, op->OutputDType(i), Shape(op->OutputShape(i), name));
        builder_.AllocBuffer(buffer);
        buffers_[key] = buffer;
        NoteUses(buffer->shape, op->name);
      }
    };
    for (const OperationNode* op : order_) {
      if (op->kind == OpKind::kScan) {
        auto* scan = static_cast<const ScanOpNode*>(op);
        declare(op);
        for (size_t k = 0; k < scan->update.size(); ++k) {
          const Buffer& out = buffers_.at({op, static_cast<int>(k)});
          buffers_[KeyOf(scan->state_placeholder[k].get())] = out;
          buffers_[KeyOf(scan->update[k].get())] = out;
        }
        for (const OperationNode* body : scan_bodies_.at(scan)) declare(body);
      } else if (op->kind != OpKind::kPlaceholder) {
        declare(op);
      }
    }
  }

  std::string UniqueBlockName(const std::string& name) {
    std::string candidate = name;
    for (int k = 1; block_names_.count(candidate); ++k) candidate = name + "_" + std::to_string(k);
    block_names_.insert(candidate);
    return candidate;
  }

  // One block per compute. Inside a scan (`scan_row` set) the first axis is the scan's row: it
  // gets no loop of its own but an ordered block iterator bound to that row.
  void EmitCompute(const ComputeOpNode* op, const Expr& scan_row = nullptr,
                   const Range& scan_dom = nullptr, const Buffer& out_override = nullptr,
                   const std::string& block_name = "") {
    if (!scan_row && op->reduce && EmitNestedCompute(op)) return;
    struct Loop {
      Var loop_var;  // null: bound to the scan row
      IterVar iter;
      Expr binding;
    };
    std::vector<Loop> loops;
    std::unordered_map<const VarNode*, Var> iters;
    auto add_axis = [&](const IterVar& axis, IterVarType type, bool row) {
      Expr min = row ? scan_dom->min : axis->dom->min;
      Expr extent = row ? scan_dom->extent : axis->dom->extent;
      DataType t = index_dtype_ ? *index_dtype_ : axis->var->dtype;
      if (index_dtype_ || min->dtype != t) min = ToIndexType(min, t);
      if (index_dtype_ || extent->dtype != t) extent = ToIndexType(extent, t);
      Var iter_var = VarNode::Make("v_" + axis->var->name, t);
      Var loop_var;
      Expr binding;
      if (row) {
        binding = scan_row->dtype == t ? scan_row : ToIndexType(scan_row, t);
        type = IterVarType::kOrdered;
      } else {
        loop_var = VarNode::Make(axis->var->name, t);
        binding = IsConstInt(min, 0) ? Expr(loop_var) : Expr(AddNode::Make(loop_var, min));
      }
      loops.push_back(
          {loop_var, IterVarNode::Make(RangeNode::Make(min, extent), iter_var, type), binding});
      iters[axis->var.get()] = iter_var;
      bound_.insert(iter_var.get());
      NoteUses({min, extent}, op->name);
    };
    for (size_t d = 0; d < op->axis.size(); ++d) {
      add_axis(op->axis[d], IterVarType::kDataPar, d == 0 && scan_row);
    }
    for (const IterVar& axis : op->reduce_axis) add_axis(axis, IterVarType::kCommReduce, false);

    int opened = 0;
    for (const Loop& loop : loops) {
      if (!loop.loop_var) continue;
      const Range& dom = loop.iter->dom;
      builder_.BeginFor(loop.loop_var, MakeConst(dom->extent->dtype, int64_t{0}), dom->extent,
                        ForKind::kSerial);
      ++opened;
    }
    // A multi-output compute: one block per output ("B.v0", "B.v1", as TVM names them) in the
    // one loop nest, each with iterators of its own. A reduction of a tuple is one block
    // writing every output.
    size_t outputs = op->reduce ? 1 : op->num_outputs();
    for (size_t k = 0; k < outputs; ++k) {
      if (k > 0) {
        for (Loop& loop : loops) {
          const IterVar& old = loop.iter;
          Var fresh = VarNode::Make(old->var->name, old->var->dtype);
          bound_.insert(fresh.get());
          for (auto& [axis, iter] : iters) {
            if (iter.get() == old->var.get()) iter = fresh;
          }
          loop.iter = IterVarNode::Make(old->dom, fresh, old->iter_type);
        }
      }
      std::string name = outputs > 1 ? op->name + ".v" + std::to_string(k)
                                     : (block_name.empty() ? op->name : block_name);
      EmitComputeBlock(op, loops, iters, k, name, k == 0 ? out_override : Buffer());
    }
    for (int i = 0; i < opened; ++i) builder_.EndFor();
  }

  template <class Loops>
  void EmitComputeBlock(const ComputeOpNode* op, Loops& loops,
                        std::unordered_map<const VarNode*, Var>& iters, size_t output,
                        const std::string& block_name, const Buffer& out_override,
                        bool name_is_unique = false, bool with_init = true) {
    builder_.BeginBlock(name_is_unique ? block_name : UniqueBlockName(block_name));
    for (const auto& loop : loops) builder_.AddBlockIter(loop.iter, loop.binding);
    if (loops.empty()) {
      // As TVM's: the block of a zero-dimensional compute has one iterator, vi in [0, 1) bound
      // to 0, so that it still is a block with a spatial domain.
      Expr zero = MakeConst(DataType::Int(32), int64_t{0});
      builder_.AddBlockIter(IterVarNode::Make(RangeNode::Make(zero, MakeConst(DataType::Int(32), int64_t{1})),
                                              VarNode::Make("vi", DataType::Int(32)),
                                              IterVarType::kDataPar, ""),
                            zero);
    }
    if (AttrMap attrs = BlockAttrs(op->attrs); !attrs.empty()) builder_.SetBlockAttrs(attrs);

    const Buffer& out =
        out_override ? out_override : buffers_.at({op, static_cast<int>(output)});
    std::vector<Expr> indices;
    for (size_t d = 0; d < op->axis.size(); ++d) indices.push_back(loops[d].iter->var);
    BodyRewriter rewrite(iters, buffers_, index_dtype_);
    if (!op->reduce) {
      // As TVM's: the value is simplified (`y >= 1 and y - 1 < 14` is `1 <= y and y < 15`).
      Expr value = arith::Analyzer().Simplify(rewrite.VisitExpr(op->bodies[output]));
      NoteUses({value}, op->name);
      builder_.Emit(BufferStoreNode::Make(out, value, indices));
    } else if (op->reduce->size() == 1) {
      const Reduce& reduce = op->reduce;
      Expr init = rewrite.VisitExpr(reduce->init ? reduce->init : reduce->combiner->identity[0]);
      if (with_init) {
        builder_.BeginInit();
        builder_.Emit(BufferStoreNode::Make(out, init, indices));
        builder_.EndInit();
      }
      Expr current = BufferLoadNode::Make(out, indices);
      Expr source = arith::Analyzer().Simplify(rewrite.VisitExpr(reduce->source));
      Expr value = Combine(reduce->combiner, rewrite, {current}, {source})[0];
      if (reduce->condition) {
        // Points outside the condition keep the running value: the update stays one store.
        value = SelectNode::Make(rewrite.VisitExpr(reduce->condition), value, current);
      }
      NoteUses({init, value}, op->name);
      builder_.Emit(BufferStoreNode::Make(out, value, indices));
    } else {
      // A reduction of a tuple, as TVM lowers it: every combined value is bound to a variable
      // (v_<buffer>) before any is stored, since each may read all the running values.
      const Reduce& reduce = op->reduce;
      size_t n = reduce->size();
      std::vector<Buffer> outs;
      std::vector<Expr> current, sources;
      for (size_t i = 0; i < n; ++i) {
        outs.push_back(buffers_.at({op, static_cast<int>(i)}));
        current.push_back(BufferLoadNode::Make(outs[i], indices));
        sources.push_back(arith::Analyzer().Simplify(rewrite.VisitExpr(reduce->sources[i])));
      }
      if (with_init) builder_.BeginInit();
      for (size_t i = 0; i < n && with_init; ++i) {
        Expr init = rewrite.VisitExpr(reduce->inits.empty() ? reduce->combiner->identity[i]
                                                            : reduce->inits[i]);
        NoteUses({init}, op->name);
        builder_.Emit(BufferStoreNode::Make(outs[i], init, indices));
      }
      if (with_init) builder_.EndInit();
      std::vector<Expr> values = Combine(reduce->combiner, rewrite, current, sources);
      Expr condition = reduce->condition ? rewrite.VisitExpr(reduce->condition) : nullptr;
      std::vector<Var> temps;
      for (size_t i = 0; i < n; ++i) {
        if (condition) values[i] = SelectNode::Make(condition, values[i], current[i]);
        NoteUses({values[i]}, op->name);
        temps.push_back(VarNode::Make("v_" + outs[i]->name, values[i]->dtype));
      }
      Stmt body = nullptr;
      std::vector<Stmt> stores;
      for (size_t i = 0; i < n; ++i) {
        stores.push_back(BufferStoreNode::Make(outs[i], temps[i], indices));
      }
      body = SeqStmtNode::Make(std::move(stores));
      for (size_t i = n; i-- > 0;) body = LetStmtNode::Make(temps[i], values[i], body);
      builder_.Emit(body);
    }
    builder_.EndBlock();
  }

  // A reduction whose reduce axes have domains depending on other axes (a window per output
  // point, `te.reduce_axis((0, i))`), as TVM builds it: the axes fall into levels (an axis is one
  // level below the deepest axis its domain reads); each level opens the loops of its own axes
  // and a block whose iterators are every axis of the levels so far, those of outer levels bound
  // to the enclosing block's iterators with a domain of one point. A block with reduce iterators
  // is a reduction block with an init; the innermost one computes the update. Returns false
  // (nothing emitted) when every domain is fixed: one level, the plain block.
  bool EmitNestedCompute(const ComputeOpNode* op) {
    std::vector<IterVar> axes = op->axis;
    axes.insert(axes.end(), op->reduce_axis.begin(), op->reduce_axis.end());
    std::unordered_map<const VarNode*, size_t> position;
    for (size_t j = 0; j < axes.size(); ++j) position[axes[j]->var.get()] = j;
    // Axes only depend on axes before them (te.compute checks), so one forward pass finds depths.
    // `min_reduce_depth`: the lowest level a reduce axis may be at.
    std::vector<int> depth;
    int max_depth = 0;
    auto find_depths = [&](int min_reduce_depth) {
      depth.assign(axes.size(), 0);
      max_depth = 0;
      for (size_t j = 0; j < axes.size(); ++j) {
        if (j >= op->axis.size()) depth[j] = min_reduce_depth;
        for (const Expr& e : {axes[j]->dom->min, axes[j]->dom->extent}) {
          PostOrderVisit(arith::Analyzer().Simplify(e), [&](const ObjectRef& n) {
            auto* v = AsPtr<VarNode>(n);
            auto it = v ? position.find(v) : position.end();
            if (it != position.end() && it->second < j) {
              depth[j] = std::max(depth[j], depth[it->second] + 1);
            }
          });
        }
        max_depth = std::max(max_depth, depth[j]);
      }
    };
    find_depths(0);
    if (max_depth == 0) return false;
    nested_ = true;
    // TVM's form gives each block with reduce iterators an init. It is only right for one level
    // of windows that are never empty and no reduce axis of more than one point outside them:
    // an empty window never runs the leaf's init (the output stays unset), and below an outer
    // reduce axis the leaf's init runs again for every point of it (its rebound iterator is
    // always at its one-point domain's min), dropping what those points summed. Otherwise the
    // outermost block, spatial only (the reduce axes of fixed domains move one level in), sets
    // the identity once before the nested loops and the reduction blocks only update.
    bool tvm_form = max_depth == 1;
    if (tvm_form) {
      arith::Analyzer analyzer;
      for (size_t j = 0; j < axes.size(); ++j) {
        if (depth[j] == 0) analyzer.Bind(axes[j]->var, axes[j]->dom);
      }
      for (size_t j = 0; j < axes.size() && tvm_form; ++j) {
        bool reduce = j >= op->axis.size();
        if (depth[j] == 0) {
          // A reduce axis of the outer level rebinds to a one-point iterator of the leaf, which
          // is always at its min: the leaf's init would run again for each of its points.
          tvm_form = !reduce || IsConstInt(analyzer.Simplify(axes[j]->dom->extent), 1);
        } else {
          tvm_form = analyzer.CanProveGreaterEqual(axes[j]->dom->extent, 1) ||
                     NonEmptyAtEveryPoint(axes[j]->dom->extent, axes, depth);
        }
      }
    }
    if (!tvm_form) find_depths(1);

    struct Level {
      std::vector<IterVar> iters;
      std::vector<Expr> bindings;
      std::unordered_map<const VarNode*, Var> remap;  // TE axis -> this level's iterator
      bool has_reduce = false;
    };
    std::string leaf_name = UniqueBlockName(op->name);
    AttrMap attrs = BlockAttrs(op->attrs);
    std::vector<Level> levels;
    std::vector<int> opened(max_depth + 1, 0);  // loops each level opened
    for (int level = 0; level <= max_depth; ++level) {
      Level cur;
      VarMap previous;
      if (level > 0) {
        for (const auto& [axis, iter] : levels.back().remap) previous[axis] = iter;
      }
      for (size_t j = 0; j < axes.size(); ++j) {
        if (depth[j] > level) continue;
        const IterVar& axis = axes[j];
        DataType t = index_dtype_ ? *index_dtype_ : axis->var->dtype;
        Var iter_var = VarNode::Make("v_" + axis->var->name, t);
        Expr min, extent, binding;
        if (depth[j] == level) {
          min = arith::Analyzer().Simplify(Substitute(axis->dom->min, previous));
          extent = arith::Analyzer().Simplify(Substitute(axis->dom->extent, previous));
          if (index_dtype_ || min->dtype != t) min = ToIndexType(min, t);
          if (index_dtype_ || extent->dtype != t) extent = ToIndexType(extent, t);
          Var loop_var = VarNode::Make(axis->var->name, t);
          builder_.BeginFor(loop_var, MakeConst(t, int64_t{0}), extent, ForKind::kSerial);
          ++opened[level];
          binding = IsConstInt(min, 0) ? Expr(loop_var) : Expr(AddNode::Make(loop_var, min));
          NoteUses({min, extent}, op->name);
        } else {
          min = levels.back().remap.at(axis->var.get());
          extent = MakeConst(t, int64_t{1});
          binding = min;
        }
        IterVarType type = j < op->axis.size() ? IterVarType::kDataPar : IterVarType::kCommReduce;
        cur.has_reduce = cur.has_reduce || type == IterVarType::kCommReduce;
        cur.iters.push_back(IterVarNode::Make(RangeNode::Make(min, extent), iter_var, type));
        cur.bindings.push_back(binding);
        cur.remap[axis->var.get()] = iter_var;
        bound_.insert(iter_var.get());
      }
      levels.push_back(std::move(cur));
      if (level == max_depth) break;
      // An enclosing block: its iterators, and the init when it already reduces.
      const Level& outer = levels.back();
      std::string block_name = UniqueBlockName(op->name + "_l" + std::to_string(level + 1));
      if (!tvm_form && level == 0) self_initialized_.insert(block_name);
      builder_.BeginBlock(block_name);
      for (size_t k = 0; k < outer.iters.size(); ++k) {
        builder_.AddBlockIter(outer.iters[k], outer.bindings[k]);
      }
      if (!attrs.empty()) builder_.SetBlockAttrs(attrs);
      // TVM's form: an init in each reduction block; else the identity stored once, first thing
      // in the outermost block.
      if (tvm_form ? outer.has_reduce : level == 0) {
        std::vector<Expr> indices;
        for (size_t d = 0; d < op->axis.size(); ++d) indices.push_back(outer.iters[d]->var);
        BodyRewriter rewrite(outer.remap, buffers_, index_dtype_);
        const Reduce& reduce = op->reduce;
        if (tvm_form) builder_.BeginInit();
        for (size_t i = 0; i < reduce->size(); ++i) {
          Expr init = rewrite.VisitExpr(reduce->inits.empty() ? reduce->combiner->identity[i]
                                                              : reduce->inits[i]);
          NoteUses({init}, op->name);
          builder_.Emit(BufferStoreNode::Make(buffers_.at({op, static_cast<int>(i)}), init, indices));
        }
        if (tvm_form) builder_.EndInit();
      }
    }
    struct LeafLoop {
      IterVar iter;
      Expr binding;
    };
    std::vector<LeafLoop> leaf;
    Level& last = levels.back();
    for (size_t k = 0; k < last.iters.size(); ++k) leaf.push_back({last.iters[k], last.bindings[k]});
    EmitComputeBlock(op, leaf, last.remap, 0, leaf_name, Buffer(), /*name_is_unique=*/true,
                     /*with_init=*/tvm_form);
    // Innermost first: a level's loops, then the block of the level above that holds them.
    for (int level = max_depth; level >= 0; --level) {
      for (int i = 0; i < opened[level]; ++i) builder_.EndFor();
      if (level > 0) builder_.EndBlock();
    }
    return true;
  }

  // Whether the window extent `extent`, which reads only outer axes (depth 0) with constant
  // domains, is at least 1 at each of their points, checked point by point when there are few
  // (the bounds alone cannot show it: adaptive pooling's `ceil((o + 1) * n / m) - floor(o * n /
  // m)` is 1 or more only because its two terms move together).
  static bool NonEmptyAtEveryPoint(const Expr& extent, const std::vector<IterVar>& axes,
                                   const std::vector<int>& depth) {
    constexpr int64_t kMaxPoints = 4096;
    std::vector<std::pair<Var, std::pair<int64_t, int64_t>>> outer;  // var, [min, min + extent)
    int64_t points = 1;
    for (size_t j = 0; j < axes.size(); ++j) {
      if (!UsesVar(extent, axes[j]->var.get())) continue;
      auto min = AsConstInt(axes[j]->dom->min);
      auto ext = AsConstInt(axes[j]->dom->extent);
      if (depth[j] != 0 || !min || !ext || *ext < 1 || *ext > kMaxPoints / points) return false;
      points *= *ext;
      outer.push_back({axes[j]->var, {*min, *min + *ext}});
    }
    std::vector<int64_t> at(outer.size());
    for (size_t k = 0; k < outer.size(); ++k) at[k] = outer[k].second.first;
    for (int64_t p = 0; p < points; ++p) {
      VarMap values;
      for (size_t k = 0; k < outer.size(); ++k) {
        values[outer[k].first.get()] = MakeConst(outer[k].first->dtype, at[k]);
      }
      auto v = AsConstInt(arith::Analyzer().Simplify(Substitute(extent, values)));
      if (!v || *v < 1) return false;
      for (size_t k = 0; k < outer.size(); ++k) {  // the next point
        if (++at[k] < outer[k].second.second) break;
        at[k] = outer[k].second.first;
      }
    }
    return true;
  }

  // The combiner's results with lhs := current and rhs := sources. The combination and the
  // identity may read tensors and use the compute's axes (TVM's "loop-aware" reducers, e.g.
  // an identity `init[i]`): they are rewritten into block terms like the body.
  static std::vector<Expr> Combine(const CommReducer& combiner, BodyRewriter& rewrite,
                                   const std::vector<Expr>& current,
                                   const std::vector<Expr>& sources) {
    VarMap map;
    for (size_t i = 0; i < combiner->size(); ++i) {
      map[combiner->lhs[i].get()] = current[i];
      map[combiner->rhs[i].get()] = sources[i];
    }
    std::vector<Expr> out;
    for (const Expr& r : combiner->result) out.push_back(Substitute(rewrite.VisitExpr(r), map));
    return out;
  }

  // te.extern: one opaque block holding the body, over the function's buffers.
  void EmitExtern(const ExternOpNode* op) {
    PlaceholderSubstituter substitute;
    std::vector<BufferRegion> reads, writes;
    std::unordered_set<const BufferNode*> seen;
    for (size_t i = 0; i < op->inputs.size(); ++i) {
      const Buffer& actual = buffers_.at(KeyOf(op->inputs[i].get()));
      substitute.Map(op->input_placeholders[i], actual);
      if (seen.insert(actual.get()).second) reads.push_back(BufferRegionNode::FullRegion(actual));
    }
    for (size_t i = 0; i < op->output_placeholders.size(); ++i) {
      const Buffer& actual = buffers_.at({op, static_cast<int>(i)});
      substitute.Map(op->output_placeholders[i], actual);
      writes.push_back(BufferRegionNode::FullRegion(actual));
    }
    Stmt body = substitute.empty() ? op->body : substitute.VisitStmt(op->body);
    // As TVM's: an extern block that is the whole function (nothing else computed, nothing
    // allocated) is the root block, and a root block lists no regions.
    size_t computed = 0;
    for (const OperationNode* other : order_) computed += other->kind != OpKind::kPlaceholder;
    bool is_root = computed == 1;
    for (size_t i = 0; is_root && i < op->num_outputs(); ++i) {
      is_root = listed_keys_.count({op, static_cast<int>(i)}) > 0;
    }
    if (is_root) reads.clear(), writes.clear();
    builder_.BeginBlock(UniqueBlockName(op->name));
    builder_.SetBlockReads(reads);
    builder_.SetBlockWrites(writes);
    if (AttrMap attrs = BlockAttrs(op->attrs); !attrs.empty()) builder_.SetBlockAttrs(attrs);
    builder_.Emit(body);
    builder_.EndBlock();
  }

  // te.scan: the initial rows, then a serial loop over the remaining rows computing the scan
  // body (the operations reading a state) one row at a time.
  void EmitScan(const ScanOpNode* op) {
    for (size_t k = 0; k < op->init.size(); ++k) {
      const Tensor& init = op->init[k];
      const Buffer& out = buffers_.at({op, static_cast<int>(k)});
      // out[i, ...] = init[i, ...] over the initial rows.
      std::vector<Expr> shape = Shape(init->shape, init->name);
      std::vector<Var> loop_vars, iter_vars;
      for (size_t d = 0; d < shape.size(); ++d) {
        DataType t = shape[d]->dtype;
        loop_vars.push_back(VarNode::Make("i" + std::to_string(d), t));
        iter_vars.push_back(VarNode::Make("v_i" + std::to_string(d), t));
        builder_.BeginFor(loop_vars.back(), MakeConst(t, int64_t{0}), shape[d], ForKind::kSerial);
      }
      builder_.BeginBlock(UniqueBlockName(op->name + "_init"));
      std::vector<Expr> indices;
      for (size_t d = 0; d < shape.size(); ++d) {
        builder_.AddBlockIter(IterVarNode::Make(RangeNode::Make(MakeConst(shape[d]->dtype, int64_t{0}),
                                                                shape[d]),
                                                iter_vars[d], IterVarType::kDataPar),
                              loop_vars[d]);
        indices.push_back(iter_vars[d]);
        bound_.insert(iter_vars[d].get());
      }
      const Buffer& src = buffers_.at(KeyOf(init.get()));
      std::vector<Expr> out_indices = indices;
      for (size_t d = 0; d < out_indices.size(); ++d) {
        if (out_indices[d]->dtype != out->shape[d]->dtype) {
          out_indices[d] = ToIndexType(out_indices[d], out->shape[d]->dtype);
        }
      }
      builder_.Emit(BufferStoreNode::Make(out, BufferLoadNode::Make(src, indices), out_indices));
      builder_.EndBlock();
      for (size_t d = 0; d < shape.size(); ++d) builder_.EndFor();
      NoteUses(shape, op->name);
    }
    const IterVar& axis = op->scan_axis;
    Expr min = axis->dom->min, extent = axis->dom->extent;
    DataType t = index_dtype_ ? *index_dtype_ : axis->var->dtype;
    min = ToIndexType(min, t);
    extent = ToIndexType(extent, t);
    std::string row_name = op->name + "_idx";
    Var loop = VarNode::Make(row_name, t);
    NoteUses({min, extent}, op->name);
    builder_.BeginFor(loop, MakeConst(t, int64_t{0}), extent, ForKind::kSerial);
    Expr row = IsConstInt(min, 0) ? Expr(loop) : Expr(AddNode::Make(loop, min));
    Range dom = RangeNode::Make(min, extent);
    for (const OperationNode* body : scan_bodies_.at(op)) {
      auto* c = static_cast<const ComputeOpNode*>(body);
      auto it = scan_updates_.find(body);
      Buffer out = nullptr;
      if (it != scan_updates_.end()) out = buffers_.at(KeyOf(it->second.get()));
      EmitCompute(c, row, dom, out);
    }
    builder_.EndFor();
  }

  // Remembers the free variables of `exprs` (symbolic sizes) and where they were first used.
  // Variables that a T.Let inside the expression binds are not free.
  void NoteUses(const std::vector<Expr>& exprs, const std::string& where) {
    for (const Expr& e : exprs) {
      std::unordered_set<const VarNode*> let_bound;
      PostOrderVisit(e, [&](const ObjectRef& n) {
        if (auto* let = AsPtr<LetNode>(n)) let_bound.insert(let->var.get());
      });
      PostOrderVisit(e, [&](const ObjectRef& n) {
        auto* v = AsPtr<VarNode>(n);
        if (v && !v->pointer && !uses_.count(v) && !let_bound.count(v)) {
          uses_[v] = where;
          use_order_.push_back(v);
        }
      });
    }
  }

  // Block iterators are bound by their blocks; every other variable must be a parameter.
  void CheckFreeVars() {
    for (const VarNode* v : use_order_) {
      if (defined_.count(v) || bound_.count(v) || AsAxisVar(v)) continue;
      ValueError("variable '" + v->name + "' (used by '" + uses_[v] +
                 "') is not defined by the shape of any listed tensor; add it to the list to make "
                 "it a scalar parameter");
    }
  }

  const std::vector<PrimFuncArg>& args_;
  std::optional<DataType> index_dtype_;
  IRBuilder builder_;
  std::vector<Tensor> listed_;
  std::set<TensorKey> listed_keys_;
  std::unordered_set<const OperationNode*> listed_ops_, visited_;
  std::vector<const OperationNode*> order_;
  std::unordered_map<const ScanOpNode*, std::vector<const OperationNode*>> scan_bodies_;
  std::unordered_map<const OperationNode*, const ScanOpNode*> in_scan_;
  std::unordered_map<const OperationNode*, Tensor> scan_updates_;
  BufferTable buffers_;
  BufferTable extern_inputs_;  // tensor -> placeholder of the first te.extern reading it
  bool extern_inputs_indexed_ = false;
  std::unordered_set<std::string> block_names_;
  std::unordered_set<const VarNode*> defined_;
  std::unordered_map<const VarNode*, std::string> uses_;
  std::vector<const VarNode*> use_order_;
  std::unordered_set<const VarNode*> bound_;
  std::set<int> layout_free_params_;
  bool nested_ = false;  // a compute was emitted as nested blocks (EmitNestedCompute)
  // The outermost blocks of nests that store the identity themselves (not TVM's form).
  std::unordered_set<std::string> self_initialized_;
};

}  // namespace

PrimFunc CreatePrimFunc(const std::vector<PrimFuncArg>& args,
                        std::optional<DataType> index_dtype_override) {
  return PrimFuncCreator(args, index_dtype_override).Create();
}

}  // namespace te
}  // namespace tessera
