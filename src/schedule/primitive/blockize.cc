// blockize: wrap the subtree of a loop (or consecutive sibling blocks) in a new outer block.
#include <algorithm>

#include "../utils.h"
#include "tessera/schedule/primitive.h"

namespace tessera {
namespace schedule {
namespace {

// Splits a binding into the terms over outer loops (and constants) and those over inner loops.
bool SplitTerms(const Expr& e, const std::unordered_set<const VarNode*>& inner, Expr* outer_part,
                Expr* inner_part, bool negate = false) {
  auto add = [&](Expr* acc, const Expr& term) {
    Expr t = negate ? SubE(IntConst(term->dtype, 0), term) : term;
    *acc = *acc ? AddE(*acc, t) : t;
  };
  if (auto* a = AsPtr<AddNode>(e)) {
    return SplitTerms(a->a, inner, outer_part, inner_part, negate) &&
           SplitTerms(a->b, inner, outer_part, inner_part, negate);
  }
  if (auto* s = AsPtr<SubNode>(e)) {
    return SplitTerms(s->a, inner, outer_part, inner_part, negate) &&
           SplitTerms(s->b, inner, outer_part, inner_part, !negate);
  }
  bool uses_inner = UsesVars(e, inner);
  bool uses_outer = UsesVar(e, [&](const VarNode* v) { return !inner.count(v); });
  if (uses_inner && uses_outer) return false;
  add(uses_inner ? inner_part : outer_part, e);
  return true;
}

}  // namespace

BlockizeResult BlockizeImpl(ScheduleState& state, const StmtSRef& loop_sref,
                            bool preserve_unit_iters) {
  LoopOf(loop_sref);
  std::vector<StmtSRef> children = GetChildBlocks(state, loop_sref.get());
  if (children.size() != 1) {
    Fail("blockize expects exactly one block under the loop",
         "blockize expects exactly one block under the loop {0}, but there are " +
             std::to_string(children.size()),
         {loop_sref->stmt});
  }
  const StmtSRef& block_sref = children[0];
  const BlockNode* block = block_sref->block();
  BlockRealize realize = GetBlockRealize(state, block_sref.get());
  std::vector<StmtSRef> loops = GetLoopsAbove(state, block_sref.get());
  auto at = std::find(loops.begin(), loops.end(), loop_sref);
  TESSERA_ICHECK(at != loops.end()) << "blockize: the block is not under the loop";
  std::unordered_set<const VarNode*> inner_vars;
  DomMap inner_dom;
  for (auto it = at; it != loops.end(); ++it) {
    const ForNode* f = (*it)->loop();
    inner_vars.insert(f->loop_var.get());
    inner_dom[f->loop_var.get()] = RangeNode::Make(f->min, f->extent);
  }
  arith::Analyzer ana;
  VarMap unit_loops;  // outer loops of extent 1, as their start
  for (auto it = loops.begin(); it != at; ++it) {
    const ForNode* f = (*it)->loop();
    ana.Bind(f->loop_var, RangeNode::Make(f->min, f->extent));
    if (IsConstInt(f->extent, 1)) unit_loops[f->loop_var.get()] = f->min;
  }

  std::vector<IterVar> outer_iters, inner_iters;
  std::vector<Expr> outer_values, inner_values;
  VarMap body_map;
  bool outer_reduce = false;
  for (size_t i = 0; i < block->iter_vars.size(); ++i) {
    const IterVar& iv = block->iter_vars[i];
    DataType t = iv->var->dtype;
    const Expr& binding = realize->iter_values[i];
    Expr outer_part, inner_part;
    auto not_expressible = [&]() {
      Fail("The binding cannot be expressed over the outer iterators",
           "The binding of '" + iv->var->name +
               "' in {0} cannot be split into a part over the loops "
               "outside {1} and a part over the loops inside it",
           {block_sref->stmt, loop_sref->stmt});
    };
    if (!SplitTerms(binding, inner_vars, &outer_part, &inner_part)) not_expressible();
    if (!outer_part) outer_part = IntConst(t, 0);
    if (!inner_part) inner_part = IntConst(t, 0);
    auto bounds = EvalBounds(inner_part, inner_dom);
    auto lo = bounds ? AsConstInt(bounds->first) : std::nullopt;
    auto hi = bounds ? AsConstInt(bounds->second) : std::nullopt;
    if (!lo || !hi) not_expressible();
    if (*lo != 0) {
      outer_part = Simplify(AddE(outer_part, IntConst(t, *lo)));
      inner_part = Simplify(SubE(inner_part, IntConst(t, *lo)));
    }
    int64_t extent = *hi - *lo + 1;
    bool has_inner = UsesVars(inner_part, inner_vars) ||
                     (preserve_unit_iters && extent == 1 && UsesVars(binding, inner_vars));
    // As TVM, every iterator has an outer part: one bound wholly inside the loop gets an outer
    // iterator of extent 1 bound to 0.
    bool outer_zero = has_inner && IsConstInt(outer_part, 0);
    bool has_outer = true;
    Var vo, vi;
    if (has_outer) {
      Expr outer_value = outer_part;
      Range dom = iv->dom;
      if (outer_zero) {
        outer_value = IntConst(t, 0);
        dom = RangeNode::Make(IntConst(t, 0), IntConst(t, 1));
      } else if (has_inner && extent > 1) {
        auto dom_extent = AsConstInt(iv->dom->extent);
        if (!IsConstInt(iv->dom->min, 0) || !dom_extent || *dom_extent % extent != 0 ||
            !ana.CanProveEqual(FloorModE(outer_part, IntConst(t, extent)), IntConst(t, 0))) {
          not_expressible();
        }
        outer_value = Simplify(FloorDivE(outer_part, IntConst(t, extent)));
        dom = RangeNode::Make(IntConst(t, 0), IntConst(t, *dom_extent / extent));
      }
      vo = NewVar(iv->var->name + (has_inner ? "_o" : ""), t);
      // As TVM's analyzer: without preserve_unit_iters, a loop of extent 1 binds as its start.
      if (!preserve_unit_iters &&
          UsesVar(outer_value, [&](const VarNode* v) { return unit_loops.count(v) > 0; })) {
        outer_value = Simplify(Substitute(outer_value, unit_loops));
      }
      outer_iters.push_back(IterVarNode::Make(dom, vo, iv->iter_type));
      outer_values.push_back(outer_value);
      outer_reduce = outer_reduce || iv->iter_type == IterVarType::kCommReduce;
    }
    if (has_inner) {
      vi = NewVar(iv->var->name + (outer_zero ? "" : "_i"), t);
      inner_iters.push_back(IterVarNode::Make(RangeNode::Make(IntConst(t, 0), IntConst(t, extent)),
                                              vi, iv->iter_type));
      inner_values.push_back(inner_part);
    }
    // An outer iterator of extent 1 is its start (0) in the body, as TVM's analyzer simplifies.
    bool unit_outer = !outer_zero && has_inner && IsConstInt(outer_iters.back()->dom->extent, 1) &&
                      IsConstInt(outer_iters.back()->dom->min, 0);
    Expr value = !has_inner ? Expr(vo)
                 : outer_zero || unit_outer
                     ? Expr(vi)
                     : AddE(extent > 1 ? MulE(vo, IntConst(t, extent)) : Expr(vo), vi);
    body_map[iv->var.get()] = value;
  }

  // The inner block over the inner iterators.
  Block inner = CopyBlock(block);
  inner->iter_vars = inner_iters;
  inner->body = Substitute(block->body, body_map);
  inner->init = Substitute(block->init, body_map);
  for (BufferRegion& r : inner->reads) r = Substitute(r, body_map);
  for (BufferRegion& r : inner->writes) r = Substitute(r, body_map);
  for (MatchBufferRegion& m : inner->match_buffers) {
    m = MatchBufferRegionNode::Make(m->buffer, Substitute(m->source, body_map), m->span);
  }
  Stmt outer_init;
  if (block->init && outer_reduce) {
    // The init runs once per outer reduction: as TVM, it moves to the outer block as a block
    // "<name>_init" over the inner spatial iterators it uses, under copies of the inner loops
    // those iterators are bound to.
    VarMap init_map;
    std::vector<IterVar> init_iters;
    std::vector<Expr> init_values;
    for (size_t k = 0; k < inner_iters.size(); ++k) {
      const IterVar& iv = inner_iters[k];
      const VarNode* var = iv->var.get();
      if (iv->iter_type != IterVarType::kDataPar ||
          !UsesVar(inner->init, [&](const VarNode* v) { return v == var; })) {
        continue;
      }
      Var v = NewVar(iv->var->name + "_init", iv->var->dtype);
      init_map[var] = v;
      init_iters.push_back(IterVarNode::Make(iv->dom, v, iv->iter_type));
      init_values.push_back(inner_values[k]);
    }
    std::vector<BufferRegion> init_writes;
    for (const BufferRegion& w : inner->writes) init_writes.push_back(Substitute(w, init_map));
    Block init_block = BlockNode::Make(init_iters, {}, init_writes, block->name_hint + "_init",
                                       Substitute(inner->init, init_map), nullptr);
    std::vector<For> init_loops;
    VarMap loop_map;
    for (auto it = at; it != loops.end(); ++it) {
      const ForNode* f = (*it)->loop();
      bool used = false;
      for (const Expr& e : init_values) {
        used = used || UsesVar(e, [&](const VarNode* v) { return v == f->loop_var.get(); });
      }
      if (!used) continue;
      Var v = NewVar(f->loop_var->name, f->loop_var->dtype);
      loop_map[f->loop_var.get()] = v;
      init_loops.push_back(ForNode::Make(v, Substitute(f->min, loop_map),
                                         Substitute(f->extent, loop_map), f->for_kind, Evaluate0(),
                                         f->thread_binding, f->annotations));
    }
    for (Expr& e : init_values) e = Substitute(e, loop_map);
    outer_init = MakeLoopNest(
        init_loops,
        BlockRealizeNode::Make(init_values, Substitute(realize->predicate, loop_map), init_block));
    inner->init = nullptr;
    // Without its init, the inner block reads back what it accumulates into (as TVM: the
    // written regions first, then the block's reads).
    std::vector<BufferRegion> reads = inner->writes;
    reads.insert(reads.end(), inner->reads.begin(), inner->reads.end());
    inner->reads = std::move(reads);
  }
  Stmt inner_realize =
      BlockRealizeNode::Make(inner_values, realize->predicate, inner, realize->span);
  StmtEditor editor;
  editor.replace[realize.get()] = inner_realize;
  Stmt subtree = editor.VisitStmt(loop_sref->stmt);
  Block outer = BlockNode::Make(outer_iters, {}, {}, block->name_hint + "_o", subtree, outer_init);
  outer = WithInferredRegions(outer);
  Stmt outer_realize = BlockRealizeNode::Make(outer_values, Bool(true), outer);
  BlockReuse reuse = editor.reuse;
  reuse[block] = inner;
  return {outer_realize, outer, reuse};
}

StmtSRef Blockize(ScheduleState& state, const StmtSRef& loop_sref, bool preserve_unit_iters) {
  const ForNode* loop = LoopOf(loop_sref);
  BlockizeResult result = BlockizeImpl(state, loop_sref, preserve_unit_iters);
  state.Replace(loop_sref.get(), loop, result.realize, result.reuse);
  return state.GetSRef(result.outer.get());
}

StmtSRef BlockizeBlocks(ScheduleState& state, const std::vector<StmtSRef>& block_srefs,
                        bool preserve_unit_iters) {
  if (block_srefs.empty()) Fail("blockize needs at least one block");
  for (const StmtSRef& b : block_srefs) BlockOf(b);
  const StmtSRefNode* parent = block_srefs[0]->parent;
  if (!parent) Fail("Cannot blockize the root block", "", {block_srefs[0]->stmt});
  std::vector<Stmt> items = BodyItems(BodyOf(parent));
  std::vector<int64_t> positions;
  for (const StmtSRef& b : block_srefs) {
    if (b->parent != parent) {
      Fail("The blocks are not siblings", "The blocks {0} and {1} do not have the same parent",
           {block_srefs[0]->stmt, b->stmt});
    }
    BlockRealize realize = GetBlockRealize(state, b.get());
    auto it = std::find(items.begin(), items.end(), realize);
    if (it == items.end()) {
      Fail("The block is not a direct statement of its parent", "", {b->stmt});
    }
    positions.push_back(it - items.begin());
  }
  std::vector<int64_t> sorted = positions;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 1; i < sorted.size(); ++i) {
    if (sorted[i] != sorted[i - 1] + 1) {
      Fail("The blocks are not consecutive",
           "The blocks to blockize must be consecutive statements");
    }
  }
  std::vector<Stmt> group(items.begin() + sorted.front(), items.begin() + sorted.back() + 1);
  std::string name = block_srefs[0]->block()->name_hint + "_o";
  Block outer = BlockNode::Make({}, {}, {}, name, SeqStmtNode::Flatten(group));
  outer = WithInferredRegions(outer);
  std::vector<Stmt> new_items(items.begin(), items.begin() + sorted.front());
  new_items.push_back(BlockRealizeNode::Make({}, Bool(true), outer));
  new_items.insert(new_items.end(), items.begin() + sorted.back() + 1, items.end());
  Stmt body = ReplaceUnderDecls(BodyOf(parent), SeqStmtNode::Flatten(new_items));
  if (const ForNode* loop = parent->loop()) {
    state.Replace(parent, loop,
                  ForNode::Make(loop->loop_var, loop->min, loop->extent, loop->for_kind, body,
                                loop->thread_binding, loop->annotations, loop->span));
  } else {
    Block copy = CopyBlock(parent->block());
    copy->body = body;
    state.Replace(parent, parent->stmt.get(), copy);
  }
  return state.GetSRef(outer.get());
}

}  // namespace schedule
}  // namespace tessera
