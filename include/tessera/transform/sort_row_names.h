// The names of the host's row sorts (tir.SortRows writes them, the host code generator defines
// the functions they name: tessera/target/sort_rows.h).
#pragma once

#include <optional>
#include <string>

namespace tessera {
namespace codegen {

/*! \brief What a row sort's function name asks for. */
struct SortRow {
  bool ascending = true;
  std::string dtype;        // the row's: int8..int64, uint8..uint64, float16, float32, float64
  bool values = false;      // writes the sorted values
  std::string index_dtype;  // writes the indices as this type ("" when it does not)
};

/*! \brief The types a row sort takes: the row's (SortRowDtypeSupported) and an index's. */
bool SortRowDtypeSupported(const std::string& dtype);
bool SortRowIndexDtypeSupported(const std::string& dtype);

/*! \brief The function name of a row sort:
 *  "tessera_sort_row_{asc,desc}_<dtype>_{v,vi_<index dtype>,i_<index dtype>}". */
std::string SortRowName(const SortRow& row);

/*! \brief The row sort a function name names, or nothing. */
std::optional<SortRow> ParseSortRowName(const std::string& name);

/*! \brief The C type of a row sort's element or index type (SortRowDtypeSupported). */
const std::string& SortRowCType(const std::string& dtype);

}  // namespace codegen
}  // namespace tessera
