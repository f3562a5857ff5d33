// decompose_reduction: the init of a reduction becomes its own block, placed before a loop.
#include <algorithm>
#include <unordered_set>

#include "../utils.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/schedule/primitive.h"

namespace tessera {
namespace schedule {
namespace {}  // namespace

StmtSRef DecomposeReduction(ScheduleState& state, const StmtSRef& block_sref,
                            const StmtSRef& loop_sref) {
  const BlockNode* block = BlockOf(block_sref);
  LoopOf(loop_sref);  // checks that the handle is a loop
  if (!block->init) {
    Fail("decompose_reduction needs a reduction block, and this one has no init statement",
         "decompose_reduction needs a reduction block, but {0} has no init statement",
         {block_sref->stmt});
  }
  std::vector<StmtSRef> loops = GetLoopsAbove(state, block_sref.get());
  auto at = std::find(loops.begin(), loops.end(), loop_sref);
  if (at == loops.end()) {
    Fail("decompose_reduction: the loop is not an ancestor of the block",
         "decompose_reduction: the loop {1} is not an ancestor of block {0} in its scope",
         {block_sref->stmt, loop_sref->stmt});
  }
  size_t k = at - loops.begin();
  BlockRealize realize = GetBlockRealize(state, block_sref.get());
  std::unordered_set<const VarNode*> spatial_loops, reduce_loops;
  for (size_t i = 0; i < block->iter_vars.size(); ++i) {
    bool spatial = block->iter_vars[i]->iter_type == IterVarType::kDataPar;
    for (const StmtSRef& l : loops) {
      const VarNode* v = l->loop()->loop_var.get();
      if (UsesVars(realize->iter_values[i], {v}))
        (spatial ? spatial_loops : reduce_loops).insert(v);
    }
  }
  for (size_t j = 0; j < k; ++j) {
    if (reduce_loops.count(loops[j]->loop()->loop_var.get())) {
      Fail("The loop is not above all reduction loops of the block",
           "decompose_reduction expects the loop {1} to be above every loop bound to a reduction "
           "iterator of {0}, but {2} is above it",
           {block_sref->stmt, loop_sref->stmt, loops[j]->stmt});
    }
  }
  // The init block: the spatial iterators, over copies of the loops (from `loop` down) that
  // bind them.
  VarMap loop_map, iter_map;
  std::vector<For> init_loops;
  for (size_t j = k; j < loops.size(); ++j) {
    const ForNode* l = loops[j]->loop();
    if (!spatial_loops.count(l->loop_var.get())) continue;
    Var v = NewVar(l->loop_var->name + "_init", l->loop_var->dtype);
    loop_map[l->loop_var.get()] = v;
    init_loops.push_back(ForNode::Make(v, l->min, l->extent, l->for_kind, Evaluate0(),
                                       l->thread_binding, l->annotations, l->span));
  }
  std::vector<IterVar> iters;
  std::vector<Expr> values;
  for (size_t i = 0; i < block->iter_vars.size(); ++i) {
    const IterVar& iv = block->iter_vars[i];
    if (iv->iter_type != IterVarType::kDataPar) continue;
    Var v = NewVar(iv->var->name, iv->var->dtype);
    iter_map[iv->var.get()] = v;
    iters.push_back(IterVarNode::Make(iv->dom, v, iv->iter_type, iv->thread_tag, iv->span));
    values.push_back(Substitute(realize->iter_values[i], loop_map));
  }
  // Conjuncts of the predicate that involve only outer or copied loops still apply.
  std::vector<Expr> conjuncts;
  transform::SplitConjuncts(realize->predicate, &conjuncts);
  Expr predicate;
  for (const Expr& c : conjuncts) {
    bool drops = false;
    for (size_t j = k; j < loops.size(); ++j) {
      const VarNode* v = loops[j]->loop()->loop_var.get();
      if (!loop_map.count(v) && UsesVars(c, {v})) drops = true;
    }
    if (!drops) predicate = AndE(predicate, Substitute(c, loop_map));
  }
  Block init_block =
      BlockNode::Make(iters, {}, {}, block->name_hint + "_init", Substitute(block->init, iter_map));
  init_block = WithInferredRegions(init_block);
  init_block->annotations = block->annotations;  // as TVM: the init block keeps them
  Stmt init_nest = MakeLoopNest(
      init_loops, BlockRealizeNode::Make(values, predicate ? predicate : Bool(true), init_block));

  Block update = CopyBlock(block);
  update->init = nullptr;
  update->name_hint = block->name_hint + "_update";
  {
    // Without its init, the update reads back what it accumulates into: as TVM, the written
    // regions of buffers not read already come first.
    std::unordered_set<const BufferNode*> read;
    for (const BufferRegion& r : block->reads) read.insert(r->buffer.get());
    std::vector<BufferRegion> reads;
    for (const BufferRegion& w : block->writes) {
      if (!read.count(w->buffer.get())) reads.push_back(w);
    }
    reads.insert(reads.end(), block->reads.begin(), block->reads.end());
    update->reads = std::move(reads);
  }
  StmtEditor editor;
  editor.replace[realize.get()] =
      BlockRealizeNode::Make(realize->iter_values, realize->predicate, update, realize->span);
  editor.reuse[block] = update;
  const StmtSRefNode* parent = loop_sref->parent;
  editor.insert[parent->stmt.get()].emplace_back(ChildIndex(parent, loop_sref.get()), init_nest);
  Stmt result = editor.VisitStmt(parent->stmt);
  state.Replace(parent, parent->stmt.get(), result, editor.reuse);
  return state.GetSRef(init_block.get());
}

}  // namespace schedule
}  // namespace tessera
