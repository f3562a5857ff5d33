// Matching of the commutative reducers of reduction blocks (see tessera/ir/reducer.h).
#include "tessera/ir/reducer.h"

#include <cfloat>
#include <climits>
#include <cmath>

#include "tessera/ir/ir_utils.h"
#include "tessera/ir/structural_equal.h"

namespace tessera {

Expr LowestValue(DataType t) {
  if (t.is_float()) {
    double v = t.bits() == 64 ? -DBL_MAX : t.bits() == 16 ? -65504.0 : -FLT_MAX;
    return FloatImmNode::Make(t, v);
  }
  if (t.is_uint() || t.is_bool()) return IntImmNode::Make(t, 0);
  return IntImmNode::Make(t, t.bits() >= 64 ? INT64_MIN : -(int64_t{1} << (t.bits() - 1)));
}

Expr HighestValue(DataType t) {
  if (t.is_float()) {
    double v = t.bits() == 64 ? DBL_MAX : t.bits() == 16 ? 65504.0 : FLT_MAX;
    return FloatImmNode::Make(t, v);
  }
  if (t.is_bool()) return IntImmNode::Make(t, 1);
  if (t.is_uint()) return IntImmNode::Make(t, t.bits() >= 64 ? -1 : (int64_t{1} << t.bits()) - 1);
  return IntImmNode::Make(t, t.bits() >= 64 ? INT64_MAX : (int64_t{1} << (t.bits() - 1)) - 1);
}

Expr ReducerIdentity(NodeKind kind, DataType t) {
  switch (kind) {
    case NodeKind::kAdd:
      return t.is_float() ? Expr(FloatImmNode::Make(t, 0.0)) : IntImmNode::Make(t, 0);
    case NodeKind::kMul:
      return t.is_float() ? Expr(FloatImmNode::Make(t, 1.0)) : IntImmNode::Make(t, 1);
    case NodeKind::kMin:
      return HighestValue(t);
    case NodeKind::kOr:
      return IntImmNode::Make(t, 0);
    case NodeKind::kAnd:
      return IntImmNode::Make(t, 1);
    default:
      return LowestValue(t);
  }
}

Expr ReducerCombine(NodeKind kind, const Expr& a, const Expr& b) {
  switch (kind) {
    case NodeKind::kAdd:
      return AddNode::Make(a, b);
    case NodeKind::kMul:
      return MulNode::Make(a, b);
    case NodeKind::kMin:
      return MinNode::Make(a, b);
    case NodeKind::kOr:
      return OrNode::Make(a, b);
    case NodeKind::kAnd:
      return AndNode::Make(a, b);
    default:
      return MaxNode::Make(a, b);
  }
}

std::optional<NodeKind> ReducerKindFromName(const std::string& name) {
  if (name == "sum") return NodeKind::kAdd;
  if (name == "prod") return NodeKind::kMul;
  if (name == "min") return NodeKind::kMin;
  if (name == "max") return NodeKind::kMax;
  return std::nullopt;
}

Expr ReducerMatch::Combine(const Expr& acc, const Expr& value) const {
  return load_first ? ReducerCombine(kind, acc, value) : ReducerCombine(kind, value, acc);
}

std::string ReducerMatch::Name() const {
  switch (kind) {
    case NodeKind::kAdd:
      return "sum";
    case NodeKind::kMul:
      return "prod";
    case NodeKind::kMin:
      return "min";
    case NodeKind::kOr:
      return "any";
    case NodeKind::kAnd:
      return "all";
    default:
      return "max";
  }
}

std::optional<ReducerMatch> MatchReducer(const BufferStoreNode* store, const Expr& init,
                                         bool logical) {
  auto* bin = AsPtr<BinaryNode>(store->value);
  if (!bin) return std::nullopt;
  NodeKind k = bin->kind;
  bool known = k == NodeKind::kAdd || k == NodeKind::kMul || k == NodeKind::kMin ||
               k == NodeKind::kMax;
  if (logical && (k == NodeKind::kOr || k == NodeKind::kAnd)) known = store->value->dtype.is_bool();
  if (!known) return std::nullopt;
  auto is_acc = [&](const Expr& e) {
    auto* load = AsPtr<BufferLoadNode>(e);
    if (!load || load->buffer != store->buffer || load->indices.size() != store->indices.size())
      return false;
    for (size_t i = 0; i < load->indices.size(); ++i) {
      if (!StructuralEqual(load->indices[i], store->indices[i])) return false;
    }
    return true;
  };
  ReducerMatch r;
  r.kind = k;
  if (is_acc(bin->a)) {
    r.load_first = true;
    r.rhs = bin->b;
  } else if (is_acc(bin->b)) {
    r.load_first = false;
    r.rhs = bin->a;
  } else {
    return std::nullopt;
  }
  r.identity = ReducerIdentity(k, store->value->dtype);
  auto* inf = init ? AsPtr<FloatImmNode>(init) : nullptr;
  if (inf && inf->dtype == store->value->dtype && std::isinf(inf->value) &&
      (k == NodeKind::kMax ? inf->value < 0 : k == NodeKind::kMin && inf->value > 0)) {
    r.identity = init;
  }
  return r;
}

namespace {

using Bindings = std::unordered_map<const VarNode*, Expr>;

// Whether `e` has the shape of `pattern`, whose variables stand for any expression of their
// type (the same one at each use); binds them in `bound`.
bool MatchShape(const Expr& pattern, const Expr& e, Bindings* bound) {
  if (auto* v = AsPtr<VarNode>(pattern)) {
    auto it = bound->find(v);
    if (it != bound->end()) return StructuralEqual(it->second, e);
    if (e->dtype != v->dtype) return false;
    (*bound)[v] = e;
    return true;
  }
  if (pattern->kind != e->kind) return false;
  if (auto* p = AsPtr<BinaryNode>(pattern)) {
    auto* b = AsPtr<BinaryNode>(e);
    return MatchShape(p->a, b->a, bound) && MatchShape(p->b, b->b, bound);
  }
  if (auto* p = AsPtr<SelectNode>(pattern)) {
    auto* s = AsPtr<SelectNode>(e);
    return MatchShape(p->condition, s->condition, bound) &&
           MatchShape(p->true_value, s->true_value, bound) &&
           MatchShape(p->false_value, s->false_value, bound);
  }
  return StructuralEqual(pattern, e);
}

TupleReducerMatch KnownTupleReducer(const std::string& name, DataType t0, DataType t1) {
  TupleReducerMatch r;
  r.name = name;
  r.lhs = {VarNode::Make("x0", t0), VarNode::Make("x1", t1)};
  r.rhs_vars = {VarNode::Make("y0", t0), VarNode::Make("y1", t1)};
  const Var &x0 = r.lhs[0], &x1 = r.lhs[1], &y0 = r.rhs_vars[0], &y1 = r.rhs_vars[1];
  if (name == "sum2") {
    r.combiner = {AddNode::Make(x0, y0), AddNode::Make(x1, y1)};
    r.identity = {ReducerIdentity(NodeKind::kAdd, t0), ReducerIdentity(NodeKind::kAdd, t1)};
    return r;
  }
  bool is_max = name.rfind("argmax", 0) == 0;
  r.identity = {IntImmNode::Make(t0, -1), is_max ? LowestValue(t1) : HighestValue(t1)};
  if (name == "argmax" || name == "argmin") {
    // Ties keep the accumulator.
    Expr keep = is_max ? Expr(GENode::Make(x1, y1)) : Expr(LENode::Make(x1, y1));
    r.combiner = {SelectNode::Make(keep, x0, y0), SelectNode::Make(keep, x1, y1)};
    return r;
  }
  // Ties go to the smaller index.
  Expr better = is_max ? Expr(GTNode::Make(x1, y1)) : Expr(LTNode::Make(x1, y1));
  Expr keep_index = OrNode::Make(better, AndNode::Make(EQNode::Make(x1, y1), LTNode::Make(x0, y0)));
  r.combiner = {SelectNode::Make(keep_index, x0, y0), SelectNode::Make(better, x1, y1)};
  return r;
}

}  // namespace

std::vector<Expr> TupleReducerMatch::Combine(const std::vector<Expr>& acc,
                                             const std::vector<Expr>& value) const {
  VarMap map;
  for (size_t i = 0; i < lhs.size(); ++i) {
    map[lhs[i].get()] = acc[i];
    map[rhs_vars[i].get()] = value[i];
  }
  std::vector<Expr> out;
  for (const Expr& c : combiner) out.push_back(Substitute(c, map));
  return out;
}

std::optional<TupleReducerMatch> MatchTupleReducer(const std::vector<Expr>& accs,
                                                   const std::vector<Expr>& values) {
  if (accs.size() != 2 || values.size() != 2) return std::nullopt;
  DataType t0 = values[0]->dtype, t1 = values[1]->dtype;
  for (const char* name : {"sum2", "argmax", "argmin", "argmax_first", "argmin_first"}) {
    TupleReducerMatch r = KnownTupleReducer(name, t0, t1);
    Bindings bound;
    for (size_t i = 0; i < accs.size(); ++i) bound[r.lhs[i].get()] = accs[i];
    bool ok = true;
    for (size_t i = 0; ok && i < values.size(); ++i)
      ok = MatchShape(r.combiner[i], values[i], &bound);
    if (!ok) continue;
    for (const Var& y : r.rhs_vars) {
      auto it = bound.find(y.get());
      if (it == bound.end()) {
        ok = false;
        break;
      }
      r.rhs.push_back(it->second);
    }
    if (ok) return r;
  }
  return std::nullopt;
}

}  // namespace tessera
