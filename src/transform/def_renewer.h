// DefRenewer: the mutator of RenewDefs, a copy of a function in which every definition is new;
// a subclass may give the new variables other types (ForceNarrowIndexToInt32).
#pragma once

#include <unordered_map>
#include <utility>
#include <vector>

#include "tessera/ir/functor.h"
#include "tessera/ir/ir_utils.h"

namespace tessera {
namespace transform {

class DefRenewer : public BufferRemapMutator<> {
 public:
  using BufferRemapMutator::VisitExpr_;
  using BufferRemapMutator::VisitStmt_;

  /*! \brief A new variable of `v`'s name and type, which replaces `v` from here on. */
  Var Renew(const Var& v) {
    DataType t = NewType(v);
    Var fresh = v->kind == NodeKind::kSizeVar ? SizeVarNode::Make(v->name, t, v->span)
                                              : VarNode::Make(v->name, t, v->span);
    fresh->pointer = v->pointer;  // a node nobody else holds yet
    vars_[v.get()] = fresh;
    return fresh;
  }

  /*! \brief `b` rebuilt where it is defined: its data pointer and the variables of its shape,
   *  strides and offset not defined before are renewed here (a shape variable is defined by the
   *  first buffer that names it, as StructuralEqual defines it). */
  Buffer DefineBuffer(const Buffer& b) {
    auto done = buffers_.find(b.get());
    if (done != buffers_.end()) return done->second;
    auto define = [&](const Expr& e) -> Expr {
      if (!e) return e;
      // A variable first named here, bare or inside an expression (m of m * 2), is defined here.
      PostOrderVisit(e, [&](const ObjectRef& node) {
        auto* v = AsPtr<VarNode>(node);
        if (v != nullptr && vars_.count(v) == 0) Renew(As<VarNode>(node));
      });
      return VisitExpr(e);
    };
    return Rebuild(b, define);
  }

  Expr VisitExpr_(const VarNode* op) override { return Lookup(op); }

  // An attribute about a variable (`T.attr(data, "double_buffer_scope", 1)`) names the renewed
  // variable.
  Stmt VisitStmt_(const AttrStmtNode* op) override {
    auto* v = AsPtr<VarNode>(op->node);
    if (v == nullptr || v->kind != NodeKind::kVar) return BufferRemapMutator::VisitStmt_(op);
    Expr node = Lookup(v);
    if (node.get() == v) return BufferRemapMutator::VisitStmt_(op);
    return AttrStmtNode::Make(node, op->attr_key, VisitExpr(op->value), VisitStmt(op->body),
                              op->span);
  }
  Expr VisitExpr_(const SizeVarNode* op) override { return Lookup(op); }

  Stmt VisitStmt_(const ForNode* op) override {
    Expr min = VisitExpr(op->min), extent = VisitExpr(op->extent);
    Expr step = op->step ? VisitExpr(op->step) : op->step;
    Var v = Renew(op->loop_var);
    IterVar binding = op->thread_binding;
    if (binding) {
      Var bound = As<VarNode>(Lookup(binding->var.get()));
      binding = IterVarNode::Make(RenewRange(binding->dom), bound, binding->iter_type,
                                  binding->thread_tag, binding->span);
    }
    return ForNode::Make(v, min, extent, op->for_kind, VisitStmt(op->body), binding,
                         op->annotations, op->span, step);
  }
  Stmt VisitStmt_(const LetStmtNode* op) override {
    Expr value = VisitExpr(op->value);
    Var v = Renew(op->var);
    return LetStmtNode::Make(v, value, VisitStmt(op->body), op->span);
  }
  Stmt VisitStmt_(const AllocateNode* op) override {
    std::vector<Expr> extents;
    for (const Expr& e : op->extents) extents.push_back(VisitExpr(e));
    Expr condition = op->condition ? VisitExpr(op->condition) : op->condition;
    Var v = Renew(op->buffer_var);
    return AllocateNode::Make(v, op->dtype, std::move(extents), condition, VisitStmt(op->body),
                              op->annotations, op->span);
  }
  Stmt VisitStmt_(const AllocateConstNode* op) override {
    std::vector<Expr> extents;
    for (const Expr& e : op->extents) extents.push_back(VisitExpr(e));
    Var v = Renew(op->buffer_var);
    return AllocateConstNode::Make(v, op->dtype, std::move(extents), op->data, VisitStmt(op->body),
                                   op->annotations, op->span);
  }
  Stmt VisitStmt_(const DeclBufferNode* op) override {
    Buffer b = DefineBuffer(op->buffer);
    return DeclBufferNode::Make(b, VisitStmt(op->body), op->span);
  }
  Stmt VisitStmt_(const BufferRealizeNode* op) override {
    Buffer b = DefineBuffer(op->buffer);
    std::vector<Range> bounds;
    for (const Range& r : op->bounds) bounds.push_back(RenewRange(r));
    Expr condition = op->condition ? VisitExpr(op->condition) : op->condition;
    return BufferRealizeNode::Make(b, std::move(bounds), condition, VisitStmt(op->body), op->span);
  }
  Stmt VisitStmt_(const BlockNode* op) override {
    std::vector<IterVar> iter_vars;
    for (const IterVar& iv : op->iter_vars) {
      Range dom = RenewRange(iv->dom);
      iter_vars.push_back(
          IterVarNode::Make(dom, Renew(iv->var), iv->iter_type, iv->thread_tag, iv->span));
    }
    std::vector<Buffer> allocs;
    for (const Buffer& b : op->alloc_buffers) allocs.push_back(DefineBuffer(b));
    std::vector<MatchBufferRegion> matches;
    for (const MatchBufferRegion& m : op->match_buffers) {
      BufferRegion source = Region(m->source);
      matches.push_back(MatchBufferRegionNode::Make(DefineBuffer(m->buffer), source, m->span));
    }
    Stmt init = op->init ? VisitStmt(op->init) : op->init;
    Stmt body = VisitStmt(op->body);
    std::vector<BufferRegion> reads, writes;
    for (const BufferRegion& r : op->reads) reads.push_back(Region(r));
    for (const BufferRegion& r : op->writes) writes.push_back(Region(r));
    return BlockNode::Make(std::move(iter_vars), std::move(reads), std::move(writes), op->name_hint,
                           body, init, std::move(allocs), std::move(matches), op->annotations,
                           op->span);
  }

 protected:
  /*! \brief The type of the variable that renews `v` (its own, unless a subclass changes it). */
  virtual DataType NewType(const Var& v) { return v->dtype; }

  // A buffer used without a definition (a T.Buffer over an allocation) is rebuilt at its first
  // use over the renewed variables it names.
  Buffer RemapBuffer(const Buffer& b) override {
    auto done = buffers_.find(b.get());
    if (done != buffers_.end()) return done->second;
    return Rebuild(b, [&](const Expr& e) { return e ? VisitExpr(e) : e; });
  }

 protected:
  template <class F>
  Buffer Rebuild(const Buffer& b, F field) {
    Var data = As<VarNode>(field(b->data));
    std::vector<Expr> shape, strides;
    for (const Expr& e : b->shape) shape.push_back(field(e));
    for (const Expr& e : b->strides) strides.push_back(field(e));
    Expr offset = field(b->elem_offset);
    Buffer nb =
        BufferNode::Make(data ? data : b->data, b->dtype, std::move(shape), std::move(strides),
                         offset, b->name, b->data_alignment, b->offset_factor, b->span);
    nb->axis_separators = b->axis_separators;
    buffers_[b.get()] = nb;
    return nb;
  }
  Range RenewRange(const Range& r) {
    if (!r) return r;
    return RangeNode::Make(VisitExpr(r->min), VisitExpr(r->extent), r->span);
  }
  BufferRegion Region(const BufferRegion& r) {
    std::vector<Range> region;
    for (const Range& rg : r->region) region.push_back(RenewRange(rg));
    return BufferRegionNode::Make(RemapBuffer(r->buffer), std::move(region), r->span);
  }
  Expr Lookup(const VarNode* op) {
    auto it = vars_.find(op);
    return it == vars_.end() ? GetRef(op) : it->second;
  }

  std::unordered_map<const VarNode*, Expr> vars_;
  std::unordered_map<const BufferNode*, Buffer> buffers_;
};

/*! \brief `func` copied by `renewer`: its parameters, buffer map and body. */
PrimFunc RenewFunction(DefRenewer& renewer, const PrimFunc& func);

}  // namespace transform
}  // namespace tessera
