// Rule "injective": a spatial block's loops fused into one; on the CPU, chunks of it across
// threads and native vectors inside; on CUDA, blocks of threads.
#include <set>

#include "rules.h"

namespace tessera {
namespace autoschedule {
namespace {

constexpr int64_t kParallelMinElements = 16384;  // below it OpenMP's fork costs more than it saves
constexpr int64_t kChunkElements = 4096;         // per parallel iteration: a few pages

/*! \brief Product of the loop extents, -1 when one is not constant. */
int64_t Product(Schedule& sch, const std::vector<LoopRV>& loops) {
  int64_t n = 1;
  for (const LoopRV& l : loops) {
    int64_t e = LoopExtent(sch, l);
    if (e < 0) return -1;
    n *= e;
  }
  return n;
}

/*! \brief Splits a fused loop of `total` points (-1: not constant) into blocks of up to 256
 *  threads bound to blockIdx.x / threadIdx.x. */
void BindThreads(Schedule& sch, const LoopRV& fused, int64_t total, const TargetFacts& facts) {
  int64_t threads = std::min<int64_t>(256, facts.max_threads_per_block);
  if (total > 0 && total < threads) threads = total;
  Try(sch, [&] {
    std::vector<LoopRV> parts = sch.Split(
        fused, {schedule::TraceValue::None(), schedule::TraceValue::Int(threads)}, true, false);
    sch.Bind(parts[0], "blockIdx.x");
    sch.Bind(parts[1], "threadIdx.x");
  });
}

/*! \brief Whether the block is a stream that runs faster in vectors of stream_vector_bits than
 *  in full ones (measured on Zen 4, bench/RESULTS.md session 16): no math calls, its innermost
 *  iterator (the vectorized one) indexing only the last dimension of each load (a row
 *  broadcast streams; a transpose's strided reads do not), and either two inputs read into
 *  one output without a select (multiply int32 2048^2 1.43 -> 1.20 ms, maximum float32 1.51
 *  -> 1.25) or 8-bit elements (32 lanes: two 16-byte steps that GCC unrolls, where 64 were four
 *  in a loop: relu and concatenate int8 1.5-1.7x faster). A copy of one input (relu,
 *  concatenate) of wider elements measured within 10% either way and keeps the full width. */
bool Streams(const BlockInfo& info) {
  if (info.has_call || !info.block || info.block->iter_vars.empty()) return false;
  const VarNode* inner = info.block->iter_vars.back()->var.get();
  std::set<const BufferNode*> inputs;
  for (const BufferLoadNode* load : info.loads) {
    inputs.insert(load->buffer.get());
    for (size_t k = 0; k + 1 < load->indices.size(); ++k) {
      if (UsesVar(load->indices[k], inner)) return false;
    }
  }
  return info.output_bits == 8 || (inputs.size() >= 2 && !info.has_select);
}

}  // namespace

void ScheduleInjective(Schedule& sch, const BlockInfo& info, const TargetFacts& facts) {
  std::vector<LoopRV> loops = sch.GetLoops(info.rv);
  if (loops.empty()) {
    // A scalar (a 0-d result: take with a scalar index): on CUDA one thread computes it. (A
    // block without iterators is an opaque computation: BindParallelLoops binds its loops.)
    if (facts.IsGpu() && info.block && !info.block->iter_vars.empty()) {
      Try(sch, [&] {
        LoopRV unit = sch.AddUnitLoop(info.rv);
        auto parts = sch.Split(unit, {schedule::TraceValue::None(), schedule::TraceValue::Int(1)},
                               true, false);
        sch.Bind(parts[0], "blockIdx.x");
        sch.Bind(parts[1], "threadIdx.x");
      });
    }
    return;
  }
  int64_t total = Product(sch, loops);
  LoopRV fused = loops[0];
  if (loops.size() > 1 && !Try(sch, [&] { fused = sch.Fuse(loops, true); })) return;
  if (facts.IsGpu()) {
    BindThreads(sch, fused, total, facts);
    return;
  }
  // A block that streams memory takes vectors at most stream_vector_bits wide (256 on AVX-512
  // hosts); exp, tanh and the like keep the full width (their vector routines ran 15-30%
  // slower at half of it), and so do strided reads.
  int64_t lanes = Streams(info) ? facts.StreamVectorLanes(info.output_bits)
                                : facts.VectorLanes(info.output_bits);
  bool vectorize = total > 0 && lanes > 1 && total % lanes == 0;
  bool parallel = facts.cores > 1 && (total < 0 || total >= kParallelMinElements);
  if (!vectorize) {
    if (parallel) Try(sch, [&] { sch.Parallel(fused); });
    return;
  }
  // Vectors per parallel iteration: a few pages by the rule's choice (the space also has a
  // quarter and four times as much, and no chunking).
  int64_t vectors = total / lanes;
  std::vector<int64_t> chunks{0};
  size_t preferred = 0;
  for (int64_t elements : {kChunkElements / 4, kChunkElements, kChunkElements * 4}) {
    int64_t inner = std::max<int64_t>(1, elements / lanes);
    if (parallel && vectors % inner == 0 && vectors / inner >= 2) {
      if (elements == kChunkElements) preferred = chunks.size();
      chunks.push_back(inner);
    }
  }
  int64_t inner = Choose(sch, chunks, preferred);
  if (inner > 0) {
    bool ok = Try(sch, [&] {
      std::vector<LoopRV> parts =
          sch.Split(fused,
                    {schedule::TraceValue::None(), schedule::TraceValue::Int(inner),
                     schedule::TraceValue::Int(lanes)},
                    true, false);
      sch.Parallel(parts[0]);
      sch.Vectorize(parts[2]);
      // An output larger than the caches streams to memory: nobody reads it back soon.
      if (total * info.output_bits / 8 > facts.l3_bytes / 2) {
        sch.Annotate(parts[1], "pragma_nontemporal", schedule::TraceValue::Int(1));
      }
    });
    if (ok) return;
  }
  Try(sch, [&] {
    std::vector<LoopRV> parts = sch.Split(
        fused, {schedule::TraceValue::None(), schedule::TraceValue::Int(lanes)}, true, false);
    if (parallel) sch.Parallel(parts[0]);
    sch.Vectorize(parts[1]);
  });
}

bool IsWindowNest(const BlockInfo& info) {
  if (!info.block) return false;
  bool found = false;
  PostOrderVisit(info.block->body,
                 [&](const ObjectRef& n) { found = found || AsPtr<BlockRealizeNode>(n); });
  return found;
}

void ScheduleWindowNest(Schedule& sch, const BlockInfo& info, const TargetFacts& facts) {
  // The loops of the nest's spatial iterators, outermost first (a reduce iterator of the outer
  // level, one point in TVM's form, keeps its loop).
  std::vector<LoopRV> loops = sch.GetLoops(info.rv);
  std::vector<LoopRV> spatial;
  for (size_t i = 0; i < loops.size() && i < info.block->iter_vars.size(); ++i) {
    if (info.block->iter_vars[i]->iter_type != IterVarType::kDataPar) break;
    spatial.push_back(loops[i]);
  }
  if (spatial.empty()) return;
  int64_t total = Product(sch, spatial);
  LoopRV fused = spatial[0];
  if (spatial.size() > 1 && !Try(sch, [&] { fused = sch.Fuse(spatial, true); })) return;
  if (facts.IsGpu()) {
    BindThreads(sch, fused, total, facts);
  } else if (facts.cores > 1 && (total < 0 || total >= kParallelMinElements / 16)) {
    // Each point sums a window: fewer points than elementwise work make a parallel loop worth it.
    Try(sch, [&] { sch.Parallel(fused); });
  }
}

}  // namespace autoschedule
}  // namespace tessera
