// Rule "tensor cores" (CUDA): a float16 matmul C[i, j] += f32(A[i, k]) * f32(B[k, j]) with a
// float32 accumulator is tiled for the tensor cores, in the structure of TVM's dlight GEMM:
//
//   i = i0 (blockIdx.y) . i1 (warp row, threadIdx.y) . i2 (fragments) . i3 (16)
//   j = j0 (blockIdx.x) . j1 (warp column, threadIdx.z) . j2 (fragments) . j3 (16)
//   k = k0 (shared-memory step) . k1 (fragment step) . k2 (16)
//   order i0 j0 i1 j1 k0 k1 i2 j2 | i3 j3 k2 (one 16x16x16 wmma.mma_sync)
//
// C lives in wmma.accumulator fragments (each warp a warp tile of FM x FN fragments) from the
// fill to the store; per k0 step the block's threads copy the A (BM x BK) and B (BK x BN) tiles
// into shared memory with 16-byte vector loads, rows padded by 8 halves (storage_align) against
// bank conflicts; per k1 step each warp loads its FM A and FN B fragments from shared memory and
// issues FM x FN mma_sync. The fill, the fragment loads, the mma and the store are tensorized
// with the wmma intrinsics of tessera.tir.tensor_intrin.cuda (registered from Python). With
// the target fact mma_fused_cast, a float16 cast that is the only consumer of C is inlined into
// the store, which then writes the fragments as float16 (one kernel instead of two). When the
// intrinsics are not registered, or the block does not have this form, the rule declines and
// the SIMT tiling of multi_level_tiling.cc takes the block.
#include "rules.h"
#include "tessera/ir/expr.h"
#include "tessera/schedule/tensor_intrin.h"

namespace tessera {
namespace autoschedule {
namespace {

using schedule::GetTensorIntrin;
using schedule::TraceValue;

constexpr char kFill[] = "wmma_fill_16x16x16_f32";
constexpr char kLoadA[] = "wmma_load_16x16x16_f16_a_shared";
constexpr char kLoadB[] = "wmma_load_16x16x16_f16_b_shared";
constexpr char kLoadADyn[] = "wmma_load_16x16x16_f16_a_shared_dyn";
constexpr char kLoadBDyn[] = "wmma_load_16x16x16_f16_b_shared_dyn";
constexpr char kSync[] = "wmma_sync_16x16x16_f16f16f32";
constexpr char kStore[] = "wmma_store_16x16x16_f32_global";
constexpr char kStoreF16[] = "wmma_store_16x16x16_f32_f16_global";

/*! \brief The tile of one thread block: BM x BN of C, BK of the reduction per shared-memory
 *  step, WM x WN warps (each a warp tile of BM/WM x BN/WN). */
struct TensorCoreTile {
  int64_t bm = 0, bn = 0, bk = 0, wm = 0, wn = 0;
  int64_t stages = 1;  // copies of the A and B tiles in the software pipeline
  bool dynamic = false;  // the tiles in dynamic shared memory (over the static limit)
};

/*! \brief The shared memory of a block's A and B tiles (float16, rows padded by 8). */
int64_t SharedBytes(int64_t bm, int64_t bn, int64_t bk) {
  return 2 * (bm * (bk + 8) + bk * (bn + 8));
}

/*! \brief The largest power of two from `cap` down to 16 that divides `n`, or 0. */
int64_t LargestDividingUpTo(int64_t n, int64_t cap) {
  for (int64_t o = 256; o >= 16; o /= 2) {
    if (o <= cap && n % o == 0) return o;
  }
  return 0;
}

/*! \brief The block tile for an M x N x K matmul: mma_block_m x mma_block_n (128 x 256) x
 *  mma_block_k (64) with warp tiles of mma_warp_m x mma_warp_n (64 x 64: 8 warps of 4 x 4
 *  accumulator fragments, 4 A and 4 B fragments per k step) where the shape allows; halved
 *  along the larger side while the grid would leave more than a quarter of the SMs without a
 *  block; smaller where the shape does not divide. `dynamic_ok`: the fragment loads from
 *  dynamic shared memory are registered (the tiles may exceed the static limit). */
TensorCoreTile ChooseTile(int64_t m, int64_t n, int64_t k, const TargetFacts& facts,
                          bool dynamic_ok) {
  TensorCoreTile t;
  t.bm = LargestDividingUpTo(m, std::max(16, facts.mma_block_m));
  t.bn = LargestDividingUpTo(n, std::max(16, facts.mma_block_n));
  const int64_t want_blocks = std::max(1, facts.sm_count);
  // (a grid of 3/4 of the SMs or more stays: halving again would double the blocks' fixed
  // costs, the prologue and the fragment stores, for the last few SMs)
  while (4 * (m / t.bm) * (n / t.bn) < 3 * want_blocks && std::max(t.bm, t.bn) > 64) {
    if (t.bm >= t.bn) {
      t.bm /= 2;
    } else {
      t.bn /= 2;
    }
  }
  // The reduction step: 64 where the two tiles fit the static shared memory, or where the
  // pipeline holds at least two copies of them in the opt-in dynamic shared memory (128 x 256
  // blocks: 52224 bytes a copy); twice the mma work per copy and barrier of 32. Else 32 or 16.
  t.bk = LargestDividingUpTo(k, std::min(32, std::max(16, facts.mma_block_k)));
  if (facts.mma_block_k >= 64 && k % 64 == 0) {
    const int64_t bytes = SharedBytes(t.bm, t.bn, 64);
    const bool pipelined = dynamic_ok && facts.pipeline_stages > 1 && k / 64 > 1 &&
                           2 * bytes <= facts.shared_memory_optin_bytes;
    if (bytes <= facts.shared_memory_bytes || pipelined) t.bk = 64;
  }
  // Warps: on tiles of 128 or more, bm / mma_warp_m rows and bn / mma_warp_n columns of them
  // (2 x 4 by default: 128 x 256 blocks); 2 on a smaller side (at least one fragment per warp).
  auto warps = [](int64_t tile, int warp_tile) {
    return tile >= 128 ? std::max<int64_t>(1, tile / std::max(16, warp_tile))
                       : std::min<int64_t>(2, tile / 16);
  };
  t.wm = warps(t.bm, facts.mma_warp_m);
  t.wn = warps(t.bn, facts.mma_warp_n);
  // The software pipeline: up to `pipeline_stages` copies of the tiles, the copies of later
  // k0 steps in flight (cp.async) while the tensor cores work on the current one; as many
  // stages as the k0 loop has steps for and the (opt-in dynamic) shared memory holds.
  const int64_t steps = k / t.bk;
  for (int64_t s = std::min<int64_t>(facts.pipeline_stages, steps); s > 1; --s) {
    const int64_t bytes = s * SharedBytes(t.bm, t.bn, t.bk);
    if (bytes <= facts.shared_memory_bytes ||
        (dynamic_ok && bytes <= facts.shared_memory_optin_bytes)) {
      t.stages = s;
      t.dynamic = bytes > facts.shared_memory_bytes;
      break;
    }
  }
  return t;
}

/*! \brief The widest vector (8, 4, 2 or 1 elements) that splits `elements` evenly over
 *  `threads` threads. */
int64_t CopyVector(int64_t elements, int64_t threads) {
  for (int64_t v : {8, 4, 2}) {
    if (elements % (threads * v) == 0) return v;
  }
  return 1;
}

const BufferLoadNode* AsLoad(const Expr& e) {
  Expr x = e;
  while (auto* c = AsPtr<CastNode>(x)) x = c->value;
  return AsPtr<BufferLoadNode>(x);
}

bool IsVar(const Expr& e, const VarNode* v) { return AsPtr<VarNode>(e) == v; }

/*! \brief Whether `consumer` is `D[i, j] = float16(C[i, j])` over the whole m x n of `c`: the
 *  float16 output of the matmul, which the fragments' store can write itself. */
bool IsFloat16Cast(const BlockNode* consumer, const BufferNode* c, int64_t m, int64_t n) {
  auto* st = consumer ? AsPtr<BufferStoreNode>(consumer->body) : nullptr;
  if (st == nullptr || consumer->iter_vars.size() != 2 || st->indices.size() != 2 ||
      st->buffer->dtype != DataType::Float(16)) {
    return false;
  }
  auto* cast = AsPtr<CastNode>(st->value);
  auto* load = cast ? AsPtr<BufferLoadNode>(cast->value) : nullptr;
  if (!load || load->buffer.get() != c || load->indices.size() != 2) return false;
  for (int d = 0; d < 2; ++d) {
    const IterVarNode* iv = consumer->iter_vars[d].get();
    auto lo = AsConstInt(iv->dom->min), extent = AsConstInt(iv->dom->extent);
    if (iv->iter_type != IterVarType::kDataPar || !lo || *lo != 0 || !extent ||
        *extent != (d == 0 ? m : n) || !IsVar(st->indices[d], iv->var.get()) ||
        !IsVar(load->indices[d], iv->var.get())) {
      return false;
    }
  }
  return true;
}

}  // namespace

bool TileTensorCore(Schedule& sch, const BlockInfo& info, const TargetFacts& facts,
                    std::vector<std::string>* taken) {
  const BlockNode* b = info.block;
  const BufferStoreNode* st = info.store;
  if (b == nullptr || st == nullptr || b->iter_vars.size() != 3 || st->indices.size() != 2) {
    return false;
  }
  for (const char* name : {kFill, kLoadA, kLoadB, kSync, kStore}) {
    if (!GetTensorIntrin(name, true)) return false;
  }
  // C[i, j] (float32) = C[i, j] + f32(A[i, k]) * f32(B[k, j]) with A and B float16, the
  // iterators spatial, spatial, reduction in this order (te.compute / T.grid).
  if (st->buffer->dtype != DataType::Float(32) || info.loads.size() != 2) return false;
  const VarNode* vi = b->iter_vars[0]->var.get();
  const VarNode* vj = b->iter_vars[1]->var.get();
  const VarNode* vk = b->iter_vars[2]->var.get();
  if (b->iter_vars[0]->iter_type != IterVarType::kDataPar ||
      b->iter_vars[1]->iter_type != IterVarType::kDataPar ||
      b->iter_vars[2]->iter_type != IterVarType::kCommReduce || !IsVar(st->indices[0], vi) ||
      !IsVar(st->indices[1], vj)) {
    return false;
  }
  auto* add = AsPtr<AddNode>(st->value);
  auto* mul = add ? AsPtr<MulNode>(add->b) : nullptr;
  if (mul == nullptr) return false;
  const BufferLoadNode* a = AsLoad(mul->a);
  const BufferLoadNode* bl = AsLoad(mul->b);
  if (!a || !bl || a->indices.size() != 2 || bl->indices.size() != 2 ||
      a->buffer->dtype != DataType::Float(16) || bl->buffer->dtype != DataType::Float(16) ||
      !IsVar(a->indices[0], vi) || !IsVar(a->indices[1], vk) || !IsVar(bl->indices[0], vk) ||
      !IsVar(bl->indices[1], vj)) {
    return false;
  }
  const int64_t m = info.extents[0], n = info.extents[1], k = info.extents[2];
  if (m <= 0 || n <= 0 || k <= 0 || m % 16 || n % 16 || k % 16) return false;
  int a_index = -1, b_index = -1;
  for (size_t r = 0; r < b->reads.size(); ++r) {
    if (b->reads[r]->buffer.get() == a->buffer.get()) a_index = static_cast<int>(r);
    if (b->reads[r]->buffer.get() == bl->buffer.get()) b_index = static_cast<int>(r);
  }
  if (a_index < 0 || b_index < 0 || a_index == b_index) return false;

  const bool dynamic_ok = GetTensorIntrin(kLoadADyn, true) && GetTensorIntrin(kLoadBDyn, true);
  const TensorCoreTile t = ChooseTile(m, n, k, facts, dynamic_ok);
  const int64_t fm = t.bm / t.wm / 16, fn = t.bn / t.wn / 16, threads = 32 * t.wm * t.wn;
  if (threads > facts.max_threads_per_block) return false;
  // Shared memory: the A and B tiles with their rows padded by 8 halves (static, or all the
  // pipeline's copies in the opt-in dynamic shared memory).
  const int64_t bytes = t.stages * SharedBytes(t.bm, t.bn, t.bk);
  if (t.dynamic ? bytes > facts.shared_memory_optin_bytes : bytes > facts.shared_memory_bytes) {
    return false;
  }
  BlockRV block = info.rv;
  // mma_fused_cast: the only consumer of a C that is not an output casts it to float16; the
  // fragments are stored as float16 straight into its output (through a 1 KB tile of shared
  // memory per warp, which the dynamic shared memory of the pipeline leaves room for).
  std::optional<std::string> cast_consumer;
  const int64_t tile_bytes = 1024 * (threads / 32);  // static shared memory of the helper
  if (facts.mma_fused_cast && !info.writes_param && GetTensorIntrin(kStoreF16, true) &&
      (t.dynamic ? bytes + tile_bytes <= facts.shared_memory_optin_bytes
                 : bytes + tile_bytes <= facts.shared_memory_bytes)) {
    std::vector<BlockRV> consumers = sch.GetConsumers(block);
    if (consumers.size() == 1 &&
        IsFloat16Cast(AsPtr<BlockNode>(sch.Get(consumers[0])), st->buffer.get(), m, n)) {
      cast_consumer = AsPtr<BlockNode>(sch.Get(consumers[0]))->name_hint;
    }
  }
  auto name_of = [&](const BlockRV& rv) { return AsPtr<BlockNode>(sch.Get(rv))->name_hint; };
  auto I = [](int64_t v) { return TraceValue::Int(v); };
  const TraceValue none = TraceValue::None();
  return Try(sch, [&] {
    std::vector<LoopRV> loops = sch.GetLoops(block);
    auto is = sch.Split(loops[0], {none, I(t.wm), I(fm), I(16)}, true, false);
    auto js = sch.Split(loops[1], {none, I(t.wn), I(fn), I(16)}, true, false);
    auto ks = sch.Split(loops[2], {none, I(t.bk / 16), I(16)}, true, false);
    // With mma_stream_b the fragment loop runs B fragments outside A fragments, so that each
    // B fragment is loaded once, right before its column of mma (one live B fragment).
    if (facts.mma_stream_b) {
      sch.Reorder({is[0], js[0], is[1], js[1], ks[0], ks[1], js[2], is[2], is[3], js[3], ks[2]});
    } else {
      sch.Reorder({is[0], js[0], is[1], js[1], ks[0], ks[1], is[2], js[2], is[3], js[3], ks[2]});
    }
    // Block rasterization (mma_swizzle = G > 1 dividing the block rows): blockIdx.x walks G
    // block rows of one block column before the next column, so that blocks resident at the
    // same time read the same B tiles (and G A tiles) from L2.
    const int64_t row_blocks = m / t.bm, swizzle = facts.mma_swizzle;
    if (swizzle > 1 && row_blocks > swizzle && row_blocks % swizzle == 0 && n / t.bn > 1) {
      auto rows = sch.Split(is[0], {none, I(swizzle)}, true, false);
      sch.Reorder({rows[0], js[0], rows[1]});
      LoopRV x = sch.Fuse({js[0], rows[1]}, true);
      sch.Bind(rows[0], "blockIdx.y");
      sch.Bind(x, "blockIdx.x");
    } else {
      sch.Bind(is[0], "blockIdx.y");
      sch.Bind(js[0], "blockIdx.x");
    }
    sch.Bind(is[1], "threadIdx.y");
    sch.Bind(js[1], "threadIdx.z");
    // The accumulator fragments of a warp, stored to C after the reduction.
    BlockRV store = sch.CacheWrite(block, 0, "wmma.accumulator", {});
    taken->push_back(name_of(store));
    // With a fused cast the copy out of the fragments disappears into the cast, which then
    // reads the fragments (C is not written at all).
    bool fused = false;
    if (cast_consumer) {
      fused = Try(sch, [&] { sch.ComputeInline(store); });
      if (fused) {
        store = sch.GetBlock(*cast_consumer, std::nullopt);
        taken->push_back(*cast_consumer);
      }
    }
    sch.ReverseComputeAt(store, js[1], true, -1);
    // The A and B tiles of a k0 step in shared memory, copied by every thread of the block with
    // vector loads; rows padded to a stride of 8 halves more than a multiple of 32.
    for (int index : {a_index, b_index}) {
      BlockRV copy = sch.CacheRead(block, index, t.dynamic ? "shared.dyn" : "shared", {});
      taken->push_back(name_of(copy));
      sch.ComputeAt(copy, ks[0], false, -1);
      std::vector<LoopRV> cl = sch.GetLoops(copy);
      LoopRV fused = sch.Fuse({cl[cl.size() - 2], cl.back()}, true);
      const int64_t elements = index == a_index ? t.bm * t.bk : t.bk * t.bn;
      const int64_t vec = CopyVector(elements, threads);
      auto parts = sch.Split(fused, {none, I(t.wm), I(t.wn), I(32), I(vec)}, true, false);
      sch.Bind(parts[1], "threadIdx.y");
      sch.Bind(parts[2], "threadIdx.z");
      sch.Bind(parts[3], "threadIdx.x");
      if (vec > 1) sch.Vectorize(parts[4]);
      sch.StorageAlign(copy, 0, 0, 32, 8);
    }
    // The fragments of a k1 step, loaded from shared memory by each warp.
    BlockRV frag_a = sch.CacheRead(block, a_index, "wmma.matrix_a", {});
    taken->push_back(name_of(frag_a));
    sch.ComputeAt(frag_a, ks[1], false, -1);
    BlockRV frag_b = sch.CacheRead(block, b_index, "wmma.matrix_b", {});
    taken->push_back(name_of(frag_b));
    sch.ComputeAt(frag_b, facts.mma_stream_b ? js[2] : ks[1], false, -1);
    // The k0 loop's body is the A copy, the B copy and the k1 loop: pipelined, the copies of
    // step k0 + stages - 1 are issued asynchronously. With 2 stages the copies come first in a
    // step (they run while the mma of the previous step does); with more, after the mma (the
    // barrier at the top of a step then also guards the version the copies overwrite), unless
    // mma_copies_first.
    if (t.stages > 1) {
      const int64_t last = t.stages - 1;
      sch.Annotate(ks[0], "software_pipeline_stage", TraceValue::List({I(0), I(0), I(last)}));
      sch.Annotate(ks[0], "software_pipeline_order",
                   t.stages == 2 || facts.mma_copies_first ? TraceValue::List({I(0), I(1), I(2)})
                                                           : TraceValue::List({I(1), I(2), I(0)}));
      sch.Annotate(ks[0], "software_pipeline_async_stages", TraceValue::List({I(0)}));
    }
    BlockRV init = sch.DecomposeReduction(block, ks[0]);
    taken->push_back(name_of(init));
    // Tensorize: the fill (16 x 16 innermost loops of the init) ...
    std::vector<LoopRV> il = sch.GetLoops(init);
    sch.Tensorize(il[il.size() - 2], kFill, true);
    // ... the fragment loads (A: rows of 16; B: columns of 16) ...
    std::vector<LoopRV> al = sch.GetLoops(frag_a);
    auto ar = sch.Split(al[al.size() - 2], {none, I(16)}, true, false);
    sch.Tensorize(ar[1], t.dynamic ? kLoadADyn : kLoadA, true);
    std::vector<LoopRV> bl2 = sch.GetLoops(frag_b);
    LoopRV bk = bl2[bl2.size() - 2];
    auto bc = sch.Split(bl2.back(), {none, I(16)}, true, false);
    sch.Reorder({bc[0], bk, bc[1]});
    sch.Tensorize(bk, t.dynamic ? kLoadBDyn : kLoadB, true);
    // ... the mma ...
    sch.Tensorize(is[3], kSync, true);
    // ... and the store.
    std::vector<LoopRV> sl = sch.GetLoops(store);
    auto sr = sch.Split(sl[sl.size() - 2], {none, I(16)}, true, false);
    auto sc = sch.Split(sl.back(), {none, I(16)}, true, false);
    sch.Reorder({sr[0], sc[0], sr[1], sc[1]});
    sch.Tensorize(sr[1], fused ? kStoreF16 : kStore, true);
    // Every fragment index is a constant once the fragment loops and the k1 loop are unrolled
    // (the fragments stay in registers).
    for (const LoopRV& l : {ks[1], is[2], js[2], ar[0], bc[0], sr[0], sc[0], il[il.size() - 4],
                            il[il.size() - 3]}) {
      sch.Unroll(l);
    }
  });
}

}  // namespace autoschedule
}  // namespace tessera
