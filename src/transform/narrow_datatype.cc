// tir.NarrowDataType(target_bits): the index arithmetic of a function's body (loop, block and
// thread variables, the integer constants and casts of indices, loop ranges, block domains and
// the shapes of buffers defined in the body) is rewritten to `target_bits`-bit integers wherever
// the constant-integer-bound analysis proves that every expression a variable or constant takes
// part in fits that width, as TVM's pass of this name does.
//
// Two steps:
//  1. WidthPlanner walks the body with an arith::Analyzer that knows each loop, block and thread
//     variable's range. The width an expression needs is `target_bits` when its type is no wider
//     or its bound fits, 64 otherwise; a node's required width is the largest along its path from
//     the enclosing index (a buffer access starts its indices afresh). A variable gets the width
//     of its extent's type capped by that requirement, the widest over all its uses; integer
//     constants and casts likewise, capped by their own width.
//  2. WidthRewriter renews the variables with their planned types. Constants and casts change
//     only in index positions (indices, loop and block ranges, buffer shapes, thread extents) or
//     where an operation's two operands came out with different types; the operands of such an
//     operation are revisited as indices, and any difference left is closed by widening the
//     narrower operand. A value stored into a buffer is cast back to the buffer's element type.
// Parameters, the buffer map and the data of buffers are left as they are.
#include <algorithm>
#include <limits>
#include <unordered_map>

#include "def_renewer.h"
#include "tessera/arith/analyzer.h"
#include "tessera/ir/expr_ops.h"
#include "tessera/support/error.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace transform {
namespace {

constexpr int kWideBits = 64;

class WidthPlanner : public StmtExprVisitor {
 public:
  using StmtExprVisitor::VisitExpr_;
  using StmtExprVisitor::VisitStmt_;

  explicit WidthPlanner(int target_bits) : target_(target_bits), need_(target_bits) {}

  void VisitExpr(const Expr& e) override {
    if (!e) return;
    if (!e->dtype.is_int()) {
      StmtExprVisitor::VisitExpr(e);
      return;
    }
    int bits = kWideBits;
    if (e->dtype.bits() <= target_) {
      bits = target_;
    } else {
      arith::ConstIntBound b = ana_.GetConstIntBound(e);
      int64_t hi = (int64_t{1} << (target_ - 1)) - 1, lo = -hi - 1;
      if (b.min_value >= lo && b.max_value <= hi) bits = target_;
    }
    int saved = need_;
    need_ = std::max(need_, bits);
    StmtExprVisitor::VisitExpr(e);
    need_ = saved;
  }

  void VisitExpr_(const BufferLoadNode* op) override {
    int saved = need_;
    need_ = target_;
    StmtExprVisitor::VisitExpr_(op);
    need_ = saved;
  }
  void VisitExpr_(const VarNode* op) override {
    auto it = extent_bits_.find(op);
    if (it != extent_bits_.end()) Record(op, op->dtype, std::min(it->second, need_));
  }
  void VisitExpr_(const IntImmNode* op) override {
    if (op->dtype.is_int()) Record(op, op->dtype, std::min(op->dtype.bits(), need_));
  }
  void VisitExpr_(const CastNode* op) override {
    if (op->dtype.is_int()) Record(op, op->dtype, std::min(op->dtype.bits(), need_));
    StmtExprVisitor::VisitExpr_(op);
  }

  void VisitStmt_(const ForNode* op) override {
    Define(op->loop_var, op->min, op->extent);
    if (op->thread_binding) Define(op->thread_binding->var, op->min, op->extent);
    StmtExprVisitor::VisitStmt_(op);
  }
  void VisitStmt_(const BlockNode* op) override {
    for (const IterVar& iv : op->iter_vars) Define(iv->var, iv->dom->min, iv->dom->extent);
    StmtExprVisitor::VisitStmt_(op);
  }
  void VisitStmt_(const AttrStmtNode* op) override {
    auto* iv = AsPtr<IterVarNode>(op->node);
    if (iv != nullptr && (op->attr_key == "thread_extent" || op->attr_key == "virtual_thread")) {
      Define(iv->var, MakeConst(op->value->dtype, int64_t{0}), op->value);
    }
    StmtExprVisitor::VisitStmt_(op);
  }

  /*! \brief The planned type of each variable, constant and cast whose type changes. */
  std::unordered_map<const Object*, DataType> Changes() const {
    std::unordered_map<const Object*, DataType> out;
    for (const auto& [node, plan] : plan_) {
      if (plan.first.bits() != plan.second) out[node] = plan.first.with_bits(plan.second);
    }
    return out;
  }

 private:
  void Define(const Var& v, const Expr& min, const Expr& extent) {
    if (!v->dtype.is_int()) return;
    ana_.Bind(v, RangeNode::Make(min, extent));
    extent_bits_[v.get()] = extent->dtype.bits();
  }
  void Record(const Object* node, DataType t, int bits) {
    auto [it, fresh] = plan_.emplace(node, std::make_pair(t, bits));
    if (!fresh) it->second.second = std::max(it->second.second, bits);
  }

  int target_;
  int need_;  // the width the expressions around the current one require
  arith::Analyzer ana_;
  std::unordered_map<const VarNode*, int> extent_bits_;
  std::unordered_map<const Object*, std::pair<DataType, int>> plan_;
};

class WidthRewriter : public DefRenewer {
 public:
  using DefRenewer::VisitExpr_;
  using DefRenewer::VisitStmt_;

  explicit WidthRewriter(std::unordered_map<const Object*, DataType> plan)
      : plan_(std::move(plan)) {}

  Expr VisitExpr_(const IntImmNode* op) override {
    const DataType* t = Planned(op);
    if (!index_ || t == nullptr) return GetRef(op);
    return IntImmNode::Make(*t, op->value, op->span);
  }
  Expr VisitExpr_(const CastNode* op) override {
    const DataType* t = Planned(op);
    Expr value = VisitExpr(op->value);
    if (index_ && t != nullptr) return CastTo(*t, value);
    if (value == op->value) return GetRef(op);
    return CastNode::Make(op->dtype, value, op->span);
  }

#define TESSERA_NARROW_BINARY(name) \
  Expr VisitExpr_(const name##Node* op) override { return Binary(op); }
  TESSERA_NARROW_BINARY(Add)
  TESSERA_NARROW_BINARY(Sub)
  TESSERA_NARROW_BINARY(Mul)
  TESSERA_NARROW_BINARY(Div)
  TESSERA_NARROW_BINARY(Mod)
  TESSERA_NARROW_BINARY(FloorDiv)
  TESSERA_NARROW_BINARY(FloorMod)
  TESSERA_NARROW_BINARY(Min)
  TESSERA_NARROW_BINARY(Max)
  TESSERA_NARROW_BINARY(EQ)
  TESSERA_NARROW_BINARY(NE)
  TESSERA_NARROW_BINARY(LT)
  TESSERA_NARROW_BINARY(LE)
  TESSERA_NARROW_BINARY(GT)
  TESSERA_NARROW_BINARY(GE)
#undef TESSERA_NARROW_BINARY

  Expr VisitExpr_(const SelectNode* op) override {
    Expr c = VisitExpr(op->condition);
    Expr t = VisitExpr(op->true_value), f = VisitExpr(op->false_value);
    Widen(&t, &f);
    if (c == op->condition && t == op->true_value && f == op->false_value) return GetRef(op);
    return SelectNode::Make(c, t, f, op->span);
  }
  Expr VisitExpr_(const RampNode* op) override {
    auto [base, stride] = Pair(op->base, op->stride);
    if (base == op->base && stride == op->stride) return GetRef(op);
    return RampNode::Make(base, stride, op->lanes, op->span);
  }
  Expr VisitExpr_(const CallNode* op) override {
    if (!op->is_op("tir.if_then_else") || op->args.size() != 3) return DefRenewer::VisitExpr_(op);
    Expr c = VisitExpr(op->args[0]);
    Expr t = VisitExpr(op->args[1]), f = VisitExpr(op->args[2]);
    Widen(&t, &f);
    if (c == op->args[0] && t == op->args[1] && f == op->args[2]) return GetRef(op);
    DataType rt = op->dtype.is_int() && t->dtype.is_int() ? t->dtype : op->dtype;
    return CallNode::Make(rt, op->op, {c, t, f}, op->span);
  }
  Expr VisitExpr_(const LetNode* op) override {
    Expr value = VisitExpr(op->value);
    Var v = Renew(op->var);
    return LetNode::Make(v, CastTo(v->dtype, value), VisitExpr(op->body), op->span);
  }
  Expr VisitExpr_(const BufferLoadNode* op) override {
    bool saved = index_;
    index_ = true;
    Expr e = DefRenewer::VisitExpr_(op);
    index_ = saved;
    return e;
  }

  Stmt VisitStmt_(const BufferStoreNode* op) override {
    Buffer b = RemapBuffer(op->buffer);
    Expr value = VisitExpr(op->value);
    if (value->dtype != b->dtype && value->dtype.lanes() == 1) value = CastTo(b->dtype, value);
    bool saved = index_;
    index_ = true;
    std::vector<Expr> indices;
    for (const Expr& i : op->indices) indices.push_back(VisitExpr(i));
    Expr predicate = op->predicate ? VisitExpr(op->predicate) : op->predicate;
    index_ = saved;
    return BufferStoreNode::Make(b, value, std::move(indices), predicate, op->span);
  }
  Stmt VisitStmt_(const LetStmtNode* op) override {
    Expr value = VisitExpr(op->value);
    Var v = Renew(op->var);
    return LetStmtNode::Make(v, CastTo(v->dtype, value), VisitStmt(op->body), op->span);
  }
  Stmt VisitStmt_(const ForNode* op) override {
    bool saved = index_;
    index_ = true;
    Expr min = VisitExpr(op->min), extent = VisitExpr(op->extent);
    Expr step = op->step ? VisitExpr(op->step) : op->step;
    index_ = saved;
    Var v = Renew(op->loop_var);
    IterVar binding = op->thread_binding;
    if (binding) {
      Var bv = vars_.count(binding->var.get()) ? As<VarNode>(Lookup(binding->var.get()))
                                               : RenewAs(binding->var, v->dtype);
      binding = IterVarNode::Make(IndexRange(binding->dom), bv, binding->iter_type,
                                  binding->thread_tag, binding->span);
    }
    return ForNode::Make(v, CastTo(v->dtype, min), CastTo(v->dtype, extent), op->for_kind,
                         VisitStmt(op->body), binding, op->annotations, op->span,
                         step ? CastTo(v->dtype, step) : step);
  }
  Stmt VisitStmt_(const AttrStmtNode* op) override {
    auto* iv = AsPtr<IterVarNode>(op->node);
    if (iv == nullptr) return DefRenewer::VisitStmt_(op);
    bool saved = index_;
    index_ = true;
    Range dom = IndexRange(iv->dom);
    Expr value = VisitExpr(op->value);
    index_ = saved;
    Var v = vars_.count(iv->var.get()) ? As<VarNode>(Lookup(iv->var.get())) : Renew(iv->var);
    if (value->dtype.is_int() && v->dtype.is_int()) value = CastTo(v->dtype, value);
    if (dom && v->dtype.is_int()) {
      dom = RangeNode::Make(CastTo(v->dtype, dom->min), CastTo(v->dtype, dom->extent), dom->span);
    }
    IterVar node = IterVarNode::Make(dom, v, iv->iter_type, iv->thread_tag, iv->span);
    return AttrStmtNode::Make(node, op->attr_key, value, VisitStmt(op->body), op->span);
  }
  Stmt VisitStmt_(const AllocateNode* op) override {
    bool saved = index_;
    index_ = true;
    std::vector<Expr> extents;
    for (const Expr& e : op->extents) extents.push_back(VisitExpr(e));
    index_ = saved;
    Expr condition = op->condition ? VisitExpr(op->condition) : op->condition;
    Var v = Renew(op->buffer_var);
    return AllocateNode::Make(v, op->dtype, std::move(extents), condition, VisitStmt(op->body),
                              op->annotations, op->span);
  }
  Stmt VisitStmt_(const DeclBufferNode* op) override {
    Buffer b = IndexBuffer(op->buffer);
    return DeclBufferNode::Make(b, VisitStmt(op->body), op->span);
  }
  Stmt VisitStmt_(const BlockRealizeNode* op) override {
    bool saved = index_;
    index_ = true;
    std::vector<Expr> values;
    for (const Expr& e : op->iter_values) values.push_back(VisitExpr(e));
    index_ = saved;
    Expr predicate = VisitExpr(op->predicate);
    Block block = As<BlockNode>(VisitStmt(op->block));
    // An iteration value follows its block variable's type.
    for (size_t i = 0; i < values.size() && i < block->iter_vars.size(); ++i) {
      DataType t = block->iter_vars[i]->var->dtype;
      if (values[i]->dtype.is_int() && t.is_int()) values[i] = CastTo(t, values[i]);
    }
    return BlockRealizeNode::Make(std::move(values), predicate, block, op->span);
  }
  Stmt VisitStmt_(const BlockNode* op) override {
    std::vector<IterVar> iter_vars;
    for (const IterVar& iv : op->iter_vars) {
      Range dom = IndexRange(iv->dom);
      Var v = Renew(iv->var);
      if (dom) {
        dom = RangeNode::Make(CastTo(v->dtype, dom->min), CastTo(v->dtype, dom->extent), dom->span);
      }
      iter_vars.push_back(IterVarNode::Make(dom, v, iv->iter_type, iv->thread_tag, iv->span));
    }
    std::vector<Buffer> allocs;
    for (const Buffer& b : op->alloc_buffers) allocs.push_back(IndexBuffer(b));
    std::vector<MatchBufferRegion> matches;
    for (const MatchBufferRegion& m : op->match_buffers) {
      BufferRegion source = IndexRegion(m->source);
      matches.push_back(MatchBufferRegionNode::Make(IndexBuffer(m->buffer), source, m->span));
    }
    Stmt init = op->init ? VisitStmt(op->init) : op->init;
    Stmt body = VisitStmt(op->body);
    std::vector<BufferRegion> reads, writes;
    for (const BufferRegion& r : op->reads) reads.push_back(IndexRegion(r));
    for (const BufferRegion& r : op->writes) writes.push_back(IndexRegion(r));
    return BlockNode::Make(std::move(iter_vars), std::move(reads), std::move(writes), op->name_hint,
                           body, init, std::move(allocs), std::move(matches), op->annotations,
                           op->span);
  }

 protected:
  DataType NewType(const Var& v) override {
    const DataType* t = Planned(v.get());
    return t != nullptr ? *t : v->dtype;
  }
  Buffer RemapBuffer(const Buffer& b) override {
    bool saved = index_;
    index_ = true;
    Buffer nb = DefRenewer::RemapBuffer(b);
    index_ = saved;
    return nb;
  }

 private:
  template <class N>
  Expr Binary(const N* op) {
    auto [a, b] = Pair(op->a, op->b);
    if (a == op->a && b == op->b) return GetRef(op);
    return N::Make(a, b, op->span);
  }
  /*! \brief Two operands of one operation, revisited as indices when their types came out
   *  different, then brought to the wider type. */
  std::pair<Expr, Expr> Pair(const Expr& x, const Expr& y) {
    Expr a = VisitExpr(x), b = VisitExpr(y);
    if (a->dtype != b->dtype) {
      bool saved = index_;
      index_ = true;
      a = VisitExpr(x);
      b = VisitExpr(y);
      index_ = saved;
    }
    Widen(&a, &b);
    return {a, b};
  }
  static void Widen(Expr* a, Expr* b) {
    DataType ta = (*a)->dtype, tb = (*b)->dtype;
    if (ta == tb || ta.code() != tb.code() || ta.lanes() != tb.lanes()) return;
    if (ta.bits() < tb.bits()) {
      *a = CastTo(tb, *a);
    } else {
      *b = CastTo(ta, *b);
    }
  }
  const DataType* Planned(const Object* node) const {
    auto it = plan_.find(node);
    return it == plan_.end() ? nullptr : &it->second;
  }
  Var RenewAs(const Var& v, DataType t) {
    Var fresh = VarNode::Make(v->name, t, v->span);
    vars_[v.get()] = fresh;
    return fresh;
  }
  Range IndexRange(const Range& r) {
    bool saved = index_;
    index_ = true;
    Range out = RenewRange(r);
    index_ = saved;
    return out;
  }
  BufferRegion IndexRegion(const BufferRegion& r) {
    bool saved = index_;
    index_ = true;
    BufferRegion out = Region(r);
    index_ = saved;
    // A range keeps one type: an extent narrowed beside a wide minimum is widened back.
    std::vector<Range> region;
    bool widened = false;
    for (const Range& rg : out->region) {
      Expr min = rg->min, extent = rg->extent;
      Widen(&min, &extent);
      widened = widened || min != rg->min || extent != rg->extent;
      region.push_back(RangeNode::Make(min, extent, rg->span));
    }
    if (!widened) return out;
    return BufferRegionNode::Make(out->buffer, std::move(region), out->span);
  }
  Buffer IndexBuffer(const Buffer& b) {
    bool saved = index_;
    index_ = true;
    Buffer out = DefineBuffer(b);
    index_ = saved;
    return out;
  }

  std::unordered_map<const Object*, DataType> plan_;
  bool index_ = false;  // inside an index position: planned constants and casts change here
};

}  // namespace

Pass NarrowDataType(int target_bits) {
  if (target_bits < 2 || target_bits > 64) {
    TESSERA_THROW_KIND(Span(), ErrorKind::kValue)
        << "tir.NarrowDataType: target_bits must be between 2 and 64, got " << target_bits;
  }
  auto fn = [target_bits](PrimFunc f, IRModule, const PassContext&) {
    WidthPlanner planner(target_bits);
    planner.VisitStmt(f->body);
    auto changes = planner.Changes();
    if (changes.empty()) return f;  // nothing narrows: the function itself, not a copy
    WidthRewriter rewriter(std::move(changes));
    return RenewFunction(rewriter, f);
  };
  return CreatePrimFuncPass(fn, 0, "tir.NarrowDataType");
}

}  // namespace transform
}  // namespace tessera
