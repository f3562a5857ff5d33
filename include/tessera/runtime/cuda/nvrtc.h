// NVRTC, loaded at run time: CUDA C to PTX without a GPU, cached by content.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessera {
namespace runtime {
namespace cuda {

/*! \brief Whether libnvrtc can be loaded; otherwise `why` says what was tried. The library is
 *  $TESSERA_NVRTC_PATH when set, else libnvrtc.so on the loader path, under $CUDA_HOME/lib64 or
 *  /usr/local/cuda/lib64. */
bool NVRTCAvailable(std::string* why = nullptr);

/*! \brief "major.minor" of the loaded NVRTC; throws like CompileCUDA when it is missing. */
std::string NVRTCVersion();

/*! \brief Compile CUDA C `source` to PTX for `arch` ("sm_80"). The PTX is cached in
 *  `cache_dir` under a hash of the source, arch, options, NVRTC version and tessera version.
 *  Throws tessera::Error (kBuild) with NVRTC's log when compilation fails, or saying that NVRTC
 *  was not found. */
std::string CompileCUDA(const std::string& source, const std::string& arch,
                        const std::string& cache_dir, const std::vector<std::string>& options = {});

/*! \brief How many times this process has run NVRTC (for cache tests). */
int64_t NVRTCInvocationCount();

}  // namespace cuda
}  // namespace runtime
}  // namespace tessera
