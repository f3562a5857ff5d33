// The host's one-pass arg-extreme row searches (see tessera/target/arg_extreme.h).
#include "tessera/target/arg_extreme.h"

#include <regex>
#include <sstream>
#include <utility>
#include <vector>

namespace tessera {
namespace codegen {

bool IsArgExtremeFlatType(const std::string& dtype) {
  static const std::regex kTypes("u?int(8|16|32|64)|float(32|64)");
  return std::regex_match(dtype, kTypes);
}

std::optional<ArgExtremeRow> ParseArgExtremeRowName(const std::string& name) {
  static const std::regex kRow("tessera_arg(max|min)_row_(int32|int64|float64)");
  static const std::regex kFlat("tessera_arg(max|min)_flat_([a-z0-9]+)");
  std::smatch m;
  if (std::regex_match(name, m, kRow)) return ArgExtremeRow{m[1] == "max", m[2], false};
  if (std::regex_match(name, m, kFlat) && IsArgExtremeFlatType(m[2])) {
    return ArgExtremeRow{m[1] == "max", m[2], true};
  }
  return std::nullopt;
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

// The flat search (ArgExtremeFlatSource). $N the function, $T the element type, $L the lanes of
// a 64-byte vector, $GT the comparison that makes an element better. Lines starting "?F" are for
// floats only. A lane-wise `a[l] > b[l] ? a[l] : b[l]` is what GCC turns into vpmax / vmaxps
// (whole-vector masks and blends in C would stay compares and blends: 4 KB chunks of int8 ran
// 0.185 ms against 0.048 for 2048 x 2048).
const char* kFlatTemplate =
    R"(typedef $T $N_v __attribute__((vector_size($L * sizeof($T)), aligned(sizeof($T))));
static inline $N_v $N_load(const $T* p) {
  $N_v r;
  memcpy(&r, p, sizeof(r));
  return r;
}
static inline $N_v $N_best($N_v a, $N_v b) {
  $N_v r;
  for (int l = 0; l < $L; ++l) r[l] = a[l] $GT b[l] ? a[l] : b[l];
  return r;
}
?Fstatic inline $N_v $N_sum($N_v a, $N_v b) {
?F  $N_v r;
?F  for (int l = 0; l < $L; ++l) r[l] = a[l] + b[l];
?F  return r;
?F}
/* the best of p[0:m] (m >= 1); of floats *nan = whether their sum is a NaN */
static inline $T $N_chunk(const $T* p, int64_t m, int* nan) {
  int64_t j = 0;
  $T best = p[0];
?F  $T sum = 0;
  if (m >= 4 * $L) {
    $N_v a0 = $N_load(p), a1 = $N_load(p + $L), a2 = $N_load(p + 2 * $L);
    $N_v a3 = $N_load(p + 3 * $L);
?F    $N_v s0 = $N_sum(a0, a1), s1 = $N_sum(a2, a3);
    for (j = 4 * $L; j + 4 * $L <= m; j += 4 * $L) {
      $N_v b0 = $N_load(p + j), b1 = $N_load(p + j + $L), b2 = $N_load(p + j + 2 * $L);
      $N_v b3 = $N_load(p + j + 3 * $L);
      a0 = $N_best(b0, a0);
      a1 = $N_best(b1, a1);
      a2 = $N_best(b2, a2);
      a3 = $N_best(b3, a3);
?F      s0 = $N_sum(s0, $N_sum(b0, b1));
?F      s1 = $N_sum(s1, $N_sum(b2, b3));
    }
    for (; j + $L <= m; j += $L) {
      $N_v b0 = $N_load(p + j);
      a0 = $N_best(b0, a0);
?F      s0 = $N_sum(s0, b0);
    }
    a0 = $N_best($N_best(a0, a1), $N_best(a2, a3));
?F    s0 = $N_sum(s0, s1);
    for (int l = 0; l < $L; ++l) {
      best = a0[l] $GT best ? a0[l] : best;
?F      sum += s0[l];
    }
  }
  for (; j < m; ++j) {
    best = p[j] $GT best ? p[j] : best;
?F    sum += p[j];
  }
?F  *nan = sum != sum;
?I  (void)nan;
  return best;
}
static int32_t $N(const void* data, int64_t n, $T last) {
  enum { CHUNK = 16384 / sizeof($T) };
  const $T* p = (const $T*)data;
  (void)last;
  $T best = p[0];
  int64_t from = 0, k, m;
  /* the first chunk ends at a 64-byte boundary, so that the others' vectors are aligned */
  int64_t head = (int64_t)(((64 - ((uintptr_t)p & 63)) & 63) / sizeof($T));
  if ((uintptr_t)p % sizeof($T) != 0 || head == 0) head = CHUNK;
  for (k = 0; k < n; k += m) {
    m = k == 0 ? head : CHUNK;
    if (m > n - k) m = n - k;
    int nan = 0;
    $T c = $N_chunk(p + k, m, &nan);
?F    if (nan) {
?F      for (int64_t i = k; i < k + m; ++i) {
?F        if (p[i] != p[i]) return (int32_t)i;
?F      }
?F    }
    if (c $GT best) {
      best = c;
      from = k;
    }
  }
  const int64_t end = n - from < CHUNK ? n : from + CHUNK;
  for (k = from; k < end && p[k] != best; ++k) {
  }
  return (int32_t)k;
}
)";

/*! \brief `text` without the lines marked "?F" (unless `is_float`) or "?I" (unless integer), the
 * marks of the others taken off. */
std::string KeepLines(const std::string& text, bool is_float) {
  std::istringstream in(text);
  std::ostringstream out;
  for (std::string line; std::getline(in, line);) {
    const bool f = line.rfind("?F", 0) == 0, i = line.rfind("?I", 0) == 0;
    if (!f && !i) {
      out << line << "\n";
    } else if (f == is_float) {
      out << line.substr(2) << "\n";
    }
  }
  return out.str();
}

}  // namespace

std::string ArgExtremeFlatSource(const std::string& name, const ArgExtremeRow& row) {
  const bool is_float = row.dtype.rfind("float", 0) == 0;
  const std::string t = row.dtype == "float32"   ? "float"
                        : row.dtype == "float64" ? "double"
                                                 : row.dtype + "_t";
  const int bits = std::stoi(row.dtype.substr(row.dtype.find_first_of("0123456789")));
  const std::string lanes = std::to_string(512 / bits);
  return KeepLines(Fill(kFlatTemplate,
                        {{"$GT", row.is_max ? ">" : "<"}, {"$N", name}, {"$T", t}, {"$L", lanes}}),
                   is_float);
}

std::string ArgExtremeRowSource(const std::string& name, const ArgExtremeRow& row) {
  if (row.flat) return ArgExtremeFlatSource(name, row);
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
