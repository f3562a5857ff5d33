// tir.FlattenBuffer: multi-dimensional buffers become 1-D views of the same storage; accesses
// use row-major (or the buffer's stride) arithmetic.
#include <unordered_map>

#include "tessera/ir/buffer_strides.h"
#include "tessera/ir/functor.h"
#include "tessera/support/error.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace transform {
namespace {

bool IsFlat(const BufferNode* b) { return b->shape.size() == 1 && b->strides.empty(); }

// a + b for index expressions where either may be a vector (the last index of a vector access).
Expr AddIndex(const Expr& a, const Expr& b) {
  int lanes = std::max(a->dtype.lanes(), b->dtype.lanes());
  Expr x = a->dtype.lanes() < lanes ? Expr(BroadcastNode::Make(a, lanes)) : a;
  Expr y = b->dtype.lanes() < lanes ? Expr(BroadcastNode::Make(b, lanes)) : b;
  return AddNode::Make(x, y);
}
Expr MulIndex(const Expr& a, const Expr& scalar) {
  Expr s = scalar->dtype == a->dtype.element_of() ? scalar
                                                  : CastNode::Make(a->dtype.element_of(), scalar);
  if (a->dtype.is_vector()) s = BroadcastNode::Make(s, a->dtype.lanes());
  return MulNode::Make(a, s);
}

class BufferFlattener : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;

  Expr VisitExpr_(const BufferLoadNode* op) override {
    Expr e = StmtExprMutator::VisitExpr_(op);
    auto* load = AsPtr<BufferLoadNode>(e);
    if (IsFlat(load->buffer.get())) return e;
    return BufferLoadNode::Make(Flat(load->buffer), {FlatIndex(load->buffer, load->indices)},
                                load->predicate, load->span);
  }

  Stmt VisitStmt_(const BufferStoreNode* op) override {
    Stmt s = StmtExprMutator::VisitStmt_(op);
    auto* store = AsPtr<BufferStoreNode>(s);
    if (IsFlat(store->buffer.get())) return s;
    return BufferStoreNode::Make(Flat(store->buffer), store->value,
                                 {FlatIndex(store->buffer, store->indices)}, store->predicate,
                                 store->span);
  }

  Stmt VisitStmt_(const DeclBufferNode* op) override {
    Stmt body = VisitStmt(op->body);
    Buffer buf = IsFlat(op->buffer.get()) ? op->buffer : Flat(op->buffer);
    if (body == op->body && buf == op->buffer) return GetRef(op);
    return DeclBufferNode::Make(buf, body, op->span);
  }

  Stmt VisitStmt_(const AllocateNode* op) override {
    Stmt s = StmtExprMutator::VisitStmt_(op);
    auto* alloc = AsPtr<AllocateNode>(s);
    if (alloc->extents.size() == 1) return s;
    Expr size = MakeConst(DataType::Int(32), int64_t(1));
    if (!alloc->extents.empty()) {
      size = alloc->extents[0];
      for (size_t i = 1; i < alloc->extents.size(); ++i) size = MulIndex(size, alloc->extents[i]);
    }
    return AllocateNode::Make(alloc->buffer_var, alloc->dtype, {SimplifyExpr(size)},
                              alloc->condition, alloc->body, alloc->annotations, alloc->span);
  }

 private:
  // The 1-D view of `b`, one per buffer so that every access names the same object.
  Buffer Flat(const Buffer& b) {
    auto it = flat_.find(b.get());
    if (it != flat_.end()) return it->second;
    if (!b->axis_separators.empty()) {
      // Several physical axes (TVM's axis_separators) are a layout no target here lowers.
      TESSERA_THROW_KIND(b->span, ErrorKind::kValue)
          << "tir.FlattenBuffer: buffer " << b->name
          << " has axis_separators; flattening it into several physical axes is not supported";
    }
    std::vector<Expr> strides = LoweringStrides(b);
    Expr size;
    if (b->shape.empty()) {
      size = MakeConst(DataType::Int(32), int64_t(1));
    } else if (strides.empty()) {
      size = b->shape[0];
      for (size_t i = 1; i < b->shape.size(); ++i) size = MulIndex(size, b->shape[i]);
    } else {
      size = MulIndex(b->shape[0], strides[0]);  // the span of the outermost dimension
    }
    Buffer flat = BufferNode::Make(b->data, b->dtype, {SimplifyExpr(size)}, {}, b->elem_offset,
                                   b->name, b->data_alignment, b->offset_factor, b->span);
    flat_[b.get()] = flat;
    keep_.push_back(b);
    return flat;
  }

  Expr FlatIndex(const Buffer& b, const std::vector<Expr>& indices) {
    if (indices.empty()) return MakeConst(DataType::Int(32), int64_t(0));
    // Index arithmetic in the widest index type used.
    DataType elem = DataType::Int(32);
    for (const Expr& i : indices) {
      if (i->dtype.bits() > elem.bits()) elem = i->dtype.element_of();
    }
    std::vector<Expr> idx;
    for (const Expr& i : indices) {
      idx.push_back(
          i->dtype.element_of() == elem ? i : CastNode::Make(elem.with_lanes(i->dtype.lanes()), i));
    }
    Expr index;
    std::vector<Expr> strides = LoweringStrides(b);
    if (strides.empty()) {
      // ((i0 * s1 + i1) * s2 + i2) ...
      index = idx[0];
      for (size_t i = 1; i < idx.size(); ++i)
        index = AddIndex(MulIndex(index, b->shape[i]), idx[i]);
    } else {
      for (size_t i = 0; i < idx.size(); ++i) {
        Expr term = MulIndex(idx[i], strides[i]);
        index = index ? AddIndex(index, term) : term;
      }
    }
    return SimplifyExpr(index);
  }

  std::unordered_map<const BufferNode*, Buffer> flat_;
  std::vector<Buffer> keep_;  // keeps the keys of flat_ alive
};

PrimFunc FlattenBufferFunc(PrimFunc f, IRModule, const PassContext&) {
  Stmt body = BufferFlattener().VisitStmt(f->body);
  return body == f->body ? f : f->WithBody(body);
}

}  // namespace

Pass FlattenBuffer() { return CreatePrimFuncPass(FlattenBufferFunc, 0, "tir.FlattenBuffer"); }
TESSERA_REGISTER_PASS("tir.FlattenBuffer", FlattenBuffer);

}  // namespace transform
}  // namespace tessera
