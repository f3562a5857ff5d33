// tir.ForceNarrowIndexToInt32: every 64-bit integer of a function's index arithmetic (parameters,
// loop and block variables, buffer shapes, constants, casts) becomes 32-bit, as TVM's pass of
// this name does. A buffer of int64 elements is refused: its values, not only its indices, would
// be narrowed.
#include <limits>

#include "def_renewer.h"
#include "tessera/support/error.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace transform {
namespace {

DataType Narrow(DataType t) {
  return t.is_int() && t.bits() == 64 ? DataType(DataType::kInt, 32, t.raw_lanes()) : t;
}

class IndexNarrower : public DefRenewer {
 public:
  using DefRenewer::VisitExpr_;
  using DefRenewer::VisitStmt_;

  Expr VisitExpr_(const IntImmNode* op) override {
    if (Narrow(op->dtype) == op->dtype) return GetRef(op);
    if (op->value < std::numeric_limits<int32_t>::min() ||
        op->value > std::numeric_limits<int32_t>::max()) {
      TESSERA_THROW_KIND(op->span, ErrorKind::kValue)
          << "tir.ForceNarrowIndexToInt32: the constant " << op->value
          << " does not fit in int32, so this function's indices cannot be narrowed";
    }
    return MakeConst(Narrow(op->dtype), op->value, op->span);
  }
  Expr VisitExpr_(const CastNode* op) override {
    Expr value = VisitExpr(op->value);
    DataType t = Narrow(op->dtype);
    if (value->dtype == t) return value;  // int64(i) of an index that is now int32
    if (value == op->value && t == op->dtype) return GetRef(op);
    return CastNode::Make(t, value, op->span);
  }
  Expr VisitExpr_(const CallNode* op) override {
    Expr e = DefRenewer::VisitExpr_(op);
    auto* call = AsPtr<CallNode>(e);
    DataType t = Narrow(call->dtype);
    if (t != call->dtype) e = CallNode::Make(t, call->op, call->args, call->span);
    // clz counts the leading zeros of its argument's width: clz64(x) = clz32(x) - 32 + 64.
    if (call->is_op("tir.clz") && op->args.size() == 1 && op->args[0]->dtype.bits() == 64 &&
        call->args[0]->dtype.bits() == 32) {
      DataType rt = e->dtype;
      e = AddNode::Make(SubNode::Make(e, MakeConst(rt, int64_t{32}), op->span),
                        MakeConst(rt, int64_t{64}), op->span);
    }
    return e;
  }
  Expr VisitExpr_(const LetNode* op) override {
    Expr value = VisitExpr(op->value);
    Var v = Renew(op->var);
    return LetNode::Make(v, value, VisitExpr(op->body), op->span);
  }
  Stmt VisitStmt_(const ForNode* op) override {
    // A thread binding's own variable is not defined by the loop: narrow it here.
    if (op->thread_binding && vars_.count(op->thread_binding->var.get()) == 0 &&
        Narrow(op->thread_binding->var->dtype) != op->thread_binding->var->dtype) {
      Renew(op->thread_binding->var);
    }
    return DefRenewer::VisitStmt_(op);
  }
  Stmt VisitStmt_(const AttrStmtNode* op) override {
    auto* iv = AsPtr<IterVarNode>(op->node);
    if (iv == nullptr) return DefRenewer::VisitStmt_(op);
    Range dom = iv->dom ? RangeNode::Make(VisitExpr(iv->dom->min), VisitExpr(iv->dom->extent),
                                          iv->dom->span)
                        : iv->dom;
    IterVar node = IterVarNode::Make(dom, As<VarNode>(Lookup(iv->var.get())), iv->iter_type,
                                     iv->thread_tag, iv->span);
    return AttrStmtNode::Make(node, op->attr_key, VisitExpr(op->value), VisitStmt(op->body),
                              op->span);
  }

 protected:
  DataType NewType(const Var& v) override { return Narrow(v->dtype); }
};

void RefuseInt64Buffer(const Buffer& b, const Span& where) {
  if (Narrow(b->dtype) == b->dtype) return;
  TESSERA_THROW_KIND(where.defined() ? where : b->span, ErrorKind::kValue)
      << "tir.ForceNarrowIndexToInt32: buffer " << b->name << " holds " << b->dtype.ToString()
      << " values; only indices can be narrowed to int32, not the data of a buffer";
}

PrimFunc ForceNarrowIndexToInt32Func(PrimFunc f, IRModule, const PassContext&) {
  for (const auto& [param, buffer] : f->buffer_map) RefuseInt64Buffer(buffer, f->span);
  PostOrderVisit(f->body, [](const ObjectRef& n) {
    if (auto* load = AsPtr<BufferLoadNode>(n)) {
      RefuseInt64Buffer(load->buffer, load->span);
    } else if (auto* store = AsPtr<BufferStoreNode>(n)) {
      RefuseInt64Buffer(store->buffer, store->span);
    } else if (auto* block = AsPtr<BlockNode>(n)) {
      for (const Buffer& b : block->alloc_buffers) RefuseInt64Buffer(b, block->span);
    }
  });
  IndexNarrower narrower;
  return RenewFunction(narrower, f);
}

}  // namespace

Pass ForceNarrowIndexToInt32() {
  return CreatePrimFuncPass(ForceNarrowIndexToInt32Func, 0, "tir.ForceNarrowIndexToInt32");
}
TESSERA_REGISTER_PASS("tir.ForceNarrowIndexToInt32", ForceNarrowIndexToInt32);

}  // namespace transform
}  // namespace tessera
