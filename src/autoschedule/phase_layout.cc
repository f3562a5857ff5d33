// A strided read of a tiled block's vector operand in phases: a convolution of stride s reads its
// input at x * s + rx along the output's vector axis x, a gather of every s-th element. The
// input is copied once into a layout of s phases of its innermost axis,
//
//   [..., w] -> [..., w % s, w // s]   (the last phase's missing elements padded with zeros)
//
// so that the read becomes [..., rx % s, x + rx // s]: contiguous along x, whole vectors (or
// first-lanes masked ones) instead of gathers. The copy is about 1 / (MR * taps) of the block's
// loads (the input is read once, the block reads it once per output channel tile and tap).
#include "rules.h"
#include "tessera/arith/analyzer.h"
#include "tessera/ir/expr.h"
#include "tessera/ir/expr_ops.h"

namespace tessera {
namespace autoschedule {

int64_t InnermostStride(const BlockNode* block, const BufferLoadNode* load, const Var& jv) {
  if (block == nullptr || load == nullptr || load->indices.empty()) return 0;
  const VarNode* j = jv.get();
  arith::Analyzer ana;
  for (const IterVar& iv : block->iter_vars) {
    if (iv->dom) ana.Bind(iv->var, iv->dom);
  }
  const size_t last = load->indices.size() - 1;
  for (size_t d = 0; d < last; ++d) {
    if (UsesVar(load->indices[d], j)) return 0;
  }
  const Expr& index = load->indices[last];
  if (!UsesVar(index, j)) return 0;
  VarMap next;
  next[j] = AddE(jv, IntConst(jv->dtype, 1));
  const Expr diff = ana.Simplify(SubE(Substitute(index, next), index));  // kept alive
  auto* step = AsPtr<IntImmNode>(diff);
  if (step == nullptr || step->value < 2) return 0;
  // Phases of a constant-extent axis only.
  if (!AsConstInt(load->buffer->shape[last])) return 0;
  return step->value;
}

std::optional<BlockRV> ReadInPhases(Schedule& sch, const BlockRV& block, int read_index,
                                    const BufferLoadNode* load, int64_t stride) {
  const size_t ndim = load->indices.size();
  const DataType t = load->indices[ndim - 1]->dtype;
  const int64_t extent = *AsConstInt(load->buffer->shape[ndim - 1]);
  std::vector<Var> from;
  for (size_t d = 0; d < ndim; ++d) from.push_back(VarNode::Make("d" + std::to_string(d), t));
  std::vector<Expr> to(from.begin(), from.end() - 1);
  Expr s = IntImmNode::Make(t, stride);
  to.push_back(FloorModNode::Make(from.back(), s));
  to.push_back(FloorDivNode::Make(from.back(), s));
  schedule::IndexMap map{from, to};
  // An extent that is no multiple of the stride: the last phases are one element short, their
  // padding zeros (never read: the block's reads stay within the original extent).
  std::optional<schedule::IndexMap> pad;
  if (extent % stride != 0) {
    std::vector<Var> at;
    for (size_t d = 0; d <= ndim; ++d) at.push_back(VarNode::Make("p" + std::to_string(d), t));
    pad = schedule::IndexMap{at, {MakeConst(load->dtype, 0.0)}};
  }
  std::optional<BlockRV> copy;
  bool ok = Try(sch, [&] {
    BlockRV c = sch.CacheRead(block, read_index, "global", {});
    sch.TransformLayout(c, "write", 0, map, pad);
    // A producer of the read buffer (the padding of the input) computed in the copy itself.
    for (const BlockRV& p : sch.GetProducers(c)) {
      Try(sch, [&] { sch.ComputeInline(p); });
    }
    copy = c;
  });
  if (!ok) return std::nullopt;
  return copy;
}

}  // namespace autoschedule
}  // namespace tessera
