// te-internal: replace variables in an expression.
#pragma once

#include <unordered_map>

#include "tessera/ir/functor.h"

namespace tessera {
namespace te {

/*! \brief Replaces the variables of `vars` by their expressions; the rest is kept as is. */
class VarSubstituter : public ExprMutator {
 public:
  using VarMap = std::unordered_map<const VarNode*, Expr>;
  explicit VarSubstituter(VarMap vars) : vars_(std::move(vars)) {}
  using ExprMutator::VisitExpr_;
  Expr VisitExpr_(const VarNode* op) override {
    auto it = vars_.find(op);
    return it == vars_.end() ? GetRef(op) : it->second;
  }
  Expr VisitExpr_(const SizeVarNode* op) override {
    auto it = vars_.find(op);
    return it == vars_.end() ? Expr(GetRef(op)) : it->second;
  }

 protected:
  VarMap vars_;
};

}  // namespace te
}  // namespace tessera
