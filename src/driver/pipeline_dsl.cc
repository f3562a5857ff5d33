// The vector DSL's stage table ("dsl"): the order of its passes, in one place.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tessera/driver/stage.h"
#include "tessera/runtime/dso_module.h"
#include "tessera/runtime/packed_func.h"
#include "tessera/runtime_abi.h"
#include "tessera/target/codegen_dsl.h"
#include "tessera/target/toolchain.h"
#include "tessera/transform/analysis.h"
#include "tessera/transform/dsl_passes.h"
#include "tessera/transform/passes.h"

namespace tessera {
namespace lower {
namespace {

// The headers are part of what gets compiled, so they are part of the cache key: tessera/dsl.h
// and the files of tessera/dsl/, in name order.
std::string HeaderText(const std::string& include_dir) {
  namespace fs = std::filesystem;
  std::vector<fs::path> files = {fs::path(include_dir) / "compass" / "dsl.h",
                                 fs::path(include_dir) / "tessera" / "dsl.h",
                                 fs::path(include_dir) / "tessera" / "runtime_abi.h"};
  std::vector<fs::path> parts;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(fs::path(include_dir) / "tessera" / "dsl", ec)) {
    if (entry.path().extension() == ".h") parts.push_back(entry.path());
  }
  std::sort(parts.begin(), parts.end());
  files.insert(files.end(), parts.begin(), parts.end());
  std::string text;
  for (const fs::path& f : files) {
    std::ifstream in(f);
    std::stringstream content;
    content << in.rdbuf();
    text += f.filename().string() + "\n" + content.str();
  }
  return text;
}

// Whether BuildManager made the module of a te or TensorIR function (tir_build.py marks it).
bool FromTensorIR(const IRModule& mod) {
  for (const auto& [gv, f] : mod->functions) {
    if (f->attrs.count("dsl.from_tensor_ir")) return true;
  }
  return false;
}

StageResult DslBegin(IRModule mod, LowerContext& ctx) {
  PassRunner run(ctx, Stage::kBegin);
  transform::RefuseScalableVectors(mod, ctx.dsl_target ? ctx.dsl_target->name : "dsl");
  mod = run(mod, transform::BindTarget(ctx.dsl_target ? ctx.dsl_target->name : "dsl"));
  if (ctx.dsl_target) mod = run(mod, transform::VerifyTargetFeatures(*ctx.dsl_target));
  mod = run(mod, "tir.VerifyBufferBounds");
  return {mod, false, nullptr};
}

StageResult DslCleanup(IRModule mod, LowerContext& ctx) {
  PassRunner run(ctx, Stage::kCleanup);
  mod = run(mod, "dsl.FoldConstant");
  mod = run(mod, transform::SimplifyKeepingLets());
  mod = run(mod, "tir.HoistIfThenElse");
  mod = run(mod, "tir.RemoveNoOp");
  // A te or TensorIR function (not an @S.prim_func): a loop over a condition on its iterations
  // splits into the iterations where it holds and the rest, as Compass partitions scheduled
  // functions (a loop split by the vector width: full vectors, then the tail).
  // Its loops of one iteration go first, as Compass's build drops them with the blocks (a te
  // split by 8 of at most 8 elements: one vector, no loop around it).
  mod = run.If(FromTensorIR(mod), mod, "dsl.RemoveUnitLoops");
  mod = run.If(FromTensorIR(mod), mod, "tir.LoopPartition");
  // S.vectorized loops of a constant extent become vector code, as Compass lowers them (a body
  // that cannot be vectorized keeps its loop); a body under `if lane + k < n` (a tail) becomes
  // loads and stores masked by the lanes where it holds.
  mod = run(mod, transform::SplitVectorizedLoops(/*native_vector_bits=*/256));
  mod = run(mod, transform::VectorizeLoop(/*enable_vectorize=*/true, /*mask_tails=*/true));
  mod = run(mod, "dsl.LowerActiveLaneMask");
  mod = run(mod, "dsl.RenameLoopVar");
  if (ctx.dsl_target) mod = run(mod, transform::VerifyLocalMemory(*ctx.dsl_target));
  return {mod, false, nullptr};
}

StageResult DslLegalize(IRModule mod, LowerContext& ctx) {
  PassRunner run(ctx, Stage::kLegalize);
  // Where Compass's DSL build runs tir.transform.CommonSubexprElimTIR: after the loop passes,
  // before vector widths are legalized and instructions combined.
  mod = run(mod, "dsl.CommonSubexprElim");
  mod = run(mod, "dsl.AlignVectorWidth");
  mod = run(mod, transform::SimplifyKeepingLets());
  mod = run(mod, "dsl.TruncDivMod");
  mod = run(mod, "dsl.CombineInstructions");
  return {mod, false, nullptr};
}

// The packed entry point of the kernel, as the runtime calls it (CodeGenDSLLauncher writes it).
runtime::PackedFunctionInfo EntryInfo(const IRModule& mod, const std::string& entry) {
  runtime::PackedFunctionInfo info;
  info.name = entry;
  info.symbol = TESSERA_PACKED_PREFIX + entry;
  info.ret = "void";
  info.dsl = true;
  PrimFunc f = mod->Lookup(entry);
  if (!f) {
    for (const auto& [gv, g] : mod->functions) {
      if (g->GetStrAttr("global_symbol", gv->name_hint) == entry) f = g;
    }
  }
  if (!f) return info;
  for (const Var& p : f->params) {
    DataType t = p->pointer ? p->pointer->element.element_of() : p->dtype;
    std::string kind = p->pointer                          ? "handle"
                       : t.is_bool()                       ? "bool"
                       : (t.is_float() || t.is_bfloat16()) ? "float"
                                                           : "int";
    info.params.push_back({kind, t.ToString(), p->name});
  }
  return info;
}

// A DSL text with each `(vtype)__vbcast(x)` written `(vtype)x`. The compiled text and the text
// `.c_code` shows must be equal after this (CodeGenDSL's two splat spellings; checked on every
// build). A `__vbcast(` not right after a cast (bfloat16x16, a struct) is kept.
std::string WithOpenCLSplats(const std::string& compiled) {
  static const std::string kCall = "__vbcast(";
  std::string out;
  out.reserve(compiled.size());
  std::vector<int> closers;  // depths whose `)` closes a removed __vbcast(
  int depth = 0;
  for (size_t i = 0; i < compiled.size();) {
    if (!out.empty() && out.back() == ')' && compiled.compare(i, kCall.size(), kCall) == 0) {
      closers.push_back(depth++);
      i += kCall.size();
      continue;
    }
    char c = compiled[i++];
    if (c == '"' || c == '\'') {  // a literal (S.printf's format): copied whole
      out += c;
      while (i < compiled.size() && compiled[i] != c) {
        if (compiled[i] == '\\' && i + 1 < compiled.size()) out += compiled[i++];
        out += compiled[i++];
      }
      if (i < compiled.size()) out += compiled[i++];
      continue;
    }
    if (c == '(') {
      ++depth;
    } else if (c == ')') {
      --depth;
      if (!closers.empty() && closers.back() == depth) {
        closers.pop_back();
        continue;
      }
    }
    out += c;
  }
  return out;
}

// The length of the string or character literal that starts at `text[i]`, quotes included.
size_t LiteralLength(const std::string& text, size_t i) {
  char quote = text[i];
  size_t j = i + 1;
  while (j < text.size() && text[j] != quote) j += text[j] == '\\' ? 2 : 1;
  return std::min(j + 1, text.size()) - i;
}

// A DSL text with each `__vadd(x, y, ALL_TRUE_h)` (and __vsub, __vmul) written `(x + y)`: the
// compiled and the shown spelling of an unmasked bfloat16 vector operator (see CodeGenDSL; only
// bfloat16x16 has 16 lanes among the types whose unmasked +, -, * print as a call).
std::string WithBfloat16Operators(const std::string& text) {
  static const std::pair<std::string, std::string> kCalls[] = {
      {"__vadd(", " + "}, {"__vsub(", " - "}, {"__vmul(", " * "}};
  auto is_word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    if (text[i] == '"' || text[i] == '\'') {
      size_t n = LiteralLength(text, i);
      out.append(text, i, n);
      i += n;
      continue;
    }
    bool rewritten = false;
    for (const auto& [call, symbol] : kCalls) {
      if ((i > 0 && is_word(text[i - 1])) || text.compare(i, call.size(), call) != 0) continue;
      // The call's arguments, split at the commas outside parentheses and literals.
      std::vector<std::string> args(1);
      size_t j = i + call.size();
      int depth = 0;
      while (j < text.size() && !(depth == 0 && text[j] == ')')) {
        char c = text[j];
        if (c == '"' || c == '\'') {
          size_t n = LiteralLength(text, j);
          args.back().append(text, j, n);
          j += n;
          continue;
        }
        depth += c == '(' ? 1 : c == ')' ? -1 : 0;
        if (depth == 0 && c == ',') {
          args.emplace_back();
          j += text.compare(j, 2, ", ") == 0 ? 2 : 1;
          continue;
        }
        args.back() += c;
        ++j;
      }
      if (j < text.size() && args.size() == 3 && args[2] == "ALL_TRUE_h") {
        out += "(" + WithBfloat16Operators(args[0]) + symbol + WithBfloat16Operators(args[1]) + ")";
        i = j + 1;
        rewritten = true;
      }
      break;
    }
    if (!rewritten) out += text[i++];
  }
  return out;
}

// What the compiled and the shown text (CodeGenDSL's two spellings) must both become.
std::string ShownSpelling(const std::string& text) {
  return WithOpenCLSplats(WithBfloat16Operators(text));
}

StageResult DslCodegen(IRModule mod, LowerContext& ctx) {
  auto built = std::make_shared<runtime::ModuleNode>();
  built->target = "dsl";
  built->entry = ctx.entry;
  built->ir = mod;
  built->functions = {EntryInfo(mod, ctx.entry)};
  // Shown (`.c_code`) with OpenCL C's splat casts and bfloat16 vector operators, compiled with
  // the same splats through __vbcast and the operators as the header's calls, which GCC takes:
  // the same text otherwise (see CodeGenDSL).
  built->source = CodeGenDSL(mod, ctx.entry, /*opencl_spelling=*/true);
  built->compiled_source = CodeGenDSL(mod, ctx.entry);
  // A splat among a call's operands keeps `__vbcast` in both texts, so both are normalized.
  TESSERA_ICHECK(ShownSpelling(built->compiled_source) == ShownSpelling(built->source))
      << "the DSL source shown and the one compiled differ in more than their splats and "
         "bfloat16 operators";
  char dump_name[32];
  std::snprintf(dump_name, sizeof(dump_name), "%03d_codegen.cl", ++ctx.pass_counter);
  DumpText(ctx, dump_name, built->compiled_source);
  std::vector<std::string> flags = DefaultDSLCompileFlags(ctx.include_dir);
  for (std::string& f : ExtraCompilerOptions(ctx)) flags.push_back(std::move(f));
  std::string unit = built->compiled_source + "\n" + CodeGenDSLLauncher(mod, ctx.entry);
  // The command that compiles the unit on its own (get_source("asm") runs it).
  built->compile_command = flags;
  built->compile_command.insert(built->compile_command.begin(), FindHostCompiler());
  // The build links the launch machinery from the support object, compiled once per flags, and
  // reads tessera/dsl.h from a precompiled header where the compiler has them (see "One library,
  // two units" in tessera/dsl.h): the same library, several times faster to build.
  std::string headers = HeaderText(ctx.include_dir);
  SharedLibraryExtras extras;
  extras.objects = {CompileCachedObject(DSLSupportUnit(), flags, ctx.cache_dir, headers)};
  flags.push_back("-DTESSERA_DSL_SPLIT");
  std::string pch =
      PrecompiledHeaderDir(ctx.include_dir, "compass/dsl.h", flags, ctx.cache_dir, headers);
  if (!pch.empty()) extras.accelerators = {"-I" + pch};
  built->lib_path = CompileSharedLibrary(unit, flags, ctx.cache_dir, headers, extras);
  return {mod, false, built};
}

StageResult DslEnd(IRModule mod, LowerContext& ctx) {
  if (ctx.built) runtime::LoadHostLibrary(ctx.built.get());
  return {mod, true, ctx.built};
}

StageResult Nothing(IRModule mod, LowerContext&) { return {mod, false, nullptr}; }

/*! \brief Stages of the vector DSL target, in execution order. */
StageTable DslStages() {
  return {
      {Stage::kBegin, "begin", DslBegin},       {Stage::kNormalize, "normalize", Nothing},
      {Stage::kFlatten, "flatten", Nothing},    {Stage::kLoop, "loop", Nothing},
      {Stage::kCleanup, "cleanup", DslCleanup}, {Stage::kLegalize, "legalize", DslLegalize},
      {Stage::kCodegen, "codegen", DslCodegen}, {Stage::kEnd, "end", DslEnd},
  };
}

}  // namespace

TESSERA_REGISTER_STAGES("dsl", DslStages);

}  // namespace lower
}  // namespace tessera
