// Lookup primitives: get_block, get_loops, get_child_blocks, get_producers/consumers, outputs.
#include <functional>

#include "../utils.h"
#include "tessera/schedule/primitive.h"

namespace tessera {
namespace schedule {

StmtSRef GetBlock(const ScheduleState& state, const std::string& name,
                  const std::string& func_name) {
  std::vector<const BlockNode*> found;
  PostOrderVisit(state.mod()->Lookup(func_name)->body, [&](const ObjectRef& n) {
    if (auto* block = AsPtr<BlockNode>(n)) {
      if (block->name_hint == name) found.push_back(block);
    }
  });
  if (found.empty()) {
    // TVM's texts: the fast message does not name the block, the detailed one does.
    // The two texts that TVM code checks for a missing block (its tests match them).
    Fail("Cannot find a block with the specified name",
         "Cannot find a block with the name: " + name + " (in the function \"" + func_name + "\")");
  }
  if (found.size() > 1) {
    std::vector<ObjectRef> locs;
    std::string tags;
    for (size_t i = 0; i < found.size(); ++i) {
      locs.push_back(GetRef(found[i]));
      tags += (i ? ", {" : "{") + std::to_string(i) + "}";
    }
    Fail("several blocks have the given name",
         "Expected exactly one block named \"" + name + "\", but found " +
             std::to_string(found.size()) + ": " + tags,
         locs);
  }
  return state.GetSRef(found[0]);
}

std::vector<StmtSRef> GetLoops(const ScheduleState& state, const StmtSRef& block) {
  return GetLoopsAbove(state, block.get());
}

std::vector<StmtSRef> GetChildBlocks(const ScheduleState& state, const StmtSRef& parent) {
  return schedule::GetChildBlocks(state, parent.get());
}

namespace {
// Computed once per version of the IR: a rule asking for the producers of each of n blocks
// must not cost n scope computations.
std::shared_ptr<const BlockScope> ScopeOf(const ScheduleState& state, const StmtSRef& block) {
  StmtSRef root = GetScopeRoot(state, block.get());
  if (!root) Fail("The root block has no producers or consumers", "", {block->stmt});
  if (auto cached = state.CachedScope(root.get())) return cached;
  auto scope = std::make_shared<const BlockScope>(ComputeBlockScope(state, root.get()));
  state.CacheScope(root.get(), scope);
  return scope;
}
}  // namespace

std::vector<StmtSRef> GetProducers(const ScheduleState& state, const StmtSRef& block) {
  return ScopeOf(state, block)->Producers(block.get());
}

std::vector<StmtSRef> GetConsumers(const ScheduleState& state, const StmtSRef& block) {
  return ScopeOf(state, block)->Consumers(block.get());
}

std::vector<StmtSRef> GetOutputBlocks(const ScheduleState& state, const StmtSRef& scope_block) {
  // Every block under the scope (nested ones too, in pre-order, as TVM) that writes a buffer
  // allocated above the scope block or a parameter: what is visible after the scope.
  std::vector<StmtSRef> out;
  std::function<void(const StmtSRef&)> visit = [&](const StmtSRef& parent) {
    for (const StmtSRef& b : schedule::GetChildBlocks(state, parent.get())) {
      for (const BufferRegion& w : b->block()->writes) {
        StmtSRef alloc = FindAllocatingBlock(state, b->parent, w->buffer.get());
        if (!alloc || IsAncestor(alloc.get(), scope_block.get())) {
          out.push_back(b);
          break;
        }
      }
      visit(b);
    }
  };
  visit(scope_block);
  return out;
}

}  // namespace schedule
}  // namespace tessera
