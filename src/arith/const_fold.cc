// Constant folding of the expression operators at construction, with TVM's rules
// (arith/const_fold.h): which operand pairs fold, the identities, and the result types.
#include "tessera/arith/const_fold.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "tessera/support/error.h"

namespace tessera {
namespace arith {
namespace {

// An integer result in `t`'s bits: the low bits, sign-extended for signed types.
int64_t WrapTo(DataType t, int64_t x) {
  if (t.bits() < 64) {
    x = static_cast<int64_t>(static_cast<uint64_t>(x) & ((uint64_t{1} << t.bits()) - 1));
    if (t.is_int()) {
      int64_t m = int64_t{1} << (t.bits() - 1);
      x = (x ^ m) - m;
    }
  }
  return x;
}

// A float32 result: rounded to float; a finite value beyond float's range becomes infinite.
double AsFloat32(float x) {
  double r = static_cast<double>(x);
  if (std::isinf(r) || std::isnan(r)) return r;
  if (r < std::numeric_limits<float>::lowest()) return -std::numeric_limits<double>::infinity();
  if (r > std::numeric_limits<float>::max()) return std::numeric_limits<double>::infinity();
  return r;
}

// Two's-complement arithmetic in 64 bits (wraps instead of overflowing).
int64_t WrapAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
int64_t WrapSub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
int64_t WrapMul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}
int64_t FloorDivInt(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
int64_t FloorModInt(int64_t a, int64_t b) {
  int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

// TVM's index types: scalar int32 and int64 (Mod and FloorMod fold only there).
bool IsIndexType(DataType t) {
  return t.is_int() && t.is_scalar() && (t.bits() == 32 || t.bits() == 64);
}

[[noreturn]] void DivideByZero(const Span& span) {
  TESSERA_THROW_KIND(span, ErrorKind::kValue) << "division by the constant zero";
}

struct Operands {
  const IntImmNode* pa;
  const IntImmNode* pb;
  const FloatImmNode* fa;
  const FloatImmNode* fb;
  DataType t;
};

Expr Int(const Operands& o, int64_t v) {
  DataType t = o.t;
  int64_t w = WrapTo(t, v);
  // uint64 values above int64's range are not representable here: leave them unfolded.
  if (t.is_uint() && t.bits() >= 64 && w < 0) return nullptr;
  return IntImmNode::Make(t, w);
}

// The float result of a binary float fold, in float32 or float64 only (TVM folds no other).
template <typename F>
Expr Float(const Operands& o, F f) {
  if (o.t.bits() == 32) {
    return FloatImmNode::Make(
        o.t, AsFloat32(f(static_cast<float>(o.fa->value), static_cast<float>(o.fb->value))));
  }
  if (o.t.bits() == 64) return FloatImmNode::Make(o.t, f(o.fa->value, o.fb->value));
  return nullptr;
}

Expr Bool(bool v) { return IntImmNode::Make(DataType::Bool(), v ? 1 : 0); }

Expr FoldArith(NodeKind kind, const Expr& a, const Expr& b, const Operands& o, const Span& span) {
  const IntImmNode *pa = o.pa, *pb = o.pb;
  const FloatImmNode *fa = o.fa, *fb = o.fb;
  switch (kind) {
    case NodeKind::kAdd:
      if (pa && pb) return Int(o, WrapAdd(pa->value, pb->value));
      if (pa && pa->value == 0) return b;
      if (pb && pb->value == 0) return a;
      if (fa && fb) {
        if (Expr r = Float(o, [](auto x, auto y) { return x + y; })) return r;
      }
      if (fa && fa->value == 0) return b;
      if (fb && fb->value == 0) return a;
      return nullptr;
    case NodeKind::kSub:
      if (pa && pb && pa->dtype.is_uint() && pa->value == 0 && pb->value > 0) {
        TESSERA_THROW_KIND(span, ErrorKind::kValue)
            << "0 - " << pb->value << " of type " << o.t.ToString()
            << " would be a negative unsigned value";
      }
      if (pa && pb) return Int(o, WrapSub(pa->value, pb->value));
      if (pb && pb->value == 0) return a;
      if (fa && fb) {
        if (Expr r = Float(o, [](auto x, auto y) { return x - y; })) return r;
      }
      if (fb && fb->value == 0) return a;
      return nullptr;
    case NodeKind::kMul:
      if (pa && pb) return Int(o, WrapMul(pa->value, pb->value));
      if (pa && pa->value == 1) return b;
      if (pa && pa->value == 0) return a;
      if (pb && pb->value == 1) return a;
      if (pb && pb->value == 0) return b;
      if (fa && fb) {
        if (Expr r = Float(o, [](auto x, auto y) { return x * y; })) return r;
      }
      if (fa && fa->value == 1) return b;
      if (fa && fa->value == 0) return a;
      if (fb && fb->value == 1) return a;
      if (fb && fb->value == 0) return b;
      return nullptr;
    case NodeKind::kDiv:  // truncating on integers
      if (pb && pb->value == 0) DivideByZero(span);
      if (pa && pb) {
        if (pa->value == std::numeric_limits<int64_t>::min() && pb->value == -1) return nullptr;
        return Int(o, pa->value / pb->value);
      }
      if (pa && pa->value == 0) return a;
      if (pb && pb->value == 1) return a;
      if (fb && fb->value == 0) DivideByZero(span);
      if (fa && fb) {
        if (Expr r = Float(o, [](auto x, auto y) { return x / y; })) return r;
      }
      if (fa && fa->value == 0) return a;
      if (fb && fb->value == 1) return a;
      return nullptr;
    case NodeKind::kFloorDiv:
      if (pb && pb->value == 0) DivideByZero(span);
      if (pa && pb) {
        if (pa->value == std::numeric_limits<int64_t>::min() && pb->value == -1) return nullptr;
        return Int(o, FloorDivInt(pa->value, pb->value));
      }
      if (pa && pa->value == 0) return a;
      if (pb && pb->value == 1) return a;
      if (fa && fb && fb->value != 0) {
        if (o.t.bits() == 32) {
          return FloatImmNode::Make(o.t, AsFloat32(std::floor(static_cast<float>(fa->value) /
                                                              static_cast<float>(fb->value))));
        }
        if (o.t.bits() == 64) return FloatImmNode::Make(o.t, std::floor(fa->value / fb->value));
        return nullptr;
      }
      if (fa && fa->value == 0) return a;
      if (fb && fb->value == 1) return a;
      if (fb && fb->value == 0) DivideByZero(span);
      return nullptr;
    case NodeKind::kMod:  // truncating; index types only
    case NodeKind::kFloorMod:
      if (!IsIndexType(a->dtype) || !IsIndexType(b->dtype)) return nullptr;
      if (pb && pb->value == 0) DivideByZero(span);
      if (pa && pb) {
        if (pb->value == -1) return Int(o, 0);
        return Int(
            o, kind == NodeKind::kMod ? pa->value % pb->value : FloorModInt(pa->value, pb->value));
      }
      if (pa && pa->value == 0) return a;
      if (pb && pb->value == 1) return IntImmNode::Make(o.t, 0);
      return nullptr;
    case NodeKind::kMin:
    case NodeKind::kMax: {
      bool is_min = kind == NodeKind::kMin;
      if (pa && pb) {
        return IntImmNode::Make(
            o.t, is_min ? std::min(pa->value, pb->value) : std::max(pa->value, pb->value));
      }
      if (fa && fb) {
        return FloatImmNode::Make(
            o.t, is_min ? std::min(fa->value, fb->value) : std::max(fa->value, fb->value));
      }
      if (a == b) return a;
      return nullptr;
    }
    default:
      break;
  }
  // Comparisons: two integer or two float constants.
  auto compare = [&](auto x, auto y) -> Expr {
    switch (kind) {
      case NodeKind::kEQ:
        return Bool(x == y);
      case NodeKind::kNE:
        return Bool(x != y);
      case NodeKind::kLT:
        return Bool(x < y);
      case NodeKind::kLE:
        return Bool(x <= y);
      case NodeKind::kGT:
        return Bool(x > y);
      case NodeKind::kGE:
        return Bool(x >= y);
      default:
        return nullptr;
    }
  };
  if (pa && pb) return compare(pa->value, pb->value);
  if (fa && fb) return compare(fa->value, fb->value);
  return nullptr;
}

}  // namespace

Expr TryConstFold(NodeKind kind, const Expr& a, const Expr& b, const Span& span) {
  if (!a || !b) return nullptr;
  const IntImmNode* pa = AsPtr<IntImmNode>(a);
  const IntImmNode* pb = AsPtr<IntImmNode>(b);
  if (kind == NodeKind::kAnd || kind == NodeKind::kOr) {
    bool is_and = kind == NodeKind::kAnd;
    // A constant operand decides (false && x, true || x) or drops out (true && x, false || x).
    if (pa) return (pa->value != 0) == is_and ? b : a;
    if (pb) return (pb->value != 0) == is_and ? a : b;
    return nullptr;
  }
  if (a->dtype != b->dtype) return nullptr;  // the node constructor reports the mismatch
  // uint64 constants above int64's range are stored as negative bit patterns: not folded.
  if (a->dtype.is_uint() && ((pa && pa->value < 0) || (pb && pb->value < 0))) return nullptr;
  Operands o{pa, pb, AsPtr<FloatImmNode>(a), AsPtr<FloatImmNode>(b), a->dtype};
  return FoldArith(kind, a, b, o, span);
}

Expr TryConstFoldIntrinsic(const std::string& op, const Expr& a, const Expr& b, const Span& span) {
  if (!a || !b || a->dtype != b->dtype || !IsIndexType(a->dtype)) return nullptr;
  const IntImmNode* pa = AsPtr<IntImmNode>(a);
  const IntImmNode* pb = AsPtr<IntImmNode>(b);
  DataType t = a->dtype;
  if (op == "tir.shift_left" || op == "tir.shift_right") {
    if (pb && (pb->value < 0 || pb->value >= t.bits())) {
      TESSERA_THROW_KIND(span, ErrorKind::kValue)
          << "the shift amount " << pb->value << " is out of range for " << t.ToString()
          << ": it must be in [0, " << t.bits() << ")";
    }
    if (pa && pb) {
      int64_t v = op == "tir.shift_left"
                      ? static_cast<int64_t>(static_cast<uint64_t>(pa->value) << pb->value)
                      : pa->value >> pb->value;
      return IntImmNode::Make(t, WrapTo(t, v));
    }
    if (pb && pb->value == 0) return a;
    return nullptr;
  }
  if (!pa || !pb) return nullptr;
  if (op == "tir.bitwise_and") return IntImmNode::Make(t, pa->value & pb->value);
  if (op == "tir.bitwise_or") return IntImmNode::Make(t, pa->value | pb->value);
  if (op == "tir.bitwise_xor") return IntImmNode::Make(t, pa->value ^ pb->value);
  return nullptr;
}

Expr TryConstFoldNot(const Expr& a) {
  if (auto* p = AsPtr<IntImmNode>(a)) return IntImmNode::Make(DataType::Bool(), p->value == 0);
  return nullptr;
}

namespace {
bool IsVscaleCall(const Expr& e) {
  auto* call = AsPtr<CallNode>(e);
  return call != nullptr && call->args.empty() && call->is_op("tir.vscale");
}
}  // namespace

Expr FoldBinary(NodeKind kind, const Expr& a, const Expr& b, const Span& span) {
  if (Expr r = TryConstFold(kind, a, b, span)) return r;
  // vscale is one value for the whole program: `T.vscale() == T.vscale()` is true (as TVM's
  // `equal` folds it), so lane counts such as `vscale * 4` can be matched by their factor.
  if (kind == NodeKind::kEQ && IsVscaleCall(a) && IsVscaleCall(b)) {
    return IntImmNode::Make(DataType::Bool(), 1, span);
  }
  switch (kind) {
#define TESSERA_MAKE_BINARY(name) \
  case NodeKind::k##name:         \
    return name##Node::Make(a, b, span);
    TESSERA_BINARY_NODES(TESSERA_MAKE_BINARY)
#undef TESSERA_MAKE_BINARY
    default:
      TESSERA_THROW_KIND(span, ErrorKind::kValue)
          << NodeKindName(kind) << " is not a binary expression operator";
  }
}

Expr FoldNot(const Expr& a, const Span& span) {
  if (Expr r = TryConstFoldNot(a)) return r;
  return NotNode::Make(a, span);
}

}  // namespace arith
}  // namespace tessera
