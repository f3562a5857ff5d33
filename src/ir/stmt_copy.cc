// Statement copies: a deep copy with fresh bound variables, a parent rebuilt around one new child,
// and the field exchange behind copy-on-write of nodes nobody else holds.
#include <unordered_map>

#include "tessera/ir/ir_utils.h"
#include "tessera/support/error.h"

namespace tessera {
namespace {

// A new node of the same kind with the same fields (children shared).
Stmt ShallowCopy(const StmtNode* s) {
  switch (s->kind) {
    case NodeKind::kLetStmt: {
      auto* op = static_cast<const LetStmtNode*>(s);
      return LetStmtNode::Make(op->var, op->value, op->body, op->span);
    }
    case NodeKind::kAttrStmt: {
      auto* op = static_cast<const AttrStmtNode*>(s);
      return AttrStmtNode::Make(op->node, op->attr_key, op->value, op->body, op->span);
    }
    case NodeKind::kAssertStmt: {
      auto* op = static_cast<const AssertStmtNode*>(s);
      return AssertStmtNode::Make(op->condition, op->message, op->body, op->span);
    }
    case NodeKind::kBufferStore: {
      auto* op = static_cast<const BufferStoreNode*>(s);
      return BufferStoreNode::Make(op->buffer, op->value, op->indices, op->predicate, op->span);
    }
    case NodeKind::kAllocate: {
      auto* op = static_cast<const AllocateNode*>(s);
      return AllocateNode::Make(op->buffer_var, op->dtype, op->extents, op->condition, op->body,
                                op->annotations, op->span);
    }
    case NodeKind::kAllocateConst: {
      auto* op = static_cast<const AllocateConstNode*>(s);
      return AllocateConstNode::Make(op->buffer_var, op->dtype, op->extents, op->data, op->body,
                                     op->annotations, op->span);
    }
    case NodeKind::kDeclBuffer: {
      auto* op = static_cast<const DeclBufferNode*>(s);
      return DeclBufferNode::Make(op->buffer, op->body, op->span);
    }
    case NodeKind::kFor: {
      auto* op = static_cast<const ForNode*>(s);
      return ForNode::Make(op->loop_var, op->min, op->extent, op->for_kind, op->body,
                           op->thread_binding, op->annotations, op->span, op->step);
    }
    case NodeKind::kBufferRealize: {
      auto* op = static_cast<const BufferRealizeNode*>(s);
      return BufferRealizeNode::Make(op->buffer, op->bounds, op->condition, op->body, op->span);
    }
    case NodeKind::kWhile: {
      auto* op = static_cast<const WhileNode*>(s);
      return WhileNode::Make(op->condition, op->body, op->span);
    }
    case NodeKind::kIfThenElse: {
      auto* op = static_cast<const IfThenElseNode*>(s);
      return IfThenElseNode::Make(op->condition, op->then_case, op->else_case, op->span);
    }
    case NodeKind::kSeqStmt: {
      auto* op = static_cast<const SeqStmtNode*>(s);
      return SeqStmtNode::Make(op->seq, op->span);
    }
    case NodeKind::kEvaluate: {
      auto* op = static_cast<const EvaluateNode*>(s);
      return EvaluateNode::Make(op->value, op->span);
    }
    case NodeKind::kBlock: {
      auto* op = static_cast<const BlockNode*>(s);
      return BlockNode::Make(op->iter_vars, op->reads, op->writes, op->name_hint, op->body,
                             op->init, op->alloc_buffers, op->match_buffers, op->annotations,
                             op->span);
    }
    case NodeKind::kBlockRealize: {
      auto* op = static_cast<const BlockRealizeNode*>(s);
      return BlockRealizeNode::Make(op->iter_values, op->predicate, op->block, op->span);
    }
    default:
      break;
  }
  throw InternalError(std::string("ShallowCopy: not a statement kind: ") + NodeKindName(s->kind));
}

Var FreshVar(const Var& v) {
  if (v->kind == NodeKind::kSizeVar) return SizeVarNode::Make(v->name, v->dtype, v->span);
  auto fresh = VarNode::Make(v->name, v->dtype, v->span);
  fresh->pointer = v->pointer;  // a new node nobody else sees yet
  return fresh;
}

// Every statement rebuilt; the variables bound inside (loops, block iterators, LetStmt) renewed.
class StmtCopier : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;

  Stmt VisitStmt(const Stmt& s) override {
    if (!s) return s;
    Stmt result = StmtExprMutator::VisitStmt(s);
    return result == s ? ShallowCopy(s.get()) : result;
  }
  Expr VisitExpr_(const VarNode* op) override { return Lookup(op); }
  Expr VisitExpr_(const SizeVarNode* op) override { return Lookup(op); }

  Stmt VisitStmt_(const ForNode* op) override {
    Var v = Bind(op->loop_var);
    IterVar binding = op->thread_binding;
    if (binding && binding->var == op->loop_var) {
      binding = IterVarNode::Make(binding->dom, v, binding->iter_type, binding->thread_tag,
                                  binding->span);
    }
    Expr step = op->step ? VisitExpr(op->step) : op->step;
    return ForNode::Make(v, VisitExpr(op->min), VisitExpr(op->extent), op->for_kind,
                         VisitStmt(op->body), binding, op->annotations, op->span, step);
  }
  Stmt VisitStmt_(const LetStmtNode* op) override {
    Expr value = VisitExpr(op->value);
    Var v = Bind(op->var);
    return LetStmtNode::Make(v, value, VisitStmt(op->body), op->span);
  }
  Stmt VisitStmt_(const BlockNode* op) override {
    std::vector<IterVar> iter_vars;
    for (const IterVar& iv : op->iter_vars) {
      Range dom =
          iv->dom ? RangeNode::Make(VisitExpr(iv->dom->min), VisitExpr(iv->dom->extent)) : iv->dom;
      iter_vars.push_back(
          IterVarNode::Make(dom, Bind(iv->var), iv->iter_type, iv->thread_tag, iv->span));
    }
    // The regions, match_buffers, init and body are rewritten by the base mutator over the block
    // whose iterators are renewed.
    Stmt rest = StmtExprMutator::VisitStmt_(op);
    auto* block = AsPtr<BlockNode>(rest);
    return BlockNode::Make(std::move(iter_vars), block->reads, block->writes, block->name_hint,
                           block->body, block->init, block->alloc_buffers, block->match_buffers,
                           block->annotations, block->span);
  }

 private:
  Var Bind(const Var& v) {
    Var fresh = FreshVar(v);
    vmap_[v.get()] = fresh;
    return fresh;
  }
  Expr Lookup(const VarNode* op) {
    auto it = vmap_.find(op);
    return it == vmap_.end() ? GetRef(op) : it->second;
  }
  VarMap vmap_;
};

// Rebuilds one node with one direct child replaced (no deeper visit).
class ChildReplacer : public StmtMutator {
 public:
  ChildReplacer(const StmtNode* old_child, Stmt new_child)
      : old_(old_child), new_(std::move(new_child)) {}
  bool found = false;
  Stmt Rebuild(const StmtNode* parent) { return StmtMutator::VisitStmt(GetRef(parent)); }
  Stmt VisitStmt(const Stmt& s) override {
    if (s.get() != old_) return s;
    found = true;
    return new_;
  }

 private:
  const StmtNode* old_;
  Stmt new_;
};

}  // namespace

Stmt CopyStmt(const Stmt& s) {
  if (!s) return s;
  return StmtCopier().VisitStmt(s);
}

Stmt WithChildReplaced(const StmtNode* parent, const StmtNode* old_child, const Stmt& new_child) {
  ChildReplacer replacer(old_child, new_child);
  Stmt result = replacer.Rebuild(parent);
  TESSERA_ICHECK(replacer.found) << "WithChildReplaced: the statement is not a direct child of its "
                                 << NodeKindName(parent->kind);
  return result;
}

void SwapStmtFields(StmtNode* a, StmtNode* b) {
  TESSERA_ICHECK(a->kind == b->kind)
      << "SwapStmtFields: a " << NodeKindName(a->kind) << " and a " << NodeKindName(b->kind);
  using std::swap;
  swap(a->span, b->span);
  switch (a->kind) {
    case NodeKind::kLetStmt: {
      auto *x = static_cast<LetStmtNode*>(a), *y = static_cast<LetStmtNode*>(b);
      swap(x->var, y->var), swap(x->value, y->value), swap(x->body, y->body);
      return;
    }
    case NodeKind::kAttrStmt: {
      auto *x = static_cast<AttrStmtNode*>(a), *y = static_cast<AttrStmtNode*>(b);
      swap(x->node, y->node), swap(x->attr_key, y->attr_key), swap(x->value, y->value);
      swap(x->body, y->body);
      return;
    }
    case NodeKind::kAssertStmt: {
      auto *x = static_cast<AssertStmtNode*>(a), *y = static_cast<AssertStmtNode*>(b);
      swap(x->condition, y->condition), swap(x->message, y->message), swap(x->body, y->body);
      return;
    }
    case NodeKind::kBufferStore: {
      auto *x = static_cast<BufferStoreNode*>(a), *y = static_cast<BufferStoreNode*>(b);
      swap(x->buffer, y->buffer), swap(x->value, y->value), swap(x->indices, y->indices);
      swap(x->predicate, y->predicate);
      return;
    }
    case NodeKind::kAllocate: {
      auto *x = static_cast<AllocateNode*>(a), *y = static_cast<AllocateNode*>(b);
      swap(x->buffer_var, y->buffer_var), swap(x->dtype, y->dtype), swap(x->extents, y->extents);
      swap(x->condition, y->condition), swap(x->body, y->body);
      swap(x->annotations, y->annotations);
      return;
    }
    case NodeKind::kAllocateConst: {
      auto *x = static_cast<AllocateConstNode*>(a), *y = static_cast<AllocateConstNode*>(b);
      swap(x->buffer_var, y->buffer_var), swap(x->dtype, y->dtype), swap(x->extents, y->extents);
      swap(x->data, y->data), swap(x->body, y->body), swap(x->annotations, y->annotations);
      return;
    }
    case NodeKind::kDeclBuffer: {
      auto *x = static_cast<DeclBufferNode*>(a), *y = static_cast<DeclBufferNode*>(b);
      swap(x->buffer, y->buffer), swap(x->body, y->body);
      return;
    }
    case NodeKind::kFor: {
      auto *x = static_cast<ForNode*>(a), *y = static_cast<ForNode*>(b);
      swap(x->loop_var, y->loop_var), swap(x->min, y->min), swap(x->extent, y->extent);
      swap(x->for_kind, y->for_kind), swap(x->body, y->body);
      swap(x->thread_binding, y->thread_binding), swap(x->annotations, y->annotations);
      return;
    }
    case NodeKind::kBufferRealize: {
      auto *x = static_cast<BufferRealizeNode*>(a), *y = static_cast<BufferRealizeNode*>(b);
      swap(x->buffer, y->buffer), swap(x->bounds, y->bounds);
      swap(x->condition, y->condition), swap(x->body, y->body);
      return;
    }
    case NodeKind::kWhile: {
      auto *x = static_cast<WhileNode*>(a), *y = static_cast<WhileNode*>(b);
      swap(x->condition, y->condition), swap(x->body, y->body);
      return;
    }
    case NodeKind::kIfThenElse: {
      auto *x = static_cast<IfThenElseNode*>(a), *y = static_cast<IfThenElseNode*>(b);
      swap(x->condition, y->condition), swap(x->then_case, y->then_case);
      swap(x->else_case, y->else_case);
      return;
    }
    case NodeKind::kSeqStmt: {
      auto *x = static_cast<SeqStmtNode*>(a), *y = static_cast<SeqStmtNode*>(b);
      swap(x->seq, y->seq);
      return;
    }
    case NodeKind::kEvaluate: {
      auto *x = static_cast<EvaluateNode*>(a), *y = static_cast<EvaluateNode*>(b);
      swap(x->value, y->value);
      return;
    }
    case NodeKind::kBlock: {
      auto *x = static_cast<BlockNode*>(a), *y = static_cast<BlockNode*>(b);
      swap(x->iter_vars, y->iter_vars), swap(x->reads, y->reads), swap(x->writes, y->writes);
      swap(x->name_hint, y->name_hint), swap(x->body, y->body), swap(x->init, y->init);
      swap(x->alloc_buffers, y->alloc_buffers), swap(x->match_buffers, y->match_buffers);
      swap(x->annotations, y->annotations);
      return;
    }
    case NodeKind::kBlockRealize: {
      auto *x = static_cast<BlockRealizeNode*>(a), *y = static_cast<BlockRealizeNode*>(b);
      swap(x->iter_values, y->iter_values), swap(x->predicate, y->predicate);
      swap(x->block, y->block);
      return;
    }
    default:
      break;
  }
  throw InternalError(std::string("SwapStmtFields: not a statement kind: ") +
                      NodeKindName(a->kind));
}

}  // namespace tessera
