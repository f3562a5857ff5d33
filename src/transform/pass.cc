// Pass construction, the pass registry, config options and the PassContext stack.
#include "tessera/transform/pass.h"

#include <algorithm>
#include <mutex>

#include "tessera/ir/functor.h"
#include "tessera/ir/printer.h"
#include "tessera/support/error.h"

namespace tessera {
namespace transform {
namespace {

struct Registry {
  std::mutex mu;
  std::map<std::string, std::function<Pass()>> passes;
  std::map<std::string, ConfigType> configs;
  std::map<std::string, std::map<std::string, ConfigType>> record_fields;
};

Registry& Global() {
  static Registry* r = new Registry();
  return *r;
}

const char* ConfigTypeName(ConfigType t) {
  switch (t) {
    case ConfigType::kBool:
      return "bool";
    case ConfigType::kInt:
      return "int";
    case ConfigType::kFloat:
      return "float";
    case ConfigType::kString:
      return "str";
    case ConfigType::kDict:
      return "dict";
  }
  return "?";
}

thread_local std::vector<PassContext> context_stack;

// The keys every build understands (tensorir.md §8, lowering-stages.md §4.3).
const bool kBuiltinConfigs = [] {
  for (const char* k : {"tir.noalias", "tir.disable_vectorize", "tir.disable_assert",
                        "tir.disable_storage_rewrite", "tir.disable_cse_tir",
                        "tir.disable_hoist_shared_vector_loads",
                        "tir.instrument_bound_checkers", "tir.use_async_copy", "tir.ptx_ldg32",
                        "tir.enable_debug", "tir.enable_buffer_level_predication", "tessera.dump_ir_unchanged", "tessera.time_passes",
                        "tessera.verify_each_pass", "tessera.verify_between_stages"}) {
    RegisterConfigOption(k, ConfigType::kBool);
  }
  // Per-pass option records (tensorir.md §8), with the fields each one accepts.
  const ConfigType kB = ConfigType::kBool, kI = ConfigType::kInt;
  RegisterConfigRecord("tir.UnrollLoop", {{"auto_max_step", kI},
                                          {"auto_max_depth", kI},
                                          {"auto_max_extent", kI},
                                          {"explicit_unroll", kB},
                                          {"unroll_local_access", kB}});
  RegisterConfigRecord("tir.Simplify", {{"transitively_prove_inequalities", kB},
                                        {"propagate_knowns_to_prove_conditional", kB},
                                        {"propagate_knowns_to_simplify_expressions", kB},
                                        {"convert_boolean_to_and_of_ors", kB},
                                        {"apply_constraints_to_boolean_branches", kB}});
  RegisterConfigRecord("tir.LoopPartition", {{"partition_const_loop", kB},
                                             {"no_unroll_loop_with_extent_one", kB},
                                             {"unroll_loop_with_partition_hint_no_interval", kB}});
  RegisterConfigRecord("tir.VectorizeLoop", {{"max_vector_bits", kI}});
  // TVM v0.23 spells the field "support_block_scope_hoisting"; older releases (and tessera
  // before) "support_block_scope_hosting": both are taken.
  RegisterConfigRecord("tir.HoistIfThenElse",
                       {{"support_block_scope_hoisting", kB}, {"support_block_scope_hosting", kB}});
  RegisterConfigRecord("tir.HoistExpression",
                       {{"hoisted_conditionals", kI}, {"hoisted_let_bindings", kI}});
  RegisterConfigRecord("tir.RemoveNoOp", {{"use_dataflow_analysis", kB},
                                          {"max_simplification_steps", kI}});
  RegisterConfigRecord("tir.ReduceBranchingThroughOvercompute", {{"use_dataflow_analysis", kB}});
  RegisterConfigRecord("tir.InjectDoubleBuffer", {{"split_loop", kI}});
  RegisterConfigRecord("tir.OutlineLargeBody", {{"max_nodes", kI}});
  RegisterConfigOption("tessera.dump_ir", ConfigType::kString);
  // A tuning database (SQLite path): ts.build applies its best records (tessera.tune).
  RegisterConfigOption("tessera.tune.database", ConfigType::kString);
  RegisterConfigOption("tessera.cc_options", ConfigType::kString);
  // Host C above this many bytes of functions is compiled as several units (codegen_host.h).
  RegisterConfigOption("tessera.host_split_bytes", ConfigType::kInt);
  return true;
}();

}  // namespace

std::string ConfigValue::TypeName() const {
  switch (value.index()) {
    case 0:
      return "bool";
    case 1:
      return "int";
    case 2:
      return "float";
    case 3:
      return "str";
    default:
      return "dict";
  }
}

Pass CreateModulePass(std::function<IRModule(IRModule, const PassContext&)> fn, int opt_level,
                      std::string name) {
  auto p = std::make_shared<PassNode>();
  p->name = std::move(name);
  p->opt_level = opt_level;
  p->fn = std::move(fn);
  return p;
}

namespace {

// The first loop with a step; walks statements only (a StmtVisitor leaves expressions alone),
// since this runs before every pass.
class FindSteppedLoop : public StmtVisitor {
 public:
  using StmtVisitor::VisitStmt_;
  const ForNode* found = nullptr;
  void VisitStmt_(const ForNode* op) override {
    if (found) return;
    if (op->step) {
      found = op;
      return;
    }
    StmtVisitor::VisitStmt_(op);
  }
};

void RefuseSteppedLoops(const PrimFunc& f, const std::string& pass) {
  FindSteppedLoop finder;
  finder.VisitStmt(f->body);
  const ForNode* stepped = finder.found;
  if (stepped) {
    TESSERA_THROW_KIND(stepped->span, ErrorKind::kValue)
        << pass << " does not support loops with a step (loop " << stepped->loop_var->name
        << " steps by " << AsScript(stepped->step)
        << "); run tir.CanonicalizeLoop first to rewrite them into unit-step loops";
  }
}

}  // namespace

Pass CreatePrimFuncPass(std::function<PrimFunc(PrimFunc, IRModule, const PassContext&)> fn,
                        int opt_level, std::string name) {
  // Loops with a step (For.step) are rewritten into unit steps by tir.CanonicalizeLoop, the
  // first pass of lowering; the passes that rebuild loops do not know steps and refuse them
  // rather than drop them. Checks and attribute-only passes take them.
  bool takes_steps = name == "tir.CanonicalizeLoop" || name == "tir.BindTarget" ||
                     name.rfind("tir.Verify", 0) == 0;
  std::string pass_name = name;
  return CreateModulePass(
      [fn, pass_name, takes_steps](IRModule mod, const PassContext& ctx) {
        std::vector<std::pair<GlobalVar, PrimFunc>> fns;
        bool changed = false;
        for (const auto& [gv, f] : mod->functions) {
          if (!takes_steps) RefuseSteppedLoops(f, pass_name);
          PrimFunc g = fn(f, mod, ctx);
          changed = changed || g != f;
          fns.emplace_back(gv, g);
        }
        if (!changed) return mod;
        return IRModuleNode::Make(std::move(fns), mod->attrs);
      },
      opt_level, std::move(name));
}

Pass Sequential(std::vector<Pass> passes, std::string name) {
  return CreateModulePass(
      [passes](IRModule mod, const PassContext& ctx) {
        for (const Pass& p : passes) {
          if (ctx.PassEnabled(p->name, p->opt_level)) mod = p->fn(mod, ctx);
        }
        return mod;
      },
      0, std::move(name));
}

void PassRegistry::Register(const std::string& name, std::function<Pass()> factory) {
  auto& r = Global();
  std::lock_guard<std::mutex> lock(r.mu);
  if (!r.passes.emplace(name, std::move(factory)).second) {
    throw InternalError("pass '" + name + "' registered twice");
  }
}

Pass PassRegistry::Get(const std::string& name) {
  auto& r = Global();
  std::function<Pass()> factory;
  {
    std::lock_guard<std::mutex> lock(r.mu);
    auto it = r.passes.find(name);
    if (it != r.passes.end()) factory = it->second;
  }
  if (!factory) {
    auto t = TESSERA_THROW_KIND(Span(), ErrorKind::kValue);
    t << "unknown pass '" << name << "'; known passes:";
    for (const auto& n : List()) t << " " << n;
  }
  return factory();
}

bool PassRegistry::Exists(const std::string& name) {
  auto& r = Global();
  std::lock_guard<std::mutex> lock(r.mu);
  return r.passes.count(name) != 0;
}

std::vector<std::string> PassRegistry::List() {
  auto& r = Global();
  std::lock_guard<std::mutex> lock(r.mu);
  std::vector<std::string> names;
  for (const auto& [n, f] : r.passes) names.push_back(n);
  return names;
}

void RegisterConfigOption(const std::string& key, ConfigType type) {
  auto& r = Global();
  std::lock_guard<std::mutex> lock(r.mu);
  r.configs[key] = type;
}

void RegisterConfigRecord(const std::string& key,
                          const std::vector<std::pair<std::string, ConfigType>>& fields) {
  RegisterConfigOption(key, ConfigType::kDict);
  auto& r = Global();
  std::lock_guard<std::mutex> lock(r.mu);
  auto& schema = r.record_fields[key];
  for (const auto& [name, type] : fields) schema[name] = type;
}

std::map<std::string, std::string> ListConfigOptions() {
  auto& r = Global();
  std::lock_guard<std::mutex> lock(r.mu);
  std::map<std::string, std::string> out;
  for (const auto& [k, t] : r.configs) out[k] = ConfigTypeName(t);
  return out;
}

void PassContext::SetConfig(const std::string& key, ConfigValue value) {
  auto options = ListConfigOptions();
  auto it = options.find(key);
  if (it == options.end()) {
    auto t = TESSERA_THROW_KIND(Span(), ErrorKind::kAttribute);
    t << "Invalid config option '" << key << "'; valid options are:";
    for (const auto& [k, ty] : options) t << " " << k;
  }
  std::string got = value.TypeName();
  bool ok = got == it->second || (it->second == "float" && got == "int") ||
            (it->second == "int" && got == "bool");
  if (!ok) {
    TESSERA_THROW_KIND(Span(), ErrorKind::kType)
        << "config option '" << key << "' expects a " << it->second << ", got a " << got;
  }
  if (auto* dict = std::get_if<std::shared_ptr<ConfigDict>>(&value.value)) {
    std::map<std::string, ConfigType> schema;
    {
      auto& r = Global();
      std::lock_guard<std::mutex> lock(r.mu);
      auto s = r.record_fields.find(key);
      if (s != r.record_fields.end()) schema = s->second;
    }
    for (const auto& [field, v] : **dict) {
      auto f = schema.find(field);
      if (f == schema.end()) {
        auto t = TESSERA_THROW_KIND(Span(), ErrorKind::kAttribute);
        t << "Invalid field '" << field << "' of config option '" << key << "'; valid fields are:";
        for (const auto& [name, ty] : schema) t << " " << name;
      }
      std::string want = ConfigTypeName(f->second), have = v.TypeName();
      if (want != have && !(want == "int" && have == "bool") && !(want == "float" && have == "int")) {
        TESSERA_THROW_KIND(Span(), ErrorKind::kType) << "field '" << field << "' of config option '"
                                                     << key << "' expects a " << want
                                                     << ", got a " << have;
      }
    }
  }
  config[key] = std::move(value);
}

bool PassContext::GetBool(const std::string& key, bool fallback) const {
  auto it = config.find(key);
  if (it == config.end()) return fallback;
  if (auto* b = std::get_if<bool>(&it->second.value)) return *b;
  if (auto* i = std::get_if<int64_t>(&it->second.value)) return *i != 0;
  return fallback;
}

int64_t PassContext::GetInt(const std::string& key, int64_t fallback) const {
  auto it = config.find(key);
  if (it == config.end()) return fallback;
  if (auto* i = std::get_if<int64_t>(&it->second.value)) return *i;
  if (auto* b = std::get_if<bool>(&it->second.value)) return *b;
  return fallback;
}

std::string PassContext::GetString(const std::string& key, const std::string& fallback) const {
  auto it = config.find(key);
  if (it == config.end()) return fallback;
  if (auto* s = std::get_if<std::string>(&it->second.value)) return *s;
  return fallback;
}

namespace {
const ConfigValue* RecordField(const PassContext& ctx, const std::string& key,
                               const std::string& field) {
  auto it = ctx.config.find(key);
  if (it == ctx.config.end()) return nullptr;
  auto* dict = std::get_if<std::shared_ptr<ConfigDict>>(&it->second.value);
  if (!dict || !*dict) return nullptr;
  auto f = (*dict)->find(field);
  return f == (*dict)->end() ? nullptr : &f->second;
}
}  // namespace

int64_t PassContext::GetRecordInt(const std::string& key, const std::string& field,
                                  int64_t fallback) const {
  const ConfigValue* v = RecordField(*this, key, field);
  if (!v) return fallback;
  if (auto* i = std::get_if<int64_t>(&v->value)) return *i;
  if (auto* b = std::get_if<bool>(&v->value)) return *b;
  return fallback;
}

bool PassContext::GetRecordBool(const std::string& key, const std::string& field,
                                bool fallback) const {
  const ConfigValue* v = RecordField(*this, key, field);
  if (!v) return fallback;
  if (auto* b = std::get_if<bool>(&v->value)) return *b;
  if (auto* i = std::get_if<int64_t>(&v->value)) return *i != 0;
  return fallback;
}

bool PassContext::PassEnabled(const std::string& name, int pass_opt_level) const {
  if (std::find(required_pass.begin(), required_pass.end(), name) != required_pass.end()) return true;
  if (std::find(disabled_pass.begin(), disabled_pass.end(), name) != disabled_pass.end()) return false;
  return pass_opt_level <= opt_level;
}

PassContext PassContext::Current() {
  (void)kBuiltinConfigs;
  if (context_stack.empty()) return PassContext();
  return context_stack.back();
}

void PassContext::EnterWithScope(PassContext ctx) { context_stack.push_back(std::move(ctx)); }

void PassContext::ExitWithScope() {
  if (context_stack.empty()) throw InternalError("PassContext: exit without enter");
  context_stack.pop_back();
}

}  // namespace transform
}  // namespace tessera
