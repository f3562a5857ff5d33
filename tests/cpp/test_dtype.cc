// DataType: parsing of long and short names, printing, and the type predicates.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "tessera/ir/dtype.h"
#include "tessera/support/error.h"

namespace tessera {
namespace {

TEST(DataType, CanonicalNamesRoundTrip) {
  const std::vector<std::string> names = {
      "int8",   "int16",   "int32",      "int64",   "uint8",    "uint16",     "uint32",
      "uint64", "float16", "float32",    "float64", "bfloat16", "bool",       "handle",
      "void",   "int32x8", "float16x16", "boolx8",  "uint8x32", "bfloat16x4", "float64x2"};
  for (const std::string& name : names) {
    EXPECT_EQ(DataType::Parse(name).ToString(), name) << name;
  }
}

TEST(DataType, ParseGivesCodeBitsLanes) {
  EXPECT_EQ(DataType::Parse("int8"), DataType::Int(8));
  EXPECT_EQ(DataType::Parse("int64"), DataType::Int(64));
  EXPECT_EQ(DataType::Parse("uint16"), DataType::UInt(16));
  EXPECT_EQ(DataType::Parse("float16"), DataType::Float(16));
  EXPECT_EQ(DataType::Parse("float64"), DataType::Float(64));
  EXPECT_EQ(DataType::Parse("bfloat16"), DataType::BFloat16());
  EXPECT_EQ(DataType::Parse("bool"), DataType::Bool());
  EXPECT_EQ(DataType::Parse("handle"), DataType::Handle());
  EXPECT_EQ(DataType::Parse("void"), DataType::Void());
  EXPECT_EQ(DataType::Parse("int32x8"), DataType::Int(32, 8));
  EXPECT_EQ(DataType::Parse("float16x16"), DataType::Float(16, 16));
  EXPECT_EQ(DataType::Parse("boolx8"), DataType::Bool(8));
}

TEST(DataType, ToStringOfConstructedTypes) {
  EXPECT_EQ(DataType::Int(32).ToString(), "int32");
  EXPECT_EQ(DataType::UInt(8, 4).ToString(), "uint8x4");
  EXPECT_EQ(DataType::Float(32, 8).ToString(), "float32x8");
  EXPECT_EQ(DataType::BFloat16(16).ToString(), "bfloat16x16");
  EXPECT_EQ(DataType::Bool(8).ToString(), "boolx8");
  EXPECT_EQ(DataType::Handle().ToString(), "handle");
  EXPECT_EQ(DataType::Void().ToString(), "void");
  EXPECT_EQ(DataType().ToString(), "void");
}

TEST(DataType, ShortNames) {
  EXPECT_EQ(DataType::Parse("i32"), DataType::Int(32));
  EXPECT_EQ(DataType::Parse("u8"), DataType::UInt(8));
  EXPECT_EQ(DataType::Parse("fp16x16"), DataType::Float(16, 16));
  EXPECT_EQ(DataType::Parse("bf16"), DataType::BFloat16());
  EXPECT_EQ(DataType::Parse("fp32x8"), DataType::Float(32, 8));
  EXPECT_EQ(DataType::Parse("i8x32"), DataType::Int(8, 32));
  // Short names print in the long form.
  EXPECT_EQ(DataType::Parse("fp16x16").ToString(), "float16x16");
  EXPECT_EQ(DataType::Parse("bf16").ToString(), "bfloat16");
  EXPECT_EQ(DataType::Parse("i8x32").ToString(), "int8x32");
}

TEST(DataType, NarrowFloatNames) {
  // The float8/float6/float4 formats carry DLPack's codes (7..17) and their own widths.
  const std::vector<std::string> names = {
      "float8_e3m4",   "float8_e4m3",    "float8_e4m3b11fnuz", "float8_e4m3fn",
      "float8_e4m3fnuz", "float8_e5m2",  "float8_e5m2fnuz",    "float8_e8m0fnu",
      "float6_e2m3fn", "float6_e3m2fn",  "float4_e2m1fn"};
  for (size_t i = 0; i < names.size(); ++i) {
    DataType t = DataType::Parse(names[i]);
    EXPECT_EQ(t.ToString(), names[i]);
    EXPECT_EQ(static_cast<int>(t.code()), 7 + static_cast<int>(i)) << names[i];
    EXPECT_EQ(t.bits(), names[i][5] - '0') << names[i];
    EXPECT_TRUE(t.is_float() && t.is_narrow_float()) << names[i];
    EXPECT_EQ(t.is_float8(), t.bits() == 8) << names[i];
    EXPECT_EQ(DataType::Parse(names[i] + "x4"), t.with_lanes(4));
    EXPECT_EQ(t.with_lanes(4).ToString(), names[i] + "x4");
  }
  EXPECT_FALSE(DataType::Float(16).is_narrow_float());
  EXPECT_FALSE(DataType::BFloat16().is_narrow_float());
  for (const char* bad : {"float8_e4m3fnx", "float8_e4m3fnx0", "float8_e4m3fny", "float8_e9m9"}) {
    EXPECT_THROW(DataType::Parse(bad), Error) << bad;
  }
}

TEST(DataType, InvalidNamesThrowTypeErrors) {
  for (const char* name : {"int7", "floaty", "int32x", "x8", "", "float8", "bfloat32", "int32x0",
                           "int32y8", "handlex2", "Int32"}) {
    try {
      DataType::Parse(name);
      ADD_FAILURE() << "\"" << name << "\" parsed";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kType) << name;
      EXPECT_NE(e.message().find(std::string("\"") + name + "\""), std::string::npos)
          << e.message();
    }
  }
}

TEST(DataType, SizeProperties) {
  DataType i32x8 = DataType::Int(32, 8);
  EXPECT_EQ(i32x8.bits(), 32);
  EXPECT_EQ(i32x8.lanes(), 8);
  EXPECT_EQ(i32x8.bytes(), 32);
  EXPECT_EQ(DataType::Float(16).bytes(), 2);
  EXPECT_EQ(DataType::Float(64, 2).bytes(), 16);
  EXPECT_EQ(DataType::Bool().bits(), 1);
  EXPECT_EQ(DataType::Bool().bytes(), 1);  // a bool occupies a whole byte
  EXPECT_EQ(DataType::Handle().bits(), 64);
  EXPECT_EQ(DataType::Void().bits(), 0);
}

TEST(DataType, Predicates) {
  DataType f16 = DataType::Float(16), bf16 = DataType::BFloat16();
  EXPECT_TRUE(f16.is_float());
  EXPECT_FALSE(f16.is_bfloat16());
  EXPECT_TRUE(bf16.is_float());  // bfloat16 is a float type for arithmetic rules
  EXPECT_TRUE(bf16.is_bfloat16());
  EXPECT_FALSE(bf16.is_integer());

  DataType u8 = DataType::UInt(8), i64 = DataType::Int(64);
  EXPECT_TRUE(u8.is_uint());
  EXPECT_FALSE(u8.is_int());
  EXPECT_TRUE(u8.is_integer());
  EXPECT_TRUE(i64.is_int());
  EXPECT_TRUE(i64.is_int_or_bool());
  EXPECT_FALSE(i64.is_float());

  EXPECT_TRUE(DataType::Bool().is_bool());
  EXPECT_TRUE(DataType::Bool().is_int_or_bool());
  EXPECT_FALSE(DataType::Bool().is_integer());
  EXPECT_TRUE(DataType::Handle().is_handle());
  EXPECT_TRUE(DataType::Void().is_void());

  EXPECT_TRUE(DataType::Int(32).is_scalar());
  EXPECT_FALSE(DataType::Int(32).is_vector());
  EXPECT_TRUE(DataType::Int(32, 4).is_vector());
  EXPECT_FALSE(DataType::Int(32, 4).is_scalar());
}

TEST(DataType, Derivations) {
  DataType t = DataType::Float(16, 16);
  EXPECT_EQ(t.element_of(), DataType::Float(16));
  EXPECT_EQ(t.with_lanes(4), DataType::Float(16, 4));
  EXPECT_EQ(t.with_bits(32), DataType::Float(32, 16));
  EXPECT_EQ(t.with_code(DataType::kInt), DataType::Int(16, 16));
  EXPECT_EQ(DataType::Int(32).with_lanes(8).ToString(), "int32x8");
}

TEST(DataType, EqualityAndHash) {
  EXPECT_EQ(DataType::Int(32), DataType::Parse("i32"));
  EXPECT_NE(DataType::Int(32), DataType::UInt(32));
  EXPECT_NE(DataType::Int(32), DataType::Int(64));
  EXPECT_NE(DataType::Int(32), DataType::Int(32, 4));
  EXPECT_NE(DataType::Float(16), DataType::BFloat16());
  EXPECT_EQ(DataType::Int(32, 4).Hash(), DataType::Parse("int32x4").Hash());
  EXPECT_NE(DataType::Int(32).Hash(), DataType::Float(32).Hash());
  EXPECT_NE(DataType::Int(32).Hash(), DataType::Int(32, 2).Hash());
}

TEST(DataType, StreamsItsName) {
  std::ostringstream os;
  os << DataType::UInt(16, 2);
  EXPECT_EQ(os.str(), "uint16x2");
}

}  // namespace
}  // namespace tessera
