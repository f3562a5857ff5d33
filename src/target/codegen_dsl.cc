// CodeGenDSL: OpenCL-C-style printing of vector DSL modules, and the host launcher.
#include "tessera/target/codegen_dsl.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <sstream>
#include <unordered_set>

#include "tessera/runtime_abi.h"
#include "tessera/support/error.h"
#include "tessera/support/escape.h"
#include "tessera/transform/analysis.h"

namespace tessera {
namespace codegen {
namespace {

// Names that tessera/dsl.h defines; a kernel variable must not shadow them.
constexpr const char kPreludeNames[] =
    "uchar ushort uint ulong half bfloat16 char32 uchar32 short16 ushort16 int8 uint8 half16 "
    "float8 bfloat16x16 bool8 bool16 bool32 min max barrier get_local_id get_local_size "
    "CLK_LOCAL_MEM_FENCE CLK_GLOBAL_MEM_FENCE ALL_TRUE_b ALL_TRUE_h ALL_TRUE_w INFINITY NAN fmodf "
    "floorf printf DMA1D NULL "
    // C keywords: a function cannot take these names either.
    "auto break case char const continue default do double else enum extern float for goto if "
    "inline int long register restrict return short signed sizeof static struct switch typedef "
    "union unsigned void volatile while bool true false main";

const char* VectorIntrinsic(NodeKind kind) {
  switch (kind) {
    case NodeKind::kAdd:
      return "__vadd";
    case NodeKind::kSub:
      return "__vsub";
    case NodeKind::kMul:
      return "__vmul";
    case NodeKind::kDiv:
      return "__vdiv";
    case NodeKind::kMod:
      return "__vmod";
    case NodeKind::kMin:
      return "__vmin";
    case NodeKind::kMax:
      return "__vmax";
    case NodeKind::kEQ:
      return "__vceq";
    case NodeKind::kNE:
      return "__vcneq";
    case NodeKind::kLT:
      return "__vclt";
    case NodeKind::kLE:
      return "__vcle";
    case NodeKind::kGT:
      return "__vcgt";
    case NodeKind::kGE:
      return "__vcge";
    case NodeKind::kAnd:
      return "__vand";
    case NodeKind::kOr:
      return "__vor";
    default:
      return nullptr;
  }
}

// The OpenCL name of a scalar element type, or null.
const char* ScalarName(DataType t) {
  switch (t.code()) {
    case DataType::kInt:
    case DataType::kUInt: {
      bool u = t.is_uint();
      switch (t.bits()) {
        case 8:
          return u ? "uchar" : "char";
        case 16:
          return u ? "ushort" : "short";
        case 32:
          return u ? "uint" : "int";
        case 64:
          return u ? "ulong" : "long";
      }
      return nullptr;
    }
    case DataType::kFloat:
      if (t.bits() == 16) return "half";
      if (t.bits() == 32) return "float";
      return t.bits() == 64 ? "double" : nullptr;
    case DataType::kBFloat:
      return "bfloat16";
    case DataType::kBool:
      return "bool";
    default:
      return nullptr;
  }
}

// The C name of a scalar type for the conversion helpers (`__tessera_conv_<to>_<from>`).
std::string ConvName(DataType t) {
  const char* name = ScalarName(t.element_of());
  return name ? name : t.ToString();
}

// Whether a scalar conversion needs the DSL's helper rather than a C cast: float to integer
// saturates, and bfloat16 has no C arithmetic type.
bool NeedsConvHelper(DataType to, DataType from) {
  if (to.is_bfloat16() || from.is_bfloat16()) return true;
  return from.is_float() && to.is_integer();
}

// Round-to-nearest-even bits of a float as bfloat16 (the value of a constant table entry).
uint16_t BFloat16Bits(double value) {
  float f = static_cast<float>(value);
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  if (std::isnan(f)) return static_cast<uint16_t>((u >> 16) | 0x0040u);
  return static_cast<uint16_t>((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

bool IsIntegerOfBits(DataType t, int max_bits) { return t.is_integer() && t.bits() <= max_bits; }

// Collects the module functions a body calls, in the order the calls appear in the text.
class CalleeCollector : public StmtExprVisitor {
 public:
  std::vector<const CallNode*> calls;
  void VisitExpr_(const CallNode* op) override {
    if (IsInstance<GlobalVarNode>(op->op.get())) calls.push_back(op);
    StmtExprVisitor::VisitExpr_(op);
  }
};

const std::unordered_set<std::string>& PreludeNames() {
  static const auto* names = [] {
    auto* set = new std::unordered_set<std::string>();
    std::istringstream words(kPreludeNames);
    for (std::string w; words >> w;) set->insert(w);
    return set;
  }();
  return *names;
}

}  // namespace

CodeGenDSL::CodeGenDSL(bool opencl_spelling) : CodeGenC("DSL"), opencl_spelling_(opencl_spelling) {
  wrap_narrow_integers_ = false;  // the DSL's own rule, in PrintScalarBinary
  for (const std::string& name : PreludeNames()) ReserveGlobalName(name);
}

std::string CodeGenDSL::SymbolOf(const GlobalVar& gv, const PrimFunc& func) {
  return func->GetStrAttr("global_symbol", gv->name_hint);
}

// ---------------------------------------------------------------------------------------------
// Module layout
// ---------------------------------------------------------------------------------------------

std::vector<std::pair<GlobalVar, PrimFunc>> CodeGenDSL::CollectFunctions(const IRModule& mod,
                                                                         const std::string& entry) {
  GlobalVar entry_gv;
  if (!entry.empty()) {
    entry_gv = mod->GetGlobalVar(entry);
    for (const auto& [gv, f] : mod->functions) {
      if (!entry_gv && SymbolOf(gv, f) == entry) entry_gv = gv;
    }
  } else {
    for (const auto& [gv, f] : mod->functions) {
      if (f->GetIntAttr("tessera.is_entry", 0) == 1) entry_gv = gv;
    }
    if (!entry_gv && mod->functions.size() == 1) entry_gv = mod->functions[0].first;
  }
  if (!entry_gv) {
    std::string names;
    for (const auto& [gv, f] : mod->functions) names += (names.empty() ? "" : ", ") + gv->name_hint;
    TESSERA_THROW_KIND(Span(), ErrorKind::kBuild) << "cannot find the entry function '" << entry
                                                  << "' in the module (it has: " << names << ")";
  }

  std::vector<std::pair<GlobalVar, PrimFunc>> order;
  std::unordered_set<std::string> done;
  std::vector<std::string> stack;
  std::function<void(const GlobalVar&, const Span&)> visit = [&](const GlobalVar& gv,
                                                                 const Span& call_span) {
    const std::string& name = gv->name_hint;
    for (size_t i = 0; i < stack.size(); ++i) {
      if (stack[i] != name) continue;
      std::string cycle;
      for (size_t j = i; j < stack.size(); ++j) cycle += stack[j] + " -> ";
      TESSERA_THROW_KIND(call_span, ErrorKind::kBuild)
          << "recursive calls are not supported on the DSL target: " << cycle << name;
    }
    if (done.count(name)) return;
    PrimFunc func = mod->Lookup(name);
    if (!func) {
      TESSERA_THROW_KIND(call_span, ErrorKind::kBuild)
          << "call of '" << name << "', which is not a function of the module";
    }
    done.insert(name);
    order.emplace_back(mod->GetGlobalVar(name), func);
    stack.push_back(name);
    CalleeCollector collector;
    collector.VisitStmt(func->body);
    for (const CallNode* call : collector.calls) {
      visit(std::static_pointer_cast<GlobalVarNode>(call->op), call->span);
    }
    stack.pop_back();
  };
  visit(entry_gv, Span());
  return order;
}

std::string CodeGenDSL::Generate(const IRModule& mod, const std::string& entry) {
  auto funcs = CollectFunctions(mod, entry);
  entry_ = funcs[0].second;
  if (!entry_->ret_type.is_void()) {
    TESSERA_THROW_KIND(entry_->span, ErrorKind::kBuild)
        << "the entry function '" << SymbolOf(funcs[0].first, entry_)
        << "' is a kernel and cannot return a value";
  }
  for (const auto& [gv, f] : mod->functions) symbols_[gv->name_hint] = SymbolOf(gv, f);
  for (const auto& [gv, f] : funcs) {
    std::string symbol = SymbolOf(gv, f);
    if (PreludeNames().count(symbol) || CodeGenC::SanitizeName(symbol) != symbol) {
      TESSERA_THROW_KIND(f->span, ErrorKind::kBuild)
          << "function name '" << symbol
          << "' cannot be used on the DSL target (it is not a C identifier or tessera/dsl.h "
             "defines it); rename the function";
    }
    ReserveGlobalName(symbol);
  }

  stream_.str("");
  // Under the name Compass prints (tessera/include/compass/dsl.h includes tessera/dsl.h).
  Emit("#include <compass/dsl.h>\n\n");
  for (const auto& [gv, f] : funcs) Emit(PrintPrototype(SymbolOf(gv, f), f) + "\n");
  EmitConstantTables(funcs);
  for (const auto& [gv, f] : funcs) {
    Emit("\n");
    AddFunction(SymbolOf(gv, f), f);
  }
  return Finish();
}

namespace {

// The DLPack type-code constant of an array element type, or "" for void pointers.
const char* DLCodeName(DataType t) {
  if (t.is_bool()) return "TESSERA_DL_BOOL";
  if (t.is_bfloat16()) return "TESSERA_DL_BFLOAT";
  if (t.is_float()) return "TESSERA_DL_FLOAT";
  if (t.is_uint()) return "TESSERA_DL_UINT";
  if (t.is_int()) return "TESSERA_DL_INT";
  return "";
}

// A C string literal of printf format `fmt` (already escaped for printf).
std::string Literal(const std::string& fmt) { return Quote(fmt, QuoteStyle::kC); }

}  // namespace

std::string CodeGenDSL::GenerateLauncher(const IRModule& mod, const std::string& entry) {
  auto funcs = CollectFunctions(mod, entry);
  const PrimFunc& func = funcs[0].second;
  std::string symbol = SymbolOf(funcs[0].first, func);
  size_t n = func->params.size();
  std::vector<int64_t> extents = transform::PointerAccessExtents(mod, funcs[0].first->name_hint);
  std::vector<bool> writes = transform::PointerWrites(mod, funcs[0].first->name_hint);
  extents.resize(n, -1);
  writes.resize(n, true);
  // Parameters that the kernel tests with S.is_nullptr may be null whatever it accesses
  // through them (the accesses are guarded by the test).
  std::unordered_set<const VarNode*> tested;
  PostOrderVisit(func->body, [&](const ObjectRef& node) {
    const auto* call = AsPtr<CallNode>(node);
    if (call && call->op_name() == "dsl.is_nullptr" && !call->args.empty()) {
      if (const auto* v = AsPtr<VarNode>(call->args[0])) tested.insert(v);
    }
  });
  // S.ptr("void") parameters (int8 pointers in the IR) take arrays of any dtype.
  std::unordered_set<std::string> untyped;
  std::string void_names = func->GetStrAttr("dsl.void_pointers", "");
  for (size_t b = 0, e; b < void_names.size(); b = e + 1) {
    e = void_names.find(',', b);
    if (e == std::string::npos) e = void_names.size();
    untyped.insert(void_names.substr(b, e - b));
  }

  std::ostringstream os;
  os << "\n/* Packed entry point (tessera/runtime_abi.h): checks every argument, then runs " << symbol
     << " on every TEC. */\n"
     << "#include \"tessera/dsl/packed.h\"\n\n"
     << "typedef struct {\n";
  for (size_t i = 0; i < n; ++i) {
    const VarNode* p = func->params[i].get();
    std::string type = p->pointer ? PointerTypeName(*p->pointer, p->span)
                       : p->dtype.lanes() == 1 ? TypeName(p->dtype, p->span)
                                               : std::string("int64_t");
    os << "  " << type << " a" << i << ";\n";
  }
  if (n == 0) os << "  char unused;\n";
  os << "} __tessera_args_t;\n\n"
     << "static void __tessera_tec_main(void* data) {\n"
     << "  __tessera_args_t* v = (__tessera_args_t*)data;\n"
     << (n == 0 ? "  (void)v;\n" : "") << "  " << symbol << "(";
  for (size_t i = 0; i < n; ++i) os << (i ? ", " : "") << "v->a" << i;
  os << ");\n}\n\n";

  std::string names;
  for (size_t i = 0; i < n; ++i) names += (i ? ", " : "") + func->params[i]->name;
  os << "__attribute__((visibility(\"default\")))\n"
     << "int32_t " << TESSERA_PACKED_PREFIX << symbol
     << "(TesseraValue* args, int32_t* codes, int32_t num_args, TesseraValue* ret,\n"
     << "    int32_t* ret_code) {\n"
     << "  __tessera_args_t v;\n"
     << "  char dtype[32];\n"
     << "  (void)args; (void)codes; (void)ret; (void)dtype;\n"
     << "  if (num_args != " << n << ") {\n"
     << "    return __tessera_fail(TESSERA_RC_TYPE_ERROR, "
     << Literal(EscapeFormat(symbol + "() takes " + std::to_string(n) + " arguments (" + names +
                             ")") +
                " but %d were given")
     << ", (int)num_args);\n  }\n";
  for (size_t i = 0; i < n; ++i) {
    const VarNode* p = func->params[i].get();
    std::string label = EscapeFormat("argument '" + p->name + "' of " + symbol + "()");
    std::string a = "args[" + std::to_string(i) + "]", c = "codes[" + std::to_string(i) + "]";
    std::string dst = "v.a" + std::to_string(i);
    auto fail = [&](const char* rc, const std::string& fmt, const std::string& values = "") {
      return std::string("return __tessera_fail(") + rc + ", " + Literal(label + fmt) + values +
             ");";
    };
    os << "  /* " << p->name << " */\n";
    if (p->pointer) {
      DataType elem = p->pointer->element.element_of();
      int64_t extent = extents[i];  // in scalars (a pointer to vectors: their lanes)
      os << "  if (" << c << " == TESSERA_ARG_NULL || ((" << c << " == TESSERA_ARG_INT || " << c
         << " == TESSERA_ARG_UINT) && " << a << ".v_int64 == 0)) {\n";
      if (extent > 0 && !tested.count(p)) {
        os << "    " << fail("TESSERA_RC_TYPE_ERROR",
                             " must be a numpy array, got %s: the kernel accesses " +
                                 std::to_string(extent) + " elements through it",
                             ", " + c + " == TESSERA_ARG_NULL ? \"None\" : \"0\"")
           << "\n";
      }
      os << "    " << dst << " = NULL;\n"
         << "  } else if (" << c << " != TESSERA_ARG_DLTENSOR && " << c
         << " != TESSERA_ARG_DLTENSOR_READONLY) {\n"
         << "    " << fail("TESSERA_RC_TYPE_ERROR", " must be a numpy array, got %s",
                           ", __tessera_arg_kind(" + c + ")")
         << "\n  } else {\n"
         << "    const TesseraDLTensor* t = (const TesseraDLTensor*)" << a << ".v_handle;\n"
         << "    int compact;\n"
         << "    int64_t size;\n";
      if (writes[i]) {
        os << "    if (" << c << " == TESSERA_ARG_DLTENSOR_READONLY) {\n      "
           << fail("TESSERA_RC_TYPE_ERROR",
                   " is a read-only array, but the kernel writes through it; pass a writable "
                   "one (e.g. a copy)")
           << "\n    }\n";
      }
      if (*DLCodeName(elem) && !untyped.count(p->name)) {
        os << "    if (t->dtype.code != " << DLCodeName(elem) << " || t->dtype.bits != "
           << (elem.is_bool() ? 8 : elem.bits()) << " || t->dtype.lanes != 1) {\n      "
           << fail("TESSERA_RC_TYPE_ERROR", " must have dtype " + elem.ToString() + ", got %s",
                   ", __tessera_dtype_name(t->dtype, dtype, (int)sizeof dtype)")
           << "\n    }\n";
      }
      os << "    if (t->device.device_type != TESSERA_DEVICE_CPU) {\n      "
         << fail("TESSERA_RC_VALUE_ERROR", " must be a host (CPU) array") << "\n    }\n"
         << "    size = __tessera_dlt_size(t, &compact);\n"
         << "    if (!compact) {\n      "
         << fail("TESSERA_RC_VALUE_ERROR", " must be a C-contiguous array") << "\n    }\n";
      if (extent > 0 && untyped.count(p->name)) {  // an extent in bytes
        os << "    if (size * ((t->dtype.bits * t->dtype.lanes + 7) / 8) < " << extent << ") {\n      "
           << fail("TESSERA_RC_VALUE_ERROR",
                   " has %lld bytes but the kernel accesses " + std::to_string(extent) + " bytes",
                   ", (long long)(size * ((t->dtype.bits * t->dtype.lanes + 7) / 8))")
           << "\n    }\n";
      } else if (extent > 0) {
        os << "    if (size < " << extent << ") {\n      "
           << fail("TESSERA_RC_VALUE_ERROR",
                   " has %lld elements but the kernel accesses " + std::to_string(extent),
                   ", (long long)size")
           << "\n    }\n";
      } else {
        os << "    (void)size;\n";
      }
      os << "    " << dst << " = (" << PointerTypeName(*p->pointer, p->span)
         << ")((char*)t->data + t->byte_offset);\n  }\n";
      continue;
    }
    DataType t = p->dtype;
    std::string is_int = "(" + c + " == TESSERA_ARG_INT || " + c + " == TESSERA_ARG_UINT || " + c +
                         " == TESSERA_ARG_BOOL)";
    if (t.lanes() != 1 || t.is_handle()) {
      os << "  " << fail("TESSERA_RC_TYPE_ERROR",
                         " has type " + t.ToString() + ", which a call from Python cannot pass")
         << "\n";
    } else if (t.is_float() || t.is_bfloat16()) {
      std::string d = "(" + c + " == TESSERA_ARG_FLOAT ? " + a + ".v_float64 : (double)" + a +
                      ".v_int64)";
      os << "  if (" << c << " != TESSERA_ARG_FLOAT && !" << is_int << ") {\n    "
         << fail("TESSERA_RC_TYPE_ERROR", " must be a number (" + t.ToString() + "), got %s",
                 ", __tessera_arg_kind(" + c + ")")
         << "\n  }\n  " << dst << " = ";
      if (t.is_bfloat16()) {
        os << "__bfloat16_from_float((float)" << d << ");\n";
      } else if (t.bits() == 16) {
        os << "(half)(float)" << d << ";\n";  // as numpy rounds: through float32
      } else {
        os << "(" << TypeName(t, p->span) << ")" << d << ";\n";
      }
    } else {
      os << "  if (!" << is_int << ") {\n    "
         << fail("TESSERA_RC_TYPE_ERROR", " must be an integer (" + t.ToString() + "), got %s",
                 ", __tessera_arg_kind(" + c + ")")
         << "\n  }\n  " << dst << " = ";
      if (t.is_bool()) {
        os << a << ".v_int64 != 0;\n";
      } else {
        os << "(" << TypeName(t, p->span) << ")" << a << ".v_int64;\n";
      }
    }
  }
  os << "  if (__tessera_run_tecs(__tessera_tec_main, &v, __tessera_last_error,\n"
     << "                        (int)sizeof __tessera_last_error) != 0) {\n"
     << "    return 1;\n  }\n"
     << "  if (ret_code != NULL) *ret_code = TESSERA_ARG_NULL;\n"
     << "  return 0;\n}\n"
     << "\n/* Profiling records of S.perf_tick_begin/end (Executor.profile). */\n"
     << "__attribute__((visibility(\"default\")))\n"
     << "int32_t __tessera_perf_read(int64_t* out, int32_t cap, int64_t* dropped) {\n"
     << "  return __tessera_perf_collect(out, cap, dropped);\n"
     << "}\n"
     << "__attribute__((visibility(\"default\")))\n"
     << "void __tessera_perf_clear(void) { __tessera_perf_reset(); }\n";
  return os.str();
}

// ---------------------------------------------------------------------------------------------
// Types, scopes, signatures
// ---------------------------------------------------------------------------------------------

std::string CodeGenDSL::TypeName(DataType t, const Span& span) {
  if (t.is_void()) return "void";
  if (t.is_handle()) return "void*";
  const char* scalar = ScalarName(t.element_of());
  if (scalar == nullptr) Unsupported("type " + t.ToString(), span);
  if (t.is_scalar()) return scalar;
  if (t.is_bool()) {
    if (t.lanes() == 8 || t.lanes() == 16 || t.lanes() == 32)
      return "bool" + std::to_string(t.lanes());
  } else if (t.bits() * t.lanes() == 256 && t.bits() <= 32) {
    return std::string(scalar) + (t.is_bfloat16() ? "x" : "") + std::to_string(t.lanes());
  }
  Unsupported("vector type " + t.ToString() +
                  " (only native 256-bit vectors and their masks reach code generation)",
              span);
}

std::string CodeGenDSL::ScopeQualifier(const std::string& scope) {
  if (scope == "global" || scope.rfind("global.", 0) == 0) return "__global";
  if (scope == "constant") return "__constant";
  if (scope == "shared" || scope == "shared.dyn") return "__local";
  if (scope == "lsram") return "__lsram";
  if (scope.empty() || scope == "private" || scope == "local") return "";
  Unsupported("memory scope \"" + scope + "\"", Span());
}

// A pointer parameter of a function whose buffers do not alias (te's functions, tir.noalias)
// is restrict, as Compass prints it: `__global uchar* restrict A`.
std::string CodeGenDSL::PrintParam(const Var& param) {
  if (param->pointer && current_func_ && current_func_->GetIntAttr("tir.noalias", 0) != 0) {
    return VarTypeName(param.get()) + " restrict " + GetVarName(param.get());
  }
  return CodeGenC::PrintParam(param);
}

std::string CodeGenDSL::AllocationPrefix(const std::string& scope) {
  std::string qual = ScopeQualifier(scope);
  // One shared block per core: on the host a static array, which every TEC thread sees.
  if (qual == "__local") return "static __local ";
  return qual.empty() ? "" : qual + " ";
}

std::string CodeGenDSL::FunctionPrefix(const PrimFunc& func, bool prototype) {
  if (func == entry_) return "__kernel ";
  auto it = func->attrs.find("tessera.inline");
  if (it == func->attrs.end()) return "";
  auto* flag = AsPtr<IntImmNode>(it->second);
  if (flag && flag->value == 0) return "__attribute__((noinline)) ";
  // `inline` only on the definition: with a plain prototype in the same file, C99 makes the
  // definition external, so a call the compiler does not inline still links.
  return prototype ? "" : "inline ";
}

void CodeGenDSL::PrintFunctionEpilogue(const PrimFunc& func) {
  if (func != entry_) return;
  PrintIndent();
  Emit("barrier(CLK_LOCAL_MEM_FENCE);\n");
}

std::string CodeGenDSL::CalleeName(const GlobalVarNode* callee) {
  auto it = symbols_.find(callee->name_hint);
  return it == symbols_.end() ? callee->name_hint : it->second;
}

// ---------------------------------------------------------------------------------------------
// Expressions
// ---------------------------------------------------------------------------------------------

std::string CodeGenDSL::AllTrue(int lanes, const Span& span) const {
  switch (lanes) {
    case 8:
      return "ALL_TRUE_w";
    case 16:
      return "ALL_TRUE_h";
    case 32:
      return "ALL_TRUE_b";
  }
  Unsupported("a mask of " + std::to_string(lanes) + " lanes", span);
}

std::string CodeGenDSL::MaskArg(const Expr& predicate, int lanes, const Span& span) {
  return predicate ? PrintExpr(predicate) : AllTrue(lanes, span);
}

std::string CodeGenDSL::PrintIntImm(const IntImmNode* op) {
  // 8- and 16-bit and unsigned 32-bit constants as Compass prints them: "(char)50", "(uint)2"
  // (a cast binds tighter than any operator, so no outer parentheses).
  bool uint32 = op->dtype.is_uint() && op->dtype.bits() == 32 && !op->dtype.is_vector();
  if ((IsIntegerOfBits(op->dtype, 16) || uint32) && !op->dtype.is_bool()) {
    return "(" + TypeName(op->dtype, op->span) + ")" + std::to_string(op->value);
  }
  return CodeGenC::PrintIntImm(op);
}

std::string CodeGenDSL::PrintFloatImm(const FloatImmNode* op) {
  DataType t = op->dtype;
  if (t.is_bfloat16()) {
    auto as_float = FloatImmNode::Make(DataType::Float(32), op->value, op->span);
    return "__bfloat16_from_float(" + PrintFloatImm(as_float.get()) + ")";
  }
  double v = op->value;
  if (!t.is_float() || (t.bits() != 16 && t.bits() != 32) || !std::isfinite(v)) {
    return CodeGenC::PrintFloatImm(op);
  }
  // The value exactly, in hexadecimal, then in decimal as a comment for the reader (the form
  // of Compass's C): 50.0f16 is "(half)0x1.9p+5f/*5.000000e+01*/".
  char hex[64], dec[64];
  std::snprintf(hex, sizeof(hex), "%af", static_cast<double>(static_cast<float>(v)));
  std::snprintf(dec, sizeof(dec), "%e", v);
  std::string text = std::string(hex) + "/*" + dec + "*/";
  return t.bits() == 16 ? "(" + TypeName(t, op->span) + ")" + text : text;
}

std::string CodeGenDSL::VisitExpr_(const CastNode* op) {
  DataType to = op->dtype, from = op->value->dtype;
  if (to == from) return PrintExpr(op->value);
  if (to.is_vector()) {
    // Lanes are equal and both types native, so only same-width conversions reach here;
    // the others became dsl.vcvt calls in dsl.AlignVectorWidth.
    if (to.is_bool() || from.is_bool()) {
      Unsupported("cast from " + from.ToString() + " to " + to.ToString(), op->span);
    }
    TypeName(from, op->span);
    return "__vcvt_" + TypeName(to, op->span) + "(" + PrintExpr(op->value) + ", 0, 1)";
  }
  if (NeedsConvHelper(to, from) && !to.is_bool() && !from.is_bool()) {
    return "__tessera_conv_" + ConvName(to) + "_" + ConvName(from) + "(" + PrintExpr(op->value) +
           ")";
  }
  return CodeGenC::VisitExpr_(op);
}

std::string CodeGenDSL::PrintScalarBinary(const BinaryNode* op) {
  static const std::unordered_map<int, const char*> kSymbols = {
      {static_cast<int>(NodeKind::kAdd), "+"}, {static_cast<int>(NodeKind::kSub), "-"},
      {static_cast<int>(NodeKind::kMul), "*"}, {static_cast<int>(NodeKind::kDiv), "/"},
      {static_cast<int>(NodeKind::kEQ), "=="}, {static_cast<int>(NodeKind::kNE), "!="},
      {static_cast<int>(NodeKind::kLT), "<"},  {static_cast<int>(NodeKind::kLE), "<="},
      {static_cast<int>(NodeKind::kGT), ">"},  {static_cast<int>(NodeKind::kGE), ">="}};
  DataType t = op->a->dtype;
  auto sym = kSymbols.find(static_cast<int>(op->kind));
  if (t.is_handle()) {
    if (!op->is_comparison()) Unsupported("pointer arithmetic in an expression", op->span);
    return "((void*)" + PrintExpr(op->a) + " " + sym->second + " (void*)" + PrintExpr(op->b) + ")";
  }
  if (t.is_bfloat16()) {
    // No C arithmetic type: compute in float, round once.
    std::string a = "__bfloat16_to_float(" + PrintExpr(op->a) + ")";
    std::string b = "__bfloat16_to_float(" + PrintExpr(op->b) + ")";
    if (op->is_comparison()) return "(" + a + " " + sym->second + " " + b + ")";
    std::string value;
    switch (op->kind) {
      case NodeKind::kMod:
        value = "fmodf(" + a + ", " + b + ")";
        break;
      case NodeKind::kMin:
        value = "min(" + a + ", " + b + ")";
        break;
      case NodeKind::kMax:
        value = "max(" + a + ", " + b + ")";
        break;
      default:
        if (sym == kSymbols.end()) {
          Unsupported(std::string("scalar bfloat16 ") + NodeKindName(op->kind), op->span);
        }
        value = "(" + a + " " + sym->second + " " + b + ")";
    }
    return "__bfloat16_from_float(" + value + ")";
  }
  std::string text;
  if ((op->kind == NodeKind::kDiv || op->kind == NodeKind::kMod) && t.is_integer() && !t.is_bool()) {
    // A divisor known only at run time goes through the header's checked division: the host's
    // divide instruction traps on zero (and on INT_MIN / -1), which would end the process.
    // A nonzero constant (other than a wide signed -1) and get_local_size (4) are safe.
    auto divisor = AsConstInt(op->b);
    const auto* call = AsPtr<CallNode>(op->b);
    bool safe = (divisor && *divisor != 0 && (*divisor != -1 || t.bits() < 32 || t.is_uint())) ||
                (call != nullptr && call->op_name() == "dsl.get_local_size");
    if (!safe) {
      text = std::string(op->kind == NodeKind::kDiv ? "__tessera_div(" : "__tessera_mod(") +
             PrintExpr(op->a) + ", " + PrintExpr(op->b) + ")";
    }
  }
  if (text.empty()) text = CodeGenC::PrintScalarBinary(op);
  // C computes char and short arithmetic in int; the DSL wraps to the operand width.
  // min and max of two values of the type stay in it.
  bool min_max = op->kind == NodeKind::kMin || op->kind == NodeKind::kMax;
  // A cast binds tighter than every binary operator: no parentheses around it, as Compass
  // prints it ("(uchar)(A[i0] + B[i0])").
  if (IsIntegerOfBits(t, 16) && !op->is_comparison() && !min_max) {
    return "(" + TypeName(t, op->span) + ")" + text;
  }
  // Float arithmetic is rounded to its type at once (a C cast drops any excess precision), as
  // Compass prints it: "(half)(b[0] * c)".
  bool arith = op->kind == NodeKind::kAdd || op->kind == NodeKind::kSub ||
               op->kind == NodeKind::kMul || op->kind == NodeKind::kDiv;
  if (t.is_float() && (t.bits() == 16 || t.bits() == 32) && arith) {
    return "(" + TypeName(t, op->span) + ")" + text;
  }
  return text;
}

std::string CodeGenDSL::PrintVectorBinary(const BinaryNode* op) { return PrintVectorBinary(op, ""); }

std::string CodeGenDSL::PrintVectorBinary(const BinaryNode* op, const std::string& mask) {
  const char* name = VectorIntrinsic(op->kind);
  DataType t = op->a->dtype;
  if (name == nullptr || (t.is_bool() && op->kind != NodeKind::kAnd && op->kind != NodeKind::kOr)) {
    Unsupported(std::string("vector ") + NodeKindName(op->kind) + " on " + t.ToString(), op->span);
  }
  // Unmasked +, - and * of integer and float vectors print as C operators, as Compass prints
  // them (the vector types wrap like the header's __vadd/__vsub/__vmul under -fwrapv). So do
  // bfloat16 ones in the shown text; the compiled text keeps the header's call, as C has no
  // operators for the bfloat16x16 struct (see the free function CodeGenDSL).
  if ((op->kind == NodeKind::kAdd || op->kind == NodeKind::kSub || op->kind == NodeKind::kMul) &&
      !t.is_bool() && (!t.is_bfloat16() || opencl_spelling_)) {
    const char* sym = op->kind == NodeKind::kAdd ? " + " : op->kind == NodeKind::kSub ? " - " : " * ";
    TypeName(t, op->span);  // rejects non-native widths
    return "(" + PrintExpr(op->a) + sym + PrintExpr(op->b) + ")";
  }
  return std::string(name) + "(" + PrintExpr(op->a) + ", " + PrintExpr(op->b) + ", " +
         (mask.empty() ? AllTrue(t.lanes(), op->span) : mask) + ")";
}

std::string CodeGenDSL::PrintVectorNot(const NotNode* op) {
  return "__vinv(" + PrintExpr(op->a) + ", " + AllTrue(op->dtype.lanes(), op->span) + ")";
}

std::string CodeGenDSL::PrintVectorSelect(const SelectNode* op) {
  // __vsel(x, y, mask): active lanes from x, the others from y.
  return "__vsel(" + PrintExpr(op->true_value) + ", " + PrintExpr(op->false_value) + ", " +
         PrintExpr(op->condition) + ")";
}

std::string CodeGenDSL::VisitExpr_(const BroadcastNode* op) {
  DataType elem = op->value->dtype;
  if (elem.is_bool()) {
    std::string all = AllTrue(op->lanes, op->span);
    std::string none = "__vmov_" + all.substr(all.size() - 1) + "(0x00000000)";
    if (auto c = AsConstInt(op->value)) return *c ? all : none;
    return "(" + PrintExpr(op->value) + " ? " + all + " : " + none + ")";
  }
  std::string vtype = TypeName(op->dtype, op->span);  // rejects non-native widths
  std::string value = PrintExpr(op->value);
  // __vbcast picks the vector type from the scalar's C type, so the scalar must have exactly
  // the element type; C promotes char/short arithmetic to int, hence the cast.
  bool typed = elem == DataType::Int(32) || elem == DataType::Float(32) ||
               IsInstance<IntImmNode>(op->value.get()) ||
               IsInstance<FloatImmNode>(op->value.get()) || IsInstance<VarNode>(op->value.get()) ||
               IsInstance<BufferLoadNode>(op->value.get());
  std::string cast = "(" + TypeName(elem, op->span) + ")";
  // Narrow integer arithmetic already prints as `(short)(...)`.
  typed = typed || value.rfind(cast + "(", 0) == 0;
  if (!typed) value = cast + value;
  // bfloat16x16 is a struct, which C does not cast: `__vbcast(x)` in both spellings.
  if (elem.is_bfloat16()) return "__vbcast(" + value + ")";
  // Shown as Compass writes a broadcast, OpenCL C's `(float8)x`. GCC refuses that cast of a
  // scalar, so the compiled text wraps the value: `(float8)__vbcast(x)`, a cast to the type
  // __vbcast already gives. Removing `__vbcast(` and its `)` turns one into the other; `value`
  // is a primary, postfix or cast expression (operators print in parentheses), so `(float8)x`
  // casts all of it.
  if (opencl_spelling_ && call_depth_ == 0) return "(" + vtype + ")" + value;
  return "(" + vtype + ")__vbcast(" + value + ")";
}

// The condition keeps its own parentheses, as Compass prints it: `while ((i < 10)) {`.
std::string CodeGenDSL::WhileCondition(const Expr& cond) { return PrintExpr(cond); }

// A Ramp used as a value (a vectorized loop's variable): the base broadcast plus the lane
// numbers times the stride, `(__vbcast(b) + (int8){0, 1, ..., 7})` for a stride of 1.
std::string CodeGenDSL::VisitExpr_(const RampNode* op) {
  DataType elem = op->dtype.element_of();
  if (!elem.is_int() && !elem.is_uint()) {
    Unsupported("Ramp " + op->dtype.ToString() + " used as a value", op->span);
  }
  std::string type = TypeName(op->dtype, op->span);  // rejects non-native widths
  auto stride = AsConstInt(op->stride);
  std::string lanes = "(" + type + "){";
  for (int i = 0; i < op->lanes; ++i) {
    lanes += (i ? ", " : "") + std::to_string(stride ? *stride * i : i);
  }
  lanes += "}";
  Expr base = op->base->dtype == elem ? op->base : CastNode::Make(elem, op->base, op->span);
  std::string out = "(" + PrintExpr(BroadcastNode::Make(base, op->lanes, op->span)) + " + ";
  if (!stride) {
    Expr s = op->stride->dtype == elem ? op->stride : CastNode::Make(elem, op->stride, op->span);
    out += PrintExpr(BroadcastNode::Make(s, op->lanes, op->span)) + " * ";
  }
  return out + lanes + ")";
}

std::string CodeGenDSL::VisitExpr_(const ShuffleNode* op) {
  // A single lane read from one data vector: `v[i]`.
  if (op->vectors.size() == 1 && op->indices.size() == 1 && !op->vectors[0]->dtype.is_bool() &&
      !op->vectors[0]->dtype.is_bfloat16()) {
    return PrintExpr(op->vectors[0]) + "[" + PrintExpr(op->indices[0]) + "]";
  }
  return CodeGenC::VisitExpr_(op);
}

std::string CodeGenDSL::VisitExpr_(const CallNode* op) {
  struct DepthGuard {
    int& depth;
    explicit DepthGuard(int& d) : depth(d) { ++depth; }
    ~DepthGuard() { --depth; }
  } guard(call_depth_);
  const auto* callee = AsPtr<OpNode>(op->op);
  if (callee == nullptr) return CodeGenC::VisitExpr_(op);
  const std::string& name = callee->name;
  bool bitwise =
      name.rfind("tir.bitwise_", 0) == 0 || name == "tir.shift_left" || name == "tir.shift_right";
  if (bitwise && op->dtype.is_vector()) return PrintVectorBitwise(op);
  if (bitwise && IsIntegerOfBits(op->dtype, 16) &&
      (name == "tir.shift_left" || name == "tir.bitwise_not")) {
    // Promoted to int by C: wrap back to the operand width.
    return "((" + TypeName(op->dtype, op->span) + ")" + CodeGenC::VisitExpr_(op) + ")";
  }
  if (name == "tir.reinterpret" && op->args.size() == 1 && op->args[0]->dtype.is_handle()) {
    // A pointer as its 32-bit address (S.reinterpret(ptr, "uint32"); tessera/dsl/convert.h).
    return "((" + TypeName(op->dtype, op->span) + ")__tessera_ptr_to_u32(" +
           PrintExpr(op->args[0]) + "))";
  }
  if (name == "tir.reinterpret" && op->args.size() == 1 && op->dtype.is_handle()) {
    return "__tessera_u32_to_ptr((uint)(" + PrintExpr(op->args[0]) + "))";
  }
  if (name == "tir.reinterpret") {
    return "__vreinterpret(" + PrintExpr(op->args[0]) + ", " + TypeName(op->dtype, op->span) + ")";
  }
  if (name == "tir.floor") {
    std::string x = PrintExpr(op->args[0]);
    DataType t = op->dtype;
    if (t.is_vector()) return (TypeName(t, op->span), "__vfloor(" + x + ")");
    if (t.is_bfloat16()) return "__bfloat16_from_float(floorf(__bfloat16_to_float(" + x + ")))";
    if (t.bits() == 16) return "((half)floorf(" + x + "))";
    return "floorf(" + x + ")";
  }
  return CodeGenC::VisitExpr_(op);
}

std::string CodeGenDSL::PrintVectorBitwise(const CallNode* op, const std::string& mask_arg) {
  static const std::unordered_map<std::string, std::string> kNames = {
      {"tir.bitwise_and", "__vand"}, {"tir.bitwise_or", "__vor"}, {"tir.bitwise_xor", "__vxor"},
      {"tir.bitwise_not", "__vinv"}, {"tir.shift_left", "__vlsl"}, {"tir.shift_right", "__vasr"}};
  const std::string& name = kNames.at(op->op_name());
  std::string mask = mask_arg.empty() ? AllTrue(op->dtype.lanes(), op->span) : mask_arg;
  // A shift of every lane leaves its mask out, as Compass prints it: `__vasr(x, s)`.
  bool shift = op->op_name() == "tir.shift_left" || op->op_name() == "tir.shift_right";
  if (shift && mask_arg.empty() && op->args.size() == 2) {
    return name + "(" + PrintExpr(op->args[0]) + ", " + PrintExpr(op->args[1]) + ")";
  }
  if (op->args.size() == 1) return name + "(" + PrintExpr(op->args[0]) + ", " + mask + ")";
  return name + "(" + PrintExpr(op->args[0]) + ", " + PrintExpr(op->args[1]) + ", " + mask + ")";
}

std::string CodeGenDSL::ConstMask(const std::vector<bool>& lanes, const Span& span) const {
  int n = static_cast<int>(lanes.size());
  std::string all = AllTrue(n, span);
  // Compass's form: the bit of each active lane's lowest byte (`__vmov_w(0x11110000)` for
  // lanes 4-7 of 8), the bit every reader of a mask tests (dsl.h's __TESSERA_LANE_ON).
  uint32_t bits = 0;
  int width = 32 / n;
  bool every = true;
  for (int i = 0; i < n; ++i) {
    if (lanes[i]) bits |= uint32_t(1) << (i * width);
    every = every && lanes[i];
  }
  if (every) return all;
  char text[32];
  std::snprintf(text, sizeof(text), "(0x%08X)", bits);
  return "__vmov_" + all.substr(all.size() - 1) + text;
}

std::string CodeGenDSL::PrintDslCall(const CallNode* op, const OpNode* callee) {
  const std::string& name = callee->name;
  auto arg = [&](size_t i) { return PrintExpr(op->args[i]); };
  auto args_from = [&](size_t first) {
    std::string s;
    for (size_t i = first; i < op->args.size(); ++i) s += (i > first ? ", " : "") + arg(i);
    return s;
  };
  DataType t = op->dtype;
  int lanes = t.lanes();
  std::string n = std::to_string(lanes);
  if (name == "dsl.get_local_id" || name == "dsl.get_local_size") {
    return callee->GetStrAttr("dsl.name") + "(0)";
  }
  if (name == "dsl.barrier") return "barrier(CLK_LOCAL_MEM_FENCE)";
  if (name == "dsl.undef_inactive" && op->args.size() == 2) {
    std::string folded = MaskedIntrinsic(op->args[0], op->args[1]);
    if (!folded.empty()) return folded;
  }
  if (name == "dsl.nullptr") return "NULL";
  if (name == "dsl.const_mask" || (name == "dsl.vmake" && t.is_bool())) {
    std::vector<bool> on;
    for (const Expr& e : op->args) {
      auto c = AsConstInt(e);
      if (!c) break;
      on.push_back(*c != 0);
    }
    TypeName(t, op->span);
    if (on.size() == op->args.size()) return ConstMask(on, op->span);
    return "__vmask_from_bools(" + n + ", (const bool[]){" + args_from(0) + "})";
  }
  if (name == "dsl.tail_mask")
    return (TypeName(t, op->span), "__vtail_mask(" + arg(0) + ", " + n + ")");
  if (name == "dsl.mask_repack") {
    TypeName(t, op->span);
    return "__vmask_repack(" + n + ", " + arg(1) + ", " + arg(0) + ", (const uint32_t[]){" +
           args_from(2) + "}, " + std::to_string(op->args.size() - 2) + ")";
  }
  if (name == "dsl.vmake") {
    std::string type = TypeName(t, op->span);
    if (!t.is_bfloat16()) return "((" + type + "){" + args_from(0) + "})";
    std::string s;
    for (size_t i = 0; i < op->args.size(); ++i) s += (i ? ", " : "") + ("(" + arg(i) + ").bits");
    return "((" + type + "){{" + s + "}})";
  }
  if (name == "dsl.get_lane" || name == "dsl.set_lane") {
    DataType v = op->args[0]->dtype;
    std::string lanes_of_v = std::to_string(v.lanes());
    bool get = name == "dsl.get_lane";
    if (v.is_bool()) {
      return get ? "__vmask_get(" + arg(0) + ", " + arg(1) + ", " + lanes_of_v + ")"
                 : "__vmask_set(" + arg(0) + ", " + arg(1) + ", " + lanes_of_v + ", " + arg(2) +
                       ")";
    }
    if (v.is_bfloat16()) {
      return get ? "__vget_lane_bf16(" + arg(0) + ", " + arg(1) + ")"
                 : "__vset_lane_bf16(" + args_from(0) + ")";
    }
    return get ? "__vget_lane(" + arg(0) + ", " + arg(1) + ")"
               : "__vset_lane(" + args_from(0) + ")";
  }
  if (name == "dsl.vall" || name == "dsl.vany") {
    return callee->GetStrAttr("dsl.name") + "(" + arg(0) + ", " +
           std::to_string(op->args[0]->dtype.lanes()) + ")";
  }
  if (name == "dsl.vcvt" || name == "dsl.vcvt_into" || name == "dsl.vnsr_into" ||
      name == "dsl.vmull_to" || name == "dsl.vmulh_to" || name.rfind("dsl.vcvtu", 0) == 0 ||
      name.rfind("dsl.vzip_", 0) == 0) {
    return callee->GetStrAttr("dsl.name") + "_" + TypeName(t, op->span) + "(" + args_from(0) + ")";
  }
  return "";
}

// A vector operation whose C form takes a mask (`__vlsl(x, y, ALL_TRUE_w)`) under a mask that
// leaves its other lanes undefined (dsl.undef_inactive): the mask goes into the call, as Compass
// prints it (`__vlsl(x, y, __vmov_w(0x...))`); the lanes it leaves undefined are the same.
// Empty when `x` prints without a mask (C operators, other calls).
std::string CodeGenDSL::MaskedIntrinsic(const Expr& x, const Expr& mask) {
  DataType t = x->dtype;
  if (!t.is_vector() || t.is_bool() || mask->dtype.lanes() != t.lanes()) return "";
  if (const auto* call = AsPtr<CallNode>(x)) {
    const auto* callee = AsPtr<OpNode>(call->op);
    if (callee == nullptr) return "";
    const std::string& name = callee->name;
    if (name.rfind("tir.bitwise_", 0) == 0 || name == "tir.shift_left" ||
        name == "tir.shift_right") {
      return PrintVectorBitwise(call, PrintExpr(mask));
    }
    return "";
  }
  const auto* bin = dynamic_cast<const BinaryNode*>(x.get());
  if (bin == nullptr || bin->is_comparison() || VectorIntrinsic(bin->kind) == nullptr) return "";
  if (bin->kind == NodeKind::kAdd || bin->kind == NodeKind::kSub || bin->kind == NodeKind::kMul ||
      t.is_bfloat16()) {
    return "";  // printed as C operators (bfloat16: through the header's float path)
  }
  return PrintVectorBinary(bin, PrintExpr(mask));
}

std::string CodeGenDSL::PrintCallOp(const CallNode* op, const OpNode* callee) {
  std::string special = PrintDslCall(op, callee);
  if (!special.empty()) return special;
  std::string name = callee->GetStrAttr("dsl.name");
  if (name.empty()) Unsupported("op " + callee->name, op->span);
  std::string s = name + "(";
  for (size_t i = 0; i < op->args.size(); ++i) {
    if (i) s += ", ";
    s += PrintExpr(op->args[i]);
  }
  return s + ")";
}

// ---------------------------------------------------------------------------------------------
// Statements: typed pointer bindings, constant tables
// ---------------------------------------------------------------------------------------------

void CodeGenDSL::VisitStmt_(const LetStmtNode* op) {
  if (!op->var->pointer) return CodeGenC::VisitStmt_(op);
  // A pointer bound to another pointer's address (as_ptr, a returned pointer): cast, since C
  // does not convert between pointers to different types implicitly.
  std::string value = PrintExpr(op->value);
  std::string type = VarTypeName(op->var.get());
  std::string name = AllocVarName(op->var.get());
  PrintIndent();
  Emit(type + " " + name + " = (" + type + ")" + value + ";\n");
  PrintStmt(op->body);
}

void CodeGenDSL::EmitConstantTables(const std::vector<std::pair<GlobalVar, PrimFunc>>& funcs) {
  constant_tables_.clear();
  std::vector<std::string> tables;
  for (const auto& [gv, f] : funcs) {
    std::string symbol = SymbolOf(gv, f);
    PostOrderVisit(f->body, [&](const ObjectRef& node) {
      const auto* alloc = AsPtr<AllocateNode>(node);
      if (alloc == nullptr) return;
      auto it = alloc->annotations.find("tessera.const_data");
      if (it == alloc->annotations.end()) return;
      const auto* data = AsPtr<ArrayNode>(it->second);
      if (data == nullptr || alloc->dtype.is_vector()) {
        Unsupported("constant table " + alloc->buffer_var->name + " of " + alloc->dtype.ToString(),
                    alloc->span);
      }
      std::string base = symbol + "_" + SanitizeName(alloc->buffer_var->name);
      std::string name = base;
      for (int k = 1; PreludeNames().count(name) || symbols_.count(name) ||
                      std::any_of(constant_tables_.begin(), constant_tables_.end(),
                                  [&](const auto& e) { return e.second == name; });
           ++k) {
        name = base + "_" + std::to_string(k);
      }
      ReserveGlobalName(name);
      constant_tables_[alloc->buffer_var.get()] = name;
      std::string text = "__constant " + TypeName(alloc->dtype, alloc->span) + " " + name + "[" +
                         std::to_string(data->items.size()) + "] = {";
      for (size_t i = 0; i < data->items.size(); ++i) {
        if (i) text += ", ";
        const auto* f_imm = AsPtr<FloatImmNode>(data->items[i]);
        if (alloc->dtype.is_bfloat16() && f_imm) {
          char buf[16];
          std::snprintf(buf, sizeof(buf), "{0x%04X}", BFloat16Bits(f_imm->value));
          text += buf;
        } else {
          text += PrintExpr(std::static_pointer_cast<ExprNode>(data->items[i]));
        }
      }
      tables.push_back(text + "};\n");
    });
  }
  if (tables.empty()) return;
  Emit("\n");
  for (const std::string& t : tables) Emit(t);
}

void CodeGenDSL::VisitStmt_(const AllocateNode* op) {
  auto it = constant_tables_.find(op->buffer_var.get());
  if (it == constant_tables_.end()) return CodeGenC::VisitStmt_(op);
  std::string type = VarTypeName(op->buffer_var.get());
  std::string name = AllocVarName(op->buffer_var.get());
  PrintIndent();
  Emit(type + " " + name + " = " + it->second + ";\n");
  PrintStmt(op->body);
}

// ---------------------------------------------------------------------------------------------
// Vector memory access
// ---------------------------------------------------------------------------------------------

std::string CodeGenDSL::VectorAddress(const BufferNode* buffer, const Expr& base, DataType vtype,
                                      const Span& span) {
  std::string qual = ScopeQualifier(buffer->data->pointer->scope);
  std::string ptr = OffsetPointer(BufferPointer(buffer, span), base);
  return "(" + (qual.empty() ? "" : qual + " ") + TypeName(vtype, span) + "*)" + ptr;
}

std::string CodeGenDSL::PrintVectorLoad(const BufferLoadNode* op) {
  Expr index = FlatIndex(op->buffer.get(), op->indices, op->span);
  const auto* ramp = AsPtr<RampNode>(index);
  if (ramp == nullptr || op->buffer->dtype.is_vector()) {
    Unsupported("a gather load from " + op->buffer->data->name + " (use S.vload_gather)", op->span);
  }
  std::string addr = VectorAddress(op->buffer.get(), ramp->base, op->dtype, op->span);
  std::string mask = MaskArg(op->predicate, op->dtype.lanes(), op->span);
  if (IsConstInt(ramp->stride, 1)) return "__vload(" + addr + ", " + mask + ")";
  return "__vload_stride(" + addr + ", " + PrintExpr(ramp->stride) + ", " + mask + ")";
}

void CodeGenDSL::PrintVectorStore(const BufferStoreNode* op) {
  Expr index = FlatIndex(op->buffer.get(), op->indices, op->span);
  const auto* ramp = AsPtr<RampNode>(index);
  if (ramp == nullptr || op->buffer->dtype.is_vector()) {
    Unsupported("a scatter store to " + op->buffer->data->name + " (use S.vstore_scatter)", op->span);
  }
  DataType vtype = op->value->dtype;
  std::string value = PrintExpr(op->value);
  std::string addr = VectorAddress(op->buffer.get(), ramp->base, vtype, op->span);
  std::string mask = MaskArg(op->predicate, vtype.lanes(), op->span);
  std::string text = IsConstInt(ramp->stride, 1)
                         ? "__vstore(" + value + ", " + addr + ", " + mask + ");\n"
                         : "__vstore_stride(" + value + ", " + addr + ", " +
                               PrintExpr(ramp->stride) + ", " + mask + ");\n";
  PrintIndent();
  Emit(text);
}

}  // namespace codegen

std::string CodeGenDSL(const IRModule& mod, const std::string& entry, bool opencl_spelling) {
  return codegen::CodeGenDSL(opencl_spelling).Generate(mod, entry);
}

std::string CodeGenDSLLauncher(const IRModule& mod, const std::string& entry) {
  return codegen::CodeGenDSL().GenerateLauncher(mod, entry);
}

}  // namespace tessera
