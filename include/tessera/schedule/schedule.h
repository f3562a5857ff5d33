// tir.Schedule: handles, primitives with recorded trace, and rendered errors.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "tessera/schedule/error.h"
#include "tessera/schedule/index_map.h"
#include "tessera/schedule/state.h"
#include "tessera/schedule/trace.h"

namespace tessera {
namespace schedule {

/*!
 * \brief A schedule of a module: primitives rewrite it through handles (BlockRV, LoopRV) and
 *  every successful call is appended to the trace.
 *
 * A failing primitive throws tessera::Error (ErrorKind::kSchedule) rendered at the schedule's
 * error level and leaves the schedule as it was. `debug_mask` != 0 verifies the sref tree
 * after every primitive.
 */
class Schedule {
 public:
  /*! \brief `seed` -1 draws a seed from the system; see Seed. */
  Schedule(IRModule mod, int debug_mask = 0,
           ErrorRenderLevel error_render_level = ErrorRenderLevel::kDetail,
           bool enable_check = true, int64_t seed = -1);

  const IRModule& mod() const { return state_.mod(); }
  const ScheduleState& state() const { return state_; }
  const Trace& trace() const { return trace_; }
  ErrorRenderLevel error_render_level() const { return error_render_level_; }
  /*! \brief The function get_block searches by default. */
  const std::string& func_working_on() const { return func_working_on_; }
  void WorkOn(const std::string& func_name);
  /*! \brief A copy with the same IR and trace; the handles of this schedule work in it. */
  Schedule Copy() const;

  /*! \brief The Block, For or expression behind a handle. */
  ObjectRef Get(const RV& rv) const;
  StmtSRef GetSRef(const RV& rv) const;
  /*! \brief Whether the handle still refers to a node of the IR. */
  bool IsValid(const RV& rv) const;

  // ---- sampling (schedule_sampling.cc) ----
  /*!
   * \brief Reset the random state (a linear congruential engine, x' = 48271 x mod 2^31-1, as
   *  TVM's): a given seed gives the same decisions as TVM's for the same calls. -1 draws one.
   */
  void Seed(int64_t seed);
  /*! \brief A new seed drawn from the random state (for a copy or a forked search). */
  int64_t ForkSeed() const;
  int64_t rand_state() const { return rand_state_; }
  /*! \brief One of `candidates` with the probabilities `probs`; `decision` is an index. */
  ExprRV SampleCategorical(const std::vector<int64_t>& candidates, const std::vector<double>& probs,
                           std::optional<int64_t> decision);
  /*!
   * \brief `n` factors whose product is the loop's extent, the innermost at most
   *  `max_innermost_factor` (-1: unbounded). A loop of unknown extent gives [-1, 1, ...].
   */
  std::vector<ExprRV> SamplePerfectTile(const LoopRV& loop, int n, int max_innermost_factor,
                                        std::optional<std::vector<int64_t>> decision);
  /*! \brief Like SamplePerfectTile, with the product of factors `partition_pos`.. divisible by
   *  `innerpart_factor`. */
  std::vector<ExprRV> SamplePartitionedTile(const LoopRV& loop, int n, int partition_pos,
                                            int innerpart_factor,
                                            std::optional<std::vector<int64_t>> decision);
  /*!
   * \brief A loop `block` can be computed at, or the marks for its root (decision -1) and
   *  inlining (-2); compute_at with a mark keeps the block where it is or inlines it.
   */
  LoopRV SampleComputeLocation(const BlockRV& block, std::optional<int64_t> decision);
  /*! \brief Forget a handle; later uses of it fail (not recorded in the trace, as in TVM). */
  void RemoveRV(const RV& rv);
  /*! \brief Mark the start of post-processing in the trace (replay may stop there). */
  void EnterPostproc();
  /*! \brief Whether a loop handle is the root or inline mark of SampleComputeLocation. */
  bool IsComputeLocationMark(const RV& rv, int64_t* mark) const;

  // ---- lookup ----
  BlockRV GetBlock(const std::string& name, const std::optional<std::string>& func_name);
  std::vector<LoopRV> GetLoops(const BlockRV& block);
  std::vector<BlockRV> GetChildBlocks(const RV& block_or_loop);
  std::vector<BlockRV> GetProducers(const BlockRV& block);
  std::vector<BlockRV> GetConsumers(const BlockRV& block);
  std::vector<BlockRV> GetOutputBlocks(const BlockRV& scope_block);
  // ---- loops ----
  /*! \brief Factors: TraceValue ints, None (inferred) or expressions. */
  std::vector<LoopRV> Split(const LoopRV& loop, const std::vector<TraceValue>& factors,
                            bool preserve_unit_iters, bool disable_predication);
  LoopRV Fuse(const std::vector<LoopRV>& loops, bool preserve_unit_iters);
  void Reorder(const std::vector<LoopRV>& ordered_loops);
  LoopRV AddUnitLoop(const RV& block_or_loop);
  void Parallel(const LoopRV& loop);
  void Vectorize(const LoopRV& loop);
  void Unroll(const LoopRV& loop);
  void Bind(const LoopRV& loop, const std::string& thread_axis);
  // ---- caches ----
  BlockRV CacheRead(const BlockRV& block, int read_buffer_index, const std::string& storage_scope,
                    const std::vector<BlockRV>& consumer_blocks);
  BlockRV CacheWrite(const BlockRV& block, int write_buffer_index, const std::string& storage_scope,
                     const std::vector<BlockRV>& consumer_blocks);
  // ---- compute location ----
  void ComputeAt(const BlockRV& block, const LoopRV& loop, bool preserve_unit_loops, int index);
  void ReverseComputeAt(const BlockRV& block, const LoopRV& loop, bool preserve_unit_loops,
                        int index);
  void ComputeInline(const BlockRV& block);
  void ReverseComputeInline(const BlockRV& block);
  // ---- reductions ----
  BlockRV DecomposeReduction(const BlockRV& block, const LoopRV& loop);
  BlockRV RFactor(const LoopRV& loop, int factor_axis);
  // ---- buffers ----
  void StorageAlign(const BlockRV& block, int buffer_index, int axis, int factor, int offset);
  void SetScope(const BlockRV& block, int buffer_index, const std::string& storage_scope);
  /*! \brief `buffer_kind` is "read" or "write". */
  void TransformLayout(const BlockRV& block, const std::string& buffer_kind, int buffer_index,
                       const IndexMap& index_map, const std::optional<IndexMap>& pad_value,
                       bool assume_injective_transform = false);
  void UnsafeSetDType(const BlockRV& block, int buffer_index, const std::string& dtype);
  /*! \brief `buffer_kind` is "read" or "write". */
  void SetAxisSeparator(const BlockRV& block, const std::string& buffer_kind, int buffer_index,
                        const std::vector<int64_t>& axis_separators);
  BlockRV ReadAt(const LoopRV& loop, const BlockRV& block, int read_buffer_index,
                 const std::string& storage_scope);
  BlockRV WriteAt(const LoopRV& loop, const BlockRV& block, int write_buffer_index,
                  const std::string& storage_scope);
  void PadEinsum(const BlockRV& block, const std::vector<int64_t>& padding);
  void FuseReductionEpilogue(const BlockRV& reduction_block, const BlockRV& epilogue_block);
  BlockRV ReindexCacheRead(const BlockRV& block, int read_buffer_index,
                           const std::string& storage_scope, const IndexMap& index_map);
  BlockRV ReindexCacheWrite(const BlockRV& block, int write_buffer_index,
                            const std::string& storage_scope, const IndexMap& index_map);
  BlockRV DecomposePadding(const BlockRV& block, const LoopRV& loop);
  /*! \brief Whether decompose_padding would succeed; changes nothing, records nothing. */
  bool CanDecomposePadding(const BlockRV& block, const LoopRV& loop);
  /*! \brief `buf_type` is "read" or "write"; see schedule::AnnotateBufferAccess. */
  void AnnotateBufferAccess(const BlockRV& block, int buffer_index, const std::string& buf_type,
                            const IndexMap& gen_new_ranges);
  /*! \brief `buf_type` is "read" or "write"; see schedule::UnsafeHideBufferAccess. */
  void UnsafeHideBufferAccess(const BlockRV& block, const std::string& buf_type,
                              const std::vector<int64_t>& buf_index_array);
  LoopRV Merge(const std::vector<LoopRV>& loops);
  void TransformBlockLayout(const BlockRV& block, const IndexMap& index_map);
  /*! \brief `buffer_kind` is "read" or "write"; returns the copy block. */
  BlockRV ReIndex(const BlockRV& block, const std::string& buffer_kind, int buffer_index);
  // ---- blocks (schedule_prims.cc) ----
  void ReorderBlockIterVar(const BlockRV& block, const std::vector<int64_t>& new_order);
  // ---- annotations ----
  void Annotate(const RV& block_or_loop, const std::string& ann_key, const TraceValue& ann_val);
  void Unannotate(const RV& block_or_loop, const std::string& ann_key);
  // ---- blockize ----
  BlockRV Blockize(const LoopRV& loop, bool preserve_unit_iters);
  BlockRV BlockizeBlocks(const std::vector<BlockRV>& blocks, bool preserve_unit_iters);
  /*! \brief Partition a loop into consecutive loops of the factors' extents. */
  std::vector<LoopRV> LoopPartition(const LoopRV& loop, const std::vector<TraceValue>& factors,
                                    bool preserve_unit_iters);
  /*! \brief Make a written buffer a circular buffer along its rolling axis. */
  void RollingBuffer(const BlockRV& block, int write_buffer_index);
  /*! \brief cache_read then cache_write of a buffer the block reads and writes, next to it. */
  std::vector<BlockRV> CacheInplace(const BlockRV& block, int read_buffer_index,
                                    const std::string& storage_scope);
  /*! \brief Precompute the block's repeated index expressions into buffers (TVM's
   *  cache_index); returns the blocks computing them. */
  std::vector<BlockRV> CacheIndex(const BlockRV& block, const std::string& storage_scope,
                                  int cse_thresh);
  /*! \brief Tensorize a block or loop with the registered tensor intrinsic `intrin`. */
  void Tensorize(const RV& block_or_loop, const std::string& intrin, bool preserve_unit_iters);

  /*! \brief Run `body` (any number of primitives) as one step: when it throws a tessera
   *  Error or an InternalError, the schedule (IR, handles, trace) is rolled back and false is
   *  returned. Costs what the primitives change, not a copy of the schedule. */
  bool Attempt(const std::function<void()>& body);

 private:
  /*! \brief Run one primitive: roll back and render the error if it fails. */
  template <class F>
  auto Run(const char* primitive, F body) -> decltype(body());
  void Record(Instruction inst);
  template <class R>
  std::shared_ptr<R> NewRV(const StmtSRef& sref);
  StmtSRef BlockSRef(const RV& rv) const;
  StmtSRef LoopSRef(const RV& rv) const;

  /*! \brief A trial of a primitive: whether it succeeds; the schedule is left unchanged. */
  bool Try(const std::function<void()>& body);
  ExprRV NewExprRV(Expr value);
  /*! \brief Loop factors (ints, expressions, ExprRVs; None or -1 for an inferred one) as
   *  expressions of type `t` (null for inferred). */
  std::vector<Expr> FactorExprs(const std::vector<TraceValue>& factors, DataType t,
                                const char* primitive) const;

  ScheduleState state_;
  Trace trace_;
  mutable int64_t rand_state_ = 1;
  /*! \brief The srefs sample_compute_location returns for "root" and "inline". */
  StmtSRef root_mark_ = std::make_shared<StmtSRefNode>();
  StmtSRef inline_mark_ = std::make_shared<StmtSRefNode>();
  std::unordered_map<const RVNode*, std::pair<RV, StmtSRef>> symbols_;
  std::unordered_map<const RVNode*, std::pair<RV, Expr>> expr_symbols_;
  /*! \brief The changes to symbols_ and expr_symbols_ made by the primitives running now, so
   *  that a failing one undoes its own (a copy of the tables per primitive made a schedule of
   *  n blocks quadratic). An entry without a saved value was added and is erased on undo. */
  struct SymbolUndo {
    const RVNode* key;
    std::optional<std::pair<RV, StmtSRef>> symbol;
    std::optional<std::pair<RV, Expr>> expr_symbol;
  };
  std::vector<SymbolUndo> symbol_undo_;
  int run_depth_ = 0;
  void UndoSymbols(size_t mark);
  void LogNewSymbol(const RVNode* key) {
    if (run_depth_ > 0) symbol_undo_.push_back({key, std::nullopt, std::nullopt});
  }
  std::string func_working_on_;
  ErrorRenderLevel error_render_level_;
};

}  // namespace schedule
}  // namespace tessera
