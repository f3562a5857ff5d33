// The runtime module a build produces: generated source, the compiled library and its loader.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tessera/ir/function.h"

namespace tessera {
class DSOModule;
namespace runtime {

/*! \brief A parameter of a packed function: kind ("buffer", "int", "float", "bool", "handle"),
 *  dtype and name. */
struct ParamInfo {
  std::string kind, dtype, name;
};

/*! \brief A public function of a host library: its name, exported symbol, return type and
 *  parameters, as the library's metadata lists them. */
struct PackedFunctionInfo {
  std::string name, symbol, ret;
  std::vector<ParamInfo> params;
  /*! \brief A DSL kernel: argument errors name "argument 'x' of f()" as numpy users expect, and
   *  read-only arrays are passed (as TESSERA_ARG_DLTENSOR_READONLY) for the entry to check. */
  bool dsl = false;
  void* address = nullptr;  // resolved when the library is loaded
};

/*! \brief A built artifact: the generated source, the shared object and the lowered IR. */
struct ModuleNode {
  std::string target;     // "dsl", "c", "cuda"
  std::string entry;      // name of the entry function
  std::string source;     // generated source (OpenCL-C for the DSL, C for the host)
  /*! \brief The text the compiler got where it differs from `source` (the DSL: splats spelled
   *  `(int8)__vbcast(x)`, see CodeGenDSL); empty when it is `source`. */
  std::string compiled_source;
  std::string lib_path;   // compiled shared object in the build cache
  /*! \brief The compiler and flags that built lib_path from `compiled_source` or `source` (empty for a library
   *  loaded from a file); `get_source("asm")` reruns them with -S. */
  std::vector<std::string> compile_command;
  IRModule ir;            // the module that was compiled
  std::shared_ptr<DSOModule> library;  // loaded at the "end" stage
  std::map<std::string, std::string> info;
  /*! \brief Host targets: the packed functions of the library and its error-message getter. */
  std::vector<PackedFunctionInfo> functions;
  const char* (*last_error)() = nullptr;
  /*! \brief GPU targets: the device code's source (CUDA C), its compiled form and format
   *  ("ptx"), and the loaded kernels (a cuda::KernelModule). */
  std::string device_source, device_binary, device_format;
  std::shared_ptr<void> device_module;
};
using Module = std::shared_ptr<ModuleNode>;

}  // namespace runtime
}  // namespace tessera
