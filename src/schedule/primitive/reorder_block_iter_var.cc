// reorder_block_iter_var: permute the iterators of a block (and their bindings).
#include <set>

#include "../utils.h"
#include "tessera/schedule/primitive.h"

namespace tessera {
namespace schedule {

void ReorderBlockIterVar(ScheduleState& state, const StmtSRef& block_sref,
                         const std::vector<int64_t>& new_order) {
  const BlockNode* block = BlockOf(block_sref);
  size_t n = block->iter_vars.size();
  std::set<int64_t> seen(new_order.begin(), new_order.end());
  bool in_range = std::all_of(new_order.begin(), new_order.end(),
                              [&](int64_t i) { return i >= 0 && i < static_cast<int64_t>(n); });
  if (new_order.size() != n || seen.size() != n || !in_range) {
    std::string order = "[";
    for (size_t i = 0; i < new_order.size(); ++i)
      order += (i ? ", " : "") + std::to_string(new_order[i]);
    Fail("reorder_block_iter_var: the order is not a permutation of the block iterators",
         "reorder_block_iter_var: " + order + "] is not a permutation of the " + std::to_string(n) +
             " iterator indices of {0}",
         {block_sref->stmt});
  }
  BlockRealize realize = GetBlockRealize(state, block_sref.get());
  Block copy = CopyBlock(block);
  std::vector<Expr> values;
  copy->iter_vars.clear();
  for (int64_t i : new_order) {
    copy->iter_vars.push_back(block->iter_vars[i]);
    values.push_back(realize->iter_values[i]);
  }
  BlockRealize result = BlockRealizeNode::Make(values, realize->predicate, copy, realize->span);
  state.Replace(block_sref.get(), realize.get(), result, {{block, copy}});
}

}  // namespace schedule
}  // namespace tessera
