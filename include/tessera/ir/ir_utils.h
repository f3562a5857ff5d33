// IR helpers written once for every layer (schedule primitives, te, the automatic schedule,
// passes, code generators): substitution, variable use, conjuncts, IRTransform, visibility.
#pragma once

#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "tessera/ir/function.h"
#include "tessera/ir/functor.h"
#include "tessera/support/escape.h"

namespace tessera {

using VarMap = std::unordered_map<const VarNode*, Expr>;

/*! \brief `e` / `s` with every use of a mapped variable replaced (unchanged nodes are kept; a
 *  null `e` / `s` stays null). */
Expr Substitute(const Expr& e, const VarMap& vmap);
Stmt Substitute(const Stmt& s, const VarMap& vmap);

/*! \brief A copy of `s` in which every statement node is new and the variables `s` binds (loop
 *  variables, block iterators, LetStmt variables) are fresh; free variables, buffers and
 *  expressions that use no bound variable are shared. The copy can stand next to `s`. */
Stmt CopyStmt(const Stmt& s);

/*! \brief A new `parent` whose direct child `old_child` is `new_child` (a SeqStmt flattens a
 *  sequence put in); InternalError when `old_child` is not a direct child of `parent`. */
Stmt WithChildReplaced(const StmtNode* parent, const StmtNode* old_child, const Stmt& new_child);

/*! \brief Exchanges the fields of two statements of one kind, so that `a` keeps its identity with
 *  `b`'s content: the copy-on-write of a node that nobody else holds (ScheduleState::Replace,
 *  `__setstate__`). Never call it on a node that another holder could see change. */
void SwapStmtFields(StmtNode* a, StmtNode* b);

/*! \brief The conjuncts of `e` (a && b && ...) appended to `out`; constant-true ones are dropped.
 */
void SplitConjuncts(const Expr& e, std::vector<Expr>* out);

/*! \brief Whether `e` / `s` uses a variable for which `pred` is true. */
bool UsesVar(const Expr& e, const std::function<bool(const VarNode*)>& pred);
bool UsesVar(const Stmt& s, const std::function<bool(const VarNode*)>& pred);
/*! \brief Whether `e` uses the variable `v`. */
bool UsesVar(const Expr& e, const VarNode* v);

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

/*!
 * \brief A mutator over `Base` (a StmtExprMutator) that points every BufferLoad and BufferStore
 *  at RemapBuffer(buffer), keeping the nodes whose buffer stays. Subclasses say how buffers map,
 *  and rewrite the statements that declare buffers (DeclBuffer, Block) as they need.
 */
template <class Base = StmtExprMutator>
class BufferRemapMutator : public Base {
 public:
  using Base::VisitExpr_;
  using Base::VisitStmt_;
  Expr VisitExpr_(const BufferLoadNode* op) override {
    Expr e = Base::VisitExpr_(op);
    auto* load = AsPtr<BufferLoadNode>(e);
    Buffer b = RemapBuffer(load->buffer);
    if (b == load->buffer) return e;
    return BufferLoadNode::Make(b, load->indices, load->predicate, load->span);
  }
  Stmt VisitStmt_(const BufferStoreNode* op) override {
    Stmt s = Base::VisitStmt_(op);
    auto* store = AsPtr<BufferStoreNode>(s);
    Buffer b = RemapBuffer(store->buffer);
    if (b == store->buffer) return s;
    return BufferStoreNode::Make(b, store->value, store->indices, store->predicate, store->span);
  }

 protected:
  /*! \brief The buffer that replaces `b` (`b` itself to keep it). */
  virtual Buffer RemapBuffer(const Buffer& b) = 0;
};

/*! \brief `b` over the data variable `data`, every other field kept. */
Buffer WithData(const Buffer& b, const Var& data);

/*! \brief The kind of a function's "target" attribute: its "kind" entry in the Map form, the first
 *  word of the string form ("llvm -mcpu=..."), "" for anything else. */
std::string TargetKindOf(const ObjectRef& target);

/*! \brief Whether `func` is externally visible: it has a "global_symbol" attribute. */
bool IsPublic(const PrimFunc& func);
/*! \brief The symbol of a public function ("global_symbol"), else its name in the module. */
std::string SymbolName(const GlobalVar& gv, const PrimFunc& func);

// The passes' former names (these helpers were transform/ir_utils.h).
namespace transform {
using ::tessera::BufferRemapMutator;
using ::tessera::IRTransform;
using ::tessera::IsPublic;
using ::tessera::NodeRewrite;
using ::tessera::SplitConjuncts;
using ::tessera::Substitute;
using ::tessera::SymbolName;
using ::tessera::UsesVar;
using ::tessera::VarMap;
}  // namespace transform

}  // namespace tessera
