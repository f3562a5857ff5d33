// The rules of the automatic schedule (one file each) and the block analysis they share.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tessera/ir/ir_utils.h"
#include "tessera/ir/stmt.h"
#include "tessera/ir/target.h"
#include "tessera/schedule/schedule.h"

namespace tessera {
namespace autoschedule {

using schedule::BlockRV;
using schedule::LoopRV;
using schedule::Schedule;

/*! \brief What the rules need to know about one block of the root scope. */
struct BlockInfo {
  BlockRV rv;
  const BlockNode* block = nullptr;
  std::string name;
  bool is_reduction = false;  ///< has a reduction iterator and an init
  bool has_call = false;      ///< calls an intrinsic (exp, sqrt, ...) other than select/min/max
                              ///< and integer bitwise operations and shifts
  bool has_select = false;    ///< if_then_else / select (padding, masks)
  const BufferStoreNode* store = nullptr;    ///< the body when it is one store
  std::vector<const BufferLoadNode*> loads;  ///< loads in the stored value (not the accumulator)
  std::vector<int64_t> extents;              ///< constant iterator extents (-1: not constant)
  int output_bits = 32;                      ///< element width of the written buffer (bool: 8)
  bool writes_param = false;                 ///< writes a buffer of the function's signature
};

/*! \brief The analysis of `rv` in the current IR of `sch` (function `func`). */
BlockInfo AnalyzeBlock(Schedule& sch, const BlockRV& rv, const PrimFunc& func);
/*! \brief Whether `e` uses the variable `v`. */
/*! \brief Whether a load of the block's stored value has an index with a floordiv or floormod
 *  (a re-indexing read: a layout change, an interleave). */
bool ReadsDivided(const BlockInfo& info);
/*! \brief The constant extent of a loop, or -1. */
int64_t LoopExtent(Schedule& sch, const LoopRV& loop);
/*! \brief Run `body` on a copy of the schedule's state: on a schedule error the schedule is
 *  restored (the trace too) and false returned. */
bool Try(Schedule& sch, const std::function<void()>& body);

/*! \brief Decompose the reduction `block` at `loop` once every rule has run: after it the
 *  scope has two writers of the buffer, which parallel and vectorize refuse. `then`, when
 *  given, then schedules the init block that the decomposition made (in a Try of its own: on
 *  an error only its steps are undone). */
void DeferDecomposeReduction(const BlockRV& block, const LoopRV& loop,
                             std::function<void(Schedule&, const BlockRV&)> then = nullptr);
/*! \brief Tensorize `loop` with `intrin` after the deferred decompositions (a tensor
 *  intrinsic's description has no init). */
void DeferTensorize(const LoopRV& loop, const std::string& intrin);
/*! \brief Run the deferred decompositions (those whose handles are still valid), then the
 *  deferred tensorizations. */
void RunDeferredDecompositions(Schedule& sch);

/*!
 * \brief One choice a rule makes: `candidates[preferred]` (the rule's analytical choice) when
 *  the automatic schedule runs on its own. When it runs as a design space (AutoScheduleSpace),
 *  the choice is a `sample_categorical` in the trace, the analytical candidate half of the
 *  probability mass, and the space's k-th choice takes its k-th given decision (an index).
 *  Call it outside Try: a rolled-back rule must not take decisions back.
 */
int64_t Choose(Schedule& sch, const std::vector<int64_t>& candidates, size_t preferred);

/*! \brief The largest divisor of `n` that is at most `cap` (at least 1). */
int64_t LargestDivisor(int64_t n, int64_t cap);

// ---- the rules ----
/*! \brief inline.cc: inline elementwise producers into their consumers; keeps producers whose
 *  value is expensive and read twice, and padding read by a reduction. */
void InlineElementwise(Schedule& sch, const PrimFunc& func, const TargetFacts& facts);
/*! \brief multi_level_tiling.cc: matmul-like blocks (C += X * Y with reuse) tiled for registers
 *  and caches; returns false when the block is not matmul-like. `taken` receives the names of
 *  the blocks it scheduled (the block, its caches, its epilogue). */
bool TileMatmulLike(Schedule& sch, const BlockInfo& info, const PrimFunc& func,
                    const TargetFacts& facts, std::vector<std::string>* taken);
/*! \brief tensor_core.cc: a float16 matmul with a float32 accumulator on CUDA tiled for the
 *  tensor cores (wmma fragments, shared-memory tiles); false when the block is not one, its
 *  shape is not a multiple of 16 or the wmma intrinsics are not registered. */
bool TileTensorCore(Schedule& sch, const BlockInfo& info, const TargetFacts& facts,
                    std::vector<std::string>* taken);
/*! \brief epilogue.cc: the elementwise consumer of a tiled block computed at its tile.
 *  `write_back` is the block that copies the tile out; returns the block now at the tile. */
BlockRV AttachEpilogue(Schedule& sch, const BlockRV& write_back, const LoopRV& tile_loop,
                       const PrimFunc& func, const TargetFacts& facts);
/*! \brief reduction.cc: a reduction and the blocks of its row (softmax, layer_norm) computed
 *  per row; returns false when `anchor` heads no such chain. `taken` receives the names of
 *  the blocks it scheduled. */
bool ScheduleRowChain(Schedule& sch, const BlockInfo& anchor, const PrimFunc& func,
                      const TargetFacts& facts, std::vector<std::string>* taken);
/*! \brief injective.cc: a spatial block at the root: fused, parallel outside, vectors inside
 *  (CPU), or bound to blocks and threads (CUDA). */
void ScheduleInjective(Schedule& sch, const BlockInfo& info, const TargetFacts& facts);
/*! \brief phase_layout.cc: the constant step s > 1 along the block iterator `j` of `load`'s
 *  innermost index, when no other index reads `j` (a strided convolution's input x * s + rx);
 *  else 0. */
int64_t InnermostStride(const BlockNode* block, const BufferLoadNode* load, const Var& j);
/*! \brief phase_layout.cc: the block's read `read_index` (of `load`'s buffer) through a copy in
 *  `stride` phases of its innermost axis ([..., w] -> [..., w % s, w // s], zero padded), its
 *  producers inlined into the copy; the copy block, or nothing (schedule unchanged) where a
 *  primitive refuses. */
std::optional<BlockRV> ReadInPhases(Schedule& sch, const BlockRV& block, int read_index,
                                    const BufferLoadNode* load, int64_t stride);
/*! \brief injective.cc: a re-indexing copy beside a tiled block (ReadsDivided): its loops fused
 *  and parallel on the CPU, left to the C compiler's scalar code (vectors of it would be
 *  gathers with a division per lane), bound to blocks and threads on CUDA. */
void ScheduleCopy(Schedule& sch, const BlockInfo& info, const TargetFacts& facts);
/*! \brief reduction.cc: a reduction on its own (no chain): parallel over its spatial loops. */
void ScheduleLoneReduction(Schedule& sch, const BlockInfo& info, const TargetFacts& facts);
/*! \brief Whether `info`'s block holds blocks (a window nest of te.create_prim_func). */
bool IsWindowNest(const BlockInfo& info);
/*! \brief injective.cc: a window nest: the loops of its spatial iterators fused, parallel
 *  (CPU) or bound to blocks and threads (CUDA); the nest inside runs as it is. */
void ScheduleWindowNest(Schedule& sch, const BlockInfo& info, const TargetFacts& facts);

}  // namespace autoschedule
}  // namespace tessera
