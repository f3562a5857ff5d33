// loop_partition: one loop becomes consecutive loops over consecutive parts of its range, each
// in a block of its own ("<block>_<loop><i>_partition"), all under one "<block>_<loop>_common".
#include "../utils.h"
#include "tessera/schedule/primitive.h"

namespace tessera {
namespace schedule {
namespace {

/*! \brief The name of the first block under `s` (pre-order), or "". */
std::string FirstBlockName(const Stmt& s) {
  if (auto* r = AsPtr<BlockRealizeNode>(s)) return r->block->name_hint;
  if (auto* f = AsPtr<ForNode>(s)) return FirstBlockName(f->body);
  if (auto* seq = AsPtr<SeqStmtNode>(s); seq && !seq->seq.empty()) return FirstBlockName(seq->seq[0]);
  return "";
}

/*!
 * \brief Rebuilds the copy of the loop body for one part, as TVM's: loops and the iterators of
 *  the blocks get new variables; the block bound directly to the part's loop variable gets the
 *  part's range as that iterator's domain and, for its buffers accessed at plain iterators, the
 *  iterators' domains as its regions; every block gets "_<loop var>" appended to its name.
 */
class PartMutator : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;
  PartMutator(Var loop_var, Expr begin, Expr end)
      : loop_var_(std::move(loop_var)), begin_(std::move(begin)), end_(std::move(end)) {}

  Stmt VisitStmt_(const BlockRealizeNode* op) override {
    for (size_t i = 0; i < op->iter_values.size(); ++i) {
      if (op->iter_values[i].get() == loop_var_.get()) {
        index_ = static_cast<int>(i);
        break;
      }
    }
    return StmtExprMutator::VisitStmt_(op);
  }

  Stmt VisitStmt_(const ForNode* op) override {
    Stmt s = StmtExprMutator::VisitStmt_(op);
    auto* loop = AsPtr<ForNode>(s);
    Var v = NewVar(op->loop_var->name, op->loop_var->dtype);
    return ForNode::Make(v, loop->min, loop->extent, loop->for_kind,
                         Substitute(loop->body, VarMap{{op->loop_var.get(), v}}),
                         loop->thread_binding, loop->annotations, loop->span);
  }

  Stmt VisitStmt_(const BlockNode* op) override {
    Stmt s = StmtExprMutator::VisitStmt_(op);
    Block block = CopyBlock(AsPtr<BlockNode>(s));
    block->name_hint += "_" + loop_var_->name;
    if (block->iter_vars.empty() || index_ == -1) return block;
    const VarNode* target = block->iter_vars[index_]->var.get();
    index_ = -1;
    VarMap vmap;
    std::unordered_map<std::string, Range> dom_by_name;
    std::vector<IterVar> iters;
    for (const IterVar& iv : block->iter_vars) {
      DataType t = iv->var->dtype;
      Var v = NewVar(iv->var->name, t);
      vmap[iv->var.get()] = v;
      Range dom = iv->dom;
      if (iv->var.get() == target) {
        dom = RangeNode::Make(CastTo(t, begin_), Simplify(SubE(CastTo(t, end_), CastTo(t, begin_))));
      }
      iters.push_back(IterVarNode::Make(dom, v, iv->iter_type, iv->thread_tag, iv->span));
      dom_by_name[iv->var->name] = dom;
    }
    block->iter_vars = iters;
    // The buffers the body accesses at plain variables (the first such access of each name).
    std::unordered_map<std::string, std::vector<std::string>> indices_by_buffer;
    auto note = [&](const Buffer& buffer, const std::vector<Expr>& indices) {
      std::vector<std::string> names;
      for (const Expr& e : indices) {
        auto* v = AsPtr<VarNode>(e);
        if (!v) return;
        names.push_back(v->name);
      }
      indices_by_buffer.emplace(buffer->name, names);
    };
    PreOrderAccesses(block->body, note);
    auto fix = [&](std::vector<BufferRegion>& regions) {
      for (BufferRegion& r : regions) {
        auto it = indices_by_buffer.find(r->buffer->name);
        if (it == indices_by_buffer.end() || it->second.size() != r->region.size()) continue;
        std::vector<Range> region = r->region;
        for (size_t d = 0; d < region.size(); ++d) {
          auto dom = dom_by_name.find(it->second[d]);
          if (dom != dom_by_name.end()) region[d] = dom->second;
        }
        r = BufferRegionNode::Make(r->buffer, region, r->span);
      }
    };
    fix(block->writes);
    fix(block->reads);
    return Substitute(Stmt(block), vmap);
  }

 private:
  /*! \brief Stores and loads in TVM's visiting order: a store before its value and indices. */
  static void PreOrderAccesses(const Stmt& body,
                               const std::function<void(const Buffer&, const std::vector<Expr>&)>& f) {
    struct Visitor : StmtExprVisitor {
      using StmtExprVisitor::VisitExpr_;
      using StmtExprVisitor::VisitStmt_;
      const std::function<void(const Buffer&, const std::vector<Expr>&)>* f;
      void VisitStmt_(const BufferStoreNode* op) override {
        (*f)(op->buffer, op->indices);
        StmtExprVisitor::VisitStmt_(op);
      }
      void VisitExpr_(const BufferLoadNode* op) override {
        (*f)(op->buffer, op->indices);
        StmtExprVisitor::VisitExpr_(op);
      }
    } visitor;
    visitor.f = &f;
    visitor.VisitStmt(body);
  }

  Var loop_var_;
  Expr begin_, end_;
  int index_ = -1;
};

}  // namespace

std::vector<StmtSRef> LoopPartition(ScheduleState& state, const StmtSRef& loop_sref,
                                    const std::vector<Expr>& factors, bool preserve_unit_iters) {
  const ForNode* loop = LoopOf(loop_sref);
  if (!loop->annotations.empty() || loop->thread_binding ||
      loop->for_kind == ForKind::kThreadBinding) {
    Fail("loop_partition: the loop is annotated or bound to a thread",
         "loop_partition: the loop {0} is annotated or bound to a thread", {loop_sref->stmt});
  }
  if (!AsConstInt(loop->min) || !AsConstInt(loop->extent)) {
    Fail("loop_partition needs a loop whose start and extent are constants",
         "loop_partition needs constant bounds, but the start or the extent of {0} is symbolic",
         {loop_sref->stmt});
  }
  if (factors.empty()) Fail("loop_partition needs at least one factor");
  int bits = loop->loop_var->dtype.bits();
  for (const Expr& f : factors) {
    if (f) bits = std::max(bits, f->dtype.bits());
  }
  DataType t = DataType::Int(bits);
  DataType ext_t = loop->extent->dtype;
  std::vector<Expr> parts;
  int infer = -1;
  Expr total = IntConst(ext_t, 0);
  for (size_t i = 0; i < factors.size(); ++i) {
    if (!factors[i]) {
      if (infer != -1) Fail("loop_partition: at most one factor may be None (or -1)");
      infer = static_cast<int>(i);
      parts.push_back(nullptr);
      continue;
    }
    Expr f = factors[i];
    if (auto c = AsConstInt(f); c && *c <= 0) {
      Fail("loop_partition: a constant factor is zero or negative",
           "loop_partition: constant factors must be positive, but factor " + std::to_string(i) +
               " is " + std::to_string(*c));
    }
    if (f->dtype.bits() > ext_t.bits()) f = CastTo(ext_t, f);
    parts.push_back(f);
    total = Simplify(AddE(total, CastTo(ext_t, f)));
  }
  arith::Analyzer ana;
  if (ana.CanProve(GENode::Make(total, loop->extent))) {
    Fail("loop_partition: the factors add up to the loop extent or more",
         "loop_partition: the factors add up to the extent of {0} or more, leaving no last "
         "part",
         {loop_sref->stmt});
  }
  if (infer != -1) parts[infer] = Simplify(SubE(loop->extent, total));
  for (size_t i = 1; i < parts.size(); ++i) {
    parts[i] = Simplify(AddE(CastTo(t, parts[i]), CastTo(t, parts[i - 1])));
  }
  if (infer == -1) parts.push_back(loop->extent);

  std::string name = FirstBlockName(loop->body) + "_" + loop->loop_var->name;
  Expr begin = loop->min;
  std::vector<Stmt> partitions;
  std::vector<const StmtNode*> part_loops;
  for (size_t i = 0; i < parts.size(); ++i) {
    Expr end = Simplify(CastTo(t, parts[i]));
    Var v = NewVar(loop->loop_var->name + std::to_string(i), t);
    Stmt body = Substitute(loop->body, VarMap{{loop->loop_var.get(), v}});
    body = PartMutator(v, begin, end).VisitStmt(body);
    For f = ForNode::Make(v, CastTo(t, begin), Simplify(SubE(end, CastTo(t, begin))),
                          ForKind::kSerial, body);
    part_loops.push_back(f.get());
    Expr pred = Simplify(GTNode::Make(end, IntConst(t, 0)));
    Block part = BlockNode::Make({}, {}, {}, name + std::to_string(i) + "_partition", f);
    partitions.push_back(BlockRealizeNode::Make({}, pred, part));
    begin = end;
  }
  Block common = BlockNode::Make({}, {}, {}, name + "_common", SeqStmtNode::Flatten(partitions));
  state.Replace(loop_sref.get(), loop, BlockRealizeNode::Make({}, Bool(true), common));
  (void)preserve_unit_iters;
  std::vector<StmtSRef> out;
  for (const StmtNode* l : part_loops) out.push_back(state.GetSRef(l));
  return out;
}

}  // namespace schedule
}  // namespace tessera
