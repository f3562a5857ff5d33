// Host C compiler discovery, process spawning without a shell, and the shared-object cache.
#include "tessera/target/toolchain.h"

#include <fcntl.h>
#include <pwd.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <sstream>
#include <thread>

#include "tessera/support/error.h"
#include "tessera/support/hash.h"

#ifndef TESSERA_VERSION
#define TESSERA_VERSION "unknown"
#endif

extern char** environ;

namespace tessera {
namespace {

namespace fs = std::filesystem;

std::atomic<int64_t> g_compiler_runs{0};

[[noreturn]] void BuildError(const std::string& message) {
  TESSERA_THROW_KIND(Span(), ErrorKind::kBuild) << message;
}

bool IsExecutableFile(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

// `name` as execvp would find it: a path is taken as is, a bare name is searched on PATH.
std::string SearchPath(const std::string& name) {
  if (name.find('/') != std::string::npos) return IsExecutableFile(name) ? name : "";
  const char* env = std::getenv("PATH");
  std::string path = env ? env : "/usr/local/bin:/usr/bin:/bin";
  std::stringstream dirs(path);
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (IsExecutableFile(candidate)) return candidate;
  }
  return "";
}

std::string QuoteArg(const std::string& arg) {
  if (!arg.empty() && arg.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                            "0123456789-_./=+:,@") == std::string::npos) {
    return arg;
  }
  std::string out = "'";
  for (char c : arg) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string CommandLine(const std::vector<std::string>& argv) {
  std::string s;
  for (const std::string& a : argv) s += (s.empty() ? "" : " ") + QuoteArg(a);
  return s;
}

std::string RandomSuffix() {
  static std::mutex mu;
  static std::mt19937_64 rng(std::random_device{}() ^ static_cast<uint64_t>(getpid()));
  std::lock_guard<std::mutex> lock(mu);
  std::ostringstream os;
  os << std::hex << rng();
  return os.str();
}

struct ProcessResult {
  int status = 0;      // exit status, or 128 + signal
  std::string output;  // stdout and stderr, interleaved
};

// Runs argv[0] with argv (never a shell). Output goes to a temporary file in `scratch_dir`
// rather than a pipe, which would need a concurrent reader to avoid filling up.
ProcessResult RunProcess(const std::vector<std::string>& argv, const std::string& scratch_dir) {
  std::string out_path = scratch_dir + "/.tessera-output-XXXXXX";
  std::vector<char> templ(out_path.begin(), out_path.end());
  templ.push_back('\0');
  int fd = mkstemp(templ.data());
  if (fd < 0)
    BuildError("cannot create a temporary file in " + scratch_dir + ": " + std::strerror(errno));
  out_path = templ.data();

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, fd, 1);
  posix_spawn_file_actions_adddup2(&actions, fd, 2);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    close(fd);
    unlink(out_path.c_str());
    BuildError("cannot run " + CommandLine(argv) + ": " + std::strerror(rc));
  }
  int wstatus = 0;
  while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  close(fd);
  ProcessResult result;
  result.status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
  std::ifstream in(out_path, std::ios::binary);
  result.output.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  unlink(out_path.c_str());
  return result;
}

// The first line of `cc --version`, remembered per compiler binary and its modification time.
std::string CompilerVersion(const std::string& cc) {
  static std::mutex mu;
  static std::map<std::string, std::string> cache;
  struct stat st;
  std::string id = cc;
  if (stat(cc.c_str(), &st) == 0) id += "@" + std::to_string(st.st_mtime);
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache.find(id);
    if (it != cache.end()) return it->second;
  }
  ProcessResult r = RunProcess({cc, "--version"}, fs::temp_directory_path().string());
  std::string line = r.output.substr(0, r.output.find('\n'));
  if (r.status != 0) line = "unknown (exit status " + std::to_string(r.status) + ")";
  std::lock_guard<std::mutex> lock(mu);
  cache[id] = line;
  return line;
}

// With -march=native the object depends on the CPU, and a cache in $HOME may be shared by
// machines with different ones.
std::string HostCpuSignature() {
  std::ifstream in("/proc/cpuinfo");
  std::string line, sig;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0 || line.rfind("flags", 0) == 0 ||
        line.rfind("Features", 0) == 0 || line.rfind("CPU part", 0) == 0) {
      sig += line + "\n";
    }
    if (line.empty() && !sig.empty()) break;  // the first processor is enough
  }
  return sig;
}

void WriteFileAtomically(const std::string& path, const std::string& text) {
  std::string tmp = path + ".tmp." + std::to_string(getpid()) + "." + RandomSuffix();
  {
    std::ofstream out(tmp, std::ios::binary);
    out << text;
    if (!out.good()) BuildError("cannot write " + tmp);
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    BuildError("cannot write " + path + ": " + ec.message());
  }
}

// Creates `dir` and its missing parents readable by the owner only (0700): the cache holds
// code that is loaded into the process.
void MakePrivateDirectories(const fs::path& dir) {
  std::error_code ec;
  if (fs::is_directory(dir, ec)) return;
  if (dir.has_parent_path() && dir.parent_path() != dir) MakePrivateDirectories(dir.parent_path());
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    BuildError("cannot create the build cache directory " + dir.string() + ": " +
               std::strerror(errno));
  }
}

std::string ReadFileOrEmpty(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The SHA-256 of a file's bytes; "" when it cannot be read.
std::string FileSha256(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  Sha256 h;
  char buf[1 << 16];
  while (in) {
    in.read(buf, sizeof(buf));
    h.Update(std::string_view(buf, static_cast<size_t>(in.gcount())));
  }
  return h.HexDigest();
}

// What a cache entry's .sha256 file records.
std::string ManifestText(const std::string& library_digest, const std::string& source_digest) {
  return "library " + library_digest + "\nsource " + source_digest + "\n";
}

}  // namespace

std::string FindHostCompiler() {
  const char* cc = std::getenv("CC");
  if (cc != nullptr && *cc != '\0') {
    std::string found = SearchPath(cc);
    if (found.empty()) {
      BuildError(std::string("no C compiler found: CC=") + cc +
                 " is not an executable; install gcc or clang (e.g. apt-get install gcc) or set "
                 "CC to a C compiler");
    }
    return found;
  }
  for (const char* name : {"cc", "gcc", "clang"}) {
    std::string found = SearchPath(name);
    if (!found.empty()) return found;
  }
  BuildError("no C compiler found: install gcc or clang (e.g. apt-get install gcc) or set CC");
}

std::string DefaultCacheDir() {
  const char* dir = std::getenv("TESSERA_CACHE_DIR");
  if (dir != nullptr && *dir != '\0') return dir;
  const char* home = std::getenv("HOME");
  if (home == nullptr || *home == '\0') {
    const passwd* pw = getpwuid(getuid());
    home = pw ? pw->pw_dir : nullptr;
  }
  if (home != nullptr && *home != '\0') return std::string(home) + "/.cache/tessera";
  return (fs::temp_directory_path() / ("tessera-cache-" + std::to_string(getuid()))).string();
}

std::string DSLSupportUnit() {
  return "/* The launch machinery of tessera's DSL kernels, linked into each kernel's library. */\n"
         "#define TESSERA_DSL_SUPPORT_UNIT 1\n"
         "#include <tessera/dsl.h>\n"
         "#include <tessera/dsl/packed.h>\n";
}

std::vector<std::string> DefaultDSLCompileFlags(const std::string& include_dir) {
  // -fwrapv: DSL integers wrap; -fsigned-char: the DSL's char is int8 on every host;
  // -fno-strict-aliasing: kernels reinterpret pointers (as_ptr); hidden symbols keep kernels of
  // different libraries apart, and the launcher exports itself explicitly.
  // -ffp-contract=off: a float multiply and add stay two roundings (GCC fuses them into an FMA
  // by default under -march=native), as the NPU's separate instructions and PySim compute them.
  return {"-std=gnu11",          "-O2",      "-march=native",
          "-fsigned-char",       "-fwrapv",  "-fno-strict-aliasing",
          "-ffp-contract=off",   "-fvisibility=hidden", "-pthread", "-I" + include_dir};
}

std::string FindHostCXXCompiler() {
  const char* cxx = std::getenv("CXX");
  if (cxx != nullptr && *cxx != '\0') {
    std::string found = SearchPath(cxx);
    if (found.empty()) {
      BuildError(std::string("no C++ compiler found: CXX=") + cxx +
                 " is not an executable; install g++ or clang++ (e.g. apt-get install g++) or set "
                 "CXX to a C++ compiler");
    }
    return found;
  }
  for (const char* name : {"c++", "g++", "clang++"}) {
    std::string found = SearchPath(name);
    if (!found.empty()) return found;
  }
  BuildError("no C++ compiler found: install g++ or clang++ (e.g. apt-get install g++) or set CXX");
}

namespace {

// How many compilers CompileSharedLibraryUnits runs at once: $TESSERA_BUILD_JOBS, else the
// number of CPUs.
size_t BuildJobs() {
  if (const char* env = std::getenv("TESSERA_BUILD_JOBS")) {
    char* end = nullptr;
    long n = std::strtol(env, &end, 10);
    if (end != env && *end == '\0' && n >= 1) return static_cast<size_t>(std::min(n, 256L));
  }
  unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : n;
}

[[noreturn]] void CompileFailed(const std::string& language, const std::vector<std::string>& argv,
                                const ProcessResult& r) {
  BuildError(language + " compilation failed (exit status " + std::to_string(r.status) +
             ")\ncommand: " + CommandLine(argv) + "\n" + r.output);
}

// Compiles each unit into an object file in a private scratch folder under `dir`, several at
// once, and links the objects into `out_path`. The scratch folder is removed in any case.
void BuildUnits(const std::string& cc, const std::vector<CompileUnit>& units,
                const std::vector<std::string>& link_flags, const fs::path& dir,
                const std::string& out_path) {
  fs::path scratch = dir / (".units." + std::to_string(getpid()) + "." + RandomSuffix());
  MakePrivateDirectories(scratch);
  struct RemoveAll {
    fs::path path;
    ~RemoveAll() {
      std::error_code ec;
      fs::remove_all(path, ec);
    }
  } remove_scratch{scratch};
  std::vector<std::vector<std::string>> commands(units.size());
  std::vector<std::string> objects(units.size());
  for (size_t i = 0; i < units.size(); ++i) {
    std::string src = (scratch / ("unit" + std::to_string(i) + ".c")).string();
    objects[i] = (scratch / ("unit" + std::to_string(i) + ".o")).string();
    WriteFileAtomically(src, units[i].source);
    commands[i] = {cc, "-c", "-fPIC"};
    commands[i].insert(commands[i].end(), units[i].flags.begin(), units[i].flags.end());
    commands[i].insert(commands[i].end(), {"-o", objects[i], src});
  }
  std::vector<ProcessResult> results(units.size());
  std::vector<std::exception_ptr> errors(units.size());
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i; (i = next++) < units.size();) {
      try {
        results[i] = RunProcess(commands[i], scratch.string());
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  size_t jobs = std::min(BuildJobs(), units.size());
  std::vector<std::thread> threads;
  for (size_t j = 1; j < jobs; ++j) threads.emplace_back(worker);
  worker();
  for (std::thread& t : threads) t.join();
  for (size_t i = 0; i < units.size(); ++i) {
    if (errors[i]) std::rethrow_exception(errors[i]);
    if (results[i].status != 0) CompileFailed("C", commands[i], results[i]);
  }
  std::vector<std::string> argv = {cc, "-shared", "-fPIC"};
  argv.insert(argv.end(), link_flags.begin(), link_flags.end());
  argv.insert(argv.end(), {"-o", out_path});
  argv.insert(argv.end(), objects.begin(), objects.end());
  argv.push_back("-lm");
  ProcessResult r = RunProcess(argv, scratch.string());
  if (r.status != 0) CompileFailed("C", argv, r);
}

// The shared-object cache of CompileSharedLibrary, CompileSharedLibraryUnits and
// CompileSharedLibraryCXX; `language` is "C" or "C++" (the source file's extension and the
// error messages follow it). With `units`, the library is built from them and `source` is
// only stored and checked.
std::string CompileShared(const std::string& cc, const std::string& language,
                          const std::string& source, const std::vector<std::string>& flags,
                          const std::string& cache_dir, const std::string& extra_key,
                          const std::vector<CompileUnit>* units = nullptr,
                          const SharedLibraryExtras* extras = nullptr) {
  Sha256 hasher;
  hasher.UpdateField("tessera.CompileSharedLibrary.v2").UpdateField(source).UpdateField(cc);
  if (language != "C") hasher.UpdateField(language);
  hasher.UpdateField(CompilerVersion(cc)).UpdateField(std::to_string(flags.size()));
  bool native = false;
  auto is_native = [](const std::string& f) {
    return f == "-march=native" || f == "-mcpu=native" || f == "-mtune=native";
  };
  for (const std::string& f : flags) {
    hasher.UpdateField(f);
    native = native || is_native(f);
  }
  if (units != nullptr) {
    hasher.UpdateField("units").UpdateField(std::to_string(units->size()));
    for (const CompileUnit& u : *units) {
      hasher.UpdateField(u.source).UpdateField(std::to_string(u.flags.size()));
      for (const std::string& f : u.flags) {
        hasher.UpdateField(f);
        native = native || is_native(f);
      }
    }
  }
  if (extras != nullptr && !extras->objects.empty()) {
    hasher.UpdateField("objects").UpdateField(std::to_string(extras->objects.size()));
    for (const std::string& o : extras->objects) hasher.UpdateField(FileSha256(o));
  }
  hasher.UpdateField(native ? HostCpuSignature() : "").UpdateField(extra_key);
  hasher.UpdateField(TESSERA_VERSION);
  std::string key = hasher.HexDigest();

  std::error_code ec;
  fs::path dir = fs::absolute(cache_dir, ec);
  if (ec) dir = cache_dir;
  MakePrivateDirectories(dir);
  std::string so_path = (dir / (key + ".so")).string();
  std::string manifest_path = (dir / (key + ".sha256")).string();
  std::string source_digest = Sha256Hex(source);
  // A hit is used only when the library and the stored source match the digests recorded when
  // it was built: a truncated, corrupt or swapped entry is rebuilt, never loaded.
  if (fs::is_regular_file(so_path, ec)) {
    std::string src_stored = (dir / (key + (language == "C" ? ".c" : ".cc"))).string();
    std::string manifest = ReadFileOrEmpty(manifest_path);
    if (!manifest.empty() &&
        manifest == ManifestText(FileSha256(so_path), FileSha256(src_stored)) &&
        manifest.find("source " + source_digest + "\n") != std::string::npos) {
      return so_path;
    }
    fs::remove(so_path, ec);
    fs::remove(manifest_path, ec);
  }

  std::string src_path = (dir / (key + (language == "C" ? ".c" : ".cc"))).string();
  WriteFileAtomically(src_path, source);
  std::string tmp_path = so_path + ".tmp." + std::to_string(getpid()) + "." + RandomSuffix();
  ++g_compiler_runs;
  if (units != nullptr) {
    try {
      BuildUnits(cc, *units, flags, dir, tmp_path);
    } catch (...) {
      fs::remove(tmp_path, ec);
      throw;
    }
    if (!fs::is_regular_file(tmp_path, ec)) {
      BuildError("C compilation of " + std::to_string(units->size()) +
                 " units wrote no library at " + tmp_path);
    }
  } else {
    auto command = [&](bool accelerated) {
      std::vector<std::string> argv = {cc, "-shared", "-fPIC"};
      if (accelerated) {
        argv.insert(argv.end(), extras->accelerators.begin(), extras->accelerators.end());
      }
      argv.insert(argv.end(), flags.begin(), flags.end());
      argv.insert(argv.end(), {"-o", tmp_path, src_path});
      if (extras != nullptr) argv.insert(argv.end(), extras->objects.begin(), extras->objects.end());
      // Libraries after the source, where linkers that drop unneeded ones still see the need.
      argv.push_back("-lm");
      return argv;
    };
    bool accelerated = extras != nullptr && !extras->accelerators.empty();
    std::vector<std::string> argv = command(accelerated);
    ProcessResult r = RunProcess(argv, dir.string());
    if (accelerated && (r.status != 0 || !fs::is_regular_file(tmp_path, ec))) {
      // The accelerators must not change the result: a failure is reported as the plain
      // compile reports it (and a broken precompiled header costs one more compile, no error).
      fs::remove(tmp_path, ec);
      argv = command(false);
      r = RunProcess(argv, dir.string());
    }
    if (r.status != 0 || !fs::is_regular_file(tmp_path, ec)) {
      fs::remove(tmp_path, ec);
      CompileFailed(language, argv, r);
    }
  }
  WriteFileAtomically(manifest_path, ManifestText(FileSha256(tmp_path), source_digest));
  fs::rename(tmp_path, so_path, ec);
  if (ec) {
    fs::remove(tmp_path, ec);
    BuildError("cannot move the compiled library into the cache at " + so_path + ": " +
               ec.message());
  }
  return so_path;
}

}  // namespace

std::string CompileSharedLibrary(const std::string& source, const std::vector<std::string>& flags,
                                 const std::string& cache_dir, const std::string& extra_key) {
  return CompileShared(FindHostCompiler(), "C", source, flags, cache_dir, extra_key);
}

std::string CompileSharedLibraryUnits(const std::string& source,
                                      const std::vector<CompileUnit>& units,
                                      const std::vector<std::string>& link_flags,
                                      const std::string& cache_dir, const std::string& extra_key) {
  if (units.empty()) return CompileSharedLibrary(source, link_flags, cache_dir, extra_key);
  return CompileShared(FindHostCompiler(), "C", source, link_flags, cache_dir, extra_key, &units);
}

std::string CompileSharedLibraryCXX(const std::string& source,
                                    const std::vector<std::string>& flags,
                                    const std::string& cache_dir, const std::string& extra_key) {
  return CompileShared(FindHostCXXCompiler(), "C++", source, flags, cache_dir, extra_key);
}

std::string CompileSharedLibrary(const std::string& source, const std::vector<std::string>& flags,
                                 const std::string& cache_dir, const std::string& extra_key,
                                 const SharedLibraryExtras& extras) {
  return CompileShared(FindHostCompiler(), "C", source, flags, cache_dir, extra_key, nullptr,
                       &extras);
}

namespace {

// The key of CompileCachedObject and PrecompiledHeaderDir: `what`, `source`, the compiler and
// its version, the flags (and the CPU when one of them is -march=native), `extra_key`, tessera's
// version.
std::string ArtifactKey(const std::string& what, const std::string& source, const std::string& cc,
                        const std::vector<std::string>& flags, const std::string& extra_key) {
  Sha256 hasher;
  hasher.UpdateField(what).UpdateField(source).UpdateField(cc).UpdateField(CompilerVersion(cc));
  hasher.UpdateField(std::to_string(flags.size()));
  bool native = false;
  for (const std::string& f : flags) {
    hasher.UpdateField(f);
    native = native || f == "-march=native" || f == "-mcpu=native" || f == "-mtune=native";
  }
  hasher.UpdateField(native ? HostCpuSignature() : "").UpdateField(extra_key);
  hasher.UpdateField(TESSERA_VERSION);
  return hasher.HexDigest();
}

// Whether the file at `path` has the digest its manifest `path`.sha256 records. A file found
// intact is remembered for the process with its size and modification time, so that a large
// file is hashed once while a replaced one is checked again.
bool VerifiedArtifact(const std::string& path) {
  static std::mutex mu;
  static std::map<std::string, std::string> verified;  // path -> "size@mtime" when checked
  struct stat st;
  if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  std::string stamp = std::to_string(st.st_size) + "@" + std::to_string(st.st_mtim.tv_sec) + "." +
                      std::to_string(st.st_mtim.tv_nsec);
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = verified.find(path);
    if (it != verified.end() && it->second == stamp) return true;
  }
  std::string manifest = ReadFileOrEmpty(path + ".sha256");
  if (manifest.empty() || manifest != "artifact " + FileSha256(path) + "\n") return false;
  std::lock_guard<std::mutex> lock(mu);
  verified[path] = stamp;
  return true;
}

// Runs `argv`, which writes `tmp_path`, then records its digest and renames it to `path`.
// Returns the compiler's result; on failure nothing is left behind.
ProcessResult BuildArtifact(const std::vector<std::string>& argv, const std::string& tmp_path,
                            const std::string& path, const std::string& scratch_dir) {
  ++g_compiler_runs;
  ProcessResult r = RunProcess(argv, scratch_dir);
  std::error_code ec;
  if (r.status == 0 && !fs::is_regular_file(tmp_path, ec)) {
    r.status = 1;
    r.output += "\nthe compiler wrote no " + tmp_path;
  }
  if (r.status != 0) {
    fs::remove(tmp_path, ec);
    return r;
  }
  WriteFileAtomically(path + ".sha256", "artifact " + FileSha256(tmp_path) + "\n");
  fs::rename(tmp_path, path, ec);
  if (ec) {
    fs::remove(tmp_path, ec);
    BuildError("cannot move " + tmp_path + " into the cache at " + path + ": " + ec.message());
  }
  return r;
}

fs::path CacheFolder(const std::string& cache_dir) {
  std::error_code ec;
  fs::path dir = fs::absolute(cache_dir, ec);
  if (ec) dir = cache_dir;
  MakePrivateDirectories(dir);
  return dir;
}

}  // namespace

std::string CompileCachedObject(const std::string& source, const std::vector<std::string>& flags,
                                const std::string& cache_dir, const std::string& extra_key) {
  std::string cc = FindHostCompiler();
  std::string key = ArtifactKey("tessera.CompileCachedObject.v1", source, cc, flags, extra_key);
  fs::path dir = CacheFolder(cache_dir);
  std::string obj_path = (dir / (key + ".o")).string();
  if (VerifiedArtifact(obj_path)) return obj_path;
  std::string src_path = (dir / (key + ".c")).string();
  WriteFileAtomically(src_path, source);
  std::string tmp_path = obj_path + ".tmp." + std::to_string(getpid()) + "." + RandomSuffix();
  std::vector<std::string> argv = {cc, "-c", "-fPIC"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.insert(argv.end(), {"-o", tmp_path, src_path});
  ProcessResult r = BuildArtifact(argv, tmp_path, obj_path, dir.string());
  if (r.status != 0) CompileFailed("C", argv, r);
  return obj_path;
}

std::string PrecompiledHeaderDir(const std::string& include_dir, const std::string& header,
                                 const std::vector<std::string>& flags,
                                 const std::string& cache_dir, const std::string& extra_key) {
  const char* env = std::getenv("TESSERA_PRECOMPILED_HEADERS");
  if (env != nullptr && std::string(env) == "0") return "";
  std::string cc = FindHostCompiler();
  if (CompilerVersion(cc).find("clang") != std::string::npos) return "";
  std::string key = ArtifactKey("tessera.PrecompiledHeader.v1", header, cc, flags, extra_key);
  static std::mutex mu;
  static std::map<std::string, std::string> failed;  // keys whose build failed in this process
  {
    std::lock_guard<std::mutex> lock(mu);
    if (failed.count(key)) return "";
  }
  fs::path root = CacheFolder(cache_dir) / ("pch-" + key);
  fs::path gch = root / (header + ".gch");
  if (VerifiedArtifact(gch.string())) return root.string();
  MakePrivateDirectories(gch.parent_path());
  std::string tmp_path = gch.string() + ".tmp." + std::to_string(getpid()) + "." + RandomSuffix();
  std::vector<std::string> argv = {cc, "-x", "c-header", "-fPIC"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.insert(argv.end(), {"-o", tmp_path, (fs::path(include_dir) / header).string()});
  ProcessResult r = BuildArtifact(argv, tmp_path, gch.string(), root.string());
  if (r.status != 0) {
    std::lock_guard<std::mutex> lock(mu);
    failed[key] = r.output;
    return "";
  }
  return root.string();
}

int64_t CompilerInvocationCount() { return g_compiler_runs.load(); }

}  // namespace tessera
