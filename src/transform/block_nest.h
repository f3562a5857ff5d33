// A root block of the form te.create_prim_func gives, before any schedule: serial loops from 0,
// one per iterator in order, around one block that binds each iterator to its loop. Shared by
// the host passes that recognize topi's computations by their structure (tir.ArgExtremeRows,
// tir.SortRows).
#pragma once
#include <functional>
#include <optional>
#include <unordered_set>
#include <vector>

#include "tessera/ir/function.h"
#include "tessera/ir/stmt.h"

namespace tessera {
namespace transform {

struct BlockNest {
  std::vector<const ForNode*> loops;
  const BlockRealizeNode* realize = nullptr;
  const BlockNode* block = nullptr;
};

/*! \brief `s` as such a nest (constant extents equal to the iterators' domains, no predicate,
 *  no allocation or match buffer in the block), or nothing. */
std::optional<BlockNest> AsBlockNest(const Stmt& s);

/*! \brief `func` with its root block's body replaced by `body` (one statement, or a sequence
 *  spanning `span`) and the root's allocations of `dropped` removed. */
PrimFunc WithRootBody(const PrimFunc& func, const BlockRealizeNode* root_realize,
                      const std::vector<Stmt>& body, const Span& span,
                      const std::unordered_set<const BufferNode*>& dropped);

/*! \brief `mod` with `rewrite` applied to each function that carries no schedule and is not
 *  for a GPU (the functions the host's automatic schedule will take). */
IRModule RewriteUnscheduledHostFunctions(const IRModule& mod,
                                         const std::function<PrimFunc(const PrimFunc&)>& rewrite);

}  // namespace transform
}  // namespace tessera
