// DSOModule over dlopen/dlsym/dlclose.
#include "tessera/runtime/dso_module.h"

#include <dlfcn.h>

#include <cstdint>
#include <utility>

#include "tessera/support/error.h"

namespace tessera {

DSOModule::~DSOModule() { Close(); }

DSOModule::DSOModule(DSOModule&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)), path_(std::move(other.path_)) {}

DSOModule& DSOModule::operator=(DSOModule&& other) noexcept {
  if (this != &other) {
    Close();
    handle_ = std::exchange(other.handle_, nullptr);
    path_ = std::move(other.path_);
  }
  return *this;
}

void DSOModule::Close() {
  if (handle_ != nullptr) dlclose(handle_);
  handle_ = nullptr;
}

void DSOModule::Load(const std::string& path) {
  Close();
  // RTLD_LOCAL: kernels of different libraries may share symbol names.
  handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle_ == nullptr) {
    const char* why = dlerror();
    TESSERA_THROW_KIND(Span(), ErrorKind::kRuntime)
        << "cannot load " << path << ": " << (why ? why : "unknown dlopen error");
  }
  path_ = path;
}

void* DSOModule::GetFunction(const std::string& name) const {
  if (handle_ == nullptr) return nullptr;
  return dlsym(handle_, name.c_str());
}

}  // namespace tessera
