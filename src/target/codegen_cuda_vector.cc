// CodeGenCUDA, vectors: the lanes of a vectorized loop body are printed one by one as scalar
// expressions; contiguous loads and stores whose offset is a provable multiple of the lane count
// become one vector memory instruction (float2/float4/int2/int4/uint2/uint4 words, and for 16-bit
// types 4-, 8- and 16-byte words), every other access goes lane by lane.
#include <unordered_map>

#include "tessera/arith/analyzer.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/support/error.h"
#include "tessera/target/codegen_cuda.h"

namespace tessera {
namespace codegen {
namespace {

Expr MakeBinaryLike(const BinaryNode* op, Expr a, Expr b) {
  switch (op->kind) {
#define TESSERA_CUDA_BINARY_CASE(name) \
  case NodeKind::k##name:              \
    return name##Node::Make(std::move(a), std::move(b), op->span);
    TESSERA_BINARY_NODES(TESSERA_CUDA_BINARY_CASE)
#undef TESSERA_CUDA_BINARY_CASE
    default:
      break;
  }
  TESSERA_ICHECK(false) << "not a binary node";
  return nullptr;
}

const char* kLaneField[] = {".x", ".y", ".z", ".w"};

}  // namespace

// The helpers that split 32-bit words into 16-bit lanes and pack them again.
const char* kCUDAHalfWordHelpers =
    R"(static __device__ __forceinline__ unsigned int __tsr_pack_half(half a, half b) {
  return (unsigned int)__half_as_ushort(a) | ((unsigned int)__half_as_ushort(b) << 16);
}
static __device__ __forceinline__ half __tsr_half_lo(unsigned int w) {
  return __ushort_as_half((unsigned short)(w & 0xffffu));
}
static __device__ __forceinline__ half __tsr_half_hi(unsigned int w) {
  return __ushort_as_half((unsigned short)(w >> 16));
}
)";
const char* kCUDABFloat16WordHelpers =
    R"(static __device__ __forceinline__ unsigned int __tsr_pack_bf16(nv_bfloat16 a, nv_bfloat16 b) {
  return (unsigned int)__bfloat16_as_ushort(a) | ((unsigned int)__bfloat16_as_ushort(b) << 16);
}
static __device__ __forceinline__ nv_bfloat16 __tsr_bf16_lo(unsigned int w) {
  return __ushort_as_bfloat16((unsigned short)(w & 0xffffu));
}
static __device__ __forceinline__ nv_bfloat16 __tsr_bf16_hi(unsigned int w) {
  return __ushort_as_bfloat16((unsigned short)(w >> 16));
}
)";

std::string CodeGenCUDA::VectorWordType(DataType t) {
  int n = t.lanes();
  if (t.bits() == 32 && (n == 2 || n == 4)) {
    std::string suffix = std::to_string(n);
    if (t.is_float() && !t.is_bfloat16()) return "float" + suffix;
    if (t.is_int()) return "int" + suffix;
    if (t.is_uint()) return "uint" + suffix;
    return "";
  }
  if (t.bits() == 16 && t.is_float() && (n == 2 || n == 4 || n == 8)) {
    if (t.is_bfloat16()) {
      uses_bf16_ = uses_bf16_words_ = true;
    } else {
      uses_fp16_ = uses_fp16_words_ = true;
    }
    return n == 2 ? "unsigned int" : n == 4 ? "uint2" : "uint4";
  }
  return "";
}

bool CodeGenCUDA::VectorAccessAligned(const BufferNode* buffer, const Expr& index, int lanes) {
  auto* ramp = AsPtr<RampNode>(index);
  if (ramp == nullptr || !IsConstInt(ramp->stride, 1)) return false;
  const std::string& scope = buffer->data->pointer ? buffer->data->pointer->scope : "";
  int64_t bytes = int64_t(buffer->dtype.element_of().bytes()) * lanes;
  // Shared allocations with vector accesses are printed 16-byte aligned; arguments are as
  // aligned as their buffers declare.
  // Register arrays ("local") are accessed lane by lane: taking a word of one through a pointer
  // would move it to local memory.
  if (scope == "local") return false;
  bool local = scope == "shared" || scope == "shared.dyn";
  if (local ? !vector_accessed_.count(buffer->data.get()) || bytes > 16
            : buffer->data_alignment < bytes)
    return false;
  arith::ModularSet m = vector_analyzer_.GetModularSet(ramp->base);
  return m.coeff % lanes == 0 && m.base % lanes == 0;
}

Expr CodeGenCUDA::DeclareLane(DataType t, const std::string& value) {
  Var v = VarNode::Make("v", t);
  vector_temps_.push_back(v);  // names are keyed by node: keep it alive
  std::string name = AllocVarName(v.get());
  PrintIndent();
  stream_ << TypeName(t, v->span) << " " << name << " = " << value << ";\n";
  return v;
}

const std::vector<Expr>& CodeGenCUDA::LoadLanes(const BufferLoadNode* op) {
  auto it = vector_loads_.find(op);
  if (it != vector_loads_.end()) return it->second;
  if (op->predicate) Unsupported("a predicated vector load", op->span);
  const BufferNode* buffer = op->buffer.get();
  Expr index = FlatIndex(buffer, op->indices, op->span);
  DataType t = op->dtype;
  DataType elem = t.element_of();
  int n = t.lanes();
  std::vector<Expr> lanes;
  std::string word = VectorWordType(t);
  if (!word.empty() && VectorAccessAligned(buffer, index, n)) {
    // One vector load, then the lanes out of the word.
    auto* ramp = AsPtr<RampNode>(index);
    Var w = VarNode::Make(buffer->name + "_vec", elem);
    vector_temps_.push_back(w);
    std::string wname = AllocVarName(w.get());
    PrintIndent();
    stream_ << word << " " << wname << " = *(const " << word << "*)"
            << OffsetPointer(BufferPointer(buffer, op->span), ramp->base) << ";\n";
    for (int i = 0; i < n; ++i) {
      std::string lane;
      if (elem.bits() == 32) {
        lane = wname + kLaneField[i];
      } else {
        std::string part = n == 2 ? wname : wname + kLaneField[i / 2];
        std::string fn = elem.is_bfloat16() ? "__tsr_bf16_" : "__tsr_half_";
        lane = fn + (i % 2 == 0 ? "lo(" : "hi(") + part + ")";
      }
      lanes.push_back(DeclareLane(elem, lane));
    }
  } else {
    std::string ptr = BufferPointer(buffer, op->span);
    for (int i = 0; i < n; ++i) {
      Expr idx = LaneOf(index, i);
      lanes.push_back(DeclareLane(elem, ptr + "[" + StripOuterParens(PrintExpr(idx)) + "]"));
    }
  }
  return vector_loads_[op] = std::move(lanes);
}

Expr CodeGenCUDA::LaneOf(const Expr& e, int i) {
  if (e->dtype.is_scalar()) return e;
  switch (e->kind) {
    case NodeKind::kRamp: {
      auto* op = static_cast<const RampNode*>(e.get());
      if (i == 0) return op->base;
      return vector_analyzer_.Simplify(AddNode::Make(
          op->base, MulNode::Make(op->stride, IntImmNode::Make(op->stride->dtype, i))));
    }
    case NodeKind::kBroadcast:
      return static_cast<const BroadcastNode*>(e.get())->value;
    case NodeKind::kCast: {
      auto* op = static_cast<const CastNode*>(e.get());
      return CastNode::Make(op->dtype.element_of(), LaneOf(op->value, i), op->span);
    }
    case NodeKind::kNot:
      return NotNode::Make(LaneOf(static_cast<const NotNode*>(e.get())->a, i), e->span);
    case NodeKind::kSelect: {
      auto* op = static_cast<const SelectNode*>(e.get());
      return SelectNode::Make(LaneOf(op->condition, i), LaneOf(op->true_value, i),
                              LaneOf(op->false_value, i), op->span);
    }
    case NodeKind::kBufferLoad:
      return LoadLanes(static_cast<const BufferLoadNode*>(e.get()))[i];
    case NodeKind::kVar: {
      auto it = vector_vars_.find(static_cast<const VarNode*>(e.get()));
      if (it == vector_vars_.end())
        Unsupported("the vector variable " + e->dtype.ToString(), e->span);
      return it->second[i];
    }
    case NodeKind::kLet: {
      // The value is declared once per statement: a scalar in a fresh variable substituted into
      // the body, a vector lane by lane.
      auto* op = static_cast<const LetNode*>(e.get());
      auto it = let_bodies_.find(op);
      if (it == let_bodies_.end()) {
        Expr body = op->body;
        if (op->var->dtype.is_scalar()) {
          Expr v = DeclareLane(op->var->dtype, StripOuterParens(PrintExpr(op->value)));
          body = transform::Substitute(op->body, transform::VarMap{{op->var.get(), v}});
        } else {
          BindVectorVar(op->var, op->value);
          statement_lets_.push_back(op->var.get());
        }
        it = let_bodies_.emplace(op, body).first;
      }
      return LaneOf(it->second, i);
    }
    case NodeKind::kShuffle: {
      auto* op = static_cast<const ShuffleNode*>(e.get());
      auto k = AsConstInt(op->indices[i]);
      if (!k) Unsupported("a Shuffle with a non-constant index", op->span);
      int64_t at = *k;
      for (const Expr& v : op->vectors) {
        if (at < v->dtype.lanes()) return LaneOf(v, static_cast<int>(at));
        at -= v->dtype.lanes();
      }
      Unsupported("a Shuffle index out of range", op->span);
    }
    case NodeKind::kCall: {
      auto* op = static_cast<const CallNode*>(e.get());
      auto* callee = AsPtr<OpNode>(op->op);
      if (callee && callee->name == "tir.if_then_else") {
        Unsupported("a vector tir.if_then_else (its branches would both be evaluated)", op->span);
      }
      std::vector<Expr> args;
      for (const Expr& a : op->args) args.push_back(LaneOf(a, i));
      return CallNode::Make(op->dtype.element_of(), op->op, std::move(args), op->span);
    }
    default:
      break;
  }
  if (auto* op = AsPtr<BinaryNode>(e))
    return MakeBinaryLike(op, LaneOf(op->a, i), LaneOf(op->b, i));
  Unsupported(std::string(NodeKindName(e->kind)) + " of " + e->dtype.ToString(), e->span);
}

void CodeGenCUDA::BindVectorVar(const Var& var, const Expr& value) {
  if (vector_vars_.count(var.get())) return;
  std::vector<Expr> lanes;
  for (int i = 0; i < var->dtype.lanes(); ++i) {
    lanes.push_back(
        DeclareLane(var->dtype.element_of(), StripOuterParens(PrintExpr(LaneOf(value, i)))));
  }
  vector_vars_[var.get()] = std::move(lanes);
}

void CodeGenCUDA::BeginVectorStatement() {
  // What was declared for an earlier statement may be out of scope here.
  vector_loads_.clear();
  let_bodies_.clear();
  for (const VarNode* v : statement_lets_) vector_vars_.erase(v);
  statement_lets_.clear();
}

void CodeGenCUDA::PrintVectorStore(const BufferStoreNode* op) {
  if (op->predicate) Unsupported("a predicated vector store", op->span);
  const BufferNode* buffer = op->buffer.get();
  Expr index = FlatIndex(buffer, op->indices, op->span);
  DataType t = op->value->dtype;
  int n = index->dtype.lanes();
  if (t.lanes() != n)
    Unsupported("a store of " + t.ToString() + " at " + index->dtype.ToString(), op->span);
  BeginVectorStatement();
  std::string word = VectorWordType(t);
  std::string ptr = BufferPointer(buffer, op->span);
  if (!word.empty() && VectorAccessAligned(buffer, index, n)) {
    auto* ramp = AsPtr<RampNode>(index);
    std::string target = "*(" + word + "*)" + OffsetPointer(ptr, ramp->base);
    // A copy between two aligned vector accesses moves the word as it is.
    auto* load = AsPtr<BufferLoadNode>(op->value);
    if (load && !load->predicate && load->dtype == t) {
      Expr src = FlatIndex(load->buffer.get(), load->indices, load->span);
      if (VectorAccessAligned(load->buffer.get(), src, n)) {
        std::string from = "*(const " + word + "*)" +
                           OffsetPointer(BufferPointer(load->buffer.get(), load->span),
                                         AsPtr<RampNode>(src)->base);
        PrintIndent();
        stream_ << target << " = " << from << ";\n";
        return;
      }
    }
    std::vector<std::string> lanes;
    for (int i = 0; i < n; ++i) lanes.push_back(StripOuterParens(PrintExpr(LaneOf(op->value, i))));
    std::string value;
    if (t.bits() == 32) {
      value = "make_" + word + "(";
      for (int i = 0; i < n; ++i) value += (i ? ", " : "") + lanes[i];
      value += ")";
    } else {
      std::string pack = t.is_bfloat16() ? "__tsr_pack_bf16(" : "__tsr_pack_half(";
      std::vector<std::string> words;
      for (int i = 0; i < n; i += 2) words.push_back(pack + lanes[i] + ", " + lanes[i + 1] + ")");
      if (n == 2) {
        value = words[0];
      } else {
        value = "make_" + word + "(";
        for (size_t i = 0; i < words.size(); ++i) value += (i ? ", " : "") + words[i];
        value += ")";
      }
    }
    PrintIndent();
    stream_ << target << " = " << value << ";\n";
    return;
  }
  // Lane by lane: every lane's value is computed before the first store.
  std::vector<std::string> values, indices;
  for (int i = 0; i < n; ++i) {
    Expr v = LaneOf(op->value, i);
    if (!AsPtr<VarNode>(v) && !AsPtr<IntImmNode>(v) && !AsPtr<FloatImmNode>(v)) {
      v = DeclareLane(t.element_of(), StripOuterParens(PrintExpr(v)));
    }
    values.push_back(PrintExpr(v));
    indices.push_back(StripOuterParens(PrintExpr(LaneOf(index, i))));
  }
  for (int i = 0; i < n; ++i) {
    PrintIndent();
    stream_ << ptr << "[" << indices[i] << "] = " << values[i] << ";\n";
  }
}

std::string CodeGenCUDA::PrintVectorLoad(const BufferLoadNode* op) {
  Unsupported("a vector load of " + op->dtype.ToString() + " used as a whole value", op->span);
}

void CodeGenCUDA::VisitStmt_(const LetStmtNode* op) {
  if (op->var->dtype.is_vector()) {
    BeginVectorStatement();
    BindVectorVar(op->var, op->value);
    PrintStmt(op->body);
    vector_vars_.erase(op->var.get());
    return;
  }
  // Index variables bound by a let keep their divisibility for the alignment checks.
  bool bind = op->var->dtype.is_integer();
  if (bind) vector_analyzer_.Bind(op->var, op->value);
  CodeGenC::VisitStmt_(op);
  if (bind) vector_analyzer_.Unbind(op->var);
}

}  // namespace codegen
}  // namespace tessera
