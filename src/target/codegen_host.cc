// CodeGenHost: host C with GCC vector extensions, OpenMP and packed entry points.
#include "tessera/target/codegen_host.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <tuple>
#include <unordered_set>

#include "tessera/arith/analyzer.h"
#include "tessera/ir/expr_ops.h"
#include "tessera/ir/ir_utils.h"
#include "tessera/ir/structural_equal.h"
#include "tessera/runtime_abi.h"
#include "tessera/support/error.h"
#include "tessera/support/escape.h"
#include "tessera/target/arg_extreme.h"
#include "tessera/target/micro_kernel.h"
#include "tessera/target/sort_rows.h"
#include "tessera/target/vector_math.h"

namespace tessera {
namespace codegen {
namespace {

// Names a static function must not take: C library functions the prelude declares.
const std::unordered_set<std::string>& LibraryNames() {
  static const auto* names = new std::unordered_set<std::string>{
      "exp",    "exp2",   "log",   "log2",  "sqrt",     "tanh",  "erf",    "sin",
      "cos",    "floor",  "ceil",  "round", "trunc",    "fabs",  "abs",    "pow",
      "fmod",   "min",    "max",   "free",  "exit",     "abort", "malloc", "memcpy",
      "memset", "printf", "isnan", "isinf", "nearbyint"};
  return *names;
}

bool IsPacked(const PrimFunc& f) { return f->GetStrAttr("calling_conv") == "packed"; }

// Iterations per parallel loop handed out as chunks on demand (schedule(dynamic)): a thread
// that shares its core with another process takes fewer chunks instead of holding the whole
// loop back, as a static split of equal halves does (GEMM 1024^3 on two threads, one core half
// taken by another process: 81 GFLOP/s static, 110 dynamic, against 74 on one thread). At most
// kParallelChunks chunks per loop keep the cost of handing them out (one atomic each) small.
constexpr int64_t kParallelChunks = 64;

/*! \brief The schedule clause of the OpenMP loop over `extent` iterations: dynamic chunks of
 *  ceil(extent / kParallelChunks) for a constant extent, OpenMP's default (static) otherwise. */
std::string OpenMPSchedule(const Expr& extent) {
  const IntImmNode* e = AsPtr<IntImmNode>(extent);
  if (e == nullptr || e->value <= 1) return "";
  int64_t chunk = (e->value + kParallelChunks - 1) / kParallelChunks;
  return " schedule(dynamic, " + std::to_string(chunk) + ")";
}

// The outermost parallel loop's body runs in a function of its own that GCC makes of it for
// OpenMP, where the loop variable runs over chunks handed out at run time (schedule(dynamic)):
// its range, known from the loop's constant bounds in the enclosing function, is lost there.
// Under -fwrapv an int32 index of that variable might then wrap, so GCC computed every address
// anew and sign-extended it instead of stepping a pointer (multiply of 2048 x 2048 int8 on one
// thread, AMD Zen 4: 0.171 ms, 0.143 with the range stated, 0.151 with no OpenMP at all; numpy
// 0.148; max_pool2d 2x2 of 64 x 112 x 112 float32 2.15 -> 0.56 ms). The statement
// `if (i < min || i >= end) __builtin_unreachable();` at the top of the body gives the range
// back; it is true of every iteration, so nothing else changes. Empty for bounds known only at
// run time, and for a body whose local arrays (a row reduction's partial results) take more than
// kRangeHintLocalBytes or have extents known only at run time: with several such arrays (argmax's
// blocks and partial extremes, about 1 KB) GCC 12 then kept more pointers live and ran short of
// registers (argmax of 2048 rows of 2048 int16 0.198 -> 0.220 ms; smaller: conv2d 3x3 NCHW int8's
// 128 bytes 1.30-1.38 -> 1.42-1.44 ms, all rows float32's 80 bytes 0.24-0.27 -> 0.26-0.30). At
// most a line of them (a pool's window sums along its output columns, 40 bytes; a local result,
// 4) lose nothing by it, and without it GCC recomputed each input address from the divided loop
// variable at every window step (AKG's avg pool 3x3/3 of (1, 256, 31, 31) float32, one thread,
// Zen 4: 0.151 -> 0.075 ms).
constexpr int64_t kRangeHintLocalBytes = 64;

std::string ParallelRangeAssumption(const ForNode* op, const std::string& name) {
  auto min = AsConstInt(op->min), extent = AsConstInt(op->extent);
  if (!min || !extent || *extent <= 0) return "";
  int64_t local_bytes = 0;
  PostOrderVisit(op->body, [&](const ObjectRef& n) {
    auto* a = AsPtr<AllocateNode>(n);
    if (a == nullptr) return;
    int64_t count = 1;
    for (const Expr& e : a->extents) {
      auto c = AsConstInt(e);
      count = c && count <= kRangeHintLocalBytes ? count * std::max<int64_t>(*c, 0)
                                                 : kRangeHintLocalBytes + 1;
    }
    local_bytes += std::min(count, kRangeHintLocalBytes + 1) * a->dtype.bytes();
  });
  if (local_bytes > kRangeHintLocalBytes) return "";
  return "if (" + name + " < " + std::to_string(*min) + " || " + name +
         " >= " + std::to_string(*min + *extent) + ") __builtin_unreachable();\n";
}

// The scalar that every lane of the vector `e` equals, where that holds by construction: a
// Broadcast, and the loads, casts and integer arithmetic of such (the vectorizer leaves
// `B[broadcast(i)] * broadcast(n)` when a fused loop's lanes share their outer index); null
// otherwise. Scalars are their own.
Expr LaneUniform(const Expr& e) {
  if (!e->dtype.is_vector()) return e;
  if (e->dtype.is_scalable_vector()) return Expr();
  if (auto* b = AsPtr<BroadcastNode>(e)) return b->value->dtype.is_scalar() ? b->value : Expr();
  if (auto* c = AsPtr<CastNode>(e)) {
    Expr v = LaneUniform(c->value);
    return v ? Expr(CastNode::Make(c->dtype.element_of(), v, c->span)) : Expr();
  }
  if (auto* l = AsPtr<BufferLoadNode>(e)) {
    if (l->predicate || l->buffer->dtype.is_vector()) return Expr();
    std::vector<Expr> idx;
    for (const Expr& i : l->indices) {
      Expr v = LaneUniform(i);
      if (!v) return Expr();
      idx.push_back(v);
    }
    return BufferLoadNode::Make(l->buffer, std::move(idx), nullptr, l->span);
  }
  auto* bin = AsPtr<BinaryNode>(e);
  if (bin == nullptr || !e->dtype.is_int()) return Expr();
  Expr a = LaneUniform(bin->a), b = a ? LaneUniform(bin->b) : Expr();
  if (!b) return Expr();
  switch (bin->kind) {
    case NodeKind::kAdd:
      return AddNode::Make(a, b, e->span);
    case NodeKind::kSub:
      return SubNode::Make(a, b, e->span);
    case NodeKind::kMul:
      return MulNode::Make(a, b, e->span);
    case NodeKind::kFloorDiv:
      return FloorDivNode::Make(a, b, e->span);
    case NodeKind::kFloorMod:
      return FloorModNode::Make(a, b, e->span);
    default:
      return Expr();
  }
}

// A vector index of consecutive elements written as a lane-uniform offset plus a unit Ramp
// (`u + Ramp(b, 1)`, either order) as the one Ramp it is, `Ramp(u + b, 1)`, so that the access
// is one vector load or store instead of a lane-by-lane gather or scatter. Other indices are
// returned as they are.
Expr AsUnitRamp(const Expr& index) {
  auto* add = AsPtr<AddNode>(index);
  if (add == nullptr || !index->dtype.is_vector() || index->dtype.is_scalable_vector()) {
    return index;
  }
  for (int side = 0; side < 2; ++side) {
    const Expr& r = side == 0 ? add->a : add->b;
    const Expr& u = side == 0 ? add->b : add->a;
    auto* ramp = AsPtr<RampNode>(r);
    if (ramp == nullptr || !IsConstInt(ramp->stride, 1) || AsPtr<RampNode>(u)) continue;
    if (Expr scalar = LaneUniform(u)) {
      return RampNode::Make(AddNode::Make(scalar, ramp->base, index->span), ramp->stride,
                            ramp->lanes, index->span);
    }
  }
  return index;
}

// A vector index that repeats each of `k` consecutive elements k times (`repeat` along the
// last axis: lane i reads element i / k): `u + FloorDiv(Ramp(b, 1), Broadcast(k))`, `u`
// lane-uniform or absent, k dividing the lanes and b. Returns the first element's index
// (`u + b / k`) and sets `*k`; null for other indices.
Expr RepeatedRampBase(const Expr& index, const VarMap& lets, int64_t* k) {
  if (!index->dtype.is_vector() || index->dtype.is_scalable_vector()) return Expr();
  Expr offset, div = index;
  if (auto* add = AsPtr<AddNode>(index)) {
    bool left = AsPtr<FloorDivNode>(add->a) != nullptr;
    div = left ? add->a : add->b;
    offset = LaneUniform(left ? add->b : add->a);
    if (!offset) return Expr();
  }
  auto* fd = AsPtr<FloorDivNode>(div);
  auto* ramp = fd ? AsPtr<RampNode>(fd->a) : nullptr;
  auto* by = fd ? AsPtr<BroadcastNode>(fd->b) : nullptr;
  auto factor = by ? AsConstInt(by->value) : std::nullopt;
  if (!ramp || !factor || *factor < 2 || !IsConstInt(ramp->stride, 1) ||
      ramp->lanes % *factor != 0) {
    return Expr();
  }
  // The base is often a common subexpression's variable (`cse_v1 = i * 16`): its value counts.
  Expr base = ramp->base;
  for (int depth = 0; depth < 4 && !lets.empty(); ++depth) base = Substitute(base, lets);
  arith::Analyzer ana;
  arith::ModularSet m = ana.GetModularSet(base);
  if (m.coeff % *factor != 0 || m.base % *factor != 0) return Expr();
  *k = *factor;
  Expr first = FloorDivNode::Make(ramp->base, MakeConst(ramp->base->dtype, *factor), index->span);
  return offset ? Expr(AddNode::Make(offset, first, index->span)) : first;
}

/*! \brief The store of a nest's scalar tail loop `for v in [0, extent)`: its body's lets
 *  (their values, substituted, in `lets`), then either the store or `if v < r:` (no else) over
 *  more lets and the store. `count` is the number of elements stored, min(r, extent). Null
 *  when the body has another form. */
const BufferStoreNode* MatchTailStore(const ForNode* tail, int64_t extent, VarMap* lets,
                                      int64_t* count) {
  const VarNode* v = tail->loop_var.get();
  auto skip_lets = [&](Stmt s) {
    while (auto* let = AsPtr<LetStmtNode>(s)) {
      (*lets)[let->var.get()] = Substitute(let->value, *lets);
      s = let->body;
    }
    return s;
  };
  Stmt tb = skip_lets(tail->body);
  *count = extent;
  if (auto* cond = AsPtr<IfThenElseNode>(tb)) {
    Expr bound = Substitute(cond->condition, *lets);  // (held: lt points into it)
    auto* lt = AsPtr<LTNode>(bound);
    if (cond->else_case || !lt || lt->a.get() != v) return nullptr;
    auto r = AsConstInt(lt->b);
    if (!r) return nullptr;
    *count = std::min(*r, extent);
    tb = skip_lets(cond->then_case);
  }
  return AsPtr<BufferStoreNode>(tb);
}

}  // namespace

CodeGenHost::CodeGenHost() : CodeGenC("C") {
  split_constant_offsets_ = true;
  float8_storage_ = true;
  for (const std::string& n : LibraryNames()) ReserveGlobalName(n);
}

// ---------------------------------------------------------------------------------------------
// Module layout
// ---------------------------------------------------------------------------------------------

HostSource CodeGenHost::Generate(const IRModule& mod, size_t split_bytes) {
  std::vector<std::pair<std::string, PrimFunc>> internal, packed;
  for (const auto& [gv, f] : mod->functions) {
    std::string name;
    if (IsPacked(f)) {
      name = TESSERA_PACKED_PREFIX + SanitizeName(f->GetStrAttr("global_symbol", gv->name_hint));
      packed.emplace_back(name, f);
    } else {
      name = SanitizeName(gv->name_hint);
      if (LibraryNames().count(name)) name += "_";
      internal.emplace_back(name, f);
    }
    symbols_[gv->name_hint] = name;
    ReserveGlobalName(name);
  }
  auto prepare = [this](const PrimFunc& f) {
    in_packed_ = IsPacked(f);
    noalias_ = f->GetIntAttr("tir.noalias", 0) != 0;
    restrict_vars_.clear();
    if (noalias_ && !in_packed_) {
      for (const Var& p : f->params) {
        if (p->pointer) restrict_vars_.insert(p.get());
      }
    }
  };
  stream_.str("");
  for (const auto& [name, f] : internal) {
    prepare(f);
    Emit(PrintPrototype(name, f) + "\n");
  }
  // [begin, end) of each function's definition in the text, and whether it is private.
  std::vector<std::tuple<size_t, size_t, bool>> spans;
  bool first = internal.empty();
  for (const auto& list : {internal, packed}) {
    for (const auto& [name, f] : list) {
      prepare(f);
      if (!first) Emit("\n");
      first = false;
      size_t begin = static_cast<size_t>(stream_.tellp());
      AddFunction(name, f);
      spans.emplace_back(begin, static_cast<size_t>(stream_.tellp()), !IsPacked(f));
    }
  }
  std::string functions = Finish();

  std::ostringstream os;
  os << "#include <tessera/runtime.h>\n\n";
  for (const std::string& t : typedefs_) os << t << "\n";
  for (const std::string& h : helpers_) os << h << "\n";
  std::string preamble = os.str();
  os << functions;
  HostSource out;
  out.code = os.str();
  out.metadata = Metadata(mod);
  out.uses_openmp = uses_openmp_;
  // The library describes itself, so that an exported copy loads back on its own.
  std::string self_description = "\nTESSERA_EXPORT const char " TESSERA_MODULE_INFO_SYMBOL "[] = " +
                                 PrintExpr(StringImmNode::Make(out.metadata)) + ";\n";
  std::string source_literal = PrintExpr(StringImmNode::Make(os.str()));
  self_description +=
      "TESSERA_EXPORT const char " TESSERA_MODULE_SOURCE_SYMBOL "[] = " + source_literal + ";\n";
  out.code += self_description;

  size_t function_bytes = spans.empty() ? 0 : std::get<1>(spans.back()) - std::get<0>(spans[0]);
  if (function_bytes > split_bytes && spans.size() > 1) {
    const size_t unit_bytes = std::max<size_t>(split_bytes / 2, 1);
    // Every unit declares every function; private ones lose `static` (hidden, not exported).
    external_private_ = true;
    std::string header = preamble;
    for (const auto& list : {internal, packed}) {
      for (const auto& [name, f] : list) {
        prepare(f);
        header += PrintPrototype(name, f) + "\n";
      }
    }
    external_private_ = false;
    HostUnit unit;
    auto flush = [&] {
      if (unit.code.empty()) return;
      unit.code = header + unit.code;
      out.units.push_back(std::move(unit));
      unit = HostUnit();
    };
    const std::string kStatic = "static ";
    for (const auto& [begin, end, is_private] : spans) {
      std::string text = functions.substr(begin, end - begin);
      if (is_private) {
        if (text.compare(0, kStatic.size(), kStatic) != 0) {
          throw InternalError("CodeGenHost: a private function does not start with 'static '");
        }
        text.erase(0, kStatic.size());
      }
      if (!unit.code.empty() && unit.code.size() + text.size() > unit_bytes) flush();
      unit.largest_function = std::max(unit.largest_function, text.size());
      unit.code += "\n" + text;
    }
    flush();
    HostUnit last;
    last.code = preamble + self_description;
    out.units.push_back(std::move(last));
    // runtime.h shares the library's error state between the units; the last one defines it.
    for (HostUnit& u : out.units) {
      const char* defines =
          &u == &out.units.back()
              ? "#define TESSERA_SPLIT_UNIT 1\n#define TESSERA_SPLIT_UNIT_OWNER 1\n"
              : "#define TESSERA_SPLIT_UNIT 1\n";
      u.code.insert(0, defines);
    }
  }
  return out;
}

std::string CodeGenHost::Metadata(const IRModule& mod) {
  // The entry of `lib(...)`: "main", else the only public function.
  std::vector<std::string> names;
  for (const auto& [gv, f] : mod->functions) {
    if (IsPacked(f)) names.push_back(f->GetStrAttr("global_symbol", gv->name_hint));
  }
  std::string entry = names.size() == 1 ? names[0] : "";
  for (const std::string& n : names) {
    if (n == "main") entry = n;
  }
  nlohmann::ordered_json functions = nlohmann::ordered_json::array();
  for (const auto& [gv, f] : mod->functions) {
    if (!IsPacked(f)) continue;
    nlohmann::ordered_json params = nlohmann::ordered_json::array();
    auto it = f->attrs.find("tessera.params");
    if (it != f->attrs.end()) {
      if (auto* arr = AsPtr<ArrayNode>(it->second)) {
        for (const ObjectRef& item : arr->items) {
          auto* s = AsPtr<StringImmNode>(item);
          params.push_back(s ? s->value : "");
        }
      }
    }
    functions.push_back({{"name", f->GetStrAttr("global_symbol", gv->name_hint)},
                         {"symbol", symbols_[gv->name_hint]},
                         {"ret", f->GetStrAttr("tessera.ret_type", "void")},
                         {"params", std::move(params)}});
  }
  nlohmann::ordered_json doc = {
      {"entry", entry}, {"openmp", uses_openmp_}, {"functions", std::move(functions)}};
  // Names that are not UTF-8 are replaced rather than refused: they only label errors.
  return doc.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

// ---------------------------------------------------------------------------------------------
// Types, names, signatures
// ---------------------------------------------------------------------------------------------

std::string CodeGenHost::VectorType(DataType t, const Span& span) {
  DataType elem = t.is_bool() ? DataType::Int(32) : t.element_of();
  int lanes = t.lanes();
  if (lanes & (lanes - 1))
    Unsupported("vector type " + t.ToString() + " (lanes must be a power of two)", span);
  std::string scalar = CodeGenC::TypeName(elem, span);
  std::string name = "tessera_" + elem.ToString() + "x" + std::to_string(lanes);
  if (typedef_names_.insert(name).second) {
    typedefs_.push_back("typedef " + scalar + " " + name + " __attribute__((vector_size(" +
                        std::to_string(elem.bytes() * lanes) + ")));");
  }
  return name;
}

std::string CodeGenHost::TypeName(DataType t, const Span& span) {
  if (t.is_vector()) return VectorType(t, span);
  return CodeGenC::TypeName(t, span);
}

std::string CodeGenHost::VarTypeName(const VarNode* v) {
  std::string t = CodeGenC::VarTypeName(v);
  return restrict_vars_.count(v) ? t + " restrict" : t;
}

std::string CodeGenHost::FunctionPrefix(const PrimFunc& func, bool prototype) {
  if (IsPacked(func)) return "TESSERA_EXPORT ";
  return external_private_ ? "" : "static ";
}

std::string CodeGenHost::CalleeName(const GlobalVarNode* callee) {
  auto it = symbols_.find(callee->name_hint);
  return it == symbols_.end() ? callee->name_hint : it->second;
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

std::string CodeGenHost::Helper(const std::string& name, const std::string& definition) {
  if (helper_names_.insert(name).second) helpers_.push_back(definition);
  return name;
}

// static inline R name(A0 a0, A1 a1, ...) { R r; for (i) r[i] = lane_expr; return r; }
// `lane_expr` reads lanes as a0[i] (vector arguments) or a0 (scalar ones).
std::string CodeGenHost::LaneLoopHelper(const std::string& name, DataType result,
                                        const std::vector<DataType>& args,
                                        const std::string& lane_expr, const Span& span) {
  if (helper_names_.count(name)) return name;
  std::ostringstream os;
  std::string rt = TypeName(result, span);
  os << "static inline " << rt << " " << name << "(";
  for (size_t i = 0; i < args.size(); ++i) {
    os << (i ? ", " : "") << TypeName(args[i], span) << " a" << i;
  }
  os << ") {\n  " << rt << " r;\n  for (int i = 0; i < " << result.lanes()
     << "; ++i) r[i] = " << lane_expr << ";\n  return r;\n}\n";
  return Helper(name, os.str());
}

std::string CodeGenHost::ToMask32(const std::string& value, int bits, int lanes, const Span& span) {
  return ToMask(value, bits, 32, lanes, span);
}

std::string CodeGenHost::ToMask(const std::string& value, int from_bits, int to_bits, int lanes,
                                const Span& span) {
  if (from_bits == to_bits) return value;
  return "__builtin_convertvector(" + value + ", " +
         VectorType(DataType::Int(to_bits, lanes), span) + ")";
}

// float16 lanes that F16C widens eight at a time: compares, min and max go through float32,
// exactly (no rounding: the values and the order are the same), where GCC 12 without
// AVX512-FP16 would take the _Float16 vector apart lane by lane.
static bool HalfThroughFloat(DataType t) {
  return t.is_float() && !t.is_bfloat16() && t.bits() == 16 && t.lanes() >= 8 && t.lanes() <= 64;
}

// A comparison gives lanes as wide as its operands; And, Or and Not of comparisons keep that
// width. Printing the condition at the width the select wants means no conversion at all for a
// select of the compared type (a float64 compare selecting float64 values was narrowed to 32-bit
// lanes and widened back, which GCC did through the stack), and one vector conversion (a
// narrowing or a widening instruction) otherwise.
std::string CodeGenHost::PrintMask(const Expr& cond, int bits) {
  int lanes = cond->dtype.lanes();
  if (auto* bin = AsPtr<BinaryNode>(cond)) {
    if (bin->is_comparison() && !bin->a->dtype.is_bool()) {
      static const std::map<NodeKind, const char*> kCompare = {
          {NodeKind::kEQ, "=="}, {NodeKind::kNE, "!="}, {NodeKind::kLT, "<"},
          {NodeKind::kLE, "<="}, {NodeKind::kGT, ">"},  {NodeKind::kGE, ">="}};
      if (std::string m = RampCompareMask(bin, bits); !m.empty()) return m;
      std::string a = PrintExpr(bin->a), b = PrintExpr(bin->b);
      if (HalfThroughFloat(bin->a->dtype)) {
        return ToMask(HalfCompare(a, kCompare.at(bin->kind), b, bin->a->dtype, bin->span), 32, bits,
                      lanes, bin->span);
      }
      return ToMask("(" + a + " " + kCompare.at(bin->kind) + " " + b + ")", bin->a->dtype.bits(),
                    bits, lanes, bin->span);
    }
    if (bin->kind == NodeKind::kAnd || bin->kind == NodeKind::kOr) {
      std::string a = PrintMask(bin->a, bits), b = PrintMask(bin->b, bits);
      return "(" + a + (bin->kind == NodeKind::kAnd ? " & " : " | ") + b + ")";
    }
    // Bools equal or not (topi.logical_xor): both masks at the wanted width, compared there
    // (two -1/0 masks compare to a -1/0 mask of their width), where the bool vector's 32-bit
    // lanes took a byte's masks through four times as many lanes and back (logical_xor of
    // 2048 x 2048 bools, one thread: 0.35 ms, numpy 0.17).
    if ((bin->kind == NodeKind::kEQ || bin->kind == NodeKind::kNE) && bin->a->dtype.is_bool() &&
        bin->b->dtype.is_bool()) {
      std::string a = PrintMask(bin->a, bits), b = PrintMask(bin->b, bits);
      return "(" + a + (bin->kind == NodeKind::kEQ ? " == " : " != ") + b + ")";
    }
  }
  if (auto* n = AsPtr<NotNode>(cond)) return "(~" + PrintMask(n->a, bits) + ")";
  if (auto* bc = AsPtr<BroadcastNode>(cond); bc && bc->value->dtype.is_scalar()) {
    // One condition for every lane (stack's `i0 == 0`): its mask broadcast at the width wanted,
    // not a broadcast of 32-bit lanes converted.
    DataType mt = DataType::Int(bits, lanes);
    std::string name = LaneLoopHelper("tessera_broadcast_" + TypeName(mt, cond->span).substr(8), mt,
                                      {mt.element_of()}, "a0", cond->span);
    return name + "(-(" + CodeGenC::TypeName(mt.element_of(), cond->span) + ")(" +
           PrintExpr(bc->value) + " != 0))";
  }
  if (auto* cast = AsPtr<CastNode>(cond)) {
    DataType from = cast->value->dtype;
    if (!from.is_bool()) {
      std::string zero = "(" + TypeName(from, cast->span) + "){0}";
      return ToMask("(" + PrintExpr(cast->value) + " != " + zero + ")", from.bits(), bits, lanes,
                    cast->span);
    }
  }
  return ToMask(PrintExpr(cond), 32, bits, lanes, cond->span);
}

// `Ramp(b, 1, L) op Broadcast(c)` (or the other way round): lane i holds b + i, so it compares
// lane positions, `i op d` with d = c - b limited to [-1, L] (nothing changes for positions 0
// .. L-1), a compare of a constant vector 0, 1, .., L-1 at the mask's width with one broadcast
// scalar. eye's `j - i == k` selecting int8 lanes built the int32 ramp (32 lanes: 1024 bits)
// and narrowed the comparison (bench_topi eye int8 0.07x numpy). Lanes whose b + i would wrap
// (b within L of the type's maximum) are compared one by one, as the IR's wrapping arithmetic
// has them.
std::string CodeGenHost::RampCompareMask(const BinaryNode* cmp, int bits) {
  static const std::map<NodeKind, std::pair<const char*, const char*>> kOps = {
      {NodeKind::kEQ, {"eq", "=="}}, {NodeKind::kNE, {"ne", "!="}}, {NodeKind::kLT, {"lt", "<"}},
      {NodeKind::kLE, {"le", "<="}}, {NodeKind::kGT, {"gt", ">"}},  {NodeKind::kGE, {"ge", ">="}}};
  static const std::map<NodeKind, NodeKind> kSwapped = {
      {NodeKind::kEQ, NodeKind::kEQ}, {NodeKind::kNE, NodeKind::kNE},
      {NodeKind::kLT, NodeKind::kGT}, {NodeKind::kLE, NodeKind::kGE},
      {NodeKind::kGT, NodeKind::kLT}, {NodeKind::kGE, NodeKind::kLE}};
  auto* ramp = AsPtr<RampNode>(cmp->a);
  auto* value = AsPtr<BroadcastNode>(cmp->b);
  NodeKind kind = cmp->kind;
  if (ramp == nullptr || value == nullptr) {
    ramp = AsPtr<RampNode>(cmp->b);
    value = AsPtr<BroadcastNode>(cmp->a);
    kind = kSwapped.at(cmp->kind);
  }
  if (ramp == nullptr || value == nullptr || !IsConstInt(ramp->stride, 1)) return "";
  DataType elem = ramp->dtype.element_of();
  int lanes = ramp->lanes;
  if (!elem.is_int() || (elem.bits() != 32 && elem.bits() != 64) || lanes < 2 ||
      lanes > (1 << (bits - 2)) || value->value->dtype != elem) {
    return "";
  }
  auto [op_name, op] = kOps.at(kind);
  std::string et = CodeGenC::TypeName(elem, cmp->span);
  std::string ut = "u" + et;
  std::string mt = TypeName(DataType::Int(bits, lanes), cmp->span);
  std::string name =
      "tessera_ramp_" + std::string(op_name) + "_" + elem.ToString() + "_" + mt.substr(8);
  if (!helper_names_.count(name)) {
    std::string max = elem.bits() == 32 ? "INT32_MAX" : "INT64_MAX";
    std::string last = std::to_string(lanes - 1);
    std::ostringstream iota;
    for (int i = 0; i < lanes; ++i) iota << (i ? ", " : "") << i;
    std::ostringstream os;
    os << "static inline " << mt << " " << name << "(" << et << " b, " << et << " c) {\n"
       << "  " << mt << " r;\n"
       << "  if (b > " << max << " - " << last << ") {\n"
       << "    for (int i = 0; i < " << lanes << "; ++i) r[i] = (" << et << ")((" << ut << ")b + ("
       << ut << ")i) " << op << " c ? -1 : 0;\n"
       << "    return r;\n"
       << "  }\n"
       << "  " << et << " d;\n"
       << "  if (__builtin_sub_overflow(c, b, &d)) d = c < b ? -1 : " << lanes << ";\n"
       << "  d = d < -1 ? -1 : d > " << lanes << " ? " << lanes << " : d;\n"
       << "  return (" << mt << "){" << iota.str() << "} " << op << " (" << mt << "){0} + ("
       << CodeGenC::TypeName(DataType::Int(bits), cmp->span) << ")d;\n"
       << "}\n";
    Helper(name, os.str());
  }
  return name + "(" + PrintExpr(ramp->base) + ", " + PrintExpr(value->value) + ")";
}

// ---------------------------------------------------------------------------------------------
// Vector expressions
// ---------------------------------------------------------------------------------------------

std::string CodeGenHost::HalfCompare(const std::string& a, const std::string& op,
                                     const std::string& b, DataType t, const Span& span) {
  DataType wide = DataType::Float(32, t.lanes());
  return "(" + HalfConvert(a, t, wide, span) + " " + op + " " + HalfConvert(b, t, wide, span) + ")";
}

// An integer floordiv or floormod of lanes by a positive constant (a Broadcast of one: the
// flattened index of a reshape, take's `floormod(I, n)`): by a power of two 2^k, the shift
// `a >> k` and the mask `a & (2^k - 1)`, exact for both signs (the shift is arithmetic on
// signed lanes); by another constant, a lane loop with the constant written into it, which GCC
// divides by multiplication. The lane loop of two vectors read the divisor back from the stack
// and ran an idiv per lane (take flat float32: 16 idivs a vector). "" for other operations.
std::string CodeGenHost::PrintVectorFloorByConstant(const BinaryNode* op) {
  DataType t = op->a->dtype;
  const bool div = op->kind == NodeKind::kFloorDiv;
  if (!t.is_integer() || (!div && op->kind != NodeKind::kFloorMod)) return "";
  auto* bc = AsPtr<BroadcastNode>(op->b);
  auto* c = bc ? AsPtr<IntImmNode>(bc->value) : nullptr;
  if (c == nullptr || c->value <= 0) return "";
  const int64_t v = c->value;
  const std::string et = CodeGenC::TypeName(t.element_of(), op->span);
  std::string a = PrintExpr(op->a);
  if ((v & (v - 1)) == 0) {
    int k = 0;
    while ((int64_t{1} << k) < v) ++k;
    if (div) return "(" + a + " >> " + std::to_string(k) + ")";
    return "(" + a + " & (" + et + ")" + std::to_string(v - 1) + "LL)";
  }
  const std::string vt = TypeName(t, op->span);
  const std::string fname = div ? "floordiv" : "floormod";
  std::string name =
      LaneLoopHelper("tessera_" + fname + "_" + vt.substr(8) + "_by_" + std::to_string(v), t, {t},
                     "__" + fname + "(a0[i], (" + et + ")" + std::to_string(v) + "LL)", op->span);
  return name + "(" + a + ")";
}

std::string CodeGenHost::PrintVectorBinary(const BinaryNode* op) {
  DataType t = op->a->dtype;
  if (std::string by = PrintVectorFloorByConstant(op); !by.empty()) return by;
  std::string a = PrintExpr(op->a), b = PrintExpr(op->b);
  std::string vt = TypeName(t, op->span);
  if (HalfThroughFloat(t) && (op->kind == NodeKind::kMin || op->kind == NodeKind::kMax)) {
    // The float32 comparison picks the float16 bits of one side.
    std::string name =
        "tessera_" + std::string(op->kind == NodeKind::kMin ? "min" : "max") + "_" + vt.substr(8);
    if (!helper_names_.count(name)) {
      std::string bits = TypeName(DataType::Int(16, t.lanes()), op->span);
      std::string pick =
          HalfCompare("a0", op->kind == NodeKind::kMin ? "<" : ">", "a1", t, op->span);
      std::ostringstream os;
      os << "static inline " << vt << " " << name << "(" << vt << " a0, " << vt << " a1) {\n"
         << "#if defined(__F16C__)\n"
         << "  " << bits << " m = __builtin_convertvector(" << pick << ", " << bits << ");\n"
         << "  return (" << vt << ")(((" << bits << ")a0 & m) | ((" << bits << ")a1 & ~m));\n"
         << "#else\n"
         << "  " << vt << " r;\n"
         << "  for (int i = 0; i < " << t.lanes() << "; ++i) r[i] = (a0[i] "
         << (op->kind == NodeKind::kMin ? "<" : ">") << " a1[i] ? a0[i] : a1[i]);\n"
         << "  return r;\n"
         << "#endif\n"
         << "}\n";
      Helper(name, os.str());
    }
    return name + "(" + a + ", " + b + ")";
  }
  auto lanewise = [&](const std::string& fname, const std::string& expr) {
    std::string name =
        LaneLoopHelper("tessera_" + fname + "_" + vt.substr(8), t, {t, t}, expr, op->span);
    return name + "(" + a + ", " + b + ")";
  };
  if (std::string q = PrintVectorIntDivision(op, a, b); !q.empty()) return q;
  switch (op->kind) {
    case NodeKind::kAdd:
      return "(" + a + " + " + b + ")";
    case NodeKind::kSub:
      return "(" + a + " - " + b + ")";
    case NodeKind::kMul:
      return "(" + a + " * " + b + ")";
    case NodeKind::kDiv:
      return "(" + a + " / " + b + ")";
    case NodeKind::kMod:
      if (t.is_float() && (t.bits() == 32 || t.bits() == 64) && !t.is_bfloat16()) {
        // C's fmod from a vector quotient (vector_math.h); the C library's for what it rejects.
        std::string name = "tessera_fmod_" + vt.substr(8);
        Helper(name,
               VectorFmodSource(name, vt, TypeName(DataType::Int(t.bits(), t.lanes()), op->span),
                                t.bits(), t.lanes()));
        return name + "(" + a + ", " + b + ")";
      }
      if (t.is_float())
        return lanewise("fmod", t.bits() == 32 ? "fmodf(a0[i], a1[i])" : "fmod(a0[i], a1[i])");
      return "(" + a + " % " + b + ")";
    case NodeKind::kFloorDiv:
      return lanewise("floordiv", "__floordiv(a0[i], a1[i])");
    case NodeKind::kFloorMod:
      return lanewise("floormod", "__floormod(a0[i], a1[i])");
    case NodeKind::kMin:
      return lanewise("min", "(a0[i] < a1[i] ? a0[i] : a1[i])");
    case NodeKind::kMax:
      return lanewise("max", "(a0[i] > a1[i] ? a0[i] : a1[i])");
    case NodeKind::kAnd:
      return "(" + a + " & " + b + ")";
    case NodeKind::kOr:
      return "(" + a + " | " + b + ")";
    default:
      break;
  }
  static const std::map<NodeKind, const char*> kCompare = {
      {NodeKind::kEQ, "=="}, {NodeKind::kNE, "!="}, {NodeKind::kLT, "<"},
      {NodeKind::kLE, "<="}, {NodeKind::kGT, ">"},  {NodeKind::kGE, ">="}};
  auto it = kCompare.find(op->kind);
  TESSERA_ICHECK(it != kCompare.end()) << "no vector operator for " << NodeKindName(op->kind);
  if (HalfThroughFloat(t)) return HalfCompare(a, it->second, b, t, op->span);  // int32 lanes
  int bits = t.is_bool() ? 32 : t.bits();
  return ToMask32("(" + a + " " + it->second + " " + b + ")", bits, t.lanes(), op->span);
}

// Integer division of vectors: the hardware divides integers one lane at a time (GCC prints `a /
// b` of an integer vector, and the floor forms' lane loops, as a scalar idiv per lane), but
// divides float vectors. Lanes of at most 16 bits (signed or not) divide as float32, signed
// 32-bit lanes as float64, exactly: both operands are exact in the float type, and a quotient
// n - e just below an integer n is at least 1/|b| below it (relatively at least 2^-16, or 2^-32),
// far more than the division's rounding (2^-24, 2^-53), so truncating the rounded quotient gives
// C's truncated quotient. The remainder is a - q * b; the floor forms correct q and r where r is
// nonzero and of the other sign than b. (A zero divisor is undefined in C as in the lane loop;
// INT_MIN / -1 gives INT_MIN, as the wrapping the IR has.) A constant divisor keeps the C
// compiler's forms. uint8 floor_divide of 2048 x 2048,
// one thread on a Zen 4: 6.9 ms (lane loop) -> 0.84; int16 14.7 -> 1.2; int32 14.9 -> 2.0.
std::string CodeGenHost::PrintVectorIntDivision(const BinaryNode* op, const std::string& a,
                                                const std::string& b) {
  static const std::map<NodeKind, const char*> kNames = {{NodeKind::kDiv, "div"},
                                                         {NodeKind::kMod, "mod"},
                                                         {NodeKind::kFloorDiv, "floordiv"},
                                                         {NodeKind::kFloorMod, "floormod"}};
  DataType t = op->a->dtype;
  auto kind = kNames.find(op->kind);
  if (kind == kNames.end() || op->b->dtype != t || t.is_bool()) return "";
  const bool is_signed = t.is_int();
  if (!(is_signed && t.bits() <= 32) && !(t.is_uint() && t.bits() <= 16)) return "";
  if (t.bits() < 8) return "";
  // A constant divisor (an index's `ramp // 16`): the C compiler's multiply-and-shift of each
  // lane beats a float division.
  if (auto* bc = AsPtr<BroadcastNode>(op->b); bc && AsPtr<IntImmNode>(bc->value)) return "";
  const int lanes = t.lanes();
  std::string vt = TypeName(t, op->span);
  std::string name = "tessera_" + std::string(kind->second) + "_" + vt.substr(8);
  if (!helper_names_.count(name)) {
    std::string ft = TypeName(DataType::Float(t.bits() <= 16 ? 32 : 64, lanes), op->span);
    std::string it = TypeName(DataType::Int(32, lanes), op->span);
    // Widened to int32 lanes first, 8-bit lanes through 16-bit ones: GCC 12 converts 8-bit
    // lanes loaded from memory to float, or to int32 at once, lane by lane through
    // general-purpose registers (uint8 floor_divide of 2048 x 2048, one thread: 4.1 ms, and
    // 2.7 through int32 alone, where int16 took 1.0).
    auto to_float = [&](const std::string& v) {
      std::string wide = v;
      if (t.bits() == 8) {
        DataType half = t.is_int() ? DataType::Int(16, lanes) : DataType::UInt(16, lanes);
        wide = "__builtin_convertvector(" + wide + ", " + TypeName(half, op->span) + ")";
      }
      if (t.bits() < 32) wide = "__builtin_convertvector(" + wide + ", " + it + ")";
      return "__builtin_convertvector(" + wide + ", " + ft + ")";
    };
    std::ostringstream os;
    os << "static inline " << vt << " " << name << "(" << vt << " a0, " << vt << " a1) {\n"
       << "  " << vt << " q = __builtin_convertvector(__builtin_convertvector(" << to_float("a0")
       << " / " << to_float("a1") << ", " << it << "), " << vt << ");\n";
    const bool floor =
        is_signed && (op->kind == NodeKind::kFloorDiv || op->kind == NodeKind::kFloorMod);
    if (op->kind == NodeKind::kDiv || (op->kind == NodeKind::kFloorDiv && !is_signed)) {
      os << "  return q;\n";
    } else {
      os << "  " << vt << " r = a0 - q * a1;\n";
      if (!floor) {
        os << "  return r;\n";
      } else {
        // -1 where r is nonzero and its sign differs from b's
        os << "  " << vt << " m = (" << vt << ")((r != 0) & ((r ^ a1) < 0));\n"
           << (op->kind == NodeKind::kFloorDiv ? "  return q + m;\n" : "  return r + (m & a1);\n");
      }
    }
    os << "}\n";
    Helper(name, os.str());
  }
  return name + "(" + a + ", " + b + ")";
}

std::string CodeGenHost::PrintVectorNot(const NotNode* op) { return "(~" + PrintExpr(op->a) + ")"; }

std::string CodeGenHost::PrintVectorSelect(const SelectNode* op) {
  DataType t = op->dtype;
  std::string vt = TypeName(t, op->span);
  // A select takes a mask of lanes as wide as the selected ones (a select of bools, 32-bit
  // lanes: the bool vector type), so that its lane loop is one masked move or blend. A mask of
  // another width made GCC take it apart: int8 lanes under an int32 mask were four 128-bit
  // compares into mask registers, shifted and joined, per 16 lanes (topi.abs and topi.sign of
  // int8 ran at a tenth of numpy's speed).
  int bits = t.is_bool() ? 32 : t.bits();
  DataType mask = DataType::Int(bits, t.lanes());
  std::string name = "tessera_select_" + vt.substr(8);
  if (t.is_float() && bits == 16 && !helper_names_.count(name)) {
    // float16 and bfloat16 lanes are picked by their bits (GCC 12 without AVX512-FP16 took the
    // lane loop apart lane by lane under a mask of their width).
    std::string mt = TypeName(mask, op->span);
    Helper(name, "static inline " + vt + " " + name + "(" + mt + " a0, " + vt + " a1, " + vt +
                     " a2) {\n  return (" + vt + ")(((" + mt + ")a1 & a0) | ((" + mt +
                     ")a2 & ~a0));\n}\n");
  }
  name = LaneLoopHelper(name, t, {mask, t, t}, "(a0[i] ? a1[i] : a2[i])", op->span);
  std::string cond = PrintMask(op->condition, bits);
  return name + "(" + cond + ", " + PrintExpr(op->true_value) + ", " + PrintExpr(op->false_value) +
         ")";
}

// Our float32 tanhf (see VisitExpr_ of a CallNode).
const char* const kTanhfSource =
    "static inline float tessera_tanhf(float x) {\n"
    "#if defined(__x86_64__) && !defined(__AVX2__)\n"
    "  return tanhf(x);\n"
    "#else\n"
    "  float a = __builtin_fabsf(x);\n  int32_t bits;\n"
    "  memcpy(&bits, &a, sizeof(bits));\n"
    "  bits = bits < 0x4111999a ? bits : 0x4111999a; /* 9.1f */\n"
    "  memcpy(&a, &bits, sizeof(a));\n"
    "  float y = a + a;\n  float n = __builtin_rintf(y * 1.44269504088896341f);\n"
    "  float r = y - n * 0.693145751953125f;\n  r = r - n * 1.428606765330187e-06f;\n"
    "  float p = 1.984585542e-04f;\n  p = p * r + 1.394060557e-03f;\n"
    "  p = p * r + 8.333389647e-03f;\n  p = p * r + 4.166636243e-02f;\n"
    "  p = p * r + 1.666666567e-01f;\n  p = p * r + 0.5f;\n"
    "  float e = p * r * r + r;\n"
    "  bits = ((int32_t)n + 127) << 23;\n  float scale;\n"
    "  memcpy(&scale, &bits, sizeof(scale));\n"
    "  float m = scale * e + (scale - 1.0f);\n  float t = m / (m + 2.0f);\n"
    "  memcpy(&bits, &t, sizeof(bits));\n"
    "  bits |= -(int32_t)(x != x) & 0x7fc00000; /* NaN in, NaN out */\n"
    "  memcpy(&t, &bits, sizeof(t));\n"
    "  return __builtin_copysignf(t, x);\n"
    "#endif\n}\n";

// exp and tanh of float32 lanes whose results are rounded to float16 right away (topi's float16
// exp and tanh: cast to float32, expf or tanhf, cast back). Rounding to float16 keeps 11 bits,
// so the kernels evaluate shorter polynomials than float32 routines (libmvec's expf, our
// tessera_tanhf) and have no branch: whole vectors of AVX-512 instructions on sixteen lanes, or
// of AVX2 ones on eight, through GCC's builtins; elsewhere (no AVX2, or clang, whose builtins
// differ) the lane loops of expf and tessera_tanhf, as before. numpy's float16 exp and tanh on
// an AVX-512 host are Intel SVML's float32 routines between 16-lane conversions, faster than
// numpy's own float32 loops. bench_topi float16 (2048 x 2048, one thread of a Zen 4, thread CPU
// time): exp 1.53 -> 0.82 ms, tanh 2.27 -> 1.37 ms, numpy 1.22 and 1.98; the AVX2 code
// (-mcpu=haswell) on the same host: exp 12.5 -> 1.37 ms, tanh 9.0 -> 2.1 ms. Over all 65536
// float16 inputs (tests/python/codegen/test_codegen_host_half_math.py) the results are within
// one ulp of numpy's and of the correctly rounded ones, and misround no more often than numpy's
// (exp: 3 inputs, next to halfway cases, against numpy's 4; tanh: none); NaN, infinities, signed
// zeros, overflow to infinity and underflow to zero and to subnormals are exact.
//
// exp: x is clamped to [-17.5, 11.5] by min/max instructions, which keep a NaN x (exp(11.5)
// rounds to infinity in float16, exp(-17.5) to zero), exp(x) = 2^n p(r), n = round(x / ln 2),
// r = x - n ln 2 (|r| <= ln 2 / 2; one fused multiply-add, or ln 2 in two parts), p of degree 5
// with p(0) = p'(0) = 1, fitted for relative error 1.2e-7. 2^n by vscalefps, or by the exponent
// bits.
//
// tanh(x) = sign(x) m / (m + 2), m = expm1(2|x|) = 2^n (expm1(r) + 1) - 1 as in tessera_tanhf,
// expm1(r) = r + r^2 p(r), p of degree 4 (relative error 1.4e-8); |x| is clamped to 5 (tanh(5)
// rounds to 1 in float16; so do infinities; a NaN stays), and the sign is copied back, so -0.0
// and tiny values come back as they were.
// The kernels of HalfRoundedMath ($N: name, $F: float32 vector, $I: int32 vector): sixteen
// lanes by AVX-512F, eight by AVX2 (no vscalefps there, and no FMA assumed).
const char* const kExpToHalfAvx512 = R"(static inline $F $N($F x) {
  $F z = ($F){0};
  x = __builtin_ia32_minps512_mask(z + 11.5f, x, z, 0xffff, 4);
  x = __builtin_ia32_maxps512_mask(z - 17.5f, x, z, 0xffff, 4);
  $F n = __builtin_ia32_rndscaleps_mask(x * 1.44269504088896341f, 8, z, 0xffff, 4);
  $F r = __builtin_ia32_vfmaddps512_mask(-n, z + 0.693147182464599609375f, x, 0xffff, 4);
  $F p = r * 0.008333754725754261f + 0.04189851135015488f;
  p = p * r + 0.1666688770055771f;
  p = p * r + 0.49999144673347473f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  return __builtin_ia32_scalefps512_mask(p, n, z, 0xffff, 4);
}
)";
const char* const kTanhToHalfAvx512 = R"(static inline $F $N($F x) {
  $F z = ($F){0};
  $I bits = ($I)x;
  $F a = __builtin_ia32_minps512_mask(z + 5.0f, ($F)(bits & 0x7fffffff), z, 0xffff, 4);
  $F y = a + a;
  $F n = __builtin_ia32_rndscaleps_mask(y * 1.44269504088896341f, 8, z, 0xffff, 4);
  $F r = __builtin_ia32_vfmaddps512_mask(-n, z + 0.693147182464599609375f, y, 0xffff, 4);
  $F p = r * 0.0013858656166121364f + 0.00836667139083147f;
  p = p * r + 0.04166758805513382f;
  p = p * r + 0.16666541993618011f;
  p = p * r + 0.4999999701976776f;
  $F e = (p * r) * r + r;
  $F s = __builtin_ia32_scalefps512_mask(z + 1.0f, n, z, 0xffff, 4);
  $F m = s * e + (s - 1.0f);
  $F t = m / (m + 2.0f);
  return ($F)(($I)t | (bits & ~0x7fffffff));
}
)";
const char* const kExpToHalfAvx2 = R"(static inline $F $N($F x) {
  $F z = ($F){0};
  x = __builtin_ia32_minps256(z + 11.5f, x);
  x = __builtin_ia32_maxps256(z - 17.5f, x);
  $F n = __builtin_ia32_roundps256(x * 1.44269504088896341f, 8);
  $F r = x - n * 0.693145751953125f;
  r = r - n * 1.428606765330187e-06f;
  $F p = r * 0.008333754725754261f + 0.04189851135015488f;
  p = p * r + 0.1666688770055771f;
  p = p * r + 0.49999144673347473f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  return p * ($F)((__builtin_convertvector(n, $I) + 127) << 23);
}
)";
const char* const kTanhToHalfAvx2 = R"(static inline $F $N($F x) {
  $F z = ($F){0};
  $I bits = ($I)x;
  $F a = __builtin_ia32_minps256(z + 5.0f, ($F)(bits & 0x7fffffff));
  $F y = a + a;
  $F n = __builtin_ia32_roundps256(y * 1.44269504088896341f, 8);
  $F r = y - n * 0.693145751953125f;
  r = r - n * 1.428606765330187e-06f;
  $F p = r * 0.0013858656166121364f + 0.00836667139083147f;
  p = p * r + 0.04166758805513382f;
  p = p * r + 0.16666541993618011f;
  p = p * r + 0.4999999701976776f;
  $F e = (p * r) * r + r;
  $F s = ($F)((__builtin_convertvector(n, $I) + 127) << 23);
  $F m = s * e + (s - 1.0f);
  $F t = m / (m + 2.0f);
  return ($F)(($I)t | (bits & ~0x7fffffff));
}
)";

std::string CodeGenHost::HalfRoundedMath(const std::string& fname, const std::string& arg,
                                         DataType t, const Span& span) {
  bool is_exp = fname == "expf";
  // logf, log2f, log10f, ...: an AVX-512 kernel (vector_math.h) and no AVX2 one
  bool has_avx2 = fname == "expf" || fname == "tanhf";
  std::string ft = TypeName(t, span);
  std::string name = "tessera_" + fname + "_to_half_" + ft.substr(8);
  if (helper_names_.count(name)) return name + "(" + arg + ")";
  auto kernel = [&](const std::string& kname, const char* source, const std::string& guard,
                    int lanes) {
    std::string c = source;
    for (auto [key, value] : {std::pair<std::string, std::string>{"$N", kname},
                              {"$F", TypeName(DataType::Float(32, lanes), span)},
                              {"$I", TypeName(DataType::Int(32, lanes), span)}}) {
      for (size_t at = c.find(key); at != std::string::npos; at = c.find(key, at + value.size()))
        c.replace(at, key.size(), value);
    }
    Helper(kname, "#if " + guard + "\n" + c + "#endif\n");
  };
  std::string gcc = " && defined(__GNUC__) && !defined(__clang__)";
  std::string k16 = "tessera_" + fname + "_to_half_avx512";
  std::string k8 = "tessera_" + fname + "_to_half_avx2";
  std::string avx512 = has_avx2 ? (is_exp ? kExpToHalfAvx512 : kTanhToHalfAvx512)
                                : codegen::HalfPrecisionAvx512Source(fname);
  kernel(k16, avx512.c_str(), "defined(__AVX512F__)" + gcc, 16);
  if (has_avx2) kernel(k8, is_exp ? kExpToHalfAvx2 : kTanhToHalfAvx2, "defined(__AVX2__)" + gcc, 8);
  if (fname == "tanhf") Helper("tessera_tanhf", kTanhfSource);
  // elsewhere the lane loop of the float32 function: ours where we have one (vector_math.h)
  std::string lane_fn = fname == "tanhf" ? "tessera_tanhf" : fname;
  auto lane_kernels = codegen::VectorFloatMathKernels(fname);
  for (const auto& [kname, definition] : lane_kernels) Helper(kname, definition);
  if (!lane_kernels.empty()) lane_fn = lane_kernels.back().first;
  int lanes = t.lanes();
  auto indices = [](int begin, int count) {
    std::string s;
    for (int i = 0; i < count; ++i) s += ", " + std::to_string(begin + i);
    return s;
  };
  // The kernel on pieces of `piece` lanes, joined back by shuffles.
  auto pieces = [&](int piece, const std::string& kernel) {
    std::ostringstream os;
    std::vector<std::string> parts;
    std::string pt = TypeName(t.with_lanes(piece), span);
    for (int k = 0; k < lanes / piece; ++k) {
      std::string in =
          lanes == piece ? "x" : "__builtin_shufflevector(x, x" + indices(piece * k, piece) + ")";
      parts.push_back("p" + std::to_string(k));
      os << "  " << pt << " " << parts.back() << " = " << kernel << "(" << in << ");\n";
    }
    for (int width = piece, level = 0; static_cast<int>(parts.size()) > 1; width *= 2, ++level) {
      std::vector<std::string> joined;
      std::string jt = TypeName(t.with_lanes(width * 2), span);
      for (size_t k = 0; k + 1 < parts.size(); k += 2) {
        joined.push_back("j" + std::to_string(level) + "_" + std::to_string(k / 2));
        os << "  " << jt << " " << joined.back() << " = __builtin_shufflevector(" << parts[k]
           << ", " << parts[k + 1] << indices(0, width * 2) << ");\n";
      }
      parts = joined;
    }
    os << "  return " << parts[0] << ";\n";
    return os.str();
  };
  std::ostringstream os;
  os << "static inline " << ft << " " << name << "(" << ft << " x) {\n";
  if (lanes % 16 == 0) {
    os << "#if defined(__AVX512F__)" << gcc << "\n" << pieces(16, k16);
    if (has_avx2) os << "#elif defined(__AVX2__)" << gcc << "\n" << pieces(8, k8);
  } else {
    os << "#if defined(__AVX2__)" << gcc << "\n" << pieces(8, k8);
  }
  os << "#else\n"
     << "  " << ft << " r;\n"
     << "  for (int i = 0; i < " << lanes << "; ++i) r[i] = " << lane_fn << "(x[i]);\n"
     << "  return r;\n"
     << "#endif\n"
     << "}\n";
  Helper(name, os.str());
  return name + "(" + arg + ")";
}

std::string CodeGenHost::PrintVectorCast(const CastNode* op) {
  DataType to = op->dtype, from = op->value->dtype;
  // float16(expf(x)) and float16(tanhf(x)) of float32 lanes: the float16-accurate kernels.
  auto* call = AsPtr<CallNode>(op->value);
  auto* fname = call != nullptr && call->is_op("tir.call_pure_extern") && call->args.size() == 2
                    ? AsPtr<StringImmNode>(call->args[0])
                    : nullptr;
  // float16(logf(x)), log2f, log10f: AVX-512 kernels of sixteen lanes (vector_math.h).
  bool exp_tanh = fname != nullptr && (fname->value == "expf" || fname->value == "tanhf");
  bool avx512_only =
      fname != nullptr && !exp_tanh && !codegen::HalfPrecisionAvx512Source(fname->value).empty();
  if ((exp_tanh || avx512_only) && to.is_float() && to.bits() == 16 && !to.is_bfloat16() &&
      to.lanes() >= 8 && to.lanes() <= 64 && to.lanes() % (avx512_only ? 16 : 8) == 0 &&
      from == DataType::Float(32, to.lanes()) && call->args[1]->dtype == from) {
    return HalfConvert(HalfRoundedMath(fname->value, PrintExpr(call->args[1]), from, op->span),
                       from, to, op->span);
  }
  std::string v = PrintExpr(op->value);
  if (to.is_bool() && from.is_bool()) return v;
  if (to.is_bool()) {
    std::string zero = "(" + TypeName(from, op->span) + "){0}";
    return ToMask32("(" + v + " != " + zero + ")", from.bits(), from.lanes(), op->span);
  }
  if (from.is_bool() && (to.is_int() || to.is_uint())) {
    // A bool stored in a byte (or any integer): the mask printed at the integer's width and
    // negated (lane masks are -1/0), where a 32-bit mask converted down took a bool or int8
    // reduction's vectors through four times as many lanes (topi.any of 2048 x 2048 bools,
    // `B = B || A` in bytes, one thread: 3.7 ms).
    return "__builtin_convertvector((-" + PrintMask(op->value, to.bits()) + "), " +
           TypeName(to, op->span) + ")";
  }
  if (from.is_bool()) v = "(-" + v + ")";  // lane masks are -1/0
  bool half_float = from.is_float() && to.is_float() && !from.is_bfloat16() && !to.is_bfloat16() &&
                    from.bits() + to.bits() == 48;
  if (half_float && to.lanes() >= 8 && to.lanes() <= 64) return HalfConvert(v, from, to, op->span);
  if (!from.is_bool() && !to.is_bool() && !from.is_bfloat16() && !to.is_bfloat16()) {
    bool int_from = from.is_int() || from.is_uint(), int_to = to.is_int() || to.is_uint();
    if ((int_from && int_to && from.bits() != to.bits()) ||
        (int_from && to.is_float() && from.bits() < 32 && to.bits() >= 32) ||
        (int_to && from.is_float() && to.bits() < 32 && from.bits() >= 32)) {
      return IntWidthConvert(v, from, to, op->span);
    }
  }
  return "__builtin_convertvector(" + v + ", " + TypeName(to, op->span) + ")";
}

// vcvtph2ps / vcvtps2ph (immediate 4: the current rounding mode, as a C conversion rounds) on
// sixteen lanes at a time where AVX-512F has the 512-bit forms, else eight (F16C), the pieces
// taken and joined with shuffles that stay in registers; the same values as
// __builtin_convertvector, which GCC 12 without AVX512-FP16 prints as one scalar conversion per
// lane, with inserts and extracts around it. One 512-bit conversion in place of two 256-bit ones
// and their shuffles: a float16 -> float32 -> float16 round trip of 2048 x 2048 lanes on one
// thread of a Zen 4 took 0.48 ms by eights and 0.25 ms by sixteens.
std::string CodeGenHost::HalfConvert(const std::string& value, DataType from, DataType to,
                                     const Span& span) {
  std::string ft = TypeName(from, span), tt = TypeName(to, span);
  std::string name = "tessera_convert_" + ft.substr(8) + "_" + tt.substr(8);
  if (!helper_names_.count(name)) {
    bool widen = from.bits() == 16;
    auto indices = [](int begin, int count) {
      std::string s;
      for (int i = 0; i < count; ++i) s += ", " + std::to_string(begin + i);
      return s;
    };
    int lanes = to.lanes();
    // The body converting pieces of `piece` lanes.
    auto body = [&](int piece_lanes) {
      std::string half = TypeName(DataType::Int(16, piece_lanes), span);
      std::string single = TypeName(DataType::Float(32, piece_lanes), span);
      std::string to_piece = TypeName(to.with_lanes(piece_lanes), span);
      std::ostringstream os;
      std::vector<std::string> parts;
      for (int k = 0; k < lanes / piece_lanes; ++k) {
        std::string piece = lanes == piece_lanes ? "a0"
                                                 : "__builtin_shufflevector(a0, a0" +
                                                       indices(piece_lanes * k, piece_lanes) + ")";
        std::string p = "p" + std::to_string(k);
        os << "  " << to_piece << " " << p << " = ";
        if (piece_lanes == 16 && widen) {
          os << "__builtin_ia32_vcvtph2ps512_mask((" << half << ")" << piece << ", (" << single
             << "){0}, 0xffff, 4);\n";
        } else if (piece_lanes == 16) {
          os << "(" << to_piece << ")__builtin_ia32_vcvtps2ph512_mask((" << single << ")" << piece
             << ", 4, (" << half << "){0}, 0xffff);\n";
        } else if (widen) {
          os << "__builtin_ia32_vcvtph2ps256((" << half << ")" << piece << ");\n";
        } else {
          os << "(" << to_piece << ")__builtin_ia32_vcvtps2ph256((" << single << ")" << piece
             << ", 4);\n";
        }
        parts.push_back(p);
      }
      // Join neighbours until one vector of all the lanes is left.
      for (int width = piece_lanes, level = 0; static_cast<int>(parts.size()) > 1;
           width *= 2, ++level) {
        std::vector<std::string> joined;
        std::string jt = TypeName(to.with_lanes(width * 2), span);
        for (size_t k = 0; k + 1 < parts.size(); k += 2) {
          std::string j = "j" + std::to_string(level) + "_" + std::to_string(k / 2);
          os << "  " << jt << " " << j << " = __builtin_shufflevector(" << parts[k] << ", "
             << parts[k + 1] << indices(0, width * 2) << ");\n";
          joined.push_back(j);
        }
        parts = joined;
      }
      os << "  return " << parts[0] << ";\n";
      return os.str();
    };
    std::ostringstream os;
    os << "static inline " << tt << " " << name << "(" << ft << " a0) {\n";
    if (lanes % 16 == 0)
      os << "#if defined(__AVX512F__)\n" << body(16) << "#elif defined(__F16C__)\n";
    else
      os << "#if defined(__F16C__)\n";
    os << body(8) << "#else\n"
       << "  return __builtin_convertvector(a0, " << tt << ");\n"
       << "#endif\n"
       << "}\n";
    Helper(name, os.str());
  }
  return name + "(" + value + ")";
}

// GCC 12 has no single pattern for most of these conversions (no vector conversion between a
// byte or a halfword and a float; integer widths four or eight times apart) and lowers them lane
// by lane; where the operand is a vector just loaded, it then loads the lanes one by one into
// general registers and converts or inserts each (bench_topi cast to float32 of int8 and uint8,
// 16 lanes, ran at 0.35x numpy). With the operand held in a vector register (an empty asm, see
// TESSERA_KEEP_IN_REGISTER in runtime.h) the same lowering is matched back to one instruction
// (vpmovsxbd, vpmovzxbd, vpmovdb, vpmovqb). Integers of 8 or 16 bits and floats convert through
// int32 lanes, whose conversions to and from float32 and float64 are instructions (vcvtdq2ps,
// vcvttps2dq, vcvtdq2pd, vcvttpd2dq), with the same values: every such integer is an int32, and
// a float in the narrow type's range converts to the same int32. Operands wider than one
// AVX-512 register (the asm would need a register that size) are converted as they are.
std::string CodeGenHost::IntWidthConvert(const std::string& value, DataType from, DataType to,
                                         const Span& span) {
  std::string ft = TypeName(from, span), tt = TypeName(to, span);
  std::string name = "tessera_convert_" + ft.substr(8) + "_" + tt.substr(8);
  if (!helper_names_.count(name)) {
    bool through32 = from.is_float() || to.is_float();
    int bytes = from.bytes();
    std::ostringstream os;
    os << "static inline " << tt << " " << name << "(" << ft << " a0) {\n";
    if (bytes >= 8 && bytes <= 64) {
      os << "  TESSERA_KEEP_IN_REGISTER" << (bytes <= 16 ? 128 : bytes * 8) << "(a0);\n";
    }
    std::string v = "a0";
    if (through32) {
      v = "__builtin_convertvector(a0, " + TypeName(DataType::Int(32, from.lanes()), span) + ")";
    }
    os << "  return __builtin_convertvector(" << v << ", " << tt << ");\n}\n";
    Helper(name, os.str());
  }
  return name + "(" + value + ")";
}

std::string CodeGenHost::VisitExpr_(const RampNode* op) {
  DataType t = op->dtype;
  std::string vt = TypeName(t, op->span);
  std::string name = LaneLoopHelper("tessera_ramp_" + vt.substr(8), t,
                                    {t.element_of(), t.element_of()}, "a0 + i * a1", op->span);
  return name + "(" + PrintExpr(op->base) + ", " + PrintExpr(op->stride) + ")";
}

// A vector of one value written as an initializer of its lanes: GCC makes one broadcast
// instruction of it, where the lane loop of LaneLoopHelper also stored the vector to the stack
// in every iteration of a loop that broadcasts a loaded value (broadcast_to a column of int8:
// two stores a vector instead of one).
// `first`, when given, is a statement that defines a0 from the parameter.
static std::string SplatDefinition(const std::string& name, const std::string& vt, int lanes,
                                   const std::string& param, const std::string& first = "") {
  std::ostringstream def;
  def << "static inline " << vt << " " << name << "(" << param << ") {\n";
  if (!first.empty()) def << "  " << first << "\n";
  def << "  return (" << vt << "){";
  for (int i = 0; i < lanes; ++i) def << (i ? ", " : "") << "a0";
  def << "};\n}\n";
  return def.str();
}

std::string CodeGenHost::VisitExpr_(const BroadcastNode* op) {
  DataType t = op->dtype;
  std::string vt = TypeName(t, op->span);
  if (t.is_float() && !t.is_bfloat16() && t.bits() == 16) {
    // float16: the bits broadcast as int16 (one vpbroadcastw), where GCC 12 without
    // AVX512-FP16 assembled the _Float16 lanes through general-purpose registers and the stack
    // for every vector (broadcast_to of a 2048 x 1 float16 column to 2048 x 2048, one thread:
    // 1.72 ms, numpy 0.18).
    std::string name = "tessera_broadcast_" + vt.substr(8);
    if (!helper_names_.count(name)) {
      std::string it = TypeName(DataType::Int(16, t.lanes()), op->span);
      std::ostringstream os;
      os << "static inline " << vt << " " << name << "(_Float16 a0) {\n  int16_t b;\n"
         << "  memcpy(&b, &a0, sizeof(b));\n  " << it << " w = b - (" << it << "){0};\n  " << vt
         << " r;\n  memcpy(&r, &w, sizeof(r));\n  return r;\n}\n";
      Helper(name, os.str());
    }
    return name + "(" + PrintExpr(op->value) + ")";
  }
  if (!t.is_bool() && !t.is_scalable_vector()) {
    std::string name = "tessera_broadcast_" + vt.substr(8);
    std::string et = TypeName(t.element_of(), op->span);
    return Helper(name, SplatDefinition(name, vt, t.lanes(), et + " a0")) + "(" +
           PrintExpr(op->value) + ")";
  }
  std::string lane = t.is_bool() ? "(a0 ? -1 : 0)" : "a0";
  std::string name =
      LaneLoopHelper("tessera_broadcast_" + std::string(t.is_bool() ? "mask" : "") + vt.substr(8),
                     t, {t.element_of()}, lane, op->span);
  return name + "(" + PrintExpr(op->value) + ")";
}

// A Shuffle (a concatenation, extraction or permutation of lanes with constant indices): a
// helper taking the vectors (scalars count as one lane) and filling the result lane by lane.
std::string CodeGenHost::VisitExpr_(const ShuffleNode* op) {
  std::vector<std::pair<size_t, int>> lanes;  // the (vector, lane) of each concatenated lane
  std::vector<DataType> types;
  for (size_t v = 0; v < op->vectors.size(); ++v) {
    DataType t = op->vectors[v]->dtype;
    if (t.is_scalable_vector()) Unsupported("a Shuffle of scalable vectors", op->span);
    types.push_back(t);
    for (int l = 0; l < t.lanes(); ++l) lanes.emplace_back(v, l);
  }
  auto lane = [&](const Expr& index) {
    const auto* k = AsPtr<IntImmNode>(index);
    if (k == nullptr) Unsupported("a Shuffle with a non-constant index", op->span);
    if (k->value < 0 || k->value >= static_cast<int64_t>(lanes.size())) {
      Unsupported("a Shuffle index out of range (" + std::to_string(k->value) + " of " +
                      std::to_string(lanes.size()) + " lanes)",
                  op->span);
    }
    auto [v, l] = lanes[k->value];
    std::string a = "a" + std::to_string(v);
    return types[v].is_scalar() ? a : a + "[" + std::to_string(l) + "]";
  };
  if (op->dtype.is_scalar() && op->indices.size() != 1) {
    Unsupported("a Shuffle of " + std::to_string(op->indices.size()) + " indices to a scalar",
                op->span);
  }
  std::ostringstream sig, body;
  std::string rt = TypeName(op->dtype, op->span);
  for (size_t i = 0; i < types.size(); ++i) sig << "_" << types[i].ToString();
  for (const Expr& index : op->indices) {
    lane(index);  // checks the index
    sig << "_" << AsPtr<IntImmNode>(index)->value;
  }
  std::string name = "tessera_shuffle_" + op->dtype.ToString() + sig.str();
  if (!helper_names_.count(name)) {
    body << "static inline " << rt << " " << name << "(";
    for (size_t i = 0; i < types.size(); ++i) {
      body << (i ? ", " : "") << TypeName(types[i], op->span) << " a" << i;
    }
    body << ") {\n  " << rt << " r;\n";
    if (op->dtype.is_scalar()) {
      body << "  r = " << lane(op->indices[0]) << ";\n";
    } else {
      for (size_t i = 0; i < op->indices.size(); ++i) {
        body << "  r[" << i << "] = " << lane(op->indices[i]) << ";\n";
      }
    }
    body << "  return r;\n}\n";
    Helper(name, body.str());
  }
  std::string call = name + "(";
  for (size_t i = 0; i < op->vectors.size(); ++i)
    call += (i ? ", " : "") + PrintExpr(op->vectors[i]);
  return call + ")";
}

std::string CodeGenHost::VisitExpr_(const CallNode* op) {
  if (op->is_op("tir.tvm_call_trace_packed")) return PrintTracePacked(op);
  if (op->is_op("tir.tvm_call_packed")) {
    // As a value (te.compute(..., lambda: tir.call_packed(...))): the call runs before the
    // statement that uses it, and a failure returns; its value is the return code, 0.
    VisitStmt(EvaluateNode::Make(GetRef(op), op->span));
    return "0";
  }
  // A register-tile micro-kernel (the tessera_ukr_f32_* tensor intrinsics): its definition
  // once per module, before the functions.
  if (op->is_op("tir.call_extern") && !op->args.empty()) {
    if (auto* fname = AsPtr<StringImmNode>(op->args[0])) {
      if (auto tile = codegen::ParseMicroKernelName(fname->value)) {
        Helper(fname->value, codegen::MicroKernelSource(tile->first, tile->second));
      }
      // the one-pass argmax / argmin row search (tir.ArgExtremeRows)
      if (auto row = codegen::ParseArgExtremeRowName(fname->value)) {
        Helper(fname->value, codegen::ArgExtremeRowSource(fname->value, *row));
      }
      // the row sort of topi.sort / argsort / topk (tir.SortRows)
      if (auto row = codegen::ParseSortRowName(fname->value)) {
        Helper(fname->value, codegen::SortRowSource(fname->value, *row));
      }
    }
  }
  // A C library function applied to vectors: once per lane.
  if (op->dtype.is_vector() &&
      (op->is_op("tir.call_pure_extern") || op->is_op("tir.call_extern"))) {
    auto* fname = op->args.empty() ? nullptr : AsPtr<StringImmNode>(op->args[0]);
    if (fname == nullptr) Unsupported("an extern call without a function name", op->span);
    // With libmvec the lane loop of expf itself vectorizes (accurate to an ulp): no need to
    // trade accuracy for speed.
    if (fast_math_depth_ > 0 && !HaveLibmvec() && fname->value == "expf" && op->args.size() == 2 &&
        op->dtype.is_float() && op->dtype.bits() == 32) {
      // exp(x) = 2^n * p(r), n = rint(x / ln 2), r = x - n ln 2 (two-part ln 2), p a degree-6
      // polynomial: about 2 ulp on [-87, 88]; inputs outside are clamped to it (no infinities,
      // no denormals). Branch-free lanes, so the C compiler vectorizes the lane loop.
      Helper("tessera_fast_expf",
             "static inline float tessera_fast_expf(float x) {\n"
             "  x = x < 88.0f ? x : 88.0f;\n  x = x > -87.0f ? x : -87.0f;\n"
             "  float n = __builtin_rintf(x * 1.44269504088896341f);\n"
             "  float r = x - n * 0.693359375f;\n  r = r + n * 2.12194440e-4f;\n"
             "  float p = 1.9875691500e-4f;\n  p = p * r + 1.3981999507e-3f;\n"
             "  p = p * r + 8.3334519073e-3f;\n  p = p * r + 4.1665795894e-2f;\n"
             "  p = p * r + 1.6666665459e-1f;\n  p = p * r + 5.0000001201e-1f;\n"
             "  p = p * r * r + r + 1.0f;\n"
             "  int32_t e = ((int32_t)n + 127) << 23;\n  float s;\n"
             "  memcpy(&s, &e, sizeof(s));\n  return p * s;\n}\n");
      std::string vt = TypeName(op->dtype, op->span);
      std::string name = LaneLoopHelper("tessera_fast_expf_" + vt.substr(8), op->dtype,
                                        {op->args[1]->dtype}, "tessera_fast_expf(a0[i])", op->span);
      return name + "(" + PrintExpr(op->args[1]) + ")";
    }
    if (fname->value == "tanhf" && op->args.size() == 2 && op->dtype.is_float() &&
        op->dtype.bits() == 32) {
      // Our own tanhf, faster than libmvec's (bench_topi tanh, 2048 x 2048 float32, one
      // thread of an AVX-512 Zen 4: 1.75 -> 1.45 ms, numpy 1.52; by hand in C, 8-lane AVX2
      // code on the same host: 2.0 ms against libmvec's 3.0) and within 2 ulp of the
      // correctly rounded result over every float (libmvec: 1). tanh(a) = m / (m + 2) with
      // m = expm1(2a) = 2^n (expm1(r) + 1) - 1, n = rint(2a / ln 2), r = 2a - n ln 2 (ln 2 in
      // two parts, |r| <= ln 2 / 2), expm1(r) = r + r^2 p(r), p of degree 5 fitted for this
      // (relative error 2e-9). |x| is clamped to 9.1, where tanh rounds to 1, as an integer
      // minimum of its bits (a float comparison with a constant makes GCC split the lanes
      // into paths, which AVX2 cannot vectorize); a NaN, clamped too, is put back at the end.
      // The sign is copied back, so -0.0 and tiny values come back as they were, infinities
      // as +-1. x86 without AVX2 (no vector code measured there) keeps the C library's.
      Helper("tessera_tanhf", kTanhfSource);
      std::string vt = TypeName(op->dtype, op->span);
      std::string name = LaneLoopHelper("tessera_tanhf_" + vt.substr(8), op->dtype,
                                        {op->args[1]->dtype}, "tessera_tanhf(a0[i])", op->span);
      return name + "(" + PrintExpr(op->args[1]) + ")";
    }
    if ((fname->value == "powf" || fname->value == "pow") && op->args.size() == 3 &&
        op->dtype.is_float() && !op->dtype.is_bfloat16() &&
        op->dtype.bits() == (fname->value == "powf" ? 32 : 64) &&
        op->dtype.lanes() % (512 / op->dtype.bits()) == 0 && op->args[1]->dtype == op->dtype &&
        op->args[2]->dtype == op->dtype) {
      // powf / pow by 512-bit vectors with AVX-512F (vector_math.h), the lane loop elsewhere.
      int bits = op->dtype.bits(), per = 512 / bits, lanes = op->dtype.lanes();
      std::string vt = TypeName(op->dtype, op->span);
      // (not the lane loop helper's name, which a call with a scalar exponent may take)
      std::string name = "tessera_" + fname->value + "_avx512_" + vt.substr(8);
      if (!helper_names_.count(name)) {
        std::string fv = TypeName(DataType::Float(bits, per), op->span);
        std::string kernel = "tessera_" + fname->value + "_avx512";
        std::string guard =
            "#if defined(__AVX512F__) && defined(__GNUC__) && !defined(__clang__)\n";
        Helper(kernel,
               guard +
                   PowAvx512Source(bits, kernel, fv, TypeName(DataType::Int(bits, per), op->span)) +
                   "#endif\n");
        // always inline, as the kernel: out of line, each vector paid a call and reloaded the
        // kernel's constants (vector_math.cc, kPowfAvx512)
        std::ostringstream os;
        os << "static inline __attribute__((always_inline)) " << vt << " " << name << "(" << vt
           << " a0, " << vt << " a1) {\n"
           << "  " << vt << " r;\n"
           << guard << "  for (int k = 0; k < " << lanes / per << "; ++k) {\n"
           << "    " << fv << " x, y, p;\n"
           << "    memcpy(&x, (const char*)&a0 + 64 * k, 64);\n"
           << "    memcpy(&y, (const char*)&a1 + 64 * k, 64);\n"
           << "    p = " << kernel << "(x, y);\n"
           << "    memcpy((char*)&r + 64 * k, &p, 64);\n"
           << "  }\n#else\n"
           << "  for (int i = 0; i < " << lanes << "; ++i) r[i] = " << fname->value
           << "(a0[i], a1[i]);\n"
           << "#endif\n  return r;\n}\n";
        Helper(name, os.str());
      }
      return name + "(" + PrintExpr(op->args[1]) + ", " + PrintExpr(op->args[2]) + ")";
    }
    if (op->args.size() == 2 && op->dtype.is_float() && op->dtype.bits() == 32 &&
        !op->dtype.is_bfloat16() && op->args[1]->dtype == op->dtype) {
      // atanf, acosf, acoshf: our polynomials, faster than libmvec's (vector_math.h)
      auto kernels = VectorFloatMathKernels(fname->value);
      if (!kernels.empty()) {
        for (const auto& [kname, definition] : kernels) Helper(kname, definition);
        const std::string& kname = kernels.back().first;
        std::string vt = TypeName(op->dtype, op->span);
        std::string name = LaneLoopHelper(kname + "_" + vt.substr(8), op->dtype, {op->dtype},
                                          kname + "(a0[i])", op->span);
        return name + "(" + PrintExpr(op->args[1]) + ")";
      }
    }
    std::vector<DataType> types;
    std::string lane = fname->value + "(", call;
    for (size_t i = 1; i < op->args.size(); ++i) {
      DataType t = op->args[i]->dtype;
      types.push_back(t);
      lane += (i > 1 ? ", a" : "a") + std::to_string(i - 1) + (t.is_vector() ? "[i]" : "");
      call += (i > 1 ? ", " : "") + PrintExpr(op->args[i]);
    }
    lane += ")";
    std::string vt = TypeName(op->dtype, op->span);
    std::string name = LaneLoopHelper("tessera_" + SanitizeName(fname->value) + "_" + vt.substr(8),
                                      op->dtype, types, lane, op->span);
    return name + "(" + call + ")";
  }
  return CodeGenC::VisitExpr_(op);
}

// ---------------------------------------------------------------------------------------------
// Vector memory access
// ---------------------------------------------------------------------------------------------

// float16 lanes read or written one at a time (a strided access, a gather, a scatter) move as
// their int16 bits: GCC 12 without AVX512-FP16 assembled a vector of _Float16 lanes in
// general-purpose registers and the stack (a 64-bit store per four lanes, then one vector load:
// a store-forwarding stall per vector), where it inserts int16 lanes into a vector register
// (vpinsrw). layout_transform NCHW -> NHWC of 4 x 64 x 112 x 112, one thread of a Zen 4: float16
// 1.8-2.2 ms against int16's 0.8-1.4 ms with the same loop.
static bool IsHalfBits(DataType elem) {
  return elem.is_float() && !elem.is_bfloat16() && elem.bits() == 16 && !elem.is_vector();
}

// The body of a float16 lane loop reading p[<at>] (i the lane) into `r` through int16 bits.
std::string CodeGenHost::HalfLanesIn(DataType t, const std::string& at, const Span& span) {
  std::string it = TypeName(DataType::Int(16, t.lanes()), span);
  std::ostringstream os;
  os << "  const int16_t* q = (const int16_t*)p;\n  " << it << " w;\n  for (int i = 0; i < "
     << t.lanes() << "; ++i) w[i] = q[" << at << "];\n  memcpy(&r, &w, sizeof(r));\n";
  return os.str();
}

// The body of a float16 lane loop writing the lanes of `v` to p[<at>] through int16 bits.
std::string CodeGenHost::HalfLanesOut(DataType t, const std::string& at, const Span& span) {
  std::string it = TypeName(DataType::Int(16, t.lanes()), span);
  std::ostringstream os;
  os << "  int16_t* q = (int16_t*)p;\n  " << it << " w;\n  memcpy(&w, &v, sizeof(w));\n"
     << "  for (int i = 0; i < " << t.lanes() << "; ++i) q[" << at << "] = w[i];\n";
  return os.str();
}

std::string CodeGenHost::PrintVectorLoad(const BufferLoadNode* op) {
  if (op->predicate) return PrintPredicatedLoad(op);
  if (!promoted_.empty()) {
    const Expr index = AsUnitRamp(FlatIndex(op->buffer.get(), op->indices, op->span));
    auto* ramp = AsPtr<RampNode>(index);
    auto base = ramp ? AsConstInt(ramp->base) : std::nullopt;
    if (base) {
      auto it = promoted_.find({op->buffer->data.get(), *base});
      if (it != promoted_.end()) return it->second;
    }
  }
  DataType t = op->dtype;
  DataType elem = op->buffer->dtype;
  if (elem.is_vector())
    Unsupported("a vector load from the vector buffer " + op->buffer->name, op->span);
  Expr index = AsUnitRamp(FlatIndex(op->buffer.get(), op->indices, op->span));
  std::string vt = TypeName(t, op->span);
  std::string st = CodeGenC::TypeName(elem, op->span);
  std::string lane = elem.is_bool() ? "(p[%] ? -1 : 0)" : "p[%]";
  auto lane_at = [&](const std::string& i) {
    std::string s = lane;
    return s.replace(s.find('%'), 1, i);
  };
  std::string ptr = BufferPointer(op->buffer.get(), op->span);
  std::ostringstream def;
  if (auto* ramp = AsPtr<RampNode>(index)) {
    std::string base = OffsetPointer(ptr, ramp->base);
    if (IsConstInt(ramp->stride, 1) && !elem.is_bool()) {
      std::string name = "tessera_load_" + vt.substr(8);
      def << "static inline " << vt << " " << name << "(const " << st << "* p) {\n  " << vt
          << " r;\n  memcpy(&r, p, sizeof(r));\n  return r;\n}\n";
      return Helper(name, def.str()) + "(" + base + ")";
    }
    if (IsConstInt(ramp->stride, 2) && !elem.is_bool() && t.lanes() % 2 == 0) {
      // Every second element (a slice with step 2): two overlapping vector loads that end at
      // the last element read, and one permutation of their lanes, where GCC otherwise reads
      // lane by lane through the stack. a holds p[0 .. L-1], b p[L-1 .. 2L-2]: lane k < L/2
      // is a[2k], lane k >= L/2 is p[2k] = b[2k - L + 1], index 2k + 1 of the pair.
      int lanes = t.lanes();
      std::string name = "tessera_load_stride2_" + vt.substr(8);
      def << "static inline " << vt << " " << name << "(const " << st << "* p) {\n  " << vt
          << " r;\n#if defined(__clang__) || __GNUC__ >= 12\n  " << vt << " a, b;\n"
          << "  memcpy(&a, p, sizeof(a));\n  memcpy(&b, p + " << lanes - 1
          << ", sizeof(b));\n  r = __builtin_shufflevector(a, b";
      for (int k = 0; k < lanes; ++k) def << ", " << (k < lanes / 2 ? 2 * k : 2 * k + 1);
      def << ");\n#else\n  for (int i = 0; i < " << lanes << "; ++i) r[i] = p[2 * i];\n#endif\n"
          << "  return r;\n}\n";
      return Helper(name, def.str()) + "(" + base + ")";
    }
    std::string name = "tessera_load_stride_" + vt.substr(8);
    def << "static inline " << vt << " " << name << "(const " << st << "* p, int64_t s) {\n  " << vt
        << " r;\n";
    if (IsHalfBits(elem)) {
      def << HalfLanesIn(t, "i * s", op->span);
    } else {
      def << "  for (int i = 0; i < " << t.lanes() << "; ++i) r[i] = " << lane_at("i * s") << ";\n";
    }
    def << "  return r;\n}\n";
    return Helper(name, def.str()) + "(" + base + ", " + PrintExpr(ramp->stride) + ")";
  }
  int64_t k = 0;
  if (Expr first = RepeatedRampBase(index, int_lets_, &k); first && !elem.is_bool()) {
    // Lane i reads element i / k of a run of lanes / k: the run loaded as one vector of its
    // own and its lanes repeated by one permutation (GCC read the lane loop element by element
    // through the stack: repeat 2 columns of 1024 x 1024 int8, 1.2 ms against numpy's 1.15).
    std::string name = "tessera_load_repeat" + std::to_string(k) + "_" + vt.substr(8);
    const int lanes = t.lanes();
    const int run = lanes / static_cast<int>(k);
    def << "static inline " << vt << " " << name << "(const " << st << "* p) {\n  " << vt
        << " r;\n";
    if (run >= 2 && !t.is_scalable_vector()) {
      std::string ht = TypeName(t.with_lanes(run), op->span);
      def << "#if defined(__clang__) || __GNUC__ >= 12\n  " << ht
          << " h;\n  memcpy(&h, p, sizeof(h));\n  r = __builtin_shufflevector(h, h";
      for (int i = 0; i < lanes; ++i) def << ", " << i / k;
      def << ");\n#else\n";
    }
    def << "  for (int i = 0; i < " << lanes << "; ++i) r[i] = p[i / " << k << "];\n";
    if (run >= 2 && !t.is_scalable_vector()) def << "#endif\n";
    def << "  return r;\n}\n";
    return Helper(name, def.str()) + "(" + OffsetPointer(ptr, first) + ")";
  }
  if (Expr at = LaneUniform(index)) {
    // Every lane reads the same element: one load, broadcast.
    std::string name = "tessera_load_splat_" + vt.substr(8);
    if (elem.is_bool()) {
      def << "static inline " << vt << " " << name << "(const " << st << "* p) {\n  " << vt
          << " r;\n  for (int i = 0; i < " << t.lanes() << "; ++i) r[i] = " << lane_at("0")
          << ";\n  return r;\n}\n";
    } else {
      def << SplatDefinition(name, vt, t.lanes(), "const " + st + "* p", st + " a0 = p[0];");
    }
    return Helper(name, def.str()) + "(" + OffsetPointer(ptr, at) + ")";
  }
  std::string it = TypeName(index->dtype, op->span);
  std::string name = "tessera_gather_" + vt.substr(8) + "_" + it.substr(8);
  def << "static inline " << vt << " " << name << "(const " << st << "* p, " << it << " idx) {\n  "
      << vt << " r;\n";
  if (IsHalfBits(elem)) {
    def << HalfLanesIn(t, "idx[i]", op->span);
  } else {
    def << "  for (int i = 0; i < " << t.lanes() << "; ++i) r[i] = " << lane_at("idx[i]") << ";\n";
  }
  def << "  return r;\n}\n";
  return Helper(name, def.str()) + "(" + ptr + ", " + PrintExpr(index) + ")";
}

// A predicated access of a (strided) Ramp of a scalar buffer: lane i reads p[i * s] where the
// mask is set and 0 elsewhere, or writes it only where the mask is set. Other forms (a gather,
// a bool or vector buffer) are refused.
const RampNode* CodeGenHost::PredicatedRamp(const BufferNode* buffer,
                                            const std::vector<Expr>& indices, const char* what,
                                            const Span& span, Expr* index) {
  *index = FlatIndex(buffer, indices, span);
  auto* ramp = AsPtr<RampNode>(*index);
  if (ramp == nullptr || buffer->dtype.is_vector() || buffer->dtype.is_bool()) {
    Unsupported(std::string("a predicated vector ") + what + " of " + buffer->name +
                    " other than a Ramp of a scalar non-bool buffer",
                span);
  }
  return ramp;
}

// The active lanes of tir.get_active_lane_mask(base, limit) on a contiguous access: the first
// `limit - base` lanes (a tile's last vector of columns, tir.VectorizeLoop's masked tails). With
// AVX-512 (VL for 8 lanes) a float32 access is one masked load or store (k-register mask); else
// a loop over the lanes.
namespace {
const CallNode* FirstLanesMask(const Expr& predicate, const RampNode* ramp) {
  auto* call = AsPtr<CallNode>(predicate);
  (void)ramp;
  if (call == nullptr || !call->is_op("tir.get_active_lane_mask") || call->args.size() != 2)
    return nullptr;
  return call;
}

std::string FirstLanesHelper(const std::string& name, const std::string& vt, const std::string& st,
                             DataType t, bool store, bool unit_stride) {
  const int lanes = t.lanes();
  // (A strided float32 load: one masked gather.)
  const bool f32 =
      (unit_stride || !store) && t.is_float() && t.bits() == 32 && (lanes == 8 || lanes == 16);
  // float64 vectors of 4 or 8 lanes, contiguous: one masked load or store too (the masked
  // register tile of a float64 conv2d on 7x7 / 14x14 outputs, whose lane loops took it to
  // 0.1-0.3x numpy on Zen 4).
  const bool f64 = unit_stride && t.is_float() && t.bits() == 64 && (lanes == 4 || lanes == 8);
  const std::string at = unit_stride ? "p[i]" : "p[i * s]";
  const std::string stride = unit_stride ? "" : ", int64_t s";
  const std::string w = t.bits() * lanes == 512 ? "512" : "256";
  const std::string mask_t = lanes == 16 ? "__mmask16" : "__mmask8";
  const std::string ps = f64 ? "pd" : "ps", reg = f64 ? "d" : "";
  std::ostringstream def;
  if (f32 || f64)
    def << "#if defined(__AVX512F__) && defined(__AVX512VL__)\n#include <immintrin.h>\n#endif\n";
  if (store) {
    def << "static inline void " << name << "(" << st << "* p" << stride << ", int64_t n, " << vt
        << " v) {\n";
  } else {
    def << "static inline " << vt << " " << name << "(const " << st << "* p" << stride
        << ", int64_t n) {\n";
  }
  if (f32 || f64) {
    def << "#if defined(__AVX512F__) && defined(__AVX512VL__)\n  " << mask_t << " m = (" << mask_t
        << ")(n <= 0 ? 0 : n >= " << lanes << " ? ~0u : (1u << n) - 1u);\n";
    if (store) {
      def << "  _mm" << w << "_mask_storeu_" << ps << "(p, m, (__m" << w << reg << ")v);\n";
    } else if (unit_stride) {
      def << "  return (" << vt << ")_mm" << w << "_maskz_loadu_" << ps << "(m, p);\n";
    } else {
      const std::string iv = lanes == 16 ? "__m512i" : "__m256i";
      const std::string ip = lanes == 16 ? "_mm512" : "_mm256";
      def << "  " << iv << " idx = " << ip << "_mullo_epi32(" << ip << "_setr_epi32(";
      for (int i = 0; i < lanes; ++i) def << (i ? ", " : "") << i;
      def << "), " << ip << "_set1_epi32((int)s));\n";
      if (lanes == 16) {
        def << "  return (" << vt
            << ")_mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, idx, p, 4);\n";
      } else {
        def << "  return (" << vt
            << ")_mm256_mmask_i32gather_ps(_mm256_setzero_ps(), m, idx, p, 4);\n";
      }
    }
    def << "#else\n";
  }
  if (store) {
    def << "  for (int i = 0; i < " << lanes << "; ++i) {\n    if (i < n) " << at
        << " = v[i];\n  }\n";
  } else {
    def << "  " << vt << " r = {0};\n  for (int i = 0; i < " << lanes
        << "; ++i) {\n    if (i < n) r[i] = " << at << ";\n  }\n  return r;\n";
  }
  if (f32 || f64) def << "#endif\n";
  def << "}\n";
  return def.str();
}
}  // namespace

// A masked vector access of a stack array (a reduction's vector of partial results, whose
// last partial vector of a row is added under a mask of its first lanes) whose whole vector lies
// in the array: read and written whole, the inactive lanes keeping their old values (a blend),
// so that the C compiler keeps the array in a register. A masked store to it and the whole
// vector loads after it missed store-to-load forwarding at every row (a global max pool of
// (4, 1024, 7, 7) float32, rows of 3 vectors and 1 element, AVX-512, one thread: 0.046 ms
// masked, 0.015 whole).
std::string CodeGenHost::WholeVectorOfStackArray(const BufferNode* buffer, const RampNode* ramp,
                                                 DataType t, bool store) {
  // (Only an array of this thread: one declared outside the parallel loop being printed is
  // shared, and its inactive lanes may be another thread's.)
  auto it = stack_arrays_.find(buffer->data.get());
  if (it == stack_arrays_.end() || it->second.dtype != buffer->dtype || buffer->dtype.is_vector() ||
      it->second.parallel_depth != parallel_depth_ || t.element_of() != buffer->dtype ||
      !IsConstInt(ramp->stride, 1)) {
    return "";
  }
  auto base = AsConstInt(ramp->base);
  if (!base || *base < 0 || *base + t.lanes() > it->second.count) return "";
  const std::string vt = TypeName(t, ramp->span);
  const std::string st = CodeGenC::TypeName(buffer->dtype, ramp->span);
  const std::string name =
      std::string("tessera_first_lanes_whole_") + (store ? "store_" : "load_") + vt.substr(8);
  // The lanes chosen by a mask of integers as wide as them (a compare of their indices with
  // n): one compare and one blend, where a loop over the lanes stayed a loop.
  const DataType mask_t = DataType::Int(t.bits(), t.lanes());
  const std::string mt = TypeName(mask_t, ramp->span);
  std::ostringstream iota;
  for (int i = 0; i < t.lanes(); ++i) iota << (i ? ", " : "") << i;
  std::ostringstream def;
  def << "static inline " << (store ? "void " : vt + " ") << name << "(" << (store ? "" : "const ")
      << st << "* p, int64_t n" << (store ? ", " + vt + " v" : "") << ") {\n  " << vt
      << " r;\n  memcpy(&r, p, sizeof(r));\n  " << mt << " m = (" << mt << "){" << iota.str()
      << "} < (" << mt << "){0} + (" << CodeGenC::TypeName(mask_t.element_of(), ramp->span)
      << ")(n < 0 ? 0 : n > " << t.lanes() << " ? " << t.lanes() << " : n);\n";
  if (store) {
    def << "  r = (" << vt << ")(((" << mt << ")v & m) | ((" << mt << ")r & ~m));\n"
        << "  memcpy(p, &r, sizeof(r));\n}\n";
  } else {
    def << "  return (" << vt << ")((" << mt << ")r & m);\n}\n";
  }
  return Helper(name, def.str());
}

std::string CodeGenHost::PrintPredicatedLoad(const BufferLoadNode* op) {
  Expr index;
  const RampNode* ramp = PredicatedRamp(op->buffer.get(), op->indices, "load", op->span, &index);
  DataType t = op->dtype;
  if (const CallNode* mask = FirstLanesMask(op->predicate, ramp)) {
    if (std::string whole = WholeVectorOfStackArray(op->buffer.get(), ramp, t, false);
        !whole.empty()) {
      return whole + "(" + OffsetPointer(BufferPointer(op->buffer.get(), op->span), ramp->base) +
             ", (int64_t)(" + PrintExpr(mask->args[1]) + ") - (int64_t)(" +
             PrintExpr(mask->args[0]) + "))";
    }
    std::string vt = TypeName(t, op->span), st = CodeGenC::TypeName(op->buffer->dtype, op->span);
    const bool unit = IsConstInt(ramp->stride, 1);
    std::string name =
        std::string("tessera_first_lanes_") + (unit ? "" : "strided_") + "load_" + vt.substr(8);
    std::string base = OffsetPointer(BufferPointer(op->buffer.get(), op->span), ramp->base);
    if (!unit) base += ", " + PrintExpr(ramp->stride);
    return Helper(name, FirstLanesHelper(name, vt, st, t, false, unit)) + "(" + base +
           ", (int64_t)(" + PrintExpr(mask->args[1]) + ") - (int64_t)(" + PrintExpr(mask->args[0]) +
           "))";
  }
  std::string vt = TypeName(t, op->span), mt = TypeName(op->predicate->dtype, op->span);
  std::string st = CodeGenC::TypeName(op->buffer->dtype, op->span);
  std::string name = "tessera_masked_load_" + vt.substr(8) + "_" + mt.substr(8);
  std::ostringstream def;
  def << "static inline " << vt << " " << name << "(const " << st << "* p, int64_t s, " << mt
      << " m) {\n  " << vt << " r;\n  for (int i = 0; i < " << t.lanes()
      << "; ++i) r[i] = m[i] ? p[i * s] : 0;\n  return r;\n}\n";
  std::string base = OffsetPointer(BufferPointer(op->buffer.get(), op->span), ramp->base);
  return Helper(name, def.str()) + "(" + base + ", " + PrintExpr(ramp->stride) + ", " +
         PrintExpr(op->predicate) + ")";
}

void CodeGenHost::PrintPredicatedStore(const BufferStoreNode* op) {
  Expr index;
  const RampNode* ramp = PredicatedRamp(op->buffer.get(), op->indices, "store", op->span, &index);
  DataType t = op->value->dtype;
  if (const CallNode* mask = FirstLanesMask(op->predicate, ramp)) {
    if (std::string whole = WholeVectorOfStackArray(op->buffer.get(), ramp, t, true);
        !whole.empty()) {
      std::string base = OffsetPointer(BufferPointer(op->buffer.get(), op->span), ramp->base);
      std::string n = "(int64_t)(" + PrintExpr(mask->args[1]) + ") - (int64_t)(" +
                      PrintExpr(mask->args[0]) + ")";
      std::string value = PrintExpr(op->value);
      PrintIndent();
      stream_ << whole << "(" << base << ", " << n << ", " << value << ");\n";
      return;
    }
    std::string vt = TypeName(t, op->span), st = CodeGenC::TypeName(op->buffer->dtype, op->span);
    const bool unit = IsConstInt(ramp->stride, 1);
    std::string name =
        std::string("tessera_first_lanes_") + (unit ? "" : "strided_") + "store_" + vt.substr(8);
    std::string base = OffsetPointer(BufferPointer(op->buffer.get(), op->span), ramp->base);
    if (!unit) base += ", " + PrintExpr(ramp->stride);
    std::string value = PrintExpr(op->value);
    PrintIndent();
    stream_ << Helper(name, FirstLanesHelper(name, vt, st, t, true, unit)) << "(" << base
            << ", (int64_t)(" << PrintExpr(mask->args[1]) << ") - (int64_t)("
            << PrintExpr(mask->args[0]) << "), " << value << ");\n";
    return;
  }
  std::string vt = TypeName(t, op->span), mt = TypeName(op->predicate->dtype, op->span);
  std::string st = CodeGenC::TypeName(op->buffer->dtype, op->span);
  std::string name = "tessera_masked_store_" + vt.substr(8) + "_" + mt.substr(8);
  std::ostringstream def;
  def << "static inline void " << name << "(" << st << "* p, int64_t s, " << mt << " m, " << vt
      << " v) {\n  for (int i = 0; i < " << t.lanes()
      << "; ++i) {\n    if (m[i]) p[i * s] = v[i];\n  }\n}\n";
  std::string base = OffsetPointer(BufferPointer(op->buffer.get(), op->span), ramp->base);
  std::string call = Helper(name, def.str()) + "(" + base + ", " + PrintExpr(ramp->stride) + ", " +
                     PrintExpr(op->predicate) + ", " + PrintExpr(op->value) + ")";
  PrintIndent();
  stream_ << call << ";\n";
}

void CodeGenHost::PrintVectorStore(const BufferStoreNode* op) {
  if (op->predicate) return PrintPredicatedStore(op);
  if (!promoted_.empty()) {
    const Expr index = AsUnitRamp(FlatIndex(op->buffer.get(), op->indices, op->span));
    auto* ramp = AsPtr<RampNode>(index);
    auto base = ramp ? AsConstInt(ramp->base) : std::nullopt;
    auto it = base ? promoted_.find({op->buffer->data.get(), *base}) : promoted_.end();
    if (it != promoted_.end()) {
      std::string value = PrintExpr(op->value);
      PrintIndent();
      stream_ << it->second << " = " << value << ";\n";
      return;
    }
  }
  DataType t = op->value->dtype;
  DataType elem = op->buffer->dtype;
  if (elem.is_vector())
    Unsupported("a vector store to the vector buffer " + op->buffer->name, op->span);
  Expr index = AsUnitRamp(FlatIndex(op->buffer.get(), op->indices, op->span));
  std::string vt = TypeName(t, op->span);
  std::string st = CodeGenC::TypeName(elem, op->span);
  std::string lane = elem.is_bool() ? "(v[i] != 0)" : "v[i]";
  std::string ptr = BufferPointer(op->buffer.get(), op->span);
  std::string value = PrintExpr(op->value);
  std::ostringstream def;
  std::string call;
  if (auto* ramp = AsPtr<RampNode>(index)) {
    std::string base = OffsetPointer(ptr, ramp->base);
    int bytes = t.bits() * t.lanes() / 8;
    if (IsConstInt(ramp->stride, 1) && !elem.is_bool() && nontemporal_depth_ > 0 &&
        (bytes == 4 || bytes == 8 || bytes == 16 || bytes == 32 || bytes == 64)) {
      // A streaming store (bypassing the caches) where the vector is aligned to its size; an
      // ordinary store otherwise. (Numpy's large arrays start 16 bytes into a 64-byte line:
      // there a vector of 32 or 64 bytes is stored as usual. Streamed in aligned 16-byte pieces
      // instead, each line then written by two vectors, a float32 negative of 2048^2 on Zen 4
      // ran 0.8-2x the time of ordinary stores, a cast 1.3x, tanh 1.2-4x, where aligned vectors
      // streamed at 0.7-1.0x.) Vectors of 16 to 64 bytes stream from vector registers
      // (vmovntps), of 4 and 8 bytes (a float64 compare's bool lanes) from an integer register
      // (movnti). Inline assembly rather than <immintrin.h>, whose parsing alone costs a small
      // kernel's build more than 100 ms.
      // The annotated loop runs this version where its outputs start aligned (see VisitStmt_
      // of a For): the streaming store is the expected case.
      std::string name = "tessera_stream_" + vt.substr(8);
      def << "static inline void " << name << "(" << st << "* p, " << vt << " v) {\n"
          << "#if defined("
          << (bytes == 64   ? "__AVX512F__"
              : bytes >= 16 ? "__AVX__"
                            : "__x86_64__")
          << ")\n  if (__builtin_expect(((uintptr_t)p & " << bytes - 1 << ") == 0, 1)) {\n";
      if (bytes <= 8) {
        def << "    uint" << bytes * 8 << "_t u;\n    memcpy(&u, &v, " << bytes << ");\n"
            << "    __asm__ volatile(\"movnti %1, (%0)\" : : \"r\"(p), \"r\"(u) : \"memory\");\n";
      } else {
        def << "    __asm__ volatile(\"vmovntps %1, (%0)\" : : \"r\"(p), \"v\"(v) : \"memory\");\n";
      }
      def << "    return;\n  }\n#endif\n  memcpy(p, &v, sizeof(v));\n}\n";
      call = Helper(name, def.str()) + "(" + base + ", " + value + ")";
    } else if (IsConstInt(ramp->stride, 1) && !elem.is_bool()) {
      std::string name = "tessera_store_" + vt.substr(8);
      def << "static inline void " << name << "(" << st << "* p, " << vt
          << " v) {\n  memcpy(p, &v, sizeof(v));\n}\n";
      call = Helper(name, def.str()) + "(" + base + ", " + value + ")";
    } else {
      std::string name = "tessera_store_stride_" + vt.substr(8);
      def << "static inline void " << name << "(" << st << "* p, int64_t s, " << vt << " v) {\n";
      if (IsHalfBits(elem)) {
        def << HalfLanesOut(t, "i * s", op->span);
      } else {
        def << "  for (int i = 0; i < " << t.lanes() << "; ++i) p[i * s] = " << lane << ";\n";
      }
      def << "}\n";
      call = Helper(name, def.str()) + "(" + base + ", " + PrintExpr(ramp->stride) + ", " + value +
             ")";
    }
  } else {
    std::string it = TypeName(index->dtype, op->span);
    std::string name = "tessera_scatter_" + vt.substr(8) + "_" + it.substr(8);
    def << "static inline void " << name << "(" << st << "* p, " << it << " idx, " << vt
        << " v) {\n";
    if (IsHalfBits(elem)) {
      def << HalfLanesOut(t, "idx[i]", op->span);
    } else {
      def << "  for (int i = 0; i < " << t.lanes() << "; ++i) p[idx[i]] = " << lane << ";\n";
    }
    def << "}\n";
    call = Helper(name, def.str()) + "(" + ptr + ", " + PrintExpr(index) + ", " + value + ")";
  }
  PrintIndent();
  stream_ << call << ";\n";
}

// ---------------------------------------------------------------------------------------------
// Calls
// ---------------------------------------------------------------------------------------------

std::string CodeGenHost::PrintCallOp(const CallNode* op, const OpNode* callee) {
  const std::string& name = callee->name;
  auto arg = [&](size_t i) { return PrintExpr(op->args[i]); };
  if (name == "tessera.packed_arg") {
    const char* field = op->dtype.is_float()    ? "v_float64"
                        : op->dtype.is_handle() ? "v_handle"
                                                : "v_int64";
    return "((TesseraValue*)" + arg(0) + ")[" + arg(1) + "]." + field;
  }
  if (name == "tessera.packed_type_code") return arg(0) + "[" + arg(1) + "]";
  if (name == "tessera.dltensor_shape") return "TESSERA_DLT_SHAPE(" + arg(0) + ", " + arg(1) + ")";
  if (name == "tessera.dltensor_stride")
    return "TESSERA_DLT_STRIDE(" + arg(0) + ", " + arg(1) + ")";
  if (name == "tessera.isnullptr") return "(" + arg(0) + " == NULL)";
  if (name == "tessera.check_args") {
    return "tessera_check_args(" + arg(0) + ", " + arg(1) + ", " + arg(2) + ", " + arg(3) + ")";
  }
  if (name == "tessera.check_dltensor") {
    // (handle, arg, param, dtype, ndim, code, bits, lanes, full, device_type, shape...)
    if (op->args.size() < 10)
      Unsupported("tessera.check_dltensor with too few arguments", op->span);
    std::string call = "tessera_check_dltensor(";
    for (size_t i = 0; i < 10; ++i) call += (i ? ", " : "") + arg(i);
    if (op->args.size() == 10) return call + ", NULL)";
    call += ", (const int64_t[]){";
    for (size_t i = 10; i < op->args.size(); ++i) call += (i > 10 ? ", " : "") + arg(i);
    return call + "})";
  }
  if (name == "tessera.bound_error") {
    return "tessera_bound_error(" + arg(0) + ", (long long)" + arg(1) + ", (long long)" + arg(2) +
           ")";
  }
  if (name == "tessera.dltensor_get") {
    auto field = AsConstInt(op->args[1]);
    std::string h = "TESSERA_DLT(" + arg(0) + ")";
    switch (field ? *field : -1) {
      case TESSERA_DLT_DATA:
        return "((void*)((char*)" + h + "->data + " + h + "->byte_offset))";
      case TESSERA_DLT_RAW_DATA:
        return h + "->data";
      case TESSERA_DLT_NDIM:
        return h + "->ndim";
      case TESSERA_DLT_DTYPE_CODE:
        return "((int32_t)" + h + "->dtype.code)";
      case TESSERA_DLT_DTYPE_BITS:
        return "((int32_t)" + h + "->dtype.bits)";
      case TESSERA_DLT_DTYPE_LANES:
        return "((int32_t)" + h + "->dtype.lanes)";
      case TESSERA_DLT_DEVICE_TYPE:
        return h + "->device.device_type";
      case TESSERA_DLT_DEVICE_ID:
        return h + "->device.device_id";
      case TESSERA_DLT_BYTE_OFFSET:
        return h + "->byte_offset";
      case TESSERA_DLT_STRIDES:
        return "((void*)" + h + "->strides)";
      default:
        Unsupported("tessera.dltensor_get of an unknown field", op->span);
    }
  }
  if (name == "tessera.set_return") {
    DataType t = op->args[2]->dtype;
    std::string v = arg(2);
    if (t.is_float())
      return "tessera_set_return_float(" + arg(0) + ", " + arg(1) + ", (double)" + v + ")";
    std::string code = t.is_bool() ? "TESSERA_ARG_BOOL" : "TESSERA_ARG_INT";
    return "tessera_set_return_int(" + arg(0) + ", " + arg(1) + ", (int64_t)" + v + ", " + code +
           ")";
  }
  if (name == "tir.pow" && (op->dtype.is_int() || op->dtype.is_uint()) && !op->dtype.is_bool() &&
      op->args.size() == 2) {
    // An integer power is exact: repeated squaring, no detour through floating point.
    DataType elem = op->dtype.element_of();
    std::string scalar = "tessera_ipow_" + elem.ToString();
    Helper(scalar,
           IntPowDefinition("static inline ", scalar, TypeName(elem, op->span), elem.is_int()));
    if (op->dtype.is_scalar()) return scalar + "(" + arg(0) + ", " + arg(1) + ")";
    std::string vt = TypeName(op->dtype, op->span);
    std::string name = LaneLoopHelper(scalar + "_" + vt.substr(8), op->dtype,
                                      {op->args[0]->dtype, op->args[1]->dtype},
                                      scalar + "(a0[i], a1[i])", op->span);
    return name + "(" + arg(0) + ", " + arg(1) + ")";
  }
  if (name == "tir.break") return "break";
  if (name == "tir.continue") return "continue";
  if (name == "tir.assume") return "((void)0)";
  if (name == "tir.tvm_static_handle") {
    std::string slot = "tessera_static_handle_" + std::to_string(static_handles_++);
    Helper(slot, "static void* " + slot + " = 0;\n");
    return "((void*)&" + slot + ")";
  }
  if (name == "tir.prefetch") {
    // __builtin_prefetch takes constant rw (0/1) and locality (0..3); an instruction-cache
    // prefetch (cache type 0) has no C spelling and is dropped, as a hint may be.
    auto constant = [&](size_t i, int64_t hi, const char* what) {
      const auto* v = AsPtr<IntImmNode>(op->args[i]);
      if (v == nullptr || v->value < 0 || v->value > hi) {
        TESSERA_THROW_KIND(op->span, ErrorKind::kBuild)
            << "tir.prefetch: the " << what << " (argument " << i
            << ") must be an integer constant from 0 to " << hi;
      }
      return std::to_string(v->value);
    };
    std::string rw = constant(1, 1, "rw argument");
    std::string locality = constant(2, 3, "locality");
    std::string cache = constant(3, 1, "cache type");
    if (cache == "0") return "((void)0)";
    return "__builtin_prefetch((const void*)" + arg(0) + ", " + rw + ", " + locality + ")";
  }
  if ((name == "tir.popcount" || name == "tir.clz") && op->dtype.is_scalar()) {
    int bits = op->args[0]->dtype.bits();
    std::string x = "(unsigned long long)(uint" + std::to_string(bits) + "_t)" + arg(0);
    std::string t = TypeName(op->dtype, op->span);
    if (name == "tir.popcount") return "((" + t + ")__builtin_popcountll(" + x + "))";
    return "((" + t + ")(" + x + " == 0 ? " + std::to_string(bits) + " : __builtin_clzll(" + x +
           ") - " + std::to_string(64 - bits) + "))";
  }
  if (op->dtype.is_fixed_length_vector()) {
    // GCC's vector types take C's bitwise operators and shifts lane by lane (without
    // promoting narrow lanes: an int8 lane shifts as an int8), and a cast between vector
    // types of one size reinterprets the bits.
    static const std::unordered_map<std::string, std::string> kLaneWise = {
        {"tir.bitwise_and", "&"},
        {"tir.bitwise_or", "|"},
        {"tir.bitwise_xor", "^"},
        {"tir.shift_left", "<<"},
        {"tir.shift_right", ">>"}};
    auto it = kLaneWise.find(name);
    if (it != kLaneWise.end() && op->args.size() == 2) {
      return "(" + arg(0) + " " + it->second + " " + arg(1) + ")";
    }
    if (name == "tir.bitwise_not" && op->args.size() == 1) return "(~" + arg(0) + ")";
    if (name == "tir.reinterpret" && op->args.size() == 1 &&
        op->args[0]->dtype.bits() * op->args[0]->dtype.lanes() ==
            op->dtype.bits() * op->dtype.lanes()) {
      return "((" + TypeName(op->dtype, op->span) + ")" + arg(0) + ")";
    }
  }
  if (name == "tir.reinterpret" && op->dtype.is_scalar()) {
    std::string t = TypeName(op->dtype, op->span);
    return "({ __auto_type tessera_v_ = " + arg(0) + "; " + t +
           " tessera_r_; memcpy(&tessera_r_, &tessera_v_, sizeof(tessera_r_)); tessera_r_; })";
  }
  Unsupported(
      "op " + name + (name.rfind("tir.", 0) == 0 ? " (tir.LowerIntrin lowers math ops first)" : ""),
      op->span);
}

void CodeGenHost::PrintReturn(const CallNode* ret) {
  if (parallel_depth_ > 0) Unsupported("return inside a parallel loop", ret->span);
  if (!in_packed_) {
    CodeGenC::PrintReturn(ret);
    return;
  }
  PrintIndent();
  stream_ << "return tessera_status();\n";
}

// ---------------------------------------------------------------------------------------------
// Statements
// ---------------------------------------------------------------------------------------------

void CodeGenHost::VisitStmt_(const LetStmtNode* op) {
  // Data pointers of a noalias function's buffers are restrict.
  auto* call = AsPtr<CallNode>(op->value);
  if (noalias_ && op->var->pointer && call && call->is_op("tessera.dltensor_get")) {
    restrict_vars_.insert(op->var.get());
  }
  CodeGenC::VisitStmt_(op);
}

void CodeGenHost::AfterLetBinding(const LetStmtNode* op, const std::string& name) {
  if (op->var->dtype.is_int() && op->var->dtype.is_scalar()) int_lets_[op->var.get()] = op->value;
  // A vector loaded once for several uses (tir.HoistSharedVectorLoads) stays in a register
  // (runtime.h): GCC would fold the load into each use as a memory operand, loading it again.
  DataType t = op->var->dtype;
  int bits = t.bits() * t.lanes();
  if (t.lanes() > 1 && (t.is_float() || t.is_int() || t.is_uint()) &&
      AsPtr<BufferLoadNode>(op->value) && (bits == 128 || bits == 256 || bits == 512)) {
    PrintIndent();
    stream_ << "TESSERA_KEEP_IN_REGISTER" << bits << "(" << name << ");\n";
  }
}

void CodeGenHost::PrintCheckTable(const CallNode* op) {
  // (args, device_type, count, then per buffer: index, arg, param, dtype, ndim, code, bits,
  // lanes, full, shape[ndim]); see tessera.check_dltensor_table.
  constexpr size_t kFields = 9;
  auto count = op->args.size() >= 3 ? AsConstInt(op->args[2]) : std::nullopt;
  if (!count) Unsupported("tessera.check_dltensor_table without a constant count", op->span);
  std::string name = "tessera_checks" + std::to_string(check_tables_++);
  std::ostringstream entries, shapes;
  size_t pos = 3;
  int64_t offset = 0;
  for (int64_t i = 0; i < *count; ++i) {
    if (pos + kFields > op->args.size())
      Unsupported("tessera.check_dltensor_table with too few arguments", op->span);
    auto ndim = AsConstInt(op->args[pos + 4]);
    if (!ndim || *ndim < 0 || pos + kFields + *ndim > op->args.size())
      Unsupported("tessera.check_dltensor_table with a wrong shape", op->span);
    entries << (i ? ",\n" : "") << "    {";
    for (size_t f = 0; f < kFields; ++f) entries << (f ? ", " : "") << PrintExpr(op->args[pos + f]);
    entries << ", " << offset << "}";
    for (int64_t d = 0; d < *ndim; ++d) {
      shapes << (offset ? ", " : "") << PrintExpr(op->args[pos + kFields + d]);
      ++offset;
    }
    pos += kFields + *ndim;
  }
  if (pos != op->args.size())
    Unsupported("tessera.check_dltensor_table with too many arguments", op->span);
  PrintIndent();
  stream_ << "static const TesseraBufferCheck " << name << "[] = {\n" << entries.str() << "};\n";
  PrintIndent();
  stream_ << "static const int64_t " << name << "_shapes[] = {" << (offset ? shapes.str() : "0")
          << "};\n";
  PrintIndent();
  stream_ << "if (!tessera_check_dltensor_table(" << PrintExpr(op->args[0]) << ", " << name << ", "
          << *count << ", " << name << "_shapes, " << PrintExpr(op->args[1]) << ")) return -1;\n";
}

// T.attr(_, "coproc_uop_scope", "TVMBackendRunOnce"): a static initialisation, the body runs on
// the first call of the function only (as TVM's runtime function of that name, the flag is set
// before the body runs and is not guarded against concurrent first calls).
void CodeGenHost::VisitStmt_(const AttrStmtNode* op) {
  if (op->attr_key != "coproc_uop_scope") {
    CodeGenC::VisitStmt_(op);
    return;
  }
  const auto* init = AsPtr<StringImmNode>(op->value);
  if (init == nullptr || init->value != "TVMBackendRunOnce") {
    Unsupported(
        "a coproc_uop_scope whose value is not \"TVMBackendRunOnce\" (the only static "
        "initialisation the host runtime has)",
        op->span);
  }
  std::string flag = "tessera_run_once_" + std::to_string(run_once_scopes_++);
  PrintIndent();
  stream_ << "static int " << flag << " = 0;\n";
  PrintIndent();
  stream_ << "if (!" << flag << ") {\n";
  int scope = BeginScope();
  PrintIndent();
  stream_ << flag << " = 1;\n";
  PrintStmt(op->body);
  EndScope(scope);
  PrintIndent();
  stream_ << "}\n";
}

void CodeGenHost::VisitStmt_(const AssertStmtNode* op) {
  if (parallel_depth_ > 0) Unsupported("T.Assert inside a parallel loop", op->span);
  // A table of buffer checks: static arrays and one call of the runtime's loop.
  if (auto* check = AsPtr<CallNode>(op->condition);
      in_packed_ && check && check->is_op("tessera.check_dltensor_table")) {
    PrintCheckTable(check);
    PrintStmt(op->body);
    return;
  }
  // The runtime's checks of the arguments set the error themselves.
  if (auto* check = AsPtr<CallNode>(op->condition);
      in_packed_ && check &&
      (check->is_op("tessera.check_dltensor") || check->is_op("tessera.check_args"))) {
    PrintIndent();
    stream_ << "if (!" << PrintExpr(op->condition) << ") return -1;\n";
    PrintStmt(op->body);
    return;
  }
  std::string cond = StripOuterParens(PrintExpr(op->condition));
  std::string args;
  if (auto* call = AsPtr<CallNode>(op->message); call && call->is_op("tessera.format")) {
    args = PrintExpr(call->args[0]);
    for (size_t i = 1; i < call->args.size(); ++i)
      args += ", (long long)" + PrintExpr(call->args[i]);
  } else {
    args = "\"%s\", " + PrintExpr(op->message);
  }
  PrintIndent();
  stream_ << "if (!(" << cond << ")) {\n";
  int scope = BeginScope();
  PrintIndent();
  stream_ << "tessera_set_error(" << args << ");\n";
  PrintIndent();
  if (in_packed_) {
    stream_ << "return -1;\n";
  } else {
    DataType rt = current_func_ ? current_func_->ret_type : DataType::Void();
    stream_ << "tessera_error_pending = 1;\n";
    PrintIndent();
    stream_ << (rt.is_void() ? "return;\n" : "return (" + TypeName(rt, op->span) + ")0;\n");
  }
  EndScope(scope);
  PrintIndent();
  stream_ << "}\n";
  PrintStmt(op->body);
}

namespace {

// The DLPack code of a dtype, as the runtime ABI spells it.
int DLTypeCode(DataType t) {
  if (t.is_bool()) return TESSERA_DL_BOOL;
  if (t.is_bfloat16()) return TESSERA_DL_BFLOAT;
  if (t.is_float()) return TESSERA_DL_FLOAT;
  if (t.is_uint()) return TESSERA_DL_UINT;
  return TESSERA_DL_INT;
}

}  // namespace

void CodeGenHost::PrintPackedArg(const Expr& arg, const std::string& slot,
                                 const std::string& prefix) {
  auto* call = AsPtr<CallNode>(arg);
  if (call && call->is_op("tir.tvm_stack_make_array")) {
    if (call->args.size() != 6) Unsupported("tvm_stack_make_array without 6 arguments", arg->span);
    auto shape_of = [&](const Expr& e, const std::string& name) -> std::string {
      auto* c = AsPtr<CallNode>(e);
      if (c == nullptr || !c->is_op("tir.tvm_stack_make_shape")) {
        if (IsConstInt(e, 0)) return "NULL";
        Unsupported("a DLTensor shape that is not tvm_stack_make_shape", e->span);
      }
      PrintIndent();
      stream_ << "int64_t " << name << "[" << std::max<size_t>(1, c->args.size()) << "] = {";
      for (size_t i = 0; i < c->args.size(); ++i) {
        stream_ << (i ? ", " : "") << "(int64_t)(" << PrintExpr(c->args[i]) << ")";
      }
      if (c->args.empty()) stream_ << "0";
      stream_ << "};\n";
      return name;
    };
    std::string shape = shape_of(call->args[1], prefix + "_shape");
    std::string strides = shape_of(call->args[2], prefix + "_strides");
    DataType t = call->args[4]->dtype;
    int64_t bytes = std::max(1, t.bytes());
    PrintIndent();
    stream_ << "TesseraDLTensor " << prefix << " = {(void*)(" << PrintExpr(call->args[0]) << "), {"
            << TESSERA_DEVICE_CPU << ", 0}, (int32_t)(" << PrintExpr(call->args[3]) << "), {"
            << DLTypeCode(t) << ", " << (t.is_bool() ? 8 : t.bits()) << ", " << t.lanes() << "}, "
            << shape << ", " << strides << ", (uint64_t)((int64_t)(" << PrintExpr(call->args[5])
            << ") * " << bytes << ")};\n";
    PrintIndent();
    stream_ << slot << ".v_handle = &" << prefix << ";\n";
    return;
  }
  if (auto* str = AsPtr<StringImmNode>(arg)) {
    // A string literal: its address, under the string type code.
    PrintIndent();
    stream_ << slot << ".v_handle = (void*)" << Quote(str->value, QuoteStyle::kC) << ";\n";
    std::string codes_slot = slot;
    codes_slot.replace(codes_slot.find("_args["), 6, "_codes[");
    PrintIndent();
    stream_ << codes_slot << " = TESSERA_ARG_STR;\n";
    return;
  }
  DataType t = arg->dtype;
  if (!t.is_scalar()) Unsupported("a vector argument of T.call_packed", arg->span);
  std::string field, code;
  if (t.is_handle()) {
    field = "v_handle";
    code = "TESSERA_ARG_HANDLE";
  } else if (t.is_float() || t.is_bfloat16()) {
    field = "v_float64";
    code = "TESSERA_ARG_FLOAT";
  } else if (t.is_bool()) {
    field = "v_int64";
    code = "TESSERA_ARG_BOOL";
  } else if (t.is_int() || t.is_uint()) {
    field = "v_int64";
    code = t.is_uint() ? "TESSERA_ARG_UINT" : "TESSERA_ARG_INT";
  } else {
    Unsupported("an argument of type " + t.ToString() + " in T.call_packed", arg->span);
  }
  PrintIndent();
  stream_ << slot << "." << field << " = " << (t.is_handle() ? "(void*)(" : "(") << PrintExpr(arg)
          << ");\n";
  PrintIndent();
  std::string codes_slot = slot;
  codes_slot.replace(codes_slot.find("_args["), 6, "_codes[");
  stream_ << codes_slot << " = " << code << ";\n";
}

namespace {

// The entry generated code reaches the runtime's global functions through (set on load); the
// call returns the function's value and its type code in `ret` / `ret_code`.
const char* kCallGlobalHelper =
    "typedef int32_t (*TesseraCallGlobalFunc)(const char*, TesseraValue*, int32_t*, int32_t,\n"
    "                                         TesseraValue*, int32_t*, char*, int32_t);\n"
    "TESSERA_EXPORT TesseraCallGlobalFunc __tessera_call_global = NULL;\n"
    "static int32_t tessera_call_global_ret(const char* name, TesseraValue* args, int32_t* codes,\n"
    "                                       int32_t n, TesseraValue* ret, int32_t* ret_code) {\n"
    "  if (__tessera_call_global == NULL) {\n"
    "    tessera_set_error(\"packed function %s: the library was not loaded by tessera's "
    "runtime\", name);\n    return -1;\n  }\n"
    "  return __tessera_call_global(name, args, codes, n, ret, ret_code, tessera_last_error,\n"
    "                               (int32_t)sizeof(tessera_last_error));\n}\n"
    "static int32_t tessera_call_global(const char* name, TesseraValue* args, int32_t* codes,\n"
    "                                   int32_t n) {\n"
    "  TesseraValue ret;\n  int32_t ret_code;\n"
    "  return tessera_call_global_ret(name, args, codes, n, &ret, &ret_code);\n}\n";

}  // namespace

void CodeGenHost::CallGlobalHelper() { Helper("tessera_call_global", kCallGlobalHelper); }

std::string CodeGenHost::PrintTracePacked(const CallNode* op) {
  auto* fname = op->args.empty() ? nullptr : AsPtr<StringImmNode>(op->args[0]);
  if (fname == nullptr || op->args.size() < 2) {
    Unsupported("tir.trace without a trace function name and a traced value", op->span);
  }
  if (!op->dtype.is_scalar()) Unsupported("tir.trace of a vector value", op->span);
  if (parallel_depth_ > 0) {
    Unsupported("tir.trace inside a parallel loop (it calls back into the runtime)", op->span);
  }
  CallGlobalHelper();
  int id = packed_calls_++;
  std::string p = "tessera_tr" + std::to_string(id);
  size_t n = op->args.size() - 1;
  std::string type = TypeName(op->dtype, op->span);
  // The traced value, computed once: the call's value unless the function returns one.
  PrintIndent();
  stream_ << type << " " << p << " = " << PrintExpr(op->args.back()) << ";\n";
  PrintIndent();
  stream_ << "{\n";
  int scope = BeginScope();
  PrintIndent();
  stream_ << "TesseraValue " << p << "_args[" << n << "];\n";
  PrintIndent();
  stream_ << "int32_t " << p << "_codes[" << n << "];\n";
  PrintIndent();
  stream_ << "TesseraValue " << p << "_ret;\n";
  PrintIndent();
  stream_ << "int32_t " << p << "_ret_code = TESSERA_ARG_NULL;\n";
  for (size_t i = 0; i + 1 < n; ++i) {
    const Expr& arg = op->args[i + 1];
    std::string slot = p + "_args[" + std::to_string(i) + "]";
    PrintPackedArg(arg, slot, p + "_t" + std::to_string(i));
    if (auto* inner = AsPtr<CallNode>(arg); inner && inner->is_op("tir.tvm_stack_make_array")) {
      PrintIndent();
      stream_ << p << "_codes[" << i << "] = TESSERA_ARG_DLTENSOR;\n";
    }
  }
  // The last argument is the traced value itself (already computed above).
  {
    DataType t = op->dtype;
    bool is_float = t.is_float() || t.is_bfloat16();
    if (!is_float && !t.is_int() && !t.is_uint() && !t.is_bool()) {
      Unsupported("tir.trace of a " + t.ToString() + " value", op->span);
    }
    std::string last = std::to_string(n - 1);
    PrintIndent();
    stream_ << p << "_args[" << last << "]." << (is_float ? "v_float64" : "v_int64") << " = " << p
            << ";\n";
    PrintIndent();
    stream_ << p << "_codes[" << last << "] = "
            << (is_float      ? "TESSERA_ARG_FLOAT"
                : t.is_bool() ? "TESSERA_ARG_BOOL"
                : t.is_uint() ? "TESSERA_ARG_UINT"
                              : "TESSERA_ARG_INT")
            << ";\n";
  }
  PrintIndent();
  stream_ << "if (tessera_call_global_ret(" << Quote(fname->value, QuoteStyle::kC) << ", " << p
          << "_args, " << p << "_codes, " << n << ", &" << p << "_ret, &" << p
          << "_ret_code) != 0) {\n";
  int inner = BeginScope();
  PrintErrorReturn(op->span);
  EndScope(inner);
  PrintIndent();
  stream_ << "}\n";
  PrintIndent();
  stream_ << "if (" << p << "_ret_code == TESSERA_ARG_FLOAT) " << p << " = (" << type << ")" << p
          << "_ret.v_float64;\n";
  PrintIndent();
  stream_ << "else if (" << p << "_ret_code == TESSERA_ARG_INT || " << p
          << "_ret_code == TESSERA_ARG_UINT || " << p << "_ret_code == TESSERA_ARG_BOOL) " << p
          << " = (" << type << ")" << p << "_ret.v_int64;\n";
  EndScope(scope);
  PrintIndent();
  stream_ << "}\n";
  return p;
}

void CodeGenHost::VisitStmt_(const EvaluateNode* op) {
  auto* call = AsPtr<CallNode>(op->value);
  if (call == nullptr ||
      !(call->is_op("tir.tvm_call_packed") || call->is_op("tir.tvm_call_cpacked"))) {
    CodeGenC::VisitStmt_(op);
    return;
  }
  if (call->is_op("tir.tvm_call_cpacked")) {
    Unsupported("T.call_cpacked (a C packed function linked into the module)", op->span);
  }
  auto* fname = call->args.empty() ? nullptr : AsPtr<StringImmNode>(call->args[0]);
  if (fname == nullptr) Unsupported("T.call_packed without a function name", op->span);
  if (parallel_depth_ > 0) {
    Unsupported("T.call_packed inside a parallel loop (it calls back into the runtime)", op->span);
  }
  CallGlobalHelper();
  int id = packed_calls_++;
  std::string p = "tessera_pk" + std::to_string(id);
  size_t n = call->args.size() - 1;
  PrintIndent();
  stream_ << "{\n";
  int scope = BeginScope();
  PrintIndent();
  stream_ << "TesseraValue " << p << "_args[" << std::max<size_t>(1, n) << "];\n";
  PrintIndent();
  stream_ << "int32_t " << p << "_codes[" << std::max<size_t>(1, n) << "];\n";
  for (size_t i = 0; i < n; ++i) {
    const Expr& arg = call->args[i + 1];
    std::string slot = p + "_args[" + std::to_string(i) + "]";
    auto* inner = AsPtr<CallNode>(arg);
    if (inner && inner->is_op("tir.tvm_stack_make_array")) {
      PrintPackedArg(arg, slot, p + "_t" + std::to_string(i));
      PrintIndent();
      stream_ << p << "_codes[" << i << "] = TESSERA_ARG_DLTENSOR;\n";
    } else {
      PrintPackedArg(arg, slot, p + "_t" + std::to_string(i));
    }
  }
  PrintIndent();
  stream_ << "if (tessera_call_global(" << Quote(fname->value, QuoteStyle::kC) << ", " << p
          << "_args, " << p << "_codes, " << n << ") != 0) {\n";
  int inner = BeginScope();
  PrintErrorReturn(op->span);
  EndScope(inner);
  PrintIndent();
  stream_ << "}\n";
  EndScope(scope);
  PrintIndent();
  stream_ << "}\n";
}

std::string CodeGenHost::AllocationPrefix(const std::string&) {
  return "__attribute__((aligned(64))) ";
}

void CodeGenHost::PrintErrorReturn(const Span& span) {
  PrintIndent();
  if (in_packed_) {
    stream_ << "return -1;\n";
    return;
  }
  DataType rt = current_func_ ? current_func_->ret_type : DataType::Void();
  stream_ << "tessera_error_pending = 1;\n";
  PrintIndent();
  stream_ << (rt.is_void() ? "return;\n" : "return (" + TypeName(rt, span) + ")0;\n");
}

void CodeGenHost::VisitStmt_(const AllocateNode* op) {
  allocated_.insert(op->buffer_var.get());
  if (op->annotations.count("tessera.local_var")) {
    CodeGenC::VisitStmt_(op);
    return;
  }
  // Small constant allocations live on the stack; the rest on the heap, freed when the
  // variable goes out of scope (also on an early return).
  int64_t count = 1;
  bool constant = true;
  for (const Expr& e : op->extents) {
    auto c = AsConstInt(e);
    constant = constant && c.has_value();
    if (c) count *= *c;
  }
  if (constant && count * op->dtype.bytes() <= 4096) {
    stack_arrays_[op->buffer_var.get()] = {op->dtype, count, parallel_depth_};
    CodeGenC::VisitStmt_(op);
    stack_arrays_.erase(op->buffer_var.get());
    return;
  }
  std::string size = "(size_t)1";
  for (const Expr& e : op->extents) size += " * (size_t)" + PrintExpr(e);
  std::string type = TypeName(op->dtype, op->span);
  std::string name = AllocVarName(op->buffer_var.get());
  PrintIndent();
  // tessera_alloc_workspace returns 64-byte-aligned memory; saying so lets the C compiler use
  // aligned vector accesses.
  stream_ << type << "* TESSERA_WORKSPACE " << name << " = (" << type
          << "*)__builtin_assume_aligned(tessera_alloc_workspace(" << size << " * sizeof(" << type
          << ")), 64);\n";
  if (parallel_depth_ == 0) {
    PrintIndent();
    stream_ << "if (" << name << " == NULL) {\n";
    int scope = BeginScope();
    PrintIndent();
    stream_ << "tessera_set_error(\"out of memory allocating " << op->buffer_var->name << "\");\n";
    PrintErrorReturn(op->span);
    EndScope(scope);
    PrintIndent();
    stream_ << "}\n";
  }
  PrintStmt(op->body);
}

namespace {

// The C helper `name` returning the max (or min) of p[0 .. n) for a power of two n >= 4: the
// upper half folded onto the lower, then halving steps down to one lane, each step a loop
// `a[i] = (a[i] > q[i + w] ? a[i] : q[i + w])` over the w lanes left.
std::string LaneTreeSource(const std::string& name, const std::string& ctype, int64_t n,
                           bool is_max) {
  const char* cmp = is_max ? " > " : " < ";
  int64_t m = 1;
  while (m * 2 < n) m *= 2;
  std::ostringstream def;
  auto step = [&](int64_t lanes, const char* from, int64_t offset) {
    def << "  for (int i = 0; i < " << lanes << "; ++i) a[i] = (a[i]" << cmp << from << "[i + "
        << offset << "] ? a[i] : " << from << "[i + " << offset << "]);\n";
  };
  def << "static inline " << ctype << " " << name << "(const " << ctype << "* p) {\n  " << ctype
      << " a[" << m << "];\n  for (int i = 0; i < " << m << "; ++i) a[i] = p[i];\n";
  step(n - m, "p", m);
  for (int64_t w = m / 2; w >= 1; w /= 2) step(w, "a", w);
  def << "  return a[0];\n}\n";
  return def.str();
}

}  // namespace

// `for k in [0, n): X[i] = max(X[i], Y[c + k])` (or min) with X[i] independent of k and Y
// another buffer: the fold of a reduction's lanes (the last step of an rfactor combine). As the
// loop stands it is a chain of n dependent scalar operations; max and min take their arguments
// in any order (NaN-free), so it becomes X[i] = max(X[i], tree over Y[c .. c + n)), a helper
// whose halving lane loops the C compiler turns into vector operations and shuffles.
bool CodeGenHost::PrintLaneFold(const ForNode* op, const BufferStoreNode* first) {
  if (op->for_kind != ForKind::kSerial && op->for_kind != ForKind::kUnrolled) return false;
  auto min = AsConstInt(op->min), extent = AsConstInt(op->extent);
  if (!min || *min != 0 || !extent || *extent < 3 || *extent > 64) return false;
  auto* store = AsPtr<BufferStoreNode>(op->body);
  if (store == nullptr || store->predicate) return false;
  DataType t = store->value->dtype;
  if (!t.is_scalar() || t.is_bool() || !(t.is_float() || t.is_int() || t.is_uint())) return false;
  bool is_max = store->value->kind == NodeKind::kMax;
  if (!is_max && store->value->kind != NodeKind::kMin) return false;
  auto* bin = static_cast<const BinaryNode*>(store->value.get());
  const VarNode* k = op->loop_var.get();
  auto is_self = [&](const Expr& e) {
    auto* load = AsPtr<BufferLoadNode>(e);
    if (load == nullptr || load->predicate || load->buffer.get() != store->buffer.get() ||
        load->indices.size() != store->indices.size())
      return false;
    for (size_t i = 0; i < load->indices.size(); ++i) {
      if (!StructuralEqual(load->indices[i], store->indices[i])) return false;
      if (UsesVar(load->indices[i], k)) return false;
    }
    return true;
  };
  // The load Y[...] of a step X = op(X, Y[...]) (X on either side); null for another form.
  auto folded_load = [&](const BinaryNode* step) -> const BufferLoadNode* {
    if (is_self(step->a)) return AsPtr<BufferLoadNode>(step->b);
    if (is_self(step->b)) return AsPtr<BufferLoadNode>(step->a);
    return nullptr;
  };
  auto* src = folded_load(bin);
  if (src == nullptr || src->predicate || src->dtype != t || src->buffer->dtype != t ||
      src->buffer.get() == store->buffer.get() ||
      src->buffer->data.get() == store->buffer->data.get())
    return false;
  Expr index = FlatIndex(src->buffer.get(), src->indices, src->span);
  if (!index->dtype.is_scalar()) return false;
  VarMap at_zero;
  at_zero[k] = MakeConst(op->loop_var->dtype, int64_t{0});
  arith::Analyzer ana;
  Expr base = ana.Simplify(Substitute(index, at_zero));
  if (UsesVar(base, k)) return false;
  auto step = AsConstInt(ana.Simplify(SubNode::Make(index, AddNode::Make(base, op->loop_var))));
  if (!step || *step != 0) return false;

  int64_t n = *extent;
  if (first != nullptr) {
    // The fold's first step peeled off before the loop: X[i] = max(X[i], Y[c - 1]).
    if (first->predicate || first->buffer.get() != store->buffer.get() ||
        first->value->kind != store->value->kind)
      return false;
    auto* fbin = static_cast<const BinaryNode*>(first->value.get());
    if (first->indices.size() != store->indices.size()) return false;
    for (size_t i = 0; i < first->indices.size(); ++i) {
      if (!StructuralEqual(first->indices[i], store->indices[i])) return false;
    }
    auto* fsrc = folded_load(fbin);
    if (fsrc == nullptr || fsrc->predicate || fsrc->buffer.get() != src->buffer.get()) return false;
    Expr fbase = FlatIndex(fsrc->buffer.get(), fsrc->indices, fsrc->span);
    if (!fbase->dtype.is_scalar()) return false;
    auto gap = AsConstInt(ana.Simplify(SubNode::Make(base, fbase)));
    if (!gap || *gap != 1) return false;
    base = fbase;
    n += 1;
  }
  // Only whole vectors (a power of two lanes, from 4 to 64): a fold of another count, read at
  // an offset into a vector just stored, measured slower than the chain (the loads are not
  // forwarded from the store).
  if (n < 4 || n > 64 || (n & (n - 1)) != 0) return false;
  std::string st = CodeGenC::TypeName(t, op->span);
  std::string tname = (t.is_float() ? "float"
                       : t.is_int() ? "int"
                                    : "uint") +
                      std::to_string(t.bits());
  std::string name =
      std::string("tessera_reduce_") + (is_max ? "max_" : "min_") + tname + "_" + std::to_string(n);
  if (!helper_names_.count(name)) Helper(name, LaneTreeSource(name, st, n, is_max));
  std::string target = PrintExpr(is_self(bin->a) ? bin->a : bin->b);
  std::string ptr = OffsetPointer(BufferPointer(src->buffer.get(), src->span), base);
  PrintIndent();
  stream_ << target << " = " << (is_max ? "max(" : "min(") << target << ", " << name << "(" << ptr
          << "));\n";
  return true;
}

void CodeGenHost::VisitStmt_(const SeqStmtNode* op) {
  for (size_t i = 0; i < op->seq.size(); ++i) {
    if (i + 1 < op->seq.size()) {
      auto* first = AsPtr<BufferStoreNode>(op->seq[i]);
      auto* loop = AsPtr<ForNode>(op->seq[i + 1]);
      if (first && loop && PrintLaneFold(loop, first)) {
        ++i;
        continue;
      }
      // a fill and its tail (rows of no whole number of vectors) as one fill
      // (and a copy and its tail as one copy)
      auto* fill = AsPtr<ForNode>(op->seq[i]);
      if (fill && loop && (PrintFillLoop(fill, loop) || PrintAlignedStoreLoop(fill, loop))) {
        ++i;
        continue;
      }
    }
    PrintStmt(op->seq[i]);
  }
}

// GCC moves the body of an OpenMP loop into a function of its own that reaches the enclosing
// function's variables through a struct, and the pointers read from it are no longer restrict:
// a body that adds into a buffer (a column sum's partial sums) then stores the buffer after
// every row, since a store might change what the next load reads. A restrict local copy of the
// pointer does not help (GCC 12 ignores it there); a function's restrict parameters do, and they
// stay restrict when GCC inlines the function. So the body of a parallel loop of a noalias
// function that reads and writes vectors of one of its buffers is printed as a static inline
// function of the loop variable and the variables the body uses, which keep their names and types.
bool CodeGenHost::PrintOutlinedParallelLoop(const ForNode* op) {
  if (!noalias_) return false;
  std::unordered_set<const VarNode*> loaded, stored;
  bool calls_function = false;
  PostOrderVisit(op->body, [&](const ObjectRef& n) {
    if (auto* load = AsPtr<BufferLoadNode>(n)) loaded.insert(load->buffer->data.get());
    // Vector stores only: with scalar ones (max_pool2d's running maximum) GCC's code without
    // the stores measured 8% slower (an indexed store in the loop).
    auto* store = AsPtr<BufferStoreNode>(n);
    if (store && store->value->dtype.is_vector()) stored.insert(store->buffer->data.get());
    if (auto* call = AsPtr<CallNode>(n))
      calls_function |= AsPtr<GlobalVarNode>(call->op) != nullptr;
  });
  // A call to another function of the module would need its prototype before the helpers.
  if (calls_function) return false;
  bool updates_restrict = false;
  for (const VarNode* v : stored) updates_restrict |= loaded.count(v) && restrict_vars_.count(v);
  if (!updates_restrict) return false;
  // The variables of the enclosing function that the body uses, in order of first use: named
  // already, since a variable is named where it is defined. Only scalars (passed by value) and
  // restrict pointers; anything else (a local array, a workspace) keeps the loop as it was.
  std::vector<const VarNode*> captured;
  std::unordered_set<const VarNode*> seen{op->loop_var.get()};
  bool capturable = true;
  UsesVar(op->body, [&](const VarNode* v) {
    if (!HasVarName(v) || !seen.insert(v).second) return false;
    if (v->pointer && !restrict_vars_.count(v)) capturable = false;
    captured.push_back(v);
    return false;
  });
  if (!capturable) return false;

  std::string begin = PrintExpr(op->min);
  std::string end = LoopEnd(op);
  std::string type = TypeName(op->loop_var->dtype, op->span);
  std::string name = AllocVarName(op->loop_var.get());
  std::string params = type + " " + name, args = name;
  for (const VarNode* v : captured) {
    params += ", " + VarTypeName(v) + " " + GetVarName(v);
    args += ", " + GetVarName(v);
  }
  // The body at the helper's indentation, into a stream of its own.
  std::ostringstream body;
  stream_.swap(body);
  int indent = indent_;
  indent_ = 0;
  int scope = BeginScope();
  PrintLoopPrologue(op, name);
  PrintStmt(op->body);
  EndScope(scope);
  indent_ = indent;
  stream_.swap(body);
  std::string helper = "tessera_parallel_body_" + std::to_string(parallel_bodies_++);
  Helper(helper, "static inline void " + helper + "(" + params + ") {\n" + body.str() + "}\n");

  PrintIndent();
  stream_ << "for (" << type << " " << name << " = " << begin << "; " << name << " < " << end
          << "; " << LoopStep(name) << ") {\n";
  scope = BeginScope();
  PrintIndent();
  stream_ << helper << "(" << args << ");\n";
  EndScope(scope);
  PrintIndent();
  stream_ << "}\n";
  return true;
}

void CodeGenHost::PrintLoopPrologue(const ForNode* op, const std::string& name) {
  if (op != parallel_loop_) return;
  std::string assume = ParallelRangeAssumption(op, name);
  if (assume.empty()) return;
  PrintIndent();
  stream_ << assume;
}

namespace {

bool IsNontemporal(const ForNode* loop) {
  auto nt = loop->annotations.find("pragma_nontemporal");
  auto* imm = nt == loop->annotations.end() ? nullptr : AsPtr<IntImmNode>(nt->second);
  return imm != nullptr && imm->value != 0;
}

/*! \brief Whether `loop` is, or holds, a loop annotated pragma_nontemporal; `parallel` tells
 *  whether it holds a parallel loop. */
bool HoldsNontemporal(const ForNode* loop, bool* parallel) {
  bool found = IsNontemporal(loop);
  *parallel = false;
  PostOrderVisit(loop->body, [&](const ObjectRef& n) {
    if (auto* f = AsPtr<ForNode>(n)) {
      found = found || IsNontemporal(f);
      *parallel = *parallel || f->for_kind == ForKind::kParallel;
    }
  });
  return found;
}

}  // namespace

void CodeGenHost::PrintStoreFence() {
  PrintIndent();
  stream_ << Helper("tessera_store_fence",
                    "static inline void tessera_store_fence(void) {\n"
                    "#if defined(__x86_64__) || defined(__i386__)\n"
                    "  __asm__ volatile(\"sfence\" : : : \"memory\");\n#endif\n}\n")
          << "();\n";
}

namespace {

/*! \brief C statements storing the `count` bytes (a variable, below `bytes`) at `dst` from
 *  `src` in pieces of 2^k bytes, largest first, down to `elem` bytes (element-aligned
 *  addresses: the count is a multiple of `elem`); both pointers (char*) advance. `fixed`: the
 *  source does not advance (a fill's vector, whose every element-aligned piece is the pattern).
 *  Stores that overlap others (an unaligned vector at either end of an aligned run) measured
 *  slower: int8 fills of 4 KB rows 16 bytes into a line on Zen 4, 55 us for 4 MB overlapping,
 *  43 us in exact pieces, as memset. */
std::string BytePieces(const std::string& count, const std::string& dst, const std::string& src,
                       int64_t bytes, int64_t elem, bool fixed, const std::string& indent) {
  std::ostringstream os;
  for (int64_t piece = bytes / 2; piece >= elem; piece /= 2) {
    os << indent << "if (" << count << " & " << piece << ") {\n"
       << indent << "  memcpy(" << dst << ", " << src << ", " << piece << ");\n"
       << indent << "  " << dst << " += " << piece << ";\n";
    if (!fixed) os << indent << "  " << src << " += " << piece << ";\n";
    os << indent << "}\n";
  }
  return os.str();
}

// The perfect nest of loops from `op` down to the first statement that is neither a loop nor a
// let (returned in `body`); the lets' values, substituted into one another, in `lets`. False
// when a loop is not serial (the outermost may be parallel where `parallel_outer`), carries
// annotations or has no constant extent.
bool CollectSerialNest(const ForNode* op, bool parallel_outer, std::vector<const ForNode*>* nest,
                       VarMap* lets, Stmt* body) {
  *body = GetRef(op);
  while (true) {
    if (auto* f = AsPtr<ForNode>(*body)) {
      const bool outer = f == op && parallel_outer;
      if ((f->for_kind != ForKind::kSerial && !outer) || !f->annotations.empty() ||
          !AsConstInt(f->extent)) {
        return false;
      }
      nest->push_back(f);
      *body = f->body;
    } else if (auto* let = AsPtr<LetStmtNode>(*body)) {
      (*lets)[let->var.get()] = Substitute(let->value, *lets);
      *body = let->body;
    } else {
      return true;
    }
  }
}

// The element offset of a nest's current vector from its first, in type `bt`, for vectors of
// `lanes` that follow one another: sum((v_k - min_k) * stride_k), the innermost loop's stride
// `lanes`, each outer one the product of the extents inside it (constant: CollectSerialNest).
Expr NestVectorStep(const std::vector<const ForNode*>& nest, DataType bt, int64_t lanes) {
  Expr step = MakeConst(bt, int64_t{0});
  int64_t stride = lanes;
  for (auto it = nest.rbegin(); it != nest.rend(); ++it) {
    const ForNode* f = *it;
    Expr off = CastTo(bt, SubNode::Make(f->loop_var, f->min, f->span));
    step = AddNode::Make(step, MulNode::Make(off, MakeConst(bt, stride), f->span), f->span);
    stride *= *AsConstInt(f->extent);
  }
  return step;
}

}  // namespace

// A fill: `for v in [min, min + n): B[Ramp(b + v * L, 1, L)] = Broadcast(x, L)`, x and b free
// of v, n >= 16 vectors of 16, 32 or 64 bytes. The vectors stored are all the same, so the
// helper stores the first and the last unaligned and those between at addresses aligned to the
// vector: a store-only loop into an array 16 bytes off a 32-byte boundary (numpy's usual
// offset) straddled a cache line every other vector (2048 x 2048 int8, AMD Zen 4: 0.053 ms
// unaligned, 0.042 aligned, as fast as memset). A perfect nest of serial loops whose stores
// follow one another counts as one loop; a stored `Select(Ramp(c0, 1) == c, a, x)` (eye,
// one_hot) is a fill of x and one element a (2048 x 2048 int8 eye: 0.126 -> 0.047 ms).
bool CodeGenHost::PrintFillLoop(const ForNode* op, const ForNode* tail) {
  // The nest of serial loops down to the store: their vectors, innermost first, follow one
  // another when the index is first + sum((v_k - min_k) * L * (extents inside k)).
  // Lets between them (common subexpressions of the index) are substituted into the store.
  std::vector<const ForNode*> nest;
  VarMap lets;
  Stmt body;
  if (!CollectSerialNest(op, false, &nest, &lets, &body)) return false;
  if (nontemporal_depth_ > 0) return false;
  auto* st0 = AsPtr<BufferStoreNode>(body);
  if (st0 == nullptr || st0->predicate) return false;
  Ref<BufferStoreNode> subst;
  if (!lets.empty()) {
    std::vector<Expr> indices;
    for (const Expr& e : st0->indices) indices.push_back(Substitute(e, lets));
    subst = BufferStoreNode::Make(st0->buffer, Substitute(st0->value, lets), indices,
                                  st0->predicate, st0->span);
    st0 = subst.get();
  }
  const BufferStoreNode* st = st0;
  int64_t n = 1;
  for (const ForNode* f : nest) n *= *AsConstInt(f->extent);
  if (n < 16) return false;
  // an array of the caller's (a DLTensor's data); the function's own buffers (an accumulator's
  // initial values) are allocated aligned
  if (!restrict_vars_.count(st->buffer->data.get())) return false;
  DataType t = st->value->dtype, elem = st->buffer->dtype;
  if (t.is_scalable_vector() || elem.is_bool() || elem.is_vector() || elem.bits() % 8 != 0) {
    return false;
  }
  auto uses_nest = [&](const Expr& e) {
    for (const ForNode* f : nest) {
      if (UsesVar(e, f->loop_var.get())) return true;
    }
    return false;
  };
  // The value: one broadcast, or (eye) `Select(Ramp(c0, 1, L) == Broadcast(c), Broadcast(a),
  // Broadcast(x))` whose ramp follows the store's index at a distance free of the nest: the
  // fill of x and one element a.
  auto* value = AsPtr<BroadcastNode>(st->value);
  // (A copy, with or without a tail, is PrintAlignedStoreLoop's: its flat loop of aligned
  // stores.)
  if (AsPtr<BufferLoadNode>(st->value)) return false;
  const BroadcastNode* patch_value = nullptr;
  const RampNode* patch_ramp = nullptr;
  Expr patch_at, fill_value = st->value;
  if (auto* sel = AsPtr<SelectNode>(st->value)) {
    value = AsPtr<BroadcastNode>(sel->false_value);
    patch_value = AsPtr<BroadcastNode>(sel->true_value);
    auto* eq = AsPtr<EQNode>(sel->condition);
    if (!value || !patch_value || !eq || uses_nest(patch_value->value)) return false;
    patch_ramp = AsPtr<RampNode>(eq->a);
    auto* at = AsPtr<BroadcastNode>(eq->b);
    if (patch_ramp == nullptr) {
      patch_ramp = AsPtr<RampNode>(eq->b);
      at = AsPtr<BroadcastNode>(eq->a);
    }
    if (!patch_ramp || !at || !IsConstInt(patch_ramp->stride, 1) ||
        patch_ramp->lanes != t.lanes() || uses_nest(at->value)) {
      return false;
    }
    DataType it = patch_ramp->base->dtype;
    if (!it.is_int() || (it.bits() != 32 && it.bits() != 64) || at->value->dtype != it) {
      return false;
    }
    patch_at = at->value;
    fill_value = sel->false_value;
  }
  if (!value || uses_nest(value->value)) return false;
  const int64_t lanes = t.lanes(), bytes = lanes * elem.bits() / 8;
  if (bytes != 16 && bytes != 32 && bytes != 64) return false;
  Expr index = AsUnitRamp(FlatIndex(st->buffer.get(), st->indices, st->span));
  auto* ramp = AsPtr<RampNode>(index);
  if (ramp == nullptr || !IsConstInt(ramp->stride, 1) || ramp->lanes != lanes) return false;
  // the vectors follow one another: first + sum((v_k - min_k) * stride_k)
  arith::Analyzer ana;
  DataType bt = ramp->base->dtype;
  Expr step = NestVectorStep(nest, bt, lanes);
  Expr base = ana.Simplify(SubNode::Make(ramp->base, step, op->span));
  if (uses_nest(base)) return false;
  // lane l is patched where c0 + l == c: at store position c + (index base - c0)
  // (a distance free of the nest: then the ramp at the first vector, c0', is c0 - step, and
  // the element patched is the c - c0'-th of the fill)
  Expr patch_first;
  if (patch_ramp) {
    Expr b = patch_ramp->base;
    if (uses_nest(ana.Simplify(SubNode::Make(CastTo(b->dtype, ramp->base), b, op->span)))) {
      return false;
    }
    VarMap first;
    for (const ForNode* f : nest) first[f->loop_var.get()] = f->min;
    patch_first = ana.Simplify(Substitute(b, first));
  }
  // The tail (the split's remainder after tir.LoopPartition, rows of no whole number of
  // vectors): `for v in [0, E): if v < r: B[base + n * L + v] = x'` with x' the fill's scalar
  // or, for a patched fill, `Select(s(v) == o, a', x)` (s = s0 + v on either side). The
  // helper fills the n * L + r elements (its last vector ends at the last element, overlapping
  // the one before), and the tail's patch is one more element. (The tail may hold more than
  // one vector: tir.SplitVectorizedLoops cuts the row's 64 int8 lanes into vectors of 32.)
  int64_t tail_r = 0;
  Expr tail_at, tail_value;
  if (tail != nullptr) {
    auto text = AsConstInt(tail->extent);
    auto tmin = AsConstInt(tail->min);
    if (tail->for_kind != ForKind::kSerial || !tail->annotations.empty() || !text || !tmin ||
        *tmin != 0) {
      return false;
    }
    const VarNode* v = tail->loop_var.get();
    VarMap tail_lets;
    const BufferStoreNode* ts = MatchTailStore(tail, *text, &tail_lets, &tail_r);
    if (ts == nullptr || ts->predicate || ts->buffer.get() != st->buffer.get() ||
        !ts->value->dtype.is_scalar() || tail_r <= 0) {
      return false;
    }
    Expr tidx = Substitute(FlatIndex(ts->buffer.get(), ts->indices, ts->span), tail_lets);
    if (!tidx->dtype.is_scalar()) return false;
    Expr expect =
        AddNode::Make(CastTo(tidx->dtype, AddNode::Make(base, MakeConst(bt, n * lanes), op->span)),
                      tail->loop_var, op->span);
    auto gap = AsConstInt(ana.Simplify(SubNode::Make(tidx, expect, op->span)));
    if (!gap || *gap != 0) return false;
    Expr tv = Substitute(ts->value, tail_lets);
    auto same = [&](const Expr& a, const Expr& b) {
      if (a->dtype != b->dtype) return false;
      auto d = AsConstInt(ana.Simplify(SubNode::Make(a, b, op->span)));
      return StructuralEqual(a, b) || (d && *d == 0 && a->dtype.is_int());
    };
    if (!patch_ramp) {
      if (!same(tv, value->value)) return false;
    } else if (!same(tv, value->value)) {  // (the tail's select may fold to x: no patch there)
      auto* sel = AsPtr<SelectNode>(tv);
      auto* eq = sel ? AsPtr<EQNode>(sel->condition) : nullptr;
      if (!eq || !same(sel->false_value, value->value) || UsesVar(sel->true_value, v) ||
          sel->true_value->dtype != patch_value->value->dtype) {
        return false;
      }
      Expr s_side = eq->a, o_side = eq->b;
      if (!UsesVar(s_side, v)) std::swap(s_side, o_side);
      if (!UsesVar(s_side, v) || UsesVar(o_side, v) || !s_side->dtype.is_int()) return false;
      VarMap zero;
      zero[v] = MakeConst(tail->loop_var->dtype, int64_t{0});
      Expr s0 = ana.Simplify(Substitute(s_side, zero));
      auto unit = AsConstInt(ana.Simplify(SubNode::Make(
          SubNode::Make(s_side, s0, op->span), CastTo(s_side->dtype, tail->loop_var), op->span)));
      if (!unit || *unit != 0) return false;
      tail_at =
          SubNode::Make(CastTo(DataType::Int(64), o_side), CastTo(DataType::Int(64), s0), op->span);
      tail_value = sel->true_value;
    }
  }
  const int64_t count = n * lanes + tail_r;
  std::string vt = TypeName(t, op->span);
  std::string et = CodeGenC::TypeName(elem, op->span);
  std::string name = "tessera_fill_" + vt.substr(8);
  std::ostringstream def;
  // n elements (n >= L): the bytes before the first aligned vector and after the last in
  // exact pieces (BytePieces), the vectors between aligned; an array not aligned to its
  // element (a DLTensor's byte_offset may be anything) takes unaligned vectors, the last one
  // overlapping.
  const int64_t eb = elem.bits() / 8;
  def << "static inline void " << name << "(" << et << "* p, " << vt << " v, int64_t n) {\n"
      << "  char* b = (char*)p;\n"
      << "  char* end = (char*)(p + n);\n"
      << "  char* a = (char*)(((uintptr_t)b + " << bytes - 1 << ") & ~(uintptr_t)" << bytes - 1
      << ");\n"
      << "  if (((uintptr_t)b & " << eb - 1 << ") != 0) {\n"
      << "    for (int64_t i = 0; i + " << lanes << " <= n; i += " << lanes
      << ") memcpy(p + i, &v, sizeof(v));\n"
      << "    memcpy(end - sizeof(v), &v, sizeof(v));\n"
      << "    return;\n"
      << "  }\n"
      << "  const char* s = (const char*)&v;\n"
      << "  size_t h = (size_t)(a - b);\n"
      << BytePieces("h", "b", "s", bytes, eb, true, "  ") << "  for (; a + " << bytes
      << " <= end; a += " << bytes << ") memcpy(__builtin_assume_aligned(a, " << bytes
      << "), &v, sizeof(v));\n"
      << "  size_t t = (size_t)(end - a);\n"
      << BytePieces("t", "a", "s", bytes, eb, true, "  ") << "}\n";
  std::string ptr = OffsetPointer(BufferPointer(st->buffer.get(), st->span), base);
  std::string fill = Helper(name, def.str());
  if (!patch_ramp) {
    PrintIndent();
    stream_ << fill << "(" << ptr << ", " << PrintExpr(st->value) << ", " << count << ");\n";
    return true;
  }
  // The patched element's offset from the first, in 64 bits (the lanes compared, c0' + k for k
  // below the fill's length, do not wrap where the store's index does not).
  PrintIndent();
  stream_ << "{\n";
  indent_ += 2;
  PrintIndent();
  stream_ << et << "* tessera_fill_p = " << ptr << ";\n";
  PrintIndent();
  stream_ << fill << "(tessera_fill_p, " << PrintExpr(fill_value) << ", " << count << ");\n";
  PrintIndent();
  stream_ << "int64_t tessera_fill_k = (int64_t)(" << PrintExpr(patch_at) << ") - (int64_t)("
          << PrintExpr(patch_first) << ");\n";
  PrintIndent();
  stream_ << "if (tessera_fill_k >= 0 && tessera_fill_k < " << n * lanes
          << ") tessera_fill_p[tessera_fill_k] = " << PrintExpr(patch_value->value) << ";\n";
  if (tail_value) {
    PrintIndent();
    stream_ << "int64_t tessera_fill_t = " << PrintExpr(tail_at) << ";\n";
    PrintIndent();
    stream_ << "if (tessera_fill_t >= 0 && tessera_fill_t < " << tail_r << ") tessera_fill_p["
            << n * lanes << " + tessera_fill_t] = " << PrintExpr(tail_value) << ";\n";
  }
  indent_ -= 2;
  PrintIndent();
  stream_ << "}\n";
  return true;
}

namespace {

// Whether `e` is a lane-wise value cheap enough next to its loads and stores that computing
// one or two of its vectors twice costs nothing measurable: loads, constants, casts, + - *,
// min / max, compares, selects, bitwise operations. (Divisions and math functions are left
// out: a loop of a row of 16 vectors would compute an eighth more of them.) The addresses of
// the loads are not looked at: FlatLoadRewriter accepts only loads that follow the store, whose
// start past the nest's offset is free of the nest (a row of repeat, `i0 // 3`, computed once).
class CheapLaneValue : public ExprVisitor {
 public:
  static bool Check(const Expr& e) {
    CheapLaneValue v;
    v.VisitExpr(e);
    return v.cheap_;
  }
  using ExprVisitor::VisitExpr_;
  void VisitExpr_(const BufferLoadNode* op) override {}
  void VisitExpr_(const DivNode* op) override { cheap_ = false; }
  void VisitExpr_(const ModNode* op) override { cheap_ = false; }
  void VisitExpr_(const FloorDivNode* op) override { cheap_ = false; }
  void VisitExpr_(const FloorModNode* op) override { cheap_ = false; }
  void VisitExpr_(const LetNode* op) override { cheap_ = false; }
  void VisitExpr_(const ShuffleNode* op) override { cheap_ = false; }
  void VisitExpr_(const CallNode* op) override {
    cheap_ = cheap_ && (op->is_op("tir.bitwise_and") || op->is_op("tir.bitwise_or") ||
                        op->is_op("tir.bitwise_xor") || op->is_op("tir.bitwise_not") ||
                        op->is_op("tir.reinterpret"));
    ExprVisitor::VisitExpr_(op);
  }

 private:
  bool cheap_ = true;
};

// The loads of a stored value moved from the nest's position to a flat element offset `at`:
// a vector load at unit stride whose first element is `base + step` (base free of the nest)
// reads `base + at` instead. `ok` is cleared by any other use of the nest's variables.
class FlatLoadRewriter : public ExprMutator {
 public:
  FlatLoadRewriter(const std::vector<const ForNode*>& nest, const Expr& step, const Expr& at,
                   const VarNode* stored, int lanes)
      : nest_(nest), step_(step), at_(at), stored_(stored), lanes_(lanes) {}
  using ExprMutator::VisitExpr_;
  bool ok = true;
  int moved = 0;  // loads that follow the store

  Expr VisitExpr_(const BufferLoadNode* op) override {
    if (op->buffer->data.get() == stored_) ok = false;
    if (!UsesNest(GetRef(op))) return GetRef(op);
    auto* ramp = op->indices.size() == 1 ? AsPtr<RampNode>(AsUnitRamp(op->indices[0])) : nullptr;
    if (op->predicate || ramp == nullptr || !IsConstInt(ramp->stride, 1) || ramp->lanes != lanes_ ||
        op->buffer->dtype.is_bool() || op->buffer->dtype.is_vector() ||
        ramp->base->dtype != step_->dtype) {
      ok = false;
      return GetRef(op);
    }
    Expr base = ana_.Simplify(SubNode::Make(ramp->base, step_, op->span));
    if (UsesNest(base)) {
      ok = false;
      return GetRef(op);
    }
    ++moved;
    Expr index = RampNode::Make(IsConstInt(base, 0) ? at_ : AddNode::Make(base, at_, op->span),
                                MakeConst(base->dtype, int64_t{1}), lanes_, op->span);
    return BufferLoadNode::Make(op->buffer, {index}, nullptr, op->span);
  }
  Expr VisitExpr_(const VarNode* op) override {
    for (const ForNode* f : nest_) ok = ok && f->loop_var.get() != op;
    return GetRef(op);
  }

 private:
  bool UsesNest(const Expr& e) const {
    for (const ForNode* f : nest_) {
      if (UsesVar(e, f->loop_var.get())) return true;
    }
    return false;
  }
  const std::vector<const ForNode*>& nest_;
  Expr step_, at_;
  const VarNode* stored_;
  int lanes_;
  arith::Analyzer ana_;
};

}  // namespace

// A nest of serial loops whose one store writes consecutive vectors of a caller's array (the
// innermost loop's vectors follow one another, then the next loop's: first + sum((v_k - min_k)
// * L * (extents inside k))), each vector a cheap lane-wise value (CheapLaneValue) of loads that
// follow the store the same way (a copy, reshape, slice of rows, negation, bitwise not, cast):
// one flat loop over the elements whose stores start at the first address aligned to the
// vector, one unaligned vector before it and one ending at the last element (each computed
// from the loads at its own position: stored twice, the same values). numpy's arrays start
// 16 bytes into a 64-byte line, so every 64-byte vector stored there straddled two lines:
// 2048 x 2048 uint8 copies, one thread, Zen 4, 0.104-0.108 ms unaligned, 0.089 aligned, as
// fast as glibc's memcpy, which aligns its stores the same way.
bool CodeGenHost::PrintAlignedStoreLoop(const ForNode* op, const ForNode* tail) {
  // The outermost loop may be the function's parallel loop (then its chunks of iterations,
  // as OpenMP would hand them out, are the flat ranges; see below).
  const bool parallel = op->for_kind == ForKind::kParallel;
  if (parallel && (parallel_depth_ > 0 || fence_in_region_ || !AsConstInt(op->min))) return false;
  std::vector<const ForNode*> nest;
  VarMap lets;
  Stmt body;
  if (!CollectSerialNest(op, parallel, &nest, &lets, &body)) return false;
  if (nontemporal_depth_ > 0) return false;
  auto* st = AsPtr<BufferStoreNode>(body);
  if (st == nullptr || st->predicate || st->indices.size() != 1) return false;
  if (!restrict_vars_.count(st->buffer->data.get())) return false;
  DataType t = st->value->dtype, elem = st->buffer->dtype;
  if (!t.is_vector() || t.is_scalable_vector() || elem.is_bool() || elem.is_vector() ||
      elem.bits() % 8 != 0 || t.bits() != elem.bits()) {
    return false;
  }
  const int64_t lanes = t.lanes(), esize = elem.bits() / 8, bytes = lanes * esize;
  if (bytes != 16 && bytes != 32 && bytes != 64) return false;
  int64_t n = 1;
  for (const ForNode* f : nest) n *= *AsConstInt(f->extent);
  // At least 16 vectors in each flat range: the two extra ones then cost at most an eighth
  // more stores.
  const int64_t outer_extent = *AsConstInt(op->extent);
  const int64_t per_outer = n / outer_extent;
  if ((parallel ? per_outer : n) < 16) return false;
  Expr value = lets.empty() ? st->value : Substitute(st->value, lets);
  if (!CheapLaneValue::Check(value)) return false;
  Expr raw = AsUnitRamp(lets.empty() ? st->indices[0] : Substitute(st->indices[0], lets));
  auto* ramp = AsPtr<RampNode>(raw);
  if (ramp == nullptr || !IsConstInt(ramp->stride, 1) || ramp->lanes != lanes) return false;
  DataType bt = ramp->base->dtype;
  if (!bt.is_int() || (bt.bits() != 32 && bt.bits() != 64)) return false;
  // the vectors follow one another: first + step, step = sum((v_k - min_k) * stride_k)
  arith::Analyzer ana;
  Expr step = NestVectorStep(nest, bt, lanes);
  const int64_t count = n * lanes;  // elements stored
  if (bt.bits() == 32 && count > (int64_t{1} << 30)) return false;
  Expr base = ana.Simplify(SubNode::Make(ramp->base, step, op->span));
  for (const ForNode* f : nest) {
    if (UsesVar(base, f->loop_var.get())) return false;
  }
  // The value at a flat element offset `at` from the first element.
  Var at = VarNode::Make("tessera_vec_k", bt, op->span);
  made_vars_.push_back(at);
  FlatLoadRewriter rewrite(nest, step, at, st->buffer->data.get(), static_cast<int>(lanes));
  Expr flat_value = rewrite.VisitExpr(value);
  // (a value that reads nothing along the nest is a fill: PrintFillLoop's)
  if (!rewrite.ok || rewrite.moved == 0) return false;
  // A copy's tail (the split's remainder after tir.LoopPartition, rows of no whole number of
  // vectors): `for v in [0, E): if v < r: B[base + n * L + v] = A[a + n * L + v]` (a the
  // copy's first element read). The flat loop then stores n * L + r elements.
  int64_t tail_r = 0;
  if (tail != nullptr) {
    auto* fl = AsPtr<BufferLoadNode>(flat_value);
    auto* fr = fl && fl->indices.size() == 1 ? AsPtr<RampNode>(fl->indices[0]) : nullptr;
    auto text = AsConstInt(tail->extent);
    auto tmin = AsConstInt(tail->min);
    if (parallel || fr == nullptr || fl->dtype != t || tail->for_kind != ForKind::kSerial ||
        !tail->annotations.empty() || !text || !tmin || *tmin != 0) {
      return false;
    }
    VarMap tail_lets;
    const BufferStoreNode* ts = MatchTailStore(tail, *text, &tail_lets, &tail_r);
    if (ts == nullptr || ts->predicate || ts->buffer.get() != st->buffer.get() ||
        ts->indices.size() != 1 || !ts->value->dtype.is_scalar() || tail_r <= 0) {
      return false;
    }
    // the elements after the nest's: B[base + n * L + v] = A[a + n * L + v]
    Expr tail_value = Substitute(ts->value, tail_lets);
    auto* tl = AsPtr<BufferLoadNode>(tail_value);
    if (tl == nullptr || tl->predicate || tl->buffer.get() != fl->buffer.get() ||
        tl->indices.size() != 1 || tl->dtype != elem) {
      return false;
    }
    auto at_gap = [&](const Expr& idx, const Expr& first_elem) {
      Expr i = Substitute(idx, tail_lets);
      if (!i->dtype.is_scalar() || !i->dtype.is_int()) return false;
      Expr expect = AddNode::Make(
          CastTo(i->dtype,
                 AddNode::Make(first_elem, MakeConst(first_elem->dtype, count), op->span)),
          CastTo(i->dtype, tail->loop_var), op->span);
      auto gap = AsConstInt(ana.Simplify(SubNode::Make(i, expect, op->span)));
      return gap && *gap == 0;
    };
    VarMap at_zero{{at.get(), MakeConst(bt, int64_t{0})}};
    if (!at_gap(ts->indices[0], base) ||
        !at_gap(tl->indices[0], ana.Simplify(Substitute(fr->base, at_zero)))) {
      return false;
    }
    if (bt.bits() == 32 && count + tail_r > (int64_t{1} << 30)) return false;
  }
  auto store_at = [&](const Expr& k) {
    VarMap m{{at.get(), k}};
    Expr index = RampNode::Make(IsConstInt(base, 0) ? k : AddNode::Make(base, k, op->span),
                                MakeConst(bt, int64_t{1}), static_cast<int>(lanes), op->span);
    return BufferStoreNode::Make(st->buffer, Substitute(flat_value, m), {index}, nullptr, st->span);
  };
  std::string ptr =
      OffsetPointer(BufferPointer(st->buffer.get(), st->span),
                    ana.Simplify(SubNode::Make(FlatIndex(st->buffer.get(), {ramp->base}, st->span),
                                               step, op->span)));
  std::string type = TypeName(bt, op->span);
  // A copy (the value one load of the same type) of 32- or 64-byte vectors moves 64-byte lines
  // of two 32-byte vectors each, the stores aligned to the line: the loads, where the input
  // falls otherwise than the output, then split a cache line every other vector instead of
  // every one. 2048 x 2048 int8 reshape, one thread, Zen 4, input 48 bytes off the output:
  // 0.097 ms in 64-byte vectors, 0.088 in pairs of 32, glibc's memcpy 0.102 (float16
  // expand_dims, 8 MB: 0.227-0.310 / 0.218-0.238 / 0.225-0.247); inputs alike, as fast.
  auto* flat_load = AsPtr<BufferLoadNode>(flat_value);
  // Only a nest from the function's parallel loop, whose flat ranges stream the whole input:
  // a row's nest inside a loop may read the same row again and again (broadcast_to, repeat),
  // from the L1 or L2, where the stores bound it and twice as many cost (2048 x 2048 float32
  // broadcast_to, output 16 bytes into a line: 0.41-0.51 ms in 64-byte vectors, 0.83-0.88 in
  // pairs).
  const bool pair =
      parallel && flat_load != nullptr && flat_load->dtype == t && flat_load->indices.size() == 1 &&
      AsPtr<RampNode>(flat_load->indices[0]) != nullptr && (bytes == 32 || bytes == 64);
  const int64_t half = bytes == 64 ? lanes / 2 : lanes;
  auto half_store_at = [&](const Expr& k) {
    auto* r = AsPtr<RampNode>(flat_load->indices[0]);
    VarMap m{{at.get(), k}};
    Expr load_index = RampNode::Make(Substitute(r->base, m), MakeConst(r->base->dtype, int64_t{1}),
                                     static_cast<int>(half), op->span);
    Expr index = RampNode::Make(IsConstInt(base, 0) ? k : AddNode::Make(base, k, op->span),
                                MakeConst(bt, int64_t{1}), static_cast<int>(half), op->span);
    return BufferStoreNode::Make(
        st->buffer, BufferLoadNode::Make(flat_load->buffer, {load_index}, nullptr, op->span),
        {index}, nullptr, st->span);
  };
  // One flat loop over the elements [first, end) (its variables its own: it may be printed
  // twice, below).
  auto print_range = [&](Expr first, Expr end) {
    PrintIndent();
    stream_ << "{\n";
    int scope = BeginScope();
    Var k_var = VarNode::Make("tessera_vec_k", bt, op->span);
    made_vars_.push_back(k_var);
    Var first_var = VarNode::Make("tessera_vec_first", bt, op->span);
    Var end_var = VarNode::Make("tessera_vec_end", bt, op->span);
    made_vars_.push_back(first_var);
    made_vars_.push_back(end_var);
    if (!IsConstInt(first, 0)) {
      std::string name = AllocVarName(first_var.get());
      PrintIndent();
      stream_ << type << " " << name << " = " << PrintExpr(first) << ";\n";
      first = first_var;
    }
    if (!AsConstInt(end)) {
      std::string name = AllocVarName(end_var.get());
      PrintIndent();
      stream_ << type << " " << name << " = " << PrintExpr(end) << ";\n";
      end = end_var;
    }
    std::string at_first = IsConstInt(first, 0) ? ptr : OffsetPointer(ptr, first);
    // the elements before the first aligned vector (none where the array is not aligned to its
    // elements: then every store is unaligned, as before)
    Var skip_var = VarNode::Make("tessera_vec_skip", bt, op->span);
    made_vars_.push_back(skip_var);
    std::string skip = AllocVarName(skip_var.get());
    PrintIndent();
    stream_ << type << " " << skip << " = (" << type << ")((((uintptr_t)0 - (uintptr_t)("
            << at_first << ")) & " << (pair ? 63 : bytes - 1) << ") / " << esize << ");\n";
    if (esize > 1) {
      PrintIndent();
      stream_ << "if (((uintptr_t)(" << at_first << ") & " << esize - 1 << ") != 0) " << skip
              << " = 0;\n";
    }
    PrintIndent();
    stream_ << "if (" << skip << " != 0) {\n";
    int inner = BeginScope();
    PrintStmt(store_at(first));
    // (a pair's line starts up to 63 bytes on: two 32-byte vectors before it)
    if (pair && half == lanes) {
      PrintStmt(store_at(ana.Simplify(AddNode::Make(first, MakeConst(bt, lanes), op->span))));
    }
    EndScope(inner);
    PrintIndent();
    stream_ << "}\n";
    std::string k = AllocVarName(k_var.get());
    if (pair) {
      // a copy: lines of 64 bytes, each two 32-byte vectors (above); then what is left, less
      // than a line: one more vector where two are, and the vector ending at the last element
      std::string last2 =
          PrintExpr(ana.Simplify(SubNode::Make(end, MakeConst(bt, 2 * half), op->span)));
      PrintIndent();
      stream_ << type << " " << k << " = " << PrintExpr(AddNode::Make(first, skip_var)) << ";\n";
      PrintIndent();
      stream_ << "for (; " << k << " <= " << last2 << "; " << k << " += " << 2 * half << ") {\n";
      inner = BeginScope();
      PrintStmt(half_store_at(k_var));
      PrintStmt(half_store_at(AddNode::Make(k_var, MakeConst(bt, half), op->span)));
      EndScope(inner);
      PrintIndent();
      stream_ << "}\n";
      PrintIndent();
      stream_ << "if (" << k << " < " << PrintExpr(end) << ") {\n";
      inner = BeginScope();
      if (half == lanes) {
        PrintIndent();
        stream_ << "if (" << k << " <= "
                << PrintExpr(ana.Simplify(SubNode::Make(end, MakeConst(bt, lanes), op->span)))
                << ") {\n";
        int more = BeginScope();
        PrintStmt(store_at(k_var));
        EndScope(more);
        PrintIndent();
        stream_ << "}\n";
      }
      PrintStmt(store_at(ana.Simplify(SubNode::Make(end, MakeConst(bt, lanes), op->span))));
      EndScope(inner);
      PrintIndent();
      stream_ << "}\n";
      EndScope(scope);
      PrintIndent();
      stream_ << "}\n";
      return;
    }
    std::string last = PrintExpr(ana.Simplify(SubNode::Make(end, MakeConst(bt, lanes), op->span)));
    PrintIndent();
    stream_ << "for (" << type << " " << k << " = " << PrintExpr(AddNode::Make(first, skip_var))
            << "; " << k << " <= " << last << "; " << k << " += " << lanes << ") {\n";
    inner = BeginScope();
    PrintStmt(store_at(k_var));
    EndScope(inner);
    PrintIndent();
    stream_ << "}\n";
    // the vector ending at the last element: where the stores were shifted, or a copy's tail
    // (the elements past the whole vectors) is left
    PrintIndent();
    if (tail_r != 0) {
      stream_ << "{\n";  // a copy's tail: always stored
    } else {
      stream_ << "if (" << skip << " != 0) {\n";
    }
    inner = BeginScope();
    PrintStmt(store_at(ana.Simplify(SubNode::Make(end, MakeConst(bt, lanes), op->span))));
    EndScope(inner);
    PrintIndent();
    stream_ << "}\n";
    EndScope(scope);
    PrintIndent();
    stream_ << "}\n";
  };
  // The range of elements [first, end) of one flat loop: the whole nest, or in a parallel loop
  // one chunk of its iterations (OpenMP's schedule(dynamic, chunk) over chunk numbers instead).
  // With one thread to run it (OMP_NUM_THREADS=1, the benchmarks' CPU-time mode) the parallel
  // loop is one flat range over everything, without the OpenMP region: entering it and taking
  // 64 chunks cost 3-4 us a call on Zen 4 (a 4 MB int8 copy, one thread: 0.0935 ms in the
  // region, 0.0898 without; glibc's memcpy of the same bytes 0.086).
  if (!parallel) {
    print_range(MakeConst(bt, int64_t{0}), MakeConst(bt, count + tail_r));
    return true;
  }
  const int64_t chunk = (outer_extent + kParallelChunks - 1) / kParallelChunks;
  const int64_t chunks = (outer_extent + chunk - 1) / chunk;
  const int64_t chunk_elems = chunk * per_outer * lanes;
  // (OpenMP's own function, declared here: the C compiler may lack omp.h; without -fopenmp
  // the pragma is ignored and one thread runs the loop either way)
  std::string threads = Helper("tessera_max_threads",
                               "static inline int tessera_max_threads(void) {\n"
                               "#ifdef _OPENMP\n"
                               "  extern int omp_get_max_threads(void);\n"
                               "  return omp_get_max_threads();\n"
                               "#else\n"
                               "  return 1;\n"
                               "#endif\n"
                               "}\n");
  PrintIndent();
  stream_ << "if (" << threads << "() > 1) {\n";
  int threads_scope = BeginScope();
  Var chunk_var = VarNode::Make("tessera_vec_chunk", bt, op->span);
  made_vars_.push_back(chunk_var);
  std::string c = AllocVarName(chunk_var.get());
  PrintIndent();
  stream_ << "#pragma omp parallel for" << (chunks > 1 ? " schedule(dynamic, 1)" : "") << "\n";
  uses_openmp_ = true;
  PrintIndent();
  stream_ << "for (" << type << " " << c << " = 0; " << c << " < " << chunks << "; ++" << c
          << ") {\n";
  int chunk_scope = BeginScope();
  PrintIndent();
  stream_ << "if (" << c << " < 0 || " << c << " >= " << chunks << ") __builtin_unreachable();\n";
  Expr first = MulNode::Make(chunk_var, MakeConst(bt, chunk_elems), op->span);
  Expr end;
  if (count % chunk_elems == 0) {
    end = AddNode::Make(first, MakeConst(bt, chunk_elems), op->span);
  } else {
    end = MinNode::Make(AddNode::Make(first, MakeConst(bt, chunk_elems), op->span),
                        MakeConst(bt, count), op->span);
  }
  print_range(first, end);
  EndScope(chunk_scope);
  PrintIndent();
  stream_ << "}\n";
  EndScope(threads_scope);
  PrintIndent();
  stream_ << "} else {\n";
  int serial_scope = BeginScope();
  print_range(MakeConst(bt, int64_t{0}), MakeConst(bt, count));
  EndScope(serial_scope);
  PrintIndent();
  stream_ << "}\n";
  return true;
}

// A scalar int32 / int64 floordiv or floormod whose dividend the enclosing loops' ranges prove
// non-negative and whose divisor is a positive constant other than a power of two: C's `/` or
// `%` rounds the same way.
// The runtime's floor helpers test the signs of the dividend and the remainder; where GCC does
// not know the sign (the parallel body of an OpenMP loop that allocates a tile: its range
// assumption is left out, see ParallelRangeAssumption) they stayed as compares and conditional
// moves inside the loops that use them (a convolution's tile loop fused from rows and columns
// of tiles: every load's address recomputed, 28 x 28 outputs 55.7 -> 47 GFLOP/s on Zen 4).
std::string CodeGenHost::PrintScalarBinary(const BinaryNode* op) {
  const bool floor = op->kind == NodeKind::kFloorDiv || op->kind == NodeKind::kFloorMod;
  DataType t = op->a->dtype;
  if (floor && t.is_scalar() && t.is_int() && t.bits() >= 32 && op->b->dtype == t) {
    auto divisor = AsConstInt(op->b);
    // (by 2^k the helpers are what GCC makes a shift and a mask of, for either sign: C's `/`
    // and `%` of a value whose sign GCC does not know cost a sign correction more; a row
    // broadcast's `i % 256` measured 0.86-0.92 -> 1.16-1.22 ms)
    const bool power_of_two = divisor && (*divisor & (*divisor - 1)) == 0;
    if (divisor && *divisor > 0 && !power_of_two && loop_bounds_.CanProveGreaterEqual(op->a, 0)) {
      const char* sign = op->kind == NodeKind::kFloorDiv ? " / " : " % ";
      return "(" + PrintExpr(op->a) + sign + PrintExpr(op->b) + ")";
    }
  }
  return CodeGenC::PrintScalarBinary(op);
}

// for j in [0, S): p[Ramp(b + j, S, L)] = v(j), S a power of two from 2 to 16 and L lanes of a
// scalar type at least S: together the S stores write p[b .. b + S * L) contiguously, lane l of
// v(j) at b + l * S + j (OHWI -> OIHW8i4o's 4 x 8 blocks, read as 4 vectors of 8 input channels
// along which the output steps 4). Printed as the S vectors, interleaved by log2(S) rounds of
// two-vector shuffles (zip of the lower and upper halves) and stored as S contiguous vectors,
// where each lane was stored alone (OHWI -> OIHW8i4o of (128, 7, 7, 32) float32, one thread:
// 0.061 ms -> 0.022, TVM's default 0.027).
bool CodeGenHost::PrintInterleavedStores(const ForNode* op) {
  auto extent = AsConstInt(op->extent), min = AsConstInt(op->min);
  if (!extent || !min || *min != 0 || *extent < 2 || *extent > 16 || (*extent & (*extent - 1))) {
    return false;
  }
  if (op->for_kind != ForKind::kSerial && op->for_kind != ForKind::kUnrolled) return false;
  if (!op->annotations.empty()) return false;
  const int64_t S = *extent;
  const VarNode* k = op->loop_var.get();
  // let statements that do not depend on the loop: substituted into the store
  VarMap lets;
  Stmt body = op->body;
  while (auto* let = AsPtr<LetStmtNode>(body)) {
    if (UsesVar(let->value, k) || !let->var->dtype.is_scalar()) return false;
    lets[let->var.get()] = Substitute(let->value, lets);
    body = let->body;
  }
  auto* store = AsPtr<BufferStoreNode>(body);
  if (store == nullptr || store->predicate) return false;
  const DataType t = store->value->dtype;
  const DataType elem = store->buffer->dtype;
  if (!t.is_vector() || t.is_scalable_vector() || t.lanes() < S || elem.is_vector() ||
      elem.is_bool() || IsHalfBits(elem) || t.element_of() != elem ||
      (elem.bits() != 8 && elem.bits() != 16 && elem.bits() != 32 && elem.bits() != 64)) {
    return false;
  }
  const int lanes = t.lanes();
  if ((lanes & (lanes - 1)) != 0 || lanes * elem.bits() > 512) return false;
  Expr index = Substitute(FlatIndex(store->buffer.get(), store->indices, store->span), lets);
  auto* ramp = AsPtr<RampNode>(index);
  if (ramp == nullptr || !IsConstInt(ramp->stride, S)) return false;
  arith::Analyzer ana;
  VarMap at_zero;
  at_zero[k] = MakeConst(op->loop_var->dtype, int64_t{0});
  Expr base = ana.Simplify(Substitute(ramp->base, at_zero));
  if (UsesVar(base, k)) return false;
  auto step =
      AsConstInt(ana.Simplify(SubNode::Make(ramp->base, AddNode::Make(base, op->loop_var))));
  if (!step || *step != 0) return false;
  // The values may not read the stored buffer (each store then sees the earlier ones), nor
  // call anything.
  Expr value = Substitute(store->value, lets);
  bool refused = false;
  PostOrderVisit(value, [&](const ObjectRef& n) {
    if (auto* load = AsPtr<BufferLoadNode>(n)) {
      refused |= load->buffer.get() == store->buffer.get() ||
                 load->buffer->data.get() == store->buffer->data.get();
    }
    if (AsPtr<CallNode>(n)) refused = true;
  });
  if (refused) return false;

  const std::string vt = TypeName(t, op->span);
  const std::string st = CodeGenC::TypeName(elem, op->span);
  const std::string mt = TypeName(DataType::Int(elem.bits(), lanes), op->span);
  const std::string name = "tessera_store_interleave" + std::to_string(S) + "_" + vt.substr(8);
  std::ostringstream def;
  def << "static inline void " << name << "(" << st << "* p";
  for (int64_t j = 0; j < S; ++j) def << ", " << vt << " v" << j;
  def << ") {\n";
  auto mask = [&](bool hi) {
    std::ostringstream m;
    m << "(" << mt << "){";
    for (int i = 0; i < lanes; ++i) {
      const int pos = (hi ? lanes / 2 : 0) + i / 2;
      m << (i ? ", " : "") << (i % 2 ? pos + lanes : pos);
    }
    m << "}";
    return m.str();
  };
  def << "  const " << mt << " lo = " << mask(false) << ", hi = " << mask(true) << ";\n";
  // Interleaving v0 .. v(S-1): zip v(i) with v(i + S/2) into lo(i), hi(i); then the lo's
  // interleaved give the first S/2 output vectors, the hi's the last S/2 (recursively).
  int counter = 0;
  std::function<std::vector<std::string>(const std::vector<std::string>&)> interleave =
      [&](const std::vector<std::string>& v) -> std::vector<std::string> {
    const size_t n = v.size();
    if (n == 1) return v;
    std::vector<std::string> los, his;
    for (size_t i = 0; i < n / 2; ++i) {
      std::string a = "t" + std::to_string(counter++), b = "t" + std::to_string(counter++);
      def << "  " << vt << " " << a << " = __builtin_shuffle(" << v[i] << ", " << v[i + n / 2]
          << ", lo), " << b << " = __builtin_shuffle(" << v[i] << ", " << v[i + n / 2]
          << ", hi);\n";
      los.push_back(a);
      his.push_back(b);
    }
    std::vector<std::string> out = interleave(los), rest = interleave(his);
    out.insert(out.end(), rest.begin(), rest.end());
    return out;
  };
  std::vector<std::string> in;
  for (int64_t j = 0; j < S; ++j) in.push_back("v" + std::to_string(j));
  std::vector<std::string> out = interleave(in);
  for (size_t j = 0; j < out.size(); ++j) {
    def << "  memcpy(p + " << j * lanes << ", &" << out[j] << ", sizeof(" << vt << "));\n";
  }
  def << "}\n";
  std::ostringstream call;
  call << Helper(name, def.str()) << "("
       << OffsetPointer(BufferPointer(store->buffer.get(), store->span), base);
  for (int64_t j = 0; j < S; ++j) {
    VarMap at_j;
    at_j[k] = MakeConst(op->loop_var->dtype, j);
    call << ", " << PrintExpr(ana.Simplify(Substitute(value, at_j)));
  }
  call << ")";
  PrintIndent();
  stream_ << call.str() << ";\n";
  return true;
}

// (GCC kept such a tile's vectors in registers but also stored them to the local array at each
// iteration of the loop: conv2d 3x3 NCHW 256->256 at 14x14 outputs, Zen 4, one thread, 88 ->
// 99 GFLOP/s held in variables; bench/RESULTS.md, session 20, s20b.)
bool CodeGenHost::PrintWithPromotedTile(const ForNode* op) {
  if (op->for_kind != ForKind::kSerial || allocated_.empty()) return false;
  // The accesses in the loop of each buffer allocated outside it: whole vectors of one type at
  // constant offsets that do not overlap, at least one stored; no other use of the buffer.
  struct Use {
    DataType t;
    const BufferNode* buffer = nullptr;
    std::set<int64_t> offsets;
    bool ok = true, stored = false;
  };
  std::map<const VarNode*, Use> uses;
  std::set<const VarNode*> inner;
  auto access = [&](const BufferNode* buf, const std::vector<Expr>& indices, DataType t,
                    const Expr& predicate, bool store, const Span& span) {
    const VarNode* v = buf->data.get();
    if (!allocated_.count(v)) return;
    auto held = promoted_.lower_bound({v, std::numeric_limits<int64_t>::min()});
    if (held != promoted_.end() && held->first.first == v) return;  // held by an outer loop
    Use& u = uses[v];
    if (!u.buffer) {
      u.buffer = buf;
      u.t = t;
    }
    u.stored = u.stored || store;
    if (predicate || !t.is_vector() || t != u.t || buf->dtype.is_vector() || buf->dtype.is_bool() ||
        u.buffer->dtype != buf->dtype) {
      u.ok = false;
      return;
    }
    const Expr index = AsUnitRamp(FlatIndex(buf, indices, span));
    auto* ramp = AsPtr<RampNode>(index);
    auto base = ramp && IsConstInt(ramp->stride, 1) ? AsConstInt(ramp->base) : std::nullopt;
    if (!base) {
      u.ok = false;
      return;
    }
    u.offsets.insert(*base);
  };
  bool outlined = false;  // a parallel loop inside: its body is printed as another function
  PostOrderVisit(op->body, [&](const ObjectRef& n) {
    if (auto* a = AsPtr<AllocateNode>(n)) inner.insert(a->buffer_var.get());
    if (auto* f = AsPtr<ForNode>(n)) outlined = outlined || f->for_kind == ForKind::kParallel;
    if (auto* l = AsPtr<BufferLoadNode>(n)) {
      access(l->buffer.get(), l->indices, l->dtype, l->predicate, false, l->span);
    } else if (auto* st = AsPtr<BufferStoreNode>(n)) {
      access(st->buffer.get(), st->indices, st->value->dtype, st->predicate, true, st->span);
    } else if (auto* v = AsPtr<VarNode>(n)) {
      if (allocated_.count(v)) uses[v].ok = false;  // the pointer itself (a call's argument)
    }
  });
  if (outlined) return false;
  std::vector<const VarNode*> chosen;
  size_t held = 0;
  for (auto& [v, u] : uses) {
    if (!u.ok || !u.stored || !u.buffer || inner.count(v) || u.offsets.empty()) continue;
    bool apart = true;
    int64_t last = 0;
    bool first = true;
    for (int64_t o : u.offsets) {
      apart = apart && o >= 0 && (first || o - last >= u.t.lanes());
      last = o;
      first = false;
    }
    // At most a register file of vectors (32 on AVX-512) in all: larger tiles stay in memory.
    if (apart && held + u.offsets.size() <= 32) {
      chosen.push_back(v);
      held += u.offsets.size();
    }
  }
  if (chosen.empty()) return false;
  std::vector<std::tuple<const BufferNode*, int64_t, std::string, DataType>> vars;
  for (const VarNode* v : chosen) {
    const Use& u = uses[v];
    for (int64_t o : u.offsets) {
      std::string name = "tessera_acc" + std::to_string(promoted_vars_++);
      vars.emplace_back(u.buffer, o, name, u.t);
    }
  }
  // Before the loop: each vector loaded into its variable; after it: stored back.
  auto pointer = [&](const BufferNode* buf, int64_t o) {
    return OffsetPointer(BufferPointer(buf, op->span), IntConst(DataType::Int(32), o));
  };
  for (const auto& [buf, o, name, t] : vars) {
    const std::string vt = TypeName(t, op->span), st = CodeGenC::TypeName(buf->dtype, op->span);
    const std::string load = "tessera_load_" + vt.substr(8);
    std::ostringstream def;
    def << "static inline " << vt << " " << load << "(const " << st << "* p) {\n  " << vt
        << " r;\n  memcpy(&r, p, sizeof(r));\n  return r;\n}\n";
    PrintIndent();
    stream_ << vt << " " << name << " = " << Helper(load, def.str()) << "(" << pointer(buf, o)
            << ");\n";
  }
  for (const auto& [buf, o, name, t] : vars) promoted_[{buf->data.get(), o}] = name;
  VisitStmt_(op);
  for (const auto& [buf, o, name, t] : vars) promoted_.erase({buf->data.get(), o});
  for (const auto& [buf, o, name, t] : vars) {
    const std::string vt = TypeName(t, op->span), st = CodeGenC::TypeName(buf->dtype, op->span);
    const std::string store = "tessera_store_" + vt.substr(8);
    std::ostringstream def;
    def << "static inline void " << store << "(" << st << "* p, " << vt
        << " v) {\n  memcpy(p, &v, sizeof(v));\n}\n";
    PrintIndent();
    stream_ << Helper(store, def.str()) << "(" << pointer(buf, o) << ", " << name << ");\n";
  }
  return true;
}

void CodeGenHost::VisitStmt_(const ForNode* op) {
  // The loop's range, while its body is printed (PrintScalarBinary).
  struct BoundScope {
    arith::Analyzer* ana = nullptr;
    Var var;
    ~BoundScope() {
      if (ana) ana->Unbind(var);
    }
  } bound;
  if (op->loop_var->dtype.is_scalar() && op->loop_var->dtype.is_int() &&
      !loop_bounds_.IsBound(op->loop_var.get())) {
    auto min = AsConstInt(op->min), extent = AsConstInt(op->extent);
    if (min && extent && *extent > 0) {
      loop_bounds_.Bind(op->loop_var, arith::ConstIntBound{*min, *min + *extent - 1});
      bound.ana = &loop_bounds_;
      bound.var = op->loop_var;
    }
  }
  if (PrintWithPromotedTile(op)) return;
  // The fence that orders streaming stores (below) after the outermost loop that holds them,
  // not after each annotated loop: a fence waits for the write-combining buffers to drain, and
  // one per chunk of 4 KB (a 4096-point chunk of a bool compare) cost 20%, per 1 KB twice the
  // time (a float32 copy of 16 MB on Zen 4, 0.82 ms with a fence per 16 KB). The outermost
  // parallel loop fences once per thread; a serial nest without parallel loops once after it;
  // annotated loops elsewhere (beside a parallel loop in a serial one) after themselves.
  if (!fence_owner_ && parallel_depth_ == 0) {
    bool holds_parallel = false;
    const bool streams = HoldsNontemporal(op, &holds_parallel);
    const bool parallel = op->for_kind == ForKind::kParallel;
    if (streams && (parallel || !holds_parallel)) {
      fence_owner_ = true;
      fence_in_region_ = parallel;
      VisitStmt_(op);
      fence_in_region_ = false;
      fence_owner_ = false;
      if (!parallel) PrintStoreFence();
      return;
    }
  }
  // sch.annotate(loop, "pragma_fast_math", 1): vector expf inside uses a polynomial (below).
  auto fm = op->annotations.find("pragma_fast_math");
  auto* fm_imm = fm == op->annotations.end() ? nullptr : AsPtr<IntImmNode>(fm->second);
  if (fm_imm && fm_imm->value != 0) {
    AttrMap rest = op->annotations;
    rest.erase("pragma_fast_math");
    For inner = ForNode::Make(op->loop_var, op->min, op->extent, op->for_kind, op->body,
                              op->thread_binding, rest, op->span);
    ++fast_math_depth_;
    VisitStmt_(inner.get());
    --fast_math_depth_;
    return;
  }
  // sch.annotate(loop, "pragma_nontemporal", 1): the contiguous vector stores inside stream past
  // the caches (output written once, not read back soon); a fence after the loop orders them.
  auto nt = op->annotations.find("pragma_nontemporal");
  auto* nt_imm = nt == op->annotations.end() ? nullptr : AsPtr<IntImmNode>(nt->second);
  if (nt_imm && nt_imm->value != 0 && nontemporal_depth_ == 0) {
    AttrMap rest = op->annotations;
    rest.erase("pragma_nontemporal");
    For inner = ForNode::Make(op->loop_var, op->min, op->extent, op->for_kind, op->body,
                              op->thread_binding, rest, op->span);
    // Two versions of the loop: streaming where the stored buffers start aligned to their
    // vectors, ordinary stores otherwise. (Each streaming store still checks its own address;
    // a loop of them on a misaligned output, numpy's 16 bytes into a line, took 3-5% longer
    // than the ordinary loop for the check's branch.)
    std::vector<std::string> aligned;
    std::set<std::string> seen;
    PostOrderVisit(inner->body, [&](const ObjectRef& n) {
      auto* store = AsPtr<BufferStoreNode>(n);
      if (store == nullptr || store->predicate || !store->value->dtype.is_vector()) return;
      const BufferNode* buf = store->buffer.get();
      const int bytes = store->value->dtype.bits() * store->value->dtype.lanes() / 8;
      if (buf->dtype.is_bool() || buf->dtype.is_vector() || !HasVarName(buf->data.get()) ||
          (bytes != 4 && bytes != 8 && bytes != 16 && bytes != 32 && bytes != 64)) {
        return;
      }
      std::string test = "(((uintptr_t)" + BufferPointer(buf, store->span) + " & " +
                         std::to_string(bytes - 1) + ") == 0)";
      if (seen.insert(test).second) aligned.push_back(test);
    });
    if (aligned.empty()) {
      ++nontemporal_depth_;
      VisitStmt_(inner.get());
      --nontemporal_depth_;
    } else {
      std::string cond;
      for (const std::string& a : aligned) cond += (cond.empty() ? "" : " && ") + a;
      PrintIndent();
      stream_ << "if (" << cond << ") {\n";
      Names names = SaveNames();
      VarMap lets = int_lets_;
      indent_ += 2;
      ++nontemporal_depth_;
      VisitStmt_(inner.get());
      --nontemporal_depth_;
      RestoreNames(std::move(names));
      int_lets_ = lets;
      indent_ -= 2;
      PrintIndent();
      stream_ << "} else {\n";
      indent_ += 2;
      VisitStmt_(inner.get());
      indent_ -= 2;
      PrintIndent();
      stream_ << "}\n";
    }
    if (!fence_owner_) PrintStoreFence();
    return;
  }
  if (op->for_kind == ForKind::kParallel && parallel_depth_ == 0 && PrintAlignedStoreLoop(op)) {
    return;
  }
  if (op->for_kind == ForKind::kParallel && parallel_depth_ == 0) {
    // A parallel loop that fences its streaming stores: each thread fences once, after its
    // last chunk (`omp for nowait`, then the fence, then the region's barrier).
    const bool region = fence_in_region_;
    fence_in_region_ = false;
    PrintIndent();
    if (region) {
      stream_ << "#pragma omp parallel\n";
      PrintIndent();
      stream_ << "{\n";
      indent_ += 2;
      PrintIndent();
      stream_ << "#pragma omp for" << OpenMPSchedule(op->extent) << " nowait\n";
    } else {
      stream_ << "#pragma omp parallel for" << OpenMPSchedule(op->extent) << "\n";
    }
    uses_openmp_ = true;
    ++parallel_depth_;
    parallel_loop_ = op;
    if (!PrintOutlinedParallelLoop(op)) CodeGenC::VisitStmt_(op);
    parallel_loop_ = nullptr;
    --parallel_depth_;
    if (region) {
      PrintStoreFence();
      indent_ -= 2;
      PrintIndent();
      stream_ << "}\n";
    }
    return;
  }
  if (PrintLaneFold(op, nullptr)) return;
  if (PrintInterleavedStores(op)) return;
  if (PrintFillLoop(op)) return;
  if (PrintAlignedStoreLoop(op)) return;
  if (op->for_kind == ForKind::kUnrolled) {
    if (auto n = AsConstInt(op->extent)) {
      PrintIndent();
      stream_ << "#pragma GCC unroll " << std::max<int64_t>(*n, 1) << "\n";
    }
  }
  CodeGenC::VisitStmt_(op);
}

}  // namespace codegen

HostSource CodeGenHost(const IRModule& mod, size_t split_bytes) {
  return codegen::CodeGenHost().Generate(mod, split_bytes);
}

std::vector<std::string> DefaultHostCompileFlags(const std::string& include_dir, bool openmp) {
  // -fwrapv: integer arithmetic wraps as the IR's does; -fno-strict-aliasing: buffers may be
  // reinterpreted; -fno-math-errno: math functions need not set errno (the IR has no errno),
  // so sqrt and friends become instructions and their lane loops vectorize;
  // -fno-trapping-math: nor do floating-point exception flags count (the IR has none either),
  // so the lane loops of floorf, ceilf, truncf become one vector rounding instead of a scalar
  // one per lane (bench_topi --all, 2048 x 2048 float32, AMD Zen 4 AVX-512, one thread: ceil
  // 2.42 -> 0.72 ms, trunc 2.45 -> 0.92); hidden symbols keep libraries apart, and entry
  // points export themselves.
  std::vector<std::string> flags = {"-std=gnu11",           "-O2",
                                    "-march=native",        "-fwrapv",
                                    "-fno-strict-aliasing", "-fno-math-errno",
                                    "-fno-trapping-math",   "-fvisibility=hidden",
                                    "-I" + include_dir};
  if (openmp) flags.push_back("-fopenmp");
  if (HaveLibmvec()) {
    // runtime.h declares the vector math variants; -lmvec is recorded whatever the order.
    flags.push_back("-DTESSERA_HAVE_LIBMVEC=1");
    flags.push_back("-Wl,--no-as-needed,-lmvec");
  }
  return flags;
}

bool HaveLibmvec() {
#if defined(__x86_64__) && defined(__GLIBC__)
  static const bool found = [] {
    if (const char* off = std::getenv("TESSERA_NO_LIBMVEC"); off != nullptr && *off != '\0') {
      return false;
    }
    for (const char* dir : {"/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu", "/usr/lib64",
                            "/lib64", "/usr/lib"}) {
      std::error_code ec;
      if (std::filesystem::exists(std::string(dir) + "/libmvec.so", ec)) return true;
    }
    return false;
  }();
  return found;
#else
  return false;
#endif
}

}  // namespace tessera
