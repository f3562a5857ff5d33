// Global functions by name: what generated code reaches through `T.call_packed("name", ...)`.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tessera/runtime_abi.h"

namespace tessera {
namespace runtime {

/*!
 * \brief A function callable by name from generated code. It receives the packed arguments
 *  (TESSERA_ARG_* codes; DLTensors for buffers) and sets the return value and its code. It
 *  reports a failure by throwing; the message reaches the caller of the generated function.
 */
using GlobalFunction = std::function<void(const TesseraValue* args, const int32_t* codes,
                                          int32_t num_args, TesseraValue* ret, int32_t* ret_code)>;

/*! \brief Register `f` as `name`. Throws tessera::Error (kValue) when the name is taken and
 *  `override` is false. */
void RegisterGlobalFunction(const std::string& name, GlobalFunction f, bool override);
/*! \brief Remove `name`; false when there was none. */
bool RemoveGlobalFunction(const std::string& name);
/*! \brief The function registered as `name`, or null. */
std::shared_ptr<GlobalFunction> GetGlobalFunction(const std::string& name);
/*! \brief The registered names, sorted. */
std::vector<std::string> ListGlobalFunctions();

/*!
 * \brief The entry generated code calls (through the library slot `__tessera_call_global`,
 *  which the loader fills): calls `name`, returns 0, or -1 with the message in `err`.
 */
extern "C" int32_t TesseraCallGlobal(const char* name, TesseraValue* args, int32_t* codes,
                                     int32_t num_args, TesseraValue* ret, int32_t* ret_code,
                                     char* err, int32_t err_size);

}  // namespace runtime
}  // namespace tessera
