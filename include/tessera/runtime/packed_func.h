// Host libraries at run time: loading with their metadata, packed calls and timing.
#pragma once

#include <string>
#include <vector>

#include "tessera/runtime/module.h"
#include "tessera/runtime_abi.h"

namespace tessera {
namespace runtime {

/*! \brief Read a host library's metadata JSON into `mod` (entry and function table). */
void ParseModuleInfo(const std::string& json, ModuleNode* mod);

/*! \brief Load the host library at `lib_path` into `mod` (which has its metadata) and resolve
 *  every function's address. Throws tessera::Error (kRuntime) on failure. */
void LoadHostLibrary(ModuleNode* mod);

/*! \brief Load a library that a host build produced or exported (ts.runtime.load_module): its
 *  metadata and source come from the library itself. */
Module LoadModule(const std::string& path);

/*! \brief The function named `name`; "" names the entry. Throws tessera::Error (kAttribute)
 *  listing the functions when there is none. */
const PackedFunctionInfo& GetFunction(const ModuleNode& mod, const std::string& name);

/*! \brief The argument array of one packed call. Tensor descriptors are owned by the caller. */
struct PackedArgs {
  std::vector<TesseraValue> values;
  std::vector<int32_t> codes;
  void AddInt(int64_t v);
  void AddFloat(double v);
  void AddNull();
  void AddTensor(TesseraDLTensor* t);
};

/*! \brief The value a packed function returned and its type code (TESSERA_ARG_*). */
struct PackedResult {
  TesseraValue value{};
  int32_t code = TESSERA_ARG_NULL;
};

/*! \brief Call `func` of `mod`. A failed argument check or assert throws tessera::Error
 *  (kRuntime) with the library's message. */
PackedResult CallPacked(const ModuleNode& mod, const PackedFunctionInfo& func, PackedArgs& args);

/*! \brief CallPacked with the `n` argument values and type codes in arrays of the caller's. */
PackedResult CallPacked(const ModuleNode& mod, const PackedFunctionInfo& func,
                        TesseraValue* values, int32_t* codes, int32_t n);

/*! \brief Options of time_evaluator (tensorir.md §9). */
struct TimeEvaluatorOptions {
  int number = 10;
  int repeat = 1;
  int min_repeat_ms = 0;
  int limit_zero_time_iterations = 100;
  int cooldown_interval_ms = 0;
  int repeats_to_cooldown = 1;
  int64_t cache_flush_bytes = 0;
};

/*! \brief Seconds per call of each repeat: one discarded warm-up call, then `repeat` rounds that
 *  average `number` calls (more when a round is shorter than `min_repeat_ms`). */
std::vector<double> TimeEvaluate(const ModuleNode& mod, const PackedFunctionInfo& func,
                                 PackedArgs& args, const TimeEvaluatorOptions& options);

}  // namespace runtime
}  // namespace tessera
