// rfactor: split a reduction over a loop into a partial reduction into a buffer with one more
// dimension (the rfactor block) and a final reduction of that dimension (the write-back block).
#include <algorithm>
#include <functional>

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

/*!
 * \brief The reduction of a block: one buffer (`B[i] = B[i] op x`, with the LetStmts above the
 *  update inlined) or, as TVM, several buffers updated together (`with T.init()` storing each,
 *  one LetStmt per buffer computing its new value, then the stores of those values) by a known
 *  tuple reducer such as argmax. The buffers are in the order of their LetStmts.
 */
struct Reduction {
  Stmt update;  // keeps the inlined update of a one-buffer reduction alive
  std::vector<const BufferStoreNode*> updates;
  std::vector<Expr> init_values, rhs, identity;
  std::function<std::vector<Expr>(const std::vector<Expr>&, const std::vector<Expr>&)> combine;
};

[[noreturn]] void FailUnknownReducer(const StmtSRef& block_sref) {
  Fail("The reduction update is not a known reducer",
       "The update of {0} is not a known reducer: expected `B[i] = B[i] + x` (or *, T.min, "
       "T.max, or `or` / `and` of bools) with an init storing to the same buffer, or an argmax "
       "/ argmin (or a pair of "
       "sums) over two buffers, each new value bound by a LetStmt and then stored",
       {block_sref->stmt});
}

void CheckIdentity(const StmtSRef& block_sref, const Expr& init, const Expr& identity,
                   const std::string& reducer) {
  if (!StructuralEqual(Simplify(init), identity)) {
    Fail("The init value is not the identity of the reducer",
         "The init of {0} stores " + AsScript(init) + ", which is not the identity " +
             AsScript(identity) + " of its " + reducer + " update",
         {block_sref->stmt});
  }
}

// `a` and `b` store to the same indices; `a` is the init's store when `b` is the update's.
void CheckSameAccess(const StmtSRef& block_sref, const BufferStoreNode* a, const BufferStoreNode* b,
                     bool init_and_update) {
  bool same = a->indices.size() == b->indices.size();
  for (size_t i = 0; same && i < a->indices.size(); ++i)
    same = StructuralEqual(a->indices[i], b->indices[i]);
  if (!same) {
    Fail("The init and the update of the reduction write different elements",
         std::string(init_and_update ? "The init of {0} stores to "
                                     : "The reduction {0} stores to ") +
             AsScript(BufferLoadNode::Make(a->buffer, a->indices)) +
             (init_and_update ? " but its update to " : " and to ") +
             AsScript(BufferLoadNode::Make(b->buffer, b->indices)) +
             "; rfactor needs the same indices",
         {block_sref->stmt});
  }
}

Reduction ExtractOneBuffer(const StmtSRef& block_sref) {
  const BlockNode* block = block_sref->block();
  Reduction red;
  // As TVM: a body of LetStmts ending in the update is read with the lets inlined.
  Stmt update = block->body;
  VarMap lets;
  while (auto* let = AsPtr<LetStmtNode>(update)) {
    lets[let->var.get()] = Substitute(let->value, lets);
    update = let->body;
  }
  if (!lets.empty()) update = Substitute(update, lets);
  red.update = update;
  auto* store = AsPtr<BufferStoreNode>(update);
  auto* init = AsPtr<BufferStoreNode>(block->init);
  std::optional<Reducer> reducer =
      store ? MatchReducer(store, init ? Simplify(init->value) : Expr(), true) : std::nullopt;
  if (!reducer || !init || init->buffer != store->buffer) FailUnknownReducer(block_sref);
  CheckSameAccess(block_sref, init, store, true);
  CheckIdentity(block_sref, init->value, reducer->identity, reducer->Name());
  red.updates = {store};
  red.init_values = {init->value};
  red.rhs = {reducer->rhs};
  red.identity = {reducer->identity};
  red.combine = [r = *reducer](const std::vector<Expr>& acc, const std::vector<Expr>& value) {
    return std::vector<Expr>{r.Combine(acc[0], value[0])};
  };
  return red;
}

Reduction ExtractReduction(const StmtSRef& block_sref) {
  const BlockNode* block = block_sref->block();
  auto* init_seq = AsPtr<SeqStmtNode>(block->init);
  if (!init_seq || init_seq->seq.size() < 2) return ExtractOneBuffer(block_sref);
  size_t n = init_seq->seq.size();
  std::vector<const BufferStoreNode*> inits;
  for (const Stmt& s : init_seq->seq) {
    auto* st = AsPtr<BufferStoreNode>(s);
    if (!st) FailUnknownReducer(block_sref);
    for (const BufferStoreNode* other : inits) {
      if (other->buffer == st->buffer) FailUnknownReducer(block_sref);
    }
    inits.push_back(st);
  }
  std::vector<const LetStmtNode*> lets;
  const Stmt* body = &block->body;
  while (auto* let = AsPtr<LetStmtNode>(*body)) {
    lets.push_back(let);
    body = &let->body;
  }
  auto* seq = AsPtr<SeqStmtNode>(*body);
  if (lets.size() != n || !seq || seq->seq.size() != n) FailUnknownReducer(block_sref);
  Reduction red;
  red.updates.assign(n, nullptr);
  for (const Stmt& s : seq->seq) {
    auto* st = AsPtr<BufferStoreNode>(s);
    if (!st) FailUnknownReducer(block_sref);
    size_t i = 0;
    while (i < n && st->value.get() != lets[i]->var.get()) ++i;
    if (i == n || red.updates[i]) FailUnknownReducer(block_sref);
    red.updates[i] = st;
  }
  std::vector<Expr> accs, values;
  for (size_t i = 0; i < n; ++i) {
    const BufferStoreNode* u = red.updates[i];
    auto it = std::find_if(inits.begin(), inits.end(),
                           [&](const BufferStoreNode* st) { return st->buffer == u->buffer; });
    if (it == inits.end()) FailUnknownReducer(block_sref);
    CheckSameAccess(block_sref, red.updates[0], u, false);
    CheckSameAccess(block_sref, *it, u, true);
    const std::vector<Expr>& shape = u->buffer->shape;
    const std::vector<Expr>& shape0 = red.updates[0]->buffer->shape;
    bool same_shape = shape.size() == shape0.size();
    for (size_t d = 0; same_shape && d < shape.size(); ++d)
      same_shape = StructuralEqual(Simplify(shape[d]), Simplify(shape0[d]));
    if (!same_shape) {
      Fail("The buffers of the reduction differ in shape",
           "The reduction {0} updates " + red.updates[0]->buffer->name + " and " + u->buffer->name +
               ", whose shapes differ; rfactor needs them to be the same",
           {block_sref->stmt});
    }
    red.init_values.push_back((*it)->value);
    accs.push_back(BufferLoadNode::Make(u->buffer, u->indices));
    values.push_back(lets[i]->value);
  }
  std::optional<TupleReducerMatch> m = MatchTupleReducer(accs, values);
  if (!m) FailUnknownReducer(block_sref);
  // The folded values must not read a new value bound by another LetStmt of the update.
  std::unordered_set<const VarNode*> let_vars;
  for (const LetStmtNode* let : lets) let_vars.insert(let->var.get());
  for (const Expr& r : m->rhs) {
    if (UsesVars(r, let_vars)) FailUnknownReducer(block_sref);
  }
  for (size_t i = 0; i < n; ++i)
    CheckIdentity(block_sref, red.init_values[i], m->identity[i], m->name);
  red.rhs = m->rhs;
  red.identity = m->identity;
  red.combine = [r = *m](const std::vector<Expr>& acc, const std::vector<Expr>& value) {
    return r.Combine(acc, value);
  };
  return red;
}

/*! \brief `buffer` with one more dimension of `extent` at `axis` (named `<buffer>_rf`). */
Buffer RFactorBuffer(const Buffer& buffer, size_t axis, const Expr& extent) {
  std::vector<Expr> rf_shape = InsertAt(buffer->shape, axis, extent);
  Buffer rf_decl = BufferNode::Decl(buffer->name + "_rf", buffer->dtype, rf_shape, buffer->scope());
  // As TVM (a copy of the reduction's buffer with one more dimension): a constant element
  // offset is kept with its type; TVM types a 0-d buffer's as int64 (its default index type).
  return BufferNode::Make(rf_decl->data, rf_decl->dtype, rf_shape, {},
                          !AsConstInt(buffer->elem_offset) ? rf_decl->elem_offset
                          : buffer->shape.empty()
                              ? IntConst(DataType::Int(64), *AsConstInt(buffer->elem_offset))
                              : buffer->elem_offset,
                          rf_decl->name, rf_decl->data_alignment, rf_decl->offset_factor);
}

/*! \brief `regions` stably sorted by the position of their buffer in `order` (others last). */
void OrderRegions(std::vector<BufferRegion>* regions, const std::vector<const BufferNode*>& order) {
  auto rank = [&](const BufferRegion& r) {
    return std::find(order.begin(), order.end(), r->buffer.get()) - order.begin();
  };
  std::stable_sort(regions->begin(), regions->end(),
                   [&](const BufferRegion& a, const BufferRegion& b) { return rank(a) < rank(b); });
}

/*! \brief `buffers[i][indices] = values[i]`, in order. */
Stmt Stores(const std::vector<Buffer>& buffers, const std::vector<Expr>& indices,
            const std::vector<Expr>& values) {
  std::vector<Stmt> stores;
  for (size_t i = 0; i < buffers.size(); ++i)
    stores.push_back(BufferStoreNode::Make(buffers[i], values[i], indices));
  return SeqStmtNode::Flatten(stores);
}

/*! \brief The update storing `values`: one store, or (as TVM) for several buffers a LetStmt
 *  per new value (`v_<buffer>`) around the stores, so that each reads the old values. */
Stmt ReductionBody(const std::vector<Buffer>& buffers, const std::vector<Expr>& indices,
                   const std::vector<Expr>& values) {
  if (buffers.size() == 1) return BufferStoreNode::Make(buffers[0], values[0], indices);
  std::vector<Var> vars;
  std::vector<Expr> loads;
  for (size_t i = 0; i < buffers.size(); ++i) {
    vars.push_back(VarNode::Make("v_" + buffers[i]->name, values[i]->dtype));
    loads.push_back(vars.back());
  }
  Stmt body = Stores(buffers, indices, loads);
  for (size_t i = buffers.size(); i-- > 0;) body = LetStmtNode::Make(vars[i], values[i], body);
  return body;
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
  Reduction red = ExtractReduction(block_sref);
  const Buffer& buffer = red.updates[0]->buffer;
  size_t n_buffers = red.updates.size();
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

  // The rfactor buffers (one per reduced buffer) and block.
  std::vector<Buffer> rf_buffers;
  for (const BufferStoreNode* u : red.updates)
    rf_buffers.push_back(RFactorBuffer(u->buffer, axis, loop->extent));
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
  std::vector<Expr> rf_indices = InsertAt(red.updates[0]->indices, axis, rf_var);
  std::vector<Expr> rf_accs, rf_folded;
  for (size_t i = 0; i < n_buffers; ++i) {
    rf_accs.push_back(BufferLoadNode::Make(rf_buffers[i], rf_indices));
    rf_folded.push_back(Substitute(red.rhs[i], rf_map));
  }
  // As TVM: when the rfactor loop was the only reduction, each partial result is one value,
  // stored without an init.
  bool rf_reduces = std::any_of(rf_iters.begin(), rf_iters.end(), [](const IterVar& iv) {
    return iv->iter_type == IterVarType::kCommReduce;
  });
  Stmt rf_body = rf_reduces ? ReductionBody(rf_buffers, rf_indices, red.combine(rf_accs, rf_folded))
                            : Stores(rf_buffers, rf_indices, rf_folded);
  Stmt rf_init = rf_reduces ? Stores(rf_buffers, rf_indices, red.identity) : nullptr;
  Block rf_block = BlockNode::Make(rf_iters, {}, {}, block->name_hint + "_rf", rf_body, rf_init, {},
                                   {}, block->annotations);
  rf_block = WithInferredRegions(rf_block);
  if (n_buffers > 1) {
    // As TVM, the rfactor block reads in the order the reduction did, and the write-back
    // block reads the rfactor buffers in the order of the reduced buffers.
    std::vector<const BufferNode*> order;
    for (const BufferRegion& r : block->reads) order.push_back(r->buffer.get());
    OrderRegions(&rf_block->reads, order);
  }
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
      bool reads_result =
          std::any_of(red.updates.begin(), red.updates.end(),
                      [&](const BufferStoreNode* u) { return u->buffer == r->buffer; });
      if (reads_result) {
        users.push_back(b.get());
        break;
      }
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
  for (const Expr& e : red.updates[0]->indices) wb_indices.push_back(Substitute(e, wb_map));
  std::vector<Expr> wb_accs, partials, wb_inits;
  for (size_t i = 0; i < n_buffers; ++i) {
    wb_accs.push_back(BufferLoadNode::Make(red.updates[i]->buffer, wb_indices));
    partials.push_back(BufferLoadNode::Make(rf_buffers[i], InsertAt(wb_indices, axis, wb_rf_var)));
    wb_inits.push_back(Substitute(red.init_values[i], wb_map));
  }
  std::vector<Buffer> buffers;
  for (const BufferStoreNode* u : red.updates) buffers.push_back(u->buffer);
  Stmt wb_body = ReductionBody(buffers, wb_indices, red.combine(wb_accs, partials));
  Stmt wb_init = Stores(buffers, wb_indices, wb_inits);
  Block wb_block = BlockNode::Make(wb_iters, {}, {}, block->name_hint, wb_body, wb_init, {}, {},
                                   block->annotations);
  wb_block = WithInferredRegions(wb_block);
  if (n_buffers > 1) {
    std::vector<const BufferNode*> order;
    for (const Buffer& b : rf_buffers) order.push_back(b.get());
    OrderRegions(&wb_block->reads, order);
  }
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
  EditAndAllocate(state, AllocationSite(state, block_sref.get(), buffer.get()), &editor, rf_buffers,
                  {{block, wb_block}});
  return state.GetSRef(rf_block.get());
}

}  // namespace schedule
}  // namespace tessera
