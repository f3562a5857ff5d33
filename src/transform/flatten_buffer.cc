// tir.FlattenBuffer: multi-dimensional buffers become 1-D views of the same storage; accesses
// use row-major (or the buffer's stride) arithmetic. A buffer with axis_separators keeps one
// dimension per physical axis. As in TVM v0.23, DeclBuffer statements are dropped (the
// flattened buffers are only named by their accesses), an allocation takes the flattened shape
// of the buffer declared on it, and blocks (kept by this point when LowerOpaqueBlock has not run)
// get flattened allocations and read/write regions. Bool buffers are stored as int8 (each
// access cast), as TVM does.
#include <unordered_map>
#include <unordered_set>

#include "tessera/ir/buffer_strides.h"
#include "tessera/ir/functor.h"
#include "tessera/ir/op.h"
#include "tessera/ir/structural_equal.h"
#include "tessera/support/error.h"
#include "tessera/transform/buffer_offset.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace transform {
namespace {

// (A bool buffer is never left as it is: its flat view holds int8, as in TVM.)
bool IsFlat(const BufferNode* b) {
  return b->shape.size() == 1 && b->strides.empty() && b->axis_separators.empty() &&
         !b->dtype.is_bool();
}

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
    Buffer flat = Flat(load->buffer);
    std::vector<Expr> indices = FlatIndices(load->buffer, load->indices);
    if (flat == load->buffer && SameExprs(indices, load->indices)) return e;
    Expr out = BufferLoadNode::Make(flat, indices, load->predicate, load->span);
    // A bool element is read from its int8 backing store.
    if (load->buffer->dtype.is_bool()) out = CastNode::Make(load->dtype, out);
    return out;
  }

  Stmt VisitStmt_(const BufferStoreNode* op) override {
    Stmt s = StmtExprMutator::VisitStmt_(op);
    auto* store = AsPtr<BufferStoreNode>(s);
    if (IsFlat(store->buffer.get())) return s;
    Buffer flat = Flat(store->buffer);
    std::vector<Expr> indices = FlatIndices(store->buffer, store->indices);
    if (flat == store->buffer && SameExprs(indices, store->indices)) return s;
    Expr value = store->value;
    // A bool element is written to its int8 backing store; a bool read from another bool
    // buffer's store (a copy: flip, take, concatenate, broadcast_to of bools) is written as
    // the byte it is, without the conversion to bool and back that tested each byte against
    // zero (a bool store holds 0 or 1, as numpy's does, whose copies do not test either).
    if (store->buffer->dtype.is_bool()) {
      Expr bytes = BoolBytes(value);
      value = bytes != nullptr
                  ? bytes
                  : CastNode::Make(DataType::Int(8).with_lanes(value->dtype.lanes()), value);
    }
    return BufferStoreNode::Make(flat, value, indices, store->predicate, store->span);
  }

  // The declaration goes; its buffer is flattened where it is accessed.
  Stmt VisitStmt_(const DeclBufferNode* op) override { return VisitStmt(op->body); }

  Stmt VisitStmt_(const AllocateNode* op) override {
    // The flattened extents: those of the buffer declared on the allocation when it matches
    // it (same data, type and shape: its strides and axis separators count), else the product.
    std::vector<Expr> extents = op->extents;
    if (op->extents.size() != 1) {
      auto* decl = AsPtr<DeclBufferNode>(op->body);
      if (decl && decl->buffer->data == op->buffer_var && decl->buffer->dtype == op->dtype &&
          SameShape(decl->buffer->shape, op->extents)) {
        extents = Flat(decl->buffer)->shape;
      } else {
        Expr size = MakeConst(DataType::Int(32), int64_t(1));
        if (!op->extents.empty()) {
          size = op->extents[0];
          for (size_t i = 1; i < op->extents.size(); ++i) size = MulIndex(size, op->extents[i]);
        }
        extents = {SimplifyExpr(size)};
      }
    }
    Stmt s = StmtExprMutator::VisitStmt_(op);
    auto* alloc = AsPtr<AllocateNode>(s);
    // Bool storage is int8, as in TVM.
    DataType dtype = alloc->dtype.is_bool() ? DataType::Int(8).with_lanes(alloc->dtype.lanes())
                                            : alloc->dtype;
    if (extents == alloc->extents && dtype == alloc->dtype) return s;
    return AllocateNode::Make(alloc->buffer_var, dtype, extents, alloc->condition, alloc->body,
                              alloc->annotations, alloc->span);
  }

  // A block left in the function: its allocations and its read/write regions are flattened
  // (a region becomes [offset of its first element, offset of its last element]).
  Stmt VisitStmt_(const BlockNode* op) override {
    Stmt s = StmtExprMutator::VisitStmt_(op);
    auto* b = AsPtr<BlockNode>(s);
    bool changed = false;
    std::vector<Buffer> allocs;
    for (const Buffer& buf : b->alloc_buffers) {
      allocs.push_back(IsFlat(buf.get()) ? buf : Flat(buf));
      changed = changed || allocs.back() != buf;
    }
    auto regions = [&](const std::vector<BufferRegion>& in) {
      std::vector<BufferRegion> out;
      for (const BufferRegion& r : in) {
        BufferRegion flat = IsFlat(r->buffer.get()) ? r : FlatRegion(r);
        bool same = flat->buffer == r->buffer && flat->region.size() == r->region.size();
        for (size_t i = 0; same && i < r->region.size(); ++i) {
          same = SameExprs({flat->region[i]->min, flat->region[i]->extent},
                           {r->region[i]->min, r->region[i]->extent});
        }
        out.push_back(same ? r : flat);
        changed = changed || !same;
      }
      return out;
    };
    std::vector<BufferRegion> reads = regions(b->reads), writes = regions(b->writes);
    if (!changed) return s;
    return BlockNode::Make(b->iter_vars, reads, writes, b->name_hint, b->body, b->init, allocs,
                           b->match_buffers, b->annotations, b->span);
  }

 private:
  // The 1-D view of `b`, one per buffer so that every access names the same object.
  Buffer Flat(const Buffer& b) {
    auto it = flat_.find(b.get());
    if (it != flat_.end()) return it->second;
    if (!b->axis_separators.empty()) {
      // One dimension per physical axis (TVM's axis_separators).
      Buffer flat = FlattenedBuffer(b);
      if (flat != b) {
        for (Expr& e : flat->shape) e = SimplifyExpr(e);
      }
      if (b->dtype.is_bool()) {
        flat = Int8View(flat);
        bool_views_.insert(flat.get());
      }
      flat_[b.get()] = flat;
      keep_.push_back(b);
      return flat;
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
    DataType dtype = b->dtype.is_bool() ? DataType::Int(8).with_lanes(b->dtype.lanes()) : b->dtype;
    Buffer flat = BufferNode::Make(b->data, dtype, {SimplifyExpr(size)}, {}, b->elem_offset,
                                   b->name, b->data_alignment, b->offset_factor, b->span);
    if (b->dtype.is_bool()) bool_views_.insert(flat.get());
    flat_[b.get()] = flat;
    keep_.push_back(b);
    return flat;
  }

  // The int8 bytes of `e`, a bool read from a bool buffer's int8 store (the conversion of its
  // load), a choice between such (a concatenation's if_then_else, a select), or logic on such
  // and on bool constants: and, or, not, bools equal or not (logical_xor), bitwise and, or, xor
  // of bools. As bytes holding 0 or 1 these are the bitwise and, or, xor with 1, xor and xor
  // with 1 of the bytes, which stay 0 or 1 (numpy's logical ops on bools: no test of each byte
  // against zero, and byte vectors as wide as a copy's). Undefined for anything else (a
  // comparison of other types, a conversion of another type).
  Expr BoolBytes(const Expr& e) const {
    const DataType bytes = DataType::Int(8).with_lanes(e->dtype.lanes());
    auto bitwise = [&](const char* op, const Expr& a, const Expr& b) -> Expr {
      if (a == nullptr || b == nullptr) return Expr();
      return CallNode::Make(bytes, OpNode::Get(op), {a, b}, e->span);
    };
    auto one = [&]() -> Expr {
      Expr c = MakeConst(DataType::Int(8), int64_t{1});
      return bytes.lanes() > 1 ? Expr(BroadcastNode::Make(c, bytes.lanes())) : c;
    };
    if (!e->dtype.is_bool()) return Expr();
    if (auto* imm = AsPtr<IntImmNode>(e)) {
      return MakeConst(DataType::Int(8), int64_t{imm->value != 0 ? 1 : 0});
    }
    if (auto* op = AsPtr<AndNode>(e)) {
      return bitwise("tir.bitwise_and", BoolBytes(op->a), BoolBytes(op->b));
    }
    if (auto* op = AsPtr<OrNode>(e)) {
      return bitwise("tir.bitwise_or", BoolBytes(op->a), BoolBytes(op->b));
    }
    if (auto* op = AsPtr<NotNode>(e)) return bitwise("tir.bitwise_xor", BoolBytes(op->a), one());
    if (auto* op = AsPtr<NENode>(e)) {
      if (!op->a->dtype.is_bool()) return Expr();
      return bitwise("tir.bitwise_xor", BoolBytes(op->a), BoolBytes(op->b));
    }
    if (auto* op = AsPtr<EQNode>(e)) {
      if (!op->a->dtype.is_bool()) return Expr();
      Expr x = bitwise("tir.bitwise_xor", BoolBytes(op->a), BoolBytes(op->b));
      return bitwise("tir.bitwise_xor", x, one());
    }
    if (auto* cast = AsPtr<CastNode>(e)) {
      auto* load = AsPtr<BufferLoadNode>(cast->value);
      if (cast->dtype.is_bool() && load && bool_views_.count(load->buffer.get()) &&
          load->dtype == DataType::Int(8).with_lanes(e->dtype.lanes())) {
        return cast->value;
      }
      return Expr();
    }
    if (auto* call = AsPtr<CallNode>(e)) {
      for (const char* op : {"tir.bitwise_and", "tir.bitwise_or", "tir.bitwise_xor"}) {
        if (call->is_op(op) && call->args.size() == 2) {
          return bitwise(op, BoolBytes(call->args[0]), BoolBytes(call->args[1]));
        }
      }
      if (!call->is_op("tir.if_then_else") || call->args.size() != 3) return Expr();
      Expr a = BoolBytes(call->args[1]), b = BoolBytes(call->args[2]);
      if (a == nullptr || b == nullptr) return Expr();
      return CallNode::Make(a->dtype, call->op, {call->args[0], a, b}, call->span);
    }
    if (auto* sel = AsPtr<SelectNode>(e)) {
      Expr a = BoolBytes(sel->true_value), b = BoolBytes(sel->false_value);
      if (a == nullptr || b == nullptr) return Expr();
      return SelectNode::Make(sel->condition, a, b, sel->span);
    }
    return Expr();
  }

  // `b` over int8 elements (the backing store of a bool buffer).
  static Buffer Int8View(const Buffer& b) {
    Buffer out = BufferNode::Make(b->data, DataType::Int(8).with_lanes(b->dtype.lanes()), b->shape,
                                  b->strides, b->elem_offset, b->name, b->data_alignment,
                                  b->offset_factor, b->span);
    out->axis_separators = b->axis_separators;
    return out;
  }

  static bool SameExprs(const std::vector<Expr>& a, const std::vector<Expr>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (a[i] != b[i] && !StructuralEqual(a[i], b[i])) return false;
    }
    return true;
  }

  static bool SameShape(const std::vector<Expr>& a, const std::vector<Expr>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      auto x = AsConstInt(a[i]), y = AsConstInt(b[i]);
      if (x && y ? *x != *y : !StructuralEqual(a[i], b[i])) return false;
    }
    return true;
  }

  // The indices of `indices` in the flattened buffer: one per physical axis.
  std::vector<Expr> FlatIndices(const Buffer& b, const std::vector<Expr>& indices) {
    if (!b->axis_separators.empty()) return BufferOffsetOf(b, indices);
    return {FlatIndex(b, indices)};
  }

  BufferRegion FlatRegion(const BufferRegion& r) {
    std::vector<Expr> first, last;
    for (const Range& range : r->region) {
      first.push_back(range->min);
      last.push_back(SimplifyExpr(AddNode::Make(
          range->min, SubNode::Make(range->extent, MakeConst(range->extent->dtype, int64_t(1))))));
    }
    std::vector<Expr> lo = FlatIndices(r->buffer, first), hi = FlatIndices(r->buffer, last);
    std::vector<Range> region;
    for (size_t i = 0; i < lo.size(); ++i) {
      Expr extent = SimplifyExpr(
          AddNode::Make(SubNode::Make(hi[i], lo[i]), MakeConst(hi[i]->dtype, int64_t(1))));
      region.push_back(RangeNode::Make(lo[i], extent));
    }
    return BufferRegionNode::Make(Flat(r->buffer), region, r->span);
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
  std::unordered_set<const BufferNode*> bool_views_;  // the int8 views of bool buffers
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
