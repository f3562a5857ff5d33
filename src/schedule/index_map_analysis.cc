// Index-map analyses: equivalence and inverse of an IndexMap, and SuggestIndexMap (the layout
// under which a buffer access becomes a walk over the loops in order, TVM's
// tir.schedule.SuggestIndexMap).
#include "tessera/schedule/index_map_analysis.h"

#include <algorithm>
#include <numeric>
#include <unordered_map>

#include "tessera/arith/analyzer.h"
#include "tessera/arith/iter_affine_map.h"
#include "tessera/ir/structural_equal.h"
#include "tessera/support/error.h"
#include "utils.h"

namespace tessera {
namespace schedule {

namespace {

/*! \brief `e` in `dtype` (integer casts only). */
Expr In(DataType dtype, const Expr& e) { return e->dtype == dtype ? e : CastTo(dtype, e); }

/*! \brief The wider of the index types of `a` and `b`. */
DataType Wider(DataType a, DataType b) { return a.bits() >= b.bits() ? a : b; }

}  // namespace

namespace {

/*! \brief `e` recomputed in the wider integer type `t`, its variables replaced by `vars`:
 *  constants and arithmetic rebuilt in `t`, integer casts dropped (exact while nothing
 *  overflows the narrower type), anything else cast. */
Expr Widen(const Expr& e, DataType t, const VarMap& vars) {
  if (auto* v = AsPtr<VarNode>(e)) {
    auto it = vars.find(v);
    if (it != vars.end()) return it->second;
  }
  if (!e->dtype.is_integer() || !e->dtype.is_scalar()) return e->dtype == t ? e : CastTo(t, e);
  if (auto c = AsConstInt(e)) return IntConst(t, *c);
  if (auto* cast = AsPtr<CastNode>(e); cast && cast->value->dtype.is_integer()) {
    return Widen(cast->value, t, vars);
  }
  if (auto* bin = AsPtr<BinaryNode>(e)) {
    switch (bin->kind) {
#define TESSERA_WIDEN(name) \
  case NodeKind::k##name:   \
    return name##Node::Make(Widen(bin->a, t, vars), Widen(bin->b, t, vars), e->span);
      TESSERA_WIDEN(Add)
      TESSERA_WIDEN(Sub)
      TESSERA_WIDEN(Mul)
      TESSERA_WIDEN(FloorDiv)
      TESSERA_WIDEN(FloorMod)
      TESSERA_WIDEN(Min)
      TESSERA_WIDEN(Max)
#undef TESSERA_WIDEN
      default:
        break;
    }
  }
  return e->dtype == t ? e : CastTo(t, e);
}

}  // namespace

bool IndexMapsEquivalent(const IndexMap& a, const IndexMap& b) {
  if (a.initial_indices.size() != b.initial_indices.size()) return false;
  if (a.final_indices.size() != b.final_indices.size()) return false;
  // Both maps over the same fresh variables of the widest index type of either.
  DataType t = DataType::Int(32);
  for (const IndexMap* m : {&a, &b}) {
    for (const Var& v : m->initial_indices) t = Wider(t, v->dtype);
    for (const Expr& e : m->final_indices) t = Wider(t, e->dtype);
  }
  VarMap on_a, on_b;
  for (size_t i = 0; i < a.initial_indices.size(); ++i) {
    Var v = VarNode::Make(a.initial_indices[i]->name, t);
    on_a[a.initial_indices[i].get()] = v;
    on_b[b.initial_indices[i].get()] = v;
  }
  arith::Analyzer ana;
  for (size_t i = 0; i < a.final_indices.size(); ++i) {
    if (!ana.CanProveEqual(Widen(a.final_indices[i], t, on_a), Widen(b.final_indices[i], t, on_b)))
      return false;
  }
  return true;
}

namespace {

/*! \brief The leaf splits (of input variables) of `sum`, entering fused marks; false when a
 *  fused mark is used other than whole. */
bool LeafSplits(const arith::IterSum& sum,
                std::unordered_map<const VarNode*, std::vector<arith::IterSplit>>* out) {
  for (const arith::IterSplit& s : sum->args) {
    if (s->source->var) {
      (*out)[s->source->var.get()].push_back(s);
    } else if (s->source->sum) {
      if (s->lower_factor != 1 || s->extent != s->source->extent) return false;
      if (!LeafSplits(s->source->sum, out)) return false;
    } else {
      return false;
    }
  }
  return true;
}

/*! \brief Whether `map` is a bijection over `iters`: every index is one split (of a variable or
 *  of a whole fused mark), and the leaf splits of every variable tile its range exactly once. */
bool TilesEveryIterator(const std::vector<arith::IterSum>& map,
                        const std::vector<arith::IterDomain>& iters) {
  std::unordered_map<const VarNode*, std::vector<arith::IterSplit>> leaves;
  for (const arith::IterSum& sum : map) {
    if (sum->args.size() != 1 || sum->base != 0) return false;
    if (!LeafSplits(sum, &leaves)) return false;
  }
  for (const arith::IterDomain& d : iters) {
    auto& splits = leaves[d.var.get()];
    std::sort(splits.begin(), splits.end(),
              [](const arith::IterSplit& a, const arith::IterSplit& b) {
                return a->lower_factor < b->lower_factor;
              });
    int64_t covered = 1;
    for (const arith::IterSplit& s : splits) {
      if (s->lower_factor != covered || s->extent < 0) return false;
      covered *= s->extent;
    }
    if (d.min != 0 || covered != d.extent) return false;
  }
  return true;
}

}  // namespace

IndexMap InverseIndexMap(const IndexMap& map, const std::vector<Expr>& shape) {
  const std::vector<Var>& initial_indices = map.initial_indices;
  const std::vector<Expr>& final_indices = map.final_indices;
  if (shape.size() != initial_indices.size()) {
    TESSERA_THROW_KIND(Span(), ErrorKind::kValue)
        << "IndexMap.inverse: the map takes " << initial_indices.size()
        << " indices, the shape has " << shape.size() << " dimensions";
  }
  std::vector<arith::IterDomain> iters;
  for (size_t i = 0; i < shape.size(); ++i) {
    auto extent = AsConstInt(shape[i]);
    if (!extent) {
      TESSERA_THROW_KIND(Span(), ErrorKind::kValue)
          << "IndexMap.inverse: dimension " << i << " of the shape is not a constant";
    }
    iters.push_back({initial_indices[i], 0, *extent});
  }
  std::string why;
  auto iter_map = arith::DetectIterMap(final_indices, iters, &why);
  if (!iter_map || !TilesEveryIterator(*iter_map, iters)) {
    TESSERA_THROW_KIND(Span(), ErrorKind::kValue)
        << "IndexMap.inverse: " << map.AsPython() << " is not a bijection over the shape"
        << (why.empty() ? "" : " (" + why + ")") << "; only a bijective map has an inverse";
  }
  IndexMap inverse;
  std::vector<Expr> outputs;
  for (size_t i = 0; i < final_indices.size(); ++i) {
    Var v = VarNode::Make("i" + std::to_string(i), final_indices[i]->dtype);
    inverse.initial_indices.push_back(v);
    outputs.push_back(v);
  }
  auto back = arith::InverseAffineIterMap(*iter_map, outputs);
  if (!back) {
    TESSERA_THROW_KIND(Span(), ErrorKind::kValue)
        << "IndexMap.inverse: " << map.AsPython()
        << " is not a fuse-and-split pattern it can invert";
  }
  arith::Analyzer ana;
  for (size_t i = 0; i < final_indices.size(); ++i) {
    auto extent = (*iter_map)[i]->args.empty() ? 1 : (*iter_map)[i]->args[0]->extent;
    ana.Bind(inverse.initial_indices[i],
             RangeNode::Make(IntConst(outputs[i]->dtype, 0), IntConst(outputs[i]->dtype, extent)));
  }
  for (size_t d = 0; d < initial_indices.size(); ++d) {
    Expr value;
    for (const auto& [var, e] : *back) {
      if (var.get() == initial_indices[d].get()) value = e;
    }
    // An index of extent 1 the map does not mention is 0.
    if (!value) value = IntConst(initial_indices[d]->dtype, 0);
    inverse.final_indices.push_back(ana.Simplify(In(initial_indices[d]->dtype, value)));
  }
  return inverse;
}

namespace {

/*! \brief One split of a loop variable: floormod(floordiv(loop, lower_factor), extent). */
struct LoopSplit {
  const VarNode* loop;
  int64_t lower_factor;
  int64_t extent;
};

/*! \brief The splits of input loops in `sum`, outermost first (fused marks entered); false when
 *  a split has a non-constant factor or extent. */
bool CollectSplits(const arith::IterSum& sum, std::vector<LoopSplit>* out) {
  for (const arith::IterSplit& s : sum->args) {
    if (s->source->var) {
      if (s->extent < 0) return false;
      out->push_back({s->source->var.get(), s->lower_factor, s->extent});
    } else if (s->source->sum) {
      if (!CollectSplits(s->source->sum, out)) return false;
    } else {
      return false;
    }
  }
  return true;
}

/*! \brief The row-major strides of `buffer` (its own strides when it has them). */
std::vector<Expr> StridesOf(const Buffer& buffer) {
  if (!buffer->strides.empty()) return buffer->strides;
  std::vector<Expr> strides(buffer->shape.size());
  DataType t = buffer->shape.empty() ? DataType::Int(32) : buffer->shape.back()->dtype;
  Expr stride = IntConst(t, 1);
  for (size_t i = buffer->shape.size(); i-- > 0;) {
    strides[i] = stride;
    stride = MulE(stride, In(t, buffer->shape[i]));
  }
  return strides;
}

Expr Flatten(const std::vector<Expr>& strides, const std::vector<Expr>& indices, DataType t) {
  Expr flat = IntConst(t, 0);
  for (size_t i = 0; i < indices.size(); ++i) {
    flat = AddE(flat, MulE(In(t, strides[i]), In(t, indices[i])));
  }
  return flat;
}

/*!
 * \brief floormod(floordiv(flat, lo), extent) of the row-major flattened `indices` of `buffer`,
 *  written per dimension: each dimension contributes the digits of it that fall in the window
 *  [lo, lo * extent) of the flat index. Null when a window does not align with the dimensions
 *  (or the buffer has explicit strides or symbolic dimensions).
 *
 *    (6, 6, 128, 128), window [4096, 32768) -> i1 % 2 * 4 + i2 // 32
 */
Expr DigitsOf(const std::vector<Expr>& indices, const Buffer& buffer, int64_t lo, int64_t extent) {
  if (!buffer->strides.empty()) return nullptr;
  DataType t = indices.empty() ? DataType::Int(32) : indices[0]->dtype;
  int64_t hi = lo * extent;
  int64_t stride = 1;
  Expr sum;
  for (size_t d = indices.size(); d-- > 0;) {
    auto dim = AsConstInt(buffer->shape[d]);
    if (!dim) return nullptr;
    int64_t begin = std::max(lo, stride), end = std::min(hi, stride * *dim);
    if (begin < end) {
      if (begin % stride != 0 || end % begin != 0 || begin % lo != 0) return nullptr;
      Expr digit = indices[d];
      if (begin / stride != 1) digit = FloorDivE(digit, IntConst(t, begin / stride));
      if (end != stride * *dim) digit = FloorModE(digit, IntConst(t, end / begin));
      if (begin / lo != 1) digit = MulE(digit, IntConst(t, begin / lo));
      sum = sum ? AddE(digit, sum) : digit;
    }
    stride *= *dim;
  }
  return sum ? sum : IntConst(t, 0);
}

}  // namespace

std::optional<IndexMap> SuggestIndexMap(const Buffer& buffer, const std::vector<Expr>& indices,
                                        const std::vector<For>& loops, const Expr& predicate) {
  (void)predicate;  // tessera's DetectIterMap has no predicate; a padded access is not split
  if (indices.size() != buffer->shape.size()) {
    TESSERA_THROW_KIND(Span(), ErrorKind::kValue)
        << "suggest_index_map: the buffer " << buffer->name << " has " << buffer->shape.size()
        << " dimensions, the access " << indices.size() << " indices";
  }
  std::vector<arith::IterDomain> iters;
  std::vector<const VarNode*> order_of_loops;
  for (const For& loop : loops) {
    auto min = AsConstInt(loop->min), extent = AsConstInt(loop->extent);
    if (!min || !extent) return std::nullopt;
    iters.push_back({loop->loop_var, *min, *extent});
    order_of_loops.push_back(loop->loop_var.get());
  }
  DataType t = IntConst(DataType::Int(32), 0)->dtype;
  for (const Expr& e : buffer->shape) t = Wider(t, e->dtype);
  for (const Expr& e : indices) t = Wider(t, e->dtype);
  std::vector<Expr> strides = StridesOf(buffer);
  auto map = arith::DetectIterMap({Simplify(Flatten(strides, indices, t))}, iters);
  if (!map || map->size() != 1 || (*map)[0]->args.empty()) return std::nullopt;
  std::vector<LoopSplit> splits;
  if (!CollectSplits((*map)[0], &splits) || splits.empty()) return std::nullopt;
  // Neighbouring splits of one loop that tile a contiguous range of it form one dimension
  // (x // 4 % 2 then x % 4 is x % 8).
  std::vector<LoopSplit> merged;
  for (const LoopSplit& s : splits) {
    if (!merged.empty() && merged.back().loop == s.loop &&
        merged.back().lower_factor == s.lower_factor * s.extent) {
      merged.back().lower_factor = s.lower_factor;
      merged.back().extent *= s.extent;
    } else {
      merged.push_back(s);
    }
  }
  splits = std::move(merged);

  // The new dimensions: the splits in the order of their loops, the outer split of a loop first.
  auto loop_pos = [&](const VarNode* v) {
    return std::find(order_of_loops.begin(), order_of_loops.end(), v) - order_of_loops.begin();
  };
  std::vector<size_t> order(splits.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    auto pa = loop_pos(splits[a].loop), pb = loop_pos(splits[b].loop);
    if (pa != pb) return pa < pb;
    return splits[a].lower_factor > splits[b].lower_factor;
  });

  // Forward: flatten the buffer indices, cut the flat index into the splits' extents (innermost
  // last), permute.
  IndexMap result;
  arith::Analyzer ana;
  for (size_t i = 0; i < buffer->shape.size(); ++i) {
    Var v = VarNode::Make("i" + std::to_string(i), t);
    result.initial_indices.push_back(v);
    ana.Bind(v, RangeNode::Make(IntConst(t, 0), In(t, buffer->shape[i])));
  }
  std::vector<Expr> args(result.initial_indices.begin(), result.initial_indices.end());
  std::vector<Expr> pieces(splits.size());
  int64_t lo = 1;
  for (size_t i = splits.size(); i-- > 0;) {
    pieces[i] = DigitsOf(args, buffer, lo, splits[i].extent);
    lo *= splits[i].extent;
  }
  if (std::any_of(pieces.begin(), pieces.end(), [](const Expr& e) { return !e; })) {
    // Not aligned with the buffer's dimensions: divide the flattened index.
    Expr flat = Flatten(strides, args, t);
    for (size_t i = splits.size(); i-- > 0;) {
      flat = ana.Simplify(flat);
      pieces[i] = ana.Simplify(FloorModE(flat, IntConst(t, splits[i].extent)));
      flat = FloorDivE(flat, IntConst(t, splits[i].extent));
    }
  }
  for (size_t i : order) result.final_indices.push_back(pieces[i]);
  return result;
}

namespace {

/*!
 * \brief Compares a block's body with a tensor intrinsic description's, up to buffer indices:
 *  the same operations and constants, buffers of the same dtype matched one to one, each buffer
 *  accessed with one set of indices (the description's indices plain iterators).
 */
class AutoTensorizeMatcher {
 public:
  std::vector<std::pair<Buffer, Buffer>> buffers;  // (block buffer, description buffer)
  std::unordered_map<const BufferNode*, std::vector<Expr>> lhs_indices, rhs_indices;

  bool Stmt_(const Stmt& lhs, const Stmt& rhs) {
    auto* l = AsPtr<BufferStoreNode>(lhs);
    auto* r = AsPtr<BufferStoreNode>(rhs);
    if (!l || !r || l->predicate || r->predicate) return false;
    return Access(l->buffer, l->indices, r->buffer, r->indices) && Expr_(l->value, r->value);
  }

  bool Expr_(const Expr& lhs, const Expr& rhs) {
    if (lhs->kind != rhs->kind || lhs->dtype != rhs->dtype) return false;
    if (auto* l = AsPtr<BufferLoadNode>(lhs)) {
      auto* r = AsPtr<BufferLoadNode>(rhs);
      if (l->predicate || r->predicate) return false;
      return Access(l->buffer, l->indices, r->buffer, r->indices);
    }
    if (auto* l = AsPtr<IntImmNode>(lhs)) return l->value == AsPtr<IntImmNode>(rhs)->value;
    if (auto* l = AsPtr<FloatImmNode>(lhs)) return l->value == AsPtr<FloatImmNode>(rhs)->value;
    if (auto* l = AsPtr<CastNode>(lhs)) return Expr_(l->value, AsPtr<CastNode>(rhs)->value);
    if (auto* l = AsPtr<BinaryNode>(lhs)) {
      auto* r = AsPtr<BinaryNode>(rhs);
      return Expr_(l->a, r->a) && Expr_(l->b, r->b);
    }
    if (auto* l = AsPtr<SelectNode>(lhs)) {
      auto* r = AsPtr<SelectNode>(rhs);
      return Expr_(l->condition, r->condition) && Expr_(l->true_value, r->true_value) &&
             Expr_(l->false_value, r->false_value);
    }
    if (auto* l = AsPtr<CallNode>(lhs)) {
      auto* r = AsPtr<CallNode>(rhs);
      if (l->op.get() != r->op.get() || l->args.size() != r->args.size()) return false;
      for (size_t i = 0; i < l->args.size(); ++i)
        if (!Expr_(l->args[i], r->args[i])) return false;
      return true;
    }
    return false;
  }

 private:
  bool Access(const Buffer& lb, const std::vector<Expr>& li, const Buffer& rb,
              const std::vector<Expr>& ri) {
    if (!SameBuffer(lb, rb)) return false;
    auto l = lhs_indices.find(lb.get());
    if (l == lhs_indices.end()) {
      for (const Expr& e : ri) {
        bool scalar_zero = ri.size() == 1 && AsConstInt(e) == std::optional<int64_t>(0);
        if (!AsPtr<VarNode>(e) && !scalar_zero) return false;
      }
      lhs_indices[lb.get()] = li;
      rhs_indices[rb.get()] = ri;
      return true;
    }
    const std::vector<Expr>& seen_l = l->second;
    const std::vector<Expr>& seen_r = rhs_indices.at(rb.get());
    if (seen_l.size() != li.size() || seen_r.size() != ri.size()) return false;
    for (size_t i = 0; i < li.size(); ++i)
      if (!StructuralEqual(seen_l[i], li[i])) return false;
    for (size_t i = 0; i < ri.size(); ++i)
      if (seen_r[i].get() != ri[i].get() && !StructuralEqual(seen_r[i], ri[i])) return false;
    return true;
  }

  bool SameBuffer(const Buffer& lb, const Buffer& rb) {
    for (const auto& [l, r] : buffers) {
      if (l == lb || r == rb) return l == lb && r == rb;
    }
    if (lb->dtype != rb->dtype) return false;
    buffers.emplace_back(lb, rb);
    return true;
  }
};

/*! \brief The block of a description: its root block's body, through loops, to one realize. */
const BlockNode* DescBlock(const PrimFunc& desc) {
  auto* root = AsPtr<BlockRealizeNode>(desc->body);
  if (!root) return nullptr;
  Stmt s = root->block->body;
  while (auto* loop = AsPtr<ForNode>(s)) s = loop->body;
  auto* realize = AsPtr<BlockRealizeNode>(s);
  return realize ? realize->block.get() : nullptr;
}

}  // namespace

std::optional<AutoTensorizeMappingInfo> GetAutoTensorizeMappingInfo(const ScheduleState& state,
                                                                    const StmtSRefNode* block_sref,
                                                                    const PrimFunc& desc) {
  const BlockNode* block = GetBlockRealize(state, block_sref)->block.get();
  const BlockNode* desc_block = DescBlock(desc);
  if (!desc_block) {
    TESSERA_THROW_KIND(Span(), ErrorKind::kValue)
        << "get_auto_tensorize_mapping_info: the description is not loops over one block";
  }
  for (const BlockNode* b : {block, desc_block}) {
    for (const IterVar& iv : b->iter_vars) {
      if (iv->iter_type != IterVarType::kDataPar && iv->iter_type != IterVarType::kCommReduce)
        return std::nullopt;
    }
  }
  AutoTensorizeMatcher match;
  if (!match.Stmt_(block->body, desc_block->body)) return std::nullopt;

  // Which buffers each iterator indexes (a bit per matched buffer pair), in the block's indices
  // simplified over its iterators' domains (`co // 64` is 0 for co < 64).
  arith::Analyzer ana;
  for (const IterVar& iv : block->iter_vars) ana.Bind(iv->var, iv->dom);
  size_t n = match.buffers.size();
  std::unordered_map<const VarNode*, std::vector<bool>> lhs_mask, rhs_mask;
  for (size_t b = 0; b < n; ++b) {
    const auto& [lb, rb] = match.buffers[b];
    for (const Expr& e : match.rhs_indices.at(rb.get())) {
      if (auto* v = AsPtr<VarNode>(e)) {
        auto& m = rhs_mask[v];
        m.resize(n);
        m[b] = true;
      }
    }
    for (const Expr& e : match.lhs_indices.at(lb.get())) {
      UsesVar(ana.Simplify(e), [&](const VarNode* v) {
        auto& m = lhs_mask[v];
        m.resize(n);
        m[b] = true;
        return false;
      });
    }
  }
  // Each block iterator goes to the description iterator of its mask and kind (none: kept in
  // front); iterators going to one description iterator are fused in block order.
  IndexMap map;
  std::vector<Expr> fused(desc_block->iter_vars.size());
  std::vector<Expr> unmatched;
  for (const IterVar& iv : block->iter_vars) {
    Var v = VarNode::Make(iv->var->name, iv->var->dtype);
    map.initial_indices.push_back(v);
    std::vector<size_t> candidates;
    auto lm = lhs_mask.find(iv->var.get());
    for (size_t d = 0; d < desc_block->iter_vars.size(); ++d) {
      const IterVar& div = desc_block->iter_vars[d];
      auto rm = rhs_mask.find(div->var.get());
      if (lm == lhs_mask.end() || rm == rhs_mask.end()) continue;
      if (rm->second == lm->second && div->iter_type == iv->iter_type) candidates.push_back(d);
    }
    if (candidates.empty()) {
      unmatched.push_back(v);
    } else if (candidates.size() == 1) {
      Expr& f = fused[candidates[0]];
      f = f ? AddE(MulE(f, CastTo(v->dtype, iv->dom->extent)), v) : Expr(v);
    } else {
      return std::nullopt;  // ambiguous: several description iterators index the same buffers
    }
  }
  map.final_indices = unmatched;
  for (const Expr& f : fused) {
    if (!f) return std::nullopt;  // a description iterator no block iterator maps to
    map.final_indices.push_back(Simplify(f));
  }
  AutoTensorizeMappingInfo info;
  info.mappings.push_back(std::move(map));
  info.lhs_buffer_map = match.buffers;
  for (const auto& [lb, rb] : match.buffers)
    info.rhs_buffer_indices.emplace_back(rb, match.rhs_indices.at(rb.get()));
  info.lhs_iters = block->iter_vars;
  info.rhs_iters = desc_block->iter_vars;
  return info;
}

}  // namespace schedule
}  // namespace tessera
