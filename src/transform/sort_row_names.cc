// The names of the host's row sorts (see tessera/transform/sort_row_names.h).
#include "tessera/transform/sort_row_names.h"

#include <map>
#include <regex>

namespace tessera {
namespace codegen {
namespace {

const std::map<std::string, std::string>& CTypes() {
  static const std::map<std::string, std::string> kTypes = {
      {"int8", "int8_t"},     {"int16", "int16_t"},   {"int32", "int32_t"},
      {"int64", "int64_t"},   {"uint8", "uint8_t"},   {"uint16", "uint16_t"},
      {"uint32", "uint32_t"}, {"uint64", "uint64_t"}, {"float16", "_Float16"},
      {"float32", "float"},   {"float64", "double"}};
  return kTypes;
}

}  // namespace

const std::string& SortRowCType(const std::string& dtype) { return CTypes().at(dtype); }

bool SortRowDtypeSupported(const std::string& dtype) { return CTypes().count(dtype) > 0; }
bool SortRowIndexDtypeSupported(const std::string& dtype) { return CTypes().count(dtype) > 0; }

std::string SortRowName(const SortRow& row) {
  std::string out = std::string("tessera_sort_row_") + (row.ascending ? "asc" : "desc") + "_" +
                    row.dtype + "_" + (row.values ? "v" : "");
  if (!row.index_dtype.empty()) out += "i_" + row.index_dtype;
  return out;
}

std::optional<SortRow> ParseSortRowName(const std::string& name) {
  static const std::regex kName("tessera_sort_row_(asc|desc)_([a-z]+[0-9]+)_(v|vi_|i_)([a-z0-9]*)");
  std::smatch m;
  if (!std::regex_match(name, m, kName)) return std::nullopt;
  SortRow row;
  row.ascending = m[1] == "asc";
  row.dtype = m[2];
  row.values = m[3] != "i_";
  row.index_dtype = m[4];
  if (!SortRowDtypeSupported(row.dtype)) return std::nullopt;
  if ((m[3] == "v") != row.index_dtype.empty()) return std::nullopt;
  if (!row.index_dtype.empty() && !SortRowIndexDtypeSupported(row.index_dtype)) {
    return std::nullopt;
  }
  return row;
}

}  // namespace codegen
}  // namespace tessera
