// transform_block_layout: re-lay the iteration space of a block by a bijective affine index map
// over its iterators; the block gets new iterators and a new loop nest over them.
#include <algorithm>

#include "../utils.h"
#include "tessera/schedule/primitive.h"

namespace tessera {
namespace schedule {
namespace {

/*! \brief `e` as a sum of constant multiples of distinct variables (plus nothing else). */
bool AsLinearTerms(const Expr& e, int64_t scale,
                   std::vector<std::pair<const VarNode*, int64_t>>* terms) {
  if (auto* v = AsPtr<VarNode>(e)) {
    terms->emplace_back(v, scale);
    return true;
  }
  if (e->kind == NodeKind::kAdd) {
    auto* b = static_cast<const BinaryNode*>(e.get());
    return AsLinearTerms(b->a, scale, terms) && AsLinearTerms(b->b, scale, terms);
  }
  if (e->kind == NodeKind::kMul) {
    auto* b = static_cast<const BinaryNode*>(e.get());
    if (auto c = AsConstInt(b->b)) return AsLinearTerms(b->a, scale * *c, terms);
    if (auto c = AsConstInt(b->a)) return AsLinearTerms(b->b, scale * *c, terms);
  }
  return false;
}

/*! \brief `e` as a sum of distinct variables of `iters`, each times a factor free of them
 *  (a constant or a shape variable). */
bool AsSymbolicTerms(const Expr& e, const Expr& scale,
                     const std::unordered_map<const VarNode*, size_t>& iters,
                     std::vector<std::pair<const VarNode*, Expr>>* terms) {
  auto invariant = [&](const Expr& x) {
    return !UsesVar(x, [&](const VarNode* v) { return iters.count(v) != 0; });
  };
  if (auto* v = AsPtr<VarNode>(e)) {
    if (!iters.count(v)) return false;
    terms->emplace_back(v, scale);
    return true;
  }
  if (e->kind == NodeKind::kAdd) {
    auto* b = static_cast<const BinaryNode*>(e.get());
    return AsSymbolicTerms(b->a, scale, iters, terms) && AsSymbolicTerms(b->b, scale, iters, terms);
  }
  if (e->kind == NodeKind::kMul) {
    auto* b = static_cast<const BinaryNode*>(e.get());
    if (invariant(b->b)) return AsSymbolicTerms(b->a, MulE(scale, b->b), iters, terms);
    if (invariant(b->a)) return AsSymbolicTerms(b->b, MulE(scale, b->a), iters, terms);
  }
  return false;
}

/*! \brief Simplifies the indices and regions of a block's accesses under known iterator ranges. */
class AccessSimplifier : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;
  explicit AccessSimplifier(arith::Analyzer* ana) : ana_(ana) {}
  Expr VisitExpr_(const BufferLoadNode* op) override {
    Expr e = StmtExprMutator::VisitExpr_(op);
    auto* load = AsPtr<BufferLoadNode>(e);
    return BufferLoadNode::Make(load->buffer, Simplified(load->indices), load->predicate,
                                load->span);
  }
  Stmt VisitStmt_(const BufferStoreNode* op) override {
    Stmt s = StmtExprMutator::VisitStmt_(op);
    auto* store = AsPtr<BufferStoreNode>(s);
    return BufferStoreNode::Make(store->buffer, store->value, Simplified(store->indices),
                                 store->predicate, store->span);
  }
  std::vector<Expr> Simplified(const std::vector<Expr>& indices) {
    std::vector<Expr> out;
    for (const Expr& i : indices) out.push_back(ana_->Simplify(i));
    return out;
  }
  std::vector<BufferRegion> Regions(const std::vector<BufferRegion>& regions) {
    std::vector<BufferRegion> out;
    for (const BufferRegion& r : regions) {
      std::vector<Range> ranges;
      for (const Range& d : r->region)
        ranges.push_back(RangeNode::Make(ana_->Simplify(d->min), ana_->Simplify(d->extent)));
      out.push_back(BufferRegionNode::Make(r->buffer, ranges, r->span));
    }
    return out;
  }

 private:
  arith::Analyzer* ana_;
};

}  // namespace

void TransformBlockLayout(ScheduleState& state, const StmtSRef& block_sref, const IndexMap& map) {
  const BlockNode* block = BlockOf(block_sref);
  std::vector<StmtSRef> loops = GetLoopsAbove(state, block_sref.get());
  for (const StmtSRef& l : loops) {
    if (!IsConstInt(l->loop()->min, 0)) {
      Fail("the loop must start at 0", "the loop {0} must start at 0, but its min is not 0",
           {l->stmt});
    }
  }
  BlockRealize realize = GetBlockRealize(state, block_sref.get());
  // The loops must hold the block alone, one loop each.
  if (!loops.empty()) {
    for (size_t i = 0; i < loops.size(); ++i) {
      const Stmt& body = loops[i]->loop()->body;
      const StmtNode* want = i + 1 < loops.size() ? loops[i + 1]->stmt.get() : realize.get();
      if (body.get() != want) {
        Fail("transform_block_layout: a loop above the block holds other statements",
             "transform_block_layout: the loops from {0} down must each hold only the next loop "
             "or the block",
             {loops[0]->stmt});
      }
    }
  }
  bool trivial = realize->iter_values.size() == loops.size();
  for (size_t i = 0; trivial && i < loops.size(); ++i) {
    trivial = realize->iter_values[i].get() == loops[i]->loop()->loop_var.get();
  }
  if (!trivial) {
    Fail("transform_block_layout: each block iterator must be bound to a distinct loop variable",
         "transform_block_layout: each iterator of {0} must be bound to a distinct loop "
         "variable",
         {block_sref->stmt});
  }
  size_t n = block->iter_vars.size();
  if (map.initial_indices.size() != n) {
    Fail("transform_block_layout: the index map and the block have different arities",
         "transform_block_layout: the index map " + map.AsPython() + " takes " +
             std::to_string(map.initial_indices.size()) + " indices, but {0} has " +
             std::to_string(n) + " iterators",
         {block_sref->stmt});
  }
  // The map over the block iterators: each final index a mixed-radix fusion of some iterators.
  auto not_bijective = [&] {
    Fail("transform_block_layout: the index map is not an affine bijection",
         "transform_block_layout: the index map " + map.AsPython() +
             " is not an affine bijection of the block's iteration space");
  };
  std::unordered_map<const VarNode*, size_t> position;
  std::vector<int64_t> extents(n);
  bool symbolic = false;
  for (size_t i = 0; i < n; ++i) {
    position[map.initial_indices[i].get()] = i;
    auto c = AsConstInt(block->iter_vars[i]->dom->extent);
    if (!IsConstInt(block->iter_vars[i]->dom->min, 0)) not_bijective();
    symbolic = symbolic || !c;
    extents[i] = c.value_or(0);
  }
  VarMap to_block_vars;
  for (size_t i = 0; i < n; ++i)
    to_block_vars[map.initial_indices[i].get()] = block->iter_vars[i]->var;
  std::vector<bool> used(n, false);
  std::vector<IterVar> new_iters;
  std::vector<Expr> inverse(n);
  auto mixed_kinds = [&](size_t k) {
    Fail("transform_block_layout: a new iterator mixes spatial and reduction iterators",
         "transform_block_layout: the new iterator " +
             AsScript(Substitute(map.final_indices[k], to_block_vars)) +
             " of {0} mixes "
             "iterators of different kinds (spatial, reduction, ...), so it has no kind",
         {block_sref->stmt});
  };
  // Over symbolic extents (or with symbolic factors in the map): each final index is a sum of
  // iterators whose factors, taken in order, are the products of the extents before them.
  for (size_t k = 0; symbolic && k < map.final_indices.size(); ++k) {
    arith::Analyzer proof;
    std::vector<std::pair<const VarNode*, Expr>> terms;
    Expr e = Simplify(map.final_indices[k]);
    if (!IsConstInt(e, 0) && !AsSymbolicTerms(e, IntConst(e->dtype, 1), position, &terms))
      not_bijective();
    std::vector<std::pair<size_t, Expr>> rest;  // (iterator, factor) of extent other than 1
    for (const auto& [v, coef] : terms) {
      size_t i = position[v];
      if (used[i]) not_bijective();
      used[i] = true;
      if (IsConstInt(block->iter_vars[i]->dom->extent, 1)) {
        inverse[i] = IntConst(block->iter_vars[i]->var->dtype, 0);
      } else {
        rest.emplace_back(i, coef);
      }
    }
    DataType t = terms.empty() ? DataType::Int(32) : terms.front().first->dtype;
    Var v = NewVar("v" + std::to_string(k), t);
    Expr stride = IntConst(t, 1);
    std::optional<IterVarType> type;
    while (!rest.empty()) {
      auto it = std::find_if(rest.begin(), rest.end(), [&](const auto& term) {
        return proof.CanProveEqual(CastTo(t, term.second), stride);
      });
      if (it == rest.end()) not_bijective();
      size_t i = it->first;
      rest.erase(it);
      const IterVar& iv = block->iter_vars[i];
      if (type && *type != iv->iter_type) mixed_kinds(k);
      type = iv->iter_type;
      Expr value = IsConstInt(stride, 1) ? Expr(v) : FloorDivE(v, stride);
      if (!rest.empty()) value = FloorModE(value, CastTo(t, iv->dom->extent));
      inverse[i] = CastTo(iv->var->dtype, value);
      stride = Simplify(MulE(stride, CastTo(t, iv->dom->extent)));
    }
    new_iters.push_back(IterVarNode::Make(RangeNode::Make(IntConst(t, 0), stride), v,
                                          type.value_or(IterVarType::kDataPar)));
  }
  for (size_t k = 0; !symbolic && k < map.final_indices.size(); ++k) {
    std::vector<std::pair<const VarNode*, int64_t>> terms;
    Expr e = Simplify(map.final_indices[k]);
    int64_t extent = 1;
    if (!AsConstInt(e) || *AsConstInt(e) != 0) {
      if (!AsLinearTerms(e, 1, &terms)) not_bijective();
    }
    std::sort(terms.begin(), terms.end(),
              [](const auto& a, const auto& b) { return a.second < b.second; });
    // Type of the new iterator: that of the iterators it fuses (those of extent 1 only: theirs
    // where they agree, so that a unit reduction iterator mapped alone stays a reduction).
    std::optional<IterVarType> type, unit_type;
    bool units_agree = true;
    for (const auto& [v, coef] : terms) {
      auto it = position.find(v);
      if (it == position.end() || used[it->second] || coef != extent) not_bijective();
      used[it->second] = true;
      extent *= extents[it->second];
      IterVarType t = block->iter_vars[it->second]->iter_type;
      if (extents[it->second] == 1) {
        units_agree = units_agree && (!unit_type || *unit_type == t);
        unit_type = t;
        continue;
      }
      if (type && *type != t) mixed_kinds(k);
      type = t;
    }
    if (!type && unit_type && units_agree) type = unit_type;
    DataType t = terms.empty() ? DataType::Int(32) : terms.front().first->dtype;
    Var v = NewVar("v" + std::to_string(k), t);
    new_iters.push_back(IterVarNode::Make(RangeNode::Make(IntConst(t, 0), IntConst(t, extent)), v,
                                          type.value_or(IterVarType::kDataPar)));
    for (const auto& [var, coef] : terms) {
      size_t i = position[var];
      Expr value = FloorDivE(v, IntConst(t, coef));
      if (coef * extents[i] != extent) value = FloorModE(value, IntConst(t, extents[i]));
      inverse[i] = CastTo(block->iter_vars[i]->var->dtype, value);
    }
  }
  if (std::find(used.begin(), used.end(), false) != used.end()) not_bijective();

  arith::Analyzer ana;
  for (const IterVar& iv : new_iters) ana.Bind(iv->var, iv->dom);
  VarMap subst;
  for (size_t i = 0; i < n; ++i) subst[block->iter_vars[i]->var.get()] = ana.Simplify(inverse[i]);
  AccessSimplifier simplifier(&ana);
  Block result = CopyBlock(block);
  result->iter_vars = new_iters;
  result->body = simplifier.VisitStmt(Substitute(block->body, subst));
  if (block->init) result->init = simplifier.VisitStmt(Substitute(block->init, subst));
  std::vector<BufferRegion> reads, writes;
  for (const BufferRegion& r : block->reads) reads.push_back(Substitute(r, subst));
  for (const BufferRegion& w : block->writes) writes.push_back(Substitute(w, subst));
  result->reads = simplifier.Regions(reads);
  result->writes = simplifier.Regions(writes);
  std::vector<MatchBufferRegion> matches;
  for (const MatchBufferRegion& m : block->match_buffers) {
    matches.push_back(MatchBufferRegionNode::Make(
        m->buffer, simplifier.Regions({Substitute(m->source, subst)})[0], m->span));
  }
  result->match_buffers = matches;

  std::vector<For> new_loops;
  std::vector<Expr> values;
  for (size_t k = 0; k < new_iters.size(); ++k) {
    Var l = NewVar("ax" + std::to_string(k), new_iters[k]->var->dtype);
    values.push_back(l);
    new_loops.push_back(ForNode::Make(l, IntConst(l->dtype, 0), new_iters[k]->dom->extent,
                                      ForKind::kSerial, Evaluate0()));
  }
  Stmt nest = MakeLoopNest(
      new_loops, BlockRealizeNode::Make(values, realize->predicate, result, realize->span));
  const StmtNode* src =
      loops.empty() ? static_cast<const StmtNode*>(realize.get()) : loops.front()->stmt.get();
  state.Replace(block_sref.get(), src, nest, {{block, result}});
}

}  // namespace schedule
}  // namespace tessera
