// The schedule state: the module being scheduled plus the sref tree over its loops and blocks.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "tessera/ir/function.h"

namespace tessera {
namespace schedule {

/*!
 * \brief A stable reference to a loop or block of the scheduled program.
 *
 * IR nodes are immutable, so a primitive builds new nodes; the sref of a loop or block survives
 * the rewrite when the new IR keeps the node (the same object), the loop (the same loop
 * variable) or a block the primitive declares as the same. `stmt` is null once the node is gone.
 */
struct StmtSRefNode : std::enable_shared_from_this<StmtSRefNode> {
  Stmt stmt;                       // a For or a Block; null once removed
  StmtSRefNode* parent = nullptr;  // the enclosing loop or block; null at a function's top
  int64_t seq_index = -1;          // position in the parent's SeqStmt, -1 when not in one
  const ForNode* loop() const { return AsPtr<ForNode>(stmt); }
  const BlockNode* block() const { return AsPtr<BlockNode>(stmt); }
};
using StmtSRef = std::shared_ptr<StmtSRefNode>;

struct BlockScope;

/*! \brief A block rewritten by a primitive that stays "the same block" for its handles. */
using BlockReuse = std::unordered_map<const BlockNode*, Block>;

/*!
 * \brief The module being scheduled and the sref tree of each of its functions.
 *
 * Primitives read the IR through srefs and write it with Replace, which swaps one statement
 * for another, rebuilds the enclosing function and updates the srefs.
 */
class ScheduleState {
 public:
  ScheduleState(IRModule mod, int debug_mask, bool enable_check);

  const IRModule& mod() const { return mod_; }
  int debug_mask() const { return debug_mask_; }
  bool enable_check() const { return enable_check_; }

  /*! \brief The sref of a loop or block of the current IR (throws InternalError if none). */
  StmtSRef GetSRef(const StmtNode* stmt) const;
  /*! \brief The sref of a loop or block, or null when the node is not in the current IR. */
  StmtSRef FindSRef(const StmtNode* stmt) const;
  /*! \brief The sref of the root block of `func_name` (null for a function without one). */
  StmtSRef RootSRef(const std::string& func_name) const;
  /*! \brief The name of the function holding `sref`. */
  std::string FuncNameOf(const StmtSRefNode* sref) const;
  /*! \brief The function holding `sref`. */
  PrimFunc FuncOf(const StmtSRefNode* sref) const;

  /*!
   * \brief Replace the statement `src` (any statement inside the function of `anchor`, often
   *  `anchor->stmt` itself) by `tgt` and update the srefs. Blocks in `block_reuse` (old -> new)
   *  keep their srefs; so do loops whose loop variable survives and nodes kept as they are, and
   *  a replaced block (by the block put in) unless `keep_replaced_block_sref` is false.
   *  Copy-on-write as TVM: the nodes above `src` that only their parent holds (and the module
   *  and function, when only this state holds them) change in place and keep their identity.
   */
  void Replace(const StmtSRefNode* anchor, const StmtNode* src, const Stmt& tgt,
               const BlockReuse& block_reuse = {}, bool keep_replaced_block_sref = true);
  /*! \brief Replace a whole function (its body, buffer map or parameters changed). */
  void ReplaceFunc(const std::string& func_name, const PrimFunc& func,
                   const BlockReuse& block_reuse = {});

  /*! \brief Check that the sref tree matches the IR (debug_mask != 0 does it after each step). */
  void VerifySRefTree() const;

  /*! \brief A deep copy: the same IR, new srefs; `sref_map` receives old -> new. */
  ScheduleState Copy(std::unordered_map<const StmtSRefNode*, StmtSRef>* sref_map) const;

  /*! \brief The sref tree a snapshot restores, copied only when the state first changes after
   *  the Save (a primitive that only looks, as get_block or get_producers, copies nothing). */
  struct SnapshotData {
    bool materialized = false;
    std::vector<std::pair<StmtSRef, StmtSRefNode>> srefs;
    std::unordered_map<const StmtNode*, StmtSRef> stmt2ref;
    std::unordered_map<std::string, std::vector<StmtSRef>> func_srefs;
  };
  /*! \brief What Restore needs to undo the primitives run since. */
  struct Snapshot {
    IRModule mod;
    std::shared_ptr<SnapshotData> data;
  };
  Snapshot Save();
  void Restore(Snapshot snapshot);

  /*! \brief The dependencies of the blocks under a scope root, computed once per version of the
   *  IR (null when not cached). */
  std::shared_ptr<const BlockScope> CachedScope(const StmtSRefNode* root) const {
    auto it = scope_cache_.find(root);
    return it == scope_cache_.end() ? nullptr : it->second;
  }
  void CacheScope(const StmtSRefNode* root, std::shared_ptr<const BlockScope> scope) const {
    scope_cache_[root] = std::move(scope);
  }

 private:
  /*! \brief Called before the IR or the srefs change: fills the pending snapshot, drops the
   *  cached scopes. */
  void BeforeChange();
  /*! \brief Whether nobody but its parent (and its own sref) holds `stmt`. */
  bool HeldOnlyByParent(const StmtNode* stmt) const;
  /*! \brief Rebuild the srefs of one function after its IR changed. */
  void RebuildFunc(const std::string& func_name, const BlockReuse& block_reuse);

  IRModule mod_;
  int debug_mask_;
  bool enable_check_;
  std::unordered_map<const StmtNode*, StmtSRef> stmt2ref_;
  /*! \brief Every live sref of each function, in pre-order. */
  std::unordered_map<std::string, std::vector<StmtSRef>> func_srefs_;
  std::shared_ptr<SnapshotData> pending_;
  mutable std::unordered_map<const StmtSRefNode*, std::shared_ptr<const BlockScope>> scope_cache_;
};

}  // namespace schedule
}  // namespace tessera
