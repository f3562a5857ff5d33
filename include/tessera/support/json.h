// JSON as tessera reads it (generated libraries' metadata, schedule traces); parsed by
// nlohmann/json.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace tessera {

/*! \brief A parsed JSON value: null, bool, number, string, array or object. */
struct JsonValue {
  enum Kind { kNull, kBool, kNumber, kString, kArray, kObject } kind = kNull;
  bool boolean = false;
  double number = 0;
  std::string string;
  std::vector<JsonValue> array;
  std::map<std::string, JsonValue> object;

  /*! \brief The member `key` of an object, or a null value. */
  const JsonValue& operator[](const std::string& key) const;
};

/*! \brief Parse `text`; malformed input throws tessera::Error (kValue) with the offset. */
JsonValue ParseJson(const std::string& text);

}  // namespace tessera
