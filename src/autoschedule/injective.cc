// Rule "injective": a spatial block's loops fused into one; on the CPU, chunks of it across
// threads and native vectors inside; on CUDA, blocks of threads.
#include <algorithm>
#include <optional>

#include "rules.h"
#include "tessera/ir/op.h"

namespace tessera {
namespace autoschedule {
namespace {

constexpr int64_t kParallelMinElements = 16384;  // below it OpenMP's fork costs more than it saves
constexpr int64_t kChunkElements = 4096;         // per parallel iteration: a few pages
constexpr int64_t kBroadcastMinVectors = 4;  // inner loops of BroadcastPrefix: at least this

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

/*!
 * \brief How many leading loops stay outside the fused loop on the CPU: those of the iterators
 *  that a load broadcast along the inner loops reads (batch_norm's mean[c], var[c], gamma[c],
 *  beta[c] of x[n, c, h, w]). With every loop fused, each vector of the fused loop took such a
 *  value by a gather of one index computed with a division, and recomputed from it what is
 *  constant over a channel (sqrt(var[c] + eps)); with (n, c) outside and (h, w) fused inside,
 *  the load is a scalar broadcast that the C compiler hoists out of the vector loop, with the
 *  arithmetic on it. 0 when no load is such, or when the inner loops would be too short or not
 *  a whole number of vectors (then fusing everything vectorizes more).
 */
size_t BroadcastPrefix(Schedule& sch, const BlockInfo& info, const std::vector<LoopRV>& loops,
                       int64_t lanes) {
  const BlockNode* b = info.block;
  if (b == nullptr || loops.size() != b->iter_vars.size() || loops.size() < 2) return 0;
  const size_t n = loops.size();
  for (size_t k = 0; k < n; ++k) {
    if (b->iter_vars[k]->iter_type != IterVarType::kDataPar) return 0;
    if (LoopExtent(sch, loops[k]) != info.extents[k] || info.extents[k] < 0) return 0;
  }
  size_t prefix = 0;
  for (const BufferLoadNode* load : info.loads) {
    int last = -1;  // the innermost iterator the load uses
    for (size_t k = 0; k < n; ++k) {
      for (const Expr& index : load->indices) {
        if (UsesVar(index, b->iter_vars[k]->var.get())) last = static_cast<int>(k);
      }
    }
    if (last >= 0 && static_cast<size_t>(last) + 1 < n) {
      prefix = std::max(prefix, static_cast<size_t>(last) + 1);
    }
  }
  if (prefix == 0) return 0;
  int64_t inner = 1;
  for (size_t k = prefix; k < n; ++k) inner *= info.extents[k];
  if (inner % lanes != 0 || inner < kBroadcastMinVectors * lanes) return 0;
  return prefix;
}

/*! \brief The interior of a padding: per iterator, the range [lo, hi) where the condition of
 *  `if_then_else(cond, value, constant)` holds, when `cond` is a conjunction of constant bounds
 *  on the block's iterators (topi.nn.pad's `1 <= h and h < 113 and 1 <= w and w < 113`). */
struct PadInterior {
  std::vector<int64_t> lo, hi;
};

/*! \brief Adds the bound `e` to `box`; false when it is not a constant bound on an iterator. */
bool AddBound(const Expr& e, const BlockNode* b, PadInterior* box) {
  if (const auto* a = AsPtr<AndNode>(e)) return AddBound(a->a, b, box) && AddBound(a->b, b, box);
  const auto* bin = AsPtr<BinaryNode>(e);
  if (bin == nullptr || !bin->is_comparison()) return false;
  // c <= v, c < v, v >= c, v > c: a lower bound; v < c, v <= c, c > v, c >= v: an upper one
  const bool var_left = AsPtr<VarNode>(bin->a) != nullptr;
  const Expr& v = var_left ? bin->a : bin->b;
  const auto* c = AsPtr<IntImmNode>(var_left ? bin->b : bin->a);
  if (c == nullptr || AsPtr<VarNode>(v) == nullptr) return false;
  size_t k = 0;
  while (k < b->iter_vars.size() && b->iter_vars[k]->var.get() != v.get()) ++k;
  if (k == b->iter_vars.size()) return false;
  NodeKind kind = bin->kind;
  if (!var_left) {  // c OP v as v OP' c
    switch (kind) {
      case NodeKind::kLE: kind = NodeKind::kGE; break;
      case NodeKind::kLT: kind = NodeKind::kGT; break;
      case NodeKind::kGE: kind = NodeKind::kLE; break;
      case NodeKind::kGT: kind = NodeKind::kLT; break;
      default: return false;
    }
  }
  switch (kind) {
    case NodeKind::kGE: box->lo[k] = std::max(box->lo[k], c->value); return true;
    case NodeKind::kGT: box->lo[k] = std::max(box->lo[k], c->value + 1); return true;
    case NodeKind::kLT: box->hi[k] = std::min(box->hi[k], c->value); return true;
    case NodeKind::kLE: box->hi[k] = std::min(box->hi[k], c->value + 1); return true;
    default: return false;
  }
}

/*! \brief The padding's interior, when `info` is one whose loops are still its iterators'. */
std::optional<PadInterior> PaddingOf(Schedule& sch, const BlockInfo& info,
                                     const std::vector<LoopRV>& loops) {
  const BlockNode* b = info.block;
  if (b == nullptr || info.store == nullptr || loops.size() != b->iter_vars.size()) return {};
  const auto* call = AsPtr<CallNode>(info.store->value);
  const OpNode* op = call ? AsPtr<OpNode>(call->op) : nullptr;
  if (op == nullptr || op->name != "tir.if_then_else" || call->args.size() != 3) return {};
  // the constant outside (a concatenation's two loads are not a padding)
  if (!AsPtr<FloatImmNode>(call->args[2]) && !AsPtr<IntImmNode>(call->args[2])) return {};
  PadInterior box;
  for (size_t k = 0; k < loops.size(); ++k) {
    if (info.extents[k] <= 0 || LoopExtent(sch, loops[k]) != info.extents[k]) return {};
    box.lo.push_back(0);
    box.hi.push_back(info.extents[k]);
  }
  if (!AddBound(call->args[0], b, &box)) return {};
  bool border = false;
  for (size_t k = 0; k < loops.size(); ++k) {
    if (box.lo[k] >= box.hi[k]) return {};  // no interior: nothing to gain
    border = border || box.lo[k] > 0 || box.hi[k] < info.extents[k];
  }
  if (!border) return {};
  return box;
}

/*!
 * \brief A padding on the CPU: the loops of the padded iterators partitioned into the border
 *  before, the interior and the border after (schedule.LoopPartition), nested, so that the
 *  interior is a copy without a condition whose innermost loop vectorizes, and the borders
 *  stores of the constant. With one fused loop each vector tested the condition lane by lane
 *  and gathered its elements at divided indices. The loops before the first padded iterator
 *  are fused and run in parallel.
 */
bool SchedulePadding(Schedule& sch, const BlockInfo& info, const TargetFacts& facts) {
  std::vector<LoopRV> loops = sch.GetLoops(info.rv);
  std::optional<PadInterior> box = PaddingOf(sch, info, loops);
  if (!box) return false;
  const size_t n = loops.size();
  size_t first = n;
  for (size_t k = 0; k < n && first == n; ++k) {
    if (box->lo[k] > 0 || box->hi[k] < info.extents[k]) first = k;
  }
  const int64_t total = Product(sch, loops);
  const int64_t lanes = facts.VectorLanes(info.output_bits);
  return Try(sch, [&] {
    if (first > 0) {
      std::vector<LoopRV> head(loops.begin(), loops.begin() + first);
      LoopRV outer = head.size() > 1 ? sch.Fuse(head, true) : head[0];
      if (facts.cores > 1 && total >= kParallelMinElements) sch.Parallel(outer);
    }
    // The block whose loops are partitioned next: the interior of the iterators before.
    BlockRV interior = info.rv;
    for (size_t k = first; k < n; ++k) {
      const int64_t lo = box->lo[k], hi = box->hi[k];
      if (lo == 0 && hi == info.extents[k]) continue;
      std::vector<LoopRV> own = sch.GetLoops(interior);
      LoopRV loop = own[own.size() - (n - k)];
      std::vector<schedule::TraceValue> factors;
      if (lo > 0) factors.push_back(schedule::TraceValue::Int(lo));
      if (hi < info.extents[k]) factors.push_back(schedule::TraceValue::Int(hi - lo));
      std::vector<LoopRV> parts = sch.LoopPartition(loop, factors, true);
      std::vector<BlockRV> blocks = sch.GetChildBlocks(parts[lo > 0 ? 1 : 0]);
      if (blocks.size() != 1) throw Error("a partition of a padding holds several blocks");
      interior = blocks[0];
    }
    std::vector<LoopRV> own = sch.GetLoops(interior);
    // Vectors of the native width, or of the widest power of two of at least 4 lanes that
    // divides the interior's rows (float16 rows of 112 in 16-lane vectors where the native
    // 32 lanes do not divide them: tir.SplitVectorizedLoops cuts the loop into that width).
    const int64_t inner = own.empty() ? -1 : LoopExtent(sch, own.back());
    int64_t width = lanes;
    while (width >= 4 && inner % width != 0) width /= 2;
    if (width >= 4 && inner >= width) sch.Vectorize(own.back());
  });
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
  if (!facts.IsGpu() && SchedulePadding(sch, info, facts)) return;
  if (!facts.IsGpu()) {
    const int64_t lanes = facts.VectorLanes(info.output_bits);
    const size_t prefix = lanes > 1 ? BroadcastPrefix(sch, info, loops, lanes) : 0;
    if (prefix > 0 && Try(sch, [&] {
          std::vector<LoopRV> head(loops.begin(), loops.begin() + prefix);
          std::vector<LoopRV> tail(loops.begin() + prefix, loops.end());
          LoopRV outer = head.size() > 1 ? sch.Fuse(head, true) : head[0];
          LoopRV inner = tail.size() > 1 ? sch.Fuse(tail, true) : tail[0];
          std::vector<LoopRV> parts = sch.Split(
              inner, {schedule::TraceValue::None(), schedule::TraceValue::Int(lanes)}, true, false);
          sch.Vectorize(parts[1]);
          if (facts.cores > 1 && total >= kParallelMinElements) sch.Parallel(outer);
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
