// Stage names, the stage registry, the pass runner and StageLowerer.
#include "tessera/driver/stage.h"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <mutex>
#include <sstream>

#include "tessera/ir/printer.h"
#include "tessera/support/error.h"

namespace tessera {
namespace lower {
namespace {

constexpr Stage kAllStages[] = {Stage::kBegin,   Stage::kNormalize, Stage::kFlatten, Stage::kLoop,
                                Stage::kCleanup, Stage::kLegalize,  Stage::kSplit,   Stage::kFinalize,
                                Stage::kCodegen, Stage::kEnd};

struct Registry {
  std::mutex mu;
  std::map<std::string, StageTable> tables;
};

Registry& Global() {
  static Registry* r = new Registry();
  return *r;
}

void MakeDirs(const std::string& path) {
  std::string cur;
  for (size_t i = 0; i <= path.size(); ++i) {
    if (i == path.size() || path[i] == '/') {
      if (!cur.empty()) mkdir(cur.c_str(), 0755);
    }
    if (i < path.size()) cur += path[i];
  }
}

}  // namespace

const char* StageName(Stage s) {
  switch (s) {
    case Stage::kNone:
      return "none";
    case Stage::kBegin:
      return "begin";
    case Stage::kNormalize:
      return "normalize";
    case Stage::kFlatten:
      return "flatten";
    case Stage::kLoop:
      return "loop";
    case Stage::kCleanup:
      return "cleanup";
    case Stage::kLegalize:
      return "legalize";
    case Stage::kSplit:
      return "split";
    case Stage::kFinalize:
      return "finalize";
    case Stage::kCodegen:
      return "codegen";
    case Stage::kEnd:
      return "end";
  }
  return "?";
}

Stage ParseStage(const std::string& name) {
  for (Stage s : kAllStages) {
    if (name == StageName(s)) return s;
  }
  auto t = TESSERA_THROW_KIND(Span(), ErrorKind::kValue);
  t << "unknown stage '" << name << "'; stages are:";
  for (Stage s : kAllStages) t << " " << StageName(s);
}

void StageRegistry::Register(const std::string& target, StageTable (*make)()) {
  StageTable table = make();
  if (table.empty() || table.front().stage != Stage::kBegin || table.back().stage != Stage::kEnd) {
    throw InternalError("stage table of '" + target + "' must start with begin and end with end");
  }
  for (size_t i = 1; i < table.size(); ++i) {
    if (static_cast<int>(table[i].stage) <= static_cast<int>(table[i - 1].stage)) {
      throw InternalError("stages of '" + target + "' must strictly increase");
    }
  }
  auto& r = Global();
  std::lock_guard<std::mutex> lock(r.mu);
  if (!r.tables.emplace(target, std::move(table)).second) {
    throw InternalError("stages of target '" + target + "' registered twice");
  }
}

const StageTable& StageRegistry::Get(const std::string& target) {
  auto& r = Global();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.tables.find(target);
  if (it == r.tables.end()) {
    auto t = TESSERA_THROW_KIND(Span(), ErrorKind::kValue);
    t << "no lowering pipeline for target '" << target << "'; known targets:";
    for (const auto& [n, tab] : r.tables) t << " " << n;
  }
  return it->second;
}

void DumpText(LowerContext& ctx, const std::string& name, const std::string& text) {
  if (ctx.dump_dir.empty()) return;
  std::string dir = ctx.dump_dir + "/" + (ctx.entry.empty() ? "module" : ctx.entry);
  MakeDirs(dir);
  std::ofstream out(dir + "/" + name);
  out << text;
}

std::vector<std::string> ExtraCompilerOptions(const LowerContext& ctx) {
  std::vector<std::string> out;
  std::istringstream words(ctx.pass_ctx.GetString("tessera.cc_options", ""));
  for (std::string w; words >> w;) out.push_back(w);
  return out;
}

std::string ShippedHeaderText(const LowerContext& ctx, const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) {
    std::ifstream in(ctx.include_dir + "/tessera/" + name);
    std::stringstream ss;
    ss << in.rdbuf();
    text += ss.str();
  }
  return text;
}

IRModule PassRunner::operator()(IRModule mod, const std::string& pass_name) {
  return (*this)(std::move(mod), transform::PassRegistry::Get(pass_name));
}

IRModule PassRunner::operator()(IRModule mod, const transform::Pass& pass) {
  const std::string& pass_name = pass->name;
  PassTiming t;
  t.stage = StageName(stage_);
  t.pass = pass_name;
  int index = ++ctx_.pass_counter;
  if (!ctx_.pass_ctx.PassEnabled(pass_name, pass->opt_level)) {
    t.skipped = true;
    ctx_.timings.push_back(t);
    return mod;
  }
  auto start = std::chrono::steady_clock::now();
  IRModule out = pass->fn(mod, ctx_.pass_ctx);
  t.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  t.changed = out != mod;
  ctx_.timings.push_back(t);
  if (!ctx_.dump_dir.empty() &&
      (t.changed || ctx_.pass_ctx.GetBool("tessera.dump_ir_unchanged", false))) {
    char name[256];
    std::snprintf(name, sizeof(name), "%03d_%s_%s.py", index, StageName(stage_), pass_name.c_str());
    DumpText(ctx_, name, AsScript(out));
  }
  return out;
}

IRModule PassRunner::UserPhase(int phase, IRModule mod) {
  for (const auto& [p, pass] : ctx_.pass_ctx.lower_passes) {
    if (p == phase) mod = (*this)(std::move(mod), pass);
  }
  return mod;
}

StageLowerer::StageLowerer(IRModule mod, LowerContext ctx) : mod_(std::move(mod)), ctx_(std::move(ctx)) {
  if (ctx_.dump_dir.empty()) ctx_.dump_dir = ctx_.pass_ctx.GetString("tessera.dump_ir", "");
  if (ctx_.dump_dir.empty()) {
    if (const char* env = std::getenv("TESSERA_DUMP_IR")) ctx_.dump_dir = env;
  }
  // Printed only when dumping: printing a large module costs as much as lowering it.
  if (!ctx_.dump_dir.empty()) DumpText(ctx_, "000_input.py", AsScript(mod_));
}

void StageLowerer::SetModule(IRModule mod) {
  if (!mod) TESSERA_THROW_KIND(Span(), ErrorKind::kValue) << "module must not be null";
  mod_ = std::move(mod);
}

void StageLowerer::RunTo(Stage stage) {
  if (static_cast<int>(stage) <= static_cast<int>(current_)) {
    TESSERA_THROW_KIND(Span(), ErrorKind::kValue)
        << "already past stage '" << StageName(stage) << "' (current stage: '"
        << StageName(current_) << "')";
  }
  const StageTable& table = StageRegistry::Get(ctx_.target.kind());
  for (const StageEntry& e : table) {
    if (static_cast<int>(e.stage) <= static_cast<int>(current_)) continue;
    if (static_cast<int>(e.stage) > static_cast<int>(stage)) break;
    StageResult r = e.fn(mod_, ctx_);
    mod_ = r.mod;
    if (r.built) ctx_.built = r.built;
    current_ = e.stage;
    if (r.done) break;
  }
  // A stage the target does not list counts as reached once the stages before it ran.
  if (static_cast<int>(current_) < static_cast<int>(stage)) current_ = stage;
  bool time_passes = ctx_.pass_ctx.GetBool("tessera.time_passes", false);
  if (const char* env = std::getenv("TESSERA_TIME_PASSES")) time_passes = time_passes || env[0] == '1';
  if (time_passes && current_ == Stage::kEnd) std::cerr << TimingReport();
}

std::string StageLowerer::TimingReport() const {
  std::vector<PassTiming> rows = ctx_.timings;
  double total = 0;
  for (const auto& r : rows) total += r.seconds;
  std::stable_sort(rows.begin(), rows.end(),
                   [](const PassTiming& a, const PassTiming& b) { return a.seconds > b.seconds; });
  std::ostringstream os;
  os << std::left << std::setw(36) << "pass" << std::setw(11) << "stage" << std::right
     << std::setw(11) << "ms" << std::setw(8) << "share" << "\n";
  std::map<std::string, double> per_stage;
  for (const auto& r : rows) {
    per_stage[r.stage] += r.seconds;
    os << std::left << std::setw(36) << (r.pass + (r.skipped ? " (skipped)" : "")) << std::setw(11)
       << r.stage << std::right << std::setw(11) << std::fixed << std::setprecision(3)
       << r.seconds * 1e3 << std::setw(7) << std::setprecision(1)
       << (total > 0 ? 100 * r.seconds / total : 0) << "%\n";
  }
  for (const auto& [s, sec] : per_stage) {
    os << "stage " << std::left << std::setw(30) << s << std::right << std::setw(22)
       << std::setprecision(3) << sec * 1e3 << " ms\n";
  }
  return os.str();
}

}  // namespace lower
}  // namespace tessera
