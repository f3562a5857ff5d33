// tir.InjectVirtualThread (Apache TVM v0.23's rules): each attr(iv, "virtual_thread", n) goes
// away, its body running once per virtual thread.
//
// First, which variables depend on the virtual thread variable v: v itself, then (to a fixed
// point) every buffer stored with a value or index that reads one, every let or loop variable whose
// value or bounds read one, every allocation whose extent reads one, and every buffer an opaque
// call (tvm_access_ptr with the write bit) may write when the call reads one.
//
// Then each allocation inside the attribute that depends on v gets one copy per virtual thread
// (its flat extent times n, the copies side by side; accesses add v * extent to the index, and
// tvm_access_ptr offsets v * extent / lanes). A "cthread" (any tag not starting with "vthread")
// never shares: every allocation is copied, every store and call is a point where the body is
// repeated, and tvm_context_id() becomes v.
//
// The body is repeated at the outermost statement that depends on v (or, for "cthread", a store
// or call): unrolled with v = 0..n-1 when no loop is below that point and n < 16, otherwise as a
// serial loop `<v>.s` over n. Definitions repeated this way are renamed (tir.ConvertSSA).
#include <unordered_map>
#include <unordered_set>

#include "tessera/arith/analyzer.h"
#include "tessera/ir/functor.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/support/error.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace transform {
namespace {

using VarSet = std::unordered_set<const VarNode*>;

// Whether an expression (or statement) reads a touched variable; also the variables it reads
// before that, and the buffers an opaque call may write.
class TouchScan : public StmtExprVisitor {
 public:
  using StmtExprVisitor::VisitExpr_;
  TouchScan(const VarSet& touched, bool check_write)
      : touched_(touched), check_write_(check_write) {}

  void VisitExpr(const Expr& e) override {
    if (touched && !check_write_) return;
    StmtExprVisitor::VisitExpr(e);
  }
  void VisitExpr_(const BufferLoadNode* op) override {
    Use(op->buffer->data.get());
    StmtExprVisitor::VisitExpr_(op);
  }
  void VisitExpr_(const VarNode* op) override { Use(op); }
  void VisitExpr_(const CallNode* op) override {
    if (op->is_op("tir.tvm_access_ptr") && op->args.size() == 5) {
      auto* data = AsPtr<VarNode>(op->args[1]);
      auto mask = AsConstInt(op->args[4]);
      if (data && mask) {
        if (*mask & 1) Use(data);
        if (*mask & 2) writes.push_back(data);
        VisitExpr(op->args[2]);
        return;
      }
    }
    StmtExprVisitor::VisitExpr_(op);
  }

  bool touched = false;
  std::vector<const VarNode*> used, writes;

 private:
  void Use(const VarNode* v) {
    if (touched_.count(v)) touched = true;
    if (!touched) used.push_back(v);
  }
  const VarSet& touched_;
  bool check_write_;
};

class TouchAnalysis : public StmtVisitor {
 public:
  using StmtVisitor::VisitStmt_;

  VarSet Touched(const Stmt& body, const VarNode* v) {
    touched_.insert(v);
    VisitStmt(body);
    std::vector<const VarNode*> pending(touched_.begin(), touched_.end());
    while (!pending.empty()) {
      const VarNode* u = pending.back();
      pending.pop_back();
      for (const VarNode* w : affects_[u]) {
        if (touched_.insert(w).second) pending.push_back(w);
      }
    }
    return touched_;
  }

  void VisitStmt_(const LetStmtNode* op) override {
    TouchScan s(touched_, false);
    s.VisitExpr(op->value);
    Record(op->var.get(), s);
    VisitStmt(op->body);
  }
  void VisitStmt_(const BufferStoreNode* op) override {
    TouchScan s(touched_, false);
    s.VisitExpr(op->value);
    for (const Expr& i : op->indices) s.VisitExpr(i);
    Record(op->buffer->data.get(), s);
  }
  void VisitStmt_(const ForNode* op) override {
    TouchScan s(touched_, false);
    s.VisitExpr(op->min);
    s.VisitExpr(op->extent);
    Record(op->loop_var.get(), s);
    VisitStmt(op->body);
  }
  void VisitStmt_(const EvaluateNode* op) override {
    TouchScan s(touched_, true);
    s.VisitExpr(op->value);
    for (const VarNode* w : s.writes) Record(w, s);
  }
  void VisitStmt_(const AllocateNode* op) override {
    TouchScan s(touched_, false);
    for (const Expr& e : op->extents) s.VisitExpr(e);
    s.VisitExpr(op->condition);
    Record(op->buffer_var.get(), s);
    VisitStmt(op->body);
  }

 private:
  void Record(const VarNode* v, const TouchScan& s) {
    if (touched_.count(v)) return;
    if (s.touched) {
      touched_.insert(v);
      return;
    }
    for (const VarNode* r : s.used) {
      if (r != v) affects_[r].push_back(v);
    }
  }
  VarSet touched_;
  std::unordered_map<const VarNode*, std::vector<const VarNode*>> affects_;
};

// `index + v * extent`, simplified (a vector index gets the offset broadcast).
Expr OffsetIndex(arith::Analyzer& ana, const Expr& index, const Var& v, const Expr& extent) {
  Expr off =
      MulNode::Make(v, extent->dtype == v->dtype ? extent : CastNode::Make(v->dtype, extent));
  if (index->dtype.lanes() > 1) off = BroadcastNode::Make(off, index->dtype.lanes());
  if (off->dtype != index->dtype) off = CastNode::Make(index->dtype, off);
  return ana.Simplify(AddNode::Make(index, off));
}

class VirtualThreadRewriter : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;

  VirtualThreadRewriter(Var v, int64_t n, const VarSet& touched, bool share, Span span)
      : var_(std::move(v)), n_(n), touched_(touched), share_(share), span_(std::move(span)) {}

  Stmt VisitStmt(const Stmt& s) override {
    Stmt r = StmtFunctor<Stmt>::VisitStmt(s);
    if (touched_now_ || trigger_) {
      if (!injected_) return Inject(r, false);
      touched_now_ = false;
      trigger_ = false;
    }
    return r;
  }

  Expr VisitExpr_(const VarNode* op) override {
    if (remap_.count(op)) {
      TESSERA_THROW_KIND(span_, ErrorKind::kValue)
          << "InjectVirtualThread: the buffer '" << op->name
          << "' gets one copy per virtual thread, but its address is used directly (only loads, "
             "stores and tvm_access_ptr can be redirected to a thread's copy)";
    }
    if (touched_.count(op)) touched_now_ = true;
    return GetRef(op);
  }

  Expr VisitExpr_(const CallNode* op) override {
    if (op->is_op("tir.tvm_access_ptr") && op->args.size() == 5) {
      auto* data = AsPtr<VarNode>(op->args[1]);
      auto it = data ? remap_.find(data) : remap_.end();
      if (it == remap_.end()) return StmtExprMutator::VisitExpr_(op);
      touched_now_ = true;
      Expr offset = VisitExpr(op->args[2]);
      Expr extent = VisitExpr(op->args[3]);
      int lanes = op->args[0]->dtype.lanes();
      Expr stride = it->second;
      if (lanes != 1) stride = DivNode::Make(stride, IntImmNode::Make(stride->dtype, lanes));
      offset = OffsetIndex(ana_, offset, var_, stride);
      return CallNode::Make(op->dtype, op->op,
                            {op->args[0], op->args[1], offset, extent, op->args[4]}, op->span);
    }
    if (op->is_op("tir.tvm_context_id")) return share_ ? GetRef(op) : Expr(var_);
    return StmtExprMutator::VisitExpr_(op);
  }

  Stmt VisitStmt_(const EvaluateNode* op) override {
    trigger_ = !share_;
    return StmtExprMutator::VisitStmt_(op);
  }

  Expr VisitExpr_(const BufferLoadNode* op) override {
    Expr e = StmtExprMutator::VisitExpr_(op);
    auto* load = AsPtr<BufferLoadNode>(e);
    if (touched_.count(load->buffer->data.get())) touched_now_ = true;
    auto it = remap_.find(load->buffer->data.get());
    if (it == remap_.end()) return e;
    CheckFlat(load->buffer, load->indices.size(), load->span);
    return BufferLoadNode::Make(Remapped(load->buffer, it->second),
                                {OffsetIndex(ana_, load->indices[0], var_, it->second)},
                                load->predicate, load->span);
  }

  Stmt VisitStmt_(const BufferStoreNode* op) override {
    Stmt s = StmtExprMutator::VisitStmt_(op);
    trigger_ = !share_;
    auto* store = AsPtr<BufferStoreNode>(s);
    if (touched_.count(store->buffer->data.get())) touched_now_ = true;
    auto it = remap_.find(store->buffer->data.get());
    if (it == remap_.end()) return s;
    CheckFlat(store->buffer, store->indices.size(), store->span);
    return BufferStoreNode::Make(Remapped(store->buffer, it->second), store->value,
                                 {OffsetIndex(ana_, store->indices[0], var_, it->second)},
                                 store->predicate, store->span);
  }

  Stmt VisitStmt_(const DeclBufferNode* op) override {
    Stmt s = StmtExprMutator::VisitStmt_(op);
    auto* d = AsPtr<DeclBufferNode>(s);
    auto it = remap_.find(d->buffer->data.get());
    if (it == remap_.end()) return s;
    CheckFlat(d->buffer, d->buffer->shape.size(), d->span);
    return DeclBufferNode::Make(Remapped(d->buffer, it->second), d->body, d->span);
  }

  Stmt VisitStmt_(const AttrStmtNode* op) override {
    Expr value = VisitExpr(op->value);
    if (touched_now_ && !injected_) return Inject(GetRef(op), true);
    if (!share_ && !injected_ &&
        (op->attr_key == "coproc_uop_scope" || op->attr_key == "coproc_scope")) {
      return Inject(GetRef(op), true);
    }
    Stmt body = VisitStmt(op->body);
    if (value == op->value && body == op->body) return GetRef(op);
    return AttrStmtNode::Make(op->node, op->attr_key, value, body, op->span);
  }

  Stmt VisitStmt_(const LetStmtNode* op) override {
    Expr value = VisitExpr(op->value);
    if (touched_now_ && !injected_) return Inject(GetRef(op), true);
    touched_now_ = false;
    Stmt body = VisitStmt(op->body);
    if (value == op->value && body == op->body) return GetRef(op);
    return LetStmtNode::Make(op->var, value, body, op->span);
  }

  Stmt VisitStmt_(const ForNode* op) override {
    if (!IsConstInt(op->min, 0)) {
      TESSERA_THROW_KIND(op->span, ErrorKind::kValue)
          << "InjectVirtualThread: a loop inside a virtual thread must start at 0 (run "
             "tir.CanonicalizeLoop first)";
    }
    Expr extent = VisitExpr(op->extent);
    if (touched_now_ && !injected_) {
      Stmt s = Inject(GetRef(op), true);
      ++loop_depth_;
      return s;
    }
    touched_now_ = false;
    Stmt body = VisitStmt(op->body);
    ++loop_depth_;
    if (extent == op->extent && body == op->body) return GetRef(op);
    return ForNode::Make(op->loop_var, op->min, extent, op->for_kind, body, op->thread_binding,
                         op->annotations, op->span, op->step);
  }

  Stmt VisitStmt_(const IfThenElseNode* op) override {
    Expr cond = VisitExpr(op->condition);
    if (touched_now_ && !injected_) return Inject(GetRef(op), true);
    touched_now_ = false;
    Stmt then_case = VisitStmt(op->then_case);
    Stmt else_case;
    if (op->else_case) {
      int saved = loop_depth_;
      loop_depth_ = 0;
      else_case = VisitStmt(op->else_case);
      loop_depth_ = std::max(saved, loop_depth_);
    }
    if (cond == op->condition && then_case == op->then_case && else_case == op->else_case) {
      return GetRef(op);
    }
    return IfThenElseNode::Make(cond, then_case, else_case, op->span);
  }

  Stmt VisitStmt_(const WhileNode* op) override {
    TESSERA_THROW_KIND(op->span, ErrorKind::kValue)
        << "InjectVirtualThread: a while loop inside a virtual thread is not supported";
    return GetRef(op);
  }

  Stmt VisitStmt_(const SeqStmtNode* op) override {
    std::vector<Stmt> seq;
    bool changed = false;
    for (const Stmt& s : op->seq) {
      int saved = loop_depth_;
      loop_depth_ = 0;
      Stmt r = VisitStmt(s);
      loop_depth_ = std::max(loop_depth_, saved);
      changed = changed || r != s;
      seq.push_back(r);
    }
    return changed ? SeqStmtNode::Flatten(seq, op->span) : GetRef(op);
  }

  Stmt VisitStmt_(const AllocateNode* op) override {
    Expr cond = VisitExpr(op->condition);
    std::vector<Expr> extents;
    for (const Expr& e : op->extents) extents.push_back(VisitExpr(e));
    if (touched_now_ && !injected_) return Inject(GetRef(op), true);
    touched_now_ = false;
    bool changed = cond != op->condition;
    for (size_t i = 0; i < extents.size(); ++i) changed = changed || extents[i] != op->extents[i];
    if (touched_.count(op->buffer_var.get()) || !share_) {
      if (extents.size() != 1) {
        TESSERA_THROW_KIND(op->span, ErrorKind::kValue)
            << "InjectVirtualThread: the allocation '" << op->buffer_var->name
            << "' must be flat (one extent) to get one copy per virtual thread (run "
               "tir.FlattenBuffer first)";
      }
      Expr stride = extents[0];
      auto c = AsConstInt(stride);
      extents = {c ? Expr(IntImmNode::Make(stride->dtype, *c * n_))
                   : Expr(MulNode::Make(stride, IntImmNode::Make(stride->dtype, n_)))};
      remap_[op->buffer_var.get()] = stride;
      changed = true;
    }
    Stmt body = VisitStmt(op->body);
    if (!changed && body == op->body) return GetRef(op);
    return AllocateNode::Make(op->buffer_var, op->dtype, extents, cond, body, op->annotations,
                              op->span);
  }

 private:
  void CheckFlat(const Buffer& b, size_t dims, const Span& span) {
    if (dims != 1 || b->shape.size() != 1) {
      TESSERA_THROW_KIND(span, ErrorKind::kValue)
          << "InjectVirtualThread: the buffer '" << b->name
          << "' gets one copy per virtual thread and must be accessed flat (one index; run "
             "tir.FlattenBuffer first)";
    }
  }

  Buffer Remapped(const Buffer& b, const Expr& extent) {
    auto it = buffers_.find(b.get());
    if (it != buffers_.end()) return it->second;
    const Expr& s = b->shape[0];
    auto c = AsConstInt(s);
    Expr shape = c ? Expr(IntImmNode::Make(s->dtype, *c * n_))
                   : Expr(MulNode::Make(s, IntImmNode::Make(s->dtype, n_)));
    Buffer nb = BufferNode::Make(b->data, b->dtype, {shape}, b->strides, b->elem_offset, b->name,
                                 b->data_alignment, b->offset_factor, b->span);
    buffers_[b.get()] = nb;
    return nb;
  }

  Stmt Inject(Stmt s, bool before_mutation) {
    touched_now_ = false;
    trigger_ = false;
    injected_ = true;
    if (before_mutation) s = VisitStmt(s);
    injected_ = false;
    touched_now_ = false;
    if (loop_depth_ == 0 && n_ < 16) {
      std::vector<Stmt> seq;
      for (int64_t i = 0; i < n_; ++i) {
        seq.push_back(Substitute(s, VarMap{{var_.get(), IntImmNode::Make(var_->dtype, i)}}));
      }
      return SeqStmtNode::Flatten(seq);
    }
    Var idx = VarNode::Make(var_->name + ".s", var_->dtype);
    s = Substitute(s, VarMap{{var_.get(), idx}});
    return ForNode::Make(idx, IntImmNode::Make(idx->dtype, 0), IntImmNode::Make(idx->dtype, n_),
                         ForKind::kSerial, s);
  }

  Var var_;
  int64_t n_;
  const VarSet& touched_;
  bool share_;
  Span span_;
  bool injected_ = false, touched_now_ = false, trigger_ = false;
  int loop_depth_ = 0;
  std::unordered_map<const VarNode*, Expr> remap_;  // allocation -> its extent per thread
  std::unordered_map<const BufferNode*, Buffer> buffers_;
  arith::Analyzer ana_;
};

class VirtualThreadInjector : public StmtMutator {
 public:
  using StmtMutator::VisitStmt_;
  Stmt VisitStmt_(const AttrStmtNode* op) override {
    Stmt s = StmtMutator::VisitStmt_(op);
    auto* attr = AsPtr<AttrStmtNode>(s);
    if (attr->attr_key != "virtual_thread") return s;
    auto* iv = AsPtr<IterVarNode>(attr->node);
    auto n = AsConstInt(attr->value);
    if (iv == nullptr || !n) {
      TESSERA_THROW_KIND(attr->span, ErrorKind::kValue)
          << "InjectVirtualThread: a virtual thread needs a thread variable and a constant "
             "number of threads";
    }
    bool share = iv->thread_tag.rfind("vthread", 0) == 0;
    VarSet touched = TouchAnalysis().Touched(attr->body, iv->var.get());
    return VirtualThreadRewriter(iv->var, *n, touched, share, attr->span).VisitStmt(attr->body);
  }
};

PrimFunc InjectVirtualThreadFunc(PrimFunc f, IRModule, const PassContext&) {
  Stmt body = VirtualThreadInjector().VisitStmt(f->body);
  return body == f->body ? f : f->WithBody(body);
}

}  // namespace

Pass InjectVirtualThread() {
  Pass inject = CreatePrimFuncPass(InjectVirtualThreadFunc, 0, "tir.InjectVirtualThread");
  Pass ssa = ConvertSSA();
  return CreateModulePass(
      [inject, ssa](IRModule mod, const PassContext& ctx) {
        IRModule out = inject->fn(mod, ctx);
        return out == mod ? mod : ssa->fn(out, ctx);
      },
      0, "tir.InjectVirtualThread");
}
TESSERA_REGISTER_PASS("tir.InjectVirtualThread", InjectVirtualThread);

}  // namespace transform
}  // namespace tessera
