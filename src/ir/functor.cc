// Default visitor and mutator bodies: visit children; rebuild only what changed.
#include "tessera/ir/functor.h"

namespace tessera {
namespace {

// Mutates each element; returns true when any element changed.
template <class T, class F>
bool MutateVector(const std::vector<T>& in, std::vector<T>* out, F f) {
  bool changed = false;
  out->reserve(in.size());
  for (const T& x : in) {
    T y = f(x);
    changed = changed || y != x;
    out->push_back(std::move(y));
  }
  return changed;
}

}  // namespace

// ---- Block parts shared by the statement visitor and mutator ----
namespace {

template <class F>
void VisitRegion(const BufferRegion& r, F visit_expr) {
  for (const Range& range : r->region) {
    visit_expr(range->min);
    visit_expr(range->extent);
  }
}

template <class F>
Range MutateRange(const Range& r, F mutate_expr) {
  Expr m = mutate_expr(r->min), e = mutate_expr(r->extent);
  if (m == r->min && e == r->extent) return r;
  return RangeNode::Make(m, e, r->span);
}

template <class F>
BufferRegion MutateRegion(const BufferRegion& r, F mutate_expr) {
  std::vector<Range> region;
  if (!MutateVector(r->region, &region,
                    [&](const Range& x) { return MutateRange(x, mutate_expr); })) {
    return r;
  }
  return BufferRegionNode::Make(r->buffer, std::move(region), r->span);
}

}  // namespace

// ---- ExprVisitor ----
void ExprVisitor::VisitExpr_(const IntImmNode*) {}
void ExprVisitor::VisitExpr_(const FloatImmNode*) {}
void ExprVisitor::VisitExpr_(const StringImmNode*) {}
void ExprVisitor::VisitExpr_(const VarNode*) {}
void ExprVisitor::VisitExpr_(const SizeVarNode*) {}
void ExprVisitor::VisitExpr_(const CastNode* op) { VisitExpr(op->value); }
#define TESSERA_VISIT_BINARY(name)                         \
  void ExprVisitor::VisitExpr_(const name##Node* op) {     \
    VisitExpr(op->a);                                      \
    VisitExpr(op->b);                                      \
  }
TESSERA_BINARY_NODES(TESSERA_VISIT_BINARY)
#undef TESSERA_VISIT_BINARY
void ExprVisitor::VisitExpr_(const NotNode* op) { VisitExpr(op->a); }
void ExprVisitor::VisitExpr_(const SelectNode* op) {
  VisitExpr(op->condition);
  VisitExpr(op->true_value);
  VisitExpr(op->false_value);
}
void ExprVisitor::VisitExpr_(const RampNode* op) {
  VisitExpr(op->base);
  VisitExpr(op->stride);
}
void ExprVisitor::VisitExpr_(const BroadcastNode* op) { VisitExpr(op->value); }
void ExprVisitor::VisitExpr_(const ShuffleNode* op) {
  for (const Expr& v : op->vectors) VisitExpr(v);
  for (const Expr& i : op->indices) VisitExpr(i);
}
void ExprVisitor::VisitExpr_(const LetNode* op) {
  VisitExpr(op->value);
  VisitExpr(op->var);
  VisitExpr(op->body);
}
void ExprVisitor::VisitExpr_(const CallNode* op) {
  for (const Expr& a : op->args) VisitExpr(a);
}
void ExprVisitor::VisitExpr_(const BufferLoadNode* op) {
  for (const Expr& i : op->indices) VisitExpr(i);
  if (op->predicate) VisitExpr(op->predicate);
}

// ---- ExprMutator ----
Expr ExprMutator::VisitExpr_(const IntImmNode* op) { return GetRef(op); }
Expr ExprMutator::VisitExpr_(const FloatImmNode* op) { return GetRef(op); }
Expr ExprMutator::VisitExpr_(const StringImmNode* op) { return GetRef(op); }
Expr ExprMutator::VisitExpr_(const VarNode* op) { return GetRef(op); }
Expr ExprMutator::VisitExpr_(const SizeVarNode* op) { return GetRef(op); }
Expr ExprMutator::VisitExpr_(const CastNode* op) {
  Expr v = VisitExpr(op->value);
  if (v == op->value) return GetRef(op);
  return CastNode::Make(op->dtype, v, op->span);
}
#define TESSERA_MUTATE_BINARY(name)                                  \
  Expr ExprMutator::VisitExpr_(const name##Node* op) {               \
    Expr a = VisitExpr(op->a);                                       \
    Expr b = VisitExpr(op->b);                                       \
    if (a == op->a && b == op->b) return GetRef(op);                 \
    return name##Node::Make(a, b, op->span);                         \
  }
TESSERA_BINARY_NODES(TESSERA_MUTATE_BINARY)
#undef TESSERA_MUTATE_BINARY
Expr ExprMutator::VisitExpr_(const NotNode* op) {
  Expr a = VisitExpr(op->a);
  if (a == op->a) return GetRef(op);
  return NotNode::Make(a, op->span);
}
Expr ExprMutator::VisitExpr_(const SelectNode* op) {
  Expr c = VisitExpr(op->condition), t = VisitExpr(op->true_value), f = VisitExpr(op->false_value);
  if (c == op->condition && t == op->true_value && f == op->false_value) return GetRef(op);
  return SelectNode::Make(c, t, f, op->span);
}
Expr ExprMutator::VisitExpr_(const RampNode* op) {
  Expr b = VisitExpr(op->base), s = VisitExpr(op->stride);
  if (b == op->base && s == op->stride) return GetRef(op);
  return RampNode::Make(b, s, op->lanes, op->span);
}
Expr ExprMutator::VisitExpr_(const BroadcastNode* op) {
  Expr v = VisitExpr(op->value);
  if (v == op->value) return GetRef(op);
  return BroadcastNode::Make(v, op->lanes, op->span);
}
Expr ExprMutator::VisitExpr_(const ShuffleNode* op) {
  std::vector<Expr> vs, is;
  bool c1 = MutateVector(op->vectors, &vs, [this](const Expr& e) { return VisitExpr(e); });
  bool c2 = MutateVector(op->indices, &is, [this](const Expr& e) { return VisitExpr(e); });
  if (!c1 && !c2) return GetRef(op);
  return ShuffleNode::Make(std::move(vs), std::move(is), op->span);
}
Expr ExprMutator::VisitExpr_(const LetNode* op) {
  Expr v = VisitExpr(op->value), b = VisitExpr(op->body);
  if (v == op->value && b == op->body) return GetRef(op);
  return LetNode::Make(op->var, v, b, op->span);
}
Expr ExprMutator::VisitExpr_(const CallNode* op) {
  std::vector<Expr> args;
  if (!MutateVector(op->args, &args, [this](const Expr& e) { return VisitExpr(e); })) {
    return GetRef(op);
  }
  return CallNode::Make(op->dtype, op->op, std::move(args), op->span);
}
Expr ExprMutator::VisitExpr_(const BufferLoadNode* op) {
  std::vector<Expr> idx;
  bool changed = MutateVector(op->indices, &idx, [this](const Expr& e) { return VisitExpr(e); });
  Expr pred = op->predicate ? VisitExpr(op->predicate) : nullptr;
  if (!changed && pred == op->predicate) return GetRef(op);
  return BufferLoadNode::Make(op->buffer, std::move(idx), pred, op->span);
}

// ---- StmtVisitor ----
void StmtVisitor::VisitStmt_(const LetStmtNode* op) {
  VisitExpr(op->value);
  VisitStmt(op->body);
}
void StmtVisitor::VisitStmt_(const AttrStmtNode* op) {
  VisitExpr(op->value);
  VisitStmt(op->body);
}
void StmtVisitor::VisitStmt_(const AssertStmtNode* op) {
  VisitExpr(op->condition);
  VisitExpr(op->message);
  VisitStmt(op->body);
}
void StmtVisitor::VisitStmt_(const BufferStoreNode* op) {
  VisitExpr(op->value);
  for (const Expr& i : op->indices) VisitExpr(i);
  if (op->predicate) VisitExpr(op->predicate);
}
void StmtVisitor::VisitStmt_(const AllocateNode* op) {
  for (const Expr& e : op->extents) VisitExpr(e);
  VisitExpr(op->condition);
  VisitStmt(op->body);
}
void StmtVisitor::VisitStmt_(const AllocateConstNode* op) {
  for (const Expr& e : op->extents) VisitExpr(e);
  VisitStmt(op->body);
}
void StmtVisitor::VisitStmt_(const DeclBufferNode* op) { VisitStmt(op->body); }
void StmtVisitor::VisitStmt_(const ForNode* op) {
  VisitExpr(op->min);
  VisitExpr(op->extent);
  if (op->step) VisitExpr(op->step);
  VisitStmt(op->body);
}
void StmtVisitor::VisitStmt_(const BufferRealizeNode* op) {
  for (const Range& r : op->bounds) {
    VisitExpr(r->min);
    VisitExpr(r->extent);
  }
  VisitExpr(op->condition);
  VisitStmt(op->body);
}
void StmtVisitor::VisitStmt_(const WhileNode* op) {
  VisitExpr(op->condition);
  VisitStmt(op->body);
}
void StmtVisitor::VisitStmt_(const IfThenElseNode* op) {
  VisitExpr(op->condition);
  VisitStmt(op->then_case);
  if (op->else_case) VisitStmt(op->else_case);
}
void StmtVisitor::VisitStmt_(const SeqStmtNode* op) {
  for (const Stmt& s : op->seq) VisitStmt(s);
}
void StmtVisitor::VisitStmt_(const EvaluateNode* op) { VisitExpr(op->value); }
void StmtVisitor::VisitStmt_(const BlockNode* op) {
  auto visit_expr = [this](const Expr& e) { VisitExpr(e); };
  for (const IterVar& iv : op->iter_vars) {
    VisitExpr(iv->dom->min);
    VisitExpr(iv->dom->extent);
  }
  for (const BufferRegion& r : op->reads) VisitRegion(r, visit_expr);
  for (const BufferRegion& r : op->writes) VisitRegion(r, visit_expr);
  for (const MatchBufferRegion& m : op->match_buffers) VisitRegion(m->source, visit_expr);
  if (op->init) VisitStmt(op->init);
  VisitStmt(op->body);
}
void StmtVisitor::VisitStmt_(const BlockRealizeNode* op) {
  for (const Expr& v : op->iter_values) VisitExpr(v);
  VisitExpr(op->predicate);
  VisitStmt(op->block);
}

// ---- StmtMutator ----
Stmt StmtMutator::VisitStmt_(const LetStmtNode* op) {
  Expr v = VisitExpr(op->value);
  Stmt b = VisitStmt(op->body);
  if (v == op->value && b == op->body) return GetRef(op);
  return LetStmtNode::Make(op->var, v, b, op->span);
}
Stmt StmtMutator::VisitStmt_(const AttrStmtNode* op) {
  Expr v = VisitExpr(op->value);
  Stmt b = VisitStmt(op->body);
  if (v == op->value && b == op->body) return GetRef(op);
  return AttrStmtNode::Make(op->node, op->attr_key, v, b, op->span);
}
Stmt StmtMutator::VisitStmt_(const AssertStmtNode* op) {
  Expr c = VisitExpr(op->condition), m = VisitExpr(op->message);
  Stmt b = VisitStmt(op->body);
  if (c == op->condition && m == op->message && b == op->body) return GetRef(op);
  return AssertStmtNode::Make(c, m, b, op->span);
}
Stmt StmtMutator::VisitStmt_(const BufferStoreNode* op) {
  Expr v = VisitExpr(op->value);
  std::vector<Expr> idx;
  bool changed = MutateVector(op->indices, &idx, [this](const Expr& e) { return VisitExpr(e); });
  Expr pred = op->predicate ? VisitExpr(op->predicate) : nullptr;
  if (v == op->value && !changed && pred == op->predicate) return GetRef(op);
  return BufferStoreNode::Make(op->buffer, v, std::move(idx), pred, op->span);
}
Stmt StmtMutator::VisitStmt_(const AllocateNode* op) {
  std::vector<Expr> ext;
  bool changed = MutateVector(op->extents, &ext, [this](const Expr& e) { return VisitExpr(e); });
  Expr c = VisitExpr(op->condition);
  Stmt b = VisitStmt(op->body);
  if (!changed && c == op->condition && b == op->body) return GetRef(op);
  return AllocateNode::Make(op->buffer_var, op->dtype, std::move(ext), c, b, op->annotations,
                            op->span);
}
Stmt StmtMutator::VisitStmt_(const AllocateConstNode* op) {
  std::vector<Expr> ext;
  bool changed = MutateVector(op->extents, &ext, [this](const Expr& e) { return VisitExpr(e); });
  Stmt b = VisitStmt(op->body);
  if (!changed && b == op->body) return GetRef(op);
  return AllocateConstNode::Make(op->buffer_var, op->dtype, std::move(ext), op->data, b,
                                 op->annotations, op->span);
}
Stmt StmtMutator::VisitStmt_(const DeclBufferNode* op) {
  Stmt b = VisitStmt(op->body);
  if (b == op->body) return GetRef(op);
  return DeclBufferNode::Make(op->buffer, b, op->span);
}
Stmt StmtMutator::VisitStmt_(const ForNode* op) {
  Expr m = VisitExpr(op->min), e = VisitExpr(op->extent);
  Expr st = op->step ? VisitExpr(op->step) : op->step;
  Stmt b = VisitStmt(op->body);
  if (m == op->min && e == op->extent && st == op->step && b == op->body) return GetRef(op);
  return ForNode::Make(op->loop_var, m, e, op->for_kind, b, op->thread_binding, op->annotations,
                       op->span, st);
}
Stmt StmtMutator::VisitStmt_(const BufferRealizeNode* op) {
  bool changed = false;
  std::vector<Range> bounds;
  for (const Range& r : op->bounds) {
    Expr m = VisitExpr(r->min), e = VisitExpr(r->extent);
    changed = changed || m != r->min || e != r->extent;
    bounds.push_back(m == r->min && e == r->extent ? r : RangeNode::Make(m, e));
  }
  Expr c = VisitExpr(op->condition);
  Stmt b = VisitStmt(op->body);
  if (!changed && c == op->condition && b == op->body) return GetRef(op);
  return BufferRealizeNode::Make(op->buffer, std::move(bounds), c, b, op->span);
}
Stmt StmtMutator::VisitStmt_(const WhileNode* op) {
  Expr c = VisitExpr(op->condition);
  Stmt b = VisitStmt(op->body);
  if (c == op->condition && b == op->body) return GetRef(op);
  return WhileNode::Make(c, b, op->span);
}
Stmt StmtMutator::VisitStmt_(const IfThenElseNode* op) {
  Expr c = VisitExpr(op->condition);
  Stmt t = VisitStmt(op->then_case);
  Stmt e = op->else_case ? VisitStmt(op->else_case) : nullptr;
  if (c == op->condition && t == op->then_case && e == op->else_case) return GetRef(op);
  return IfThenElseNode::Make(c, t, e, op->span);
}
Stmt StmtMutator::VisitStmt_(const SeqStmtNode* op) {
  std::vector<Stmt> seq;
  if (!MutateVector(op->seq, &seq, [this](const Stmt& s) { return VisitStmt(s); })) {
    return GetRef(op);
  }
  return SeqStmtNode::Flatten(seq, op->span);
}
Stmt StmtMutator::VisitStmt_(const EvaluateNode* op) {
  Expr v = VisitExpr(op->value);
  if (v == op->value) return GetRef(op);
  return EvaluateNode::Make(v, op->span);
}
Stmt StmtMutator::VisitStmt_(const BlockNode* op) {
  auto mutate_expr = [this](const Expr& e) { return VisitExpr(e); };
  std::vector<IterVar> iter_vars;
  bool changed = MutateVector(op->iter_vars, &iter_vars, [&](const IterVar& iv) {
    Range dom = MutateRange(iv->dom, mutate_expr);
    if (dom == iv->dom) return iv;
    return IterVarNode::Make(dom, iv->var, iv->iter_type, iv->thread_tag, iv->span);
  });
  std::vector<BufferRegion> reads, writes;
  auto mutate_region = [&](const BufferRegion& r) { return MutateRegion(r, mutate_expr); };
  changed = MutateVector(op->reads, &reads, mutate_region) || changed;
  changed = MutateVector(op->writes, &writes, mutate_region) || changed;
  std::vector<MatchBufferRegion> match_buffers;
  changed = MutateVector(op->match_buffers, &match_buffers,
                         [&](const MatchBufferRegion& m) {
                           BufferRegion source = MutateRegion(m->source, mutate_expr);
                           if (source == m->source) return m;
                           return MatchBufferRegionNode::Make(m->buffer, source, m->span);
                         }) ||
            changed;
  Stmt init = op->init ? VisitStmt(op->init) : nullptr;
  Stmt body = VisitStmt(op->body);
  if (!changed && init == op->init && body == op->body) return GetRef(op);
  return BlockNode::Make(std::move(iter_vars), std::move(reads), std::move(writes), op->name_hint,
                         body, init, op->alloc_buffers, std::move(match_buffers), op->annotations,
                         op->span);
}
Stmt StmtMutator::VisitStmt_(const BlockRealizeNode* op) {
  std::vector<Expr> values;
  bool changed =
      MutateVector(op->iter_values, &values, [this](const Expr& e) { return VisitExpr(e); });
  Expr predicate = VisitExpr(op->predicate);
  Stmt block = VisitStmt(op->block);
  if (!changed && predicate == op->predicate && block == op->block) return GetRef(op);
  Block new_block = As<BlockNode>(block);
  if (!new_block) throw InternalError("StmtMutator: a block was mutated into a non-block");
  return BlockRealizeNode::Make(std::move(values), predicate, new_block, op->span);
}

// ---- PostOrderVisit ----
namespace {
class PostOrderVisitor : public StmtExprVisitor {
 public:
  explicit PostOrderVisitor(const std::function<void(const ObjectRef&)>& f) : f_(f) {}
  void VisitExpr(const Expr& e) override {
    StmtExprVisitor::VisitExpr(e);
    f_(e);
  }
  void VisitStmt(const Stmt& s) override {
    StmtExprVisitor::VisitStmt(s);
    f_(s);
  }

 private:
  const std::function<void(const ObjectRef&)>& f_;
};
}  // namespace

void PostOrderVisit(const Stmt& stmt, const std::function<void(const ObjectRef&)>& f) {
  PostOrderVisitor(f).VisitStmt(stmt);
}
void PostOrderVisit(const Expr& expr, const std::function<void(const ObjectRef&)>& f) {
  PostOrderVisitor(f).VisitExpr(expr);
}

}  // namespace tessera
