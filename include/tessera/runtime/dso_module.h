// DSOModule: a loaded shared object (dlopen), and the call of a DSL kernel's packed launcher.
#pragma once

#include <string>
#include <vector>

namespace tessera {

/*! \brief Owns one dlopen handle; closes it on destruction. Move-only. */
class DSOModule {
 public:
  DSOModule() = default;
  /*! \brief Load(path). */
  explicit DSOModule(const std::string& path) { Load(path); }
  ~DSOModule();
  DSOModule(const DSOModule&) = delete;
  DSOModule& operator=(const DSOModule&) = delete;
  DSOModule(DSOModule&& other) noexcept;
  DSOModule& operator=(DSOModule&& other) noexcept;

  /*! \brief Load the shared object at `path` (closing any previous one). Throws tessera::Error
   *  (kRuntime) with the dlerror text when it cannot be loaded. */
  void Load(const std::string& path);
  /*! \brief The address of the exported symbol `name`, or null when there is none. */
  void* GetFunction(const std::string& name) const;
  bool loaded() const { return handle_ != nullptr; }
  const std::string& path() const { return path_; }

 private:
  void Close();
  void* handle_ = nullptr;
  std::string path_;
};

}  // namespace tessera
