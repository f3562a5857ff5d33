// The host's one-pass searches for the index of a maximum or minimum: the C functions
// "tessera_arg{max,min}_row_<dtype>" that the pass tir.ArgExtremeRows calls in place of
// topi.argmax / topi.argmin's block search of int32, int64 and float64 rows, and
// "tessera_arg{max,min}_flat_<dtype>" that it calls in place of topi's two passes over a whole
// tensor (every axis reduced: the tensor read as one row, its flat index); defined by the host
// code generator once per module that calls them.
#pragma once

#include <optional>
#include <string>

namespace tessera {
namespace codegen {

/*! \brief What a row search's function name asks for. */
struct ArgExtremeRow {
  bool is_max;        // argmax (else argmin)
  std::string dtype;  // row: "int32", "int64" or "float64"; flat: see kArgExtremeFlatTypes
  bool flat = false;  // "tessera_arg{max,min}_flat_<dtype>": the whole buffer as one row
};

/*! \brief The element types of the flat search: 8- to 64-bit integers, signed and unsigned,
 *  float32 and float64. */
bool IsArgExtremeFlatType(const std::string& dtype);

/*! \brief The search a function name "tessera_arg{max,min}_row_{int32,int64,float64}" or
 *  "tessera_arg{max,min}_flat_<dtype>" names, or nothing. */
std::optional<ArgExtremeRow> ParseArgExtremeRowName(const std::string& name);

/*! \brief The C definition of `int32_t NAME(const void* row, int64_t n, T last)` (row: T elements):
 * the first index of the row's maximum (minimum), as numpy's argmax (argmin): of floats the first
 * NaN if there is one; -0.0 and +0.0 are equal (the first of them). `last` is row[n - 1], unused:
 * the call passes it so that the block's read region is the whole row. One pass (numpy's
 * algorithm): lane-wise running extremes and their indices, four vectors at a time combined by a
 * tree of compares and blends that keeps the lower index on ties, then one compare and blend into
 * the running lanes; the vectors from the first 64-byte boundary of the row (the first vector, read
 * unaligned, overlaps them: an element seen twice keeps its index), the last vector overlapping the
 * one before it; the lanes reduced at the end (the smallest index among the lanes holding the
 * extreme). Floats record whether a lane saw a NaN and, if one did, the row is searched again for
 * the first NaN. With AVX-512F the compares give mask registers and the blends are masked moves
 * (GCC's __builtin_ia32 functions, no header); elsewhere the same algorithm in GCC vector
 * extensions. Rows shorter than a vector: a scalar loop. */
std::string ArgExtremeRowSource(const std::string& name, const ArgExtremeRow& row);

/*! \brief The C definition of `int32_t NAME(const void* data, int64_t n, T last)` (n >= 1
 * elements of T, at most 2^31 - 1): the first index of the maximum (minimum), as numpy's argmax
 * (argmin) of the flattened array: of floats the first NaN if there is one; -0.0 and +0.0 are
 * equal. `last` is data[n - 1], unused (the call's read region). Numpy's order of work inverted:
 * the data in chunks of 16 KB (the first up to the first 64-byte boundary, so that the others'
 * vectors are aligned), each chunk's extreme by lane-wise max (min) of four vectors
 * (64-byte GCC vectors written lane by lane, which GCC makes vpmax / vmaxps), no index kept; a
 * chunk's extreme replaces the running one only when strictly better, so the first chunk holding
 * the extreme is remembered, and at the end that chunk alone is searched for the first element
 * equal to it. Floats also sum each chunk lane-wise: a NaN makes the sum NaN (so can +inf beside
 * -inf), and then the chunk is searched for its first NaN, which is the answer when there is
 * one (the chunks come in order). */
std::string ArgExtremeFlatSource(const std::string& name, const ArgExtremeRow& row);

}  // namespace codegen
}  // namespace tessera
