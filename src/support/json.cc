// JSON read with nlohmann/json (Debian's nlohmann-json3-dev) into tessera's JsonValue tree.
#include "tessera/support/json.h"

#include <nlohmann/json.hpp>

#include "tessera/support/error.h"

namespace tessera {
namespace {

JsonValue Convert(const nlohmann::json& j) {
  JsonValue v;
  switch (j.type()) {
    case nlohmann::json::value_t::boolean:
      v.kind = JsonValue::kBool;
      v.boolean = j.get<bool>();
      break;
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned:
    case nlohmann::json::value_t::number_float:
      v.kind = JsonValue::kNumber;
      v.number = j.get<double>();
      break;
    case nlohmann::json::value_t::string:
      v.kind = JsonValue::kString;
      v.string = j.get<std::string>();
      break;
    case nlohmann::json::value_t::array:
      v.kind = JsonValue::kArray;
      v.array.reserve(j.size());
      for (const nlohmann::json& item : j) v.array.push_back(Convert(item));
      break;
    case nlohmann::json::value_t::object:
      v.kind = JsonValue::kObject;
      for (const auto& [key, item] : j.items()) v.object[key] = Convert(item);
      break;
    default:  // null (binary values do not come out of text)
      break;
  }
  return v;
}

}  // namespace

const JsonValue& JsonValue::operator[](const std::string& key) const {
  static const JsonValue* null = new JsonValue();
  auto it = object.find(key);
  return it == object.end() ? *null : it->second;
}

JsonValue ParseJson(const std::string& text) {
  try {
    return Convert(nlohmann::json::parse(text));
  } catch (const nlohmann::json::parse_error& e) {
    TESSERA_THROW_KIND(Span(), ErrorKind::kValue)
        << "malformed JSON at offset " << e.byte << ": " << e.what();
  }
}

}  // namespace tessera
