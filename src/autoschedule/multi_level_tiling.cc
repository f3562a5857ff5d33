// Rule "multi-level tiling": a matmul-like block (C[...] += X * Y where X does not depend on
// C's innermost iterator j and Y does) gets the structure of a BLAS micro-kernel:
//
//   CPU:  batch..., j_o, i_o (parallel outer) | reductions | i_i (MR rows, unrolled),
//         j_i (NR columns = vectors, unrolled, innermost vectorized)
//   with C accumulated in a local MR x NR tile (registers), Y packed into NR-wide panels
//   contiguous along the reduction when it does not fit the L2 cache, and the init decomposed
//   out of the reduction. MR and NR come from the vector width and the register count. The
//   search space also offers, for float32 2-D products on AVX2 and AVX-512, the tile as a
//   micro-kernel intrinsic over packed panels, whole reduction per call or k-blocked in BLIS's
//   loop nest.
//
//   CUDA: float16 matmuls on tensor cores (tensor_core.cc); otherwise 16 x 16 threads per block of
//   C, the X and Y tiles of each reduction step staged in shared memory; shapes that do not divide
//   get one thread per element of C.
#include <algorithm>
#include <cstdlib>

#include "rules.h"
#include "tessera/arith/analyzer.h"
#include "tessera/arith/int_solver.h"
#include "tessera/ir/expr.h"
#include "tessera/ir/expr_ops.h"
#include "tessera/schedule/tensor_intrin.h"

namespace tessera {
namespace autoschedule {
namespace {

using schedule::TraceValue;

constexpr int64_t kReductionUnroll = 4;
// Products of at most this many rows (all batches) with a transposed Y: row dot products (TileCpu).
constexpr int64_t kFewRows = 8;
// 2-D products of 2 to this many rows with a transposed Y: blocks of row dot products (TileCpu).
constexpr int64_t kDotRows = 16;

/*! \brief Whether `extent` iterations dealt to `cores` threads in whole iterations keep at
 *  least 95% of the cores' turns busy (7 on 2 cores: 7 of 8, no; 14 on 2: yes; 98 on 4: 98 of
 *  100, yes). */
bool CoresBalanced(int64_t extent, int64_t cores) {
  if (cores <= 1) return true;
  const int64_t turns = (extent + cores - 1) / cores * cores;
  return extent * 20 >= turns * 19;
}

Expr StripCast(Expr e) {
  while (auto* c = AsPtr<CastNode>(e)) e = c->value;
  return e;
}

/*! \brief The iterators of a matmul-like block, by position in the block's iterator list. */
struct MatmulShape {
  int i = -1, j = -1;
  // Y reads i only as i // i_group (a grouped convolution's input channel `o // G * Cg + rc`;
  // 1: Y reads i itself): X's rows reuse one Y within a group of i_group rows, so row tiles
  // stay inside a group.
  int64_t i_group = 0;
  // X reads j only as j // j_group (a grouped convolution with the channels innermost, NHWC or
  // NWC: the input channel `o // G * Cg + rc`; 0: X does not read j): X is the same across a
  // group of j_group columns, so column tiles stay inside a group.
  int64_t j_group = 0;
  int i2 = -1;  // a batch iterator Y depends on and X does not (conv: the output row)
  std::vector<int> batch, reduce;
  Expr x, y;  // the factors: x broadcast along j, y varying along j
};

/*! \brief The divisor G when `e` uses `v` only in `v // G` (one constant G > 1), else 0. */
int64_t OnlyFloorDivided(const Expr& e, const VarNode* v) {
  int64_t uses = 0, divided = 0, group = 0;
  bool same = true;
  PostOrderVisit(e, [&](const ObjectRef& n) {
    if (n.get() == v) ++uses;
    if (auto* d = AsPtr<FloorDivNode>(n)) {
      auto c = AsConstInt(d->b);
      if (d->a.get() == v && c && *c > 1) {
        ++divided;
        same = same && (group == 0 || group == *c);
        group = *c;
      }
    }
  });
  return uses > 0 && uses == divided && same ? group : 0;
}

/*! \brief The iterator each index of a store reads, or null: `v` itself, or, for a pair of
 *  indices `v // E, v % E` over a last dimension of E (two output axes fused into one iterator
 *  by FuseContiguousAxes), `v` at the second of the two and null at the first. */
std::vector<const VarNode*> IndexVars(const BufferStoreNode* st) {
  const size_t n = st->indices.size();
  std::vector<const VarNode*> out(n, nullptr);
  for (size_t k = 0; k < n; ++k) {
    if (auto* v = AsPtr<VarNode>(st->indices[k])) {
      out[k] = v;
      continue;
    }
    auto* d = AsPtr<FloorDivNode>(st->indices[k]);
    auto* m = k + 1 < n ? AsPtr<FloorModNode>(st->indices[k + 1]) : nullptr;
    if (d == nullptr || m == nullptr) continue;
    auto* v = AsPtr<VarNode>(d->a);
    auto cd = AsConstInt(d->b), cm = AsConstInt(m->b), dim = AsConstInt(st->buffer->shape[k + 1]);
    if (v && m->a.get() == v && cd && cm && dim && *cd == *cm && *dim == *cd) {
      out[k + 1] = v;
      ++k;
    }
  }
  return out;
}

/*! \brief The local register tile of the block's output: its cache. Where two of the
 *  output's axes are fused into one iterator (IndexVars), a cache indexed by that iterator
 *  (reindex_cache_write): a tile of the fused axis is then one interval of the cache, which
 *  the write-back copies out as one loop (a cache of the output's own shape would cover
 *  whole rows of the two axes). `dims` receives the cache's dimensions. */
BlockRV CacheWriteLocal(Schedule& sch, const BlockInfo& info, size_t* dims) {
  const BufferStoreNode* st = info.store;
  const std::vector<const VarNode*> vars = IndexVars(st);
  *dims = st->indices.size();
  bool pair = false, plain = true;
  for (size_t k = 0; k < vars.size(); ++k) {
    if (vars[k] == nullptr) {
      pair = pair || (k + 1 < vars.size() && vars[k + 1] && !AsPtr<VarNode>(st->indices[k + 1]));
      plain = plain && (k + 1 < vars.size() && vars[k + 1] && !AsPtr<VarNode>(st->indices[k + 1]));
    }
  }
  if (!pair || !plain) return sch.CacheWrite(info.rv, 0, "local", {});
  const BlockNode* b = info.block;
  std::vector<Var> from;
  for (const IterVar& iv : b->iter_vars)
    from.push_back(VarNode::Make(iv->var->name, iv->var->dtype));
  std::vector<Expr> to;
  for (const VarNode* v : vars) {
    if (v == nullptr) continue;
    for (size_t q = 0; q < b->iter_vars.size(); ++q) {
      if (b->iter_vars[q]->var.get() == v) to.push_back(from[q]);
    }
  }
  *dims = to.size();
  return sch.ReindexCacheWrite(info.rv, 0, "local", schedule::IndexMap{from, to});
}

std::optional<MatmulShape> MatchMatmul(const BlockInfo& info) {
  const BlockNode* b = info.block;
  const BufferStoreNode* st = info.store;
  if (!info.is_reduction || st == nullptr || st->indices.empty()) return std::nullopt;
  auto* add = AsPtr<AddNode>(st->value);
  if (add == nullptr) return std::nullopt;
  auto is_self = [&](const Expr& e) {
    auto* l = AsPtr<BufferLoadNode>(e);
    return l && l->buffer.get() == st->buffer.get();
  };
  Expr product = is_self(add->a) ? add->b : is_self(add->b) ? add->a : Expr();
  if (!product) return std::nullopt;
  auto* mul = AsPtr<MulNode>(StripCast(product));
  if (mul == nullptr) return std::nullopt;
  MatmulShape m;
  const size_t n = b->iter_vars.size();
  for (int64_t e : info.extents) {
    if (e <= 0) return std::nullopt;
  }
  auto var_of = [&](int k) { return b->iter_vars[k]->var.get(); };
  const std::vector<const VarNode*> index_vars = IndexVars(st);
  const VarNode* last = index_vars.back();
  for (size_t k = 0; k < n; ++k) {
    if (last && var_of(k) == last && b->iter_vars[k]->iter_type == IterVarType::kDataPar) m.j = k;
  }
  if (m.j < 0) return std::nullopt;
  bool a_j = UsesVar(mul->a, var_of(m.j)), b_j = UsesVar(mul->b, var_of(m.j));
  if (!a_j && !b_j) return std::nullopt;
  if (a_j && b_j) {
    // Both read j: a grouped j when one factor reads it only as j // G, whole groups of j.
    const int64_t ga = OnlyFloorDivided(mul->a, var_of(m.j));
    const int64_t gb = OnlyFloorDivided(mul->b, var_of(m.j));
    if ((ga > 1) == (gb > 1)) return std::nullopt;
    m.j_group = ga > 1 ? ga : gb;
    if (info.extents[m.j] % m.j_group != 0) return std::nullopt;
    a_j = gb > 1;  // the factor that reads j itself is Y
  }
  m.x = a_j ? mul->b : mul->a;
  m.y = a_j ? mul->a : mul->b;
  // i: the spatial iterator of C that X depends on and Y does not, innermost in C's indices.
  for (const VarNode* v : index_vars) {
    for (size_t k = 0; v && k < n; ++k) {
      if (var_of(k) == v && static_cast<int>(k) != m.j &&
          b->iter_vars[k]->iter_type == IterVarType::kDataPar && UsesVar(m.x, v) &&
          !UsesVar(m.y, v)) {
        m.i = k;
      }
    }
  }
  // (A grouped j takes a plain i only: the tile is grouped along one axis.)
  if (m.i < 0 && m.j_group > 0) return std::nullopt;
  // Else a grouped i: Y reads it only as i // G, or as i itself (G = 1).
  for (const VarNode* v : index_vars) {
    for (size_t k = 0; m.i < 0 && v && k < n; ++k) {
      if (var_of(k) == v && static_cast<int>(k) != m.j &&
          b->iter_vars[k]->iter_type == IterVarType::kDataPar && UsesVar(m.x, v)) {
        int64_t g = OnlyFloorDivided(m.y, v);
        if (g > 1 && info.extents[k] % g != 0) continue;
        // Y reads i itself (a depthwise convolution's channel): tiles of one row, whose X
        // values (the channel's window) are broadcast across the tile's MY x NR outputs.
        if (g == 0) g = 1;
        m.i = k;
        m.i_group = g;
      }
    }
  }
  if (m.i < 0) return std::nullopt;
  bool y_reduces = false;
  for (size_t k = 0; k < n; ++k) {
    if (static_cast<int>(k) == m.i || static_cast<int>(k) == m.j) continue;
    if (b->iter_vars[k]->iter_type == IterVarType::kCommReduce) {
      m.reduce.push_back(k);
      y_reduces = y_reduces || UsesVar(m.y, var_of(k));
    } else if (b->iter_vars[k]->iter_type == IterVarType::kDataPar) {
      m.batch.push_back(k);
    } else {
      return std::nullopt;
    }
  }
  if (m.reduce.empty() || !y_reduces) return std::nullopt;
  // i2: X (broadcast) is reused across it too, so the register tile may take a few of it
  // (conv2d NCHW: rows of the output share the weights).
  for (const VarNode* v : index_vars) {
    for (int k : m.batch) {
      if (v && var_of(k) == v && UsesVar(m.y, v) && !UsesVar(m.x, v)) m.i2 = k;
    }
  }
  return m;
}

/*! \brief The distance, in elements, between the elements `load` reads at successive values
 *  of `v` (its flat index linear in `v` with a constant coefficient, the buffer's shape
 *  constant), or nothing. */
std::optional<int64_t> FlatStride(const BufferLoadNode* load, const Var& v) {
  if (load == nullptr || load->indices.size() != load->buffer->shape.size()) return std::nullopt;
  int64_t stride = 0, inner = 1;
  for (size_t d = load->indices.size(); d-- > 0;) {
    std::vector<Expr> lin = arith::DetectLinearEquation(load->indices[d], {v});
    if (lin.size() != 2) return std::nullopt;
    auto coeff = AsConstInt(lin[0]);
    auto extent = AsConstInt(load->buffer->shape[d]);
    if (!coeff || !extent) return std::nullopt;
    stride += *coeff * inner;
    inner *= *extent;
  }
  return stride;
}

/*! \brief The register tile MR x MY x NR (MY rows of i2, 1 without one) that maximises the FMAs
 *  per load (MR broadcasts and MY * NR / lanes vector loads per reduction step give
 *  MR * MY * NR / lanes FMAs) while the accumulators, the loaded vectors and a broadcast fit
 *  the vector registers. NR and MY divide their loops; MR may leave a partial last tile of
 *  rows when `partial_rows` (a 6 x 16 tile of 12 accumulators for 1024 rows: 170 tiles and one
 *  of 4 rows, which tir.LoopPartition gives a loop of its own, without tests). */
struct RegisterTile {
  int64_t mr = 1, my = 1, nr = 0;
};

/*! \brief The register tiles that fit, best first: the first is the analytical choice. */
std::vector<RegisterTile> RegisterTiles(int64_t ei, int64_t ei2, int64_t ej, int64_t lanes,
                                        int regs, bool partial_rows, bool partial_cols = false,
                                        int64_t row_group = 0, int64_t col_group = 0,
                                        bool masked_rows = false, double* best = nullptr) {
  std::vector<std::pair<double, RegisterTile>> scored;
  auto per_load = [](int64_t mr, int64_t my, int64_t nv) {
    return static_cast<double>(mr * my * nv) / static_cast<double>(my * nv + mr);
  };
  for (int64_t nv = 1; nv <= 8; ++nv) {
    // With `partial_cols`, a last column tile of fewer than NR columns (a loop of its own after
    // tir.LoopPartition) after at least one full tile.
    const int64_t cols_rest = ej % (nv * lanes);
    // (Or one tile of all the columns, its last vector predicated, where they are fewer than
    // the tile's and more than its other vectors: a 3x3 conv2d's 14 or 7 output columns.)
    // Where all the columns fit one tile of at most 8 vectors, that masked tile is the only
    // partial one: a full tile and a partitioned rest measured far slower there (conv2d 3x3
    // NCHW 128->128 28x28, AVX-512 float32, one thread: 24 + 4 columns 13.7 GFLOP/s, one
    // masked tile of 28 81.4).
    const bool one_tile = ej < nv * lanes && ej > (nv - 1) * lanes;
    const bool fits_one_tile = ej < 8 * lanes;
    if (cols_rest != 0 &&
        (!partial_cols || (fits_one_tile ? !one_tile : ej < nv * lanes)))
      continue;
    // Grouped columns: the tile's columns in one group.
    if (col_group > 0 && col_group % (nv * lanes) != 0) continue;
    // The share of the columns' vector lanes that compute (the partial tile's do not all).
    const double cols_used = static_cast<double>(ej) /
                             static_cast<double>((ej + nv * lanes - 1) / (nv * lanes) * nv * lanes);
    for (int64_t mr = 1; mr <= std::min<int64_t>(ei, 16); ++mr) {
      const int64_t rest = ei % mr;
      // Grouped rows: the tile's rows in one group.
      if (row_group > 0 && row_group % mr != 0) continue;
      // A partial tile only where allowed and rows of full tiles are most of the loop (the
      // rest runs as one smaller tile); also with a partial column tile, tir.LoopPartition
      // splitting the row loop (parallel, each thread its tile) and the column loop inside on
      // their own terms of the tiles' tests (matmul 127 x 255 x 129 on Zen 4, one thread: 127
      // prime rows in 1-row tiles 0.175 ms, 5 x 80 tiles and their tails 0.088).
      // (The one masked tile of all the columns takes partial rows only with `masked_rows`,
      // where masked vectors are one instruction: 1x1 conv2d NCHW 7x7 512 -> 2048, 8-lane tiles
      // of 2 rows (dividing 2048) -> 3 rows, one thread, AVX-512: 41 -> 62 GFLOP/s; int8 matmul
      // 127x255x129's masked tile, its lanes a loop each, 0.106 -> 0.62 ms with 9 rows instead
      // of 1.)
      const bool masked_tile = cols_rest != 0 && fits_one_tile && one_tile;
      if (rest != 0 && (!partial_rows || ei < 8 * mr || (masked_tile && !masked_rows))) continue;
      for (int64_t my = 1; my <= std::min<int64_t>(ei2, 8); ++my) {
        if (ei2 % my != 0 || mr * my * nv + my * nv + 1 > regs) continue;
        // The rows in full tiles at the tile's rate, the rest at the rate of its smaller tile.
        double score = (per_load(mr, my, nv) * static_cast<double>(ei - rest) +
                        (rest ? per_load(rest, my, nv) * static_cast<double>(rest) : 0.0)) /
                       static_cast<double>(ei) * cols_used;
        // A partial column tile: the full tiles' columns at the tile's rate, the rest at the
        // rate of the vectors the partitioned tail keeps (its vectors past the last column
        // are dropped), times the share of those vectors' lanes that compute. (Scored as a
        // whole tile, 129 columns took a 1 x 16 tile, one accumulator: the 1 x 128 tile with
        // a one-column tail runs matmul 127x255x129 at 0.30 -> 0.175 ms on Zen 4.)
        if (cols_rest != 0) {
          const int64_t rest_nv = (cols_rest + lanes - 1) / lanes;
          const double lane_use =
              static_cast<double>(ej) / static_cast<double>((ej + lanes - 1) / lanes * lanes);
          score = (per_load(mr, my, nv) * static_cast<double>(ej - cols_rest) +
                   per_load(mr, my, rest_nv) * static_cast<double>(cols_rest)) /
                  static_cast<double>(ej) * lane_use;
        }
        scored.push_back({score, RegisterTile{mr, my, nv * lanes}});
      }
    }
  }
  // Best score first; among equal scores the one found first (fewest vectors, then rows).
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first + 1e-9; });
  std::vector<RegisterTile> out;
  for (const auto& [score, tile] : scored) out.push_back(tile);
  if (best != nullptr) *best = scored.empty() ? 0.0 : scored.front().first;
  return out;
}

/*! \brief The indices 0 .. n-1 (the candidates of a choice among n alternatives). */
std::vector<int64_t> Indices(size_t n) {
  std::vector<int64_t> out(n);
  for (size_t k = 0; k < n; ++k) out[k] = static_cast<int64_t>(k);
  return out;
}

/*! \brief Whether `load` is a 2-D [u, v] read indexed by exactly the iterators `u` and `v`. */
bool Reads2D(const BufferLoadNode* load, const VarNode* u, const VarNode* v) {
  if (load == nullptr || load->indices.size() != 2) return false;
  return AsPtr<VarNode>(load->indices[0]) == u && AsPtr<VarNode>(load->indices[1]) == v;
}

/*! \brief Pack the read `index` of `block` into panels: [u, v] -> [v // w, u, v % w] when
 *  `v_last` (Y: columns in panels contiguous along the reduction), else [u // w, v, u % w]
 *  (X: rows in panels contiguous along the reduction). Returns the packing block. */
BlockRV PackPanels(Schedule& sch, const BlockRV& block, int index, DataType t, int64_t w,
                   bool v_last, std::optional<DataType> pad = std::nullopt) {
  BlockRV packed = sch.CacheRead(block, index, "global", {});
  Var u = VarNode::Make("u", t), v = VarNode::Make("v", t);
  Expr w_e = IntImmNode::Make(t, w);
  schedule::IndexMap map =
      v_last
          ? schedule::IndexMap{{u, v}, {FloorDivNode::Make(v, w_e), u, FloorModNode::Make(v, w_e)}}
          : schedule::IndexMap{{u, v}, {FloorDivNode::Make(u, w_e), v, FloorModNode::Make(u, w_e)}};
  // Rows that do not fill the last panel: its missing rows are zeros (never read by the
  // partial tile, whose rows are bounded by the predicate).
  std::optional<schedule::IndexMap> pad_value;
  if (pad) {
    pad_value =
        schedule::IndexMap{{VarNode::Make("p", t), VarNode::Make("q", t), VarNode::Make("r", t)},
                           {MakeConst(*pad, 0.0)}};
  }
  sch.TransformLayout(packed, "write", 0, map, pad_value);
  return packed;
}

/*! \brief The read index of the block for the buffer of `load`, or -1. */
int ReadIndex(const BlockNode* b, const BufferNode* buf) {
  for (size_t k = 0; k < b->reads.size(); ++k) {
    if (b->reads[k]->buffer.get() == buf) return static_cast<int>(k);
  }
  return -1;
}

/*! \brief Whether the micro-kernel intrinsic can compute the block: C[i, j] = C[i, j] +
 *  X[i, r] * Y[r, j] (or Y[j, r]) in float32 with one reduction and no batch, on a host of
 *  8 float lanes (AVX2) or 16 (AVX-512), with a tile of whole vectors whose accumulators,
 *  loaded vectors and a broadcast fit the 16 ymm or 32 zmm registers. */
bool MicroKernelFits(const BlockInfo& info, const MatmulShape& m, const RegisterTile& tile,
                     int64_t lanes, const BufferLoadNode* x_load, const BufferLoadNode* y_load,
                     const VarNode* r_var, const VarNode* i_var, const VarNode* j_var) {
  const DataType f32 = DataType::Float(32);
  if ((lanes != 8 && lanes != 16) || tile.my != 1 || !m.batch.empty() || r_var == nullptr ||
      !x_load || !y_load)
    return false;
  // The register budget of the kernel's assembly (target/micro_kernel.h): 16 ymm registers on
  // an AVX2 host, 32 zmm registers on an AVX-512 host.
  const int64_t regs = lanes == 16 ? 32 : 16;
  if (tile.nr % lanes != 0 || tile.mr * (tile.nr / lanes) + tile.nr / lanes + 1 > regs)
    return false;
  const BufferStoreNode* st = info.store;
  if (st->buffer->dtype != f32 || x_load->dtype != f32 || y_load->dtype != f32) return false;
  if (st->indices.size() != 2 || AsPtr<VarNode>(st->indices[0]) != i_var ||
      AsPtr<VarNode>(st->indices[1]) != j_var)
    return false;
  // The description's order: C + X * Y.
  auto* add = AsPtr<AddNode>(st->value);
  auto* self = add ? AsPtr<BufferLoadNode>(add->a) : nullptr;
  auto* mul = add ? AsPtr<MulNode>(add->b) : nullptr;
  if (!self || self->buffer.get() != st->buffer.get() || !mul || mul->a.get() != x_load ||
      mul->b.get() != y_load)
    return false;
  if (!Reads2D(self, i_var, j_var)) return false;
  return Reads2D(x_load, i_var, r_var) &&
         (Reads2D(y_load, r_var, j_var) || Reads2D(y_load, j_var, r_var));
}

/*! \brief The 2-D product with the micro-kernel intrinsic: rows padded to a multiple of MR,
 *  X packed into MR-row panels and Y into NR-wide panels (both k-major), the C tile in a local
 *  buffer; columns outside (parallel: each thread its own panels of Y, packed inside the column
 *  loop), rows inside, the reduction and the tile tensorized. */
/*! \brief Loops of the copy of X into panels of MR rows: panel, reduction, row (rows read
 *  contiguously, written MR apart within a panel); the panel loop parallel when asked. */
void PackRowPanels(Schedule& sch, const BlockRV& packed_x, int64_t mr, bool parallel) {
  std::vector<LoopRV> ploops = sch.GetLoops(packed_x);
  std::vector<LoopRV> pis =
      sch.Split(ploops[0], {TraceValue::None(), TraceValue::Int(mr)}, true, false);
  sch.Reorder({pis[0], ploops[1], pis[1]});
  if (parallel) sch.Parallel(pis[0]);
  sch.Unroll(pis[1]);
}

/*! \brief The operands of the micro-kernel packed into panels, Y's (NR wide, k-major unless
 *  `y_transposed`) and X's (MR rows): rows first padded to a multiple of MR (pad_einsum) where
 *  they are not one, the zero rows of the padding then going straight into X's panels. The
 *  names of the new blocks go to `taken`. */
struct PackedOperands {
  BlockRV y, x;
};
PackedOperands PadAndPackOperands(Schedule& sch, const BlockInfo& info, const MatmulShape& m,
                                  int64_t mr, int64_t nr, bool y_transposed,
                                  std::vector<std::string>* taken) {
  auto* x_load = AsPtr<BufferLoadNode>(m.x);
  auto* y_load = AsPtr<BufferLoadNode>(m.y);
  const BufferNode* y_buf = y_load->buffer.get();
  int x_index = -1, y_index = -1;
  const int64_t ei = info.extents[m.i];
  if (ei % mr != 0) {
    std::vector<int64_t> padded = info.extents;
    padded[m.i] = (ei + mr - 1) / mr * mr;
    sch.PadEinsum(info.rv, padded);
  }
  const BlockNode* b = AsPtr<BlockNode>(sch.Get(info.rv));
  for (size_t k = 0; k < b->reads.size(); ++k) {
    const BufferNode* buf = b->reads[k]->buffer.get();
    if (buf == y_buf) {
      y_index = static_cast<int>(k);
    } else if (buf != info.store->buffer.get() && buf != b->writes[0]->buffer.get()) {
      x_index = static_cast<int>(k);
    }
  }
  if (x_index < 0 || y_index < 0) throw Error("micro-kernel: operands not found", Span());
  BlockRV packed = PackPanels(sch, info.rv, y_index, y_load->indices[0]->dtype, nr, !y_transposed);
  taken->push_back(AsPtr<BlockNode>(sch.Get(packed))->name_hint);
  BlockRV packed_x = PackPanels(sch, info.rv, x_index, x_load->indices[0]->dtype, mr, false);
  taken->push_back(AsPtr<BlockNode>(sch.Get(packed_x))->name_hint);
  if (ei % mr != 0) {
    for (const BlockRV& p : sch.GetProducers(packed_x)) sch.ComputeInline(p);
  }
  return {packed, packed_x};
}

bool TileMicroKernel(Schedule& sch, const BlockInfo& info, const MatmulShape& m,
                     const RegisterTile& tile, const PrimFunc& func, const TargetFacts& facts,
                     bool y_transposed, int64_t flops, std::vector<std::string>* taken) {
  const int64_t mr = tile.mr, nr = tile.nr;
  const int64_t ek = info.extents[m.reduce[0]];
  BlockRV block = info.rv;
  PackedOperands panels = PadAndPackOperands(sch, info, m, mr, nr, y_transposed, taken);
  BlockRV packed = panels.y, packed_x = panels.x;
  BlockRV write_back = sch.CacheWrite(block, 0, "local", {});
  taken->push_back(AsPtr<BlockNode>(sch.Get(write_back))->name_hint);
  std::vector<LoopRV> loops = sch.GetLoops(block);
  std::vector<LoopRV> is =
      sch.Split(loops[m.i], {TraceValue::None(), TraceValue::Int(mr)}, true, false);
  std::vector<LoopRV> js =
      sch.Split(loops[m.j], {TraceValue::None(), TraceValue::Int(nr)}, true, false);
  const LoopRV reduce = loops[m.reduce[0]];
  sch.Reorder({js[0], is[0], reduce, is[1], js[1]});
  BlockRV at_tile = AttachEpilogue(sch, write_back, is[0], func, facts);
  taken->push_back(AsPtr<BlockNode>(sch.Get(at_tile))->name_hint);
  const bool parallel =
      facts.cores > 1 && flops >= (int64_t{1} << 21) && LoopExtent(sch, js[0]) > 1;
  if (parallel) sch.Parallel(js[0]);
  sch.ComputeAt(packed, js[0], false, -1);
  if (!y_transposed) sch.Vectorize(sch.GetLoops(packed).back());
  PackRowPanels(sch, packed_x, mr, parallel);
  DeferDecomposeReduction(block, reduce);
  DeferTensorize(reduce,
                 schedule::MicroKernelIntrinName(static_cast<int>(mr), static_cast<int>(nr), ek));
  return true;
}

/*! \brief The blocks of the BLIS-style loop nest around the micro-kernel: KC reduction
 *  elements per k block, MC / MR row panels per row block, NC / NR column panels per column
 *  block. */
struct KernelBlocks {
  int64_t kc = 0, mc_panels = 0, nc_panels = 0;
};

/*! \brief The divisors of `n`, ascending. */
std::vector<int64_t> Divisors(int64_t n) {
  std::vector<int64_t> out;
  for (int64_t d = 1; d <= n; ++d) {
    if (n % d == 0) out.push_back(d);
  }
  return out;
}

/*! \brief The index of the candidate closest to `target` (the first of equals). */
size_t Closest(const std::vector<int64_t>& cands, int64_t target) {
  size_t best = 0;
  for (size_t k = 1; k < cands.size(); ++k) {
    if (std::abs(cands[k] - target) < std::abs(cands[best] - target)) best = k;
  }
  return best;
}

/*! \brief The k-blocked product with the micro-kernel (the loop nest of BLIS):
 *
 *    jc (NC columns; parallel)        C[:, jc block] = 0 (the reduction's init)
 *      pc (KC of the reduction)       pack Y's KC x NC block into NR-wide panels
 *        ic (MC rows)                 pack X's MC x KC block into MR-row panels
 *          jr (NR) / ir (MR)          tessera_ukr_f32_<MR>x<NR>_k<KC>_global
 *      (copy of the padded rows or the epilogue of the jc block)
 *
 *  The intrinsic accumulates into the tile of C itself (row stride of C), so each k block adds
 *  to what the ones before left there: the panels of one k block stay in L1 (B's KC x NR) and
 *  L2 (A's MC x KC) while C streams from the outer caches once per k block. Rows are padded to a
 *  multiple of MR; KC divides the reduction, MC / MR the row panels and NC / NR the column
 *  panels (the choices offer only those), so that no tile is partial. */
bool TileBlockedMicroKernel(Schedule& sch, const BlockInfo& info, const MatmulShape& m,
                            const RegisterTile& tile, const PrimFunc& func,
                            const TargetFacts& facts, bool y_transposed, int64_t flops,
                            const KernelBlocks& kb, std::vector<std::string>* taken) {
  const int64_t mr = tile.mr, nr = tile.nr;
  BlockRV block = info.rv;
  PackedOperands panels = PadAndPackOperands(sch, info, m, mr, nr, y_transposed, taken);
  BlockRV packed = panels.y, packed_x = panels.x;
  std::vector<LoopRV> loops = sch.GetLoops(block);
  auto I = [](int64_t v) { return TraceValue::Int(v); };
  std::vector<LoopRV> is =
      sch.Split(loops[m.i], {TraceValue::None(), I(kb.mc_panels), I(mr)}, true, false);
  std::vector<LoopRV> js =
      sch.Split(loops[m.j], {TraceValue::None(), I(kb.nc_panels), I(nr)}, true, false);
  std::vector<LoopRV> ks = sch.Split(loops[m.reduce[0]], {TraceValue::None(), I(kb.kc)}, true, false);
  sch.Reorder({js[0], ks[0], is[0], js[1], is[1], ks[1], is[2], js[2]});
  const bool parallel =
      facts.cores > 1 && flops >= (int64_t{1} << 21) && LoopExtent(sch, js[0]) > 1;
  if (parallel) sch.Parallel(js[0]);
  // The padded rows' copy or the epilogue: once per column block, after its last k block.
  BlockInfo written = AnalyzeBlock(sch, block, func);
  if (!written.writes_param) {
    std::vector<BlockRV> consumers = sch.GetConsumers(block);
    if (consumers.size() == 1) {
      BlockRV out = consumers[0];
      if (Try(sch, [&] { sch.ReverseComputeAt(out, js[0], true, -1); })) {
        taken->push_back(AsPtr<BlockNode>(sch.Get(out))->name_hint);
        std::vector<LoopRV> ol = sch.GetLoops(out);
        Try(sch, [&] { sch.Vectorize(ol.back()); });
      }
    }
  }
  // Y's KC x NC block into its panels: panel, reduction, column in the panel (vectors).
  sch.ComputeAt(packed, ks[0], false, -1);
  {
    std::vector<LoopRV> pl = sch.GetLoops(packed);
    const size_t n = pl.size();
    if (!y_transposed) {
      std::vector<LoopRV> pjs = sch.Split(pl[n - 1], {TraceValue::None(), I(nr)}, true, false);
      sch.Reorder({pjs[0], pl[n - 2], pjs[1]});
      sch.Vectorize(pjs[1]);
    }
  }
  // X's MC x KC block into its panels: panel, reduction, row (unrolled).
  sch.ComputeAt(packed_x, is[0], false, -1);
  {
    std::vector<LoopRV> pl = sch.GetLoops(packed_x);
    const size_t n = pl.size();
    std::vector<LoopRV> pis = sch.Split(pl[n - 2], {TraceValue::None(), I(mr)}, true, false);
    sch.Reorder({pis[0], pl[n - 1], pis[1]});
    sch.Unroll(pis[1]);
  }
  // The zero fill of C's column block (before its first k block): rows outside, the block's
  // NC columns of a row one vectorized loop, so that it stores whole rows of C contiguously
  // (the decomposition leaves the loops of the nest: row block, column panel, row panel, row,
  // column, i.e. 16 floats per row at a time down the rows).
  DeferDecomposeReduction(block, ks[0], [](Schedule& s, const BlockRV& init) {
    std::vector<LoopRV> il = s.GetLoops(init);
    const size_t n = il.size();
    if (n < 5) return;
    s.Reorder({il[n - 3], il[n - 2], il[n - 4]});
    s.Vectorize(s.Fuse({il[n - 4], il[n - 1]}, true));
  });
  DeferTensorize(ks[1], schedule::MicroKernelIntrinName(static_cast<int>(mr),
                                                        static_cast<int>(nr), kb.kc, true));
  return true;
}

/*! \brief A 2-D product of few rows with Y read as [j, r] (dense: X @ Y^T) as blocks of row dot
 *  products:
 *
 *    j_o (J outputs; parallel) | i_o (I rows) | r_o | i_i, j_i (unrolled), r_i (lanes, vectors)
 *    then per output its vector of partial sums added lane by lane
 *
 *  C[i, j] = sum_r X[i, r] * Y[j, r], both operands contiguous along r: each step loads I
 *  vectors of X and J of Y for I x J vector FMAs into I x J accumulators (rfactor), no copy of Y
 *  (the tiled rule packs all of Y into panels, a transposing copy that few rows do not pay
 *  back), Y's J rows reused by the I rows while they stay in L1, and the I x J chains of lane
 *  additions that end the outputs independent of each other. I = 2 for an even number of rows,
 *  else 1; J = 8 (16 accumulators; 4 or 2 where 8 does not divide the columns). Returns false
 *  (nothing scheduled) where the reduction is no multiple of the vector. */
bool TileRowDotProducts(Schedule& sch, const BlockInfo& info, const MatmulShape& m,
                        const TargetFacts& facts, int64_t lanes, std::vector<std::string>* taken) {
  const int64_t ei = info.extents[m.i], ej = info.extents[m.j], ek = info.extents[m.reduce[0]];
  if (ek % lanes != 0 || ek < 2 * lanes) return false;
  // Not where each output's chain of lanes - 1 additions outweighs its vector steps (int8's 64
  // lanes over a reduction of 768: 12 steps, 63 additions; dense 2 x 768 -> 1000 int8 0.045 ->
  // 0.079 ms; the row-reduction rule folds its vectors first).
  if (ek / lanes < lanes - 1) return false;
  const int64_t rows = ei % 2 == 0 ? 2 : 1;
  int64_t outputs = 1;
  for (int64_t jj : {8, 4, 2}) {
    if (ej % jj == 0 && rows * jj * 2 <= facts.vector_registers) {
      outputs = jj;
      break;
    }
  }
  BlockRV block = info.rv;
  return Try(sch, [&] {
    std::vector<LoopRV> loops = sch.GetLoops(block);
    if (loops.size() != 3) throw Error("row dot products: not a 2-D product", Span());
    auto I = [](int64_t v) { return TraceValue::Int(v); };
    std::vector<LoopRV> is = sch.Split(loops[m.i], {TraceValue::None(), I(rows)}, true, false);
    std::vector<LoopRV> js = sch.Split(loops[m.j], {TraceValue::None(), I(outputs)}, true, false);
    std::vector<LoopRV> ks =
        sch.Split(loops[m.reduce[0]], {TraceValue::None(), I(lanes)}, true, false);
    sch.Reorder({js[0], is[0], ks[0], is[1], js[1], ks[1]});
    const BlockNode* b = AsPtr<BlockNode>(sch.Get(block));
    BlockRV rf = sch.RFactor(ks[1], static_cast<int>(b->writes[0]->region.size()));
    taken->push_back(AsPtr<BlockNode>(sch.Get(rf))->name_hint);
    std::vector<LoopRV> rl = sch.GetLoops(rf);  // j_o, i_o, r_o, i_i, j_i, r_i
    if (rl.size() != 6) throw Error("row dot products: unexpected loops", Span());
    sch.Unroll(rl[3]);
    sch.Unroll(rl[4]);
    sch.Vectorize(rl[5]);
    // The lanes of the I x J outputs' vectors added at the row block, the outputs innermost (the
    // chains of lane additions interleaved).
    sch.ReverseComputeAt(block, rl[1], false, -1);
    const int64_t flops = 2 * ei * ej * ek;
    if (facts.cores > 1 && flops >= (int64_t{1} << 21) && LoopExtent(sch, rl[0]) > 1) {
      sch.Parallel(rl[0]);
    }
    DeferDecomposeReduction(rf, rl[2]);
  });
}

bool TileCpu(Schedule& sch, const BlockInfo& info, const MatmulShape& m, const PrimFunc& func,
             const TargetFacts& facts, std::vector<std::string>* taken) {
  const BlockNode* b = info.block;
  int64_t lanes = facts.VectorLanes(info.output_bits);
  if (lanes < 2) return false;
  int64_t ei2 = m.i2 >= 0 ? info.extents[m.i2] : 1;
  bool batched = false;
  for (int k : m.batch) batched = batched || (k != m.i2 && info.extents[k] > 1);
  // A product of few rows with Y read as [j, r] (dense at batch 1..8: X @ Y^T) is left to the
  // row-reduction rule (a dot product per output, vectors along the contiguous reduction of
  // both operands): the rules below would pack Y into panels, a copy of all of Y per call that
  // so few rows do not pay back. Measured on AMD Zen 4 (AVX-512), one thread, thread CPU time,
  // numpy in the same rounds, dense [M, 768] x [1000, 768]^T, tiled+packed -> row dot products:
  // M = 1 0.518 -> 0.050 ms, 2 0.53 -> 0.11, 4 0.55 -> 0.16, 8 0.61 -> 0.43; M = 16 (768 ->
  // 3072) equal.
  // A 2-D product of 2 to kDotRows rows that writes its output itself (no epilogue to attach)
  // takes blocks of row dot products here instead (TileRowDotProducts; same conditions, float32,
  // one dot product per output -> 2 x 8 blocks: M = 2 0.110 -> 0.057 ms, 3 0.141 -> 0.104, 8
  // 0.372 -> 0.194; M = 16, 768 -> 3072, packed tiles 3.00 -> 1.47 ms, numpy 2.1; float64 M = 16
  // 4.81 -> 2.74, numpy 2.89).
  {
    auto* y_read = AsPtr<BufferLoadNode>(StripCast(m.y));
    const VarNode* r = m.reduce.size() == 1 ? b->iter_vars[m.reduce[0]]->var.get() : nullptr;
    int64_t rows = info.extents[m.i] * ei2;
    for (int k : m.batch) rows *= k != m.i2 ? info.extents[k] : 1;
    const bool transposed = r && Reads2D(y_read, b->iter_vars[m.j]->var.get(), r);
    if (transposed && rows >= 2 && rows <= kDotRows && m.batch.empty() && ei2 == 1 &&
        info.writes_param) {
      if (TileRowDotProducts(sch, info, m, facts, lanes, taken)) return true;
    }
    if (transposed && rows <= kFewRows) return false;
  }
  // Partial row tiles (a 6 x 16 tile of 12 accumulators for 128 rows: 21 tiles and one of 2
  // rows, which tir.LoopPartition gives a loop of its own, without tests, also when the rows are
  // outside the columns). For a batched product only where the reduction is no longer than a row
  // of Y: measured on AVX2 (AMD EPYC), one thread, thread CPU time, numpy in the same rounds,
  // batch x (M, K) x (K, N), GFLOP/s of the 4 x 16 tile -> the 6 x 16 tile:
  //   8 x (128, 64) x (64, 128)    48 -> 78     384 x (128, 64) x (64, 128)   38 -> 46
  //   64 x (128, 128) x (128, 128)  +7%         64 x (128, 32) x (32, 128)     +6%
  //   384 x (128, 128) x (128, 64)  62 -> 49    64 x (128, 256) x (256, 64)    equal
  // (why the longer reduction loses is not established; the rule follows the measurements).
  int64_t reduction = 1;
  for (int k : m.reduce) reduction *= info.extents[k];
  const bool partial_rows = ei2 == 1 && (!batched || reduction <= info.extents[m.j]);
  std::vector<RegisterTile> tiles =
      RegisterTiles(info.extents[m.i], ei2, info.extents[m.j], lanes, facts.vector_registers,
                    partial_rows, false, m.i_group, m.j_group);
  // Columns that are no multiple of the full vector take half-width vectors, which the ISA
  // also has (the 56 columns of a 3x3 conv2d on 56x56 outputs on an AVX-512 host: 16 lanes do
  // not divide them, 8 do; without this the block was left untiled, 0.6 GFLOP/s where the
  // 8-lane tiles give 100+).
  // (Not below 8 lanes where the columns fit one tile of at most 8 vectors of 8 lanes: the
  // one masked tile below computes them in fewer, wider vectors; a 3x3 conv2d on 28x28 outputs,
  // 128 channels, one thread, AVX-512: 4-lane tiles 57 GFLOP/s, two 16-lane vectors 71.)
  // (Where masked vectors are one instruction: float32 on AVX-512, see the host code
  // generator's first-lanes loads and stores.)
  const bool one_tile_isa =
      facts.isa == "avx512" && info.store->buffer->dtype == DataType::Float(32);
  const bool one_tile = one_tile_isa && info.extents[m.j] < 8 * std::min<int64_t>(lanes, 8);
  // (Nor below 8 lanes where the columns hold 8 full vectors or more: those take full vectors
  // and a partial last tile below, most of the columns at the full width; a 1x1 conv2d NCHW's
  // 196 columns of 14x14 outputs, 256 -> 1024 channels, one thread, AVX-512: 4-lane tiles of
  // 3 x 28 57.6 GFLOP/s, 16-lane tiles and a tail of 4 columns 90+.)
  const int64_t full_lanes = lanes;
  // (Where the partial tile's last vector is masked, one_tile_isa: a scalar tail loop was
  // slower than the narrow vectors, 36.6 against 57.6 GFLOP/s there.)
  const bool wide_cols = one_tile_isa && info.extents[m.j] >= 8 * full_lanes;
  // (Y read as [j, r], dense's X @ Y^T, is packed into panels of whole columns, which a partial
  // column tile has none of: its columns keep vectors that divide them.)
  const bool reads_y_transposed =
      m.reduce.size() == 1 &&
      Reads2D(AsPtr<BufferLoadNode>(StripCast(m.y)), b->iter_vars[m.j]->var.get(),
              b->iter_vars[m.reduce[0]]->var.get());
  double narrow_score = 0.0;
  while (tiles.empty() && lanes > (one_tile || wide_cols ? 8 : 4) && lanes % 2 == 0) {
    lanes /= 2;
    tiles = RegisterTiles(info.extents[m.i], ei2, info.extents[m.j], lanes, facts.vector_registers,
                          partial_rows, false, m.i_group, m.j_group, false, &narrow_score);
  }
  // Columns that no vector width divides (the 1022 outputs of a conv1d of width 3 over 1024):
  // full vectors and a partial last tile of columns, whose predicate tir.LoopPartition gives a
  // loop of its own (without it the block was left to the row-reduction rule: 0.5 GFLOP/s).
  auto partial_tiles = [&](int64_t* tile_lanes, double* score) {
    int64_t l = full_lanes;
    // Columns fewer than a vector (the 7 of a conv2d on 7x7 outputs): the narrowest vector of
    // at least 4 lanes that holds them, so that most of its lanes compute; masked tiles of
    // 16-lane vectors take 8 (measured on Zen 4, one thread, 3x3 conv2d, 16 accumulators
    // either way: 28x28 outputs 71 -> 80 GFLOP/s, 14x14 70 -> 81).
    while (l > 4 && l % 2 == 0 && info.extents[m.j] <= l / 2) l /= 2;
    // (Only for tiles that also take rows of i2, as those convolutions' do: a tile of rows of i
    // alone holds few of them beside 7 vectors of 8 lanes, 3 x 56 against 6 x 64 for a 1x1
    // conv2d NCHW's 49 fused columns of 7x7 outputs, 512 -> 2048 channels, one thread,
    // AVX-512: 62 -> 102 GFLOP/s.)
    if (l > 8 && one_tile && ei2 > 1) l = 8;
    *tile_lanes = l;
    return RegisterTiles(info.extents[m.i], ei2, info.extents[m.j], l, facts.vector_registers,
                         partial_rows, true, m.i_group, m.j_group, one_tile_isa, score);
  };
  bool partial_cols = false;
  if (tiles.empty()) {
    double score = 0.0;
    tiles = partial_tiles(&lanes, &score);
    partial_cols = true;
  } else if (lanes < full_lanes && m.i2 < 0 && !reads_y_transposed) {
    // A plain product (no second reused iterator, as a convolution's output rows) whose columns
    // only narrower vectors divide (matmul 100 x 100 x 100 on AVX-512: 100 = 25 x 4): full-width
    // vectors with a partial column tile where their FMAs per load, times the lanes each FMA
    // computes, are more (100 columns: a 5 x 20 tile of 4-lane vectors scores 2.5 x 4, a 3 x 112
    // tile of 16-lane vectors, its last masked, 2.1 x 100 / 112 x 16; 0.038 -> 0.027 ms, Zen 4,
    // one thread).
    // Only where the partial tile's vectors compute: one tile of all the columns, its last
    // vector masked (float32 on AVX-512), or where the narrower vectors are below 128 bits
    // (int8's 4 lanes: 32 bits; int8 matmul 100^3 0.470 -> 0.034 ms); a partial tile after full
    // ones has a scalar tail loop (float64 and int32 matmul 100^3: 8-lane tiles and a 4-column
    // tail 0.069 / 0.081 ms, 4-lane tiles 0.038 / 0.052).
    double score = 0.0;
    int64_t wide = full_lanes;
    std::vector<RegisterTile> wide_tiles = partial_tiles(&wide, &score);
    const bool masked_one = one_tile_isa && !wide_tiles.empty() &&
                            info.extents[m.j] < wide_tiles[0].nr;
    const bool narrow_small = lanes * info.output_bits < 128;
    if (!wide_tiles.empty() && (masked_one || narrow_small) &&
        score * static_cast<double>(wide) > narrow_score * static_cast<double>(lanes)) {
      tiles = wide_tiles;
      lanes = wide;
      partial_cols = true;
    }
  }
  if (tiles.empty()) return false;
  // The choices (made before any primitive runs, see Choose): the register tile ...
  tiles.resize(std::min<size_t>(tiles.size(), 12));
  const RegisterTile tile = tiles[Choose(sch, Indices(tiles.size()), 0)];
  const int64_t mr = tile.mr, my = tile.my, nr = tile.nr;
  int64_t flops = 2;
  for (int64_t e : info.extents) flops *= e;
  // ... Y packed into NR-wide panels contiguous along the reduction: chosen when Y is a 2-D
  // [r, j] input larger than the L1 cache and X has rows enough to pay for the copy, so that
  // the panel of one j_o is read contiguously once per i_o instead of as rows strided across
  // memory (measured on AVX2, one thread: 256^3 72 -> 84 GFLOP/s, 128x1024x128 22 -> 46) ...
  auto* y_load = AsPtr<BufferLoadNode>(StripCast(m.y));
  auto* x_load = AsPtr<BufferLoadNode>(StripCast(m.x));
  const VarNode* r_var = m.reduce.size() == 1 ? b->iter_vars[m.reduce[0]]->var.get() : nullptr;
  const VarNode* i_var = b->iter_vars[m.i]->var.get();
  const VarNode* j_var = b->iter_vars[m.j]->var.get();
  bool pack = false, pack_x = false;
  // Y read as [j, r] (dense: X @ Y^T): unpacked, a vector of j would be a gather, so the rules
  // always pack it (the space keeps the other choice).
  const bool y_transposed = r_var && Reads2D(y_load, j_var, r_var);
  // (Panels of whole NR columns: none with a partial column tile.)
  if (r_var && !partial_cols &&
      (y_transposed || (Reads2D(y_load, r_var, j_var) && info.extents[m.j] > nr))) {
    int64_t bytes = info.extents[m.reduce[0]] * info.extents[m.j] * (y_load->dtype.bits() / 8);
    bool analytical = y_transposed || (bytes > facts.l1_bytes && info.extents[m.i] >= 64);
    pack = Choose(sch, {0, 1}, analytical ? 1 : 0) == 1;
  }
  // ... X packed into MR-row panels contiguous along the reduction (one stream of broadcasts
  // instead of MR rows), not by the rules' own choice ...
  // With a partial last tile (1024 rows in tiles of 6) the last panel is padded with zeros.
  const bool pad_x = info.extents[m.i] % mr != 0;
  if (r_var && my == 1 && !partial_cols && Reads2D(x_load, i_var, r_var) &&
      info.extents[m.i] > mr) {
    pack_x = Choose(sch, {0, 1}, 0) == 1;
  }
  // ... the order of the two tile loops: columns outside by the rules' choice (Y's panel stays
  // in cache while the rows pass), rows outside for a batched product (X's MR rows stay in L1
  // while the columns of a batch's small Y pass: batch_matmul of 128x128x64, 64^3 and 256^3
  // measured 23-36% faster on AVX2, one thread) ...
  // With a partial column tile, rows outside too by the rules' choice: the parallel loop keeps
  // the C tile's allocation, so tir.LoopPartition leaves it whole, and a partial tile of the
  // outer columns kept its predicate in every tile, scalar code (matmul 127x255x129, columns
  // outside: 2.6 ms; rows outside, the column tail a loop of its own: 0.30 ms, Zen 4).
  // (Not for one masked tile of all the columns, which has no tail to partition: conv2d 3x3
  // NCHW 256->256 14x14 with its rows outside 52.5 GFLOP/s, columns outside 83, one thread.)
  const bool tail_tile = partial_cols && info.extents[m.j] > nr;
  const bool rows_outside = Choose(sch, {0, 1}, (batched && !pack) || tail_tile ? 1 : 0) == 1;
  // ... and the unrolling of the innermost reduction loop (4 by the rules' choice: fewer loop
  // branches and address updates; a short loop such as a 3x3 window unrolled whole).
  const int64_t inner_extent = info.extents[m.reduce.back()];
  int64_t unroll = 0;  // 0: the whole loop
  if (inner_extent > 2 * kReductionUnroll) {
    std::vector<int64_t> factors{1};
    for (int64_t f : {2, 4, 8, 16}) {
      if (inner_extent % f == 0) factors.push_back(f);
    }
    auto preferred = std::find(factors.begin(), factors.end(), kReductionUnroll);
    size_t at = preferred == factors.end() ? 0 : preferred - factors.begin();
    unroll = Choose(sch, factors, at);
  }
  // ... and, for a 2-D product with the columns outside, the column panels each row tile
  // passes over (1 by the rules' choice): T panels per pass keep the MR rows of X in L1 for T
  // tiles, so X streams from the outer caches (or memory) 1 / T times as often, while the T
  // packed panels of Y (T x K x NR elements) stay in L2; the parallel loop runs over blocks of
  // T panels (at least one block per core).
  int64_t col_block = 1;
  const int64_t panels = info.extents[m.j] / nr;
  if (!rows_outside && m.batch.empty() && panels >= 4 && !partial_cols) {
    std::vector<int64_t> blocks{1};
    for (int64_t t : {2, 4, 8}) {
      if (panels % t == 0 && panels / t >= std::max<int64_t>(2, facts.cores)) blocks.push_back(t);
    }
    col_block = Choose(sch, blocks, 0);
  }
  // ... and the micro-kernel of a float32 2-D product on a host of 8-lane (AVX2) or 16-lane
  // (AVX-512: tiles of up to 32 zmm registers, e.g. 14 x 32 or 6 x 64) vectors: the
  // loops above (vector C that the C compiler schedules) or the register-tile intrinsic
  // tessera_ukr_f32_<MR>x<NR>_k<K> (schedule/tensor_intrin.h: inline assembly that keeps the
  // tile in registers over the whole reduction) over both operands packed, the rows padded to
  // a multiple of MR (pad_einsum; the padded rows are neither read nor written back).
  // The third alternative, "blocked intrinsic": the intrinsic accumulating into C over k blocks
  // in BLIS's loop nest (TileBlockedMicroKernel), its KC, MC and NC chosen next.
  const bool ukr_fits = (facts.isa == "avx2" || facts.isa == "avx512") && !partial_cols &&
                        MicroKernelFits(info, m, tile, lanes, x_load, y_load, r_var, i_var, j_var);
  const int64_t ukr = ukr_fits ? Choose(sch, {0, 1, 2}, 0) : 0;
  if (ukr == 1) {
    return Try(
        sch, [&] { TileMicroKernel(sch, info, m, tile, func, facts, y_transposed, flops, taken); });
  }
  if (ukr == 2) {
    KernelBlocks kb;
    // KC: divisors of the reduction from 128 to 512 and the whole reduction; 512 by choice:
    // fewer passes of C through the caches (one per k block) outweigh B's KC x NR panel
    // outgrowing L1. Measured on AMD EPYC Zen 4, matmul 1024^3, one thread, numpy interleaved
    // (9 rounds, medians): KC 256 -> 512, 6x16 (AVX2 body) 101.8 -> 103.5 GFLOP/s, 4x16 (AVX2)
    // 98.6 -> 100.7, 8x32 (AVX-512) 104.0 -> 106.5, 6x64 (AVX-512) 101.9 -> 103.4.
    const int64_t ek = info.extents[m.reduce[0]];
    std::vector<int64_t> kcs;
    for (int64_t d : Divisors(ek)) {
      if ((d >= 128 && d <= 512) || d == ek) kcs.push_back(d);
    }
    kb.kc = Choose(sch, kcs, Closest(kcs, 512));
    // MC: row blocks of whole MR-row panels (of the rows padded to a multiple of MR) from 48 to
    // 384 rows and all rows; about 144 by choice (A's MC x KC block in L2).
    const int64_t row_panels = (info.extents[m.i] + mr - 1) / mr;
    std::vector<int64_t> mcs;
    for (int64_t d : Divisors(row_panels)) {
      if ((d * mr >= 48 && d * mr <= 384) || d == row_panels) mcs.push_back(d);
    }
    kb.mc_panels = Choose(sch, mcs, Closest(mcs, 144 / mr));
    // NC: column blocks of whole NR-wide panels, at least one per core when parallel (each
    // thread its own column blocks, packing its own B); by choice the widest.
    const int64_t col_panels = info.extents[m.j] / nr;
    const int64_t min_blocks = facts.cores > 1 && flops >= (int64_t{1} << 21) ? facts.cores : 1;
    std::vector<int64_t> ncs;
    for (int64_t d : Divisors(col_panels)) {
      if (d * nr >= 64 && col_panels / d >= min_blocks) ncs.push_back(d);
    }
    if (ncs.empty()) ncs.push_back(1);
    kb.nc_panels = Choose(sch, ncs, ncs.size() - 1);
    return Try(sch, [&] {
      TileBlockedMicroKernel(sch, info, m, tile, func, facts, y_transposed, flops, kb, taken);
    });
  }
  // A 2-D product with the columns outside packs each panel at its column loop (see below).
  const bool pack_at_columns = pack && !rows_outside && m.batch.empty();
  const int y_index = y_load ? ReadIndex(b, y_load->buffer.get()) : -1;
  const int x_index = x_load ? ReadIndex(b, x_load->buffer.get()) : -1;
  const int64_t y_stride =
      pack || y_index < 0 ? 0 : InnermostStride(b, y_load, b->iter_vars[m.j]->var);
  BlockRV block = info.rv;
  return Try(sch, [&] {
    BlockRV packed, packed_x, phases;
    if (pack) {
      packed = PackPanels(sch, block, y_index, y_load->indices[0]->dtype, nr, !y_transposed);
      taken->push_back(AsPtr<BlockNode>(sch.Get(packed))->name_hint);
    }
    if (pack_x) {
      packed_x = PackPanels(sch, block, x_index, x_load->indices[0]->dtype, mr, false,
                            pad_x ? std::optional<DataType>(x_load->dtype) : std::nullopt);
      taken->push_back(AsPtr<BlockNode>(sch.Get(packed_x))->name_hint);
    }
    // Y read every s-th element along the columns (a convolution of stride s): its vectors
    // would be gathers, so Y is read through a copy in s phases of its innermost axis, whose
    // columns are contiguous (phase_layout.cc). Measured on Zen 4, one thread, conv2d 3x3
    // NCHW stride 2, 8-lane masked tiles: see bench/RESULTS.md, session 20, s20b.
    if (y_stride > 1) {
      if (std::optional<BlockRV> copy = ReadInPhases(sch, block, y_index, y_load, y_stride)) {
        phases = *copy;
        taken->push_back(AsPtr<BlockNode>(sch.Get(*copy))->name_hint);
      }
    }
    std::vector<LoopRV> loops = sch.GetLoops(block);
    size_t out_dims = 0;
    BlockRV write_back = CacheWriteLocal(sch, info, &out_dims);
    taken->push_back(AsPtr<BlockNode>(sch.Get(write_back))->name_hint);
    // One tile of fewer columns than its vectors (below): the rows of the local tile padded to
    // whole vectors, which then load and store unmasked.
    if (info.extents[m.j] < nr && out_dims >= 2) {
      sch.StorageAlign(block, 0, static_cast<int>(out_dims) - 2, static_cast<int>(nr), 0);
    }
    std::vector<LoopRV> is =
        sch.Split(loops[m.i], {TraceValue::None(), TraceValue::Int(mr)}, true, false);
    std::vector<LoopRV> js =
        sch.Split(loops[m.j], {TraceValue::None(), TraceValue::Int(nr)}, true, false);
    std::vector<LoopRV> jv =
        sch.Split(js[1], {TraceValue::None(), TraceValue::Int(lanes)}, true, false);
    LoopRV columns = js[0], columns_in_block;  // blocks of col_block panels, panels in a block
    if (col_block > 1) {
      std::vector<LoopRV> jb =
          sch.Split(js[0], {TraceValue::None(), TraceValue::Int(col_block)}, true, false);
      columns = jb[0];
      columns_in_block = jb[1];
    }
    // The outer loops: the parallel one first, so that inside the OpenMP region the C compiler
    // knows the values of the loops outside the tile (unit batch loops become constants and the
    // tile's offsets stay constants: the tile lives in registers).
    // Batch iterators along which X's reads stay inside one cache line (a transposed
    // convolution's stride phases, each reading its own taps of the same kernel line) go
    // inside the tile loops, right outside the reduction: the phases of one tile read each
    // line of X while it is in L1 / L2, instead of each phase streaming all of X again (conv2d
    // transpose 4x4 stride 2 14->28 256->128, kernel 2 MB: 3.40 -> 2.97 ms, Zen 4, one thread;
    // 3.16 -> 2.78 in another run).
    // Only where X outgrows the L2 cache (with X in L2 the phases outside measured as fast or
    // faster: kernel 1 MB, float64 128->64 28->56, 5.4 ms outside, 6.2 inside; 16 KB, grouped
    // 32->32 g4, 0.26 / 0.29 ms).
    std::vector<int> line_batch;
    if (x_load != nullptr) {
      const int64_t elem_bytes = std::max(1, x_load->dtype.bytes());
      int64_t x_bytes = elem_bytes;
      for (const Expr& d : x_load->buffer->shape) {
        auto e = AsConstInt(d);
        x_bytes = e ? x_bytes * *e : 0;
      }
      int64_t span = 0;
      for (int k : m.batch) {
        if (x_bytes <= facts.l2_bytes) break;
        if (k == m.i2 || info.extents[k] <= 1) continue;
        std::optional<int64_t> st = FlatStride(x_load, b->iter_vars[k]->var);
        if (!st || *st == 0) continue;
        const int64_t reach = (*st < 0 ? -*st : *st) * (info.extents[k] - 1) * elem_bytes;
        if (span + reach < 64) {
          span += reach;
          line_batch.push_back(k);
        }
      }
    }
    auto in_line = [&](int k) {
      return std::find(line_batch.begin(), line_batch.end(), k) != line_batch.end();
    };
    LoopRV rows;  // the MY rows of i2 in the tile
    std::vector<LoopRV> outer;
    for (int k : m.batch) {
      if (in_line(k)) continue;
      if (k == m.i2 && my > 1) {
        std::vector<LoopRV> i2s =
            sch.Split(loops[k], {TraceValue::None(), TraceValue::Int(my)}, true, false);
        outer.push_back(i2s[0]);
        rows = i2s[1];
      } else {
        outer.push_back(loops[k]);
      }
    }
    outer.push_back(rows_outside ? is[0] : columns);
    bool parallel = facts.cores > 1 && flops >= (int64_t{1} << 21);
    int par = -1;
    for (size_t k = 0; k < outer.size() && parallel; ++k) {
      if (LoopExtent(sch, outer[k]) > 1) {
        par = static_cast<int>(k);
        break;
      }
    }
    if (par > 0) std::rotate(outer.begin(), outer.begin() + par, outer.begin() + par + 1);
    // The parallel loop's iterations are split among the cores in whole iterations: 7 rows of
    // tiles on 2 cores run as 4 + 3 (the call takes 4 / 3.5 of the balanced time), a batch of
    // 2 on 4 cores keeps 2 idle. While fewer than 95% of the cores' iterations would be busy,
    // the next outer loop is fused into the parallel one (the outer loops are data-parallel;
    // each fused iteration still owns whole tiles of C).
    // (Not with phases inside the tile loops (line_batch) while the parallel loop alone gives
    // each core two iterations or more: the divisions of a fused index then sat in the address
    // arithmetic of the phases' inner loops, and the C compiler spilled the integer registers:
    // the conv2d transpose above 4.3-4.9 ms fused, 2.9-3.4 not, one thread.)
    size_t fused = par >= 0 ? 1 : 0;
    if (par >= 0) {
      int64_t extent = LoopExtent(sch, outer[0]);
      const bool keep_whole = !line_batch.empty() && extent >= 2 * facts.cores;
      while (!keep_whole && fused < outer.size() && !CoresBalanced(extent, facts.cores)) {
        extent *= LoopExtent(sch, outer[fused]);
        ++fused;
      }
    }
    std::vector<LoopRV> order = outer;
    order.push_back(rows_outside ? js[0] : is[0]);
    if (columns_in_block) order.push_back(columns_in_block);
    for (int k : line_batch) order.push_back(loops[k]);
    // The innermost of the tile loops: the C tile is written back (and the epilogue runs) there.
    const LoopRV tile_loop = order.back();
    std::vector<LoopRV> reduce;
    for (int k : m.reduce) reduce.push_back(loops[k]);
    LoopRV unrolled, unrolled_outer;
    if (unroll == 0) {
      unrolled = reduce.back();
      // A window of few taps (a 2x2 kernel, a transposed convolution's 2x2 taps per phase)
      // unrolled whole, both loops: the loop around 2 taps costs as much as the taps (conv2d
      // NCHW 2x2 256->128 14x14, tile 4 x 2 x 14: 65.7 -> 90.9 GFLOP/s, Zen 4, one thread).
      // Not a 3x3 window (9 taps), which the rules leave as it was.
      const int64_t next_extent =
          reduce.size() >= 2 ? info.extents[m.reduce[m.reduce.size() - 2]] : 0;
      if (inner_extent > 1 && next_extent > 1 &&
          inner_extent * next_extent <= 2 * kReductionUnroll) {
        unrolled_outer = reduce[reduce.size() - 2];
      }
    } else if (unroll > 1) {
      std::vector<LoopRV> ks =
          sch.Split(reduce.back(), {TraceValue::None(), TraceValue::Int(unroll)}, true, false);
      reduce.back() = ks[0];
      reduce.push_back(ks[1]);
      unrolled = ks[1];
    }
    order.insert(order.end(), reduce.begin(), reduce.end());
    order.push_back(is[1]);
    if (rows) order.push_back(rows);
    order.push_back(jv[0]);
    order.push_back(jv[1]);
    sch.Reorder(order);
    BlockRV at_tile = AttachEpilogue(sch, write_back, tile_loop, func, facts);
    taken->push_back(AsPtr<BlockNode>(sch.Get(at_tile))->name_hint);
    sch.Vectorize(jv[1]);
    // One tile of fewer columns than its vectors: the last vector's lanes masked
    // (tir.VectorizeLoop), not a scalar loop.
    // Also the partial last tile of full vectors and a tail (after tir.LoopPartition a loop of
    // its own) where masked vectors are one instruction (float32 on AVX-512, see `one_tile`):
    // its last vector masked instead of a scalar loop with a branch per column (a 1x1 conv2d
    // NCHW of 196 columns as 12 vectors and 4 columns: the 4 columns' scalar loop took a third
    // of the time). Not a tail of one column: one scalar FMA a step either way, and the scalar
    // accumulator stays in a register where the masked vector's goes through the local tile
    // (matmul 127x255x129 float32: 0.175 -> 0.188 ms masked).
    if (info.extents[m.j] < nr || (tail_tile && one_tile_isa && info.extents[m.j] % nr > 1))
      sch.Annotate(jv[1], "tessera.mask_tail", TraceValue::Int(1));
    sch.Unroll(jv[0]);
    sch.Unroll(is[1]);
    if (rows) sch.Unroll(rows);
    if (unrolled) sch.Unroll(unrolled);
    if (unrolled_outer) sch.Unroll(unrolled_outer);
    if (par >= 0) {
      std::vector<LoopRV> head(order.begin(), order.begin() + fused);
      sch.Parallel(head.size() > 1 ? sch.Fuse(head, true) : head[0]);
    }
    if (pack && pack_at_columns) {
      // Each column panel packed inside the column loop, right before the rows use it: the
      // panel is written into the cache it is read from, and a parallel column loop packs
      // its own panels (one OpenMP region instead of two). Measured on AVX2, one thread,
      // thread CPU time, old and new in one process (GFLOP/s): matmul 512^3 73.4 -> 75.4 and
      // 70.4 -> 74.8, dense 512^3 (the transposing copy) 69.2 -> 78.4 and 58.9 -> 59.9,
      // matmul 1024^3 59.8 -> 61.7, dense 1024^3 60.1 -> 61.4.
      sch.ComputeAt(packed, columns, false, -1);
      if (!y_transposed) sch.Vectorize(sch.GetLoops(packed).back());
    } else if (pack && !y_transposed) {
      std::vector<LoopRV> ploops = sch.GetLoops(packed);
      std::vector<LoopRV> pjs =
          sch.Split(ploops[1], {TraceValue::None(), TraceValue::Int(nr)}, true, false);
      sch.Reorder({pjs[0], ploops[0], pjs[1]});
      if (parallel) sch.Parallel(pjs[0]);
      sch.Vectorize(pjs[1]);
    } else if (pack) {
      // Y^T: rows of Y read contiguously, each written NR apart into its panel.
      std::vector<LoopRV> ploops = sch.GetLoops(packed);
      std::vector<LoopRV> pjs =
          sch.Split(ploops[0], {TraceValue::None(), TraceValue::Int(nr)}, true, false);
      if (parallel) sch.Parallel(pjs[0]);
    }
    if (pack_x && pad_x) {
      // The padded layout's loops are already panel, reduction, row.
      std::vector<LoopRV> ploops = sch.GetLoops(packed_x);
      if (parallel) sch.Parallel(ploops[0]);
      sch.Unroll(ploops.back());
    } else if (pack_x) {
      PackRowPanels(sch, packed_x, mr, parallel);
    }
    // The copy into phases: parallel where large, scalar (its reads are strided).
    if (phases) ScheduleCopy(sch, AnalyzeBlock(sch, phases, func), facts);
    DeferDecomposeReduction(block, reduce[0]);
  });
}

/*! \brief Binds a tiled matmul's grid: the batch loop to blockIdx.z, the outer row and column
 *  tiles to blockIdx.y / x, the next level to threadIdx.y / x. */
void BindMatmulGrid(Schedule& sch, const MatmulShape& m, const std::vector<LoopRV>& loops,
                    const std::vector<LoopRV>& is, const std::vector<LoopRV>& js) {
  for (int k : m.batch) sch.Bind(loops[k], "blockIdx.z");
  sch.Bind(is[0], "blockIdx.y");
  sch.Bind(js[0], "blockIdx.x");
  sch.Bind(is[1], "threadIdx.y");
  sch.Bind(js[1], "threadIdx.x");
}

/*! \brief The register-tiled SIMT GEMM: 16 x 16 threads per block, each accumulating a
 *  kReg x kReg tile of C in registers (a 128 x 128 block tile), the block's A and B tiles of
 *  each reduction step (kStep deep) staged in shared memory by all its threads with vector-wide
 *  copies; per reduction element a thread reads kReg values of each tile for kReg^2 FMAs (the
 *  16 x 16 one-element rule reads 2 per FMA). Shapes that do not divide take TileCuda. */
constexpr int64_t kSimtThreads = 16, kSimtReg = 8, kSimtStep = 16;

bool TileCudaRegisters(Schedule& sch, const BlockInfo& info, const MatmulShape& m,
                       const TargetFacts& facts, std::vector<std::string>* taken) {
  const int64_t block_tile = kSimtThreads * kSimtReg;
  bool fits = m.reduce.size() == 1 && m.batch.size() <= 1 && info.output_bits == 32 &&
              info.extents[m.i] % block_tile == 0 && info.extents[m.j] % block_tile == 0 &&
              info.extents[m.reduce[0]] % kSimtStep == 0;
  if (!fits) return false;
  const BlockNode* b = info.block;
  auto* x_load = AsPtr<BufferLoadNode>(StripCast(m.x));
  auto* y_load = AsPtr<BufferLoadNode>(StripCast(m.y));
  if (!x_load || !y_load || x_load->dtype.bits() != 32 || y_load->dtype.bits() != 32) return false;
  int x_index = ReadIndex(b, x_load->buffer.get()), y_index = ReadIndex(b, y_load->buffer.get());
  BlockRV block = info.rv;
  return Try(sch, [&] {
    std::vector<LoopRV> loops = sch.GetLoops(block);
    auto is = sch.Split(
        loops[m.i], {TraceValue::None(), TraceValue::Int(kSimtThreads), TraceValue::Int(kSimtReg)},
        true, false);
    auto js = sch.Split(
        loops[m.j], {TraceValue::None(), TraceValue::Int(kSimtThreads), TraceValue::Int(kSimtReg)},
        true, false);
    auto ks = sch.Split(loops[m.reduce[0]], {TraceValue::None(), TraceValue::Int(kSimtStep)}, true,
                        false);
    std::vector<LoopRV> order;
    for (int k : m.batch) order.push_back(loops[k]);
    order.insert(order.end(), {is[0], js[0], is[1], js[1], ks[0], ks[1], is[2], js[2]});
    sch.Reorder(order);
    BindMatmulGrid(sch, m, loops, is, js);
    BlockRV write_back = sch.CacheWrite(block, 0, "local", {});
    taken->push_back(AsPtr<BlockNode>(sch.Get(write_back))->name_hint);
    sch.ReverseComputeAt(write_back, js[1], true, -1);
    for (int index : {x_index, y_index}) {
      BlockRV cache = sch.CacheRead(block, index, "shared", {});
      taken->push_back(AsPtr<BlockNode>(sch.Get(cache))->name_hint);
      sch.ComputeAt(cache, ks[0], false, -1);
      std::vector<LoopRV> cl = sch.GetLoops(cache);
      LoopRV fused = sch.Fuse({cl[cl.size() - 2], cl.back()}, true);
      // 128 x 16 elements by 256 threads: each copies two 4-wide vectors (16 bytes).
      auto parts = sch.Split(fused,
                             {TraceValue::None(), TraceValue::Int(kSimtThreads),
                              TraceValue::Int(kSimtThreads), TraceValue::Int(4)},
                             true, false);
      sch.Bind(parts[1], "threadIdx.y");
      sch.Bind(parts[2], "threadIdx.x");
      sch.Vectorize(parts[3]);
    }
    sch.Unroll(ks[1]);
    sch.Unroll(is[2]);
    sch.Unroll(js[2]);
    if (facts.pipeline_stages > 1) {
      // Double buffering: the copies of step k + 1 (cp.async on sm_80 and later) are issued
      // before the products of step k, into the other half of two versions of each tile.
      auto I = [](int64_t v) { return TraceValue::Int(v); };
      sch.Annotate(ks[0], "software_pipeline_stage", TraceValue::List({I(0), I(0), I(1)}));
      sch.Annotate(ks[0], "software_pipeline_order", TraceValue::List({I(0), I(1), I(2)}));
      sch.Annotate(ks[0], "software_pipeline_async_stages", TraceValue::List({I(0)}));
    }
    DeferDecomposeReduction(block, ks[0]);
  });
}

bool TileCuda(Schedule& sch, const BlockInfo& info, const MatmulShape& m, const TargetFacts& facts,
              std::vector<std::string>* taken) {
  if (TileCudaRegisters(sch, info, m, facts, taken)) return true;
  taken->clear();
  constexpr int64_t kTile = 16;
  bool tiled = m.reduce.size() == 1 && m.batch.size() <= 1 && info.extents[m.i] % kTile == 0 &&
               info.extents[m.j] % kTile == 0 && info.extents[m.reduce[0]] % kTile == 0;
  if (!tiled) return false;
  BlockRV block = info.rv;
  const BlockNode* b = info.block;
  auto* x_load = AsPtr<BufferLoadNode>(StripCast(m.x));
  auto* y_load = AsPtr<BufferLoadNode>(StripCast(m.y));
  if (!x_load || !y_load) return false;
  int x_index = ReadIndex(b, x_load->buffer.get()), y_index = ReadIndex(b, y_load->buffer.get());
  return Try(sch, [&] {
    std::vector<LoopRV> loops = sch.GetLoops(block);
    auto is = sch.Split(loops[m.i], {TraceValue::None(), TraceValue::Int(kTile)}, true, false);
    auto js = sch.Split(loops[m.j], {TraceValue::None(), TraceValue::Int(kTile)}, true, false);
    auto ks =
        sch.Split(loops[m.reduce[0]], {TraceValue::None(), TraceValue::Int(kTile)}, true, false);
    std::vector<LoopRV> order;
    for (int k : m.batch) order.push_back(loops[k]);
    order.insert(order.end(), {is[0], js[0], ks[0], is[1], js[1], ks[1]});
    sch.Reorder(order);
    BindMatmulGrid(sch, m, loops, is, js);
    for (int index : {x_index, y_index}) {
      BlockRV cache = sch.CacheRead(block, index, "shared", {});
      taken->push_back(AsPtr<BlockNode>(sch.Get(cache))->name_hint);
      sch.ComputeAt(cache, ks[0], false, -1);
      std::vector<LoopRV> cl = sch.GetLoops(cache);
      LoopRV fused = sch.Fuse({cl[cl.size() - 2], cl.back()}, true);
      auto parts = sch.Split(
          fused, {TraceValue::None(), TraceValue::Int(kTile), TraceValue::Int(kTile)}, true, false);
      sch.Bind(parts[1], "threadIdx.y");
      sch.Bind(parts[2], "threadIdx.x");
    }
  });
}

/*!
 * \brief "Channel-wise product": a reduction C[..., j] += X * Y whose two factors both vary
 *  along C's innermost iterator j (a depthwise convolution in a blocked NCHWc or an NHWC
 *  layout: the input and the filter both read the output's channel), which MatchMatmul does not
 *  take (no factor is broadcast along j). Tiled like the matmul's register tile without rows:
 *
 *    outer spatial... (the first of more than one iteration parallel), i2_o | reductions |
 *    i2_i (MY positions, unrolled), j (vectors, unrolled, innermost vectorized)
 *
 *  with C accumulated in a local MY x J tile. i2 is C's innermost spatial iterator (besides j)
 *  that X reads and Y does not (the output column of a convolution): Y's vectors of a reduction
 *  step (a filter tap) are loaded once for the MY positions. J is the whole of j when its
 *  vectors fit the registers beside the tile, else a divisor; MY the largest divisor of i2's
 *  extent whose accumulators, Y's vectors and one X vector fit the vector registers (at most 16).
 *  Vectors narrower than the target's widest where they divide j (8 channels of a block on a
 *  16-lane AVX-512 host). Returns false (nothing scheduled) when j is not a multiple of 4 lanes,
 *  a load reads j other than contiguously, or there is no i2 (no reuse to tile for).
 */
bool TileChannelwiseProduct(Schedule& sch, const BlockInfo& info, const PrimFunc& func,
                            const TargetFacts& facts, std::vector<std::string>* taken) {
  const BlockNode* b = info.block;
  const BufferStoreNode* st = info.store;
  if (facts.IsGpu() || !info.is_reduction || st == nullptr || st->indices.empty()) return false;
  auto* add = AsPtr<AddNode>(st->value);
  if (add == nullptr) return false;
  auto is_self = [&](const Expr& e) {
    auto* l = AsPtr<BufferLoadNode>(e);
    return l && l->buffer.get() == st->buffer.get();
  };
  Expr product = is_self(add->a) ? add->b : is_self(add->b) ? add->a : Expr();
  auto* mul = product ? AsPtr<MulNode>(StripCast(product)) : nullptr;
  if (mul == nullptr) return false;
  for (int64_t e : info.extents) {
    if (e <= 0) return false;
  }
  const size_t n = b->iter_vars.size();
  auto var_of = [&](size_t k) { return b->iter_vars[k]->var.get(); };
  int j = -1;
  auto* last = AsPtr<VarNode>(st->indices.back());
  for (size_t k = 0; k < n; ++k) {
    if (last && var_of(k) == last && b->iter_vars[k]->iter_type == IterVarType::kDataPar) j = k;
  }
  if (j < 0 || !UsesVar(mul->a, var_of(j)) || !UsesVar(mul->b, var_of(j))) return false;
  // Every load of the product reads j contiguously: in one index only (simplified with the
  // iterators' ranges: an NCHWc input's `ob // 8 + occ` is `occ`), at a step of one, with only
  // dimensions of one element after it (an NHWC filter's [kh, kw, c, 0]). (Not a row's sum of
  // squares (A[i, k] - m[i]) * (A[i, k] - m[i]) over rows i: vectors of i would be gathers;
  // nor a channel multiplier's `c // 2`.)
  arith::Analyzer ana;
  for (size_t k = 0; k < n; ++k) {
    if (b->iter_vars[k]->dom) ana.Bind(b->iter_vars[k]->var, b->iter_vars[k]->dom);
  }
  const Var& jv = b->iter_vars[j]->var;
  bool contiguous = true;
  PostOrderVisit(product, [&](const ObjectRef& node) {
    auto* load = AsPtr<BufferLoadNode>(node);
    if (load == nullptr || !contiguous) return;
    int at = -1;
    for (size_t d = 0; d < load->indices.size(); ++d) {
      Expr index = ana.Simplify(load->indices[d]);
      if (!UsesVar(index, jv.get())) continue;
      VarMap next;
      next[jv.get()] = AddE(jv, IntConst(jv->dtype, 1));
      const Expr diff = ana.Simplify(SubE(Substitute(index, next), index));  // kept alive
      auto* step = AsPtr<IntImmNode>(diff);
      contiguous = contiguous && at < 0 && step != nullptr && step->value == 1;
      at = static_cast<int>(d);
    }
    for (size_t d = at + 1; at >= 0 && d < load->buffer->shape.size(); ++d) {
      auto extent = AsConstInt(load->buffer->shape[d]);
      contiguous = contiguous && extent && *extent == 1;
    }
  });
  if (!contiguous) return false;
  // i2: the innermost spatial iterator of C's indices that one factor (X, the input) reads and
  // the other (Y, the filter) does not.
  int i2 = -1;
  for (const Expr& index : st->indices) {
    auto* v = AsPtr<VarNode>(index);
    for (size_t k = 0; v && k < n; ++k) {
      if (var_of(k) != v || static_cast<int>(k) == j ||
          b->iter_vars[k]->iter_type != IterVarType::kDataPar || info.extents[k] < 2)
        continue;
      if (UsesVar(mul->a, v) != UsesVar(mul->b, v)) i2 = k;
    }
  }
  // Without one there is no reuse for the tile (a column sum of products A[i, j] * B[i, j]):
  // the reduction rules keep the block.
  if (i2 < 0) return false;
  std::vector<int> outer, reduce;
  for (size_t k = 0; k < n; ++k) {
    if (static_cast<int>(k) == j || static_cast<int>(k) == i2) continue;
    if (b->iter_vars[k]->iter_type == IterVarType::kCommReduce) {
      reduce.push_back(k);
    } else if (b->iter_vars[k]->iter_type == IterVarType::kDataPar) {
      outer.push_back(k);
    } else {
      return false;
    }
  }
  if (reduce.empty()) return false;
  // Vectors of j: the widest that divides it, down to 4 lanes.
  const int64_t ej = info.extents[j];
  int64_t lanes = facts.VectorLanes(info.output_bits);
  while (lanes > 4 && ej % lanes != 0) lanes /= 2;
  if (lanes < 4 || ej % lanes != 0) return false;
  const int regs = facts.vector_registers;
  // J: whole vectors of j, at most a quarter of the registers.
  int64_t nv = ej / lanes;
  while (nv > 1 && (nv > std::max(1, regs / 4) || (ej / lanes) % nv != 0)) --nv;
  const int64_t nr = nv * lanes;
  // MY: the tile's positions of i2.
  const int64_t ei2 = info.extents[i2];
  int64_t my = 1;
  for (int64_t c = std::min<int64_t>(ei2, 16); c >= 1; --c) {
    if (ei2 % c == 0 && c * nv + nv + 1 <= regs) {
      my = c;
      break;
    }
  }
  int64_t flops = 2;
  for (int64_t e : info.extents) flops *= e;
  BlockRV block = info.rv;
  std::vector<std::string> names;
  bool ok = Try(sch, [&] {
    std::vector<LoopRV> loops = sch.GetLoops(block);
    BlockRV write_back = sch.CacheWrite(block, 0, "local", {});
    names.push_back(AsPtr<BlockNode>(sch.Get(write_back))->name_hint);
    std::vector<LoopRV> js =
        sch.Split(loops[j], {TraceValue::None(), TraceValue::Int(nr)}, true, false);
    std::vector<LoopRV> jv =
        sch.Split(js[1], {TraceValue::None(), TraceValue::Int(lanes)}, true, false);
    std::vector<LoopRV> order;
    for (int k : outer) order.push_back(loops[k]);
    std::vector<LoopRV> i2s =
        sch.Split(loops[i2], {TraceValue::None(), TraceValue::Int(my)}, true, false);
    order.push_back(i2s[0]);
    const LoopRV rows = i2s[1];
    order.push_back(js[0]);
    const bool parallel = facts.cores > 1 && flops >= (int64_t{1} << 21);
    int par = -1;
    for (size_t k = 0; k < order.size() && parallel; ++k) {
      if (LoopExtent(sch, order[k]) > 1) {
        par = static_cast<int>(k);
        break;
      }
    }
    if (par > 0) std::rotate(order.begin(), order.begin() + par, order.begin() + par + 1);
    const LoopRV tile_loop = order.back();
    for (int k : reduce) order.push_back(loops[k]);
    order.push_back(rows);
    order.push_back(jv[0]);
    order.push_back(jv[1]);
    sch.Reorder(order);
    BlockRV at_tile = AttachEpilogue(sch, write_back, tile_loop, func, facts);
    names.push_back(AsPtr<BlockNode>(sch.Get(at_tile))->name_hint);
    sch.Vectorize(jv[1]);
    sch.Unroll(jv[0]);
    sch.Unroll(rows);
    // A short innermost reduction loop (a filter row of 3) unrolled whole.
    if (info.extents[reduce.back()] <= 2 * kReductionUnroll) sch.Unroll(loops[reduce.back()]);
    if (par >= 0) sch.Parallel(order[0]);
    DeferDecomposeReduction(block, loops[reduce[0]]);
  });
  if (!ok) return false;
  taken->push_back(info.name);
  taken->insert(taken->end(), names.begin(), names.end());
  return true;
}

/*! \brief Whether `index` is `v + e` (or `v`) with `e` using neither `v` nor `w`; `e` goes to
 *  `offset`. */
bool IsVarPlus(const Expr& index, const VarNode* v, const VarNode* w) {
  if (index.get() == v) return true;
  auto* add = AsPtr<AddNode>(index);
  if (add == nullptr) return false;
  const Expr& other = add->a.get() == v ? add->b : add->b.get() == v ? add->a : Expr();
  return other && !UsesVar(other, v) && !UsesVar(other, w);
}

/*! \brief Whether the access `indices` of `buffer` reads the iterators `a` and `b` (extent
 *  `eb`) as one affine axis `a * eb + b`: it uses neither, or `a + e1, b + e2` at two adjacent
 *  indices over a dimension of `eb` (so that (a + e1) * eb + b + e2 is a * eb + b plus an
 *  offset) and neither elsewhere; for the store (`exact`), `a, b` themselves. */
bool ReadsAsOneAxis(const Buffer& buffer, const std::vector<Expr>& indices, const VarNode* a,
                    const VarNode* b, int64_t eb, bool exact) {
  int at = -1;
  for (size_t k = 0; k + 1 < indices.size(); ++k) {
    if (exact ? indices[k].get() == a && indices[k + 1].get() == b
              : IsVarPlus(indices[k], a, b) && IsVarPlus(indices[k + 1], b, a)) {
      at = static_cast<int>(k);
      break;
    }
  }
  for (size_t k = 0; k < indices.size(); ++k) {
    if (at >= 0 && (static_cast<int>(k) == at || static_cast<int>(k) == at + 1)) continue;
    if (UsesVar(indices[k], a) || UsesVar(indices[k], b)) return false;
  }
  if (at < 0) return !exact;
  auto dim = AsConstInt(buffer->shape[at + 1]);
  return dim && *dim == eb;
}

/*! \brief Whether `index` is `c * v + e` (c > 1 a constant) with `e` using neither `v` nor
 *  `w`: a strided read of `v`. */
bool IsStridedVar(const Expr& index, const VarNode* v, const VarNode* w) {
  Expr e = index, rest;
  if (auto* add = AsPtr<AddNode>(index)) {
    const bool left = UsesVar(add->a, v);
    e = left ? add->a : add->b;
    rest = left ? add->b : add->a;
    if (UsesVar(rest, v) || UsesVar(rest, w)) return false;
  }
  auto* mul = AsPtr<MulNode>(e);
  if (mul == nullptr) return false;
  auto c = AsConstInt(mul->b);
  return mul->a.get() == v && c && *c > 1;
}

/*! \brief For a load reading `a` and `b` with strides (a 1x1 convolution of stride 2: X[n, c,
 *  2 * y + ry, 2 * x + rx], ry and rx of extent 1): the map of the block iterators to a packed
 *  copy of what it reads, `a` and `b` in place of the indices that read them (X[n, c, y, x, ry,
 *  rx]), whose two axes are then one; empty where the load is not of that form or the copy
 *  would take iterators other than a and b of extent > 1. */
std::vector<Expr> PackedReadIndices(const BlockInfo& info, const BufferLoadNode* load,
                                    const Var& va, const Var& vb) {
  const VarNode* a = va.get();
  const VarNode* b = vb.get();
  const std::vector<Expr>& idx = load->indices;
  const BlockNode* blk = info.block;
  int at = -1;
  for (size_t k = 0; k + 1 < idx.size(); ++k) {
    if (IsStridedVar(idx[k], a, b) && IsStridedVar(idx[k + 1], b, a)) at = static_cast<int>(k);
  }
  if (at < 0) return {};
  std::vector<Expr> out;
  for (size_t k = 0; k < idx.size(); ++k) {
    if (static_cast<int>(k) == at) {
      out.push_back(va);
    } else if (static_cast<int>(k) == at + 1) {
      out.push_back(vb);
    } else if (UsesVar(idx[k], a) || UsesVar(idx[k], b)) {
      return {};
    } else {
      out.push_back(idx[k]);
    }
  }
  // The other iterators the strided indices use (the kernel's window), after: of extent 1.
  for (size_t q = 0; q < blk->iter_vars.size(); ++q) {
    const VarNode* v = blk->iter_vars[q]->var.get();
    if (v == a || v == b || !(UsesVar(idx[at], v) || UsesVar(idx[at + 1], v))) continue;
    if (info.extents[q] != 1) return {};
    out.push_back(blk->iter_vars[q]->var);
  }
  return out;
}

/*! \brief Two output axes that every access reads as one contiguous axis fused into one
 *  iterator (transform_block_layout), before the tiles are chosen: a 1x1 stride-1 convolution's
 *  output rows and columns, which its input and output both hold as one H * W axis (NCHW: the
 *  product's columns, W @ X[c, H * W]; NHWC: its rows, X[H * W, c] @ W), so that the tiles
 *  span whole rows of the product instead of an output row of 14 or 7. The innermost such
 *  pair of adjacent data-parallel iterators of extents > 1, the inner one the product's rows
 *  or columns (m), is fused, where the fused block is
 *  still matmul-like; returns its analysis, or nothing (the block unchanged). */
std::optional<BlockInfo> FuseContiguousAxes(Schedule& sch, const BlockInfo& info,
                                            const MatmulShape& m, const PrimFunc& func) {
  const BlockNode* blk = info.block;
  const BufferStoreNode* st = info.store;
  if (st == nullptr || info.has_select) return std::nullopt;
  const size_t n = blk->iter_vars.size();
  for (size_t k = n - 1; k-- > 0;) {
    const IterVar& ia = blk->iter_vars[k];
    const IterVar& ib = blk->iter_vars[k + 1];
    if (ia->iter_type != IterVarType::kDataPar || ib->iter_type != IterVarType::kDataPar ||
        info.extents[k] <= 1 || info.extents[k + 1] <= 1)
      continue;
    // The inner axis of the pair is the product's rows or columns (not two batch axes: a
    // transposed convolution's output phases).
    if (static_cast<int>(k + 1) != m.i && static_cast<int>(k + 1) != m.j) continue;
    const VarNode* a = ia->var.get();
    const VarNode* b = ib->var.get();
    const int64_t eb = info.extents[k + 1];
    if (!ReadsAsOneAxis(st->buffer, st->indices, a, b, eb, true)) continue;
    bool all = true;
    // Loads reading the two axes with strides: packed first (reindex_cache_read), each into a
    // copy whose two axes are one (the copy: a gather of the output's size, once per call).
    std::vector<std::pair<int, std::vector<Expr>>> packs;
    PostOrderVisit(st->value, [&](const ObjectRef& node) {
      auto* load = AsPtr<BufferLoadNode>(node);
      if (load == nullptr || !all) return;
      const bool self = load->buffer.get() == st->buffer.get();
      if (ReadsAsOneAxis(load->buffer, load->indices, a, b, eb, self)) return;
      std::vector<Expr> packed =
          self ? std::vector<Expr>{} : PackedReadIndices(info, load, ia->var, ib->var);
      const int index = ReadIndex(blk, load->buffer.get());
      int reads = 0;
      for (const BufferLoadNode* l : info.loads) reads += l->buffer.get() == load->buffer.get();
      if (packed.empty() || index < 0 || reads != 1) {
        all = false;
        return;
      }
      packs.emplace_back(index, std::move(packed));
    });
    if (!all) continue;
    std::vector<Var> from;
    std::vector<Expr> to;
    for (size_t q = 0; q < n; ++q) {
      const Var& v = blk->iter_vars[q]->var;
      from.push_back(VarNode::Make(v->name, v->dtype));
    }
    for (size_t q = 0; q < n; ++q) {
      if (q == k + 1) continue;
      if (q != k) {
        to.push_back(from[q]);
        continue;
      }
      Expr width = IntImmNode::Make(from[k]->dtype, eb);
      to.push_back(AddNode::Make(MulNode::Make(from[k], width), from[k + 1]));
    }
    std::optional<BlockInfo> fused;
    Try(sch, [&] {
      for (const auto& [index, packed] : packs) {
        VarMap rename;
        for (size_t q = 0; q < n; ++q) rename[blk->iter_vars[q]->var.get()] = from[q];
        std::vector<Expr> mapped;
        for (const Expr& e : packed) mapped.push_back(Substitute(e, rename));
        sch.ReindexCacheRead(info.rv, index, "global", schedule::IndexMap{from, mapped});
      }
      sch.TransformBlockLayout(info.rv, schedule::IndexMap{from, to});
      BlockInfo after = AnalyzeBlock(sch, info.rv, func);
      if (!MatchMatmul(after)) throw Error("the fused block is not matmul-like", Span());
      fused = after;
    });
    return fused;
  }
  return std::nullopt;
}

}  // namespace

bool TileMatmulLike(Schedule& sch, const BlockInfo& info, const PrimFunc& func,
                    const TargetFacts& facts, std::vector<std::string>* taken) {
  std::optional<MatmulShape> m = MatchMatmul(info);
  if (!m) {
    if (sch.GetLoops(info.rv).size() != info.block->iter_vars.size()) return false;
    return TileChannelwiseProduct(sch, info, func, facts, taken);
  }
  if (sch.GetLoops(info.rv).size() != info.block->iter_vars.size()) return false;
  // (CUDA's tiles take no account of grouped rows: a grouped block keeps its CUDA schedule.)
  if (facts.IsGpu() && (m->i_group > 0 || m->j_group > 0)) return false;
  // (On the host: CUDA's thread grid takes each output axis on its own.)
  std::optional<BlockInfo> fused =
      facts.IsGpu() ? std::nullopt : FuseContiguousAxes(sch, info, *m, func);
  const BlockInfo& block = fused ? *fused : info;
  if (fused) m = MatchMatmul(block);
  std::vector<std::string> names;
  // On CUDA, tensor cores first (tensor_core.cc), else the SIMT tiling.
  bool ok = facts.IsGpu() ? TileTensorCore(sch, info, facts, &names) ||
                                (names.clear(), TileCuda(sch, info, *m, facts, &names))
                          : TileCpu(sch, block, *m, func, facts, &names);
  if (!ok) return false;
  taken->push_back(info.name);
  taken->insert(taken->end(), names.begin(), names.end());
  // The re-indexing copies around the tiled block (a transposed convolution's input and
  // kernel per output phase, the interleave of the phases), which the inline rule kept and
  // the epilogue did not take: scalar copies, parallel (vectors of them are gathers).
  if (!facts.IsGpu()) {
    std::vector<BlockRV> around = sch.GetProducers(info.rv);
    for (const std::string& name : names) {
      BlockRV rv;
      if (!Try(sch, [&] { rv = sch.GetBlock(name, std::nullopt); })) continue;
      for (const BlockRV& c : sch.GetConsumers(rv)) around.push_back(c);
    }
    for (const BlockRV& rv : around) {
      BlockInfo copy = AnalyzeBlock(sch, rv, func);
      if (copy.block == nullptr || copy.is_reduction || !ReadsDivided(copy)) continue;
      if (std::find(taken->begin(), taken->end(), copy.name) != taken->end()) continue;
      if (sch.GetLoops(rv).size() != copy.block->iter_vars.size()) continue;
      ScheduleCopy(sch, copy, facts);
      taken->push_back(copy.name);
    }
  }
  return true;
}

}  // namespace autoschedule
}  // namespace tessera
