// Passes, the pass registry and PassContext (opt level, disabled passes, registered config keys).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "tessera/ir/function.h"

namespace tessera {
namespace transform {

class PassContext;

/*! \brief A named module-to-module transformation. Passes return their input object unchanged
 *  when they change nothing. */
struct PassNode {
  std::string name;
  int opt_level = 0;
  std::function<IRModule(IRModule, const PassContext&)> fn;
};
using Pass = std::shared_ptr<const PassNode>;

Pass CreateModulePass(std::function<IRModule(IRModule, const PassContext&)> fn, int opt_level,
                      std::string name);
/*! \brief A pass applied to each PrimFunc; the module is returned as is when no function changed. */
Pass CreatePrimFuncPass(std::function<PrimFunc(PrimFunc, IRModule, const PassContext&)> fn,
                        int opt_level, std::string name);
/*! \brief Run `passes` in order under the context's rules (used by ts.transform.Sequential). */
Pass Sequential(std::vector<Pass> passes, std::string name = "Sequential");

/*! \brief Passes by name ("tir.Simplify"), for stage tables, disabled_pass, dumps and timing. */
class PassRegistry {
 public:
  static void Register(const std::string& name, std::function<Pass()> factory);
  /*! \brief Throws tessera::Error listing known names when `name` is unknown. */
  static Pass Get(const std::string& name);
  static bool Exists(const std::string& name);
  static std::vector<std::string> List();
};

#define TESSERA_PASS_CONCAT_(a, b) a##b
#define TESSERA_PASS_CONCAT(a, b) TESSERA_PASS_CONCAT_(a, b)
#define TESSERA_REGISTER_PASS(name, factory)                                             \
  static const bool TESSERA_PASS_CONCAT(__tessera_pass_, __COUNTER__) =                  \
      (::tessera::transform::PassRegistry::Register(name, factory), true)

// ---- configuration ----
struct ConfigValue;
using ConfigDict = std::map<std::string, ConfigValue>;
/*! \brief A config value: bool, int, float, string or a dict of them (per-pass option records). */
struct ConfigValue {
  std::variant<bool, int64_t, double, std::string, std::shared_ptr<ConfigDict>> value;
  std::string TypeName() const;
};
enum class ConfigType { kBool, kInt, kFloat, kString, kDict };
/*! \brief Register a config key with its type; PassContext rejects unregistered keys. */
void RegisterConfigOption(const std::string& key, ConfigType type);
/*! \brief Register a per-pass option record (a dict config) and the type of each of its fields;
 *  PassContext rejects unknown fields and values of the wrong type. */
void RegisterConfigRecord(const std::string& key,
                          const std::vector<std::pair<std::string, ConfigType>>& fields);
std::map<std::string, std::string> ListConfigOptions();  // key -> type name

/*! \brief Settings for a compilation: opt level, required and disabled passes, config. */
class PassContext {
 public:
  int opt_level = 2;
  std::vector<std::string> required_pass;
  std::vector<std::string> disabled_pass;
  std::map<std::string, ConfigValue> config;
  /*! \brief User passes of "tir.add_lower_pass": (phase, pass) pairs. The TensorIR stages run
   *  phase 0 at the start of normalize, 1 at the end of flatten, 2 at the end of loop and 3
   *  after cleanup's simplification, each phase's passes in the order given. */
  std::vector<std::pair<int, Pass>> lower_passes;

  /*! \brief Checks the key is registered and the value has its type (AttributeError/TypeError). */
  void SetConfig(const std::string& key, ConfigValue value);
  bool GetBool(const std::string& key, bool fallback) const;
  int64_t GetInt(const std::string& key, int64_t fallback) const;
  std::string GetString(const std::string& key, const std::string& fallback) const;
  /*! \brief A field of an option record ("tir.UnrollLoop", "auto_max_step"), or `fallback`. */
  int64_t GetRecordInt(const std::string& key, const std::string& field, int64_t fallback) const;
  bool GetRecordBool(const std::string& key, const std::string& field, bool fallback) const;
  /*! \brief Whether a pass with this name and level runs under this context. */
  bool PassEnabled(const std::string& name, int pass_opt_level) const;

  /*! \brief The innermost active context (a default one when none is active). */
  static PassContext Current();
  static void EnterWithScope(PassContext ctx);
  static void ExitWithScope();
};

}  // namespace transform
}  // namespace tessera
