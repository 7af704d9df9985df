// Reading fields of a JSON object leniently, as both programs read what
// the API server or a client sent: the value when it is there with the
// expected type, else a default (no exception for a missing field, a wrong
// type, or a value that is not an object).
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>

#include "shared/text/json_ref.h"

namespace ms::text {

// The text of `member` (a find's result) when it is a string, else "": a
// view into the tree, for a comparison or a copy.
inline std::string_view Text(const std::optional<JsonRef>& member) {
  return member && member->is_string() ? member->str() : std::string_view();
}

// object[key] when it is a string, else "".
inline std::string_view StringView(JsonRef object, std::string_view key) { return Text(object.find(key)); }

// object[key] when it is a string, else `def`.
inline std::string StringField(JsonRef object, const char* key, const std::string& def = {}) {
  auto it = object.find(key);
  return it && it->is_string() ? std::string(it->str()) : def;
}

// object.metadata[key] when it is a string, else "".
inline std::string MetadataString(JsonRef object, const char* key) {
  auto md = object.find("metadata");
  return md ? StringField(*md, key) : std::string();
}

}  // namespace ms::text
