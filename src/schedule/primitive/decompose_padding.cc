// decompose_padding: a block writing `if_then_else(in_bound, value, pad)` becomes a block filling
// the whole buffer with the constant pad (placed before a given loop) and a block computing the
// in-bound part over the in-bound iteration domain only.
#include "../utils.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/schedule/primitive.h"

namespace tessera {
namespace schedule {
namespace {

[[noreturn]] void PatternError(const StmtSRef& block_sref, const std::string& why) {
  Fail("decompose_padding: the block is not a padding block: " + why,
       "decompose_padding: the block {0} is not a padding block: " + why, {block_sref->stmt});
}

/*! \brief `e` as `base + offset` with `offset` constant (`base` is `e` itself when none). */
void SplitOffset(const Expr& e, Expr* base, int64_t* offset) {
  *base = e;
  *offset = 0;
  if (e->kind == NodeKind::kAdd || e->kind == NodeKind::kSub) {
    auto* b = static_cast<const BinaryNode*>(e.get());
    if (auto c = AsConstInt(b->b)) {
      *base = b->a;
      *offset = e->kind == NodeKind::kAdd ? *c : -*c;
    }
  }
}

/*! \brief For a conjunct `x <op> k` (or `k <op> x`) with `x` (up to a constant) one of `values`,
 *  tightens the bounds [lo, hi) of that value. */
bool ApplyBound(const Expr& conjunct, const std::vector<Expr>& values,
                std::vector<std::pair<int64_t, int64_t>>* bounds) {
  auto* cmp = AsPtr<BinaryNode>(conjunct);
  if (!cmp) return false;
  NodeKind k = conjunct->kind;
  Expr side = cmp->a;
  auto c = AsConstInt(cmp->b);
  if (!c) {
    c = AsConstInt(cmp->a);
    side = cmp->b;
    if (!c) return false;
    switch (k) {
      case NodeKind::kLT:
        k = NodeKind::kGT;
        break;
      case NodeKind::kLE:
        k = NodeKind::kGE;
        break;
      case NodeKind::kGT:
        k = NodeKind::kLT;
        break;
      case NodeKind::kGE:
        k = NodeKind::kLE;
        break;
      default:
        return false;
    }
  }
  Expr base;
  int64_t offset;
  SplitOffset(side, &base, &offset);
  for (size_t i = 0; i < values.size(); ++i) {
    Expr value_base;
    int64_t value_offset;
    SplitOffset(values[i], &value_base, &value_offset);
    if (!StructuralEqual(value_base, base)) continue;
    // value = base + value_offset, and base + offset <op> c.
    int64_t bound = *c - offset + value_offset;  // value <op> bound
    auto& [lo, hi] = (*bounds)[i];
    switch (k) {
      case NodeKind::kLT:
        hi = std::min(hi, bound);
        break;
      case NodeKind::kLE:
        hi = std::min(hi, bound + 1);
        break;
      case NodeKind::kGT:
        lo = std::max(lo, bound + 1);
        break;
      case NodeKind::kGE:
        lo = std::max(lo, bound);
        break;
      default:
        return false;
    }
    return true;
  }
  return false;
}

/*! \brief Simplified, and a constant when the known ranges pin it to one value (as TVM's
 *  simplifier does for variables of unit loops). */
Expr SimplifyPinned(arith::Analyzer* ana, const Expr& e) {
  Expr s = ana->Simplify(e);
  if (!s->dtype.is_int() && !s->dtype.is_uint()) return s;
  arith::ConstIntBound b = ana->GetConstIntBound(s);
  if (b.min_value == b.max_value) return IntConst(s->dtype, b.min_value);
  return s;
}

}  // namespace

StmtSRef DecomposePadding(ScheduleState& state, const StmtSRef& block_sref,
                          const StmtSRef& loop_sref) {
  const BlockNode* block = BlockOf(block_sref);
  const ForNode* const_pos = LoopOf(loop_sref);
  BlockRealize realize = GetBlockRealize(state, block_sref.get());
  StmtSRef scope_root = GetScopeRoot(state, block_sref.get());
  if (!scope_root) Fail("decompose_padding: the block has no enclosing block");
  BlockScope scope = ComputeBlockScope(state, scope_root.get());
  std::string why = WhyNotComplete(state, block_sref.get(), scope);
  if (!why.empty()) {
    Fail("decompose_padding needs a complete block",
         "decompose_padding needs a complete block, and {0} is not one: " + why,
         {block_sref->stmt});
  }

  // The loops above the block, innermost first, up to the given loop; where the in-bound block's
  // own loops start (the highest loop over a chain of single loops, at most the given one).
  std::vector<StmtSRef> loop_srefs = GetLoopsAbove(state, block_sref.get());
  std::vector<const ForNode*> loops;
  arith::Analyzer ana;
  const ForNode* in_bound_pos = nullptr;
  bool found_const = false, found_in_bound = false;
  for (auto it = loop_srefs.rbegin(); it != loop_srefs.rend(); ++it) {
    const ForNode* loop = (*it)->loop();
    ana.Bind(loop->loop_var, RangeNode::Make(loop->min, loop->extent));
    loops.push_back(loop);
    if (loop == const_pos) {
      found_const = true;
      if (!found_in_bound) found_in_bound = true, in_bound_pos = loop;
    } else if (!found_in_bound) {
      if (!AsPtr<ForNode>(loop->body) && !AsPtr<BlockRealizeNode>(loop->body)) {
        found_in_bound = true;
      } else {
        in_bound_pos = loop;
      }
    }
  }
  if (!found_const) {
    Fail("decompose_padding: the loop is not an ancestor of the block",
         "decompose_padding: the loop {0} is not an ancestor of block {1}",
         {loop_sref->stmt, block_sref->stmt});
  }

  // The padding pattern: a store of if_then_else(predicate, value, constant pad).
  auto* store = AsPtr<BufferStoreNode>(block->body);
  if (!store) PatternError(block_sref, "its body is not one store to the buffer it writes");
  auto* call = AsPtr<CallNode>(store->value);
  if (!call || call->op_name() != "tir.if_then_else") {
    PatternError(block_sref,
                 "the stored value is not if_then_else(in-bound predicate, value, pad value)");
  }
  Expr pad_value = call->args[2];
  if (!AsConstInt(pad_value) && !AsPtr<FloatImmNode>(pad_value)) {
    PatternError(block_sref, "the pad value is not a constant");
  }
  VarMap bindings;
  for (size_t i = 0; i < block->iter_vars.size(); ++i)
    bindings[block->iter_vars[i]->var.get()] = realize->iter_values[i];
  std::vector<Expr> conjuncts;
  transform::SplitConjuncts(Substitute(call->args[0], bindings), &conjuncts);
  transform::SplitConjuncts(realize->predicate, &conjuncts);
  Expr in_bound_predicate;
  for (Expr c : conjuncts) {
    if (auto* likely = AsPtr<CallNode>(c); likely && likely->op_name() == "tir.likely")
      c = likely->args[0];
    in_bound_predicate = AndE(in_bound_predicate, c);
  }
  in_bound_predicate =
      in_bound_predicate ? ana.Simplify(in_bound_predicate) : IntConst(DataType::Bool(), 1);
  if (ana.CanProve(in_bound_predicate))
    PatternError(block_sref, "the in-bound predicate is always true");

  // The in-bound region of each iterator: the range of its binding, narrowed by the conjuncts
  // of the predicate, each a constant bound on one binding.
  std::vector<Range> region;
  {
    std::vector<std::pair<int64_t, int64_t>> bounds;
    for (const Expr& v : realize->iter_values) {
      arith::ConstIntBound b = ana.GetConstIntBound(v);
      if (b.min_value == arith::ConstIntBound::kNegInf ||
          b.max_value == arith::ConstIntBound::kPosInf) {
        PatternError(block_sref,
                     "the padding condition does not bound each block iterator separately");
      }
      bounds.emplace_back(b.min_value, b.max_value + 1);
    }
    std::vector<Expr> parts;
    transform::SplitConjuncts(in_bound_predicate, &parts);
    for (const Expr& p : parts) {
      if (!ApplyBound(p, realize->iter_values, &bounds)) {
        PatternError(block_sref,
                     "the padding condition does not bound each block iterator separately");
      }
    }
    for (size_t i = 0; i < bounds.size(); ++i) {
      DataType t = block->iter_vars[i]->var->dtype;
      auto [lo, hi] = bounds[i];
      if (hi <= lo) PatternError(block_sref, "the in-bound region is empty");
      region.push_back(RangeNode::Make(IntConst(t, lo), IntConst(t, hi - lo)));
    }
  }

  // The constant block: every iteration writes the pad; its loops (up to the given loop) are
  // copies of the block's.
  VarMap const_vars;
  std::vector<IterVar> const_iters;
  for (const IterVar& iv : block->iter_vars) {
    Var v = NewVar(iv->var->name, iv->var->dtype);
    const_iters.push_back(IterVarNode::Make(iv->dom, v, IterVarType::kDataPar));
    const_vars[iv->var.get()] = v;
  }
  std::vector<Var> const_loop_vars;
  for (const ForNode* loop : loops) {
    Var v = NewVar(loop->loop_var->name, loop->loop_var->dtype);
    const_loop_vars.push_back(v);
    const_vars[loop->loop_var.get()] = v;
    if (loop == const_pos) break;
  }
  auto const_expr = [&](const Expr& e) { return SimplifyPinned(&ana, Substitute(e, const_vars)); };
  std::vector<Expr> const_indices;
  for (const Expr& e : store->indices) const_indices.push_back(const_expr(e));
  std::vector<Range> const_region;
  for (const Range& r : block->writes[0]->region)
    const_region.push_back(RangeNode::Make(const_expr(r->min), const_expr(r->extent)));
  Block const_block = BlockNode::Make(
      const_iters, {}, {BufferRegionNode::Make(block->writes[0]->buffer, const_region)},
      block->name_hint + "_pad_const",
      BufferStoreNode::Make(store->buffer, pad_value, const_indices, store->predicate));
  std::vector<Expr> const_values;
  for (const Expr& v : realize->iter_values) const_values.push_back(const_expr(v));
  Stmt const_nest =
      BlockRealizeNode::Make(const_values, const_expr(realize->predicate), const_block);
  for (size_t i = 0; i < const_loop_vars.size(); ++i) {
    const_nest = ForNode::Make(const_loop_vars[i], loops[i]->min, loops[i]->extent,
                               ForKind::kSerial, const_nest);
  }

  // The in-bound block: iterators over the in-bound extents; loops bound to them shrink.
  std::unordered_map<const VarNode*, Range> loop_ranges;
  for (const ForNode* loop : loops) {
    loop_ranges[loop->loop_var.get()] = RangeNode::Make(loop->min, loop->extent);
    if (loop == in_bound_pos) break;
  }
  VarMap repl;
  std::vector<IterVar> iters;
  std::vector<Expr> values;
  for (size_t i = 0; i < region.size(); ++i) {
    const IterVar& old = block->iter_vars[i];
    Var v = NewVar(old->var->name, old->var->dtype);
    Range range = RangeNode::Make(IntConst(v->dtype, 0), region[i]->extent);
    iters.push_back(IterVarNode::Make(range, v, IterVarType::kDataPar));
    repl[old->var.get()] = AddE(v, region[i]->min);
    auto* loop_var = AsPtr<VarNode>(realize->iter_values[i]);
    if (loop_var && loop_ranges.count(loop_var)) {
      loop_ranges[loop_var] = range;
      values.push_back(realize->iter_values[i]);
      Var lv = std::static_pointer_cast<VarNode>(realize->iter_values[i]);
      repl[loop_var] = AddE(lv, region[i]->min);
      ana.Unbind(lv);
      ana.Bind(lv, range);
    } else {
      values.push_back(SimplifyPinned(&ana, SubE(realize->iter_values[i], region[i]->min)));
    }
  }
  auto rewrite = [&](const Expr& e) { return ana.Simplify(Substitute(e, repl)); };
  auto rewrite_regions = [&](const std::vector<BufferRegion>& regions) {
    std::vector<BufferRegion> out;
    for (const BufferRegion& r : regions) {
      std::vector<Range> ranges;
      for (const Range& d : r->region)
        ranges.push_back(RangeNode::Make(rewrite(d->min), rewrite(d->extent)));
      out.push_back(BufferRegionNode::Make(r->buffer, ranges, r->span));
    }
    return out;
  };
  std::vector<Expr> indices;
  for (const Expr& e : store->indices) indices.push_back(rewrite(e));
  Block in_bound = CopyBlock(block);
  in_bound->iter_vars = iters;
  in_bound->reads = rewrite_regions(block->reads);
  in_bound->writes = rewrite_regions(block->writes);
  in_bound->body = BufferStoreNode::Make(store->buffer, rewrite(call->args[1]), indices,
                                         store->predicate, store->span);
  Stmt in_bound_nest =
      BlockRealizeNode::Make(values, rewrite(in_bound_predicate), in_bound, realize->span);
  for (const ForNode* loop : loops) {
    auto it = loop_ranges.find(loop->loop_var.get());
    Expr min = it == loop_ranges.end() ? loop->min : it->second->min;
    Expr extent = it == loop_ranges.end() ? loop->extent : it->second->extent;
    in_bound_nest = ForNode::Make(loop->loop_var, min, extent, loop->for_kind, in_bound_nest,
                                  loop->thread_binding, loop->annotations, loop->span);
    if (loop == in_bound_pos) break;
  }

  // The constant nest goes before the given loop; the in-bound nest replaces its own loops.
  StmtEditor editor;
  Stmt at_pos = in_bound_pos == const_pos ? in_bound_nest : nullptr;
  if (in_bound_pos != const_pos) {
    StmtEditor inner;
    inner.replace[in_bound_pos] = in_bound_nest;
    at_pos = inner.VisitStmt(GetRef(const_pos));
  }
  editor.replace[const_pos] = SeqStmtNode::Flatten({const_nest, at_pos});
  Stmt result = editor.VisitStmt(scope_root->stmt);
  BlockReuse reuse = editor.reuse;
  reuse[block] = in_bound;
  state.Replace(scope_root.get(), scope_root->stmt.get(), result, reuse);
  return state.GetSRef(const_block.get());
}

}  // namespace schedule
}  // namespace tessera
