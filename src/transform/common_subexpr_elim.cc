// tir.CommonSubexprElimTIR(enable_cse_tir, identify_equiv_terms): TVM's pass. A computation
// done more than once by a statement and the statements under it is computed once, into a
// `cse_v<n>` variable bound by a LetStmt placed as deep as it can go while still covering every
// use: for an `if`, a computation done by two of condition / then / else goes before the `if`,
// one done twice in one branch only goes into that branch; loops alike. Calls and buffer loads
// are never bound (their value may change between two statements). With identify_equiv_terms,
// equivalent terms ((y + z) * x and x * y + x * z) are one computation, bound as first seen.
// The rules are those of the shared engine (cse_engine.cc), which dsl.CommonSubexprElim also
// runs.
//
//   B[i1] = (x + y) + z           cse_v2 = x + y
//   B[i2] = (x + y) + z     ->    cse_v1 = cse_v2 + z
//   B[i3] = x + y                 B[i1] = cse_v1;  B[i2] = cse_v1;  B[i3] = cse_v2
//
// As in TVM, the pass itself does not read "tir.disable_cse_tir" (the build pipeline does, and
// runs tir.StatementCSE, see statement_cse.cc); the registered default has both options at their
// defaults.
#include "cse_engine.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace transform {

Pass CommonSubexprElimTIR(bool enable_cse_tir, bool identify_equiv_terms) {
  auto fn = [enable_cse_tir, identify_equiv_terms](PrimFunc f, IRModule, const PassContext&) {
    if (!enable_cse_tir) return f;
    CSEOptions options;
    options.var_prefix = "cse_v";
    options.identify_equiv_terms = identify_equiv_terms;
    Stmt body = EliminateCommonSubexpr(f, options);
    return body == f->body ? f : f->WithBody(body);
  };
  return CreatePrimFuncPass(fn, 0, "tir.CommonSubexprElimTIR");
}
TESSERA_REGISTER_PASS("tir.CommonSubexprElimTIR", [] { return CommonSubexprElimTIR(); });

}  // namespace transform
}  // namespace tessera
