// split: one loop becomes nested loops whose extents are the factors.
#include "../utils.h"
#include "tessera/arith/vscale.h"
#include "tessera/schedule/primitive.h"

namespace tessera {
namespace schedule {
namespace {

void CheckPlainLoop(const StmtSRef& loop_sref) {
  const ForNode* loop = LoopOf(loop_sref);
  if (!IsConstInt(loop->min, 0)) {
    Fail("the loop must start at 0", "the loop {0} must start at 0, but its min is not 0",
         {loop_sref->stmt});
  }
  if (loop->thread_binding || loop->for_kind == ForKind::kThreadBinding) {
    Fail("The loop is bound to a thread",
         "The loop {0} is bound to a thread axis and cannot be changed", {loop_sref->stmt});
  }
  if (!loop->annotations.empty()) {
    Fail("The loop has annotations", "The loop {0} has annotations and cannot be changed",
         {loop_sref->stmt});
  }
}

}  // namespace

std::vector<StmtSRef> Split(ScheduleState& state, const StmtSRef& loop_sref,
                            const std::vector<Expr>& factors, bool preserve_unit_iters,
                            bool disable_predication) {
  const ForNode* loop = LoopOf(loop_sref);
  CheckPlainLoop(loop_sref);
  if (factors.size() < 2) {
    Fail("The split needs at least two factors, but got " + std::to_string(factors.size()));
  }
  DataType t = loop->loop_var->dtype;
  int infer = -1;
  Expr known = IntConst(t, 1);
  for (size_t i = 0; i < factors.size(); ++i) {
    if (!factors[i]) {
      if (infer >= 0) {
        Fail("At most one factor can be None (or -1)",
             "At most one factor of the split of {0} can be None (or -1)", {loop_sref->stmt});
      }
      infer = static_cast<int>(i);
      continue;
    }
    auto c = AsConstInt(factors[i]);
    if (c && *c <= 0) {
      Fail("The split factor must be positive, but got " + std::to_string(*c),
           "The split factor must be positive, but factor " + std::to_string(i) + " of {0} is " +
               std::to_string(*c),
           {loop_sref->stmt});
    }
    known = Simplify(MulE(known, factors[i]));
  }
  std::vector<Expr> extents = factors;
  arith::Analyzer ana;
  if (infer >= 0) {
    extents[infer] = Simplify(FloorDivE(AddE(loop->extent, SubE(known, IntConst(t, 1))), known));
  } else if (!ana.CanProve(GENode::Make(known, CastTo(t, loop->extent)))) {
    Fail("the split factors may not cover the loop",
         "the split factors may not cover the loop {0}: their product (" + AsScript(known) +
             ") is not provably at least its extent (" + AsScript(loop->extent) + ")",
         {loop_sref->stmt});
  }
  Expr product = IntConst(t, 1);
  for (const Expr& e : extents) product = Simplify(MulE(product, e));

  // New loop variables l_0, l_1, ...; the old variable is ((l_0 * f_1 + l_1) * f_2 + l_2)...
  std::vector<Var> vars;
  Expr value;
  VarMap unit_vars;
  for (size_t i = 0; i < extents.size(); ++i) {
    vars.push_back(NewVar(loop->loop_var->name + "_" + std::to_string(i), t));
    value = value ? AddE(MulE(value, extents[i]), vars[i]) : Expr(vars[i]);
    if (!preserve_unit_iters && IsConstInt(extents[i], 1))
      unit_vars[vars[i].get()] = IntConst(t, 0);
  }
  // Without its predicate a split whose loops run past a constant extent would read and write
  // past the buffers: refused (TVM leaves that to the schedule writer and builds the overrun).
  auto const_product = AsConstInt(product);
  auto const_extent = AsConstInt(loop->extent);
  if (disable_predication && const_product && const_extent && *const_product != *const_extent) {
    Fail("The split with disable_predication=True runs past the loop extent",
         "The split factors of {0} cover " + std::to_string(*const_product) +
             " iterations but its extent is " + std::to_string(*const_extent) +
             "; without a predicate the extra iterations would access memory past the buffers. "
             "Drop disable_predication=True or choose factors whose product equals the extent",
         {loop_sref->stmt});
  }
  // As TVM, which proves the predicate from the loops' bounds: never for factors of T.vscale()
  // (the product may cover the extent exactly for every vscale; the bound proof cannot see it).
  Expr predicate;
  bool scalable = arith::ContainsVScale(product) || arith::ContainsVScale(loop->extent);
  if (!disable_predication &&
      (scalable || !ana.CanProveEqual(product, CastTo(t, loop->extent)))) {
    // As TVM, a scalable binding stays as written (see SimplifyBindings).
    Expr index = Substitute(value, unit_vars);
    if (!unit_vars.empty() && !arith::ContainsVScale(index)) index = Simplify(index);
    predicate = LTNode::Make(index, CastTo(t, loop->extent));
  }
  Stmt body = Substitute(loop->body, VarMap{{loop->loop_var.get(), value}});
  arith::Analyzer binding_ana;
  BindLoops(&binding_ana, loop_sref.get(), /*inclusive=*/false);
  for (size_t i = 0; i < vars.size(); ++i) {
    binding_ana.Bind(vars[i], RangeNode::Make(IntConst(t, 0), extents[i]));
  }
  // As TVM, the predicates keep the loops' Horner form ((i_0 * f1 + i_1) * f2 + i_2 < extent);
  // only the bindings are simplified. Without unit loops dropped to 0, nothing to fold there.
  body = SimplifyBindings(body, &binding_ana, unit_vars, predicate, !unit_vars.empty(), vars);
  for (size_t i = extents.size(); i-- > 0;) {
    body = ForNode::Make(vars[i], IntConst(t, 0), extents[i], ForKind::kSerial, body, nullptr, {},
                         loop->span);
  }
  state.Replace(loop_sref.get(), loop, body);
  std::vector<StmtSRef> out;
  for (const Var& v : vars) {
    const Stmt* s = &body;
    while (auto* f = AsPtr<ForNode>(*s)) {
      if (f->loop_var == v) break;
      s = &f->body;
    }
    out.push_back(state.GetSRef(s->get()));
  }
  return out;
}

}  // namespace schedule
}  // namespace tessera
