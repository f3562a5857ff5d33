// fuse: a chain of nested loops becomes one loop over the product of their extents.
#include "../utils.h"
#include "tessera/schedule/primitive.h"

namespace tessera {
namespace schedule {
StmtSRef Fuse(ScheduleState& state, const std::vector<StmtSRef>& loop_srefs,
              bool preserve_unit_iters) {
  if (loop_srefs.empty()) Fail("fuse needs at least one loop");
  std::vector<const ForNode*> loops;
  std::unordered_set<const VarNode*> vars;
  for (size_t i = 0; i < loop_srefs.size(); ++i) {
    const ForNode* loop = LoopOf(loop_srefs[i]);
    if (!IsConstInt(loop->min, 0)) {
      Fail("the loop must start at 0", "the loop {0} must start at 0, but its min is not 0",
           {loop_srefs[i]->stmt});
    }
    if (loop->thread_binding || !loop->annotations.empty() || loop->for_kind != ForKind::kSerial) {
      Fail("Only serial loops without annotations can be fused",
           "Only serial loops without annotations or thread bindings can be fused, but {0} is not "
           "one",
           {loop_srefs[i]->stmt});
    }
    if (i > 0) {
      const ForNode* outer = loops.back();
      if (outer->body.get() != loop) {
        Fail("fuse: each loop must be the whole body of the loop before it",
             "fuse: the body of {0} must be the loop {1} alone",
             {loop_srefs[i - 1]->stmt, loop_srefs[i]->stmt});
      }
    }
    loops.push_back(loop);
    vars.insert(loop->loop_var.get());
  }
  for (size_t i = 0; i < loops.size(); ++i) {
    if (UsesVars(loops[i]->extent, vars)) {
      Fail("A loop extent depends on another fused loop",
           "The extent of {0} depends on another of the loops being fused", {loop_srefs[i]->stmt});
    }
  }
  DataType t = loops[0]->loop_var->dtype;
  for (const ForNode* l : loops) {
    if (l->loop_var->dtype.bits() > t.bits()) t = l->loop_var->dtype;
  }
  std::string name;
  Expr extent = IntConst(t, 1);
  for (const ForNode* l : loops) {
    name += l->loop_var->name + "_";
    extent = Simplify(MulE(extent, l->extent));
  }
  Var fused = NewVar(name + "fused", t);
  // Innermost first, as TVM binds them: l_k = floordiv(floormod(fused, inner * extent_k), inner)
  // and l_0 = floordiv(fused, inner), where inner is the product of the extents inside l_k.
  VarMap vmap, unit_vars;
  Expr inner = IntConst(t, 1);
  for (size_t i = loops.size(); i-- > 0;) {
    const ForNode* l = loops[i];
    Expr outer_product = Simplify(MulE(inner, l->extent));
    Expr v = i > 0 ? FloorDivE(FloorModE(fused, outer_product), inner) : FloorDivE(fused, inner);
    v = Simplify(v);
    if (IsConstInt(l->extent, 1) && !preserve_unit_iters) v = IntConst(t, 0);
    vmap[l->loop_var.get()] = CastTo(l->loop_var->dtype, v);
    inner = outer_product;
  }
  Stmt body = Substitute(loops.back()->body, vmap);
  arith::Analyzer ana;
  BindLoops(&ana, loop_srefs[0].get(), /*inclusive=*/false);
  ana.Bind(fused, RangeNode::Make(IntConst(t, 0), extent));
  body = SimplifyBindings(body, &ana, unit_vars);
  For result = ForNode::Make(fused, IntConst(t, 0), extent, ForKind::kSerial, body, nullptr, {},
                             loops[0]->span);
  state.Replace(loop_srefs[0].get(), loops[0], result);
  return state.GetSRef(result.get());
}

}  // namespace schedule
}  // namespace tessera
