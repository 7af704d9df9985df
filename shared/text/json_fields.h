// Reading fields of a JSON object leniently, as both programs read what
// the API server or a client sent: the value when it is there with the
// expected type, else a default (no exception for a missing field, a wrong
// type, or a value that is not an object).
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace ms::text {

// object[key] when it is a string, else "": a view into the tree, for a
// comparison or a copy.
inline std::string_view StringView(const nlohmann::json& object, std::string_view key) {
  if (!object.is_object()) return {};
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? std::string_view(it->get_ref<const std::string&>())
                                               : std::string_view();
}

// object[key] when it is a string, else `def`.
inline std::string StringField(const nlohmann::json& object, const char* key, const std::string& def = {}) {
  if (!object.is_object()) return def;
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : def;
}

// object.metadata[key] when it is a string, else "".
inline std::string MetadataString(const nlohmann::json& object, const char* key) {
  if (!object.is_object()) return {};
  auto md = object.find("metadata");
  return md != object.end() ? StringField(*md, key) : std::string();
}

}  // namespace ms::text
