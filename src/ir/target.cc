// Target facts: the host's SIMD width (cpuid / hwcaps), cores (affinity) and caches (sysfs).
#include "tessera/ir/target.h"

#include <sched.h>
#include <unistd.h>

#include <fstream>
#include <mutex>
#include <sstream>

#include "tessera/support/error.h"

namespace tessera {
namespace {

/*! \brief "32K" / "512K" / "32768K" / "1M" from sysfs as bytes; 0 when unreadable. */
int64_t ReadCacheSize(const std::string& path) {
  std::ifstream in(path);
  std::string text;
  if (!(in >> text) || text.empty()) return 0;
  int64_t scale = 1;
  char unit = text.back();
  if (unit == 'K' || unit == 'k') scale = 1024;
  if (unit == 'M' || unit == 'm') scale = 1024 * 1024;
  try {
    return std::stoll(text) * scale;
  } catch (...) {
    return 0;
  }
}

std::string ReadLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

void DetectCaches(TargetFacts* f) {
  const std::string base = "/sys/devices/system/cpu/cpu0/cache/index";
  for (int i = 0; i < 8; ++i) {
    std::string dir = base + std::to_string(i) + "/";
    std::string level = ReadLine(dir + "level");
    if (level.empty()) break;
    std::string type = ReadLine(dir + "type");
    if (type == "Instruction") continue;
    int64_t size = ReadCacheSize(dir + "size");
    if (size <= 0) continue;
    if (level == "1") {
      f->l1_bytes = size;
      int64_t ways = ReadCacheSize(dir + "ways_of_associativity");
      if (ways > 0) f->l1_ways = static_cast<int>(ways);
    }
    if (level == "2") f->l2_bytes = size;
    if (level == "3") f->l3_bytes = size;
  }
}

void DetectVector(TargetFacts* f) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) {
    f->isa = "avx512", f->vector_bits = 512, f->vector_registers = 32;
    // Zen 4 executes a 512-bit operation as two 256-bit halves; an int32 multiply of 2048^2
    // with 64-byte loads and stores took 1.43 ms against 1.20 with 32-byte ones (bench/
    // RESULTS.md, session 16). GCC too prefers 256-bit vectors on znver4 and skylake-avx512.
    f->stream_vector_bits = 256;
  } else if (__builtin_cpu_supports("avx2")) {
    f->isa = "avx2", f->vector_bits = 256, f->vector_registers = 16;
  } else if (__builtin_cpu_supports("avx")) {
    f->isa = "avx", f->vector_bits = 256, f->vector_registers = 16;
  } else {
    f->isa = "sse2", f->vector_bits = 128, f->vector_registers = 16;
  }
#elif defined(__aarch64__)
  f->isa = "neon", f->vector_bits = 128, f->vector_registers = 32;
#else
  f->isa = "generic", f->vector_bits = 128, f->vector_registers = 16;
#endif
}

int DetectCores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 1;
}

struct Field {
  const char* name;
  int64_t (*get)(const TargetFacts&);
  void (*set)(TargetFacts&, int64_t);
};

#define TESSERA_FACT(field)                                                   \
  Field {                                                                     \
#field, [](const TargetFacts& f) { return static_cast<int64_t>(f.field); }, \
        [](TargetFacts& f, int64_t v) { f.field = static_cast<decltype(f.field)>(v); } \
  }

const std::vector<Field>& Fields() {
  static const std::vector<Field> fields = {
      TESSERA_FACT(vector_bits),
      TESSERA_FACT(stream_vector_bits),
      TESSERA_FACT(vector_registers),
      TESSERA_FACT(cores),
      TESSERA_FACT(l1_bytes),
      TESSERA_FACT(l1_ways),
      TESSERA_FACT(l2_bytes),
      TESSERA_FACT(l3_bytes),
      TESSERA_FACT(max_threads_per_block),
      TESSERA_FACT(warp_size),
      TESSERA_FACT(shared_memory_bytes),
      TESSERA_FACT(shared_memory_optin_bytes),
      TESSERA_FACT(sm_count),
      TESSERA_FACT(pipeline_stages),
      TESSERA_FACT(mma_block_m),
      TESSERA_FACT(mma_block_n),
      TESSERA_FACT(mma_warp_m),
      TESSERA_FACT(mma_warp_n),
      TESSERA_FACT(mma_block_k),
      TESSERA_FACT(mma_swizzle),
      TESSERA_FACT(mma_stream_b),
      TESSERA_FACT(mma_copies_first),
      TESSERA_FACT(mma_fused_cast),
  };
  return fields;
}
#undef TESSERA_FACT

}  // namespace

void TargetFacts::Override(const std::string& name, int64_t value) {
  for (const Field& f : Fields()) {
    if (name != f.name) continue;
    // (the switches of the tensor-core rule may be 0, off)
    // (and stream_vector_bits, 0: as wide as vector_bits)
    const bool switch_fact = name == "mma_swizzle" || name == "mma_stream_b" ||
                             name == "mma_copies_first" || name == "mma_fused_cast" ||
                             name == "stream_vector_bits";
    if (value < 0 || (value == 0 && !switch_fact)) {
      TESSERA_THROW_KIND(Span(), ErrorKind::kValue)
          << "target fact '" << name << "' must be " << (switch_fact ? "0 or more" : "positive")
          << ", got " << value;
    }
    if ((name == "vector_bits" || name == "stream_vector_bits") && (value % 32 != 0)) {
      TESSERA_THROW_KIND(Span(), ErrorKind::kValue)
          << "target fact '" << name << "' must be a multiple of 32, got " << value;
    }
    f.set(*this, value);
    return;
  }
  std::ostringstream known;
  for (const std::string& n : Names()) known << (known.tellp() > 0 ? ", " : "") << n;
  TESSERA_THROW_KIND(Span(), ErrorKind::kValue)
      << "unknown target fact '" << name << "'; known facts: " << known.str();
}

int64_t TargetFacts::Get(const std::string& name) const {
  for (const Field& f : Fields()) {
    if (name == f.name) return f.get(*this);
  }
  TESSERA_THROW_KIND(Span(), ErrorKind::kValue) << "unknown target fact '" << name << "'";
  return 0;
}

std::vector<std::string> TargetFacts::Names() {
  std::vector<std::string> out;
  for (const Field& f : Fields()) out.push_back(f.name);
  return out;
}

std::string TargetFacts::ToString() const {
  std::ostringstream os;
  os << "TargetFacts(kind=" << kind << ", isa=" << isa;
  for (const Field& f : Fields()) os << ", " << f.name << "=" << f.get(*this);
  os << ")";
  return os.str();
}

const TargetFacts& HostFacts() {
  static const TargetFacts facts = [] {
    TargetFacts f;
    f.kind = "c";
    DetectVector(&f);
    f.cores = DetectCores();
    DetectCaches(&f);
    return f;
  }();
  return facts;
}

namespace {
// Set by the CUDA runtime (a higher layer) when it is linked in; see SetCudaDeviceLimitsProbe.
CudaDeviceLimitsProbe cuda_device_limits_probe = nullptr;
}  // namespace

void SetCudaDeviceLimitsProbe(CudaDeviceLimitsProbe probe) { cuda_device_limits_probe = probe; }

static const TargetFacts& CudaFacts() {
  // The sm_80 limits, with the SM count and the opt-in shared memory of GPU 0 where the CUDA
  // driver sees one (read once; not under the emulator, whose kernels run on the host).
  static const TargetFacts facts = [] {
    TargetFacts f;
    f.kind = "cuda";
    f.isa = "cuda";
    f.vector_bits = 128;  // float4 loads and stores
    f.vector_registers = 255;
    f.l1_bytes = 128 * 1024;
    f.l2_bytes = 40 * 1024 * 1024;
    f.l3_bytes = f.l2_bytes;
    int sms = 0;
    int64_t optin = 0;
    if (cuda_device_limits_probe != nullptr && cuda_device_limits_probe(&sms, &optin)) {
      f.sm_count = sms;
      f.shared_memory_optin_bytes = optin;
    }
    f.cores = f.sm_count;
    return f;
  }();
  return facts;
}

namespace {

/*! \brief The host's facts less the features that the target's -mattr options take away from
 *  the C compiler (-mattr=-avx512f, -avx2, -fma, -avx), so that the automatic schedule plans for
 *  the vectors and registers the compiled code has (e.g. the micro-kernels' AVX2 tiles on an
 *  AVX-512 host told not to use AVX-512F). */
TargetFacts HostFactsFor(const std::string& target) {
  TargetFacts facts = HostFacts();
  std::istringstream words(target);
  for (std::string w; words >> w;) {
    if (w.rfind("-mattr=", 0) != 0) continue;
    std::istringstream features(w.substr(7));
    for (std::string f; std::getline(features, f, ',');) {
      if (f == "-avx512f" && facts.vector_bits > 256) {
        facts.isa = "avx2", facts.vector_bits = 256, facts.vector_registers = 16;
      } else if ((f == "-avx2" || f == "-fma") && facts.vector_bits >= 256) {
        facts.isa = "avx", facts.vector_bits = 256, facts.vector_registers = 16;
      } else if (f == "-avx" && facts.vector_bits >= 256) {
        facts.isa = "sse2", facts.vector_bits = 128, facts.vector_registers = 16;
      }
    }
  }
  return facts;
}

}  // namespace

TargetFacts FactsForTarget(const std::string& target) {
  std::string kind = target.substr(0, target.find(' '));
  if (kind == "c" || kind == "llvm" || kind.empty()) return HostFactsFor(target);
  if (kind == "cuda") return CudaFacts();
  TESSERA_THROW_KIND(Span(), ErrorKind::kValue)
      << "the automatic schedule supports the targets 'c', 'llvm' and 'cuda', not '" << target
      << "'";
  return HostFacts();
}

Target Target::Parse(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  if (words.empty()) {
    TESSERA_THROW_KIND(Span(), ErrorKind::kValue) << "empty target string";
  }
  Target t{Empty{}};
  t.kind_ = words[0];
  for (size_t i = 1; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (w.size() < 2 || w[0] != '-') {
      TESSERA_THROW_KIND(Span(), ErrorKind::kValue)
          << "target option '" << w << "' of '" << text << "' must look like -key=value";
    }
    size_t eq = w.find('=');
    t.attrs_.emplace_back(w.substr(1, eq == std::string::npos ? std::string::npos : eq - 1),
                          eq == std::string::npos ? std::string() : w.substr(eq + 1));
    t.options_ += (t.options_.empty() ? "" : " ") + w;
  }
  if (t.IsHost() || t.IsGpu()) {
    t.facts_ = FactsForTarget(t.kind_ + (t.options_.empty() ? "" : " " + t.options_));
  }
  return t;
}

bool Target::HasAttr(const std::string& key) const {
  for (const auto& [k, v] : attrs_) {
    if (k == key) return true;
  }
  return false;
}

std::string Target::GetAttr(const std::string& key, const std::string& fallback) const {
  for (auto it = attrs_.rbegin(); it != attrs_.rend(); ++it) {
    if (it->first == key) return it->second;
  }
  return fallback;
}

const TargetFacts& Target::facts() const {
  if (!facts_) FactsForTarget(kind_);  // throws the error naming the supported kinds
  return *facts_;
}

void Target::OverrideFact(const std::string& name, int64_t value) {
  if (!facts_) facts_ = FactsForTarget(kind_);
  facts_->Override(name, value);
}

}  // namespace tessera
