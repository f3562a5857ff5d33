// The host's row sort (see tessera/target/sort_rows.h).
#include "tessera/target/sort_rows.h"

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

/*! \brief For types of up to 32 bits: C statements setting `uint32_t key` from `x` (the row's
 *  type) without a branch, ascending or descending, so that the loop over a row vectorizes. */
std::string NarrowKey(const std::string& dtype, bool ascending) {
  std::string s;
  if (dtype == "float32") {
    s = "uint32_t u;\n      __builtin_memcpy(&u, &x, sizeof u);\n      u = x == 0 ? 0u : u;\n"
        "      uint32_t key = u ^ ((uint32_t)((int32_t)u >> 31) | 0x80000000u);\n";
    if (!ascending) s += "      key = ~key;\n";
    return s + "      key = x != x ? 0xFFFFFFFFu : key;\n";
  }
  s = dtype[0] == 'u' ? "uint32_t key = (uint32_t)x;\n"
                      : "uint32_t key = (uint32_t)(int32_t)x ^ 0x80000000u;\n";
  if (!ascending) s += "      key = ~key;\n";
  return s;
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
std::string Head(const std::string& name, const SortRow& row, const std::string& t) {
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
  os << "  const int select = k * 8 < n;\n";
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
std::string NarrowSource(const std::string& name, const SortRow& row) {
  const std::string t = SortRowCType(row.dtype);
  const std::string L = name + "_LESS";
  const std::string v8 = name + "_v8";
  const std::string key = NarrowKey(row.dtype, row.ascending);
  std::ostringstream os;
  os << "#define " << L << "(A, B) ((A) < (B))\n";
  os << "typedef uint64_t " << v8 << " __attribute__((vector_size(64)));\n";
  os << Head(name, row, t);
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
std::string WideSource(const std::string& name, const SortRow& row) {
  const std::string t = SortRowCType(row.dtype);
  const std::string e_t = name + "_pair";
  const std::string L = name + "_LESS";
  std::string key = AscendingKey(row.dtype);
  key.replace(key.find("DESCEND"), 7, row.ascending ? "" : "key = ~key;");
  std::ostringstream os;
  os << "typedef struct { uint64_t k, i; } " << e_t << ";\n";
  os << "#define " << L << "(A, B) ((A).k < (B).k || ((A).k == (B).k && (A).i < (B).i))\n";
  os << Head(name, row, t);
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

}  // namespace

std::string SortRowSource(const std::string& name, const SortRow& row) {
  const bool wide = row.dtype == "int64" || row.dtype == "uint64" || row.dtype == "float64";
  return wide ? WideSource(name, row) : NarrowSource(name, row);
}

}  // namespace codegen
}  // namespace tessera
