// Analyzer::BindAndSubstitute: TVM's Analyzer.bind(var, expr), under which the simplifier and
// the proofs see `var` as its value.
#include "tessera/arith/analyzer.h"
#include "tessera/ir/ir_utils.h"

namespace tessera {
namespace arith {

void Analyzer::BindAndSubstitute(const Var& var, const Expr& value) {
  Expr simplified = Simplify(SubstituteBound(value));
  Bind(var, simplified);
  substitutions_[var.get()] = {var, simplified};
}

Expr Analyzer::SubstituteBound(const Expr& e) const {
  if (substitutions_.empty()) return e;
  VarMap vmap;
  for (const auto& [key, entry] : substitutions_) vmap[key] = entry.second;
  return Substitute(e, vmap);
}

}  // namespace arith
}  // namespace tessera
