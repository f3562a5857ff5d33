// Matching of the commutative reducers of reduction blocks (see tessera/ir/reducer.h).
#include "tessera/ir/reducer.h"

#include <cfloat>
#include <climits>

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
    default:
      return "max";
  }
}

std::optional<ReducerMatch> MatchReducer(const BufferStoreNode* store) {
  auto* bin = AsPtr<BinaryNode>(store->value);
  if (!bin) return std::nullopt;
  NodeKind k = bin->kind;
  if (k != NodeKind::kAdd && k != NodeKind::kMul && k != NodeKind::kMin && k != NodeKind::kMax) {
    return std::nullopt;
  }
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
  return r;
}

}  // namespace tessera
