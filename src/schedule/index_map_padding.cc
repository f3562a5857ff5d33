// Index maps over domains they do not tile exactly: the shape a map produces (TVM's
// IndexMap.map_shape), its inverse with the predicate of the padding it introduces
// (IndexMap.non_surjective_inverse), and the element permutation behind IndexMap.map_tensor.
//
//   lambda i: (i // 4, i % 4) over [0, 14)  ->  shape (4, 4); inverse lambda a, b: (a * 4 + b,)
//   with padding where a == 3 and b >= 2.
#include <algorithm>
#include <unordered_map>

#include "tessera/arith/analyzer.h"
#include "tessera/arith/iter_affine_map.h"
#include "tessera/ir/expr_ops.h"
#include "tessera/ir/functor.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/schedule/index_map_analysis.h"
#include "tessera/support/error.h"

namespace tessera {
namespace schedule {
namespace {

// A symbolic extent stands in as this constant for the split analysis: a multiple of every
// small factor, so that the splits of a symbolic extent tile it as those of a constant would.
constexpr int64_t kSymbolicStandIn = int64_t{720720} * 1024;

// The constant extents of `shape`, a symbolic one replaced by kSymbolicStandIn (`symbolic`
// records which).
std::vector<int64_t> StandInShape(const std::vector<Expr>& shape, std::vector<bool>* symbolic) {
  std::vector<int64_t> out;
  for (const Expr& e : shape) {
    auto extent = AsConstInt(e);
    symbolic->push_back(!extent);
    out.push_back(extent ? *extent : kSymbolicStandIn);
  }
  return out;
}

// ceildiv(e, f) as TVM writes it for a symbolic e: (e - e % -f) // f.
Expr SymbolicCeilDiv(const Expr& e, int64_t f) {
  Expr neg = IntConst(e->dtype, -f);
  return FloorDivNode::Make(SubNode::Make(e, FloorModNode::Make(e, neg)), IntConst(e->dtype, f));
}

// For each final index that is one split of an initial index (of a symbolic extent):
// (index, lower factor, extent, whether it is that index's outermost split); index -1 else.
struct SplitInfo {
  int var = -1;
  int64_t factor = 1, extent = 1;
  bool outer = false;
};
std::vector<SplitInfo> Splits(const IndexMap& map, const std::vector<int64_t>& extents) {
  std::vector<arith::IterDomain> iters;
  for (size_t d = 0; d < extents.size(); ++d)
    iters.push_back({map.initial_indices[d], 0, extents[d]});
  auto iter_map = arith::DetectIterMap(map.final_indices, iters);
  std::vector<SplitInfo> out(map.final_indices.size());
  if (!iter_map) return out;
  for (size_t k = 0; k < iter_map->size(); ++k) {
    const arith::IterSum& sum = (*iter_map)[k];
    if (sum->args.size() != 1 || sum->base != 0 || sum->args[0]->scale != 1) continue;
    const arith::IterSplit& split = sum->args[0];
    for (size_t d = 0; d < extents.size(); ++d) {
      if (split->source->var.get() == map.initial_indices[d].get()) {
        out[k] = {static_cast<int>(d), split->lower_factor, split->extent, false};
      }
    }
  }
  for (size_t k = 0; k < out.size(); ++k) {
    if (out[k].var < 0) continue;
    bool outer = true;
    for (const SplitInfo& other : out) {
      if (other.var == out[k].var && other.factor > out[k].factor) outer = false;
    }
    out[k].outer = outer;
  }
  return out;
}

bool UsesSymbolic(const Expr& e, const IndexMap& map, const std::vector<bool>& symbolic) {
  for (size_t d = 0; d < symbolic.size(); ++d) {
    if (symbolic[d] && UsesVar(e, map.initial_indices[d].get())) return true;
  }
  return false;
}

void CheckRank(const char* what, const IndexMap& map, size_t rank) {
  if (rank == map.initial_indices.size()) return;
  TESSERA_THROW_KIND(Span(), ErrorKind::kValue)
      << what << ": the map takes " << map.initial_indices.size() << " indices, the shape has "
      << rank << " dimensions";
}

// The extent of every final index over the domain [0, shape): max - min + 1 of its values.
std::vector<int64_t> FinalExtents(const char* what, const IndexMap& map,
                                  const std::vector<int64_t>& shape) {
  arith::Analyzer ana;
  for (size_t i = 0; i < shape.size(); ++i) {
    const Var& v = map.initial_indices[i];
    ana.Bind(v, RangeNode::Make(IntConst(v->dtype, 0), IntConst(v->dtype, shape[i])));
  }
  std::vector<int64_t> out;
  for (const Expr& e : map.final_indices) {
    arith::ConstIntBound b = ana.GetConstIntBound(e);
    if (b.min_value == arith::ConstIntBound::kNegInf ||
        b.max_value == arith::ConstIntBound::kPosInf) {
      TESSERA_THROW_KIND(Span(), ErrorKind::kValue)
          << what << ": the range of " << map.AsPython() << " is unbounded over the shape";
    }
    int64_t extent = b.max_value - b.min_value + 1;
    // The inner split i % c spans c values even where the domain ends early (padding), as
    // TVM's iterator ranges do.
    if (auto* mod = AsPtr<FloorModNode>(e)) {
      auto c = AsConstInt(mod->b);
      if (c && *c > 0 && b.min_value >= 0) extent = std::max(extent, *c);
    }
    out.push_back(extent);
  }
  return out;
}

// The constant c when every use of `v` in `exprs` is `v + c` (0 when `v` is used bare): the
// left padding of a map such as lambda i: ((i + 1) // 4, (i + 1) % 4).
int64_t LeftOffset(const VarNode* v, const std::vector<Expr>& exprs) {
  std::optional<int64_t> offset;
  bool consistent = true;
  for (const Expr& e : exprs) {
    IRTransform(e,
                [&](const ObjectRef& node) -> ObjectRef {
                  if (auto* add = AsPtr<AddNode>(node)) {
                    auto c = AsConstInt(add->b);
                    if (add->a.get() == v && c) {
                      consistent = consistent && (!offset || *offset == *c);
                      offset = *c;
                      return node;  // do not visit the variable as a bare use
                    }
                  }
                  if (node.get() == v) {
                    consistent = consistent && (!offset || *offset == 0);
                    offset = 0;
                  }
                  return nullptr;
                },
                nullptr, {});
  }
  return consistent && offset && *offset > 0 ? *offset : 0;
}

int64_t Evaluate(const Expr& e, const std::unordered_map<const VarNode*, int64_t>& values) {
  if (auto c = AsConstInt(e)) return *c;
  if (auto* v = AsPtr<VarNode>(e)) return values.at(v);
  if (auto* cast = AsPtr<CastNode>(e)) return Evaluate(cast->value, values);
  if (auto* bin = AsPtr<BinaryNode>(e)) {
    int64_t a = Evaluate(bin->a, values), b = Evaluate(bin->b, values);
    switch (bin->kind) {
      case NodeKind::kAdd:
        return a + b;
      case NodeKind::kSub:
        return a - b;
      case NodeKind::kMul:
        return a * b;
      case NodeKind::kMin:
        return std::min(a, b);
      case NodeKind::kMax:
        return std::max(a, b);
      case NodeKind::kDiv:
      case NodeKind::kMod:
      case NodeKind::kFloorDiv:
      case NodeKind::kFloorMod: {
        if (b == 0) break;
        if (bin->kind == NodeKind::kDiv) return a / b;
        if (bin->kind == NodeKind::kMod) return a % b;
        int64_t q = a / b - ((a % b != 0) && ((a < 0) != (b < 0)) ? 1 : 0);
        return bin->kind == NodeKind::kFloorDiv ? q : a - q * b;
      }
      default:
        break;
    }
  }
  TESSERA_THROW_KIND(Span(), ErrorKind::kValue)
      << "IndexMap.map_tensor: cannot evaluate the index expression (only integer arithmetic, "
         "divisions by non-zero constants and min/max are supported)";
}

}  // namespace

std::vector<Expr> MapShape(const IndexMap& map, const std::vector<Expr>& shape) {
  CheckRank("IndexMap.map_shape", map, shape.size());
  std::vector<bool> symbolic;
  std::vector<int64_t> stand_in = StandInShape(shape, &symbolic);
  std::vector<int64_t> extents = FinalExtents("IndexMap.map_shape", map, stand_in);
  // A split of a symbolic extent E: the outermost one spans ceildiv(E, factor).
  std::vector<SplitInfo> splits;
  if (std::find(symbolic.begin(), symbolic.end(), true) != symbolic.end()) {
    splits = Splits(map, stand_in);
    for (size_t k = 0; k < map.final_indices.size(); ++k) {
      if (!UsesSymbolic(map.final_indices[k], map, symbolic)) continue;
      if (splits[k].var < 0) {
        TESSERA_THROW_KIND(Span(), ErrorKind::kValue)
            << "IndexMap.map_shape: over a symbolic shape, only results that split an index "
               "(i // c, i % c) are supported; result "
            << k << " of " << map.AsPython() << " is not one";
      }
    }
  }
  // The sizes take the widest type of the given shape and the map's results.
  std::vector<Expr> out;
  for (size_t k = 0; k < extents.size(); ++k) {
    DataType t = map.final_indices[k]->dtype;
    for (const Expr& s : shape) {
      if (s->dtype.bits() > t.bits()) t = s->dtype;
    }
    if (!splits.empty() && splits[k].var >= 0 && symbolic[splits[k].var] && splits[k].outer) {
      out.push_back(SymbolicCeilDiv(CastTo(t, shape[splits[k].var]), splits[k].factor));
    } else {
      out.push_back(IntConst(t, extents[k]));
    }
  }
  return out;
}

std::pair<IndexMap, Expr> NonSurjectiveInverse(const IndexMap& map,
                                               const std::vector<Expr>& shape) {
  const char* what = "IndexMap.non_surjective_inverse";
  CheckRank(what, map, shape.size());
  std::vector<bool> symbolic;
  std::vector<int64_t> extents = StandInShape(shape, &symbolic);
  size_t n = extents.size();
  // Each initial index i becomes p = i + left (left padding), so that the map reads p bare.
  std::vector<int64_t> left(n);
  std::vector<Var> padded(n);
  VarMap shift;
  for (size_t d = 0; d < n; ++d) {
    const Var& v = map.initial_indices[d];
    left[d] = symbolic[d] ? 0 : LeftOffset(v.get(), map.final_indices);
    padded[d] = VarNode::Make(v->name, v->dtype);
    shift[v.get()] = SubE(padded[d], IntConst(v->dtype, left[d]));
  }
  IndexMap over_padded{padded, {}};
  arith::Analyzer simplifier;
  for (const Expr& e : map.final_indices) {
    over_padded.final_indices.push_back(simplifier.Simplify(Substitute(e, shift)));
  }
  // The padded extent of p: the product of the sizes of the results that use p alone.
  std::vector<int64_t> used_extent(n);
  for (size_t d = 0; d < n; ++d) used_extent[d] = left[d] + extents[d];
  std::vector<int64_t> out_extents = FinalExtents(what, over_padded, used_extent);
  std::vector<int64_t> padded_extent(n, 1);
  std::vector<bool> alone(n, true);
  for (size_t k = 0; k < out_extents.size(); ++k) {
    std::vector<size_t> uses;
    for (size_t d = 0; d < n; ++d) {
      if (UsesVar(over_padded.final_indices[k], padded[d].get())) uses.push_back(d);
    }
    if (uses.size() == 1) padded_extent[uses[0]] *= out_extents[k];
    if (uses.size() > 1) {
      for (size_t d : uses) alone[d] = false;
    }
  }
  std::vector<Expr> padded_shape;
  for (size_t d = 0; d < n; ++d) {
    if (!alone[d] || padded_extent[d] < used_extent[d]) padded_extent[d] = used_extent[d];
    padded_shape.push_back(IntConst(padded[d]->dtype, padded_extent[d]));
  }
  IndexMap padded_inverse = InverseIndexMap(over_padded, padded_shape);
  IndexMap inverse{padded_inverse.initial_indices, {}};
  for (size_t d = 0; d < n; ++d) {
    Expr p = padded_inverse.final_indices[d];
    inverse.final_indices.push_back(simplifier.Simplify(SubE(p, IntConst(p->dtype, left[d]))));
  }

  // The padding: the results whose p lies before `left` or past `left + extent`. Written per
  // padded index over its outermost result o (split factor F, extent O) and the value r of the
  // inner results: o == 0 && r < left, o == O - 1 && r >= rest (o omitted when O is 1).
  std::vector<arith::IterDomain> iters;
  for (size_t d = 0; d < n; ++d) iters.push_back({padded[d], 0, padded_extent[d]});
  auto iter_map = arith::DetectIterMap(over_padded.final_indices, iters);
  Expr predicate;
  auto either = [](const Expr& a, const Expr& b) { return a ? OrNode::Make(a, b) : b; };
  for (size_t d = 0; d < n; ++d) {
    int64_t right_start = left[d] + extents[d];
    if (left[d] == 0 && right_start == padded_extent[d] && !symbolic[d]) continue;
    // The results that are single splits of p: (output variable, lower factor, extent).
    struct Part {
      Var out;
      int64_t factor, extent;
    };
    std::vector<Part> parts;
    for (size_t k = 0; iter_map && k < iter_map->size(); ++k) {
      const arith::IterSum& sum = (*iter_map)[k];
      if (sum->args.size() != 1 || sum->base != 0) continue;
      const arith::IterSplit& s = sum->args[0];
      if (s->source->var.get() != padded[d].get() || s->scale != 1) continue;
      parts.push_back({inverse.initial_indices[k], s->lower_factor, s->extent});
    }
    auto outer = std::max_element(parts.begin(), parts.end(),
                                  [](const Part& a, const Part& b) { return a.factor < b.factor; });
    Expr p_value = padded_inverse.final_indices[d];
    DataType t = p_value->dtype;
    Expr pad;
    bool structured = outer != parts.end() && left[d] < outer->factor &&
                      right_start > padded_extent[d] - outer->factor;
    if (symbolic[d]) {
      // Past a symbolic extent E: where E is not a multiple of F, the last outer step (E // F)
      // from the inner position E % F on, as TVM writes it.
      if (outer == parts.end()) {
        TESSERA_THROW_KIND(Span(), ErrorKind::kValue)
            << what << ": over a symbolic shape, only maps that split an index are supported";
      }
      Expr inner;
      for (const Part& part : parts) {
        if (&part == &*outer) continue;
        Expr term = MulE(CastTo(t, part.out), IntConst(t, part.factor));
        inner = inner ? AddE(inner, term) : term;
      }
      if (!inner) inner = IntConst(t, 0);
      Expr e = CastTo(t, shape[d]);
      Expr f = IntConst(t, outer->factor);
      Expr guard = NENode::Make(FloorModNode::Make(e, IntConst(t, -outer->factor)), IntConst(t, 0));
      Expr last = AndNode::Make(EQNode::Make(CastTo(t, outer->out), FloorDivNode::Make(e, f)),
                                GENode::Make(inner, FloorModNode::Make(e, f)));
      predicate = either(predicate, AndNode::Make(guard, last));
      continue;
    }
    if (structured) {
      Expr inner;
      for (const Part& part : parts) {
        if (&part == &*outer) continue;
        Expr term = MulE(CastTo(t, part.out), IntConst(t, part.factor));
        inner = inner ? AddE(inner, term) : term;
      }
      if (!inner) inner = IntConst(t, 0);
      Expr o = CastTo(t, outer->out);
      auto at_outer = [&](int64_t index, const Expr& cond) {
        return outer->extent == 1 ? cond : AndNode::Make(EQNode::Make(o, IntConst(t, index)), cond);
      };
      if (left[d] > 0) pad = at_outer(0, LTNode::Make(inner, IntConst(t, left[d])));
      if (right_start < padded_extent[d]) {
        int64_t rest = right_start - (outer->extent - 1) * outer->factor;
        Expr cond = GENode::Make(inner, IntConst(t, rest));
        if (rest == outer->factor - 1) cond = EQNode::Make(inner, IntConst(t, rest));
        pad = either(pad, at_outer(outer->extent - 1, cond));
      }
    } else {
      if (left[d] > 0) pad = LTNode::Make(p_value, IntConst(t, left[d]));
      if (right_start < padded_extent[d]) {
        pad = either(pad, GENode::Make(p_value, IntConst(t, right_start)));
      }
    }
    predicate = either(predicate, pad);
  }
  if (!predicate) predicate = Bool(false);
  return {inverse, simplifier.Simplify(predicate)};
}

std::vector<int64_t> MapIndexOffsets(const IndexMap& map, const std::vector<int64_t>& shape,
                                     std::vector<int64_t>* out_shape) {
  CheckRank("IndexMap.map_tensor", map, shape.size());
  *out_shape = FinalExtents("IndexMap.map_tensor", map, shape);
  int64_t total = 1;
  for (int64_t s : shape) total *= s;
  std::vector<int64_t> offsets;
  offsets.reserve(total);
  std::unordered_map<const VarNode*, int64_t> values;
  std::vector<int64_t> index(shape.size(), 0);
  for (int64_t flat = 0; flat < total; ++flat) {
    for (size_t d = 0; d < shape.size(); ++d) values[map.initial_indices[d].get()] = index[d];
    int64_t offset = 0;
    for (size_t k = 0; k < map.final_indices.size(); ++k) {
      int64_t v = Evaluate(map.final_indices[k], values);
      if (v < 0 || v >= (*out_shape)[k]) {
        TESSERA_THROW_KIND(Span(), ErrorKind::kValue)
            << "IndexMap.map_tensor: " << map.AsPython() << " maps an element outside the "
            << "shape it produces";
      }
      offset = offset * (*out_shape)[k] + v;
    }
    offsets.push_back(offset);
    for (size_t d = shape.size(); d-- > 0;) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
  return offsets;
}

}  // namespace schedule
}  // namespace tessera
