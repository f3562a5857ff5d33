// tir.PointerValueTypeRewrite: a buffer variable whose every access is an aligned vector of N
// lanes of its element type (`A[i*4 : i*4+4]`) becomes a pointer to N-lane elements, for
// runtimes that cannot reinterpret a scalar pointer as a vector one:
//  - the variable (a parameter, buffer-map entry, allocation, constant or let) gets the vector
//    element type; the last extent of its allocation and buffers is divided by N;
//  - a vector access `Ramp(b, 1, N)` becomes `b / N`; a scalar read at `k` (where reads are
//    scalar, their index's known residue modulo N selecting the lane) becomes
//    `T.Shuffle([A[k / N]], [k % N])`;
//  - T.tvm_access_ptr offsets and extents are divided by N.
// A buffer keeps its type when its accesses disagree on the element type or on the lanes, when
// a scalar read's stride is not a multiple of N, or when its extent is not a multiple of N.
#include <set>
#include <unordered_map>

#include "tessera/arith/analyzer.h"
#include "tessera/ir/functor.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/ir/op.h"
#include "tessera/support/error.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace transform {
namespace {

// a / b (truncating), folded when both are constants.
Expr DivC(const Expr& a, int64_t b) {
  if (b == 1) return a;
  if (auto* c = AsPtr<IntImmNode>(a)) return IntImmNode::Make(a->dtype, c->value / b);
  return DivNode::Make(a, IntImmNode::Make(a->dtype, b));
}

struct DTypeLess {
  bool operator()(DataType a, DataType b) const { return a.ToString() < b.ToString(); }
};

struct VarInfo {
  Var var;
  DataType element;
  Expr extent;  // the last extent; null when unknown
  std::set<DataType, DTypeLess> access;
  /*! \brief Scalar reads: their element type and the stride of their index (0: constant). */
  std::set<std::pair<std::string, int64_t>> scalar_reads;
  std::set<DataType, DTypeLess> scalar_read_types;

  DataType Preferred(arith::Analyzer& ana) const {
    std::set<DataType, DTypeLess> base;
    for (DataType t : access) base.insert(t.element_of());
    for (DataType t : scalar_read_types) base.insert(t.element_of());
    if (base.size() != 1) return element;
    int lanes = element.lanes();
    if (element.lanes() == 1 && access.size() == 1) {
      int n = access.begin()->lanes();
      for (const auto& read : scalar_reads) {
        if (read.second % n != 0) return element;
      }
      if (extent) {
        arith::ModularSet m = ana.GetModularSet(extent);
        if (m.coeff % n == 0 && m.base % n == 0) lanes = n;
      }
    }
    return base.begin()->with_lanes(lanes);
  }
};

class AccessChecker : public StmtExprVisitor {
 public:
  using StmtExprVisitor::VisitExpr_;
  using StmtExprVisitor::VisitStmt_;
  std::unordered_map<const VarNode*, VarInfo> infos;
  std::vector<const VarNode*> order;  // declaration order, for a deterministic rewrite

  explicit AccessChecker(const PrimFunc& f) {
    for (const auto& [param, buffer] : f->buffer_map) {
      Declare(buffer->data, buffer->dtype, buffer->shape.empty() ? Int32(0) : buffer->shape.back());
    }
    for (const Var& p : f->params) {
      if (p->pointer && !f->GetBuffer(p)) Declare(p, p->pointer->element, Int32(0));
    }
  }

  void VisitExpr_(const BufferLoadNode* op) override {
    Access(op->dtype, op->buffer->data.get(), op->indices, true);
    StmtExprVisitor::VisitExpr_(op);
  }
  void VisitStmt_(const BufferStoreNode* op) override {
    Access(op->value->dtype, op->buffer->data.get(), op->indices, false);
    StmtExprVisitor::VisitStmt_(op);
  }
  void VisitExpr_(const CallNode* op) override {
    if (op->is_op("tir.tvm_access_ptr") && op->args.size() == 5) {
      if (auto* v = AsPtr<VarNode>(op->args[1]))
        Access(op->args[0]->dtype, v, {op->args[2]}, false);
    } else if (op->is_op("tir.address_of") && op->args.size() == 1) {
      if (auto* load = AsPtr<BufferLoadNode>(op->args[0])) {
        Access(load->dtype, load->buffer->data.get(), load->indices, false);
      }
    }
    StmtExprVisitor::VisitExpr_(op);
  }
  void VisitStmt_(const AllocateNode* op) override {
    Declare(op->buffer_var, op->dtype, op->extents.empty() ? Int32(0) : op->extents.back());
    StmtExprVisitor::VisitStmt_(op);
  }
  void VisitStmt_(const AllocateConstNode* op) override {
    Declare(op->buffer_var, op->dtype, op->extents.empty() ? Expr() : op->extents.back());
    StmtExprVisitor::VisitStmt_(op);
  }
  void VisitStmt_(const LetStmtNode* op) override {
    if (op->var->pointer) Declare(op->var, op->var->pointer->element, Int32(0));
    StmtExprVisitor::VisitStmt_(op);
  }
  void VisitExpr_(const LetNode* op) override {
    if (op->var->pointer) Declare(op->var, op->var->pointer->element, Int32(0));
    StmtExprVisitor::VisitExpr_(op);
  }

 private:
  void Declare(const Var& v, DataType element, Expr extent) {
    if (infos.count(v.get())) return;
    if (element.is_bool()) element = DataType::Int(8).with_lanes(element.lanes());
    infos[v.get()] = VarInfo{v, element, std::move(extent), {}, {}, {}};
    order.push_back(v.get());
  }

  void Access(DataType value, const VarNode* data, const std::vector<Expr>& indices, bool load) {
    auto it = infos.find(data);
    if (it == infos.end() || value.is_scalable_vector() || value.is_handle()) return;
    VarInfo& info = it->second;
    if (value.element_of().is_bool()) value = DataType::Int(8).with_lanes(value.lanes());
    int index_lanes = indices.empty() ? 1 : indices.back()->dtype.lanes();
    int lanes_used = info.element.lanes();
    if (index_lanes * info.element.lanes() != value.lanes()) {
      lanes_used = 1;
      info.element = info.element.with_lanes(1);
    }
    if (!indices.empty()) {
      auto* ramp = AsPtr<RampNode>(indices.back());
      auto* stride = ramp ? AsPtr<IntImmNode>(ramp->stride) : nullptr;
      if (stride && stride->value == 1 && ramp->lanes > 0) {
        arith::ModularSet m = ana_.GetModularSet(ramp->base);
        if (m.coeff % ramp->lanes == 0 && m.base % ramp->lanes == 0) lanes_used = ramp->lanes;
      }
      if (load && indices.back()->dtype.lanes() == 1) {
        arith::ModularSet m = ana_.GetModularSet(indices.back());
        info.scalar_reads.emplace(value.ToString(), m.coeff);
        info.scalar_read_types.insert(value);
        return;
      }
    }
    info.access.insert(value.with_lanes(lanes_used));
  }

  arith::Analyzer ana_;
};

struct Rewrite {
  Var new_var;
  DataType old_element, new_element;
  int factor() const { return new_element.lanes() / old_element.lanes(); }
};

class VectorTypeRewriter : public StmtExprMutator {
 public:
  explicit VectorTypeRewriter(AccessChecker& checker) {
    arith::Analyzer ana;
    for (const VarNode* v : checker.order) {
      const VarInfo& info = checker.infos.at(v);
      DataType preferred = info.Preferred(ana);
      if (preferred == info.element) continue;
      if (preferred.lanes() % info.element.lanes() != 0) continue;
      std::string scope = v->pointer ? v->pointer->scope : "global";
      rewrites_[v] = Rewrite{VarNode::MakePointer(v->name, preferred, scope, v->span), info.element,
                             preferred};
    }
  }
  bool empty() const { return rewrites_.empty(); }

  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;

  Expr VisitExpr_(const VarNode* op) override {
    auto it = rewrites_.find(op);
    return it == rewrites_.end() ? StmtExprMutator::VisitExpr_(op) : Expr(it->second.new_var);
  }

  Expr VisitExpr_(const BufferLoadNode* op) override {
    Expr e = StmtExprMutator::VisitExpr_(op);
    auto* load = AsPtr<BufferLoadNode>(e);
    auto it = rewrites_.find(load->buffer->data.get());
    if (it == rewrites_.end()) return e;
    int lane = -1;
    std::vector<Expr> indices = Indices(load->indices, it->second, &lane);
    Expr out = BufferLoadNode::Make(Remap(load->buffer), indices, load->predicate, load->span);
    if (lane >= 0) out = ShuffleNode::Make({out}, {Int32(lane)});
    return out;
  }

  Stmt VisitStmt_(const BufferStoreNode* op) override {
    Stmt s = StmtExprMutator::VisitStmt_(op);
    auto* store = AsPtr<BufferStoreNode>(s);
    auto it = rewrites_.find(store->buffer->data.get());
    if (it == rewrites_.end()) return s;
    int lane = -1;
    std::vector<Expr> indices = Indices(store->indices, it->second, &lane);
    if (lane >= 0) {
      TESSERA_THROW_KIND(op->span, ErrorKind::kValue)
          << "tir.PointerValueTypeRewrite: a scalar store into " << store->buffer->name
          << ", whose elements become " << it->second.new_element;
    }
    return BufferStoreNode::Make(Remap(store->buffer), store->value, indices, store->predicate,
                                 store->span);
  }

  Stmt VisitStmt_(const DeclBufferNode* op) override {
    Stmt s = StmtExprMutator::VisitStmt_(op);
    auto* decl = AsPtr<DeclBufferNode>(s);
    Buffer b = Remap(decl->buffer);
    return b == decl->buffer ? s : Stmt(DeclBufferNode::Make(b, decl->body, decl->span));
  }

  Stmt VisitStmt_(const LetStmtNode* op) override {
    auto it = rewrites_.find(op->var.get());
    Expr value = VisitExpr(op->value);
    Stmt body = VisitStmt(op->body);
    Var var = it == rewrites_.end() ? op->var : it->second.new_var;
    if (var == op->var && value == op->value && body == op->body) return GetRef(op);
    return LetStmtNode::Make(var, value, body, op->span);
  }

  Expr VisitExpr_(const CallNode* op) override {
    Expr e = StmtExprMutator::VisitExpr_(op);
    auto* call = AsPtr<CallNode>(e);
    if (!call->is_op("tir.tvm_access_ptr") || call->args.size() != 5) return e;
    auto* v = AsPtr<VarNode>(call->args[1]);
    auto it = v ? rev_.find(v) : rev_.end();
    if (it == rev_.end()) return e;
    const Rewrite& r = it->second;
    Expr annotation = CallNode::Make(r.new_element, OpNode::Get("tir.type_annotation"), {});
    return CallNode::Make(call->dtype, call->op,
                          {annotation, call->args[1], DivC(call->args[2], r.factor()),
                           DivC(call->args[3], r.factor()), call->args[4]},
                          call->span);
  }

  Stmt VisitStmt_(const AllocateNode* op) override {
    Stmt s = StmtExprMutator::VisitStmt_(op);
    auto* alloc = AsPtr<AllocateNode>(s);
    auto it = rewrites_.find(op->buffer_var.get());
    if (it == rewrites_.end()) return s;
    std::vector<Expr> extents = alloc->extents;
    extents.back() = DivC(extents.back(), it->second.factor());
    return AllocateNode::Make(it->second.new_var, it->second.new_element, extents, alloc->condition,
                              alloc->body, alloc->annotations, alloc->span);
  }

  Stmt VisitStmt_(const AllocateConstNode* op) override {
    Stmt s = StmtExprMutator::VisitStmt_(op);
    auto* alloc = AsPtr<AllocateConstNode>(s);
    auto it = rewrites_.find(op->buffer_var.get());
    if (it == rewrites_.end()) return s;
    std::vector<Expr> extents = alloc->extents;
    extents.back() = DivC(extents.back(), it->second.factor());
    return AllocateConstNode::Make(it->second.new_var, it->second.new_element, extents, alloc->data,
                                   alloc->body, alloc->annotations, alloc->span);
  }

  PrimFunc Finalize(const PrimFunc& f, Stmt body) {
    std::vector<Var> params;
    for (const Var& p : f->params) {
      auto it = rewrites_.find(p.get());
      params.push_back(it == rewrites_.end() ? p : it->second.new_var);
    }
    std::vector<std::pair<Var, Buffer>> buffer_map;
    for (const auto& [param, buffer] : f->buffer_map) {
      buffer_map.emplace_back(param, Remap(buffer));
    }
    return PrimFuncNode::Make(params, buffer_map, body, f->ret_type, f->attrs, f->span);
  }

  // Variables visited as tvm_access_ptr data have already been replaced: look them up by
  // either the old or the new variable.
  void IndexNewVars() {
    for (const auto& [v, r] : rewrites_) {
      rev_[v] = r;
      rev_[r.new_var.get()] = r;
    }
  }

 private:
  std::vector<Expr> Indices(std::vector<Expr> indices, const Rewrite& r, int* lane) {
    if (indices.empty()) return indices;
    Expr last = indices.back();
    auto* ramp = AsPtr<RampNode>(last);
    auto* stride = ramp ? AsPtr<IntImmNode>(ramp->stride) : nullptr;
    if (stride && stride->value == 1 && ramp->lanes > 0) {
      Expr index = DivC(ramp->base, ramp->lanes);
      if (ramp->lanes != r.factor()) {
        int new_lanes = ramp->lanes / r.factor();
        index = RampNode::Make(MulNode::Make(index, IntImmNode::Make(index->dtype, new_lanes)),
                               ramp->stride, new_lanes, ramp->span);
      }
      indices.back() = index;
    } else if (last->dtype.lanes() == 1 && r.factor() > 1) {
      arith::ModularSet m = ana_.GetModularSet(last);
      *lane = static_cast<int>(((m.base % r.factor()) + r.factor()) % r.factor());
      indices.back() = DivC(last, r.factor());
    }
    return indices;
  }

  Buffer Remap(const Buffer& b) {
    auto cached = buffers_.find(b.get());
    if (cached != buffers_.end()) return cached->second;
    Buffer out = b;
    auto it = rewrites_.find(b->data.get());
    if (it == rewrites_.end()) it = rewrites_.find(OldOf(b->data.get()));
    if (it != rewrites_.end()) {
      std::vector<Expr> shape = b->shape;
      if (!shape.empty()) shape.back() = DivC(shape.back(), it->second.factor());
      out = BufferNode::Make(it->second.new_var, it->second.new_element, shape, b->strides,
                             b->elem_offset, b->name, b->data_alignment, b->offset_factor, b->span);
      out->axis_separators = b->axis_separators;
    }
    buffers_[b.get()] = out;
    return out;
  }

  const VarNode* OldOf(const VarNode* v) const {
    for (const auto& [old, r] : rewrites_) {
      if (r.new_var.get() == v) return old;
    }
    return nullptr;
  }

  std::unordered_map<const VarNode*, Rewrite> rewrites_;
  std::unordered_map<const VarNode*, Rewrite> rev_;
  std::unordered_map<const BufferNode*, Buffer> buffers_;
  arith::Analyzer ana_;
};

PrimFunc PointerValueTypeRewriteFunc(PrimFunc f, IRModule, const PassContext&) {
  AccessChecker checker(f);
  checker.VisitStmt(f->body);
  VectorTypeRewriter rewriter(checker);
  if (rewriter.empty()) return f;
  rewriter.IndexNewVars();
  Stmt body = rewriter.VisitStmt(f->body);
  return rewriter.Finalize(f, body);
}

}  // namespace

Pass PointerValueTypeRewrite() {
  return CreatePrimFuncPass(PointerValueTypeRewriteFunc, 0, "tir.PointerValueTypeRewrite");
}
TESSERA_REGISTER_PASS("tir.PointerValueTypeRewrite", PointerValueTypeRewrite);

}  // namespace transform
}  // namespace tessera
