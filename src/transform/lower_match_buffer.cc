// tir.LowerMatchBuffer: accesses to a block's T.match_buffer views become accesses to the
// source buffer at the region's offset, after checking that the view fits the region.
#include <unordered_map>

#include "tessera/arith/analyzer.h"
#include "tessera/ir/buffer_strides.h"
#include "tessera/ir/functor.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/ir/printer.h"
#include "tessera/support/error.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace transform {
namespace {

Expr Cast(const Expr& e, DataType t) { return e->dtype == t ? e : Expr(CastNode::Make(t, e)); }

class MatchBufferLowerer : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;

  Expr VisitExpr_(const VarNode* op) override {
    auto it = vmap_.find(op);
    return it == vmap_.end() ? GetRef(op) : it->second;
  }

  Expr VisitExpr_(const BufferLoadNode* op) override {
    Expr e = StmtExprMutator::VisitExpr_(op);
    auto* load = AsPtr<BufferLoadNode>(e);
    auto it = views_.find(load->buffer.get());
    if (it == views_.end()) return e;
    return BufferLoadNode::Make(it->second.source, SourceIndices(it->second, load->indices),
                                load->predicate, load->span);
  }

  Stmt VisitStmt_(const BufferStoreNode* op) override {
    Stmt s = StmtExprMutator::VisitStmt_(op);
    auto* store = AsPtr<BufferStoreNode>(s);
    auto it = views_.find(store->buffer.get());
    if (it == views_.end()) return s;
    return BufferStoreNode::Make(it->second.source, store->value,
                                 SourceIndices(it->second, store->indices), store->predicate,
                                 store->span);
  }

  Stmt VisitStmt_(const BlockNode* op) override {
    if (op->match_buffers.empty() && views_.empty()) return StmtExprMutator::VisitStmt_(op);
    for (const MatchBufferRegion& m : op->match_buffers) Match(m, op);
    Stmt s = StmtExprMutator::VisitStmt_(op);
    auto* b = AsPtr<BlockNode>(s);
    std::vector<BufferRegion> reads, writes;
    for (const BufferRegion& r : b->reads) reads.push_back(SourceRegion(r));
    for (const BufferRegion& r : b->writes) writes.push_back(SourceRegion(r));
    return BlockNode::Make(b->iter_vars, reads, writes, b->name_hint, b->body, b->init,
                           b->alloc_buffers, {}, b->annotations, b->span);
  }

 private:
  struct View {
    Buffer source;
    std::vector<Expr> mins;  // per source dimension
    size_t lead = 0;         // source dimensions the view does not have
  };

  void Match(const MatchBufferRegion& m, const BlockNode* block) {
    const Buffer& view = m->buffer;
    BufferRegion src = m->source;
    // The source may itself be a view of an outer block.
    std::vector<Range> region;
    for (const Range& r : src->region)
      region.push_back(RangeNode::Make(VisitExpr(r->min), VisitExpr(r->extent)));
    Buffer source = src->buffer;
    auto outer = views_.find(source.get());
    if (outer != views_.end()) {
      std::vector<Expr> mins;
      for (const Range& r : region) mins.push_back(r->min);
      std::vector<Expr> shifted = SourceIndices(outer->second, mins);
      std::vector<Range> full;
      for (size_t k = 0; k < shifted.size(); ++k) {
        Expr extent = k < outer->second.lead ? Int32(1) : region[k - outer->second.lead]->extent;
        full.push_back(RangeNode::Make(shifted[k], extent));
      }
      region = full;
      source = outer->second.source;
    }
    size_t nv = view->shape.size(), ns = region.size();
    auto fail = [&](const std::string& why) {
      TESSERA_THROW_KIND(view->span, ErrorKind::kValue)
          << "T.match_buffer " << view->name << " in block " << block->name_hint
          << " does not match its region of " << source->name << ": " << why;
    };
    if (nv > ns) fail("the view has more dimensions than the region");
    View v;
    v.source = source;
    v.lead = ns - nv;
    for (size_t k = 0; k < ns; ++k) {
      v.mins.push_back(region[k]->min);
      if (k < v.lead) {
        if (!ana_.CanProveEqual(Cast(region[k]->extent, DataType::Int(32)), Int32(1))) {
          fail("dimension " + std::to_string(k) + " of the region has extent " +
               AsScript(region[k]->extent) + ", which the view drops");
        }
        continue;
      }
      Expr want = view->shape[k - v.lead], have = region[k]->extent;
      DataType t = want->dtype.bits() >= have->dtype.bits() ? want->dtype : have->dtype;
      if (auto* var = AsPtr<VarNode>(want); var && !vmap_.count(var)) {
        vmap_[var] = Cast(have, var->dtype);  // a symbolic view shape takes the region's
      } else if (!ana_.CanProveEqual(Cast(want, t), Cast(have, t))) {
        fail("shape[" + std::to_string(k - v.lead) + "] is " + AsScript(want) +
             " but the region's extent is " + AsScript(have));
      }
    }
    // Symbolic fields of the view (data, elem_offset, strides) take the source's values; fields
    // given as expressions (or variables already bound) must equal them.
    std::vector<Expr> strides = SourceStrides(source);
    if (view->data != source->data) vmap_[view->data.get()] = source->data;
    // A constant elem_offset (T.match_buffer's default is 0) is not checked: tessera accepts a
    // view at any offset there, where TVM refuses one that does not start at that constant.
    if (view->elem_offset && !AsPtr<IntImmNode>(view->elem_offset)) {
      DataType t = view->elem_offset->dtype;
      Expr offset = Cast(source->elem_offset, t);
      for (size_t k = 0; k < ns; ++k) {
        offset = AddNode::Make(offset, MulNode::Make(Cast(v.mins[k], t), Cast(strides[k], t)));
      }
      BindField(view->elem_offset, SimplifyExpr(offset), "elem_offset", fail);
    }
    for (size_t k = 0; k < view->strides.size(); ++k) {
      BindField(view->strides[k], strides[k + v.lead], "strides[" + std::to_string(k) + "]",
                fail);
    }
    views_[view.get()] = v;
    keep_.push_back(view);
  }

  /*! \brief A view field takes `value`: a variable seen first is bound to it; a variable bound
   *  before, or an expression, must be provably equal to it. */
  template <class Fail>
  void BindField(const Expr& field, const Expr& value, const std::string& what, Fail& fail) {
    if (!field->dtype.is_integer() || !value->dtype.is_integer()) {
      fail(what + " " + AsScript(field) + " has type " + field->dtype.ToString() +
           ", where an integer is required");
    }
    auto* var = AsPtr<VarNode>(field);
    if (var && !vmap_.count(var)) {
      vmap_[var] = Cast(value, var->dtype);
      return;
    }
    Expr bound = var ? vmap_[var] : VisitExpr(field);
    DataType t = bound->dtype.bits() >= value->dtype.bits() ? bound->dtype : value->dtype;
    if (!ana_.CanProveEqual(Cast(bound, t), Cast(value, t))) {
      fail(what + " is " + AsScript(bound) + " but the region gives " + AsScript(value));
    }
  }

  static std::vector<Expr> SourceStrides(const Buffer& b) {
    if (std::vector<Expr> given = LoweringStrides(b); !given.empty()) return given;
    std::vector<Expr> strides(b->shape.size());
    Expr s = Int32(1);
    for (size_t k = b->shape.size(); k-- > 0;) {
      strides[k] = s;
      s = SimplifyExpr(MulNode::Make(s, Cast(b->shape[k], DataType::Int(32))));
    }
    return strides;
  }

  std::vector<Expr> SourceIndices(const View& v, const std::vector<Expr>& indices) {
    std::vector<Expr> out;
    for (size_t k = 0; k < v.mins.size(); ++k) {
      if (k < v.lead) {
        out.push_back(v.mins[k]);
        continue;
      }
      const Expr& i = indices[k - v.lead];
      Expr min = v.mins[k];
      if (i->dtype.is_vector()) {
        out.push_back(SimplifyExpr(AddNode::Make(
            BroadcastNode::Make(Cast(min, i->dtype.element_of()), i->dtype.lanes()), i)));
      } else {
        DataType t = i->dtype.bits() >= min->dtype.bits() ? i->dtype : min->dtype;
        out.push_back(SimplifyExpr(AddNode::Make(Cast(min, t), Cast(i, t))));
      }
    }
    return out;
  }

  BufferRegion SourceRegion(const BufferRegion& r) {
    auto it = views_.find(r->buffer.get());
    if (it == views_.end()) return r;
    const View& v = it->second;
    std::vector<Expr> mins;
    for (const Range& range : r->region) mins.push_back(range->min);
    std::vector<Expr> shifted = SourceIndices(v, mins);
    std::vector<Range> region;
    for (size_t k = 0; k < shifted.size(); ++k) {
      Expr extent = k < v.lead ? Int32(1) : r->region[k - v.lead]->extent;
      region.push_back(RangeNode::Make(shifted[k], extent));
    }
    return BufferRegionNode::Make(v.source, region, r->span);
  }

  arith::Analyzer ana_;
  VarMap vmap_;
  std::unordered_map<const BufferNode*, View> views_;
  std::vector<Buffer> keep_;
};

PrimFunc LowerMatchBufferFunc(PrimFunc f, IRModule, const PassContext&) {
  Stmt body = MatchBufferLowerer().VisitStmt(f->body);
  return body == f->body ? f : f->WithBody(body);
}

}  // namespace

Pass LowerMatchBuffer() {
  return CreatePrimFuncPass(LowerMatchBufferFunc, 0, "tir.LowerMatchBuffer");
}
TESSERA_REGISTER_PASS("tir.LowerMatchBuffer", LowerMatchBuffer);

}  // namespace transform
}  // namespace tessera
