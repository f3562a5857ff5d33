// CodeGenC: scalar C printing of expressions and statements shared by every C-like backend.
#include "tessera/target/codegen_c.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

#include "tessera/support/error.h"
#include "tessera/support/escape.h"
#include "tessera/transform/analysis.h"

namespace tessera {
namespace codegen {
namespace {

// Words a variable must not be named after: C keywords and names every C prelude defines.
const std::unordered_set<std::string>& CReservedWords() {
  static const auto* words = new std::unordered_set<std::string>{
      "auto",     "break",    "case",     "char",   "const",    "continue", "default",
      "do",       "double",   "else",     "enum",   "extern",   "float",    "for",
      "goto",     "if",       "inline",   "int",    "long",     "register", "restrict",
      "return",   "short",    "signed",   "sizeof", "static",   "struct",   "switch",
      "typedef",  "union",    "unsigned", "void",   "volatile", "while",    "_Bool",
      "_Complex", "_Generic", "bool",     "true",   "false",    "NULL",     "main"};
  return *words;
}

const char* ScalarOperator(NodeKind kind) {
  switch (kind) {
    case NodeKind::kAdd:
      return "+";
    case NodeKind::kSub:
      return "-";
    case NodeKind::kMul:
      return "*";
    case NodeKind::kDiv:
      return "/";
    case NodeKind::kMod:
      return "%";
    case NodeKind::kEQ:
      return "==";
    case NodeKind::kNE:
      return "!=";
    case NodeKind::kLT:
      return "<";
    case NodeKind::kLE:
      return "<=";
    case NodeKind::kGT:
      return ">";
    case NodeKind::kGE:
      return ">=";
    case NodeKind::kAnd:
      return "&&";
    case NodeKind::kOr:
      return "||";
    default:
      return nullptr;
  }
}

}  // namespace

CodeGenC::CodeGenC(std::string target_name) : target_name_(std::move(target_name)) {}

void CodeGenC::ReserveGlobalName(const std::string& name) { global_names_.insert(name); }

void CodeGenC::Unsupported(const std::string& what, const Span& span) const {
  TESSERA_THROW_KIND(span, ErrorKind::kBuild)
      << "codegen for " << what << " is not supported on the " << target_name_ << " target";
}

// ---------------------------------------------------------------------------------------------
// Names and layout
// ---------------------------------------------------------------------------------------------

std::string CodeGenC::SanitizeName(const std::string& name) {
  std::string out;
  for (char c : name) {
    bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    out += ok ? c : '_';
  }
  if (out.empty()) return "v";
  if (out[0] >= '0' && out[0] <= '9') out = "v_" + out;
  return out;
}

std::string CodeGenC::IntPowDefinition(const std::string& qualifiers, const std::string& name,
                                       const std::string& type, bool is_signed) {
  std::ostringstream os;
  os << qualifiers << type << " " << name << "(" << type << " a, " << type << " b) {\n";
  if (is_signed) {
    os << "  if (b < 0) return (" << type << ")(a == 1 ? 1 : a == -1 ? ((b & 1) ? -1 : 1) : 0);\n";
  }
  // Through int64_t: a negative base sign-extends, so the low bits of the product are right.
  os << "  uint64_t r = 1, x = (uint64_t)(int64_t)a;\n"
     << "  for (uint64_t e = (uint64_t)b; e != 0; e >>= 1) {\n"
     << "    if (e & 1) r *= x;\n"
     << "    x *= x;\n"
     << "  }\n"
     << "  return (" << type << ")r;\n}\n";
  return os.str();
}

std::string CodeGenC::StripOuterParens(const std::string& text) {
  if (text.size() < 2 || text.front() != '(' || text.back() != ')') return text;
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '(') {
      ++depth;
    } else if (c == ')' && --depth == 0 && i + 1 != text.size()) {
      return text;  // the first '(' closes early: "(a) + (b)"
    }
  }
  return text.substr(1, text.size() - 2);
}

void CodeGenC::PrintIndent() { stream_ << std::string(indent_, ' '); }

int CodeGenC::BeginScope() {
  indent_ += 2;
  return indent_;
}

void CodeGenC::EndScope(int scope_id) {
  TESSERA_ICHECK(scope_id == indent_) << "unbalanced codegen scopes";
  indent_ -= 2;
}

std::string CodeGenC::AllocVarName(const VarNode* v) {
  TESSERA_ICHECK(!var_names_.count(v)) << "variable '" << v->name << "' is defined twice";
  std::string base = SanitizeName(v->name);
  std::string name = base;
  for (int n = 1;
       CReservedWords().count(name) || global_names_.count(name) || used_names_.count(name); ++n) {
    name = base + "_" + std::to_string(n);
  }
  used_names_.insert(name);
  var_names_[v] = name;
  return name;
}

std::string CodeGenC::GetVarName(const VarNode* v) const {
  auto it = var_names_.find(v);
  TESSERA_ICHECK(it != var_names_.end())
      << "variable '" << v->name << "' is used outside its scope";
  return it->second;
}

void CodeGenC::ResetFunctionState() {
  used_names_.clear();
  var_names_.clear();
  local_vars_.clear();
  initial_stores_.clear();
}

// ---------------------------------------------------------------------------------------------
// Types and functions
// ---------------------------------------------------------------------------------------------

std::string CodeGenC::TypeName(DataType t, const Span& span) {
  if (t.is_void()) return "void";
  if (t.is_handle()) return "void*";
  if (t.is_vector()) Unsupported("vector type " + t.ToString(), span);
  if (t.is_bool()) return "bool";
  if (t.is_narrow_float()) {
    CheckNarrowFloat(t, span, "values");
    return "uint8_t";
  }
  if (t.is_float() && !t.is_bfloat16()) {
    if (t.bits() == 16) return "_Float16";
    if (t.bits() == 32) return "float";
    if (t.bits() == 64) return "double";
  }
  if (t.is_integer() && (t.bits() == 8 || t.bits() == 16 || t.bits() == 32 || t.bits() == 64)) {
    return std::string(t.is_uint() ? "uint" : "int") + std::to_string(t.bits()) + "_t";
  }
  Unsupported("type " + t.ToString(), span);
}

void CodeGenC::CheckNarrowFloat(DataType t, const Span& span, const char* what) {
  if (!t.is_narrow_float()) return;
  if (!t.is_float8() || !float8_storage_) {
    Unsupported(std::string(what) + " of type " + t.ToString() + " on target " + target_name_,
                span);
  }
}

std::string CodeGenC::PointerTypeName(const PointerType& ptr, const Span& span) {
  std::string qual = ScopeQualifier(ptr.scope);
  return (qual.empty() ? "" : qual + " ") + TypeName(ptr.element, span) + "*";
}

std::string CodeGenC::VarTypeName(const VarNode* v) {
  if (v->pointer) return PointerTypeName(*v->pointer, v->span);
  return TypeName(v->dtype, v->span);
}

std::string CodeGenC::PrintParam(const Var& param) {
  return VarTypeName(param.get()) + " " + GetVarName(param.get());
}

std::string CodeGenC::PrintSignature(const std::string& name, const PrimFunc& func,
                                     bool prototype) {
  ResetFunctionState();
  current_func_ = func;
  for (const Var& p : func->params) AllocVarName(p.get());
  std::string s =
      FunctionPrefix(func, prototype) + TypeName(func->ret_type, func->span) + " " + name + "(";
  for (size_t i = 0; i < func->params.size(); ++i) {
    if (i) s += ", ";
    s += PrintParam(func->params[i]);
  }
  return s + ")";
}

std::string CodeGenC::PrintPrototype(const std::string& name, const PrimFunc& func) {
  return PrintSignature(name, func, /*prototype=*/true) + ";";
}

void CodeGenC::AddFunction(const std::string& name, const PrimFunc& func) {
  transform::RefuseScalableVectors(func, target_name_);
  stream_ << PrintSignature(name, func, /*prototype=*/false) << " {\n";
  // A buffer_map buffer with its own data variable reads through the parameter.
  for (const auto& [param, buffer] : func->buffer_map) {
    const VarNode* data = buffer->data.get();
    if (!HasVarName(data)) var_names_[data] = GetVarName(param.get());
  }
  int scope = BeginScope();
  PrintFunctionPrologue(func);
  PrintStmt(func->body);
  PrintFunctionEpilogue(func);
  EndScope(scope);
  stream_ << "}\n";
  current_func_ = nullptr;
}

// ---------------------------------------------------------------------------------------------
// Expressions
// ---------------------------------------------------------------------------------------------

std::string CodeGenC::PrintIntImm(const IntImmNode* op) {
  DataType t = op->dtype;
  if (t.is_bool()) return op->value ? "true" : "false";
  if (t == DataType::Int(32)) {
    // -2147483648 would be the negation of a 64-bit literal.
    if (op->value == std::numeric_limits<int32_t>::min()) return "(-2147483647 - 1)";
    return std::to_string(op->value);
  }
  if (t == DataType::UInt(32)) return std::to_string(op->value) + "u";
  if (t == DataType::Int(64)) {
    if (op->value == std::numeric_limits<int64_t>::min()) return "(-9223372036854775807LL - 1)";
    return std::to_string(op->value) + "LL";
  }
  if (t == DataType::UInt(64)) return std::to_string(static_cast<uint64_t>(op->value)) + "ULL";
  return "((" + TypeName(t, op->span) + ")" + std::to_string(op->value) + ")";
}

std::string CodeGenC::PrintFloatImm(const FloatImmNode* op) {
  DataType t = op->dtype;
  double v = op->value;
  std::string text;
  if (t.is_narrow_float()) {
    CheckNarrowFloat(t, op->span, "constants");
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%a", v);
    std::string value = std::isnan(v)   ? "NAN"
                        : std::isinf(v) ? (v < 0 ? "(-INFINITY)" : "INFINITY")
                                        : std::string(buf);
    return "tessera_narrow_from_double(" + value + ", " + std::to_string(int(t.code())) + ")";
  }
  if (std::isnan(v)) {
    text = "NAN";
  } else if (std::isinf(v)) {
    text = v < 0 ? "(-INFINITY)" : "INFINITY";
  } else {
    // Enough digits to read back the same value of the constant's own width.
    char buf[64];
    if (t.bits() == 64) {
      std::snprintf(buf, sizeof(buf), "%.17g", v);
    } else {
      std::snprintf(buf, sizeof(buf), "%.9g", static_cast<double>(static_cast<float>(v)));
    }
    text = buf;
    if (text.find_first_of(".e") == std::string::npos) text += ".0";
    if (t.bits() == 64) return text;
    text += "f";
  }
  if (t.bits() == 32) return text;
  return "((" + TypeName(t, op->span) + ")" + text + ")";
}

std::string CodeGenC::VisitExpr_(const IntImmNode* op) { return PrintIntImm(op); }
std::string CodeGenC::VisitExpr_(const FloatImmNode* op) { return PrintFloatImm(op); }
std::string CodeGenC::VisitExpr_(const StringImmNode* op) {
  return Quote(op->value, QuoteStyle::kC);
}
std::string CodeGenC::VisitExpr_(const VarNode* op) {
  // The storage variable of a mutable local used as a pointer (`x.addr` in the DSL).
  if (local_vars_.count(op)) return "(&" + GetVarName(op) + ")";
  return GetVarName(op);
}
std::string CodeGenC::VisitExpr_(const SizeVarNode* op) { return GetVarName(op); }

std::string CodeGenC::VisitExpr_(const CastNode* op) {
  if (op->dtype.is_vector()) return PrintVectorCast(op);
  DataType from = op->value->dtype, to = op->dtype;
  if (from.is_narrow_float() || to.is_narrow_float()) {
    // float8 values are bytes: convert through double, which holds every value exactly.
    CheckNarrowFloat(from, op->span, "casts");
    CheckNarrowFloat(to, op->span, "casts");
    std::string value = PrintExpr(op->value);
    if (from.is_narrow_float()) {
      value = "tessera_narrow_to_double(" + value + ", " + std::to_string(int(from.code())) + ")";
    }
    if (to.is_narrow_float()) {
      return "tessera_narrow_from_double((double)" + value + ", " + std::to_string(int(to.code())) +
             ")";
    }
    return "((" + TypeName(to, op->span) + ")" + value + ")";
  }
  return "((" + TypeName(op->dtype, op->span) + ")" + PrintExpr(op->value) + ")";
}

std::string CodeGenC::PrintVectorCast(const CastNode* op) {
  Unsupported("vector cast from " + op->value->dtype.ToString() + " to " + op->dtype.ToString(),
              op->span);
}

std::string CodeGenC::PrintScalarBinary(const BinaryNode* op) {
  DataType t = op->a->dtype;
  if (t.is_narrow_float()) return PrintNarrowFloatBinary(op);
  std::string a = PrintExpr(op->a), b = PrintExpr(op->b);
  // C computes arithmetic on types narrower than int in int: the result must wrap to the type
  // (int8 127 + 1 is -128, as TVM's folding and LLVM's i8 arithmetic give), and a uint16
  // product is computed in unsigned 32 bits (65535 * 65535 overflows int).
  bool narrow = wrap_narrow_integers_ && t.is_integer() && t.bits() < 32;
  if (narrow &&
      (op->kind == NodeKind::kAdd || op->kind == NodeKind::kSub || op->kind == NodeKind::kMul ||
       op->kind == NodeKind::kDiv || op->kind == NodeKind::kFloorDiv)) {
    std::string type = TypeName(t, op->span);
    std::string value;
    if (op->kind == NodeKind::kFloorDiv) {
      value = "__floordiv(" + a + ", " + b + ")";
    } else if (op->kind == NodeKind::kMul && t.is_uint()) {
      value = "(uint32_t)" + a + " * (uint32_t)" + b;
    } else {
      value = a + " " + ScalarOperator(op->kind) + " " + b;
    }
    return "((" + type + ")(" + value + "))";
  }
  switch (op->kind) {
    case NodeKind::kMin:
      return "min(" + a + ", " + b + ")";
    case NodeKind::kMax:
      return "max(" + a + ", " + b + ")";
    case NodeKind::kFloorDiv:
      return "__floordiv(" + a + ", " + b + ")";
    case NodeKind::kFloorMod:
      return "__floormod(" + a + ", " + b + ")";
    case NodeKind::kMod:
      if (t.is_float()) {
        if (t.bits() == 64) return "fmod(" + a + ", " + b + ")";
        if (t.bits() == 32) return "fmodf(" + a + ", " + b + ")";
        return "((" + TypeName(t, op->span) + ")fmodf((float)" + a + ", (float)" + b + "))";
      }
      break;
    default:
      break;
  }
  const char* sym = ScalarOperator(op->kind);
  TESSERA_ICHECK(sym != nullptr) << "no C operator for " << NodeKindName(op->kind);
  return "(" + a + " " + sym + " " + b + ")";
}

std::string CodeGenC::PrintNarrowFloatBinary(const BinaryNode* op) {
  // float8 values are bytes: the operation is computed in float32 (as TVM legalizes it) and a
  // float8 result rounded back; a comparison compares the float32 values.
  DataType t = op->a->dtype;
  CheckNarrowFloat(t, op->span, "arithmetic");
  std::string code = std::to_string(int(t.code()));
  std::string a = "((float)tessera_narrow_to_double(" + PrintExpr(op->a) + ", " + code + "))";
  std::string b = "((float)tessera_narrow_to_double(" + PrintExpr(op->b) + ", " + code + "))";
  std::string value;
  switch (op->kind) {
    case NodeKind::kMin:
      value = "fminf(" + a + ", " + b + ")";
      break;
    case NodeKind::kMax:
      value = "fmaxf(" + a + ", " + b + ")";
      break;
    case NodeKind::kFloorDiv:
      value = "floorf(" + a + " / " + b + ")";
      break;
    case NodeKind::kFloorMod:
      value = "(" + a + " - floorf(" + a + " / " + b + ") * " + b + ")";
      break;
    case NodeKind::kMod:
      value = "fmodf(" + a + ", " + b + ")";
      break;
    default: {
      const char* sym = ScalarOperator(op->kind);
      TESSERA_ICHECK(sym != nullptr) << "no C operator for " << NodeKindName(op->kind);
      value = "(" + a + " " + sym + " " + b + ")";
    }
  }
  if (!op->dtype.is_narrow_float()) return value;
  return "tessera_narrow_from_double((double)" + value + ", " + code + ")";
}

std::string CodeGenC::PrintVectorBinary(const BinaryNode* op) {
  Unsupported(std::string("vector ") + NodeKindName(op->kind) + " on " + op->a->dtype.ToString(),
              op->span);
}

#define TESSERA_CODEGEN_BINARY_DEF(name)                                             \
  std::string CodeGenC::VisitExpr_(const name##Node* op) {                           \
    return op->a->dtype.is_vector() ? PrintVectorBinary(op) : PrintScalarBinary(op); \
  }
TESSERA_BINARY_NODES(TESSERA_CODEGEN_BINARY_DEF)
#undef TESSERA_CODEGEN_BINARY_DEF

std::string CodeGenC::VisitExpr_(const NotNode* op) {
  if (op->dtype.is_vector()) return PrintVectorNot(op);
  return "(!" + PrintExpr(op->a) + ")";
}

std::string CodeGenC::PrintVectorNot(const NotNode* op) {
  Unsupported("vector Not on " + op->dtype.ToString(), op->span);
}

std::string CodeGenC::VisitExpr_(const SelectNode* op) {
  if (op->condition->dtype.is_vector()) return PrintVectorSelect(op);
  return "(" + PrintExpr(op->condition) + " ? " + PrintExpr(op->true_value) + " : " +
         PrintExpr(op->false_value) + ")";
}

std::string CodeGenC::PrintVectorSelect(const SelectNode* op) {
  Unsupported("vector Select on " + op->dtype.ToString(), op->span);
}

std::string CodeGenC::VisitExpr_(const RampNode* op) {
  Unsupported("Ramp " + op->dtype.ToString() + " used as a value", op->span);
}

std::string CodeGenC::VisitExpr_(const BroadcastNode* op) {
  Unsupported("Broadcast to " + op->dtype.ToString(), op->span);
}

std::string CodeGenC::VisitExpr_(const ShuffleNode* op) {
  Unsupported("Shuffle " + op->dtype.ToString(), op->span);
}

std::string CodeGenC::VisitExpr_(const LetNode* op) {
  // C has no let-expression: bind the variable in a declaration just before the statement.
  if (!HasVarName(op->var.get())) {
    std::string value = PrintExpr(op->value);
    std::string name = AllocVarName(op->var.get());
    PrintIndent();
    stream_ << VarTypeName(op->var.get()) << " " << name << " = " << value << ";\n";
  }
  return PrintExpr(op->body);
}

std::string CodeGenC::VisitExpr_(const CallNode* op) {
  if (auto* gv = AsPtr<GlobalVarNode>(op->op)) return PrintCallFunction(op, gv);
  const auto* callee = AsPtr<OpNode>(op->op);
  TESSERA_ICHECK(callee != nullptr) << "call of neither an Op nor a GlobalVar";
  const std::string& name = callee->name;
  if (op->dtype.is_narrow_float() && name != "tir.reinterpret" && name != "tir.if_then_else") {
    Unsupported(name + " of " + op->dtype.ToString() +
                    " (no arithmetic on narrow floats: cast to float32 and back)",
                op->span);
  }
  auto args = [&](size_t first) {
    std::string s;
    for (size_t i = first; i < op->args.size(); ++i) {
      if (i > first) s += ", ";
      s += PrintExpr(op->args[i]);
    }
    return s;
  };
  bool scalar = op->dtype.is_scalar();
  if (name == "tir.address_of") {
    const auto* load = AsPtr<BufferLoadNode>(op->args[0]);
    if (load == nullptr) Unsupported("address_of of a non-BufferLoad", op->span);
    if (IsLocalVarBuffer(load->buffer.get()))
      return "(&" + GetVarName(load->buffer->data.get()) + ")";
    Expr index = FlatIndex(load->buffer.get(), load->indices, op->span);
    if (index->dtype.is_vector()) Unsupported("address_of a vector access", op->span);
    return OffsetPointer(BufferPointer(load->buffer.get(), op->span), index);
  }
  if (name == "tir.call_extern" || name == "tir.call_pure_extern") {
    const auto* fname = op->args.empty() ? nullptr : AsPtr<StringImmNode>(op->args[0]);
    if (fname == nullptr) Unsupported(name + " without a function name", op->span);
    return fname->value + "(" + args(1) + ")";
  }
  if (name == "tir.likely") return PrintExpr(op->args[0]);
  if (name == "tir.if_then_else" && op->args[0]->dtype.is_scalar()) {
    return "(" + PrintExpr(op->args[0]) + " ? " + PrintExpr(op->args[1]) + " : " +
           PrintExpr(op->args[2]) + ")";
  }
  if (scalar) {
    static const std::unordered_map<std::string, std::string> kBitwise = {
        {"tir.bitwise_and", "&"},
        {"tir.bitwise_or", "|"},
        {"tir.bitwise_xor", "^"},
        {"tir.shift_left", "<<"},
        {"tir.shift_right", ">>"}};
    auto it = kBitwise.find(name);
    // C promotes operands narrower than int, so `<<` and `~` of an 8- or 16-bit value keep the
    // bits above its width: cast the result back to the value's type, which drops them.
    bool narrow_int = (op->dtype.is_int() || op->dtype.is_uint()) && op->dtype.bits() < 32;
    auto wrap = [&](const std::string& e) {
      return narrow_int ? "((" + TypeName(op->dtype, op->span) + ")" + e + ")" : e;
    };
    if (it != kBitwise.end()) {
      std::string e =
          "(" + PrintExpr(op->args[0]) + " " + it->second + " " + PrintExpr(op->args[1]) + ")";
      return name == "tir.shift_left" ? wrap(e) : e;
    }
    if (name == "tir.bitwise_not") return wrap("(~" + PrintExpr(op->args[0]) + ")");
  }
  if (name == "tir.ret") Unsupported("tir.ret outside a statement", op->span);
  return PrintCallOp(op, callee);
}

std::string CodeGenC::PrintCallOp(const CallNode* op, const OpNode* callee) {
  Unsupported("op " + callee->name, op->span);
}

std::string CodeGenC::PrintCallFunction(const CallNode* op, const GlobalVarNode* callee) {
  std::string s = CalleeName(callee) + "(";
  for (size_t i = 0; i < op->args.size(); ++i) {
    if (i) s += ", ";
    s += PrintExpr(op->args[i]);
  }
  return s + ")";
}

std::string CodeGenC::BufferPointer(const BufferNode* buffer, const Span& span) {
  const VarNode* data = buffer->data.get();
  std::string name = GetVarName(data);
  if (local_vars_.count(data)) name = "(&" + name + ")";
  if (data->pointer && data->pointer->element == buffer->dtype) return name;
  // A view with another element type (as_ptr, reinterpretation): cast the base pointer.
  std::string scope = data->pointer ? data->pointer->scope : "";
  return "((" + PointerTypeName(PointerType{buffer->dtype, scope}, span) + ")" + name + ")";
}

Expr CodeGenC::FlatIndex(const BufferNode* buffer, const std::vector<Expr>& indices,
                         const Span& span) {
  if (indices.size() != 1) {
    Unsupported("access to the " + std::to_string(indices.size()) + "-d buffer " + buffer->name +
                    " (buffers must be flattened before codegen)",
                span);
  }
  Expr index = indices[0];
  if (!buffer->elem_offset || IsConstInt(buffer->elem_offset, 0)) return index;
  Expr offset = buffer->elem_offset;
  DataType scalar = index->dtype.element_of();
  if (offset->dtype != scalar) offset = CastNode::Make(scalar, offset);
  if (auto* ramp = AsPtr<RampNode>(index)) {
    return RampNode::Make(AddNode::Make(offset, ramp->base), ramp->stride, ramp->lanes);
  }
  if (index->dtype.is_vector()) offset = BroadcastNode::Make(offset, index->dtype.lanes());
  return AddNode::Make(offset, index);
}

namespace {
/*! \brief The constant term of a sum of int32 terms: `index` without it in *rest (null when
 *  the index is that constant), the constant in *c. Added or subtracted terms at any depth of
 *  a chain of + and - count (((x + 15) - r) - 4 * q: x - r - 4 * q and 15), the simplifier's
 *  order putting the constant inside the chain; the other terms keep their order. */
void ConstantTerm(const Expr& index, Expr* rest, int64_t* c) {
  if (const IntImmNode* k = AsPtr<IntImmNode>(index)) {
    *rest = Expr();
    *c = k->value;
    return;
  }
  const AddNode* add = AsPtr<AddNode>(index);
  const SubNode* sub = AsPtr<SubNode>(index);
  if (add == nullptr && sub == nullptr) {
    *rest = index;
    *c = 0;
    return;
  }
  const Expr& a = add ? add->a : sub->a;
  const Expr& b = add ? add->b : sub->b;
  Expr ra, rb;
  int64_t ca = 0, cb = 0;
  ConstantTerm(a, &ra, &ca);
  ConstantTerm(b, &rb, &cb);
  if ((ca == 0 && cb == 0) || (!ra && sub != nullptr)) {
    *rest = index;  // nothing to take out (or only the constant minus a term: left whole)
    *c = 0;
    return;
  }
  *c = add ? ca + cb : ca - cb;
  if (!ra) {
    *rest = rb;
  } else if (!rb) {
    *rest = ra;
  } else {
    *rest = add ? Expr(AddNode::Make(ra, rb)) : Expr(SubNode::Make(ra, rb));
  }
}

/*! \brief For a scalar int32 `index` x + c (c a nonzero constant term of a chain of + and -):
 *  x and c. */
bool SplitConstantOffset(const Expr& index, Expr* x, int64_t* c) {
  if (index->dtype != DataType::Int(32)) return false;
  if (AsPtr<AddNode>(index) == nullptr && AsPtr<SubNode>(index) == nullptr) return false;
  Expr rest;
  int64_t k = 0;
  ConstantTerm(index, &rest, &k);
  if (!rest || k == 0 || k < INT32_MIN || k > INT32_MAX) return false;
  *x = rest;
  *c = k;
  return true;
}
}  // namespace

std::string CodeGenC::OffsetPointer(const std::string& ptr, const Expr& offset) {
  if (IsConstInt(offset, 0)) return ptr;
  Expr x;
  int64_t c = 0;
  if (split_constant_offsets_ && SplitConstantOffset(offset, &x, &c)) {
    return "(" + ptr + " + " + PrintExpr(x) + " + " + std::to_string(c) + ")";
  }
  return "(" + ptr + " + " + PrintExpr(offset) + ")";
}

std::string CodeGenC::IndexedElement(const std::string& ptr, const Expr& index) {
  Expr x;
  int64_t c = 0;
  if (split_constant_offsets_ && SplitConstantOffset(index, &x, &c)) {
    return "(" + ptr + " + " + PrintExpr(x) + ")[" + std::to_string(c) + "]";
  }
  return ptr + "[" + PrintExpr(index) + "]";
}

std::string CodeGenC::VisitExpr_(const BufferLoadNode* op) {
  const BufferNode* buffer = op->buffer.get();
  if (IsLocalVarBuffer(buffer)) return GetVarName(buffer->data.get());
  Expr index = FlatIndex(buffer, op->indices, op->span);
  if (index->dtype.is_vector()) return PrintVectorLoad(op);
  return IndexedElement(BufferPointer(buffer, op->span), index);
}

std::string CodeGenC::PrintVectorLoad(const BufferLoadNode* op) {
  Unsupported("vector load of " + op->dtype.ToString(), op->span);
}

// ---------------------------------------------------------------------------------------------
// Statements
// ---------------------------------------------------------------------------------------------

void CodeGenC::VisitStmt_(const LetStmtNode* op) {
  std::string value = PrintExpr(op->value);
  std::string name = AllocVarName(op->var.get());
  PrintIndent();
  stream_ << VarTypeName(op->var.get()) << " " << name << " = " << value << ";\n";
  AfterLetBinding(op, name);
  PrintStmt(op->body);
}

void CodeGenC::VisitStmt_(const AttrStmtNode* op) {
  // A launched GPU thread (T.launch_thread) has no meaning on a CPU target: its variable would
  // be used without a definition.
  if (op->attr_key == "thread_extent") {
    auto* iv = AsPtr<IterVarNode>(op->node);
    Unsupported("T.launch_thread of " + (iv ? iv->thread_tag : std::string("a thread")) +
                    " (GPU threads exist only on GPU targets, e.g. \"cuda\")",
                op->span);
  }
  PrintStmt(op->body);
}

void CodeGenC::VisitStmt_(const AssertStmtNode* op) { PrintStmt(op->body); }

// The store that opens `body` and gives the local `var` a value that does not read it, if any.
const BufferStoreNode* CodeGenC::InitialStore(const Stmt& body, const VarNode* var) {
  Stmt first = body;
  while (true) {
    if (const auto* decl = AsPtr<DeclBufferNode>(first)) {
      first = decl->body;
    } else if (const auto* seq = AsPtr<SeqStmtNode>(first)) {
      if (seq->seq.empty()) return nullptr;
      first = seq->seq[0];
    } else {
      break;
    }
  }
  const auto* store = AsPtr<BufferStoreNode>(first);
  if (store == nullptr || store->buffer->data.get() != var || store->predicate) return nullptr;
  bool reads_itself = false;
  PostOrderVisit(store->value, [&](const ObjectRef& n) {
    if (n.get() == var) reads_itself = true;
  });
  return reads_itself ? nullptr : store;
}

void CodeGenC::VisitStmt_(const BufferStoreNode* op) {
  const BufferNode* buffer = op->buffer.get();
  if (initial_stores_.count(op)) return;  // printed with the declaration
  if (IsLocalVarBuffer(buffer)) {
    std::string value = PrintExpr(op->value);
    PrintIndent();
    stream_ << GetVarName(buffer->data.get()) << " = " << value << ";\n";
    return;
  }
  Expr index = FlatIndex(buffer, op->indices, op->span);
  if (index->dtype.is_vector()) {
    PrintVectorStore(op);
    return;
  }
  std::string target = IndexedElement(BufferPointer(buffer, op->span), index);
  std::string value = PrintExpr(op->value);
  PrintIndent();
  stream_ << target << " = " << value << ";\n";
}

void CodeGenC::PrintVectorStore(const BufferStoreNode* op) {
  Unsupported("vector store of " + op->value->dtype.ToString(), op->span);
}

void CodeGenC::VisitStmt_(const AllocateNode* op) {
  const VarNode* var = op->buffer_var.get();
  std::string type = TypeName(op->dtype, op->span);
  if (op->annotations.count("tessera.local_var")) {
    std::string name = AllocVarName(var);
    local_vars_.insert(var);
    // A local whose first statement stores its initial value is declared with it:
    // `int x = 0;` rather than `int x; x = 0;`.
    if (const BufferStoreNode* init = InitialStore(op->body, var)) {
      std::string value = PrintExpr(init->value);
      PrintIndent();
      stream_ << type << " " << name << " = " << value << ";\n";
      initial_stores_.insert(init);
      PrintStmt(op->body);
      return;
    }
    PrintIndent();
    stream_ << type << " " << name << ";\n";
    PrintStmt(op->body);
    return;
  }
  int64_t count = 1;
  for (const Expr& e : op->extents) {
    auto c = AsConstInt(e);
    if (!c)
      Unsupported("allocation of " + var->name + " with a size known only at run time", op->span);
    count *= *c;
  }
  std::string name = AllocVarName(var);
  PrintIndent();
  stream_ << AllocationPrefix(var->pointer->scope) << type << " " << name << "[" << count << "];\n";
  PrintStmt(op->body);
}

// Constant data is a static array in the function, its elements written exactly (floats as
// hexadecimal literals).
void CodeGenC::VisitStmt_(const AllocateConstNode* op) {
  const VarNode* var = op->buffer_var.get();
  std::string type = TypeName(op->dtype, op->span);
  if (op->dtype.is_bfloat16()) Unsupported("constant data of bfloat16", op->span);
  int64_t count = op->NumElements();
  std::string name = AllocVarName(var);
  PrintIndent();
  stream_ << "static const " << type << " " << name << "[" << std::max<int64_t>(count, 1)
          << "] = {";
  for (int64_t i = 0; i < count; ++i) {
    if (i) stream_ << (i % 8 == 0 ? ",\n" + std::string(indent_ + 4, ' ') : ", ");
    if (op->dtype.is_float()) {
      double v = op->FloatAt(i);
      char buf[64];
      if (std::isnan(v)) {
        std::snprintf(buf, sizeof(buf), "NAN");
      } else if (std::isinf(v)) {
        std::snprintf(buf, sizeof(buf), v < 0 ? "(-INFINITY)" : "INFINITY");
      } else {
        std::snprintf(buf, sizeof(buf), "%a", v);
      }
      stream_ << buf;
    } else if (op->dtype.is_uint()) {
      stream_ << static_cast<uint64_t>(op->IntAt(i)) << (op->dtype.bits() == 64 ? "ULL" : "u");
    } else if (op->dtype.bits() == 64 && op->IntAt(i) == std::numeric_limits<int64_t>::min()) {
      stream_ << "(-9223372036854775807LL - 1)";
    } else {
      stream_ << op->IntAt(i) << (op->dtype.bits() == 64 ? "LL" : "");
    }
  }
  stream_ << "};\n";
  PrintStmt(op->body);
}

void CodeGenC::VisitStmt_(const DeclBufferNode* op) { PrintStmt(op->body); }

// Blocks are removed by lowering (LowerOpaqueBlock) before code generation.
void CodeGenC::VisitStmt_(const BlockNode* op) { Unsupported("block " + op->name_hint, op->span); }
void CodeGenC::VisitStmt_(const BlockRealizeNode* op) {
  Unsupported("block " + op->block->name_hint + " (lower it first)", op->span);
}
void CodeGenC::VisitStmt_(const BufferRealizeNode* op) {
  Unsupported("T.realize of buffer " + op->buffer->name +
                  " (no tessera pass lowers BufferRealize: allocate it with T.alloc_buffer)",
              op->span);
}

std::string CodeGenC::LoopEnd(const ForNode* op) {
  auto min = AsConstInt(op->min), extent = AsConstInt(op->extent);
  if (min && *min == 0) return PrintExpr(op->extent);
  if (min && extent) return PrintExpr(MakeConst(op->loop_var->dtype, *min + *extent));
  return PrintExpr(AddNode::Make(op->min, op->extent));
}

void CodeGenC::VisitStmt_(const ForNode* op) {
  if (op->for_kind == ForKind::kThreadBinding) {
    Unsupported("thread-bound loop over " + op->loop_var->name, op->span);
  }
  std::string begin = PrintExpr(op->min);
  std::string end = LoopEnd(op);
  std::string type = TypeName(op->loop_var->dtype, op->span);
  std::string name = AllocVarName(op->loop_var.get());
  PrintIndent();
  stream_ << "for (" << type << " " << name << " = " << begin << "; " << name << " < " << end
          << "; " << LoopStep(name) << ") {\n";
  int scope = BeginScope();
  PrintLoopPrologue(op, name);
  PrintStmt(op->body);
  EndScope(scope);
  PrintIndent();
  stream_ << "}\n";
}

std::string CodeGenC::WhileCondition(const Expr& cond) { return StripOuterParens(PrintExpr(cond)); }

void CodeGenC::VisitStmt_(const WhileNode* op) {
  std::string cond = WhileCondition(op->condition);
  PrintIndent();
  stream_ << "while (" << cond << ") {\n";
  int scope = BeginScope();
  PrintStmt(op->body);
  EndScope(scope);
  PrintIndent();
  stream_ << "}\n";
}

void CodeGenC::VisitStmt_(const IfThenElseNode* op) {
  std::string cond = StripOuterParens(PrintExpr(op->condition));
  PrintIndent();
  stream_ << "if (" << cond << ") {\n";
  int scope = BeginScope();
  PrintStmt(op->then_case);
  EndScope(scope);
  if (op->else_case) {
    PrintIndent();
    stream_ << "} else {\n";
    scope = BeginScope();
    PrintStmt(op->else_case);
    EndScope(scope);
  }
  PrintIndent();
  stream_ << "}\n";
}

void CodeGenC::VisitStmt_(const SeqStmtNode* op) {
  for (const Stmt& s : op->seq) PrintStmt(s);
}

void CodeGenC::VisitStmt_(const EvaluateNode* op) {
  if (IsInstance<IntImmNode>(op->value.get())) return;
  if (auto* call = AsPtr<CallNode>(op->value)) {
    if (call->is_op("tir.ret")) {
      PrintReturn(call);
      return;
    }
  }
  std::string value = PrintExpr(op->value);
  PrintIndent();
  stream_ << value << ";\n";
}

void CodeGenC::PrintReturn(const CallNode* ret) {
  if (current_func_ == nullptr || current_func_->ret_type.is_void()) {
    PrintIndent();
    stream_ << "return;\n";
    return;
  }
  std::string value = PrintExpr(ret->args[0]);
  PrintIndent();
  stream_ << "return " << value << ";\n";
}

}  // namespace codegen
}  // namespace tessera
