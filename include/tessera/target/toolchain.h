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

/*! \brief The support unit of a DSL kernel's library: the C file that defines the launch
 *  machinery (the TEC pool, the argument checks, the error text) once, to be compiled with
 *  CompileCachedObject and the kernel's flags and linked into a kernel compiled with
 *  -DTESSERA_DSL_SPLIT (tessera/dsl.h, "One library, two units"). */
std::string DSLSupportUnit();

/*! \brief Compile C `source` into a shared object and return its path. The object is cached in
 *  `cache_dir` (created if missing) under a hash of the source, the compiler's path and
 *  version, `flags`, `extra_key` (e.g. the text of headers the source includes) and the
 *  tessera version, so an identical request returns the cached path without compiling.
 *  `-shared -fPIC` are always passed. The compiler runs from an argument vector (no shell) into
 *  a temporary file that is renamed into place, so concurrent builds never see partial files.
 *  Failure throws tessera::Error (kBuild) with the command line and the compiler's output. */
std::string CompileSharedLibrary(const std::string& source, const std::vector<std::string>& flags,
                                 const std::string& cache_dir, const std::string& extra_key = "");

/*! \brief What a library is built with besides its source and flags (CompileSharedLibrary). */
struct SharedLibraryExtras {
  /*! \brief Object files linked after the source (CompileCachedObject's); the cache key covers
   *  their content. */
  std::vector<std::string> objects;
  /*! \brief Flags that make the compile faster without changing what it produces (the include
   *  folder of a precompiled header, PrecompiledHeaderDir): passed before the flags, left out of
   *  the cache key, and dropped in a second try when the compile fails with them. */
  std::vector<std::string> accelerators;
};

/*! \brief CompileSharedLibrary that also links `extras.objects` and passes
 *  `extras.accelerators`. */
std::string CompileSharedLibrary(const std::string& source, const std::vector<std::string>& flags,
                                 const std::string& cache_dir, const std::string& extra_key,
                                 const SharedLibraryExtras& extras);

/*! \brief Compile C `source` into a position-independent object file (`-c -fPIC` and `flags`)
 *  and return its path. Cached in `cache_dir` like CompileSharedLibrary (the key: the source,
 *  the compiler and its version, the flags, the CPU with -march=native, `extra_key`, the tessera
 *  version), written to a temporary name and renamed into place, and checked against the digest
 *  recorded when it was built before it is used (once per process). */
std::string CompileCachedObject(const std::string& source, const std::vector<std::string>& flags,
                                const std::string& cache_dir, const std::string& extra_key = "");

/*! \brief A GCC precompiled header of `include_dir`/`header` (e.g. "tessera/dsl.h") for sources
 *  compiled with `flags`, kept in `cache_dir`: returns the folder to put first on the include
 *  path (it holds only `header`.gch, which GCC uses for `#include <header>` when the flags match
 *  and ignores otherwise), or "" when there is none to use: the compiler is clang (which finds
 *  precompiled headers only through -include-pch), $TESSERA_PRECOMPILED_HEADERS is 0, or building
 *  it failed (remembered for the process). Keyed as CompileCachedObject, with `extra_key` the
 *  text of the headers. */
std::string PrecompiledHeaderDir(const std::string& include_dir, const std::string& header,
                                 const std::vector<std::string>& flags,
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
