// rfactor: split a reduction over a loop into a partial reduction into a buffer with one more
// dimension (the rfactor block) and a final reduction of that dimension (the write-back block).
#include <algorithm>

#include "../utils.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/ir/reducer.h"
#include "tessera/schedule/primitive.h"

namespace tessera {
namespace schedule {
namespace {

using Reducer = ReducerMatch;

std::vector<Expr> InsertAt(std::vector<Expr> v, size_t at, Expr e) {
  v.insert(v.begin() + static_cast<long>(at), std::move(e));
  return v;
}

}  // namespace

StmtSRef RFactor(ScheduleState& state, const StmtSRef& loop_sref, int factor_axis) {
  const ForNode* loop = LoopOf(loop_sref);
  if (loop->for_kind != ForKind::kSerial || loop->thread_binding) {
    Fail("The loop must be serial",
         "rfactor needs a serial loop, but {0} is " + std::string(ForKindName(loop->for_kind)),
         {loop_sref->stmt});
  }
  std::vector<StmtSRef> children = GetChildBlocks(state, loop_sref.get());
  if (children.size() != 1) {
    Fail("rfactor expects exactly one block under the loop",
         "rfactor expects exactly one block under the loop {0}, but there are " +
             std::to_string(children.size()),
         {loop_sref->stmt});
  }
  const StmtSRef& block_sref = children[0];
  const BlockNode* block = block_sref->block();
  StmtSRef scope_root = GetScopeRoot(state, block_sref.get());
  BlockScope scope = ComputeBlockScope(state, scope_root.get());
  std::string why = WhyNotReduction(state, block_sref.get(), scope);
  if (!why.empty()) {
    Fail("rfactor needs a reduction block under the loop",
         "rfactor needs a reduction block under the loop, but {0} is not one: " + why,
         {block_sref->stmt});
  }
  // As TVM: the scope must be a stage pipeline (each buffer read is produced completely).
  CheckStagePipeline(state, scope_root, scope);
  if (state.enable_check() && !GetCachedFlags(state, scope_root).stage_pipeline) {
    Fail("the scope is not a stage pipeline",
         "the scope {0} is not a stage pipeline: a block reads part of a buffer that its "
         "producers do not write in full",
         {scope_root->stmt});
  }
  BlockRealize realize = GetBlockRealize(state, block_sref.get());
  const VarNode* lv = loop->loop_var.get();
  // As TVM: no loop above the block serves both spatial and reduction iterators, and below the
  // outermost reduction loop every loop of extent > 1 serves a reduction iterator.
  {
    std::unordered_set<const VarNode*> spatial_vars, reduce_vars;
    for (size_t i = 0; i < block->iter_vars.size(); ++i) {
      auto* into =
          block->iter_vars[i]->iter_type == IterVarType::kCommReduce ? &reduce_vars : &spatial_vars;
      UsesVar(realize->iter_values[i], [&](const VarNode* v) {
        into->insert(v);
        return false;
      });
    }
    bool met_reduction = false;
    for (const StmtSRef& l : GetLoopsAbove(state, block_sref.get())) {
      const ForNode* f = LoopOf(l);
      bool sp = spatial_vars.count(f->loop_var.get()) != 0;
      bool rd = reduce_vars.count(f->loop_var.get()) != 0;
      if (sp && rd) {
        Fail("The loop is touched by both data-parallel and reduction block iterators",
             "The loop {0} is bound to both data-parallel and reduction iterators of {1}; "
             "rfactor needs every loop to serve one kind",
             {l->stmt, block_sref->stmt});
      }
      if (rd) met_reduction = true;
      if (!sp && !rd && met_reduction && !IsConstInt(f->extent, 1)) {
        Fail("A loop under the outermost reduction loop is not bound to any block iterator",
             "The loop {0} lies under a reduction loop of {1} but serves none of its "
             "iterators",
             {l->stmt, block_sref->stmt});
      }
    }
  }
  bool bound_to_reduce = false;
  for (size_t i = 0; i < block->iter_vars.size(); ++i) {
    if (!UsesVars(realize->iter_values[i], {lv})) continue;
    if (block->iter_vars[i]->iter_type == IterVarType::kCommReduce) {
      bound_to_reduce = true;
    } else {
      Fail("The loop is bound to a spatial iterator",
           "The loop {0} is bound to the spatial iterator '" + block->iter_vars[i]->var->name +
               "' of {1}; rfactor needs a loop bound only to reduction iterators",
           {loop_sref->stmt, block_sref->stmt});
    }
  }
  // As TVM, a loop of extent 1 bound to no iterator may be factored out (a unit dimension).
  if (!bound_to_reduce && !IsConstInt(loop->extent, 1)) {
    Fail("The loop is not bound to a reduction iterator",
         "The loop {0} is not bound to any reduction iterator of {1}",
         {loop_sref->stmt, block_sref->stmt});
  }
  // As TVM: a body of LetStmts ending in the update is read with the lets inlined.
  Stmt update = block->body;
  VarMap lets;
  while (auto* let = AsPtr<LetStmtNode>(update)) {
    lets[let->var.get()] = Substitute(let->value, lets);
    update = let->body;
  }
  if (!lets.empty()) update = Substitute(update, lets);
  auto* store = AsPtr<BufferStoreNode>(update);
  auto* init = AsPtr<BufferStoreNode>(block->init);
  std::optional<Reducer> reducer = store ? MatchReducer(store) : std::nullopt;
  if (!reducer || !init || init->buffer != store->buffer) {
    Fail("The reduction update is not a known reducer",
         "The update of {0} is not a known reducer: expected `B[i] = B[i] + x` (or *, T.min, "
         "T.max) with an init storing to the same buffer",
         {block_sref->stmt});
  }
  bool same_access = init->indices.size() == store->indices.size();
  for (size_t i = 0; same_access && i < init->indices.size(); ++i)
    same_access = StructuralEqual(init->indices[i], store->indices[i]);
  if (!same_access) {
    Fail("The init and the update of the reduction write different elements",
         "The init of {0} stores to " +
             AsScript(BufferLoadNode::Make(init->buffer, init->indices)) + " but its update to " +
             AsScript(BufferLoadNode::Make(store->buffer, store->indices)) +
             "; rfactor needs the same indices",
         {block_sref->stmt});
  }
  if (!StructuralEqual(Simplify(init->value), reducer->identity)) {
    Fail("The init value is not the identity of the reducer",
         "The init of {0} stores " + AsScript(init->value) + ", which is not the identity " +
             AsScript(reducer->identity) + " of its " + reducer->Name() + " update",
         {block_sref->stmt});
  }
  const Buffer& buffer = store->buffer;
  int ndim = static_cast<int>(buffer->shape.size());
  if (factor_axis < -(ndim + 1) || factor_axis > ndim) {
    Fail("The factor_axis is out of range",
         "The factor_axis " + std::to_string(factor_axis) + " is out of range [" +
             std::to_string(-(ndim + 1)) + ", " + std::to_string(ndim) + "] for the " +
             std::to_string(ndim) + "-dimensional buffer " + buffer->name,
         {block_sref->stmt});
  }
  size_t axis = static_cast<size_t>(factor_axis < 0 ? factor_axis + ndim + 1 : factor_axis);
  DataType t = loop->loop_var->dtype;

  // The rfactor buffer and block.
  std::vector<Expr> rf_shape = InsertAt(buffer->shape, axis, loop->extent);
  Buffer rf_decl = BufferNode::Decl(buffer->name + "_rf", buffer->dtype, rf_shape, buffer->scope());
  // As TVM (a copy of the reduction's buffer with one more dimension): a constant element
  // offset is kept with its type; TVM types a 0-d buffer's as int64 (its default index type).
  Buffer rf_buffer = BufferNode::Make(
      rf_decl->data, rf_decl->dtype, rf_shape, {},
      !AsConstInt(buffer->elem_offset) ? rf_decl->elem_offset
      : buffer->shape.empty() ? IntConst(DataType::Int(64), *AsConstInt(buffer->elem_offset))
                              : buffer->elem_offset,
      rf_decl->name, rf_decl->data_alignment, rf_decl->offset_factor);
  Var rf_var = NewVar("v" + loop->loop_var->name, t);
  IterVar rf_iter = IterVarNode::Make(RangeNode::Make(IntConst(t, 0), loop->extent), rf_var,
                                      IterVarType::kDataPar);
  std::vector<IterVar> rf_iters = {rf_iter};
  std::vector<Expr> rf_values = {loop->loop_var};
  // A reduction iterator bound to the rfactor loop is rewritten over the rfactor iterator and
  // new reduction iterators, one per other loop of its binding: the reduction of the rfactor
  // block must not run over the rfactor loop, or its init would be placed wrongly.
  std::vector<StmtSRef> loops = GetLoopsAbove(state, block_sref.get());
  VarMap rf_map, loop_iters;
  loop_iters[lv] = rf_var;
  for (size_t i = 0; i < block->iter_vars.size(); ++i) {
    const IterVar& iv = block->iter_vars[i];
    const Expr& binding = realize->iter_values[i];
    if (iv->iter_type != IterVarType::kCommReduce || !UsesVars(binding, {lv})) {
      rf_iters.push_back(iv);
      rf_values.push_back(binding);
      continue;
    }
    for (const StmtSRef& l : loops) {
      const ForNode* f = l->loop();
      const VarNode* v = f->loop_var.get();
      if (loop_iters.count(v) || !UsesVars(binding, {v})) continue;
      Var nv = NewVar("v" + f->loop_var->name, f->loop_var->dtype);
      loop_iters[v] = nv;
      rf_iters.push_back(
          IterVarNode::Make(RangeNode::Make(f->min, f->extent), nv, IterVarType::kCommReduce));
      rf_values.push_back(f->loop_var);
    }
    rf_map[iv->var.get()] = Simplify(Substitute(binding, loop_iters));
  }
  std::vector<Expr> rf_indices = InsertAt(store->indices, axis, rf_var);
  Expr rf_acc = BufferLoadNode::Make(rf_buffer, rf_indices);
  Stmt rf_body = BufferStoreNode::Make(
      rf_buffer, reducer->Combine(rf_acc, Substitute(reducer->rhs, rf_map)), rf_indices);
  Stmt rf_init = BufferStoreNode::Make(rf_buffer, reducer->identity, rf_indices);
  // As TVM: when the rfactor loop was the only reduction, each partial result is one value,
  // stored without an init.
  bool rf_reduces = std::any_of(rf_iters.begin(), rf_iters.end(), [](const IterVar& iv) {
    return iv->iter_type == IterVarType::kCommReduce;
  });
  if (!rf_reduces) {
    rf_body = BufferStoreNode::Make(rf_buffer, Substitute(reducer->rhs, rf_map), rf_indices);
    rf_init = nullptr;
  }
  Block rf_block = BlockNode::Make(rf_iters, {}, {}, block->name_hint + "_rf", rf_body, rf_init, {},
                                   {}, block->annotations);
  rf_block = WithInferredRegions(rf_block);
  Stmt rf_realize = BlockRealizeNode::Make(rf_values, realize->predicate, rf_block, realize->span);

  // The write-back block over copies of the spatial loops and the rfactor loop.
  // As TVM, it keeps every loop but those bound to reduction iterators (the rfactor loop
  // excepted): unit loops bound to nothing stay.
  std::unordered_set<const VarNode*> reduce_loops;
  for (size_t i = 0; i < block->iter_vars.size(); ++i) {
    if (block->iter_vars[i]->iter_type != IterVarType::kCommReduce) continue;
    for (const StmtSRef& l : loops) {
      if (UsesVars(realize->iter_values[i], {l->loop()->loop_var.get()}))
        reduce_loops.insert(l->loop()->loop_var.get());
    }
  }
  // It goes right after the reduction, in the deepest loop holding the reduction and every
  // reader of its buffer; loops above that point are shared, the ones below are copied.
  std::vector<const StmtSRefNode*> users = {block_sref.get()};
  for (const StmtSRef& b : scope.blocks) {
    if (b == block_sref) continue;
    for (const BufferRegion& r : b->block()->reads) {
      if (r->buffer == buffer) users.push_back(b.get());
    }
  }
  const StmtSRefNode* parent = users.size() > 1 ? LowestCommonAncestor(users) : scope_root.get();
  for (size_t u = 1; u < users.size(); ++u) {
    if (IsAncestor(loop_sref.get(), users[u])) {
      Fail("A reader of the reduction's result is inside the rfactor loop",
           "The block {1} reads the result of {0} inside the rfactor loop {2}",
           {block_sref->stmt, users[u]->stmt, loop_sref->stmt});
    }
  }
  int64_t wb_position = ChildIndex(parent, block_sref.get()) + 1;
  for (size_t u = 1; u < users.size(); ++u) {
    if (ChildIndex(parent, users[u]) < wb_position) {
      Fail("A reader of the reduction's result shares its loop nest",
           "The block {1} reads the result of {0} in the loop nest of the reduction",
           {block_sref->stmt, users[u]->stmt});
    }
  }
  VarMap loop_map;
  std::vector<For> wb_loops;
  for (const StmtSRef& l : loops) {
    const ForNode* f = l->loop();
    if (!IsAncestor(parent, l.get())) continue;  // shared with the write-back block
    if (f != loop && reduce_loops.count(f->loop_var.get())) continue;
    Var v = NewVar(f->loop_var->name, f->loop_var->dtype);
    loop_map[f->loop_var.get()] = v;
    wb_loops.push_back(ForNode::Make(v, f->min, f->extent, f->for_kind, Evaluate0(),
                                     f->thread_binding, f->annotations, f->span));
  }
  Var wb_rf_var = NewVar("v" + loop->loop_var->name, t);
  std::vector<IterVar> wb_iters = {IterVarNode::Make(RangeNode::Make(IntConst(t, 0), loop->extent),
                                                     wb_rf_var, IterVarType::kCommReduce)};
  std::vector<Expr> wb_values = {loop_map.at(lv)};
  VarMap wb_map;
  for (size_t i = 0; i < block->iter_vars.size(); ++i) {
    const IterVar& iv = block->iter_vars[i];
    if (iv->iter_type != IterVarType::kDataPar) continue;
    Var v = NewVar(iv->var->name, iv->var->dtype);
    wb_map[iv->var.get()] = v;
    wb_iters.push_back(IterVarNode::Make(iv->dom, v, iv->iter_type, iv->thread_tag, iv->span));
    wb_values.push_back(Substitute(realize->iter_values[i], loop_map));
  }
  std::vector<Expr> wb_indices;
  for (const Expr& e : store->indices) wb_indices.push_back(Substitute(e, wb_map));
  Expr wb_acc = BufferLoadNode::Make(buffer, wb_indices);
  Expr partial = BufferLoadNode::Make(rf_buffer, InsertAt(wb_indices, axis, wb_rf_var));
  Stmt wb_body = BufferStoreNode::Make(buffer, reducer->Combine(wb_acc, partial), wb_indices);
  Stmt wb_init = BufferStoreNode::Make(buffer, Substitute(init->value, wb_map), wb_indices);
  Block wb_block = BlockNode::Make(wb_iters, {}, {}, block->name_hint, wb_body, wb_init, {}, {},
                                   block->annotations);
  wb_block = WithInferredRegions(wb_block);
  // The write-back block reads only the partial results whose init ran: the rf block's init
  // runs at the first value of the loops the write-back drops, so each conjunct of the
  // predicate is kept with those loops at their minimum. (Dropping such a conjunct read partial
  // results that were never initialized, e.g. rfactor over a split of 3 by 7: rows 3..6.)
  VarMap dropped_at_min;
  for (const StmtSRef& l : loops) {
    const VarNode* v = l->loop()->loop_var.get();
    if (IsAncestor(parent, l.get()) && !loop_map.count(v)) dropped_at_min[v] = l->loop()->min;
  }
  std::vector<Expr> conjuncts;
  transform::SplitConjuncts(realize->predicate, &conjuncts);
  Expr wb_predicate;
  for (const Expr& c : conjuncts) {
    Expr kept = Simplify(Substitute(Substitute(c, dropped_at_min), loop_map));
    if (const auto* imm = AsPtr<IntImmNode>(kept); imm && imm->value != 0) continue;
    wb_predicate = AndE(wb_predicate, kept);
  }
  Stmt wb_nest = MakeLoopNest(
      wb_loops,
      BlockRealizeNode::Make(wb_values, wb_predicate ? wb_predicate : Bool(true), wb_block));

  StmtEditor editor;
  editor.replace[realize.get()] = rf_realize;
  editor.insert[parent->stmt.get()].emplace_back(wb_position, wb_nest);
  // Handles of the reduction now refer to the write-back block.
  EditAndAllocate(state, AllocationSite(state, block_sref.get(), buffer.get()), &editor, rf_buffer,
                  {{block, wb_block}});
  return state.GetSRef(rf_block.get());
}

}  // namespace schedule
}  // namespace tessera
