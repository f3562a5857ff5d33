// What the automatic schedule needs to know about a target: vector width, registers, cores,
// cache sizes, and for CUDA the thread and shared-memory limits.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessera {
namespace autoschedule {

/*! \brief The facts of one target; the host's are detected once (HostFacts), any can be
 *  overridden by name (Override). */
struct TargetFacts {
  std::string kind = "c";  ///< "c" (the host CPU) or "cuda"
  std::string isa;         ///< "avx512", "avx2", "avx", "sse2", "neon", "generic", "cuda"
  int vector_bits = 128;   ///< the native SIMD register width
  int vector_registers = 16;
  int cores = 1;  ///< the processors this process may run on
  int64_t l1_bytes = 32 * 1024;
  int64_t l2_bytes = 256 * 1024;
  int64_t l3_bytes = 8 * 1024 * 1024;
  // CUDA
  int max_threads_per_block = 1024;
  int warp_size = 32;
  int64_t shared_memory_bytes = 48 * 1024;
  int sm_count = 108;

  bool IsGpu() const { return kind == "cuda"; }
  /*! \brief Lanes of a native vector of `bits`-wide elements (at least 1). */
  int VectorLanes(int bits) const {
    return bits > 0 && vector_bits >= bits ? vector_bits / bits : 1;
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
/*! \brief The facts of a target kind: "c" and "llvm" are the host, "cuda" a GPU (sm_80 limits). */
TargetFacts FactsForTarget(const std::string& target);

}  // namespace autoschedule
}  // namespace tessera
