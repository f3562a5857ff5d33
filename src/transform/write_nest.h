// Statement helpers shared by tir.RemoveNoOp and tir.ReduceBranchingThroughOvercompute: the
// no-op statement, what a statement may read or writes of a buffer, and a single store under
// loops and guards (a write nest), which both passes use to decide that a later write covers
// an earlier one.
#pragma once
#include <optional>
#include <vector>

#include "tessera/ir/expr.h"
#include "tessera/ir/stmt.h"

namespace tessera {
namespace transform {

/*! \brief `T.evaluate(<constant>)`: a statement that does nothing. */
bool IsNoOp(const Stmt& s);
/*! \brief `T.evaluate(0)` at `span`. */
Stmt NoOp(const Span& span);
/*! \brief Whether evaluating `e` can have an effect (a call that is not pure). */
bool HasSideEffect(const Expr& e);
/*! \brief Whether `s` reads the memory of `data`, or may (an impure call, a block, a while
 *  loop, the pointer passed to a call or bound by a let). */
bool MayRead(const Stmt& s, const VarNode* data);
/*! \brief Whether `s` stores to the memory of `data`. */
bool Writes(const Stmt& s, const VarNode* data);

/*! \brief `for ...: [if g:] B[idx] = v`: one store under loops and guards. */
struct WriteNest {
  std::vector<const ForNode*> loops;
  std::vector<Expr> guards;
  const BufferStoreNode* store = nullptr;
};

/*! \brief `s` as a write nest: no thread-bound loop, guards that read no buffer and have no
 *  effect (with no else branch, or with one that does nothing where `noop_else_allowed`), an
 *  unpredicated store whose indices are scalars reading no buffer. */
std::optional<WriteNest> AsWriteNest(const Stmt& s, bool noop_else_allowed);

}  // namespace transform
}  // namespace tessera
