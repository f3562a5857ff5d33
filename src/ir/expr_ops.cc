// Typed expression builders with constant folding.
#include "tessera/ir/expr_ops.h"

#include <limits>
#include <optional>

namespace tessera {
namespace {

DataType Wider(const Expr& a, const Expr& b) {
  return a->dtype.bits() >= b->dtype.bits() ? a->dtype : b->dtype;
}

// The folded constant, when both operands are integer constants and `value` fits `t`.
std::optional<int64_t> Fits(DataType t, std::optional<int64_t> value) {
  if (!value || !t.is_int() || !t.is_scalar() || t.bits() > 64) return std::nullopt;
  if (t.bits() == 64) return value;
  int64_t hi = (int64_t{1} << (t.bits() - 1)) - 1, lo = -hi - 1;
  if (*value < lo || *value > hi) return std::nullopt;
  return value;
}

template <typename Node, typename Fold>
Expr Binary(const Expr& a, const Expr& b, Fold fold) {
  DataType t = Wider(a, b);
  Expr x = CastTo(t, a), y = CastTo(t, b);
  auto cx = AsConstInt(x), cy = AsConstInt(y);
  if (cx && cy) {
    if (auto v = Fits(t, fold(*cx, *cy))) return IntImmNode::Make(t, *v);
  }
  return Node::Make(x, y);
}

// Overflow-checked arithmetic: nullopt where int64 overflows.
std::optional<int64_t> CheckedAdd(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}
std::optional<int64_t> CheckedSub(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) return std::nullopt;
  return r;
}
std::optional<int64_t> CheckedMul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}
std::optional<int64_t> FloorDiv(int64_t a, int64_t b) {
  if (b == 0 || (a == std::numeric_limits<int64_t>::min() && b == -1)) return std::nullopt;
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
std::optional<int64_t> FloorMod(int64_t a, int64_t b) {
  if (b == 0 || (a == std::numeric_limits<int64_t>::min() && b == -1)) return std::nullopt;
  int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

}  // namespace

Expr IntConst(DataType t, int64_t v) { return IntImmNode::Make(t, v); }

Expr CastTo(DataType t, const Expr& e) {
  if (e->dtype == t) return e;
  if (auto c = AsConstInt(e)) return IntImmNode::Make(t, *c);
  return CastNode::Make(t, e);
}

Expr AddE(const Expr& a, const Expr& b) { return Binary<AddNode>(a, b, CheckedAdd); }
Expr SubE(const Expr& a, const Expr& b) { return Binary<SubNode>(a, b, CheckedSub); }
Expr MulE(const Expr& a, const Expr& b) { return Binary<MulNode>(a, b, CheckedMul); }
Expr FloorDivE(const Expr& a, const Expr& b) { return Binary<FloorDivNode>(a, b, FloorDiv); }
Expr FloorModE(const Expr& a, const Expr& b) { return Binary<FloorModNode>(a, b, FloorMod); }

Expr AndE(const Expr& a, const Expr& b) {
  if (!a || IsConstInt(a, 1)) return b;
  if (!b || IsConstInt(b, 1)) return a;
  return AndNode::Make(a, b);
}

}  // namespace tessera
