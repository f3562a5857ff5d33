// Small IR helpers shared by the lowering passes: substitution, variable use, visibility.
#pragma once

#include <functional>
#include <unordered_map>

#include "tessera/ir/function.h"

namespace tessera {
namespace transform {

using VarMap = std::unordered_map<const VarNode*, Expr>;

/*! \brief `e` / `s` with every use of a mapped variable replaced (unchanged nodes are kept). */
Expr Substitute(const Expr& e, const VarMap& vmap);
Stmt Substitute(const Stmt& s, const VarMap& vmap);

/*! \brief Whether `e` / `s` uses a variable for which `pred` is true. */
bool UsesVar(const Expr& e, const std::function<bool(const VarNode*)>& pred);
bool UsesVar(const Stmt& s, const std::function<bool(const VarNode*)>& pred);

/*! \brief Whether `func` is externally visible: it has a "global_symbol" attribute. */
bool IsPublic(const PrimFunc& func);
/*! \brief The symbol of a public function ("global_symbol"), else its name in the module. */
std::string SymbolName(const GlobalVar& gv, const PrimFunc& func);

}  // namespace transform
}  // namespace tessera
