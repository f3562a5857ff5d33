// Rule "injective": a spatial block's loops fused into one; on the CPU, chunks of it across
// threads and native vectors inside; on CUDA, blocks of threads. On the CPU a permutation (a
// transpose, a layout_transform: read and written contiguously along different loops) is tiled
// instead, so that both its reads and its writes walk cache lines.
#include <algorithm>
#include <cstdlib>
#include <optional>
#include <set>

#include "rules.h"
#include "tessera/arith/analyzer.h"
#include "tessera/ir/expr_ops.h"
#include "tessera/ir/functor.h"
#include "tessera/ir/op.h"
#include "tessera/ir/structural_equal.h"

namespace tessera {
namespace autoschedule {
namespace {

constexpr int64_t kParallelMinElements = 16384;  // below it OpenMP's fork costs more than it saves
constexpr int64_t kChunkElements = 4096;         // per parallel iteration: a few pages
constexpr int64_t kBroadcastMinVectors = 4;      // inner loops of BroadcastPrefix: at least this
constexpr int64_t kByteStreamBits = 128;         // CombinesByteStreams: 16-byte vectors

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

/*! \brief The elements a point of the block reads through a call of a C function given a
 *  buffer's address (topi.argmax's row search: its read region is the row), at most one
 *  region's worth; 0 when the block makes no such call. */
int64_t ElementsReadByAddress(const BlockInfo& info) {
  if (!info.block) return 0;
  bool by_address = false;
  PostOrderVisit(info.block->body, [&](const ObjectRef& n) {
    auto* call = AsPtr<CallNode>(n);
    if (!call || !(call->is_op("tir.call_extern") || call->is_op("tir.call_pure_extern"))) return;
    for (const Expr& arg : call->args) {
      auto* inner = AsPtr<CallNode>(arg);
      by_address = by_address || (inner && inner->is_op("tir.address_of"));
    }
  });
  if (!by_address) return 0;
  int64_t most = 1;
  for (const BufferRegion& r : info.block->reads) {
    int64_t volume = 1;
    for (const Range& range : r->region) {
      auto extent = AsConstInt(range->extent);
      volume = extent ? volume * *extent : -1;
      if (volume < 0) break;
    }
    if (volume < 0) return -1;
    most = std::max(most, volume);
  }
  return most;
}

/*! \brief The position of the block iterator that `e` is (exactly its variable), or -1. */
int IterIndex(const BlockNode* block, const Expr& e) {
  const VarNode* v = AsPtr<VarNode>(e);
  if (v == nullptr) return -1;
  for (size_t k = 0; k < block->iter_vars.size(); ++k) {
    if (block->iter_vars[k]->var.get() == v) return static_cast<int>(k);
  }
  return -1;
}

constexpr int64_t kLineBytes = 64;  // a cache line
constexpr int64_t kMinTileLanes = 8;  // the narrowest vector of a permutation's tile

/*! \brief The constant strides (in elements) of `buffer`'s axes, empty when one is not known. */
std::vector<int64_t> ConstStrides(const BufferNode* buffer) {
  std::vector<int64_t> out(buffer->shape.size());
  if (!buffer->strides.empty()) {
    if (buffer->strides.size() != out.size()) return {};
    for (size_t k = 0; k < out.size(); ++k) {
      const IntImmNode* v = AsPtr<IntImmNode>(buffer->strides[k]);
      if (v == nullptr) return {};
      out[k] = v->value;
    }
    return out;
  }
  int64_t stride = 1;
  for (size_t k = out.size(); k-- > 0;) {
    out[k] = stride;
    const IntImmNode* v = AsPtr<IntImmNode>(buffer->shape[k]);
    if (v == nullptr) return {};
    stride *= v->value;
  }
  return out;
}

/*! \brief The most of `rows` rows `stride_bytes` apart whose first lines fall in one set of
 *  the L1 (rows a multiple of a way's bytes apart, e.g. a page, all fall in one set). */
int64_t RowsInOneSet(int64_t stride_bytes, int64_t rows, const TargetFacts& facts) {
  const int64_t sets =
      std::max<int64_t>(1, facts.l1_bytes / kLineBytes / std::max(1, facts.l1_ways));
  std::vector<int64_t> lines;
  for (int64_t k = 0; k < rows; ++k) lines.push_back(k * stride_bytes / kLineBytes);
  std::sort(lines.begin(), lines.end());
  lines.erase(std::unique(lines.begin(), lines.end()), lines.end());
  std::vector<int64_t> in_set(sets, 0);
  int64_t most = 0;
  for (int64_t line : lines) most = std::max(most, ++in_set[line % sets]);
  return most;
}

/*! \brief Adds to `by_iter` `scale` times the coefficient of each of the block's iterators in
 *  `e`; false when `e` is no sum of constant multiples of iterators and constants (a division,
 *  a load, a product of iterators). */
bool AddAffine(const BlockNode* b, const Expr& e, int64_t scale, std::vector<int64_t>* by_iter) {
  if (AsPtr<IntImmNode>(e)) return true;
  if (AsPtr<VarNode>(e)) {
    const int k = IterIndex(b, e);
    if (k < 0) return false;
    (*by_iter)[k] += scale;
    return true;
  }
  if (auto* add = AsPtr<AddNode>(e)) {
    return AddAffine(b, add->a, scale, by_iter) && AddAffine(b, add->b, scale, by_iter);
  }
  if (auto* sub = AsPtr<SubNode>(e)) {
    return AddAffine(b, sub->a, scale, by_iter) && AddAffine(b, sub->b, -scale, by_iter);
  }
  if (auto* mul = AsPtr<MulNode>(e)) {
    if (auto* c = AsPtr<IntImmNode>(mul->b)) return AddAffine(b, mul->a, scale * c->value, by_iter);
    if (auto* c = AsPtr<IntImmNode>(mul->a)) return AddAffine(b, mul->b, scale * c->value, by_iter);
  }
  return false;
}

/*! \brief The stride (in elements) of an access of `buffer` at `indices` along each of the
 *  block's iterators; empty when an index is not affine in them or a stride is not known. */
std::vector<int64_t> IterStrides(const BlockNode* b, const BufferNode* buffer,
                                 const std::vector<Expr>& indices) {
  const std::vector<int64_t> strides = ConstStrides(buffer);
  if (strides.size() != indices.size()) return {};
  std::vector<int64_t> by_iter(b->iter_vars.size(), 0);
  for (size_t p = 0; p < indices.size(); ++p) {
    if (!AddAffine(b, indices[p], strides[p], &by_iter)) return {};
  }
  return by_iter;
}

/*! \brief The iterators of `b` that the loads `indices` divide: floordiv(e, c) or floormod(e,
 *  c) with e = v or v * m + (the rest), c > 1 a constant multiple of m, as (position, c / m).
 *  (Only a guide to the loop order: any split and reorder of a spatial block is legal.) */
std::set<std::pair<int, int64_t>> DividedIterators(const BlockNode* b,
                                                   const std::vector<Expr>& indices) {
  std::set<std::pair<int, int64_t>> found;
  auto visit = [&](const ObjectRef& node) {
    const Expr* a = nullptr;
    const Expr* c = nullptr;
    if (auto* d = AsPtr<FloorDivNode>(node)) {
      a = &d->a;
      c = &d->b;
    } else if (auto* m = AsPtr<FloorModNode>(node)) {
      a = &m->a;
      c = &m->b;
    }
    if (a == nullptr) return;
    const auto* k = AsPtr<IntImmNode>(*c);
    if (k == nullptr || k->value < 2) return;
    Expr head = *a;
    if (auto* add = AsPtr<AddNode>(head)) head = add->a;
    int64_t m = 1;
    if (auto* mul = AsPtr<MulNode>(head)) {
      const auto* f = AsPtr<IntImmNode>(mul->b);
      if (f == nullptr || f->value < 1) return;
      m = f->value;
      head = mul->a;
    }
    const int at = IterIndex(b, head);
    if (at < 0 || k->value % m != 0 || k->value / m < 2) return;
    found.insert({at, k->value / m});
  };
  for (const Expr& e : indices) PostOrderVisit(e, visit);
  return found;
}

/*!
 * \brief A layout change between blocked layouts (CPU), which TilePermutation leaves: the
 *  input's contiguous axis is a sub-axis of a block (NCHW8c to NCHW reads `A[n, c // 8, h, w,
 *  c % 8]`, NCHW8c to NCHW4c `A[n, c // 2, h, w, (c * 4 + b) % 8]`, OIHW8i8o to OHWI `A[o // 8,
 *  i // 8, h, w, i % 8, o % 8]`) or a run shorter than a line (OHWI to OIHW8i4o reads `A[o * 4
 *  + b, h, w, i * 8 + a]`). Fused and vectorized along the output, each vector gathered its
 *  elements a block apart and the next sub-axis came back to those lines only much later.
 *  Each divided iterator's loop is split by its divisor; the loops of the input's last index
 *  and the output's last loop make a tile (a few lines of each side, in the L1), inside the
 *  other loops (fused, parallel), in the output's order but for the loop along which the
 *  input is contiguous, which goes innermost and is vectorized when it fills 16 bytes (the
 *  output then written lane by lane into lines that the tile fills). Measured on AKG's cases,
 *  float32, one thread: NCHW8c to NCHW (4, 32, 56, 56, 8) 3.2 ms -> 1.9 (numpy 2.1),
 *  NCHW8c to NCHW4c (8, 32, 56, 56, 8) 10.5 -> 3.7 (numpy 7.4), OHWI to OIHW8i4o (128, 7, 7,
 *  32) 0.22 -> 0.06 (numpy 0.20), OIHW8i8o to OHWI (16, 4, 7, 7, 8, 8) 0.13 -> 0.06 (numpy
 *  0.12). False (the schedule as it was) when the block is not one: a reshape, whose tile is
 *  read and written in the same order, keeps the copy rules.
 */
bool TileBlockedLayout(Schedule& sch, const BlockInfo& info, const std::vector<LoopRV>& loops,
                       const TargetFacts& facts) {
  const BlockNode* b = info.block;
  if (b == nullptr || info.store == nullptr || info.store->indices.empty() || info.has_call ||
      info.has_select || info.loads.size() != 1) {
    return false;
  }
  const size_t n = b->iter_vars.size();
  if (loops.size() != n || n < 2) return false;
  for (size_t k = 0; k < n; ++k) {
    if (b->iter_vars[k]->iter_type != IterVarType::kDataPar || info.extents[k] < 1) return false;
  }
  const int w = IterIndex(b, info.store->indices.back());
  if (w != static_cast<int>(n) - 1) return false;
  const BufferLoadNode* load = info.loads[0];
  if (load->indices.empty() || load->buffer.get() == info.store->buffer.get()) return false;
  const std::vector<int64_t> out_strides =
      IterStrides(b, info.store->buffer.get(), info.store->indices);
  if (out_strides.empty()) return false;
  // divisor of each iterator (1: not divided)
  std::vector<int64_t> divisor(n, 1);
  for (const auto& [k, c] : DividedIterators(b, load->indices)) {
    if (divisor[k] != 1 || info.extents[k] % c != 0 || info.extents[k] == c) return false;
    divisor[k] = c;
  }
  // The input's last index: (a sum of iterators times constants), or that sum % c.
  Expr last = load->indices.back();
  if (auto* m = AsPtr<FloorModNode>(last)) last = m->a;
  std::vector<int64_t> coef(n, 0);
  if (!AddAffine(b, last, 1, &coef)) return false;
  int contiguous = -1;
  for (size_t k = 0; k < n; ++k) {
    if (coef[k] == 1) contiguous = static_cast<int>(k);
  }
  // (the output's rows of blocks read block by block, NCHW8c to NHWC: the row's vectors)
  if (contiguous < 0 || (contiguous == w && divisor[w] != 1)) return false;
  // The tile: per iterator in it, the part of its loop (the inner one where divided, both for
  // the output's last iterator).
  std::vector<bool> in_tile(n, false);
  for (size_t k = 0; k < n; ++k) in_tile[k] = coef[k] != 0 || static_cast<int>(k) == w;
  int64_t tile = 1;
  bool same_order = true;  // every tile loop strides alike in the input and the output
  for (size_t k = 0; k < n; ++k) {
    if (!in_tile[k]) continue;
    const bool whole = static_cast<int>(k) == w || divisor[k] == 1;
    tile *= whole ? info.extents[k] : divisor[k];
    if (static_cast<int>(k) == w && divisor[k] != 1) same_order = false;
    same_order = same_order && out_strides[k] == coef[k];
  }
  if (same_order || tile < 2) return false;
  const int64_t bytes = std::max(1, info.output_bits / 8);
  const int64_t in_bytes = std::max(1, load->buffer->dtype.bits() / 8);
  if (tile * (bytes + in_bytes) > facts.l1_bytes / 4) return false;
  const int64_t vec_extent =
      divisor[contiguous] != 1 ? divisor[contiguous] : info.extents[contiguous];
  const int64_t native = facts.VectorLanes(std::max(8, info.output_bits));
  int64_t lanes = 0;
  for (int64_t l = native; l >= 2 && l * info.output_bits >= 128; l /= 2) {
    if (vec_extent % l == 0) {
      lanes = l;
      break;
    }
  }
  // Scalar tiles (OHWI to OIHW's 7 input channels) keep the plain schedule's vectors.
  if (lanes == 0) return false;
  int64_t total = 1;
  for (int64_t e : info.extents) total *= e;
  const bool parallel = facts.cores > 1 && total >= kParallelMinElements;
  return Try(sch, [&] {
    std::vector<LoopRV> outer, inner;
    LoopRV contiguous_loop;
    for (size_t k = 0; k < n; ++k) {
      std::vector<LoopRV> parts{loops[k]};
      if (divisor[k] != 1) {
        parts = sch.Split(loops[k], {schedule::TraceValue::None(),
                                     schedule::TraceValue::Int(divisor[k])}, true, false);
      }
      const bool whole = static_cast<int>(k) == w;
      for (size_t q = 0; q < parts.size(); ++q) {
        const bool tiled = in_tile[k] && (whole || q + 1 == parts.size());
        if (!tiled) {
          outer.push_back(parts[q]);
        } else if (static_cast<int>(k) == contiguous && q + 1 == parts.size()) {
          contiguous_loop = parts[q];
        } else {
          inner.push_back(parts[q]);
        }
      }
    }
    if (outer.empty()) throw Error("a tile without loops around it");
    std::vector<LoopRV> order = outer;
    order.insert(order.end(), inner.begin(), inner.end());
    order.push_back(contiguous_loop);
    sch.Reorder(order);
    LoopRV fused = outer.size() > 1 ? sch.Fuse(outer, true) : outer[0];
    {
      LoopRV v = contiguous_loop;
      if (vec_extent > lanes) {
        v = sch.Split(contiguous_loop,
                      {schedule::TraceValue::None(), schedule::TraceValue::Int(lanes)}, true,
                      false)[1];
      }
      sch.Vectorize(v);
    }
    if (parallel) sch.Parallel(fused);
  });
}

/*!
 * \brief A transpose, a permutation of axes or a layout_transform (CPU): a block whose store is
 *  contiguous along its last loop `w` and that loads a buffer (every index a sum of constant
 *  multiples of iterators: NCHW to NCHW8c reads `A[n, C * 8 + c, h, w]`) contiguously along
 *  another loop `r` while striding along `w`. The plain schedule's vectors
 *  along `w` gather one element from each of many rows and come back to a row's next element
 *  only after all of them: a large `w` or rows that share a set of the L1 make every gather
 *  miss. Its loops become [others, r_o, w_o, r_i, w_i], a tile of rows of the input read along
 *  r_i and of rows of the output written along w_i, the loops outside it fused and parallel:
 *  - when neither a native vector's rows of the input nor the tile's rows of the output fill
 *    more than half the ways of a set of the L1, w_i is that vector (vectorized);
 *  - else w_i is scalar: a line of the output where that many rows of the input leave half
 *    the ways of a set free, else `l1_ways` rows, as many as one set holds (measured on
 *    2048 x 2048 float32, rows 8 KB apart: 16-lane vectors 8.5 ms, 8 lanes 6.3, 16 scalar rows
 *    5.1, 8 scalar rows 2.5; on a transpose (2, 0, 1) whose output rows are 256 KB apart and
 *    whose input rows 256 B apart, vectors 7.1 ms, 8 scalar rows 2.9, 16 scalar rows 2.0);
 *  r_i takes as many columns as make the tile, read and written, a quarter of the L1.
 *  Returns false (the schedule as it was) when the block is not one or a step fails.
 */
bool TilePermutation(Schedule& sch, const BlockInfo& info, const std::vector<LoopRV>& loops,
                     const TargetFacts& facts) {
  const BlockNode* b = info.block;
  if (b == nullptr || info.store == nullptr || info.store->indices.empty()) return false;
  if (loops.size() != b->iter_vars.size() || loops.size() < 2) return false;
  for (size_t k = 0; k < b->iter_vars.size(); ++k) {
    if (b->iter_vars[k]->iter_type != IterVarType::kDataPar || info.extents[k] < 1) return false;
  }
  const int w = IterIndex(b, info.store->indices.back());
  if (w != static_cast<int>(loops.size()) - 1) return false;
  int r = -1;
  const BufferLoadNode* load = nullptr;
  std::vector<int64_t> load_strides;  // per iterator, in elements
  for (const BufferLoadNode* l : info.loads) {
    if (l->indices.size() < 2) continue;
    std::vector<int64_t> by_iter = IterStrides(b, l->buffer.get(), l->indices);
    if (by_iter.empty() || by_iter[w] == 0 || by_iter[w] == 1 || by_iter[w] == -1) continue;
    // contiguous along r: the iterator of stride 1, the one of the last index first
    int contiguous = IterIndex(b, l->indices.back());
    if (contiguous < 0 || by_iter[contiguous] != 1) {
      contiguous = -1;
      for (size_t k = 0; k < by_iter.size(); ++k) {
        if (by_iter[k] == 1) contiguous = static_cast<int>(k);
      }
    }
    if (contiguous < 0 || contiguous == w) continue;
    r = contiguous;
    load = l;
    load_strides = std::move(by_iter);
    break;
  }
  if (load == nullptr) return false;
  const int64_t extent_r = info.extents[r], extent_w = info.extents[w];
  const int64_t bytes = std::max(1, info.output_bits / 8);  // bool: a byte
  const int64_t in_bytes = std::max(1, load->buffer->dtype.bits() / 8);
  // Narrower than a line of the input, the plain schedule's gathers touch few lines.
  if (extent_r < kLineBytes / in_bytes || extent_w < 2) return false;
  const int64_t stride_w = std::abs(load_strides[w]) * in_bytes;  // the load's, in bytes
  // The output's stride along r, in bytes.
  const std::vector<int64_t> out_strides =
      IterStrides(b, info.store->buffer.get(), info.store->indices);
  if (out_strides.empty()) return false;
  const int64_t stride_r = std::abs(out_strides[r]) * bytes;
  const int64_t total = Product(sch, loops);
  // The native lanes, or the widest power of two of at least kMinTileLanes below them that
  // divides w: NCHW8c's 8 channels of a block in float32 (native 16) or int8 (native 64) lanes
  // (float32 (1, 64, 112, 112): 8-lane vectors 0.125 ms, scalar tiles 0.285, numpy 0.43).
  // 16-bit (and narrower) float lanes stay native: GCC 12 moves narrower strided vectors of
  // float16 lane by lane (NCHW8c float16: 8 lanes 0.66 ms, scalar tiles 0.41).
  int64_t lanes = facts.VectorLanes(std::max(8, info.output_bits));  // bool: a byte
  auto half = [](const DataType& t) { return t.is_float() && t.bits() <= 16; };
  const bool halves = half(load->buffer->dtype) || half(info.store->buffer->dtype);
  while (!halves && lanes > kMinTileLanes && extent_w % lanes != 0) lanes /= 2;
  const int64_t half_ways = std::max(1, facts.l1_ways / 2);
  // The columns of a tile of `rows` rows: as many as make it, read and written, a quarter of
  // the L1 (a divisor of the extent near that leaves no tail).
  auto columns = [&](int64_t rows) {
    int64_t cap = kLineBytes / in_bytes;
    while (cap * 2 * rows * (in_bytes + bytes) <= facts.l1_bytes / 4) cap *= 2;
    int64_t n = std::min(cap, extent_r);
    const int64_t divisor = LargestDivisor(extent_r, n);
    return divisor * 2 >= n ? divisor : n;
  };
  // Vectors along w where neither the tile's rows of the input nor those of the output crowd a
  // set of the L1.
  const bool vector = lanes > 1 && extent_w % lanes == 0 &&
                      RowsInOneSet(stride_w, lanes, facts) <= half_ways &&
                      RowsInOneSet(stride_r, columns(lanes), facts) <= half_ways;
  // Scalar: a line of the output a row where that many rows of the input leave half the ways
  // of a set free, else as many rows as a set holds.
  const int64_t out_line = kLineBytes / bytes;
  const int64_t scalar_rows =
      RowsInOneSet(stride_w, out_line, facts) <= half_ways ? out_line : facts.l1_ways;
  const int64_t tile_w =
      vector ? lanes : std::min<int64_t>(std::max<int64_t>(1, scalar_rows), extent_w);
  const int64_t tile_r = columns(tile_w);
  const bool parallel = facts.cores > 1 && total >= kParallelMinElements;
  return Try(sch, [&] {
    std::vector<LoopRV> outer;
    for (size_t k = 0; k < loops.size(); ++k) {
      if (static_cast<int>(k) != r && static_cast<int>(k) != w) outer.push_back(loops[k]);
    }
    LoopRV r_i = loops[r], w_i = loops[w];
    std::vector<LoopRV> tiles;
    if (tile_r < extent_r) {
      std::vector<LoopRV> parts = sch.Split(
          loops[r], {schedule::TraceValue::None(), schedule::TraceValue::Int(tile_r)}, true, false);
      tiles.push_back(parts[0]);
      r_i = parts[1];
    }
    if (tile_w < extent_w) {
      std::vector<LoopRV> parts = sch.Split(
          loops[w], {schedule::TraceValue::None(), schedule::TraceValue::Int(tile_w)}, true, false);
      tiles.push_back(parts[0]);
      w_i = parts[1];
    }
    std::vector<LoopRV> order = outer;
    order.insert(order.end(), tiles.begin(), tiles.end());
    order.push_back(r_i);
    order.push_back(w_i);
    sch.Reorder(order);
    if (vector) sch.Vectorize(w_i);
    if (!parallel) return;
    // The parallel loop: the loops outside the tiles and the rows of tiles; the columns of
    // tiles too when that leaves fewer than two iterations a core.
    std::vector<LoopRV> par = outer;
    int64_t par_extent = 1;
    for (const LoopRV& l : outer) par_extent *= LoopExtent(sch, l);
    for (const LoopRV& t : tiles) {
      if (!par.empty() && par_extent >= 2 * facts.cores) break;
      par.push_back(t);
      par_extent *= LoopExtent(sch, t);
    }
    if (par.empty()) return;
    sch.Parallel(par.size() > 1 ? sch.Fuse(par, true) : par[0]);
  });
}

/*!
 * \brief Whether the stores of the block's `total` points should stream past the caches
 *  (`pragma_nontemporal`): an output larger than half the L3, or one written beside inputs
 *  whose bytes read and written together exceed 5/8 of it, so that neither the inputs nor
 *  the output are still cached when the next call or the next kernel comes. Measured with one
 *  thread on Zen 4 (L3 32 MB, arrays on huge pages as numpy's, the output aligned to the
 *  vectors): a float32 copy of 12 MB (24 MB touched) 0.54 -> 0.46 ms streamed, of 10 MB (20
 *  MB) even, of 8 MB (16 MB) 0.25 -> 0.30 ms (slower: both still fit); a float32 compare of
 *  2048^2 into bool (36 MB touched, 16-byte vectors of bools) 1.06 -> 0.85 ms. Vectors that
 *  the output's alignment does not allow to stream are stored as usual (CodeGenHost). The
 *  bytes read: per loaded buffer, the product of the extents of the iterators its indices use
 *  (a broadcast row counts once), at most the buffer's size.
 *  At exactly 5/8 it streams: isnan / isinf / isfinite of 2048^2 float32 (16 MB read, 4 MB of
 *  bools written) 0.33-0.36 -> 0.27-0.30 ms, compares of two 2048^2 int16 or float16 (8 + 8 +
 *  4 MB) 0.41-0.81 -> 0.25-0.60 ms (bench_topi, one thread, load 7-8).
 */
bool StreamsPastCaches(const BlockInfo& info, int64_t total, const TargetFacts& facts) {
  if (total <= 0) return false;
  const int64_t written = total * std::max(8, info.output_bits) / 8;
  if (written > facts.l3_bytes / 2) return true;
  const BlockNode* b = info.block;
  if (b == nullptr || info.extents.size() != b->iter_vars.size()) return false;
  int64_t read = 0;
  std::set<const BufferNode*> seen;
  for (const BufferLoadNode* load : info.loads) {
    const BufferNode* buf = load->buffer.get();
    if (!seen.insert(buf).second || (info.store && buf == info.store->buffer.get())) continue;
    int64_t elements = 1;
    for (size_t k = 0; k < b->iter_vars.size(); ++k) {
      bool used = false;
      for (const Expr& index : load->indices) {
        used = used || UsesVar(index, b->iter_vars[k]->var.get());
      }
      if (!used) continue;
      if (info.extents[k] < 0) return false;
      elements *= info.extents[k];
    }
    int64_t size = 1;
    for (const Expr& extent : buf->shape) {
      const IntImmNode* v = AsPtr<IntImmNode>(extent);
      size = v && size >= 0 ? size * v->value : -1;
    }
    if (size >= 0) elements = std::min(elements, size);
    read += elements * std::max(1, buf->dtype.bits() / 8);
  }
  return read + written >= facts.l3_bytes / 8 * 5;
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

/*! \brief Whether a stream (Streams) combines two byte buffers (8-bit or bool elements)
 *  into bytes: logical_and/or/xor of bools, add, maximum, less of int8. Such a loop
 *  ran fastest in 16-byte vectors on Zen 4 (AVX-512), in the schedule's own loop nest (4096
 *  elements a parallel iteration; 2048^2, 12 MB in the L3, one thread, interleaved in one
 *  process): logical_xor of bools 0.152-0.155 ms in 16-byte vectors, 0.162-0.165 in 32,
 *  0.170-0.176 in 64; add int8 0.150-0.155 / 0.157-0.161 / 0.156-0.160 (hand C of `c = a ^ b`:
 *  0.152 / 0.176 / 0.184, the arrays 16 bytes into a line as numpy's or aligned alike). A copy
 *  or a loop of one input is fastest at the whole width (hand C copy 0.108 / 0.105 / 0.091). */
bool CombinesByteStreams(const BlockInfo& info) {
  if (info.output_bits != 8 || !info.block || info.block->iter_vars.empty()) return false;
  const std::vector<IterVar>& iters = info.block->iter_vars;
  std::set<const BufferNode*> inputs;
  for (const BufferLoadNode* load : info.loads) {
    const DataType t = load->buffer->dtype;
    if (!t.is_bool() && t.bits() != 8) return false;
    // a stream walks memory along the outer iterators too; a row broadcast along them (add
    // broadcast row's B[j]) stays in the L1 and is no stream (32-byte vectors measured better:
    // add broadcast row int8 0.100 ms against 0.150 in 16-byte ones)
    bool streams = iters.size() == 1;
    for (size_t k = 0; k + 1 < iters.size() && !streams; ++k) {
      for (const Expr& index : load->indices) {
        streams = streams || UsesVar(index, iters[k]->var.get());
      }
    }
    if (streams) inputs.insert(load->buffer.get());
  }
  // (two: three byte streams, elemwise_sum of three int8, measured even in one process and
  // 10-20% slower in 16-byte vectors in bench_topi's runs: left at 32)
  return inputs.size() == 2;
}

/*! \brief Whether `value` reads an iterator of `block` other than in the indices of a load. */
bool UsesIteratorsOutsideLoads(const Expr& value, const BlockNode* block) {
  class Finder : public ExprVisitor {
   public:
    explicit Finder(const BlockNode* block) : block_(block) {}
    bool found = false;
    using ExprVisitor::VisitExpr_;
    void VisitExpr_(const BufferLoadNode* op) override {}
    void VisitExpr_(const VarNode* op) override {
      for (const IterVar& iv : block_->iter_vars) found = found || iv->var.get() == op;
    }

   private:
    const BlockNode* block_;
  } finder(block);
  finder.VisitExpr(value);
  return finder.found;
}

/*! \brief Whether `e` only moves data of `bits`-wide elements: loads, constants, casts between
 *  types of that width, bitwise operations (a copy, a fill, bitwise_not). A bool (`bits` 1)
 *  read from a bool buffer into a bool buffer counts: tir.FlattenBuffer writes it as its byte
 *  (flip, repeat, split, broadcast_to of bools are byte copies, as of int8). */
bool MovesData(const Expr& e, int bits) {
  if (AsPtr<IntImmNode>(e) || AsPtr<FloatImmNode>(e)) return true;
  if (auto* load = AsPtr<BufferLoadNode>(e)) return load->buffer->dtype.bits() == bits;
  if (auto* cast = AsPtr<CastNode>(e)) {
    return cast->dtype.bits() == bits && !cast->dtype.is_bool() && MovesData(cast->value, bits);
  }
  if (auto* call = AsPtr<CallNode>(e)) {
    if (!(call->is_op("tir.bitwise_not") || call->is_op("tir.bitwise_and") ||
          call->is_op("tir.bitwise_or") || call->is_op("tir.bitwise_xor"))) {
      return false;
    }
    for (const Expr& a : call->args) {
      if (!MovesData(a, bits)) return false;
    }
    return true;
  }
  return false;
}

/*! \brief Whether the block copies data (MovesData) from a load re-indexed along the outer
 *  iterators whose innermost index still walks the store's row: flip's `A[n - 1 - i, j]`,
 *  repeat's `A[i // 2, j]`, split's `A[i, j + 1024]`, broadcast_to's `A[j]`. Fused with the
 *  loops around it, each vector's address needs a division of the fused index (and the C
 *  compiler cuts such a vector into 16-byte pieces); row by row, the row is one contiguous
 *  copy. */
bool CopiesReindexedRows(const BlockInfo& info) {
  const BufferStoreNode* st = info.store;
  if (!st || st->indices.empty()) return false;
  const int bits = st->buffer->dtype.bits();  // bool: 1, its loads bool too (MovesData)
  if (!MovesData(st->value, bits)) return false;
  const VarNode* inner = info.block->iter_vars.back()->var.get();
  arith::Analyzer ana;
  bool reindexed = false;
  bool ok = true;
  PostOrderVisit(st->value, [&](const ObjectRef& n) {
    auto* load = AsPtr<BufferLoadNode>(n);
    if (load == nullptr || load->indices.empty()) return;
    // the store's indices into a buffer of the store's shape (split's first part reads
    // A[i, j] of a wider A: fused, its rows too are divisions)
    bool same = load->indices.size() == st->indices.size() &&
                load->buffer->shape.size() == st->buffer->shape.size();
    for (size_t k = 0; same && k < load->indices.size(); ++k) {
      same = load->indices[k].get() == st->indices[k].get() &&
             StructuralEqual(load->buffer->shape[k], st->buffer->shape[k]);
    }
    if (same) return;
    reindexed = true;
    for (size_t k = 0; k + 1 < load->indices.size(); ++k) {
      ok = ok && !UsesVar(load->indices[k], inner);
    }
    // the innermost index: the store's plus an offset, or none of the innermost iterator
    const Expr& last = load->indices.back();
    ok = ok && (!UsesVar(last, inner) ||
                !UsesVar(ana.Simplify(SubNode::Make(last, st->indices.back())), inner));
  });
  return reindexed && ok;
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
  // A value computed from the iterators themselves, not only through the indices of its loads
  // (eye's `j - i == k`): fused, each vector recomputed the row and the column from the flat
  // index by a division and a remainder. A copy of re-indexed rows likewise (CopiesReindexedRows).
  if (!straddles && !irregular && !UsesIteratorsOutsideLoads(st->value, b) &&
      !CopiesReindexedRows(info)) {
    return 0;
  }
  for (int64_t l : {lanes, lanes / 2}) {
    if (l >= 4 && n % l == 0 && n >= 2 * l) return l;
  }
  // No width divides the row (eye of 1001, one_hot of depth 1001): the row's vectors and a
  // tail of fewer than `lanes` elements (the split's remainder, a loop of its own after
  // tir.LoopPartition). Fused instead, every lane took a division and a remainder of the flat
  // index (or, with no width dividing the whole, each element did: eye 1001 float32 25x
  // numpy's time, int8 45x).
  if (lanes >= 4 && n >= 2 * lanes) return lanes;
  // A row of bytes shorter than two native vectors that a quarter-width vector of at least 16
  // lanes divides (int8 resize2d nearest 2x of 56 to 112 columns, AVX-512: 64 lanes, 16 divide
  // 112): fused, each 32-byte vector was a gather of one division per lane (1.38 ms, numpy's
  // two gathers 0.45 ms); along the row, 16-byte vectors.
  if (lanes / 4 >= 16 && n % (lanes / 4) == 0 && n >= lanes / 2) return lanes / 4;
  return 0;
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
      case NodeKind::kLE:
        kind = NodeKind::kGE;
        break;
      case NodeKind::kLT:
        kind = NodeKind::kGT;
        break;
      case NodeKind::kGE:
        kind = NodeKind::kLE;
        break;
      case NodeKind::kGT:
        kind = NodeKind::kLT;
        break;
      default:
        return false;
    }
  }
  switch (kind) {
    case NodeKind::kGE:
      box->lo[k] = std::max(box->lo[k], c->value);
      return true;
    case NodeKind::kGT:
      box->lo[k] = std::max(box->lo[k], c->value + 1);
      return true;
    case NodeKind::kLT:
      box->hi[k] = std::min(box->hi[k], c->value);
      return true;
    case NodeKind::kLE:
      box->hi[k] = std::min(box->hi[k], c->value + 1);
      return true;
    default:
      return false;
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

/*! \brief Adds to `cuts` the points where `e`, comparisons of one iterator (`*iter`, -1 until
 *  found) with constants joined by and/or/not, may change value (at c: it may differ at c - 1
 *  and c); false when `e` is not one. */
bool CollectCuts(const Expr& e, const BlockNode* b, int* iter, std::vector<int64_t>* cuts) {
  if (auto* a = AsPtr<AndNode>(e)) {
    return CollectCuts(a->a, b, iter, cuts) && CollectCuts(a->b, b, iter, cuts);
  }
  if (auto* o = AsPtr<OrNode>(e)) {
    return CollectCuts(o->a, b, iter, cuts) && CollectCuts(o->b, b, iter, cuts);
  }
  if (auto* n = AsPtr<NotNode>(e)) return CollectCuts(n->a, b, iter, cuts);
  const auto* bin = AsPtr<BinaryNode>(e);
  if (bin == nullptr || !bin->is_comparison()) return false;
  const bool var_left = AsPtr<VarNode>(bin->a) != nullptr;
  const auto* c = AsPtr<IntImmNode>(var_left ? bin->b : bin->a);
  const int k = IterIndex(b, var_left ? bin->a : bin->b);
  if (c == nullptr || k < 0 || (*iter >= 0 && *iter != k)) return false;
  *iter = k;
  switch (bin->kind) {
    case NodeKind::kEQ:
    case NodeKind::kNE:  // v == c: true on [c, c + 1)
      cuts->push_back(c->value);
      cuts->push_back(c->value + 1);
      return true;
    case NodeKind::kLT:  // v < c, v >= c: true below c or from c; c > v, c <= v the same
    case NodeKind::kGE:
      cuts->push_back(var_left ? c->value : c->value + 1);
      return true;
    case NodeKind::kLE:  // v <= c, v > c: from c + 1; c >= v, c < v: the same as v <= c
    case NodeKind::kGT:
      cuts->push_back(var_left ? c->value + 1 : c->value);
      return true;
    default:
      return false;
  }
}

constexpr size_t kMaxSelectParts = 16;  // parts of a loop cut by SchedulePieces, at most

/*!
 * \brief A choice among loads by an outer iterator (CPU): topi.stack's `select(s == 0, A[..],
 *  select(s == 1, B[..], C[..]))`, a concatenation along an outer axis. Every select or
 *  if_then_else of the stored value tests one iterator `s`, not the innermost, against
 *  constants. The loop of `s` is cut where the tests change (schedule.LoopPartition), so that
 *  in each part the tests are constants and the selects fold away: each part is a copy of one
 *  input, its loops from `s` in fused into vectors; the loops outside `s` fused and parallel
 *  (when `s` is the outermost, the parts' vector loops are). One fused loop evaluated every
 *  select lane by lane, read every input for each element, and built the select's mask at 32
 *  bits for narrow elements (stack int8 0.2x numpy).
 */
bool SchedulePieces(Schedule& sch, const BlockInfo& info, const std::vector<LoopRV>& loops,
                    const TargetFacts& facts) {
  const BlockNode* b = info.block;
  if (b == nullptr || info.store == nullptr || !info.has_select || info.is_reduction) return false;
  const size_t n = loops.size();
  if (n < 2 || b->iter_vars.size() != n) return false;
  for (size_t k = 0; k < n; ++k) {
    if (b->iter_vars[k]->iter_type != IterVarType::kDataPar || info.extents[k] < 1) return false;
    if (LoopExtent(sch, loops[k]) != info.extents[k]) return false;
  }
  int iter = -1;
  std::vector<int64_t> cuts;
  bool ok = true;
  PostOrderVisit(info.store->value, [&](const ObjectRef& node) {
    if (auto* sel = AsPtr<SelectNode>(node)) {
      ok = ok && CollectCuts(sel->condition, b, &iter, &cuts);
    } else if (auto* call = AsPtr<CallNode>(node)) {
      const OpNode* op = AsPtr<OpNode>(call->op);
      if (op != nullptr && op->name == "tir.if_then_else") {
        ok = ok && call->args.size() == 3 && CollectCuts(call->args[0], b, &iter, &cuts);
      }
    }
  });
  if (!ok || iter < 0 || static_cast<size_t>(iter) + 1 >= n) return false;
  const int64_t extent = info.extents[iter];
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  std::vector<schedule::TraceValue> factors;
  int64_t begin = 0;
  for (int64_t c : cuts) {
    if (c <= begin || c >= extent) continue;
    factors.push_back(schedule::TraceValue::Int(c - begin));
    begin = c;
  }
  if (factors.empty() || factors.size() + 1 > kMaxSelectParts) return false;
  const int64_t total = Product(sch, loops);
  const bool parallel = facts.cores > 1 && total >= kParallelMinElements;
  // a copy of one input: 8-bit elements stream faster in narrower vectors (Streams)
  const int64_t lanes = info.output_bits == 8 ? facts.StreamVectorLanes(info.output_bits)
                                              : facts.VectorLanes(info.output_bits);
  const bool nontemporal = total * info.output_bits / 8 > facts.l3_bytes / 2;
  return Try(sch, [&] {
    if (iter > 0) {
      std::vector<LoopRV> head(loops.begin(), loops.begin() + iter);
      LoopRV outer = head.size() > 1 ? sch.Fuse(head, true) : head[0];
      if (parallel) sch.Parallel(outer);
    }
    std::vector<LoopRV> parts = sch.LoopPartition(loops[iter], factors, true);
    for (size_t p = 0; p < parts.size(); ++p) {
      std::vector<BlockRV> blocks = sch.GetChildBlocks(parts[p]);
      if (blocks.size() != 1) throw Error("a part of a select's loop holds several blocks");
      std::vector<LoopRV> own = sch.GetLoops(blocks[0]);
      // the part's loop and those inside it; a part's loop that starts past 0 (fuse refuses
      // it) stays a loop of its own outside the fused ones
      own.erase(own.begin(), own.end() - static_cast<std::ptrdiff_t>(n - iter));
      if (p > 0) own.erase(own.begin());
      const int64_t points = Product(sch, own);
      LoopRV fused = own.size() > 1 ? sch.Fuse(own, true) : own[0];
      int64_t width = lanes;
      while (width >= 4 && points % width != 0) width /= 2;
      if (width < 4 || points < width) {
        if (iter == 0 && parallel) sch.Parallel(fused);
        continue;
      }
      const int64_t chunk = std::max<int64_t>(1, kChunkElements / width);
      if (iter == 0 && parallel && points / width % chunk == 0 && points / width / chunk >= 2) {
        std::vector<LoopRV> split = sch.Split(
            fused,
            {schedule::TraceValue::None(), schedule::TraceValue::Int(chunk),
             schedule::TraceValue::Int(width)},
            true, false);
        sch.Parallel(split[0]);
        sch.Vectorize(split[2]);
        if (nontemporal) {
          sch.Annotate(split[1], "pragma_nontemporal", schedule::TraceValue::Int(1));
        }
        continue;
      }
      std::vector<LoopRV> split = sch.Split(
          fused, {schedule::TraceValue::None(), schedule::TraceValue::Int(width)}, true, false);
      sch.Vectorize(split[1]);
      if (iter == 0 && parallel) {
        sch.Parallel(split[0]);
      } else if (nontemporal) {
        sch.Annotate(split[0], "pragma_nontemporal", schedule::TraceValue::Int(1));
      }
    }
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
  if (!facts.IsGpu() && TilePermutation(sch, info, loops, facts)) return;
  if (!facts.IsGpu() && TileBlockedLayout(sch, info, loops, facts)) return;
  int64_t total = Product(sch, loops);
  if (!facts.IsGpu() && SchedulePadding(sch, info, facts)) return;
  if (!facts.IsGpu() && SchedulePieces(sch, info, loops, facts)) return;
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
          if (StreamsPastCaches(info, total, facts)) {
            sch.Annotate(parts[0], "pragma_nontemporal", schedule::TraceValue::Int(1));
          }
        })) {
      return;
    }
  }
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
          if (StreamsPastCaches(info, total, facts)) {
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
  // A C function a point, reading a region through its address: a loop of calls, worth
  // threads by the elements they read; no vectors (the calls would run lane by lane).
  if (int64_t reads = ElementsReadByAddress(info); reads != 0) {
    if (facts.cores > 1 && (total < 0 || reads < 0 || total * reads >= kParallelMinElements)) {
      Try(sch, [&] { sch.Parallel(fused); });
    }
    return;
  }
  // A block that streams memory takes vectors at most stream_vector_bits wide (256 on AVX-512
  // hosts); exp, tanh and the like keep the full width (their vector routines ran 15-30%
  // slower at half of it), and so do strided reads.
  int64_t lanes = Streams(info) ? facts.StreamVectorLanes(info.output_bits)
                                : facts.VectorLanes(info.output_bits);
  // (where the host's streams are narrower than its vectors, stream_vector_bits: measured there)
  if (facts.stream_vector_bits > 0 && Streams(info) && CombinesByteStreams(info)) {
    lanes = std::min<int64_t>(lanes, kByteStreamBits / 8);
  }
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
      if (StreamsPastCaches(info, total, facts)) {
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
    // No chunk divides the vectors (an odd count): the loop of vectors streams, each thread
    // fencing once at its end (CodeGenHost).
    if (StreamsPastCaches(info, total, facts)) {
      sch.Annotate(parts[0], "pragma_nontemporal", schedule::TraceValue::Int(1));
    }
  });
}

void ScheduleCopy(Schedule& sch, const BlockInfo& info, const TargetFacts& facts) {
  std::vector<LoopRV> loops = sch.GetLoops(info.rv);
  if (loops.empty()) return;
  int64_t total = Product(sch, loops);
  if (facts.IsGpu()) {
    LoopRV fused = loops[0];
    if (loops.size() > 1 && !Try(sch, [&] { fused = sch.Fuse(loops, true); })) return;
    BindThreads(sch, fused, total, facts);
    return;
  }
  if (facts.cores < 2 || total < kParallelMinElements) return;
  // The outer loops fused and parallel; the two innermost stay loops of their own, whose
  // indices the C compiler computes incrementally (fused, each element's indices would be
  // divisions of the fused index).
  std::vector<LoopRV> outer(loops.begin(), loops.end() - std::min<size_t>(2, loops.size() - 1));
  Try(sch, [&] { sch.Parallel(outer.size() > 1 ? sch.Fuse(outer, true) : outer[0]); });
}

bool IsWindowNest(const BlockInfo& info) {
  if (!info.block) return false;
  bool found = false;
  PostOrderVisit(info.block->body,
                 [&](const ObjectRef& n) { found = found || AsPtr<BlockRealizeNode>(n); });
  return found;
}

/*! \brief The lanes of a vector of partial results of the window nest's inner reduction when
 *  its innermost window loop reads memory contiguously (``A[..., start(o) + r]`` and A's other
 *  indices free of r) and the windows are wide (the read axis over the output axis, the mean
 *  window, at least two vectors: adaptive_pool1d of 4096 to 7 has windows of 585 and 586);
 *  0 otherwise. */
int64_t WindowLanes(Schedule& sch, const BlockRV& inner, const TargetFacts& facts) {
  const BlockNode* b = AsPtr<BlockNode>(sch.Get(inner));
  if (!b || !b->init || b->iter_vars.empty()) return 0;
  const IterVarNode* last = b->iter_vars.back().get();
  if (last->iter_type != IterVarType::kCommReduce) return 0;
  const VarNode* r = last->var.get();
  auto* st = AsPtr<BufferStoreNode>(b->body);
  if (!st || st->indices.empty()) return 0;
  int64_t lanes = 0;
  bool ok = true;
  int reads = 0;
  PostOrderVisit(st->value, [&](const ObjectRef& n) {
    auto* load = AsPtr<BufferLoadNode>(n);
    if (!load || load->buffer.get() == st->buffer.get() || !ok) return;
    const size_t rank = load->indices.size();
    for (size_t k = 0; k + 1 < rank; ++k) ok = ok && !UsesVar(load->indices[k], r);
    if (!ok || rank == 0 || rank != st->indices.size()) {
      ok = false;
      return;
    }
    // The innermost index: base + r, the base free of r.
    auto* add = AsPtr<AddNode>(load->indices.back());
    const bool plus_r = add && ((add->b.get() == r && !UsesVar(add->a, r)) ||
                                (add->a.get() == r && !UsesVar(add->b, r)));
    auto n_in = AsConstInt(load->buffer->shape.back());
    auto n_out = AsConstInt(st->buffer->shape.back());
    if (!plus_r || !n_in || !n_out || *n_out <= 0) {
      ok = false;
      return;
    }
    const int64_t l = facts.VectorLanes(st->buffer->dtype.bits());
    if (l < 2 || *n_in / *n_out < 2 * l) {
      ok = false;
      return;
    }
    lanes = l;
    ++reads;
  });
  return ok && reads > 0 ? lanes : 0;
}

/*! \brief The window loop of the nest's inner reduction as vectors of partial results (split
 *  by the lanes, the last vector of a window predicated, rfactor: the partial results of a
 *  window contiguous), combined per window. Scalar, each window was one chain of dependent
 *  steps through memory (adaptive_pool1d max of 8 x 64 x 4096 float32 to 7, AVX-512, one
 *  thread: 6.0 ms; numpy's per-window slices 1.7 ms). */
bool VectorizeWindow(Schedule& sch, const BlockInfo& info, const TargetFacts& facts) {
  std::vector<BlockRV> inner = sch.GetChildBlocks(info.rv);
  if (inner.size() != 1) return false;
  const int64_t lanes = WindowLanes(sch, inner[0], facts);
  if (lanes == 0) return false;
  return Try(sch, [&] {
    const BlockNode* b = AsPtr<BlockNode>(sch.Get(inner[0]));
    const int axis = static_cast<int>(AsPtr<BufferStoreNode>(b->body)->indices.size());
    std::vector<LoopRV> loops = sch.GetLoops(inner[0]);
    auto parts = sch.Split(
        loops.back(), {schedule::TraceValue::None(), schedule::TraceValue::Int(lanes)}, true, false);
    BlockRV rf = sch.RFactor(parts[1], axis);
    std::vector<LoopRV> rf_loops = sch.GetLoops(rf);
    sch.Vectorize(rf_loops.back());
    DeferDecomposeReduction(rf, rf_loops[rf_loops.size() - 2]);
  });
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
  // A vectorized window keeps the innermost output loop out of the fused one: the windows'
  // vector loops end in a predicated vector, which tir.LoopPartition splits off per window
  // size; over a fused loop of every output that made one copy of the body per output.
  if (!facts.IsGpu() && spatial.size() > 1 && VectorizeWindow(sch, info, facts)) {
    spatial.pop_back();
  }
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
