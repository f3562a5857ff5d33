// The registry of global functions and the entry generated code calls them through.
#include "tessera/runtime/registry.h"

#include <cstring>
#include <map>
#include <mutex>

#include "tessera/support/error.h"

namespace tessera {
namespace runtime {
namespace {

std::mutex& Mutex() {
  static std::mutex mu;
  return mu;
}

std::map<std::string, std::shared_ptr<GlobalFunction>>& Table() {
  static auto* table = new std::map<std::string, std::shared_ptr<GlobalFunction>>();
  return *table;
}

void CopyMessage(const std::string& msg, char* err, int32_t err_size) {
  if (err == nullptr || err_size <= 0) return;
  size_t n = std::min(msg.size(), static_cast<size_t>(err_size - 1));
  std::memcpy(err, msg.data(), n);
  err[n] = '\0';
}

}  // namespace

void RegisterGlobalFunction(const std::string& name, GlobalFunction f, bool override) {
  if (name.empty()) TESSERA_THROW_KIND(Span(), ErrorKind::kValue) << "a global function needs a name";
  std::lock_guard<std::mutex> lock(Mutex());
  auto& table = Table();
  if (!override && table.count(name)) {
    TESSERA_THROW_KIND(Span(), ErrorKind::kValue)
        << "global function '" << name << "' is already registered; pass override=True to "
        << "replace it";
  }
  table[name] = std::make_shared<GlobalFunction>(std::move(f));
}

bool RemoveGlobalFunction(const std::string& name) {
  std::lock_guard<std::mutex> lock(Mutex());
  return Table().erase(name) > 0;
}

std::shared_ptr<GlobalFunction> GetGlobalFunction(const std::string& name) {
  std::lock_guard<std::mutex> lock(Mutex());
  auto it = Table().find(name);
  return it == Table().end() ? nullptr : it->second;
}

std::vector<std::string> ListGlobalFunctions() {
  std::lock_guard<std::mutex> lock(Mutex());
  std::vector<std::string> names;
  for (const auto& kv : Table()) names.push_back(kv.first);
  return names;
}

extern "C" int32_t TesseraCallGlobal(const char* name, TesseraValue* args, int32_t* codes,
                                     int32_t num_args, TesseraValue* ret, int32_t* ret_code,
                                     char* err, int32_t err_size) {
  std::shared_ptr<GlobalFunction> f = GetGlobalFunction(name ? name : "");
  if (!f) {
    CopyMessage(std::string("packed function '") + (name ? name : "") +
                    "' is not registered; register it with tessera.register_func(\"" +
                    (name ? name : "") + "\", f) before calling the module",
                err, err_size);
    return -1;
  }
  try {
    TesseraValue r{};
    int32_t rc = TESSERA_ARG_NULL;
    (*f)(args, codes, num_args, &r, &rc);
    if (ret) *ret = r;
    if (ret_code) *ret_code = rc;
    return 0;
  } catch (const std::exception& e) {
    CopyMessage(std::string("packed function '") + name + "' failed: " + e.what(), err, err_size);
  } catch (...) {
    CopyMessage(std::string("packed function '") + name + "' failed", err, err_size);
  }
  return -1;
}

}  // namespace runtime
}  // namespace tessera
