// Host C toolchain: compiler discovery, argv-only invocation and the content-addressed cache.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessera {

/*! \brief The host C compiler: $CC when set (a path or a name looked up on PATH), else the first
 *  of cc, gcc, clang on PATH. Throws tessera::Error (kBuild) when there is none. */
std::string FindHostCompiler();

/*! \brief $TESSERA_CACHE_DIR, else $HOME/.cache/tessera. Callers add a subdirectory ("dsl"). */
std::string DefaultCacheDir();

/*! \brief The flags the DSL host build uses, with `include_dir` (the package's include folder,
 *  holding tessera/dsl.h) on the include path. */
std::vector<std::string> DefaultDSLCompileFlags(const std::string& include_dir);

/*! \brief Compile C `source` into a shared object and return its path. The object is cached in
 *  `cache_dir` (created if missing) under a hash of the source, the compiler's path and
 *  version, `flags`, `extra_key` (e.g. the text of headers the source includes) and the
 *  tessera version, so an identical request returns the cached path without compiling.
 *  `-shared -fPIC` are always passed. The compiler runs from an argument vector (no shell) into
 *  a temporary file that is renamed into place, so concurrent builds never see partial files.
 *  Failure throws tessera::Error (kBuild) with the command line and the compiler's output. */
std::string CompileSharedLibrary(const std::string& source, const std::vector<std::string>& flags,
                                 const std::string& cache_dir, const std::string& extra_key = "");

/*! \brief One C file of a library built from several, with the flags that compile it. */
struct CompileUnit {
  std::string source;
  std::vector<std::string> flags;
};

/*! \brief CompileSharedLibrary for a program split into compilation units: each unit is
 *  compiled to an object file with its own flags (`-c -fPIC` added), as many at once as
 *  $TESSERA_BUILD_JOBS (default: the number of CPUs) allows, and the objects are linked with
 *  `link_flags` into one shared object. `source` is the whole program as one file: it is stored
 *  with the library and checked on a cache hit, as CompileSharedLibrary does; the cache key
 *  covers it, every unit and every flag. */
std::string CompileSharedLibraryUnits(const std::string& source,
                                      const std::vector<CompileUnit>& units,
                                      const std::vector<std::string>& link_flags,
                                      const std::string& cache_dir,
                                      const std::string& extra_key = "");

/*! \brief The host C++ compiler: $CXX when set, else the first of c++, g++, clang++ on PATH.
 *  Throws tessera::Error (kBuild) when there is none. */
std::string FindHostCXXCompiler();

/*! \brief CompileSharedLibrary for C++ `source`, compiled by FindHostCXXCompiler() (the CUDA
 *  emulator's kernels); same cache, keyed apart from C. */
std::string CompileSharedLibraryCXX(const std::string& source,
                                    const std::vector<std::string>& flags,
                                    const std::string& cache_dir,
                                    const std::string& extra_key = "");

/*! \brief How many times this process has run a compiler to build a library (for cache tests). */
int64_t CompilerInvocationCount();

}  // namespace tessera
