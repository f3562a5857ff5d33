// ParseJson: nlohmann/json's parser behind tessera's JsonValue.
#include <gtest/gtest.h>

#include "tessera/support/error.h"
#include "tessera/support/json.h"

namespace tessera {
namespace {

TEST(Json, ReadsNestedValues) {
  JsonValue v = ParseJson(R"({"a": [1, 2.5, "x\n\u00e9"], "b": {"c": true, "d": null}, "e": -3})");
  ASSERT_EQ(v.kind, JsonValue::kObject);
  ASSERT_EQ(v["a"].kind, JsonValue::kArray);
  ASSERT_EQ(v["a"].array.size(), 3u);
  EXPECT_EQ(v["a"].array[0].number, 1);
  EXPECT_EQ(v["a"].array[1].number, 2.5);
  EXPECT_EQ(v["a"].array[2].string, "x\n\xc3\xa9");
  EXPECT_TRUE(v["b"]["c"].boolean);
  EXPECT_EQ(v["b"]["d"].kind, JsonValue::kNull);
  EXPECT_EQ(v["e"].number, -3);
  EXPECT_EQ(v["missing"].kind, JsonValue::kNull);
}

TEST(Json, MalformedTextIsAValueError) {
  for (const char* text : {"{\"a\": }", "[1, 2", "{} trailing", ""}) {
    try {
      ParseJson(text);
      ADD_FAILURE() << "accepted: " << text;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kValue);
      EXPECT_NE(std::string(e.what()).find("malformed JSON at offset"), std::string::npos)
          << e.what();
    }
  }
}

}  // namespace
}  // namespace tessera
