// Helpers shared by the schedule primitives (utils.cc, analysis.cc, ir_edit.cc): errors, sref
// navigation, block scopes and dependencies, block properties, IR editing and interval
// arithmetic over loop domains.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "tessera/arith/analyzer.h"
#include "tessera/ir/expr_ops.h"
#include "tessera/ir/functor.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/ir/printer.h"
#include "tessera/ir/structural_equal.h"
#include "tessera/schedule/error.h"
#include "tessera/schedule/state.h"

namespace tessera {
namespace schedule {

using VarMap = std::unordered_map<const VarNode*, Expr>;
using BufferMap = std::unordered_map<const BufferNode*, Buffer>;
using DomMap = std::unordered_map<const VarNode*, Range>;

// ---- errors ----

/*! \brief Throw a ScheduleError; `detail` (default: `fast`) may name `locs` as {0}, {1}... */
[[noreturn]] void Fail(const std::string& fast, const std::string& detail = "",
                       std::vector<ObjectRef> locs = {});

// ---- expressions ----

// The typed builders (ir/expr_ops.h): IntConst, CastTo, AddE, SubE, MulE, FloorDivE, FloorModE,
// AndE (null or `true` operands drop out); two integer constants fold.
using ::tessera::AddE;
using ::tessera::AndE;
using ::tessera::CastTo;
using ::tessera::FloorDivE;
using ::tessera::FloorModE;
using ::tessera::IntConst;
using ::tessera::MulE;
using ::tessera::SubE;
/*! \brief Canonical simplification without variable bounds. */
Expr Simplify(const Expr& e);
/*! \brief Bind the ranges of the loops above `sref` (and of `sref` itself if a loop). */
void BindLoops(arith::Analyzer* ana, const StmtSRefNode* sref, bool inclusive);
/*!
 * \brief Simplifies the bindings and predicates of the blocks under a statement, knowing the
 *  ranges bound in `ana` and of the loops it passes; `extra_predicate` is conjoined to the
 *  predicates of the outermost blocks; `unit_vars` are replaced first. With
 *  `simplify_predicates` false the predicates stay as written (TVM's split only simplifies the
 *  bindings). A term `v * x * c` of a binding, `v` one of `iter_vars` and `x` free of them, is
 *  written `v * (x * c)`, TVM's form of an iterator times its scale.
 */
Stmt SimplifyBindings(const Stmt& s, arith::Analyzer* ana, const VarMap& unit_vars = {},
                      const Expr& extra_predicate = nullptr, bool simplify_predicates = true,
                      const std::vector<Var>& iter_vars = {});
using ::tessera::Substitute;  // Expr and Stmt (ir/ir_utils.h)
using ::tessera::UsesVar;
bool UsesVars(const Expr& e, const std::unordered_set<const VarNode*>& vars);
Range Substitute(const Range& r, const VarMap& vmap);
BufferRegion Substitute(const BufferRegion& r, const VarMap& vmap);

// ---- sref navigation ----

/*! \brief The For of a loop sref; throws a ScheduleError naming `what` otherwise. */
const ForNode* LoopOf(const StmtSRef& sref);
const BlockNode* BlockOf(const StmtSRef& sref);
/*! \brief The nearest block strictly above `sref` (null at a function's top). */
StmtSRef GetScopeRoot(const ScheduleState& state, const StmtSRefNode* sref);
/*! \brief The loops between `sref` and the nearest block above it, outermost first. */
std::vector<StmtSRef> GetLoopsAbove(const ScheduleState& state, const StmtSRefNode* sref);
/*! \brief The blocks under `parent` that no other block under it encloses, in program order. */
std::vector<StmtSRef> GetChildBlocks(const ScheduleState& state, const StmtSRefNode* parent);
/*! \brief The BlockRealize holding the block of `block_sref`. */
BlockRealize GetBlockRealize(const ScheduleState& state, const StmtSRefNode* block_sref);
/*! \brief The deepest loop or block strictly above every one of `nodes`. */
const StmtSRefNode* LowestCommonAncestor(const std::vector<const StmtSRefNode*>& nodes);
/*! \brief Whether `anc` is a strict ancestor of `node` in the sref tree. */
bool IsAncestor(const StmtSRefNode* anc, const StmtSRefNode* node);
/*!
 * \brief What `body` holds below the AllocateConst and DeclBuffer statements that open it. A
 *  scope may open with constant data (`T.allocate_const` and its `T.decl_buffer`); as in TVM,
 *  the primitives leave those statements where they are and work on the statements inside.
 */
const Stmt& UnderDecls(const Stmt& body);
/*! \brief `body` with UnderDecls(body) replaced by `inner` (the opening statements kept). */
Stmt ReplaceUnderDecls(const Stmt& body, const Stmt& inner);
/*! \brief The statements of a body (under its opening AllocateConst / DeclBuffer statements):
 *  the items of a SeqStmt, else the body alone. */
std::vector<Stmt> BodyItems(const Stmt& body);
/*! \brief The body of a loop or block sref. */
const Stmt& BodyOf(const StmtSRefNode* sref);
/*! \brief The index among BodyItems(BodyOf(parent)) of the item holding `node`. */
int64_t ChildIndex(const StmtSRefNode* parent, const StmtSRefNode* node);
/*! \brief The buffer allocations a block makes or the function parameters, by buffer. */
bool IsAllocatedIn(const BlockNode* block, const BufferNode* buffer);
/*! \brief The block (an ancestor of `sref` or the sref itself) allocating `buffer`, or null. */
StmtSRef FindAllocatingBlock(const ScheduleState& state, const StmtSRefNode* sref,
                             const BufferNode* buffer);
/*! \brief Whether `buffer` is bound to a parameter of `func`. */
bool IsParamBuffer(const PrimFunc& func, const BufferNode* buffer);

// ---- scopes and dependencies ----

enum class DepKind { kRAW, kWAW, kWAR };
struct Dependency {
  StmtSRef src, dst;
  DepKind kind;
};

/*! \brief The child blocks of a scope root and the dependencies between them. */
struct BlockScope {
  std::vector<StmtSRef> blocks;
  std::unordered_map<const BufferNode*, std::vector<StmtSRef>> writers;
  std::vector<Dependency> deps;
  /*! \brief Every written buffer has one writer and no block reads a buffer before a later
   *  block writes it. */
  bool stage_pipeline = true;
  /*! \brief Each block's position in `blocks`, and the indices in `deps` of the dependencies
   *  into and out of it, so that producers and consumers cost what they return. */
  std::unordered_map<const StmtSRefNode*, size_t> position;
  std::unordered_map<const StmtSRefNode*, std::vector<size_t>> deps_to, deps_from;
  std::vector<StmtSRef> Producers(const StmtSRefNode* block) const;
  std::vector<StmtSRef> Consumers(const StmtSRefNode* block) const;
};
BlockScope ComputeBlockScope(const ScheduleState& state, const StmtSRefNode* scope_root);

// ---- block properties ----

/*! \brief Bindings are quasi-affine in the loops between the block and its scope root. */
bool IsAffineBinding(const ScheduleState& state, const StmtSRefNode* block_sref);
/*! \brief IsAffineBinding with the loops at and above `high_exclusive` taken as constants
 *  (TVM's partial affine binding). */
bool IsPartialAffineBinding(const ScheduleState& state, const StmtSRefNode* block_sref,
                            const StmtSRefNode* high_exclusive);
/*! \brief Spatial iterators only, the only writer of its outputs in `scope`, and no buffer
 *  both read and written. Returns "" when complete, else why not. */
std::string WhyNotComplete(const ScheduleState& state, const StmtSRefNode* block_sref,
                           const BlockScope& scope);
/*! \brief An init, affine bindings, spatial and reduction iterators only, the only writer of
 *  its outputs, reduction iterators not indexing the outputs. "" when a reduction block. */
std::string WhyNotReduction(const ScheduleState& state, const StmtSRefNode* block_sref,
                            const BlockScope& scope);
/*! \brief Whether the block writes a buffer no block of its function allocates. */
bool IsOutputBlock(const ScheduleState& state, const StmtSRefNode* block_sref);

// ---- checks shared by primitives (throw ScheduleError) ----

void CheckStagePipeline(const ScheduleState& state, const StmtSRef& scope_root,
                        const BlockScope& scope);
void CheckCompleteOrReduction(const ScheduleState& state, const StmtSRef& block_sref,
                              const StmtSRef& scope_root, const BlockScope& scope);
/*! \brief Every block under `subtree` is a complete or reduction block of `scope`. */
void CheckSubtreeCompactDataflow(const ScheduleState& state, const StmtSRef& subtree,
                                 const StmtSRef& scope_root, const BlockScope& scope);
void CheckNotOutputBlock(const ScheduleState& state, const StmtSRef& block_sref);

// ---- IR editing ----

/*! \brief A mutator that remembers every block it rebuilds (old -> new), for sref reuse. */
class BlockRecordingMutator : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitStmt_;
  BlockReuse reuse;
  Stmt VisitStmt_(const BlockNode* op) override;
};

/*!
 * \brief Edits statements by identity: `replace` swaps a statement (a null replacement
 *  deletes it from its SeqStmt), `insert` puts a statement among the body items of a loop or
 *  block at an index of the original items. Changed blocks are recorded for reuse.
 */
class StmtEditor : public BlockRecordingMutator {
 public:
  using BlockRecordingMutator::VisitStmt_;
  std::unordered_map<const StmtNode*, Stmt> replace;
  std::unordered_map<const StmtNode*, std::vector<std::pair<int64_t, Stmt>>> insert;
  Stmt VisitStmt(const Stmt& s) override;
  Stmt VisitStmt_(const SeqStmtNode* op) override;
  Stmt VisitStmt_(const ForNode* op) override;
  Stmt VisitStmt_(const BlockNode* op) override;

 private:
  Stmt EditBody(const StmtNode* owner, const Stmt& body);
};

/*!
 * \brief Where a buffer derived from `buffer` (a cache, an rfactor buffer) is allocated: the
 *  block allocating `buffer` (an ancestor of `sref`), or the function's root block for a
 *  parameter, so that the new buffer lives as long as the original.
 */
StmtSRef AllocationSite(const ScheduleState& state, const StmtSRefNode* sref,
                        const BufferNode* buffer);
/*! \brief Apply `editor` to the block `site`, add `allocs` to its allocations and replace it. */
void EditAndAllocate(ScheduleState& state, const StmtSRef& site, StmtEditor* editor,
                     const std::vector<Buffer>& allocs, const BlockReuse& extra_reuse = {});
inline void EditAndAllocate(ScheduleState& state, const StmtSRef& site, StmtEditor* editor,
                            const Buffer& alloc, const BlockReuse& extra_reuse = {}) {
  EditAndAllocate(state, site, editor, std::vector<Buffer>{alloc}, extra_reuse);
}

/*! \brief Where a block and the loops left empty without it are removed: the statement to
 *  delete from its SeqStmt. Fails when the block is its scope's only statement. */
const StmtNode* LeafToRemove(const ScheduleState& state, const StmtSRef& block_sref);

/*! \brief Replace buffers in loads, stores, regions, allocations and match_buffer sources. */
Stmt ReplaceBuffers(const Stmt& s, const BufferMap& bmap, BlockReuse* reuse);
Expr ReplaceBuffers(const Expr& e, const BufferMap& bmap);

/*! \brief The regions a block reads and writes, recomputed from its body. */
Block WithInferredRegions(const Block& block, bool reads = true, bool writes = true);
/*! \brief A copy of a block with some fields changed. */
Block CopyBlock(const BlockNode* b);

/*! \brief Nest `body` in loops (outermost first); each For keeps its var, range and kind. */
Stmt MakeLoopNest(const std::vector<For>& loops, Stmt body);
/*! \brief `T.evaluate(0)`: a placeholder body. */
Stmt Evaluate0();
/*! \brief A new loop variable named `name` of type `t`. */
Var NewVar(const std::string& name, DataType t);
/*! \brief A new buffer like `b` with another name and scope (a new data pointer). */
Buffer WithNameAndScope(const Buffer& b, const std::string& name, const std::string& scope);
/*! \brief Whether a storage scope name is valid ("global", "shared", "local", ..., or one of
 *  global/shared/local/warp with a tag: "global.vtcm"). */
bool IsValidScope(const std::string& scope);

// ---- intervals ----

/*! \brief Inclusive bounds [min, max] of `e` when the variables of `dom` range over their
 *  domains (the others stay symbolic); nullopt when `e` is not quasi-affine. */
std::optional<std::pair<Expr, Expr>> EvalBounds(const Expr& e, const DomMap& dom,
                                                arith::Analyzer* facts = nullptr);
/*! \brief The region of `region` with the variables of `dom` relaxed; a dimension that cannot
 *  be bounded becomes the whole dimension. */
BufferRegion RelaxRegion(const BufferRegion& region, const DomMap& dom);
/*! \brief The smallest region holding both (same buffer). */
BufferRegion UnionRegion(const BufferRegion& a, const BufferRegion& b);
/*! \brief `region` of the block at `block_sref` with its iterators replaced by their bindings. */
BufferRegion RegionInLoops(const ScheduleState& state, const StmtSRefNode* block_sref,
                           const BufferRegion& region);
/*! \brief The domains of the loops between `sref` (exclusive) and the loop or block `top`
 *  (exclusive; null means the function top), keyed by loop variable. */
DomMap LoopDomainsBetween(const StmtSRefNode* top, const StmtSRefNode* sref);

/*! \brief The rank of a storage scope among the levels of the thread hierarchy: global memory
 *  is shared by the whole grid (0), shared memory by a thread block (1), warp memory by a warp
 *  (2); local memory and unknown scopes belong to one thread (3). */
int StorageRank(const std::string& scope);

/*! \brief The domains of the thread-bound loops at or above `loop` whose threads all see one
 *  copy of a buffer in `scope` (blockIdx and threadIdx for global, threadIdx for shared): the
 *  region such a buffer needs is the union over those threads, not one thread's part. */
DomMap SharedThreadDomains(const StmtSRefNode* loop, const std::string& scope);

}  // namespace schedule
}  // namespace tessera
