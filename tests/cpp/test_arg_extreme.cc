// The host's arg-extreme searches (tessera/target/arg_extreme.h): which function names ask for
// which search, and the C the code generator defines for them. (tests/python/topi/
// test_topi_argmax_flat.py and test_topi_argmax_one_pass.py run the C against numpy.)
#include <gtest/gtest.h>

#include <string>

#include "tessera/target/arg_extreme.h"

namespace tessera {
namespace codegen {
namespace {

TEST(ArgExtremeNames, RowsOfThreeTypesFlatOfTen) {
  for (const char* t : {"int32", "int64", "float64"}) {
    auto row = ParseArgExtremeRowName(std::string("tessera_argmin_row_") + t);
    ASSERT_TRUE(row.has_value()) << t;
    EXPECT_FALSE(row->is_max);
    EXPECT_FALSE(row->flat);
    EXPECT_EQ(row->dtype, t);
  }
  for (const char* t : {"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                        "float32", "float64"}) {
    auto flat = ParseArgExtremeRowName(std::string("tessera_argmax_flat_") + t);
    ASSERT_TRUE(flat.has_value()) << t;
    EXPECT_TRUE(flat->is_max);
    EXPECT_TRUE(flat->flat);
    EXPECT_EQ(flat->dtype, t);
    EXPECT_TRUE(IsArgExtremeFlatType(t));
  }
  for (const char* name :
       {"tessera_argmax_row_int8", "tessera_argmax_row_float32", "tessera_argmax_flat_float16",
        "tessera_argmax_flat_bool", "tessera_argmax_flat_int128", "tessera_argmax_flat_",
        "argmax_flat_int8", "tessera_argmax_flat_int8_x", "tessera_argmid_flat_int8"}) {
    EXPECT_FALSE(ParseArgExtremeRowName(name).has_value()) << name;
  }
}

TEST(ArgExtremeFlatSource, TypesLanesAndTheFloatNaNSearch) {
  auto i8 = ArgExtremeRowSource("f_i8", *ParseArgExtremeRowName("tessera_argmin_flat_int8"));
  EXPECT_NE(i8.find("static int32_t f_i8(const void* data, int64_t n, int8_t last) {"),
            std::string::npos);
  EXPECT_NE(i8.find("vector_size(64 * sizeof(int8_t))"), std::string::npos);
  EXPECT_NE(i8.find("a[l] < b[l] ? a[l] : b[l]"), std::string::npos);  // argmin
  EXPECT_EQ(i8.find("p[i] != p[i]"), std::string::npos);               // no NaN for integers
  EXPECT_EQ(i8.find("?F"), std::string::npos);
  EXPECT_EQ(i8.find("?I"), std::string::npos);
  auto f64 = ArgExtremeRowSource("f_f64", *ParseArgExtremeRowName("tessera_argmax_flat_float64"));
  EXPECT_NE(f64.find("static int32_t f_f64(const void* data, int64_t n, double last) {"),
            std::string::npos);
  EXPECT_NE(f64.find("vector_size(8 * sizeof(double))"), std::string::npos);
  EXPECT_NE(f64.find("a[l] > b[l] ? a[l] : b[l]"), std::string::npos);  // argmax
  EXPECT_NE(f64.find("if (p[i] != p[i]) return (int32_t)i;"), std::string::npos);
  EXPECT_EQ(f64.find("(void)nan;"), std::string::npos);
  auto u32 = ArgExtremeRowSource("f_u32", *ParseArgExtremeRowName("tessera_argmax_flat_uint32"));
  EXPECT_NE(u32.find("uint32_t last"), std::string::npos);
  EXPECT_NE(u32.find("vector_size(16 * sizeof(uint32_t))"), std::string::npos);
  // the row search keeps its own definition
  auto row = ArgExtremeRowSource("r", *ParseArgExtremeRowName("tessera_argmax_row_int32"));
  EXPECT_NE(row.find("static int32_t r(const void* row, int64_t n, int32_t last) {"),
            std::string::npos);
}

}  // namespace
}  // namespace codegen
}  // namespace tessera
