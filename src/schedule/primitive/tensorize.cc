// tensorize: replace the body of a block (or of the block blockize makes of a loop) by the
// implementation of a tensor intrinsic whose description the block matches; and the registry of
// tensor intrinsics.
#include <algorithm>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>

#include "../utils.h"
#include "tessera/ir/op.h"
#include "tessera/schedule/primitive.h"
#include "tessera/schedule/tensor_intrin.h"

namespace tessera {
namespace schedule {

// ---------------------------------------------------------------------------------------------
// The registry
// ---------------------------------------------------------------------------------------------

namespace {
struct Registry {
  std::mutex mu;
  std::map<std::string, TensorIntrin> intrins;
  static Registry& Global() {
    static Registry* r = new Registry();
    return *r;
  }
};
}  // namespace

TensorIntrin TensorIntrinNode::Make(PrimFunc desc, PrimFunc impl) {
  if (!desc || !impl) throw Error("A tensor intrinsic needs a description and an implementation",
                                  Span(), ErrorKind::kValue);
  if (desc->params.size() != impl->params.size()) {
    throw Error(
        "the description and the implementation of a tensor intrinsic take different numbers "
        "of parameters",
        Span(), ErrorKind::kValue);
  }
  for (size_t i = 0; i < desc->params.size(); ++i) {
    if (!desc->params[i]->dtype.is_handle()) {
      throw Error("every parameter of a tensor intrinsic's description must be a handle", Span(),
                  ErrorKind::kValue);
    }
    if (!impl->params[i]->dtype.is_handle()) {
      throw Error("every parameter of a tensor intrinsic's implementation must be a handle", Span(),
                  ErrorKind::kValue);
    }
    if (!desc->GetBuffer(desc->params[i]) || !impl->GetBuffer(impl->params[i])) {
      throw Error("Every parameter of a tensor intrinsic must be bound to a buffer "
                  "(T.match_buffer)",
                  Span(), ErrorKind::kValue);
    }
  }
  for (const PrimFunc& f : {desc, impl}) {
    if (!AsPtr<BlockRealizeNode>(f->body)) {
      throw Error(std::string("The ") + (f == desc ? "description" : "implementation") +
                      " of a tensor intrinsic must have one block (T.block(\"root\")) as its body",
                  Span(), ErrorKind::kValue);
    }
  }
  auto n = std::make_shared<TensorIntrinNode>();
  n->desc = std::move(desc);
  n->impl = std::move(impl);
  return n;
}

void RegisterTensorIntrin(const std::string& name, TensorIntrin intrin, bool override) {
  Registry& reg = Registry::Global();
  std::lock_guard<std::mutex> lock(reg.mu);
  if (!override && reg.intrins.count(name)) {
    throw Error("TensorIntrin '" + name + "' has already been registered", Span(),
                ErrorKind::kValue);
  }
  reg.intrins[name] = std::move(intrin);
}

TensorIntrin GetTensorIntrin(const std::string& name, bool allow_missing) {
  Registry& reg = Registry::Global();
  std::lock_guard<std::mutex> lock(reg.mu);
  auto it = reg.intrins.find(name);
  if (it == reg.intrins.end()) {
    if (TensorIntrin made = MicroKernelIntrinFromName(name)) {
      reg.intrins[name] = made;
      return made;
    }
    if (allow_missing) return nullptr;
    throw Error("TensorIntrin '" + name + "' is not registered", Span(), ErrorKind::kValue);
  }
  return it->second;
}

std::vector<std::string> ListTensorIntrins() {
  Registry& reg = Registry::Global();
  std::lock_guard<std::mutex> lock(reg.mu);
  std::vector<std::string> names;
  for (const auto& [name, intrin] : reg.intrins) names.push_back(name);
  return names;
}

namespace {

// ---------------------------------------------------------------------------------------------
// A copy of the implementation with its own variables and buffers (each use of an intrinsic
// defines its match buffers anew). With an index type (int64, for a workload indexed in int64),
// the copy's indices widen to it, as TVM's tensorize normalizes the implementation: integer
// variables of 32 bits become int64, so do the constants of buffer shapes, indices, regions,
// loop ranges and block bindings; an operation over an int64 and an int32 operand widens the
// int32 one; an integer cast to 32 bits is dropped.
// ---------------------------------------------------------------------------------------------

class Renewer : public BufferRemapMutator<> {
 public:
  using BufferRemapMutator<>::VisitExpr_;
  using BufferRemapMutator<>::VisitStmt_;

  explicit Renewer(std::optional<DataType> index_type = std::nullopt) : index_type_(index_type) {}

  Var Renew(const Var& v) {
    auto it = vars_.find(v.get());
    if (it != vars_.end()) return As<VarNode>(it->second);
    DataType t = !v->pointer && Widens(v->dtype) ? *index_type_ : v->dtype;
    Var n;
    if (v->kind == NodeKind::kSizeVar) {
      n = SizeVarNode::Make(v->name, t, v->span);
    } else if (v->pointer) {
      n = VarNode::MakePointer(v->name, v->pointer->element, v->pointer->scope, v->span);
    } else {
      n = VarNode::Make(v->name, t, v->span);
    }
    vars_[v.get()] = n;
    return n;
  }

  Buffer RenewBuffer(const Buffer& b) {
    auto it = buffers_.find(b.get());
    if (it != buffers_.end()) return it->second;
    std::vector<Expr> shape, strides;
    for (const Expr& e : b->shape) shape.push_back(Index(e));
    for (const Expr& e : b->strides) strides.push_back(Index(e));
    Expr offset = b->elem_offset ? Index(b->elem_offset) : nullptr;
    Buffer n = BufferNode::Make(Renew(b->data), b->dtype, shape, strides, offset, b->name,
                                b->data_alignment, b->offset_factor, b->span);
    buffers_[b.get()] = n;
    return n;
  }

  BufferRegion RenewRegion(const BufferRegion& r) {
    std::vector<Range> region;
    for (const Range& rg : r->region)
      region.push_back(RangeNode::Make(Index(rg->min), Index(rg->extent), rg->span));
    return BufferRegionNode::Make(RenewBuffer(r->buffer), region, r->span);
  }

  Expr VisitExpr(const Expr& e) override {
    if (!index_type_ || !e) return BufferRemapMutator<>::VisitExpr(e);
    if (BinaryNode::CoversKind(e->kind)) {
      auto* bin = static_cast<const BinaryNode*>(e.get());
      Expr a = VisitExpr(bin->a), b = VisitExpr(bin->b);
      if (a->dtype != b->dtype && a->dtype.is_int() && b->dtype.is_int() &&
          a->dtype.lanes() == b->dtype.lanes()) {
        DataType wide = a->dtype.bits() > b->dtype.bits() ? a->dtype : b->dtype;
        a = CastTo(wide, a);
        b = CastTo(wide, b);
      }
      if (a == bin->a && b == bin->b) return e;
      return MakeBinary(e->kind, a, b, e->span);
    }
    if (auto* cast = AsPtr<CastNode>(e); cast && Widens(cast->dtype)) {
      Expr value = VisitExpr(cast->value);
      return value->dtype == *index_type_ ? value : CastTo(*index_type_, value);
    }
    return BufferRemapMutator<>::VisitExpr(e);
  }

  Expr VisitExpr_(const VarNode* op) override { return Renew(GetRef(op)); }
  Expr VisitExpr_(const SizeVarNode* op) override { return Renew(GetRef<VarNode>(static_cast<const VarNode*>(op))); }
  Expr VisitExpr_(const LetNode* op) override {
    Var v = Renew(op->var);
    return LetNode::Make(v, VisitExpr(op->value), VisitExpr(op->body), op->span);
  }
  Stmt VisitStmt_(const LetStmtNode* op) override {
    Var v = Renew(op->var);
    Expr value = VisitExpr(op->value);
    if (value->dtype != v->dtype && Widens(value->dtype)) value = CastTo(v->dtype, value);
    return LetStmtNode::Make(v, value, VisitStmt(op->body), op->span);
  }
  Expr VisitExpr_(const BufferLoadNode* op) override {
    Expr e = BufferRemapMutator<>::VisitExpr_(op);
    if (!index_type_) return e;
    auto* load = AsPtr<BufferLoadNode>(e);
    return BufferLoadNode::Make(load->buffer, Indices(load->indices), load->predicate, load->span);
  }
  Stmt VisitStmt_(const BufferStoreNode* op) override {
    Stmt s = BufferRemapMutator<>::VisitStmt_(op);
    if (!index_type_) return s;
    auto* store = AsPtr<BufferStoreNode>(s);
    return BufferStoreNode::Make(store->buffer, store->value, Indices(store->indices),
                                 store->predicate, store->span);
  }
  Stmt VisitStmt_(const BlockRealizeNode* op) override {
    if (!index_type_) return BufferRemapMutator<>::VisitStmt_(op);
    std::vector<Expr> values;
    for (const Expr& v : op->iter_values) values.push_back(Index(v));
    Stmt block = VisitStmt(op->block);
    return BlockRealizeNode::Make(values, VisitExpr(op->predicate), As<BlockNode>(block),
                                  op->span);
  }
  Stmt VisitStmt_(const ForNode* op) override {
    Var v = Renew(op->loop_var);
    IterVar binding = op->thread_binding;
    if (binding) {
      binding = IterVarNode::Make(binding->dom, Renew(binding->var), binding->iter_type,
                                  binding->thread_tag, binding->span);
    }
    return ForNode::Make(v, Index(op->min), Index(op->extent), op->for_kind,
                         VisitStmt(op->body), binding, op->annotations, op->span);
  }
  Stmt VisitStmt_(const BlockNode* op) override {
    std::vector<IterVar> iters;
    for (const IterVar& iv : op->iter_vars) {
      Range dom = iv->dom ? RangeNode::Make(Index(iv->dom->min), Index(iv->dom->extent))
                          : nullptr;
      iters.push_back(IterVarNode::Make(dom, Renew(iv->var), iv->iter_type, iv->thread_tag,
                                        iv->span));
    }
    std::vector<BufferRegion> reads, writes;
    for (const BufferRegion& r : op->reads) reads.push_back(RenewRegion(r));
    for (const BufferRegion& r : op->writes) writes.push_back(RenewRegion(r));
    std::vector<Buffer> allocs;
    for (const Buffer& b : op->alloc_buffers) allocs.push_back(RenewBuffer(b));
    std::vector<MatchBufferRegion> matches;
    for (const MatchBufferRegion& m : op->match_buffers) {
      BufferRegion source = RenewRegion(m->source);
      matches.push_back(MatchBufferRegionNode::Make(RenewBuffer(m->buffer), source, m->span));
    }
    Stmt init = op->init ? VisitStmt(op->init) : nullptr;
    return BlockNode::Make(iters, reads, writes, op->name_hint, VisitStmt(op->body), init, allocs,
                           matches, op->annotations, op->span);
  }

  PrimFunc Run(const PrimFunc& f) {
    std::vector<Var> params;
    std::vector<std::pair<Var, Buffer>> bmap;
    for (const Var& p : f->params) params.push_back(Renew(p));
    for (const auto& [p, b] : f->buffer_map) bmap.emplace_back(Renew(p), RenewBuffer(b));
    return PrimFuncNode::Make(params, bmap, VisitStmt(f->body), f->ret_type, f->attrs, f->span);
  }

 protected:
  // Every load and store reads its buffer anew (BufferRemapMutator).
  Buffer RemapBuffer(const Buffer& b) override { return RenewBuffer(b); }

 private:
  // A scalar integer type of 32 bits or more that is not the index type (which it widens to).
  bool Widens(DataType t) const {
    return index_type_ && t.is_int() && t.lanes() == 1 && t.bits() >= 32 && t != *index_type_;
  }
  // An expression in an index position: visited, then widened to the index type.
  Expr Index(const Expr& e) {
    Expr v = VisitExpr(e);
    return v && Widens(v->dtype) ? CastTo(*index_type_, v) : v;
  }
  std::vector<Expr> Indices(const std::vector<Expr>& indices) {
    std::vector<Expr> out;
    for (const Expr& e : indices) out.push_back(Widens(e->dtype) ? CastTo(*index_type_, e) : e);
    return out;
  }
  static Expr MakeBinary(NodeKind kind, const Expr& a, const Expr& b, const Span& span) {
    switch (kind) {
#define TESSERA_RENEW_BINARY(name) \
  case NodeKind::k##name:          \
    return name##Node::Make(a, b, span);
      TESSERA_BINARY_NODES(TESSERA_RENEW_BINARY)
#undef TESSERA_RENEW_BINARY
      default:
        TESSERA_ICHECK(false) << "not a binary node";
        return nullptr;
    }
  }

  std::optional<DataType> index_type_;
  std::unordered_map<const VarNode*, Expr> vars_;
  std::unordered_map<const BufferNode*, Buffer> buffers_;
};

// ---------------------------------------------------------------------------------------------
// Matching the block against the description (as TVM's TensorizeComparator): the workload (lhs)
// and the description (rhs) must have the same structure; the description's variables and
// buffers are mapped to the workload's on first sight; buffer accesses are compared relative to
// the base indices of the regions the outer block accesses.
// ---------------------------------------------------------------------------------------------

/*! \brief A statement as TVMScript (a bare block printed as realized at its iterators). */
std::string StmtText(const Stmt& s) {
  if (auto* b = AsPtr<BlockNode>(s)) {
    std::vector<Expr> values;
    for (const IterVar& iv : b->iter_vars) values.push_back(iv->var);
    return AsScript(BlockRealizeNode::Make(values, Bool(true), GetRef(b)));
  }
  return AsScript(s);
}

class TensorizeMatcher {
 public:
  /*! \brief Description buffer -> workload buffer. */
  std::unordered_map<const BufferNode*, Buffer> rhs_buffer_map;
  /*! \brief Workload buffer -> the base indices of its region in the matched block. */
  std::unordered_map<const BufferNode*, std::vector<Expr>> buffer_indices;

  void Match(const Stmt& lhs, const Stmt& rhs) { VisitStmt(lhs, rhs); }

 private:
  bool VisitStmt(const Stmt& lhs, const Stmt& rhs) {
    bool equal = lhs == rhs || (lhs->kind == rhs->kind && VisitStmtInner(lhs, rhs));
    if (!equal && (lhs->kind == NodeKind::kFor || lhs->kind == NodeKind::kBlock)) {
      std::string detail = "{0} cannot be replaced by the tensor intrinsic: the workload\n" +
                           StmtText(lhs) + "\ndiffers from the intrinsic's description\n" +
                           StmtText(rhs) + "\n";
      for (const std::string& e : errors_) detail += e + "\n";
      Fail("the statement differs from the tensor intrinsic's description", detail, {lhs});
    }
    return equal;
  }

  bool VisitStmtInner(const Stmt& lhs_stmt, const Stmt& rhs_stmt) {
    switch (lhs_stmt->kind) {
      case NodeKind::kFor: {
        auto* op = AsPtr<ForNode>(lhs_stmt);
        auto* rhs = AsPtr<ForNode>(rhs_stmt);
        if (!DefEqual(op->loop_var, rhs->loop_var)) {
          return Error("loop variables differ: " + op->loop_var->name + " in the workload, " +
                       rhs->loop_var->name + " in the description");
        }
        if (!VisitExpr(op->min, rhs->min)) {
          return Error("loop starts differ: " + AsScript(op->min) + " in the workload, " +
                       AsScript(rhs->min) + " in the description");
        }
        if (!VisitExpr(op->extent, rhs->extent)) {
          return Error("loop extents differ: " + AsScript(op->extent) + " in the workload, " +
                       AsScript(rhs->extent) + " in the description");
        }
        if (static_cast<bool>(op->thread_binding) != static_cast<bool>(rhs->thread_binding)) {
          return Error("loop thread bindings differ");
        }
        if (op->thread_binding && op->thread_binding->thread_tag != rhs->thread_binding->thread_tag)
          return Error("loop thread bindings differ");
        if (op->for_kind != rhs->for_kind) {
          return Error(std::string("loop kinds differ: ") + ForKindName(op->for_kind) +
                       " in the workload, " + ForKindName(rhs->for_kind) + " in the description");
        }
        if (!CompareAnnotations(op->annotations, rhs->annotations)) {
          return Error("loop annotations differ");
        }
        return VisitStmt(op->body, rhs->body);
      }
      case NodeKind::kSeqStmt: {
        auto* op = AsPtr<SeqStmtNode>(lhs_stmt);
        auto* rhs = AsPtr<SeqStmtNode>(rhs_stmt);
        if (op->seq.size() != rhs->seq.size()) return SizeError(op->seq.size(), rhs->seq.size());
        for (size_t i = 0; i < op->seq.size(); ++i) {
          if (!VisitStmt(op->seq[i], rhs->seq[i])) return false;
        }
        return true;
      }
      case NodeKind::kBufferStore: {
        auto* op = AsPtr<BufferStoreNode>(lhs_stmt);
        auto* rhs = AsPtr<BufferStoreNode>(rhs_stmt);
        return CompareBufferAccess(op->buffer, op->indices, rhs->buffer, rhs->indices) &&
               VisitExpr(op->value, rhs->value);
      }
      case NodeKind::kBlockRealize: {
        auto* op = AsPtr<BlockRealizeNode>(lhs_stmt);
        auto* rhs = AsPtr<BlockRealizeNode>(rhs_stmt);
        if (!is_scope_block_) {
          if (!CompareExprs(op->iter_values, rhs->iter_values)) {
            return Error("block bindings differ: " + ExprsText(op->iter_values) +
                         " in the workload, " + ExprsText(rhs->iter_values) +
                         " in the description");
          }
        }
        return VisitExpr(op->predicate, rhs->predicate) && VisitStmt(op->block, rhs->block);
      }
      case NodeKind::kBlock: {
        auto* op = AsPtr<BlockNode>(lhs_stmt);
        auto* rhs = AsPtr<BlockNode>(rhs_stmt);
        for (const IterVar& iv : op->iter_vars) lhs_analyzer_.Bind(iv->var, iv->dom);
        // The workload's indices are compared in the description's variables: their domains
        // decide `(vj_o * 16 + vj) % 16 == vj`.
        for (const IterVar& iv : rhs->iter_vars) {
          if (iv->dom) analyzer_.Bind(iv->var, iv->dom);
        }
        if (!is_scope_block_) {
          bool same = op->iter_vars.size() == rhs->iter_vars.size();
          for (size_t i = 0; same && i < op->iter_vars.size(); ++i) {
            same = DefEqual(op->iter_vars[i]->var, rhs->iter_vars[i]->var) &&
                   op->iter_vars[i]->iter_type == rhs->iter_vars[i]->iter_type;
          }
          if (!same) return Error("block iterators differ");
          same = op->alloc_buffers.size() == rhs->alloc_buffers.size();
          for (size_t i = 0; same && i < op->alloc_buffers.size(); ++i)
            same = CompareBuffer(op->alloc_buffers[i], rhs->alloc_buffers[i]);
          if (!same) return Error("block allocations differ");
        }
        if (!CompareRegions(op->writes, rhs->writes)) {
          return Error("block writes differ: " + RegionsText(op->writes) + " in the workload, " +
                       RegionsText(rhs->writes) + " in the description");
        }
        if (!CompareRegions(op->reads, rhs->reads)) {
          return Error("block reads differ: " + RegionsText(op->reads) + " in the workload, " +
                       RegionsText(rhs->reads) + " in the description");
        }
        is_scope_block_ = false;
        return VisitStmt(op->body, rhs->body);
      }
      default:
        return false;
    }
  }

  bool VisitExpr(const Expr& lhs, const Expr& rhs) {
    size_t n_errors = errors_.size();
    bool equal = lhs == rhs || (lhs->kind == rhs->kind && lhs->dtype.code() == rhs->dtype.code() &&
                                VisitExprInner(lhs, rhs));
    // Index arithmetic written differently but equal over the iterators' domains
    // (`(v_o * 8 + v) % 8 * 4` against the description's `v % 8 * 4`, v < 8), as TVM's blockize
    // and description simplification make them the same expression.
    if (!equal && IsIndexArith(lhs) && IsIndexArith(rhs) && ProveEqual(analyzer_, lhs, rhs)) {
      errors_.resize(n_errors);
      equal = true;
    }
    if (!equal)
      Error("expressions differ: " + AsScript(lhs) + " in the workload, " + AsScript(rhs) +
            " in the description");
    return equal;
  }

  /*! \brief A scalar integer expression of variables, constants and arithmetic only. */
  static bool IsIndexArith(const Expr& e) {
    if (!e->dtype.is_int() || e->dtype.is_vector()) return false;
    bool ok = true;
    PostOrderVisit(e, [&](const ObjectRef& n) {
      if (AsPtr<BufferLoadNode>(n) || AsPtr<CallNode>(n) || AsPtr<LetNode>(n) ||
          AsPtr<FloatImmNode>(n))
        ok = false;
    });
    return ok;
  }

  bool VisitExprInner(const Expr& lhs, const Expr& rhs) {
    if (auto* a = AsPtr<BinaryNode>(lhs)) {
      auto* b = AsPtr<BinaryNode>(rhs);
      return VisitExpr(a->a, b->a) && VisitExpr(a->b, b->b);
    }
    switch (lhs->kind) {
      case NodeKind::kIntImm:
        if (AsPtr<IntImmNode>(lhs)->value != AsPtr<IntImmNode>(rhs)->value) {
          return Error("integer constants differ: " + AsScript(lhs) + " in the workload, " +
                       AsScript(rhs) + " in the description");
        }
        return true;
      case NodeKind::kFloatImm:
        if (AsPtr<FloatImmNode>(lhs)->value != AsPtr<FloatImmNode>(rhs)->value) {
          return Error("float constants differ: " + AsScript(lhs) + " in the workload, " +
                       AsScript(rhs) + " in the description");
        }
        return true;
      case NodeKind::kStringImm:
        return AsPtr<StringImmNode>(lhs)->value == AsPtr<StringImmNode>(rhs)->value;
      case NodeKind::kCast:
        return VisitExpr(AsPtr<CastNode>(lhs)->value, AsPtr<CastNode>(rhs)->value);
      case NodeKind::kVar:
      case NodeKind::kSizeVar: {
        auto it = equal_map_.find(static_cast<const VarNode*>(lhs.get()));
        return it != equal_map_.end() && it->second == rhs;
      }
      case NodeKind::kBufferLoad: {
        auto* a = AsPtr<BufferLoadNode>(lhs);
        auto* b = AsPtr<BufferLoadNode>(rhs);
        return CompareBufferAccess(a->buffer, a->indices, b->buffer, b->indices);
      }
      case NodeKind::kSelect: {
        auto* a = AsPtr<SelectNode>(lhs);
        auto* b = AsPtr<SelectNode>(rhs);
        return VisitExpr(a->condition, b->condition) && VisitExpr(a->true_value, b->true_value) &&
               VisitExpr(a->false_value, b->false_value);
      }
      case NodeKind::kNot:
        return VisitExpr(AsPtr<NotNode>(lhs)->a, AsPtr<NotNode>(rhs)->a);
      case NodeKind::kCall: {
        auto* a = AsPtr<CallNode>(lhs);
        auto* b = AsPtr<CallNode>(rhs);
        if (a->op != b->op && a->op_name() != b->op_name()) return false;
        if (!CompareExprs(a->args, b->args)) {
          return Error("call arguments differ: " + ExprsText(a->args) + " in the workload, " +
                       ExprsText(b->args) + " in the description");
        }
        return true;
      }
      default:
        return false;
    }
  }

  bool CompareExprs(const std::vector<Expr>& lhs, const std::vector<Expr>& rhs) {
    if (lhs.size() != rhs.size()) return SizeError(lhs.size(), rhs.size());
    for (size_t i = 0; i < lhs.size(); ++i) {
      if (!VisitExpr(lhs[i], rhs[i])) return false;
    }
    return true;
  }

  bool CompareAnnotations(const AttrMap& lhs, const AttrMap& rhs) {
    if (lhs.size() != rhs.size()) return false;
    for (auto a = lhs.begin(), b = rhs.begin(); a != lhs.end(); ++a, ++b) {
      if (a->first != b->first) return false;
      auto* ea = a->second && IsExprKind(a->second->kind) ? static_cast<const ExprNode*>(a->second.get()) : nullptr;
      auto* eb = b->second && IsExprKind(b->second->kind) ? static_cast<const ExprNode*>(b->second.get()) : nullptr;
      if (ea && eb) {
        if (!VisitExpr(GetRef(ea), GetRef(eb))) return false;
      } else if (!StructuralEqual(a->second, b->second)) {
        return false;
      }
    }
    return true;
  }

  bool DefEqual(const Var& lhs, const Var& rhs) {
    if (lhs == rhs) return true;
    auto it = equal_map_.find(lhs.get());
    if (it != equal_map_.end()) return it->second == rhs;
    equal_map_[lhs.get()] = rhs;
    if (lhs->dtype.is_integer() && rhs->dtype.is_integer() && lhs->dtype.is_scalar()) {
      to_rhs_[lhs.get()] = CastTo(lhs->dtype, rhs);
    }
    return true;
  }

  bool CompareBuffer(const Buffer& lhs, const Buffer& rhs) {
    if (lhs == rhs) return true;
    auto it = rhs_buffer_map.find(rhs.get());
    if (it != rhs_buffer_map.end()) return it->second == lhs;
    bool equal = DefEqual(lhs->data, rhs->data) && lhs->dtype == rhs->dtype &&
                 lhs->scope() == rhs->scope();
    if (equal) {
      rhs_buffer_map[rhs.get()] = lhs;
    } else {
      Error("buffers differ (workload / description): data " + lhs->data->name + " / " +
            rhs->data->name + ", dtype " + lhs->dtype.ToString() + " / " + rhs->dtype.ToString() +
            ", scope " + lhs->scope() + " / " + rhs->scope());
    }
    return equal;
  }

  bool CompareRegions(const std::vector<BufferRegion>& lhs, const std::vector<BufferRegion>& rhs) {
    if (lhs.size() != rhs.size()) return SizeError(lhs.size(), rhs.size());
    for (size_t i = 0; i < lhs.size(); ++i) {
      if (!CompareBufferRegion(lhs[i], rhs[i])) return false;
    }
    return true;
  }

  /*! \brief Whether `a` equals `b`; with `analyzer_`, the workload's variables in `a` are
   *  first replaced by the description's they were matched to. */
  bool ProveEqual(arith::Analyzer& ana, const Expr& a_in, const Expr& b) {
    Expr a = &ana == &analyzer_ ? Substitute(a_in, to_rhs_) : a_in;
    DataType t = a->dtype.bits() >= b->dtype.bits() ? a->dtype : b->dtype;
    return ana.CanProveEqual(CastTo(t, a), CastTo(t, b));
  }

  Expr Minus(const Expr& a, const Expr& b) {
    DataType t = a->dtype.bits() >= b->dtype.bits() ? a->dtype : b->dtype;
    return SubE(CastTo(t, a), CastTo(t, b));
  }

  bool CompareBufferRegion(const BufferRegion& lhs, const BufferRegion& rhs) {
    if (!CompareBuffer(lhs->buffer, rhs->buffer)) {
      return Error("regions of different buffers: " + lhs->buffer->name + " in the workload, " +
                   rhs->buffer->name + " in the description");
    }
    int offset = static_cast<int>(lhs->region.size()) - static_cast<int>(rhs->region.size());
    if (offset < 0) {
      return Error("the region of " + lhs->buffer->name + " has " +
                   std::to_string(lhs->region.size()) +
                   " dimensions in the workload, fewer than the " +
                   std::to_string(rhs->region.size()) + " of the description");
    }
    auto it = buffer_indices.find(lhs->buffer.get());
    if (it == buffer_indices.end()) {
      if (!is_scope_block_) {
        return Error("The buffer " + lhs->buffer->name +
                     " is accessed in the block but not in the regions of the tensorized block");
      }
      std::vector<Expr> base;
      for (int i = 0; i < offset; ++i) {
        if (!IsConstInt(lhs->region[i]->extent, 1)) {
          return Error(
              "the leading dimensions the description lacks must each cover one element, but "
              "the workload's region has extent " +
              AsScript(lhs->region[i]->extent));
        }
        base.push_back(lhs->region[i]->min);
      }
      for (size_t i = 0; i < rhs->region.size(); ++i) {
        base.push_back(lhs->region[i + offset]->min);
        if (!ProveEqual(analyzer_, lhs->region[i + offset]->extent, rhs->region[i]->extent)) {
          return Error("region extents differ: " + AsScript(lhs->region[i + offset]->extent) +
                       " in the workload, " + AsScript(rhs->region[i]->extent) +
                       " in the description");
        }
      }
      buffer_indices.emplace(lhs->buffer.get(), std::move(base));
      return true;
    }
    const std::vector<Expr>& base = it->second;
    for (int i = 0; i < offset; ++i) {
      if (!IsConstInt(lhs->region[i]->extent, 1)) {
        return Error(
            "the leading dimensions the description lacks must each cover one element, but "
            "the workload's region has extent " +
            AsScript(lhs->region[i]->extent));
      }
      if (!ProveEqual(lhs_analyzer_, base[i], lhs->region[i]->min)) {
        return Error("the workload accesses " + lhs->buffer->name +
                     " from two different origins: " + AsScript(base[i]) + " and " +
                     AsScript(lhs->region[i]->min));
      }
    }
    for (size_t i = 0; i < rhs->region.size(); ++i) {
      if (!ProveEqual(analyzer_, lhs->region[i + offset]->extent, rhs->region[i]->extent)) {
        return Error("region extents differ: " + AsScript(lhs->region[i + offset]->extent) +
                     " in the workload, " + AsScript(rhs->region[i]->extent) +
                     " in the description");
      }
      Expr normalized =
          lhs_analyzer_.Simplify(Minus(lhs->region[i + offset]->min, base[i + offset]));
      if (!ProveEqual(analyzer_, normalized, rhs->region[i]->min)) {
        return Error("region starts differ: " + AsScript(lhs->region[i + offset]->min) + " (" +
                     AsScript(normalized) + " from the block's origin) in the workload, " +
                     AsScript(rhs->region[i]->min) + " in the description");
      }
    }
    return true;
  }

  bool CompareBufferAccess(const Buffer& lhs_buffer, const std::vector<Expr>& lhs_indices,
                           const Buffer& rhs_buffer, const std::vector<Expr>& rhs_indices) {
    if (!CompareBuffer(lhs_buffer, rhs_buffer)) return false;
    int offset = static_cast<int>(lhs_indices.size()) - static_cast<int>(rhs_indices.size());
    if (offset < 0) {
      return Error("the workload indexes " + lhs_buffer->name + " with " +
                   std::to_string(lhs_indices.size()) + " indices, fewer than the " +
                   std::to_string(rhs_indices.size()) + " of the description");
    }
    auto it = buffer_indices.find(lhs_buffer.get());
    if (it == buffer_indices.end() || it->second.size() != rhs_indices.size() + offset) {
      return Error("The buffer " + lhs_buffer->name +
                   " is accessed but not in the regions the block declares");
    }
    const std::vector<Expr>& base = it->second;
    for (size_t i = 0; i < rhs_indices.size(); ++i) {
      Expr normalized = Minus(lhs_indices[i + offset], base[i + offset]);
      if (!ProveEqual(analyzer_, normalized, rhs_indices[i])) {
        return Error("buffer indices differ: " + AsScript(lhs_indices[i + offset]) +
                     " in the workload, " + AsScript(rhs_indices[i]) + " in the description");
      }
    }
    return true;
  }

  bool Error(const std::string& message) {
    errors_.push_back(message);
    return false;
  }
  bool SizeError(size_t a, size_t b) {
    return Error("list lengths differ: " + std::to_string(a) + " in the workload, " +
                 std::to_string(b) + " in the description");
  }
  static std::string ExprsText(const std::vector<Expr>& v) {
    std::string out = "[";
    for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + AsScript(v[i]);
    return out + "]";
  }
  static std::string RegionsText(const std::vector<BufferRegion>& v) {
    std::string out = "[";
    for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + AsScript(v[i]);
    return out + "]";
  }

  arith::Analyzer analyzer_;
  arith::Analyzer lhs_analyzer_;
  std::unordered_map<const VarNode*, Var> equal_map_;
  VarMap to_rhs_;
  bool is_scope_block_ = true;
  std::vector<std::string> errors_;
};

}  // namespace

void Tensorize(ScheduleState& state, const StmtSRef& sref, const TensorIntrin& intrin,
               bool preserve_unit_iters) {
  TESSERA_ICHECK(intrin) << "tensorize: no tensor intrinsic";
  // Step 1: the block to tensorize; a loop is blockized first.
  BlockRealize realize;
  const BlockNode* old_block = nullptr;
  if (sref->block()) {
    old_block = sref->block();
    realize = GetBlockRealize(state, sref.get());
  } else if (sref->loop()) {
    realize = As<BlockRealizeNode>(BlockizeImpl(state, sref, preserve_unit_iters).realize);
  } else {
    Fail("tensorize applies to a loop or a block only");
  }
  // Step 2: match the description.
  const PrimFunc& desc = intrin->desc;
  // As TVM: the implementation takes the widest index type of the block's regions (int64 when
  // the workload is indexed in int64; an int32 workload keeps the implementation as written).
  int index_bits = 0;
  for (const auto* regions : {&realize->block->reads, &realize->block->writes}) {
    for (const BufferRegion& r : *regions) {
      for (const Range& rg : r->region) index_bits = std::max(index_bits, rg->min->dtype.bits());
    }
  }
  std::optional<DataType> index_type;
  if (index_bits == 64) index_type = DataType::Int(64);
  PrimFunc impl = Renewer(index_type).Run(intrin->impl);
  TensorizeMatcher matcher;
  matcher.Match(realize, desc->body);
  // Step 3: the match buffers binding the implementation's parameters to the workload.
  const BlockNode* impl_block = AsPtr<BlockRealizeNode>(impl->body)->block.get();
  std::unordered_map<const BufferNode*, std::vector<Range>> impl_region;
  for (const BufferRegion& r : impl_block->reads) impl_region.emplace(r->buffer.get(), r->region);
  for (const BufferRegion& r : impl_block->writes) impl_region.emplace(r->buffer.get(), r->region);
  std::vector<MatchBufferRegion> matches;
  for (size_t i = 0; i < impl->params.size(); ++i) {
    Buffer desc_buffer = desc->GetBuffer(desc->params[i]);
    Buffer impl_buffer = impl->GetBuffer(impl->params[i]);
    auto cur_it = matcher.rhs_buffer_map.find(desc_buffer.get());
    if (cur_it == matcher.rhs_buffer_map.end()) {
      Fail("The description of the tensor intrinsic does not access its parameter " +
           desc_buffer->name);
    }
    const Buffer& cur = cur_it->second;
    auto region_it = impl_region.find(impl_buffer.get());
    if (region_it == impl_region.end()) {
      Fail("The implementation of the tensor intrinsic does not declare the region it accesses "
           "of its parameter " + impl_buffer->name);
    }
    const std::vector<Range>& old_region = region_it->second;
    const std::vector<Expr>& base = matcher.buffer_indices.at(cur.get());
    int offset = static_cast<int>(base.size()) - static_cast<int>(old_region.size());
    if (offset < 0) {
      Fail("The implementation of the tensor intrinsic accesses " + impl_buffer->name +
           " with more dimensions than the workload's buffer " + cur->name);
    }
    std::vector<Range> region;
    for (int d = 0; d < offset; ++d)
      region.push_back(RangeNode::Make(base[d], IntConst(base[d]->dtype, 1)));
    for (size_t d = 0; d < old_region.size(); ++d) {
      const Expr& min = base[d + offset];
      region.push_back(RangeNode::Make(min, CastTo(min->dtype, old_region[d]->extent)));
    }
    matches.push_back(
        MatchBufferRegionNode::Make(impl_buffer, BufferRegionNode::Make(cur, region)));
  }
  // Step 4: the block runs the implementation.
  Block block = CopyBlock(realize->block.get());
  block->body = impl_block->body;
  block->match_buffers = std::move(matches);
  for (const auto& [key, value] : impl_block->annotations) {
    if (!block->annotations.count(key)) block->annotations[key] = value;
  }
  if (old_block) {
    state.Replace(sref.get(), old_block, block, {{old_block, block}});
  } else {
    Stmt new_realize = BlockRealizeNode::Make(realize->iter_values, realize->predicate, block,
                                              realize->span);
    state.Replace(sref.get(), sref->stmt.get(), new_realize);
  }
}

}  // namespace schedule
}  // namespace tessera
