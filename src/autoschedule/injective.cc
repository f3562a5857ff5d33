// Rule "injective": a spatial block's loops fused into one; on the CPU, chunks of it across
// threads and native vectors inside; on CUDA, blocks of threads.
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

/*! \brief The lanes (the native ones or half as many, dividing the innermost loop) with which
 *  the innermost loop of `info` is better vectorized on its own than fused with the loops
 *  around it, or 0. Fused, a vector of the flat loop reads `A[f // n, f % n]`: fine where
 *  every load has the store's own indices, but a load indexed otherwise (one_hot's
 *  `I[f // 1000]`, take's `A[I[f // n], f % n]`, repeat's `A[.., f % n // 2]`) then
 *  needs the division of each lane, and lanes that straddle two rows (n no multiple of the
 *  lanes) gather. Kept apart, the innermost loop's vector runs along one row. */
int64_t InnerRowLanes(const BlockInfo& info, size_t loops, int64_t lanes) {
  const BlockNode* b = info.block;
  const BufferStoreNode* st = info.store;
  if (!b || !st || info.is_reduction || loops < 2 || b->iter_vars.size() != loops) return 0;
  const VarNode* inner = b->iter_vars.back()->var.get();
  if (st->indices.empty() || AsPtr<VarNode>(st->indices.back()) != inner) return 0;
  const int64_t n = info.extents.back();
  if (n <= 0) return 0;
  auto same_as_store = [&](const BufferLoadNode* load) {
    if (load->indices.size() != st->indices.size()) return false;
    for (size_t k = 0; k < load->indices.size(); ++k) {
      if (load->indices[k].get() != st->indices[k].get()) return false;
    }
    return true;
  };
  bool straddles = false, irregular = false;
  for (const BufferLoadNode* load : info.loads) {
    straddles = straddles || (n % lanes != 0 && !same_as_store(load));
    for (size_t k = 0; k < load->indices.size(); ++k) {
      const Expr& index = load->indices[k];
      const bool last = k + 1 == load->indices.size();
      PostOrderVisit(index, [&](const ObjectRef& node) {
        // an index read from memory, or the innermost iterator divided
        auto* div = AsPtr<FloorDivNode>(node);
        auto* mod = AsPtr<FloorModNode>(node);
        irregular = irregular || AsPtr<BufferLoadNode>(node) ||
                    (last && div && UsesVar(div->a, inner)) ||
                    (last && mod && UsesVar(mod->a, inner));
      });
    }
  }
  if (!straddles && !irregular) return 0;
  for (int64_t l : {lanes, lanes / 2}) {
    if (l >= 4 && n % l == 0 && n >= 2 * l) return l;
  }
  return 0;
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
  if (!facts.IsGpu() && total > 0) {
    const int64_t row_lanes =
        InnerRowLanes(info, loops.size(), facts.VectorLanes(info.output_bits));
    const int64_t rows = total / std::max<int64_t>(1, info.extents.back());
    if (row_lanes > 0 && rows >= 2 && Try(sch, [&] {
          std::vector<LoopRV> outer(loops.begin(), loops.end() - 1);
          LoopRV row = outer.size() > 1 ? sch.Fuse(outer, true) : outer[0];
          std::vector<LoopRV> parts = sch.Split(
              loops.back(), {schedule::TraceValue::None(), schedule::TraceValue::Int(row_lanes)},
              true, false);
          sch.Vectorize(parts[1]);
          if (facts.cores > 1 && total >= kParallelMinElements) sch.Parallel(row);
          if (total * info.output_bits / 8 > facts.l3_bytes / 2) {
            sch.Annotate(parts[0], "pragma_nontemporal", schedule::TraceValue::Int(1));
          }
        })) {
      return;
    }
  }
  LoopRV fused = loops[0];
  if (loops.size() > 1 && !Try(sch, [&] { fused = sch.Fuse(loops, true); })) return;
  if (facts.IsGpu()) {
    BindThreads(sch, fused, total, facts);
    return;
  }
  int64_t lanes = facts.VectorLanes(info.output_bits);
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
