// The host's one-pass arg-extreme row searches (see tessera/target/arg_extreme.h).
#include "tessera/target/arg_extreme.h"

#include <regex>
#include <sstream>
#include <utility>
#include <vector>

namespace tessera {
namespace codegen {

std::optional<ArgExtremeRow> ParseArgExtremeRowName(const std::string& name) {
  static const std::regex kName("tessera_arg(max|min)_row_(int32|int64|float64)");
  std::smatch m;
  if (!std::regex_match(name, m, kName)) return std::nullopt;
  return ArgExtremeRow{m[1] == "max", m[2]};
}

namespace {

/*! \brief Replaces every "$KEY" of `text` by its value, key by key in the order given (a key that
 * another begins with comes after it). */
std::string Fill(std::string text, const std::vector<std::pair<std::string, std::string>>& kv) {
  for (const auto& [key, value] : kv) {
    for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at)) {
      text.replace(at, key.size(), value);
      at += value.size();
    }
  }
  return text;
}

// $N the function, $T the element type (64-bit integers as long long, the type GCC's builtins
// take), $I the index type (as wide as an element), $L the lanes of a 64-byte vector, $GT the
// comparison that makes an element better ("a $GT b": a replaces b), $MT the AVX-512 mask type,
// $CMP / $BLEND / $IBLEND / $NAN the AVX-512 builtins (better, blend elements, blend indices,
// a lane holds a NaN). Lines starting "?F" are for floats only, "?I" for integers only.
const char* kTemplate =
    R"(typedef $T $N_v __attribute__((vector_size($L * sizeof($T)), aligned(sizeof($T))));
typedef $I $N_i __attribute__((vector_size($L * sizeof($I))));
static inline $N_v $N_load(const $T* p) {
  $N_v r;
  memcpy(&r, p, sizeof(r));
  return r;
}
#if defined(__x86_64__) && defined(__AVX512F__)
typedef $MT $N_m;
static inline $N_m $N_better($N_v a, $N_v b) { return $CMP; }
static inline $N_v $N_pick($N_m m, $N_v a, $N_v b) { return $BLEND; }
static inline $N_i $N_ipick($N_m m, $N_i a, $N_i b) { return $IBLEND; }
?Fstatic inline $N_m $N_nan($N_v a, $N_v b) { return $NAN; }
?Fstatic inline int $N_any($N_m m) { return m != 0; }
#else
typedef $N_i $N_m;
static inline $N_m $N_better($N_v a, $N_v b) { return ($N_i)(a $GT b); }
static inline $N_v $N_pick($N_m m, $N_v a, $N_v b) { return ($N_v)((m & ($N_i)a) | (~m & ($N_i)b)); }
static inline $N_i $N_ipick($N_m m, $N_i a, $N_i b) { return (m & a) | (~m & b); }
?Fstatic inline $N_m $N_nan($N_v a, $N_v b) { return ($N_i)(a != a) | ($N_i)(b != b); }
?Fstatic inline int $N_any($N_m m) {
?F  $I r = 0;
?F  for (int l = 0; l < $L; ++l) r |= m[l];
?F  return r != 0;
?F}
#endif
static int32_t $N(const void* row, int64_t n, $T last) {
  const $T* p = (const $T*)row;
  (void)last;
  int64_t k;
  if (n < $L) {
    int64_t at = 0;
    for (k = 1; k < n; ++k) {
?F      if (p[at] != p[at]) break;
?F      if (p[k] != p[k]) return (int32_t)k;
      if (p[k] $GT p[at]) at = k;
    }
    return (int32_t)at;
  }
  const $N_i zero = {0}, s1 = zero + ($I)$L, s2 = zero + ($I)(2 * $L), s3 = zero + ($I)(3 * $L);
  $N_i lane;
  for (int l = 0; l < $L; ++l) lane[l] = ($I)l;
  $N_v acc = $N_load(p);
  $N_i idx = lane;
?F  $N_m nan = $N_nan(acc, acc);
  k = (int64_t)(((64 - ((uintptr_t)p & 63)) & 63) / sizeof($T));
  if ((uintptr_t)p % sizeof($T) != 0) k = 0;
  $N_i base = lane + ($I)k;
  const $T* q = p + k;
  for (; k + 4 * $L <= n; k += 4 * $L, q += 4 * $L) {
    $N_v a = $N_load(q), b = $N_load(q + $L), c = $N_load(q + 2 * $L), d = $N_load(q + 3 * $L);
?F    nan |= $N_nan(a, b) | $N_nan(c, d);
    $N_m mba = $N_better(b, a), mdc = $N_better(d, c);
    $N_v xba = $N_pick(mba, b, a), xdc = $N_pick(mdc, d, c);
    $N_i iba = $N_ipick(mba, s1, zero), idc = $N_ipick(mdc, s3, s2);
    $N_m m = $N_better(xdc, xba);
    $N_v x = $N_pick(m, xdc, xba);
    $N_i i = $N_ipick(m, idc, iba);
    $N_m g = $N_better(x, acc);
    acc = $N_pick(g, x, acc);
    idx = $N_ipick(g, base + i, idx);
    base += ($I)(4 * $L);
  }
  for (;; k += $L) {
    if (k + $L > n) {
      if (k >= n) break;
      k = n - $L;
    }
    $N_v a = $N_load(p + k);
?F    nan |= $N_nan(a, a);
    $N_m g = $N_better(a, acc);
    acc = $N_pick(g, a, acc);
    idx = $N_ipick(g, lane + ($I)k, idx);
  }
?F  if ($N_any(nan)) {
?F    for (k = 0; k < n; ++k) {
?F      if (p[k] != p[k]) return (int32_t)k;
?F    }
?F  }
  $T best = acc[0];
  $I at = idx[0];
  for (int l = 1; l < $L; ++l) {
    if (acc[l] $GT best || (acc[l] == best && idx[l] < at)) {
      best = acc[l];
      at = idx[l];
    }
  }
  return (int32_t)at;
}
)";

}  // namespace

std::string ArgExtremeRowSource(const std::string& name, const ArgExtremeRow& row) {
  const bool is_float = row.dtype == "float64";
  const bool wide = row.dtype != "int32";
  const std::string t = row.dtype == "int32" ? "int32_t" : is_float ? "double" : "long long";
  const std::string idx = wide ? "long long" : "int32_t";
  const std::string lanes = wide ? "8" : "16";
  const std::string mt = wide ? "unsigned char" : "unsigned short";
  const std::string all = "(" + mt + ")-1";
  std::string cmp, blend;
  const std::string ik = wide ? "q" : "d";
  if (is_float) {
    // _CMP_GT_OS (14) / _CMP_LT_OS (1): false where a NaN is; rounding as is (4)
    cmp = "__builtin_ia32_cmppd512_mask(a, b, " + std::string(row.is_max ? "14" : "1") + ", " +
          all + ", 4)";
    blend = "__builtin_ia32_blendmpd_512_mask(b, a, m)";
  } else {
    cmp = "__builtin_ia32_pcmpgt" + ik + "512_mask(" + (row.is_max ? "a, b" : "b, a") + ", " + all +
          ")";
    blend = "__builtin_ia32_blendm" + ik + "_512_mask(b, a, m)";
  }
  std::string text =
      Fill(kTemplate, {{"$IBLEND", "__builtin_ia32_blendm" + ik + "_512_mask(b, a, m)"},
                       {"$BLEND", blend},
                       {"$CMP", cmp},
                       {"$NAN", "__builtin_ia32_cmppd512_mask(a, b, 3, " + all + ", 4)"},
                       {"$GT", row.is_max ? ">" : "<"},
                       {"$MT", mt},
                       {"$N", name},
                       {"$T", t},
                       {"$I", idx},
                       {"$L", lanes}});
  // keep the lines for this type, without their marks
  std::istringstream in(text);
  std::ostringstream out;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("?F", 0) == 0) {
      if (is_float) out << line.substr(2) << "\n";
    } else {
      out << line << "\n";
    }
  }
  return out.str();
}

}  // namespace codegen
}  // namespace tessera
