// Rule "reduction": a reduction and the blocks of its row (softmax: max, exp, sum, divide;
// layer_norm: mean, variance, normalize) computed per row, inside one loop over the rows:
// on the CPU the rows run across the cores and each reduction is split into vector-wide
// partial results (rfactor) so that its inner loop vectorizes; on CUDA a row is a thread
// block and each reduction a cross-thread reduction over its threads.
#include <algorithm>
#include <optional>
#include <set>

#include "rules.h"
#include "tessera/arith/analyzer.h"
#include "tessera/ir/expr_ops.h"
#include "tessera/ir/reducer.h"

namespace tessera {
namespace autoschedule {
namespace {

using schedule::TraceValue;

constexpr int64_t kParallelMinElements = 16384;
constexpr int64_t kTotalAccumulators = 4;
// A reduction loop of at most this many steps inside a window (a pool's row of the window) is
// unrolled.
constexpr int64_t kWindowUnroll = 8;
// A reduction over at most this many points is a window (a pool's), see KeepWindowColumn.
constexpr int64_t kWindowMax = 64;
// A scalar window (SerialWindow) of at most this many points is unrolled whole.
constexpr int64_t kWindowUnrollPoints = 16;
constexpr int64_t kRowAccumulators = 4;  // vector accumulators per row of a row reduction  //
                                         // independent vector accumulators of a total reduction

// A reduction that streams more data than the L2 cache holds prefetches this many bytes ahead
// of its loads (tir.InjectPrefetch): the hardware prefetcher alone leaves one thread's stream
// short of memory bandwidth (row max / argmax / min of all elements of 2048 x 2048 float32,
// AVX2 (AMD EPYC), one thread, thread CPU time in turn with numpy, 2 x 3 runs: argmax
// 1.69-2.02 -> 1.22-1.60 ms, min 1.26-1.56 -> 1.21-1.35, max 1.07-1.24 -> 0.86-1.14; numpy
// 1.46-1.78, 1.11-1.45, 1.49-1.55; 4 KB ahead was slower than 8, 16 KB no better).
constexpr int64_t kPrefetchAheadBytes = 8192;

/*! \brief Whether a stream read in one pass prefetches: not on an AVX-512 host, whose hardware
 *  prefetcher alone kept one thread's stream faster (AMD EPYC Zen 4, same measure, 2048 x 2048
 *  float32: row max 0.246 -> 0.219 ms, row sum 0.246 -> 0.220, min of all elements 0.251 ->
 *  0.221 without; numpy 0.359 / - / 0.225). A row read twice (argmax's index search after its
 *  max) still prefetches there: the second pass leaves the stream idle (0.406 with, 0.413 -
 *  0.420 without, ms). */
bool PrefetchOnePass(const TargetFacts& facts) { return facts.vector_bits < 512; }

/*! \brief `loop` (each iteration reads `bytes` of a stream) prefetches kPrefetchAheadBytes ahead.
 */
void PrefetchAhead(Schedule& sch, const LoopRV& loop, int64_t bytes) {
  if (bytes <= 0) return;
  int64_t distance = std::max<int64_t>(1, kPrefetchAheadBytes / bytes);
  sch.Annotate(loop, "pragma_prefetch", TraceValue::Int(distance));
}

/*! \brief Whether `load`'s address depends on a loaded value (argmax's search of one block,
 *  A[row, min(A_block[row] * 256, n - 256) + j]): a window found at run time, not a stream, so
 *  it does not prefetch a fixed distance ahead (the window was just read by the block maxima;
 *  float64 2048 x 2048, AMD Zen 4 AVX-512, one thread, thread CPU time in turn with numpy:
 *  1.11 ms with the prefetch, 0.87 without; float32 0.334 and 0.328). */
bool AddressIsLoaded(const BufferLoadNode* load) {
  bool found = false;
  for (const Expr& index : load->indices) {
    PostOrderVisit(index, [&](const ObjectRef& n) { found = found || AsPtr<BufferLoadNode>(n); });
  }
  return found;
}

/*! \brief The blocks that `anchor` reads from, transitively, that are still root loop nests,
 *  latest first (each after all of its consumers). */
std::vector<BlockRV> RowProducers(Schedule& sch, const BlockRV& anchor, const PrimFunc& func,
                                  const std::vector<BlockRV>& root_blocks) {
  std::set<std::string> seen;
  std::vector<BlockRV> stack = {anchor};
  while (!stack.empty()) {
    BlockRV b = stack.back();
    stack.pop_back();
    for (const BlockRV& p : sch.GetProducers(b)) {
      BlockInfo info = AnalyzeBlock(sch, p, func);
      if (seen.insert(info.name).second) stack.push_back(p);
    }
  }
  std::vector<BlockRV> out;
  if (seen.empty()) return out;  // no scan of the root blocks for a block without producers
  for (size_t k = root_blocks.size(); k-- > 0;) {
    BlockInfo info = AnalyzeBlock(sch, root_blocks[k], func);
    if (!seen.count(info.name)) continue;
    if (sch.GetLoops(root_blocks[k]).size() != info.block->iter_vars.size()) continue;
    out.push_back(root_blocks[k]);
  }
  return out;
}

/*! \brief The element width that sets a block's vector lanes: its output's, except that a
 *  bool reduction over wider values (topi.any / topi.all of float32: `B = B || A != 0`) takes
 *  the widest value it loads: 16 lanes of float32 comparisons on AVX-512, not 64 (a byte a
 *  bool), whose vectors the C vectorizer splits into four, with 64 partial results to
 *  combine per row instead of 16 (any over the rows of 2048 x 2048 float32, one thread:
 *  0.79 ms with 64 lanes, 0.40 with 16, numpy 0.50). */
int LaneBits(const BlockInfo& info) {
  if (info.store == nullptr || !info.is_reduction || !info.store->buffer->dtype.is_bool()) {
    return info.output_bits;
  }
  int bits = info.output_bits;
  for (const BufferLoadNode* load : info.loads) {
    const DataType& t = load->buffer->dtype;
    bits = std::max(bits, t.is_bool() ? 8 : t.bits());
  }
  return bits;
}

/*! \brief The leading loops of a block bound to spatial iterators. */
std::vector<LoopRV> SpatialPrefix(Schedule& sch, const BlockInfo& info) {
  std::vector<LoopRV> loops = sch.GetLoops(info.rv);
  std::vector<LoopRV> out;
  for (size_t k = 0; k < loops.size() && k < info.block->iter_vars.size(); ++k) {
    if (info.block->iter_vars[k]->iter_type != IterVarType::kDataPar) break;
    out.push_back(loops[k]);
  }
  return out;
}

int64_t NextPow2(int64_t n) {
  int64_t p = 1;
  while (p < n) p <<= 1;
  return p;
}

/*! \brief The most vector accumulators (`most`, `most` / 2 or 1) such that `n` elements cut
 *  into `parts` x accumulators x `lanes` leave each accumulator at least `min_steps` steps;
 *  0 when none does. */
int64_t Accumulators(int64_t n, int64_t parts, int64_t lanes, int64_t most, int64_t min_steps) {
  for (int64_t a : {most, most / 2, int64_t{1}}) {
    int64_t width = parts * a * lanes;
    if (a >= 1 && n % width == 0 && n / width >= min_steps) return a;
  }
  return 0;
}

/*! \brief rfactor of `block` at `loop`, the partial results last in the rfactor buffer
 *  ([row, lane]: each row's lanes are contiguous vectors, not lanes a row apart). rfactor
 *  leaves the block that combines the partial results in a loop nest of its own: it goes back
 *  into the row loop, after the partial results of its row. The rfactor buffer then shrinks
 *  to one row, allocated in the row loop, the C compiler keeps its vectors in registers
 *  instead of loading and storing them at every step through a row-by-lane buffer, and the
 *  rows take one parallel loop instead of two (a row max of 2048 x 2048 float32, AVX2, one
 *  thread, thread CPU time in turn with numpy: 1.46 -> 1.03 ms, numpy 1.16 ms). */
BlockRV RFactorInRow(Schedule& sch, const BlockRV& block, const LoopRV& loop) {
  const BlockNode* b = AsPtr<BlockNode>(sch.Get(block));
  int axis = b && !b->writes.empty() ? static_cast<int>(b->writes[0]->region.size()) : 0;
  BlockRV rf = sch.RFactor(loop, axis);
  std::vector<LoopRV> final_loops = sch.GetLoops(block);
  std::vector<LoopRV> rf_loops = sch.GetLoops(rf);
  if (final_loops.size() < 2 || rf_loops.size() <= final_loops.size() - 2) return rf;
  const size_t last = final_loops.size() - 2;  // the combining block's last spatial loop
  size_t shared = 0;  // the loops both nests are in
  while (shared <= last && sch.Get(rf_loops[shared]).get() == sch.Get(final_loops[shared]).get()) {
    ++shared;
  }
  // Also when the two nests share the outer loops only (a reduction computed at its consumer's
  // row: adaptive_pool1d's window sums of 64 at the average's row of 64 outputs): the outputs
  // of the row that are not shared loops of more than one iteration would keep a buffer of
  // partial results per output of the row, written out to memory before any is combined
  // (adaptive_pool1d avg of 8 x 64 x 4096 float32 to 64, AVX-512, one thread: the buffers
  // of all rows, 6 MB, were allocated whole).
  int64_t unshared = 1;
  for (size_t k = shared; k <= last; ++k) unshared *= std::max<int64_t>(0, LoopExtent(sch, rf_loops[k]));
  if (shared == 0 || (shared <= last && unshared > 1)) {
    sch.ReverseComputeAt(block, rf_loops[last], false, -1);
  }
  return rf;
}

void CombineAccumulators(Schedule& sch, const BlockRV& block, int64_t acc, int64_t lanes);

/*! \brief A row reduction's inner loop as a few vectors of partial results (rfactor): each is
 *  an independent chain of vector operations, so the row streams at the speed of loads. An
 *  inner reduction loop shorter than a full set of accumulators is first fused with the
 *  reduction loops around it (argmax's search of its block maxima, over blocks x lanes). */
bool VectorizeReduction(Schedule& sch, const BlockRV& block, int64_t lanes, bool stream,
                        int64_t vector_bytes) {
  std::vector<LoopRV> loops = sch.GetLoops(block);
  if (loops.empty()) return false;
  int64_t extent = LoopExtent(sch, loops.back());
  // Also an inner loop that is no whole number of full sets of accumulators, when the fused
  // loops are: group_norm's float64 rows of 56 (AVX-512's 8 lanes x 4 accumulators are 32),
  // which took one accumulator per row of 56 instead of four over the group's 56 x 56 x 8.
  const int64_t full = kRowAccumulators * lanes;
  if (extent > 0 && (extent < full || extent % full != 0)) {
    const BlockNode* b = AsPtr<BlockNode>(sch.Get(block));
    size_t n = b ? b->iter_vars.size() : 0;
    size_t reduce = 0;  // trailing reduction iterators (their loops are the innermost)
    while (reduce < n && b->iter_vars[n - 1 - reduce]->iter_type == IterVarType::kCommReduce) {
      ++reduce;
    }
    if (reduce > 1 && loops.size() >= reduce) {
      std::vector<LoopRV> inner(loops.end() - static_cast<std::ptrdiff_t>(reduce), loops.end());
      int64_t fused = 1;  // only when the fused loop then vectorizes (not a 2 x 2 pooling window)
      for (const LoopRV& l : inner) fused *= std::max<int64_t>(0, LoopExtent(sch, l));
      // (or a fused window that ends in a partial vector, when the inner loop alone takes
      // no vector: a global pool's 7 x 7 image, three vectors of 16 and one element)
      const bool worth = extent < full ? fused >= 2 * lanes && (fused % lanes == 0 || extent < lanes)
                                       : fused % full == 0 && fused / full >= 2;
      if (worth && Try(sch, [&] { sch.Fuse(inner, true); })) {
        loops = sch.GetLoops(block);
        extent = LoopExtent(sch, loops.back());
      }
    }
  }
  if (extent < 2 * lanes) return false;
  // A row that is no whole number of vectors: one vector accumulator over its full vectors, the
  // last partial one (the split's predicate) masked (below), where the row was left a chain of
  // dependent scalar steps (a 7 x 7 global pool of (4, 1024, 7,
  // 7) float32, AVX-512, one thread: avg 0.055 ms -> 0.017, max 0.044 -> 0.015; TVM's
  // default, four channels a vector gathered lane by lane, 0.036 / 0.029).
  const bool tail = extent % lanes != 0;
  const int64_t acc = tail ? 1 : Accumulators(extent, 1, lanes, kRowAccumulators, 2);
  bool vectorized = false;
  Try(sch, [&] {
    auto parts =
        sch.Split(loops.back(), {TraceValue::None(), TraceValue::Int(acc * lanes)}, true, false);
    BlockRV rf = RFactorInRow(sch, block, parts[1]);
    std::vector<LoopRV> rf_loops = sch.GetLoops(rf);
    LoopRV lane = rf_loops.back();
    if (stream) PrefetchAhead(sch, rf_loops[rf_loops.size() - 2], acc * vector_bytes);
    if (acc > 1) {
      auto vs = sch.Split(lane, {TraceValue::Int(acc), TraceValue::Int(lanes)}, true, false);
      sch.Unroll(vs[0]);
      lane = vs[1];
    }
    sch.Vectorize(lane);
    // The row's last, partial vector: its lanes masked (tir.VectorizeLoop), not a scalar loop
    // that updates the vector of partial results lane by lane (CodeGenHost then reads and
    // writes that vector whole).
    if (tail) sch.Annotate(lane, "tessera.mask_tail", TraceValue::Int(1));
    // The init loops copy the kinds of the loops they come from: vectorized too.
    DeferDecomposeReduction(rf, rf_loops[rf_loops.size() - 2]);
    vectorized = true;
  });
  if (!vectorized) return false;
  if (acc >= 2) CombineAccumulators(sch, block, acc, lanes);
  // A short row (fewer vector steps than half the lanes: adaptive_pool1d's float16 windows of
  // 64, two steps of 32 lanes): the chain of lanes - 1 scalar steps that combines the lanes
  // outweighs the row's vector work, so the vector is first folded in halves (vector steps of
  // half-width vectors), down to 16-byte vectors of at least 4 lanes (a chain of 3 for
  // float32, 7 for float16, 15 for int8: narrower int8 folds measured slower, adaptive_pool max
  // 7x7 int8, AVX-512, one thread: 0.43 ms folded to 16 lanes, 0.47 folded to 4).
  // Max and min are left to the code generator, which prints their last lanes as a tree
  // (tessera_reduce_max_*): the fold is for sums, products and logic, whose chain it keeps.
  const int64_t steps = (extent + acc * lanes - 1) / (acc * lanes);
  if (steps * 2 >= lanes) return true;
  {
    const BlockNode* b = AsPtr<BlockNode>(sch.Get(block));
    auto* st = b ? AsPtr<BufferStoreNode>(b->body) : nullptr;
    if (!st || AsPtr<MaxNode>(st->value) || AsPtr<MinNode>(st->value)) return true;
  }
  const int64_t lane_bits = vector_bytes * 8 / lanes;
  for (int64_t width = lanes; width > 4 && width % 2 == 0 && width / 2 * lane_bits >= 128;
       width /= 2) {
    std::vector<LoopRV> loops = sch.GetLoops(block);
    if (loops.empty() || LoopExtent(sch, loops.back()) != width) return true;
    const bool folded = Try(sch, [&] {
      auto parts = sch.Split(loops.back(), {TraceValue::Int(2), TraceValue::Int(width / 2)}, true,
                             false);
      BlockRV rf = RFactorInRow(sch, block, parts[1]);
      std::vector<LoopRV> rf_loops = sch.GetLoops(rf);
      if (rf_loops.size() < 2) throw Error("no vector loop of partial results");
      sch.Vectorize(rf_loops.back());
      sch.Unroll(rf_loops[rf_loops.size() - 2]);
      DeferDecomposeReduction(rf, rf_loops[rf_loops.size() - 2]);
    });
    if (!folded) return true;
  }
  return true;
}

/*! \brief The acc x lanes partial results of a row combined into one vector (see
 *  VectorizeReduction). */
void CombineAccumulators(Schedule& sch, const BlockRV& block, int64_t acc, int64_t lanes) {
  // The row's acc x lanes partial results are combined as a tree: first the acc vectors into
  // one, lane by lane (vector operations, a second rfactor), then that vector's lanes, a chain
  // of lanes - 1 scalar steps instead of acc * lanes - 1. The chain was as long as the row's
  // vector work on rows of 2048 (argmax of 2048 x 2048 float32 on AVX-512, one thread: two
  // chains of 63 per row).
  Try(sch, [&] {
    std::vector<LoopRV> loops = sch.GetLoops(block);
    auto parts =
        sch.Split(loops.back(), {TraceValue::Int(acc), TraceValue::Int(lanes)}, true, false);
    BlockRV rf = RFactorInRow(sch, block, parts[1]);
    std::vector<LoopRV> rf_loops = sch.GetLoops(rf);
    if (rf_loops.size() < 2) throw Error("no vector loop of partial results");
    sch.Vectorize(rf_loops.back());
    sch.Unroll(rf_loops[rf_loops.size() - 2]);
    DeferDecomposeReduction(rf, rf_loops[rf_loops.size() - 2]);
  });
}

/*! \brief A reduction left scalar (a window too short or too strided for vectors: a 3 x 3
 *  pool of stride 3 over NCHW, a global pool's 7 x 7 image): its init goes before its
 *  reduction loops (so that the C compiler keeps the accumulator in a register instead of a
 *  load and a store of the result at every step, behind a test of the first step) and its
 *  innermost reduction loop, when short, is unrolled (a 3 x 3 max pool of (1, 256, 31, 31)
 *  float32, one thread: 0.241 ms -> 0.073, numpy's strided slices 0.17; a 7 x 7 global max
 *  pool of (4, 1024, 7, 7): 0.345 -> 0.060, numpy 0.17). */
std::optional<int64_t> Stride(const Expr& index, const Var& v);
int64_t ColumnLanes(int64_t extent, int64_t lanes, int lane_bits);

void SerialWindow(Schedule& sch, const BlockRV& block, const LoopRV& row,
                  const std::vector<const BufferLoadNode*>& loads, int64_t lanes_hint,
                  int lane_bits) {
  const BlockNode* b = AsPtr<BlockNode>(sch.Get(block));
  if (b == nullptr || b->init == nullptr) return;
  const size_t n = b->iter_vars.size();
  size_t reduce = 0;  // trailing reduction iterators (their loops are the innermost)
  while (reduce < n && b->iter_vars[n - 1 - reduce]->iter_type == IterVarType::kCommReduce) {
    ++reduce;
  }
  std::vector<LoopRV> loops = sch.GetLoops(block);
  if (reduce == 0 || loops.size() < reduce) return;
  LoopRV first = loops[loops.size() - reduce];
  const int64_t inner = LoopExtent(sch, loops.back());
  // A column of results inside the row (KeepWindowColumn: an NCHW pool's output columns) that
  // takes vectors: the window's loops go outside it, each step a vector of the row's results.
  // A column left scalar (a stride-3 window) stays outside the window, which is unrolled whole
  // when short, its result in a local (below): a chain of independent unrolled windows, the
  // input addresses constant offsets of one pointer per result (3 x 3 avg pool of stride 3 over
  // (1, 256, 31, 31) float32, one thread: window outside the column 0.076 ms, inside 0.047).
  if (loops.size() > reduce &&
      sch.Get(loops[loops.size() - reduce - 1]).get() != sch.Get(row).get()) {
    const LoopRV column = loops[loops.size() - reduce - 1];
    const int64_t extent = LoopExtent(sch, column);
    const IterVar& iv = b->iter_vars[n - reduce - 1];
    // Vectors along the column where every load steps 1 or 2 elements along it (a 2 x 2 pool
    // of stride 2: an even and an odd half of two loads, CodeGenHost; (1, 256, 32, 32)
    // float32, one thread: max 0.094 ms -> 0.023, avg 0.174 -> 0.056); a wider stride would
    // gather lane by lane.
    int64_t lanes = 0;
    if (lanes_hint > 1) {
      lanes = ColumnLanes(extent, lanes_hint, lane_bits);
      for (const BufferLoadNode* load : loads) {
        for (size_t q = 0; q < load->indices.size() && lanes > 0; ++q) {
          std::optional<int64_t> step = Stride(load->indices[q], iv->var);
          const bool last = q + 1 == load->indices.size();
          if (!step || (last ? (*step != 1 && *step != 2) : *step != 0)) lanes = 0;
        }
      }
    }
    if (lanes > 0 && extent >= 4 && iv->iter_type == IterVarType::kDataPar &&
        Try(sch, [&] {
          std::vector<LoopRV> order(loops.end() - static_cast<std::ptrdiff_t>(reduce), loops.end());
          order.push_back(column);
          sch.Reorder(order);
          if (lanes > 0) {
            LoopRV v = column;
            if (extent > lanes) {
              v = sch.Split(column, {TraceValue::None(), TraceValue::Int(lanes)}, true, false)[1];
            }
            sch.Vectorize(v);
          }
          DeferDecomposeReduction(block, first);
        })) {
      return;
    }
    // A scalar column whose results one spatial consumer reads in a loop of the row as long
    // (an average pool's division): the window goes into the consumer's loop, each result
    // divided as soon as it is summed, instead of a row of sums in a buffer read back by a loop
    // of its own (3 x 3 avg pool of stride 3 over (1, 256, 31, 31) float32, one thread: 0.048
    // ms -> 0.039, TVM's default 0.032).
    std::vector<BlockRV> consumers = sch.GetConsumers(block);
    if (consumers.size() == 1 && iv->iter_type == IterVarType::kDataPar) {
      std::vector<LoopRV> cl = sch.GetLoops(consumers[0]);
      size_t k = 0;
      while (k < cl.size() && sch.Get(cl[k]).get() != sch.Get(row).get()) ++k;
      const BlockNode* c = AsPtr<BlockNode>(sch.Get(consumers[0]));
      const bool spatial =
          c != nullptr && c->init == nullptr &&
          std::all_of(c->iter_vars.begin(), c->iter_vars.end(),
                      [](const IterVar& v) { return v->iter_type == IterVarType::kDataPar; });
      if (spatial && k + 2 == cl.size() && LoopExtent(sch, cl[k + 1]) == extent &&
          Try(sch, [&] { sch.ComputeAt(block, cl[k + 1], true, -1); })) {
        loops = sch.GetLoops(block);
        first = loops[loops.size() - reduce];
      }
    }
  }
  Try(sch, [&] {
    if (inner > 1 && inner <= kWindowUnroll) {
      // and the loops around it while the unrolled window stays within kWindowUnrollPoints
      int64_t points = inner;
      for (size_t k = loops.size() - 1; k-- > loops.size() - reduce;) {
        const int64_t e = LoopExtent(sch, loops[k]);
        if (e < 1 || points * e > kWindowUnrollPoints) break;
        points *= e;
        sch.Unroll(loops[k]);
      }
      sch.Unroll(loops.back());
    }
    DeferDecomposeReduction(block, first);
  });
  // The result accumulated in a local of its own, written out once per result: the outlined
  // OpenMP body loses the buffers' restrict, and the C compiler kept a store of the output at
  // every window step (3 x 3 max pool of stride 3 over (1, 256, 31, 31) float32, one thread:
  // 0.073 ms -> 0.038, TVM's default 0.036; 7 x 7 global max pool of (4, 1024, 7, 7): 0.060 ->
  // 0.044). Only for a pool's window: a short one (at most kWindowMax points) over one input
  // (a depthwise convolution's windows, which read weights too, and long rows keep theirs).
  int64_t window = 1;
  for (size_t k = loops.size() - reduce; k < loops.size(); ++k) {
    window *= std::max<int64_t>(0, LoopExtent(sch, loops[k]));
  }
  const bool one_input =
      !loads.empty() && std::all_of(loads.begin(), loads.end(), [&](const BufferLoadNode* l) {
        return l->buffer.get() == loads[0]->buffer.get();
      });
  if (loops.size() > reduce && window >= 1 && window <= kWindowMax && one_input) {
    const LoopRV at = loops[loops.size() - reduce - 1];
    Try(sch, [&] {
      BlockRV local = sch.CacheWrite(block, 0, "local", {});
      sch.ReverseComputeAt(local, at, true, -1);
    });
  }
}

/*! \brief The step of `index` when the iterator `v` grows by one, if a constant. */
std::optional<int64_t> Stride(const Expr& index, const Var& v) {
  arith::Analyzer ana;
  VarMap next;
  next[v.get()] = AddE(v, IntConst(v->dtype, 1));
  Expr diff = ana.Simplify(SubE(Substitute(index, next), index));
  if (const auto* c = AsPtr<IntImmNode>(diff)) return c->value;
  return std::nullopt;
}

/*! \brief A reduction in a row whose loads run along its last spatial iterator, not along its
 *  reduction (argmax's block maxima: each lane's maximum over a block's vectors): the
 *  reduction loops go outside that iterator, which is vectorized, so each step is a vertical
 *  vector operation on contiguous memory and no lanes are combined. It reads the row once:
 *  with `stream` it prefetches as a one-pass stream does (PrefetchOnePass). False when the
 *  block is not one (or the schedule refused). */
/*! \brief The lanes of a column of `extent` elements: the native `lanes`, or else the widest
 *  power of two below them that divides the extent and still fills 16 bytes (an NCHW8c pool's
 *  8 float32 channels: one 32-byte vector, where 16 lanes would not divide them); 0 if none. */
int64_t ColumnLanes(int64_t extent, int64_t lanes, int lane_bits) {
  for (int64_t l = lanes; l >= 2 && l * lane_bits >= 128; l /= 2) {
    if (extent >= l && extent % l == 0) return l;
  }
  return 0;
}

/*! \brief The last spatial iterator of a reduction block whose loads run along it (unit stride
 *  in their last index) and not along its trailing reduction iterators (a constant stride other
 *  than +-1, or none): a pool's window over H and W of NCHW8c, a column of a sum over rows.
 *  Its index in the block's iterators, or -1. */
int ColumnIterator(const BlockInfo& info) {
  const BlockNode* b = info.block;
  if (b == nullptr || !info.is_reduction || info.loads.empty()) return -1;
  const size_t n = b->iter_vars.size();
  size_t p = n;  // the last spatial iterator, followed only by reduction iterators
  for (size_t k = n; k-- > 0;) {
    if (b->iter_vars[k]->iter_type == IterVarType::kDataPar) {
      p = k;
      break;
    }
  }
  if (p == n || p + 1 == n) return -1;
  const Var& v = b->iter_vars[p]->var;
  const Var& r = b->iter_vars[n - 1]->var;
  for (const BufferLoadNode* load : info.loads) {
    if (load->indices.empty()) return -1;
    const Expr& last = load->indices.back();
    if (Stride(last, v) != std::optional<int64_t>(1)) return -1;
    std::optional<int64_t> along_reduction = Stride(last, r);
    if (!along_reduction || *along_reduction == 1 || *along_reduction == -1) return -1;
  }
  return static_cast<int>(p);
}

bool VectorizeColumnInRow(Schedule& sch, const BlockRV& block, const BlockInfo& info,
                          const LoopRV& row, int64_t lanes, bool stream, const TargetFacts& facts) {
  const BlockNode* b = info.block;
  const int column = ColumnIterator(info);
  if (column < 0) return false;
  const size_t n = b->iter_vars.size(), p = static_cast<size_t>(column);
  const int64_t extent = info.extents[p];
  lanes = ColumnLanes(extent, lanes, LaneBits(info));
  if (lanes == 0) return false;
  // The loops of the column and the reductions are the innermost (the loops before them may
  // be fused into the row: a lone pool's).
  std::vector<LoopRV> loops = sch.GetLoops(block);
  if (loops.size() < n - p) return false;
  const size_t col = loops.size() - (n - p);
  if (sch.Get(loops[col]).get() == sch.Get(row).get()) return false;
  if (LoopExtent(sch, loops[col]) != extent) return false;
  for (size_t k = p + 1; k < n; ++k) {
    if (LoopExtent(sch, loops[col + k - p]) != info.extents[k]) return false;
  }
  return Try(sch, [&] {
    std::vector<LoopRV> reduce(loops.begin() + static_cast<std::ptrdiff_t>(col + 1), loops.end());
    auto parts = sch.Split(loops[col], {TraceValue::None(), TraceValue::Int(lanes)}, true, false);
    std::vector<LoopRV> order = reduce;
    order.push_back(parts[0]);
    order.push_back(parts[1]);
    sch.Reorder(order);
    if (extent / lanes > 1) {
      sch.Unroll(parts[0]);
    } else if (reduce.size() > 1 && LoopExtent(sch, reduce.back()) <= kWindowUnroll) {
      sch.Unroll(reduce.back());  // a pool's window row: its vectors in one straight run
      // and the window's other loops while it stays within kWindowUnrollPoints (3 x 3 max
      // pool of stride 3, NCHW8c ceil_mode, (1, 16, 31, 31, 8) float32, one thread: 0.0126
      // ms -> 0.0107)
      int64_t points = LoopExtent(sch, reduce.back());
      for (size_t k = reduce.size() - 1; k-- > 0;) {
        const int64_t e = LoopExtent(sch, reduce[k]);
        if (e < 1 || points * e > kWindowUnrollPoints) break;
        points *= e;
        sch.Unroll(reduce[k]);
      }
    }
    sch.Vectorize(parts[1]);
    if (stream && PrefetchOnePass(facts)) {
      PrefetchAhead(sch, reduce.back(), extent * info.output_bits / 8);
    }
    DeferDecomposeReduction(block, reduce[0]);
  });
}

/*! \brief The innermost loop of a spatial block split into native vectors; where its extent
 *  is no multiple of the lanes, it is first fused with the next loops out inside `row`
 *  (instance_norm's 56 x 56 image of each channel: 3136 elements in vectors, where the image
 *  rows of 56 were left scalar). */
void VectorizeInner(Schedule& sch, const BlockRV& block, int64_t lanes, const LoopRV& row,
                    int lane_bits) {
  std::vector<LoopRV> loops = sch.GetLoops(block);
  if (loops.empty()) return;
  LoopRV inner = loops.back();
  int64_t extent = LoopExtent(sch, inner);
  if (extent > 0 && extent % lanes != 0) {
    const ObjectRef row_loop = sch.Get(row);
    size_t first = loops.size();  // the first loop inside the row
    for (size_t k = 0; k < loops.size(); ++k) {
      if (sch.Get(loops[k]).get() == row_loop.get()) first = k + 1;
    }
    // The fewest innermost loops whose points fill whole vectors (the outer ones keep their
    // loops: group_norm's channel stays a loop around its image).
    std::vector<LoopRV> inside;
    int64_t fused = 1;
    for (size_t k = loops.size(); k-- > first && (inside.empty() || fused % lanes != 0);) {
      const int64_t e = LoopExtent(sch, loops[k]);
      if (e <= 0) break;
      inside.insert(inside.begin(), loops[k]);
      fused *= e;
    }
    if (inside.size() > 1 && fused % lanes == 0 &&
        Try(sch, [&] { inner = sch.Fuse(inside, true); })) {
      extent = fused;
    }
  }
  // Else narrower vectors that divide the innermost loop, of at least 16 bytes (the padded
  // window of an NCHW8c pool with ceil_mode: 8 channels of float32, no multiple of 16 in the
  // loops of the row; (1, 16, 31, 31, 8) 3 x 3 max, one thread: 0.107 ms -> 0.033).
  if (extent > 0 && extent % lanes != 0) {
    const int64_t narrow = ColumnLanes(extent, lanes, lane_bits);
    if (narrow > 0) lanes = narrow;
  }
  if (extent < lanes || extent % lanes != 0) return;
  Try(sch, [&] {
    auto parts = sch.Split(inner, {TraceValue::None(), TraceValue::Int(lanes)}, true, false);
    sch.Vectorize(parts[1]);
  });
}

/*! \brief The threads of a CUDA block for a chain: enough for its longest inner loop, a
 *  power of two from a warp to 256. Every member uses the same count (a cross-thread
 *  reduction needs every launched thread). */
int64_t ChainThreads(Schedule& sch, const std::vector<BlockRV>& members, const TargetFacts& facts) {
  int64_t longest = 1;
  for (const BlockRV& m : members) {
    std::vector<LoopRV> loops = sch.GetLoops(m);
    int64_t e = loops.empty() ? 1 : LoopExtent(sch, loops.back());
    longest = std::max(longest, e < 0 ? 256 : e);
  }
  return std::clamp<int64_t>(NextPow2(longest), facts.warp_size,
                             std::min<int64_t>(256, facts.max_threads_per_block));
}

/*! \brief The innermost loop of a block across `threads` threads of a CUDA block. */
void BindInnerToThreads(Schedule& sch, const BlockRV& block, int64_t threads) {
  std::vector<LoopRV> loops = sch.GetLoops(block);
  if (loops.size() < 2) return;
  Try(sch, [&] {
    auto parts =
        sch.Split(loops.back(), {TraceValue::None(), TraceValue::Int(threads)}, true, false);
    sch.Bind(parts[1], "threadIdx.x");
  });
}

/*! \brief A reduction whose loads vary fastest along a spatial iterator (a sum over the rows
 *  of a matrix): on the CPU the reduction loops go outside that iterator, which is vectorized,
 *  so that each step reads contiguous memory; its outer part runs across the cores. */
constexpr int64_t kColumnRowUnroll = 4;

/*! \brief A reduction over the rows of a matrix (`C[j] = reduce_k A[k, j]`) whose row of
 *  partial results fits half the L1, on several cores: the rows are cut into one block a core
 *  (rfactor), each core reducing whole rows of its block into a row of its own (a local array:
 *  the C compiler keeps each vector of it in a register over the unrolled rows), and those
 *  rows are reduced at the end. Cutting the columns into one chunk a core instead made each
 *  core read half of every row, a jump of a row's other half after each: on one thread (or
 *  where the cores outrun the memory) the hardware prefetcher then restarts at every row
 *  (2048 x 2048, Zen 4, one thread: all over int64 rows 1.73 -> 1.43 ms, max of int32 0.287
 *  -> 0.268, sum of float32 0.28 -> 0.26). False (nothing changed) where it does not apply. */
bool ScheduleColumnReductionAcrossRows(Schedule& sch, const BlockInfo& info,
                                       const TargetFacts& facts, int64_t lanes, int64_t rows) {
  const BlockNode* b = info.block;
  const int64_t threads = facts.cores;
  if (b->iter_vars.size() != 2 || b->iter_vars[0]->iter_type != IterVarType::kDataPar ||
      b->iter_vars[1]->iter_type != IterVarType::kCommReduce || threads < 2) {
    return false;
  }
  const int64_t columns = info.extents[0], height = info.extents[1];
  const int64_t row_bytes = columns * std::max(1, info.output_bits / 8);
  if (columns % lanes != 0 || row_bytes > facts.l1_bytes / 2 || height % threads != 0 ||
      height / threads < 8 * kColumnRowUnroll) {
    return false;
  }
  if (rows > 1 && (height / threads) % rows != 0) rows = 1;
  return Try(sch, [&] {
    std::vector<LoopRV> loops = sch.GetLoops(info.rv);
    if (loops.size() != 2) throw Error("a column reduction of other loops");
    auto cut = sch.Split(loops[1], {TraceValue::Int(threads), TraceValue::None()}, true, false);
    BlockRV rf = sch.RFactor(cut[0], 0);
    // the partial results: loops (column, core, row of the core's block)
    std::vector<LoopRV> rl = sch.GetLoops(rf);
    if (rl.size() != 3) throw Error("no loops of partial results");
    auto col = sch.Split(rl[0], {TraceValue::None(), TraceValue::Int(lanes)}, true, false);
    std::vector<LoopRV> order{rl[1]};
    LoopRV unrolled, steps = rl[2];
    if (rows > 1) {
      auto rs = sch.Split(rl[2], {TraceValue::None(), TraceValue::Int(rows)}, true, false);
      steps = rs[0];
      unrolled = rs[1];
    }
    order.push_back(steps);
    order.push_back(col[0]);
    if (unrolled) order.push_back(unrolled);
    order.push_back(col[1]);
    sch.Reorder(order);
    sch.Vectorize(col[1]);
    if (unrolled) sch.Unroll(unrolled);
    sch.Parallel(rl[1]);
    BlockRV local = sch.CacheWrite(rf, 0, "local", {});
    sch.ReverseComputeAt(local, rl[1], false, -1);
    DeferDecomposeReduction(rf, steps);
    // the cores' rows reduced: each vector of results over the cores
    std::vector<LoopRV> fl = sch.GetLoops(info.rv);
    if (fl.size() != 2) throw Error("no loops of the final reduction");
    auto fc = sch.Split(fl[0], {TraceValue::None(), TraceValue::Int(lanes)}, true, false);
    sch.Reorder({fc[0], fl[1], fc[1]});
    sch.Vectorize(fc[1]);
    DeferDecomposeReduction(info.rv, fl[1]);
  });
}

bool ScheduleColumnReduction(Schedule& sch, const BlockInfo& info, const TargetFacts& facts) {
  const BlockNode* b = info.block;
  if (facts.IsGpu() || !info.is_reduction || info.loads.empty()) return false;
  const BufferLoadNode* load = info.loads[0];
  auto* last = load->indices.empty() ? nullptr : AsPtr<VarNode>(load->indices.back());
  int inner = -1;
  for (size_t k = 0; k < b->iter_vars.size(); ++k) {
    if (last && b->iter_vars[k]->var.get() == last) inner = static_cast<int>(k);
  }
  if (inner < 0 || b->iter_vars[inner]->iter_type != IterVarType::kDataPar) return false;
  std::vector<LoopRV> loops = sch.GetLoops(info.rv);
  if (loops.size() != b->iter_vars.size()) return false;
  // A bool result over wider values (topi.all / topi.any over the rows of int64) takes the
  // lanes of the widest value it loads, as rows do (LaneBits): a byte's 64 lanes made the C
  // vectorizer split each 64-column step into eight 8-lane loops, one per unrolled row.
  int64_t lanes = facts.VectorLanes(LaneBits(info));
  int64_t extent = info.extents[inner];
  if (lanes < 2 || extent < lanes || extent % lanes != 0) return false;
  // A chunk of columns per outer iteration: its partial sums stay in L1 while the reduction
  // streams through rows; at least one chunk per core.
  int64_t total = 1;
  for (int64_t e : info.extents) total *= std::max<int64_t>(1, e);
  bool parallel = facts.cores > 1 && total >= kParallelMinElements;
  int64_t vectors = extent / lanes;
  int64_t cap = std::max<int64_t>(1, facts.l1_bytes / 2 / (lanes * info.output_bits / 8));
  if (parallel) cap = std::min<int64_t>(cap, std::max<int64_t>(1, vectors / facts.cores));
  int64_t chunk = LargestDivisor(vectors, cap);
  // The innermost reduction loop split, its inner part (a few rows) unrolled inside the
  // chunk: each vector of partial sums is loaded and stored once per few rows, not per row.
  int64_t rows = 1;
  for (size_t k = b->iter_vars.size(); k-- > 0;) {
    if (b->iter_vars[k]->iter_type != IterVarType::kCommReduce) continue;
    std::vector<int64_t> factors{1};
    for (int64_t f : {kColumnRowUnroll, 2 * kColumnRowUnroll}) {
      if (info.extents[k] > f && info.extents[k] % f == 0) factors.push_back(f);
    }
    rows = Choose(sch, factors, factors.size() > 1 ? 1 : 0);
    break;
  }
  if (parallel && ScheduleColumnReductionAcrossRows(sch, info, facts, lanes, rows)) return true;
  return Try(sch, [&] {
    auto parts = sch.Split(loops[inner],
                           {TraceValue::None(), TraceValue::Int(chunk), TraceValue::Int(lanes)},
                           true, false);
    std::vector<LoopRV> spatial, reduce;
    for (size_t k = 0; k < loops.size(); ++k) {
      if (static_cast<int>(k) == inner) {
        spatial.push_back(parts[0]);
      } else if (b->iter_vars[k]->iter_type == IterVarType::kDataPar) {
        spatial.push_back(loops[k]);
      } else {
        reduce.push_back(loops[k]);
      }
    }
    LoopRV unrolled;
    if (rows > 1 && !reduce.empty()) {
      auto rs = sch.Split(reduce.back(), {TraceValue::None(), TraceValue::Int(rows)}, true, false);
      reduce.back() = rs[0];
      unrolled = rs[1];
    }
    std::vector<LoopRV> order = spatial;
    order.insert(order.end(), reduce.begin(), reduce.end());
    order.push_back(parts[1]);
    if (unrolled) order.push_back(unrolled);
    order.push_back(parts[2]);
    sch.Reorder(order);
    sch.Vectorize(parts[2]);
    if (unrolled) sch.Unroll(unrolled);
    if (parallel) {
      LoopRV outer = spatial.size() > 1 ? sch.Fuse(spatial, true) : spatial[0];
      sch.Parallel(outer);
    }
    DeferDecomposeReduction(info.rv, reduce[0]);
  });
}

/*! \brief Whether every load of a reduction block varies along the reduction only in its
 *  leading indices: its last index uses no reduction iterator (argmax over axis 0's index
 *  search, A[k, j] and the column maxima M[0, j]; not argmax by blocks' search of one block,
 *  A[i, B[i] * 256 + j], whose first load B[i] alone looks like a column). */
bool ReadsAlongColumns(const BlockInfo& info) {
  const BlockNode* b = info.block;
  if (b == nullptr || info.loads.empty()) return false;
  for (const BufferLoadNode* load : info.loads) {
    if (load->indices.empty()) return false;
    bool along_reduction = UsesVar(load->indices.back(), [&](const VarNode* v) {
      for (const IterVar& iv : b->iter_vars) {
        if (iv->var.get() == v) return iv->iter_type != IterVarType::kDataPar;
      }
      return false;
    });
    if (along_reduction) return false;
  }
  return true;
}

/*! \brief A reduction to one value (every spatial iterator of extent 1: a sum or a minimum of
 *  a whole tensor): its reduction loops fused and cut into T threads x the rest x W partial
 *  results (W = a few native vectors), rfactor'ed on T x W, so that each thread keeps W
 *  independent vector accumulators; the W x T partial results are reduced at the end. */
bool ScheduleTotalReduction(Schedule& sch, const BlockInfo& info, const TargetFacts& facts) {
  const BlockNode* b = info.block;
  if (facts.IsGpu() || !info.is_reduction || b == nullptr) return false;
  std::vector<LoopRV> loops = sch.GetLoops(info.rv);
  if (loops.size() != b->iter_vars.size()) return false;
  int64_t total = 1;
  size_t first_reduce = loops.size();
  for (size_t k = 0; k < loops.size(); ++k) {
    bool reduce = b->iter_vars[k]->iter_type == IterVarType::kCommReduce;
    if (!reduce && (info.extents[k] != 1 || first_reduce < loops.size())) return false;
    if (!reduce) continue;
    if (info.extents[k] <= 0) return false;
    if (first_reduce == loops.size()) first_reduce = k;
    total *= info.extents[k];
  }
  if (first_reduce == loops.size()) return false;
  // A bool total (topi.any of every element) keeps a byte's lanes (LaneBits is for rows): its
  // 4 x 64 accumulators a thread are 16 independent chains of 16 float comparisons, where 16
  // lanes give 4 (2048 x 2048 float32, one thread: 0.29 ms against 0.36).
  const int64_t lanes = facts.VectorLanes(info.output_bits);
  if (lanes < 2) return false;
  int64_t threads = facts.cores > 1 && total >= kParallelMinElements * 4 ? facts.cores : 1;
  int64_t acc = Accumulators(total, threads, lanes, kTotalAccumulators, 4);
  if (acc == 0 && threads > 1) {
    threads = 1;
    acc = Accumulators(total, 1, lanes, kTotalAccumulators, 4);
  }
  if (acc == 0) return false;
  const int64_t width = acc * lanes;
  return Try(sch, [&] {
    std::vector<LoopRV> reduce(loops.begin() + first_reduce, loops.end());
    LoopRV r = reduce.size() > 1 ? sch.Fuse(reduce, true) : reduce[0];
    LoopRV partial, rest;
    if (threads > 1) {
      auto parts = sch.Split(
          r, {TraceValue::Int(threads), TraceValue::None(), TraceValue::Int(width)}, true, false);
      sch.Reorder({parts[0], parts[2], parts[1]});
      partial = sch.Fuse({parts[0], parts[2]}, true);
    } else {
      auto parts = sch.Split(r, {TraceValue::None(), TraceValue::Int(width)}, true, false);
      sch.Reorder({parts[1], parts[0]});
      partial = parts[1];
    }
    BlockRV rf = sch.RFactor(partial, 0);
    std::vector<LoopRV> rf_loops = sch.GetLoops(rf);
    LoopRV rf_partial = rf_loops[rf_loops.size() - 2], rf_rest = rf_loops.back();
    std::vector<LoopRV> split;
    if (threads > 1) {
      split = sch.Split(rf_partial,
                        {TraceValue::Int(threads), TraceValue::Int(acc), TraceValue::Int(lanes)},
                        true, false);
      sch.Reorder({split[0], rf_rest, split[1], split[2]});
      sch.Parallel(split[0]);
      // Each thread's accumulators in a local array of its own, copied into the partial
      // results once at the end: in the shared buffer the C compiler would load and store them
      // at every step (the store-to-load latency in each chain of minimums or sums).
      BlockRV copy = sch.CacheWrite(rf, 0, "local", {});
      sch.ReverseComputeAt(copy, split[0], false, -1);
    } else {
      split = sch.Split(rf_partial, {TraceValue::Int(acc), TraceValue::Int(lanes)}, true, false);
      sch.Reorder({rf_rest, split[0], split[1]});
    }
    sch.Unroll(split[split.size() - 2]);
    sch.Vectorize(split.back());
    if (total * info.output_bits / 8 > facts.l2_bytes && PrefetchOnePass(facts)) {
      PrefetchAhead(sch, rf_rest, acc * facts.vector_bits / 8);
    }
    DeferDecomposeReduction(rf, rf_rest);
  });
}

/*! \brief On CUDA, the buffer a producer computed at a row writes goes to shared memory:
 *  the row's threads write it and then read each other's elements, so the barriers of
 *  tir.ThreadSync("shared") must order them (in global memory nothing would, and the thread
 *  blocks of neighbouring rows would write the same elements). Returns its bytes; throws (the
 *  caller's Try rolls the producer back, leaving it a kernel of its own) when the row's
 *  producers would not fit a quarter of a block's shared memory beside `used` bytes. */
int64_t RowInShared(Schedule& sch, const BlockRV& producer, const LoopRV& row,
                    const TargetFacts& facts, int64_t used) {
  std::vector<LoopRV> loops = sch.GetLoops(producer);
  const StmtNode* row_stmt = AsPtr<ForNode>(sch.Get(row));
  int64_t elements = 1;
  bool below = false;
  for (const LoopRV& l : loops) {
    if (below) {
      int64_t e = LoopExtent(sch, l);
      if (e < 0) throw Error("a producer of a row has a loop of unknown extent");
      elements *= e;
    }
    below = below || AsPtr<ForNode>(sch.Get(l)) == row_stmt;
  }
  const BlockNode* b = AsPtr<BlockNode>(sch.Get(producer));
  if (b == nullptr || b->writes.size() != 1) throw Error("a producer of a row writes no buffer");
  const int64_t bytes = elements * std::max(1, b->writes[0]->buffer->dtype.bytes());
  if (used + bytes > facts.shared_memory_bytes / 4) {
    throw Error("the producers of a row do not fit in shared memory");
  }
  sch.SetScope(producer, 0, "shared");
  return bytes;
}

/*! \brief The row of a chain at the iterators that index its reductions' results. */
struct StatisticsRow {
  int last = -1;        ///< the anchor's innermost iterator that indexes a result (-1: none)
  int64_t divisor = 1;  ///< it indexes the results divided by this (group_norm's c // 4)
};

/*!
 * \brief Which of the anchor's iterators index the results of the chain's reductions, read
 *  from the anchor's loads of `reduced`: group_norm's output x[n, c, h, w] reads its group's
 *  statistics at [n, c // (channels of a group)], instance_norm's at [n, c]. The row is then
 *  (n, c // group) or (n, c), and the statistics are computed once per row; a row taken at the
 *  anchor's outer loops (n, c, h) would compute them again for every h.
 */
StatisticsRow RowOfStatistics(const BlockInfo& anchor, const std::set<const BufferNode*>& reduced) {
  StatisticsRow out;
  const BlockNode* b = anchor.block;
  bool agree = true;
  for (const BufferLoadNode* load : anchor.loads) {
    if (!reduced.count(load->buffer.get())) continue;
    for (const Expr& index : load->indices) {
      for (size_t k = 0; k < b->iter_vars.size(); ++k) {
        const VarNode* v = b->iter_vars[k]->var.get();
        if (!UsesVar(index, v)) continue;
        int64_t divisor = 0;  // 0: neither the iterator nor the iterator divided by a constant
        if (index.get() == v) divisor = 1;
        if (const auto* d = AsPtr<FloorDivNode>(index)) {
          const auto* c = AsPtr<IntImmNode>(d->b);
          if (d->a.get() == v && c && c->value > 0) divisor = c->value;
        }
        if (static_cast<int>(k) > out.last) {
          out.last = static_cast<int>(k);
          out.divisor = divisor;
          agree = true;
        } else if (static_cast<int>(k) == out.last && divisor != out.divisor) {
          agree = false;
        }
      }
    }
  }
  if (!agree || out.divisor == 0) out.divisor = 1;
  return out;
}

/*! \brief The anchor's innermost iterator that a load broadcast along its innermost iterator
 *  reads (group_norm's gamma[c] and statistics of x[n, c, h, w]: c); -1 when none. */
int LastBroadcastIterator(const BlockInfo& anchor) {
  const BlockNode* b = anchor.block;
  const size_t n = b->iter_vars.size();
  if (n == 0) return -1;
  const VarNode* innermost = b->iter_vars[n - 1]->var.get();
  int last = -1;
  for (const BufferLoadNode* load : anchor.loads) {
    bool inner = false;
    for (const Expr& index : load->indices) inner = inner || UsesVar(index, innermost);
    if (inner) continue;
    for (size_t k = 0; k < n; ++k) {
      for (const Expr& index : load->indices) {
        if (UsesVar(index, b->iter_vars[k]->var.get())) last = std::max(last, static_cast<int>(k));
      }
    }
  }
  return last;
}

/*! \brief The anchor's loops inside the row that follow its last broadcast iterator
 *  (LastBroadcastIterator) fused into one, which then vectorizes: group_norm's (h, w) of 56 x 56,
 *  whose 56 alone is not a whole number of 16-lane vectors; the loops of the broadcast
 *  iterators stay outside, their loads hoisted out of the vector loop. */
void FuseInnerRun(Schedule& sch, const BlockInfo& anchor, const LoopRV& row) {
  const int n = static_cast<int>(anchor.block->iter_vars.size());
  const size_t run =
      static_cast<size_t>(n - 1 - LastBroadcastIterator(anchor));  // iterators after it
  std::vector<LoopRV> loops = sch.GetLoops(anchor.rv);
  if (run < 2 || loops.size() < run + 1) return;
  std::vector<LoopRV> inner(loops.end() - static_cast<std::ptrdiff_t>(run), loops.end());
  for (const LoopRV& l : inner) {
    if (sch.Get(l).get() == sch.Get(row).get()) return;
  }
  Try(sch, [&] { sch.Fuse(inner, true); });
}

/*! \brief The innermost spatial loop of a reduction anchor over a small window (a pool: at
 *  most kWindowMax points) taken out of `outer` (the loops that make its row), so that it runs
 *  inside the row: as vectors when the loads run along it (ColumnIterator: NCHW8c's channels
 *  of a block; VectorizeColumnInRow), else as a loop of its own around the window (the output
 *  columns of an NCHW pool, whose input index then needs no division by the fused rows) when
 *  enough rows remain for the cores. Leaves `outer` as it is otherwise. */
void KeepWindowColumn(Schedule& sch, const BlockInfo& anchor, const TargetFacts& facts,
                      std::vector<LoopRV>* outer) {
  const BlockNode* b = anchor.block;
  if (!anchor.is_reduction || b == nullptr || outer->size() < 2) return;
  const size_t n = b->iter_vars.size();
  if (sch.GetLoops(anchor.rv).size() != n || outer->size() >= n) return;
  int64_t window = 1;
  for (size_t k = outer->size(); k < n; ++k) {
    if (b->iter_vars[k]->iter_type != IterVarType::kCommReduce || anchor.extents[k] < 1) return;
    window *= anchor.extents[k];
  }
  const int column = ColumnIterator(anchor);
  const size_t last = outer->size() - 1;
  if (column == static_cast<int>(last) &&
      ColumnLanes(anchor.extents[last], facts.VectorLanes(LaneBits(anchor)), LaneBits(anchor)) >
          0) {
    outer->pop_back();
    return;
  }
  if (window > kWindowMax) return;
  // the last spatial loop of more than one step, and the unit loops after it
  size_t keep = outer->size();
  while (keep > 0 && anchor.extents[keep - 1] == 1) --keep;
  if (keep < 2 || anchor.extents[keep - 1] < 4) return;
  int64_t rows = 1;
  for (size_t k = 0; k + 1 < keep; ++k) rows *= anchor.extents[k];
  if (rows < 4 * std::max(1, facts.cores)) return;
  outer->resize(keep - 1);
}

}  // namespace

bool ScheduleRowChain(Schedule& sch, const BlockInfo& anchor, const PrimFunc& func,
                      const TargetFacts& facts, std::vector<std::string>* taken) {
  if (anchor.block == nullptr || anchor.store == nullptr) return false;
  // A spatial block that reads no other block's output has no row to take: decided without
  // looking at the root's blocks (linear work per block would be quadratic in the program).
  if (!anchor.is_reduction && sch.GetProducers(anchor.rv).empty()) return false;
  BlockRV root = sch.GetBlock("root", std::nullopt);
  std::vector<BlockRV> root_blocks = sch.GetChildBlocks(root);
  std::vector<BlockRV> producers = RowProducers(sch, anchor.rv, func, root_blocks);
  bool has_reduction = anchor.is_reduction;
  // On CUDA each reduction of the row becomes a cross-thread reduction, which knows the
  // updates `B = B + x` (or *, min, max): another one (any/all's `B = B || x`, adaptive
  // pooling's update under a select) is left to the rule of a lone reduction (a thread per
  // result, the reduction serial in it).
  bool cross_thread_ok = !anchor.is_reduction || !anchor.store || MatchReducer(anchor.store);
  for (const BlockRV& p : producers) {
    BlockInfo info = AnalyzeBlock(sch, p, func);
    has_reduction |= info.is_reduction;
    cross_thread_ok &= !info.is_reduction || !info.store || MatchReducer(info.store).has_value();
  }
  if (!has_reduction) return false;
  if (facts.IsGpu() && !cross_thread_ok) return false;
  if (producers.empty() && ScheduleTotalReduction(sch, anchor, facts)) {
    taken->push_back(anchor.name);
    return true;
  }
  // A column reduction is one on its own even when it reads other blocks (argmax over the
  // rows: the index search reads the column maxima): a chain's row would be a column, each
  // step of its loops a row apart in memory (argmax of 2048 x 2048 float32 over axis 0: 46 ms,
  // numpy 24). Its producers are left to their own rules (a column maximum is a column
  // reduction too).
  if ((producers.empty() || ReadsAlongColumns(anchor)) &&
      ScheduleColumnReduction(sch, anchor, facts)) {
    taken->push_back(anchor.name);
    return true;
  }
  std::vector<LoopRV> outer = SpatialPrefix(sch, anchor);
  if (!anchor.is_reduction && !outer.empty()) outer.pop_back();  // the row itself stays inside
  if (!facts.IsGpu()) KeepWindowColumn(sch, anchor, facts, &outer);
  if (outer.empty()) return false;
  // A spatial anchor whose reductions' results are indexed by fewer of its iterators than its
  // outer loops: the row ends at the last of them (split by its divisor), the loops after it
  // stay inside the row.
  bool nested = false;  // the row is the last of `outer`, the loops before it stay around it
  if (!anchor.is_reduction && anchor.block->iter_vars.size() == sch.GetLoops(anchor.rv).size()) {
    std::set<const BufferNode*> reduced;
    for (const BlockRV& p : producers) {
      BlockInfo info = AnalyzeBlock(sch, p, func);
      if (!info.is_reduction) continue;
      for (const auto& w : info.block->writes) reduced.insert(w->buffer.get());
    }
    StatisticsRow stats = RowOfStatistics(anchor, reduced);
    const size_t keep = static_cast<size_t>(stats.last + 1);
    if (stats.last >= 0 && (keep < outer.size() || (keep == outer.size() && stats.divisor > 1))) {
      std::vector<LoopRV> loops = sch.GetLoops(anchor.rv);
      std::vector<LoopRV> head(loops.begin(), loops.begin() + stats.last);
      const int64_t extent = anchor.extents[stats.last];
      if (stats.divisor > 1 && extent > stats.divisor && extent % stats.divisor == 0 &&
          Try(sch, [&] {
            auto parts =
                sch.Split(loops[stats.last], {TraceValue::None(), TraceValue::Int(stats.divisor)},
                          true, false);
            head.push_back(parts[0]);
          })) {
        outer = head;
      } else {
        head.push_back(loops[stats.last]);
        outer = head;
      }
      nested = !facts.IsGpu();
    }
  }
  int64_t rows = 1, row_size = 1;
  for (const LoopRV& l : outer) rows *= std::max<int64_t>(1, LoopExtent(sch, l));
  // No more rows than a reduction of the chain has results: a row computes the results it
  // reads, so more rows would compute each one again (group_norm, whose statistics are per
  // group of channels, recomputed them for every output row: 8 x 64 x 56 x 56 float32 ran 20
  // times slower than numpy; one row per batch element computes each group once).
  int64_t fewest = -1;
  for (const BlockRV& p : producers) {
    BlockInfo info = AnalyzeBlock(sch, p, func);
    if (!info.is_reduction) continue;
    int64_t points = 1;
    for (size_t k = 0; k < info.extents.size(); ++k) {
      if (info.block->iter_vars[k]->iter_type == IterVarType::kDataPar) {
        points *= std::max<int64_t>(1, info.extents[k]);
      }
    }
    fewest = fewest < 0 ? points : std::min(fewest, points);
  }
  while (fewest > 0 && rows > fewest && outer.size() > 1) {
    rows /= std::max<int64_t>(1, LoopExtent(sch, outer.back()));
    outer.pop_back();
  }
  for (int64_t e : anchor.extents) row_size *= std::max<int64_t>(1, e);
  row_size /= rows;

  // On the CPU a row of statistics is not fused with the loops around it: under a fused row the
  // statistics and the reductions' partial results kept one slot per row in buffers at the root
  // (their indices, divisions of the fused loop, do not compact to the row), and each
  // accumulator step stored to memory; under the innermost loop they shrink to the row.
  LoopRV row = nested ? outer.back() : outer[0];
  if (!nested && outer.size() > 1 && !Try(sch, [&] { row = sch.Fuse(outer, true); })) {
    return false;
  }
  const LoopRV parallel_loop = nested ? outer[0] : row;
  std::vector<BlockRV> members = {anchor.rv};
  bool calls = anchor.has_call;
  int64_t shared_bytes = 0;
  for (const BlockRV& p : producers) {
    BlockInfo pinfo = AnalyzeBlock(sch, p, func);
    if (facts.IsGpu() && pinfo.writes_param) break;
    if (!Try(sch, [&] {
          sch.ComputeAt(p, row, true, -1);
          if (facts.IsGpu()) shared_bytes += RowInShared(sch, p, row, facts, shared_bytes);
        })) {
      break;
    }
    members.push_back(p);
    calls |= pinfo.has_call;
  }
  for (const BlockRV& m : members) taken->push_back(AnalyzeBlock(sch, m, func).name);

  if (facts.IsGpu()) {
    Try(sch, [&] { sch.Bind(row, "blockIdx.x"); });
    int64_t threads = ChainThreads(sch, members, facts);
    for (const BlockRV& m : members) BindInnerToThreads(sch, m, threads);
    return true;
  }
  if (facts.cores > 1 && rows > 1 && rows * row_size >= kParallelMinElements) {
    Try(sch, [&] { sch.Parallel(parallel_loop); });
  }
  // Rows larger in all than the L2 cache stream from farther away (4-byte elements assumed).
  int reductions = 0;
  for (const BlockRV& m : members) reductions += AnalyzeBlock(sch, m, func).is_reduction ? 1 : 0;
  const bool stream =
      rows * row_size * 4 > facts.l2_bytes && (reductions > 1 || PrefetchOnePass(facts));
  // Vector exp by polynomial in the rows (as the hand schedule of bench/cpu_kernels.py).
  if (calls) Try(sch, [&] { sch.Annotate(row, "pragma_fast_math", TraceValue::Int(1)); });
  // The buffers the row's blocks write: computed in the row, not streamed from memory.
  std::set<const BufferNode*> in_row;
  for (const BlockRV& m : members) {
    const BlockNode* b = AsPtr<BlockNode>(sch.Get(m));
    if (b == nullptr) continue;
    for (const auto& w : b->writes) in_row.insert(w->buffer.get());
  }
  for (const BlockRV& m : members) {
    BlockInfo info = AnalyzeBlock(sch, m, func);
    int64_t lanes = facts.VectorLanes(LaneBits(info));
    if (lanes < 2) continue;
    if (info.is_reduction) {
      if (VectorizeColumnInRow(sch, m, info, row, lanes, stream, facts)) continue;
      bool streams = std::any_of(info.loads.begin(), info.loads.end(), [&](const auto* l) {
        return !in_row.count(l->buffer.get()) && !AddressIsLoaded(l);
      });
      if (!VectorizeReduction(sch, m, lanes, stream && streams, facts.vector_bits / 8)) {
        SerialWindow(sch, m, row, info.loads, lanes, LaneBits(info));
      }
    } else {
      if (&m == &members[0]) FuseInnerRun(sch, anchor, row);
      VectorizeInner(sch, m, lanes, row, LaneBits(info));
    }
  }
  return true;
}

void ScheduleLoneReduction(Schedule& sch, const BlockInfo& info, const TargetFacts& facts) {
  if (ScheduleTotalReduction(sch, info, facts)) return;
  std::vector<LoopRV> outer = SpatialPrefix(sch, info);
  if (facts.IsGpu()) {
    if (outer.empty()) {
      // A reduction to a scalar: one thread does it all (correct, if slow).
      Try(sch, [&] {
        LoopRV unit = sch.AddUnitLoop(info.rv);
        auto parts = sch.Split(unit, {TraceValue::None(), TraceValue::Int(1)}, true, false);
        sch.Bind(parts[0], "blockIdx.x");
        sch.Bind(parts[1], "threadIdx.x");
      });
      return;
    }
    Try(sch, [&] {
      LoopRV fused = outer.size() > 1 ? sch.Fuse(outer, true) : outer[0];
      auto parts = sch.Split(fused, {TraceValue::None(), TraceValue::Int(64)}, true, false);
      sch.Bind(parts[0], "blockIdx.x");
      sch.Bind(parts[1], "threadIdx.x");
    });
    return;
  }
  if (outer.empty() || facts.cores < 2) return;
  Try(sch, [&] {
    LoopRV fused = outer.size() > 1 ? sch.Fuse(outer, true) : outer[0];
    sch.Parallel(fused);
  });
}

}  // namespace autoschedule
}  // namespace tessera
