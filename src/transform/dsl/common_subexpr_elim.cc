// dsl.CommonSubexprElim: a computation done more than once in a statement and the statements
// under it is computed once, into a `cse_var_<n>` variable, with the rules of TVM's
// tir.transform.CommonSubexprElimTIR (the pass Compass's DSL build runs before its width
// legalization), run by the engine tir.CommonSubexprElimTIR shares (../cse_engine.cc):
//
//   c[0] = (a0 == 0) ? a1 : 20;               bool cse_var_1 = (a0 == 0);
//   ...                                ->     c[0] = cse_var_1 ? a1 : 20;
//   v[0] = (a0 == 0) ? w[0] : (int8)10;       ...  v[0] = cse_var_1 ? w[0] : (int8)10;
//
// - A computation is an expression that is not a constant or a variable, neither is nor contains
//   a call or a buffer load (their value may change between two statements), is not a Ramp or a
//   Broadcast (vector accesses are recognized by them), a Let or a pointer.
// - Only scalar computations are bound. Compass's vector operations (S.vadd, masks, `~m`, the
//   narrowing and widening casts) are intrinsic calls there, which TVM's pass never binds; here
//   they are IR nodes, and binding one would hide it from dsl.AlignVectorWidth and
//   dsl.CombineInstructions (`a & ~b` is one vbclr only while `~b` is in place).
// - The computations "done by" a statement: those of its expressions (an eligible expression
//   counts once, without its parts), summed over the children of a sequence, a let, a store...;
//   for an `if`, those done by at least two of condition / then / else; for a loop, by at least
//   two of start / extent / body; for a while, by both condition and body. A computation only
//   done inside one branch or one loop body is thus left to that branch or body.
// - At each statement, from the largest computation (node count) down: one already held by a
//   variable in scope is replaced by it; one done twice or more whose variables are all in scope
//   (parameters, enclosing lets and loop variables) gets a new `cse_var_<n>` bound by a LetStmt
//   around the statement; otherwise its direct parts are considered in its place. After new
//   variables, the statement is examined again; without, its children are.
//
// Variables of the DSL are immutable (a value assigned again lives in a local buffer, read by
// loads), so a let computed before a statement keeps its value in it.
#include <string>

#include "../cse_engine.h"
#include "tessera/transform/dsl_passes.h"

namespace tessera {
namespace transform {
namespace {

PrimFunc CommonSubexprElimFunc(PrimFunc f, IRModule, const PassContext& ctx) {
  // Off as Compass turns it off: the config, or disabled_pass naming TVM's pass.
  if (ctx.GetBool("tir.disable_cse_tir", false)) return f;
  for (const std::string& name : ctx.disabled_pass) {
    if (name == "tir.CommonSubexprElimTIR") return f;
  }
  CSEOptions options;
  options.var_prefix = "cse_var_";
  options.scalars_only = true;
  options.count_loop_step = true;
  options.stop_at_exits = true;
  options.expression_level = false;
  Stmt body = EliminateCommonSubexpr(f, options);
  return body == f->body ? f : f->WithBody(body);
}

}  // namespace

Pass CommonSubexprElim() {
  return CreatePrimFuncPass(CommonSubexprElimFunc, 0, "dsl.CommonSubexprElim");
}
TESSERA_REGISTER_PASS("dsl.CommonSubexprElim", CommonSubexprElim);

}  // namespace transform
}  // namespace tessera
