// Constructors of statement nodes with their type checks.
#include "tessera/ir/stmt.h"

#include <cmath>
#include <cstring>

#include "tessera/ir/buffer.h"
#include "tessera/support/error.h"

namespace tessera {
namespace {

// A type check of a constructor. A macro, so that the message (often built with
// DataType::ToString) is made only when the check fails: the constructors run for every node
// that a pass rebuilds.
#define Need(ok, span, msg)                                         \
  do {                                                              \
    if (!(ok)) TESSERA_THROW_KIND(span, ErrorKind::kType) << (msg); \
  } while (0)

void NeedStmt(const Stmt& s, const char* what, const Span& span) {
  if (!s) TESSERA_THROW_KIND(span, ErrorKind::kValue) << what << " must not be null";
}

void NeedExpr(const Expr& e, const char* what, const Span& span) {
  if (!e) TESSERA_THROW_KIND(span, ErrorKind::kValue) << what << " must not be null";
}

void NeedBoolCondition(const Expr& c, const Span& span) {
  NeedExpr(c, "condition", span);
  Need(c->dtype == DataType::Bool(), span, "condition must be a scalar bool, got " + c->dtype.ToString());
}

// The condition of an `if` or a `while`: TVM's IfThenElse and While take any scalar (an integer
// is true when nonzero, as in C). A float or a vector condition is refused here: nothing
// downstream gives it a meaning.
void NeedScalarCondition(const Expr& c, const char* what, const Span& span) {
  NeedExpr(c, "condition", span);
  const DataType t = c->dtype;
  Need(t.is_scalar() && (t.is_bool() || t.is_int() || t.is_uint()), span,
       std::string(what) + " condition must be a scalar bool or integer, got " + t.ToString());
}

}  // namespace

const char* ForKindName(ForKind kind) {
  switch (kind) {
    case ForKind::kSerial:
      return "serial";
    case ForKind::kParallel:
      return "parallel";
    case ForKind::kVectorized:
      return "vectorized";
    case ForKind::kUnrolled:
      return "unroll";
    case ForKind::kThreadBinding:
      return "thread_binding";
  }
  return "<invalid>";
}

bool MapNode::SameKey(const ObjectRef& a, const ObjectRef& b) {
  if (a == b) return true;
  if (!a || !b) return false;
  if (auto* x = AsPtr<IntImmNode>(a)) {
    auto* y = AsPtr<IntImmNode>(b);
    return y != nullptr && x->dtype == y->dtype && x->value == y->value;
  }
  if (auto* x = AsPtr<FloatImmNode>(a)) {
    auto* y = AsPtr<FloatImmNode>(b);
    return y != nullptr && x->dtype == y->dtype && x->value == y->value;
  }
  return false;
}

Ref<IterVarNode> IterVarNode::Make(Range dom, Var var, IterVarType type, std::string thread_tag,
                                   Span span) {
  if (!var) TESSERA_THROW_KIND(span, ErrorKind::kValue) << "IterVar variable must not be null";
  return std::make_shared<IterVarNode>(std::move(dom), std::move(var), type, std::move(thread_tag),
                                       std::move(span));
}

Ref<LetStmtNode> LetStmtNode::Make(Var var, Expr value, Stmt body, Span span) {
  Need(var != nullptr, span, "LetStmt variable must not be null");
  NeedExpr(value, "LetStmt value", span);
  NeedStmt(body, "LetStmt body", span);
  Need(var->dtype == value->dtype, span,
       "value of type " + value->dtype.ToString() + " bound to variable '" + var->name +
           "' of type " + var->dtype.ToString());
  return std::make_shared<LetStmtNode>(std::move(var), std::move(value), std::move(body),
                                       std::move(span));
}

Ref<AttrStmtNode> AttrStmtNode::Make(ObjectRef node, std::string key, Expr value, Stmt body,
                                     Span span) {
  NeedExpr(value, "AttrStmt value", span);
  NeedStmt(body, "AttrStmt body", span);
  return std::make_shared<AttrStmtNode>(std::move(node), std::move(key), std::move(value),
                                        std::move(body), std::move(span));
}

Ref<AssertStmtNode> AssertStmtNode::Make(Expr condition, Expr message, Stmt body, Span span) {
  NeedBoolCondition(condition, span);
  NeedExpr(message, "AssertStmt message", span);
  NeedStmt(body, "AssertStmt body", span);
  return std::make_shared<AssertStmtNode>(std::move(condition), std::move(message), std::move(body),
                                          std::move(span));
}

namespace {
// " at 4 lanes" (" at vscale * 4 lanes") when a store writes a vector of `buffer` elements.
std::string LanesSuffix(DataType access, DataType buffer) {
  if (access == buffer) return "";
  int n = access.lanes_or_vscale_factor() / buffer.lanes_or_vscale_factor();
  return std::string(" at ") + (access.is_scalable_vector() ? "vscale * " : "") +
         std::to_string(n) + " lanes";
}
}  // namespace

Ref<BufferStoreNode> BufferStoreNode::Make(Buffer buffer, Expr value, std::vector<Expr> indices,
                                           Expr predicate, Span span) {
  Need(buffer != nullptr, span, "BufferStore buffer must not be null");
  NeedExpr(value, "stored value", span);
  Need(indices.size() == buffer->shape.size(), span,
       "buffer " + buffer->name + " has " + std::to_string(buffer->shape.size()) +
           " dimensions but is indexed with " + std::to_string(indices.size()));
  for (size_t i = 0; i < indices.size(); ++i) NeedExpr(indices[i], "index", span);
  DataType expect = BufferAccessType(buffer, indices, span);
  Need(value->dtype == expect, span,
       "cannot store " + value->dtype.ToString() + " into buffer " + buffer->name + " of " +
           buffer->dtype.ToString() + LanesSuffix(expect, buffer->dtype));
  if (predicate) CheckAccessPredicate(predicate, expect, "store", span);
  return std::make_shared<BufferStoreNode>(std::move(buffer), std::move(value), std::move(indices),
                                           std::move(predicate), std::move(span));
}

Ref<AllocateNode> AllocateNode::Make(Var buffer_var, DataType dtype, std::vector<Expr> extents,
                                     Expr condition, Stmt body, AttrMap annotations, Span span) {
  Need(buffer_var != nullptr && buffer_var->pointer.has_value(), span,
       "Allocate needs a pointer variable");
  NeedStmt(body, "Allocate body", span);
  for (const Expr& e : extents) {
    NeedExpr(e, "extent", span);
    Need(e->dtype.is_integer() && e->dtype.is_scalar(), span, "extents must be scalar integers");
  }
  if (!condition) condition = Bool(true);
  return std::make_shared<AllocateNode>(std::move(buffer_var), dtype, std::move(extents),
                                        std::move(condition), std::move(body),
                                        std::move(annotations), std::move(span));
}

Ref<AllocateConstNode> AllocateConstNode::Make(Var buffer_var, DataType dtype,
                                               std::vector<Expr> extents,
                                               std::vector<uint8_t> data, Stmt body,
                                               AttrMap annotations, Span span) {
  Need(buffer_var != nullptr && buffer_var->pointer.has_value(), span,
       "AllocateConst needs a pointer variable");
  NeedStmt(body, "AllocateConst body", span);
  Need(dtype.is_scalar() && (dtype.is_integer() || (dtype.is_float() && dtype.bits() >= 16)) &&
           dtype.bits() % 8 == 0,
       span,
       "AllocateConst holds scalar integers of 8 to 64 bits or floats of 16 to 64 bits, got " +
           dtype.ToString());
  uint64_t count = 1;
  for (const Expr& e : extents) {
    NeedExpr(e, "extent", span);
    std::optional<int64_t> n = AsConstInt(e);
    Need(n.has_value() && *n >= 0, span, "AllocateConst extents must be non-negative constants");
    count *= static_cast<uint64_t>(*n);
  }
  uint64_t expect = count * static_cast<uint64_t>(dtype.bits() / 8);
  Need(data.size() == expect, span,
       "AllocateConst of " + std::to_string(count) + " " + dtype.ToString() + " elements needs " +
           std::to_string(expect) + " bytes of data, got " + std::to_string(data.size()));
  return std::make_shared<AllocateConstNode>(std::move(buffer_var), dtype, std::move(extents),
                                             std::move(data), std::move(body),
                                             std::move(annotations), std::move(span));
}

int64_t AllocateConstNode::NumElements() const {
  int64_t n = 1;
  for (const Expr& e : extents) n *= AsConstInt(e).value_or(0);
  return n;
}

namespace {
template <class T>
T LoadElement(const std::vector<uint8_t>& data, int64_t i) {
  T v;
  std::memcpy(&v, data.data() + i * sizeof(T), sizeof(T));
  return v;
}

double HalfBitsToDouble(uint16_t h) {
  int exponent = (h >> 10) & 0x1f;
  double mantissa = h & 0x3ff;
  double magnitude = exponent == 0    ? std::ldexp(mantissa, -24)
                     : exponent == 31 ? (mantissa ? NAN : INFINITY)
                                      : std::ldexp(mantissa + 1024, exponent - 25);
  return (h & 0x8000) ? -magnitude : magnitude;
}
}  // namespace

int64_t AllocateConstNode::IntAt(int64_t i) const {
  bool sign = dtype.is_int();
  switch (dtype.bits()) {
    case 8:
      return sign ? int64_t(LoadElement<int8_t>(data, i)) : int64_t(LoadElement<uint8_t>(data, i));
    case 16:
      return sign ? int64_t(LoadElement<int16_t>(data, i)) : int64_t(LoadElement<uint16_t>(data, i));
    case 32:
      return sign ? int64_t(LoadElement<int32_t>(data, i)) : int64_t(LoadElement<uint32_t>(data, i));
    default:
      return LoadElement<int64_t>(data, i);
  }
}

double AllocateConstNode::FloatAt(int64_t i) const {
  if (dtype.is_bfloat16()) {
    uint32_t bits = uint32_t(LoadElement<uint16_t>(data, i)) << 16;
    float f;
    std::memcpy(&f, &bits, sizeof(f));
    return f;
  }
  switch (dtype.bits()) {
    case 16:
      return HalfBitsToDouble(LoadElement<uint16_t>(data, i));
    case 32:
      return LoadElement<float>(data, i);
    default:
      return LoadElement<double>(data, i);
  }
}

Ref<DeclBufferNode> DeclBufferNode::Make(Buffer buffer, Stmt body, Span span) {
  Need(buffer != nullptr, span, "DeclBuffer buffer must not be null");
  NeedStmt(body, "DeclBuffer body", span);
  return std::make_shared<DeclBufferNode>(std::move(buffer), std::move(body), std::move(span));
}

Ref<ForNode> ForNode::Make(Var loop_var, Expr min, Expr extent, ForKind kind, Stmt body,
                           IterVar thread_binding, AttrMap annotations, Span span, Expr step) {
  Need(loop_var != nullptr, span, "loop variable must not be null");
  if (step) {
    Need(step->dtype.is_integer() && step->dtype.is_scalar(), span,
         "a loop step must be a scalar integer, got " + step->dtype.ToString());
    if (step->dtype != loop_var->dtype && AsConstInt(step)) {
      step = MakeConst(loop_var->dtype, *AsConstInt(step));
    }
    Need(step->dtype == loop_var->dtype, span,
         "a loop step must have the loop variable's type " + loop_var->dtype.ToString() +
             ", got " + step->dtype.ToString());
    if (auto c = AsConstInt(step)) {
      Need(*c > 0, span, "a loop step must be positive, got " + std::to_string(*c));
      if (*c == 1) step = nullptr;
    }
  }
  NeedExpr(min, "loop min", span);
  NeedExpr(extent, "loop extent", span);
  NeedStmt(body, "loop body", span);
  Need(loop_var->dtype.is_integer() && loop_var->dtype.is_scalar(), span,
       "loop variable must be a scalar integer, got " + loop_var->dtype.ToString());
  Need(min->dtype == loop_var->dtype && extent->dtype == loop_var->dtype, span,
       "loop bounds must have the loop variable's type " + loop_var->dtype.ToString() +
           ", got " + min->dtype.ToString() + " and " + extent->dtype.ToString());
  Need((kind == ForKind::kThreadBinding) == (thread_binding != nullptr), span,
       "a thread-binding loop needs a thread IterVar (and only it)");
  return std::make_shared<ForNode>(std::move(loop_var), std::move(min), std::move(extent), kind,
                                   std::move(body), std::move(thread_binding),
                                   std::move(annotations), std::move(span), std::move(step));
}

Ref<BufferRealizeNode> BufferRealizeNode::Make(Buffer buffer, std::vector<Range> bounds,
                                               Expr condition, Stmt body, Span span) {
  Need(buffer != nullptr, span, "BufferRealize buffer must not be null");
  Need(bounds.size() == buffer->shape.size(), span,
       "BufferRealize of buffer '" + buffer->name + "' needs one bound per dimension (" +
           std::to_string(buffer->shape.size()) + "), got " + std::to_string(bounds.size()));
  for (const Range& r : bounds) Need(r && r->min && r->extent, span, "BufferRealize bound is null");
  NeedBoolCondition(condition, span);
  NeedStmt(body, "BufferRealize body", span);
  return std::make_shared<BufferRealizeNode>(std::move(buffer), std::move(bounds),
                                             std::move(condition), std::move(body),
                                             std::move(span));
}

Ref<WhileNode> WhileNode::Make(Expr condition, Stmt body, Span span) {
  NeedScalarCondition(condition, "while", span);
  NeedStmt(body, "while body", span);
  return std::make_shared<WhileNode>(std::move(condition), std::move(body), std::move(span));
}

Ref<IfThenElseNode> IfThenElseNode::Make(Expr condition, Stmt then_case, Stmt else_case,
                                         Span span) {
  NeedScalarCondition(condition, "if", span);
  NeedStmt(then_case, "then branch", span);
  return std::make_shared<IfThenElseNode>(std::move(condition), std::move(then_case),
                                          std::move(else_case), std::move(span));
}

Ref<SeqStmtNode> SeqStmtNode::Make(std::vector<Stmt> seq, Span span) {
  for (const Stmt& s : seq) NeedStmt(s, "sequence element", span);
  return std::make_shared<SeqStmtNode>(std::move(seq), std::move(span));
}

Stmt SeqStmtNode::Flatten(const std::vector<Stmt>& seq, Span span) {
  std::vector<Stmt> flat;
  for (const Stmt& s : seq) {
    if (!s) continue;
    if (auto* inner = AsPtr<SeqStmtNode>(s)) {
      for (const Stmt& t : inner->seq) flat.push_back(t);
    } else {
      flat.push_back(s);
    }
  }
  if (flat.empty()) return EvaluateNode::Make(Int32(0), span);
  if (flat.size() == 1) return flat[0];
  return Make(std::move(flat), std::move(span));
}

Ref<EvaluateNode> EvaluateNode::Make(Expr value, Span span) {
  NeedExpr(value, "evaluated expression", span);
  return std::make_shared<EvaluateNode>(std::move(value), std::move(span));
}

Ref<BufferRegionNode> BufferRegionNode::Make(Buffer buffer, std::vector<Range> region, Span span) {
  Need(buffer != nullptr, span, "BufferRegion buffer must not be null");
  Need(region.size() == buffer->shape.size(), span,
       "region of buffer " + buffer->name + " has " + std::to_string(region.size()) +
           " ranges for " + std::to_string(buffer->shape.size()) + " dimensions");
  for (const Range& r : region) {
    Need(r != nullptr, span, "BufferRegion range must not be null");
    Need(r->min->dtype.is_integer() && r->min->dtype.is_scalar() && r->extent->dtype.is_integer() &&
             r->extent->dtype.is_scalar(),
         span, "region bounds of buffer " + buffer->name + " must be scalar integers");
  }
  return std::make_shared<BufferRegionNode>(std::move(buffer), std::move(region), std::move(span));
}

Ref<BufferRegionNode> BufferRegionNode::FullRegion(Buffer buffer, Span span) {
  Need(buffer != nullptr, span, "BufferRegion buffer must not be null");
  std::vector<Range> region;
  for (const Expr& extent : buffer->shape) {
    region.push_back(RangeNode::Make(MakeConst(extent->dtype, int64_t{0}), extent));
  }
  return Make(std::move(buffer), std::move(region), std::move(span));
}

Ref<CommReducerNode> CommReducerNode::Make(std::vector<Var> lhs, std::vector<Var> rhs,
                                           std::vector<Expr> result,
                                           std::vector<Expr> identity_element, Span span) {
  size_t n = lhs.size();
  if (n == 0 || rhs.size() != n || result.size() != n || identity_element.size() != n) {
    TESSERA_THROW_KIND(span, ErrorKind::kValue)
        << "T.comm_reducer: needs one lhs, rhs, result and identity per reduced value, got "
        << lhs.size() << ", " << rhs.size() << ", " << result.size() << " and "
        << identity_element.size();
  }
  for (size_t i = 0; i < n; ++i) {
    if (!lhs[i] || !rhs[i] || !result[i] || !identity_element[i]) {
      TESSERA_THROW_KIND(span, ErrorKind::kValue) << "T.comm_reducer: a null part";
    }
    DataType t = identity_element[i]->dtype;
    if (lhs[i]->dtype != t || rhs[i]->dtype != t || result[i]->dtype != t) {
      TESSERA_THROW_KIND(span, ErrorKind::kType)
          << "T.comm_reducer: value " << i << " mixes types: lhs " << lhs[i]->dtype << ", rhs "
          << rhs[i]->dtype << ", result " << result[i]->dtype << ", identity " << t;
    }
  }
  return std::make_shared<CommReducerNode>(std::move(lhs), std::move(rhs), std::move(result),
                                           std::move(identity_element), std::move(span));
}

Ref<MatchBufferRegionNode> MatchBufferRegionNode::Make(Buffer buffer, BufferRegion source,
                                                       Span span) {
  Need(buffer != nullptr && source != nullptr, span,
       "MatchBufferRegion needs a buffer and a source region");
  Need(buffer->dtype == source->buffer->dtype, span,
       "match_buffer " + buffer->name + " of " + buffer->dtype.ToString() + " cannot view " +
           source->buffer->name + " of " + source->buffer->dtype.ToString());
  Need(buffer->shape.size() <= source->region.size(), span,
       "match_buffer " + buffer->name + " has " + std::to_string(buffer->shape.size()) +
           " dimensions, more than its source region's " + std::to_string(source->region.size()));
  return std::make_shared<MatchBufferRegionNode>(std::move(buffer), std::move(source),
                                                 std::move(span));
}

Ref<BlockNode> BlockNode::Make(std::vector<IterVar> iter_vars, std::vector<BufferRegion> reads,
                               std::vector<BufferRegion> writes, std::string name_hint, Stmt body,
                               Stmt init, std::vector<Buffer> alloc_buffers,
                               std::vector<MatchBufferRegion> match_buffers, AttrMap annotations,
                               Span span) {
  NeedStmt(body, "block body", span);
  for (const IterVar& iv : iter_vars) {
    Need(iv != nullptr, span, "block iterator must not be null");
    Need(iv->dom != nullptr, span, "block iterator " + iv->var->name + " needs a domain");
    Need(iv->var->dtype.is_integer() && iv->var->dtype.is_scalar(), span,
         "block iterator " + iv->var->name + " must be a scalar integer");
    Need(iv->iter_type == IterVarType::kDataPar || iv->iter_type == IterVarType::kCommReduce ||
             iv->iter_type == IterVarType::kOrdered || iv->iter_type == IterVarType::kOpaque,
         span, "block iterator " + iv->var->name + " cannot be a thread index");
  }
  for (const BufferRegion& r : reads) Need(r != nullptr, span, "block read region is null");
  for (const BufferRegion& r : writes) Need(r != nullptr, span, "block write region is null");
  for (const Buffer& b : alloc_buffers) Need(b != nullptr, span, "block allocation is null");
  for (const MatchBufferRegion& m : match_buffers) {
    Need(m != nullptr, span, "block match_buffer is null");
  }
  return std::make_shared<BlockNode>(std::move(iter_vars), std::move(reads), std::move(writes),
                                     std::move(name_hint), std::move(body), std::move(init),
                                     std::move(alloc_buffers), std::move(match_buffers),
                                     std::move(annotations), std::move(span));
}

Ref<BlockRealizeNode> BlockRealizeNode::Make(std::vector<Expr> iter_values, Expr predicate,
                                             Block block, Span span) {
  Need(block != nullptr, span, "BlockRealize block must not be null");
  Need(iter_values.size() == block->iter_vars.size(), span,
       "block " + block->name_hint + " has " + std::to_string(block->iter_vars.size()) +
           " iterators but is realized with " + std::to_string(iter_values.size()) + " values");
  for (size_t i = 0; i < iter_values.size(); ++i) {
    NeedExpr(iter_values[i], "iterator value", span);
    const Var& var = block->iter_vars[i]->var;
    Need(iter_values[i]->dtype == var->dtype, span,
         "block " + block->name_hint + ": iterator " + var->name + " of type " +
             var->dtype.ToString() + " bound to a value of type " +
             iter_values[i]->dtype.ToString());
  }
  if (!predicate) predicate = Bool(true);
  NeedBoolCondition(predicate, span);
  return std::make_shared<BlockRealizeNode>(std::move(iter_values), std::move(predicate),
                                            std::move(block), std::move(span));
}

#undef Need

}  // namespace tessera
