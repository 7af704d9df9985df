// The one writer of the typed spec's values as JSON: text, byte for byte as
// nlohmann's dump() writes the same value (an object's members in key
// order, as nlohmann keeps them; invalid UTF-8 replaced). Each generated
// struct has an AppendJson (spec.gen.cc) built of these. The defaults patch
// appends the text to the patch it writes (patch_text.h); the controller,
// which compares and hashes JSON, reads the same text back with
// ToJsonValue.
#pragma once

#include <charconv>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <type_traits>
#include <vector>

#include "shared/api/field_rules.h"
#include "shared/text/json_text.h"

namespace ms::api {

template <class T>
void AppendJsonValue(std::string& out, const T& v);

inline void AppendJsonInteger(std::string& out, int64_t v) {
  char buf[24];
  const auto end = std::to_chars(buf, buf + sizeof buf, v).ptr;
  out.append(buf, end);
}

// 3 or "25%".
inline void AppendJsonValue(std::string& out, const IntOrPercent& v) {
  if (!v.percent) return AppendJsonInteger(out, v.value);
  out += '"';
  AppendJsonInteger(out, v.value);
  out += "%\"";
}

// 8080 or "metrics".
inline void AppendJsonValue(std::string& out, const PortNumberOrName& v) {
  if (v.is_name) return text::AppendJsonString(out, v.name);
  AppendJsonInteger(out, v.number);
}

// "500m", or 2 as the object wrote it (a JSON integer, as nlohmann writes
// the number it read).
inline void AppendJsonValue(std::string& out, const Quantity& v) {
  if (v.integer) {
    out += nlohmann::json::parse(v.text).dump();
    return;
  }
  text::AppendJsonString(out, v.text);
}

template <class T>
void AppendJsonValue(std::string& out, const std::vector<T>& list) {
  out += '[';
  for (const T& v : list) {
    if (&v != list.data()) out += ',';
    AppendJsonValue(out, v);
  }
  out += ']';
}

template <class T>
void AppendJsonValue(std::string& out, const std::map<std::string, T>& map) {
  out += '{';
  bool first = true;
  for (const auto& [k, v] : map) {
    if (!first) out += ',';
    first = false;
    text::AppendJsonString(out, k);
    out += ':';
    AppendJsonValue(out, v);
  }
  out += '}';
}

template <class T>
void AppendJsonValue(std::string& out, const T& v) {
  if constexpr (std::is_enum_v<T>) {
    text::AppendJsonString(out, ToString(v));
  } else if constexpr (std::is_same_v<T, bool>) {
    out += v ? "true" : "false";
  } else if constexpr (std::is_integral_v<T>) {
    AppendJsonInteger(out, v);
  } else if constexpr (std::is_same_v<T, std::string>) {
    text::AppendJsonString(out, v);
  } else if constexpr (std::is_same_v<T, nlohmann::json>) {
    out += v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);  // an opaque object
  } else {
    AppendJson(out, v);  // a generated struct
  }
}

// The value as nlohmann::json: its text read back.
template <class T>
nlohmann::json ToJsonValue(const T& v) {
  std::string text;
  AppendJsonValue(text, v);
  return nlohmann::json::parse(text);
}

}  // namespace ms::api
