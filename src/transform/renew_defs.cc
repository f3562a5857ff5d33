// RenewDefs (TVM's tir.stmt_functor.renew_defs): a copy of a function in which every
// definition is new, so that the copy can be changed or inlined next to the original.
#include "def_renewer.h"
#include "tessera/transform/specialize.h"

namespace tessera {
namespace transform {

PrimFunc RenewFunction(DefRenewer& renewer, const PrimFunc& func) {
  std::vector<Var> params;
  for (const Var& p : func->params) params.push_back(renewer.Renew(p));
  std::vector<std::pair<Var, Buffer>> buffer_map;
  for (const auto& [param, buffer] : func->buffer_map) {
    Var key = As<VarNode>(renewer.VisitExpr(param));
    buffer_map.emplace_back(key, renewer.DefineBuffer(buffer));
  }
  Stmt body = renewer.VisitStmt(func->body);
  return PrimFuncNode::Make(std::move(params), std::move(buffer_map), body, func->ret_type,
                            func->attrs, func->span);
}

PrimFunc RenewDefs(const PrimFunc& func) {
  DefRenewer renewer;
  return RenewFunction(renewer, func);
}

}  // namespace transform
}  // namespace tessera
