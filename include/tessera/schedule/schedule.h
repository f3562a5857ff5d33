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
  Schedule(IRModule mod, int debug_mask = 0,
           ErrorRenderLevel error_render_level = ErrorRenderLevel::kDetail,
           bool enable_check = true);

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
                       const IndexMap& index_map, const Expr& pad_value);
  // ---- annotations ----
  void Annotate(const RV& block_or_loop, const std::string& ann_key, const TraceValue& ann_val);
  void Unannotate(const RV& block_or_loop, const std::string& ann_key);
  // ---- blockize ----
  BlockRV Blockize(const LoopRV& loop, bool preserve_unit_iters);
  BlockRV BlockizeBlocks(const std::vector<BlockRV>& blocks, bool preserve_unit_iters);

 private:
  /*! \brief Run one primitive: roll back and render the error if it fails. */
  template <class F>
  auto Run(const char* primitive, F body) -> decltype(body());
  void Record(Instruction inst);
  template <class R>
  std::shared_ptr<R> NewRV(const StmtSRef& sref);
  StmtSRef BlockSRef(const RV& rv) const;
  StmtSRef LoopSRef(const RV& rv) const;

  ScheduleState state_;
  Trace trace_;
  std::unordered_map<const RVNode*, std::pair<RV, StmtSRef>> symbols_;
  std::unordered_map<const RVNode*, std::pair<RV, Expr>> expr_symbols_;
  std::string func_working_on_;
  ErrorRenderLevel error_render_level_;
};

}  // namespace schedule
}  // namespace tessera
