// tir.BF16ComputeLegalize, tir.BF16StorageLegalize, tir.FP8ComputeLegalize and
// tir.FP8StorageLegalize: arithmetic on bfloat16 / float8 values for a target that has none.
//
// The compute passes do the arithmetic in a wider float (float32 for bfloat16; float16 or
// float32 for float8): every bfloat16/float8 value that an operation reads is widened, every
// intermediate allocation of the narrow type is widened too, and a value stored into memory of
// the narrow type is narrowed back, rounding half to even. Widening and narrowing are integer bit
// manipulation (reinterpret, shifts, masks), as TVM v0.23 writes them, so a target without the
// narrow type can run them. The storage passes then retype the remaining narrow memory as the
// unsigned integer of its width (uint16 for bfloat16, uint8 for float8) and drop the reinterprets
// that became no-ops. A CUDA target whose architecture has the type natively (bfloat16 from
// sm_80, float8 on sm_89 and from sm_90) is left alone.
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "tessera/ir/functor.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/ir/op.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace transform {
namespace {

// ---- bit-level float conversion ---------------------------------------------------------------

/*! \brief The field widths of a binary float format and its exponent bias. */
struct FloatFields {
  int exponent;
  int mantissa;
  int bias;
};

std::optional<FloatFields> FieldsOf(DataType t) {
  if (t.is_bfloat16()) return FloatFields{8, 7, 127};
  if (t.is_float() && !t.is_narrow_float()) {
    if (t.bits() == 16) return FloatFields{5, 10, 15};
    if (t.bits() == 32) return FloatFields{8, 23, 127};
    if (t.bits() == 64) return FloatFields{11, 52, 1023};
    return std::nullopt;
  }
  switch (t.code()) {
    case DataType::kFloat8E3M4:
      return FloatFields{3, 4, 3};
    case DataType::kFloat8E4M3:
    case DataType::kFloat8E4M3B11FNUZ:
    case DataType::kFloat8E4M3FN:
    case DataType::kFloat8E4M3FNUZ:
      return FloatFields{4, 3, 7};
    case DataType::kFloat8E5M2:
    case DataType::kFloat8E5M2FNUZ:
      return FloatFields{5, 2, 15};
    case DataType::kFloat8E8M0FNU:
      return FloatFields{8, 0, 127};
    default:
      return std::nullopt;
  }
}

DataType StorageUInt(DataType t) { return DataType::UInt(t.bits(), t.lanes()); }

Expr UConst(DataType t, int64_t v) { return IntImmNode::Make(t, v); }

/*! \brief `v` read as `t` (v itself when it already has type t). */
Expr Reinterpret(DataType t, const Expr& v) {
  if (v->dtype == t) return v;
  return CallNode::Make(t, OpNode::Get("tir.reinterpret"), {v});
}

/*! \brief `v` converted to `t` (v itself when it already has type t). */
Expr CastIfNeeded(DataType t, const Expr& v) {
  if (v->dtype == t) return v;
  return CastNode::Make(t, v);
}

Expr BitCall(const char* op, const Expr& a, const Expr& b) {
  return CallNode::Make(a->dtype, OpNode::Get(op), {a, b});
}
Expr ShiftLeft(const Expr& a, int n) { return BitCall("tir.shift_left", a, UConst(a->dtype, n)); }
Expr ShiftRight(const Expr& a, int n) {
  return BitCall("tir.shift_right", a, UConst(a->dtype, n));
}
Expr Mask(const Expr& a, int64_t m) { return BitCall("tir.bitwise_and", a, UConst(a->dtype, m)); }
Expr BitOr(const Expr& a, const Expr& b) { return BitCall("tir.bitwise_or", a, b); }
Expr AddConst(const Expr& a, int64_t c) {
  return c == 0 ? a : Expr(AddNode::Make(a, UConst(a->dtype, c)));
}

/*! \brief The float `value` converted to the float type `to` by integer operations on its bits,
 *  rounding half to even where mantissa bits are dropped. */
Expr ConvertFloatBits(const Expr& value, DataType to) {
  DataType from = value->dtype;
  std::optional<FloatFields> src = FieldsOf(from), dst = FieldsOf(to);
  if (!src || !dst || from.lanes() != to.lanes()) {
    TESSERA_THROW_KIND(value->span, ErrorKind::kType)
        << "float legalization: cannot convert " << from.ToString() << " values to " << to.ToString();
  }
  DataType src_bits = StorageUInt(from), dst_bits = StorageUInt(to);
  int mantissa_shift = dst->mantissa - src->mantissa;
  int exponent_diff = dst->exponent - src->exponent;
  int bias_diff = dst->bias - src->bias;
  Expr bits = Reinterpret(src_bits, value);
  if (mantissa_shift < 0) {
    // Round half to even: add 0b0111.. plus the lowest kept bit, then truncate.
    int dropped = -mantissa_shift;
    Expr round = AddConst(Mask(ShiftRight(bits, dropped), 1), (int64_t{1} << (dropped - 1)) - 1);
    bits = AddNode::Make(bits, round);
  }
  auto move_mantissa = [&](const Expr& b) {
    return mantissa_shift >= 0 ? ShiftLeft(CastIfNeeded(dst_bits, b), mantissa_shift)
                               : CastIfNeeded(dst_bits, ShiftRight(b, -mantissa_shift));
  };
  if (exponent_diff == 0) {
    // Same exponent field: sign and exponent move with the mantissa; only the bias may differ.
    Expr out = move_mantissa(bits);
    if (bias_diff != 0) {
      int64_t delta = (int64_t{bias_diff < 0 ? -bias_diff : bias_diff}) << dst->mantissa;
      out = bias_diff > 0 ? Expr(AddNode::Make(out, UConst(dst_bits, delta)))
                          : Expr(SubNode::Make(out, UConst(dst_bits, delta)));
    }
    return Reinterpret(to, out);
  }
  Expr mantissa = Mask(move_mantissa(bits), (int64_t{1} << dst->mantissa) - 1);
  Expr exponent = ShiftRight(ShiftLeft(bits, 1), src->mantissa + 1);
  Expr sign = ShiftLeft(CastIfNeeded(dst_bits, ShiftRight(bits, src->mantissa + src->exponent)),
                        dst->mantissa + dst->exponent);
  if (bias_diff >= 0) {
    Expr biased = ShiftLeft(CastIfNeeded(dst_bits, AddConst(exponent, bias_diff)), dst->mantissa);
    return Reinterpret(to, BitOr(BitOr(mantissa, biased), sign));
  }
  // The target has a smaller bias: exponents below it flush to zero.
  Expr underflow = LTNode::Make(exponent, UConst(src_bits, -bias_diff));
  Expr biased = ShiftLeft(
      CastIfNeeded(dst_bits, SubNode::Make(exponent, UConst(src_bits, -bias_diff))), dst->mantissa);
  Expr packed = BitOr(BitOr(mantissa, biased), sign);
  return Reinterpret(to, CallNode::Make(dst_bits, OpNode::Get("tir.if_then_else"),
                                        {underflow, UConst(dst_bits, 0), packed}));
}

using TypeMatch = bool (*)(DataType);
bool IsBF16(DataType t) { return t.is_bfloat16(); }
bool IsFP8(DataType t) { return t.is_float8(); }

Buffer RetypedBuffer(const Buffer& b, const Var& data, DataType dtype) {
  Buffer out = BufferNode::Make(data, dtype, b->shape, b->strides, b->elem_offset, b->name,
                                b->data_alignment, b->offset_factor, b->span);
  out->axis_separators = b->axis_separators;
  return out;
}

Var RetypedPointer(const Var& v, DataType element) {
  std::string scope = v->pointer ? v->pointer->scope : "global";
  return VarNode::MakePointer(v->name, element, scope, v->span);
}

/*! \brief The part the compute and storage passes share: a mutator that puts the retyped
 *  pointers and buffers of its maps in place of the old ones wherever those are used (as
 *  values, by loads, as the node of an attribute). Subclasses fill the maps and may retype a
 *  buffer on first use (Remapped). */
class RetypingMutator : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;

 protected:
  /*! \brief The buffer that replaces `b` (b itself when none does). */
  virtual Buffer Remapped(const Buffer& b) {
    auto it = buffer_remap_.find(b.get());
    return it == buffer_remap_.end() ? b : it->second;
  }

  Expr VisitExpr_(const VarNode* op) override {
    auto it = var_remap_.find(op);
    return it == var_remap_.end() ? Expr(GetRef(op)) : Expr(it->second);
  }
  Expr VisitExpr_(const BufferLoadNode* op) override {
    Expr e = StmtExprMutator::VisitExpr_(op);
    auto* load = AsPtr<BufferLoadNode>(e);
    Buffer buffer = Remapped(load->buffer);
    if (buffer == load->buffer) return e;
    if (load->predicate != nullptr) {
      TESSERA_THROW_KIND(op->span, ErrorKind::kValue)
          << "float legalization does not handle a predicated load";
    }
    return BufferLoadNode::Make(buffer, load->indices, nullptr, load->span);
  }
  /*! \brief An attribute on a remapped buffer or pointer moves to its replacement (its value
   *  and body mutated first). */
  Stmt VisitStmt_(const AttrStmtNode* op) override {
    Stmt s = StmtExprMutator::VisitStmt_(op);
    auto* attr = AsPtr<AttrStmtNode>(s);
    ObjectRef node;
    if (auto* buf = AsPtr<BufferNode>(attr->node)) {
      auto it = buffer_remap_.find(buf);
      if (it != buffer_remap_.end()) node = it->second;
    } else if (auto* var = AsPtr<VarNode>(attr->node)) {
      auto it = var_remap_.find(var);
      if (it != var_remap_.end()) node = it->second;
    }
    if (node == nullptr) return s;
    return AttrStmtNode::Make(node, attr->attr_key, attr->value, attr->body, attr->span);
  }

  std::unordered_map<const VarNode*, Var> var_remap_;
  std::unordered_map<const BufferNode*, Buffer> buffer_remap_;
};

// ---- compute legalization ---------------------------------------------------------------------

/*! \brief Finds the allocations of the narrow type to widen, and the buffers over them. Memory
 *  whose pointer is also used as a value (passed to a call, ...) keeps its type. */
class WideningPlanner : public StmtExprVisitor {
 public:
  WideningPlanner(TypeMatch match, DataType wide) : match_(match), wide_(wide) {}
  using StmtExprVisitor::VisitExpr_;
  using StmtExprVisitor::VisitStmt_;

  void Plan(const Stmt& body, std::unordered_map<const VarNode*, Var>* vars,
            std::unordered_map<const BufferNode*, Buffer>* buffers) {
    VisitStmt(body);
    for (auto& [old_var, new_var] : var_remap_) {
      if (!pointer_used_.count(old_var)) vars->emplace(old_var, new_var);
    }
    for (auto& [old_buf, new_buf] : buffer_remap_) {
      if (!pointer_used_.count(old_buf->data.get())) buffers->emplace(old_buf, new_buf);
    }
  }

  void VisitStmt_(const AllocateNode* op) override {
    bool constant_size = !op->extents.empty();
    for (const Expr& e : op->extents) {
      auto* imm = AsPtr<IntImmNode>(e);
      if (imm == nullptr || imm->value == 0) constant_size = false;
    }
    if (match_(op->dtype) && constant_size) {
      var_remap_[op->buffer_var.get()] =
          RetypedPointer(op->buffer_var, wide_.with_lanes(op->dtype.lanes()));
    }
    StmtExprVisitor::VisitStmt_(op);
  }
  void VisitStmt_(const BufferStoreNode* op) override {
    StmtExprVisitor::VisitStmt_(op);
    Note(op->buffer);
  }
  void VisitExpr_(const BufferLoadNode* op) override {
    StmtExprVisitor::VisitExpr_(op);
    Note(op->buffer);
  }
  void VisitStmt_(const DeclBufferNode* op) override {
    StmtExprVisitor::VisitStmt_(op);
    Note(op->buffer);
  }
  void VisitExpr_(const VarNode* op) override {
    if (op->dtype.is_handle()) pointer_used_.insert(op);
  }

 private:
  void Note(const Buffer& b) {
    auto it = var_remap_.find(b->data.get());
    if (it == var_remap_.end() || buffer_remap_.count(b.get())) return;
    buffer_remap_[b.get()] = RetypedBuffer(b, it->second, wide_.with_lanes(b->dtype.lanes()));
  }

  TypeMatch match_;
  DataType wide_;
  std::unordered_map<const VarNode*, Var> var_remap_;
  std::unordered_map<const BufferNode*, Buffer> buffer_remap_;
  std::unordered_set<const VarNode*> pointer_used_;
};

class ComputeWidener : public RetypingMutator {
 public:
  ComputeWidener(TypeMatch match, DataType wide) : match_(match), wide_(wide) {}
  using RetypingMutator::VisitExpr_;
  using RetypingMutator::VisitStmt_;

  Stmt Run(const Stmt& body) {
    WideningPlanner(match_, wide_).Plan(body, &var_remap_, &buffer_remap_);
    return VisitStmt(body);
  }

 protected:
  /*! \brief A narrow value widened (other values unchanged). */
  Expr Widen(const Expr& v) {
    if (!match_(v->dtype)) return v;
    DataType target = wide_.with_lanes(v->dtype.lanes());
    if (auto* cast = AsPtr<CastNode>(v)) {
      if (cast->value->dtype == target) return cast->value;
    }
    return ConvertFloatBits(v, target);
  }
  Expr VisitWide(const Expr& e) { return Widen(VisitExpr(e)); }

  Expr VisitExpr_(const CastNode* op) override {
    Expr value = VisitWide(op->value);
    if (match_(op->dtype)) return CastIfNeeded(wide_.with_lanes(op->dtype.lanes()), value);
    if (value == op->value) return GetRef(op);
    return CastIfNeeded(op->dtype, value);
  }
  Expr VisitExpr_(const SelectNode* op) override {
    Expr c = VisitExpr(op->condition), t = VisitWide(op->true_value),
         f = VisitWide(op->false_value);
    if (c == op->condition && t == op->true_value && f == op->false_value) return GetRef(op);
    return SelectNode::Make(c, t, f, op->span);
  }
  Expr VisitExpr_(const BroadcastNode* op) override {
    Expr v = VisitWide(op->value);
    if (v == op->value) return GetRef(op);
    return BroadcastNode::Make(v, op->lanes, op->span);
  }
  Expr VisitExpr_(const ShuffleNode* op) override {
    std::vector<Expr> vectors;
    bool changed = false;
    for (const Expr& v : op->vectors) {
      vectors.push_back(VisitWide(v));
      changed |= vectors.back() != v;
    }
    if (!changed) return GetRef(op);
    return ShuffleNode::Make(std::move(vectors), op->indices, op->span);
  }
  Expr VisitExpr_(const CallNode* op) override {
    // A reinterpret keeps its type: it is how the conversions read the narrow bits.
    if (op->is_op("tir.reinterpret")) return StmtExprMutator::VisitExpr_(op);
    std::vector<Expr> args;
    bool changed = false;
    for (const Expr& a : op->args) {
      args.push_back(VisitWide(a));
      changed |= args.back() != a;
    }
    if (match_(op->dtype)) {
      return CallNode::Make(wide_.with_lanes(op->dtype.lanes()), op->op, std::move(args), op->span);
    }
    if (!changed) return GetRef(op);
    return CallNode::Make(op->dtype, op->op, std::move(args), op->span);
  }
  Expr VisitExpr_(const FloatImmNode* op) override {
    if (match_(op->dtype)) return FloatImmNode::Make(wide_, op->value, op->span);
    return GetRef(op);
  }
  Expr VisitExpr_(const LetNode* op) override {
    Expr value = Widen(op->value);
    Var var = op->var;
    if (value->dtype != op->value->dtype) {
      var = VarNode::Make(op->var->name, value->dtype, op->var->span);
      var_remap_[op->var.get()] = var;
    }
    Expr body = VisitExpr(op->body);
    if (value == op->value && var == op->var && body == op->body) return GetRef(op);
    return LetNode::Make(var, value, body, op->span);
  }

#define TESSERA_WIDEN_BINARY(Name)                                      \
  Expr VisitExpr_(const Name##Node* op) override {                     \
    Expr a = VisitWide(op->a), b = VisitWide(op->b);                   \
    if (a == op->a && b == op->b) return GetRef(op);                   \
    return Name##Node::Make(a, b, op->span);                           \
  }
  TESSERA_WIDEN_BINARY(Add)
  TESSERA_WIDEN_BINARY(Sub)
  TESSERA_WIDEN_BINARY(Mul)
  TESSERA_WIDEN_BINARY(Div)
  TESSERA_WIDEN_BINARY(Min)
  TESSERA_WIDEN_BINARY(Max)
  TESSERA_WIDEN_BINARY(LT)
  TESSERA_WIDEN_BINARY(LE)
  TESSERA_WIDEN_BINARY(GT)
  TESSERA_WIDEN_BINARY(GE)
  TESSERA_WIDEN_BINARY(EQ)
  TESSERA_WIDEN_BINARY(NE)
#undef TESSERA_WIDEN_BINARY

  Stmt VisitStmt_(const LetStmtNode* op) override {
    Expr value = Widen(op->value);
    Var var = op->var;
    if (value->dtype != op->value->dtype) {
      var = VarNode::Make(op->var->name, value->dtype, op->var->span);
      var_remap_[op->var.get()] = var;
    }
    Stmt body = VisitStmt(op->body);
    if (value == op->value && var == op->var && body == op->body) return GetRef(op);
    return LetStmtNode::Make(var, value, body, op->span);
  }

  Stmt VisitStmt_(const BufferStoreNode* op) override {
    Expr value = VisitExpr(op->value);
    std::vector<Expr> indices;
    bool changed = value != op->value;
    for (const Expr& i : op->indices) {
      indices.push_back(VisitExpr(i));
      changed |= indices.back() != i;
    }
    Buffer buffer = Remapped(op->buffer);
    if (!changed && buffer == op->buffer) return GetRef(op);
    if (op->predicate != nullptr) {
      TESSERA_THROW_KIND(op->span, ErrorKind::kValue)
          << "float legalization does not handle a predicated store";
    }
    if (match_(buffer->dtype) && value->dtype.element_of() == wide_) {
      // A wide value stored into narrow memory: narrow it.
      int index_lanes = indices.empty() ? 1 : indices.back()->dtype.lanes();
      value = ConvertFloatBits(value, buffer->dtype.with_lanes(index_lanes * buffer->dtype.lanes()));
    }
    if (value->dtype.element_of() != buffer->dtype.element_of()) {
      if (!match_(value->dtype)) {
        TESSERA_THROW_KIND(op->span, ErrorKind::kType)
            << "float legalization: a " << value->dtype.ToString() << " value stored into "
            << buffer->dtype.ToString() << " memory";
      }
      value = ConvertFloatBits(value, buffer->dtype.with_lanes(value->dtype.lanes()));
    }
    return BufferStoreNode::Make(buffer, value, std::move(indices), nullptr, op->span);
  }

  Stmt VisitStmt_(const AttrStmtNode* op) override {
    Stmt s = RetypingMutator::VisitStmt_(op);
    auto* attr = AsPtr<AttrStmtNode>(s);
    if (auto* reducer = AsPtr<CommReducerNode>(attr->node)) {
      return AttrStmtNode::Make(WidenReducer(reducer), attr->attr_key, attr->value, attr->body,
                                attr->span);
    }
    return s;
  }

  Stmt VisitStmt_(const BufferRealizeNode* op) override {
    Stmt s = StmtExprMutator::VisitStmt_(op);
    auto* realize = AsPtr<BufferRealizeNode>(s);
    Buffer buffer = Remapped(realize->buffer);
    if (buffer == realize->buffer) return s;
    return BufferRealizeNode::Make(buffer, realize->bounds, realize->condition, realize->body,
                                   realize->span);
  }
  Stmt VisitStmt_(const DeclBufferNode* op) override {
    Stmt s = StmtExprMutator::VisitStmt_(op);
    auto* decl = AsPtr<DeclBufferNode>(s);
    Buffer buffer = Remapped(decl->buffer);
    if (buffer == decl->buffer) return s;
    return DeclBufferNode::Make(buffer, decl->body, decl->span);
  }
  Stmt VisitStmt_(const AllocateNode* op) override {
    Stmt s = StmtExprMutator::VisitStmt_(op);
    auto* alloc = AsPtr<AllocateNode>(s);
    auto it = var_remap_.find(alloc->buffer_var.get());
    if (it == var_remap_.end()) return s;
    return AllocateNode::Make(it->second, it->second->pointer->element, alloc->extents,
                              alloc->condition, alloc->body, alloc->annotations, alloc->span);
  }

 private:
  ObjectRef WidenReducer(const CommReducerNode* reducer) {
    std::vector<Expr> identity;
    for (const Expr& e : reducer->identity_element) identity.push_back(VisitExpr(e));
    auto retype = [&](const Var& v, DataType t) {
      if (v->dtype != t) var_remap_[v.get()] = VarNode::Make(v->name, t, v->span);
    };
    for (size_t i = 0; i < identity.size(); ++i) {
      retype(reducer->lhs[i], identity[i]->dtype);
      retype(reducer->rhs[i], identity[i]->dtype);
    }
    std::vector<Expr> result;
    for (const Expr& e : reducer->result) result.push_back(VisitExpr(e));
    auto mapped = [&](const std::vector<Var>& vars) {
      std::vector<Var> out;
      for (const Var& v : vars) {
        auto it = var_remap_.find(v.get());
        out.push_back(it == var_remap_.end() ? v : it->second);
      }
      return out;
    };
    return CommReducerNode::Make(mapped(reducer->lhs), mapped(reducer->rhs), std::move(result),
                                 std::move(identity), reducer->span);
  }

  TypeMatch match_;
  DataType wide_;
};

// ---- storage legalization ---------------------------------------------------------------------

class StorageRetyper : public RetypingMutator {
 public:
  explicit StorageRetyper(TypeMatch match) : match_(match) {}
  using RetypingMutator::VisitExpr_;
  using RetypingMutator::VisitStmt_;

  PrimFunc Run(const PrimFunc& f) {
    if (!f->buffer_map.empty()) {
      TESSERA_THROW_KIND(f->span, ErrorKind::kValue)
          << "the storage legalization passes run on functions whose parameters are plain "
             "pointers (after tir.MakePackedAPI), but this one still binds "
          << f->buffer_map.size() << " parameter buffer(s)";
    }
    std::vector<Var> params;
    for (const Var& p : f->params) params.push_back(RetypeDef(p));
    Stmt body = VisitStmt(f->body);
    if (params == f->params && body == f->body) return f;
    return PrimFuncNode::Make(std::move(params), {}, body, f->ret_type, f->attrs, f->span);
  }

 private:
  Stmt VisitStmt_(const AllocateNode* op) override {
    if (!match_(op->dtype)) return StmtExprMutator::VisitStmt_(op);
    DataType storage = StorageUInt(op->dtype);
    Var data = RetypedPointer(op->buffer_var, storage);
    var_remap_[op->buffer_var.get()] = data;
    return VisitStmt(AllocateNode::Make(data, storage, op->extents, op->condition, op->body,
                                        op->annotations, op->span));
  }
  Stmt VisitStmt_(const DeclBufferNode* op) override {
    Buffer buffer = Remapped(op->buffer);
    if (match_(buffer->dtype)) {
      buffer = RetypedBuffer(buffer, buffer->data, StorageUInt(buffer->dtype));
      buffer_remap_[op->buffer.get()] = buffer;
    }
    Stmt body = VisitStmt(op->body);
    if (buffer == op->buffer && body == op->body) return GetRef(op);
    return DeclBufferNode::Make(buffer, body, op->span);
  }
  Expr VisitExpr_(const LetNode* op) override {
    Expr value = VisitExpr(op->value);
    Var var = RetypeDef(op->var);
    Expr body = VisitExpr(op->body);
    if (value == op->value && var == op->var && body == op->body) return GetRef(op);
    return LetNode::Make(var, value, body, op->span);
  }
  Stmt VisitStmt_(const LetStmtNode* op) override {
    Expr value = VisitExpr(op->value);
    Var var = RetypeDef(op->var);
    Stmt body = VisitStmt(op->body);
    if (value == op->value && var == op->var && body == op->body) return GetRef(op);
    return LetStmtNode::Make(var, value, body, op->span);
  }
  Stmt VisitStmt_(const BufferStoreNode* op) override {
    Expr value = AsStorageBits(VisitExpr(op->value));
    Buffer buffer = Remapped(op->buffer);
    std::vector<Expr> indices;
    bool changed = value != op->value || buffer != op->buffer;
    for (const Expr& i : op->indices) {
      indices.push_back(VisitExpr(i));
      changed |= indices.back() != i;
    }
    if (!changed) return GetRef(op);
    if (op->predicate != nullptr) {
      TESSERA_THROW_KIND(op->span, ErrorKind::kValue)
          << "float legalization does not handle a predicated store";
    }
    return BufferStoreNode::Make(buffer, value, std::move(indices), nullptr, op->span);
  }
  Stmt VisitStmt_(const BufferRealizeNode* op) override {
    TESSERA_THROW_KIND(op->span, ErrorKind::kValue)
        << "the storage legalization passes run after buffers are realized; found T.realize";
  }
  Expr VisitExpr_(const CallNode* op) override {
    if (!op->is_op("tir.reinterpret")) return StmtExprMutator::VisitExpr_(op);
    Expr value = VisitExpr(op->args[0]);
    if (value->dtype == op->dtype) return value;  // the operand is already of this type
    if (match_(op->dtype)) return Reinterpret(StorageUInt(op->dtype), value);
    if (value == op->args[0]) return GetRef(op);
    return Reinterpret(op->dtype, value);
  }

  /*! \brief A narrow value about to be stored, as the unsigned bits it reinterprets. */
  Expr AsStorageBits(const Expr& v) {
    if (!match_(v->dtype)) return v;
    auto* call = AsPtr<CallNode>(v);
    if (call != nullptr && call->is_op("tir.reinterpret")) {
      return Reinterpret(StorageUInt(v->dtype), call->args[0]);
    }
    return v;
  }

  Var RetypeDef(const Var& v) {
    if (!v->dtype.is_handle() || !v->pointer || !match_(v->pointer->element)) return v;
    Var out = RetypedPointer(v, StorageUInt(v->pointer->element));
    var_remap_[v.get()] = out;
    return out;
  }

  /*! \brief `b` over its retyped pointer, as unsigned bits where it holds the narrow type
   *  (made on first use and kept). */
  Buffer Remapped(const Buffer& b) override {
    auto it = buffer_remap_.find(b.get());
    if (it != buffer_remap_.end()) return it->second;
    Buffer out = b;
    auto var_it = var_remap_.find(b->data.get());
    if (var_it != var_remap_.end()) {
      DataType dtype = match_(b->dtype) ? StorageUInt(b->dtype) : b->dtype;
      out = RetypedBuffer(b, var_it->second, dtype);
    } else if (match_(b->dtype)) {
      TESSERA_THROW_KIND(b->span, ErrorKind::kValue)
          << "float legalization: buffer " << b->name << " holds " << b->dtype.ToString()
          << " values but its pointer " << b->data->name << " is not typed as such";
    }
    buffer_remap_[b.get()] = out;
    return out;
  }

  TypeMatch match_;
};

// ---- target check -----------------------------------------------------------------------------

/*! \brief The CUDA compute capability (major, minor) the function's target names, if any. */
std::optional<std::pair<int, int>> CudaCapability(const PrimFunc& f, const char* pass) {
  auto it = f->attrs.find("target");
  if (it == f->attrs.end()) {
    TESSERA_THROW_KIND(f->span, ErrorKind::kValue)
        << pass << " needs the function's \"target\" attribute (apply tir.BindTarget first)";
  }
  std::string kind = TargetKindOf(it->second), arch;
  if (kind != "cuda") return std::nullopt;
  if (auto* m = AsPtr<MapNode>(it->second)) {
    auto a = m->items.find("arch");
    if (a != m->items.end()) {
      if (auto* s = AsPtr<StringImmNode>(a->second)) arch = s->value;
    }
  } else if (auto* s = AsPtr<StringImmNode>(it->second)) {
    size_t at = s->value.find("-arch=");
    if (at != std::string::npos) {
      arch = s->value.substr(at + 6);
      arch = arch.substr(0, arch.find(' '));
    }
  }
  if (arch.rfind("sm_", 0) != 0) return std::nullopt;
  std::string digits;
  for (size_t i = 3; i < arch.size() && isdigit(static_cast<unsigned char>(arch[i])); ++i) {
    digits += arch[i];
  }
  if (digits.size() < 2) return std::nullopt;
  return std::make_pair(std::stoi(digits.substr(0, digits.size() - 1)), digits.back() - '0');
}

bool HasNativeBF16(const PrimFunc& f, const char* pass) {
  auto cap = CudaCapability(f, pass);
  return cap && cap->first >= 8;
}

bool HasNativeFP8(const PrimFunc& f, const char* pass) {
  auto cap = CudaCapability(f, pass);
  return cap && (cap->first >= 9 || (cap->first == 8 && cap->second == 9));
}

PrimFunc WidenFunc(const PrimFunc& f, TypeMatch match, DataType wide) {
  Stmt body = ComputeWidener(match, wide).Run(f->body);
  return body == f->body ? f : f->WithBody(body);
}

PrimFunc BF16ComputeFunc(PrimFunc f, IRModule, const PassContext&) {
  if (HasNativeBF16(f, "tir.BF16ComputeLegalize")) return f;
  return WidenFunc(f, IsBF16, DataType::Float(32));
}
PrimFunc BF16StorageFunc(PrimFunc f, IRModule, const PassContext&) {
  if (HasNativeBF16(f, "tir.BF16StorageLegalize")) return f;
  return StorageRetyper(IsBF16).Run(f);
}
PrimFunc FP8ComputeF32Func(PrimFunc f, IRModule, const PassContext&) {
  if (HasNativeFP8(f, "tir.FP8ComputeLegalize")) return f;
  return WidenFunc(f, IsFP8, DataType::Float(32));
}
PrimFunc FP8ComputeF16Func(PrimFunc f, IRModule, const PassContext&) {
  if (HasNativeFP8(f, "tir.FP8ComputeLegalize")) return f;
  return WidenFunc(f, IsFP8, DataType::Float(16));
}
PrimFunc FP8StorageFunc(PrimFunc f, IRModule, const PassContext&) {
  if (HasNativeFP8(f, "tir.FP8StorageLegalize")) return f;
  return StorageRetyper(IsFP8).Run(f);
}

}  // namespace

Pass BF16ComputeLegalize() {
  return CreatePrimFuncPass(BF16ComputeFunc, 0, "tir.BF16ComputeLegalize");
}
Pass BF16StorageLegalize() {
  return CreatePrimFuncPass(BF16StorageFunc, 0, "tir.BF16StorageLegalize");
}
Pass FP8ComputeLegalize() {
  return CreatePrimFuncPass(FP8ComputeF32Func, 0, "tir.FP8ComputeLegalize");
}
Pass FP8ComputeLegalizeF16() {
  return CreatePrimFuncPass(FP8ComputeF16Func, 0, "tir.FP8ComputeLegalizeF16");
}
Pass FP8StorageLegalize() {
  return CreatePrimFuncPass(FP8StorageFunc, 0, "tir.FP8StorageLegalize");
}
TESSERA_REGISTER_PASS("tir.BF16ComputeLegalize", BF16ComputeLegalize);
TESSERA_REGISTER_PASS("tir.BF16StorageLegalize", BF16StorageLegalize);
TESSERA_REGISTER_PASS("tir.FP8ComputeLegalize", FP8ComputeLegalize);
TESSERA_REGISTER_PASS("tir.FP8ComputeLegalizeF16", FP8ComputeLegalizeF16);
TESSERA_REGISTER_PASS("tir.FP8StorageLegalize", FP8StorageLegalize);

}  // namespace transform
}  // namespace tessera
