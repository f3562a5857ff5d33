// Constructors of expression nodes with their type checks.
#include "tessera/ir/expr.h"

#include <cctype>
#include <cmath>
#include <limits>

#include "tessera/ir/buffer.h"
#include "tessera/ir/function.h"
#include "tessera/ir/op.h"
#include "tessera/support/error.h"

namespace tessera {
namespace {

[[noreturn]] void TypeError(const Span& span, const std::string& msg) {
  TESSERA_THROW_KIND(span, ErrorKind::kType) << msg;
}

void CheckNotNull(const Expr& e, const char* what, const Span& span) {
  if (!e) TESSERA_THROW_KIND(span, ErrorKind::kValue) << what << " must not be null";
}

bool FitsInt(DataType t, int64_t v) {
  if (t.is_bool()) return v == 0 || v == 1;
  // 64-bit values are stored as their bit pattern (uint64 max is -1 here).
  if (t.bits() >= 64) return true;
  if (t.is_uint() && v < 0) return false;
  if (t.is_uint()) return v >= 0 && (t.bits() == 64 || v < (int64_t(1) << t.bits()));
  int64_t lo = -(int64_t(1) << (t.bits() - 1)), hi = (int64_t(1) << (t.bits() - 1)) - 1;
  return v >= lo && v <= hi;
}

}  // namespace

Ref<IntImmNode> IntImmNode::Make(DataType t, int64_t value, Span span) {
  if (!t.is_scalar() || !t.is_int_or_bool()) {
    TypeError(span, "IntImm needs a scalar integer or bool type, got " + t.ToString());
  }
  if (!FitsInt(t, value)) {
    TypeError(span, "value " + std::to_string(value) + " is out of range for " + t.ToString());
  }
  return std::make_shared<IntImmNode>(t, value, std::move(span));
}

Ref<FloatImmNode> FloatImmNode::Make(DataType t, double value, Span span) {
  if (!t.is_scalar() || !t.is_float()) {
    TypeError(span, "FloatImm needs a scalar float type, got " + t.ToString());
  }
  // As TVM: a finite literal beyond the largest finite value of float32, float16 or bfloat16 is
  // refused (infinities and NaN are kept).
  if (std::isfinite(value)) {
    double bound = 0;
    if (t.is_bfloat16()) {
      bound = 3.38953139e38;  // TVM's bound (the largest bfloat16, rounded up)
    } else if (t.is_float() && !t.is_narrow_float() && t.bits() == 32) {
      bound = std::numeric_limits<float>::max();
    } else if (t.is_float() && !t.is_narrow_float() && t.bits() == 16) {
      bound = 65504.0;
    }
    if (bound != 0 && std::fabs(value) > bound) {
      TESSERA_THROW_KIND(span, ErrorKind::kValue)
          << "the literal " << value << " is beyond the range of " << t.ToString() << " (±"
          << bound << ")";
    }
  }
  return std::make_shared<FloatImmNode>(t, value, std::move(span));
}

Ref<StringImmNode> StringImmNode::Make(std::string value, Span span) {
  return std::make_shared<StringImmNode>(std::move(value), std::move(span));
}

Var VarNode::Make(std::string name, DataType dtype, Span span) {
  return std::make_shared<VarNode>(NodeKind::kVar, std::move(name), dtype, std::nullopt,
                                   std::move(span));
}

Var VarNode::MakePointer(std::string name, DataType element, std::string scope, Span span) {
  return std::make_shared<VarNode>(NodeKind::kVar, std::move(name), DataType::Handle(),
                                   PointerType{element, std::move(scope)}, std::move(span));
}

Ref<SizeVarNode> SizeVarNode::Make(std::string name, DataType dtype, Span span) {
  if (!(dtype.is_integer() || dtype.is_float()) || !dtype.is_scalar()) {
    TypeError(span, "SizeVar needs a scalar integer or float type, got " + dtype.ToString());
  }
  return std::make_shared<SizeVarNode>(std::move(name), dtype, std::move(span));
}

Ref<CastNode> CastNode::Make(DataType dtype, Expr value, Span span) {
  CheckNotNull(value, "Cast value", span);
  if (dtype.raw_lanes() != value->dtype.raw_lanes()) {
    TypeError(span, "Cast cannot change the lane count: " + value->dtype.ToString() + " to " +
                        dtype.ToString());
  }
  return std::make_shared<CastNode>(dtype, std::move(value), std::move(span));
}

template <NodeKind K>
Ref<BinaryOpNode<K>> BinaryOpNode<K>::Make(Expr a, Expr b, Span span) {
  CheckNotNull(a, "left operand", span);
  CheckNotNull(b, "right operand", span);
  if (a->dtype != b->dtype) {
    TypeError(span, std::string("operand types of ") + NodeKindName(K) + " differ: " +
                        a->dtype.ToString() + " vs. " + b->dtype.ToString());
  }
  DataType t = a->dtype;
  if (K == NodeKind::kAnd || K == NodeKind::kOr) {
    if (!t.is_bool()) {
      TypeError(span, std::string(NodeKindName(K)) + " needs bool operands, got " + t.ToString());
    }
  } else if (K >= NodeKind::kEQ && K <= NodeKind::kGE) {
    t = DataType(DataType::kBool, 1, t.raw_lanes());  // scalable lanes stay scalable
  } else if (t.is_handle() || t.is_void() || t.is_bool()) {
    // Arithmetic needs numbers: bools combine with And/Or, pointers through address_of.
    TypeError(span, std::string(NodeKindName(K)) + " is not defined on " + t.ToString());
  }
  return std::make_shared<BinaryOpNode<K>>(t, std::move(a), std::move(b), std::move(span));
}

#define TESSERA_INSTANTIATE_BINARY(name) template struct BinaryOpNode<NodeKind::k##name>;
TESSERA_BINARY_NODES(TESSERA_INSTANTIATE_BINARY)
#undef TESSERA_INSTANTIATE_BINARY

Ref<NotNode> NotNode::Make(Expr a, Span span) {
  CheckNotNull(a, "operand", span);
  if (!a->dtype.is_bool()) TypeError(span, "Not needs a bool operand, got " + a->dtype.ToString());
  return std::make_shared<NotNode>(std::move(a), std::move(span));
}

Ref<SelectNode> SelectNode::Make(Expr c, Expr t, Expr f, Span span) {
  CheckNotNull(c, "Select condition", span);
  CheckNotNull(t, "Select true value", span);
  CheckNotNull(f, "Select false value", span);
  if (!c->dtype.is_bool()) TypeError(span, "Select condition must be bool, got " + c->dtype.ToString());
  if (t->dtype != f->dtype) {
    TypeError(span, "Select branches differ in type: " + t->dtype.ToString() + " vs. " +
                        f->dtype.ToString());
  }
  if (!c->dtype.is_scalar() && c->dtype.raw_lanes() != t->dtype.raw_lanes()) {
    TypeError(span, "Select condition lanes do not match the values");
  }
  return std::make_shared<SelectNode>(std::move(c), std::move(t), std::move(f), std::move(span));
}

Ref<RampNode> RampNode::Make(Expr base, Expr stride, int lanes, Span span) {
  CheckNotNull(base, "Ramp base", span);
  CheckNotNull(stride, "Ramp stride", span);
  if (!base->dtype.is_scalar() || !base->dtype.is_integer() || base->dtype != stride->dtype) {
    TypeError(span, "Ramp needs scalar integer base and stride of one type, got " +
                        base->dtype.ToString() + " and " + stride->dtype.ToString());
  }
  if (lanes > -2 && lanes < 2) TypeError(span, "Ramp needs at least 2 lanes");
  return std::make_shared<RampNode>(std::move(base), std::move(stride), lanes, std::move(span));
}

Ref<BroadcastNode> BroadcastNode::Make(Expr value, int lanes, Span span) {
  CheckNotNull(value, "Broadcast value", span);
  if (!value->dtype.is_scalar()) TypeError(span, "Broadcast needs a scalar, got " + value->dtype.ToString());
  if (lanes > -2 && lanes < 2) TypeError(span, "Broadcast needs at least 2 lanes");
  return std::make_shared<BroadcastNode>(std::move(value), lanes, std::move(span));
}

Ref<ShuffleNode> ShuffleNode::Make(std::vector<Expr> vectors, std::vector<Expr> indices,
                                   Span span) {
  if (vectors.empty()) TypeError(span, "Shuffle needs at least one vector");
  for (const Expr& v : vectors) CheckNotNull(v, "Shuffle vector", span);
  DataType elem = vectors[0]->dtype.element_of();
  int total = 0;
  for (const Expr& v : vectors) {
    if (v->dtype.element_of() != elem) TypeError(span, "Shuffle vectors differ in element type");
    total += v->dtype.lanes();
  }
  for (const Expr& i : indices) {
    auto c = AsConstInt(i);
    if (!c || *c < 0 || *c >= total) TypeError(span, "Shuffle indices must be constants in range");
  }
  DataType t = elem.with_lanes(static_cast<int>(indices.size()));
  return std::make_shared<ShuffleNode>(t, std::move(vectors), std::move(indices), std::move(span));
}

Ref<LetNode> LetNode::Make(Var var, Expr value, Expr body, Span span) {
  if (!var) TESSERA_THROW_KIND(span, ErrorKind::kValue) << "Let variable must not be null";
  CheckNotNull(value, "Let value", span);
  CheckNotNull(body, "Let body", span);
  if (var->dtype != value->dtype) {
    TypeError(span, "Let value type " + value->dtype.ToString() + " differs from variable type " +
                        var->dtype.ToString());
  }
  return std::make_shared<LetNode>(std::move(var), std::move(value), std::move(body),
                                   std::move(span));
}

Ref<CallNode> CallNode::Make(DataType dtype, ObjectRef op, std::vector<Expr> args, Span span) {
  if (auto* o = AsPtr<OpNode>(op)) {
    if (o->num_inputs >= 0 && static_cast<int>(args.size()) != o->num_inputs) {
      TypeError(span, o->name + " takes " + std::to_string(o->num_inputs) + " arguments, got " +
                          std::to_string(args.size()));
    }
  } else if (!IsInstance<GlobalVarNode>(op.get())) {
    TypeError(span, "Call needs an Op or a GlobalVar");
  }
  for (const Expr& a : args) CheckNotNull(a, "Call argument", span);
  if (auto* o = AsPtr<OpNode>(op); o && (o->name == "tir.call_extern" || o->name == "tir.call_pure_extern")) {
    // The name is pasted into generated C: only an identifier may reach it (no code injection).
    auto* fname = args.empty() ? nullptr : AsPtr<StringImmNode>(args[0]);
    auto is_ident = [](const std::string& n) {
      if (n.empty() || std::isdigit(static_cast<unsigned char>(n[0]))) return false;
      for (char c : n) {
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
      }
      return true;
    };
    if (fname && !is_ident(fname->value)) {
      TESSERA_THROW_KIND(span, ErrorKind::kValue)
          << o->name << ": the function name must be a C identifier, got \"" << fname->value
          << "\"";
    }
  }
  return std::make_shared<CallNode>(dtype, std::move(op), std::move(args), std::move(span));
}

const std::string& CallNode::op_name() const {
  if (auto* o = AsPtr<OpNode>(op)) return o->name;
  return AsPtr<GlobalVarNode>(op)->name_hint;
}

bool CallNode::is_op(const std::string& name) const {
  auto* o = AsPtr<OpNode>(op);
  return o != nullptr && o->name == name;
}

DataType BufferAccessType(const Buffer& buffer, const std::vector<Expr>& indices, const Span& span) {
  DataType index_type = DataType::Int(32);
  for (size_t i = 0; i < indices.size(); ++i) {
    DataType t = indices[i]->dtype;
    // As TVM, a scalar index of another type (a float) is accepted in the IR (te's comm_reducer
    // combiners may index with their accumulator); lowering refuses it (RefuseNonIntegerIndices).
    if (!t.is_integer() && t.is_vector()) {
      TypeError(span, "a vector buffer index must be an integer vector, got " + t.ToString());
    }
    if (t.is_handle()) TypeError(span, "buffer index must be an integer, got " + t.ToString());
    if (t.is_vector()) {
      if (i + 1 != indices.size()) TypeError(span, "only the last index may be a vector");
      index_type = t;
    }
  }
  DataType elem = buffer->dtype;
  if (!index_type.is_vector()) return elem;
  if (index_type.is_scalable_vector() && elem.is_scalable_vector()) {
    TypeError(span, "a scalable vector index cannot load from a buffer of scalable vectors (" +
                        elem.ToString() + ")");
  }
  int n = index_type.lanes_or_vscale_factor() * elem.lanes_or_vscale_factor();
  return elem.with_lanes_or_vscale_factor(n, index_type.is_scalable_vector() ||
                                                 elem.is_scalable_vector());
}

void CheckAccessPredicate(const Expr& predicate, DataType access, const char* what,
                          const Span& span) {
  DataType p = predicate->dtype;
  if (!p.is_predicate_dtype() || p.is_scalable_vector() != access.is_scalable_vector() ||
      p.lanes_or_vscale_factor() != access.lanes_or_vscale_factor()) {
    TypeError(span, std::string(what) + " predicate must be " +
                        DataType::Bool().with_lanes_or_vscale_factor(
                                            access.lanes_or_vscale_factor(),
                                            access.is_scalable_vector())
                            .ToString() +
                        ", got " + p.ToString());
  }
}

Expr ScalableLanesExpr(int vscale_factor, Span span) {
  Expr vscale = CallNode::Make(DataType::Int(32), OpNode::Get("tir.vscale"), {}, span);
  return MulNode::Make(vscale, IntImmNode::Make(DataType::Int(32), vscale_factor, span), span);
}

Expr RampLastLane(const RampNode* ramp) {
  DataType t = ramp->base->dtype;
  if (ramp->lanes > 0) return MakeConst(t, int64_t{ramp->lanes - 1});
  Expr lanes = ScalableLanesExpr(-ramp->lanes);
  if (t != lanes->dtype) lanes = CastNode::Make(t, lanes);
  return SubNode::Make(lanes, MakeConst(t, int64_t{1}));
}

std::optional<int> MatchScalableLanes(const Expr& lanes) {
  auto* mul = AsPtr<MulNode>(lanes);
  if (mul == nullptr) return std::nullopt;
  auto is_vscale = [](const Expr& e) {
    auto* call = AsPtr<CallNode>(e);
    return call != nullptr && call->args.empty() && call->is_op("tir.vscale");
  };
  std::optional<int64_t> k;
  if (is_vscale(mul->a)) k = AsConstInt(mul->b);
  if (is_vscale(mul->b)) k = AsConstInt(mul->a);
  if (!k || *k < 2 || *k > 32767) return std::nullopt;
  return static_cast<int>(*k);
}

Ref<BufferLoadNode> BufferLoadNode::Make(Buffer buffer, std::vector<Expr> indices, Expr predicate,
                                         Span span) {
  if (!buffer) TESSERA_THROW_KIND(span, ErrorKind::kValue) << "BufferLoad buffer must not be null";
  if (indices.size() != buffer->shape.size()) {
    TypeError(span, "buffer " + buffer->name + " has " + std::to_string(buffer->shape.size()) +
                        " dimensions but is indexed with " + std::to_string(indices.size()));
  }
  for (size_t i = 0; i < indices.size(); ++i) CheckNotNull(indices[i], "index", span);
  DataType t = BufferAccessType(buffer, indices, span);
  if (predicate) CheckAccessPredicate(predicate, t, "load", span);
  return std::make_shared<BufferLoadNode>(t, std::move(buffer), std::move(indices),
                                          std::move(predicate), std::move(span));
}

Ref<RangeNode> RangeNode::Make(Expr min, Expr extent, Span span) {
  CheckNotNull(min, "Range min", span);
  CheckNotNull(extent, "Range extent", span);
  return std::make_shared<RangeNode>(std::move(min), std::move(extent), std::move(span));
}

Expr MakeConst(DataType t, int64_t value, Span span) {
  DataType elem = t.element_of();
  Expr scalar = elem.is_float() ? Expr(FloatImmNode::Make(elem, static_cast<double>(value), span))
                                : Expr(IntImmNode::Make(elem, value, span));
  return t.is_vector() ? Expr(BroadcastNode::Make(scalar, t.raw_lanes(), span)) : scalar;
}

Expr MakeConst(DataType t, double value, Span span) {
  DataType elem = t.element_of();
  Expr scalar = elem.is_float() ? Expr(FloatImmNode::Make(elem, value, span))
                                : Expr(IntImmNode::Make(elem, static_cast<int64_t>(value), span));
  return t.is_vector() ? Expr(BroadcastNode::Make(scalar, t.raw_lanes(), span)) : scalar;
}

std::optional<int64_t> AsConstInt(const Expr& e) {
  if (auto* imm = AsPtr<IntImmNode>(e)) return imm->value;
  return std::nullopt;
}

bool IsConstInt(const Expr& e, int64_t v) {
  if (auto* imm = AsPtr<IntImmNode>(e)) return imm->value == v;
  if (auto* b = AsPtr<BroadcastNode>(e)) return IsConstInt(b->value, v);
  return false;
}

}  // namespace tessera
