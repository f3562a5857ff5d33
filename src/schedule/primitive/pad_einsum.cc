// pad_einsum: pad the iteration space of an Einsum block to multiples of given factors; the
// operands that need it are copied into zero-padded buffers first and the output is written to a
// padded buffer copied back after.
#include "../utils.h"
#include "tessera/ir/op.h"
#include "tessera/schedule/primitive.h"

namespace tessera {
namespace schedule {
namespace {

[[noreturn]] void NonEinsum(const StmtSRef& block_sref) {
  Fail("pad_einsum: the block is not an einsum",
       "pad_einsum: the block {0} is not an einsum (one store whose every buffer access is "
       "indexed by block iterators)",
       {block_sref->stmt});
}

/*! \brief Every access of each buffer in the block: indices that are block iterators. */
class EinsumCollector : public StmtExprVisitor {
 public:
  using StmtExprVisitor::VisitExpr_;
  using StmtExprVisitor::VisitStmt_;
  EinsumCollector(const std::unordered_set<const VarNode*>& iters, const StmtSRef& block_sref)
      : iters_(iters), block_sref_(block_sref) {}
  void VisitExpr_(const BufferLoadNode* op) override {
    StmtExprVisitor::VisitExpr_(op);
    Record(op->buffer, op->indices);
  }
  void VisitStmt_(const BufferStoreNode* op) override {
    StmtExprVisitor::VisitStmt_(op);
    Record(op->buffer, op->indices);
  }
  void VisitStmt_(const BlockNode*) override { NonEinsum(block_sref_); }
  std::vector<std::pair<Buffer, std::vector<const VarNode*>>> accesses;

 private:
  void Record(const Buffer& buffer, const std::vector<Expr>& indices) {
    std::vector<const VarNode*> vars;
    for (const Expr& e : indices) {
      auto* v = AsPtr<VarNode>(e);
      if (!v || !iters_.count(v)) NonEinsum(block_sref_);
      vars.push_back(v);
    }
    for (const auto& [b, vs] : accesses) {
      if (b == buffer) {
        if (vs != vars) NonEinsum(block_sref_);
        return;
      }
    }
    accesses.emplace_back(buffer, vars);
  }
  const std::unordered_set<const VarNode*>& iters_;
  const StmtSRef& block_sref_;
};

Expr ZeroOf(DataType t) {
  if (t.is_float()) return FloatImmNode::Make(t, 0.0);
  return IntConst(t, 0);
}

Buffer PadBuffer(const Buffer& b, const std::vector<Expr>& shape) {
  Var data = VarNode::MakePointer(b->data->name + "_pad", b->dtype, b->scope());
  return BufferNode::Make(data, b->dtype, shape, {}, b->elem_offset, b->name + "_pad",
                          b->data_alignment, b->offset_factor);
}

/*! \brief Loops i0, i1, ... over `shape` around a block `name` with iterators v0, v1, ...;
 *  `body` builds the statement from the iterators. */
std::pair<Stmt, Block> CopyNest(const std::vector<Expr>& shape, const std::string& name,
                                const std::function<Stmt(const std::vector<Expr>&)>& body,
                                const Buffer& read, const Buffer& write) {
  std::vector<For> loops;
  std::vector<IterVar> iters;
  std::vector<Expr> values, vars;
  std::vector<Range> point;
  for (size_t d = 0; d < shape.size(); ++d) {
    DataType t = shape[d]->dtype;
    Var loop = NewVar("i" + std::to_string(d), t);
    Var v = NewVar("v" + std::to_string(d), t);
    loops.push_back(ForNode::Make(loop, IntConst(t, 0), shape[d], ForKind::kSerial, Evaluate0()));
    iters.push_back(
        IterVarNode::Make(RangeNode::Make(IntConst(t, 0), shape[d]), v, IterVarType::kDataPar));
    values.push_back(loop);
    vars.push_back(v);
    point.push_back(RangeNode::Make(v, IntConst(t, 1)));
  }
  Block block = BlockNode::Make(iters, {BufferRegionNode::Make(read, point)},
                                {BufferRegionNode::Make(write, point)}, name, body(vars));
  return {MakeLoopNest(loops, BlockRealizeNode::Make(values, IntConst(DataType::Bool(), 1), block)),
          block};
}

}  // namespace

void PadEinsum(ScheduleState& state, const StmtSRef& block_sref,
               const std::vector<int64_t>& padding) {
  const BlockNode* block = BlockOf(block_sref);
  size_t n = block->iter_vars.size();
  bool valid = padding.size() == n;
  for (int64_t p : padding) valid = valid && p > 0;
  if (!valid) {
    std::string list = "[";
    for (size_t i = 0; i < padding.size(); ++i)
      list += (i ? ", " : "") + std::to_string(padding[i]);
    Fail("pad_einsum: invalid padding",
         "pad_einsum: the padding " + list + "] for {0} must be " + std::to_string(n) +
             " positive integers, one per block iterator",
         {block_sref->stmt});
  }
  StmtSRef scope_root = GetScopeRoot(state, block_sref.get());
  if (!scope_root) Fail("pad_einsum: the block has no enclosing block");
  // The Einsum pattern: one store, every access at block iterators, loops binding them.
  if (!AsPtr<BufferStoreNode>(block->body) || block->writes.size() != 1) NonEinsum(block_sref);
  std::unordered_set<const VarNode*> iter_set;
  for (const IterVar& iv : block->iter_vars) iter_set.insert(iv->var.get());
  EinsumCollector collector(iter_set, block_sref);
  collector.VisitStmt(block->body);
  if (block->init) collector.VisitStmt(block->init);
  BlockRealize realize = GetBlockRealize(state, block_sref.get());
  std::vector<StmtSRef> loops = GetLoopsAbove(state, block_sref.get());
  std::unordered_map<const VarNode*, const ForNode*> loop_of_iter;
  for (size_t i = 0; i < n; ++i) {
    auto* v = AsPtr<VarNode>(realize->iter_values[i]);
    const ForNode* loop = nullptr;
    for (const StmtSRef& l : loops) {
      if (v && l->loop()->loop_var.get() == v) loop = l->loop();
    }
    if (!loop) NonEinsum(block_sref);
    loop_of_iter[block->iter_vars[i]->var.get()] = loop;
  }
  for (size_t i = 0; i + 1 < loops.size(); ++i) {
    if (loops[i]->loop()->body.get() != loops[i + 1]->stmt.get()) NonEinsum(block_sref);
  }
  if (loops.empty() || loops.back()->loop()->body.get() != realize.get()) NonEinsum(block_sref);

  // The padded extent of each iterator.
  arith::Analyzer ana;
  std::unordered_map<const VarNode*, Expr> padded;
  std::unordered_map<const VarNode*, Expr> original;
  for (size_t i = 0; i < n; ++i) {
    const IterVar& iv = block->iter_vars[i];
    Expr extent = iv->dom->extent;
    DataType t = extent->dtype;
    Expr p = IntConst(t, padding[i]);
    Expr ext = padding[i] == 1
                   ? extent
                   : ana.Simplify(MulE(FloorDivE(AddE(extent, IntConst(t, padding[i] - 1)), p), p));
    padded[iv->var.get()] = ext;
    original[iv->var.get()] = extent;
  }
  auto changed = [&](const VarNode* v) { return !ana.CanProveEqual(padded.at(v), original.at(v)); };

  // The buffers to pad: those indexed by an iterator whose extent grows.
  const Buffer& output = block->writes[0]->buffer;
  BufferMap pads;
  std::vector<Stmt> before, after;
  std::vector<Buffer> allocs;
  for (const auto& [buffer, vars] : collector.accesses) {
    bool grows = false;
    std::vector<Expr> shape;
    for (size_t d = 0; d < vars.size(); ++d) {
      grows = grows || changed(vars[d]);
      shape.push_back(changed(vars[d]) ? padded.at(vars[d]) : buffer->shape[d]);
    }
    if (!grows) continue;
    Buffer pad = PadBuffer(buffer, shape);
    pads[buffer.get()] = pad;
    if (buffer == output) continue;
    allocs.push_back(pad);
    Stmt nest =
        CopyNest(
            shape, pad->name,
            [&](const std::vector<Expr>& v) {
              Expr cond;
              for (size_t d = 0; d < vars.size(); ++d) {
                if (changed(vars[d])) {
                  cond = AndE(cond, LTNode::Make(v[d], CastTo(v[d]->dtype, buffer->shape[d])));
                }
              }
              Expr value =
                  CallNode::Make(buffer->dtype, OpNode::Get("tir.if_then_else"),
                                 {cond, BufferLoadNode::Make(buffer, v), ZeroOf(buffer->dtype)});
              return BufferStoreNode::Make(pad, value, v);
            },
            buffer, pad)
            .first;
    before.push_back(nest);
  }
  if (pads.count(output.get())) {
    const Buffer& pad = pads.at(output.get());
    allocs.push_back(pad);
    after.push_back(CopyNest(
                        output->shape, pad->name,
                        [&](const std::vector<Expr>& v) {
                          return BufferStoreNode::Make(output, BufferLoadNode::Make(pad, v), v);
                        },
                        pad, output)
                        .first);
  }
  if (pads.empty()) return;

  // The block over the padded domain, accessing the padded buffers, under grown loops.
  Block result = As<BlockNode>(ReplaceBuffers(GetRef(block), pads, nullptr));
  result = CopyBlock(result.get());
  std::vector<IterVar> iters;
  for (const IterVar& iv : block->iter_vars) {
    iters.push_back(IterVarNode::Make(RangeNode::Make(iv->dom->min, padded.at(iv->var.get())),
                                      iv->var, iv->iter_type, iv->thread_tag, iv->span));
  }
  result->iter_vars = iters;
  Stmt nest =
      BlockRealizeNode::Make(realize->iter_values, realize->predicate, result, realize->span);
  for (size_t i = loops.size(); i-- > 0;) {
    const ForNode* l = loops[i]->loop();
    Expr extent = l->extent;
    for (const auto& [var, loop] : loop_of_iter) {
      if (loop == l) extent = padded.at(var);
    }
    nest = ForNode::Make(l->loop_var, l->min, extent, l->for_kind, nest, l->thread_binding,
                         l->annotations, l->span);
  }
  std::vector<Stmt> items = before;
  items.push_back(nest);
  items.insert(items.end(), after.begin(), after.end());

  StmtEditor editor;
  editor.replace[loops.front()->stmt.get()] = SeqStmtNode::Flatten(items);
  Block root = As<BlockNode>(editor.VisitStmt(scope_root->stmt));
  Block new_root = CopyBlock(root.get());
  for (const Buffer& b : allocs) new_root->alloc_buffers.push_back(b);
  BlockReuse reuse = editor.reuse;
  reuse[block] = result;
  reuse[scope_root->block()] = new_root;
  state.Replace(scope_root.get(), scope_root->stmt.get(), new_root, reuse);
}

}  // namespace schedule
}  // namespace tessera
