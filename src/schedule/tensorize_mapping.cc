// Which loops of a block a tensor intrinsic's description covers (TVM's
// GetTensorizeLoopMapping), and whether a block is an output block of its scope.
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "tessera/schedule/primitive.h"
#include "utils.h"

namespace tessera {
namespace schedule {
namespace {

// The description's loops (outermost first) down to its one block realize.
struct DescInfo {
  std::vector<const ForNode*> loops;
  std::unordered_set<const VarNode*> loop_vars;
  const BlockRealizeNode* realize = nullptr;
};

std::optional<DescInfo> AnalyzeDesc(const PrimFunc& desc) {
  auto* root = AsPtr<BlockRealizeNode>(desc->body);
  if (!root) return std::nullopt;
  DescInfo info;
  Stmt s = root->block->body;
  while (true) {
    if (auto* loop = AsPtr<ForNode>(s)) {
      info.loops.push_back(loop);
      info.loop_vars.insert(loop->loop_var.get());
      s = loop->body;
    } else if (auto* realize = AsPtr<BlockRealizeNode>(s)) {
      info.realize = realize;
      return info;
    } else {
      return std::nullopt;
    }
  }
}

// `binding - loop_var` uses none of `vars`: the binding follows the loop one to one.
bool FollowsLoop(const Expr& binding, const Var& loop_var,
                 const std::unordered_set<const VarNode*>& vars) {
  DataType t = binding->dtype.bits() >= loop_var->dtype.bits() ? binding->dtype : loop_var->dtype;
  Expr residual = Simplify(SubE(CastTo(t, binding), CastTo(t, loop_var)));
  return !UsesVars(residual, vars);
}

}  // namespace

std::optional<TensorizeLoopMapping> GetTensorizeLoopMapping(const ScheduleState& state,
                                                            const StmtSRef& block_sref,
                                                            const PrimFunc& desc,
                                                            bool allow_padding) {
  const BlockNode* block = BlockOf(block_sref);
  BlockRealize realize = GetBlockRealize(state, block_sref.get());
  std::optional<DescInfo> desc_info = AnalyzeDesc(desc);
  if (!desc_info) return std::nullopt;
  for (const ForNode* loop : desc_info->loops) {
    if (!IsConstInt(loop->min, 0)) return std::nullopt;
  }
  // The loops directly above the block, up to one with several statements in its body.
  std::vector<StmtSRef> block_loops;
  std::unordered_set<const VarNode*> block_loop_vars;
  for (StmtSRefNode* p = block_sref->parent; p && p->loop(); p = p->parent) {
    const ForNode* loop = p->loop();
    if (AsPtr<SeqStmtNode>(loop->body)) break;
    if (!IsConstInt(Simplify(loop->min), 0)) return std::nullopt;
    block_loops.push_back(state.GetSRef(loop));
    block_loop_vars.insert(loop->loop_var.get());
  }
  std::reverse(block_loops.begin(), block_loops.end());

  const BlockRealizeNode* desc_realize = desc_info->realize;
  const BlockNode* desc_block = desc_realize->block.get();
  int n_block_vars = static_cast<int>(realize->iter_values.size());
  int n_desc_vars = static_cast<int>(desc_realize->iter_values.size());
  if (n_block_vars < n_desc_vars) return std::nullopt;
  if (desc_info->loops.size() != static_cast<size_t>(n_desc_vars)) return std::nullopt;

  TensorizeLoopMapping out;
  std::unordered_map<int, int64_t>
      paddings;  // block iterator -> the extent to pad to a multiple of
  std::unordered_set<const StmtSRefNode*> mapped;
  // As TVM: the description's iterators are matched from the innermost, each to the next block
  // iterator of the same kind, then to the loop that binding follows.
  int next_block_index = n_block_vars - 1;
  for (int i_desc = n_desc_vars - 1; i_desc >= 0; --i_desc) {
    const Expr& desc_bind = desc_realize->iter_values[i_desc];
    const ForNode* desc_loop = nullptr;
    IterVarType desc_type = desc_block->iter_vars[i_desc]->iter_type;
    for (size_t i = 0; i < desc_info->loops.size(); ++i) {
      if (FollowsLoop(desc_bind, desc_info->loops[i]->loop_var, desc_info->loop_vars)) {
        desc_loop = desc_info->loops[i];
        desc_type = desc_block->iter_vars[i]->iter_type;
        break;
      }
    }
    if (!desc_loop) return std::nullopt;
    auto desc_extent = AsConstInt(desc_loop->extent);
    if (!desc_extent || *desc_extent <= 0) return std::nullopt;

    Expr block_bind;
    int block_index = next_block_index;
    for (; block_index >= 0; --block_index) {
      if (block->iter_vars[block_index]->iter_type == desc_type) {
        next_block_index = block_index - 1;
        block_bind = realize->iter_values[block_index];
        break;
      }
    }
    if (!block_bind) return std::nullopt;

    for (const StmtSRef& loop_sref : block_loops) {
      if (mapped.count(loop_sref.get())) continue;
      const ForNode* loop = loop_sref->loop();
      if (!FollowsLoop(block_bind, loop->loop_var, block_loop_vars)) continue;
      // Padding only where the binding is the loop itself.
      DataType t = block_bind->dtype;
      if (allow_padding && !IsConstInt(Simplify(SubE(block_bind, CastTo(t, loop->loop_var))), 0))
        allow_padding = false;
      auto extent = AsConstInt(Simplify(loop->extent));
      if (!extent) return std::nullopt;
      if (*extent % *desc_extent != 0) {
        if (!allow_padding) return std::nullopt;
        paddings[block_index] = *desc_extent;
      }
      out.loop_map.emplace_back(loop_sref, GetRef(desc_loop));
      mapped.insert(loop_sref.get());
      break;
    }
  }
  for (const ForNode* loop : desc_info->loops) out.desc_loops.push_back(GetRef(loop));
  if (!paddings.empty()) {
    if (!allow_padding) return std::nullopt;
    std::vector<int64_t> pads;
    for (int i = 0; i < n_block_vars; ++i) {
      auto it = paddings.find(i);
      pads.push_back(it == paddings.end() ? 1 : it->second);
    }
    out.block_iter_paddings = std::move(pads);
  }
  return out;
}

bool IsOutputBlock(const ScheduleState& state, const StmtSRef& block_sref) {
  BlockOf(block_sref);
  return IsOutputBlock(state, block_sref.get());
}

}  // namespace schedule
}  // namespace tessera
