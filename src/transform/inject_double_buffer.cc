// tir.InjectDoubleBuffer: a flat allocation whose data variable names a
// `T.attr(data, "double_buffer_scope", 1)` inside a loop (and is used nowhere as a plain value)
// gets two halves, so that iteration i + 1 fills one half while iteration i reads the other:
//  - the allocation (and its DeclBuffer) moves out of the loop with twice the extent;
//  - the scope's body is run for iteration 0 before the loop (writing half 0); inside the loop
//    it becomes `if i + 1 < extent: T.attr(data, "double_buffer_write", 1) <body for i + 1>`,
//    writing half (i + 1) % 2; reads use half i % 2;
//  - the loop is split by the "split_loop" factor of the "tir.InjectDoubleBuffer" config
//    (default 1): `for i.outer in range((extent - 1) // f)` runs f copies of the body, and the
//    last iterations follow, each under `if`, without the write attribute.
// The result is made SSA again (the body is copied).
#include <unordered_map>
#include <unordered_set>

#include "tessera/ir/expr_ops.h"
#include "tessera/ir/functor.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/support/error.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace transform {
namespace {

// The data variables named by double_buffer_scope attributes, less those used as values.
class DoubleBufferDetector : public StmtExprVisitor {
 public:
  using StmtExprVisitor::VisitExpr_;
  using StmtExprVisitor::VisitStmt_;
  std::unordered_set<const VarNode*> vars;
  std::unordered_set<const VarNode*> used;
  void VisitStmt_(const AttrStmtNode* op) override {
    if (op->attr_key == "double_buffer_scope") {
      if (auto* v = AsPtr<VarNode>(op->node)) vars.insert(v);
    }
    StmtExprVisitor::VisitStmt_(op);
  }
  void VisitExpr_(const VarNode* op) override { used.insert(op); }
};

class StripDoubleBufferWrite : public StmtMutator {
 public:
  using StmtMutator::VisitStmt_;
  Stmt VisitStmt_(const AttrStmtNode* op) override {
    if (op->attr_key == "double_buffer_write") return VisitStmt(op->body);
    return StmtMutator::VisitStmt_(op);
  }
};

Stmt Seq(std::vector<Stmt> parts) {
  std::vector<Stmt> flat;
  for (Stmt& s : parts) {
    if (!s) continue;
    if (auto* seq = AsPtr<SeqStmtNode>(s)) {
      flat.insert(flat.end(), seq->seq.begin(), seq->seq.end());
    } else {
      flat.push_back(std::move(s));
    }
  }
  return flat.size() == 1 ? flat[0] : Stmt(SeqStmtNode::Make(std::move(flat)));
}

class DoubleBufferInjector : public StmtExprMutator {
 public:
  DoubleBufferInjector(std::unordered_set<const VarNode*> vars, int64_t split_loop)
      : split_loop_(split_loop) {
    for (const VarNode* v : vars) entries_[v];
  }
  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;

  Stmt VisitStmt_(const AttrStmtNode* op) override {
    if (op->attr_key != "double_buffer_scope") return StmtExprMutator::VisitStmt_(op);
    auto* data = AsPtr<VarNode>(op->node);
    auto it = data ? entries_.find(data) : entries_.end();
    if (it == entries_.end()) return VisitStmt(op->body);  // used as a value: left single
    if (loops_.empty()) {
      TESSERA_THROW_KIND(op->span, ErrorKind::kValue)
          << "tir.InjectDoubleBuffer: the double_buffer_scope of " << data->name
          << " must be inside a loop";
    }
    Entry& e = it->second;
    e.loop = loops_.back();
    const Var& i = e.loop->loop_var;
    DataType t = i->dtype;
    Expr one = IntImmNode::Make(t, 1), two = IntImmNode::Make(t, 2);
    Expr next = AddE(i, one);
    e.write_half = VarNode::Make(i->name + ".db", t);
    e.read_half = FloorModNode::Make(i, two);
    bool outer = in_scope_;
    in_scope_ = true;
    Stmt body = VisitStmt(op->body);
    in_scope_ = outer;
    VarMap first{{e.write_half.get(), IntImmNode::Make(t, 0)}, {i.get(), IntImmNode::Make(t, 0)}};
    prologue_[e.loop].push_back(Substitute(body, first));
    VarMap ahead{{i.get(), next}, {e.write_half.get(), FloorModNode::Make(next, two)}};
    body = AttrStmtNode::Make(op->node, "double_buffer_write", Int32(1), Substitute(body, ahead));
    return IfThenElseNode::Make(LTNode::Make(next, e.loop->extent), body);
  }

  Stmt VisitStmt_(const AllocateNode* op) override {
    auto it = entries_.find(op->buffer_var.get());
    if (it == entries_.end()) return StmtExprMutator::VisitStmt_(op);
    Entry& e = it->second;
    if (op->extents.size() != 1) {
      TESSERA_THROW_KIND(op->span, ErrorKind::kValue)
          << "tir.InjectDoubleBuffer expects flat 1-d allocations (run tir.FlattenBuffer "
             "first); "
          << op->buffer_var->name << " has " << op->extents.size() << " dimensions";
    }
    e.stride = op->extents[0];
    Stmt s = StmtExprMutator::VisitStmt_(op);
    auto* alloc = AsPtr<AllocateNode>(s);
    if (!e.loop) return s;  // its scope was not inside a loop of this allocation
    std::vector<Stmt>& nest = allocs_[e.loop];
    Expr doubled = MulE(alloc->extents[0], IntImmNode::Make(alloc->extents[0]->dtype, 2));
    nest.push_back(AllocateNode::Make(alloc->buffer_var, alloc->dtype, {doubled}, alloc->condition,
                                      EvaluateNode::Make(Int32(0)), alloc->annotations,
                                      alloc->span));
    Stmt body = alloc->body;
    if (auto* decl = AsPtr<DeclBufferNode>(body)) {
      nest.push_back(DeclBufferNode::Make(Doubled(decl->buffer, e.stride),
                                          EvaluateNode::Make(Int32(0)), decl->span));
      body = decl->body;
    }
    return body;
  }

  Stmt VisitStmt_(const ForNode* op) override {
    loops_.push_back(op);
    Stmt s = StmtExprMutator::VisitStmt_(op);
    loops_.pop_back();
    auto pre = prologue_.find(op);
    if (pre != prologue_.end()) {
      auto* loop = AsPtr<ForNode>(s);
      if (split_loop_ != 0) s = SplitLoop(loop);
      std::vector<Stmt> parts = pre->second;
      parts.push_back(s);
      s = Seq(std::move(parts));
    }
    auto al = allocs_.find(op);
    if (al != allocs_.end()) {
      for (auto r = al->second.rbegin(); r != al->second.rend(); ++r) {
        if (auto* a = AsPtr<AllocateNode>(*r)) {
          s = AllocateNode::Make(a->buffer_var, a->dtype, a->extents, a->condition, s,
                                 a->annotations, a->span);
        } else if (auto* d = AsPtr<DeclBufferNode>(*r)) {
          s = DeclBufferNode::Make(d->buffer, s, d->span);
        }
      }
    }
    return s;
  }

  Stmt VisitStmt_(const BufferStoreNode* op) override {
    Stmt s = StmtExprMutator::VisitStmt_(op);
    auto* store = AsPtr<BufferStoreNode>(s);
    auto it = entries_.find(store->buffer->data.get());
    if (it == entries_.end() || !it->second.write_half) return s;
    const Entry& e = it->second;
    if (!in_scope_) {
      TESSERA_THROW_KIND(op->span, ErrorKind::kValue)
          << "tir.InjectDoubleBuffer: " << store->buffer->name
          << " is written outside its double_buffer_scope";
    }
    CheckFlat(store->indices.size(), store->buffer->name, op->span);
    Expr index = AddE(MulE(e.write_half, e.stride), store->indices[0]);
    return BufferStoreNode::Make(Doubled(store->buffer, e.stride), store->value, {index},
                                 store->predicate, store->span);
  }

  Expr VisitExpr_(const BufferLoadNode* op) override {
    Expr x = StmtExprMutator::VisitExpr_(op);
    auto* load = AsPtr<BufferLoadNode>(x);
    auto it = entries_.find(load->buffer->data.get());
    if (it == entries_.end() || !it->second.read_half) return x;
    const Entry& e = it->second;
    CheckFlat(load->indices.size(), load->buffer->name, op->span);
    Expr index = AddE(MulE(e.read_half, e.stride), load->indices[0]);
    return BufferLoadNode::Make(Doubled(load->buffer, e.stride), {index}, load->predicate,
                                load->span);
  }

 private:
  struct Entry {
    Expr stride;
    const ForNode* loop = nullptr;
    Var write_half;
    Expr read_half;
  };

  static void CheckFlat(size_t dims, const std::string& name, const Span& span) {
    if (dims != 1) {
      TESSERA_THROW_KIND(span, ErrorKind::kValue)
          << "tir.InjectDoubleBuffer expects flat 1-d buffers (run tir.FlattenBuffer first); "
          << name << " is accessed with " << dims << " indices";
    }
  }

  // The view of `b` over both halves.
  Buffer Doubled(const Buffer& b, const Expr& stride) {
    auto it = doubled_.find(b.get());
    if (it != doubled_.end()) return it->second;
    if (b->shape.size() != 1) CheckFlat(b->shape.size(), b->name, b->span);
    Buffer copy =
        BufferNode::Make(b->data, b->dtype, {AddE(b->shape[0], stride)}, b->strides, b->elem_offset,
                         b->name, b->data_alignment, b->offset_factor, b->span);
    copy->axis_separators = b->axis_separators;
    doubled_[b.get()] = copy;
    return copy;
  }

  Stmt SplitLoop(const ForNode* loop) {
    if (split_loop_ != 1 && split_loop_ % 2 != 0) {
      TESSERA_THROW_KIND(loop->span, ErrorKind::kValue)
          << "tir.InjectDoubleBuffer: split_loop must be 1 or a multiple of 2, got " << split_loop_;
    }
    auto* min = AsPtr<IntImmNode>(loop->min);
    if (!min || min->value != 0) {
      TESSERA_THROW_KIND(loop->span, ErrorKind::kValue)
          << "tir.InjectDoubleBuffer: loop " << loop->loop_var->name
          << " must start at 0 to be split";
    }
    DataType t = loop->loop_var->dtype;
    Expr factor = IntImmNode::Make(t, split_loop_);
    Expr outer_extent = DivNode::Make(SubE(loop->extent, IntImmNode::Make(t, 1)), factor);
    Expr tail_base = MulE(outer_extent, factor);
    Var outer = VarNode::Make(loop->loop_var->name + ".outer", t);
    std::vector<Stmt> body;
    for (int64_t k = 0; k < split_loop_; ++k) {
      VarMap m{{loop->loop_var.get(), AddE(MulE(outer, factor), IntImmNode::Make(t, k))}};
      body.push_back(Substitute(loop->body, m));
    }
    std::vector<Stmt> parts{
        ForNode::Make(outer, loop->min, outer_extent, loop->for_kind, Seq(std::move(body)))};
    Stmt tail = StripDoubleBufferWrite().VisitStmt(loop->body);
    for (int64_t k = 0; k < split_loop_; ++k) {
      Expr idx = AddE(tail_base, IntImmNode::Make(t, k));
      parts.push_back(IfThenElseNode::Make(LTNode::Make(idx, loop->extent),
                                           Substitute(tail, VarMap{{loop->loop_var.get(), idx}})));
    }
    return Seq(std::move(parts));
  }

  int64_t split_loop_;
  bool in_scope_ = false;
  std::vector<const ForNode*> loops_;
  std::unordered_map<const VarNode*, Entry> entries_;
  std::unordered_map<const ForNode*, std::vector<Stmt>> prologue_;
  std::unordered_map<const ForNode*, std::vector<Stmt>> allocs_;
  std::unordered_map<const BufferNode*, Buffer> doubled_;
};

PrimFunc InjectDoubleBufferFunc(PrimFunc f, IRModule, const PassContext& ctx) {
  DoubleBufferDetector detect;
  detect.VisitStmt(f->body);
  std::unordered_set<const VarNode*> vars;
  for (const VarNode* v : detect.vars) {
    if (!detect.used.count(v)) vars.insert(v);
  }
  if (vars.empty()) return f;
  int64_t split_loop = ctx.GetRecordInt("tir.InjectDoubleBuffer", "split_loop", 1);
  Stmt body = DoubleBufferInjector(std::move(vars), split_loop).VisitStmt(f->body);
  if (body == f->body) return f;
  // The copies of the body define the same variables: make each definition unique again.
  IRModule one = IRModuleNode::FromFunc(f->WithBody(body), "f");
  return ConvertSSA()->fn(one, ctx)->Lookup("f");
}

}  // namespace

Pass InjectDoubleBuffer() {
  return CreatePrimFuncPass(InjectDoubleBufferFunc, 0, "tir.InjectDoubleBuffer");
}
TESSERA_REGISTER_PASS("tir.InjectDoubleBuffer", InjectDoubleBuffer);

}  // namespace transform
}  // namespace tessera
