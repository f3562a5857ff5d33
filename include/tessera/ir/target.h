// The compilation target: its kind and options, parsed once from "kind -key=value ...", and
// its facts (vector width, registers, cores, cache sizes, and for CUDA the thread and
// shared-memory limits), the host's detected once. Every layer that needs the target reads it
// from here (the stage table, the CUDA code generator's arch, the automatic schedule).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tessera {

/*! \brief The facts of one target; the host's are detected once (HostFacts), any can be
 *  overridden by name (Override). */
struct TargetFacts {
  std::string kind = "c";  ///< "c" (the host CPU) or "cuda"
  std::string isa;         ///< "avx512", "avx2", "avx", "sse2", "neon", "generic", "cuda"
  int vector_bits = 128;   ///< the native SIMD register width
  /// the widest vector of an elementwise loop that streams memory (which ones: Streams in
  /// autoschedule/injective.cc); 0: vector_bits. 256 on x86 hosts with AVX-512, whose 64-byte
  /// loads and stores streamed slower than 32-byte ones on Zen 4
  int stream_vector_bits = 0;
  int vector_registers = 16;
  int cores = 1;  ///< the processors this process may run on
  int64_t l1_bytes = 32 * 1024;
  int l1_ways = 8;  ///< the L1 data cache's associativity (lines of one set)
  int64_t l2_bytes = 256 * 1024;
  int64_t l3_bytes = 8 * 1024 * 1024;
  // CUDA
  int max_threads_per_block = 1024;
  int warp_size = 32;
  int64_t shared_memory_bytes = 48 * 1024;  ///< static shared memory of a block
  /// dynamic shared memory a block may opt in to (sm_80: 163 KB; sm_90: 227 KB)
  int64_t shared_memory_optin_bytes = 163 * 1024;
  int sm_count = 108;
  /// stages of the software pipeline of the tensor-core rule's shared-memory copies (1: none)
  int pipeline_stages = 3;
  /// the tensor-core rule's largest block tile (rows x columns of C) and warp tile (the
  /// default 128 x 256 blocks of 8 warps of 64 x 64 measured best on an H200: a third less L2
  /// traffic per mma than 128 x 128 blocks of 4 warps)
  int mma_block_m = 128;
  int mma_block_n = 256;
  int mma_warp_m = 64;
  int mma_warp_n = 64;
  /// the tensor-core rule's deepest reduction step per shared-memory tile (64, 32 or 16)
  int mma_block_k = 64;
  /// block rasterization: consecutive blocks take this many block rows of one block column
  /// (they share the B tile in L2); 0 or 1: blockIdx.x is the column, blockIdx.y the row
  int mma_swizzle = 8;
  /// 1: each warp loads its B fragments one at a time inside the fragment loop (fewer live
  /// registers); 0: all of a k step's A and B fragments first
  int mma_stream_b = 0;
  /// 1: a pipelined k step issues its copies before its mma (two barriers a step: the copies
  /// overwrite the tiles the previous step read); 0: after (one barrier a step)
  int mma_copies_first = 0;
  /// 1: the float16 cast of a matmul whose only consumer casts it (fp16 output) is done as the
  /// accumulator fragments are stored (one kernel, float16 written once); 0: a second kernel
  int mma_fused_cast = 0;

  bool IsGpu() const { return kind == "cuda"; }
  /*! \brief Lanes of a native vector of `bits`-wide elements (at least 1). */
  int VectorLanes(int bits) const {
    return bits > 0 && vector_bits >= bits ? vector_bits / bits : 1;
  }
  /*! \brief Lanes of the vector of a memory-bound loop of `bits`-wide elements: VectorLanes,
   *  at most stream_vector_bits wide when that is set. */
  int StreamVectorLanes(int bits) const {
    int lanes = VectorLanes(bits);
    if (stream_vector_bits > 0 && bits > 0 && stream_vector_bits >= bits) {
      lanes = std::min(lanes, stream_vector_bits / bits);
    }
    return lanes;
  }
  /*! \brief Set the fact `name` (e.g. "vector_bits"); throws a ValueError naming the known ones
   *  for an unknown name and for a value that is not positive. */
  void Override(const std::string& name, int64_t value);
  /*! \brief The names Override accepts. */
  static std::vector<std::string> Names();
  /*! \brief The value of the fact `name`. */
  int64_t Get(const std::string& name) const;
  std::string ToString() const;
};

/*! \brief The host CPU's facts, detected on first use (cpuid, sysfs, sched_getaffinity). */
const TargetFacts& HostFacts();
/*! \brief Reads GPU 0's SM count and opt-in shared memory per block; false where there is no
 *  GPU. The CUDA runtime (a higher layer than ir/) registers one when it is loaded, so that the
 *  "cuda" facts describe the device without ir/ depending on the runtime. */
using CudaDeviceLimitsProbe = bool (*)(int* sm_count, int64_t* shared_memory_optin_bytes);
void SetCudaDeviceLimitsProbe(CudaDeviceLimitsProbe probe);

/*! \brief The facts of a target ("kind -options"): "c" and "llvm" are the host, less the vector
 *  features its -mattr options take away (-avx512f: 256-bit vectors and 16 registers; -avx2 or
 *  -fma: isa "avx"; -avx: 128-bit), "cuda" a GPU (sm_80 limits). */
TargetFacts FactsForTarget(const std::string& target);

/*!
 * \brief A compilation target, parsed once from its string: "c", "llvm -mcpu=skylake",
 *  "cuda -arch=sm_80". The kind (the first word) names the stage table; the options keep their
 *  order ("-key=value" gives the attribute key -> value, "-flag" gives flag -> ""). The facts are
 *  the kind's (FactsForTarget), overridable one by one.
 */
class Target {
 public:
  /*! \brief The host C target ("c"). */
  Target() : Target(Parse("c")) {}
  /*! \brief Parse `text`; white space separates the words. An empty string or an option that
   *  does not start with '-' throws a ValueError naming the string. */
  static Target Parse(const std::string& text);

  const std::string& kind() const { return kind_; }
  /*! \brief The options after the kind, one space apart ("-arch=sm_80 -mcpu=x"). */
  const std::string& options() const { return options_; }
  /*! \brief The options as (key, value) pairs in their order, without the leading '-'. */
  const std::vector<std::pair<std::string, std::string>>& attrs() const { return attrs_; }
  bool HasAttr(const std::string& key) const;
  /*! \brief The value of the last option `key`, else `fallback`. */
  std::string GetAttr(const std::string& key, const std::string& fallback = "") const;
  /*! \brief Whether kernels of this target run on a GPU ("cuda"). */
  bool IsGpu() const { return kind_ == "cuda"; }
  /*! \brief Whether the target is the host CPU ("c", "llvm"). */
  bool IsHost() const { return kind_ == "c" || kind_ == "llvm"; }
  /*! \brief The facts of the target (the host's for "c"/"llvm"); a kind without facts throws
   *  the ValueError of FactsForTarget. */
  const TargetFacts& facts() const;
  /*! \brief Set one fact (TargetFacts::Override: unknown names and bad values throw). */
  void OverrideFact(const std::string& name, int64_t value);
  /*! \brief "kind -key=value ...", the string the target was parsed from with its white space
   *  folded. */
  std::string str() const { return options_.empty() ? kind_ : kind_ + " " + options_; }

 private:
  struct Empty {};
  explicit Target(Empty) {}
  std::string kind_, options_;
  std::vector<std::pair<std::string, std::string>> attrs_;
  std::optional<TargetFacts> facts_;
};

}  // namespace tessera
