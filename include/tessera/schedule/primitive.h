// The schedule primitives over a ScheduleState, one source file each under src/schedule/primitive.
// Each checks its preconditions first and throws ScheduleError without touching the state.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tessera/schedule/index_map.h"
#include "tessera/schedule/state.h"
#include "tessera/schedule/tensor_intrin.h"

namespace tessera {
namespace schedule {

// ---- lookup (get_block.cc) ----
/*! \brief The block named `name` in `func_name`; fails on none or several. */
StmtSRef GetBlock(const ScheduleState& state, const std::string& name,
                  const std::string& func_name);
/*! \brief The loops above a block up to its scope root, outermost first. */
std::vector<StmtSRef> GetLoops(const ScheduleState& state, const StmtSRef& block);
/*! \brief The blocks directly under a block or loop. */
std::vector<StmtSRef> GetChildBlocks(const ScheduleState& state, const StmtSRef& parent);
/*! \brief The blocks of the same scope that write what `block` reads (read what it writes). */
std::vector<StmtSRef> GetProducers(const ScheduleState& state, const StmtSRef& block);
std::vector<StmtSRef> GetConsumers(const ScheduleState& state, const StmtSRef& block);
/*! \brief The child blocks of `scope_block` that write a buffer allocated outside it. */
std::vector<StmtSRef> GetOutputBlocks(const ScheduleState& state, const StmtSRef& scope_block);

/*! \brief The loops of a block a tensor intrinsic's description covers (tensorize_mapping.cc). */
struct TensorizeLoopMapping {
  /*! \brief Block loop -> the description's loop it corresponds to, innermost first. */
  std::vector<std::pair<StmtSRef, For>> loop_map;
  /*! \brief The description's loops, outermost first (a loop's position is its index). */
  std::vector<For> desc_loops;
  /*! \brief With padding allowed: the multiple each block iterator is padded to (1: none). */
  std::optional<std::vector<int64_t>> block_iter_paddings;
};
/*!
 * \brief As TVM's GetTensorizeLoopMapping: each iterator of the description's block, innermost
 *  first, is matched to the next block iterator of the same kind and to the loop (among those
 *  directly above the block) that iterator's binding follows; each such loop's extent must be a
 *  multiple of the description loop's (else, with `allow_padding`, the iterator is padded).
 *  nullopt when no mapping exists.
 */
std::optional<TensorizeLoopMapping> GetTensorizeLoopMapping(const ScheduleState& state,
                                                            const StmtSRef& block,
                                                            const PrimFunc& desc,
                                                            bool allow_padding);
/*! \brief Whether the block writes a buffer allocated outside its scope. */
bool IsOutputBlock(const ScheduleState& state, const StmtSRef& block);

/*! \brief The properties of a block TVM's ScheduleState caches (state_flags.cc). */
struct CachedFlags {
  /*! \brief The bindings are quasi-affine in the loops between the block and its scope root. */
  bool affine_binding = true;
  /*! \brief What the block reads of its scope's buffers, its producers in the scope write
   *  first (under the loops it shares with each). */
  bool region_cover = true;
  /*! \brief In the scope the block is the root of: no block writes what an earlier one read,
   *  and every consumer is region-covered. */
  bool stage_pipeline = true;
};
CachedFlags GetCachedFlags(const ScheduleState& state, const StmtSRef& block);

/*! \brief A dependency between two child blocks of a scope (TVM's tir.Dependency);
 *  kind: 0 RAW, 1 WAW, 2 WAR (TVM's DepKind numbering). */
struct BlockDependency {
  StmtSRef src, dst;
  int kind = 0;
};
/*! \brief The dependencies between the child blocks of the scope `scope_block` roots. */
std::vector<BlockDependency> GetBlockDependencies(const ScheduleState& state,
                                                  const StmtSRef& scope_block);

// ---- loops ----
/*! \brief split.cc: `factors` has at most one null (inferred). Returns the new loops. */
std::vector<StmtSRef> Split(ScheduleState& state, const StmtSRef& loop,
                            const std::vector<Expr>& factors, bool preserve_unit_iters,
                            bool disable_predication);
/*! \brief loop_partition.cc: `factors` are the part sizes (one may be null: inferred; without
 *  one, the rest of the range is one more part). Returns the loops of the parts. */
std::vector<StmtSRef> LoopPartition(ScheduleState& state, const StmtSRef& loop,
                                    const std::vector<Expr>& factors, bool preserve_unit_iters);
/*! \brief fuse.cc: fuse a chain of loops (outermost first) into one. */
StmtSRef Fuse(ScheduleState& state, const std::vector<StmtSRef>& loops, bool preserve_unit_iters);
/*! \brief reorder.cc */
void Reorder(ScheduleState& state, const std::vector<StmtSRef>& loops);
/*! \brief add_unit_loop.cc: a loop of extent 1 above a block or loop. */
StmtSRef AddUnitLoop(ScheduleState& state, const StmtSRef& block_or_loop);
/*! \brief for_kind.cc */
void Parallel(ScheduleState& state, const StmtSRef& loop);
void Vectorize(ScheduleState& state, const StmtSRef& loop);
void Unroll(ScheduleState& state, const StmtSRef& loop);
void Bind(ScheduleState& state, const StmtSRef& loop, const std::string& thread_axis);

// ---- caches (cache_read_write.cc) ----
StmtSRef CacheRead(ScheduleState& state, const StmtSRef& block, int read_buffer_index,
                   const std::string& storage_scope, const std::vector<StmtSRef>& consumers);
StmtSRef CacheWrite(ScheduleState& state, const StmtSRef& block, int write_buffer_index,
                    const std::string& storage_scope, const std::vector<StmtSRef>& consumers);

/*! \brief A buffer the block reads and writes goes through a cache in `storage_scope`, copied
 *  in right before the block and out right after it; returns the two copy blocks. */
std::vector<StmtSRef> CacheInplace(ScheduleState& state, const StmtSRef& block,
                                   int read_buffer_index, const std::string& storage_scope);

/*! \brief cache_index.cc: the index expressions the block's stores evaluate at least
 *  `cse_thresh` times go into buffers computed by loop nests before the block; returns the
 *  blocks of those nests. */
std::vector<StmtSRef> CacheIndex(ScheduleState& state, const StmtSRef& block,
                                 const std::string& storage_scope, int cse_thresh);

// ---- compute location ----
/*! \brief compute_at.cc; `index` -1 is the last valid insertion point, -2 the first. */
void ComputeAt(ScheduleState& state, const StmtSRef& block, const StmtSRef& loop,
               bool preserve_unit_loops, int index);
void ReverseComputeAt(ScheduleState& state, const StmtSRef& block, const StmtSRef& loop,
                      bool preserve_unit_loops, int index);
/*! \brief compute_inline.cc */
void ComputeInline(ScheduleState& state, const StmtSRef& block);
void ReverseComputeInline(ScheduleState& state, const StmtSRef& block);

// ---- reductions ----
/*! \brief decompose_reduction.cc: returns the init block. */
StmtSRef DecomposeReduction(ScheduleState& state, const StmtSRef& block, const StmtSRef& loop);
/*! \brief rfactor.cc: returns the rfactor block. */
StmtSRef RFactor(ScheduleState& state, const StmtSRef& loop, int factor_axis);

// ---- buffers ----
/*! \brief storage_align.cc */
void StorageAlign(ScheduleState& state, const StmtSRef& block, int buffer_index, int axis,
                  int factor, int offset);
/*! \brief set_scope.cc */
void SetScope(ScheduleState& state, const StmtSRef& block, int buffer_index,
              const std::string& storage_scope);
/*! \brief transform_layout.cc: the buffer is the block's read or write buffer `buffer_index`. */
void TransformLayout(ScheduleState& state, const StmtSRef& block, int buffer_index, bool is_write,
                     const IndexMap& index_map, const std::optional<IndexMap>& pad_value,
                     bool assume_injective_transform);

/*! \brief The buffer of a block's read or write region `index`; fails with TVM's message. */
const Buffer& NthAccessBuffer(const StmtSRef& block_sref, int index, bool is_write);
/*! \brief The block allocating `buffer` (above `block_sref`); fails for parameters. */
StmtSRef AllocatingBlockOrFail(const ScheduleState& state, const StmtSRef& block_sref,
                               const Buffer& buffer);
/*! \brief set_axis_separator.cc: the read or write buffer `buffer_index` (and the match
 *  buffers over it) gets `axis_separators`; allocated buffers and parameters alike. */
void SetAxisSeparator(ScheduleState& state, const StmtSRef& block_sref, int buffer_index,
                      bool is_write, const std::vector<int64_t>& axis_separators);
/*! \brief unsafe_set_dtype.cc: the written buffer `buffer_index` gets `dtype`. */
void UnsafeSetDType(ScheduleState& state, const StmtSRef& block_sref, int buffer_index,
                    DataType dtype);
/*! \brief reorder_block_iter_var.cc */
void ReorderBlockIterVar(ScheduleState& state, const StmtSRef& block_sref,
                         const std::vector<int64_t>& new_order);

/*! \brief reindex.cc: returns the copy block. */
StmtSRef ReIndex(ScheduleState& state, const StmtSRef& block_sref, int buffer_index, bool is_write);

/*! \brief transform_block_layout.cc: `map` over the block's iterators. */
void TransformBlockLayout(ScheduleState& state, const StmtSRef& block_sref, const IndexMap& map);

/*! \brief merge.cc: returns the innermost merged loop. */
StmtSRef Merge(ScheduleState& state, const std::vector<StmtSRef>& loop_srefs);

/*!
 * \brief annotate_buffer_access.cc: the block's read or write region `buffer_index` becomes
 *  [begin_k, end_k) per dimension, `ranges` giving (begin_0, end_0, begin_1, ...) over the
 *  block's iterators.
 */
void AnnotateBufferAccess(ScheduleState& state, const StmtSRef& block_sref, int buffer_index,
                          bool is_write, const IndexMap& ranges);

/*!
 * \brief unsafe_hide_buffer_access.cc: the block's read (`is_write` false) or write regions at
 *  `indices` are removed from its region list; the body is unchanged.
 */
void UnsafeHideBufferAccess(ScheduleState& state, const StmtSRef& block_sref, bool is_write,
                            const std::vector<int64_t>& indices);

/*! \brief decompose_padding.cc: returns the constant-filling block (placed before `loop`). */
StmtSRef DecomposePadding(ScheduleState& state, const StmtSRef& block_sref,
                          const StmtSRef& loop_sref);

/*! \brief reindex.cc: reindex_cache_read (`is_write` false) / reindex_cache_write. */
StmtSRef ReindexCache(ScheduleState& state, const StmtSRef& block_sref, int buffer_index,
                      bool is_write, const std::string& storage_scope, const IndexMap& index_map);

/*! \brief fuse_reduction_epilogue.cc */
void FuseReductionEpilogue(ScheduleState& state, const StmtSRef& reduction_sref,
                           const StmtSRef& epilogue_sref);

/*! \brief pad_einsum.cc: pad each iterator's extent to a multiple of its factor. */
void PadEinsum(ScheduleState& state, const StmtSRef& block_sref,
               const std::vector<int64_t>& padding);

/*! \brief read_write_at.cc: read_at (`is_read`) / write_at; returns the copy block. */
StmtSRef ReadWriteAt(ScheduleState& state, const StmtSRef& loop_sref, const StmtSRef& block_sref,
                     int buffer_index, const std::string& storage_scope, bool is_read);

// ---- annotations (annotate.cc) ----
void Annotate(ScheduleState& state, const StmtSRef& sref, const std::string& key,
              const ObjectRef& value);
void Unannotate(ScheduleState& state, const StmtSRef& sref, const std::string& key);

// ---- blockize.cc ----
/*! \brief What blockize makes of a loop, before it replaces the loop. */
struct BlockizeResult {
  Stmt realize;      // the outer BlockRealize
  Block outer;       // its block
  BlockReuse reuse;  // the blocks under the loop, old -> new
};
BlockizeResult BlockizeImpl(ScheduleState& state, const StmtSRef& loop, bool preserve_unit_iters);
/*! \brief Wrap the subtree of `loop` in a new outer block; returns it. */
StmtSRef Blockize(ScheduleState& state, const StmtSRef& loop, bool preserve_unit_iters);
/*! \brief Wrap consecutive sibling blocks in a new block without iterators; returns it. */
StmtSRef BlockizeBlocks(ScheduleState& state, const std::vector<StmtSRef>& blocks,
                        bool preserve_unit_iters);

// ---- rolling_buffer.cc ----
/*! \brief Make the written buffer `write_buffer_index` a circular buffer along its rolling axis. */
void RollingBuffer(ScheduleState& state, const StmtSRef& block, int write_buffer_index);

// ---- tensorize.cc ----
/*! \brief Replace the body of a block (or of the block blockize makes of a loop) by the
 *  implementation of `intrin`, whose description the block must match. */
void Tensorize(ScheduleState& state, const StmtSRef& block_or_loop, const TensorIntrin& intrin,
               bool preserve_unit_iters);

}  // namespace schedule
}  // namespace tessera
