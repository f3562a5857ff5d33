#include "write_nest.h"

#include "known_buffer_values.h"
#include "tessera/ir/expr_ops.h"
#include "tessera/ir/functor.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/ir/op.h"

namespace tessera {
namespace transform {

bool IsNoOp(const Stmt& s) {
  auto* e = AsPtr<EvaluateNode>(s);
  return e && (IsInstance<IntImmNode>(e->value.get()) || IsInstance<FloatImmNode>(e->value.get()));
}

Stmt NoOp(const Span& span) { return EvaluateNode::Make(Int32(0), span); }

bool HasSideEffect(const Expr& e) {
  bool effect = false;
  PostOrderVisit(e, [&effect](const ObjectRef& n) {
    auto* call = AsPtr<CallNode>(n);
    if (!call) return;
    auto* op = AsPtr<OpNode>(call->op);
    if (!op || op->effect != CallEffect::kPure) effect = true;
  });
  return effect;
}

bool MayRead(const Stmt& s, const VarNode* data) {
  bool reads = false;
  PostOrderVisit(s, [&](const ObjectRef& n) {
    if (auto* l = AsPtr<BufferLoadNode>(n)) reads = reads || l->buffer->data.get() == data;
    if (auto* c = AsPtr<CallNode>(n)) {
      auto* op = AsPtr<OpNode>(c->op);
      reads = reads || !op || op->effect != CallEffect::kPure;
      for (const Expr& a : c->args) reads = reads || UsesVar(a, data);
    }
    if (auto* l = AsPtr<LetStmtNode>(n)) reads = reads || UsesVar(l->value, data);
    if (AsPtr<BlockNode>(n) || AsPtr<BlockRealizeNode>(n) || AsPtr<WhileNode>(n) ||
        AsPtr<BufferRealizeNode>(n)) {
      reads = true;
    }
  });
  return reads;
}

bool Writes(const Stmt& s, const VarNode* data) {
  bool writes = false;
  PostOrderVisit(s, [&](const ObjectRef& n) {
    if (auto* st = AsPtr<BufferStoreNode>(n)) writes = writes || st->buffer->data.get() == data;
  });
  return writes;
}

std::optional<WriteNest> AsWriteNest(const Stmt& s, bool noop_else_allowed) {
  WriteNest w;
  Stmt cur = s;
  while (true) {
    if (auto* f = AsPtr<ForNode>(cur)) {
      if (f->for_kind == ForKind::kThreadBinding) return std::nullopt;
      w.loops.push_back(f);
      cur = f->body;
    } else if (auto* i = AsPtr<IfThenElseNode>(cur)) {
      bool else_ok = !i->else_case || (noop_else_allowed && IsNoOp(i->else_case));
      if (!else_ok || HasSideEffect(i->condition) || KnownBufferValues::ReadsBuffer(i->condition)) {
        return std::nullopt;
      }
      w.guards.push_back(i->condition);
      cur = i->then_case;
    } else {
      break;
    }
  }
  w.store = AsPtr<BufferStoreNode>(cur);
  if (!w.store || w.store->predicate) return std::nullopt;
  for (const Expr& i : w.store->indices) {
    if (!i->dtype.is_scalar() || KnownBufferValues::ReadsBuffer(i)) return std::nullopt;
  }
  return w;
}

}  // namespace transform
}  // namespace tessera
