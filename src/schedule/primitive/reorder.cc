// reorder: permute loops of one single-branch chain; unlisted loops keep their places.
#include <algorithm>

#include "../utils.h"
#include "tessera/arith/analyzer.h"
#include "tessera/arith/iter_affine_map.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/schedule/primitive.h"

namespace tessera {
namespace schedule {

namespace {

/*! \brief Whether no binding of the block, as an iterator map over the loops below
 *  `high_exclusive`, is a multiple (scale other than 1) of its iterators. */
bool ScaleFreeBindings(const ScheduleState& state, const StmtSRefNode* block_sref,
                       const StmtSRefNode* high_exclusive) {
  std::vector<arith::IterDomain> iters;
  for (const StmtSRefNode* s = block_sref->parent; s && s != high_exclusive; s = s->parent) {
    const ForNode* loop = s->loop();
    if (!loop) continue;
    auto min = AsConstInt(loop->min);
    auto extent = AsConstInt(loop->extent);
    iters.push_back({loop->loop_var, min ? *min : 0, extent ? *extent : -1});
    if (!min) return true;  // a symbolic start: left to the quasi-affine check
  }
  BlockRealize realize = GetBlockRealize(state, block_sref);
  auto map = arith::DetectIterMap(realize->iter_values, iters);
  if (!map) return true;  // not an iterator map: the quasi-affine check decides
  for (const arith::IterSum& sum : *map) {
    if (sum->args.empty()) continue;
    int64_t smallest = sum->args.front()->scale;
    for (const arith::IterSplit& a : sum->args) smallest = std::min(smallest, a->scale);
    if (smallest != 1) return false;
  }
  return true;
}

}  // namespace

void Reorder(ScheduleState& state, const std::vector<StmtSRef>& loop_srefs) {
  if (loop_srefs.empty()) return;
  std::unordered_set<const StmtSRefNode*> listed;
  for (const StmtSRef& s : loop_srefs) {
    LoopOf(s);
    if (!listed.insert(s.get()).second) {
      Fail("A loop appears more than once in reorder",
           "The loop {0} appears more than once in the loops to reorder", {s->stmt});
    }
  }
  // The outermost and innermost listed loops; every pair must be ancestor and descendant.
  StmtSRef top = loop_srefs[0], bottom = loop_srefs[0];
  for (const StmtSRef& s : loop_srefs) {
    if (IsAncestor(s.get(), top.get())) top = s;
    if (IsAncestor(bottom.get(), s.get())) bottom = s;
  }
  for (const StmtSRef& s : loop_srefs) {
    if (s != top && !IsAncestor(top.get(), s.get())) {
      Fail("The loops are not in a single chain",
           "The loops {0} and {1} are not ancestor and descendant of each other",
           {top->stmt, s->stmt});
    }
    if (s != bottom && !IsAncestor(s.get(), bottom.get())) {
      Fail("The loops are not in a single chain",
           "The loops {0} and {1} are not ancestor and descendant of each other",
           {s->stmt, bottom->stmt});
    }
  }
  // The chain from top to bottom must be single-branch.
  std::vector<const StmtSRefNode*> chain;
  for (const StmtSRefNode* p = bottom.get(); p != top->parent; p = p->parent) {
    if (!p->loop()) {
      Fail("A block lies between the loops to reorder",
           "The block {0} lies between the loops to reorder", {p->stmt});
    }
    chain.push_back(p);
  }
  std::reverse(chain.begin(), chain.end());
  for (size_t i = 0; i + 1 < chain.size(); ++i) {
    if (chain[i]->loop()->body.get() != chain[i + 1]->stmt.get()) {
      Fail("The loops are not in a single-branch chain",
           "The loops to reorder must form a single-branch chain, but {0} has more than one child "
           "or a non-loop child",
           {chain[i]->stmt});
    }
  }
  std::unordered_set<const VarNode*> vars;
  for (const StmtSRefNode* s : chain) vars.insert(s->loop()->loop_var.get());
  for (const StmtSRefNode* s : chain) {
    if (UsesVars(s->loop()->extent, vars)) {
      Fail("A loop extent depends on another loop being reordered",
           "The extent of {0} depends on another loop of the chain", {s->stmt});
    }
  }
  for (const StmtSRef& b : GetChildBlocks(state, bottom.get())) {
    const BlockNode* block = b->block();
    for (const IterVar& iv : block->iter_vars) {
      if (iv->iter_type != IterVarType::kDataPar && iv->iter_type != IterVarType::kCommReduce) {
        Fail("A block under the loops has an iterator that is neither spatial nor reduction",
             "The block {0} has an iterator that is neither spatial nor reduction", {b->stmt});
      }
    }
    // As TVM: affine in the loops from the top of the chain down; outer loops are constants.
    if (!IsPartialAffineBinding(state, b.get(), chain.front()->parent)) {
      Fail("A block under the loops does not have affine bindings",
           "The block {0} under the loops does not have affine bindings", {b->stmt});
    }
    // As TVM's affine check (surjective iterator map): a binding that scales its iterators
    // (`l * 16`) leaves holes in the block's domain and is not affine.
    if (!ScaleFreeBindings(state, b.get(), chain.front()->parent)) {
      Fail("A block under the loops does not have affine bindings",
           "The block {0} under the loops does not have affine bindings", {b->stmt});
    }
    // As TVM's affine check with the predicate: a predicate may only bound bindings (what a
    // split by a non-dividing factor adds, `i_0 * 4 + i_1 < 10`).
    BlockRealize realize = GetBlockRealize(state, b.get());
    std::vector<Expr> conjuncts;
    transform::SplitConjuncts(realize->predicate, &conjuncts);
    // Equal up to arithmetic: a split of a split leaves `(x_0 * 2 + x_1) * 16 + x_2 < 1022`
    // beside the binding `x_0 * 32 + x_1 * 16 + x_2`.
    arith::Analyzer ana;
    for (const Expr& c : conjuncts) {
      if (IsConstInt(c, 1)) continue;
      bool bounds_a_binding = false;
      if (c->kind == NodeKind::kLT || c->kind == NodeKind::kLE) {
        auto* cmp = static_cast<const BinaryNode*>(c.get());
        if (AsConstInt(cmp->b)) {
          for (const Expr& v : realize->iter_values)
            bounds_a_binding = bounds_a_binding || StructuralEqual(v, cmp->a) ||
                               (v->dtype == cmp->a->dtype && ana.CanProveEqual(v, cmp->a));
        }
      }
      if (!bounds_a_binding) {
        Fail("A block under the loops has a predicate that is not a bound of its bindings",
             "The block {0} under the loops has a predicate (T.where) that is not a bound of its "
             "bindings, which reorder does not allow",
             {b->stmt});
      }
    }
  }
  // Listed positions take the listed loops in the given order.
  std::vector<const ForNode*> order;
  size_t next = 0;
  for (const StmtSRefNode* s : chain) {
    order.push_back(listed.count(s) ? loop_srefs[next++]->loop() : s->loop());
  }
  Stmt body = chain.back()->loop()->body;
  for (size_t i = order.size(); i-- > 0;) {
    const ForNode* l = order[i];
    body = ForNode::Make(l->loop_var, l->min, l->extent, l->for_kind, body, l->thread_binding,
                         l->annotations, l->span);
  }
  state.Replace(top.get(), top->stmt.get(), body);
}

}  // namespace schedule
}  // namespace tessera
