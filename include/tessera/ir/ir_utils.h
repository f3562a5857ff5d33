// Small IR helpers shared by the lowering passes: substitution, variable use, visibility.
#pragma once

#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "tessera/ir/function.h"

namespace tessera {
namespace transform {

using VarMap = std::unordered_map<const VarNode*, Expr>;

/*! \brief `e` / `s` with every use of a mapped variable replaced (unchanged nodes are kept). */
Expr Substitute(const Expr& e, const VarMap& vmap);
Stmt Substitute(const Stmt& s, const VarMap& vmap);

/*! \brief The conjuncts of `e` (a && b && ...) appended to `out`; constant-true ones are dropped. */
void SplitConjuncts(const Expr& e, std::vector<Expr>* out);

/*! \brief Whether `e` / `s` uses a variable for which `pred` is true. */
bool UsesVar(const Expr& e, const std::function<bool(const VarNode*)>& pred);
bool UsesVar(const Stmt& s, const std::function<bool(const VarNode*)>& pred);

/*! \brief A node callback of IRTransform: returns a replacement node, or null to keep `node`. */
using NodeRewrite = std::function<ObjectRef(const ObjectRef& node)>;
/*! \brief Rewrite `s` (or `e`) with user callbacks, as TVM's ir_transform: `preorder` sees each
 *  node before its children and a non-null result replaces the node without visiting them;
 *  `postorder` sees the node rebuilt from its rewritten children. Only nodes whose kind name
 *  ("For", "BufferStore"; a "tir." prefix is accepted) is in `only_enable` are passed to the
 *  callbacks (all when empty). A callback returning a statement for an expression (or the
 *  reverse) throws a TypeError-kind tessera::Error; an unknown kind name a ValueError. */
Stmt IRTransform(const Stmt& s, const NodeRewrite& preorder, const NodeRewrite& postorder,
                 const std::vector<std::string>& only_enable);
Expr IRTransform(const Expr& e, const NodeRewrite& preorder, const NodeRewrite& postorder,
                 const std::vector<std::string>& only_enable);

/*! \brief `s` usable as literal text in a printf format (every % doubled). */
std::string EscapeFormat(const std::string& s);

/*! \brief Whether `func` is externally visible: it has a "global_symbol" attribute. */
bool IsPublic(const PrimFunc& func);
/*! \brief The symbol of a public function ("global_symbol"), else its name in the module. */
std::string SymbolName(const GlobalVar& gv, const PrimFunc& func);

}  // namespace transform
}  // namespace tessera
