// The host's row sort (see tessera/target/sort_rows.h).
#include "tessera/target/sort_rows.h"

#include <algorithm>
#include <map>
#include <sstream>
#include <utility>
#include <vector>

namespace tessera {
namespace codegen {
namespace {

/*! \brief C statements setting `key` (the key type) from `x` (the row's type), ascending. */
std::string AscendingKey(const std::string& dtype) {
  if (dtype == "float32" || dtype == "float64") {
    const bool f32 = dtype == "float32";
    const std::string u = f32 ? "uint32_t" : "uint64_t";
    const std::string sign = f32 ? "0x80000000u" : "0x8000000000000000ull";
    const std::string all = f32 ? "0xFFFFFFFFu" : "0xFFFFFFFFFFFFFFFFull";
    return "if (x != x) {\n        key = " + all + ";\n      } else {\n        " + u +
           " u;\n        __builtin_memcpy(&u, &x, sizeof u);\n        if (x == 0) u = 0;\n" +
           "        key = (u & " + sign + ") ? ~u : (u | " + sign + ");\n        DESCEND\n      }";
  }
  if (dtype == "int64") return "key = (uint64_t)x ^ 0x8000000000000000ull;\n      DESCEND";
  if (dtype == "uint64") return "key = (uint64_t)x;\n      DESCEND";
  if (dtype[0] == 'u') return "key = (uint32_t)x;\n      DESCEND";
  return "key = (uint32_t)(int32_t)x ^ 0x80000000u;\n      DESCEND";
}

/*! \brief The bits of a row type's key: its width, whether it is a float, a signed integer. */
struct KeyBits {
  int bits = 32;
  bool is_float = false;
  bool is_signed = false;
};

KeyBits KeyBitsOf(const std::string& dtype) {
  KeyBits k;
  k.is_float = dtype[0] == 'f';
  k.is_signed = dtype[0] == 'i';
  k.bits = std::stoi(dtype.substr(dtype.find_first_of("0123456789")));
  return k;
}

std::string UType(int bits) { return "uint" + std::to_string(bits) + "_t"; }

/*! \brief A `bits`-wide unsigned constant. */
std::string Const(uint64_t v, int bits) {
  std::ostringstream os;
  os << "((" << UType(bits) << ")0x" << std::hex << v << "ull)";
  return os.str();
}

/*! \brief C statements, without a branch, setting `uint<bits>_t key` from `x` (the row's type):
 *  the key's unsigned order is the wanted one (ascending or descending), -0.0 and +0.0 one key,
 *  every NaN the highest key; for floats also `int special` (x is NaN or -0.0: an element its key
 *  does not give back). */
std::string KeyOf(const std::string& dtype, bool ascending) {
  const KeyBits kb = KeyBitsOf(dtype);
  const std::string u = UType(kb.bits);
  const uint64_t all = kb.bits == 64 ? ~uint64_t{0} : (uint64_t{1} << kb.bits) - 1;
  const uint64_t sign = uint64_t{1} << (kb.bits - 1);
  std::ostringstream os;
  os << u << " u;\n      __builtin_memcpy(&u, &x, sizeof u);\n";
  if (kb.is_float) {
    const uint64_t exp = kb.bits == 16 ? 0x7C00 : kb.bits == 32 ? 0x7F800000 : 0x7FF0000000000000;
    os << "      " << u << " mag = (" << u << ")(u & " << Const(all ^ sign, kb.bits) << ");\n"
       << "      " << u << " key = mag == 0 ? " << Const(sign, kb.bits) << " : (u & "
       << Const(sign, kb.bits) << ") ? (" << u << ")~u : (" << u << ")(u | " << Const(sign, kb.bits)
       << ");\n";
    if (!ascending) os << "      key = (" << u << ")~key;\n";
    os << "      int special = (mag > " << Const(exp, kb.bits)
       << ") | (u == " << Const(sign, kb.bits) << ");\n      (void)special;\n"
       << "      key = mag > " << Const(exp, kb.bits) << " ? " << Const(all, kb.bits)
       << " : key;\n";
    return os.str();
  }
  os << "      " << u << " key = "
     << (kb.is_signed ? "(" + u + ")(u ^ " + Const(sign, kb.bits) + ")" : std::string("u"))
     << ";\n";
  if (!ascending) os << "      key = (" << u << ")~key;\n";
  return os.str();
}

/*! \brief C statements setting `x` (the row's type, declared before) from `key` (KeyOf's). */
std::string ValueOf(const std::string& dtype, bool ascending) {
  const KeyBits kb = KeyBitsOf(dtype);
  const std::string u = UType(kb.bits);
  const uint64_t sign = uint64_t{1} << (kb.bits - 1);
  std::ostringstream os;
  if (!ascending) os << "      key = (" << u << ")~key;\n";
  os << "      " << u << " u = ";
  if (kb.is_float) {
    os << "(key & " << Const(sign, kb.bits) << ") ? (" << u << ")(key ^ " << Const(sign, kb.bits)
       << ") : (" << u << ")~key;\n";
  } else if (kb.is_signed) {
    os << "(" << u << ")(key ^ " << Const(sign, kb.bits) << ");\n";
  } else {
    os << "key;\n";
  }
  os << "      __builtin_memcpy(&x, &u, sizeof x);\n";
  return os.str();
}

/*! \brief For 64-bit types: C statements setting `uint64_t key` from `x` (the row's type) without
 *  a branch, ascending or descending, so that a loop of them vectorizes (the keys of
 *  AscendingKey, DESCEND done). */
std::string WideKey(const std::string& dtype, bool ascending) {
  std::string s;
  if (dtype == "float64") {
    s = "uint64_t u;\n      __builtin_memcpy(&u, &x, sizeof u);\n      u = x == 0 ? 0ull : u;\n"
        "      uint64_t key = u ^ ((uint64_t)((int64_t)u >> 63) | 0x8000000000000000ull);\n";
    if (!ascending) s += "      key = ~key;\n";
    return s + "      key = x != x ? 0xFFFFFFFFFFFFFFFFull : key;\n";
  }
  s = dtype == "uint64" ? "uint64_t key = (uint64_t)x;\n"
                        : "uint64_t key = (uint64_t)x ^ 0x8000000000000000ull;\n";
  if (!ascending) s += "      key = ~key;\n";
  return s;
}

/*! \brief Batcher's odd-even merge sort network of `n` (a power of two) inputs. */
std::vector<std::pair<int, int>> OddEvenMergeNetwork(int n) {
  std::vector<std::pair<int, int>> out;
  for (int p = 1; p < n; p *= 2) {
    for (int k = p; k >= 1; k /= 2) {
      for (int j = k % p; j + k < n; j += 2 * k) {
        for (int i = 0; i < k && i + j + k < n; ++i) {
          if ((i + j) / (p * 2) == (i + j + k) / (p * 2)) out.emplace_back(i + j, i + j + k);
        }
      }
    }
  }
  return out;
}

}  // namespace

namespace {

/*! \brief The function's head: its signature, the typed pointers, k clamped to n. */
std::string Head(const std::string& name, const SortRow& row, const std::string& t,
                 const std::string& select = "k * 8 < n") {
  std::ostringstream os;
  os << "static int32_t " << name << "(const void* row_, int64_t n, ";
  if (row.values) os << "void* values_, ";
  if (!row.index_dtype.empty()) os << "void* indices_, ";
  os << "int64_t k, " << t << " last) {\n";
  os << "  (void)last;\n  const " << t << "* row = (const " << t << "*)row_;\n";
  if (row.values) os << "  " << t << "* values = (" << t << "*)values_;\n";
  if (!row.index_dtype.empty()) {
    const std::string it = SortRowCType(row.index_dtype);
    os << "  " << it << "* indices = (" << it << "*)indices_;\n";
  }
  os << "  if (k > n) k = n;\n  if (k <= 0) return 0;\n";
  os << "  const int select = " << select << ";\n";
  return os.str();
}

/*! \brief The k best kept in order in `a`: one comparison skips an element no better than the
 *  k-th. `e` is the element (declared before). */
std::string KeepBest(const std::string& L, const std::string& indent) {
  std::ostringstream os;
  os << indent << "if (m == k) {\n"
     << indent << "  if (!" << L << "(e, a[k - 1])) continue;\n"
     << indent << "  m = k - 1;\n"
     << indent << "}\n"
     << indent << "int64_t p = m;\n"
     << indent << "while (p > 0 && " << L << "(e, a[p - 1])) {\n"
     << indent << "  a[p] = a[p - 1];\n"
     << indent << "  --p;\n"
     << indent << "}\n"
     << indent << "a[p] = e;\n"
     << indent << "++m;\n";
  return os.str();
}

/*! \brief Merges of sorted runs of `w` elements from a to b, twice as long each pass, branch-free;
 *  the sorted elements end in a. */
std::string Merges(const std::string& e_t, const std::string& L, const std::string& count) {
  std::ostringstream os;
  os << "    for (; w < " << count << "; w *= 2) {\n"
     << "      for (int64_t s = 0; s < " << count << "; s += 2 * w) {\n"
     << "        int64_t mid = s + w < " << count << " ? s + w : " << count << ";\n"
     << "        int64_t end = s + 2 * w < " << count << " ? s + 2 * w : " << count << ";\n"
     << "        int64_t i = s, j = mid, o = s;\n"
     << "        if (mid - s == end - mid) {\n"
     << "          /* runs of the same length: the smallest half from the front and the\n"
     << "             largest from the back in the same steps (two independent chains); no\n"
     << "             index passes its run's end (every element differs: the index is part of\n"
     << "             it) */\n"
     << "          int64_t ib = mid - 1, jb = end - 1, ob = end - 1;\n"
     << "          for (int64_t step = 0; step < mid - s; ++step) {\n"
     << "            " << e_t << " x = a[i], y = a[j], xb = a[ib], yb = a[jb];\n"
     << "            int64_t take = " << L << "(y, x), back = " << L << "(yb, xb);\n"
     << "            b[o++] = take ? y : x;\n            j += take;\n            i += 1 - take;\n"
     << "            b[ob--] = back ? xb : yb;\n            ib -= back;\n"
     << "            jb -= 1 - back;\n"
     << "          }\n"
     << "          continue;\n"
     << "        }\n"
     << "        while (i < mid && j < end) {\n"
     << "          " << e_t << " x = a[i], y = a[j];\n"
     << "          int64_t take = " << L << "(y, x);\n"
     << "          b[o++] = take ? y : x;\n          j += take;\n          i += 1 - take;\n"
     << "        }\n"
     << "        while (i < mid) b[o++] = a[i++];\n        while (j < end) b[o++] = a[j++];\n"
     << "      }\n"
     << "      " << e_t << "* swap = a;\n      a = b;\n      b = swap;\n    }\n";
  return os.str();
}

/*! \brief Scratch `a` and `b` of `size` elements each: on the stack up to 1024, else malloc'ed. */
std::string Scratch(const std::string& e_t, const std::string& size) {
  std::ostringstream os;
  os << "  " << e_t << " stack_a[1024] __attribute__((aligned(64)));\n"
     << "  " << e_t << " stack_b[1024] __attribute__((aligned(64)));\n"
     << "  " << e_t << "* a = stack_a;\n  " << e_t << "* b = stack_b;\n"
     << "  if (" << size << " > 1024) {\n"
     << "    a = (" << e_t << "*)__builtin_malloc(2 * (size_t)" << size << " * sizeof(" << e_t
     << "));\n"
     << "    if (!a) return -1;\n    b = a + " << size << ";\n  }\n";
  return os.str();
}

std::string Outputs(const SortRow& row, const std::string& idx, const std::string& size) {
  std::ostringstream os;
  os << "  for (int64_t p = 0; p < k; ++p) {\n    int64_t at = " << idx << ";\n";
  if (row.values) os << "    values[p] = row[at];\n";
  if (!row.index_dtype.empty()) {
    os << "    indices[p] = (" << SortRowCType(row.index_dtype) << ")at;\n";
  }
  os << "  }\n";
  os << "  if (" << size << " > 1024) __builtin_free(a < b ? a : b);\n  return 0;\n}\n";
  return os.str();
}

/*! \brief Types of up to 32 bits: elements key << 32 | index in 64-bit words. */
std::string NarrowSource(const std::string& name, const SortRow& row,
                         const std::string& select = "k * 8 < n") {
  const std::string t = SortRowCType(row.dtype);
  const std::string L = name + "_LESS";
  const std::string v8 = name + "_v8";
  const std::string key = KeyOf(row.dtype, row.ascending);
  std::ostringstream os;
  os << "#define " << L << "(A, B) ((A) < (B))\n";
  os << "typedef uint64_t " << v8 << " __attribute__((vector_size(64)));\n";
  os << Head(name, row, t, select);
  // the merge sort pads the row to a multiple of 128 with the highest word (no element's)
  os << "  const int64_t size = select ? k : (n + 127) / 128 * 128;\n";
  os << Scratch("uint64_t", "size");
  os << "  if (select) {\n"
     << "    /* the keys of 256 elements at a time (a loop that vectorizes), then the k best */\n"
     << "    uint32_t keys[256];\n    int64_t m = 0;\n"
     << "    for (int64_t c = 0; c < n; c += 256) {\n"
     << "      int64_t count = n - c < 256 ? n - c : 256;\n"
     << "      for (int64_t t = 0; t < count; ++t) {\n"
     << "        " << t << " x = row[c + t];\n        " << key << "        keys[t] = key;\n"
     << "      }\n"
     << "      for (int64_t t = 0; t < count; ++t) {\n"
     << "        uint64_t e = ((uint64_t)keys[t] << 32) | (uint64_t)(c + t);\n"
     << KeepBest(L, "        ") << "      }\n    }\n"
     << "  } else {\n"
     << "    for (int64_t i = 0; i < n; ++i) {\n"
     << "      " << t << " x = row[i];\n      " << key
     << "      a[i] = ((uint64_t)key << 32) | (uint64_t)i;\n    }\n"
     << "    for (int64_t i = n; i < size; ++i) a[i] = ~(uint64_t)0;\n"
     << "    /* each 128: 16 vectors of 8, a sorting network across the vectors sorts the 8\n"
     << "       columns, stored transposed as runs of 16 */\n"
     << "    for (int64_t s = 0; s < size; s += 128) {\n"
     << "      " << v8 << " v[16];\n"
     << "      __builtin_memcpy(v, a + s, sizeof v);\n";
  for (auto [i, j] : OddEvenMergeNetwork(16)) {
    os << "      { " << v8 << " x = v[" << i << "], y = v[" << j << "], l = (" << v8
       << ")(x < y); v[" << i << "] = (x & l) | (y & ~l); v[" << j << "] = (y & l) | (x & ~l); }\n";
  }
  os << "      for (int r = 0; r < 16; ++r) {\n"
     << "        for (int c = 0; c < 8; ++c) b[s + c * 16 + r] = v[r][c];\n"
     << "      }\n    }\n"
     << "    uint64_t* swap = a;\n    a = b;\n    b = swap;\n"
     << "    int64_t w = 16;\n"
     << Merges("uint64_t", L, "size") << "  }\n";
  os << Outputs(row, "(int64_t)(uint32_t)a[p]", "size");
  return os.str();
}

/*! \brief 64-bit types: (key, index) pairs; runs of 16 by insertion, then merges. */
std::string WideSource(const std::string& name, const SortRow& row,
                       const std::string& select = "k * 8 < n") {
  const std::string t = SortRowCType(row.dtype);
  const std::string e_t = name + "_pair";
  const std::string L = name + "_LESS";
  std::string key = AscendingKey(row.dtype);
  key.replace(key.find("DESCEND"), 7, row.ascending ? "" : "key = ~key;");
  std::ostringstream os;
  os << "typedef struct { uint64_t k, i; } " << e_t << ";\n";
  os << "#define " << L << "(A, B) ((A).k < (B).k || ((A).k == (B).k && (A).i < (B).i))\n";
  os << Head(name, row, t, select);
  os << "  const int64_t size = select ? k : n;\n";
  os << Scratch(e_t, "size");
  std::ostringstream make;
  make << "      " << t << " x = row[i];\n      uint64_t key;\n      " << key << "\n"
       << "      " << e_t << " e;\n      e.k = key;\n      e.i = (uint64_t)i;\n";
  // the k best: the keys of 256 elements at a time (a loop that vectorizes), then each
  // element in turn; it comes after every kept one, so it is less than one of them exactly when
  // its key is (bench_topi topk 8 of 2048 x 128 float64, Zen 4, one thread: 2.10 -> 1.00 ms;
  // inline branchy keys and two-word comparisons before)
  os << "#define " << L << "_KEY(A, B) ((A).k < (B).k)\n";
  os << "  if (select) {\n"
     << "    uint64_t keys[256];\n    int64_t m = 0;\n"
     << "    for (int64_t c = 0; c < n; c += 256) {\n"
     << "      int64_t count = n - c < 256 ? n - c : 256;\n"
     << "      for (int64_t t = 0; t < count; ++t) {\n"
     << "        " << t << " x = row[c + t];\n        " << WideKey(row.dtype, row.ascending)
     << "        keys[t] = key;\n"
     << "      }\n"
     << "      for (int64_t t = 0; t < count; ++t) {\n"
     << "        " << e_t << " e;\n        e.k = keys[t];\n        e.i = (uint64_t)(c + t);\n"
     << KeepBest(L + "_KEY", "        ") << "      }\n    }\n"
     << "  } else {\n"
     << "    for (int64_t i = 0; i < n; ++i) {\n"
     << make.str() << "      a[i] = e;\n    }\n"
     << "    for (int64_t s = 0; s < n; s += 16) {\n"
     << "      int64_t end = s + 16 < n ? s + 16 : n;\n"
     << "      for (int64_t i = s + 1; i < end; ++i) {\n"
     << "        " << e_t << " v = a[i];\n        int64_t p = i;\n"
     << "        while (p > s && " << L << "(v, a[p - 1])) {\n"
     << "          a[p] = a[p - 1];\n          --p;\n        }\n        a[p] = v;\n      }\n"
     << "    }\n"
     << "    int64_t w = 16;\n"
     << Merges(e_t, L, "n") << "  }\n";
  os << Outputs(row, "(int64_t)a[p].i", "size");
  return os.str();
}

/*! \brief The sorting network of `wb`-bit unsigned words (wb = 16, 32, 64) in vectors of
 *  L = 512 / wb lanes, defined once a translation unit:
 *  `uint<wb>_t* tessera_sn<wb>_sort(uint<wb>_t* a, uint<wb>_t* b, int64_t n)` sorts a[0, n)
 *  ascending (a and b hold n rounded up to L words; a's tail is padded with the highest word) and
 *  returns the one of a, b that holds the result. Blocks of up to 16 vectors are sorted in
 *  registers: the block is read as element e = lane * R + vector (R vectors, a power of two; the
 *  missing ones the highest word), so that Batcher's odd-even merge network across the vectors
 *  (lane-wise minimum and maximum) sorts runs of R; bitonic merges of runs twice as long follow
 *  (each merge a mirrored compare, then half-cleaners: across vectors while the distance is
 *  below R, else lane permutes within each vector), and log2(R) interleaves of vector pairs
 *  transpose the block back to memory order. Longer rows merge the sorted blocks, a vector at a
 *  time: the next vector of the run with the smaller head merges with the highest L so far
 *  (a bitonic merge of two vectors), the lowest L are stored. */
std::string NetworkCore(int wb) {
  const int lanes = 512 / wb;
  const std::string P = "tessera_sn" + std::to_string(wb);
  const std::string V = P + "_v";
  const std::string W = UType(wb);
  const char* sfx = wb == 16 ? "w" : wb == 32 ? "d" : "q";
  std::ostringstream os;
  os << "#ifndef TESSERA_SN" << wb << "\n#define TESSERA_SN" << wb << "\n";
  // a vector loaded from memory kept in a register: GCC 12 builds a widening conversion of a
  // loaded vector lane by lane otherwise
  os << "#ifndef TESSERA_SN_REG\n#if defined(__x86_64__) && defined(__AVX512F__)\n"
     << "#define TESSERA_SN_REG(x) __asm__(\"\" : \"+v\"(x))\n#else\n"
     << "#define TESSERA_SN_REG(x) (void)0\n#endif\n#endif\n";
  os << "typedef " << W << " " << V << " __attribute__((vector_size(64)));\n";
  for (const char* op : {"min", "max"}) {
    os << "static inline " << V << " " << P << "_" << op << "(" << V << " a, " << V << " b) {\n"
       << "#if defined(__AVX512F__) && defined(__AVX512BW__)\n"
       << "  " << V << " r;\n  __asm__(\"vp" << op << "u" << sfx
       << " %2, %1, %0\" : \"=v\"(r) : \"v\"(a), \"v\"(b));\n  return r;\n#else\n"
       << "  " << V << " m = (" << V << ")(" << (op[1] == 'i' ? "a < b" : "a > b") << ");\n"
       << "  return (a & m) | (b & ~m);\n#endif\n}\n";
  }
  // lane shuffles of constant indices: one vector (index < L) or two (L + lane of the second)
  auto shuffle = [&](const std::string& fn, bool two, const std::vector<int>& idx) {
    os << "static inline " << V << " " << P << "_" << fn << "(" << V << " a"
       << (two ? ", " + V + " b" : "") << ") {\n#if defined(__clang__)\n"
       << "  return __builtin_shufflevector(a, " << (two ? "b" : "a");
    for (int i : idx) os << ", " << i;
    os << ");\n#else\n  return __builtin_shuffle(a, " << (two ? "b, " : "") << "(" << V << "){";
    for (size_t i = 0; i < idx.size(); ++i) os << (i ? ", " : "") << idx[i];
    os << "});\n#endif\n}\n";
  };
  for (int m = 1; m < lanes; ++m) {
    if ((m & (m - 1)) != 0 && ((m + 1) & m) != 0) continue;  // powers of two and 2^k - 1
    std::vector<int> idx;
    for (int l = 0; l < lanes; ++l) idx.push_back(l ^ m);
    shuffle("x" + std::to_string(m), false, idx);
  }
  for (int d = 1; d < lanes; d *= 2) {
    std::vector<int> idx;
    for (int l = 0; l < lanes; ++l) idx.push_back((l & d) ? lanes + l : l);
    shuffle("blend" + std::to_string(d), true, idx);
  }
  std::vector<int> lo, hi;
  for (int l = 0; l < lanes / 2; ++l) {
    lo.insert(lo.end(), {l, lanes + l});
    hi.insert(hi.end(), {lanes / 2 + l, lanes + lanes / 2 + l});
  }
  shuffle("ziplo", true, lo);
  shuffle("ziphi", true, hi);
  auto vr = [](int r) { return "v" + std::to_string(r); };
  auto cas = [&](int i, int j) {
    return "  { " + V + " t = " + P + "_min(" + vr(i) + ", " + vr(j) + "); " + vr(j) + " = " + P +
           "_max(" + vr(i) + ", " + vr(j) + "); " + vr(i) + " = t; }\n";
  };
  // lane l against lane l ^ d, the minimum to the lane without bit d
  // lane l against lane l ^ d, the minimum to the lane without bit d: with AVX-512, the maximum
  // and then the minimum under a mask of those lanes (one instruction fewer than a blend)
  const std::string mask_t = UType(lanes);
  for (int d = 1; d < lanes; d *= 2) {
    uint64_t mask = 0;
    for (int l = 0; l < lanes; ++l) {
      if (!(l & d)) mask |= uint64_t{1} << l;
    }
    const std::string D = std::to_string(d);
    os << "static inline " << V << " " << P << "_within" << D << "(" << V << " v) {\n"
       << "  " << V << " q = " << P << "_x" << D << "(v);\n"
       << "#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512DQ__)\n"
       << "  " << V << " r;\n  __asm__(\"vpmaxu" << sfx << " %2, %1, %0\\n\\tvpminu" << sfx
       << " %2, %1, %0%{%3%}\" : \"=&v\"(r) : \"v\"(v), \"v\"(q), \"Yk\"(" << Const(mask, lanes)
       << "));\n  return r;\n#else\n"
       << "  return " << P << "_blend" << D << "(" << P << "_min(v, q), " << P << "_max(v, q));\n"
       << "#endif\n}\n";
  }
  auto within = [&](const std::string& v, int d) {
    return "  " + v + " = " + P + "_within" + std::to_string(d) + "(" + v + ");\n";
  };
  for (int R = 1; R <= 16; R *= 2) {
    os << "static void " << P << "_block" << R << "(" << W << "* p, int64_t nv) {\n";
    for (int r = 0; r < R; ++r) {
      os << "  " << V << " " << vr(r) << " = ~(" << V << "){0};\n"
         << "  if (" << r << " < nv) __builtin_memcpy(&" << vr(r) << ", p + " << r * lanes
         << ", 64);\n";
    }
    for (auto [i, j] : OddEvenMergeNetwork(R)) os << cas(i, j);
    for (int k = 2 * R; k <= R * lanes; k *= 2) {
      const int d = k / (2 * R);  // the lane bit of the mirrored compare
      const std::string D = std::to_string(d), M = std::to_string(2 * d - 1);
      for (int r = 0; r < (R + 1) / 2; ++r) {
        const std::string a = vr(r), b = vr(R - 1 - r);
        if (R == 1) {
          os << "  { " << V << " q = " << P << "_x" << M << "(" << a << "); " << a << " = " << P
             << "_blend" << D << "(" << P << "_min(" << a << ", q), " << P << "_max(" << a
             << ", q)); }\n";
        } else {
          os << "  { " << V << " q = " << P << "_x" << M << "(" << b << "), lo = " << P << "_min("
             << a << ", q), hi = " << P << "_max(" << a << ", q); " << a << " = " << P << "_blend"
             << D << "(lo, hi); " << b << " = " << P << "_x" << M << "(" << P << "_blend" << D
             << "(hi, lo)); }\n";
        }
      }
      for (int j = k / 4; j >= 1; j /= 2) {
        if (j >= R) {
          for (int r = 0; r < R; ++r) os << within(vr(r), j / R);
        } else {
          for (int r = 0; r < R; ++r) {
            if (!(r & j)) os << cas(r, r + j);
          }
        }
      }
    }
    for (int step = 1; step < R; step *= 2) {
      os << "  {\n";
      for (int i = 0; i < R / 2; ++i) {
        os << "    " << V << " t" << 2 * i << " = " << P << "_ziplo(" << vr(i) << ", "
           << vr(i + R / 2) << "), t" << 2 * i + 1 << " = " << P << "_ziphi(" << vr(i) << ", "
           << vr(i + R / 2) << ");\n";
      }
      for (int r = 0; r < R; ++r) os << "    " << vr(r) << " = t" << r << ";\n";
      os << "  }\n";
    }
    for (int r = 0; r < R; ++r) {
      os << "  if (" << r << " < nv) __builtin_memcpy(p + " << r * lanes << ", &" << vr(r)
         << ", 64);\n";
    }
    os << "}\n";
  }
  // two sorted vectors: the lowest L in *x, the highest in *y
  os << "static inline void " << P << "_merge2(" << V << "* x, " << V << "* y) {\n"
     << "  " << V << " q = " << P << "_x" << lanes - 1 << "(*y);\n"
     << "  " << V << " v0 = " << P << "_min(*x, q), v1 = " << P << "_max(*x, q);\n";
  for (int d = lanes / 2; d >= 1; d /= 2) os << within("v0", d) << within("v1", d);
  os << "  *x = v0;\n  *y = v1;\n}\n";
  // runs a[0, na) and b[0, nb) (multiples of L, not empty) merged into o
  os << "static void " << P << "_merge(const " << W << "* a, int64_t na, const " << W
     << "* b, int64_t nb, " << W << "* o) {\n"
     << "  " << V << " x, y;\n"
     << "  __builtin_memcpy(&x, a, 64);\n  __builtin_memcpy(&y, b, 64);\n"
     << "  a += " << lanes << ";\n  b += " << lanes << ";\n  na -= " << lanes
     << ";\n  nb -= " << lanes << ";\n"
     << "  " << P << "_merge2(&x, &y);\n"
     << "  __builtin_memcpy(o, &x, 64);\n  o += " << lanes << ";\n"
     << "  while (na > 0 || nb > 0) {\n"
     << "    if (nb == 0 || (na > 0 && a[0] <= b[0])) {\n"
     << "      __builtin_memcpy(&x, a, 64);\n      a += " << lanes << ";\n      na -= " << lanes
     << ";\n    } else {\n"
     << "      __builtin_memcpy(&x, b, 64);\n      b += " << lanes << ";\n      nb -= " << lanes
     << ";\n    }\n"
     << "    " << P << "_merge2(&x, &y);\n"
     << "    __builtin_memcpy(o, &x, 64);\n    o += " << lanes << ";\n  }\n"
     << "  __builtin_memcpy(o, &y, 64);\n}\n";
  os << "__attribute__((noinline)) static " << W << "* " << P << "_sort(" << W << "* a, " << W
     << "* b, int64_t n) {\n"
     << "  const int64_t nv = (n + " << lanes - 1 << ") / " << lanes << ";\n"
     << "  for (int64_t i = n; i < nv * " << lanes << "; ++i) a[i] = (" << W << ")~(" << W
     << ")0;\n"
     << "  for (int64_t s = 0; s < nv; s += 16) {\n"
     << "    const int64_t c = nv - s < 16 ? nv - s : 16;\n"
     << "    " << W << "* p = a + s * " << lanes << ";\n"
     << "    if (c <= 1) " << P << "_block1(p, c);\n"
     << "    else if (c <= 2) " << P << "_block2(p, c);\n"
     << "    else if (c <= 4) " << P << "_block4(p, c);\n"
     << "    else if (c <= 8) " << P << "_block8(p, c);\n"
     << "    else " << P << "_block16(p, c);\n  }\n"
     << "  const int64_t total = nv * " << lanes << ";\n"
     << "  for (int64_t w = 16 * " << lanes << "; w < total; w *= 2) {\n"
     << "    for (int64_t s = 0; s < total; s += 2 * w) {\n"
     << "      const int64_t na = total - s < w ? total - s : w;\n"
     << "      const int64_t nb = total - s - na < w ? total - s - na : w;\n"
     << "      if (nb == 0) __builtin_memcpy(b + s, a + s, (size_t)na * sizeof(" << W << "));\n"
     << "      else " << P << "_merge(a + s, na, a + s + na, nb, b + s);\n"
     << "    }\n"
     << "    " << W << "* t = a;\n    a = b;\n    b = t;\n  }\n"
     << "  return a;\n}\n";
  os << "#endif\n";
  return os.str();
}

/*! \brief KeyOf for a vector: C statements setting `KV key` from `KV u` (the elements' bits,
 *  KV a vector of unsigned integers of the row type's width), and for floats `KV special` (all
 *  ones in the lanes of a NaN or a -0.0). */
std::string VectorKeyOf(const std::string& dtype, bool ascending, const std::string& kv) {
  const KeyBits kb = KeyBitsOf(dtype);
  const uint64_t all = kb.bits == 64 ? ~uint64_t{0} : (uint64_t{1} << kb.bits) - 1;
  const uint64_t sign = uint64_t{1} << (kb.bits - 1);
  const std::string S = Const(sign, kb.bits);
  std::ostringstream os;
  if (kb.is_float) {
    const uint64_t exp = kb.bits == 16 ? 0x7C00 : kb.bits == 32 ? 0x7F800000 : 0x7FF0000000000000;
    const std::string E = Const(exp, kb.bits);
    os << "      " << kv << " mag = u & " << Const(all ^ sign, kb.bits) << ";\n"
       << "      " << kv << " key = u ^ ((" << kv << ")(u >= " << S << ") | " << S << ");\n"
       << "      " << kv << " zero = (" << kv << ")(mag == 0);\n"
       << "      key = (key & ~zero) | (zero & " << S << ");\n";
    if (!ascending) os << "      key = ~key;\n";
    os << "      " << kv << " nan = (" << kv << ")(mag > " << E << ");\n"
       << "      key |= nan;\n"
       << "      " << kv << " special = nan | (" << kv << ")(u == " << S << ");\n";
    return os.str();
  }
  os << "      " << kv << " key = " << (kb.is_signed ? "u ^ " + S : std::string("u")) << ";\n";
  if (!ascending) os << "      key = ~key;\n";
  return os.str();
}

/*! \brief ValueOf for a vector: `KV u` (the elements' bits) from `KV key`. */
std::string VectorValueOf(const std::string& dtype, bool ascending, const std::string& kv) {
  const KeyBits kb = KeyBitsOf(dtype);
  const std::string S = Const(uint64_t{1} << (kb.bits - 1), kb.bits);
  std::ostringstream os;
  if (!ascending) os << "      key = ~key;\n";
  if (kb.is_float) {
    os << "      " << kv << " u = key ^ (~(" << kv << ")(key >= " << S << ") | " << S << ");\n";
  } else {
    os << "      " << kv << " u = " << (kb.is_signed ? "key ^ " + S : std::string("key")) << ";\n";
  }
  return os.str();
}

/*! \brief C statements folding the 64-byte vectors `lo` and `hi` (of `bits`-bit unsigned lanes,
 *  type `kv`) into kmin and kmax: each compared with its lanes swapped at half the distance,
 *  down to one lane (in registers, where a lane loop would take them through memory). */
std::string HalvingMinMax(const std::string& kv, int bits, const std::string& mn,
                          const std::string& mx) {
  const int lanes = 512 / bits;
  std::ostringstream os;
  for (int step = lanes / 2; step >= 1; step /= 2) {
    std::ostringstream idx;
    for (int l = 0; l < lanes; ++l) idx << (l ? ", " : "") << (l ^ step);
    os << "    {\n      " << kv << " ql, qh;\n#if defined(__clang__)\n"
       << "      ql = __builtin_shufflevector(lo, lo, " << idx.str() << ");\n"
       << "      qh = __builtin_shufflevector(hi, hi, " << idx.str() << ");\n#else\n"
       << "      ql = __builtin_shuffle(lo, (" << kv << "){" << idx.str() << "});\n"
       << "      qh = __builtin_shuffle(hi, (" << kv << "){" << idx.str() << "});\n#endif\n"
       << "      lo = " << mn << "(lo, ql);\n      hi = " << mx << "(hi, qh);\n    }\n";
  }
  os << "    kmin = lo[0];\n    kmax = hi[0];\n";
  return os.str();
}

/*! \brief The word widths (16, 32, 64) a row's network sort may use. */
std::vector<int> WordsOf(const SortRow& row) {
  const KeyBits kb = KeyBitsOf(row.dtype);
  const bool indices = !row.index_dtype.empty();
  const int narrowest = std::max(16, kb.bits);
  std::vector<int> out;
  for (int wb : {16, 32, 64}) {
    if (kb.is_float ? (indices ? wb > kb.bits : wb == narrowest) : (indices || wb <= narrowest)) {
      out.push_back(wb);
    }
  }
  return out;
}

/*! \brief The row function by the sorting network (NetworkCore): each element one word of 16,
 *  32 or 64 bits, the narrowest that holds it, chosen at run time: its key (KeyOf) when only the
 *  values are wanted, else key << b | index with b = the bits of n - 1, which makes every word
 *  distinct and the order stable. An integer row's keys are taken less the row's smallest key
 *  (a row of keys within 2^11 of each other, say, sorts as 16-bit words, 32 a vector); a float
 *  row's keys keep their bits, and a row with a NaN or a -0.0 gets those back from the row
 *  afterwards, in the row's order (NaN last, zeros where the key of zero is). `fallback` (a
 *  function of the same signature) takes k * 8 < n, and a row whose words would not fit 64
 *  bits. */
std::string NetworkSource(const std::string& name, const SortRow& row,
                          const std::string& fallback) {
  const KeyBits kb = KeyBitsOf(row.dtype);
  const std::string t = SortRowCType(row.dtype);
  const std::string ku = UType(kb.bits);
  const bool indices = !row.index_dtype.empty();
  // keys less the row's smallest, where that can make the words narrower (not for keys of 8
  // bits: the words have 16 at least; nor for the values alone of 16 bits)
  const bool offset = !kb.is_float && kb.bits >= 16 && (indices || kb.bits > 16);
  const std::string mn = "tessera_sn" + std::to_string(kb.bits) + "_min";
  const std::string mx = "tessera_sn" + std::to_string(kb.bits) + "_max";
  const int klanes = 512 / kb.bits;
  const std::string kv = name + "_kv";
  const std::string call = fallback + "(row_, n, " + std::string(row.values ? "values_, " : "") +
                           (indices ? "indices_, " : "") + "k, last)";
  std::ostringstream os;
  os << "typedef " << ku << " " << kv << " __attribute__((vector_size(" << klanes * kb.bits / 8
     << ")));\n";
  os << Head(name, row, t);
  os << "  if (select) return " << call << ";\n";
  os << "  const int ib = "
     << (indices ? "n > 1 ? 64 - __builtin_clzll((uint64_t)(n - 1)) : 0" : "0") << ";\n";
  if (offset) {
    // the smallest and the largest key, a vector at a time
    os << "  " << ku << " kmin = (" << ku << ")~(" << ku << ")0, kmax = 0;\n"
       << "  {\n    " << kv << " lo = ~(" << kv << "){0}, hi = {0};\n"
       << "    int64_t i0 = 0;\n"
       << "    for (; i0 + " << klanes << " <= n; i0 += " << klanes << ") {\n"
       << "      " << kv << " u;\n      __builtin_memcpy(&u, row + i0, sizeof u);\n"
       << VectorKeyOf(row.dtype, row.ascending, kv) << "      lo = " << mn
       << "(lo, key);\n      hi = " << mx << "(hi, key);\n    }\n"
       << HalvingMinMax(kv, kb.bits, mn, mx) << "    for (int64_t i = i0; i < n; ++i) {\n      "
       << t << " x = row[i];\n      " << KeyOf(row.dtype, row.ascending)
       << "      kmin = key < kmin ? key : kmin;\n"
       << "      kmax = key > kmax ? key : kmax;\n    }\n  }\n"
       << "  const uint64_t range = (uint64_t)(" << ku << ")(kmax - kmin);\n"
       << "  const int need = (range ? 64 - __builtin_clzll(range) : 0) + ib;\n";
  } else {
    os << "  const " << ku << " kmin = 0;\n  const int need = " << kb.bits << " + ib;\n";
  }
  os << "  unsigned char stack_a[8192] __attribute__((aligned(64)));\n"
     << "  unsigned char stack_b[8192] __attribute__((aligned(64)));\n";
  for (int wb : WordsOf(row)) {
    const int lanes = 512 / wb;
    const std::string W = UType(wb);
    const std::string P = "tessera_sn" + std::to_string(wb);
    // keys and words `step` at a time: vectors of 64 bytes at most (wider ones are converted
    // lane by lane)
    const int step = std::min(lanes, klanes);
    const std::string kw = name + "_k" + std::to_string(wb);
    const std::string ws = name + "_w" + std::to_string(wb);
    os << "  if (need <= " << wb << " && ib < " << wb << ") {\n";
    os << "    typedef " << ku << " " << kw << " __attribute__((vector_size(" << step * kb.bits / 8
       << ")));\n"
       << "    typedef " << W << " " << ws << " __attribute__((vector_size(" << step * wb / 8
       << ")));\n"
       << "    const int64_t cap = (n + " << lanes - 1 << ") / " << lanes << " * " << lanes << ";\n"
       << "    " << W << "* a = (" << W << "*)stack_a;\n"
       << "    " << W << "* b = (" << W << "*)stack_b;\n"
       << "    void* heap = 0;\n"
       << "    if (cap * (int64_t)sizeof(" << W << ") > 8192) {\n"
       << "      heap = __builtin_malloc(2 * (size_t)cap * sizeof(" << W << "));\n"
       << "      if (!heap) return -1;\n"
       << "      a = (" << W << "*)heap;\n      b = a + cap;\n    }\n";
    const bool fix = kb.is_float && !indices;
    if (fix) os << "    int any_special = 0;\n    " << kw << " specials = {0};\n";
    if (indices) {
      os << "    " << ws << " iota = {";
      for (int l = 0; l < step; ++l) os << (l ? ", " : "") << l;
      os << "};\n";
    }
    // the words of L elements at a time, then the tail
    os << "    int64_t i0 = 0;\n"
       << "    for (; i0 + " << step << " <= n; i0 += " << step << ") {\n"
       << "      " << kw << " u;\n      __builtin_memcpy(&u, row + i0, sizeof u);\n"
       << "      TESSERA_SN_REG(u);\n"
       << VectorKeyOf(row.dtype, row.ascending, kw);
    if (fix) os << "      specials |= special;\n";
    os << "      " << ws << " w = __builtin_convertvector(key" << (offset ? " - kmin" : "") << ", "
       << ws << ");\n";
    if (indices) os << "      w = (w << ib) | (iota + (" << W << ")i0);\n";
    os << "      __builtin_memcpy(a + i0, &w, sizeof w);\n    }\n";
    if (fix) {
      os << "    {\n      uint64_t any[" << step * kb.bits / 64 << "];\n"
         << "      __builtin_memcpy(any, &specials, sizeof any);\n"
         << "      for (int l = 0; l < " << step * kb.bits / 64
         << "; ++l) any_special |= any[l] != 0;\n    }\n";
    }
    os << "    for (int64_t i = i0; i < n; ++i) {\n      " << t << " x = row[i];\n      "
       << KeyOf(row.dtype, row.ascending);
    if (fix) os << "      any_special |= special;\n";
    os << "      " << W << " w = (" << W << ")(" << ku << ")(key - kmin);\n";
    if (indices) os << "      w = (" << W << ")(w << ib) | (" << W << ")i;\n";
    os << "      a[i] = w;\n    }\n"
       << "    const " << W << "* s = " << P << "_sort(a, b, n);\n"
       << "    int64_t p0 = 0;\n";
    const std::string imask = "(" + W + ")(((uint64_t)1 << ib) - 1)";
    // the outputs of L words at a time (not a gather of values, nor float16 indices)
    const std::string it = indices ? SortRowCType(row.index_dtype) : "";
    if (!indices || (!row.values && it != "_Float16")) {
      const std::string ov = name + "_o" + std::to_string(wb);
      if (indices) {
        os << "    typedef " << it << " " << ov << " __attribute__((vector_size("
           << step * KeyBitsOf(row.index_dtype).bits / 8 << ")));\n";
      }
      os << "    for (; p0 + " << step << " <= k; p0 += " << step << ") {\n"
         << "      " << ws << " w;\n      __builtin_memcpy(&w, s + p0, sizeof w);\n"
         << "      TESSERA_SN_REG(w);\n";
      if (indices) {
        os << "      " << ov << " o = __builtin_convertvector(w & " << imask << ", " << ov << ");\n"
           << "      __builtin_memcpy(indices + p0, &o, sizeof o);\n";
      } else {
        os << "      " << kw << " key = __builtin_convertvector(w, " << kw << ")"
           << (offset ? " + kmin" : "") << ";\n"
           << VectorValueOf(row.dtype, row.ascending, kw)
           << "      __builtin_memcpy(values + p0, &u, sizeof u);\n";
      }
      os << "    }\n";
    }
    os << "    for (int64_t p = p0; p < k; ++p) {\n";
    if (indices) {
      os << "      int64_t at = (int64_t)(s[p] & " << imask << ");\n";
      if (row.values) os << "      values[p] = row[at];\n";
      os << "      indices[p] = (" << it << ")at;\n";
    } else {
      os << "      " << ku << " key = (" << ku << ")((" << ku << ")s[p] + kmin);\n"
         << "      " << t << " x;\n"
         << ValueOf(row.dtype, row.ascending) << "      values[p] = x;\n";
    }
    os << "    }\n";
    if (fix) {
      // NaN (the last) and the zeros (after the elements before zero) in the row's order
      const uint64_t sign = uint64_t{1} << (kb.bits - 1);
      const uint64_t exp = kb.bits == 16 ? 0x7C00 : kb.bits == 32 ? 0x7F800000 : 0x7FF0000000000000;
      std::ostringstream bits;
      bits << "        " << t << " x = row[i];\n        " << ku
           << " u;\n        __builtin_memcpy(&u, &x, sizeof u);\n"
           << "        " << ku << " mag = (" << ku << ")(u & " << Const(~sign, kb.bits) << ");\n";
      os << "    if (any_special) {\n      int64_t before = 0, nans = 0;\n"
         << "      for (int64_t i = 0; i < n; ++i) {\n"
         << bits.str() << "        nans += mag > " << Const(exp, kb.bits) << ";\n"
         << "        before += mag != 0 && mag <= " << Const(exp, kb.bits) << " && "
         << (row.ascending ? "" : "!") << "(u & " << Const(sign, kb.bits) << ");\n"
         << "      }\n"
         << "      int64_t z = before, q = n - nans;\n"
         << "      for (int64_t i = 0; i < n; ++i) {\n"
         << bits.str() << "        if (mag > " << Const(exp, kb.bits) << ") {\n"
         << "          if (q < k) values[q] = x;\n          ++q;\n"
         << "        } else if (mag == 0) {\n"
         << "          if (z < k) values[z] = x;\n          ++z;\n        }\n"
         << "      }\n    }\n";
    }
    os << "    if (heap) __builtin_free(heap);\n    return 0;\n  }\n";
  }
  os << "  return " << call << ";\n}\n";
  return os.str();
}

}  // namespace

std::string SortRowSource(const std::string& name, const SortRow& row) {
  const KeyBits kb = KeyBitsOf(row.dtype);
  // the network with AVX-512 (GCC takes 64-byte vectors of another target's lane by lane, and
  // takes minutes to build them), else the merge sort; its k * 8 < n and words past 64 bits
  // (64-bit keys with indices) for the network too
  const std::string fallback = name + "_fallback";
  std::string out = kb.bits == 64 ? WideSource(fallback, row) : NarrowSource(fallback, row);
  out += "#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512DQ__)\n";
  for (int wb : WordsOf(row)) out += NetworkCore(wb);
  out += NetworkSource(name, row, fallback);
  out += "#else\n#define " + name + " " + fallback + "\n#endif\n";
  return out;
}

}  // namespace codegen
}  // namespace tessera
